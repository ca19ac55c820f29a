//! A graph embedded by webnn-weights, run by rustnn on ONNX Runtime.
//!
//! `models/mlp.webnn` and its SafeTensors weights are embedded at build time (build.rs). The
//! program hands the graph to rustnn three ways — the embedded graph through
//! `EmbeddedGraph::to_webnn_graph`, an owned run-time load through the `From` bridge, and
//! rustnn's own `load_graph_from_path` on the same files — computes each on rustnn's ONNX
//! Runtime backend, and checks that all three give the same output, bit for bit. Exits with
//! status 1 when they differ.

use rustnn::GraphInfo;
use std::path::Path;
use std::process::ExitCode;
use webnn_weights_runtime::{include_webnn_graph, load_graph, EmbeddedGraph};
use webnn_weights_rustnn_example::Error;

static MODEL: EmbeddedGraph = include_webnn_graph!("models/mlp.webnn");

/// The input of the example.
const X: [f32; 4] = [0.5, -1.0, 2.0, 0.25];

/// Computes `y` of `graph` for `X` on the backend rustnn picks (ONNX Runtime on the CPU).
fn compute(graph: GraphInfo) -> Result<Vec<f32>, Error> {
    let run = webnn_weights_rustnn_example::compute(graph, &X)?;
    let y = run.outputs.into_iter().find(|o| o.name == "y");
    Ok(y.ok_or("the graph has no output y")?.values)
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn run() -> Result<bool, Error> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/mlp.webnn");
    println!(
        "graph {:?}: {} nodes, {} constants embedded ({} bytes)",
        MODEL.name().unwrap_or("?"),
        MODEL.nodes().len(),
        MODEL.constants().len(),
        MODEL
            .constants()
            .iter()
            .map(|c| c.bytes().len())
            .sum::<usize>(),
    );

    // 1. The embedded graph: its weights copied once out of the binary.
    let embedded = compute(rustnn::webnn_json::from_graph_json_owned(
        MODEL.to_webnn_graph(),
    )?)?;
    // 2. An owned run-time load: its buffers move into webnn-graph's type.
    let owned = compute(rustnn::webnn_json::from_graph_json_owned(
        load_graph(&path)?.into(),
    )?)?;
    // 3. rustnn alone: webnn-graph's parser and resolver.
    let reference = compute(rustnn::load_graph_from_path(&path)?)?;

    println!("x = {X:?}");
    let mut same = true;
    for (way, y) in [
        ("rustnn's own load_graph_from_path", &reference),
        ("embedded, EmbeddedGraph::to_webnn_graph", &embedded),
        ("owned load_graph + From", &owned),
    ] {
        let equal = bits(y) == bits(&reference);
        same &= equal;
        println!("y = {y:?}  {way}{}", if equal { "" } else { "  DIFFERS" });
    }
    println!(
        "bit for bit the same on ONNX Runtime: {}",
        if same { "yes" } else { "no" }
    );
    Ok(same)
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
