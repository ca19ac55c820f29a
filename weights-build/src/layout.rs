//! Step 2 of the pipeline: where every constant lies in the data.
//!
//! The ranges come from the runtime's [`WeightPlan::data_layout`], the one function that
//! lays out a plan for the build helper's data file and for the runtime's fallback buffer:
//! one entry per distinct stored range (constants on the same stored bytes with the same
//! conversion share one), each placed by the artifacts crate's [`Layout`](webnn_weights_artifacts::Layout) (the one rule for
//! alignment and padding). This module turns it into the public [`ArtifactConstant`]s,
//! reports the exact size of data past 2^64 bytes, and checks that the data fits the
//! target's address space.

use crate::{Embedding, Error, Target};
use std::path::Path;
use webnn_weights_artifacts::{TableRow, DATA_ALIGN};
use webnn_weights_runtime::{DataLayout, DataType, WeightPlan};

/// One constant as laid out in the artifacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactConstant {
    /// Name in the graph.
    pub name: String,
    /// The `@weights` reference.
    pub reference: String,
    /// Declared data type.
    pub data_type: DataType,
    /// Declared shape.
    pub shape: Vec<u32>,
    /// Start within the data (a multiple of 64).
    pub offset: u64,
    /// Byte length (BF16 already widened).
    pub length: u64,
}

impl ArtifactConstant {
    /// The constant's row of the constant table.
    pub(crate) fn table_row(&self) -> TableRow<'_> {
        TableRow {
            name: &self.name,
            reference: &self.reference,
            data_type: self.data_type,
            shape: &self.shape,
            offset: self.offset,
            length: self.length,
            sha256: None,
        }
    }
}

/// The data of a graph: every constant's range, and for every range of the layout the
/// planned constant whose resolved bytes fill it.
#[derive(Debug, Clone)]
pub(crate) struct ArtifactLayout<'p> {
    /// One per planned constant, in the plan's order (sorted by name).
    pub constants: Vec<ArtifactConstant>,
    /// For every constant, the index of its entry in the layout (equal for constants that
    /// share their bytes).
    pub entries: Vec<usize>,
    /// The runtime's layout of every planned constant: the entries, the constant that
    /// fills each, and the pass that writes the data ([`DataLayout::write_data`]).
    pub data: DataLayout<'p>,
}

impl<'p> ArtifactLayout<'p> {
    /// Lays out all of the plan's constants in the plan's order, with the runtime's
    /// [`WeightPlan::data_layout`] (the rule its fallback mode lays out its buffer by):
    /// constants that resolve to the same stored bytes with the same conversion (tied
    /// weights) share the entry of the first of them, so those bytes are written once and
    /// every such constant's range is the same.
    pub fn of_plan(plan: &'p WeightPlan, graph: &Path) -> Result<ArtifactLayout<'p>, Error> {
        let planned = plan.constants();
        let data = plan.data_layout(|_| false).map_err(|_| {
            // Past 2^64 bytes: what the data would need, counted exactly (each stored
            // tensor once, at an aligned start).
            let first = plan.first_with_same_bytes();
            Error::TooLarge {
                graph: graph.to_path_buf(),
                needed: data_needed(
                    first
                        .iter()
                        .enumerate()
                        .filter(|&(i, &f)| f == i)
                        .map(|(i, _)| planned[i].length),
                ),
                pointer_width: 64,
            }
        })?;
        let mut entries = Vec::with_capacity(planned.len());
        let mut constants = Vec::with_capacity(planned.len());
        for (i, c) in planned.iter().enumerate() {
            // Nothing was left out: every constant has an entry.
            let (Some(entry), Some(range)) = (data.entries()[i], data.range_of(i)) else {
                unreachable!(
                    "`data_layout(|_| false)` gives constant `{}` a range",
                    c.name
                )
            };
            entries.push(entry);
            constants.push(ArtifactConstant {
                name: c.name.clone(),
                reference: c.reference.clone(),
                data_type: c.data_type,
                shape: c.shape.clone(),
                offset: range.offset,
                length: range.length,
            });
        }
        Ok(ArtifactLayout {
            constants,
            entries,
            data,
        })
    }

    /// The data's length (a multiple of 64; 0 without constants).
    pub fn data_len(&self) -> u64 {
        self.data.data_len()
    }

    /// Fails when embedded data of this length could not be addressed on `target` (a
    /// 32-bit target takes at most 2 GiB); the run-time mode embeds nothing.
    pub fn check_fits(
        &self,
        embedding: Embedding,
        target: &Target,
        graph: &Path,
    ) -> Result<(), Error> {
        let pointer_width = target.pointer_width();
        if embedding != Embedding::Runtime
            && pointer_width < 64
            && self.data_len() > (1u64 << (pointer_width - 1))
        {
            return Err(Error::TooLarge {
                graph: graph.to_path_buf(),
                needed: self.data_len().into(),
                pointer_width,
            });
        }
        Ok(())
    }
}

/// The bytes data of entries of these lengths needs, each at an aligned start, counted
/// exactly even past `u64::MAX` (what a layout overflow reports).
fn data_needed(lengths: impl Iterator<Item = u64>) -> u128 {
    lengths
        .map(|length| u128::from(length).next_multiple_of(u128::from(DATA_ALIGN)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use webnn_weights_artifacts::Layout;

    #[test]
    fn an_overflow_reports_what_was_needed() {
        // Two entries past 2^64 bytes together: the exact sum, not a made-up maximum.
        let big = u64::MAX - 63;
        assert_eq!(data_needed([big, 100].into_iter()), u128::from(big) + 128);
        let mut layout = Layout::new();
        layout.push(big).unwrap();
        assert!(layout.push(100).is_err(), "the layout overflows");
        assert_eq!(data_needed([1, 64, 65].into_iter()), 64 + 64 + 128);
        // Where no overflow happens, exactly the data length the layout gives (zero-length
        // entries included): the figure is the layout's own rule, not an estimate.
        for lengths in [vec![], vec![0], vec![3, 0, 64, 1], vec![65, 127, 128, 129]] {
            let layout = Layout::of_lengths(lengths.iter().copied()).unwrap();
            assert_eq!(
                data_needed(lengths.into_iter()),
                u128::from(layout.data_len())
            );
        }
        // Past 2^64: many large entries, the sum exact.
        let huge = 1u64 << 62;
        assert_eq!(data_needed([huge; 5].into_iter()), 5 * (1u128 << 62));
        assert!(Layout::of_lengths([huge; 5]).is_err());
    }
}
