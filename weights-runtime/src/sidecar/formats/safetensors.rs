//! SafeTensors archives: the 8-byte header length, the JSON header (read and checked by a
//! reader of this crate), the rule that the data section ends exactly at the end of the file
//! (no trailing bytes), and the format's table of storage types for logical types.

mod header;

pub(crate) use header::Dtype;

use super::{open_stamped, Catalog, FormatError, SidecarFormat, Storage, StoredTensor};
use crate::graph::dtype::DataType;
use crate::sidecar::{Stamp, StoredFile};
use std::io::Read;
use std::path::Path;

/// SafeTensors archive metadata key of the packed 4-bit extension.
pub const PACKED_4BIT_METADATA_KEY: &str = "rustnn.webnn.packed4";
/// The only supported value of [`PACKED_4BIT_METADATA_KEY`].
pub const PACKED_4BIT_METADATA_VERSION: &str = "1";

/// The largest header the `safetensors` crate accepts (its private `MAX_HEADER_SIZE`).
pub(crate) const SAFETENSORS_MAX_HEADER_SIZE: u64 = 100_000_000;

/// The SafeTensors storage type of a logical type, as the header spells it, per the format's
/// table: `float32` F32, `float16` F16, `int32` I32, `uint32` U32, `int64` I64, `uint64` U64,
/// `int8` I8, `uint8` U8.
///
/// `None` for the packed 4-bit types: SafeTensors has no 4-bit storage type, so the format
/// stores them as 1-D `U8` under the [`PACKED_4BIT_METADATA_KEY`] marker. (A `BF16` tensor
/// may also satisfy `float32`; that conversion is the resolver's.) Archive writers, such as
/// the one in `webnn-weights-tools`, use this table so that what they write is what the
/// resolver accepts.
///
/// ```
/// use webnn_weights_runtime::formats::safetensors::storage_type;
/// use webnn_weights_runtime::DataType;
/// assert_eq!(storage_type(DataType::Float16), Some("F16"));
/// assert_eq!(storage_type(DataType::Int4), None);
/// ```
pub fn storage_type(data_type: DataType) -> Option<&'static str> {
    Dtype::of(data_type).map(Dtype::name)
}

impl Dtype {
    /// The storage type of `data_type` ([`storage_type`]).
    pub(crate) fn of(data_type: DataType) -> Option<Dtype> {
        Some(match data_type {
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

/// [`Catalog::read_safetensors`].
pub(crate) fn read(path: &Path) -> Result<Catalog, FormatError> {
    let (file, stamp) = open_stamped(path)?;
    let mut reader = &file;
    let header_len = header_len(path, stamp.len, |prefix| {
        reader.read_exact(prefix).map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })
    })?;
    // header_len: checked <= 100 MB and <= the file's size.
    let mut header = vec![0u8; header_len as usize];
    reader.read_exact(&mut header).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            FormatError::Changed {
                path: path.to_path_buf(),
                expected: stamp.to_string(),
                found: "a shorter file while reading its header".to_string(),
            }
        } else {
            FormatError::Io {
                path: path.to_path_buf(),
                source: e,
            }
        }
    })?;
    catalog(path, stamp, &header)
}

/// Reads the catalog of an archive held in memory (what `GraphLoader::weights_bytes` reads) (`bytes` is the whole archive;
/// `label` names it in messages). Nothing is allocated before the header length has been
/// checked against `bytes`.
pub(crate) fn read_bytes(bytes: &[u8], label: &Path) -> Result<Catalog, FormatError> {
    let stamp = Stamp {
        len: bytes.len() as u64,
        modified: None,
    };
    let header_len = header_len(label, stamp.len, |prefix| {
        prefix.copy_from_slice(&bytes[..8]);
        Ok(())
    })?;
    // Checked: 8 + header_len <= bytes.len().
    let header = &bytes[8..8 + header_len as usize];
    catalog(label, stamp, header)
}

/// Reads the 8-byte prefix through `read_prefix` (called only when the file has 8
/// bytes) and checks the declared header length against the limit and `file_len`.
fn header_len(
    path: &Path,
    file_len: u64,
    read_prefix: impl FnOnce(&mut [u8; 8]) -> Result<(), FormatError>,
) -> Result<u64, FormatError> {
    let invalid = |expected: String, found: String| FormatError::SafeTensorsHeader {
        path: path.to_path_buf(),
        expected,
        found,
    };
    if file_len < 8 {
        return Err(invalid(
            "at least 8 bytes (the header length)".to_string(),
            format!("a file of {file_len} bytes"),
        ));
    }
    let mut prefix = [0u8; 8];
    read_prefix(&mut prefix)?;
    let header_len = u64::from_le_bytes(prefix);
    if header_len > SAFETENSORS_MAX_HEADER_SIZE {
        return Err(invalid(
            format!("a header of at most {SAFETENSORS_MAX_HEADER_SIZE} bytes"),
            format!("a declared header length of {header_len} bytes"),
        ));
    }
    if header_len > file_len - 8 {
        return Err(invalid(
            format!("a header of {header_len} bytes after the 8-byte length, as declared"),
            format!(
                "only {} bytes after the length (truncated file?)",
                file_len - 8
            ),
        ));
    }
    Ok(header_len)
}

/// Parses the JSON header and checks that the data section fills the rest of the file.
fn catalog(path: &Path, stamp: Stamp, header: &[u8]) -> Result<Catalog, FormatError> {
    let invalid = |expected: String, found: String| FormatError::SafeTensorsHeader {
        path: path.to_path_buf(),
        expected,
        found,
    };
    let parsed = header::parse(header).map_err(|e| invalid(e.expected, e.found))?;
    let header_len = header.len() as u64;
    let data_start = 8 + header_len;
    let data_len = parsed.data_len();
    // Exact even for a header whose offsets reach near 2^64 (no made-up figure).
    let expected = u128::from(data_start) + u128::from(data_len);
    if expected != u128::from(stamp.len) {
        let found = if u128::from(stamp.len) > expected {
            format!(
                "{} bytes ({} bytes after the last tensor)",
                stamp.len,
                u128::from(stamp.len) - expected
            )
        } else {
            format!("{} bytes (truncated)", stamp.len)
        };
        return Err(invalid(
            format!(
                "a file of {expected} bytes (8 + {header_len} header + {data_len} tensor data)"
            ),
            found,
        ));
    }
    let tensors = parsed
        .tensors
        .into_iter()
        .map(|t| StoredTensor {
            storage: Storage::Typed {
                dtype: t.dtype,
                shape: t.shape,
            },
            file: 0,
            offset: data_start + t.start,
            length: t.end - t.start,
            name: t.name,
        })
        .collect();
    let metadata = parsed.metadata;
    let packed_markers = vec![metadata.get(PACKED_4BIT_METADATA_KEY).cloned()];
    Ok(Catalog {
        format: SidecarFormat::SafeTensors,
        names_file: path.to_path_buf(),
        files: vec![StoredFile::new(path.to_path_buf(), stamp)],
        tensors,
        metadata,
        packed_markers,
    })
}
