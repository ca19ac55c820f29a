//! Materializing a plan: the planned ranges, through the storage layer.

use super::error::ResolveError;
use super::lock::{Hashing, Sha256};
use super::model::{Conversion, LockEntry, LockProblem, PlannedConstant, WeightPlan, WeightsLock};
use super::storage::{check_range, FileStorage, Pipeline, Shared};
use crate::sidecar::StoredFile;
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Seek, SeekFrom, Write};

/// How a plan's files are accessed when materialized.
#[derive(Debug, Clone)]
pub(crate) enum Access {
    /// Positioned reads into owned memory.
    Read,
    /// A read-only mapping per file; unconverted constants are views into it.
    #[cfg(feature = "mmap")]
    Map,
    /// The files' bytes are already in memory (one buffer per planned file, in order).
    Memory(Vec<Bytes>),
}

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
    /// [`ResolveError::Changed`]. To read many constants, a [`ConstantReader`]
    /// ([`WeightPlan::reader`]) opens each file once instead of once per constant.
    pub fn read_constant(&self, c: &PlannedConstant) -> Result<Vec<u8>, ResolveError> {
        let mut reader = self.reader();
        let bytes = reader.read_constant(c)?;
        reader.finish()?;
        Ok(bytes)
    }

    /// Streams one planned constant's resolved bytes into `out` and returns the number of
    /// bytes written (`c.length`).
    ///
    /// Unconverted ranges go through `std::io::copy` from the sidecar, so on Linux a
    /// `File` destination (or a `BufWriter` over one) is filled by `copy_file_range`
    /// without a user-space buffer; BF16 is widened in chunks. The same changed-file
    /// checks as [`WeightPlan::read_constant`] apply; on such an error `out` may hold part
    /// of the bytes, so callers write into a temporary file. To copy many constants, a
    /// [`ConstantReader`] ([`WeightPlan::reader`]) opens each file once.
    pub fn copy_constant<W: Write>(
        &self,
        c: &PlannedConstant,
        out: &mut W,
    ) -> Result<u64, ResolveError> {
        let mut reader = self.reader();
        let n = reader.copy_constant(c, out)?;
        reader.finish()?;
        Ok(n)
    }

    /// A reader of this plan's constants, in any order and any number: each planned file
    /// is opened (and compared with the plan) once, at its first constant, and compared
    /// again by [`ConstantReader::finish`].
    ///
    /// Runs of small constants stored next to each other (up to 64 KiB each, such as
    /// thousands of biases and norms) are read in pieces of up to 1 MiB rather than one
    /// read each; nothing outside the planned ranges (and gaps of at most 4 KiB between
    /// them) is read.
    ///
    /// ```
    /// use webnn_weights_runtime::{parse_webnn, plan_external_weights};
    /// let dir = tempfile::tempdir().unwrap();
    /// let graph = parse_webnn(r#"webnn_graph "g" v2 {
    ///   consts { a: u8[2] @weights("a"); b: u8[1] @weights("b"); }
    ///   nodes { y = add(a, b); }
    ///   outputs { y; }
    /// }"#).unwrap();
    /// std::fs::write(dir.path().join("g.weights"), [1, 2, 3]).unwrap();
    /// std::fs::write(dir.path().join("g.manifest.json"), r#"{"tensors":{
    ///     "a":{"byteOffset":0,"byteLength":2},"b":{"byteOffset":2,"byteLength":1}}}"#).unwrap();
    /// let plan = plan_external_weights(&graph, &dir.path().join("g.webnn"), None, None).unwrap();
    /// let mut reader = plan.reader();
    /// let mut all = Vec::new();
    /// for c in plan.constants() {
    ///     reader.copy_constant(c, &mut all).unwrap();
    /// }
    /// reader.finish().unwrap(); // the sidecar did not change while it was read
    /// assert_eq!(all, [1, 2, 3]);
    /// ```
    pub fn reader(&self) -> ConstantReader<'_> {
        let mut open = Vec::new();
        open.resize_with(self.files.len(), || None);
        ConstantReader {
            plan: self,
            open,
            pipeline: Pipeline::new(Conversion::None),
            window: Vec::new(),
            window_at: None,
            found: Vec::new(),
        }
    }

    /// A weights lock of this plan, as `webnn-weights lock` writes it: for every constant
    /// its reference, its file (relative to the graph's folder), the length and the
    /// SHA-256 of its resolved bytes. Reads every constant once (constants on the same
    /// stored bytes are hashed once), through one [`ConstantReader`]; an attached lock is
    /// verified on the way.
    pub fn to_lock(&self) -> Result<WeightsLock, ResolveError> {
        let first = self.first_with_same_bytes();
        let mut reader = self.reader();
        let mut digests: Vec<[u8; 32]> = Vec::with_capacity(self.constants.len());
        for (c, &f) in self.constants.iter().zip(&first) {
            let digest = match digests.get(f) {
                Some(&d) => d,
                None => reader.sha256(c)?,
            };
            digests.push(digest);
        }
        reader.finish()?;
        let entries = self
            .constants
            .iter()
            .zip(digests)
            .map(|(c, digest)| {
                LockEntry::new(
                    c.name.clone(),
                    c.reference.clone(),
                    self.lock_file_name(c),
                    c.length,
                    digest,
                )
            })
            .collect();
        WeightsLock::new(WeightsLock::path_for(&self.graph), entries)
    }

    /// The index of `c` in the plan's constants.
    fn index_of(&self, c: &PlannedConstant) -> Result<usize, ResolveError> {
        self.constants
            .binary_search_by(|k| k.name.as_str().cmp(&c.name))
            .ok()
            .filter(|&i| self.constants[i].file_index == c.file_index)
            .ok_or_else(|| ResolveError::NotInPlan {
                graph: self.graph.clone(),
                constant: c.name.clone(),
            })
    }

    /// Reads every planned constant into owned memory, keyed by constant name.
    ///
    /// Read through one [`ConstantReader`]: each file is opened once, and nothing but the
    /// planned ranges (and gaps of at most 4 KiB between neighbouring small constants,
    /// which are read together) is read. Constants that resolve to the same stored bytes
    /// with the same conversion are read once and share one buffer.
    pub fn materialize(&self) -> Result<BTreeMap<String, Bytes>, ResolveError> {
        self.materialize_with(&Access::Read)
    }

    /// Like [`WeightPlan::materialize`], but maps each file read-only once and returns
    /// views into the mapping for constants that need no conversion (BF16-widened
    /// constants are converted into owned memory). No tensor page is touched except those
    /// of converted constants.
    ///
    /// The mapping contract: the sidecar must not be truncated or rewritten while any
    /// returned buffer is alive. Its size and modification time are compared with the
    /// plan right after mapping ([`ResolveError::Changed`]); a later truncation makes
    /// reads of the lost pages fault (`SIGBUS` on Unix) and a rewrite in place shows the
    /// new bytes. Use [`WeightPlan::materialize`] for files that may change.
    #[cfg(feature = "mmap")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
    pub fn materialize_mapped(&self) -> Result<BTreeMap<String, Bytes>, ResolveError> {
        self.materialize_with(&Access::Map)
    }

    /// Like [`WeightPlan::materialize_mapped`], for the constants `pick` selects only;
    /// files that none of them lies in are not mapped. For example, views of the
    /// constants that need no conversion, leaving the BF16 ones to be streamed with
    /// [`WeightPlan::copy_constant`]:
    ///
    /// ```
    /// use webnn_weights_runtime::{parse_webnn, plan_external_weights, Conversion};
    /// let dir = tempfile::tempdir().unwrap();
    /// let graph = parse_webnn(r#"webnn_graph "g" v2 {
    ///   consts { a: u8[2] @weights("a"); b: u8[1] @weights("b"); }
    ///   nodes { y = add(a, b); }
    ///   outputs { y; }
    /// }"#).unwrap();
    /// std::fs::write(dir.path().join("g.weights"), [1, 2, 3]).unwrap();
    /// std::fs::write(dir.path().join("g.manifest.json"), r#"{"tensors":{
    ///     "a":{"byteOffset":0,"byteLength":2},"b":{"byteOffset":2,"byteLength":1}}}"#).unwrap();
    /// let plan = plan_external_weights(&graph, &dir.path().join("g.webnn"), None, None).unwrap();
    /// let views = plan.materialize_mapped_where(|c| c.name == "a").unwrap();
    /// assert_eq!(views.len(), 1);
    /// assert_eq!(views["a"][..], [1, 2]);
    /// let unconverted = plan.materialize_mapped_where(|c| c.conversion == Conversion::None);
    /// assert_eq!(unconverted.unwrap().len(), 2);
    /// ```
    ///
    /// The mapping contract of [`WeightPlan::materialize_mapped`] applies.
    #[cfg(feature = "mmap")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
    pub fn materialize_mapped_where(
        &self,
        pick: impl Fn(&PlannedConstant) -> bool,
    ) -> Result<BTreeMap<String, Bytes>, ResolveError> {
        self.materialize_selected(&Access::Map, pick)
    }

    pub(crate) fn materialize_with(
        &self,
        access: &Access,
    ) -> Result<BTreeMap<String, Bytes>, ResolveError> {
        self.materialize_selected(access, |_| true)
    }

    fn materialize_selected(
        &self,
        access: &Access,
        pick: impl Fn(&PlannedConstant) -> bool,
    ) -> Result<BTreeMap<String, Bytes>, ResolveError> {
        let mut out = BTreeMap::new();
        let whole = |from| Source::Whole {
            open: self.files.iter().map(|_| None).collect(),
            from,
        };
        let mut source = match access {
            Access::Read => Source::Read(self.reader()),
            #[cfg(feature = "mmap")]
            Access::Map => whole(Whole::Map),
            Access::Memory(buffers) => whole(Whole::Memory(buffers)),
        };
        let mut shared: HashMap<(usize, u64, u64, Conversion), Bytes> = HashMap::new();
        // Lock problems found while reading held bytes (a reader keeps its own).
        let mut found = Vec::new();
        for c in self.constants.iter().filter(|c| pick(c)) {
            let file = self.file_of(c)?;
            let key = c.bytes_key();
            if let Some(bytes) = shared.get(&key) {
                check_range(file, c)?;
                out.insert(c.name.clone(), bytes.clone());
                continue;
            }
            let bytes = match &mut source {
                Source::Read(reader) => Bytes::from(reader.read_constant(c)?),
                Source::Whole { open, from } => {
                    let slot = &mut open[c.file_index];
                    let opened = match slot {
                        Some(opened) => opened,
                        None => slot.insert(match from {
                            Whole::Memory(buffers) => {
                                let bytes =
                                    buffers.get(c.file_index).cloned().ok_or_else(|| {
                                        ResolveError::NotInPlan {
                                            graph: self.graph.clone(),
                                            constant: c.name.clone(),
                                        }
                                    })?;
                                Shared::memory(file, bytes)
                            }
                            #[cfg(feature = "mmap")]
                            Whole::Map => Shared::map(&self.graph, file)?,
                        }),
                    };
                    let bytes = opened.get(c)?;
                    if let Some(check) = &self.lock {
                        // Hashed as read: for a mapping, this is the first touch of its pages.
                        let index = self.index_of(c)?;
                        check.check(&self.constants, index, Sha256::of(&bytes), &mut found);
                    }
                    bytes
                }
            };
            shared.insert(key, bytes.clone());
            out.insert(c.name.clone(), bytes);
        }
        match source {
            Source::Read(reader) => reader.finish()?,
            Source::Whole { open, .. } => {
                for opened in open.iter().flatten() {
                    opened.check()?;
                }
                if let Some(check) = &self.lock {
                    check.finish(&self.graph, found)?;
                }
            }
        }
        Ok(out)
    }
}

