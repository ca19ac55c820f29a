//! Shared plumbing of the subcommands: the error type, exit codes and file helpers.

pub mod completions;
pub mod convert;
pub mod convert_onnx;
pub mod create_manifest;
pub mod emit_js;
pub mod extract_weights;
pub mod inline_weights;
pub mod inspect;
pub mod inspect_sidecar;
pub mod lock;
pub mod pack_weights;
pub mod resolve;
pub mod to_safetensors;
pub mod unpack_weights;
pub mod validate;
pub mod web;
mod weight_tools_common;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use webnn_weights_runtime::Report;
use webnn_weights_runtime::{write_graph_json, GraphJson, JsonStyle, WeightPlan};
use webnn_weights_runtime::{write_webnn_text, TextOutputError};

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
        CliError::Input(with_fix(Report::new(&e).to_string(), e.fix()))
    }
}

impl From<webnn_weights_runtime::ResolveError> for CliError {
    fn from(e: webnn_weights_runtime::ResolveError) -> CliError {
        let mut message = with_fix(Report::new(&e).to_string(), e.fix());
        // The extension decides a sidecar's kind (as the format says); content only
        // suggests a rename.
        if let webnn_weights_runtime::ResolveError::NoManifest { sidecar, .. } = &e {
            let sniffed = webnn_weights_runtime::formats::SidecarFormat::sniff_file(sidecar);
            if sniffed == Some(webnn_weights_runtime::formats::SidecarFormat::SafeTensors) {
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

/// `n` and the noun, plural unless `n` is 1: `1 input`, `2 inputs`, `0 bytes`.
pub(crate) fn counted(n: impl fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    let plural = if n == "1" { "" } else { "s" };
    format!("{n} {noun}{plural}")
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
        CliError::Input(Report::new(&e).to_string())
    }
}

pub use crate::progress::{quiet, set_quiet};

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

/// Hands `value` to the operating system instead of freeing it: the command is about to
/// end, and freeing a 100k-node graph string by string and map by map costs about as much
/// as reading it, while the process exit reclaims all of its memory at once.
pub fn release_at_exit<T>(value: T) {
    std::mem::forget(value);
}

/// Whether `path` names an ONNX model: the extension `.onnx` (any case).
pub fn is_onnx(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
}

/// Converts the ONNX model at `path` with the options `model`'s flags give: what `inspect`,
/// `validate`, `lock` and `web` read for an `.onnx` file. Sidecar flags do not apply to a
/// model, whose weights are inside it or in its external data.
pub fn read_onnx(
    path: &Path,
    sidecar: Option<&SidecarArgs>,
    model: &convert_onnx::ModelArgs,
) -> Result<webnn_weights_onnx::Conversion, CliError> {
    if sidecar.is_some_and(|s| s.weights.is_some() || s.manifest.is_some()) {
        return Err(CliError::Usage(format!(
            "{}: --weights and --manifest apply to graphs; an ONNX model holds its weights (or names its external data files)",
            path.display()
        )));
    }
    Ok(webnn_weights_onnx::convert(path, &model.options()?)?)
}

/// A usage error when ONNX flags (`--override-dim`, …) are given for a graph that is not an
/// ONNX model.
pub fn no_model_flags(path: &Path, model: &convert_onnx::ModelArgs) -> Result<(), CliError> {
    if model.any() && !is_onnx(path) {
        return Err(CliError::Usage(format!(
            "{}: --override-dim, --override-dims-file, --input-shape and --constant-input apply to ONNX models (.onnx)",
            path.display()
        )));
    }
    Ok(())
}

/// Reads a graph file of either format (detected by content).
pub fn read_graph(path: &Path) -> Result<GraphJson, CliError> {
    Ok(webnn_weights_runtime::read_graph_file(path)?)
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

    /// Checks that `--compact` fits this format: text has a single layout.
    pub fn check_style(self, style: JsonStyle, path: &Path) -> Result<(), CliError> {
        if self == GraphFormat::Text && style == JsonStyle::Compact {
            return Err(CliError::Usage(format!(
                "{}: --compact applies to GraphJson outputs; .webnn text has one layout",
                path.display()
            )));
        }
        Ok(())
    }

    /// Streams `graph` in this format (and `style`, for GraphJson) into `out`, for the file
    /// `path` (named in errors). Memory: a small buffer, whatever the size of the output.
    pub fn write_to<W: Write + ?Sized>(
        self,
        graph: &GraphJson,
        style: JsonStyle,
        out: &mut W,
        path: &Path,
    ) -> Result<(), OutputError> {
        match self {
            GraphFormat::Text => write_webnn_text(graph, out),
            GraphFormat::Json => write_graph_json(graph, out, style).map_err(TextOutputError::Io),
        }
        .map_err(|source| OutputError {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Writes `graph` to the file `path` in this format, streaming into a temporary file
    /// that is installed only when complete: on failure no file (or the previous version)
    /// remains.
    pub fn write_file(
        self,
        graph: &GraphJson,
        style: JsonStyle,
        path: &Path,
    ) -> Result<(), CliError> {
        self.check_style(style, path)?;
        let mut failure = None;
        let result = webnn_weights_atomic::write_file(path, |w| {
            self.write_to(graph, style, w, path).map_err(|e| {
                let io = std::io::Error::other(e.to_string());
                failure = Some(e);
                io
            })
        });
        match (result, failure) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(e)) => Err(e.into()),
            (Err(e), None) => Err(CliError::Input(format!(
                "{}: cannot write: {e}",
                path.display()
            ))),
        }
    }
}

/// Why a graph could not be written to a file: the runtime's writing error (the graph cannot
/// be `.webnn` text, or the writer failed, in either format), naming the file.
#[derive(Debug)]
pub struct OutputError {
    path: PathBuf,
    source: TextOutputError,
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.source {
            TextOutputError::Io(e) => write!(f, "{path}: cannot write: {e}"),
            other => write!(f, "{path}: {other}"),
        }
    }
}

impl From<OutputError> for CliError {
    fn from(e: OutputError) -> CliError {
        CliError::Input(e.to_string())
    }
}

/// `--compact`, on every command that writes GraphJson.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct CompactArg {
    /// Write GraphJson on one line without indentation, as webnn-graph's library does:
    /// about 3.6 bytes per inline byte, the smallest and fastest. Without it, GraphJson is
    /// pretty-printed, byte-identical to webnn-graph's CLI files (diffable), at about 14
    /// bytes per inline byte (4x the size and time). Either way the graph streams to disk:
    /// memory does not grow with the output.
    #[arg(long)]
    pub compact: bool,
}

impl CompactArg {
    /// The GraphJson style asked for.
    pub fn style(self) -> JsonStyle {
        if self.compact {
            JsonStyle::Compact
        } else {
            JsonStyle::Pretty
        }
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
    /// Checks that the explicit paths exist relative to the graph's folder; a missing one
    /// is an error showing both readings of the path (see [`check_explicit_path`]). A
    /// manifest given with a SafeTensors archive (or a sharded archive's index) is not
    /// checked: the format says such a path ignores the manifest argument.
    pub fn check_exist(&self, graph: &Path) -> Result<(), CliError> {
        let manifest_used = self.weights().is_none_or(|weights| {
            webnn_weights_runtime::formats::SidecarFormat::of_path(weights)
                == webnn_weights_runtime::formats::SidecarFormat::Blob
        });
        for (flag, path) in [
            ("--weights", self.weights()),
            ("--manifest", self.manifest().filter(|_| manifest_used)),
        ] {
            if let Some(path) = path {
                check_explicit_path(graph, flag, path, RelativeTo::GraphFolder)?;
            }
        }
        Ok(())
    }

    /// Checks the explicit paths ([`SidecarArgs::check_exist`]), reads the graph at
    /// `graph_path` and plans its sidecar: what every command that reads weights starts with.
    pub fn plan(&self, graph_path: &Path) -> Result<(GraphJson, WeightPlan), CliError> {
        self.check_exist(graph_path)?;
        let graph = read_graph(graph_path)?;
        let plan = webnn_weights_runtime::plan_external_weights(
            &graph,
            graph_path,
            self.weights(),
            self.manifest(),
        )?;
        Ok((graph, plan))
    }

    /// The explicit weights path, if given.
    pub fn weights(&self) -> Option<&Path> {
        self.weights.as_deref()
    }

    /// The explicit manifest path, if given.
    pub fn manifest(&self) -> Option<&Path> {
        self.manifest.as_deref()
    }
}

/// What a command reads an explicit relative sidecar path against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelativeTo {
    /// The graph's folder, as the format says (`resolve`, `inspect`, `to-safetensors`).
    GraphFolder,
    /// The working directory, as `webnn-graph`'s tools do (`inline-weights`).
    WorkingDirectory,
}

/// `path` as the user would write it: without a leading `./` that the program added
/// (a graph given without a folder has the folder `.`).
pub fn shown_path(path: &Path) -> String {
    path.strip_prefix(".").unwrap_or(path).display().to_string()
}

/// Fails when the explicit path `path` (given as `flag` for `graph`) names no existing
/// entry the way this command reads it (`rule`); the message shows both readings, the
/// one used and the other, and says when the other one exists.
///
/// Absolute paths and existing ones pass (the resolver reports anything else about them).
pub fn check_explicit_path(
    graph: &Path,
    flag: &str,
    path: &Path,
    rule: RelativeTo,
) -> Result<(), CliError> {
    if path.is_absolute() {
        return Ok(());
    }
    let folder = graph.parent().unwrap_or(Path::new(""));
    let from_graph = folder.join(path);
    let from_cwd = path.to_path_buf();
    let (used, used_rule, other, other_rule) = match rule {
        RelativeTo::GraphFolder => (
            &from_graph,
            "the graph's folder",
            &from_cwd,
            "the working directory",
        ),
        RelativeTo::WorkingDirectory => (
            &from_cwd,
            "the working directory",
            &from_graph,
            "the graph's folder",
        ),
    };
    if used.exists() {
        return Ok(());
    }
    let mut message = format!(
        "graph {}: {flag} {}: no such file. This command reads it relative to {used_rule}: {}",
        graph.display(),
        path.display(),
        shown_path(used),
    );
    if other != used {
        if other.exists() {
            let absolute = std::path::absolute(other).unwrap_or_else(|_| other.clone());
            message.push_str(&format!(
                "; relative to {other_rule} it would be {}, which exists: give {flag} {}",
                shown_path(other),
                absolute.display()
            ));
        } else {
            message.push_str(&format!(
                "; relative to {other_rule} it would be {}, which does not exist either",
                shown_path(other)
            ));
        }
    }
    Err(CliError::Input(message))
}
