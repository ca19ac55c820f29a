//! `web` and `emit-js`, run as a process: the three files of `web` (or none), the blob
//! and manifest read back by our own resolver, digests, tied weights once, and the
//! table's errors before any byte is read.

#[macro_use]
mod common;

use common::{
    assert_fails_leaving, assert_succeeds, fixtures, library_resolved, listing, with_paths,
};
use sha2::{Digest, Sha256};
use std::path::Path;
use webnn_weights_runtime::{read_graph_file, ConstInit, GraphJson, GraphLoader};

/// Fixture graphs of other producers whose operations WebNN builds, with their sidecars:
/// (graph, explicit weights, explicit manifest).
const CASES: [(&str, Option<&str>, Option<&str>); 6] = [
    ("hf-safetensors/encoder.webnn", None, None),
    ("packed4/quant.webnn", None, None),
    ("onnx-layout/model.webnn", None, None),
    ("resnet-head/resnet_head.webnn", None, None),
    (
        "tiny-extract/tiny.extracted.json",
        Some("tiny.weights"),
        Some("tiny.manifest.json"),
    ),
    (
        "hf-sharded/encoder.webnn",
        Some("model.safetensors.index.json"),
        None,
    ),
];

fn web(graph: &Path, weights: Option<&str>, manifest: Option<&str>, out: &Path) {
    let mut cmd = command!("web", "-o" => out);
    cmd.arg(graph);
    with_paths(&mut cmd, weights, manifest);
    assert_succeeds(&mut cmd);
}

fn inline(graph: &GraphJson, name: &str) -> Vec<u8> {
    match &graph.consts[name].init {
        ConstInit::InlineBytes { bytes } => bytes.to_vec(),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn web_writes_a_module_and_a_blob_our_resolver_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    for (graph, weights, manifest) in CASES {
        let graph = fixtures().join(graph);
        let stem = graph.file_stem().unwrap().to_str().unwrap().to_string();
        let out = dir.path().join(&stem);
        web(&graph, weights, manifest, &out);
        assert_eq!(
            listing(&out),
            [
                format!("{stem}.js"),
                format!("{stem}.manifest.json"),
                format!("{stem}.weights")
            ],
            "{}",
            graph.display()
        );
        // The written blob and manifest are a sidecar of the same graph: every constant
        // reads back as the original sidecar gives it (BF16 widened, shards joined).
        let expected = library_resolved(&graph, weights, manifest);
        let blob = out.join(format!("{stem}.weights"));
        let again = GraphLoader::new(&graph)
            .weights(&blob)
            .manifest(out.join(format!("{stem}.manifest.json")))
            .load()
            .unwrap();
        assert_eq!(again, expected, "{}", graph.display());
        assert_eq!(&std::fs::read(&blob).unwrap()[..8], b"WGWT\x01\0\0\0");
        // The module checks each of them against its SHA-256.
        let module = std::fs::read_to_string(out.join(format!("{stem}.js"))).unwrap();
        let original = read_graph_file(&graph).unwrap();
        for (name, decl) in &original.consts {
            if matches!(decl.init, ConstInit::Weights { .. }) {
                let digest = format!("{:x}", Sha256::digest(inline(&expected, name)));
                assert!(
                    module.contains(&format!("\"sha256\":\"{digest}\"")),
                    "{}: {name}",
                    graph.display()
                );
            }
        }
        assert!(module.contains("export async function buildGraph(context, weights)"));
        assert!(module.contains(&format!(
            "const FILES = {{ weights: \"{stem}.weights\", manifest: \"{stem}.manifest.json\" }};"
        )));
    }
}

#[test]
fn web_stores_tied_weights_once() {
    let dir = tempfile::tempdir().unwrap();
    // The tied fixture's weights under a graph WebNN builds (its matmul has an option
    // WebNN's matmul lacks).
    std::fs::copy(
        fixtures().join("tied/tied.safetensors"),
        dir.path().join("tied.safetensors"),
    )
    .unwrap();
    let graph = dir.path().join("tied.webnn");
    std::fs::write(
        &graph,
        r#"webnn_graph "tied" v1 {
  inputs { x: f32[16, 8]; }
  consts {
    embed: f32[16, 8] @weights("embed.weight");
    lm_head: f32[16, 8] @weights("embed.weight");
    unembed: f32[16, 8] @weights("embed_weight");
    norm: f32[8] @weights("norm");
  }
  nodes { a = add(x, embed); b = sub(a, lm_head); c = mul(b, unembed); y = add(c, norm); }
  outputs { y; }
}"#,
    )
    .unwrap();
    let out = dir.path().join("site");
    web(&graph, None, None, &out);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tied.manifest.json")).unwrap()).unwrap();
    let tensors = &manifest["tensors"];
    // Two references to one stored tensor: two entries, one range.
    assert_eq!(
        tensors["embed.weight"]["byteOffset"],
        tensors["embed_weight"]["byteOffset"]
    );
    let blob = std::fs::metadata(out.join("tied.weights")).unwrap().len();
    assert_eq!(blob, 8 + 16 * 8 * 4 + 8 * 4);
}

