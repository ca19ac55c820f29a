//! `webnn-weights inspect GRAPH [--weights P] [--manifest P] [--json]`: one row per
//! constant with its source, size and SHA-256.

use super::CliError;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use webnn_weights_artifacts::hex;
use webnn_weights_runtime::{
    ConstInit, ConstantReader, Conversion, GraphJson, SidecarKind, WeightPlan,
};

/// Arguments of `inspect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  webnn-weights inspect model.webnn
  webnn-weights inspect model.webnn --weights lm_head.safetensors --json

Lists every constant (external and inline): name, ref, dataType, shape, source (the
sidecar path; for a sharded archive the shard holding the tensor; or `inline`),
byteLength and sha256 of the resolved bytes (BF16 widened to F32). Sidecars are found as
by `resolve` and checked by the same rules; only the referenced ranges are read: hashed
straight from a read-only mapping of the sidecar, or streamed through the hash where BF16
is widened (the sidecar must not be truncated or rewritten while the command runs;
--no-map reads it instead). --json prints an array of objects with exactly those keys and
`sharedWith` (`ref` is null for inline constants; `byteLength` and `sha256` are null for
@scalar constants, which have no byte form in the graph).

Constants that resolve to the same stored bytes with the same conversion (tied weights:
several @weights references to one stored tensor) are read and hashed once; the table
ends with a `shared:` line per such group (embedded once by the build helper, one buffer
when loaded), and --json gives each of them `sharedWith`: the first constant of its group
by name (null for the first and for constants with bytes of their own).

A sidecar can be inspected on its own:
  webnn-weights inspect model.safetensors
  webnn-weights inspect model.safetensors.index.json
  webnn-weights inspect model.weights --manifest model.manifest.json

