//! The plan's types (the bottom layer of `resolve/`): which files a plan reads, and for
//! every external constant its file, byte range and conversion. Nothing here reads a file
//! or knows the graph's rules.

use crate::graph::dtype::DataType;
use crate::sidecar::StoredFile;
use std::fmt;
use std::path::{Path, PathBuf};
pub(crate) use webnn_weights_artifacts::hex;

/// Which kind of sidecar a plan reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SidecarKind {
    /// A SafeTensors archive (`.safetensors` / `.safetensor`, any letter case).
    SafeTensors,
    /// A raw `.weights` blob addressed by a JSON manifest.
    Blob {
        /// The manifest that addresses the blob.
        manifest: PathBuf,
    },
    /// A sharded SafeTensors archive: [`Sidecar::path`] is its index
    /// (`*.safetensors.index.json`); the shards the plan reads are [`WeightPlan::files`].
    ShardedSafeTensors,
}

/// The sidecar a plan reads, as it was when planned: the file the graph's weights were
/// found in (the archive, or the blob whose manifest is in [`SidecarKind::Blob`]).
///
/// The files holding tensor bytes are [`WeightPlan::files`]: the sidecar itself, or for a
/// sharded archive the shards that hold a requested tensor.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Sidecar {
    /// The file (explicit paths already joined to the graph's folder): the archive, the
    /// blob, or a sharded archive's index.
    pub path: PathBuf,
    /// Archive or blob.
    pub kind: SidecarKind,
    /// The file's size in bytes when planned.
    pub len: u64,
}

/// How planned bytes become resolved bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Conversion {
    /// The stored bytes are the resolved bytes.
    None,
    /// Stored BF16 values are widened to little-endian F32 (a `float32` declaration
    /// served by a `BF16` tensor).
    Bf16ToF32,
}

impl Conversion {
    /// The number of resolved bytes for `stored` stored bytes, `None` on overflow.
    ///
    /// ```
    /// use webnn_weights_runtime::Conversion;
    /// assert_eq!(Conversion::None.resolved_length(6), Some(6));
    /// assert_eq!(Conversion::Bf16ToF32.resolved_length(6), Some(12));
    /// ```
    pub fn resolved_length(self, stored: u64) -> Option<u64> {
        match self {
            Conversion::None => Some(stored),
            Conversion::Bf16ToF32 => stored.checked_mul(2),
        }
    }

    /// The number of stored bytes that resolve to `resolved` bytes, `None` when no
    /// stored length does (an odd length for BF16 widening, which doubles).
    ///
    /// ```
    /// use webnn_weights_runtime::Conversion;
    /// assert_eq!(Conversion::Bf16ToF32.stored_length(12), Some(6));
    /// assert_eq!(Conversion::Bf16ToF32.stored_length(7), None);
    /// ```
    pub fn stored_length(self, resolved: u64) -> Option<u64> {
        match self {
            Conversion::None => Some(resolved),
            Conversion::Bf16ToF32 => Some(resolved / 2).filter(|_| resolved % 2 == 0),
        }
    }
}

/// One external constant of a plan: which file holds its bytes, where, and what they
/// become.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlannedConstant {
    /// The constant's name in the graph.
    pub name: String,
    /// Its `@weights` reference.
    pub reference: String,
    /// The stored tensor (or manifest entry) name the reference resolved to.
    pub stored_name: String,
    /// The declared logical type.
    pub data_type: DataType,
    /// The declared shape.
    pub shape: Vec<u32>,
    /// The file holding the stored bytes (one of [`WeightPlan::files`]).
    pub file: PathBuf,
    /// Absolute offset of the stored bytes in [`PlannedConstant::file`].
    pub offset: u64,
    /// Number of stored bytes.
    pub stored_length: u64,
    /// Number of resolved bytes (the declaration's byte size).
    pub length: u64,
    /// The conversion from stored to resolved bytes.
    pub conversion: Conversion,
    /// Index of `file` in the plan's files.
    pub(crate) file_index: usize,
}

