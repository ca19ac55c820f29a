//! Run-time resolve benchmark (not a test): a generated 512 MiB SafeTensors model and a
//! 512 MiB WGWT blob, each resolved by `load_graph` in a fresh child process, beside the
//! floor (a child that reads the same bytes once into fresh memory).
//!
//! `cargo bench -p webnn-weights-runtime --bench resolve`
//! (set `WEBNN_BENCH_DIR` to generate the models somewhere other than the temp folder,
//! `WEBNN_BENCH_RUNS` for the runs per measurement, default 3; fastest time and lowest
//! peak are reported). Files are generated first, so they are in the page cache for
//! every contender.

#[path = "../../bench/common.rs"]
mod common;

use std::path::Path;
use std::time::Instant;

fn child(args: &[String]) -> Result<(), String> {
    match args {
        [what, graph] if what == "resolve" => {
            let start = Instant::now();
            let graph = webnn_weights_runtime::load_graph(graph).map_err(|e| e.to_string())?;
            let bytes: u64 = graph
                .consts
                .values()
                .map(|c| match &c.init {
                    webnn_weights_runtime::ConstInit::InlineBytes { bytes } => bytes.len() as u64,
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
    println!("run-time resolve, {runs} runs each (fastest time, lowest peak RSS)");
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
        let ours = common::measure(
            &exe,
            &["resolve".into(), m.graph.display().to_string()],
            runs,
        )?;
        if ours.bytes != common::MODEL_BYTES {
            return Err(format!(
                "resolved {} bytes, expected {}",
                ours.bytes,
                common::MODEL_BYTES
            ));
        }
        println!("\n{}", m.label);
        println!("{}", common::row("floor (one read)", &floor));
        println!("{}", common::row("load_graph (resolve)", &ours));
        println!(
            "ratios: time {:.2}x floor; peak memory {:.2}x floor, {:.3}x resolved bytes",
            ours.seconds / floor.seconds,
            ours.peak_kib as f64 / floor.peak_kib as f64,
            ours.peak_kib as f64 * 1024.0 / common::MODEL_BYTES as f64
        );
    }
    Ok(())
}
