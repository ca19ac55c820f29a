//! `webnn-weights emit-js GRAPH [-o FILE]`: the drop-in for webnn-graph's `emit-js`.

use super::web::lower;
use super::{read_graph, CliError};
use std::io::Write;
use std::path::PathBuf;
use webnn_weights_web::emit_js;

/// Arguments of `emit-js`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  webnn-weights emit-js model.webnn > model.js
  webnn-weights emit-js model.webnn -o site/model.js

The module webnn-graph's emit-js promises, correct by the WebNN table: `WeightsFile.load(
weightsUrl, manifestUrl)`, `getSlice(ref)`, `buffer`, and `buildGraph(context, weights)`
resolving to the MLGraph; pages written for webnn-graph's output work unchanged. Its
WeightsFile reads WGWT blobs and headerless ones (convert-onnx's) alike: manifest offsets are
absolute. For a module with SHA-256 checks, streamed loading and the blob written for it, use
`webnn-weights web`. See docs/web.md.")]
pub struct Args {
    /// The graph (`.webnn` text or GraphJson); its weights are a manifest-backed blob.
    pub graph: PathBuf,
    /// Write the module to FILE (atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `emit-js`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let graph = read_graph(&args.graph)?;
    let program = lower(&graph, &args.graph)?;
    let module = emit_js(&program, &super::shown_path(&args.graph));
    match &args.output {
        Some(path) => webnn_weights_atomic::write_file(path, |w| w.write_all(module.as_bytes()))
            .map_err(|e| CliError::Input(format!("{}: cannot write: {e}", path.display())))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(module.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| CliError::Input(format!("cannot write the module: {e}")))?;
        }
    }
    Ok(())
}
