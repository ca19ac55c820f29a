//! The resolver: plan, then materialize (see DESIGN, "Structure for the changes ahead").
//!
//! [`plan_external_weights`] finds the sidecar, reads only its header or manifest and
//! checks every rule of the format; a [`WeightPlan`] is then materialized by the caller:
//! [`WeightPlan::materialize`] (run time), [`WeightPlan::copy_constant`] (build time, CLI
//! digests) or [`WeightPlan::read_constant`]. [`resolve_external_weights`] does both and
//! rewrites the graph.

// Errors are cold and carry the full context a message needs (graph, constant, reference,
// sidecar, expected, found); callers that store them box them (see `crate::Error::Resolve`).
#![allow(clippy::result_large_err)]

// Layers, each importing only from those above it in this list:
mod discover; //   (planning) discovery of the sidecar and manifest
mod error; //      (planning) errors with the graph's context
pub mod formats; // one reader per sidecar format: files -> catalog, no graph
mod loader;
mod materialize; // plan -> bytes per constant
mod model; //      the plan's types
mod plan; //       adds the graph: requests, planning
mod rules; //      name lookup and per-constant checks over a catalog
mod storage; //    where bytes come from; the conversion pipeline //     graph file -> resolved graph

pub use error::ResolveError;
pub use formats::safetensors::SAFETENSORS_MAX_HEADER_SIZE;
pub use loader::{load_graph, load_graph_mapped, GraphLoader};
pub use materialize::ConstantReader;
pub use model::{Conversion, PlannedConstant, Sidecar, SidecarKind, StoredFile, WeightPlan};
pub use plan::plan_external_weights;
#[cfg(feature = "webnn-graph")]
pub(crate) use plan::{plan_requests, requests_of, Declared, DeclaredInit};
pub use rules::normalize_weight_name;

use crate::graph::{ConstInit, GraphJson};
use std::path::Path;

/// SafeTensors archive metadata key of the packed 4-bit extension.
pub const PACKED_4BIT_METADATA_KEY: &str = "rustnn.webnn.packed4";
/// The only supported value of [`PACKED_4BIT_METADATA_KEY`].
pub const PACKED_4BIT_METADATA_VERSION: &str = "1";

/// Replaces every `@weights` constant of `graph` with its bytes from the sidecar.
///
/// `graph_path` is the graph's file (for discovery and messages); `weights` and
/// `manifest` are optional explicit paths, relative to the graph's folder unless
/// absolute. The graph is rewritten in one step after every constant has been read, so
/// it is untouched when this fails. A graph without `@weights` constants touches no file.
///
/// ```
/// use std::path::Path;
/// use webnn_weights_runtime::{resolve_external_weights, ConstDecl, ConstInit, DataType, GraphJson};
/// let dir = tempfile::tempdir().unwrap();
/// let mut graph = GraphJson::new(None);
/// graph.consts.insert("w".into(), ConstDecl {
///     data_type: DataType::Uint8, shape: vec![2],
///     init: ConstInit::Weights { r#ref: "w".into() },
/// });
/// // A 4-byte blob and its manifest, found by discovery beside model.webnn.
/// std::fs::write(dir.path().join("model.weights"), [0, 0, 7, 9]).unwrap();
/// std::fs::write(dir.path().join("model.manifest.json"),
///     r#"{"tensors":{"w":{"byteOffset":2,"byteLength":2}}}"#).unwrap();
/// resolve_external_weights(&mut graph, &dir.path().join("model.webnn"), None, None).unwrap();
/// assert_eq!(graph.consts["w"].init, ConstInit::InlineBytes { bytes: vec![7, 9].into() });
/// ```
pub fn resolve_external_weights(
    graph: &mut GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Result<(), ResolveError> {
    let plan = plan_external_weights(graph, graph_path, weights, manifest)?;
    let mut bytes = plan.materialize()?;
    for (name, decl) in graph.consts.iter_mut() {
        if let ConstInit::Weights { .. } = decl.init {
            // Every Weights constant is in the plan, so in `bytes`.
            if let Some(b) = bytes.remove(name) {
                decl.init = ConstInit::InlineBytes { bytes: b };
            }
        }
    }
    Ok(())
}
