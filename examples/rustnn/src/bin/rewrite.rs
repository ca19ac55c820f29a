//! Rewrites a WebNN graph with rustnn 0.6.0's own writer (`web/vgg16/make.sh`).
//!
//! ```text
//! rewrite IN.webnn OUT.webnn     # OUT.webnn + OUT.safetensors, written by rustnn
//! ```
//!
//! `IN.webnn` is loaded by rustnn (`load_graph_from_path`: webnn-graph's parser and resolver,
//! then rustnn's recorder and shape inference). rustnn's writer (`webnn_save.rs`) is reachable
//! only through `MLGraphBuilder::rustnn_save_webnn`, which saves what a builder recorded, and a
//! builder cannot be made from a loaded `GraphInfo` (the recorder is private). So the loaded
//! graph is replayed into `MLGraphBuilder::new_uncompiled()` — inputs by name, constants with
//! their bytes, every operation with its options, in the loaded order — and saved. Operations
//! this model does not use are refused with their name.

use rustnn::graph::{get_static_or_max_size, GraphInfo, OperandKind};
use rustnn::mlcontext::{MLNamedOperands, MLOperand, MLOperandDescriptor};
use rustnn::mlgraphbuilder::MLGraphBuilder;
use rustnn::operator_enums::MLOperandDataType;
use rustnn::operators::Operation;
use std::collections::HashMap;
use std::process::ExitCode;

type Error = Box<dyn std::error::Error>;

fn descriptor(graph: &GraphInfo, id: u32) -> Result<MLOperandDescriptor, Error> {
    let operand = &graph.operands[id as usize];
    let data_type = MLOperandDataType::try_from(operand.descriptor.data_type)?;
    let shape = operand
        .descriptor
        .shape
        .iter()
        .map(|d| u64::from(get_static_or_max_size(d)))
        .collect();
    Ok(MLOperandDescriptor::new(data_type, shape))
}

/// Replays `graph` into a fresh recording builder; returns it with the graph's named outputs.
fn replay(
    graph: &GraphInfo,
) -> Result<(MLGraphBuilder<'static, 'static>, Vec<(String, MLOperand)>), Error> {
    let mut b = MLGraphBuilder::new_uncompiled();
    let mut map: HashMap<u32, MLOperand> = HashMap::new();
    for (idx, operand) in graph.operands.iter().enumerate() {
        let id = idx as u32;
        match operand.kind {
            OperandKind::Input => {
                let name = operand.name.as_deref().ok_or("an input without a name")?;
                map.insert(id, b.input(name, &descriptor(graph, id)?)?);
            }
            OperandKind::Constant => {
                let data = graph
                    .constant_operand_ids_to_handles
                    .get(&id)
                    .ok_or_else(|| format!("constant {id} without data"))?;
                map.insert(
                    id,
                    b.constant_from_bytes(&descriptor(graph, id)?, data.data.clone())?,
                );
            }
            _ => {}
        }
    }
    let get = |map: &HashMap<u32, MLOperand>, id: u32| -> Result<MLOperand, Error> {
        map.get(&id)
            .copied()
            .ok_or_else(|| format!("operand {id} used before it is defined").into())
    };
    let index = |map: &HashMap<u32, MLOperand>, id: Option<u32>| -> Result<Option<u32>, Error> {
        id.map(|id| get(map, id).map(MLOperand::rustnn_index))
            .transpose()
    };
    for op in &graph.operations {
        let out = match op.clone() {
            Operation::Add {
                a, b: c, options, ..
            } => b.add_with_options(get(&map, a)?, get(&map, c)?, options.unwrap_or_default())?,
            Operation::Sub {
                a, b: c, options, ..
            } => b.sub_with_options(get(&map, a)?, get(&map, c)?, options.unwrap_or_default())?,
            Operation::Mul {
                a, b: c, options, ..
            } => b.mul_with_options(get(&map, a)?, get(&map, c)?, options.unwrap_or_default())?,
            Operation::Div {
                a, b: c, options, ..
            } => b.div_with_options(get(&map, a)?, get(&map, c)?, options.unwrap_or_default())?,
            Operation::Matmul {
                a, b: c, options, ..
            } => {
                b.matmul_with_options(get(&map, a)?, get(&map, c)?, options.unwrap_or_default())?
            }
            Operation::Gemm {
                a, b: c, options, ..
            } => {
                let mut options = options.unwrap_or_default();
                options.c = index(&map, options.c)?;
                b.gemm_with_options(get(&map, a)?, get(&map, c)?, options)?
            }
            Operation::Conv2d {
                input,
                filter,
                options,
                ..
            } => {
                let mut options = options.unwrap_or_default();
                options.bias = index(&map, options.bias)?;
                b.conv2d_with_options(get(&map, input)?, get(&map, filter)?, options)?
            }
            Operation::Relu { input, options, .. } => {
                b.relu_with_options(get(&map, input)?, options.unwrap_or_default())?
            }
            Operation::Sigmoid { input, options, .. } => {
                b.sigmoid_with_options(get(&map, input)?, options.unwrap_or_default())?
            }
            Operation::Tanh { input, options, .. } => {
                b.tanh_with_options(get(&map, input)?, options.unwrap_or_default())?
            }
            Operation::Transpose { input, options, .. } => {
                b.transpose_with_options(get(&map, input)?, options.unwrap_or_default())?
            }
            Operation::Reshape {
                input,
                new_shape,
                options,
                ..
            } => {
                b.reshape_with_options(get(&map, input)?, new_shape, options.unwrap_or_default())?
            }
            Operation::Softmax {
                input,
                axis,
                options,
                ..
            } => b.softmax_with_options(get(&map, input)?, axis, options.unwrap_or_default())?,
            Operation::MaxPool2d { input, options, .. } => {
                b.max_pool2d_with_options(get(&map, input)?, options.unwrap_or_default())?
            }
            Operation::AveragePool2d { input, options, .. } => {
                b.average_pool2d_with_options(get(&map, input)?, options.unwrap_or_default())?
            }
            Operation::Concat {
                inputs,
                axis,
                options,
                ..
            } => {
                let inputs = inputs
                    .iter()
                    .map(|&i| get(&map, i))
                    .collect::<Result<Vec<_>, _>>()?;
                b.concat_with_options(&inputs, axis, options.unwrap_or_default())?
            }
            other => {
                return Err(format!(
                    "operation {} is not replayed by this program",
                    other.op_type()
                )
                .into())
            }
        };
        let outputs = op.outputs();
        if outputs.len() != 1 {
            return Err(format!("{}: {} outputs, expected 1", op.op_type(), outputs.len()).into());
        }
        map.insert(outputs[0], out);
    }
    let mut named = Vec::new();
    for &id in &graph.output_operands {
        let name = graph.operands[id as usize]
            .name
            .clone()
            .ok_or("an output without a name")?;
        named.push((name, get(&map, id)?));
    }
    Ok((b, named))
}

fn run() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        return Err(
            "usage: rewrite IN.webnn OUT.webnn (writes OUT.webnn and OUT.safetensors)".into(),
        );
    };
    let graph = rustnn::load_graph_from_path(input)?;
    let (builder, named) = replay(&graph)?;
    let mut outputs = MLNamedOperands::new();
    for (name, operand) in &named {
        outputs.insert(name.as_str(), *operand);
    }
    builder.rustnn_save_webnn(&outputs, output)?;
    println!(
        "{input}: {} operands, {} operations loaded by rustnn 0.6.0; rewritten by its writer to {output} and {}",
        graph.operands.len(),
        graph.operations.len(),
        std::path::Path::new(output).with_extension("safetensors").display()
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
