//! Side by side: `webnn-weights resolve` of a generated 512 MiB SafeTensors model to
//! pretty JSON, compact JSON and `.webnn`, against webnn-graph 0.4.0's library resolving
//! the same graph and writing compact JSON (`resolve_external_weights` +
//! `serde_json::to_writer` through a `BufWriter`). Each run is a fresh process; wall time
//! and peak RSS come from `/usr/bin/time`. Checks the memory target: peak <= 1.1x the
//! resolved bytes + 64 MiB, for every output.
//!
//! Run through `bench/graph-outputs-vs-webnn-graph.sh`. Environment: `WEBNN_BENCH_DIR`
//! (where to generate the model and write the outputs: ~1 GiB plus up to 7.5 GiB of
//! pretty JSON, removed after each run; the script defaults to /dev/shm, where no time
//! goes to disk syncs), `WEBNN_BENCH_RUNS` (default 3).

#[path = "../../../common.rs"]
mod common;

use std::io::Write;
use std::path::Path;

struct Sample {
    seconds: f64,
    peak_mib: f64,
    out_bytes: u64,
}

/// Runs `program args` `runs` times under `/usr/bin/time`, removing `output` after each
/// run but the last; fastest wall time, lowest peak.
fn measure(program: &Path, args: &[&str], output: &Path, runs: usize) -> Result<Sample, String> {
    let mut best = Sample {
        seconds: f64::MAX,
        peak_mib: f64::MAX,
        out_bytes: 0,
    };
    for run in 0..runs {
        let _ = std::fs::remove_file(output);
        let (seconds, peak_mib) = common::timed_command(program, args)?;
        best.seconds = best.seconds.min(seconds);
        best.peak_mib = best.peak_mib.min(peak_mib);
        best.out_bytes = std::fs::metadata(output).map_err(|e| e.to_string())?.len();
        if run + 1 < runs {
            let _ = std::fs::remove_file(output);
        }
    }
    Ok(best)
}

fn theirs_resolve(graph: &str, output: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(graph).map_err(|e| e.to_string())?;
    let mut g: webnn_graph::ast::GraphJson =
        serde_json::from_str(&text).map_err(|e| e.to_string())?;
    drop(text);
    webnn_graph::resolve_external_weights(&mut g, Path::new(graph), None, None)
        .map_err(|e| e.to_string())?;
    let file = std::fs::File::create(output).map_err(|e| e.to_string())?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    serde_json::to_writer(&mut w, &g).map_err(|e| e.to_string())?;
    w.flush().map_err(|e| e.to_string())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [mode, graph, output] if mode == "theirs-resolve" => theirs_resolve(graph, output),
        [cli] => run(Path::new(cli)),
        _ => Err("usage: graph-outputs WEBNN_WEIGHTS_CLI".into()),
    }
}

fn run(cli: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let runs = common::runs(3);
    common::in_scratch("webnn-graph-outputs", |work| compare(cli, &exe, work, runs))
}

fn compare(cli: &Path, exe: &Path, work: &Path, runs: usize) -> Result<(), String> {
    let models = common::generate(work).map_err(|e| e.to_string())?;
    // Only the SafeTensors model is used; its blob twin is removed to save space.
    let _ = std::fs::remove_dir_all(work.join("blob"));
    // The generated graph has no name, which .webnn text requires: a named copy beside it
    // (discovery still finds model.safetensors).
    let unnamed = &models.first().ok_or("no model generated")?.graph;
    let named = unnamed.with_file_name("named.json");
    let text = std::fs::read_to_string(unnamed).map_err(|e| e.to_string())?;
    let text = text.replacen("\"version\":2,", "\"version\":2,\"name\":\"model\",", 1);
    std::fs::write(&named, text).map_err(|e| e.to_string())?;
    let model = named.display().to_string();
    let resolved_mib = common::MODEL_BYTES as f64 / (1u64 << 20) as f64;
    let budget = 1.1 * resolved_mib + 64.0;
    println!(
        "resolve of a {resolved_mib:.0} MiB SafeTensors model ({} tensors), {runs} runs each (fastest wall time, lowest peak RSS of the whole process); memory target: peak <= 1.1x resolved + 64 MiB = {budget:.0} MiB",
        common::TENSORS
    );
    let out = |name: &str| work.join(name);

    let theirs_out = out("theirs.json");
    let theirs = measure(
        exe,
        &["theirs-resolve", &model, &theirs_out.display().to_string()],
        &theirs_out,
        runs,
    )?;
    let row = |name: &str, s: &Sample| {
        format!(
            "{name:<40} {:>8.3} s {:>8.1} MiB peak {:>9.1} MB out",
            s.seconds,
            s.peak_mib,
            s.out_bytes as f64 / 1e6
        )
    };
    println!(
        "{}",
        row("webnn-graph 0.4.0 library, compact JSON", &theirs)
    );

    let cases: [(&str, &str, bool); 3] = [
        ("compact JSON (--compact)", "ours.c.json", true),
        ("pretty JSON", "ours.json", false),
        (".webnn text", "ours.webnn", false),
    ];
    let mut all_within = true;
    for (name, file, compact) in cases {
        let path = out(file);
        let path_s = path.display().to_string();
        let mut args = vec!["-q", "resolve", &model, "-o", &path_s];
        if compact {
            args.push("--compact");
        }
        let s = measure(cli, &args, &path, runs)?;
        if compact {
            let same = std::fs::read(&path).map_err(|e| e.to_string())?
                == std::fs::read(&theirs_out).map_err(|e| e.to_string())?;
            if !same {
                return Err("compact output differs from webnn-graph's".into());
            }
        }
        let within = s.peak_mib <= budget;
        all_within &= within;
        println!(
            "{}   {:.2}x time of webnn-graph, peak {:.3}x resolved{}{}",
            row(&format!("webnn-weights {name}"), &s),
            s.seconds / theirs.seconds,
            s.peak_mib / resolved_mib,
            if within {
                ""
            } else {
                "  OVER THE MEMORY TARGET"
            },
            if compact {
                " (byte-identical to webnn-graph's)"
            } else {
                ""
            }
        );
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_file(&theirs_out);
    println!(
        "memory target {}",
        if all_within {
            "met for every output"
        } else {
            "MISSED"
        }
    );
    Ok(())
}
