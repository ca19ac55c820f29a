//! Where planned bytes come from, and the one conversion pipeline from stored to resolved
//! bytes. Storage is positioned reads of a file ([`FileStorage`]), or bytes held whole
//! ([`Shared`]: a read-only mapping of the file, a caller's buffer, or `'static` data),
//! of which unconverted constants are slices. Files are compared with the plan (size and
//! modification time) when opened, after mapping, and after reading.

use super::error::ResolveError;
use super::model::{Conversion, PlannedConstant, Stamp, StoredFile};
use bytes::Bytes;
use half::slice::HalfFloatSliceExt;
use std::fs::File;
use std::io;
use std::path::Path;

/// Stored bytes converted per step (BF16: 64 Ki elements).
pub(crate) const CHUNK: usize = 1 << 17;

/// The conversion pipeline: turns stored bytes into resolved bytes, chunk by chunk, with
/// reusable scratch space. Every way of materializing goes through it.
pub(crate) struct Pipeline {
    conversion: Conversion,
    halves: Vec<half::bf16>,
    floats: Vec<f32>,
}

impl Pipeline {
    pub fn new(conversion: Conversion) -> Pipeline {
        Pipeline {
            conversion,
            halves: Vec::new(),
            floats: Vec::new(),
        }
    }

    /// Converts all of `src` into a new buffer, chunk by chunk (bounded scratch space).
    pub fn convert_all(&mut self, src: &[u8], length: usize) -> Vec<u8> {
        let mut out = vec![0u8; length];
        let factor = match self.conversion {
            Conversion::None => 1,
            Conversion::Bf16ToF32 => 2,
        };
        for (s, d) in src.chunks(CHUNK).zip(out.chunks_mut(CHUNK * factor)) {
            self.convert(s, d);
        }
        out
    }

    /// Converts the stored bytes `src` into `dst`, whose length must be
    /// `conversion.resolved_length(src.len())`.
    pub fn convert(&mut self, src: &[u8], dst: &mut [u8]) {
        match self.conversion {
            Conversion::None => dst.copy_from_slice(src),
            Conversion::Bf16ToF32 => {
                self.halves.clear();
                self.halves.extend(
                    src.chunks_exact(2)
                        .map(|b| half::bf16::from_le_bytes([b[0], b[1]])),
                );
                self.floats.clear();
                self.floats.resize(self.halves.len(), 0.0);
                self.halves
                    .as_slice()
                    .convert_to_f32_slice(&mut self.floats);
                for (d, f) in dst.chunks_exact_mut(4).zip(self.floats.iter()) {
                    d.copy_from_slice(&f.to_le_bytes());
                }
            }
        }
    }

    /// Resolves `c` by reading its stored range through `read_at(buf, offset)` in chunks
    /// and handing each resolved chunk to `sink`.
    pub fn stream(
        &mut self,
        c: &PlannedConstant,
        mut read_at: impl FnMut(&mut [u8], u64) -> Result<(), ResolveError>,
        mut sink: impl FnMut(&[u8]) -> Result<(), ResolveError>,
    ) -> Result<(), ResolveError> {
        let factor = match self.conversion {
            Conversion::None => 1,
            Conversion::Bf16ToF32 => 2,
        };
        let step = (CHUNK as u64).min(c.stored_length) as usize;
        let mut raw = vec![0u8; step];
        let mut wide = vec![0u8; step * factor];
        let mut offset = c.offset;
        let mut left = c.stored_length;
        while left > 0 {
            let n = (step as u64).min(left) as usize;
            let src = &mut raw[..n];
            read_at(src, offset)?;
            let dst = &mut wide[..n * factor];
            self.convert(src, dst);
            sink(dst)?;
            offset += n as u64;
            left -= n as u64;
        }
        Ok(())
    }
}