impl PlannedConstant {
    /// What makes two constants resolve to the same bytes: the same stored range of the same
    /// file with the same conversion. The one rule by which constants share a buffer, a
    /// range of the build helper's data and a digest.
    pub(crate) fn bytes_key(&self) -> (usize, u64, u64, Conversion) {
        (
            self.file_index,
            self.offset,
            self.stored_length,
            self.conversion,
        )
    }
}

/// The result of planning: the sidecar, the files it spans, and for every external
/// constant its file and range.
///
/// Made by [`plan_external_weights`](crate::plan_external_weights); materialized by
/// [`WeightPlan::read_constant`], [`WeightPlan::copy_constant`] or
/// [`WeightPlan::materialize`].
#[derive(Debug, Clone)]
pub struct WeightPlan {
    pub(crate) graph: PathBuf,
    pub(crate) sidecar: Option<Sidecar>,
    pub(crate) files: Vec<StoredFile>,
    pub(crate) constants: Vec<PlannedConstant>,
    pub(crate) watched: Vec<PathBuf>,
    /// The weights lock the bytes are verified against while read, if one is attached.
    pub(crate) lock: Option<std::sync::Arc<LockCheck>>,
}

impl WeightPlan {
    /// The graph file this plan was made for.
    pub fn graph_path(&self) -> &Path {
        &self.graph
    }

    /// The sidecar; `None` when the graph has no `@weights` constants (then no file was
    /// touched).
    pub fn sidecar(&self) -> Option<&Sidecar> {
        self.sidecar.as_ref()
    }

    /// The files holding tensor bytes, as they were when planned (empty when the graph
    /// has no `@weights` constants). For a sharded archive: only the shards holding a
    /// requested tensor, in the index's order.
    pub fn files(&self) -> &[StoredFile] {
        &self.files
    }

    /// One entry per `@weights` constant, sorted by constant name.
    pub fn constants(&self) -> &[PlannedConstant] {
        &self.constants
    }

    /// The planned constant named `name`, if it is external.
    pub fn constant(&self, name: &str) -> Option<&PlannedConstant> {
        self.constants
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.constants.get(i))
    }

    /// Every path whose existence or contents could change the result: each discovery
    /// candidate examined (existing or not, in order), each manifest candidate examined,
    /// and the chosen sidecar and manifest (for a sharded archive, the index; the shards it
    /// read are [`WeightPlan::files`]), and the lock file [`WeightPlan::with_lock_file`]
    /// looked at (existing or not). Empty when the graph has no `@weights` and no lock
    /// was looked for.
    pub fn watched_paths(&self) -> Vec<PathBuf> {
        self.watched.clone()
    }

    /// For every constant (in [`WeightPlan::constants`] order), the index of the first
    /// constant that resolves to the same bytes: the same stored range of the same file with
    /// the same conversion, as when several constants reference one stored tensor (tied
    /// weights). A constant with bytes of its own maps to its own index.
    ///
    /// This is the rule by which constants share: one buffer when materialized, one range
    /// of the build helper's data and of the fallback mode's buffer (both laid out by
    /// [`WeightPlan::data_layout`]).
    ///
    /// ```no_run
    /// use std::path::Path;
    /// use webnn_weights_runtime::{plan_external_weights, read_graph_file};
    /// let graph = read_graph_file("model.webnn")?;
    /// let plan = plan_external_weights(&graph, Path::new("model.webnn"), None, None)?;
    /// for (c, &first) in plan.constants().iter().zip(&plan.first_with_same_bytes()) {
    ///     if plan.constants()[first].name != c.name {
    ///         println!("{} shares the bytes of {}", c.name, plan.constants()[first].name);
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn first_with_same_bytes(&self) -> Vec<usize> {
        let mut first = std::collections::HashMap::with_capacity(self.constants.len());
        self.constants
            .iter()
            .enumerate()
            .map(|(i, c)| *first.entry(c.bytes_key()).or_insert(i))
            .collect()
    }
}

