//! Where planned bytes come from, and the one conversion pipeline from stored to resolved
//! bytes. Storage is positioned reads of a file ([`FileStorage`]), or bytes held whole
//! ([`Shared`]: a read-only mapping of the file, a caller's buffer, or `'static` data),
//! of which unconverted constants are slices. Files are compared with the plan (size and
//! modification time) when opened, after mapping, and after reading.

use super::error::ResolveError;
use super::model::{Conversion, PlannedConstant};
use crate::sidecar::{Stamp, StoredFile};
use bytes::Bytes;
use std::fs::File;
use std::io;
use std::path::Path;

/// Stored bytes converted per step (BF16: 64 Ki elements).
pub(crate) const CHUNK: usize = 1 << 17;

/// The conversion pipeline: turns stored bytes into resolved bytes, chunk by chunk, with
/// reusable scratch space. Every way of materializing goes through it.
///
/// It also runs inside build scripts, which cargo compiles without optimization
/// (`opt-level = 0`, even in release builds), so it is written to be fast unoptimized:
/// BF16 is widened by plain integer operations on 64-bit words (four stored values in, two
/// words of two F32 values out) in an indexed loop, with no per-element iterator adapters
/// or function calls, and scratch space is 8-byte aligned, allocated once per pipeline
/// (zeroed by the allocator, never by a loop) and not cleared before a read overwrites it.
pub(crate) struct Pipeline {
    conversion: Conversion,
    /// Stored bytes of one chunk, as aligned words.
    stored: Vec<u64>,
    /// Resolved bytes of one chunk, as aligned words.
    resolved: Vec<u64>,
}

impl Pipeline {
    pub fn new(conversion: Conversion) -> Pipeline {
        Pipeline {
            conversion,
            stored: Vec::new(),
            resolved: Vec::new(),
        }
    }

    /// Switches to `conversion`, keeping the scratch space.
    pub fn set_conversion(&mut self, conversion: Conversion) {
        self.conversion = conversion;
    }

    fn factor(&self) -> usize {
        match self.conversion {
            Conversion::None => 1,
            Conversion::Bf16ToF32 => 2,
        }
    }

    /// Converts all of `src` into a new buffer of `length` bytes.
    pub fn convert_all(&mut self, src: &[u8], length: usize) -> Vec<u8> {
        match self.conversion {
            Conversion::None => src.to_vec(),
            Conversion::Bf16ToF32 => {
                let mut out = vec![0u8; length];
                self.convert(src, &mut out);
                out
            }
        }
    }

    /// Converts the stored bytes `src` into `dst`, whose length must be
    /// `conversion.resolved_length(src.len())`.
    pub fn convert(&mut self, src: &[u8], dst: &mut [u8]) {
        match self.conversion {
            Conversion::None => dst.copy_from_slice(src),
            Conversion::Bf16ToF32 => {
                // Few iterations (one per chunk): the per-element work is in `widen`.
                for (s, d) in src.chunks(CHUNK).zip(dst.chunks_mut(CHUNK * 2)) {
                    self.widen(s, d);
                }
            }
        }
    }

    /// Widens one chunk of BF16 (`src`, at most [`CHUNK`] bytes) into `dst` (twice as long).
    fn widen(&mut self, src: &[u8], dst: &mut [u8]) {
        if cfg!(target_endian = "big") {
            return widen_bf16_bytes(src, dst);
        }
        let words = src.len().div_ceil(8);
        let Pipeline {
            stored, resolved, ..
        } = self;
        // The stored words: `src` itself when aligned, else a copy (a memcpy).
        let input: &[u64] = match bytemuck::try_cast_slice::<u8, u64>(src) {
            Ok(aligned) => aligned,
            Err(_) => {
                grow(stored, words);
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut stored[..words]);
                let (data, tail) = bytes.split_at_mut(src.len());
                data.copy_from_slice(src);
                tail.fill(0); // fewer than 8 bytes
                &stored[..words]
            }
        };
        // Straight into `dst` when aligned and whole words, else through scratch.
        match bytemuck::try_cast_slice_mut::<u8, u64>(dst) {
            Ok(out) if out.len() == 2 * words => widen_bf16_words(input, out),
            _ => {
                grow(resolved, 2 * words);
                let out = &mut resolved[..2 * words];
                widen_bf16_words(input, out);
                let bytes: &[u8] = bytemuck::cast_slice(out);
                dst.copy_from_slice(&bytes[..dst.len()]);
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
        let factor = self.factor();
        let step = (CHUNK as u64).min(c.stored_length) as usize;
        let words = step.div_ceil(8);
        grow(&mut self.stored, words);
        grow(&mut self.resolved, words * factor);
        let mut offset = c.offset;
        let mut left = c.stored_length;
        while left > 0 {
            let n = (step as u64).min(left) as usize;
            let Pipeline {
                conversion,
                stored,
                resolved,
            } = self;
            let src = &mut bytemuck::cast_slice_mut::<u64, u8>(stored)[..n];
            read_at(src, offset)?;
            match conversion {
                Conversion::None => sink(src)?,
                Conversion::Bf16ToF32 => {
                    let k = n.div_ceil(8);
                    if cfg!(target_endian = "big") {
                        let out = bytemuck::cast_slice_mut::<u64, u8>(resolved);
                        widen_bf16_bytes(src, out);
                    } else {
                        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut stored[..k]);
                        bytes[n..].fill(0); // fewer than 8 bytes
                        widen_bf16_words(&stored[..k], &mut resolved[..2 * k]);
                    }
                    sink(&bytemuck::cast_slice::<u64, u8>(resolved)[..2 * n])?;
                }
            }
            offset += n as u64;
            left -= n as u64;
        }
        Ok(())
    }
}

