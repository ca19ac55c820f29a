//! `webnn-weights resolve GRAPH [--weights P] [--manifest P] --output OUT`: inline every
//! `@weights` constant's bytes.

use super::{read_graph, write_output, CliError};
use std::path::PathBuf;
use webnn_weights_runtime::{resolve_external_weights, to_graph_json_string, to_webnn_text};

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
    /// The sidecar (SafeTensors archive or .weights blob), relative to the graph's folder.
    #[arg(long, value_name = "P")]
    pub weights: Option<PathBuf>,
    /// The manifest of a .weights blob, relative to the graph's folder.
    #[arg(long, value_name = "P")]
    pub manifest: Option<PathBuf>,
    /// The file to write; its extension (`.webnn` or `.json`) selects the format.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
}

/// Runs `resolve`.
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
                "{}: cannot tell the output format: the extension must be `.webnn` (text with @bytes) or `.json` (GraphJson with inlineBytes)",
                args.output.display()
            )))
        }
    };
    let mut graph = read_graph(&args.graph)?;
    let external = graph
        .consts
        .values()
        .filter(|c| matches!(c.init, webnn_weights_runtime::ConstInit::Weights { .. }))
        .count();
    resolve_external_weights(
        &mut graph,
        &args.graph,
        args.weights.as_deref(),
        args.manifest.as_deref(),
    )
    .map_err(|e| CliError::Input(e.to_string()))?;
    let content = if to_text {
        to_webnn_text(&graph)
            .map_err(|e| CliError::Input(format!("{}: {e}", args.graph.display())))?
    } else {
        let mut json = to_graph_json_string(&graph).map_err(|e| {
            CliError::Input(format!(
                "{}: cannot serialize as JSON: {e}",
                args.graph.display()
            ))
        })?;
        json.push('\n');
        json
    };
    write_output(&args.output, content.as_bytes())?;
    if !super::quiet() {
        eprintln!(
            "wrote {} ({external} external constant{} resolved)",
            args.output.display(),
            if external == 1 { "" } else { "s" }
        );
    }
    Ok(())
}
