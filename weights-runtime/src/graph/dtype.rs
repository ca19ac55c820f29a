//! Data types: [`DataType`] is defined once, in `webnn-weights-artifacts` (the contract the
//! build helper, the macro and this crate share), and re-exported here; this module adds
//! what only the runtime needs, the SafeTensors storage mapping.

pub use webnn_weights_artifacts::DataType;

/// The SafeTensors storage type of a logical type. A trait because [`DataType`] is defined
/// in another crate; hidden from the docs and outside semver (the archive writer of
/// `webnn-weights-tools` uses it) so that `safetensors`' types stay out of the public API.
#[cfg(feature = "load")]
#[doc(hidden)]
pub trait SafeTensorsStorage {
    /// The storage type per the format's table: `float32` F32, `float16` F16, `int32` I32,
    /// `uint32` U32, `int64` I64, `uint64` U64, `int8` I8, `uint8` U8. The packed 4-bit types
    /// have no native storage type (`None`); the format stores them as packed `U8` under the
    /// `rustnn.webnn.packed4` marker. (A `BF16` tensor may also satisfy `float32`; that
    /// conversion is the resolver's.)
    fn safetensors_dtype(self) -> Option<safetensors::Dtype>;
}

#[cfg(feature = "load")]
impl SafeTensorsStorage for DataType {
    fn safetensors_dtype(self) -> Option<safetensors::Dtype> {
        use safetensors::Dtype;
        Some(match self {
            DataType::Float32 => Dtype::F32,
            DataType::Float16 => Dtype::F16,
            DataType::Int32 => Dtype::I32,
            DataType::Uint32 => Dtype::U32,
            DataType::Int64 => Dtype::I64,
            DataType::Uint64 => Dtype::U64,
            DataType::Int8 => Dtype::I8,
            DataType::Uint8 => Dtype::U8,
            DataType::Int4 | DataType::Uint4 => return None,
        })
    }
}

/// The `count` elements of a packed `int4` tensor, sign-extended (`0x8` is -8, `0xF` is -1):
/// two elements per byte, the first in the low nibble, as the format stores them. `None`
/// when `packed` is not exactly `ceil(count / 2)` bytes. The high nibble of the last byte of
/// an odd count is padding: it is not returned, whatever it holds.
///
/// One home for the rule: [`EmbeddedConstant::unpack_int4`](crate::EmbeddedConstant::unpack_int4)
/// and [`ConstDecl::unpack_int4`](crate::ConstDecl::unpack_int4) call it.
///
/// ```
/// use webnn_weights_runtime::unpack_int4;
/// // Elements 1, -1, 7: bytes 0xF1 (low nibble 1, high nibble -1), 0x07 (7, then padding).
/// assert_eq!(unpack_int4(&[0xF1, 0x07], 3), Some(vec![1, -1, 7]));
/// assert_eq!(unpack_int4(&[0x98], 2), Some(vec![-8, -7]));
/// assert_eq!(unpack_int4(&[0xF1], 3), None); // 3 elements need 2 bytes
/// ```
pub fn unpack_int4(packed: &[u8], count: usize) -> Option<Vec<i8>> {
    // Sign-extend bit 3: the nibble moved to the top, then shifted back arithmetically.
    Some(
        nibbles(packed, count)?
            .map(|n| ((n << 4) as i8) >> 4)
            .collect(),
    )
}

/// The `count` elements of a packed `uint4` tensor, each 0..=15: two elements per byte, the
/// first in the low nibble. `None` when `packed` is not exactly `ceil(count / 2)` bytes; the
/// padding nibble of an odd count is not returned.
///
/// One home for the rule: [`EmbeddedConstant::unpack_uint4`](crate::EmbeddedConstant::unpack_uint4)
/// and [`ConstDecl::unpack_uint4`](crate::ConstDecl::unpack_uint4) call it.
///
/// ```
/// use webnn_weights_runtime::unpack_uint4;
/// assert_eq!(unpack_uint4(&[0xF1, 0x07], 3), Some(vec![1, 15, 7]));
/// assert_eq!(unpack_uint4(&[0xF1, 0x07], 5), None); // 5 elements need 3 bytes
/// ```
pub fn unpack_uint4(packed: &[u8], count: usize) -> Option<Vec<u8>> {
    Some(nibbles(packed, count)?.collect())
}

