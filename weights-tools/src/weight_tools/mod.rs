//! The WGWT blob tools: v1 manifests, tensor folders, and the operations behind the
//! `pack-weights`, `unpack-weights`, `create-manifest`, `extract-weights` and
//! `inline-weights` commands.
//!
//! Compatible with the files of `webnn-graph` 0.4.0 (same blob bytes, same manifest JSON,
//! same graphs on the same inputs), with its defects fixed:
//!
//! - byte offsets are absolute everywhere: a blob with a `WGWT` header (first tensor at 8)
//!   and a headerless blob (first tensor at 0) both unpack and inline; see [`BlobLayout`]
//!   for how the presence of a header is judged;
//! - `int4`/`uint4` tensors take `ceil(n / 2)` bytes everywhere ([`webnn_weights_runtime::DataType::byte_length`]);
//! - a tensor's `.meta.json` needs only `dataType` and `shape` ([`TensorMeta`]);
//! - only little-endian manifests are produced or packed;
//! - every output goes through a temporary file in its destination folder and is renamed
//!   into place only once all outputs of the operation are complete ([`Staging`]);
//! - only the byte ranges an operation needs are read, in bounded chunks.

mod convert;
mod format;
mod inspect;
mod ops;
mod staging;

pub use convert::{
    inline_weights, stage_external_weights_safetensors, to_safetensors, SafetensorsConversion,
};
pub use format::{BlobLayout, ManifestV1, ManifestV1Entry, TensorMeta, WGWT_HEADER_LEN};
pub use inspect::{
    inspect_blob, inspect_safetensors, inspect_sharded, SidecarReport, SidecarTensor, ALIGNMENT_CAP,
};
pub use ops::{
    create_manifest, extract_weights, pack_resolved, pack_weights, unpack_weights, Extraction,
    PackSummary, UnpackSummary,
};
pub use staging::Staging;

use format::{tensor_file_path, wgwt_header};
use std::io;
use std::path::{Path, PathBuf};

/// Errors of the weight tools. Every variant names the file concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// A file or folder could not be read or written.
    #[error("cannot read or write {}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// An input breaks a rule; the message names the tensor, what was expected and what
    /// was found.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The offending file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A manifest could not be read or parsed.
    #[error(transparent)]
    Manifest(#[from] webnn_weights_runtime::manifest::ManifestError),
    /// A sidecar could not be read by its format's reader.
    #[error(transparent)]
    Format(Box<webnn_weights_runtime::formats::FormatError>),
    /// A graph file could not be read.
    #[error(transparent)]
    Graph(Box<webnn_weights_runtime::Error>),
    /// A graph's external weights could not be resolved.
    #[error(transparent)]
    Resolve(Box<webnn_weights_runtime::ResolveError>),
    /// A SafeTensors archive could not be written.
    #[error(transparent)]
    Write(Box<crate::WriteError>),
}

impl From<webnn_weights_runtime::Error> for ToolError {
    fn from(e: webnn_weights_runtime::Error) -> ToolError {
        ToolError::Graph(Box::new(e))
    }
}

impl From<webnn_weights_runtime::formats::FormatError> for ToolError {
    fn from(e: webnn_weights_runtime::formats::FormatError) -> ToolError {
        match e {
            webnn_weights_runtime::formats::FormatError::Manifest(m) => ToolError::Manifest(m),
            other => ToolError::Format(Box::new(other)),
        }
    }
}

impl From<webnn_weights_runtime::ResolveError> for ToolError {
    fn from(e: webnn_weights_runtime::ResolveError) -> ToolError {
        ToolError::Resolve(Box::new(e))
    }
}

impl From<crate::WriteError> for ToolError {
    fn from(e: crate::WriteError) -> ToolError {
        ToolError::Write(Box::new(e))
    }
}

impl ToolError {
    /// An [`ToolError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> ToolError {
        ToolError::Io {
            path: path.into(),
            source,
        }
    }

    /// An [`ToolError::Invalid`] for `path`.
    pub fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> ToolError {
        ToolError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Receives progress reports of long operations (bytes copied out of a known total).
///
/// Every method has an empty default, so `NoProgress` and tests need no code.
pub trait Progress {
    /// The operation is about to copy `total_bytes`.
    fn start(&mut self, total_bytes: u64) {
        let _ = total_bytes;
    }
    /// `bytes` more bytes were copied.
    fn advance(&mut self, bytes: u64) {
        let _ = bytes;
    }
    /// The copying is over (successfully or not).
    fn finish(&mut self) {}
}

/// A [`Progress`] that ignores every report.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// Reads a whole small file (a manifest, a `.meta.json`), naming it on error.
pub(crate) fn read_small_file(path: &Path) -> Result<Vec<u8>, ToolError> {
    std::fs::read(path).map_err(|e| ToolError::io(path, e))
}

#[cfg(test)]
mod tests;
