//! File formats of the blob tools: the WGWT header, the v1 manifest as written, the
//! `.meta.json` of a tensor folder, and tensor names as file paths.

use super::ToolError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};
use webnn_weights_runtime::DataType;

/// The four bytes a WGWT blob starts with.
pub(crate) const WGWT_MAGIC: [u8; 4] = *b"WGWT";
/// The WGWT version written after the magic, as a little-endian `u32`.
pub(crate) const WGWT_VERSION: u32 = 1;
/// Size of the WGWT header; the first tensor of a WGWT blob starts here.
pub const WGWT_HEADER_LEN: u64 = 8;
/// The `format` of a weights manifest.
pub(crate) const MANIFEST_FORMAT: &str = "wg-weights-manifest";
/// The manifest version these tools read and write.
pub(crate) const MANIFEST_VERSION: u32 = 1;
/// The only byte order the tools accept and write.
pub(crate) const LITTLE_ENDIAN: &str = "little";
/// The `layout` written for tensors that do not state one.
pub(crate) const DEFAULT_LAYOUT: &str = "row-major";

/// The 8-byte WGWT header: magic, then the version as little-endian `u32`.
pub(crate) fn wgwt_header() -> [u8; 8] {
    let mut header = [0u8; 8];
    header[..4].copy_from_slice(&WGWT_MAGIC);
    header[4..].copy_from_slice(&WGWT_VERSION.to_le_bytes());
    header
}

/// Whether a blob starts with a WGWT header.
///
/// Offsets in a manifest are absolute, so tensor bytes are found the same way in both
/// layouts; the header only matters for validation. A blob is judged to carry a header
/// when **no non-empty tensor of the manifest overlaps bytes 0..8 and the file starts with
/// the magic `WGWT`**; the version that follows must then be 1. A blob whose first bytes
/// are tensor data (a headerless `convert-onnx` blob, first offset 0) is headerless, even
/// if that data happens to spell `WGWT`; so is a blob whose unaddressed first bytes are
/// not the magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobLayout {
    /// `WGWT` + version 1, tensors from offset 8.
    Wgwt,
    /// No header: tensors from offset 0 (or wherever the manifest says).
    Headerless,
}

impl BlobLayout {
    /// Judges the layout of `file` (of length `file_len`, named `path` in errors) given the
    /// `(offset, length)` ranges the manifest addresses; fails on a WGWT header with an
    /// unsupported version.
    pub fn detect(
        file: &File,
        path: &Path,
        file_len: u64,
        ranges: impl IntoIterator<Item = (u64, u64)>,
    ) -> Result<BlobLayout, ToolError> {
        let header_is_data = ranges
            .into_iter()
            .any(|(offset, length)| length > 0 && offset < WGWT_HEADER_LEN);
        if header_is_data || file_len < WGWT_HEADER_LEN {
            return Ok(BlobLayout::Headerless);
        }
        let mut head = [0u8; 8];
        let mut reader = file;
        reader
            .seek(SeekFrom::Start(0))
            .and_then(|_| reader.read_exact(&mut head))
            .map_err(|e| ToolError::io(path, e))?;
        Self::classify(&head).map_err(|message| ToolError::invalid(path, message))
    }

    /// The layout of a blob whose first 8 bytes (not addressed by any tensor) are `head`.
    ///
    /// ```
    /// use webnn_weights_tools::weight_tools::BlobLayout;
    /// assert_eq!(BlobLayout::classify(b"WGWT\x01\x00\x00\x00"), Ok(BlobLayout::Wgwt));
    /// assert_eq!(BlobLayout::classify(&[0; 8]), Ok(BlobLayout::Headerless));
    /// assert!(BlobLayout::classify(b"WGWT\x02\x00\x00\x00").is_err());
    /// ```
    pub fn classify(head: &[u8; 8]) -> Result<BlobLayout, String> {
        if head[..4] != WGWT_MAGIC {
            return Ok(BlobLayout::Headerless);
        }
        let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if version == WGWT_VERSION {
            Ok(BlobLayout::Wgwt)
        } else {
            Err(format!(
                "WGWT header has version {version}, expected {WGWT_VERSION}"
            ))
        }
    }
}

/// One tensor of a v1 manifest, serialized exactly as `webnn-graph` 0.4.0 writes it:
/// keys `dataType, shape, byteOffset, byteLength, layout` in this order, `layout` as a
/// string or `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestV1Entry {
    /// Logical element type.
    #[serde(rename = "dataType")]
    pub data_type: DataType,
    /// Dimensions.
    pub shape: Vec<u32>,
    /// Absolute offset of the first byte in the blob.
    #[serde(rename = "byteOffset")]
    pub byte_offset: u64,
    /// Number of bytes.
    #[serde(rename = "byteLength")]
    pub byte_length: u64,
    /// Memory layout, conventionally `"row-major"`.
    pub layout: Option<String>,
}

