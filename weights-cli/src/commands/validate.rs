//! `webnn-weights validate GRAPH`: structural checks, every problem reported.

use super::{counted, read_graph, CliError};
use std::path::PathBuf;
use webnn_weights_runtime::ConstInit;

/// Arguments of `validate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Example:
  webnn-weights validate model.webnn

Checks format and version, unique names, that every node input is defined before the
node and every output is defined, inline byte lengths and scalar values. Weight files are
not opened. An ONNX model (`.onnx`) is converted as by `convert-onnx` with default options:
every problem of the conversion is listed, then the converted graph is checked the same way
and against the WebNN table. Prints a summary on stdout when the graph is valid; otherwise lists every
problem on stderr and exits with status 1.")]
pub struct Args {
    /// The graph to check (`.webnn` text or GraphJson), or an ONNX model (`.onnx`).
    pub graph: PathBuf,
    #[command(flatten)]
    pub model: super::convert_onnx::ModelArgs,
}

/// Runs `validate`.
pub fn run(args: &Args) -> Result<(), CliError> {
    super::no_model_flags(&args.graph, &args.model)?;
    let graph = if super::is_onnx(&args.graph) {
        let graph = super::read_onnx(&args.graph, None, &args.model)?.graph;
        super::web::lower(&graph, &args.graph)?;
        graph
    } else {
        read_graph(&args.graph)?
    };
    if let Err(e) = graph.validate() {
        let count = e.problems().len();
        let mut message = format!(
            "{}: invalid graph: {count} problem{}",
            args.graph.display(),
            if count == 1 { "" } else { "s" }
        );
        for problem in e.problems() {
            message.push_str("\n  ");
            message.push_str(problem);
        }
        return Err(CliError::Input(message));
    }
    let external = graph
        .consts
        .values()
        .filter(|c| matches!(c.init, ConstInit::Weights { .. }))
        .count();
    println!(
        "{}: OK: graph {} v{}{}, {}, {} ({}), {}, {}",
        args.graph.display(),
        match &graph.name {
            Some(name) => format!("{name:?}"),
            None => "(unnamed)".to_string(),
        },
        graph.version,
        if graph.quantized { " @quantized" } else { "" },
        counted(graph.inputs.len(), "input"),
        counted(graph.consts.len(), "constant"),
        counted(external, "external weight"),
        counted(graph.nodes.len(), "node"),
        counted(graph.outputs.len(), "output")
    );
    super::release_at_exit(graph);
    Ok(())
}
