//! The constants of an embedded graph: the constant table decoded against the data
//! ([`decode_table`]) into [`EmbeddedConstant`]s and their typed views.

use super::EmbedErrorKind;
use crate::graph::dtype::DataType;
use std::borrow::Cow;
use webnn_weights_artifacts::{ConstantTable, TableEntry};

/// Checks the embedded constant table against the data and turns it into constants that
/// borrow their names, references, shapes (where aligned) and bytes from the binary.
pub(super) fn decode_table(
    data: &'static [u8],
    table: &'static [u8],
) -> Result<Vec<EmbeddedConstant>, EmbedErrorKind> {
    let damaged = |what: String| EmbedErrorKind::Inconsistent(format!("the constant table {what}"));
    let parsed = ConstantTable::parse(table).map_err(|e| damaged(e.to_string()))?;
    parsed
        .check_data_len(data.len() as u64)
        .map_err(|e| damaged(e.to_string()))?;
    parsed
        .iter()
        .map(|entry| {
            let range = usize::try_from(entry.offset())
                .ok()
                .zip(usize::try_from(entry.length()).ok())
                .and_then(|(start, length)| data.get(start..start.checked_add(length)?))
                .ok_or_else(|| {
                    EmbedErrorKind::Inconsistent(format!(
                        "constant `{}`: bytes {}..+{} are not a range of the {} embedded bytes",
                        entry.name(),
                        entry.offset(),
                        entry.length(),
                        data.len()
                    ))
                })?;
            Ok(EmbeddedConstant {
                name: Cow::Borrowed(entry.name()),
                reference: Cow::Borrowed(entry.reference()),
                data_type: entry.data_type(),
                shape: shape_of(&entry),
                bytes: range,
                sha256: entry.sha256(),
            })
        })
        .collect()
}

