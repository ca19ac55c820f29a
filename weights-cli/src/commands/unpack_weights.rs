//! `unpack-weights`: WGWT or headerless blob + manifest -> tensor files.

use super::weight_tools_common::note;
use super::CliError;
use crate::progress::Bar;
use clap::Args;
use std::path::PathBuf;
use webnn_weights_tools::weight_tools::{unpack_weights, BlobLayout};

/// Arguments of `unpack-weights` (flags of `webnn-graph` 0.4.0).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  webnn-weights unpack-weights --weights model.weights \\\n      --manifest model.manifest.json --output-dir tensors/\n\n\
Writes OUTPUT_DIR/NAME.bin for every tensor of the manifest. Offsets are absolute: blobs with \
a WGWT header (first tensor at 8) and headerless blobs (first tensor at 0) both work; a WGWT \
header is validated when the file starts with it and no tensor covers bytes 0..8. All files \
are staged and renamed into place together: on error nothing is left behind."
)]
pub struct UnpackWeightsArgs {
    /// The blob to read.
    #[arg(long, value_name = "WEIGHTS")]
    pub weights: PathBuf,
    /// The manifest addressing it (only byteOffset and byteLength are needed).
    #[arg(long, value_name = "MANIFEST")]
    pub manifest: PathBuf,
    /// Folder to write NAME.bin files into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
}

/// Runs `unpack-weights`.
pub fn run(args: &UnpackWeightsArgs) -> Result<(), CliError> {
    let summary = unpack_weights(
        &args.weights,
        &args.manifest,
        &args.output_dir,
        &mut Bar::new("unpacking"),
    )?;
    let layout = match summary.layout {
        BlobLayout::Wgwt => "WGWT v1",
        BlobLayout::Headerless => "headerless",
    };
    note(format_args!(
        "Unpacked {} tensors ({} bytes) from {} ({layout}) into {}",
        summary.tensors,
        summary.bytes,
        args.weights.display(),
        args.output_dir.display()
    ));
    Ok(())
}
