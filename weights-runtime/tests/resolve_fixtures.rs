//! Every fixture made by other producers resolves to the exact bytes of its sidecar.
//!
//! Expected bytes are computed here from the files, independently of the resolver: the
//! SafeTensors archive is parsed with `safetensors::SafeTensors::deserialize` over the whole
//! file, manifests with `serde_json`, names matched exactly or after normalization, BF16
//! widened with `half`.

mod common;
use common::MappedHere;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{read_graph_file, ConstInit, DataType, GraphJson, GraphLoader};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn external(graph: &GraphJson) -> BTreeMap<String, (String, DataType, Vec<u32>)> {
    graph
        .consts
        .iter()
        .filter_map(|(name, c)| match &c.init {
            ConstInit::Weights { r#ref } => {
                Some((name.clone(), (r#ref.clone(), c.data_type, c.shape.clone())))
            }
            _ => None,
        })
        .collect()
}

fn normalize(s: &str) -> String {
    s.replace("::", "__").replace('.', "_")
}

fn find<'a>(names: impl Iterator<Item = &'a str> + Clone, reference: &str) -> &'a str {
    if let Some(n) = names.clone().find(|n| *n == reference) {
        return n;
    }
    let matches: Vec<&str> = names.filter(|n| normalize(n) == reference).collect();
    assert_eq!(
        matches.len(),
        1,
        "fixture reference {reference} must match exactly one name: {matches:?}"
    );
    matches[0]
}

/// The expected bytes of every external constant of `graph`, from a SafeTensors archive.
fn expected_from_safetensors(graph: &GraphJson, archive: &Path) -> BTreeMap<String, Vec<u8>> {
    let bytes = std::fs::read(archive).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let names = st.names();
    external(graph)
        .into_iter()
        .map(|(name, (reference, data_type, _))| {
            let stored = find(names.iter().copied(), &reference);
            let view = st.tensor(stored).unwrap();
            let data = if view.dtype() == safetensors::Dtype::BF16 {
                assert_eq!(data_type, DataType::Float32);
                view.data()
                    .chunks(2)
                    .flat_map(|b| {
                        half::bf16::from_le_bytes([b[0], b[1]])
                            .to_f32()
                            .to_le_bytes()
                    })
                    .collect()
            } else {
                view.data().to_vec()
            };
            (name, data)
        })
        .collect()
}

/// The expected bytes of every external constant of `graph`, from a blob and manifest.
fn expected_from_blob(
    graph: &GraphJson,
    blob: &Path,
    manifest: &Path,
) -> BTreeMap<String, Vec<u8>> {
    let bytes = std::fs::read(blob).unwrap();
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(manifest).unwrap()).unwrap();
    let tensors = m["tensors"].as_object().unwrap();
    external(graph)
        .into_iter()
        .map(|(name, (reference, _, _))| {
            let stored = find(tensors.keys().map(String::as_str), &reference);
            let e = &tensors[stored];
            let off = e["byteOffset"].as_u64().unwrap() as usize;
            let len = e["byteLength"].as_u64().unwrap() as usize;
            (name, bytes[off..off + len].to_vec())
        })
        .collect()
}

fn resolved(graph: GraphJson) -> BTreeMap<String, Vec<u8>> {
    assert!(!graph.has_external_weights());
    graph
        .consts
        .into_iter()
        .filter_map(|(name, c)| match c.init {
            ConstInit::InlineBytes { bytes } => Some((name, bytes.to_vec())),
            _ => None,
        })
        .collect()
}

/// Resolves the fixture with the loader (owned, then mapped), and in every mode of
/// `common::MODES` (owned, mapped, in memory, embedded, embedded fallback): each gives the
/// expected bytes.
fn check(
    graph_file: &str,
    loader: GraphLoader,
    paths: (Option<&str>, Option<&str>),
    expected: impl Fn(&GraphJson) -> BTreeMap<String, Vec<u8>>,
) {
    let path = fixtures().join(graph_file);
    let original = read_graph_file(&path).unwrap();
    let want = expected(&original);
    assert!(!want.is_empty(), "{graph_file} has external constants");
    let (weights, manifest) = (paths.0.map(Path::new), paths.1.map(Path::new));
    let mut results = vec![
        loader.load().unwrap(),
        loader.clone().mapped_here().load().unwrap(),
    ];
    for mode in common::MODES {
        if cfg!(target_family = "wasm") && mode == common::Mode::Mapped {
            continue; // no mapping on wasm32 (`MappingUnsupported`, resolve_api.rs)
        }
        let got = common::resolve_in(mode, &original, &path, weights, manifest)
            .expect("a fixture has a sidecar")
            .unwrap();
        results.push(got);
    }
    for (i, graph) in results.into_iter().enumerate() {
        let mut got = resolved(graph);
        got.retain(|name, _| want.contains_key(name));
        assert_eq!(got, want, "{graph_file}, run {i}");
    }
}

