//! The embedded model and its check, shared by the WASI program (src/main.rs) and the
//! wasm32-unknown-unknown module (`webnn_smoke_check`, called from Node without imports).
use webnn_weights_runtime::{include_webnn_graph, EmbeddedGraph};

/// Every embedded constant starts on a multiple of this.
pub const CONSTANT_ALIGNMENT: usize = 64;

/// examples/models/tiny_mlp.webnn with its weights.
pub static MODEL: EmbeddedGraph = include_webnn_graph!("../../examples/models/tiny_mlp.webnn");

/// One constant as read back: name, bytes, address in linear memory, first values.
pub struct Row {
    pub name: String,
    pub len: usize,
    pub address: usize,
    pub aligned: bool,
    pub matches_runtime_view: bool,
}

/// Every constant: its bytes 64-byte aligned, and the same bytes as `to_graph_json()`'s.
pub fn rows() -> Vec<Row> {
    let graph = MODEL.to_graph_json();
    MODEL
        .constants()
        .iter()
        .map(|c| {
            let bytes = c.bytes();
            let address = bytes.as_ptr() as usize;
            let same = match &graph.consts[c.name()].init {
                webnn_weights_runtime::ConstInit::InlineBytes { bytes: b } => {
                    b[..] == *bytes && b.as_ptr() == bytes.as_ptr()
                }
                _ => false,
            };
            Row {
                name: c.name().to_string(),
                len: bytes.len(),
                address,
                aligned: address % CONSTANT_ALIGNMENT == 0,
                matches_runtime_view: same,
            }
        })
        .collect()
}

/// The known first values of fc1_bias (float32), as the quickstart prints them.
pub fn fc1_bias_ok() -> bool {
    MODEL
        .constant("fc1_bias")
        .and_then(|c| c.as_f32())
        .is_some_and(|v| v[..4] == [-0.5, -0.375, -0.25, -0.125])
}

/// The number of constants found intact and 64-byte aligned, or minus the number of those
/// that are not (0 when the graph has none).
#[no_mangle]
pub extern "C" fn webnn_smoke_check() -> i32 {
    let rows = rows();
    let bad = rows
        .iter()
        .filter(|r| !(r.aligned && r.matches_runtime_view))
        .count() as i32
        + i32::from(!fc1_bias_ok());
    if bad > 0 {
        -bad
    } else {
        rows.len() as i32
    }
}
