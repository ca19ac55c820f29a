//! The `webnn-weights` command: resolve, inspect, convert and validate WebNN graphs with
//! external weights, convert them to SafeTensors, and the WGWT blob tools compatible with
//! `webnn-graph` 0.4.0.

mod commands;
mod progress;

use clap::{Parser, Subcommand};
use commands::{
    create_manifest, extract_weights, inline_weights, pack_weights, to_safetensors,
    unpack_weights, CliError,
};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "webnn-weights",
    version,
    about = "WebNN graphs with external weights: SafeTensors conversion and the WGWT blob tools",
    after_help = "Exit status: 0 on success, 1 on bad input, 2 on a malformed command line.\n\
                  Run `webnn-weights COMMAND --help` for an example of each command."
)]
struct Cli {
    /// Print nothing on success and no progress bars.
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert any resolvable graph's weights into one SafeTensors archive.
    ToSafetensors(to_safetensors::ToSafetensorsArgs),
    /// Pack tensor files into a WGWT blob laid out by a v1 manifest.
    PackWeights(pack_weights::PackWeightsArgs),
    /// Unpack a WGWT or headerless blob into one file per tensor.
    UnpackWeights(unpack_weights::UnpackWeightsArgs),
    /// Create a v1 manifest for a folder of tensor files.
    CreateManifest(create_manifest::CreateManifestArgs),
    /// Move a graph's inline bytes into a WGWT blob + manifest.
    ExtractWeights(extract_weights::ExtractWeightsArgs),
    /// Replace a graph's @weights references with inline bytes from a blob.
    InlineWeights(inline_weights::InlineWeightsArgs),
}

fn run(cli: Cli) -> Result<(), CliError> {
    let quiet = cli.quiet;
    match cli.command {
        Command::ToSafetensors(args) => to_safetensors::run(args, quiet),
        Command::PackWeights(args) => pack_weights::run(args, quiet),
        Command::UnpackWeights(args) => unpack_weights::run(args, quiet),
        Command::CreateManifest(args) => create_manifest::run(args, quiet),
        Command::ExtractWeights(args) => extract_weights::run(args, quiet),
        Command::InlineWeights(args) => inline_weights::run(args, quiet),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.code())
        }
    }
}
