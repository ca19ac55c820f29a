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

/// The bytes of a SafeTensors file with exactly this header JSON and data section.
pub fn raw_safetensors_bytes(header: &serde_json::Value, data: &[u8]) -> Vec<u8> {
    let text = serde_json::to_vec(header).unwrap();
    let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&text);
    bytes.extend_from_slice(data);
    bytes
}

/// Writes a SafeTensors file with exactly this header JSON and data section.
pub fn write_raw_safetensors(path: &Path, header: &serde_json::Value, data: &[u8]) {
    std::fs::write(path, raw_safetensors_bytes(header, data)).unwrap();
}

/// The bytes of an archive of tensors (name, dtype, shape, bytes), offsets in order, with
/// an optional `__metadata__`.
pub fn safetensors_bytes(
    metadata: Option<&[(&str, &str)]>,
    tensors: &[(&str, &str, &[u64], &[u8])],
) -> Vec<u8> {
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
    raw_safetensors_bytes(&serde_json::Value::Object(header), &data)
}

/// A tensor entry list (name, dtype, shape, bytes) -> header + data, offsets in order.
pub fn write_safetensors(
    path: &Path,
    metadata: Option<&[(&str, &str)]>,
    tensors: &[(&str, &str, &[u64], &[u8])],
) {
    std::fs::write(path, safetensors_bytes(metadata, tensors)).unwrap();
}

/// The JSON of a manifest of (name, offset, length).
pub fn manifest_text(entries: &[(&str, u64, u64)]) -> String {
    let tensors: serde_json::Map<String, serde_json::Value> = entries
        .iter()
        .map(|(n, o, l)| {
            (
                n.to_string(),
                serde_json::json!({"byteOffset": o, "byteLength": l}),
            )
        })
        .collect();
    serde_json::json!({"format":"wg-weights-manifest","version":1,"tensors": tensors}).to_string()
}

/// Writes a blob and a manifest of (name, offset, length).
pub fn write_blob(blob: &Path, bytes: &[u8], manifest: &Path, entries: &[(&str, u64, u64)]) {
    std::fs::write(blob, bytes).unwrap();
    std::fs::write(manifest, manifest_text(entries)).unwrap();
}

/// The ways of getting a resolved graph that every conformance test runs through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `resolve_external_weights`: positioned reads into owned memory.
    Owned,
    /// `GraphLoader::from_graph(..).graph_path(..).mapped()`: views into a read-only map.
    Mapped,
    /// `GraphLoader::from_graph(..).weights_bytes(..)[.manifest_bytes(..)]`: the sidecar
    /// found as discovery would find it, read into memory first (no discovery).
    Memory,
}

pub const MODES: [Mode; 3] = [Mode::Owned, Mode::Mapped, Mode::Memory];

/// The sidecar and manifest that discovery (or the explicit paths) would pick, as the
/// format states the rules; `None` where there is none (then the in-memory mode does
/// not apply: it has no discovery).
fn sidecar_files(
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Option<(PathBuf, Option<PathBuf>)> {
    let folder = graph_path.parent().unwrap_or(Path::new("."));
    let stem = graph_path.file_stem()?.to_string_lossy().into_owned();
    let weights = match weights {
        Some(w) => folder.join(w),
        None => [
            format!("{stem}.safetensors"),
            format!("{stem}.weights"),
            "model.safetensors".into(),
            "model.weights".into(),
        ]
        .iter()
        .map(|n| folder.join(n))
        .find(|p| p.exists())?,
    };
    if !weights.is_file() {
        return None;
    }
    let archive = weights
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| {
            e.eq_ignore_ascii_case("safetensors") || e.eq_ignore_ascii_case("safetensor")
        });
    if archive {
        return Some((weights, None));
    }
    let manifest = match manifest {
        Some(m) => folder.join(m),
        None => [format!("{stem}.manifest.json"), "manifest.json".into()]
            .iter()
            .map(|n| folder.join(n))
            .find(|p| p.exists())?,
    };
    manifest.is_file().then_some((weights, Some(manifest)))
}

/// Resolves `g` in `mode`; `None` when the mode does not apply (in memory, without a
/// sidecar to read).
pub fn resolve_in(
    mode: Mode,
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Option<Result<GraphJson, ResolveError>> {
    let loader = webnn_weights_runtime::GraphLoader::from_graph(g.clone()).graph_path(graph_path);
    let loaded = match mode {
        Mode::Owned => {
            let mut copy = g.clone();
            let result = webnn_weights_runtime::resolve_external_weights(
                &mut copy, graph_path, weights, manifest,
            );
            if result.is_err() {
                assert_eq!(&copy, g, "the graph must be untouched on error");
            }
            return Some(result.map(|()| copy));
        }
        Mode::Mapped => {
            let mut loader = loader.mapped();
            if let Some(w) = weights {
                loader = loader.weights(w);
            }
            if let Some(m) = manifest {
                loader = loader.manifest(m);
            }
            loader.load()
        }
        Mode::Memory => {
            let (sidecar, manifest) = sidecar_files(graph_path, weights, manifest)?;
            let mut loader = loader.weights_bytes(std::fs::read(sidecar).unwrap());
            if let Some(m) = manifest {
                loader = loader.manifest_bytes(std::fs::read(m).unwrap());
            }
            loader.load()
        }
    };
    Some(loaded.map_err(|e| match e {
        webnn_weights_runtime::Error::Resolve(e) => *e,
        other => panic!("{mode:?}: not a resolver error: {other}"),
    }))
}

/// Resolves `g` in every mode and checks that they agree: byte-identical graphs, or the
/// same error (in memory, with the sidecar's and manifest's paths read as their labels).
/// Returns the owned result.
pub fn resolve_all_modes(
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Result<GraphJson, ResolveError> {
    let owned = resolve_in(Mode::Owned, g, graph_path, weights, manifest).unwrap();
    let files = sidecar_files(graph_path, weights, manifest);
    for mode in [Mode::Mapped, Mode::Memory] {
        let Some(other) = resolve_in(mode, g, graph_path, weights, manifest) else {
            assert_eq!(mode, Mode::Memory);
            assert!(
                owned.is_err(),
                "only failed discoveries have no in-memory run"
            );
            continue;
        };
        match (&owned, &other) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{mode:?} differs from owned"),
            (Err(a), Err(b)) => {
                let mut expected = a.to_string();
                if mode == Mode::Memory {
                    let Some((sidecar, manifest)) = &files else {
                        unreachable!()
                    };
                    // Errors of reading files have no in-memory counterpart.
                    if matches!(a, ResolveError::Io { .. } | ResolveError::Changed { .. }) {
                        continue;
                    }
                    expected =
                        expected.replace(&sidecar.display().to_string(), "<weights in memory>");
                    if let Some(m) = manifest {
                        expected =
                            expected.replace(&m.display().to_string(), "<manifest in memory>");
                    }
                }
                assert_eq!(expected, b.to_string(), "{mode:?}: a different error");
                assert_eq!(a.fix(), b.fix());
            }
            (a, b) => panic!("{mode:?} disagrees with owned: {b:?} vs {a:?}"),
        }
    }
    owned
}

/// Resolves (in every mode, which must agree) and returns the inline bytes of constant
/// `name`.
pub fn resolve_one(
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
    name: &str,
) -> Result<Vec<u8>, ResolveError> {
    let g = resolve_all_modes(g, graph_path, weights, manifest)?;
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
    let err =
        resolve_all_modes(g, graph_path, weights, manifest).expect_err("resolution should fail");
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