/// A weights lock: for each `@weights` constant of a graph, the byte length and SHA-256 of
/// its resolved bytes.
///
/// Read one with [`WeightsLock::read`], make one with [`WeightPlan::to_lock`]
/// (`webnn-weights lock GRAPH` writes it), attach one to a plan with
/// [`WeightPlan::with_lock`]. [`GraphLoader`](crate::GraphLoader) and the build helper find
/// `<graph file name>.lock` beside the graph ([`WeightsLock::path_for`]) on their own.
///
/// ```
/// use webnn_weights_runtime::WeightsLock;
/// let json = br#"{"format":"webnn-weights-lock","version":1,"constants":[
///   {"name":"w","ref":"w","file":"model.weights","byteLength":2,
///    "sha256":"b413f47d13ee2fe6c845b2ee141af81de858df4ec549a58b7970bb96645bc8d2"}]}"#;
/// let lock = WeightsLock::parse(json, "model.webnn.lock").unwrap();
/// assert_eq!(lock.entry("w").unwrap().byte_length, 2);
/// assert_eq!(WeightsLock::parse(&lock.to_json(), "again").unwrap().entries(), lock.entries());
/// ```
///
/// [`WeightPlan::to_lock`]: crate::WeightPlan::to_lock
/// [`WeightPlan::with_lock`]: crate::WeightPlan::with_lock
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightsLock {
    pub(crate) path: PathBuf,
    pub(crate) entries: Vec<LockEntry>,
}

/// One constant of a [`WeightsLock`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockEntry {
    /// The constant's name in the graph.
    pub name: String,
    /// Its `@weights` reference when locked (informational).
    pub reference: String,
    /// The file its bytes came from when locked, relative to the graph's folder
    /// (informational).
    pub file: String,
    /// The number of resolved bytes.
    pub byte_length: u64,
    /// The SHA-256 of the resolved bytes.
    pub sha256: [u8; 32],
}

/// Why a graph's weights do not match its lock: one problem per constant.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockProblem {
    /// The resolved bytes' SHA-256 is not the pinned one.
    Digest {
        /// The constant.
        constant: String,
        /// The file its bytes were read from.
        file: PathBuf,
        /// The digest the lock pins.
        expected: [u8; 32],
        /// The digest of the bytes read.
        found: [u8; 32],
    },
    /// The resolved byte length is not the pinned one (checked before any byte is read).
    Length {
        /// The constant.
        constant: String,
        /// The file its bytes would be read from.
        file: PathBuf,
        /// The length the lock pins.
        expected: u64,
        /// The length the graph declares now.
        found: u64,
    },
    /// A `@weights` constant of the graph has no entry in the lock.
    NotLocked {
        /// The constant.
        constant: String,
    },
    /// An entry of the lock names no `@weights` constant of the graph.
    NotInGraph {
        /// The entry's constant name.
        constant: String,
    },
}

impl LockProblem {
    /// The constant the problem is about.
    pub fn constant(&self) -> &str {
        match self {
            LockProblem::Digest { constant, .. }
            | LockProblem::Length { constant, .. }
            | LockProblem::NotLocked { constant }
            | LockProblem::NotInGraph { constant } => constant,
        }
    }
}

impl fmt::Display for LockProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockProblem::Digest {
                constant,
                file,
                expected,
                found,
            } => write!(
                f,
                "constant `{constant}` (from {}): sha256 {}, the lock pins {}",
                file.display(),
                hex(found),
                hex(expected)
            ),
            LockProblem::Length {
                constant,
                file,
                expected,
                found,
            } => write!(
                f,
                "constant `{constant}` (from {}): {found} bytes, the lock pins {expected}",
                file.display()
            ),
            LockProblem::NotLocked { constant } => {
                write!(f, "constant `{constant}` is not in the lock")
            }
            LockProblem::NotInGraph { constant } => write!(
                f,
                "the lock has constant `{constant}`, which the graph no longer has"
            ),
        }
    }
}

/// A lock attached to a plan: the pinned digest of every planned constant, the problems
/// found before reading, and the constants that share stored bytes.
#[derive(Debug)]
pub(crate) struct LockCheck {
    pub lock: WeightsLock,
    /// Per planned constant (in the plan's order): the pinned digest, if it has an entry.
    pub pinned: Vec<Option<[u8; 32]>>,
    /// Per planned constant: the other constants on the same stored bytes.
    pub peers: std::collections::HashMap<usize, Vec<usize>>,
    /// Problems found without reading a byte: entries missing or extra, lengths.
    pub before: Vec<LockProblem>,
}
