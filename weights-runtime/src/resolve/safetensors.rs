//! Reading a SafeTensors archive's header (and nothing else) into a [`Source`].

use super::discover::Context;
use super::error::ResolveError;
use super::plan::SidecarKind;
use super::source::{open_stamped, sidecar, Source, Stored};
use std::io::Read;
use std::path::Path;

/// The largest header the `safetensors` crate accepts (its private `MAX_HEADER_SIZE`).
pub const SAFETENSORS_MAX_HEADER_SIZE: u64 = 100_000_000;

/// Reads and validates the header of the archive at `path`.
pub(crate) fn read_header(ctx: &Context<'_>, path: &Path) -> Result<Source, ResolveError> {
    let (file, stamp) = open_stamped(ctx, path)?;
    let invalid = |expected: String, found: String| ResolveError::SafeTensorsHeader {
        graph: ctx.graph.to_path_buf(),
        sidecar: path.to_path_buf(),
        expected,
        found,
    };
    if stamp.len < 8 {
        return Err(invalid(
            "at least 8 bytes (the header length)".to_string(),
            format!("a file of {} bytes", stamp.len),
        ));
    }
    let mut reader = &file;
    let mut prefix = [0u8; 8];
    reader
        .read_exact(&mut prefix)
        .map_err(|e| ctx.io(path, e))?;
    let header_len = u64::from_le_bytes(prefix);
    if header_len > SAFETENSORS_MAX_HEADER_SIZE {
        return Err(invalid(
            format!("a header of at most {SAFETENSORS_MAX_HEADER_SIZE} bytes"),
            format!("a declared header length of {header_len} bytes"),
        ));
    }
    if header_len > stamp.len - 8 {
        return Err(invalid(
            format!("a header of {header_len} bytes after the 8-byte length, as declared"),
            format!(
                "only {} bytes after the length (truncated file?)",
                stamp.len - 8
            ),
        ));
    }
    // Checked above: header_len <= 100 MB and <= the file's size.
    let mut header = vec![0u8; header_len as usize];
    reader.read_exact(&mut header).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            ResolveError::Changed {
                path: path.to_path_buf(),
                expected: stamp.to_string(),
                found: "a shorter file while reading its header".to_string(),
            }
        } else {
            ctx.io(path, e)
        }
    })?;
    let metadata: safetensors::tensor::Metadata = serde_json::from_slice(&header).map_err(|e| {
        invalid(
            "a JSON header of valid tensor entries with contiguous offsets".to_string(),
            e.to_string(),
        )
    })?;
    let data_start = 8 + header_len;
    let data_len = metadata.data_len() as u64;
    if data_start.checked_add(data_len) != Some(stamp.len) {
        return Err(invalid(
            format!(
                "a file of {} bytes (8 + {header_len} header + {data_len} tensor data)",
                data_start.saturating_add(data_len)
            ),
            format!("{} bytes", stamp.len),
        ));
    }
    let packed_marker = metadata
        .metadata()
        .as_ref()
        .and_then(|m| m.get(crate::PACKED_4BIT_METADATA_KEY))
        .cloned();
    let mut tensors = Vec::new();
    for name in metadata.offset_keys() {
        let Some(info) = metadata.info(&name) else {
            continue;
        };
        let (start, end) = info.data_offsets;
        tensors.push(Stored {
            dtype: Some(info.dtype),
            shape: Some(info.shape.iter().map(|&d| d as u64).collect()),
            offset: data_start + start as u64,
            length: (end - start) as u64,
            name,
        });
    }
    Ok(Source {
        sidecar: sidecar(path, SidecarKind::SafeTensors, stamp),
        tensors,
        packed_marker,
    })
}
