//! `create-manifest`: tensor folder -> v1 manifest.

use super::weight_tools_common::note;
use super::CliError;
use clap::Args;
use std::path::PathBuf;
use webnn_weights_tools::weight_tools::create_manifest;

/// Arguments of `create-manifest` (flags of `webnn-graph` 0.4.0).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  webnn-weights create-manifest --input-dir tensors/ --output model.manifest.json\n\n\
One entry per INPUT_DIR/NAME.bin, in file-name order, offsets assigned from 8 (the layout \
pack-weights writes). NAME.meta.json needs only \"dataType\" and \"shape\", e.g. \
{\"dataType\": \"float32\", \"shape\": [2048, 1000]}; \"layout\" defaults to \"row-major\". Each \
.bin file's size must equal the element count times the element size (int4/uint4: ceil(n/2))."
)]
pub struct CreateManifestArgs {
    /// Folder of NAME.bin + NAME.meta.json files.
    #[arg(long, value_name = "DIR")]
    pub input_dir: PathBuf,
    /// The manifest to write.
    #[arg(short, long, value_name = "MANIFEST")]
    pub output: PathBuf,
    /// Byte order of the tensors; only `little` is supported.
    #[arg(long, default_value = "little", value_parser = ["little"])]
    pub endianness: String,
}

/// Runs `create-manifest`.
pub fn run(args: &CreateManifestArgs) -> Result<(), CliError> {
    let manifest = create_manifest(&args.input_dir, &args.endianness)?;
    manifest.write_to(&args.output)?;
    note(format_args!(
        "Created manifest with {} tensors: {}",
        manifest.tensors.len(),
        args.output.display()
    ));
    Ok(())
}
