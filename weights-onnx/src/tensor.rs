//! ONNX tensors on the host: element types, and `TensorProto` decoded into little-endian bytes
//! that stay views of the model (or its external data) wherever the model stored them raw.

use crate::proto::{tensor_proto, TensorProto};
use bytes::{Bytes, BytesMut};
use std::fmt;
use webnn_weights_runtime::DataType;

/// An ONNX element type (`TensorProto.DataType`) this crate can hold on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// `FLOAT`.
    F32,
    /// `FLOAT16`.
    F16,
    /// `BFLOAT16` (widened to float32 when it becomes a WebNN constant).
    Bf16,
    /// `DOUBLE` (no WebNN type: only folded on the host).
    F64,
    /// `INT8`.
    I8,
    /// `UINT8`.
    U8,
    /// `INT16` (no WebNN type: only folded on the host).
    I16,
    /// `UINT16` (no WebNN type: only folded on the host).
    U16,
    /// `INT32`.
    I32,
    /// `UINT32`.
    U32,
    /// `INT64`.
    I64,
    /// `UINT64`.
    U64,
    /// `BOOL`: one byte per element, 0 or 1; WebNN's `uint8`.
    Bool,
    /// `INT4`, packed two per byte, the first element in the low nibble.
    I4,
    /// `UINT4`, packed two per byte, the first element in the low nibble.
    U4,
}

impl ElemType {
    /// The type of an ONNX `TensorProto.DataType` code, or `None` for types this crate does not
    /// hold (strings, complex numbers, float8, float4, 2-bit integers).
    pub fn from_onnx(code: i32) -> Option<ElemType> {
        use tensor_proto::DataType as D;
        Some(match D::try_from(code).ok()? {
            D::Float => ElemType::F32,
            D::Float16 => ElemType::F16,
            D::Bfloat16 => ElemType::Bf16,
            D::Double => ElemType::F64,
            D::Int8 => ElemType::I8,
            D::Uint8 => ElemType::U8,
            D::Int16 => ElemType::I16,
            D::Uint16 => ElemType::U16,
            D::Int32 => ElemType::I32,
            D::Uint32 => ElemType::U32,
            D::Int64 => ElemType::I64,
            D::Uint64 => ElemType::U64,
            D::Bool => ElemType::Bool,
            D::Int4 => ElemType::I4,
            D::Uint4 => ElemType::U4,
            _ => return None,
        })
    }

    /// The ONNX name of an element type code (`FLOAT`, `STRING`, …), for messages.
    pub fn onnx_name(code: i32) -> String {
        match tensor_proto::DataType::try_from(code) {
            Ok(d) => d.as_str_name().to_string(),
            Err(_) => format!("data type {code}"),
        }
    }

    /// This type's ONNX code.
    pub fn onnx_code(self) -> i32 {
        use tensor_proto::DataType as D;
        (match self {
            ElemType::F32 => D::Float,
            ElemType::F16 => D::Float16,
            ElemType::Bf16 => D::Bfloat16,
            ElemType::F64 => D::Double,
            ElemType::I8 => D::Int8,
            ElemType::U8 => D::Uint8,
            ElemType::I16 => D::Int16,
            ElemType::U16 => D::Uint16,
            ElemType::I32 => D::Int32,
            ElemType::U32 => D::Uint32,
            ElemType::I64 => D::Int64,
            ElemType::U64 => D::Uint64,
            ElemType::Bool => D::Bool,
            ElemType::I4 => D::Int4,
            ElemType::U4 => D::Uint4,
        }) as i32
    }

    /// The WebNN type that holds this type's values as a graph operand: `bool` is `uint8`,
    /// `bfloat16` widens to `float32` (as the format does); `None` for types WebNN lacks
    /// (`float64`, `int16`, `uint16`).
    pub fn webnn(self) -> Option<DataType> {
        Some(match self {
            ElemType::F32 | ElemType::Bf16 => DataType::Float32,
            ElemType::F16 => DataType::Float16,
            ElemType::I8 => DataType::Int8,
            ElemType::U8 | ElemType::Bool => DataType::Uint8,
            ElemType::I32 => DataType::Int32,
            ElemType::U32 => DataType::Uint32,
            ElemType::I64 => DataType::Int64,
            ElemType::U64 => DataType::Uint64,
            ElemType::I4 => DataType::Int4,
            ElemType::U4 => DataType::Uint4,
            ElemType::F64 | ElemType::I16 | ElemType::U16 => return None,
        })
    }

