//! Reading a graph file and resolving its external weights in one call.

use crate::error::Error;
use crate::graph::GraphJson;
use std::path::{Path, PathBuf};

/// Loads a graph file (`.webnn` text or GraphJson, told apart by content) and resolves
/// its `@weights` constants, with optional explicit sidecar paths.
///
/// Explicit paths are relative to the graph file's folder unless absolute, as in the
/// format. [`load_graph`] is `GraphLoader::new(path).load()`.
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
/// let graph = GraphLoader::new(dir.path().join("g.webnn"))
///     .weights("data.bin")
///     .manifest("data.json")
///     .load()
///     .unwrap();
/// assert_eq!(graph.consts["w"].init, ConstInit::InlineBytes { bytes: vec![5, 6] });
/// ```
#[derive(Debug, Clone)]
pub struct GraphLoader {
    path: PathBuf,
    weights: Option<PathBuf>,
    manifest: Option<PathBuf>,
}

impl GraphLoader {
    /// A loader for the graph file at `path`, with sidecar discovery.
    pub fn new(path: impl AsRef<Path>) -> GraphLoader {
        GraphLoader {
            path: path.as_ref().to_path_buf(),
            weights: None,
            manifest: None,
        }
    }

    /// Uses this weights file (SafeTensors archive or blob) instead of discovery.
    pub fn weights(mut self, path: impl AsRef<Path>) -> GraphLoader {
        self.weights = Some(path.as_ref().to_path_buf());
        self
    }

    /// Uses this manifest for a blob (ignored for SafeTensors archives).
    pub fn manifest(mut self, path: impl AsRef<Path>) -> GraphLoader {
        self.manifest = Some(path.as_ref().to_path_buf());
        self
    }

    /// Reads the graph and resolves its external weights.
    pub fn load(&self) -> Result<GraphJson, Error> {
        let mut graph = crate::read_graph_file(&self.path)?;
        super::resolve_external_weights(
            &mut graph,
            &self.path,
            self.weights.as_deref(),
            self.manifest.as_deref(),
        )?;
        Ok(graph)
    }
}

/// Reads a graph file and resolves its `@weights` constants by discovery:
/// `GraphLoader::new(path).load()`.
pub fn load_graph(path: impl AsRef<Path>) -> Result<GraphJson, Error> {
    GraphLoader::new(path).load()
}