/// Where a materialization gets its bytes: positioned reads through one reader (each file
/// opened once, small neighbouring constants read together), or files held whole (a
/// read-only mapping, or the caller's buffers), each opened on first use.
enum Source<'p> {
    Read(ConstantReader<'p>),
    Whole {
        open: Vec<Option<Shared<'p>>>,
        from: Whole<'p>,
    },
}

/// Where files held whole come from.
#[derive(Clone, Copy)]
enum Whole<'p> {
    /// A read-only mapping of each file.
    #[cfg(feature = "mmap")]
    Map,
    /// The caller's buffers, one per planned file.
    Memory(&'p Vec<Bytes>),
}

/// Constants of at most this many stored bytes are read through [`ConstantReader`]'s
/// read-ahead window, several per read, when stored next to each other.
pub(crate) const SMALL_CONSTANT: u64 = 64 << 10;

/// Small constants whose stored ranges are at most this many bytes apart are read in one
/// piece by a [`ConstantReader`] (the gap is read and dropped).
pub(crate) const SMALL_CONSTANT_GAP: u64 = 4 << 10;

/// Bytes read ahead at most per read of small constants.
const WINDOW: u64 = 1 << 20;

/// An opened planned file, with the stretches of its small constants.
struct ReaderFile<'p> {
    storage: FileStorage<'p>,
    /// Sorted, disjoint `[start, end)` stretches covering the stored ranges of the plan's
    /// small constants in this file, ranges at most [`SMALL_CONSTANT_GAP`] apart merged.
    runs: Vec<(u64, u64)>,
}