It lists every stored tensor: name, storage dtype, shape, absolute byte offset, byte length
and alignment (the largest power of two dividing the offset, shown as >=4096 from 4096 on),
plus the archive metadata, or for a blob the manifest's format/version/endianness and
whether it has a WGWT header. An index *.safetensors.index.json lists every shard's
tensors, each with its shard (a `shard` key in JSON). A file is taken for a sidecar when it is not a graph (graphs
start with `webnn_graph` or `{` after whitespace and `#` comments) or when its name says so:
a SafeTensors archive by extension (.safetensors/.safetensor) or header, a sharded
archive's index by name, otherwise a blob, which needs
--manifest (relative to the working directory, like the sidecar path). With --json: one
object {path, kind, fileLength, metadata, tensors: [{name, dataType, shape, byteOffset,
byteLength, alignment}]}.")]
pub struct Args {
    /// The graph to inspect (`.webnn` text or GraphJson), an ONNX model (`.onnx`: its
    /// constants as `convert-onnx` writes them), or a sidecar on its own.
    pub graph: PathBuf,
    #[command(flatten)]
    pub sidecar: super::SidecarArgs,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Read the referenced ranges instead of mapping the sidecar (for a sidecar that may
    /// be rewritten while the command runs).
    #[arg(long)]
    pub no_map: bool,
    #[command(flatten)]
    pub model: super::convert_onnx::ModelArgs,
}

struct Row {
    name: String,
    reference: Option<String>,
    data_type: String,
    shape: Vec<u32>,
    source: String,
    byte_length: Option<u64>,
    sha256: Option<String>,
    /// The first constant (by name) with the same stored bytes and conversion, when that
    /// is another constant.
    shared_with: Option<String>,
}

/// Runs `inspect`.
pub fn run(args: &Args) -> Result<(), CliError> {
    super::no_model_flags(&args.graph, &args.model)?;
    if super::is_onnx(&args.graph) {
        let conversion = super::read_onnx(&args.graph, Some(&args.sidecar), &args.model)?;
        return print(&onnx_rows(&conversion, &args.graph), args.json);
    }
    if super::inspect_sidecar::is_sidecar(&args.graph, args.sidecar.manifest.is_some()) {
        if args.sidecar.weights.is_some() {
            return Err(CliError::Usage(format!(
                "{}: --weights applies to graphs; a sidecar is inspected on its own \
                 (a .weights blob with --manifest)",
                args.graph.display()
            )));
        }
        return super::inspect_sidecar::run(&args.graph, args.sidecar.manifest(), args.json);
    }
    let (graph, plan) = args.sidecar.plan(&args.graph)?;
    let rows = graph_rows(&graph, &plan, args)?;
    print(&rows, args.json)
}

/// The rows of a graph's constants, the `@weights` ones read through `plan`.
fn graph_rows(graph: &GraphJson, plan: &WeightPlan, args: &Args) -> Result<Vec<Row>, CliError> {
    let source = plan
        .sidecar()
        .map(|s| super::shown_path(&s.path))
        .unwrap_or_default();
    // Measured on a 512 MiB model: mapping saves the copy out of the page cache
    // (docs/benchmarks.md, "Zero-copy weights"). Converted constants are streamed, so
    // memory stays small whatever the model.
    let mapped = if args.no_map {
        Default::default()
    } else {
        plan.materialize_mapped_where(|c| c.conversion == Conversion::None)
            .map_err(CliError::from)?
    };
    // Constants on the same stored bytes are read and hashed once.
    let first = plan.first_with_same_bytes();
    let mut hashes = Hashes {
        plan,
        graph: &args.graph,
        source,
        mapped,
        hashed: vec![None; first.len()],
        first,
        reader: plan.reader(),
    };
    let mut rows = Vec::with_capacity(graph.consts.len());
    for (name, decl) in &graph.consts {
        let (reference, byte_length, sha256, from, shared_with) = match &decl.init {
            ConstInit::Weights { r#ref } => {
                let stored = hashes.weights(name)?;
                (
                    Some(r#ref.clone()),
                    Some(stored.byte_length),
                    Some(stored.sha256),
                    stored.source,
                    stored.shared_with,
                )
            }
            ConstInit::InlineBytes { bytes } => (
                None,
                Some(bytes.len() as u64),
                Some(hex(&Sha256::digest(bytes))),
                "inline".to_string(),
                None,
            ),
            ConstInit::Scalar { .. } => (None, None, None, "inline".to_string(), None),
        };
        rows.push(Row {
            name: name.clone(),
            reference,
            data_type: decl.data_type.json_name().to_string(),
            shape: decl.shape.clone(),
            source: from,
            byte_length,
            sha256,
            shared_with,
        });
    }
    // The files did not change while they were read.
    hashes.reader.finish().map_err(CliError::from)?;
    Ok(rows)
}

/// Hashing the `@weights` constants of a plan, each stored range once.
struct Hashes<'p, B> {
    plan: &'p WeightPlan,
    /// The graph, named in errors.
    graph: &'p Path,
    /// The sidecar as shown in the `source` column.
    source: String,
    /// The bytes of the constants read through a mapping (none with `--no-map`).
    mapped: BTreeMap<String, B>,
    /// For each planned constant, the first one on the same stored bytes.
    first: Vec<usize>,
    /// The byte length and SHA-256 of each planned constant hashed so far.
    hashed: Vec<Option<(u64, String)>>,
    /// Streamed constants: each file opened once, small neighbours read together.
    reader: ConstantReader<'p>,
}

impl<B: AsRef<[u8]>> Hashes<'_, B> {
    /// The file holding `@weights` constant `name`, its byte length and SHA-256, and the
    /// first constant on the same bytes when that is another one.
    fn weights(&mut self, name: &str) -> Result<Stored, CliError> {
        let index = self
            .plan
            .constants()
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .map_err(|_| {
                CliError::Input(format!(
                    "{}: constant `{name}` is missing from the weight plan",
                    self.graph.display()
                ))
            })?;
        let owner = self.first[index];
        let (byte_length, sha256) = self.digest(owner, name)?;
        let planned = &self.plan.constants()[owner];
        // The file holding the bytes: the sidecar, or a sharded archive's shard.
        let from = match self.plan.sidecar().map(|s| &s.kind) {
            Some(SidecarKind::ShardedSafeTensors) => super::shown_path(&planned.file),
            _ => self.source.clone(),
        };
        Ok(Stored {
            source: from,
            byte_length,
            sha256,
            shared_with: (owner != index).then(|| self.plan.constants()[owner].name.clone()),
        })
    }

