//! What `include_webnn_graph!` expands to, and nothing else: the `static` wrapper that
//! aligns included bytes, the placement of the parts a static library links, and one
//! constructor of [`EmbeddedGraph`] per way the bytes reach the binary. Public because the
//! macro's expansion names it (as `webnn_weights_runtime::__macro`), hidden from the docs,
//! and outside semver: only the macro of the same version calls it.

use super::{EmbeddedGraph, Linked, Source};
use webnn_weights_artifacts::DATA_ALIGN;

/// Wrapper that aligns its contents to 64 bytes (used by the macro's `include_bytes!` of the
/// data and of the constant table: `&Aligned(*include_bytes!(..))` coerces to
/// `&Aligned<[u8]>`).
#[repr(C, align(64))]
pub struct Aligned<B: ?Sized>(pub B);

// `repr(align)` takes only a literal: the compiler checks that it is the contract's.
const _: () = assert!(std::mem::align_of::<Aligned<[u8; 0]>>() as u64 == DATA_ALIGN);

/// Where the constant table and the graph JSON lie in the bytes a static library links
/// (used by `include_webnn_graph!`): each an (offset, length) pair after the constants'
/// `data` bytes.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// The constants' data: the first this many bytes.
    pub data: usize,
    /// The constant table (`webnn_weights_artifacts::ConstantTable`), 64-byte aligned.
    pub table: (usize, usize),
    /// The graph JSON.
    pub graph: (usize, usize),
}

/// Used by `include_webnn_graph!` when the bytes are embedded by `include_bytes!`:
/// `table` is the constant table (`webnn_weights_artifacts::ConstantTable`) describing
/// `data`, checked again and decoded on first use.
pub const fn embedded(
    label: &'static str,
    graph_json: &'static str,
    data: &'static [u8],
    table: &'static [u8],
) -> EmbeddedGraph {
    let source = Source::Included {
        graph_json,
        data,
        table,
    };
    EmbeddedGraph::new(label, source)
}

/// Used by `include_webnn_graph!` when a static library links data, table and graph
/// JSON: `start` and `end` return the addresses (`&raw const`) of the zero-sized symbols it
/// defines at the first byte and just past the last, `len` is the length. The bytes become
/// a slice only on first use, after `end - start == len` is checked.
pub const fn linked(
    label: &'static str,
    start: fn() -> *const u8,
    end: fn() -> *const u8,
    len: usize,
    parts: Parts,
) -> EmbeddedGraph {
    let bytes = Linked { start, end, len };
    EmbeddedGraph::new(label, Source::Linked { bytes, parts })
}

/// Used by `include_webnn_graph!` when embedding is switched off: the weights are
/// resolved from `graph_path`'s sidecar on first use (and verified against `lock`, or
/// the lock beside the graph).
#[cfg(feature = "load")]
pub const fn runtime(
    label: &'static str,
    graph_json: &'static str,
    graph_path: &'static str,
    weights: Option<&'static str>,
    manifest: Option<&'static str>,
    lock: Option<&'static str>,
) -> EmbeddedGraph {
    let source = Source::Runtime {
        graph_json,
        graph_path,
        weights,
        manifest,
        lock,
        resolve: EmbeddedGraph::resolve_at_run_time,
    };
    EmbeddedGraph::new(label, source)
}

/// Without the feature `load` there is no resolver: the `static` that
/// `include_webnn_graph!` declares fails to compile (its initializer is evaluated at
/// compile time) with this message.
#[cfg(not(feature = "load"))]
pub const fn runtime(
    _label: &'static str,
    _graph_json: &'static str,
    _graph_path: &'static str,
    _weights: Option<&'static str>,
    _manifest: Option<&'static str>,
    _lock: Option<&'static str>,
) -> EmbeddedGraph {
    panic!(
        "include_webnn_graph!: this graph's weights are resolved at run time \
         (`Embedding::Runtime` in build.rs, or WEBNN_WEIGHTS_EMBED=0), which needs the \
         resolver: add `features = [\"load\"]` to the `webnn-weights-runtime` dependency \
         in Cargo.toml, or embed the weights"
    )
}