/// Makes `v` at least `len` words long. Scratch contents need not survive, so a new buffer
/// comes zeroed from the allocator (`vec!` of zeros asks for zeroed memory) rather than
/// being filled by a loop, which is one iteration per word without optimization.
fn grow(v: &mut Vec<u64>, len: usize) {
    if v.len() < len {
        *v = vec![0; len];
    }
}

/// Widens little-endian BF16 to little-endian F32 on a little-endian host: each input word
/// holds four values `v0..v3` (low to high); F32 bits are the BF16 bits shifted up by 16,
/// so the output words are `v0 << 16 | v1 << 48` and `v2 << 16 | v3 << 48`. A NaN gets its
/// quiet bit (`0x0040` of the BF16 value) set, as `half::bf16::to_f32` does: in every lane
/// whose magnitude `v & 0x7FFF` exceeds `0x7F80`, adding `0x7F` carries into bit 15 (no lane
/// overflows into the next), which shifted down by 9 is `0x0040`. `out` holds two words
/// per input word. An indexed loop of shifts and masks: fast without optimization, and
/// vectorized with it.
pub(crate) fn widen_bf16_words(input: &[u64], out: &mut [u64]) {
    const MAGNITUDE: u64 = 0x7FFF_7FFF_7FFF_7FFF;
    const NAN_CARRY: u64 = 0x007F_007F_007F_007F;
    const BIT15: u64 = 0x8000_8000_8000_8000;
    let out = &mut out[..2 * input.len()];
    let mut i = 0;
    while i < input.len() {
        let w = input[i];
        let w = w | ((((w & MAGNITUDE) + NAN_CARRY) & BIT15) >> 9);
        out[2 * i] = ((w & 0xFFFF) << 16) | ((w & 0xFFFF_0000) << 32);
        out[2 * i + 1] = ((w >> 16) & 0xFFFF_0000) | (w & 0xFFFF_0000_0000_0000);
        i += 1;
    }
}

