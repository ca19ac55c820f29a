//! The in-place writer: an existing data file of the right length brought up to date by
//! writing only the pieces that differ.

use crate::Error;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The size of the pieces an existing data file is compared and updated in.
const IN_PLACE_CHUNK: usize = 8 << 20;

/// The existing data file at `path`, open for reading and writing, when it can be updated
/// in place: a regular file of exactly `len` bytes with no other name (a hard link
/// elsewhere would see the change). `None` sends the caller to a fresh file.
pub(super) fn in_place_candidate(path: &Path, len: u64) -> Option<File> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() != len {
        return None;
    }
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::nlink(&meta) != 1 {
        return None;
    }
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .ok()?;
    // The file opened is the one examined (not replaced in between).
    (file.metadata().ok()?.len() == len).then_some(file)
}

/// Brings the existing data file `file` at `path` (of the right length) up to date:
/// `fill` writes the bytes it should hold, which are compared with the file chunk by chunk,
/// and only the chunks that differ are written. No block is allocated or freed; unchanged
/// chunks are only read (from the page cache, after a recent build), and a file that is
/// already right keeps its modification time.
pub(super) fn update(
    path: &Path,
    file: File,
    fill: impl FnOnce(&mut io::BufWriter<InPlace>) -> Result<(), Error>,
) -> Result<(), Error> {
    // `io::copy` reads straight into a `BufWriter`'s buffer: whole chunks reach
    // `InPlace`, each compared with one read of the file and one `memcmp`.
    let mut out = io::BufWriter::with_capacity(IN_PLACE_CHUNK, InPlace::new(file));
    fill(&mut out)?;
    let in_place = out.get_ref();
    let (end, len) = (in_place.position, in_place.file.metadata().map(|m| m.len()));
    match len {
        Ok(len) if len == end => Ok(()),
        Ok(len) => Err(Error::Write {
            path: path.to_path_buf(),
            source: io::Error::other(format!(
                "the data file changed length while it was updated: {len} bytes, expected {end}"
            )),
        }),
        Err(source) => Err(Error::Write {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// A writer over an existing file that writes a piece only where the file's bytes differ
/// from it, so that an unchanged piece stays untouched (no dirty page, no write-back).
pub(super) struct InPlace {
    file: File,
    /// Where the next piece goes.
    position: u64,
    /// The file's current bytes of the piece being compared.
    current: Vec<u8>,
}

impl InPlace {
    fn new(file: File) -> InPlace {
        InPlace {
            file,
            position: 0,
            current: Vec::new(),
        }
    }
}

impl Write for InPlace {
    fn write(&mut self, piece: &[u8]) -> io::Result<usize> {
        let piece = &piece[..piece.len().min(IN_PLACE_CHUNK)];
        // Read without zero-filling: the buffer's contents are overwritten by the read.
        self.current.clear();
        self.current.reserve(piece.len());
        let read = (&mut self.file)
            .take(piece.len() as u64)
            .read_to_end(&mut self.current)?;
        if self.current[..read] != *piece {
            self.file.seek(SeekFrom::Start(self.position))?;
            self.file.write_all(piece)?;
        }
        self.position += piece.len() as u64;
        Ok(piece.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
