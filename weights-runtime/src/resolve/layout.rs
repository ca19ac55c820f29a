//! The data layout of a plan: one range per distinct stored bytes (tied constants share
//! one), and the pass that fills the ranges through one reader. Used by the runtime's
//! fallback embedding mode and by the build helper's data file.

use super::error::ResolveError;
use super::model::{PlannedConstant, WeightPlan};
use std::io::{self, Write};
use webnn_weights_artifacts::{DataRange, Layout, LayoutError, DATA_ALIGN};

/// Where a plan's constants lie in one piece of data: every range starts at a multiple of
/// 64 bytes ([`DATA_ALIGN`]), with zero padding between and after, in the plan's order.
///
/// Made by [`WeightPlan::data_layout`]. There is one **entry** (a range of the data) per
/// distinct stored bytes: constants that resolve to the same stored range with the same
/// conversion (tied weights, [`WeightPlan::first_with_same_bytes`]) point at one entry,
/// which the first of them fills. The build helper writes its data file with this layout,
/// and an `Embedding::Runtime` graph reads its buffer with it, so both place every
/// constant alike.
///
/// ```
/// use webnn_weights_runtime::{parse_webnn, plan_external_weights};
/// let dir = tempfile::tempdir().unwrap();
/// // `head` is tied to `embed` (one stored tensor); `bias` has bytes of its own.
/// let graph = parse_webnn(r#"webnn_graph "g" v2 {
///   consts { embed: u8[3] @weights("e"); head: u8[3] @weights("e"); bias: u8[1] @weights("b"); }
///   nodes { y = add(embed, head); z = add(y, bias); }
///   outputs { z; }
/// }"#).unwrap();
/// std::fs::write(dir.path().join("g.weights"), [1, 2, 3, 9]).unwrap();
/// std::fs::write(dir.path().join("g.manifest.json"), r#"{"tensors":{
///     "e":{"byteOffset":0,"byteLength":3},"b":{"byteOffset":3,"byteLength":1}}}"#).unwrap();
/// let plan = plan_external_weights(&graph, &dir.path().join("g.webnn"), None, None).unwrap();
///
/// let index = |name: &str| plan.constants().iter().position(|c| c.name == name).unwrap();
///
/// // Every constant laid out: two entries, `embed` and `head` on one range.
/// let all = plan.data_layout(|_| false).unwrap();
/// assert_eq!(all.ranges().len(), 2);
/// assert_eq!(all.range_of(index("embed")), all.range_of(index("head")));
/// assert_eq!(all.range_of(index("bias")).unwrap().offset, 0); // name order: bias first
/// assert_eq!(all.range_of(index("embed")).unwrap().offset, 64);
/// let mut data = Vec::new();
/// all.write_data(&mut data).unwrap();
/// assert_eq!(data.len() as u64, all.data_len());
/// assert_eq!(&data[64..67], [1, 2, 3]);
///
/// // Leaving out the constants served some other way: no range for them.
/// let some = plan.data_layout(|c| c.name == "bias").unwrap();
/// assert_eq!(some.range_of(index("bias")), None);
/// assert_eq!(some.range_of(index("embed")).unwrap().offset, 0);
/// assert_eq!(some.data_len(), 64);
/// ```
#[derive(Debug, Clone)]
pub struct DataLayout<'p> {
    plan: &'p WeightPlan,
    /// For every constant (in the plan's order), its entry; `None` when left out.
    entries: Vec<Option<usize>>,
    /// For every entry (in data order), the index of the constant that fills it.
    fills: Vec<usize>,
    /// The ranges, one per entry.
    layout: Layout,
}

/// Why [`DataLayout::write_data`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataWriteError {
    /// Reading a constant or writing its bytes failed, or the files changed while they
    /// were read (the error names the constant or file).
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// Writing the zero padding that starts at byte `offset` of the data failed.
    #[error("cannot write the zero padding at byte {offset} of the data")]
    Padding {
        /// Where the padding starts in the data.
        offset: u64,
        /// The writer's error.
        #[source]
        source: io::Error,
    },
}

