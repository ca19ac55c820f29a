//! Getting a resolved graph in one call: from a graph file or a graph in memory, with the
//! sidecar read into owned memory, mapped read-only, or given as bytes.

use super::error::ResolveError;
use super::formats::{self, SidecarFormat};
use super::materialize::Access;
use super::model::WeightPlan;
use super::plan::{empty_plan, format_error, plan_catalog, plan_external_weights, requests};
use crate::error::Error;
use crate::graph::{ConstInit, GraphJson};
use bytes::Bytes;
use std::path::{Path, PathBuf};

/// The name in messages of a graph given in memory without a path.
pub(crate) const GRAPH_IN_MEMORY: &str = "<graph in memory>";
/// The name in messages of weights given as bytes.
pub(crate) const WEIGHTS_IN_MEMORY: &str = "<weights in memory>";
/// The name in messages of a manifest given as bytes.
pub(crate) const MANIFEST_IN_MEMORY: &str = "<manifest in memory>";

/// Loads a graph and resolves its `@weights` constants, in one of four ways.
///
/// - `GraphLoader::new(path).load()` ([`load_graph`]): reads each planned range into
///   owned memory (positioned reads; nothing else of the sidecar is read).
/// - `GraphLoader::new(path).mapped().load()` ([`load_graph_mapped`]): maps the sidecar
///   read-only once; constants are views into the mapping (BF16-widened ones are owned).
///   See [`GraphLoader::mapped`] for the contract.
/// - `GraphLoader::from_graph(graph).weights_bytes(b)[.manifest_bytes(m)].load()`: the
///   sidecar is already in memory (downloaded, unpacked, `include_bytes!`); constants are
///   slices of `b`. `GraphLoader::new(path).weights_bytes(b)` reads the graph from a file
///   and the weights from memory.
/// - An embedded graph: [`EmbeddedGraph::to_graph_json`](crate::EmbeddedGraph::to_graph_json).
///
/// Every rule of the format applies in every way (discovery only where there is a
/// folder to search). Explicit paths are relative to the graph file's folder unless
/// absolute, as in the format. Constants resolving to the same stored bytes with the same
/// conversion share one buffer; cloning the result copies no weight byte.
///
/// ```
/// use webnn_weights_runtime::{ConstInit, GraphLoader};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("g.webnn"), r#"webnn_graph "g" v2 {
///   consts { w: u8[2] @weights("w"); }
///   nodes { y = relu(w); }
///   outputs { y; }
/// }"#).unwrap();
/// std::fs::write(dir.path().join("data.bin"), [0, 5, 6]).unwrap();
/// std::fs::write(dir.path().join("data.json"),
///     r#"{"tensors":{"w":{"byteOffset":1,"byteLength":2}}}"#).unwrap();
/// let loader = GraphLoader::new(dir.path().join("g.webnn"))
///     .weights("data.bin")
///     .manifest("data.json");
/// let owned = loader.load().unwrap();
/// let mapped = loader.clone().mapped().load().unwrap();
/// assert_eq!(owned, mapped);
/// let ConstInit::InlineBytes { bytes } = &owned.consts["w"].init else { panic!() };
/// assert_eq!(bytes[..], [5, 6]);
/// ```
#[derive(Debug, Clone)]
pub struct GraphLoader {
    graph: GraphSource,
    weights: Option<PathBuf>,
    manifest: Option<PathBuf>,
    weights_bytes: Option<Bytes>,
    manifest_bytes: Option<Bytes>,
    mapped: bool,
}

#[derive(Debug, Clone)]
enum GraphSource {
    File(PathBuf),
    /// A graph in memory, and optionally the file it stands for.
    Memory(Box<GraphJson>, Option<PathBuf>),
}

impl GraphLoader {
    /// A loader for the graph file at `path` (`.webnn` text or GraphJson, told apart by
    /// content), with sidecar discovery beside it.
    pub fn new(path: impl AsRef<Path>) -> GraphLoader {
        GraphLoader::with(GraphSource::File(path.as_ref().to_path_buf()))
    }

