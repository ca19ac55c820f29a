//! The sidecar readers: files in, a catalog of stored tensors out, with no graph knowledge
//! (the resolver adds the graph). Public as [`formats`](crate::formats) (one reader per
//! format) and [`manifest`](crate::manifest) (the blob's JSON manifest); [`StoredFile`] is
//! a file as a reader found it.

mod file;
pub mod formats;
pub mod manifest;

pub use file::StoredFile;
pub(crate) use file::Stamp;