/// A v1 weights manifest as the tools write it: tensors keyed and ordered by name.
///
/// ```
/// use webnn_weights_tools::weight_tools::{ManifestV1, ManifestV1Entry};
/// use webnn_weights_runtime::DataType;
/// let mut m = ManifestV1::new();
/// m.tensors.insert("b".into(), ManifestV1Entry {
///     data_type: DataType::Float32, shape: vec![2], byte_offset: 8, byte_length: 8,
///     layout: Some("row-major".into()),
/// });
/// let json = m.to_json().unwrap();
/// assert!(json.starts_with("{\n  \"format\": \"wg-weights-manifest\",\n  \"version\": 1,"));
/// assert!(json.ends_with("}")); // no trailing newline, as webnn-graph writes it
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestV1 {
    /// Always `wg-weights-manifest`.
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// Always `little`.
    pub endianness: String,
    /// Tensors by name.
    pub tensors: BTreeMap<String, ManifestV1Entry>,
}

impl Default for ManifestV1 {
    fn default() -> Self {
        ManifestV1::new()
    }
}

impl ManifestV1 {
    /// An empty little-endian v1 manifest.
    pub fn new() -> ManifestV1 {
        ManifestV1 {
            format: MANIFEST_FORMAT.to_string(),
            version: MANIFEST_VERSION,
            endianness: LITTLE_ENDIAN.to_string(),
            tensors: BTreeMap::new(),
        }
    }

    /// Pretty JSON (two-space indent, no trailing newline), byte-identical to the
    /// manifests of `webnn-graph` 0.4.0.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// The tensors in blob order: by offset, then by length (so empty tensors sharing an
    /// offset with a non-empty one come first), then by name.
    ///
    /// `webnn-graph` 0.4.0 broke ties by name only, so its `pack-weights` rejected its own
    /// `create-manifest` output when an empty tensor's name sorted after the non-empty
    /// tensor at the same offset; the bytes written are the same whenever it succeeded.
    pub fn entries_by_offset(&self) -> Vec<(&String, &ManifestV1Entry)> {
        let mut entries: Vec<_> = self.tensors.iter().collect();
        entries.sort_by_key(|(_, entry)| (entry.byte_offset, entry.byte_length));
        entries
    }

    /// Checks that the tensors are laid out contiguously from `start` in offset order and
    /// that each `byteLength` equals what `dataType` and `shape` require (packed rule for
    /// 4-bit types). Returns the end offset. `path` names the manifest in errors.
    pub fn check_contiguous(&self, start: u64, path: &Path) -> Result<u64, ToolError> {
        let mut next = start;
        for (name, entry) in self.entries_by_offset() {
            if entry.byte_offset != next {
                return Err(ToolError::invalid(
                    path,
                    format!(
                        "tensor \"{name}\": byteOffset is {}, expected {next} (tensors must follow \
                         each other without gaps from offset {start}, in offset order)",
                        entry.byte_offset
                    ),
                ));
            }
            let expected = entry.data_type.byte_length(&entry.shape).ok_or_else(|| {
                ToolError::invalid(
                    path,
                    format!(
                        "tensor \"{name}\": shape {:?} of {} is too large",
                        entry.shape, entry.data_type
                    ),
                )
            })?;
            if entry.byte_length != expected {
                return Err(ToolError::invalid(
                    path,
                    format!(
                        "tensor \"{name}\": byteLength is {}, expected {expected} for {} {:?}{}",
                        entry.byte_length,
                        entry.data_type,
                        entry.shape,
                        packed_note(entry.data_type)
                    ),
                ));
            }
            next = next.checked_add(entry.byte_length).ok_or_else(|| {
                ToolError::invalid(path, format!("tensor \"{name}\": offsets overflow"))
            })?;
        }
        Ok(next)
    }
}

/// An explanation appended to size errors of packed 4-bit types.
pub(crate) fn packed_note(data_type: DataType) -> &'static str {
    if data_type.is_packed_4bit() {
        " (4-bit types pack two elements per byte: ceil(n / 2) bytes)"
    } else {
        ""
    }
}

/// The `NAME.meta.json` of a tensor folder. Only `dataType` and `shape` are required;
/// `byteOffset` and `byteLength` (which `webnn-graph` 0.4.0 demanded) are ignored, since
/// offsets are assigned by position and the length follows from the `.bin` file.
///
/// ```
/// use webnn_weights_tools::weight_tools::TensorMeta;
/// use webnn_weights_runtime::DataType;
/// let meta = TensorMeta::parse(br#"{"dataType":"int4","shape":[3]}"#,
///     std::path::Path::new("w.meta.json")).unwrap();
/// assert_eq!(meta.data_type, DataType::Int4);
/// assert_eq!(meta.layout, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TensorMeta {
    /// Logical element type.
    #[serde(rename = "dataType")]
    pub data_type: DataType,
    /// Dimensions.
    pub shape: Vec<u32>,
    /// Layout, if stated (`null` counts as not stated).
    #[serde(default)]
    pub layout: Option<String>,
}

