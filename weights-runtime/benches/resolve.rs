//! Run-time resolve benchmark (not a test): a generated 512 MiB SafeTensors model and its
//! 512 MiB WGWT twin, each loaded in a fresh child process owned (`load_graph`) and
//! mapped (`load_graph_mapped`), beside the floor (a child that reads the same bytes once
//! into fresh memory). For each load: time, peak RSS, RSS right after the load, and the
//! RSS growth of cloning the resolved graph.
//!
//! `cargo bench -p webnn-weights-runtime --bench resolve`
//! (set `WEBNN_BENCH_DIR` to generate the models somewhere other than the temp folder,
//! `WEBNN_BENCH_RUNS` for the runs per measurement, default 3; fastest time and lowest
//! memory figures are reported). Files are generated first, so they are in the page cache
//! for every contender.
//!
//! Targets (issue 9): mapped load <= 0.1x the owned load time; RSS after a mapped load <=
//! the widened BF16 bytes (none in these models) + 64 MiB; cloning grows RSS < 16 MiB.

#[path = "../../bench/common.rs"]
mod common;

use std::path::Path;
use std::time::Instant;
use webnn_weights_runtime::{ConstInit, GraphJson};

fn resolved_bytes(graph: &GraphJson) -> u64 {
    graph
        .consts
        .values()
        .map(|c| match &c.init {
            ConstInit::InlineBytes { bytes } => bytes.len() as u64,
            _ => 0,
        })
        .sum()
}

/// Loads `graph` (owned or mapped), then clones it; prints
/// `seconds peak_kib bytes rss_after_load_kib clone_growth_kib`.
fn load_child(mapped: bool, graph: &str) -> Result<(), String> {
    let start = Instant::now();
    let graph = if mapped {
        webnn_weights_runtime::load_graph_mapped(graph)
    } else {
        webnn_weights_runtime::load_graph(graph)
    }
    .map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    let rss = common::rss_kib();
    let copy = std::hint::black_box(graph.clone());
    let grown = common::rss_kib().saturating_sub(rss);
    let bytes = resolved_bytes(&copy);
    println!("{seconds} {} {bytes} {rss} {grown}", common::peak_rss_kib());
    Ok(())
}

fn child(args: &[String]) -> Result<(), String> {
    match args {
        [what, graph] if what == "owned" => load_child(false, graph),
        [what, graph] if what == "mapped" => load_child(true, graph),
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
    let runs: usize = std::env::var("WEBNN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let temp = match std::env::var_os("WEBNN_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .map_err(|e| e.to_string())?;
    let models = common::generate(temp.path()).map_err(|e| e.to_string())?;
    println!("run-time load, {runs} runs each (fastest time, lowest memory figures)");
    for m in &models {
        let floor = common::measure(
            &exe,
            &[
                "floor".into(),
                m.sidecar.display().to_string(),
                m.data_offset.to_string(),
                common::MODEL_BYTES.to_string(),
            ],
            runs,
        )?;
        let graph = m.graph.display().to_string();
        let owned = common::measure(&exe, &["owned".into(), graph.clone()], runs)?;
        let mapped = common::measure(&exe, &["mapped".into(), graph], runs)?;
        for s in [&owned, &mapped] {
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
        for (name, s) in [
            ("load_graph (owned)", &owned),
            ("load_graph_mapped", &mapped),
        ] {
            println!(
                "{}; RSS after load {:>7.1} MiB; clone grows RSS {:>6.1} MiB",
                common::row(name, s),
                s.extra[0] as f64 / 1024.0,
                s.extra[1] as f64 / 1024.0
            );
        }
        println!(
            "mapped vs owned: time {:.3} ms vs {:.1} ms = {:.4}x (target <= 0.1x); RSS after mapped load {:.1} MiB (target <= 0 widened + 64 MiB); clone growth owned {:.1} MiB, mapped {:.1} MiB (target < 16 MiB)",
            mapped.seconds * 1e3,
            owned.seconds * 1e3,
            mapped.seconds / owned.seconds,
            mapped.extra[0] as f64 / 1024.0,
            owned.extra[1] as f64 / 1024.0,
            mapped.extra[1] as f64 / 1024.0,
        );
    }
    Ok(())
}
