//! The `webnn-weights` command: graph conversion and validation, weight resolution and
//! the weight blob tools.
//!
//! Each subcommand lives in its own module under `commands/` with an arguments struct
//! (clap derive: `Args`, or named after the command, as `ToSafetensorsArgs`) and a `run`
//! function returning `Result<(), CliError>` (`completions` and `man` share one module, each
//! with its own function); adding one means a variant in [`Command`] and a line in
//! [`main`]'s dispatch.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod commands;
mod progress;

use clap::{Parser, Subcommand};
use commands::{
    create_manifest, extract_weights, inline_weights, pack_weights, to_safetensors, unpack_weights,
};
use std::process::ExitCode;

/// Neural-network weights as a build-time dependency, for the WebNN external weight format.
///
/// Exit status: 0 on success, 1 for bad input (the message on stderr, no output file
/// written), 2 for usage errors.
#[derive(Debug, Parser)]
#[command(
    name = "webnn-weights",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 on success, 1 for bad input, 2 for usage errors.\n\
                  Run `webnn-weights COMMAND --help` for an example of each command."
)]
struct Cli {
    /// Print nothing on success and draw no progress bars.
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Convert a graph between `.webnn` text and GraphJson (no weight resolution).
    Convert(commands::convert::Args),
    /// Convert an ONNX model into a WebNN graph and its weights (SafeTensors or WGWT).
    ConvertOnnx(commands::convert_onnx::Args),
    /// Check a graph's structure and report every problem.
    Validate(commands::validate::Args),
    /// Inline every @weights constant's bytes from its sidecar and write the graph.
    Resolve(commands::resolve::Args),
    /// List every constant with its source, byte length and SHA-256.
    Inspect(commands::inspect::Args),
    /// Pin every external constant's SHA-256 in a weights lock, or verify it (--check).
    Lock(commands::lock::Args),
    /// Write every weight of a resolvable graph into one SafeTensors archive.
    ToSafetensors(to_safetensors::ToSafetensorsArgs),
    /// Pack tensor files into a WGWT blob laid out by a v1 manifest.
    PackWeights(pack_weights::PackWeightsArgs),
    /// Unpack a WGWT or headerless blob into one file per tensor.
    UnpackWeights(unpack_weights::UnpackWeightsArgs),
    /// Create a v1 manifest for a folder of tensor files.
    CreateManifest(create_manifest::CreateManifestArgs),
    /// Move a graph's inline bytes into a WGWT blob and manifest.
    ExtractWeights(extract_weights::ExtractWeightsArgs),
    /// Replace a graph's @weights references with inline bytes from a blob.
    InlineWeights(inline_weights::InlineWeightsArgs),
    /// Write a graph for the browser: an ES module, a WGWT blob of its weights, the manifest.
    Web(commands::web::Args),
    /// Print webnn-graph's emit-js module (WeightsFile, buildGraph), correct by the WebNN table.
    EmitJs(commands::emit_js::Args),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(commands::completions::CompletionsArgs),
    /// Print the man page, or write one page per command into a folder.
    Man(commands::completions::ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    commands::set_quiet(cli.quiet);
    let result = match &cli.command {
        Command::Convert(args) => commands::convert::run(args),
        Command::ConvertOnnx(args) => commands::convert_onnx::run(args),
        Command::Validate(args) => commands::validate::run(args),
        Command::Resolve(args) => commands::resolve::run(args),
        Command::Inspect(args) => commands::inspect::run(args),
        Command::Lock(args) => commands::lock::run(args),
        Command::Web(args) => commands::web::run(args),
        Command::EmitJs(args) => commands::emit_js::run(args),
        Command::ToSafetensors(args) => to_safetensors::run(args),
        Command::PackWeights(args) => pack_weights::run(args),
        Command::UnpackWeights(args) => unpack_weights::run(args),
        Command::CreateManifest(args) => create_manifest::run(args),
        Command::ExtractWeights(args) => extract_weights::run(args),
        Command::InlineWeights(args) => inline_weights::run(args),
        Command::Completions(args) => {
            commands::completions::completions(args, <Cli as clap::CommandFactory>::command())
        }
        Command::Man(args) => {
            commands::completions::man(args, <Cli as clap::CommandFactory>::command())
        }
    };
    commands::finish(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