/// Checks that `c` is a consistent constant of a plan whose file is `file` (a constant of
/// another plan could name ranges beyond it).
pub(crate) fn check_range(file: &StoredFile, c: &PlannedConstant) -> Result<(), ResolveError> {
    let fits = c
        .offset
        .checked_add(c.stored_length)
        .is_some_and(|end| end <= file.len());
    if fits
        && c.conversion.resolved_length(c.stored_length) == Some(c.length)
        && usize::try_from(c.length).is_ok()
    {
        Ok(())
    } else {
        Err(ResolveError::Changed {
            path: file.path().to_path_buf(),
            expected: format!(
                "constant `{}` to lie within the planned {} bytes",
                c.name,
                file.len()
            ),
            found: format!(
                "a range [{}, +{}) that does not (not a constant of this plan?)",
                c.offset, c.stored_length
            ),
        })
    }
}

/// A planned file opened for positioned reads; its size and modification time matched
/// the plan when opened.
pub(crate) struct FileStorage<'p> {
    pub planned: &'p StoredFile,
    pub file: File,
}

impl<'p> FileStorage<'p> {
    pub fn open(graph: &Path, planned: &'p StoredFile) -> Result<Self, ResolveError> {
        let file = File::open(planned.path()).map_err(|e| ResolveError::Io {
            graph: graph.to_path_buf(),
            path: planned.path().to_path_buf(),
            source: e,
        })?;
        let open = FileStorage { planned, file };
        open.check()?;
        Ok(open)
    }

    fn changed(&self, found: String) -> ResolveError {
        ResolveError::Changed {
            path: self.planned.path().to_path_buf(),
            expected: self.planned.stamp().to_string(),
            found,
        }
    }

    /// Compares the open file (and the path, which a rename may have replaced) with the plan.
    pub fn check(&self) -> Result<(), ResolveError> {
        let now = self
            .file
            .metadata()
            .map_err(|e| self.changed(e.to_string()))?;
        self.compare(Stamp::of(&now))?;
        let by_path =
            std::fs::metadata(self.planned.path()).map_err(|e| self.changed(e.to_string()))?;
        self.compare(Stamp::of(&by_path))
    }

    fn compare(&self, now: Stamp) -> Result<(), ResolveError> {
        if now == self.planned.stamp() {
            Ok(())
        } else {
            Err(self.changed(now.to_string()))
        }
    }

    pub fn read_error(&self, e: io::Error) -> ResolveError {
        self.changed(if e.kind() == io::ErrorKind::UnexpectedEof {
            "the file ended before a planned range (truncated)".to_string()
        } else {
            format!("a read error: {e}")
        })
    }

    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), ResolveError> {
        read_exact_at(&self.file, buf, offset).map_err(|e| self.read_error(e))
    }

    /// Reads one constant into a fresh vector of exactly `c.length` bytes.
    pub fn read(&self, c: &PlannedConstant) -> Result<Vec<u8>, ResolveError> {
        check_range(self.planned, c)?;
        // check_range: c.length fits usize and the stored range lies within the file.
        let mut out = vec![0u8; c.length as usize];
        match c.conversion {
            Conversion::None => self.read_exact_at(&mut out, c.offset)?,
            conversion => {
                let mut at = 0;
                Pipeline::new(conversion).stream(
                    c,
                    |buf, offset| self.read_exact_at(buf, offset),
                    |chunk| {
                        out[at..at + chunk.len()].copy_from_slice(chunk);
                        at += chunk.len();
                        Ok(())
                    },
                )?;
            }
        }
        Ok(out)
    }
}

/// Bytes held whole: a read-only mapping of a planned file, a caller's buffer or `'static`
/// data. Unconverted constants are slices of it (no copy); converted ones are owned.
pub(crate) struct Shared<'p> {
    pub planned: &'p StoredFile,
    pub bytes: Bytes,
    /// The mapped file, compared with the plan again after reading.
    pub file: Option<FileStorage<'p>>,
}

