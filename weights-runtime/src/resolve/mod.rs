//! The resolver: plan, then materialize.
//!
//! [`plan_external_weights`] finds the sidecar, reads only its header or manifest and
//! checks every rule of the format; a [`WeightPlan`] is then materialized by the caller:
//! [`WeightPlan::materialize`] (run time), [`WeightPlan::copy_constant`] (build time, CLI
//! digests) or [`WeightPlan::read_constant`]. [`resolve_external_weights`] does both and
//! rewrites the graph.

// Errors are cold and carry the full context a message needs (graph, constant, reference,
// sidecar, expected, found); callers that store them box them (see `crate::Error::Resolve`).
#![allow(clippy::result_large_err)]

// The modules are layers; `LAYERS` gives their order and what each holds.
mod discover;
mod error;
mod layout;
mod lock;
mod materialize;
mod model;
mod plan;
mod rules;
mod storage;

/// The resolver's modules from the bottom up, each importing (`super::…`,
/// `crate::resolve::…`, or a name re-exported here or at the crate root) only from those
/// before it; `layer_tests` reads the sources and fails on an import that goes up, or on
/// one of an item defined in this file (the check is test-support's
/// `layers::assert_layered`).
#[cfg(test)]
const LAYERS: [(&str, &str); 9] = [
    ("model", "the plan's types"),
    (
        "rules",
        "name lookup and per-constant checks over a catalog",
    ),
    ("error", "errors with the graph's context"),
    ("discover", "discovery of the sidecar and manifest"),
    (
        "lock",
        "the weights lock: reading, writing, the checks a plan carries",
    ),
    ("plan", "adds the graph: requests, planning"),
    ("storage", "where bytes come from; the conversion pipeline"),
    ("materialize", "plan -> bytes per constant"),
    (
        "layout",
        "the data layout: one range per distinct stored bytes, filled through one reader",
    ),
];

pub use error::ResolveError;
pub use layout::{DataLayout, DataWriteError};
// What `crate::load` (above this module: graph files, `GraphLoader`) builds on.
pub(crate) use error::GRAPH_IN_MEMORY;
pub(crate) use lock::find_lock;
pub(crate) use materialize::Access;
pub use materialize::ConstantReader;
pub use model::{
    Conversion, LockEntry, LockProblem, PlannedConstant, Sidecar, SidecarKind, WeightPlan,
    WeightsLock,
};
pub use plan::plan_external_weights;
pub(crate) use plan::{empty_plan, format_error, plan_catalog, plan_sharded, requests};
#[cfg(feature = "webnn-graph")]
pub(crate) use plan::{plan_requests, requests_of, Declared, DeclaredInit};

use crate::graph::{ConstInit, GraphJson};
use bytes::Bytes;
use std::path::Path;

/// Replaces every `@weights` constant of `graph` with its bytes from the sidecar.
///
/// `graph_path` is the graph's file (for discovery and messages); `weights` and
/// `manifest` are optional explicit paths, relative to the graph's folder unless
/// absolute. The graph is rewritten in one step after every constant has been read, so
/// it is untouched when this fails. A graph without `@weights` constants touches no file.
/// A weights lock beside the graph (`<graph file name>.lock`) is verified while the bytes
/// are read ([`GraphLoader::lock`](crate::GraphLoader::lock)).
///
/// The same operation on webnn-graph's `GraphJson` has the same name, as the drop-in for
/// webnn-graph's function: `webnn_graph_compat::resolve_external_weights` (feature
/// `webnn-graph`).
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
    let mut plan = plan_external_weights(graph, graph_path, weights, manifest)?;
    if !plan.constants().is_empty() {
        if let Some(lock) = find_lock(graph_path, None, true, &mut Vec::new())? {
            plan = plan.with_lock(lock);
        }
    }
    let bytes = plan.materialize()?;
    inline_resolved(graph, bytes);
    Ok(())
}

/// Replaces every `@weights` constant of `graph` with its resolved bytes (keyed by
/// constant name, as materializing a plan gives them): the one step that inlines, after
/// every constant has been read.
pub(crate) fn inline_resolved(
    graph: &mut GraphJson,
    mut bytes: std::collections::BTreeMap<String, Bytes>,
) {
    for (name, decl) in graph.consts.iter_mut() {
        if let ConstInit::Weights { .. } = decl.init {
            // Every Weights constant is in the plan, so in `bytes`.
            if let Some(b) = bytes.remove(name) {
                decl.init = ConstInit::InlineBytes { bytes: b };
            }
        }
    }
}

#[cfg(test)]
mod layer_tests {
    #[test]
    fn every_import_goes_down_the_layers() {
        webnn_weights_test_support::layers::assert_layered(
            &crate::layer_tests::src(),
            "resolve",
            &super::LAYERS,
        );
    }
}
