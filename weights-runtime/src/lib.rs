//! # webnn-weights-runtime
//!
//! The WebNN external weight format in Rust: the GraphJson model, the `.webnn` text
//! reader and writer, the sidecar resolver (SafeTensors archives and manifest-addressed
//! `.weights` blobs, read by [`formats`]), and `'static` embedded graphs produced by
//! [`include_webnn_graph!`]: what an application needs. The SafeTensors writer
//! (`write_external_weights_safetensors`), atomic file installation and the WGWT blob
//! tools live in the `webnn-weights-tools` crate, used by the CLI and the build helper.
//!
//! With the feature `webnn-graph`, `webnn_graph_compat` converts graphs to and from
//! `webnn_graph::ast::GraphJson` (what rustnn takes) and offers a drop-in
//! `resolve_external_weights` for that type; `EmbeddedGraph::to_webnn_graph` hands an
//! embedded graph over.
#![warn(missing_docs)]
// Unsafe code, each with its `// SAFETY:` comment (docs/embedding.md, "Unsafe code", lists
// them, checked by tests/tests/unsafe_inventory.rs): mapping a sidecar read-only
// (`resolve::storage::map_read_only`) and the slice over linked data once its ends are
// checked (`embed::linked_data`). Byte views of typed slices go through `zerocopy`'s checked
// casts and derived impls.
#![deny(unsafe_code)]

mod dtype;
pub mod embed;
mod error;
mod graph;
mod graph_file;
mod json_keys;
mod load;
pub mod manifest;
mod name;
mod node_options;
mod resolve;
pub mod text;
mod validate;
#[cfg(feature = "webnn-graph")]
pub mod webnn_graph_compat;

#[doc(hidden)]
pub use dtype::SafeTensorsStorage;
pub use dtype::{unpack_int4, unpack_uint4, DataType};
pub use embed::{EmbedError, EmbedErrorKind, EmbeddedConstant, EmbeddedGraph};
pub use error::{Error, Report};
pub use graph::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc, GRAPH_JSON_FORMAT};
pub use graph_file::{
    detect_graph_format, parse_graph_json, to_graph_json_string, write_graph_json, GraphFileFormat,
    GraphJsonError, JsonStyle,
};
pub use load::{load_graph, load_graph_mapped, parse_graph_text, read_graph_file, GraphLoader};
pub use manifest::{Manifest, ManifestEntry, ManifestError};
pub use name::Name;
pub use node_options::{NodeOptions, NodeOptionsIter};
pub use resolve::formats;
pub use resolve::{
    normalize_weight_name, plan_external_weights, resolve_external_weights, ConstantReader,
    Conversion, LockEntry, LockProblem, PlannedConstant, ResolveError, Sidecar, SidecarKind,
    StoredFile, WeightPlan, WeightsLock, LOCK_FORMAT, LOCK_VERSION, PACKED_4BIT_METADATA_KEY,
    PACKED_4BIT_METADATA_VERSION,
};
pub use text::{parse_webnn, to_webnn_text, ParseError, WriteTextError};
pub use validate::{validate_graph, ValidationError};
pub use webnn_weights_macro::include_webnn_graph;
