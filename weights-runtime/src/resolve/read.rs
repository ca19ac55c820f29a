//! Materializing a plan: positioned reads of exactly the planned ranges.

use super::error::{ResolveError, Stamp};
use super::plan::{Conversion, PlannedConstant, Sidecar, WeightPlan};
use half::slice::HalfFloatSliceExt;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// BF16 elements converted per step.
const BF16_CHUNK: usize = 1 << 16;

/// An open sidecar whose size and modification time matched the plan when opened.
struct Open<'p> {
    sidecar: &'p Sidecar,
    file: File,
}

impl<'p> Open<'p> {
    fn new(plan: &'p WeightPlan, constant: &PlannedConstant) -> Result<Open<'p>, ResolveError> {
        let sidecar = plan
            .sidecar
            .as_ref()
            .ok_or_else(|| ResolveError::NotInPlan {
                graph: plan.graph.clone(),
                constant: constant.name.clone(),
            })?;
        let file = File::open(&sidecar.path).map_err(|e| ResolveError::Io {
            graph: plan.graph.clone(),
            path: sidecar.path.clone(),
            source: e,
        })?;
        let open = Open { sidecar, file };
        open.check()?;
        Ok(open)
    }

    /// Compares the open file (and the path, which a rename may have replaced) with the plan.
    fn check(&self) -> Result<(), ResolveError> {
        let changed = |found: String| ResolveError::Changed {
            path: self.sidecar.path.clone(),
            expected: self.sidecar.stamp.to_string(),
            found,
        };
        let now = self.file.metadata().map_err(|e| changed(e.to_string()))?;
        self.sidecar
            .stamp
            .check(&self.sidecar.path, Stamp::of(&now))?;
        let by_path = std::fs::metadata(&self.sidecar.path).map_err(|e| changed(e.to_string()))?;
        self.sidecar
            .stamp
            .check(&self.sidecar.path, Stamp::of(&by_path))
    }

    fn read_error(&self, e: io::Error) -> ResolveError {
        ResolveError::Changed {
            path: self.sidecar.path.clone(),
            expected: self.sidecar.stamp.to_string(),
            found: if e.kind() == io::ErrorKind::UnexpectedEof {
                "the file ended before a planned range (truncated)".to_string()
            } else {
                format!("a read error: {e}")
            },
        }
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), ResolveError> {
        read_exact_at(&self.file, buf, offset).map_err(|e| self.read_error(e))
    }

    fn check_range(&self, c: &PlannedConstant) -> Result<(), ResolveError> {
        let fits = c
            .offset
            .checked_add(c.stored_length)
            .is_some_and(|end| end <= self.sidecar.len);
        let expected = match c.conversion {
            Conversion::None => Some(c.stored_length),
            Conversion::Bf16ToF32 => c.stored_length.checked_mul(2),
        };
        if fits && expected == Some(c.length) && usize::try_from(c.length).is_ok() {
            Ok(())
        } else {
            Err(ResolveError::Changed {
                path: self.sidecar.path.clone(),
                expected: format!(
                    "constant `{}` to lie within the planned {} bytes",
                    c.name, self.sidecar.len
                ),
                found: format!(
                    "a range [{}, +{}) that does not (not a constant of this plan?)",
                    c.offset, c.stored_length
                ),
            })
        }
    }

    /// Reads one constant into a fresh vector of exactly `c.length` bytes.
    fn read(&self, c: &PlannedConstant) -> Result<Vec<u8>, ResolveError> {
        self.check_range(c)?;
        // check_range: c.length fits usize and the stored range lies within the file.
        let mut out = vec![0u8; c.length as usize];
        match c.conversion {
            Conversion::None => self.read_exact_at(&mut out, c.offset)?,
            Conversion::Bf16ToF32 => {
                let mut raw = vec![0u8; BF16_CHUNK.min(out.len() / 2) * 2];
                let mut halves = Vec::with_capacity(raw.len() / 2);
                let mut floats = Vec::with_capacity(raw.len() / 2);
                let mut offset = c.offset;
                for dst in out.chunks_mut(BF16_CHUNK * 4) {
                    let src = &mut raw[..dst.len() / 2];
                    self.read_exact_at(src, offset)?;
                    offset += src.len() as u64;
                    widen(src, dst, &mut halves, &mut floats);
                }
            }
        }
        Ok(out)
    }

    /// Streams one constant into `out`.
    fn copy<W: Write>(&self, c: &PlannedConstant, out: &mut W) -> Result<u64, ResolveError> {
        self.check_range(c)?;
        let write_error = |source| ResolveError::Write {
            constant: c.name.clone(),
            source,
        };
        let mut file = &self.file;
        file.seek(SeekFrom::Start(c.offset))
            .map_err(|e| self.read_error(e))?;
        match c.conversion {
            Conversion::None => {
                let mut take = Read::take(file, c.stored_length);
                // Plain `io::copy` of a `Take<&File>`: std turns it into `copy_file_range`
                // when `out` is a `File`. Read and write errors are not told apart by
                // `io::copy`; a changed sidecar is reported as such, the rest as a write error.
                let copied = io::copy(&mut take, out).map_err(|e| match self.check() {
                    Err(changed) => changed,
                    Ok(()) => write_error(e),
                })?;
                if copied != c.length {
                    return Err(self.read_error(io::ErrorKind::UnexpectedEof.into()));
                }
                Ok(copied)
            }
            Conversion::Bf16ToF32 => {
                let mut raw = vec![0u8; BF16_CHUNK.min(c.length as usize / 2) * 2];
                let mut wide = vec![0u8; raw.len() * 2];
                let mut halves = Vec::with_capacity(raw.len() / 2);
                let mut floats = Vec::with_capacity(raw.len() / 2);
                let mut left = c.stored_length;
                while left > 0 {
                    let n = (raw.len() as u64).min(left) as usize;
                    let src = &mut raw[..n];
                    file.read_exact(src).map_err(|e| self.read_error(e))?;
                    let dst = &mut wide[..n * 2];
                    widen(src, dst, &mut halves, &mut floats);
                    out.write_all(dst).map_err(write_error)?;
                    left -= n as u64;
                }
                Ok(c.length)
            }
        }
    }
}

/// Widens little-endian BF16 bytes `src` into little-endian F32 bytes `dst` (twice as long).
fn widen(src: &[u8], dst: &mut [u8], halves: &mut Vec<half::bf16>, floats: &mut Vec<f32>) {
    halves.clear();
    halves.extend(
        src.chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]])),
    );
    floats.clear();
    floats.resize(halves.len(), 0.0);
    halves.as_slice().convert_to_f32_slice(floats);
    for (d, f) in dst.chunks_exact_mut(4).zip(floats.iter()) {
        d.copy_from_slice(&f.to_le_bytes());
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

impl WeightPlan {
    /// Reads one planned constant into a vector of exactly `c.length` bytes (BF16 widened
    /// to F32), with a positioned read of just its range.
    ///
    /// The sidecar's size and modification time are compared with the plan before and
    /// after reading; a difference (or a file that ends early) is
    /// [`ResolveError::Changed`].
    pub fn read_constant(&self, c: &PlannedConstant) -> Result<Vec<u8>, ResolveError> {
        let open = Open::new(self, c)?;
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
        let open = Open::new(self, c)?;
        let n = open.copy(c, out)?;
        open.check()?;
        Ok(n)
    }

    /// Reads every planned constant into its own vector, keyed by constant name.
    ///
    /// The sidecar is opened once; nothing but the planned ranges is read.
    pub fn materialize(&self) -> Result<BTreeMap<String, Vec<u8>>, ResolveError> {
        let mut out = BTreeMap::new();
        let Some(first) = self.constants.first() else {
            return Ok(out);
        };
        let open = Open::new(self, first)?;
        for c in &self.constants {
            out.insert(c.name.clone(), open.read(c)?);
        }
        open.check()?;
        Ok(out)
    }
}
