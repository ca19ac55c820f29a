//! Shared helpers of the resolver tests.
#![allow(clippy::result_large_err)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson, ResolveError};

/// A graph of `@weights` constants: (constant, type, shape, reference).
pub fn graph(consts: &[(&str, DataType, &[u32], &str)]) -> GraphJson {
    let mut g = GraphJson::new(None);
    for &(name, data_type, shape, reference) in consts {
        g.consts.insert(
            name.to_string(),
            ConstDecl {
                data_type,
                shape: shape.to_vec(),
                init: ConstInit::Weights {
                    r#ref: reference.to_string(),
                },
            },
        );
    }
    g
}

/// Writes a SafeTensors file with exactly this header JSON and data section.
pub fn write_raw_safetensors(path: &Path, header: &serde_json::Value, data: &[u8]) {
    let text = serde_json::to_vec(header).unwrap();
    let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&text);
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

/// A tensor entry list (name, dtype, shape, bytes) -> header + data, offsets in order.
pub fn write_safetensors(
    path: &Path,
    metadata: Option<&[(&str, &str)]>,
    tensors: &[(&str, &str, &[u64], &[u8])],
) {
    let mut header = serde_json::Map::new();
    if let Some(meta) = metadata {
        let m: serde_json::Map<String, serde_json::Value> = meta
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
        header.insert("__metadata__".into(), m.into());
    }
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let start = data.len();
        data.extend_from_slice(bytes);
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    write_raw_safetensors(path, &serde_json::Value::Object(header), &data);
}

/// Writes a blob and a manifest of (name, offset, length).
pub fn write_blob(blob: &Path, bytes: &[u8], manifest: &Path, entries: &[(&str, u64, u64)]) {
    std::fs::write(blob, bytes).unwrap();
    let tensors: serde_json::Map<String, serde_json::Value> = entries
        .iter()
        .map(|(n, o, l)| {
            (
                n.to_string(),
                serde_json::json!({"byteOffset": o, "byteLength": l}),
            )
        })
        .collect();
    std::fs::write(
        manifest,
        serde_json::to_vec(
            &serde_json::json!({"format":"wg-weights-manifest","version":1,"tensors": tensors}),
        )
        .unwrap(),
    )
    .unwrap();
}

/// Resolves and returns the inline bytes of constant `name`.
pub fn resolve_one(
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
    name: &str,
) -> Result<Vec<u8>, ResolveError> {
    let mut g = g.clone();
    webnn_weights_runtime::resolve_external_weights(&mut g, graph_path, weights, manifest)?;
    match &g.consts[name].init {
        ConstInit::InlineBytes { bytes } => Ok(bytes.to_vec()),
        other => panic!("constant {name} not resolved: {other:?}"),
    }
}

/// Resolves and expects an error whose message, followed by its fix (data of the error,
/// on its own line), contains every word; the message itself carries no fix.
pub fn expect_error(
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
    words: &[&str],
) -> ResolveError {
    let mut copy = g.clone();
    let err =
        webnn_weights_runtime::resolve_external_weights(&mut copy, graph_path, weights, manifest)
            .expect_err("resolution should fail");
    assert_eq!(&copy, g, "the graph must be untouched on error");
    let msg = err.to_string();
    assert!(!msg.contains("fix:"), "the fix is data, not text: {msg}");
    let msg = match err.fix() {
        Some(fix) => format!("{msg}\nfix: {fix}"),
        None => msg,
    };
    for w in words {
        assert!(msg.contains(w), "message lacks {w:?}: {msg}");
    }
    err
}

pub fn path_in(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}
