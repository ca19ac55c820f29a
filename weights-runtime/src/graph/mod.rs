//! The graph model and its files: element types, names and node options, the GraphJson
//! model, the `.webnn` text format ([`text`]), GraphJson files and the detection of either
//! format (`json`), and the structural checks (`validate`). Nothing here knows sidecars.

// The modules are layers; `LAYERS` gives their order and what each holds.
pub(crate) mod digits;
pub(crate) mod dtype;
pub(crate) mod json;
mod model;
pub(crate) mod name;
#[cfg(feature = "load")]
pub(crate) mod near;
pub(crate) mod node_options;
#[cfg(feature = "text")]
#[cfg_attr(docsrs, doc(cfg(feature = "text")))]
pub mod text;
pub(crate) mod validate;

/// The graph's modules from the bottom up, each importing (`super::…`, `crate::graph::…`,
/// or a name re-exported here or at the crate root) only from those before it;
/// `layer_tests` reads the sources and fails on an import that goes up.
#[cfg(test)]
const LAYERS: [(&str, &str); 9] = [
    ("digits", "byte lists as decimal numbers, for both writers"),
    ("dtype", "element types and packed 4-bit values"),
    ("name", "names of operands and operations"),
    ("near", "nearest names, for \"did you mean\""),
    ("node_options", "a node's named options"),
    ("model", "the GraphJson model"),
    ("text", "the .webnn text format: reader and writer"),
    ("json", "GraphJson files, detecting either format"),
    ("validate", "the structural checks of a graph"),
];

pub(crate) use model::GRAPH_JSON_FORMAT;
pub use model::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc};

#[cfg(test)]
mod layer_tests {
    #[test]
    fn every_import_goes_down_the_layers() {
        webnn_weights_test_support::layers::assert_layered(
            &crate::layer_tests::src(),
            "graph",
            &super::LAYERS,
        );
    }
}
