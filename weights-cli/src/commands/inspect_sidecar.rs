//! `inspect` of a sidecar on its own: a SafeTensors archive, a sharded archive's index
//! (every shard's header), or a `.weights` blob with its manifest.

use super::{counted, CliError};
use std::io::Write;
use std::path::Path;
use webnn_weights_runtime::formats::SidecarFormat;
use webnn_weights_runtime::GraphFileFormat;
use webnn_weights_tools::weight_tools::{
    inspect_blob, inspect_safetensors, inspect_sharded, SidecarReport, ALIGNMENT_CAP,
};

/// Whether `path` should be inspected as a sidecar rather than as a graph: graph files
/// start with `webnn_graph` or `{` (after whitespace and `#` comments). A SafeTensors
/// archive (by extension) is a sidecar; so is a `.weights`/`.bin` file when a
/// manifest is given (its first bytes may be anything), and any file that is not a graph.
/// An unreadable file is left to the graph reader, which reports it.
pub fn is_sidecar(path: &Path, has_manifest: bool) -> bool {
    if SidecarFormat::of_path(path) != SidecarFormat::Blob {
        return true;
    }
    let blob_name = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("weights") || e.eq_ignore_ascii_case("bin"));
    if has_manifest && blob_name {
        return true;
    }
    let mut head = Vec::with_capacity(1 << 16);
    let read = std::fs::File::open(path)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, 1 << 16), &mut head));
    if read.is_err() {
        return false;
    }
    // A graph's first 64 KiB may end inside a multi-byte character: lossy is enough to
    // see how it starts.
    let text = String::from_utf8_lossy(&head);
    GraphFileFormat::detect(&text).is_none()
}

/// Prints the report of the sidecar at `path` (table, or a JSON object with `--json`).
pub fn run(path: &Path, manifest: Option<&Path>, json: bool) -> Result<(), CliError> {
    let format = SidecarFormat::of_path(path);
    let report = if format == SidecarFormat::SafeTensors {
        inspect_safetensors(path)?
    } else if format == SidecarFormat::ShardedSafeTensors {
        inspect_sharded(path)?
    } else {
        let Some(manifest) = manifest else {
            // The name decides the kind, as in `resolve`; the content only suggests a fix.
            let hint = if SidecarFormat::sniff_file(path) == Some(SidecarFormat::SafeTensors) {
                format!(
                    "; its content looks like a SafeTensors archive: archives are recognized \
                     by the extension .safetensors (rename it, e.g. to {}.safetensors)",
                    path.file_stem()
                        .map_or("model".into(), |s| s.to_string_lossy())
                )
            } else {
                String::new()
            };
            return Err(CliError::Usage(format!(
                "{}: not a graph and not a SafeTensors archive (by its extension); to inspect \
                 a .weights blob, pass its manifest with --manifest{hint}",
                path.display()
            )));
        };
        inspect_blob(path, manifest)?
    };
    let text = if json {
        report_json(&report)
    } else {
        report_table(&report)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Input(format!("cannot write to stdout: {e}")))
}

fn shape_text(shape: &Option<Vec<u64>>) -> String {
    match shape {
        Some(dims) => format!(
            "[{}]",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "-".to_string(),
    }
}

/// The human-readable report.
fn report_table(report: &SidecarReport) -> String {
    let mut s = format!(
        "{} ({}, {}, {})\n",
        report.path.display(),
        report.kind,
        counted(report.file_len, "byte"),
        counted(report.tensors.len(), "tensor")
    );
    for (k, v) in &report.metadata {
        s.push_str(&format!("  {k}: {v}\n"));
    }
    let rows: Vec<[String; 6]> = report
        .tensors
        .iter()
        .map(|t| {
            [
                match &t.shard {
                    // A sharded archive: the shard before the name.
                    Some(shard) => format!(
                        "{} {}",
                        shard.file_name().map_or_else(
                            || shard.display().to_string(),
                            |n| n.to_string_lossy().into_owned()
                        ),
                        t.name
                    ),
                    None => t.name.clone(),
                },
                t.data_type.clone(),
                shape_text(&t.shape),
                t.offset.to_string(),
                t.length.to_string(),
                if t.alignment >= ALIGNMENT_CAP {
                    format!(">={ALIGNMENT_CAP}")
                } else {
                    t.alignment.to_string()
                },
            ]
        })
        .collect();
    let first = if report.tensors.iter().any(|t| t.shard.is_some()) {
        "shard name"
    } else {
        "name"
    };
    let header = [first, "dtype", "shape", "offset", "bytes", "align"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            if i >= 3 {
                l.push_str(&format!("{cell:>w$}"));
            } else {
                l.push_str(&format!("{cell:<w$}"));
            }
        }
        l.trim_end().to_string() + "\n"
    };
    s.push_str(&line(header));
    for row in &rows {
        s.push_str(&line([
            &row[0], &row[1], &row[2], &row[3], &row[4], &row[5],
        ]));
    }
    s
}

/// The machine-readable report: `{path, kind, fileLength, metadata, tensors: [{name,
/// dataType, shape, byteOffset, byteLength, alignment}]}`.
fn report_json(report: &SidecarReport) -> String {
    let tensors: Vec<serde_json::Value> = report
        .tensors
        .iter()
        .map(|t| {
            let mut row = serde_json::json!({
                "name": t.name,
                "dataType": t.data_type,
                "shape": t.shape,
                "byteOffset": t.offset,
                "byteLength": t.length,
                "alignment": t.alignment,
            });
            if let Some(shard) = &t.shard {
                row["shard"] = shard.display().to_string().into();
            }
            row
        })
        .collect();
    let value = serde_json::json!({
        "path": report.path.display().to_string(),
        "kind": report.kind,
        "fileLength": report.file_len,
        "metadata": report.metadata,
        "tensors": tensors,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}
