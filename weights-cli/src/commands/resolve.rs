//! `webnn-weights resolve GRAPH [--weights P] [--manifest P] --output OUT`: inline every
//! `@weights` constant's bytes.

use super::{read_graph, CliError, CompactArg, GraphFormat};
use std::path::PathBuf;
use webnn_weights_runtime::ConstInit;

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
failure no output file is written.

The sidecar is mapped read-only (its pages are read as the output is written, and count as
cache the system can drop, not as the command's own memory); it must not be truncated or
rewritten while the command runs. --no-map reads the constants into memory instead, for a
sidecar that may change meanwhile. The output is the same either way.")]
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
    /// Read the constants into memory instead of mapping the sidecar (for a sidecar that
    /// may be rewritten while the command runs).
    #[arg(long)]
    pub no_map: bool,
}

/// Runs `resolve`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let format = GraphFormat::for_output(
        &args.output,
        "text with @bytes or GraphJson with inlineBytes",
    )?;
    format.check_style(args.compact.style(), &args.output)?;
    args.sidecar.check_exist(&args.graph)?;
    // The loader: the same rules, inlining and weights-lock verification (a lock beside
    // the graph) as an application's `load_graph`.
    let graph = read_graph(&args.graph)?;
    let external = graph
        .consts
        .values()
        .filter(|c| matches!(c.init, ConstInit::Weights { .. }))
        .count();
    let mut loader = webnn_weights_runtime::GraphLoader::from_graph(graph).graph_path(&args.graph);
    if let Some(weights) = args.sidecar.weights() {
        loader = loader.weights(weights);
    }
    if let Some(manifest) = args.sidecar.manifest() {
        loader = loader.manifest(manifest);
    }
    // Mapped by default: measured on a 512 MiB model, the same time and a fraction of
    // the command's resident memory (docs/benchmarks.md, "Zero-copy weights").
    if !args.no_map {
        loader = loader.mapped();
    }
    let graph = loader.load()?;
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
