//! Shared plumbing of the subcommands: the error type, exit codes and file helpers.

pub mod convert;
pub mod create_manifest;
pub mod extract_weights;
pub mod inline_weights;
pub mod inspect;
pub mod inspect_sidecar;
pub mod pack_weights;
pub mod resolve;
pub mod to_safetensors;
pub mod unpack_weights;
pub mod validate;
mod weight_tools_common;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use webnn_weights_runtime::{to_graph_json_string, to_webnn_text, GraphJson};

/// Why a subcommand failed, and so which exit status it ends with.
#[derive(Debug)]
pub enum CliError {
    /// The input is bad (unreadable, malformed, invalid) or an output could not be
    /// written: exit status 1.
    Input(String),
    /// The command line asks for something impossible (e.g. an unknown output
    /// extension): exit status 2, like clap's own usage errors.
    Usage(String),
}

impl CliError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 1,
            CliError::Usage(_) => 2,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(message) | CliError::Usage(message) => f.write_str(message),
        }
    }
}

impl From<webnn_weights_runtime::Error> for CliError {
    fn from(e: webnn_weights_runtime::Error) -> CliError {
        CliError::Input(with_fix(e.to_string(), e.fix()))
    }
}

impl From<webnn_weights_runtime::ResolveError> for CliError {
    fn from(e: webnn_weights_runtime::ResolveError) -> CliError {
        let mut message = with_fix(e.to_string(), e.fix());
        // The extension decides a sidecar's kind (as the format says); content only
        // suggests a rename.
        if let webnn_weights_runtime::ResolveError::NoManifest { sidecar, .. } = &e {
            if webnn_weights_tools::weight_tools::looks_like_safetensors(sidecar) {
                message.push_str(&format!(
                    "\n  note: {} looks like a SafeTensors archive; archives are recognized by \
                     the extension .safetensors: rename it",
                    sidecar.display()
                ));
            }
        }
        CliError::Input(message)
    }
}

/// An error's message, and its fix (data, not text to search) on its own line.
fn with_fix(message: String, fix: Option<String>) -> String {
    match fix {
        Some(fix) => format!("{message}\n  fix: {fix}"),
        None => message,
    }
}

impl From<webnn_weights_tools::weight_tools::ToolError> for CliError {
    fn from(e: webnn_weights_tools::weight_tools::ToolError) -> CliError {
        CliError::Input(e.to_string())
    }
}

static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets the global `--quiet` flag: no success messages on stderr, no progress bars.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Prints the error (if any) on stderr and turns the result into the exit status.
pub fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Reads a graph file of either format (detected by content).
pub fn read_graph(path: &Path) -> Result<GraphJson, CliError> {
    Ok(webnn_weights_runtime::read_graph_file(path)?)
}

/// Writes `bytes` to `path` atomically: on failure no file (or the previous version)
/// remains. The error names the file.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    webnn_weights_tools::atomic::write_file(path, |w| w.write_all(bytes))
        .map_err(|e| CliError::Input(format!("{}: cannot write: {e}", path.display())))
}

/// The two ways a graph can be written to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    /// `.webnn` text.
    Text,
    /// Pretty GraphJson, exactly as `webnn-graph` writes it.
    Json,
}

impl GraphFormat {
    /// The format that `path`'s extension asks for: `.webnn` is text, `.json` GraphJson
    /// (any letter case); anything else is a usage error that says what `what` writes.
    pub fn for_output(path: &Path, what: &str) -> Result<GraphFormat, CliError> {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("webnn") => Ok(GraphFormat::Text),
            Some("json") => Ok(GraphFormat::Json),
            _ => Err(CliError::Usage(format!(
                "{}: cannot tell the output format: the extension must be `.webnn` or `.json` ({what})",
                path.display()
            ))),
        }
    }

    /// The format of a graph output of the `webnn-graph` weight tools: text when the file
    /// name ends in `.webnn`, GraphJson otherwise (those tools always wrote JSON).
    pub fn for_tool_output(path: &Path) -> GraphFormat {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("webnn"))
        {
            GraphFormat::Text
        } else {
            GraphFormat::Json
        }
    }

    /// Serializes `graph` in this format for the file `path` (named in errors).
    pub fn render(self, graph: &GraphJson, path: &Path) -> Result<Vec<u8>, CliError> {
        let text = match self {
            GraphFormat::Text => to_webnn_text(graph).map_err(|e| {
                CliError::Input(format!("{}: cannot write .webnn text: {e}", path.display()))
            })?,
            GraphFormat::Json => to_graph_json_string(graph).map_err(|e| {
                CliError::Input(format!(
                    "{}: cannot serialize GraphJson: {e}",
                    path.display()
                ))
            })?,
        };
        Ok(text.into_bytes())
    }
}

/// `--weights P` / `--manifest P`: an explicit sidecar for a graph. Both are relative to
/// the graph's folder, as in the format; without them the sidecar is discovered.
#[derive(Debug, clap::Args)]
pub struct SidecarArgs {
    /// The sidecar (SafeTensors archive or .weights blob), relative to the graph's folder.
    #[arg(long, value_name = "P")]
    pub weights: Option<PathBuf>,
    /// The manifest of a .weights blob, relative to the graph's folder.
    #[arg(long, value_name = "P")]
    pub manifest: Option<PathBuf>,
}

impl SidecarArgs {
    /// The explicit weights path, if given.
    pub fn weights(&self) -> Option<&Path> {
        self.weights.as_deref()
    }

    /// The explicit manifest path, if given.
    pub fn manifest(&self) -> Option<&Path> {
        self.manifest.as_deref()
    }
}
