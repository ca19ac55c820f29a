//! # webnn-weights-runtime
//!
//! The WebNN external weight format in Rust: a graph (`.webnn` text or GraphJson) declares its
//! constants with `@weights("ref")`, and their bytes live in a sidecar (a SafeTensors archive,
//! a sharded Hugging Face archive, or a raw `.weights` blob addressed by a JSON manifest). This
//! crate holds the graph model ([`GraphJson`]), both file formats, the resolver that applies
//! every rule of the format, weights locks ([`WeightsLock`]), and `'static` graphs embedded at
//! build time ([`EmbeddedGraph`], [`include_webnn_graph!`]): what an application needs.
//!
//! ## Embed a model at build time
//!
//! With `webnn-weights-build` as a build-dependency, `build.rs` prepares the graph and the
//! macro embeds it; the bytes reach the binary through the linker, checked at build time:
//!
//! ```ignore
//! // build.rs
//! fn main() {
//!     webnn_weights_build::compile_or_exit("models/model.webnn");
//! }
//!
//! // src/main.rs
//! use webnn_weights_runtime::{include_webnn_graph, EmbeddedGraph};
//! static MODEL: EmbeddedGraph = include_webnn_graph!("models/model.webnn");
//!
//! fn main() {
//!     let w = MODEL.constant("fc1_weight").unwrap();
//!     let values: &'static [f32] = w.as_f32().unwrap(); // zero-copy, 64-byte aligned
//!     let digest = w.sha256(); // Some(..) when models/model.webnn.lock pins the weights
//!     # let _ = (values, digest);
//! }
//! ```
//!
//! ## Load from files at run time (feature `load`)
//!
//! The same rules, with the sidecar found beside the graph (or named explicitly). Each
//! constant's bytes are a [`bytes::Bytes`]: owned, or with [`load_graph_mapped`] a view into a
//! read-only mapping of the sidecar, so a large model loads without copying.
//!
//! ```
//! use webnn_weights_runtime::{load_graph, load_graph_mapped, ConstInit, GraphLoader};
//! let dir = tempfile::tempdir().unwrap();
//! let graph = dir.path().join("model.webnn");
//! std::fs::write(&graph, r#"webnn_graph "g" v2 {
//!   consts { w: u8[2] @weights("w"); }
//!   nodes { y = relu(w); }
//!   outputs { y; }
//! }"#).unwrap();
//! // A blob and its manifest, found by discovery (model.weights, model.manifest.json).
//! std::fs::write(dir.path().join("model.weights"), [3, 4]).unwrap();
//! std::fs::write(dir.path().join("model.manifest.json"),
//!     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#).unwrap();
//!
//! let owned = load_graph(&graph).unwrap();
//! let mapped = load_graph_mapped(&graph).unwrap();
//! assert_eq!(owned, mapped);
//! let ConstInit::InlineBytes { bytes } = &owned.consts["w"].init else { unreachable!() };
//! assert_eq!(bytes[..], [3, 4]);
//! // Explicit paths are relative to the graph's folder, as in the format.
//! let explicit = GraphLoader::new(&graph)
//!     .weights("model.weights")
//!     .manifest("model.manifest.json")
//!     .load()
//!     .unwrap();
//! assert_eq!(explicit, owned);
//! ```
//!
//! ## Weights from memory (feature `load`)
//!
//! A sidecar that never was a file here (a download, an archive member, `include_bytes!`):
//! the constants are slices of the buffer given.
//!
//! ```
//! use webnn_weights_runtime::{parse_webnn, ConstInit, GraphLoader};
//! let graph = parse_webnn(r#"webnn_graph "g" v2 {
//!   consts { w: u8[2] @weights("w"); }
//!   nodes { y = relu(w); }
//!   outputs { y; }
//! }"#).unwrap();
//! let blob: &'static [u8] = &[0, 5, 6];
//! let resolved = GraphLoader::from_graph(graph)
//!     .weights_bytes(blob)
//!     .manifest_bytes(r#"{"tensors":{"w":{"byteOffset":1,"byteLength":2}}}"#)
//!     .load()
//!     .unwrap();
//! let ConstInit::InlineBytes { bytes } = &resolved.consts["w"].init else { unreachable!() };
//! assert_eq!(bytes.as_ptr(), blob[1..].as_ptr()); // no copy
//! ```
//!
//! ## Pin the weights (feature `load`)
//!
//! A lock beside the graph (`<graph file name>.lock`, written by `webnn-weights lock`) is
//! verified wherever the bytes are read; [`WeightPlan::to_lock`] makes one in code:
//!
//! ```
//! use webnn_weights_runtime::{load_graph, plan_external_weights, read_graph_file, WeightsLock};
//! let dir = tempfile::tempdir().unwrap();
//! let graph = dir.path().join("model.webnn");
//! std::fs::write(&graph, r#"webnn_graph "g" v2 {
//!   consts { w: u8[2] @weights("w"); }
//!   nodes { y = relu(w); }
//!   outputs { y; }
//! }"#).unwrap();
//! std::fs::write(dir.path().join("model.weights"), [3, 4]).unwrap();
//! std::fs::write(dir.path().join("model.manifest.json"),
//!     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#).unwrap();
//! let plan = plan_external_weights(&read_graph_file(&graph).unwrap(), &graph, None, None).unwrap();
//! std::fs::write(WeightsLock::path_for(&graph), plan.to_lock().unwrap().to_json()).unwrap();
//! assert!(load_graph(&graph).is_ok());
//! std::fs::write(dir.path().join("model.weights"), [3, 5]).unwrap(); // replaced
//! let err = load_graph(&graph).unwrap_err();
//! assert!(err.to_string().contains("do not match the lock"));
//! ```
//!
//! ## Also here
//!
//! [`plan_external_weights`] and [`WeightPlan`] (plan once, then read constants in any order
//! or stream them), [`GraphJson::validate`], the sidecar readers ([`formats`]), [`parse_webnn`] and
//! [`to_webnn_text`]. The SafeTensors writer (`write_external_weights_safetensors`) and the
//! WGWT blob tools live in the `webnn-weights-tools` crate, used by the CLI; file
//! installation (temporary file, sync, rename) in the `webnn-weights-atomic` crate. With the feature `webnn-graph`, `webnn_graph_compat` converts graphs to and from
//! `webnn_graph::ast::GraphJson` (what rustnn takes) and offers a drop-in
//! `resolve_external_weights` for that type; `EmbeddedGraph::to_webnn_graph` hands an
//! embedded graph over. With the feature `ring`, weights locks are hashed by `ring`'s assembly
//! (fast in unoptimized builds).
//!
//! ## Features
//!
//! By default the crate holds what an embedded graph needs: [`EmbeddedGraph`] and its typed
//! views, the graph model and GraphJson, validation. `text` adds the `.webnn` text format
//! ([`parse_webnn`], [`to_webnn_text`]); `load` adds `text` and everything that reads files
//! at run time (graph files, [`GraphLoader`], the resolver, the sidecar readers, locks,
//! graphs embedded with `Embedding::Runtime`); `f16` adds [`EmbeddedConstant::as_f16`];
//! `ring` and `webnn-graph` imply `load`. Each gated item says which feature it needs.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Unsafe code, each with its `// SAFETY:` comment (docs/embedding.md, "Unsafe code", lists
// them, checked by tests/tests/unsafe_inventory.rs): mapping a sidecar read-only
// (`resolve::storage::map_read_only`), the slice over linked data once its ends are
// checked (`embed::linked`), and the text of an inline `Name` (`graph::name`). Byte views
// of typed slices go through `bytemuck`'s checked casts.
#![deny(unsafe_code)]

