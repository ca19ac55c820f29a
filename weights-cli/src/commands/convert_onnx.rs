//! `webnn-weights convert-onnx --input M.onnx [--output G] [--weights W] [--manifest F]
//! [--inline-weights] [--override-dim N=V]… [--override-dims-file F] [--input-shape N=D,…]…
//! [--constant-input N=FILE.pb]…`: an ONNX model as a WebNN graph and its weights, all files
//! or none.

use super::weight_tools_common::{distinct_outputs, note, stage_bytes, stage_graph};
use super::{counted, CliError, GraphFormat};
use crate::progress::Bar;
use std::collections::BTreeMap;
use std::path::PathBuf;
use webnn_weights_onnx::{convert, ConvertError, ConvertOptions};
use webnn_weights_runtime::JsonStyle;
use webnn_weights_tools::weight_tools::{pack_resolved, Progress as _, Staging};

/// Arguments of `convert-onnx` (webnn-graph's flags, plus `--input-shape` and
/// `--constant-input`).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  webnn-weights convert-onnx --input models/resnet.onnx --override-dim batch=1
  # models/resnet.webnn and models/resnet.safetensors (found by discovery)
  webnn-weights convert-onnx --input m.onnx --output web/m.webnn --weights web/m.weights
  # a WGWT blob and web/m.manifest.json instead of SafeTensors
  webnn-weights convert-onnx --input m.onnx --input-shape pixel_values=1,3,224,224

Dims: --input-shape (one input's whole shape) wins over --override-dim (a named dim \
everywhere), which wins over --override-dims-file, then the model's freeDimensionOverrides \
metadata. Every problem of the model is reported at once (each node with its operator, domain \
and opset) before any file is written; on failure nothing is written. See docs/onnx.md.")]
pub struct Args {
    /// The ONNX model (external data files are read relative to its folder).
    #[arg(long, value_name = "M.onnx")]
    pub input: PathBuf,
    /// The graph to write: `.webnn` text or `.json` GraphJson; default: the model's path with
    /// the extension `.webnn`.
    #[arg(long, short = 'o', value_name = "G")]
    pub output: Option<PathBuf>,
    /// Where the weights go: a `.safetensors` archive, or a `.weights` WGWT blob (with a
    /// manifest); default: `<output stem>.safetensors` beside the graph.
    #[arg(long, value_name = "W")]
    pub weights: Option<PathBuf>,
    /// The manifest of a `.weights` blob; default: `<weights stem>.manifest.json`.
    #[arg(long, value_name = "F")]
    pub manifest: Option<PathBuf>,
    /// Write every constant into the graph (no sidecar).
    #[arg(long)]
    pub inline_weights: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub compact: super::CompactArg,
}

/// How an ONNX model converts: dims and fixed inputs. `convert-onnx` takes them, and so do
/// `inspect`, `validate`, `lock` and `web` for an `.onnx` model.
#[derive(Debug, Default, clap::Args)]
pub struct ModelArgs {
    /// ONNX models: give the symbolic dim N the size V (repeatable).
    #[arg(long = "override-dim", value_name = "N=V")]
    pub override_dims: Vec<String>,
    /// ONNX models: a JSON object of dim name to size, e.g. {"batch": 1, "sequence": 128}.
    #[arg(long, value_name = "F")]
    pub override_dims_file: Option<PathBuf>,
    /// ONNX models: give graph input N the whole shape D0,D1,… (for dims without a name: -1, ?).
    #[arg(long = "input-shape", value_name = "N=D0,D1,...")]
    pub input_shapes: Vec<String>,
    /// ONNX models: fix graph input N to the tensor in FILE.pb (a serialized TensorProto), for
    /// inputs that WebNN needs while building, such as a Reshape's shape (repeatable).
    #[arg(long = "constant-input", value_name = "N=FILE.pb")]
    pub constant_inputs: Vec<String>,
}

impl ModelArgs {
    /// Whether any flag is given.
    pub fn any(&self) -> bool {
        !self.override_dims.is_empty()
            || self.override_dims_file.is_some()
            || !self.input_shapes.is_empty()
            || !self.constant_inputs.is_empty()
    }
}

/// `NAME=VALUE`, or a usage error naming the flag.
fn split_pair<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), CliError> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() && !value.is_empty() => Ok((name, value)),
        _ => Err(CliError::Usage(format!(
            "{flag} {text:?}: expected NAME=VALUE"
        ))),
    }
}