/// Reads or copies a plan's constants with each planned file opened once; made by
/// [`WeightPlan::reader`].
///
/// A file is compared with the plan (size and modification time, by the open file and by
/// its path) when it is opened, at its first constant, and again by
/// [`ConstantReader::finish`]: call it after the last constant, since a file that changed
/// while it was read is only reported there. A read that finds a file shorter than
/// planned is a [`ResolveError::Changed`] at once.
pub struct ConstantReader<'p> {
    plan: &'p WeightPlan,
    open: Vec<Option<ReaderFile<'p>>>,
    pipeline: Pipeline,
    /// Stored bytes read ahead for small constants.
    window: Vec<u8>,
    /// The window's file index, first offset and length, when it holds bytes.
    window_at: Option<(usize, u64, usize)>,
    /// Problems with the plan's weights lock found so far (reported by `finish`).
    found: Vec<LockProblem>,
}

impl std::fmt::Debug for ConstantReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConstantReader")
            .field("graph", &self.plan.graph)
            .field("open_files", &self.open.iter().flatten().count())
            .finish_non_exhaustive()
    }
}

/// The opened file of `c` in `open` (opened, compared with the plan and its stretches of
/// small constants found on first use).
fn open_file<'a, 'p>(
    plan: &'p WeightPlan,
    open: &'a mut [Option<ReaderFile<'p>>],
    c: &PlannedConstant,
) -> Result<&'a ReaderFile<'p>, ResolveError> {
    let planned = plan.file_of(c)?;
    check_range(planned, c)?;
    let slot = &mut open[c.file_index];
    if let Some(file) = slot {
        return Ok(file);
    }
    let storage = FileStorage::open(&plan.graph, planned)?;
    let mut ranges: Vec<(u64, u64)> = plan
        .constants
        .iter()
        .filter(|k| k.file_index == c.file_index && k.stored_length <= SMALL_CONSTANT)
        .map(|k| (k.offset, k.offset.saturating_add(k.stored_length)))
        .collect();
    ranges.sort_unstable();
    let mut runs: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match runs.last_mut() {
            Some(last) if start <= last.1.saturating_add(SMALL_CONSTANT_GAP) => {
                last.1 = last.1.max(end);
            }
            _ => runs.push((start, end)),
        }
    }
    Ok(slot.insert(ReaderFile { storage, runs }))
}