    /// The byte length and SHA-256 of planned constant `owner`, hashed from its mapping or
    /// streamed on first use (`name` names it in errors).
    fn digest(&mut self, owner: usize, name: &str) -> Result<(u64, String), CliError> {
        let planned = &self.plan.constants()[owner];
        Ok(
            match (&self.hashed[owner], self.mapped.get(&planned.name)) {
                (Some(done), _) => done.clone(),
                (None, Some(bytes)) => {
                    let bytes = bytes.as_ref();
                    let done = (bytes.len() as u64, hex(&Sha256::digest(bytes)));
                    self.hashed[owner] = Some(done.clone());
                    done
                }
                (None, None) => {
                    let mut hasher = BufWriter::with_capacity(1 << 20, Sha256::new());
                    let n = self
                        .reader
                        .copy_constant(planned, &mut hasher)
                        .map_err(CliError::from)?;
                    let hasher = hasher.into_inner().map_err(|e| {
                        CliError::Input(format!("constant `{name}`: cannot hash: {}", e.error()))
                    })?;
                    let done = (n, hex(&hasher.finalize()));
                    self.hashed[owner] = Some(done.clone());
                    done
                }
            },
        )
    }
}

/// The stored bytes of a `@weights` constant, as [`Hashes::weights`] finds them.
struct Stored {
    /// The file holding them, as shown.
    source: String,
    byte_length: u64,
    sha256: String,
    /// The first constant on the same bytes, when that is another one.
    shared_with: Option<String>,
}

fn print(rows: &[Row], as_json: bool) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let text = if as_json { json(rows) } else { table(rows) };
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Input(format!("cannot write to stdout: {e}")))
}

/// The rows of a converted ONNX model: `@weights` constants come from the model file (or
/// its external data), the rest are inline.
fn onnx_rows(conversion: &webnn_weights_onnx::Conversion, model: &std::path::Path) -> Vec<Row> {
    let weights = conversion.weights_map();
    let source = super::shown_path(model);
    conversion
        .graph
        .consts
        .iter()
        .map(|(name, decl)| {
            let (reference, bytes, from) = match &decl.init {
                ConstInit::Weights { r#ref } => (
                    Some(r#ref.clone()),
                    weights.get(r#ref).copied(),
                    source.clone(),
                ),
                ConstInit::InlineBytes { bytes } => (None, Some(&bytes[..]), "inline".into()),
                ConstInit::Scalar { .. } => (None, None, "inline".into()),
            };
            Row {
                name: name.clone(),
                reference,
                data_type: decl.data_type.json_name().to_string(),
                shape: decl.shape.clone(),
                source: from,
                byte_length: bytes.map(|b| b.len() as u64),
                sha256: bytes.map(|b| hex(&Sha256::digest(b))),
                shared_with: None,
            }
        })
        .collect()
}

fn json(rows: &[Row]) -> String {
    let array: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name,
                "ref": r.reference,
                "dataType": r.data_type,
                "shape": r.shape,
                "source": r.source,
                "byteLength": r.byte_length,
                "sha256": r.sha256,
                "sharedWith": r.shared_with,
            })
        })
        .collect();
    let mut text = serde_json::Value::Array(array).to_string();
    text.push('\n');
    text
}

fn table(rows: &[Row]) -> String {
    let header = [
        "name",
        "ref",
        "dataType",
        "shape",
        "source",
        "byteLength",
        "sha256",
    ]
    .map(String::from);
    let mut cells: Vec<[String; 7]> = vec![header];
    for r in rows {
        cells.push([
            r.name.clone(),
            r.reference.clone().unwrap_or_else(|| "-".into()),
            r.data_type.clone(),
            format!("{:?}", r.shape),
            r.source.clone(),
            r.byte_length.map_or_else(|| "-".into(), |n| n.to_string()),
            r.sha256.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    let mut widths = [0usize; 7];
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut text = String::new();
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 6 {
                    c.clone()
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        text.push_str(line.join("  ").trim_end());
        text.push('\n');
    }
    text.push_str(&shared_notes(rows));
    text
}

/// One `shared:` line per group of constants on the same stored bytes (rows are sorted by
/// name, so a group's first constant comes first); empty without sharing.
fn shared_notes(rows: &[Row]) -> String {
    let mut groups: Vec<(&str, Vec<&str>, Option<u64>)> = Vec::new();
    for r in rows {
        if let Some(first) = &r.shared_with {
            match groups.iter_mut().find(|g| g.0 == first.as_str()) {
                Some(group) => group.1.push(&r.name),
                None => groups.push((first, vec![&r.name], r.byte_length)),
            }
        }
    }
    let mut text = String::new();
    for (first, others, length) in groups {
        let bytes = length.map_or_else(String::new, |n| format!(", {}", super::counted(n, "byte")));
        let verb = if others.len() == 1 { "uses" } else { "use" };
        text.push_str(&format!(
            "shared: {} {verb} the bytes of {first} (one stored range{bytes}, read once)\n",
            others.join(", ")
        ));
    }
    text
}
