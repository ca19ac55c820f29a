//! The graph model and its files: element types, names and node options, the GraphJson
//! model, the `.webnn` text format ([`text`]), GraphJson files and the detection of either
//! format (`json`), and the structural checks (`validate`). Nothing here knows sidecars.

pub(crate) mod dtype;
pub(crate) mod json;
mod model;
pub(crate) mod name;
pub(crate) mod node_options;
pub mod text;
pub(crate) mod validate;

pub use model::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc, GRAPH_JSON_FORMAT};
