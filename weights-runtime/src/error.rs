//! The crate-level error of file-based operations.

use std::path::PathBuf;

/// Errors of reading and loading graph files.
///
/// Every variant names the file concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A GraphJson file is not valid JSON of the expected shape.
    #[error("{}: invalid GraphJson: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What serde_json reported, with line and column.
        message: String,
    },
}
