//! `webnn-weights convert IN --output OUT`: `.webnn` text <-> GraphJson.

use super::{read_graph, CliError, CompactArg, GraphFormat};
use std::path::PathBuf;

/// Arguments of `convert`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  webnn-weights convert model.webnn --output model.json
  webnn-weights convert model.json -o model.webnn

The input format is detected by content (`webnn_graph` = text, `{` = GraphJson); the
output format by OUT's extension, `.webnn` or `.json`. Weight references are copied, not
resolved. On failure no output file is written.")]
pub struct Args {
    /// The graph to read (`.webnn` text or GraphJson).
    pub input: PathBuf,
    /// The file to write; its extension (`.webnn` or `.json`) selects the format.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    #[command(flatten)]
    pub compact: CompactArg,
}

/// Runs `convert`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let format = GraphFormat::for_output(&args.output, "text or GraphJson")?;
    format.check_style(args.compact.style(), &args.output)?;
    let graph = read_graph(&args.input)?;
    format.write_file(&graph, args.compact.style(), &args.output)?;
    if !super::quiet() {
        eprintln!(
            "wrote {} ({}) as {}",
            args.output.display(),
            super::counted(graph.nodes.len(), "node"),
            if format == GraphFormat::Text {
                ".webnn text"
            } else {
                "GraphJson"
            }
        );
    }
    super::release_at_exit(graph);
    Ok(())
}
