//! The typed errors of resolving external weights.

use super::model::LockProblem;
use crate::graph::dtype::DataType;
use crate::sidecar::formats::safetensors::{
    PACKED_4BIT_METADATA_KEY, PACKED_4BIT_METADATA_VERSION,
};
use crate::sidecar::formats::FormatError;
use std::path::PathBuf;

/// How messages name a graph given in memory without a path.
pub(crate) const GRAPH_IN_MEMORY: &str = "<graph in memory>";

/// Why a graph's external weights could not be resolved.
///
/// Every message names the graph file; those about one constant name the constant, its
/// `@weights` reference and the sidecar, and say what was expected and what was found.
/// The fix, where there is an obvious one, is data: [`ResolveError::fix`] (not part of
/// the message, so that callers can show it on its own line).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// No sidecar was given and discovery found none.
    #[error(
        "graph {}: constant `{constant}` uses @weights(\"{reference}\") but no weights file was found; looked for {}, then for a sharded archive's index {}",
        graph.display(), list_paths(candidates), list_paths(index_candidates)
    )]
    NoSidecar {
        /// The graph file.
        graph: PathBuf,
        /// The first constant (by name) that needs a sidecar.
        constant: String,
        /// Its reference.
        reference: String,
        /// The format's discovery candidates, in order.
        candidates: Vec<PathBuf>,
        /// The sharded-index candidates examined after them, in order.
        index_candidates: Vec<PathBuf>,
    },
    /// A graph given in memory uses `@weights`, but no weights were given (there is no
    /// folder to discover a sidecar in).
    #[error(
        "{}: constant `{constant}` uses @weights(\"{reference}\") but no weights were given (a graph in memory has no folder to discover a sidecar in)",
        GRAPH_IN_MEMORY
    )]
    NoWeightsGiven {
        /// The first constant (by name) that needs a sidecar.
        constant: String,
        /// Its reference.
        reference: String,
    },
    /// An explicitly given weights or manifest path does not exist.
    #[error(
        "graph {}: the {role} {} does not exist (explicit paths are relative to the graph's folder)",
        graph.display(), path.display()
    )]
    NotFound {
        /// The graph file.
        graph: PathBuf,
        /// `weights file` or `manifest`.
        role: &'static str,
        /// The path as resolved against the graph's folder.
        path: PathBuf,
    },
    /// A path where a file is expected names a folder (or another non-file).
    #[error(
        "graph {}: the {role} {} is not a regular file (found a folder or special file)",
        graph.display(), path.display()
    )]
    NotAFile {
        /// The graph file.
        graph: PathBuf,
        /// `weights file` or `manifest`.
        role: &'static str,
        /// The offending path.
        path: PathBuf,
    },
    /// A `.weights` blob was chosen but no manifest was given or found.
    #[error(
        "graph {}: weights blob {} needs a manifest, but none was given and none of {} exists",
        graph.display(), sidecar.display(), list_paths(candidates)
    )]
    NoManifest {
        /// The graph file.
        graph: PathBuf,
        /// The blob.
        sidecar: PathBuf,
        /// The manifest candidates, in order.
        candidates: Vec<PathBuf>,
    },
    /// A file could not be opened, inspected or read.
    #[error("graph {}: cannot read {}", graph.display(), path.display())]
    Io {
        /// The graph file.
        graph: PathBuf,
        /// The file being read.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// No stored tensor matches a reference, exactly or after normalization.
    #[error(
        "graph {}: constant `{constant}`: @weights(\"{reference}\") is not in {}: expected a stored tensor named `{reference}` (or one that normalizes to it, `::` -> `__` and `.` -> `_`), found {}",
        graph.display(), sidecar.display(), missing_text(available, *available_total)
    )]
    MissingTensor {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// The sidecar (the manifest, for blobs).
        sidecar: PathBuf,
        /// The stored names nearest to the reference (at most 5), nearest first: by edit
        /// distance over raw and over normalized names.
        available: Vec<String>,
        /// How many tensors the sidecar holds.
        available_total: usize,
    },
    /// More than one stored name normalizes to the reference.
    #[error(
        "graph {}: constant `{constant}`: @weights(\"{reference}\") is ambiguous in {}: expected one stored tensor whose normalized name is `{reference}`, found {}: {}",
        graph.display(), sidecar.display(), candidates.len(), list_names(candidates, candidates.len())
    )]
    AmbiguousTensor {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// The sidecar (the manifest, for blobs).
        sidecar: PathBuf,
        /// Every stored name that normalizes to the reference, sorted.
        candidates: Vec<String>,
    },
    /// The stored SafeTensors type cannot satisfy the declared type.
    #[error(
        "graph {}: constant `{constant}` (@weights(\"{reference}\"), stored as `{stored_name}` in {}): declared {declared}, so expected storage {expected}, found {found}",
        graph.display(), sidecar.display()
    )]
    DataTypeMismatch {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// The stored tensor's name.
        stored_name: String,
        /// The archive.
        sidecar: PathBuf,
        /// The declared logical type.
        declared: DataType,
        /// The accepted storage types.
        expected: String,
        /// The stored type.
        found: String,
    },
    /// The stored shape differs from the one required.
    #[error(
        "graph {}: constant `{constant}` (@weights(\"{reference}\"), stored as `{stored_name}` in {}): expected shape {} {why}, found {}",
        graph.display(), sidecar.display(), shape_text(expected), shape_text(found)
    )]
    ShapeMismatch {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// The stored tensor's name.
        stored_name: String,
        /// The archive.
        sidecar: PathBuf,
        /// The required stored shape.
        expected: Vec<u64>,
        /// The stored shape.
        found: Vec<u64>,
        /// Why that shape is required.
        why: String,
        /// The declared type (what the fix's declaration names).
        declared: DataType,
    },
    /// A 4-bit declaration is served by an archive without a usable packed-4-bit marker.
    #[error(
        "graph {}: constant `{constant}` (@weights(\"{reference}\")) is {declared}, so archive {} must carry the metadata entry \"{}\": \"{}\", found {}",
        graph.display(), sidecar.display(), PACKED_4BIT_METADATA_KEY, PACKED_4BIT_METADATA_VERSION,
        match found { Some(v) => format!("\"{v}\" (unknown version)"), None => "no such entry".to_string() }
    )]
    PackedMarker {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// The archive.
        sidecar: PathBuf,
        /// `int4` or `uint4`.
        declared: DataType,
        /// The marker's value, when present.
        found: Option<String>,
    },
    /// The declaration's byte size does not fit 64 bits (or this platform's memory).
    #[error(
        "graph {}: constant `{constant}`: declared {data_type} {} has a byte size that overflows{}",
        graph.display(), shape_text_u32(shape),
        match reference { Some(r) => format!(" (@weights(\"{r}\"))"), None => String::new() }
    )]
    SizeOverflow {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference, for external constants.
        reference: Option<String>,
        /// Declared type.
        data_type: DataType,
        /// Declared shape.
        shape: Vec<u32>,
    },
    /// A manifest range does not lie within the blob.
    #[error(
        "graph {}: constant `{constant}` (@weights(\"{reference}\"), entry `{stored_name}` of manifest {}): expected a byte range within {} ({file_len} bytes), found byteOffset {offset} + byteLength {length} = {}",
        graph.display(), manifest.display(), sidecar.display(),
        match offset.checked_add(*length) { Some(end) => end.to_string(), None => "more than 2^64".to_string() }
    )]
    RangeOutOfBounds {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// The manifest entry's name.
        stored_name: String,
        /// The blob.
        sidecar: PathBuf,
        /// The manifest.
        manifest: PathBuf,
        /// byteOffset.
        offset: u64,
        /// byteLength.
        length: u64,
        /// The blob's size.
        file_len: u64,
    },
    /// The stored byte count differs from what the declaration needs.
    #[error(
        "graph {}: constant `{constant}` (@weights(\"{reference}\"), stored as `{stored_name}` in {}): declared {data_type} {} needs {expected} bytes, found {found}",
        graph.display(), sidecar.display(), shape_text_u32(shape)
    )]
    LengthMismatch {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// The stored tensor's name.
        stored_name: String,
        /// The sidecar (the manifest, for blobs).
        sidecar: PathBuf,
        /// Declared type.
        data_type: DataType,
        /// Declared shape.
        shape: Vec<u32>,
        /// Bytes the declaration needs.
        expected: u64,
        /// Bytes stored.
        found: u64,
    },
    /// An inline constant's bytes disagree with its declaration.
    #[error(
        "graph {}: inline constant `{constant}`: declared {data_type} {} needs {expected} bytes, found {found}",
        graph.display(), shape_text_u32(shape)
    )]
    InlineLength {
        /// The graph file.
        graph: PathBuf,
        /// The constant.
        constant: String,
        /// Declared type.
        data_type: DataType,
        /// Declared shape.
        shape: Vec<u32>,
        /// Bytes the declaration needs.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The sidecar's size or modification time differs from when it was planned, or it
    /// ended before a planned range.
    #[error(
        "sidecar {} changed since it was planned: expected {expected}, found {found}",
        path.display()
    )]
    Changed {
        /// The sidecar.
        path: PathBuf,
        /// What the plan recorded.
        expected: String,
        /// What the file has now.
        found: String,
    },
    /// A mapped load ([`GraphLoader::mapped`](crate::GraphLoader::mapped),
    /// [`load_graph_mapped`](crate::load_graph_mapped),
    /// [`WeightPlan::materialize_mapped`](crate::WeightPlan::materialize_mapped)) on a
    /// target that cannot map files: wasm32 (WebAssembly's linear memory has no `mmap`).
    /// Returned when the first sidecar file would be mapped, after the plan checked every
    /// rule. The fix: the owned loader, or the bytes in memory.
    #[error(
        "graph {}: cannot map {}: memory mapping is not available on {target} (no mmap in WebAssembly)",
        graph.display(), path.display()
    )]
    MappingUnsupported {
        /// The graph file.
        graph: PathBuf,
        /// The sidecar file that would have been mapped.
        path: PathBuf,
        /// The target (`wasm32`).
        target: &'static str,
    },
    /// A planned constant was passed to a plan that has no sidecar or does not contain it.
    #[error("constant `{constant}` does not belong to this weight plan (of graph {})", graph.display())]
    NotInPlan {
        /// The graph file of the plan.
        graph: PathBuf,
        /// The constant passed.
        constant: String,
    },
    /// A sidecar's reader failed: the file cannot be read, an archive's header, a manifest
    /// or a sharded index is invalid, ... (the source says what, naming the file).
    #[error("graph {}: the sidecar cannot be used", graph.display())]
    Format {
        /// The graph file.
        graph: PathBuf,
        /// What the format reader found.
        #[source]
        source: FormatError,
    },
    /// Several constants cannot be resolved: every one of them, in the graph's order of
    /// constants (by name), each with its own message and fix.
    #[error(
        "graph {}: {total} constants cannot be resolved:{}{}",
        graph.display(),
        errors.iter().map(|e| format!("\n  - {e}")).collect::<String>(),
        match total - errors.len() { 0 => String::new(), more => format!("\n  … and {more} more") }
    )]
    Several {
        /// The graph file.
        graph: PathBuf,
        /// The first errors found (at most 20), one per constant.
        errors: Vec<ResolveError>,
        /// How many there are in all.
        total: usize,
    },
    /// The weights lock cannot be read.
    #[error("weights lock {} cannot be read", lock.display())]
    LockUnreadable {
        /// The lock file.
        lock: PathBuf,
        /// The read error.
        #[source]
        source: std::io::Error,
    },
    /// The weights lock is not a valid lock file.
    #[error("weights lock {} is not a valid lock: {why}", lock.display())]
    LockInvalid {
        /// The lock file.
        lock: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The graph's weights do not match its lock: every problem, by constant name.
    #[error(
        "graph {}: the weights do not match the lock {} ({} problem{}):{}",
        graph.display(),
        lock.display(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
        problems.iter().map(|p| format!("\n  - {p}")).collect::<String>()
    )]
    LockMismatch {
        /// The graph file.
        graph: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// Every problem found, sorted by constant name.
        problems: Vec<LockProblem>,
    },
    /// Writing resolved bytes to the caller's writer failed.
    #[error("constant `{constant}`: cannot copy its bytes to the output")]
    Write {
        /// The constant.
        constant: String,
        /// The writer's error.
        #[source]
        source: std::io::Error,
    },
}

