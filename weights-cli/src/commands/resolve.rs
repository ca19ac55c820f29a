//! `webnn-weights resolve GRAPH [--weights P] [--manifest P] --output OUT`: inline every
//! `@weights` constant's bytes.

use super::{read_graph, write_output, CliError, GraphFormat};
use std::path::PathBuf;
use webnn_weights_runtime::resolve_external_weights;

/// Arguments of `resolve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  webnn-weights resolve model.webnn --output model.resolved.json
  webnn-weights resolve model.webnn --weights weights/model.bin --manifest weights/model.json -o out.webnn

Without --weights the sidecar is discovered beside the graph: <stem>.safetensors,
<stem>.weights, model.safetensors, model.weights; a .weights blob needs --manifest or
<stem>.manifest.json / manifest.json. --weights and --manifest are relative to the graph's
folder. OUT's extension selects the format: .json writes GraphJson with inlineBytes,
.webnn writes text with @bytes. On failure no output file is written.")]
pub struct Args {
    /// The graph to resolve (`.webnn` text or GraphJson).
    pub graph: PathBuf,
    #[command(flatten)]
    pub sidecar: super::SidecarArgs,
    /// The file to write; its extension (`.webnn` or `.json`) selects the format.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
}

/// Runs `resolve`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let format = GraphFormat::for_output(
        &args.output,
        "text with @bytes or GraphJson with inlineBytes",
    )?;
    let mut graph = read_graph(&args.graph)?;
    let external = graph
        .consts
        .values()
        .filter(|c| matches!(c.init, webnn_weights_runtime::ConstInit::Weights { .. }))
        .count();
    resolve_external_weights(
        &mut graph,
        &args.graph,
        args.sidecar.weights(),
        args.sidecar.manifest(),
    )
    .map_err(CliError::from)?;
    let content = format.render(&graph, &args.output)?;
    write_output(&args.output, &content)?;
    if !super::quiet() {
        eprintln!(
            "wrote {} ({external} external constant{} resolved)",
            args.output.display(),
            if external == 1 { "" } else { "s" }
        );
    }
    Ok(())
}
