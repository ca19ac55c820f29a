//! Materializing a plan: exactly the planned ranges, through the storage layer.

use super::error::ResolveError;
use super::model::{Conversion, PlannedConstant, StoredFile, WeightPlan};
use super::storage::{check_range, FileStorage, Pipeline};
use std::collections::BTreeMap;
use std::io::{self, Read, Seek, SeekFrom, Write};

impl WeightPlan {
    /// The planned file of `c`, if `c` belongs to this plan.
    fn file_of(&self, c: &PlannedConstant) -> Result<&StoredFile, ResolveError> {
        self.files
            .get(c.file_index)
            .filter(|f| f.path() == c.file)
            .ok_or_else(|| ResolveError::NotInPlan {
                graph: self.graph.clone(),
                constant: c.name.clone(),
            })
    }

    /// Reads one planned constant into a vector of exactly `c.length` bytes (BF16 widened
    /// to F32), with a positioned read of just its range.
    ///
    /// The sidecar's size and modification time are compared with the plan before and
    /// after reading; a difference (or a file that ends early) is
    /// [`ResolveError::Changed`].
    pub fn read_constant(&self, c: &PlannedConstant) -> Result<Vec<u8>, ResolveError> {
        let open = FileStorage::open(&self.graph, self.file_of(c)?)?;
        let bytes = open.read(c)?;
        open.check()?;
        Ok(bytes)
    }

    /// Streams one planned constant's resolved bytes into `out` and returns the number of
    /// bytes written (`c.length`).
    ///
    /// Unconverted ranges go through `std::io::copy` from the sidecar, so on Linux a
    /// `File` destination is filled by `copy_file_range` without a user-space buffer;
    /// BF16 is widened in chunks. The same changed-file checks as
    /// [`WeightPlan::read_constant`] apply; on such an error `out` may hold part of the
    /// bytes, so callers write into a temporary file.
    pub fn copy_constant<W: Write>(
        &self,
        c: &PlannedConstant,
        out: &mut W,
    ) -> Result<u64, ResolveError> {
        let open = FileStorage::open(&self.graph, self.file_of(c)?)?;
        check_range(open.planned, c)?;
        let write_error = |source| ResolveError::Write {
            constant: c.name.clone(),
            source,
        };
        let n = match c.conversion {
            Conversion::None => {
                let mut file = &open.file;
                file.seek(SeekFrom::Start(c.offset))
                    .map_err(|e| open.read_error(e))?;
                let mut take = Read::take(file, c.stored_length);
                // Plain `io::copy` of a `Take<&File>`: std turns it into `copy_file_range`
                // when `out` is a `File`. Read and write errors are not told apart by
                // `io::copy`; a changed sidecar is reported as such, the rest as a write error.
                let copied = io::copy(&mut take, out).map_err(|e| match open.check() {
                    Err(changed) => changed,
                    Ok(()) => write_error(e),
                })?;
                if copied != c.length {
                    return Err(open.read_error(io::ErrorKind::UnexpectedEof.into()));
                }
                copied
            }
            conversion => {
                Pipeline::new(conversion).stream(
                    c,
                    |buf, offset| open.read_exact_at(buf, offset),
                    |chunk| out.write_all(chunk).map_err(write_error),
                )?;
                c.length
            }
        };
        open.check()?;
        Ok(n)
    }

    /// Reads every planned constant into its own vector, keyed by constant name.
    ///
    /// Each file is opened once; nothing but the planned ranges is read.
    pub fn materialize(&self) -> Result<BTreeMap<String, Vec<u8>>, ResolveError> {
        let mut out = BTreeMap::new();
        let mut open: Vec<Option<FileStorage<'_>>> = Vec::new();
        open.resize_with(self.files.len(), || None);
        for c in &self.constants {
            let file = self.file_of(c)?;
            let slot = &mut open[c.file_index];
            if slot.is_none() {
                *slot = Some(FileStorage::open(&self.graph, file)?);
            }
            if let Some(storage) = slot {
                out.insert(c.name.clone(), storage.read(c)?);
            }
        }
        for storage in open.iter().flatten() {
            storage.check()?;
        }
        Ok(out)
    }
}
