//! The data file (the static library, or `data.bin`): skipped when the stamp vouches for
//! it, else updated in place or written afresh, the object's framing around the
//! constants and the linked tail.

use super::in_place::{self, in_place_candidate};
use super::stamp::{stamp_matches, write_stamp, STAMP_FILE};
use super::{remove_if_present, Job};
use crate::object::ArchiveFraming;
use crate::Error;
use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};
use webnn_weights_atomic as atomic;
use webnn_weights_runtime::DataWriteError;

/// Buffer of the writer of a fresh data file: gathers the writes of small constants and
/// paddings (a graph of thousands of constants would otherwise make a write call each).
const FRESH_BUFFER: usize = 1 << 20;

impl Job<'_> {
    /// Writes the data file `name` in `dir` (the static library, or `data.bin`) unless the
    /// cheap facts it was last written from — the layout, and each stored file's size,
    /// modification and change times and inode — are the same now ([`STAMP_FILE`]); then
    /// not a byte is read.
    ///
    /// Otherwise an existing data file of the right length is updated in place: compared
    /// piece by piece with the bytes it should hold, and written only where it differs
    /// ([`InPlace`](in_place::InPlace)). No disk block is allocated or freed and no unchanged page is dirtied,
    /// and a file whose bytes are already right keeps its modification time (cargo does not
    /// relink). The stamp is removed first, so a build killed half-way leaves no stamp
    /// vouching for the half-updated file: cargo reruns the build script, which compares
    /// every byte again; a failed update removes the file. Any other data file is written
    /// to a temporary file and renamed into place (the old one removed first: ext4 writes a
    /// file renamed over another back to disk at once, in the middle of the build). Build
    /// outputs are not synced to disk (cargo does not sync its own either): syncing
    /// hundreds of MiB would cost more than the rest of the build script.
    ///
    /// Returns how long reading the constants (and verifying them against the weights lock,
    /// if there is one) and writing the file took; `None` when the stamp vouched for the
    /// file and nothing was read.
    pub(super) fn write_data(
        &self,
        dir: &Path,
        name: &str,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
    ) -> Result<Option<Duration>, Error> {
        let path = dir.join(name);
        let stamp_path = dir.join(STAMP_FILE);
        let facts = self.input_facts(name, object, tail);
        if let Some(facts) = &facts {
            if stamp_matches(&stamp_path, facts, &path) {
                // The data was verified against the same lock file when it was written;
                // the lock's entries are checked against the plan again all the same.
                self.plan.reader().finish()?;
                return Ok(None);
            }
        }
        let started = Instant::now();
        let total = object.map_or(0, ArchiveFraming::framing_len)
            + self.layout.data_len()
            + tail.len() as u64;
        match in_place_candidate(&path, total) {
            Some(file) => {
                // The stamp goes first: a data file interrupted half-updated is never
                // trusted by a stamp (cargo reruns an unfinished build script, which
                // compares every byte again).
                remove_if_present(&stamp_path)?;
                let updated = in_place::update(&path, file, |out| {
                    self.write_object(out, object, tail, &path)
                });
                if let Err(e) = updated {
                    // No half-updated data file stays behind a failed build.
                    let _ = fs::remove_file(&path);
                    return Err(e);
                }
            }
            // A stamp left from before stays until replaced: its line for the data file's
            // own facts (inode, times) no longer matches once a new file is installed.
            None => self.write_fresh(&path, object, tail)?,
        }
        let elapsed = started.elapsed();
        if let Some(facts) = facts {
            write_stamp(&stamp_path, facts, &path)?;
        }
        Ok(Some(elapsed))
    }

    /// Writes the data file `path` into a temporary file and renames it into place, the
    /// file there before removed first.
    fn write_fresh(
        &self,
        path: &Path,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
    ) -> Result<(), Error> {
        let write_err = |source| Error::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut temp = atomic::create_temp(path).map_err(write_err)?;
        // Small writes (paddings, small constants) are gathered; large unconverted
        // constants still go file to file by `copy_file_range` on Linux (std's
        // `io::copy` flushes the buffer and copies past it).
        let mut out = io::BufWriter::with_capacity(FRESH_BUFFER, temp.as_file_mut());
        self.write_object(&mut out, object, tail, path)?;
        drop(out);
        // A file of another length: removed before the rename, which then
        // replaces nothing (ext4 would write a replaced file's successor back to
        // disk at once, in the middle of the build).
        remove_if_present(path)?;
        temp.persist(path).map_err(write_err)?;
        Ok(())
    }

    /// The whole data file `path` into `out`: the object's head, the constants, `tail`
    /// (the linked table and graph JSON), the object's end. A write error names `path` (a
    /// read error names the sidecar).
    fn write_object<W: Write>(
        &self,
        out: &mut W,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
        path: &Path,
    ) -> Result<(), Error> {
        let err = |source| Error::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(o) = object {
            out.write_all(&o.prefix).map_err(err)?;
        }
        // Data cut over several archive members: the bytes between them go in its stream.
        let written = match object.filter(|o| !o.gaps.is_empty()) {
            Some(o) => self.write_constants(&mut o.gapped(&mut *out), tail),
            None => self.write_constants(out, tail),
        };
        written.map_err(|e| match e {
            Error::Write { source, .. } => err(source),
            other => other,
        })?;
        if let Some(o) = object {
            out.write_all(&o.suffix).map_err(err)?;
        }
        out.flush().map_err(err)
    }

    /// Writes the data (every entry of the layout at its offset, filled by its planned
    /// constant, zero padding between and after: the runtime's
    /// [`DataLayout::write_data`](webnn_weights_runtime::DataLayout::write_data), the pass
    /// its fallback mode reads its buffer with), then `tail`.
    fn write_constants<W: Write>(&self, out: &mut W, tail: &[u8]) -> Result<(), Error> {
        let io_err = |source| Error::Write {
            path: self.graph_path.to_path_buf(),
            source,
        };
        self.layout.data.write_data(out).map_err(|e| match e {
            DataWriteError::Resolve(e) => Error::from(e),
            DataWriteError::Padding { source, .. } => io_err(source),
            other => io_err(io::Error::other(other)),
        })?;
        out.write_all(tail).map_err(io_err)
    }
}
