//! # webnn-weights-runtime
//!
//! The WebNN external weight format in Rust: the GraphJson model, the `.webnn` text
//! reader and writer, the sidecar resolver (SafeTensors archives and manifest-addressed
//! `.weights` blobs), the SafeTensors writer, and `'static` embedded graphs produced by
//! [`include_webnn_graph!`].
#![warn(missing_docs)]

pub mod atomic;
mod dtype;
mod error;
mod graph;
pub mod manifest;
pub mod weight_tools;

pub use dtype::DataType;
pub use error::Error;
pub use graph::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc, GRAPH_JSON_FORMAT};
pub use manifest::{Manifest, ManifestEntry, ManifestError};
pub use webnn_weights_macro::include_webnn_graph;
