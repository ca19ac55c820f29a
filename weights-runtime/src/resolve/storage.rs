//! Where planned bytes come from, and the one conversion pipeline from stored to resolved
//! bytes. Today's storage is positioned reads of a file whose size and modification time
//! are compared with the plan.

use super::error::ResolveError;
use super::model::{Conversion, PlannedConstant, Stamp, StoredFile};
use half::slice::HalfFloatSliceExt;
use std::fs::File;
use std::io;

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
    pub fn open(graph: &std::path::Path, planned: &'p StoredFile) -> Result<Self, ResolveError> {
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
