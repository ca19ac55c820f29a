//! The one table of data types: text and JSON spellings, element sizes and byte lengths.
//!
//! Shared by the build helper, the macro and the runtime (which re-exports [`DataType`] as
//! `webnn_weights_runtime::DataType`). Every other module asks [`DataType`] how big a tensor
//! is; nothing else multiplies shapes by element sizes. All arithmetic is checked: a size that does not fit `u64`
//! is `None`, never a wrap-around or a panic.

use std::fmt;

/// The logical element type of an operand or constant.
///
/// JSON spellings are `float32 float16 int4 uint4 int32 uint32 int64 uint64 int8 uint8`;
/// `.webnn` text spells them `f32 f16 i4 u4 i32 u32 i64 u64 i8 u8`.
///
/// ```
/// use webnn_weights_artifacts::DataType;
/// assert_eq!(DataType::from_text_name("i4"), Some(DataType::Int4));
/// assert_eq!(DataType::Int4.json_name(), "int4");
/// // int4 packs two elements per byte: 3 elements need 2 bytes.
/// assert_eq!(DataType::Int4.byte_length(&[3]), Some(2));
/// assert_eq!(DataType::Float32.byte_length(&[2, 2]), Some(16));
/// ```
///
/// With serde, it is its JSON spelling ([`DataType::json_name`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum DataType {
    /// IEEE 754 binary32.
    Float32,
    /// IEEE 754 binary16.
    Float16,
    /// Signed 4-bit integer, packed two per byte (first element in the low nibble).
    Int4,
    /// Unsigned 4-bit integer, packed two per byte (first element in the low nibble).
    Uint4,
    /// Signed 32-bit integer.
    Int32,
    /// Unsigned 32-bit integer.
    Uint32,
    /// Signed 64-bit integer.
    Int64,
    /// Unsigned 64-bit integer.
    Uint64,
    /// Signed 8-bit integer.
    Int8,
    /// Unsigned 8-bit integer.
    Uint8,
}

/// (type, text name, JSON name, bits per element)
const TABLE: [(DataType, &str, &str, u32); 10] = [
    (DataType::Float32, "f32", "float32", 32),
    (DataType::Float16, "f16", "float16", 16),
    (DataType::Int4, "i4", "int4", 4),
    (DataType::Uint4, "u4", "uint4", 4),
    (DataType::Int32, "i32", "int32", 32),
    (DataType::Uint32, "u32", "uint32", 32),
    (DataType::Int64, "i64", "int64", 64),
    (DataType::Uint64, "u64", "uint64", 64),
    (DataType::Int8, "i8", "int8", 8),
    (DataType::Uint8, "u8", "uint8", 8),
];

impl DataType {
    /// Every data type, in the order of the format's tables.
    pub const ALL: [DataType; 10] = [
        DataType::Float32,
        DataType::Float16,
        DataType::Int4,
        DataType::Uint4,
        DataType::Int32,
        DataType::Uint32,
        DataType::Int64,
        DataType::Uint64,
        DataType::Int8,
        DataType::Uint8,
    ];

