//! Describing a sidecar on its own: tensors, types, shapes, offsets, metadata, alignment.

use super::{BlobLayout, ToolError};
use crate::{Manifest, SAFETENSORS_MAX_HEADER_SIZE};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest alignment reported; larger powers of two are shown as this.
pub const ALIGNMENT_CAP: u64 = 4096;

/// One tensor stored in a sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidecarTensor {
    /// Stored name.
    pub name: String,
    /// Storage type: the SafeTensors dtype (`F32`, `BF16`, …) or the manifest's `dataType`
    /// (`-` when the manifest does not give one).
    pub data_type: String,
    /// Stored shape, if known.
    pub shape: Option<Vec<u64>>,
    /// Absolute offset of the first byte in the file.
    pub offset: u64,
    /// Number of bytes.
    pub length: u64,
    /// The largest power of two dividing `offset`, capped at [`ALIGNMENT_CAP`].
    pub alignment: u64,
}

/// What a sidecar holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidecarReport {
    /// The file.
    pub path: PathBuf,
    /// `"safetensors"` or `"weights"`.
    pub kind: &'static str,
    /// File size in bytes.
    pub file_len: u64,
    /// Archive metadata (`__metadata__`), or for a blob the manifest's `format`, `version`,
    /// `endianness`, the `manifest` path and the judged `header` ([`BlobLayout`]).
    pub metadata: BTreeMap<String, String>,
    /// Tensors in file order (by offset for archives, manifest order for blobs).
    pub tensors: Vec<SidecarTensor>,
}

/// The largest power of two dividing `offset`, at most [`ALIGNMENT_CAP`] (offset 0 is
/// aligned to anything).
///
/// ```
/// use webnn_weights_runtime::weight_tools::alignment_of;
/// assert_eq!(alignment_of(8), 8);
/// assert_eq!(alignment_of(24), 8);
/// assert_eq!(alignment_of(0), 4096);
/// assert_eq!(alignment_of(1 << 20), 4096);
/// ```
pub fn alignment_of(offset: u64) -> u64 {
    if offset == 0 {
        ALIGNMENT_CAP
    } else {
        (1u64 << offset.trailing_zeros()).min(ALIGNMENT_CAP)
    }
}

/// Whether `path` is a SafeTensors archive: a `.safetensors` / `.safetensor` extension
/// (any letter case), or content that starts like one (an 8-byte little-endian header
/// length that fits the file, followed by `{`).
pub fn is_safetensors_file(path: &Path) -> bool {
    let by_name = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        e.eq_ignore_ascii_case("safetensors") || e.eq_ignore_ascii_case("safetensor")
    });
    by_name || looks_like_safetensors(path).unwrap_or(false)
}

fn looks_like_safetensors(path: &Path) -> std::io::Result<bool> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut head = [0u8; 9];
    if len < 9 {
        return Ok(false);
    }
    file.read_exact(&mut head)?;
    let n = u64::from_le_bytes([
        head[0], head[1], head[2], head[3], head[4], head[5], head[6], head[7],
    ]);
    Ok((2..=SAFETENSORS_MAX_HEADER_SIZE).contains(&n) && n <= len - 8 && head[8] == b'{')
}