impl WeightPlan {
    /// Lays out this plan's constants in one piece of data ([`DataLayout`]), in the plan's
    /// order, leaving out every constant for which `leave_out` returns `true` (such as the
    /// constants a caller serves as views of a mapping; `|_| false` lays out all).
    ///
    /// Constants on the same stored bytes ([`WeightPlan::first_with_same_bytes`]) share
    /// one entry, filled by the first of them that is laid out. Fails when the data would
    /// exceed 2^64 bytes.
    pub fn data_layout(
        &self,
        mut leave_out: impl FnMut(&PlannedConstant) -> bool,
    ) -> Result<DataLayout<'_>, LayoutError> {
        let first = self.first_with_same_bytes();
        let mut layout = Layout::with_capacity(first.len());
        let mut entries = Vec::with_capacity(first.len());
        let mut fills = Vec::with_capacity(first.len());
        // At the index of each group's first constant: the group's entry, once a constant
        // of the group is laid out (the first may have been left out).
        let mut group_entry: Vec<Option<usize>> = vec![None; first.len()];
        for (i, (c, &f)) in self.constants.iter().zip(&first).enumerate() {
            let entry = match (leave_out(c), group_entry[f]) {
                (true, _) => None,
                (false, Some(entry)) => Some(entry),
                (false, None) => {
                    let entry = layout.push(c.length)?;
                    fills.push(i);
                    group_entry[f] = Some(entry);
                    Some(entry)
                }
            };
            entries.push(entry);
        }
        Ok(DataLayout {
            plan: self,
            entries,
            fills,
            layout,
        })
    }
}