/// Widens BF16 to F32, both little-endian, byte by byte (any host): `[lo, hi]` becomes
/// `[0, 0, lo, hi]`, with the quiet bit set for a NaN as in [`widen_bf16_words`]. The
/// big-endian hosts' path.
pub(crate) fn widen_bf16_bytes(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / 2;
    let dst = &mut dst[..4 * n];
    let mut i = 0;
    while i < n {
        let (lo, hi) = (src[2 * i], src[2 * i + 1]);
        let nan = hi & 0x7F == 0x7F && lo > 0x80;
        dst[4 * i] = 0;
        dst[4 * i + 1] = 0;
        dst[4 * i + 2] = if nan { lo | 0x40 } else { lo };
        dst[4 * i + 3] = hi;
        i += 1;
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
    ///
    /// On wasm32 there is no mapping: [`ResolveError::MappingUnsupported`], for every file.
    #[cfg(feature = "mmap")]
    pub fn map(graph: &Path, planned: &'p StoredFile) -> Result<Shared<'p>, ResolveError> {
        #[cfg(target_family = "wasm")]
        return Err(ResolveError::MappingUnsupported {
            graph: graph.to_path_buf(),
            path: planned.path().to_path_buf(),
            target: "wasm32",
        });
        #[cfg(not(target_family = "wasm"))]
        Self::map_file(graph, planned)
    }

    #[cfg(all(feature = "mmap", not(target_family = "wasm")))]
    fn map_file(graph: &Path, planned: &'p StoredFile) -> Result<Shared<'p>, ResolveError> {
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
        // buffer's length (checked when mapped, by construction for memory), so it fits
        // `usize`; converted with a check all the same, never wrapped (32-bit targets).
        let range = usize::try_from(c.offset)
            .ok()
            .zip(usize::try_from(c.stored_length).ok())
            .and_then(|(start, length)| Some(start..start.checked_add(length)?));
        let Some(std::ops::Range { start, end }) = range.filter(|r| r.end <= self.bytes.len())
        else {
            return Err(ResolveError::Changed {
                path: self.planned.path().to_path_buf(),
                expected: self.planned.stamp().to_string(),
                found: format!("{} bytes", self.bytes.len()),
            });
        };
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

/// Maps `file` read-only: the one `unsafe` block of the resolver (feature `mmap`; not
/// compiled for wasm, which has no mapping).
#[cfg(all(feature = "mmap", not(target_family = "wasm")))]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random bytes (xorshift), including NaN and infinity patterns.
    fn bytes(n: usize, seed: u64) -> Vec<u8> {
        webnn_weights_test_support::Rng::new(seed).bytes(n)
    }

    /// The definition: each BF16 value, as F32 through `half` (which sets a NaN's quiet
    /// bit), little-endian.
    fn reference(src: &[u8]) -> Vec<u8> {
        src.chunks_exact(2)
            .flat_map(|b| {
                half::bf16::from_le_bytes([b[0], b[1]])
                    .to_f32()
                    .to_bits()
                    .to_le_bytes()
            })
            .collect()
    }

    #[test]
    fn every_bf16_value_widens_as_half_does() {
        let all: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
        let expected = reference(&all);
        let mut words = vec![0u8; 2 * all.len()];
        Pipeline::new(Conversion::Bf16ToF32).convert(&all, &mut words);
        assert!(words == expected, "word path");
        let mut bytewise = vec![0u8; 2 * all.len()];
        widen_bf16_bytes(&all, &mut bytewise);
        assert!(bytewise == expected, "byte path");
    }

    #[test]
    fn widening_matches_the_definition_at_every_length_and_alignment() {
        let data = bytes(3 * CHUNK + 64, 7);
        // Lengths around word and chunk boundaries, at offsets that misalign the input.
        for len in [
            0,
            2,
            6,
            8,
            10,
            14,
            16,
            1000,
            CHUNK - 2,
            CHUNK,
            CHUNK + 6,
            3 * CHUNK + 2,
        ] {
            for start in [0, 2, 8, 10] {
                let src = &data[start..start + len];
                let expected = reference(src);
                let mut pipeline = Pipeline::new(Conversion::Bf16ToF32);
                assert_eq!(
                    pipeline.convert_all(src, 2 * len),
                    expected,
                    "{len} at {start}"
                );
                // Into a misaligned destination.
                let mut dst = vec![0xAAu8; 2 * len + 3];
                pipeline.convert(src, &mut dst[3..]);
                assert!(dst[3..] == expected[..], "{len} at {start}, dst at 3");
                let mut bytewise = vec![0u8; 2 * len];
                widen_bf16_bytes(src, &mut bytewise);
                assert!(bytewise == expected, "{len} at {start}, byte path");
            }
        }
    }

    #[test]
    fn streaming_matches_the_definition() {
        let data = bytes(2 * CHUNK + 10, 11);
        for (offset, len) in [
            (0u64, 0u64),
            (2, 6),
            (10, CHUNK as u64 + 6),
            (4, 2 * CHUNK as u64),
        ] {
            let c = PlannedConstant {
                name: "c".into(),
                reference: "c".into(),
                stored_name: "c".into(),
                data_type: crate::DataType::Float32,
                shape: vec![],
                file: "f".into(),
                offset,
                stored_length: len,
                length: 2 * len,
                conversion: Conversion::Bf16ToF32,
                file_index: 0,
            };
            let mut out = Vec::new();
            Pipeline::new(Conversion::Bf16ToF32)
                .stream(
                    &c,
                    |buf, at| {
                        buf.copy_from_slice(&data[at as usize..at as usize + buf.len()]);
                        Ok(())
                    },
                    |chunk| {
                        out.extend_from_slice(chunk);
                        Ok(())
                    },
                )
                .unwrap();
            let range = offset as usize..(offset + len) as usize;
            assert!(out == reference(&data[range]), "{offset}+{len}");
        }
    }
}
