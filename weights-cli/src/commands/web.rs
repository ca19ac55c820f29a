//! `webnn-weights web GRAPH [--weights P] [--manifest P] -o DIR`: a graph for the browser's
//! WebNN, as an ES module, a WGWT blob of its constants and the blob's manifest.

use super::weight_tools_common::{note, stage_bytes};
use super::{counted, read_graph, CliError};
use crate::progress::Bar;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{ConstInit, GraphJson};
use webnn_weights_tools::weight_tools::{pack_resolved, Extraction, Progress, Staging, ToolError};
use webnn_weights_web::{web_module, WebGraph, WeightsFiles};

/// Arguments of `web`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Example:
  webnn-weights web models/model.webnn -o site/model
  # site/model/model.js, model.weights, model.manifest.json; in the page:
  #   import { load } from './model/model.js';
  #   const model = await load(await navigator.ml.createContext());
  #   const { y } = await model.compute({ x: new Float32Array([...]) });

The graph is checked against the WebNN table first (an operation or option it does not know is
an error naming the node); then its sidecar is resolved with the same rules as everywhere else
(SafeTensors, sharded index, WGWT or headerless blob; BF16 widened; a weights lock beside the
graph verified). DIR/<stem>.weights holds the graph's @weights constants only, tied ones once;
the module holds every one's SHA-256 and checks it in the page before the bytes reach the
builder. The three files appear together, only on success; a failure leaves the ones of an earlier \
run as they were. See docs/web.md.")]
pub struct Args {
    /// The graph (`.webnn` text or GraphJson), or an ONNX model (`.onnx`, converted as by
    /// `convert-onnx` with default options).
    pub graph: PathBuf,
    #[command(flatten)]
    pub sidecar: super::SidecarArgs,
    /// The folder to write into (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub model: super::convert_onnx::ModelArgs,
}

/// The file stem of a graph: `models/model.webnn` -> `model`.
pub fn stem(graph: &Path) -> Result<String, CliError> {
    graph
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{}: the graph's file name has no stem to name the outputs after",
                graph.display()
            ))
        })
}

/// Lowers `graph` by the WebNN table, naming the graph file in the error.
pub fn lower(graph: &webnn_weights_runtime::GraphJson, path: &Path) -> Result<WebGraph, CliError> {
    WebGraph::new(graph).map_err(|e| {
        CliError::Input(format!(
            "{}: the graph cannot be built by WebNN's MLGraphBuilder: {e}",
            path.display()
        ))
    })
}

/// Runs `web`.
pub fn run(args: &Args) -> Result<(), CliError> {
    super::no_model_flags(&args.graph, &args.model)?;
    let stem = stem(&args.graph)?;
    // An ONNX model: converted (default options), its weights views of the model's bytes.
    let onnx = if super::is_onnx(&args.graph) {
        Some(super::read_onnx(
            &args.graph,
            Some(&args.sidecar),
            &args.model,
        )?)
    } else {
        args.sidecar.check_exist(&args.graph)?;
        None
    };
    let graph = match &onnx {
        Some(conversion) => conversion.graph.clone(),
        None => read_graph(&args.graph)?,
    };
    // The table first: a graph the browser cannot build fails before any byte is read.
    let mut program = lower(&graph, &args.graph)?;
    let resolved = resolve(args, &graph, onnx.as_ref())?;
    let packed = pack_resolved(&graph, &resolved, &args.graph)?;
    let digests = digests(&graph, &resolved);
    program.set_digests(|reference| digests.get(reference).copied());

    let files = WeightsFiles {
        weights: format!("{stem}.weights"),
        manifest: format!("{stem}.manifest.json"),
    };
    let module = web_module(&program, &files, &super::shown_path(&args.graph));
    let manifest_json = packed.manifest.to_json().map_err(|e| {
        CliError::Input(format!(
            "{}: cannot serialize the manifest: {e}",
            files.manifest
        ))
    })?;
    let paths = OutputPaths {
        weights: args.output.join(&files.weights),
        manifest: args.output.join(&files.manifest),
        module: args.output.join(format!("{stem}.js")),
    };
    write_outputs(&args.output, &paths, &packed, &manifest_json, &module)?;
    note(format_args!(
        "wrote {} ({}, {}), {} ({}, {}) and {}",
        paths.module.display(),
        counted(graph.consts.len(), "constant"),
        counted(graph.nodes.len(), "node"),
        paths.weights.display(),
        counted(packed.manifest.tensors.len(), "tensor"),
        counted(packed.blob_len(), "byte"),
        paths.manifest.display()
    ));
    super::release_at_exit(resolved);
    Ok(())
}

/// `graph` with every constant's bytes inline: an ONNX model's `conversion` inlined, or
/// the graph's sidecar resolved (mapped) as everywhere else.
fn resolve(
    args: &Args,
    graph: &GraphJson,
    conversion: Option<&webnn_weights_onnx::Conversion>,
) -> Result<GraphJson, CliError> {
    Ok(if let Some(conversion) = conversion {
        conversion.inlined()
    } else if graph.has_external_weights() {
        let mut loader =
            webnn_weights_runtime::GraphLoader::from_graph(graph.clone()).graph_path(&args.graph);
        if let Some(weights) = args.sidecar.weights() {
            loader = loader.weights(weights);
        }
        if let Some(manifest) = args.sidecar.manifest() {
            loader = loader.manifest(manifest);
        }
        loader.mapped().load()?
    } else {
        graph.clone()
    })
}

/// One digest per reference: the SHA-256 of the bytes of the resolved constant that names it.
fn digests<'g>(graph: &'g GraphJson, resolved: &GraphJson) -> HashMap<&'g str, [u8; 32]> {
    let mut digests: HashMap<&str, [u8; 32]> = HashMap::new();
    for (name, decl) in &graph.consts {
        if let (ConstInit::Weights { r#ref }, Some(ConstInit::InlineBytes { bytes })) =
            (&decl.init, resolved.consts.get(name).map(|c| &c.init))
        {
            digests
                .entry(r#ref.as_str())
                .or_insert_with(|| Sha256::digest(bytes).into());
        }
    }
    digests
}

/// Where the three files of `web` go.
struct OutputPaths {
    weights: PathBuf,
    manifest: PathBuf,
    module: PathBuf,
}

/// Writes the blob (with a progress bar), the manifest and the module into `output`
/// (created if missing), all three installed together only once all are written.
fn write_outputs(
    output: &Path,
    paths: &OutputPaths,
    packed: &Extraction<'_>,
    manifest_json: &str,
    module: &str,
) -> Result<(), CliError> {
    let mut staging = Staging::new();
    staging.ensure_dir(output)?;
    let mut bar = Bar::new("writing");
    bar.start(packed.payload_len());
    let blob = staging.stage(&paths.weights, |w| {
        packed.write_blob(w, &paths.weights, &mut bar)
    });
    bar.finish();
    blob?;
    stage_bytes(&mut staging, &paths.manifest, manifest_json.as_bytes())?;
    stage_bytes(&mut staging, &paths.module, module.as_bytes())?;
    staging.commit().map_err(|e: ToolError| CliError::from(e))?;
    Ok(())
}