pub(crate) fn list_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn missing_text(nearest: &[String], total: usize) -> String {
    match total {
        0 => "no tensors at all".to_string(),
        _ => format!(
            "no such name among {total} stored tensor{}; the nearest: {}",
            if total == 1 { "" } else { "s" },
            list_names(nearest, nearest.len())
        ),
    }
}

fn list_names(names: &[String], total: usize) -> String {
    if total == 0 {
        return "no tensors at all".to_string();
    }
    let mut text = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if total > names.len() {
        text.push_str(&format!(" and {} more", total - names.len()));
    }
    text
}

/// The fix of a [`ResolveError::ShapeMismatch`]: declare the stored shape or store the
/// expected one (for 4-bit types, store the packed bytes as one dimension); when both hold
/// as many elements, the data may be transposed or need a reshape.
fn shape_fix(declared: DataType, expected: &[u64], found: &[u64]) -> String {
    if declared.is_packed_4bit() {
        return format!(
            "store the {declared} tensor packed, as U8 of shape {} (write_external_weights_safetensors does), or correct the declaration",
            shape_text(expected)
        );
    }
    let mut fix = format!(
        "declare `{}{}` in the graph, or store the tensor with shape {}",
        declared.text_name(),
        shape_text(found),
        shape_text(expected)
    );
    let elements = |shape: &[u64]| shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
    if let (Some(n), Some(m)) = (elements(expected), elements(found)) {
        if n == m {
            fix.push_str(&format!(
                " (both hold {n} element{}: the data may be transposed or need a reshape)",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    fix
}

pub(crate) fn shape_text(shape: &[u64]) -> String {
    format!("{:?}", shape)
}

pub(crate) fn shape_text_u32(shape: &[u32]) -> String {
    format!("{:?}", shape)
}

impl ResolveError {
    /// The constant an error is about, where it is about one.
    pub(crate) fn constant(&self) -> Option<&str> {
        match self {
            ResolveError::NoSidecar { constant, .. }
            | ResolveError::NoWeightsGiven { constant, .. }
            | ResolveError::MissingTensor { constant, .. }
            | ResolveError::AmbiguousTensor { constant, .. }
            | ResolveError::DataTypeMismatch { constant, .. }
            | ResolveError::ShapeMismatch { constant, .. }
            | ResolveError::PackedMarker { constant, .. }
            | ResolveError::SizeOverflow { constant, .. }
            | ResolveError::RangeOutOfBounds { constant, .. }
            | ResolveError::LengthMismatch { constant, .. }
            | ResolveError::InlineLength { constant, .. }
            | ResolveError::NotInPlan { constant, .. }
            | ResolveError::Write { constant, .. } => Some(constant),
            _ => None,
        }
    }

    /// How to fix the input, where there is an obvious way (`None` otherwise).
    ///
    /// ```
    /// use webnn_weights_runtime::{plan_external_weights, ConstDecl, ConstInit, DataType, GraphJson};
    /// let mut graph = GraphJson::new(None);
    /// graph.consts.insert("w".into(), ConstDecl {
    ///     data_type: DataType::Uint8, shape: vec![1],
    ///     init: ConstInit::Weights { r#ref: "w".into() },
    /// });
    /// let dir = tempfile::tempdir().unwrap();
    /// let err = plan_external_weights(&graph, &dir.path().join("g.webnn"), None, None).unwrap_err();
    /// assert!(!err.to_string().contains("fix"));
    /// assert!(err.fix().unwrap().contains("explicit weights path"));
    /// ```
    pub fn fix(&self) -> Option<String> {
        let fix = match self {
            ResolveError::NoSidecar { .. } => {
                "put one of these files next to the graph or pass an explicit weights path"
            }
            ResolveError::NoWeightsGiven { .. } => {
                "pass the sidecar with GraphLoader::weights_bytes (and manifest_bytes for a blob) or weights(path)"
            }
            ResolveError::NotFound { .. } => "correct the path",
            ResolveError::NotAFile { .. } => "point at the file itself",
            ResolveError::NoManifest { .. } => {
                "pass an explicit manifest path or create one of these files"
            }
            ResolveError::MissingTensor {
                reference,
                available,
                ..
            } => {
                return Some(match available.first() {
                    Some(near) if crate::graph::near::is_close(reference, near) => format!(
                        "did you mean `{near}`? correct the reference or add the tensor to the sidecar"
                    ),
                    _ => "correct the reference or add the tensor to the sidecar".to_string(),
                })
            }
            ResolveError::AmbiguousTensor { .. } => "reference one of them by its exact name",
            ResolveError::DataTypeMismatch { expected, .. } => {
                return Some(format!(
                    "store the tensor as {expected} or change the declaration"
                ))
            }
            ResolveError::ShapeMismatch {
                expected,
                found,
                declared,
                ..
            } => return Some(shape_fix(*declared, expected, found)),
            ResolveError::PackedMarker { .. } => {
                "write the archive with write_external_weights_safetensors or add that metadata entry"
            }
            ResolveError::RangeOutOfBounds { .. } => "regenerate the manifest for this blob",
            ResolveError::LengthMismatch { .. } => "make the declaration match the stored tensor",
            ResolveError::InlineLength { .. } => "correct the declaration or the bytes",
            ResolveError::Changed { .. } => {
                "do not modify sidecars while they are resolved (write a new file and rename it into place), then resolve again"
            }
            ResolveError::MappingUnsupported { .. } => {
                "load it owned (`load_graph`, `GraphLoader` without `.mapped()`, `WeightPlan::materialize`) or from memory (`GraphLoader::from_graph(..).weights_bytes(..)`)"
            }
            ResolveError::LockUnreadable { .. } | ResolveError::LockInvalid { .. } => {
                "correct the lock file, or write it anew with `webnn-weights lock GRAPH`"
            }
            ResolveError::LockMismatch { graph, .. } => {
                return Some(format!(
                    "review the new weights, then renew the lock with `webnn-weights lock {}`",
                    graph.display()
                ))
            }
            ResolveError::Format { source, .. } => return source.fix(),
            ResolveError::Several { errors, .. } => {
                let fixes: Vec<String> = errors
                    .iter()
                    .filter_map(|e| Some(format!("`{}`: {}", e.constant()?, e.fix()?)))
                    .collect();
                return (!fixes.is_empty()).then(|| fixes.join("; "));
            }
            _ => return None,
        };
        Some(fix.to_string())
    }
}