fn parse_size(flag: &str, name: &str, value: &str) -> Result<u32, CliError> {
    value.trim().parse::<u32>().map_err(|_| {
        CliError::Usage(format!(
            "{flag} {name}={value}: {value:?} is not a size (an integer from 0 to {})",
            u32::MAX
        ))
    })
}

/// The options the flags ask for.
fn options(args: &Args) -> Result<ConvertOptions, CliError> {
    Ok(args.model.options()?.inline_weights(args.inline_weights))
}

impl ModelArgs {
    /// The converter's options these flags ask for.
    pub fn options(&self) -> Result<ConvertOptions, CliError> {
        let args = self;
        let mut options = ConvertOptions::new();
        let mut dims: BTreeMap<String, u32> = BTreeMap::new();
        if let Some(file) = &args.override_dims_file {
            let text = std::fs::read_to_string(file).map_err(|e| {
                CliError::Input(format!("--override-dims-file {}: {e}", file.display()))
            })?;
            let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            CliError::Input(format!(
                "--override-dims-file {}: not JSON ({e}); expected an object such as {{\"batch\": 1}}",
                file.display()
            ))
        })?;
            let Some(object) = json.as_object() else {
                return Err(CliError::Input(format!(
                "--override-dims-file {}: expected a JSON object of dim name to size, such as {{\"batch\": 1}}",
                file.display()
            )));
            };
            for (name, value) in object {
                let size = value
                    .as_u64()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| {
                        CliError::Input(format!(
                            "--override-dims-file {}: {name:?} is {value}, not a size",
                            file.display()
                        ))
                    })?;
                dims.insert(name.clone(), size);
            }
        }
        for text in &args.override_dims {
            let (name, value) = split_pair("--override-dim", text)?;
            dims.insert(name.to_string(), parse_size("--override-dim", name, value)?);
        }
        for (name, size) in dims {
            options = options.override_dim(name, size);
        }
        for text in &args.input_shapes {
            let (name, value) = split_pair("--input-shape", text)?;
            let shape = value
                .split(',')
                .map(|d| parse_size("--input-shape", name, d))
                .collect::<Result<Vec<u32>, _>>()?;
            options = options.input_shape(name, &shape);
        }
        for text in &args.constant_inputs {
            let (name, file) = split_pair("--constant-input", text)?;
            let bytes = std::fs::read(file)
                .map_err(|e| CliError::Input(format!("--constant-input {name}={file}: {e}")))?;
            let tensor = webnn_weights_onnx::read_tensor_proto(&bytes)
                .map_err(|e| CliError::Input(format!("--constant-input {name}={file}: {e}")))?;
            options = options.constant_input(name, tensor);
        }
        Ok(options)
    }
}

/// The files `convert-onnx` writes.
struct Outputs {
    graph: PathBuf,
    sidecar: Sidecar,
}

enum Sidecar {
    None,
    SafeTensors(PathBuf),
    Blob { weights: PathBuf, manifest: PathBuf },
}

