//! Reading a graph and getting it resolved in one call: graph files of either format, and
//! [`GraphLoader`] (a graph file or a graph in memory, with the sidecar read into owned
//! memory, mapped read-only, or given as bytes). The entry points that return the crate's
//! [`Error`]; everything below them returns its own error type.

// Resolve errors are cold and carry the context a message needs (see `crate::resolve`).
#![allow(clippy::result_large_err)]

use crate::error::Error;
use crate::graph::json::{parse_graph_json, skip_leading_trivia, GraphFileFormat};
use crate::graph::text::parse_webnn;
use crate::graph::GraphJson;
use crate::resolve::{
    empty_plan, find_lock, format_error, inline_resolved, plan_catalog, plan_external_weights,
    plan_sharded, requests, Access, ResolveError, WeightPlan, GRAPH_IN_MEMORY,
};
use crate::sidecar::formats::{self, SidecarFormat};
use bytes::Bytes;
use std::path::{Path, PathBuf};

/// Reads a graph file, `.webnn` text or GraphJson, detected by content
/// ([`GraphFileFormat::detect`]), not by extension.
///
/// Errors name the file: [`Error::Io`] when it cannot be read (or is not UTF-8),
/// [`Error::Parse`] for text (with line, column and the file name),
/// [`Error::Json`] for GraphJson, [`Error::UnknownGraphFormat`] for anything else.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("g.txt");
/// std::fs::write(&path, "webnn_graph \"g\" v1 { outputs { } }").unwrap();
/// let g = webnn_weights_runtime::read_graph_file(&path).unwrap();
/// assert_eq!(g.version, 1);
/// ```
pub fn read_graph_file(path: impl AsRef<Path>) -> Result<GraphJson, Error> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_graph_text(&text, path)
}

/// Reads a graph of either format from `text`, naming `path` in errors
/// (the content-detecting core of [`read_graph_file`]).
pub fn parse_graph_text(text: &str, path: &Path) -> Result<GraphJson, Error> {
    match GraphFileFormat::detect(text) {
        Some(GraphFileFormat::Text) => parse_webnn(text).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            source: e.with_file(path.display().to_string()),
        }),
        Some(GraphFileFormat::Json) => parse_graph_json(text).map_err(|source| Error::Json {
            path: path.to_path_buf(),
            source,
        }),
        None => {
            let rest = skip_leading_trivia(text);
            let found = if rest.is_empty() {
                "an empty file".to_string()
            } else {
                let start: String = rest.chars().take(16).collect();
                format!("{start:?}")
            };
            Err(Error::UnknownGraphFormat {
                path: path.to_path_buf(),
                found,
            })
        }
    }
}

