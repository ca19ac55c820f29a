//! `to-safetensors`: any resolvable graph -> one SafeTensors archive or the Hugging Face sharded
//! layout (+ rewritten graph); `--max-shard-size` is read as Hugging Face spells a size.

use super::weight_tools_common::{distinct_outputs, note, stage_graph};
use super::{counted, CliError};
use super::{CompactArg, GraphFormat};
use crate::progress::Bar;
use clap::Args;
use std::path::PathBuf;
use webnn_weights_runtime::read_graph_file;
use webnn_weights_tools::weight_tools::{to_safetensors, Staging, ToolError};

/// Arguments of `to-safetensors`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  webnn-weights to-safetensors model.webnn --output model.safetensors\n  webnn-weights to-safetensors model.json --weights model.weights \\\n      --manifest model.manifest.json --output model.safetensors --graph-output model.webnn\n  webnn-weights to-safetensors model.webnn --output model.safetensors --max-shard-size 2GB\n\n\
Collects every constant with bytes (from a .weights blob, a SafeTensors archive or inline \
bytes) into one archive; int4/uint4 are stored packed with the rustnn.webnn.packed4 marker. \
Archive names are the existing @weights references (so the original graph still resolves \
against the new archive) and, for inline constants, the constant names. --graph-output writes \
the graph with every such constant as @weights (GraphJson, or .webnn text by extension). \
--weights and --manifest are relative to the graph's folder (as for resolve and inspect); \
without them, the sidecar is discovered beside the graph. --max-shard-size writes the Hugging \
Face sharded layout instead: model-00001-of-0000N.safetensors ... and \
model.safetensors.index.json (tensors in name order, none split; one larger than SIZE gets its \
own shard; all files installed together, the index last). When everything fits in one shard, \
only OUT is written, as Hugging Face does. The archive and the graph are installed as one set: \
if a file cannot be installed, every file this run replaced is put back."
)]
pub struct ToSafetensorsArgs {
    /// The graph (.webnn text or GraphJson, detected by content).
    #[arg(value_name = "GRAPH")]
    pub graph: PathBuf,
    #[command(flatten)]
    pub sidecar: super::SidecarArgs,
    /// The archive to write.
    #[arg(short, long, value_name = "OUT.safetensors")]
    pub output: PathBuf,
    /// Also write the graph rewritten to @weights references into the new archive.
    #[arg(long, value_name = "GRAPH")]
    pub graph_output: Option<PathBuf>,
    /// Write a sharded archive in the Hugging Face layout: shards of at most SIZE bytes of
    /// tensor data (`500MB`, `2GiB`, or bytes; MB = 10^6, MiB = 2^20) named
    /// `<stem>-0000k-of-0000N.safetensors` beside OUT, plus `<stem>.safetensors.index.json`.
    #[arg(long, value_name = "SIZE", value_parser = parse_shard_size)]
    pub max_shard_size: Option<u64>,
    #[command(flatten)]
    pub compact: CompactArg,
}

/// Parses a shard size as Hugging Face's `max_shard_size` does: plain bytes (`1000000`),
/// or a number with a decimal unit (`kB`/`KB`, `MB`, `GB`, `TB`: powers of 1000) or a
/// binary unit (`KiB`, `MiB`, `GiB`, `TiB`: powers of 1024), letter case ignored, with an
/// optional `B` for bytes. Zero, fractions, bits and overflow are rejected.
fn parse_shard_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    let (number, unit) = trimmed.split_at(digits);
    let unit = unit.trim();
    let expected = "expected bytes (e.g. 1000000) or a whole number with a unit: kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
    let bad = |why: &str| format!("invalid shard size \"{text}\": {why}; {expected}");
    if number.is_empty() {
        return Err(bad("no number"));
    }
    if unit.starts_with('.') || unit.starts_with(',') {
        return Err(bad("fractions are not accepted (use a smaller unit)"));
    }
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => return Err(bad(&format!("unknown unit \"{unit}\""))),
    };
    let n: u64 = number.parse().map_err(|_| bad("the number is too large"))?;
    let size = n
        .checked_mul(multiplier)
        .ok_or_else(|| bad("the size does not fit 64 bits"))?;
    if size == 0 {
        return Err(bad("a shard size must be at least one byte"));
    }
    Ok(size)
}

/// Runs `to-safetensors`.
pub fn run(args: &ToSafetensorsArgs) -> Result<(), CliError> {
    if let Some(graph_output) = &args.graph_output {
        distinct_outputs(&[("--output", &args.output), ("--graph-output", graph_output)])?;
        GraphFormat::for_tool_output(graph_output)
            .check_style(args.compact.style(), graph_output)?;
    } else if args.compact.compact {
        return Err(CliError::Usage(
            "--compact applies to the graph written by --graph-output, which is not given".into(),
        ));
    }
    args.sidecar.check_exist(&args.graph)?;
    let graph = read_graph_file(&args.graph).map_err(ToolError::from)?;
    let conversion = to_safetensors(
        &graph,
        &args.graph,
        args.sidecar.weights(),
        args.sidecar.manifest(),
        &mut Bar::new("reading"),
    )?;
    // The graph is staged first (its errors before the archive is serialized); every file
    // is installed as one set, the archive first and the graph last: a failure leaves every
    // destination as it was.
    let mut graph = Staging::new();
    if let Some(path) = &args.graph_output {
        stage_graph(&mut graph, path, &conversion.graph, args.compact.style())?;
    }
    let mut staging = Staging::new();
    let written = conversion.stage(&args.output, args.max_shard_size, &mut staging)?;
    staging.append(graph);
    staging.commit()?;
    let Some(max_shard_size) = args.max_shard_size else {
        note(format_args!(
            "wrote {} ({}) to {}",
            counted(conversion.tensors(), "tensor"),
            counted(conversion.bytes(), "byte"),
            args.output.display()
        ));
        return Ok(());
    };
    if written.index.is_some() && args.output.is_file() {
        // Discovery prefers an archive to an index: say so rather than surprise later.
        note(format_args!(
            "note: {} exists (from an earlier run?) and is found before the index by discovery; remove it to use the shards",
            args.output.display()
        ));
    }
    match &written.index {
        Some(index) => note(format_args!(
            "wrote {} ({}) to {} and their index {}",
            counted(conversion.tensors(), "tensor"),
            counted(conversion.bytes(), "byte"),
            counted(written.shards.len(), "shard"),
            index.display()
        )),
        None => note(format_args!(
            "wrote {} ({}) to {} (they fit in one shard of {max_shard_size} bytes: no index)",
            counted(conversion.tensors(), "tensor"),
            counted(conversion.bytes(), "byte"),
            args.output.display()
        )),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_sizes_parse_like_hugging_face() {
        for (text, size) in [
            ("500MB", 500_000_000),
            ("500mb", 500_000_000),
            ("2GiB", 2 << 30),
            ("10KiB", 10 << 10),
            ("5kB", 5_000),
            ("1TB", 1_000_000_000_000),
            ("123", 123),
            ("64 B", 64),
            ("4096", 4096),
        ] {
            assert_eq!(parse_shard_size(text), Ok(size), "{text}");
        }
        for (text, words) in [
            ("0", "at least one byte"),
            ("1.5GB", "fractions"),
            ("GB", "no number"),
            ("5PB", "unknown unit"),
            ("5 parsecs", "unknown unit"),
            ("99999999999TB", "64 bits"),
        ] {
            let err = parse_shard_size(text).unwrap_err();
            assert!(err.contains(words) && err.contains(text), "{err}");
        }
    }
}
