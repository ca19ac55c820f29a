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

#[cfg(test)]
mod tests {
    use super::*;

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