impl<'p> ConstantReader<'p> {
    /// Where `c`'s stored bytes (a small constant's) are in the window, reading ahead from `c`'s
    /// offset to the end of its stretch of small constants (at most [`WINDOW`] bytes) when
    /// the window does not hold them.
    fn windowed(&mut self, c: &PlannedConstant) -> Result<std::ops::Range<usize>, ResolveError> {
        let (index, offset, length) = (c.file_index, c.offset, c.stored_length);
        let file = open_file(self.plan, &mut self.open, c)?;
        let held = self.window_at.is_some_and(|(held, start, len)| {
            held == index && offset >= start && offset + length <= start + len as u64
        });
        if !held {
            self.window_at = None;
            // The stretch holding `c` (every small constant's range lies in one).
            let at = file.runs.partition_point(|run| run.0 <= offset);
            let stretch_end = match at.checked_sub(1).map(|i| file.runs[i]) {
                Some((_, end)) if end >= offset + length => end,
                _ => offset + length,
            };
            let n = (stretch_end - offset).min(WINDOW.max(length)) as usize;
            if self.window.len() < n {
                // Zeroed by the allocator, not by a loop; never cleared before a read.
                self.window = vec![0; n.max(WINDOW as usize)];
            }
            file.storage.read_exact_at(&mut self.window[..n], offset)?;
            self.window_at = Some((index, offset, n));
        }
        let start = self.window_at.map_or(offset, |(_, start, _)| start);
        let at = (offset - start) as usize;
        Ok(at..at + length as usize)
    }