    /// The host type of a WebNN type.
    pub fn from_webnn(data_type: DataType) -> ElemType {
        match data_type {
            DataType::Float32 => ElemType::F32,
            DataType::Float16 => ElemType::F16,
            DataType::Int8 => ElemType::I8,
            DataType::Uint8 => ElemType::U8,
            DataType::Int32 => ElemType::I32,
            DataType::Uint32 => ElemType::U32,
            DataType::Int64 => ElemType::I64,
            DataType::Uint64 => ElemType::U64,
            DataType::Int4 => ElemType::I4,
            DataType::Uint4 => ElemType::U4,
        }
    }

    /// Bits per element.
    pub fn bits(self) -> u64 {
        match self {
            ElemType::I4 | ElemType::U4 => 4,
            ElemType::I8 | ElemType::U8 | ElemType::Bool => 8,
            ElemType::F16 | ElemType::Bf16 | ElemType::I16 | ElemType::U16 => 16,
            ElemType::F32 | ElemType::I32 | ElemType::U32 => 32,
            ElemType::F64 | ElemType::I64 | ElemType::U64 => 64,
        }
    }

    /// Whether the type holds floating-point values.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F32 | ElemType::F16 | ElemType::Bf16 | ElemType::F64
        )
    }

    /// The bytes `count` elements take (4-bit types packed, rounded up to whole bytes).
    pub fn byte_len(self, count: u64) -> Option<u64> {
        count.checked_mul(self.bits()).map(|bits| bits.div_ceil(8))
    }

    /// The lower-case ONNX spelling, for messages (`float`, `int64`, `bool`, …).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::F32 => "float",
            ElemType::F16 => "float16",
            ElemType::Bf16 => "bfloat16",
            ElemType::F64 => "double",
            ElemType::I8 => "int8",
            ElemType::U8 => "uint8",
            ElemType::I16 => "int16",
            ElemType::U16 => "uint16",
            ElemType::I32 => "int32",
            ElemType::U32 => "uint32",
            ElemType::I64 => "int64",
            ElemType::U64 => "uint64",
            ElemType::Bool => "bool",
            ElemType::I4 => "int4",
            ElemType::U4 => "uint4",
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tensor whose values are known on the host: an initializer, a `Constant` node's value, a
/// folded result, or a test's `input_N.pb`. The bytes are little-endian elements in row-major
/// order (4-bit types packed two per byte, the first in the low nibble; `bool` one byte each),
/// and a view of the model file or its external data wherever the model stored them raw.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTensor {
    /// The tensor's name in the model (empty for values made by the converter).
    pub name: String,
    /// Element type.
    pub elem: ElemType,
    /// Dimensions.
    pub shape: Vec<u32>,
    /// Little-endian element bytes: exactly `elem.byte_len(element count)` of them.
    pub bytes: Bytes,
}

/// Why a `TensorProto` could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TensorError(pub(crate) String);

/// The most elements a tensor may have, counted over its non-zero dims (WebNN's operands are
/// indexed by `u32`; this converter's shape arithmetic relies on it).
pub const MAX_ELEMENTS: u64 = u32::MAX as u64;

/// The number of elements of `shape`, when it fits `u64`.
pub(crate) fn checked_count(shape: &[u32]) -> Option<u64> {
    shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
}

/// Whether `shape`'s non-zero dims multiply to at most [`MAX_ELEMENTS`].
pub(crate) fn within_limit(shape: &[u32]) -> bool {
    shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
        .is_some_and(|n| n <= MAX_ELEMENTS)
}

impl HostTensor {
    /// The number of elements (1 for a scalar; saturating, for shapes past every limit).
    pub fn element_count(&self) -> u64 {
        self.shape
            .iter()
            .fold(1u64, |acc, &d| acc.saturating_mul(u64::from(d)))
    }

    /// A tensor from values given as `f64`, converted to `elem` (rounded to the nearest
    /// representable value for floats, truncated toward zero and wrapped for integers, as a
    /// cast does; `bool` is `v != 0`). 4-bit types are packed.
    pub fn from_f64s(elem: ElemType, shape: Vec<u32>, values: &[f64]) -> HostTensor {
        let mut out = BytesMut::with_capacity(values.len() * 8);
        match elem {
            ElemType::I4 | ElemType::U4 => {
                for pair in values.chunks(2) {
                    let lo = (pair[0] as i64 as u8) & 0x0f;
                    let hi = pair.get(1).map_or(0, |&v| (v as i64 as u8) & 0x0f);
                    out.extend_from_slice(&[lo | (hi << 4)]);
                }
            }
            _ => {
                for &v in values {
                    push_f64(&mut out, elem, v);
                }
            }
        }
        HostTensor {
            name: String::new(),
            elem,
            shape,
            bytes: out.freeze(),
        }
    }

