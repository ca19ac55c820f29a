//! Side by side: the whole `webnn-weights convert` command against webnn-graph 0.4.0's
//! parse + serialize (`parse_wg_text` + `serde_json::to_string_pretty` + write, what its
//! `parse` command does), on a generated `.webnn` graph of 100k nodes; plus our `validate`
//! and the other conversions, each a fresh process. Wall time and peak RSS (`/usr/bin/time`).
//!
//! Run through `bench/graph-text-vs-webnn-graph.sh`. Environment: `WEBNN_BENCH_DIR`,
//! `WEBNN_BENCH_RUNS` (default 5; fastest time and lowest peak are reported).

#[path = "../../../common.rs"]
mod common;

use std::fmt::Write as _;
use std::path::Path;

const NODES: usize = 100_000;

/// The graph of `weights-runtime/benches/parse.rs`, in the canonical text layout: 1000
/// constants of the three kinds, then a chain of 100k nodes with options, every 10th a
/// two-output split with nested options.
fn generate() -> String {
    let mut t = String::with_capacity(8 << 20);
    t.push_str("webnn_graph \"bench\" v2 {\n  inputs {\n    x: f32[dyn(\"batch\", 8), 256];\n  }\n\n  consts {\n");
    let mut names: Vec<usize> = (0..1000).collect();
    names.sort_by_key(|c| format!("c{c}"));
    for c in names {
        match c % 3 {
            0 => {
                let _ = writeln!(
                    t,
                    "    c{c}: f32[] @weights(\"encoder.layers.{c}.weight\");"
                );
            }
            1 => {
                let _ = writeln!(t, "    c{c}: f32[] @scalar({:?});", 0.001 * c as f64);
            }
            _ => {
                let bytes: Vec<String> = (0..16).map(|b| (b * c % 256).to_string()).collect();
                let _ = writeln!(t, "    c{c}: u8[16] @bytes([{}]);", bytes.join(", "));
            }
        }
    }
    t.push_str("  }\n\n  nodes {\n");
    let mut previous = "x".to_string();
    for i in 0..NODES {
        if i % 10 == 9 {
            let _ = writeln!(
                t,
                "    [n{i}, n{i}_b] = split({previous}, axis=1, metadata={{enabled: true, kind: \"split\", tags: [\"a\", \"b\"]}}, splits=[128, 128]);"
            );
        } else {
            let op = ["add", "mul", "relu", "matmul"][i % 4];
            let _ = writeln!(
                t,
                "    n{i} = {op}({previous}, c{}, alpha=0.5, axes=[0, 1]);",
                i % 1000
            );
        }
        previous = format!("n{i}");
    }
    let _ = write!(t, "  }}\n\n  outputs {{ {previous}; }}\n}}\n");
    t
}

struct Sample {
    seconds: f64,
    peak_mib: f64,
}

/// Runs `program args` `runs` times under `/usr/bin/time`; fastest wall time, lowest peak.
fn measure(program: &Path, args: &[&str], runs: usize) -> Result<Sample, String> {
    let mut best = Sample {
        seconds: f64::MAX,
        peak_mib: f64::MAX,
    };
    for _ in 0..runs {
        let (seconds, peak_mib) = common::timed_command(program, args)?;
        best.seconds = best.seconds.min(seconds);
        best.peak_mib = best.peak_mib.min(peak_mib);
    }
    Ok(best)
}

fn theirs_convert(input: &str, output: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(input).map_err(|e| e.to_string())?;
    let graph = webnn_graph::parser::parse_wg_text(&text).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&graph).map_err(|e| e.to_string())?;
    std::fs::write(output, json).map_err(|e| e.to_string())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [mode, input, output] if mode == "theirs-convert" => theirs_convert(input, output),
        [mode, output] if mode == "generate" => {
            std::fs::write(output, generate()).map_err(|e| e.to_string())
        }
        [cli] => run(Path::new(cli)),
        _ => Err("usage: graph-text WEBNN_WEIGHTS_CLI | graph-text generate OUT.webnn".into()),
    }
}

fn run(cli: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let runs = common::runs(5);
    common::in_scratch("webnn-graph-text", |work| compare(cli, &exe, work, runs))
}

fn compare(cli: &Path, exe: &Path, work: &Path, runs: usize) -> Result<(), String> {
    let text = generate();
    let input = work.join("big.webnn");
    std::fs::write(&input, &text).map_err(|e| e.to_string())?;
    let p = |name: &str| work.join(name).display().to_string();
    let input_s = input.display().to_string();

    // The outputs must agree before anything is timed.
    theirs_convert(&input_s, &p("theirs.json"))?;
    measure(cli, &["-q", "convert", &input_s, "-o", &p("ours.json")], 1)?;
    let (ours, theirs) = (
        std::fs::read(p("ours.json")).map_err(|e| e.to_string())?,
        std::fs::read(p("theirs.json")).map_err(|e| e.to_string())?,
    );
    if ours != theirs {
        return Err("convert output differs from webnn-graph's".into());
    }
    println!(
        ".webnn -> GraphJson, {NODES} nodes: text {:.2} MB, pretty JSON {:.2} MB (byte-identical to webnn-graph's); {runs} runs each, fastest wall time and lowest peak RSS of the whole process",
        text.len() as f64 / 1e6,
        ours.len() as f64 / 1e6
    );
    let theirs = measure(exe, &["theirs-convert", &input_s, &p("theirs.json")], runs)?;
    let cases: [(&str, Vec<String>); 5] = [
        (
            "convert -> pretty JSON",
            vec![
                "convert".into(),
                input_s.clone(),
                "-o".into(),
                p("ours.json"),
            ],
        ),
        (
            "convert -> compact JSON",
            vec![
                "convert".into(),
                input_s.clone(),
                "-o".into(),
                p("ours.c.json"),
                "--compact".into(),
            ],
        ),
        (
            "convert -> .webnn",
            vec![
                "convert".into(),
                input_s.clone(),
                "-o".into(),
                p("ours.webnn"),
            ],
        ),
        (
            "convert JSON -> .webnn",
            vec![
                "convert".into(),
                p("ours.json"),
                "-o".into(),
                p("back.webnn"),
            ],
        ),
        ("validate", vec!["validate".into(), input_s.clone()]),
    ];
    println!(
        "{:<44} {:>8.3} s {:>8.1} MiB peak",
        "webnn-graph 0.4.0 parse + to_string_pretty", theirs.seconds, theirs.peak_mib
    );
    for (name, args) in &cases {
        let mut full: Vec<&str> = vec!["-q"];
        full.extend(args.iter().map(String::as_str));
        let s = measure(cli, &full, runs)?;
        println!(
            "{:<44} {:>8.3} s {:>8.1} MiB peak   {:.2}x time of webnn-graph",
            format!("webnn-weights {name}"),
            s.seconds,
            s.peak_mib,
            s.seconds / theirs.seconds
        );
    }
    Ok(())
}