#[test]
fn hf_safetensors_encoder_by_discovery() {
    let dir = fixtures().join("hf-safetensors");
    check(
        "hf-safetensors/encoder.webnn",
        GraphLoader::new(dir.join("encoder.webnn")),
        (None, None),
        |g| expected_from_safetensors(g, &dir.join("model.safetensors")),
    );
}

#[test]
fn hf_safetensors_head_bf16_with_explicit_weights() {
    let dir = fixtures().join("hf-safetensors");
    check(
        "hf-safetensors/head.webnn",
        GraphLoader::new(dir.join("head.webnn")).weights("lm_head.safetensors"),
        (Some("lm_head.safetensors"), None),
        |g| expected_from_safetensors(g, &dir.join("lm_head.safetensors")),
    );
    // the archive really holds BF16: the resolved float32 constant is twice its stored size
    let plan = webnn_weights_runtime::plan_external_weights(
        &read_graph_file(dir.join("head.webnn")).unwrap(),
        &dir.join("head.webnn"),
        Some(Path::new("lm_head.safetensors")),
        None,
    )
    .unwrap();
    assert!(plan
        .constants()
        .iter()
        .all(|c| c.conversion == webnn_weights_runtime::Conversion::Bf16ToF32));
}

#[test]
fn packed4_archive_by_discovery() {
    let dir = fixtures().join("packed4");
    check(
        "packed4/quant.webnn",
        GraphLoader::new(dir.join("quant.webnn")),
        (None, None),
        |g| expected_from_safetensors(g, &dir.join("quant.safetensors")),
    );
}

#[test]
fn onnx_layout_headerless_blob_by_discovery() {
    let dir = fixtures().join("onnx-layout");
    check(
        "onnx-layout/model.webnn",
        GraphLoader::new(dir.join("model.webnn")),
        (None, None),
        |g| {
            expected_from_blob(
                g,
                &dir.join("model.weights"),
                &dir.join("model.manifest.json"),
            )
        },
    );
}

#[test]
#[cfg_attr(
    target_os = "wasi",
    ignore = "Node 20's WASI crashes (SIGSEGV) in the program's teardown after this test passed"
)]
fn resnet_head_wgwt_blob_by_discovery() {
    let dir = fixtures().join("resnet-head");
    check(
        "resnet-head/resnet_head.webnn",
        GraphLoader::new(dir.join("resnet_head.webnn")),
        (None, None),
        |g| {
            expected_from_blob(
                g,
                &dir.join("resnet_head.weights"),
                &dir.join("resnet_head.manifest.json"),
            )
        },
    );
    assert_eq!(
        &std::fs::read(dir.join("resnet_head.weights")).unwrap()[..4],
        b"WGWT"
    );
}

#[test]
fn tiny_extract_explicit_paths_and_original_bytes() {
    let dir = fixtures().join("tiny-extract");
    check(
        "tiny-extract/tiny.extracted.json",
        GraphLoader::new(dir.join("tiny.extracted.json"))
            .weights("tiny.weights")
            .manifest("tiny.manifest.json"),
        (Some("tiny.weights"), Some("tiny.manifest.json")),
        |g| {
            expected_from_blob(
                g,
                &dir.join("tiny.weights"),
                &dir.join("tiny.manifest.json"),
            )
        },
    );
    // extract-weights moved the inline bytes of tiny.webnn: resolving gives them back
    let back = GraphLoader::new(dir.join("tiny.extracted.json"))
        .weights("tiny.weights")
        .manifest("tiny.manifest.json")
        .load()
        .unwrap();
    let original = webnn_weights_runtime::load_graph(dir.join("tiny.webnn")).unwrap();
    assert_eq!(back.consts, original.consts);
}