    /// A tensor from integer values, converted to `elem` (wrapped for narrower integers; exact
    /// for 64-bit ones, where an `f64` would round).
    pub fn from_i64s(elem: ElemType, shape: Vec<u32>, values: &[i64]) -> HostTensor {
        match elem {
            ElemType::I64 | ElemType::U64 => {
                let mut out = BytesMut::with_capacity(values.len() * 8);
                for &v in values {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                HostTensor {
                    name: String::new(),
                    elem,
                    shape,
                    bytes: out.freeze(),
                }
            }
            _ => {
                let floats: Vec<f64> = values.iter().map(|&v| v as f64).collect();
                let mut t = HostTensor::from_f64s(elem, shape, &floats);
                if !elem.is_float() {
                    // wrap as an integer cast does, not through f64's saturation
                    let mut out = BytesMut::with_capacity(values.len() * 4);
                    match elem {
                        ElemType::I4 | ElemType::U4 => return t,
                        _ => {
                            for &v in values {
                                push_wrapped(&mut out, elem, v);
                            }
                        }
                    }
                    t.bytes = out.freeze();
                }
                t
            }
        }
    }

    /// Every element as an `f64` (64-bit integers beyond 2^53 round).
    pub fn to_f64s(&self) -> Vec<f64> {
        let b = &self.bytes[..];
        let n = self.element_count() as usize;
        match self.elem {
            ElemType::F32 => chunks::<4>(b)
                .map(|c| f32::from_le_bytes(c) as f64)
                .collect(),
            ElemType::F16 => chunks::<2>(b)
                .map(|c| half::f16::from_le_bytes(c).to_f64())
                .collect(),
            ElemType::Bf16 => chunks::<2>(b)
                .map(|c| half::bf16::from_le_bytes(c).to_f64())
                .collect(),
            ElemType::F64 => chunks::<8>(b).map(f64::from_le_bytes).collect(),
            _ => self
                .to_i64s()
                .into_iter()
                .take(n)
                .map(|v| v as f64)
                .collect(),
        }
    }

    /// Every element as an `i64` (floats truncated toward zero; `uint64` reinterpreted).
    pub fn to_i64s(&self) -> Vec<i64> {
        let b = &self.bytes[..];
        let n = self.element_count() as usize;
        match self.elem {
            ElemType::I8 => b.iter().map(|&v| v as i8 as i64).collect(),
            ElemType::U8 | ElemType::Bool => b.iter().map(|&v| v as i64).collect(),
            ElemType::I16 => chunks::<2>(b)
                .map(|c| i16::from_le_bytes(c) as i64)
                .collect(),
            ElemType::U16 => chunks::<2>(b)
                .map(|c| u16::from_le_bytes(c) as i64)
                .collect(),
            ElemType::I32 => chunks::<4>(b)
                .map(|c| i32::from_le_bytes(c) as i64)
                .collect(),
            ElemType::U32 => chunks::<4>(b)
                .map(|c| u32::from_le_bytes(c) as i64)
                .collect(),
            ElemType::I64 | ElemType::U64 => chunks::<8>(b).map(i64::from_le_bytes).collect(),
            ElemType::I4 => b
                .iter()
                .flat_map(|&v| [((v << 4) as i8 >> 4) as i64, ((v as i8) >> 4) as i64])
                .take(n)
                .collect(),
            ElemType::U4 => b
                .iter()
                .flat_map(|&v| [(v & 0x0f) as i64, (v >> 4) as i64])
                .take(n)
                .collect(),
            ElemType::F32 | ElemType::F16 | ElemType::Bf16 | ElemType::F64 => {
                self.to_f64s().into_iter().map(|v| v as i64).collect()
            }
        }
    }

    /// The tensor with another shape of the same element count (no byte is copied).
    pub fn reshaped(&self, shape: Vec<u32>) -> HostTensor {
        HostTensor {
            name: self.name.clone(),
            elem: self.elem,
            shape,
            bytes: self.bytes.clone(),
        }
    }
}

fn chunks<const N: usize>(bytes: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    bytes.chunks_exact(N).map(|c| {
        let mut a = [0u8; N];
        a.copy_from_slice(c);
        a
    })
}

fn push_f64(out: &mut BytesMut, elem: ElemType, v: f64) {
    match elem {
        ElemType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
        ElemType::F16 => out.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()),
        ElemType::Bf16 => out.extend_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
        ElemType::F64 => out.extend_from_slice(&v.to_le_bytes()),
        ElemType::Bool => out.extend_from_slice(&[u8::from(v != 0.0)]),
        _ => push_wrapped(out, elem, v as i64),
    }
}