impl TensorMeta {
    /// Parses a `.meta.json` file's bytes; `path` names it in errors.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<TensorMeta, ToolError> {
        serde_json::from_slice(bytes).map_err(|e| {
            ToolError::invalid(
                path,
                format!(
                    "invalid tensor metadata ({e}); expected an object with \"dataType\" and \
                     \"shape\", e.g. {{\"dataType\": \"float32\", \"shape\": [2, 2]}}"
                ),
            )
        })
    }
}

/// `dir/NAME<suffix>` for a tensor name, refusing names that would leave `dir`: a name is
/// a relative path of ordinary components (`/` makes subfolders, as with `webnn-graph`),
/// never empty, absolute, or containing `.`/`..` components or empty ones (`a//b`).
///
/// Names are canonical, so two different names never name the same file (`x//y` and
/// `x/./y` would both be `x/y`, and one tensor would silently overwrite the other).
pub(crate) fn tensor_file_path(dir: &Path, name: &str, suffix: &str) -> Result<PathBuf, String> {
    let relative = Path::new(name);
    let ordinary = !name.is_empty()
        && !name.contains('\0')
        && name
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !ordinary {
        return Err(format!(
            "tensor name \"{name}\" cannot be used as a file name (it must be a relative path \
             of non-empty components other than \".\" and \"..\")"
        ));
    }
    Ok(dir.join(format!("{name}{suffix}")))
}

impl ManifestV1 {
    /// Applies the strict version-1 rules to a parsed manifest: `format` is
    /// `"wg-weights-manifest"`, `version` is 1, `endianness` is `"little"`, and every tensor
    /// has a known `dataType` and a `shape` of 32-bit dimensions. `path` names the manifest
    /// in errors. Layout rules ([`ManifestV1::check_contiguous`]) are separate.
    pub fn from_manifest(
        manifest: &webnn_weights_runtime::manifest::Manifest,
        path: &Path,
    ) -> Result<ManifestV1, ToolError> {
        let bad = |message: String| ToolError::invalid(path, message);
        if manifest.format.as_deref() != Some(MANIFEST_FORMAT) {
            return Err(bad(format!(
                "\"format\" is {}, expected \"{MANIFEST_FORMAT}\"",
                shown(manifest.format.as_deref())
            )));
        }
        if manifest.version != Some(u64::from(MANIFEST_VERSION)) {
            return Err(bad(format!(
                "\"version\" is {}, expected {MANIFEST_VERSION}",
                manifest
                    .version
                    .map_or_else(|| "absent or not an integer".to_string(), |v| v.to_string())
            )));
        }
        if manifest.endianness.as_deref() != Some(LITTLE_ENDIAN) {
            return Err(bad(format!(
                "\"endianness\" is {}, expected \"{LITTLE_ENDIAN}\" (the only byte order supported)",
                shown(manifest.endianness.as_deref())
            )));
        }
        let mut out = ManifestV1::new();
        for entry in &manifest.tensors {
            let name = &entry.name;
            let data_type = entry
                .data_type
                .as_deref()
                .and_then(DataType::from_json_name)
                .ok_or_else(|| {
                    bad(format!(
                        "tensor \"{name}\": \"dataType\" is {}, expected one of {}",
                        shown(entry.data_type.as_deref()),
                        DataType::ALL.map(DataType::json_name).join(", ")
                    ))
                })?;
            let shape = entry
                .shape
                .as_ref()
                .and_then(|dims| dims.iter().map(|&d| u32::try_from(d).ok()).collect())
                .ok_or_else(|| {
                    bad(format!(
                        "tensor \"{name}\": \"shape\" must be an array of integers from 0 to {}",
                        u32::MAX
                    ))
                })?;
            out.tensors.insert(
                name.clone(),
                ManifestV1Entry {
                    data_type,
                    shape,
                    byte_offset: entry.byte_offset,
                    byte_length: entry.byte_length,
                    layout: entry.layout.clone().flatten(),
                },
            );
        }
        Ok(out)
    }

    /// Writes the manifest JSON to `path` through a temporary file renamed into place.
    pub fn write_to(&self, path: &Path) -> Result<(), ToolError> {
        let json = self
            .to_json()
            .map_err(|e| ToolError::invalid(path, format!("cannot serialize manifest: {e}")))?;
        webnn_weights_atomic::write_file(path, |w| std::io::Write::write_all(w, json.as_bytes()))
            .map_err(|e| ToolError::io(path, e))
    }
}

fn shown(value: Option<&str>) -> String {
    value.map_or_else(|| "absent".to_string(), |v| format!("\"{v}\""))
}
