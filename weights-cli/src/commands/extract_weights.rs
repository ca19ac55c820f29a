//! `extract-weights`: graph with inline bytes -> WGWT blob + manifest + graph with `@weights`.

use super::weight_tools_common::{distinct_outputs, note, stage_bytes, stage_graph};
use super::CliError;
use super::{CompactArg, GraphFormat};
use crate::progress::Bar;
use clap::Args;
use std::path::PathBuf;
use webnn_weights_runtime::read_graph_file;
use webnn_weights_tools::weight_tools::{extract_weights, Progress, Staging, ToolError};

/// Arguments of `extract-weights` (flags of `webnn-graph` 0.4.0).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  webnn-weights extract-weights --input model.webnn --output-dir out \\\n      --weights out/model.weights --manifest out/model.manifest.json \\\n      --output-graph out/model.json\n\n\
Every inline-bytes constant moves into the WGWT blob (name order, offsets from 8) and becomes \
@weights(\"NAME\"). --weights, --manifest and --output-graph are used as given (relative to the \
working directory); --output-dir is only created if missing: unlike webnn-graph, no \
OUTPUT_DIR/tensors staging folder is made. The output graph is GraphJson, or .webnn text when \
its name ends in .webnn. The three files appear together, only on success; a failure leaves \
the ones of an earlier run as they were."
)]
pub struct ExtractWeightsArgs {
    /// The graph (.webnn text or GraphJson, detected by content).
    #[arg(long, value_name = "GRAPH")]
    pub input: PathBuf,
    /// Output folder, created if missing (kept for compatibility; nothing is staged in it).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// The WGWT blob to write.
    #[arg(long, value_name = "WEIGHTS")]
    pub weights: PathBuf,
    /// The v1 manifest to write.
    #[arg(long, value_name = "MANIFEST")]
    pub manifest: PathBuf,
    /// The rewritten graph to write.
    #[arg(long, value_name = "GRAPH")]
    pub output_graph: PathBuf,
    #[command(flatten)]
    pub compact: CompactArg,
}

/// Runs `extract-weights`.
pub fn run(args: &ExtractWeightsArgs) -> Result<(), CliError> {
    distinct_outputs(&[
        ("--weights", &args.weights),
        ("--manifest", &args.manifest),
        ("--output-graph", &args.output_graph),
    ])?;
    GraphFormat::for_tool_output(&args.output_graph)
        .check_style(args.compact.style(), &args.output_graph)?;
    let graph = read_graph_file(&args.input).map_err(ToolError::from)?;
    let extraction = extract_weights(&graph, &args.input)?;
    let manifest_json = extraction.manifest.to_json().map_err(|e| {
        CliError::Input(format!(
            "{}: cannot serialize manifest: {e}",
            args.manifest.display()
        ))
    })?;

    let mut staging = Staging::new();
    if let Some(dir) = &args.output_dir {
        staging.ensure_dir(dir)?;
    }
    let mut bar = Bar::new("extracting");
    bar.start(extraction.payload_len());
    let blob = staging.stage(&args.weights, |w| {
        extraction.write_blob(w, &args.weights, &mut bar)
    });
    bar.finish();
    blob?;
    stage_bytes(&mut staging, &args.manifest, manifest_json.as_bytes())?;
    stage_graph(
        &mut staging,
        &args.output_graph,
        &extraction.graph,
        args.compact.style(),
    )?;
    staging.commit()?;
    note(format_args!(
        "Extracted {} tensors ({} bytes) to {} and {}\nWrote graph with weight references to: {}",
        extraction.manifest.tensors.len(),
        extraction.blob_len(),
        args.weights.display(),
        args.manifest.display(),
        args.output_graph.display()
    ));
    Ok(())
}