// The modules are layers; `LAYERS` gives their order and what each holds.
mod embed;
mod error;
mod graph;
mod json_keys;
#[cfg(feature = "load")]
mod load;
#[cfg(feature = "load")]
mod resolve;
#[cfg(feature = "load")]
mod sidecar;
#[cfg(feature = "webnn-graph")]
#[cfg_attr(docsrs, doc(cfg(feature = "webnn-graph")))]
pub mod webnn_graph_compat;

/// The crate's top-level modules from the bottom up, each importing (`crate::…`, or a name
/// the crate root re-exports) only from those before it; `layer_tests` reads the sources and
/// fails on an import that goes up (test-support's `layers::assert_layered`, also used by
/// the `LAYERS` below). `graph`, `sidecar` and `resolve` order their own modules
/// the same way, each with its own `LAYERS`.
#[cfg(test)]
const LAYERS: [(&str, &str); 8] = [
    ("json_keys", "the one rule for repeated JSON keys"),
    ("graph", "the graph model, its two formats, validation"),
    ("sidecar", "sidecar readers: files -> catalog, no graph"),
    ("resolve", "rules, plan, storage, materialization"),
    ("error", "the crate's Error and Report"),
    ("load", "graph files and GraphLoader"),
    ("embed", "graphs embedded at build time"),
    ("webnn_graph_compat", "the bridge to webnn-graph's types"),
];

/// The macro's ABI: what `include_webnn_graph!` expands to (outside semver).
#[doc(hidden)]
pub use embed::abi as __macro;
pub use embed::{EmbedError, EmbedErrorKind, EmbeddedConstant, EmbeddedGraph, CONSTANT_ALIGNMENT};
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use error::Error;
pub use error::Report;
pub use graph::dtype::DataType;
pub use graph::json::{
    parse_graph_json, write_graph_json, GraphFileFormat, GraphJsonError, JsonStyle,
};
pub use graph::name::Name;
pub use graph::node_options::{NodeOptions, NodeOptionsIter};
#[cfg(feature = "text")]
#[cfg_attr(docsrs, doc(cfg(feature = "text")))]
pub use graph::text::{
    parse_webnn, to_webnn_text, write_webnn_text, ParseError, TextOutputError, WriteTextError,
};
pub use graph::validate::ValidationError;
pub use graph::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc};
#[cfg(feature = "mmap")]
#[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
pub use load::load_graph_mapped;
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use load::{load_graph, parse_graph_text, read_graph_file, GraphLoader};
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use resolve::{
    plan_external_weights, resolve_external_weights, ConstantReader, Conversion, DataLayout,
    DataWriteError, LockEntry, LockProblem, PlannedConstant, ResolveError, Sidecar, SidecarKind,
    WeightPlan, WeightsLock,
};
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use sidecar::{formats, manifest, StoredFile};
/// The byte range of one entry of a [`DataLayout`], and the error of a layout past 2^64
/// bytes (defined in the contract crate the build helper shares).
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use webnn_weights_artifacts::{DataRange, LayoutError};
pub use webnn_weights_macro::include_webnn_graph;

#[cfg(test)]
mod layer_tests {
    /// The crate's `src/` folder, whose levels `LAYERS` describe.
    pub(crate) fn src() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
    }

    #[test]
    fn the_crate_s_modules_are_layered() {
        webnn_weights_test_support::layers::assert_layered(&src(), "", &super::LAYERS);
    }
}
