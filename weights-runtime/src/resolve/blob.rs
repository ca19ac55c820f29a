//! Reading a blob's manifest into a [`Source`].

use super::discover::Context;
use super::error::ResolveError;
use super::plan::SidecarKind;
use super::source::{open_stamped, sidecar, Source, Stored};
use crate::manifest::Manifest;
use std::path::Path;

/// Reads the manifest at `manifest` for the blob at `blob`. Ranges are checked against
/// the blob's size per constant, in [`Source::check`].
pub(crate) fn read_manifest(
    ctx: &Context<'_>,
    blob: &Path,
    manifest: &Path,
) -> Result<Source, ResolveError> {
    let (_file, stamp) = open_stamped(ctx, blob)?;
    let bytes = std::fs::read(manifest).map_err(|e| ctx.io(manifest, e))?;
    let parsed = Manifest::parse(&bytes, manifest).map_err(|source| ResolveError::Manifest {
        graph: ctx.graph.to_path_buf(),
        source,
    })?;
    let tensors = parsed
        .tensors
        .into_iter()
        .map(|e| Stored {
            name: e.name,
            dtype: None,
            shape: None,
            offset: e.byte_offset,
            length: e.byte_length,
        })
        .collect();
    Ok(Source {
        sidecar: sidecar(
            blob,
            SidecarKind::Blob {
                manifest: manifest.to_path_buf(),
            },
            stamp,
        ),
        tensors,
        packed_marker: None,
    })
}