#[test]
fn web_refuses_what_the_browser_cannot_build_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A real producer's graph: matmul with bTranspose (rustnn drops the option silently).
    let head = fixtures().join("hf-safetensors/head.webnn");
    let out = dir.path().join("site");
    let mut cmd = command!("web", "-o" => &out, "--weights" => "lm_head.safetensors");
    cmd.arg(&head);
    assert_fails_leaving(
        dir.path(),
        cmd,
        1,
        &[
            "head.webnn: the graph cannot be built by WebNN's MLGraphBuilder",
            "node \"y\" (matmul): unknown option \"bTranspose\"",
        ],
    );
    let graph = dir.path().join("g.webnn");
    std::fs::write(
        &graph,
        r#"webnn_graph "g" v1 {
  inputs { x: f32[2]; }
  nodes { a = relu(x, alpha=1); b = squeeze(a); y = reshape(b); }
  outputs { y; }
}"#,
    )
    .unwrap();
    let mut cmd = command!("web", "-o" => &out);
    cmd.arg(&graph);
    assert_fails_leaving(
        dir.path(),
        cmd,
        1,
        &[
            "3 problems",
            "node \"a\" (relu): unknown option \"alpha\"",
            "node \"b\" (squeeze): \"squeeze\" is no WebNN operation",
            "node \"y\" (reshape): newShape is missing",
        ],
    );
}

#[test]
fn web_refuses_a_bad_sidecar_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.safetensors"), b"not an archive").unwrap();
    let graph = dir.path().join("g.webnn");
    std::fs::write(
        &graph,
        r#"webnn_graph "g" v1 {
  inputs { x: f32[2]; } consts { w: f32[2] @weights("w"); }
  nodes { y = add(x, w); } outputs { y; }
}"#,
    )
    .unwrap();
    let mut cmd = command!("web", "-o" => dir.path().join("site"));
    cmd.arg(&graph);
    assert_fails_leaving(dir.path(), cmd, 1, &["g.safetensors"]);
}

#[test]
fn emit_js_prints_webnn_graphs_contract_or_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let graph = fixtures().join("onnx-layout/model.webnn");
    let output = assert_succeeds(command!("emit-js").arg(&graph));
    let module = String::from_utf8(output.stdout).unwrap();
    for export in [
        "export { WeightsFile };",
        "export async function buildGraph(context, weights)",
        "export async function load(context",
    ] {
        assert!(module.contains(export), "{export}");
    }
    // No digests: emit-js does not read the blob.
    assert!(!module.contains("\"sha256\""));
    let file = dir.path().join("model.js");
    assert_succeeds(command!("emit-js", "-o" => &file).arg(&graph));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), module);
    // The same table: a graph it cannot build is refused, and no file appears.
    let head = fixtures().join("hf-safetensors/head.webnn");
    let mut cmd = command!("emit-js", "-o" => dir.path().join("head.js"));
    cmd.arg(&head);
    assert_fails_leaving(dir.path(), cmd, 1, &["unknown option \"bTranspose\""]);
}