    fn row(self) -> &'static (DataType, &'static str, &'static str, u32) {
        // The table lists every variant exactly once, in declaration order.
        &TABLE[self as usize]
    }

    /// The type's number in the binary constant table ([`crate::ConstantTable`]): its
    /// position in [`DataType::ALL`] (`float32` is 0, `uint8` is 9). Part of the table's
    /// format: never renumbered within one table version.
    ///
    /// ```
    /// use webnn_weights_artifacts::DataType;
    /// assert_eq!(DataType::Int4.code(), 2);
    /// assert_eq!(DataType::from_code(2), Some(DataType::Int4));
    /// assert_eq!(DataType::from_code(10), None);
    /// ```
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The type numbered `code` in the constant table; `None` for an unknown number.
    pub fn from_code(code: u8) -> Option<DataType> {
        DataType::ALL.get(usize::from(code)).copied()
    }

    /// The `.webnn` text spelling (`f32`, `i4`, …).
    pub fn text_name(self) -> &'static str {
        self.row().1
    }

    /// The GraphJson spelling (`float32`, `int4`, …).
    pub fn json_name(self) -> &'static str {
        self.row().2
    }

    /// Parses a `.webnn` text spelling; `None` for anything else.
    pub fn from_text_name(name: &str) -> Option<DataType> {
        TABLE.iter().find(|row| row.1 == name).map(|row| row.0)
    }

    /// Parses a GraphJson spelling; `None` for anything else.
    pub fn from_json_name(name: &str) -> Option<DataType> {
        TABLE.iter().find(|row| row.2 == name).map(|row| row.0)
    }

    /// Bits per logical element: 4, 8, 16, 32 or 64.
    pub fn element_bits(self) -> u32 {
        self.row().3
    }

    /// Whether this is a packed 4-bit type (`int4` / `uint4`).
    pub fn is_packed_4bit(self) -> bool {
        self.element_bits() == 4
    }

    /// Bytes per element for byte-aligned types; `None` for the packed 4-bit types.
    pub fn element_size(self) -> Option<u64> {
        let bits = self.element_bits();
        (bits % 8 == 0).then_some(u64::from(bits / 8))
    }

    /// The number of elements of `shape` (`1` for rank 0), or `None` on overflow.
    pub fn element_count(shape: &[u32]) -> Option<u64> {
        shape
            .iter()
            .try_fold(1u64, |acc, &dim| acc.checked_mul(u64::from(dim)))
    }

    /// The storage size of `element_count` elements: `ceil(n / 2)` for 4-bit types,
    /// `n * element_size` otherwise; `None` on overflow.
    pub fn byte_length_for_elements(self, element_count: u64) -> Option<u64> {
        match self.element_size() {
            Some(size) => element_count.checked_mul(size),
            // ceil(n / 2) without overflow at u64::MAX
            None => Some(element_count / 2 + element_count % 2),
        }
    }

    /// The storage size of a tensor of this type and `shape`, or `None` on overflow.
    pub fn byte_length(self, shape: &[u32]) -> Option<u64> {
        self.byte_length_for_elements(Self::element_count(shape)?)
    }
}

impl fmt::Display for DataType {
    /// Displays the GraphJson spelling.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.json_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.0 as usize, i);
            assert_eq!(DataType::ALL[i], row.0);
            assert_eq!(DataType::from_code(row.0.code()), Some(row.0));
        }
    }

    #[test]
    fn names_round_trip() {
        for dt in DataType::ALL {
            assert_eq!(DataType::from_text_name(dt.text_name()), Some(dt));
            assert_eq!(DataType::from_json_name(dt.json_name()), Some(dt));
            let json = format!("\"{}\"", dt.json_name());
            assert_eq!(serde_json::to_string(&dt).unwrap(), json);
            assert_eq!(serde_json::from_str::<DataType>(&json).unwrap(), dt);
        }
        assert_eq!(DataType::from_text_name("float32"), None);
        assert_eq!(DataType::from_json_name("f32"), None);
        assert_eq!(DataType::from_json_name("bfloat16"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(DataType::Float32.byte_length(&[]), Some(4));
        assert_eq!(DataType::Float16.byte_length(&[3, 2]), Some(12));
        assert_eq!(DataType::Int64.byte_length(&[0, 7]), Some(0));
        assert_eq!(DataType::Uint4.byte_length(&[5]), Some(3));
        assert_eq!(DataType::Int4.byte_length(&[8, 3]), Some(12));
        assert_eq!(DataType::Int4.byte_length(&[]), Some(1));
        assert_eq!(DataType::Int4.element_size(), None);
        assert_eq!(DataType::Uint8.element_size(), Some(1));
    }

    #[test]
    fn overflow_is_none() {
        let huge = [u32::MAX, u32::MAX, u32::MAX];
        assert_eq!(DataType::element_count(&huge), None);
        assert_eq!(DataType::Float32.byte_length(&huge), None);
        assert_eq!(
            DataType::Int8.byte_length(&[u32::MAX, u32::MAX]),
            Some(u64::from(u32::MAX) * u64::from(u32::MAX))
        );
        assert_eq!(DataType::Uint64.byte_length_for_elements(u64::MAX), None);
        assert_eq!(
            DataType::Int4.byte_length_for_elements(u64::MAX),
            Some(u64::MAX / 2 + 1)
        );
    }
}
