//! The artifact layout: where each stored range lies in a graph's data, computed once.
//!
//! The build helper lays out the data it writes, and the runtime's fallback mode lays out
//! the buffer it reads into, with this one type, so both give every range the same place:
//! ranges follow each other in the order they are added, each starting at the next multiple
//! of [`DATA_ALIGN`], and the data ends at a multiple of [`DATA_ALIGN`] (zero padding
//! between and after).
//!
//! A layout has one **entry per distinct stored range**; constants point at entries by the
//! index [`Layout::push`] returns. Neither the build helper nor the runtime's fallback mode
//! pushes entries itself: both take the runtime's `WeightPlan::data_layout`, the one
//! function that pushes one entry per distinct stored range (the rule of
//! `WeightPlan::first_with_same_bytes`: constants that share stored bytes, tied weights,
//! point at one entry, and so one range) and whose `DataLayout::write_data` fills the data
//! through one reader (the build helper's data file, the runtime's buffer). The runtime
//! leaves out the constants it serves as views of a mapping; the build helper lays out
//! all.

/// Every range starts at a multiple of this many bytes of the data, and the data's length is
/// a multiple of it: typed views (`&[f32]`, `&[u64]`, …) are zero-copy on little-endian
/// targets, and 64 bytes is a cache line and the widest common SIMD load.
pub const DATA_ALIGN: u64 = 64;

/// One entry of a [`Layout`]: a byte range of the data (in the index, `{"offset": …,
/// "length": …}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataRange {
    /// Start within the data (a multiple of [`DATA_ALIGN`]).
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
}

impl DataRange {
    /// The end of the range (`offset + length`; a layout guarantees it does not overflow).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.length)
    }
}

/// Ranges of a graph's data, each [`DATA_ALIGN`]-aligned, in the order they were added.
///
/// ```
/// use webnn_weights_artifacts::{DataRange, Layout};
/// let mut layout = Layout::new();
/// assert_eq!(layout.push(8).unwrap(), 0);
/// assert_eq!(layout.push(100).unwrap(), 1);
/// assert_eq!(layout.push(0).unwrap(), 2);
/// assert_eq!(layout.range(1), Some(DataRange { offset: 64, length: 100 }));
/// assert_eq!(layout.range(2), Some(DataRange { offset: 192, length: 0 }));
/// assert_eq!(layout.data_len(), 192);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    ranges: Vec<DataRange>,
    /// End of the last range (not rounded).
    end: u64,
}

/// The data of a [`Layout`] would not fit in 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutError {
    /// The bytes laid out so far.
    pub end: u64,
    /// The length that did not fit.
    pub length: u64,
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the data would exceed 2^64 bytes (a range of {} bytes after {} bytes)",
            self.length, self.end
        )
    }
}

impl std::error::Error for LayoutError {}

impl Layout {
    /// An empty layout (no ranges, data length 0).
    pub fn new() -> Layout {
        Layout::default()
    }

    /// A layout with room for `entries` ranges.
    pub fn with_capacity(entries: usize) -> Layout {
        Layout {
            ranges: Vec::with_capacity(entries),
            end: 0,
        }
    }

    /// One entry per length, in order.
    ///
    /// ```
    /// let layout = webnn_weights_artifacts::Layout::of_lengths([3, 64, 1]).unwrap();
    /// let offsets: Vec<u64> = layout.ranges().iter().map(|r| r.offset).collect();
    /// assert_eq!(offsets, [0, 64, 128]);
    /// assert_eq!(layout.data_len(), 192);
    /// ```
    pub fn of_lengths(lengths: impl IntoIterator<Item = u64>) -> Result<Layout, LayoutError> {
        let lengths = lengths.into_iter();
        let mut layout = Layout::with_capacity(lengths.size_hint().0);
        for length in lengths {
            layout.push(length)?;
        }
        Ok(layout)
    }

    /// Adds a range of `length` bytes at the next aligned offset and returns its entry index.
    /// Fails (and leaves the layout unchanged) when the data, padded to [`DATA_ALIGN`], would
    /// not fit in 64 bits.
    ///
    /// ```
    /// let mut layout = webnn_weights_artifacts::Layout::new();
    /// layout.push(u64::MAX - 63).unwrap();
    /// assert!(layout.push(1).is_err());
    /// assert_eq!(layout.ranges().len(), 1);
    /// ```
    pub fn push(&mut self, length: u64) -> Result<usize, LayoutError> {
        let error = LayoutError {
            end: self.end,
            length,
        };
        let offset = self.end.checked_next_multiple_of(DATA_ALIGN).ok_or(error)?;
        let end = offset.checked_add(length).ok_or(error)?;
        // The padded data length must be representable too.
        end.checked_next_multiple_of(DATA_ALIGN).ok_or(error)?;
        self.ranges.push(DataRange { offset, length });
        self.end = end;
        Ok(self.ranges.len() - 1)
    }

    /// Every entry, in the order added.
    pub fn ranges(&self) -> &[DataRange] {
        &self.ranges
    }

    /// The entry at `index`.
    pub fn range(&self, index: usize) -> Option<DataRange> {
        self.ranges.get(index).copied()
    }

    /// The data's length: the end of the last range rounded up to [`DATA_ALIGN`] (0 when
    /// empty).
    pub fn data_len(&self) -> u64 {
        // `push` checked that this does not overflow.
        self.end.div_ceil(DATA_ALIGN) * DATA_ALIGN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_aligned_in_order_and_padded() {
        let layout = Layout::of_lengths([1, 63, 64, 65, 0, 7]).unwrap();
        let got: Vec<(u64, u64)> = layout
            .ranges()
            .iter()
            .map(|r| (r.offset, r.length))
            .collect();
        assert_eq!(
            got,
            [(0, 1), (64, 63), (128, 64), (192, 65), (320, 0), (320, 7)]
        );
        assert_eq!(layout.data_len(), 384);
        assert_eq!(Layout::new().data_len(), 0);
        assert_eq!(Layout::of_lengths([64]).unwrap().data_len(), 64);
        assert_eq!(layout.range(3).unwrap().end(), 257);
        assert_eq!(layout.range(6), None);
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let mut layout = Layout::new();
        layout.push(u64::MAX - 63).unwrap();
        assert_eq!(layout.data_len(), u64::MAX - 63);
        let err = layout.push(1).unwrap_err();
        assert_eq!(err.end, u64::MAX - 63);
        assert_eq!(layout.ranges().len(), 1);
        assert!(Layout::of_lengths([u64::MAX]).is_err());
        assert!(Layout::of_lengths([u64::MAX - 62]).is_err());
    }
}
