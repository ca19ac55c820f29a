//! What the example's programs share: a float32 WebNN graph of one input computed by rustnn
//! on ONNX Runtime, its outputs read back by name.

use rustnn::graph::{get_static_or_max_size, GraphInfo};
use rustnn::mlcontext::{
    MLContext, MLContextOptions, MLNamedTensors, MLPowerPreference, MLTensorDescriptor,
};
use rustnn::operator_enums::MLOperandDataType;
use std::time::{Duration, Instant};

/// Every error of the example's programs, printed as `error: …`.
pub type Error = Box<dyn std::error::Error>;

/// One output of a computed graph.
pub struct Output {
    pub name: String,
    pub shape: Vec<u64>,
    pub values: Vec<f32>,
}

/// The outputs of one computation, in the graph's order, and how long rustnn took to build
/// the graph and to compute it.
pub struct Computed {
    pub outputs: Vec<Output>,
    pub built: Duration,
    pub computed: Duration,
}

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

/// The little-endian float32 values of the file at `path`.
pub fn read_f32(path: &str) -> Result<Vec<f32>, Error> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "{path}: {} bytes, not a whole number of float32",
            bytes.len()
        )
        .into());
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Computes `graph`, whose one input is float32, for the input `x` on the backend rustnn
/// picks (ONNX Runtime on the CPU); every output float32.
pub fn compute(graph: GraphInfo, x: &[f32]) -> Result<Computed, Error> {
    let [input_id] = graph.input_operands.as_slice() else {
        return Err("the graph must have exactly one input".into());
    };
    let input_name = name(&graph, *input_id)?;
    let input_shape = shape(&graph, *input_id);
    let count: u64 = input_shape.iter().product();
    if x.len() as u64 != count {
        return Err(format!(
            "{} floats, input {input_name} {input_shape:?} needs {count}",
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
    context.write_tensor(&x_tensor, x)?;
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
    let mut read = Vec::with_capacity(outputs.len());
    for ((name, shape), tensor) in outputs.into_iter().zip(&out_tensors) {
        let mut values = vec![0f32; shape.iter().product::<u64>() as usize];
        context.read_tensor(tensor, &mut values)?;
        read.push(Output {
            name,
            shape,
            values,
        });
    }
    Ok(Computed {
        outputs: read,
        built,
        computed,
    })
}
