//! Materializing a plan: exactly the planned ranges, through the storage layer.

use super::error::ResolveError;
use super::model::{Conversion, PlannedConstant, StoredFile, WeightPlan};
use super::storage::{check_range, FileStorage, Pipeline, Shared};
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Seek, SeekFrom, Write};

/// How a plan's files are accessed when materialized.
#[derive(Debug, Clone)]
pub(crate) enum Access {
    /// Positioned reads into owned memory.
    Read,
    /// A read-only mapping per file; unconverted constants are views into it.
    Map,
    /// The files' bytes are already in memory (one buffer per planned file, in order).
    Memory(Vec<Bytes>),
}

/// One opened file of a plan.
enum Opened<'p> {
    Read(FileStorage<'p>),
    Shared(Shared<'p>),
}

impl Opened<'_> {
    fn get(&self, c: &PlannedConstant) -> Result<Bytes, ResolveError> {
        match self {
            Opened::Read(f) => f.read(c).map(Bytes::from),
            Opened::Shared(s) => s.get(c),
        }
    }

    fn check(&self) -> Result<(), ResolveError> {
        match self {
            Opened::Read(f) => f.check(),
            Opened::Shared(s) => s.check(),
        }
    }
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

    /// Reads every planned constant into owned memory, keyed by constant name.
    ///
    /// Each file is opened once; nothing but the planned ranges is read. Constants that
    /// resolve to the same stored bytes with the same conversion are read once and share
    /// one buffer.
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
        let mut open: Vec<Option<Opened<'_>>> = Vec::new();
        open.resize_with(self.files.len(), || None);
        let mut shared: HashMap<(usize, u64, u64, Conversion), Bytes> = HashMap::new();
        for c in self.constants.iter().filter(|c| pick(c)) {
            let file = self.file_of(c)?;
            let key = (c.file_index, c.offset, c.stored_length, c.conversion);
            if let Some(bytes) = shared.get(&key) {
                check_range(file, c)?;
                out.insert(c.name.clone(), bytes.clone());
                continue;
            }
            let slot = &mut open[c.file_index];
            let opened = match slot {
                Some(opened) => opened,
                None => slot.insert(match access {
                    Access::Read => Opened::Read(FileStorage::open(&self.graph, file)?),
                    Access::Map => Opened::Shared(Shared::map(&self.graph, file)?),
                    Access::Memory(buffers) => {
                        let bytes = buffers.get(c.file_index).cloned().ok_or_else(|| {
                            ResolveError::NotInPlan {
                                graph: self.graph.clone(),
                                constant: c.name.clone(),
                            }
                        })?;
                        Opened::Shared(Shared::memory(file, bytes))
                    }
                }),
            };
            let bytes = opened.get(c)?;
            shared.insert(key, bytes.clone());
            out.insert(c.name.clone(), bytes);
        }
        for opened in open.iter().flatten() {
            opened.check()?;
        }
        Ok(out)
    }
}