fn outputs(args: &Args) -> Result<Outputs, CliError> {
    let graph = args
        .output
        .clone()
        .unwrap_or_else(|| args.input.with_extension("webnn"));
    GraphFormat::for_output(
        &graph,
        "convert-onnx writes `.webnn` text or `.json` GraphJson",
    )?
    .check_style(args.compact.style(), &graph)?;
    if args.inline_weights && (args.weights.is_some() || args.manifest.is_some()) {
        return Err(CliError::Usage(
            "--inline-weights writes no sidecar: leave out --weights and --manifest".into(),
        ));
    }
    let sidecar = if args.inline_weights {
        Sidecar::None
    } else {
        match &args.weights {
            Some(w)
                if w.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("weights")) =>
            {
                Sidecar::Blob {
                    weights: w.clone(),
                    manifest: args
                        .manifest
                        .clone()
                        .unwrap_or_else(|| w.with_extension("manifest.json")),
                }
            }
            Some(w)
                if w.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("safetensors")) =>
            {
                if args.manifest.is_some() {
                    return Err(CliError::Usage(
                        "--manifest goes with a .weights blob; a .safetensors archive has none"
                            .into(),
                    ));
                }
                Sidecar::SafeTensors(w.clone())
            }
            Some(w) => {
                return Err(CliError::Usage(format!(
                    "--weights {}: the extension must be .safetensors or .weights",
                    w.display()
                )))
            }
            None => {
                if args.manifest.is_some() {
                    return Err(CliError::Usage(
                        "--manifest goes with --weights X.weights".into(),
                    ));
                }
                Sidecar::SafeTensors(graph.with_extension("safetensors"))
            }
        }
    };
    let mut named = vec![
        ("--input", args.input.as_path()),
        ("--output", graph.as_path()),
    ];
    match &sidecar {
        Sidecar::None => {}
        Sidecar::SafeTensors(w) => named.push(("--weights", w.as_path())),
        Sidecar::Blob { weights, manifest } => {
            named.push(("--weights", weights.as_path()));
            named.push(("--manifest", manifest.as_path()));
        }
    }
    distinct_outputs(&named)?;
    Ok(Outputs { graph, sidecar })
}

impl From<ConvertError> for CliError {
    fn from(e: ConvertError) -> CliError {
        CliError::Input(e.to_string())
    }
}

/// Runs `convert-onnx`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let out = outputs(args)?;
    let options = options(args)?;
    let conversion = convert(&args.input, &options)?;
    let graph = &conversion.graph;
    let style: JsonStyle = args.compact.style();
    let mut staging = Staging::new();
    let external = graph.has_external_weights();
    if let Some(dir) = out.graph.parent().filter(|d| !d.as_os_str().is_empty()) {
        staging.ensure_dir(dir)?;
    }
    let weights = conversion.weights_map();
    let mut bar = Bar::new("writing");
    match (&out.sidecar, external) {
        (_, false) | (Sidecar::None, _) => {}
        (Sidecar::SafeTensors(path), true) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                staging.ensure_dir(dir)?;
            }
            webnn_weights_tools::weight_tools::stage_external_weights_safetensors(
                graph,
                &weights,
                path,
                &mut staging,
            )
            .map_err(|e| CliError::Input(e.to_string()))?;
        }
        (
            Sidecar::Blob {
                weights: blob,
                manifest,
            },
            true,
        ) => {
            let full = conversion.inlined();
            let packed = pack_resolved(graph, &full, &out.graph)?;
            for p in [blob.as_path(), manifest.as_path()] {
                if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                    staging.ensure_dir(dir)?;
                }
            }
            bar.start(packed.payload_len());
            let staged = staging.stage(blob, |w| packed.write_blob(w, blob, &mut bar));
            bar.finish();
            staged?;
            let json = packed.manifest.to_json().map_err(|e| {
                CliError::Input(format!(
                    "{}: cannot serialize the manifest: {e}",
                    manifest.display()
                ))
            })?;
            stage_bytes(&mut staging, manifest, json.as_bytes())?;
        }
    }
    stage_graph(&mut staging, &out.graph, graph, style)?;
    staging.commit()?;
    let sidecar = match (&out.sidecar, external) {
        (Sidecar::SafeTensors(p), true) => format!(" and {}", p.display()),
        (Sidecar::Blob { weights, manifest }, true) => {
            format!(", {} and {}", weights.display(), manifest.display())
        }
        _ => String::new(),
    };
    note(format_args!(
        "wrote {}{sidecar} ({}, {}, {})",
        out.graph.display(),
        counted(graph.nodes.len(), "node"),
        counted(graph.consts.len(), "constant"),
        counted(conversion.weights_len(), "weight byte")
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_and_sizes() {
        assert_eq!(
            split_pair("--override-dim", "batch=1").unwrap(),
            ("batch", "1")
        );
        assert!(split_pair("--override-dim", "batch").is_err());
        assert!(split_pair("--override-dim", "=1").is_err());
        assert!(parse_size("--override-dim", "b", "-1").is_err());
        assert_eq!(parse_size("--input-shape", "x", " 3").unwrap(), 3);
    }
}
