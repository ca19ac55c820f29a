//! BF16 -> F32 widening micro-benchmark (not a test): the resolver's pipeline against the
//! previous one (per-element iterator adapters into `half::bf16`, then
//! `convert_to_f32_slice`, then per-element `to_le_bytes`), side by side on the same bytes.
//!
//! `cargo bench -p webnn-weights-runtime --bench widen` measures the optimized build; the
//! same with `--profile dev` (or `cargo run --example`-style debug) shows the unoptimized
//! case build scripts run in. `WEBNN_BENCH_RUNS` (default 5) runs; the fastest is reported.

use half::slice::HalfFloatSliceExt;
use std::time::Instant;
use webnn_weights_runtime::{ConstInit, GraphLoader};

/// Stored BF16 bytes: 32 Mi values (64 MiB).
const ROWS: usize = 8192;
const COLS: usize = 4096;

/// The previous pipeline, chunk by chunk as it was (128 KiB of stored bytes per step).
fn previous(src: &[u8]) -> Vec<u8> {
    const CHUNK: usize = 1 << 17;
    let mut out = vec![0u8; src.len() * 2];
    let (mut halves, mut floats): (Vec<half::bf16>, Vec<f32>) = (Vec::new(), Vec::new());
    for (s, d) in src.chunks(CHUNK).zip(out.chunks_mut(CHUNK * 2)) {
        halves.clear();
        halves.extend(
            s.chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]])),
        );
        floats.clear();
        floats.resize(halves.len(), 0.0);
        halves.as_slice().convert_to_f32_slice(&mut floats);
        for (d, f) in d.chunks_exact_mut(4).zip(floats.iter()) {
            d.copy_from_slice(&f.to_le_bytes());
        }
    }
    out
}

fn archive(stored: &[u8]) -> Vec<u8> {
    let mut header = format!(
        r#"{{"w":{{"dtype":"BF16","shape":[{ROWS},{COLS}],"data_offsets":[0,{}]}}}}"#,
        stored.len()
    );
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(stored);
    file
}

fn fastest<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = f();
    for _ in 0..runs {
        drop(out);
        let start = Instant::now();
        out = std::hint::black_box(f());
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, out)
}

fn main() -> Result<(), String> {
    let runs: usize = std::env::var("WEBNN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let stored = webnn_weights_test_support::Rng::new(0x9E37_79B9_7F4A_7C15).bytes(ROWS * COLS * 2);
    let text = format!(
        "webnn_graph \"widen\" v1 {{\n  inputs {{ x: f32[1, {ROWS}]; }}\n  consts {{ w: f32[{ROWS}, {COLS}] @weights(\"w\"); }}\n  nodes {{ y = matmul(x, w); }}\n  outputs {{ y; }}\n}}\n"
    );
    let graph = webnn_weights_runtime::parse_webnn(&text).map_err(|e| e.to_string())?;
    let bytes = bytes::Bytes::from(archive(&stored));
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let sidecar = dir.path().join("widen.safetensors");
    std::fs::write(&sidecar, &bytes).map_err(|e| e.to_string())?;
    let graph_path = dir.path().join("widen.webnn");
    std::fs::write(&graph_path, &text).map_err(|e| e.to_string())?;
    // The resolved buffer itself (no copy).
    let take = |g: webnn_weights_runtime::GraphJson| match &g.consts["w"].init {
        ConstInit::InlineBytes { bytes } => bytes.clone(),
        _ => bytes::Bytes::new(),
    };

    let (old, reference) = fastest(runs, || previous(&stored));
    let (memory, from_memory) = fastest(runs, || {
        let loader = GraphLoader::from_graph(graph.clone()).weights_bytes(bytes.clone());
        take(loader.load().expect("in-memory load"))
    });
    let (owned, from_file) = fastest(runs, || {
        take(webnn_weights_runtime::load_graph(&graph_path).expect("owned load"))
    });
    if from_memory[..] != reference[..] || from_file[..] != reference[..] {
        return Err("the pipelines disagree".into());
    }
    let mib = stored.len() as f64 / (1 << 20) as f64;
    let profile = if cfg!(debug_assertions) {
        "unoptimized"
    } else {
        "optimized"
    };
    println!("BF16 -> F32, {mib:.0} MiB stored, {profile}, fastest of {runs}:");
    println!(
        "  previous pipeline (iterators, half)  {:8.1} ms  {:6.0} MiB/s",
        old * 1e3,
        mib / old
    );
    println!(
        "  in-memory load (this pipeline)       {:8.1} ms  {:6.0} MiB/s  {:.2}x the previous time",
        memory * 1e3,
        mib / memory,
        memory / old
    );
    println!(
        "  owned load from a file               {:8.1} ms  {:6.0} MiB/s",
        owned * 1e3,
        mib / owned
    );
    Ok(())
}
