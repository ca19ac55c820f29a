//! A file as it was when read: its path, size and modification time. Every reader stamps
//! the files it reads, and a plan compares them again before and after reading bytes.

use std::fmt;
use std::path::{Path, PathBuf};

/// A file that holds tensor bytes, as it was when planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    path: PathBuf,
    stamp: Stamp,
}

impl StoredFile {
    pub(crate) fn new(path: PathBuf, stamp: Stamp) -> StoredFile {
        StoredFile { path, stamp }
    }

    /// The file's path (a label such as `<memory>` for bytes that never were a file).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its size in bytes when planned.
    pub fn len(&self) -> u64 {
        self.stamp.len
    }

    /// Whether the file was empty when planned.
    pub fn is_empty(&self) -> bool {
        self.stamp.len == 0
    }

    pub(crate) fn stamp(&self) -> Stamp {
        self.stamp
    }
}

/// The size and modification time of a file when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub len: u64,
    pub modified: Option<std::time::SystemTime>,
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.len)?;
        if let Some(m) = self.modified {
            match m.duration_since(std::time::UNIX_EPOCH) {
                Ok(d) => write!(f, ", modified at {}.{:09}s", d.as_secs(), d.subsec_nanos())?,
                Err(_) => write!(f, ", modified before 1970")?,
            }
        }
        Ok(())
    }
}

impl Stamp {
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}