    /// Streams `c`'s resolved bytes into `out` and returns the number written
    /// (`c.length`); see [`WeightPlan::copy_constant`].
    ///
    /// With a weights lock attached ([`WeightPlan::with_lock`]) the bytes are hashed as
    /// they pass and compared with the lock; a difference is reported by
    /// [`ConstantReader::finish`] (with every other), and large unconverted ranges are
    /// copied through memory rather than file to file.
    pub fn copy_constant<W: Write + ?Sized>(
        &mut self,
        c: &PlannedConstant,
        out: &mut W,
    ) -> Result<u64, ResolveError> {
        if self.plan.lock.is_none() {
            return self.copy_resolved(c, out);
        }
        self.copy_hashed(c, out)?;
        Ok(c.length)
    }

    /// Copies `c`'s resolved bytes to `out` and returns their SHA-256, computed as they pass
    /// (large unconverted ranges on a second thread); with a lock attached, compares it with
    /// the lock (a difference is reported by [`ConstantReader::finish`]).
    fn copy_hashed<W: Write + ?Sized>(
        &mut self,
        c: &PlannedConstant,
        out: &mut W,
    ) -> Result<[u8; 32], ResolveError> {
        let index = match &self.plan.lock {
            Some(_) => Some(self.plan.index_of(c)?),
            None => None,
        };
        let digest = match () {
            // wasm has no second thread to hash on (WASI preview 1 and a browser's main
            // thread cannot spawn one): there every constant is hashed as it is written.
            #[cfg(not(target_family = "wasm"))]
            () if c.stored_length > SMALL_CONSTANT && c.conversion == Conversion::None => {
                self.copy_hashing_aside(c, out)?
            }
            () => {
                // Small constants come from the read-ahead window, converted ones through
                // the pipeline: both reach the writer in pieces, never by a file-to-file
                // copy.
                let mut hashing = Hashing {
                    inner: out,
                    digest: Sha256::new(),
                };
                self.copy_resolved(c, &mut hashing)?;
                hashing.digest.finish()
            }
        };
        if let (Some(check), Some(index)) = (&self.plan.lock, index) {
            check.check(&self.plan.constants, index, digest, &mut self.found);
        }
        Ok(digest)
    }

    /// Copies a large unconverted constant to `out` in pieces and hashes each piece on a
    /// second thread while the next one is read and written: verifying a lock then costs
    /// little more than the copy, on a machine with a core to spare. The digest is of the
    /// very bytes written.
    #[cfg(not(target_family = "wasm"))]
    fn copy_hashing_aside<W: Write + ?Sized>(
        &mut self,
        c: &PlannedConstant,
        out: &mut W,
    ) -> Result<[u8; 32], ResolveError> {
        /// Bytes per piece; at most four pieces are alive at once.
        const PIECE: usize = 1 << 20;
        let storage = &open_file(self.plan, &mut self.open, c)?.storage;
        let write_error = |source| ResolveError::Write {
            constant: c.name.clone(),
            source,
        };
        std::thread::scope(|scope| {
            let (to_hash, pieces) = std::sync::mpsc::sync_channel::<(Vec<u8>, usize)>(2);
            let (give_back, spare) = std::sync::mpsc::channel::<Vec<u8>>();
            let hasher = scope.spawn(move || {
                let mut digest = Sha256::new();
                for (piece, n) in pieces {
                    digest.update(&piece[..n]);
                    // The reader may have stopped already: then the piece is dropped.
                    let _ = give_back.send(piece);
                }
                digest.finish()
            });
            let (mut offset, end) = (c.offset, c.offset + c.stored_length);
            let mut copy = || -> Result<(), ResolveError> {
                while offset < end {
                    let n = PIECE.min((end - offset) as usize);
                    let mut piece = spare.try_recv().unwrap_or_else(|_| vec![0; PIECE]);
                    storage.read_exact_at(&mut piece[..n], offset)?;
                    out.write_all(&piece[..n]).map_err(write_error)?;
                    if to_hash.send((piece, n)).is_err() {
                        break; // the hasher is gone: reported by the join below
                    }
                    offset += n as u64;
                }
                Ok(())
            };
            let copied = copy();
            drop(to_hash);
            let digest = hasher
                .join()
                .map_err(|_| write_error(io::Error::other("the thread hashing the bytes failed")));
            copied?;
            digest
        })
    }