impl<'p> Shared<'p> {
    /// Maps the planned file read-only and checks it against the plan after mapping.
    ///
    /// The mapping contract: the file must not be truncated or rewritten while mapped.
    /// Size and modification time are compared with the plan after mapping, so a file
    /// changed before that is a [`ResolveError::Changed`]; a file truncated later makes
    /// reads of the lost pages fault (`SIGBUS` on Unix), and one rewritten in place shows
    /// the new bytes. Use the owned loader for files that may change.
    pub fn map(graph: &Path, planned: &'p StoredFile) -> Result<Shared<'p>, ResolveError> {
        let file = FileStorage::open(graph, planned)?;
        let bytes = if planned.is_empty() {
            // Nothing to map (and mapping zero bytes fails on some systems).
            Bytes::new()
        } else {
            let map = map_read_only(&file.file).map_err(|e| ResolveError::Io {
                graph: graph.to_path_buf(),
                path: planned.path().to_path_buf(),
                source: e,
            })?;
            Bytes::from_owner(map)
        };
        // The size and modification time after mapping: a file that changed between
        // planning and mapping is not used.
        file.check()?;
        if bytes.len() as u64 != planned.len() {
            return Err(ResolveError::Changed {
                path: planned.path().to_path_buf(),
                expected: planned.stamp().to_string(),
                found: format!("a mapping of {} bytes", bytes.len()),
            });
        }
        Ok(Shared {
            planned,
            bytes,
            file: Some(file),
        })
    }

    /// A caller's buffer (or `'static` data) planned as `planned`.
    pub fn memory(planned: &'p StoredFile, bytes: Bytes) -> Shared<'p> {
        Shared {
            planned,
            bytes,
            file: None,
        }
    }

    /// `c`'s resolved bytes: a slice of the buffer, or converted into owned memory.
    pub fn get(&self, c: &PlannedConstant) -> Result<Bytes, ResolveError> {
        check_range(self.planned, c)?;
        // check_range: the stored range lies within the planned length, which is the
        // buffer's length (checked when mapped, by construction for memory).
        let start = c.offset as usize;
        let end = start + c.stored_length as usize;
        if end > self.bytes.len() {
            return Err(ResolveError::Changed {
                path: self.planned.path().to_path_buf(),
                expected: self.planned.stamp().to_string(),
                found: format!("{} bytes", self.bytes.len()),
            });
        }
        let stored = self.bytes.slice(start..end);
        Ok(match c.conversion {
            Conversion::None => stored,
            conversion => {
                Bytes::from(Pipeline::new(conversion).convert_all(&stored, c.length as usize))
            }
        })
    }

    pub fn check(&self) -> Result<(), ResolveError> {
        match &self.file {
            Some(f) => f.check(),
            None => Ok(()),
        }
    }
}

/// Maps `file` read-only: the one `unsafe` block of the resolver.
#[allow(unsafe_code)]
fn map_read_only(file: &File) -> io::Result<memmap2::Mmap> {
    // SAFETY: `Mmap::map` is unsafe because the returned `&[u8]` is only immutable if the
    // file is: the mapping is read-only (`PROT_READ`) but shared (`MAP_SHARED` on Unix), so
    // bytes written to the file by anyone show through, and pages past a truncation fault
    // when read (`SIGBUS` on Unix); Rust's aliasing rules assume neither happens while a
    // slice is alive. Nothing here writes through the mapping. The documented contract of
    // the mapped loader (`GraphLoader::mapped`, `WeightPlan::materialize_mapped`) is that
    // the sidecar is neither truncated nor rewritten while mapped — the format's own rule
    // for resolving ("Callers must keep a sidecar immutable while it is being resolved"),
    // extended to the mapping's lifetime. What can be checked is: the file's size and
    // modification time are compared with the plan right after mapping, and the mapping's
    // length with the planned size (`Shared::map`), so a file whose size or modification
    // time changed before that is a `Changed` error, not a view of other bytes.
    unsafe { memmap2::Mmap::map(file) }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}