    /// A loader for a graph already in memory. Its weights come from
    /// [`GraphLoader::weights_bytes`] (there is no folder to discover a sidecar in), or
    /// from explicit [`GraphLoader::weights`] paths (relative to the working directory).
    /// Messages name the graph `<graph in memory>`.
    ///
    /// ```
    /// use webnn_weights_runtime::{parse_webnn, ConstInit, GraphLoader};
    /// let graph = parse_webnn(r#"webnn_graph "g" v2 {
    ///   consts { w: u8[2] @weights("w"); }
    ///   nodes { y = relu(w); }
    ///   outputs { y; }
    /// }"#).unwrap();
    /// let blob: &'static [u8] = &[9, 5, 6];
    /// let resolved = GraphLoader::from_graph(graph.clone())
    ///     .weights_bytes(blob)
    ///     .manifest_bytes(r#"{"tensors":{"w":{"byteOffset":1,"byteLength":2}}}"#)
    ///     .load()
    ///     .unwrap();
    /// let ConstInit::InlineBytes { bytes } = &resolved.consts["w"].init else { panic!() };
    /// assert_eq!(bytes.as_ptr(), blob[1..].as_ptr()); // a slice of the buffer, no copy
    /// // Without weights there is nothing to resolve from: a clear error.
    /// let err = GraphLoader::from_graph(graph).load().unwrap_err();
    /// assert!(err.to_string().contains("no weights were given"));
    /// ```
    pub fn from_graph(graph: GraphJson) -> GraphLoader {
        GraphLoader::with(GraphSource::Memory(Box::new(graph), None))
    }

    /// For a graph given with [`GraphLoader::from_graph`]: the file it stands for.
    /// Discovery then looks beside it, explicit paths are relative to its folder, and
    /// messages name it, exactly as for `GraphLoader::new(path)` (without reading it).
    /// No effect on a loader made with [`GraphLoader::new`].
    pub fn graph_path(mut self, path: impl AsRef<Path>) -> GraphLoader {
        if let GraphSource::Memory(_, at) = &mut self.graph {
            *at = Some(path.as_ref().to_path_buf());
        }
        self
    }

    fn with(graph: GraphSource) -> GraphLoader {
        GraphLoader {
            graph,
            weights: None,
            manifest: None,
            weights_bytes: None,
            manifest_bytes: None,
            mapped: false,
        }
    }

    /// Uses this weights file (SafeTensors archive or blob, by its extension) instead of
    /// discovery.
    pub fn weights(mut self, path: impl AsRef<Path>) -> GraphLoader {
        self.weights = Some(path.as_ref().to_path_buf());
        self
    }

    /// Uses this manifest for a blob (ignored for SafeTensors archives).
    pub fn manifest(mut self, path: impl AsRef<Path>) -> GraphLoader {
        self.manifest = Some(path.as_ref().to_path_buf());
        self
    }

    /// Takes the sidecar from memory: a SafeTensors archive, or with
    /// [`GraphLoader::manifest_bytes`] a blob (WGWT or headerless). Replaces
    /// [`GraphLoader::weights`] and [`GraphLoader::manifest`] paths. Resolved constants
    /// are slices of this buffer (BF16-widened ones are owned); pass a `Bytes`, a
    /// `Vec<u8>` or `'static` data.
    pub fn weights_bytes(mut self, bytes: impl Into<Bytes>) -> GraphLoader {
        self.weights_bytes = Some(bytes.into());
        self
    }

    /// The manifest JSON of a blob given with [`GraphLoader::weights_bytes`].
    pub fn manifest_bytes(mut self, json: impl Into<Bytes>) -> GraphLoader {
        self.manifest_bytes = Some(json.into());
        self
    }

    /// Maps the sidecar read-only instead of reading it: constants that need no
    /// conversion are views into the mapping, so loading reads no tensor page and the
    /// resolved graph costs little more memory than the graph itself. BF16 constants
    /// widened to F32 are converted into owned memory.
    ///
    /// **The mapping contract**: the sidecar must not be truncated or rewritten while the
    /// resolved graph (or any clone of a constant's bytes) is alive. Its size and
    /// modification time are compared with the plan right after mapping, so a file that
    /// changed before is a `Changed` error; after that, a truncated file makes reads of the
    /// lost pages fault (`SIGBUS` on Unix, the process dies) and a file rewritten in place
    /// shows its new bytes. Installing a new file by renaming it into place is safe (the
    /// mapping keeps the old file). Use the owned loader for files that may change.
    /// Has no effect with [`GraphLoader::weights_bytes`].
    pub fn mapped(mut self) -> GraphLoader {
        self.mapped = true;
        self
    }