impl<'p> DataLayout<'p> {
    /// The plan laid out.
    pub fn plan(&self) -> &'p WeightPlan {
        self.plan
    }

    /// For every constant (in [`WeightPlan::constants`] order), the index of its entry
    /// (equal for constants that share their bytes), or `None` when it was left out.
    pub fn entries(&self) -> &[Option<usize>] {
        &self.entries
    }

    /// The range of the constant at `constant` (an index into [`WeightPlan::constants`]),
    /// or `None` when it was left out (or there is no such constant).
    pub fn range_of(&self, constant: usize) -> Option<DataRange> {
        self.layout.range((*self.entries.get(constant)?)?)
    }

    /// For every entry (in data order), the index of the constant that fills it.
    pub fn fills(&self) -> &[usize] {
        &self.fills
    }

    /// Every entry's range, in data order.
    pub fn ranges(&self) -> &[DataRange] {
        self.layout.ranges()
    }

    /// Every entry in data order: its range and the constant whose resolved bytes fill it.
    pub fn filled(&self) -> impl Iterator<Item = (DataRange, &'p PlannedConstant)> + '_ {
        let constants = self.plan.constants();
        self.ranges()
            .iter()
            .zip(&self.fills)
            .map(move |(&range, &fill)| (range, &constants[fill]))
    }

    /// The data's length: the end of the last range rounded up to 64 bytes (0 without
    /// entries).
    pub fn data_len(&self) -> u64 {
        self.layout.data_len()
    }

    /// Writes the whole data to `out`, exactly [`DataLayout::data_len`] bytes: every
    /// entry's resolved bytes at its offset, zeros between the entries and after the last.
    ///
    /// All constants are read through one [`ConstantReader`](crate::ConstantReader)
    /// ([`WeightPlan::reader`]: each file opened once, small neighbouring constants read
    /// together, an attached weights lock verified on the way), finished after the last
    /// entry, so a file that changed while it was read is an error here.
    ///
    /// Any [`Write`] will do: the build helper passes its data file's writer (fresh, or
    /// one that compares with the file and writes only what differs), the runtime a
    /// `&mut [u8]` of the data's length. On an error, `out` may hold part of the data.
    pub fn write_data<W: Write + ?Sized>(&self, out: &mut W) -> Result<(), DataWriteError> {
        const ZEROS: [u8; DATA_ALIGN as usize] = [0; DATA_ALIGN as usize];
        let pad = |out: &mut W, from: u64, to: u64| {
            // Less than DATA_ALIGN bytes: every range starts at the next aligned offset.
            out.write_all(&ZEROS[..(to - from) as usize])
                .map_err(|source| DataWriteError::Padding {
                    offset: from,
                    source,
                })
        };
        let mut reader = self.plan.reader();
        let mut at = 0u64;
        for (range, c) in self.filled() {
            pad(out, at, range.offset)?;
            // Writes exactly `c.length` bytes, the range's length, or fails.
            reader.copy_constant(c, out)?;
            at = range.end();
        }
        pad(out, at, self.data_len())?;
        reader.finish()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_webnn, plan_external_weights};

    /// A plan of five constants in name order: `a` and `c` tied (one stored tensor `t`),
    /// `b` and `d` tied (the BF16 tensor `h`, widened to float32), `e` alone.
    fn plan(dir: &std::path::Path) -> WeightPlan {
        let graph = parse_webnn(
            r#"webnn_graph "g" v2 {
  consts { a: u8[70] @weights("t"); b: f32[1] @weights("h"); c: u8[70] @weights("t");
           d: f32[1] @weights("h"); e: u8[5] @weights("u"); }
  nodes { y = add(a, c); z = add(b, d); w = add(y, e); }
  outputs { z; w; }
}"#,
        )
        .unwrap();
        // A SafeTensors archive: header length, JSON header (space-padded), data.
        let mut header = br#"{"t":{"dtype":"U8","shape":[70],"data_offsets":[0,70]},
            "h":{"dtype":"BF16","shape":[1],"data_offsets":[70,72]},
            "u":{"dtype":"U8","shape":[5],"data_offsets":[72,77]}}"#
            .to_vec();
        header.resize(header.len().next_multiple_of(8), b' ');
        let mut archive = (header.len() as u64).to_le_bytes().to_vec();
        archive.extend(header);
        archive.extend(0..70u8);
        archive.extend([0x80, 0x3f]); // BF16 1.0
        archive.extend([9; 5]);
        std::fs::write(dir.join("g.safetensors"), archive).unwrap();
        plan_external_weights(&graph, &dir.join("g.webnn"), None, None).unwrap()
    }

    #[test]
    fn tied_constants_share_one_range_and_left_out_ones_have_none() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path());
        let names: Vec<&str> = plan.constants().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e"]);

        let all = plan.data_layout(|_| false).unwrap();
        assert_eq!(all.entries(), [Some(0), Some(1), Some(0), Some(1), Some(2)]);
        assert_eq!(all.fills(), [0, 1, 4]);
        let offsets: Vec<(u64, u64)> = all.ranges().iter().map(|r| (r.offset, r.length)).collect();
        assert_eq!(offsets, [(0, 70), (128, 4), (192, 5)]);
        assert_eq!(all.range_of(2), all.range_of(0));
        assert_eq!(all.range_of(5), None);
        assert_eq!(all.data_len(), 256);
        let mut data = Vec::new();
        all.write_data(&mut data).unwrap();
        let mut expected = vec![0u8; 256];
        expected[..70].copy_from_slice(&(0..70).collect::<Vec<u8>>());
        expected[128..132].copy_from_slice(&1.0f32.to_le_bytes());
        expected[192..197].copy_from_slice(&[9; 5]);
        assert_eq!(data, expected);

        // `a` left out: its tie `c` fills the entry; `e` left out: no range at all.
        let some = plan
            .data_layout(|c| c.name == "a" || c.name == "e")
            .unwrap();
        assert_eq!(some.entries(), [None, Some(0), Some(1), Some(0), None]);
        assert_eq!(some.fills(), [1, 2]);
        let offsets: Vec<(u64, u64)> = some.ranges().iter().map(|r| (r.offset, r.length)).collect();
        assert_eq!(offsets, [(0, 4), (64, 70)]);
        assert_eq!(some.range_of(0), None);
        assert_eq!(some.range_of(4), None);
        let mut data = Vec::new();
        some.write_data(&mut data).unwrap();
        assert_eq!(data.len(), 192);
        assert_eq!(&data[..4], 1.0f32.to_le_bytes());
        assert_eq!(&data[64..134], &expected[..70]);

        // Everything left out: no entries, no data.
        let none = plan.data_layout(|_| true).unwrap();
        assert!(none.ranges().is_empty() && none.data_len() == 0);
        assert!(none.entries().iter().all(Option::is_none));
    }

    #[test]
    fn a_short_writer_is_an_error_naming_the_padding_or_the_constant() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path());
        let layout = plan.data_layout(|_| false).unwrap();
        // Room for `a` but not for the padding after it.
        let mut buffer = [0u8; 100];
        let err = layout.write_data(&mut &mut buffer[..]).unwrap_err();
        assert!(
            matches!(err, DataWriteError::Padding { offset: 70, .. }),
            "{err:?}"
        );
        // Room for less than `a`: the constant's write fails.
        let mut buffer = [0u8; 10];
        let err = layout.write_data(&mut &mut buffer[..]).unwrap_err();
        match err {
            DataWriteError::Resolve(ResolveError::Write { constant, .. }) => {
                assert_eq!(constant, "a")
            }
            other => panic!("{other:?}"),
        }
    }
}
