//! `webnn-weights lock GRAPH [--weights P] [--manifest P] [--output LOCK] [--check]`: pin the
//! SHA-256 of every external constant in a weights lock, or verify one.

use super::CliError;
use std::io::Write;
use std::path::PathBuf;
use webnn_weights_runtime::WeightsLock;

/// Arguments of `lock`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  webnn-weights lock models/model.webnn            # writes models/model.webnn.lock
  webnn-weights lock models/model.webnn --check    # verifies it, writes nothing

Resolves every @weights constant as `resolve` does (same discovery and rules) and writes a
weights lock: JSON with the format name and version and, for every external constant
sorted by name, its name, ref, the file its bytes come from (relative to the graph's
folder), byteLength and the sha256 of its resolved bytes (BF16 widened to F32: the digest
`inspect` prints). The build helper (webnn-weights-build) and the run-time loader verify
the lock beside the graph whenever they read the weights. The lock is written atomically:
a failed or killed run leaves the old lock or the new one, never a partial file; a lock
whose bytes would not change is left untouched (no rebuild).

An ONNX model (`.onnx`) is converted with default options and its weights pinned as
`convert-onnx` writes them (`<stem>.safetensors`): the lock `<model>.onnx.lock` that the build
helper verifies for the model (feature `onnx`).

--output is relative to the working directory (default: `<graph file name>.lock` beside
the graph). --check verifies the lock instead of writing it: exit status 0 when every
constant matches, 1 with every mismatch listed (a changed digest or length, a constant
missing from the lock, an entry the graph no longer has).")]
pub struct Args {
    /// The graph (`.webnn` text or GraphJson).
    pub graph: PathBuf,
    #[command(flatten)]
    pub sidecar: super::SidecarArgs,
    /// The lock file to write (or with --check, to verify); default `<graph file name>.lock`.
    #[arg(long, short = 'o', value_name = "LOCK")]
    pub output: Option<PathBuf>,
    /// Verify the lock instead of writing it.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub model: super::convert_onnx::ModelArgs,
}

/// Runs `lock`.
pub fn run(args: &Args) -> Result<(), CliError> {
    super::no_model_flags(&args.graph, &args.model)?;
    // An ONNX model: its converted weights, written as `convert-onnx` writes them (a scratch
    // `<stem>.webnn` and `<stem>.safetensors`), planned there: the lock the build helper
    // verifies for `<model>.onnx.lock`.
    let scratch;
    let (_, plan) = if super::is_onnx(&args.graph) {
        scratch = onnx_scratch(args)?;
        super::SidecarArgs {
            weights: None,
            manifest: None,
        }
        .plan(&scratch.1)?
    } else {
        args.sidecar.plan(&args.graph)?
    };
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| WeightsLock::path_for(&args.graph));
    let count = plan.constants().len();
    if args.check {
        let lock = WeightsLock::read(&path)?;
        // Reading every constant through the attached lock verifies it.
        plan.with_lock(lock).to_lock()?;
        if !super::quiet() {
            eprintln!(
                "{}: OK: {count} constant{} match {}",
                args.graph.display(),
                if count == 1 { "" } else { "s" },
                path.display()
            );
        }
        return Ok(());
    }
    let json = plan.to_lock()?.to_json();
    // An unchanged lock is left untouched: a new modification time would rerun build scripts.
    if std::fs::read(&path).ok().as_deref() != Some(&json[..]) {
        webnn_weights_atomic::write_file(&path, |w| w.write_all(&json))
            .map_err(|e| CliError::Input(format!("{}: cannot write: {e}", path.display())))?;
    }
    if !super::quiet() {
        eprintln!(
            "{}: wrote {} ({count} constant{})",
            args.graph.display(),
            path.display(),
            if count == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

/// The converted model's graph and SafeTensors archive in a scratch folder (removed when
/// dropped), named after the model's stem: the graph's path.
fn onnx_scratch(args: &Args) -> Result<(tempfile::TempDir, PathBuf), CliError> {
    let conversion = super::read_onnx(&args.graph, Some(&args.sidecar), &args.model)?;
    let stem = super::web::stem(&args.graph)?;
    let dir = tempfile::tempdir()
        .map_err(|e| CliError::Input(format!("cannot make a scratch folder: {e}")))?;
    let graph = dir.path().join(format!("{stem}.webnn"));
    let archive = dir.path().join(format!("{stem}.safetensors"));
    if conversion.graph.has_external_weights() {
        webnn_weights_tools::write_external_weights_safetensors(
            &conversion.graph,
            &conversion.weights_map(),
            &archive,
        )
        .map_err(|e| CliError::Input(format!("{}: {e}", args.graph.display())))?;
    }
    super::GraphFormat::Text.write_file(
        &conversion.graph,
        webnn_weights_runtime::JsonStyle::Pretty,
        &graph,
    )?;
    Ok((dir, graph))
}