fn push_wrapped(out: &mut BytesMut, elem: ElemType, v: i64) {
    match elem {
        ElemType::I8 => out.extend_from_slice(&(v as i8).to_le_bytes()),
        ElemType::U8 => out.extend_from_slice(&(v as u8).to_le_bytes()),
        ElemType::Bool => out.extend_from_slice(&[u8::from(v != 0)]),
        ElemType::I16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
        ElemType::U16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
        ElemType::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
        ElemType::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
        ElemType::I64 | ElemType::U64 => out.extend_from_slice(&v.to_le_bytes()),
        ElemType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
        ElemType::F16 => out.extend_from_slice(&half::f16::from_f64(v as f64).to_le_bytes()),
        ElemType::Bf16 => out.extend_from_slice(&half::bf16::from_f64(v as f64).to_le_bytes()),
        ElemType::F64 => out.extend_from_slice(&(v as f64).to_le_bytes()),
        ElemType::I4 | ElemType::U4 => out.extend_from_slice(&[(v as u8) & 0x0f]),
    }
}

/// Where a tensor's external bytes are: a file relative to the model's folder, and a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExternalRef {
    pub location: String,
    pub offset: u64,
    pub length: Option<u64>,
}

/// The dims of a `TensorProto` as `u32`s, or why not.
pub(crate) fn proto_shape(t: &TensorProto) -> Result<Vec<u32>, TensorError> {
    t.dims
        .iter()
        .map(|&d| {
            u32::try_from(d).map_err(|_| {
                TensorError(format!(
                    "dimension {d} of dims {:?} is negative or does not fit u32",
                    t.dims
                ))
            })
        })
        .collect()
}

/// The external-data reference of `t` when its `data_location` is `EXTERNAL`.
pub(crate) fn external_ref(t: &TensorProto) -> Result<Option<ExternalRef>, TensorError> {
    if t.data_location != Some(tensor_proto::DataLocation::External as i32) {
        return Ok(None);
    }
    let mut location = None;
    let mut offset = 0u64;
    let mut length = None;
    for entry in &t.external_data {
        let key = entry.key.as_deref().unwrap_or("");
        let value = entry.value.as_deref().unwrap_or("");
        let number = |what: &str| {
            value.parse::<u64>().map_err(|_| {
                TensorError(format!(
                    "external_data {what} {value:?} is not a non-negative integer"
                ))
            })
        };
        match key {
            "location" => location = Some(value.to_string()),
            "offset" => offset = number("offset")?,
            "length" => length = Some(number("length")?),
            _ => {}
        }
    }
    let location = location.ok_or_else(|| {
        TensorError("data_location is EXTERNAL but external_data has no \"location\"".into())
    })?;
    Ok(Some(ExternalRef {
        location,
        offset,
        length,
    }))
}

/// Decodes a tensor stored inside the message (`raw_data` or a typed field): `raw_data` stays a
/// view of the message's bytes. External tensors are the model reader's job.
pub(crate) fn decode_inline(t: &TensorProto) -> Result<HostTensor, TensorError> {
    let code = t.data_type.unwrap_or(0);
    let elem = ElemType::from_onnx(code).ok_or_else(|| {
        TensorError(format!(
            "element type {} is not supported (WebNN has no such type)",
            ElemType::onnx_name(code)
        ))
    })?;
    let shape = proto_shape(t)?;
    let count = checked_count(&shape)
        .filter(|_| within_limit(&shape))
        .ok_or_else(|| {
            TensorError(format!(
                "dims {:?} are too large (at most {MAX_ELEMENTS} elements)",
                t.dims
            ))
        })?;
    let want = elem
        .byte_len(count)
        .ok_or_else(|| TensorError(format!("dims {:?} are too large", t.dims)))?;
    let bytes = if let Some(raw) = &t.raw_data {
        raw.clone()
    } else {
        typed_fields(t, elem, count)?
    };
    if bytes.len() as u64 != want {
        return Err(TensorError(format!(
            "holds {} bytes of data, but {} {elem} elements of dims {:?} take {want}",
            bytes.len(),
            count,
            t.dims
        )));
    }
    Ok(HostTensor {
        name: t.name.clone().unwrap_or_default(),
        elem,
        shape,
        bytes,
    })
}

