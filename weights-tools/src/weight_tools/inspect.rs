//! Describing a sidecar on its own: tensors, types, shapes, offsets, metadata, alignment.

use super::{BlobLayout, ToolError};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::formats::{self, Catalog, SidecarFormat};

/// The largest alignment reported; larger powers of two are shown as this.
pub const ALIGNMENT_CAP: u64 = 4096;

/// One tensor stored in a sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// For a sharded archive, the shard holding the tensor (`offset` is within it).
    pub shard: Option<PathBuf>,
}

/// What a sidecar holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SidecarReport {
    /// The file.
    pub path: PathBuf,
    /// `"safetensors"`, `"weights"` or `"sharded-safetensors"` (a Hugging Face index).
    pub kind: &'static str,
    /// File size in bytes (of the index, for a sharded archive).
    pub file_len: u64,
    /// Archive metadata (`__metadata__`), or for a blob the manifest's `format`, `version`,
    /// `endianness`, the `manifest` path and the judged `header` ([`BlobLayout`]).
    pub metadata: BTreeMap<String, String>,
    /// Tensors in file order (by offset for archives, manifest order for blobs).
    pub tensors: Vec<SidecarTensor>,
}

/// The largest power of two dividing `offset`, at most [`ALIGNMENT_CAP`] (offset 0 is
/// aligned to anything).
pub(crate) fn alignment_of(offset: u64) -> u64 {
    if offset == 0 {
        ALIGNMENT_CAP
    } else {
        (1u64 << offset.trailing_zeros()).min(ALIGNMENT_CAP)
    }
}

fn tensors_of(catalog: &Catalog) -> Vec<SidecarTensor> {
    catalog
        .tensors()
        .iter()
        .map(|t| SidecarTensor {
            name: t.name().to_string(),
            data_type: t.data_type().unwrap_or_else(|| "-".to_string()),
            shape: t.shape().map(<[u64]>::to_vec),
            offset: t.offset(),
            length: t.length(),
            alignment: alignment_of(t.offset()),
            shard: (catalog.format() == SidecarFormat::ShardedSafeTensors)
                .then(|| {
                    catalog
                        .files()
                        .get(t.file())
                        .map(|f| f.path().to_path_buf())
                })
                .flatten(),
        })
        .collect()
}

fn file_len(catalog: &Catalog) -> u64 {
    catalog.files().first().map_or(0, |f| f.len())
}

/// Describes a SafeTensors archive from its header alone, read by the resolver's reader
/// ([`formats::Catalog::read_safetensors`]): the same file gets the same verdict as in `resolve`.
pub fn inspect_safetensors(path: &Path) -> Result<SidecarReport, ToolError> {
    let catalog = formats::Catalog::read_safetensors(path)?;
    Ok(SidecarReport {
        path: path.to_path_buf(),
        kind: "safetensors",
        file_len: file_len(&catalog),
        metadata: catalog.metadata().clone(),
        tensors: tensors_of(&catalog),
    })
}

/// Describes a sharded SafeTensors archive from its index and every shard's header, read
/// by the resolver's reader ([`formats::sharded`]): tensors in shard order, each with its
/// shard; the metadata is the index's (`total_size`) plus `shards`, their number.
pub fn inspect_sharded(path: &Path) -> Result<SidecarReport, ToolError> {
    let index = formats::sharded::ShardIndex::read(path)?;
    let catalog = index.open_all()?;
    let mut metadata = catalog.metadata().clone();
    metadata.insert("shards".to_string(), catalog.files().len().to_string());
    Ok(SidecarReport {
        path: path.to_path_buf(),
        kind: "sharded-safetensors",
        file_len: index.len(),
        metadata,
        tensors: tensors_of(&catalog),
    })
}

/// Describes a `.weights` blob from its manifest (and its first 8 bytes, to judge the
/// WGWT header), read by the resolver's reader ([`formats::Catalog::read_blob`]). Every range is
/// checked against the file size. Unlike the resolver, which does not interpret a header,
/// a blob that starts with `WGWT` and a version other than 1 is rejected here, as by
/// every blob tool ([`BlobLayout`]).
pub fn inspect_blob(path: &Path, manifest_path: &Path) -> Result<SidecarReport, ToolError> {
    let catalog = formats::Catalog::read_blob(path, manifest_path)?;
    catalog.check_ranges()?;
    let file = File::open(path).map_err(|e| ToolError::io(path, e))?;
    let file_len = file_len(&catalog);
    let layout = BlobLayout::detect(
        &file,
        path,
        file_len,
        catalog.tensors().iter().map(|t| (t.offset(), t.length())),
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
    metadata.extend(catalog.metadata().clone());
    Ok(SidecarReport {
        path: path.to_path_buf(),
        kind: "weights",
        file_len,
        metadata,
        tensors: tensors_of(&catalog),
    })
}
