//! Side by side: webnn-weights-runtime's `load_graph` and webnn-graph 0.4.0's
//! `resolve_external_weights` on the same generated 512 MiB models, each in fresh child
//! processes, beside the floor (one read of the same bytes into fresh memory).
//!
//! Run through `bench/resolve-vs-webnn-graph.sh`. Environment: `WEBNN_BENCH_DIR` (where
//! to generate, default the temp folder), `WEBNN_BENCH_RUNS` (runs per measurement,
//! default 3; fastest time and lowest peak are reported).

#[path = "../../common.rs"]
mod common;

use std::path::Path;
use std::time::Instant;

fn inline_len_ours(graph: &webnn_weights_runtime::GraphJson) -> u64 {
    graph
        .consts
        .values()
        .map(|c| match &c.init {
            webnn_weights_runtime::ConstInit::InlineBytes { bytes } => bytes.len() as u64,
            _ => 0,
        })
        .sum()
}

fn child(args: &[String]) -> Result<(), String> {
    match args {
        [what, graph] if what == "ours" => {
            let start = Instant::now();
            let g = webnn_weights_runtime::load_graph(graph).map_err(|e| e.to_string())?;
            common::report(start, inline_len_ours(&g));
            Ok(())
        }
        [what, graph] if what == "theirs" => {
            let start = Instant::now();
            let text = std::fs::read_to_string(graph).map_err(|e| e.to_string())?;
            let mut g: webnn_graph::ast::GraphJson =
                serde_json::from_str(&text).map_err(|e| e.to_string())?;
            webnn_graph::resolve_external_weights(&mut g, Path::new(graph), None, None)
                .map_err(|e| e.to_string())?;
            let bytes: u64 = g
                .consts
                .values()
                .map(|c| match &c.init {
                    webnn_graph::ast::ConstInit::InlineBytes { bytes } => bytes.len() as u64,
                    _ => 0,
                })
                .sum();
            common::report(start, bytes);
            Ok(())
        }
        [what, path, offset, len] if what == "floor" => common::floor_child(
            Path::new(path),
            offset.parse().map_err(|_| "offset")?,
            len.parse().map_err(|_| "len")?,
        ),
        _ => Err(format!("unknown child arguments {args:?}")),
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("child") {
        return child(&args[1..]);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let runs = common::runs(3);
    common::in_scratch("webnn-resolve-compare", |work| run(&exe, work, runs))
}

fn run(exe: &Path, work: &Path, runs: usize) -> Result<(), String> {
    let models = common::generate(work).map_err(|e| e.to_string())?;
    println!("run-time resolve, {runs} runs each (fastest time, lowest peak RSS of the child)");
    for m in &models {
        let graph = m.graph.display().to_string();
        let floor = common::measure(
            exe,
            &[
                "floor".into(),
                m.sidecar.display().to_string(),
                m.data_offset.to_string(),
                common::MODEL_BYTES.to_string(),
            ],
            runs,
        )?;
        let ours = common::measure(exe, &["ours".into(), graph.clone()], runs)?;
        let theirs = common::measure(exe, &["theirs".into(), graph], runs)?;
        for s in [&ours, &theirs] {
            if s.bytes != common::MODEL_BYTES {
                return Err(format!(
                    "resolved {} bytes, expected {}",
                    s.bytes,
                    common::MODEL_BYTES
                ));
            }
        }
        println!("\n{}", m.label);
        println!("{}", common::row("floor (one read)", &floor));
        println!("{}", common::row("webnn-weights load_graph", &ours));
        println!("{}", common::row("webnn-graph 0.4.0", &theirs));
        println!(
            "webnn-weights / webnn-graph: time {:.2}x, peak memory {:.2}x",
            ours.seconds / theirs.seconds,
            ours.peak_kib as f64 / theirs.peak_kib as f64
        );
        println!(
            "webnn-weights / floor: time {:.2}x, peak memory {:.2}x; peak / resolved bytes {:.3}x",
            ours.seconds / floor.seconds,
            ours.peak_kib as f64 / floor.peak_kib as f64,
            ours.peak_kib as f64 * 1024.0 / common::MODEL_BYTES as f64
        );
    }
    Ok(())
}
