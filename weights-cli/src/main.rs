//! The `webnn-weights` command: graph conversion and validation, weight resolution and
//! the weight blob tools.
//!
//! Each subcommand lives in its own module under `commands/` with an `Args` struct
//! (clap derive) and a `run(&Args) -> Result<(), CliError>` function; adding one means a
//! variant in [`Command`] and a line in [`main`]'s dispatch.

mod commands;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Neural-network weights as a build-time dependency, for the WebNN external weight format.
///
/// Exit status: 0 on success, 1 for bad input (the message on stderr, no output file
/// written), 2 for usage errors.
#[derive(Debug, Parser)]
#[command(name = "webnn-weights", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Convert a graph between `.webnn` text and GraphJson (no weight resolution).
    Convert(commands::convert::Args),
    /// Check a graph's structure and report every problem.
    Validate(commands::validate::Args),
    /// Inline every @weights constant's bytes from its sidecar and write the graph.
    Resolve(commands::resolve::Args),
    /// List every constant with its source, byte length and SHA-256.
    Inspect(commands::inspect::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Convert(args) => commands::convert::run(args),
        Command::Validate(args) => commands::validate::run(args),
        Command::Resolve(args) => commands::resolve::run(args),
        Command::Inspect(args) => commands::inspect::run(args),
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
