//! One module per command, and the error every command returns.

pub mod create_manifest;
pub mod extract_weights;
pub mod inline_weights;
pub mod inspect_sidecar;
pub mod pack_weights;
pub mod to_safetensors;
pub mod unpack_weights;
mod weight_tools_common;

use std::fmt;
use webnn_weights_runtime::weight_tools::ToolError;

/// Exit code for bad input (unreadable or invalid files, failed checks).
pub const EXIT_INPUT: u8 = 1;
/// Exit code for a malformed command line.
pub const EXIT_USAGE: u8 = 2;

/// A failed command: a message for stderr and the exit code.
#[derive(Debug)]
pub struct CliError {
    message: String,
    code: u8,
}

impl CliError {
    /// Bad input: exit code 1.
    pub fn input(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_INPUT,
        }
    }

    /// A malformed command line: exit code 2.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_USAGE,
        }
    }

    /// The process exit code.
    pub fn code(&self) -> u8 {
        self.code
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<ToolError> for CliError {
    fn from(e: ToolError) -> CliError {
        CliError::input(e.to_string())
    }
}