    /// The SHA-256 of `c`'s resolved bytes (BF16 widened to F32: the digest
    /// `webnn-weights inspect` prints and a weights lock pins), streamed: nothing is held
    /// but a few buffers of at most 1 MiB. An attached lock is verified on the way.
    pub fn sha256(&mut self, c: &PlannedConstant) -> Result<[u8; 32], ResolveError> {
        self.copy_hashed(c, &mut io::sink())
    }

    /// [`ConstantReader::copy_constant`] without the lock.
    fn copy_resolved<W: Write + ?Sized>(
        &mut self,
        c: &PlannedConstant,
        out: &mut W,
    ) -> Result<u64, ResolveError> {
        let write_error = |source| ResolveError::Write {
            constant: c.name.clone(),
            source,
        };
        if c.stored_length <= SMALL_CONSTANT {
            let range = self.windowed(c)?;
            let window = &self.window[range];
            match c.conversion {
                Conversion::None => out.write_all(window).map_err(write_error)?,
                conversion => {
                    self.pipeline.set_conversion(conversion);
                    self.pipeline.stream(
                        c,
                        |buf, offset| {
                            let from = (offset - c.offset) as usize;
                            buf.copy_from_slice(&window[from..from + buf.len()]);
                            Ok(())
                        },
                        |chunk| out.write_all(chunk).map_err(write_error),
                    )?;
                }
            }
            return Ok(c.length);
        }
        let open = &open_file(self.plan, &mut self.open, c)?.storage;
        match c.conversion {
            Conversion::None => {
                let mut handle = &open.file;
                handle
                    .seek(SeekFrom::Start(c.offset))
                    .map_err(|e| open.read_error(e))?;
                let mut take = Read::take(handle, c.stored_length);
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
            }
            conversion => {
                self.pipeline.set_conversion(conversion);
                self.pipeline.stream(
                    c,
                    |buf, offset| open.read_exact_at(buf, offset),
                    |chunk| out.write_all(chunk).map_err(write_error),
                )?;
            }
        }
        Ok(c.length)
    }

    /// Reads `c` into a vector of exactly `c.length` bytes; see
    /// [`WeightPlan::read_constant`].
    pub fn read_constant(&mut self, c: &PlannedConstant) -> Result<Vec<u8>, ResolveError> {
        if c.stored_length <= SMALL_CONSTANT || self.plan.lock.is_some() {
            // With a lock, read in chunks, each hashed as it arrives.
            let mut out = Vec::with_capacity(c.length as usize);
            self.copy_constant(c, &mut out)?;
            return Ok(out);
        }
        open_file(self.plan, &mut self.open, c)?.storage.read(c)
    }

    /// Compares every file opened so far with the plan again: a file that changed while
    /// its constants were read is a [`ResolveError::Changed`].
    ///
    /// With a weights lock attached, every problem with it found so far (and those found
    /// before reading: missing or extra entries, lengths) is reported here as one
    /// [`ResolveError::LockMismatch`].
    pub fn finish(self) -> Result<(), ResolveError> {
        for file in self.open.iter().flatten() {
            file.storage.check()?;
        }
        match &self.plan.lock {
            Some(check) => check.finish(&self.plan.graph, self.found),
            None => Ok(()),
        }
    }
}
