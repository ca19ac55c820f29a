//! `.weights` blobs addressed by a JSON manifest: absolute byte ranges, no header
//! interpreted (a WGWT header is the blob tools' business, not the resolver's).

use super::{open_stamped, Catalog, FormatError, SidecarFormat, Storage, StoredTensor};
use crate::sidecar::manifest::Manifest;
use crate::sidecar::{Stamp, StoredFile};
use std::collections::BTreeMap;
use std::path::Path;

/// [`Catalog::read_blob`].
pub(crate) fn read(blob: &Path, manifest: &Path) -> Result<Catalog, FormatError> {
    let (_file, stamp) = open_stamped(blob)?;
    let bytes = std::fs::read(manifest).map_err(|e| FormatError::Io {
        path: manifest.to_path_buf(),
        source: e,
    })?;
    from_manifest(blob, stamp, manifest, &bytes)
}

/// The catalog of a blob of `blob_len` bytes held in memory, from manifest JSON held in
/// memory (what `GraphLoader::weights_bytes` and `manifest_bytes` read); `blob` and
/// `manifest` label them in messages.
pub(crate) fn read_bytes(
    blob: &Path,
    blob_len: u64,
    manifest: &Path,
    manifest_json: &[u8],
) -> Result<Catalog, FormatError> {
    let stamp = Stamp {
        len: blob_len,
        modified: None,
    };
    from_manifest(blob, stamp, manifest, manifest_json)
}

fn from_manifest(
    blob: &Path,
    stamp: Stamp,
    manifest: &Path,
    json: &[u8],
) -> Result<Catalog, FormatError> {
    let parsed = Manifest::parse(json, manifest)?;
    let mut metadata = BTreeMap::new();
    for (key, value) in [
        ("format", parsed.format.clone()),
        ("version", parsed.version.map(|v| v.to_string())),
        ("endianness", parsed.endianness.clone()),
    ] {
        if let Some(v) = value {
            metadata.insert(key.to_string(), v);
        }
    }
    let tensors = parsed
        .tensors
        .into_iter()
        .map(|e| StoredTensor {
            name: e.name,
            storage: Storage::Untyped {
                data_type: e.data_type,
                shape: e.shape,
            },
            file: 0,
            offset: e.byte_offset,
            length: e.byte_length,
        })
        .collect();
    Ok(Catalog {
        format: SidecarFormat::Blob,
        names_file: manifest.to_path_buf(),
        files: vec![StoredFile::new(blob.to_path_buf(), stamp)],
        tensors,
        metadata,
        packed_markers: vec![None],
    })
}