/// The bytes of a tensor stored in its typed field (`float_data`, `int32_data`, …).
fn typed_fields(t: &TensorProto, elem: ElemType, count: u64) -> Result<Bytes, TensorError> {
    let mut out = BytesMut::new();
    let field_len = |n: usize, field: &str| -> Result<(), TensorError> {
        let want = match elem {
            ElemType::I4 | ElemType::U4 => count.div_ceil(2),
            _ => count,
        };
        if n as u64 != want {
            return Err(TensorError(format!(
                "{field} holds {n} values, but dims {:?} of {elem} need {want}",
                t.dims
            )));
        }
        Ok(())
    };
    match elem {
        ElemType::F32 => {
            field_len(t.float_data.len(), "float_data")?;
            for v in &t.float_data {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        ElemType::F64 => {
            field_len(t.double_data.len(), "double_data")?;
            for v in &t.double_data {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        ElemType::I64 => {
            field_len(t.int64_data.len(), "int64_data")?;
            for v in &t.int64_data {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        ElemType::U32 | ElemType::U64 => {
            field_len(t.uint64_data.len(), "uint64_data")?;
            for &v in &t.uint64_data {
                if elem == ElemType::U32 {
                    out.extend_from_slice(&(v as u32).to_le_bytes());
                } else {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        _ => {
            // int32_data: one element each, at the element's own width; two per value for
            // the 4-bit types (already packed in the low byte)
            field_len(t.int32_data.len(), "int32_data")?;
            for &v in &t.int32_data {
                match elem.bits() {
                    4 | 8 => out.extend_from_slice(&[v as u8]),
                    16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
                    _ => out.extend_from_slice(&v.to_le_bytes()),
                }
            }
        }
    }
    Ok(out.freeze())
}

/// Reads a serialized `TensorProto` (a test's `input_0.pb`, say): its name, element type,
/// dims and little-endian bytes. External data is refused (such a file has no model beside it).
///
/// ```
/// use prost::Message as _;
/// let proto = webnn_weights_onnx::proto::TensorProto {
///     dims: vec![2],
///     data_type: Some(1),
///     float_data: vec![1.5, -2.0],
///     name: Some("x".into()),
///     ..Default::default()
/// };
/// let t = webnn_weights_onnx::read_tensor_proto(&proto.encode_to_vec()).unwrap();
/// assert_eq!((t.name.as_str(), t.shape.as_slice()), ("x", &[2u32][..]));
/// assert_eq!(t.to_f64s(), [1.5, -2.0]);
/// ```
pub fn read_tensor_proto(bytes: &[u8]) -> Result<HostTensor, TensorError> {
    use prost::Message as _;
    let t = TensorProto::decode(Bytes::copy_from_slice(bytes))
        .map_err(|e| TensorError(format!("not a TensorProto: {e}")))?;
    if external_ref(&t)?.is_some() {
        return Err(TensorError(
            "the tensor's data is external; a lone TensorProto file has no model folder to read it from"
                .into(),
        ));
    }
    decode_inline(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int32_data_keeps_each_type_at_its_width() {
        let t = TensorProto {
            dims: vec![3],
            data_type: Some(tensor_proto::DataType::Float16 as i32),
            int32_data: vec![0x3c00, 0xc000, 0],
            ..Default::default()
        };
        let h = decode_inline(&t).unwrap();
        assert_eq!(h.bytes.len(), 6);
        assert_eq!(h.to_f64s(), [1.0, -2.0, 0.0]);
        let b = TensorProto {
            dims: vec![2],
            data_type: Some(tensor_proto::DataType::Bool as i32),
            int32_data: vec![1, 0],
            ..Default::default()
        };
        assert_eq!(&decode_inline(&b).unwrap().bytes[..], &[1, 0]);
    }

    #[test]
    fn wrong_length_named() {
        let t = TensorProto {
            dims: vec![4],
            data_type: Some(1),
            float_data: vec![1.0],
            ..Default::default()
        };
        let e = decode_inline(&t).unwrap_err().to_string();
        assert!(e.contains("float_data holds 1 values"), "{e}");
    }

    #[test]
    fn int4_round_trip() {
        let t = HostTensor::from_i64s(ElemType::I4, vec![3], &[1, -1, 7]);
        assert_eq!(&t.bytes[..], &[0xF1, 0x07]);
        assert_eq!(t.to_i64s(), [1, -1, 7]);
    }
}