/// The name in messages of weights given as bytes.
pub(crate) const WEIGHTS_IN_MEMORY: &str = "<weights in memory>";
/// The name in messages of a sharded archive's index given as bytes (shards are named
/// `<sharded index in memory>/<shard>` ).
pub(crate) const INDEX_IN_MEMORY: &str = "<sharded index in memory>/model.safetensors.index.json";
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
///   sidecar is already in memory (a sharded archive: the index as `b` and its shards with
///   [`GraphLoader::shard_bytes`]) (downloaded, unpacked, `include_bytes!`); constants are
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
    shard_bytes: Vec<(String, Bytes)>,
    #[cfg(feature = "mmap")]
    mapped: bool,
    lock: Option<PathBuf>,
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
            shard_bytes: Vec::new(),
            #[cfg(feature = "mmap")]
            mapped: false,
            lock: None,
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
    /// [`GraphLoader::manifest_bytes`] a blob (WGWT or headerless), or with
    /// [`GraphLoader::shard_bytes`] a sharded archive's index JSON. Replaces
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

    /// One shard of a sharded SafeTensors archive held in memory, under the name the
    /// index's `weight_map` gives it (e.g. `model-00001-of-00002.safetensors`).
    ///
    /// With at least one shard given, the buffer of [`GraphLoader::weights_bytes`] is
    /// the index JSON (`model.safetensors.index.json`) rather than an archive. Only the
    /// shards holding a requested tensor need to be given; a missing one is an error
    /// naming it. Each shard is validated like a single archive, and resolved constants
    /// are slices of the shard buffers. Giving the same name twice keeps the last.
    ///
    /// ```
    /// use webnn_weights_runtime::{parse_webnn, ConstInit, GraphLoader};
    /// let graph = parse_webnn(r#"webnn_graph "g" v2 {
    ///   consts { w: u8[2] @weights("layer.w"); }
    ///   nodes { y = relu(w); }
    ///   outputs { y; }
    /// }"#).unwrap();
    /// // A one-tensor SafeTensors archive, written by hand.
    /// let header = br#"{"layer.w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#;
    /// let mut shard = (header.len() as u64).to_le_bytes().to_vec();
    /// shard.extend_from_slice(header);
    /// shard.extend_from_slice(&[3, 4]);
    /// let index = r#"{"metadata":{"total_size":2},"weight_map":{"layer.w":"m-00001-of-00001.safetensors"}}"#;
    /// let resolved = GraphLoader::from_graph(graph)
    ///     .weights_bytes(index)
    ///     .shard_bytes("m-00001-of-00001.safetensors", shard)
    ///     .load()
    ///     .unwrap();
    /// let ConstInit::InlineBytes { bytes } = &resolved.consts["w"].init else { panic!() };
    /// assert_eq!(bytes[..], [3, 4]);
    /// ```
    pub fn shard_bytes(mut self, name: impl Into<String>, bytes: impl Into<Bytes>) -> GraphLoader {
        let name = name.into();
        self.shard_bytes.retain(|(n, _)| *n != name);
        self.shard_bytes.push((name, bytes.into()));
        self
    }

    /// Verifies the weights against this lock file (relative to the graph's folder unless
    /// absolute; for a graph in memory without [`GraphLoader::graph_path`], relative to the
    /// working directory) instead of the one discovery finds.
    ///
    /// Without it, a graph read from a file (or given a [`GraphLoader::graph_path`]) is
    /// verified against `<graph file name>.lock` beside it when that exists
    /// ([`WeightsLock::path_for`](crate::WeightsLock::path_for)); a graph in memory
    /// without a path only against a lock named here. Verification works in every way
    /// of loading: the resolved bytes are hashed as they are read (a mapping's pages are
    /// touched to be hashed), and a difference fails the load with
    /// [`ResolveError::LockMismatch`] naming every constant that differs.
    ///
    /// ```
    /// use webnn_weights_runtime::{plan_external_weights, read_graph_file, GraphLoader};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("g.webnn");
    /// std::fs::write(&path, r#"webnn_graph "g" v2 {
    ///   consts { w: u8[2] @weights("w"); }
    ///   nodes { y = relu(w); }
    ///   outputs { y; }
    /// }"#).unwrap();
    /// std::fs::write(dir.path().join("g.weights"), [5, 6]).unwrap();
    /// std::fs::write(dir.path().join("g.manifest.json"),
    ///     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#).unwrap();
    /// // Pin today's weights in a lock of our own name.
    /// let plan = plan_external_weights(&read_graph_file(&path).unwrap(), &path, None, None).unwrap();
    /// std::fs::write(dir.path().join("pinned.lock"), plan.to_lock().unwrap().to_json()).unwrap();
    /// let loader = GraphLoader::new(&path).lock("pinned.lock");
    /// assert!(loader.load().is_ok());
    /// std::fs::write(dir.path().join("g.weights"), [5, 7]).unwrap(); // replaced
    /// let err = loader.load().unwrap_err();
    /// assert!(err.to_string().contains("do not match the lock"));
    /// ```
    pub fn lock(mut self, path: impl AsRef<Path>) -> GraphLoader {
        self.lock = Some(path.as_ref().to_path_buf());
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
    ///
    /// **On wasm32** (WebAssembly has no `mmap`) nothing is mapped: a load that has a
    /// sidecar file returns [`ResolveError::MappingUnsupported`](crate::ResolveError::MappingUnsupported)
    /// once the plan has checked every rule; use the owned loader or
    /// [`GraphLoader::weights_bytes`] there.
    #[cfg(feature = "mmap")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
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
        // The structural checks of `webnn-weights validate`, after the format's rules and
        // before any tensor byte is read.
        graph.validate().map_err(|source| Error::Validation {
            path: graph_path.clone(),
            source,
        })?;
        let bytes = plan.materialize_with(&access)?;
        inline_resolved(&mut graph, bytes);
        Ok(graph)
    }

    /// The plan, with the lock that applies attached, and how to read it.
    fn plan(
        &self,
        graph: &GraphJson,
        graph_path: &Path,
    ) -> Result<(WeightPlan, Access), ResolveError> {
        let (plan, access) = self.plan_sidecar(graph, graph_path)?;
        let discover = !matches!(self.graph, GraphSource::Memory(_, None));
        let lock = find_lock(graph_path, self.lock.as_deref(), discover, &mut Vec::new())?;
        Ok((
            match lock {
                Some(lock) => plan.with_lock(lock),
                None => plan,
            },
            access,
        ))
    }

    fn plan_sidecar(
        &self,
        graph: &GraphJson,
        graph_path: &Path,
    ) -> Result<(WeightPlan, Access), ResolveError> {
        if let Some(weights) = &self.weights_bytes {
            if !self.shard_bytes.is_empty() {
                return plan_sharded_in_memory(graph, graph_path, weights, &self.shard_bytes);
            }
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
        #[cfg(feature = "mmap")]
        let access = if self.mapped {
            Access::Map
        } else {
            Access::Read
        };
        #[cfg(not(feature = "mmap"))]
        let access = Access::Read;
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

/// Plans `graph` against a sharded archive held in memory: `index` is the index JSON,
/// `shards` the shard buffers by the names the index gives them.
fn plan_sharded_in_memory(
    graph: &GraphJson,
    graph_path: &Path,
    index: &Bytes,
    shards: &[(String, Bytes)],
) -> Result<(WeightPlan, Access), ResolveError> {
    let requests = requests(graph, graph_path)?;
    if requests.is_empty() {
        return Ok((empty_plan(graph_path, Vec::new()), Access::Read));
    }
    let index = formats::sharded::ShardIndex::parse(index, Path::new(INDEX_IN_MEMORY))
        .map_err(|e| format_error(graph_path, e))?;
    let mut buffers = Vec::new();
    let plan = plan_sharded(graph_path, &index, &requests, Vec::new(), |wanted| {
        index.open_with(wanted, |shard| {
            let given = shards
                .iter()
                .find(|(name, _)| name == shard.entry())
                .map(|(_, b)| b.clone());
            let Some(bytes) = given else {
                return Err(formats::FormatError::MissingShard {
                    index: index.path().to_path_buf(),
                    tensor: index
                        .entries()
                        .find(|(_, s)| index.shards().get(*s) == Some(shard))
                        .map(|(n, _)| n.to_string())
                        .unwrap_or_default(),
                    shard: shard.path().to_path_buf(),
                    why: format!(
                        "was not given (GraphLoader::shard_bytes(\"{}\", ..))",
                        shard.entry()
                    ),
                });
            };
            let catalog = formats::safetensors::read_bytes(&bytes, shard.path())?;
            buffers.push(bytes);
            Ok(catalog)
        })
    })?;
    // `open_with` reads the wanted shards in the catalog's file order.
    Ok((plan, Access::Memory(buffers)))
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
#[cfg(feature = "mmap")]
#[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
pub fn load_graph_mapped(path: impl AsRef<Path>) -> Result<GraphJson, Error> {
    GraphLoader::new(path).mapped().load()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphJsonError;

    #[test]
    fn read_errors_name_the_file() {
        let dir = webnn_weights_test_support::tempdir().unwrap();
        let text = dir.path().join("bad.webnn");
        std::fs::write(&text, "webnn_graph \"g\" v3 {}").unwrap();
        let err = read_graph_file(&text).unwrap_err();
        let err = crate::Report::new(&err).to_string();
        let shown = text.display().to_string();
        assert!(
            err.starts_with(&format!(
                "{shown}: invalid .webnn text\ncaused by: {shown}:1:18: unsupported version 3"
            )),
            "{err}"
        );

        let json = dir.path().join("bad.json");
        std::fs::write(&json, "{\"format\":\"webnn-graph-json\"}").unwrap();
        let err = read_graph_file(&json).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Json {
                    source: GraphJsonError::Json(_),
                    ..
                }
            ),
            "{err:?}"
        );
        let err = crate::Report::new(&err).to_string();
        assert!(err.starts_with(&json.display().to_string()), "{err}");
        assert!(err.contains("missing field `version`"), "{err}");

        let other = dir.path().join("x.webnn");
        std::fs::write(&other, "# hi\n  graph {}").unwrap();
        let err = read_graph_file(&other).unwrap_err().to_string();
        assert!(err.contains("x.webnn"), "{err}");
        assert!(err.contains("\"graph {}\""), "{err}");

        let missing = dir.path().join("missing.webnn");
        let err = read_graph_file(&missing).unwrap_err();
        let err = crate::Report::new(&err).to_string();
        assert!(
            err.starts_with(&format!("cannot read {}\ncaused by: ", missing.display())),
            "{err}"
        );
    }
}