/// The `count` nibbles of `packed` in element order (low nibble first), or `None` when
/// `packed` is not exactly the `ceil(count / 2)` bytes they take.
fn nibbles(packed: &[u8], count: usize) -> Option<impl Iterator<Item = u8> + '_> {
    (packed.len() == count.div_ceil(2)).then(|| {
        packed
            .iter()
            .flat_map(|&byte| [byte & 0x0f, byte >> 4])
            .take(count)
    })
}

/// The element count of a constant of `data_type` and `shape` when the type is `want` (one
/// of the 4-bit types) and the count fits `usize`: what the typed `unpack_*` methods check
/// before unpacking.
pub(crate) fn count_if(data_type: DataType, want: DataType, shape: &[u32]) -> Option<usize> {
    if data_type != want {
        return None;
    }
    usize::try_from(DataType::element_count(shape)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nibble_unpacks() {
        let bytes: Vec<u8> = (0..=255).collect();
        let signed = unpack_int4(&bytes, 512).unwrap();
        let unsigned = unpack_uint4(&bytes, 512).unwrap();
        let sign = |n: u8| if n >= 8 { n as i8 - 16 } else { n as i8 };
        for (i, byte) in bytes.iter().enumerate() {
            let (low, high) = (byte & 0xf, byte >> 4);
            assert_eq!([unsigned[2 * i], unsigned[2 * i + 1]], [low, high]);
            assert_eq!([signed[2 * i], signed[2 * i + 1]], [sign(low), sign(high)]);
        }
        assert_eq!(unpack_int4(&[0x87], 2), Some(vec![7, -8]));
    }

    #[test]
    fn exactly_count_elements_the_padding_nibble_ignored() {
        // An odd count: the high nibble of the last byte is padding, not an element.
        assert_eq!(unpack_int4(&[0x97], 1), Some(vec![7]));
        assert_eq!(unpack_uint4(&[0x21, 0xF3], 3), Some(vec![1, 2, 3]));
        assert_eq!(unpack_int4(&[], 0), Some(vec![]));
        // Not the packed size of the count: too long or too short.
        assert_eq!(unpack_int4(&[1, 2], 2), None);
        assert_eq!(unpack_uint4(&[1, 2], 2), None);
        assert_eq!(unpack_uint4(&[1], 3), None);
    }

    #[test]
    fn only_the_asked_4bit_type_unpacks() {
        assert_eq!(count_if(DataType::Int4, DataType::Int4, &[2, 3]), Some(6));
        assert_eq!(count_if(DataType::Int4, DataType::Int4, &[]), Some(1));
        assert_eq!(count_if(DataType::Uint4, DataType::Int4, &[2]), None);
        assert_eq!(count_if(DataType::Uint8, DataType::Uint4, &[2]), None);
    }

    #[cfg(feature = "load")]
    #[test]
    fn safetensors_storage_follows_the_format_table() {
        use safetensors::Dtype;
        let table = [
            (DataType::Float32, Some(Dtype::F32)),
            (DataType::Float16, Some(Dtype::F16)),
            (DataType::Int4, None),
            (DataType::Uint4, None),
            (DataType::Int32, Some(Dtype::I32)),
            (DataType::Uint32, Some(Dtype::U32)),
            (DataType::Int64, Some(Dtype::I64)),
            (DataType::Uint64, Some(Dtype::U64)),
            (DataType::Int8, Some(Dtype::I8)),
            (DataType::Uint8, Some(Dtype::U8)),
        ];
        assert_eq!(table.len(), DataType::ALL.len());
        for (dt, storage) in table {
            assert_eq!(dt.safetensors_dtype(), storage, "{dt}");
            if let (Some(storage), Some(size)) = (storage, dt.element_size()) {
                assert_eq!(storage.bitsize() as u64, size * 8, "{dt}");
            }
        }
    }
}
