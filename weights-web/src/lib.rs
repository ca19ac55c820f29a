//! # webnn-weights-web
//!
//! WebNN graphs in the browser. One table of WebNN semantics maps each GraphJson
//! operation onto an `MLGraphBuilder` call, read the way rustnn 0.6.0's `webnn_json`
//! reads GraphJson (rustnn is the Rust WebNN implementation that consumes these graphs;
//! the browser must compute what rustnn computes): inputs are operands in order; the
//! options `scale`, `bias`, `c`, `recurrentBias`, `peepholeWeight`, `initialHiddenState`
//! and `initialCellState` name operands; each operation's non-operand positional
//! parameters (`reshape`'s newShape, `slice`'s starts and sizes, `cast`'s type, `concat`'s
//! axis, `split`'s splits, …) come from the options; multi-output operations bind
//! `outputs` in order; empty strings and nulls mean absent.
//!
//! [`WebGraph::new`] checks a graph against the table (an operation or option the table
//! does not know is an error naming the node, every problem at once) and lowers it;
//! [`web_module`] and [`emit_js`] write the ES modules of `webnn-weights web` and
//! `webnn-weights emit-js`, which execute the lowered program with one builder
//! (`builder.js`, inlined: the modules import nothing).
//!
//! ```
//! let graph = webnn_weights_runtime::parse_webnn(r#"webnn_graph "g" v1 {
//!   inputs { x: f32[1, 4]; }
//!   consts { w: f32[4, 2] @weights("w"); }
//!   nodes { [y] = matmul(x, w); }
//!   outputs { y; }
//! }"#).unwrap();
//! let program = webnn_weights_web::WebGraph::new(&graph).unwrap();
//! let js = webnn_weights_web::emit_js(&program, "g.webnn");
//! assert!(js.contains("export async function buildGraph(context, weights)"));
//!
//! let bad = webnn_weights_runtime::parse_webnn(r#"webnn_graph "g" v1 {
//!   inputs { x: f32[2]; }
//!   nodes { y = relu(x, alpah=1); }
//!   outputs { y; }
//! }"#).unwrap();
//! let error = webnn_weights_web::WebGraph::new(&bad).unwrap_err();
//! assert!(error.to_string().contains("node \"y\" (relu): unknown option \"alpah\""));
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod lower;
mod module;
mod table;

pub use lower::{LowerError, WebGraph};
pub use module::{builder_module, emit_js, web_module, WeightsFiles};
