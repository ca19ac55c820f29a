//! Streaming weights to a device one constant at a time: plan (`plan_external_weights`),
//! then read each constant through one `ConstantReader` (`WeightPlan::reader`: the sidecar
//! opened once, small neighbouring constants read together), hand the bytes over and drop
//! them, so peak memory is about the largest tensor (or 1 MiB of read-ahead), not the
//! model. (`ConstantReader::copy_constant` into a reused `Vec` or a device writer saves
//! even the per-constant allocation.)
//!
//! `cargo run -p webnn-weights-runtime --example streaming -- GRAPH [WEIGHTS [MANIFEST]]`
//! (without arguments it writes a small model into a temporary folder and streams that).

use std::path::{Path, PathBuf};
use webnn_weights_runtime::{plan_external_weights, read_graph_file, ConstInit};

/// Stands for a device upload (a GPU buffer, an accelerator's memory): here it checks the
/// length and sums the bytes.
fn upload(name: &str, bytes: &[u8], checksum: &mut u64) {
    *checksum = bytes.iter().fold(*checksum, |s, &b| {
        s.wrapping_mul(31).wrapping_add(u64::from(b))
    });
    println!("uploaded {name}: {} bytes", bytes.len());
}

fn run(graph_path: &Path, weights: Option<&Path>, manifest: Option<&Path>) -> Result<(), String> {
    let graph = read_graph_file(graph_path).map_err(|e| e.to_string())?;
    // 1. Plan: every rule of the format is checked; no tensor byte is read yet.
    let plan =
        plan_external_weights(&graph, graph_path, weights, manifest).map_err(|e| e.to_string())?;
    let largest = plan.constants().iter().map(|c| c.length).max().unwrap_or(0);
    println!(
        "{} external constants, largest {largest} bytes",
        plan.constants().len()
    );
    // 2. One constant at a time: read (BF16 widened), upload, drop.
    let mut checksum = 0u64;
    let mut reader = plan.reader();
    for c in plan.constants() {
        let bytes = reader.read_constant(c).map_err(|e| e.to_string())?;
        upload(&c.name, &bytes, &mut checksum);
    }
    // 3. The sidecar did not change while it was read (else the uploads are suspect).
    reader.finish().map_err(|e| e.to_string())?;
    // Inline constants are already in the graph.
    for (name, decl) in &graph.consts {
        if let ConstInit::InlineBytes { bytes } = &decl.init {
            upload(name, bytes, &mut checksum);
        }
    }
    println!("checksum {checksum:016x}");
    Ok(())
}

/// A small model (a SafeTensors archive found by discovery) in a temporary folder.
fn demo_model(dir: &Path) -> std::io::Result<PathBuf> {
    let graph = dir.join("demo.webnn");
    std::fs::write(
        &graph,
        "webnn_graph \"demo\" v2 {\n  inputs { x: f32[4]; }\n  consts {\n    w: f32[4] @weights(\"layer.w\");\n    b: f32[4] @weights(\"layer.b\");\n  }\n  nodes { y = add(x, w); z = add(y, b); }\n  outputs { z; }\n}\n",
    )?;
    let header = r#"{"layer.w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"layer.b":{"dtype":"BF16","shape":[4],"data_offsets":[16,24]}}"#;
    let mut archive = (header.len() as u64).to_le_bytes().to_vec();
    archive.extend_from_slice(header.as_bytes());
    for v in [1.0f32, 2.0, 3.0, 4.0] {
        archive.extend_from_slice(&v.to_le_bytes());
    }
    archive.extend_from_slice(&[0x80, 0x3f, 0x00, 0x40, 0x40, 0x40, 0x80, 0x40]); // BF16 1, 2, 3, 4
    std::fs::write(dir.join("demo.safetensors"), archive)?;
    Ok(graph)
}

fn main() -> Result<(), String> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    match args.as_slice() {
        [] => {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let graph = demo_model(dir.path()).map_err(|e| e.to_string())?;
            run(&graph, None, None)
        }
        [graph] => run(graph, None, None),
        [graph, weights] => run(graph, Some(weights), None),
        [graph, weights, manifest] => run(graph, Some(weights), Some(manifest)),
        _ => Err("usage: streaming GRAPH [WEIGHTS [MANIFEST]]".to_string()),
    }
}