    /// Reads the graph and resolves its external weights; the sidecar is planned and
    /// checked completely before any tensor byte is used.
    pub fn load(&self) -> Result<GraphJson, Error> {
        let (mut graph, graph_path) = match &self.graph {
            GraphSource::File(path) => (crate::read_graph_file(path)?, path.clone()),
            GraphSource::Memory(graph, path) => (
                (**graph).clone(),
                path.clone()
                    .unwrap_or_else(|| PathBuf::from(GRAPH_IN_MEMORY)),
            ),
        };
        let (plan, access) = self.plan(&graph, &graph_path)?;
        let mut bytes = plan.materialize_with(&access)?;
        for (name, decl) in graph.consts.iter_mut() {
            if let ConstInit::Weights { .. } = decl.init {
                // Every Weights constant is in the plan, so in `bytes`.
                if let Some(b) = bytes.remove(name) {
                    decl.init = ConstInit::InlineBytes { bytes: b };
                }
            }
        }
        Ok(graph)
    }

    fn plan(
        &self,
        graph: &GraphJson,
        graph_path: &Path,
    ) -> Result<(WeightPlan, Access), ResolveError> {
        if let Some(weights) = &self.weights_bytes {
            return plan_in_memory(graph, graph_path, weights, self.manifest_bytes.as_ref());
        }
        if let GraphSource::Memory(_, None) = self.graph {
            if self.weights.is_none() {
                // No folder to discover a sidecar in.
                let requests = requests(graph, graph_path)?;
                return match requests.first() {
                    None => Ok((empty_plan(graph_path, Vec::new()), Access::Read)),
                    Some(first) => Err(ResolveError::NoWeightsGiven {
                        constant: first.name.to_string(),
                        reference: first.reference.to_string(),
                    }),
                };
            }
        }
        // A graph in memory takes explicit paths relative to the working directory.
        let plan = plan_external_weights(
            graph,
            graph_path,
            self.weights.as_deref(),
            self.manifest.as_deref(),
        )?;
        let access = if self.mapped {
            Access::Map
        } else {
            Access::Read
        };
        Ok((plan, access))
    }
}

/// Plans `graph` against a sidecar held in memory (an archive, or a blob with its
/// manifest): every rule but discovery.
fn plan_in_memory(
    graph: &GraphJson,
    graph_path: &Path,
    weights: &Bytes,
    manifest: Option<&Bytes>,
) -> Result<(WeightPlan, Access), ResolveError> {
    let requests = requests(graph, graph_path)?;
    if requests.is_empty() {
        return Ok((empty_plan(graph_path, Vec::new()), Access::Read));
    }
    let label = Path::new(WEIGHTS_IN_MEMORY);
    let catalog = match manifest {
        None => formats::safetensors::read_bytes(weights, label),
        Some(json) => formats::blob::read_bytes(
            label,
            weights.len() as u64,
            Path::new(MANIFEST_IN_MEMORY),
            json,
        ),
    }
    .map_err(|e| format_error(graph_path, e))?;
    debug_assert!(matches!(
        (catalog.format(), manifest.is_some()),
        (SidecarFormat::SafeTensors, false) | (SidecarFormat::Blob, true)
    ));
    let plan = plan_catalog(graph_path, label, catalog, &requests, Vec::new())?;
    Ok((plan, Access::Memory(vec![weights.clone()])))
}

/// Reads a graph file and resolves its `@weights` constants by discovery into owned
/// memory: `GraphLoader::new(path).load()`.
pub fn load_graph(path: impl AsRef<Path>) -> Result<GraphJson, Error> {
    GraphLoader::new(path).load()
}

/// Reads a graph file and resolves its `@weights` constants by discovery, mapping the
/// sidecar read-only: `GraphLoader::new(path).mapped().load()`. See
/// [`GraphLoader::mapped`] for the mapping contract.
///
/// ```
/// use webnn_weights_runtime::{load_graph, load_graph_mapped};
/// let dir = tempfile::tempdir().unwrap();
/// let graph = dir.path().join("model.webnn");
/// std::fs::write(&graph, r#"webnn_graph "g" v2 {
///   consts { w: u8[2] @weights("w"); }
///   nodes { y = relu(w); }
///   outputs { y; }
/// }"#).unwrap();
/// std::fs::write(dir.path().join("model.weights"), [7, 8]).unwrap();
/// std::fs::write(dir.path().join("model.manifest.json"),
///     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#).unwrap();
/// assert_eq!(load_graph_mapped(&graph).unwrap(), load_graph(&graph).unwrap());
/// ```
pub fn load_graph_mapped(path: impl AsRef<Path>) -> Result<GraphJson, Error> {
    GraphLoader::new(path).mapped().load()
}
