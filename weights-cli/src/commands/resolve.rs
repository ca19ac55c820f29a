//! `webnn-weights resolve GRAPH [--weights P] [--manifest P] --output OUT`: inline every
//! `@weights` constant's bytes.

use super::{read_graph, CliError, CompactArg, GraphFormat};
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
folder. OUT's extension selects the format: .json writes GraphJson with inlineBytes (pretty:
~14.5 bytes of output per weight byte; --compact: ~3.6), .webnn writes text with @bytes
(~4.6). The output streams to disk: memory is the resolved graph plus a 1 MiB buffer. On
failure no output file is written.")]
pub struct Args {
    /// The graph to resolve (`.webnn` text or GraphJson).
    pub graph: PathBuf,
    #[command(flatten)]
    pub sidecar: super::SidecarArgs,
    /// The file to write; its extension (`.webnn` or `.json`) selects the format.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    #[command(flatten)]
    pub compact: CompactArg,
}

/// Runs `resolve`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let format = GraphFormat::for_output(
        &args.output,
        "text with @bytes or GraphJson with inlineBytes",
    )?;
    format.check_style(args.compact.style(), &args.output)?;
    args.sidecar.check_exist(&args.graph)?;
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
    format.write_file(&graph, args.compact.style(), &args.output)?;
    if !super::quiet() {
        eprintln!(
            "wrote {} ({external} external constant{} resolved)",
            args.output.display(),
            if external == 1 { "" } else { "s" }
        );
    }
    super::release_at_exit(graph);
    Ok(())
}
