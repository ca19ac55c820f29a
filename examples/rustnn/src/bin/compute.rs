//! Computes a float32 WebNN graph with rustnn 0.6.0 on ONNX Runtime (`web/vgg16/make.sh`).
//!
//! ```text
//! compute GRAPH.webnn INPUT.bin OUT_DIR
//! ```
//!
//! The graph is loaded by rustnn's own `load_graph_from_path`; its one input is fed the
//! little-endian float32 bytes of `INPUT.bin`; each output `name` is written to
//! `OUT_DIR/name.bin` (little-endian float32). Needs `ORT_DYLIB_PATH` (see `run.sh`).

use rustnn::graph::{get_static_or_max_size, GraphInfo};
use rustnn::mlcontext::{
    MLContext, MLContextOptions, MLNamedTensors, MLPowerPreference, MLTensorDescriptor,
};
use rustnn::operator_enums::MLOperandDataType;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

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

fn run() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [graph_path, input_path, out_dir] = args.as_slice() else {
        return Err("usage: compute GRAPH.webnn INPUT.bin OUT_DIR".into());
    };
    let start = Instant::now();
    let graph = rustnn::load_graph_from_path(graph_path)?;
    let loaded = start.elapsed();
    let [input_id] = graph.input_operands.as_slice() else {
        return Err("the graph must have exactly one input".into());
    };
    let input_id = *input_id;
    let input_name = name(&graph, input_id)?;
    let input_shape = shape(&graph, input_id);
    let bytes = std::fs::read(input_path)?;
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
    for ((name, shape), tensor) in outputs.iter().zip(&out_tensors) {
        let mut y = vec![0f32; shape.iter().product::<u64>() as usize];
        context.read_tensor(tensor, &mut y)?;
        let bytes: Vec<u8> = y.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(Path::new(out_dir).join(format!("{name}.bin")), bytes)?;
        println!("rustnn {graph_path}: {name} {shape:?} = {y:?}");
    }
    println!(
        "rustnn timings: load {:.0} ms, build {:.0} ms, compute {:.0} ms",
        loaded.as_secs_f64() * 1e3,
        built.as_secs_f64() * 1e3,
        computed.as_secs_f64() * 1e3
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
