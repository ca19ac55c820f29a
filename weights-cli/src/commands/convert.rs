//! `webnn-weights convert IN --output OUT`: `.webnn` text <-> GraphJson.

use super::{read_graph, write_output, CliError};
use std::path::PathBuf;
use webnn_weights_runtime::{to_graph_json_string, to_webnn_text};

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
}

/// Runs `convert`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let extension = args
        .output
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let to_text = match extension.as_deref() {
        Some("webnn") => true,
        Some("json") => false,
        _ => {
            return Err(CliError::Usage(format!(
                "{}: cannot tell the output format: the extension must be `.webnn` (text) or `.json` (GraphJson)",
                args.output.display()
            )))
        }
    };
    let graph = read_graph(&args.input)?;
    let content = if to_text {
        to_webnn_text(&graph)
            .map_err(|e| CliError::Input(format!("{}: {e}", args.input.display())))?
    } else {
        let mut json = to_graph_json_string(&graph).map_err(|e| {
            CliError::Input(format!(
                "{}: cannot serialize as JSON: {e}",
                args.input.display()
            ))
        })?;
        json.push('\n');
        json
    };
    write_output(&args.output, content.as_bytes())?;
    if !super::quiet() {
        eprintln!(
            "wrote {} ({} nodes) as {}",
            args.output.display(),
            graph.nodes.len(),
            if to_text { ".webnn text" } else { "GraphJson" }
        );
    }
    Ok(())
}
