//! Runnable examples of webnn-weights on a small model shipped in `models/`.
//!
//! - `cargo run -p webnn-weights-examples --bin quickstart`: the embedded model, its
//!   constants, one inference in plain Rust, and a check against the run-time resolver.
//! - `cargo run -p webnn-weights-examples --bin infer`: only the inference, on the embedded
//!   weights; its binary links no resolver (`tests/binary.rs` checks the symbols).
//! - `cargo run -p webnn-weights-examples --bin runtime_fallback`: the same model resolved
//!   from its `.weights` blob at run time.
//! - `cargo run -p webnn-weights-examples --bin generate-models`: rewrites `models/`
//!   (deterministic: the same bytes every time).
//!
//! The statics are in the library so that every test and binary shares them.

pub mod model;

use webnn_weights_runtime::{include_webnn_graph, EmbeddedGraph};

/// `models/tiny_mlp.webnn` with its SafeTensors weights embedded in the binary.
pub static TINY_MLP: EmbeddedGraph = include_webnn_graph!("models/tiny_mlp.webnn");

/// `models/blob/tiny_mlp.webnn`: the same model, its `.weights` blob resolved at run time.
pub static TINY_MLP_BLOB: EmbeddedGraph = include_webnn_graph!("models/blob/tiny_mlp.webnn");
