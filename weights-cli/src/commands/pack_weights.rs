//! `pack-weights`: tensor files + v1 manifest -> WGWT blob.

use super::weight_tools_common::note;
use super::CliError;
use crate::progress::Bar;
use clap::Args;
use std::path::PathBuf;
use webnn_weights_tools::weight_tools::pack_weights;

/// Arguments of `pack-weights` (flags of `webnn-graph` 0.4.0).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  webnn-weights pack-weights --manifest model.manifest.json \\\n      --input-dir tensors/ --output model.weights\n\n\
The manifest must be format wg-weights-manifest, version 1, endianness little, with tensors \
contiguous from offset 8 in offset order; each byteLength must equal the element count times \
the element size (int4/uint4: ceil(n/2) bytes) and the size of INPUT_DIR/NAME.bin. Everything \
is checked before the blob is written; the blob appears only when complete."
)]
pub struct PackWeightsArgs {
    /// The v1 manifest that lays out the blob.
    #[arg(long, value_name = "MANIFEST")]
    pub manifest: PathBuf,
    /// Folder holding NAME.bin for every tensor of the manifest.
    #[arg(long, value_name = "DIR")]
    pub input_dir: PathBuf,
    /// The WGWT blob to write.
    #[arg(short, long, value_name = "WEIGHTS")]
    pub output: PathBuf,
}

/// Runs `pack-weights`.
pub fn run(args: &PackWeightsArgs) -> Result<(), CliError> {
    let summary = pack_weights(
        &args.manifest,
        &args.input_dir,
        &args.output,
        &mut Bar::new("packing"),
    )?;
    note(format_args!(
        "Packed {} tensors ({} bytes) into {}",
        summary.tensors,
        summary.bytes,
        args.output.display()
    ));
    Ok(())
}
