//! Data types: [`DataType`] is defined once, in `webnn-weights-artifacts` (the contract the
//! build helper, the macro and this crate share), and re-exported here; this module adds
//! what only the runtime needs, the SafeTensors storage mapping.

pub use webnn_weights_artifacts::DataType;

/// The SafeTensors storage type of a logical type. A trait because [`DataType`] is defined
/// in another crate; crate-private so that `safetensors`' types stay out of the public API.
pub(crate) trait SafeTensorsStorage {
    /// The storage type per the format's table: `float32` F32, `float16` F16, `int32` I32,
    /// `uint32` U32, `int64` I64, `uint64` U64, `int8` I8, `uint8` U8. The packed 4-bit types
    /// have no native storage type (`None`); the format stores them as packed `U8` under the
    /// `rustnn.webnn.packed4` marker. (A `BF16` tensor may also satisfy `float32`; that
    /// conversion is the resolver's.)
    fn safetensors_dtype(self) -> Option<safetensors::Dtype>;
}

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

/// The values of a packed 4-bit tensor of `data_type` (`int4` or `uint4`) and `shape`:
/// two elements per byte, the first in the low nibble, as the format stores them; `int4`
/// sign-extended (`0x8` is -8), `uint4` as 0..=15. `None` for other data types, or when `packed` is not
/// exactly the declared size (`ceil(elements / 2)` bytes). The high nibble of the last byte
/// of an odd count is padding and is not returned.
///
/// One home for the rule: [`EmbeddedConstant::unpack_4bit`](crate::EmbeddedConstant::unpack_4bit)
/// and [`ConstDecl::unpack_4bit`](crate::ConstDecl::unpack_4bit) call it.
///
/// ```
/// use webnn_weights_runtime::{unpack_4bit, DataType};
/// // Elements 1, -1, 7 (int4): bytes 0xF1 (low nibble 1, high nibble -1), 0x07.
/// assert_eq!(unpack_4bit(DataType::Int4, &[3], &[0xF1, 0x07]), Some(vec![1, -1, 7]));
/// assert_eq!(unpack_4bit(DataType::Uint4, &[3], &[0xF1, 0x07]), Some(vec![1, 15, 7]));
/// assert_eq!(unpack_4bit(DataType::Uint4, &[3], &[0xF1]), None); // too short
/// assert_eq!(unpack_4bit(DataType::Uint8, &[2], &[1, 2]), None); // not 4-bit
/// ```
pub fn unpack_4bit(data_type: DataType, shape: &[u32], packed: &[u8]) -> Option<Vec<i8>> {
    let signed = match data_type {
        DataType::Int4 => true,
        DataType::Uint4 => false,
        _ => return None,
    };
    let count = usize::try_from(DataType::element_count(shape)?).ok()?;
    if packed.len() != count.div_ceil(2) {
        return None;
    }
    let value = |nibble: u8| -> i8 {
        if signed {
            // Sign-extend bit 3.
            ((nibble << 4) as i8) >> 4
        } else {
            nibble as i8
        }
    };
    Some(
        packed
            .iter()
            .flat_map(|&byte| [value(byte & 0x0f), value(byte >> 4)])
            .take(count)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nibble_unpacks() {
        let bytes: Vec<u8> = (0..=255).collect();
        let signed = unpack_4bit(DataType::Int4, &[512], &bytes).unwrap();
        let unsigned = unpack_4bit(DataType::Uint4, &[512], &bytes).unwrap();
        for (i, byte) in bytes.iter().enumerate() {
            let (low, high) = (byte & 0xf, byte >> 4);
            assert_eq!(unsigned[2 * i] as u8, low);
            assert_eq!(unsigned[2 * i + 1] as u8, high);
            let sign = |n: u8| if n >= 8 { n as i8 - 16 } else { n as i8 };
            assert_eq!(signed[2 * i], sign(low));
            assert_eq!(signed[2 * i + 1], sign(high));
        }
        // An odd count: the padding nibble is not an element.
        assert_eq!(unpack_4bit(DataType::Int4, &[1], &[0x97]), Some(vec![7]));
        assert_eq!(unpack_4bit(DataType::Int4, &[], &[0x09]), Some(vec![-7]));
        assert_eq!(unpack_4bit(DataType::Int4, &[0], &[]), Some(vec![]));
        assert_eq!(unpack_4bit(DataType::Int4, &[2], &[1, 2]), None);
    }

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