/// Describes a SafeTensors archive from its header alone.
pub fn inspect_safetensors(path: &Path) -> Result<SidecarReport, ToolError> {
    let mut file = File::open(path).map_err(|e| ToolError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| ToolError::io(path, e))?.len();
    let mut prefix = [0u8; 8];
    file.read_exact(&mut prefix).map_err(|e| {
        ToolError::invalid(
            path,
            format!("not a SafeTensors archive: cannot read the 8-byte header length ({e})"),
        )
    })?;
    let n = u64::from_le_bytes(prefix);
    if n > SAFETENSORS_MAX_HEADER_SIZE || n > file_len - 8 {
        return Err(ToolError::invalid(
            path,
            format!(
                "not a SafeTensors archive: header length {n} exceeds the file ({file_len} bytes) \
                 or the limit of {SAFETENSORS_MAX_HEADER_SIZE} bytes"
            ),
        ));
    }
    // Bounded by SAFETENSORS_MAX_HEADER_SIZE above.
    let mut header = vec![0u8; n as usize];
    file.read_exact(&mut header)
        .map_err(|e| ToolError::io(path, e))?;
    let meta: safetensors::tensor::Metadata = serde_json::from_slice(&header)
        .map_err(|e| ToolError::invalid(path, format!("invalid SafeTensors header: {e}")))?;
    let data_start = 8 + n;
    if data_start + meta.data_len() as u64 > file_len {
        return Err(ToolError::invalid(
            path,
            format!(
                "the header describes {} data bytes, but only {} follow it",
                meta.data_len(),
                file_len - data_start
            ),
        ));
    }
    let infos = meta.tensors();
    let mut tensors = Vec::with_capacity(infos.len());
    for name in meta.offset_keys() {
        let Some(info) = infos.get(&name) else {
            continue;
        };
        let (begin, end) = info.data_offsets;
        let offset = data_start + begin as u64;
        tensors.push(SidecarTensor {
            data_type: format!("{:?}", info.dtype),
            shape: Some(info.shape.iter().map(|&d| d as u64).collect()),
            offset,
            length: end.saturating_sub(begin) as u64,
            alignment: alignment_of(offset),
            name,
        });
    }
    let metadata = meta
        .metadata()
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(SidecarReport {
        path: path.to_path_buf(),
        kind: "safetensors",
        file_len,
        metadata,
        tensors,
    })
}

/// Describes a `.weights` blob from its manifest (and its first 8 bytes, to judge the
/// WGWT header). Every range is checked against the file size.
pub fn inspect_blob(path: &Path, manifest_path: &Path) -> Result<SidecarReport, ToolError> {
    let manifest = Manifest::read(manifest_path)?;
    let file = File::open(path).map_err(|e| ToolError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| ToolError::io(path, e))?.len();
    let mut tensors = Vec::with_capacity(manifest.tensors.len());
    for e in &manifest.tensors {
        if e.end().is_none_or(|end| end > file_len) {
            return Err(ToolError::invalid(
                path,
                format!(
                    "tensor \"{}\": bytes {}..{} (from {}) lie beyond the end of the file ({file_len} bytes)",
                    e.name,
                    e.byte_offset,
                    u128::from(e.byte_offset) + u128::from(e.byte_length),
                    manifest_path.display()
                ),
            ));
        }
        tensors.push(SidecarTensor {
            name: e.name.clone(),
            data_type: e.data_type.clone().unwrap_or_else(|| "-".to_string()),
            shape: e.shape.clone(),
            offset: e.byte_offset,
            length: e.byte_length,
            alignment: alignment_of(e.byte_offset),
        });
    }
    let layout = BlobLayout::detect(
        &file,
        path,
        file_len,
        manifest
            .tensors
            .iter()
            .map(|e| (e.byte_offset, e.byte_length)),
    )?;
    let mut metadata = BTreeMap::new();
    metadata.insert("manifest".to_string(), manifest_path.display().to_string());
    metadata.insert(
        "header".to_string(),
        match layout {
            BlobLayout::Wgwt => "WGWT v1".to_string(),
            BlobLayout::Headerless => "none".to_string(),
        },
    );
    for (key, value) in [
        ("format", manifest.format.clone()),
        ("version", manifest.version.map(|v| v.to_string())),
        ("endianness", manifest.endianness.clone()),
    ] {
        if let Some(v) = value {
            metadata.insert(key.to_string(), v);
        }
    }
    Ok(SidecarReport {
        path: path.to_path_buf(),
        kind: "weights",
        file_len,
        metadata,
        tensors,
    })
}