/// The shape straight from the table when it can be viewed as `&[u32]` (little-endian and
/// aligned, as the macro's 64-aligned table is), else decoded.
fn shape_of(entry: &TableEntry<'static>) -> Cow<'static, [u32]> {
    if cfg!(target_endian = "little") {
        if let Ok(dims) = bytemuck::try_cast_slice::<u8, u32>(entry.shape_bytes()) {
            return Cow::Borrowed(dims);
        }
    }
    Cow::Owned(entry.shape().collect())
}

/// One `@weights` constant of an [`EmbeddedGraph`](crate::EmbeddedGraph).
#[derive(Debug, Clone)]
pub struct EmbeddedConstant {
    pub(super) name: Cow<'static, str>,
    pub(super) reference: Cow<'static, str>,
    pub(super) data_type: DataType,
    pub(super) shape: Cow<'static, [u32]>,
    pub(super) bytes: &'static [u8],
    pub(super) sha256: Option<[u8; 32]>,
}

impl EmbeddedConstant {
    /// The constant's name in the graph.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `@weights("…")` reference it was resolved from.
    pub fn reference(&self) -> &str {
        &self.reference
    }

    /// The declared (logical) data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// The declared shape.
    pub fn shape(&self) -> &[u32] {
        &self.shape
    }

    /// The SHA-256 of [`EmbeddedConstant::bytes`] when the graph is locked (a
    /// `<graph file name>.lock` beside it, or `Builder::lock`): the digest the lock pins,
    /// verified against the bytes when they were read (at build time for embedded weights,
    /// on first use in the run-time mode). A lookup, not a hash: key a cache on it for
    /// free. `None` for a graph without a lock.
    ///
    /// ```
    /// use webnn_weights_runtime::EmbeddedGraph;
    /// fn cache_key(graph: &'static EmbeddedGraph, name: &str) -> Option<[u8; 32]> {
    ///     graph.constant(name)?.sha256()
    /// }
    /// ```
    pub fn sha256(&self) -> Option<[u8; 32]> {
        self.sha256
    }

    /// The little-endian element bytes (BF16 sidecar data already widened to float32;
    /// 4-bit types packed two per byte, first element in the low nibble). Zero-copy, and
    /// the first byte is 64-byte aligned.
    pub fn bytes(&self) -> &'static [u8] {
        self.bytes
    }

    fn view<T: bytemuck::Pod>(&self, data_type: DataType) -> Option<&'static [T]> {
        if self.data_type != data_type || !byte_order_fits::<T>() {
            return None;
        }
        // Checks alignment and length; never copies.
        bytemuck::try_cast_slice(self.bytes).ok()
    }

    /// The elements as `f32` when the constant is `float32` (little-endian targets).
    pub fn as_f32(&self) -> Option<&'static [f32]> {
        self.view(DataType::Float32)
    }

    /// The elements as [`half::f16`] when the constant is `float16` (little-endian targets;
    /// feature `f16`, which brings the `half` crate).
    #[cfg(feature = "f16")]
    #[cfg_attr(docsrs, doc(cfg(feature = "f16")))]
    pub fn as_f16(&self) -> Option<&'static [half::f16]> {
        self.view(DataType::Float16)
    }

    /// The elements as `i32` when the constant is `int32` (little-endian targets).
    pub fn as_i32(&self) -> Option<&'static [i32]> {
        self.view(DataType::Int32)
    }

    /// The elements as `u32` when the constant is `uint32` (little-endian targets).
    pub fn as_u32(&self) -> Option<&'static [u32]> {
        self.view(DataType::Uint32)
    }

    /// The elements as `i64` when the constant is `int64` (little-endian targets).
    pub fn as_i64(&self) -> Option<&'static [i64]> {
        self.view(DataType::Int64)
    }

    /// The elements as `u64` when the constant is `uint64` (little-endian targets).
    pub fn as_u64(&self) -> Option<&'static [u64]> {
        self.view(DataType::Uint64)
    }

    /// The elements as `i8` when the constant is `int8` (every target).
    pub fn as_i8(&self) -> Option<&'static [i8]> {
        self.view(DataType::Int8)
    }

    /// The elements as `u8` when the constant is `uint8` (every target: one byte has no
    /// byte order).
    pub fn as_u8(&self) -> Option<&'static [u8]> {
        self.view(DataType::Uint8)
    }

    /// The elements of an `int4` constant, unpacked and sign-extended (two per byte, the
    /// first in the low nibble; an odd count's padding nibble left out); `None` for other
    /// types. Allocates one byte per element.
    ///
    /// ```
    /// # use webnn_weights_runtime::{read_graph_file, EmbeddedGraph};
    /// # // What `include_webnn_graph!` gives, here resolved from a fixture at first use.
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/packed4/quant.webnn");
    /// # let json = serde_json::to_string(&read_graph_file(path).unwrap()).unwrap();
    /// # let json: &'static str = Box::leak(json.into_boxed_str());
    /// # let model: &'static EmbeddedGraph =
    /// #     Box::leak(Box::new(webnn_weights_runtime::__macro::runtime(path, json, path, None, None, None)));
    /// // w_q: i4[8, 3], stored as 12 packed bytes (0x21, 0x46, 0x6b, 0x90, …)
    /// let w_q = model.constant("w_q").unwrap();
    /// let values = w_q.unpack_int4().unwrap();
    /// assert_eq!(values.len(), 24);
    /// assert_eq!(values[..8], [1, 2, 6, 4, -5, 6, 0, -7]);
    /// assert_eq!(w_q.unpack_uint4(), None); // not uint4
    /// ```
    pub fn unpack_int4(&self) -> Option<Vec<i8>> {
        let count = crate::graph::dtype::count_if(self.data_type, DataType::Int4, &self.shape)?;
        crate::graph::dtype::unpack_int4(self.bytes, count)
    }

    /// The elements of a `uint4` constant, unpacked, each 0..=15 (two per byte, the first in
    /// the low nibble; an odd count's padding nibble left out); `None` for other types.
    /// Allocates one byte per element.
    ///
    /// ```
    /// # use webnn_weights_runtime::{read_graph_file, EmbeddedGraph};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/packed4/quant.webnn");
    /// # let json = serde_json::to_string(&read_graph_file(path).unwrap()).unwrap();
    /// # let json: &'static str = Box::leak(json.into_boxed_str());
    /// # let model: &'static EmbeddedGraph =
    /// #     Box::leak(Box::new(webnn_weights_runtime::__macro::runtime(path, json, path, None, None, None)));
    /// // w_u: u4[5], stored as 3 bytes 0x21, 0x46, 0x6b (the last high nibble is padding)
    /// let w_u = model.constant("w_u").unwrap();
    /// assert_eq!(w_u.unpack_uint4(), Some(vec![1, 2, 6, 4, 11]));
    /// ```
    pub fn unpack_uint4(&self) -> Option<Vec<u8>> {
        let count = crate::graph::dtype::count_if(self.data_type, DataType::Uint4, &self.shape)?;
        crate::graph::dtype::unpack_uint4(self.bytes, count)
    }
}

/// Whether the little-endian bytes of the data read as `T` on this target: always for
/// one-byte elements, on little-endian targets for wider ones.
pub(super) fn byte_order_fits<T>() -> bool {
    std::mem::size_of::<T>() == 1 || cfg!(target_endian = "little")
}
