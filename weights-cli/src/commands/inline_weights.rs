//! `inline-weights`: graph with `@weights` + blob + manifest -> graph with inline bytes.

use super::weight_tools_common::note;
use super::CliError;
use super::{check_explicit_path, CompactArg, GraphFormat, RelativeTo};
use crate::progress::Bar;
use clap::Args;
use std::path::PathBuf;
use webnn_weights_runtime::read_graph_file;
use webnn_weights_tools::weight_tools::{inline_weights, ToolError};

/// Arguments of `inline-weights` (flags of `webnn-graph` 0.4.0).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  webnn-weights inline-weights --input model.json --weights model.weights \\\n      --manifest model.manifest.json --output model.inline.json\n\n\
Replaces every @weights constant with its bytes. Offsets are absolute, so WGWT blobs and \
headerless blobs both work (a WGWT header is validated when present); each tensor's length \
must match its declaration (int4/uint4: ceil(n/2) bytes); only referenced ranges are read. \
Paths are relative to the working directory. The output is GraphJson, or .webnn text when its \
name ends in .webnn."
)]
pub struct InlineWeightsArgs {
    /// The graph (.webnn text or GraphJson, detected by content).
    #[arg(long, value_name = "GRAPH")]
    pub input: PathBuf,
    /// The blob holding the tensors.
    #[arg(long, value_name = "WEIGHTS")]
    pub weights: PathBuf,
    /// The manifest addressing the blob.
    #[arg(long, value_name = "MANIFEST")]
    pub manifest: PathBuf,
    /// The graph to write.
    #[arg(short, long, value_name = "GRAPH")]
    pub output: PathBuf,
    #[command(flatten)]
    pub compact: CompactArg,
}

/// Runs `inline-weights`.
pub fn run(args: &InlineWeightsArgs) -> Result<(), CliError> {
    GraphFormat::for_tool_output(&args.output).check_style(args.compact.style(), &args.output)?;
    for (flag, path) in [("--weights", &args.weights), ("--manifest", &args.manifest)] {
        check_explicit_path(&args.input, flag, path, RelativeTo::WorkingDirectory)?;
    }
    let graph = read_graph_file(&args.input).map_err(ToolError::from)?;
    let inlined = inline_weights(
        &graph,
        &args.input,
        &args.weights,
        &args.manifest,
        &mut Bar::new("inlining"),
    )?;
    GraphFormat::for_tool_output(&args.output).write_file(
        &inlined,
        args.compact.style(),
        &args.output,
    )?;
    note(format_args!(
        "Wrote graph with inline weights to: {}",
        args.output.display()
    ));
    Ok(())
}
