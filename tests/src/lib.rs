//! Whole-pipeline tests of webnn-weights: every fixture kind embedded by `build.rs` and
//! `include_webnn_graph!`. The assertions live in `tests/`.
//!
//! The statics are in the library so that every test and binary shares them.

use webnn_weights_runtime::{include_webnn_graph, EmbeddedGraph};

pub mod pieces;

/// Packed int4/uint4 with the marker, float32 and int8 (static library).
pub static QUANT: EmbeddedGraph = include_webnn_graph!("fixtures/packed4/quant.webnn");
/// Normalized names, float16, int64, uint8 (static library).
pub static ENCODER: EmbeddedGraph = include_webnn_graph!("fixtures/hf-safetensors/encoder.webnn");
/// BF16 stored for a float32 declaration, explicit weights path (static library).
pub static HEAD: EmbeddedGraph = include_webnn_graph!("fixtures/hf-safetensors/head.webnn");
/// A sharded archive (index + three shards written by Python `safetensors`).
pub static SHARDED: EmbeddedGraph = include_webnn_graph!("fixtures/hf-sharded/encoder.webnn");
/// The same tensors and graph over one archive.
pub static SHARDED_SINGLE: EmbeddedGraph =
    include_webnn_graph!("fixtures/hf-sharded/encoder_single.webnn");
/// The sharded archive, not embedded: resolved from the first shard at run time.
pub static SHARDED_RUNTIME: EmbeddedGraph = include_webnn_graph!("fixtures/hf-sharded/small.webnn");
/// WGWT blob with discovered manifest (static library).
pub static RESNET_HEAD: EmbeddedGraph =
    include_webnn_graph!("fixtures/resnet-head/resnet_head.webnn");
/// Headerless blob (aligned `include_bytes!`).
pub static ONNX_LAYOUT: EmbeddedGraph = include_webnn_graph!("fixtures/onnx-layout/model.webnn");
/// Explicit blob + manifest on a GraphJson file (aligned `include_bytes!`).
pub static TINY: EmbeddedGraph = include_webnn_graph!("fixtures/tiny-extract/tiny.extracted.json");
/// Not embedded: resolved at run time.
pub static RUNTIME_QUANT: EmbeddedGraph =
    include_webnn_graph!("fixtures/embed-runtime/quant.webnn");
/// Tied constants sharing stored tensors, each embedded once (static library).
pub static TIED: EmbeddedGraph = include_webnn_graph!("fixtures/tied/tied.webnn");
/// The tied graph, not embedded: resolved at run time.
pub static RUNTIME_TIED: EmbeddedGraph = include_webnn_graph!("fixtures/embed-runtime/tied.webnn");
/// 36 MiB in four tensors: an ELF static library holds the data in several sections.
pub static PIECES: EmbeddedGraph = include_webnn_graph!("fixtures/pieces/pieces.webnn");
/// The tied graph with a weights lock beside it (static library).
pub static LOCKED: EmbeddedGraph = include_webnn_graph!("fixtures/locked/tied.webnn");
/// The same with its own lock, not embedded: verified on first use.
pub static RUNTIME_LOCKED: EmbeddedGraph = include_webnn_graph!("fixtures/locked/runtime.webnn");
/// An ONNX model converted by build.rs (static library), verified against its lock.
pub static ONNX_TINY: EmbeddedGraph = include_webnn_graph!("fixtures/onnx-model/tiny.onnx");
/// A graph without `@weights` constants.
pub static PLAIN: EmbeddedGraph = include_webnn_graph!("fixtures/embed-none/plain.webnn");
