//! The `resolve` and `inspect` subcommands, run as a process.

use assert_cmd::Command;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{read_graph_file, ConstInit, GraphJson, GraphLoader};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn cli() -> Command {
    Command::cargo_bin("webnn-weights").unwrap()
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// (fixture graph, explicit weights, explicit manifest)
const CASES: [(&str, Option<&str>, Option<&str>); 6] = [
    ("hf-safetensors/encoder.webnn", None, None),
    (
        "hf-safetensors/head.webnn",
        Some("lm_head.safetensors"),
        None,
    ),
    ("packed4/quant.webnn", None, None),
    ("onnx-layout/model.webnn", None, None),
    ("resnet-head/resnet_head.webnn", None, None),
    (
        "tiny-extract/tiny.extracted.json",
        Some("tiny.weights"),
        Some("tiny.manifest.json"),
    ),
];

fn library_resolved(graph: &Path, weights: Option<&str>, manifest: Option<&str>) -> GraphJson {
    let mut loader = GraphLoader::new(graph);
    if let Some(w) = weights {
        loader = loader.weights(w);
    }
    if let Some(m) = manifest {
        loader = loader.manifest(m);
    }
    loader.load().unwrap()
}

fn with_paths(cmd: &mut Command, weights: Option<&str>, manifest: Option<&str>) {
    if let Some(w) = weights {
        cmd.args(["--weights", w]);
    }
    if let Some(m) = manifest {
        cmd.args(["--manifest", m]);
    }
}

#[test]
fn resolve_writes_json_and_webnn_for_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (graph, weights, manifest)) in CASES.iter().enumerate() {
        let graph = fixtures().join(graph);
        let expected = library_resolved(&graph, *weights, *manifest);
        assert!(!expected.has_external_weights());
        for ext in ["json", "webnn"] {
            let out = dir.path().join(format!("out{i}.{ext}"));
            let mut cmd = cli();
            cmd.arg("resolve").arg(&graph);
            with_paths(&mut cmd, *weights, *manifest);
            let output = cmd.arg("--output").arg(&out).output().unwrap();
            assert!(output.status.success(), "{}", stderr_of(&output));
            assert!(output.stdout.is_empty());
            let back = read_graph_file(&out).unwrap();
            assert_eq!(back.consts, expected.consts, "{} -> {ext}", graph.display());
            let text = std::fs::read_to_string(&out).unwrap();
            if ext == "json" {
                assert!(
                    text.contains("\"inlineBytes\"") && !text.contains("\"weights\""),
                    "{text}"
                );
            } else {
                assert!(text.contains("@bytes(") && !text.contains("@weights("));
            }
        }
    }
}

#[test]
fn resolve_failure_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let output = cli()
        .arg("resolve")
        .arg(fixtures().join("packed4/quant.webnn"))
        .args(["--weights", "missing.safetensors", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = stderr_of(&output);
    assert!(
        err.contains("missing.safetensors")
            && err.contains("does not exist")
            && err.contains("quant.webnn"),
        "{err}"
    );
    assert!(!out.exists());
    // a rule violation: the blob fixture with a manifest whose range is too short for W
    let d = dir.path();
    std::fs::copy(
        fixtures().join("resnet-head/resnet_head.webnn"),
        d.join("g.webnn"),
    )
    .unwrap();
    std::fs::write(d.join("g.weights"), [0u8; 16]).unwrap();
    std::fs::write(
        d.join("manifest.json"),
        r#"{"tensors":{"W":{"byteOffset":0,"byteLength":8},"b":{"byteOffset":8,"byteLength":8}}}"#,
    )
    .unwrap();
    let output = cli()
        .arg("resolve")
        .arg(d.join("g.webnn"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("needs 8192000 bytes, found 8"),
        "{}",
        stderr_of(&output)
    );
    assert!(!out.exists());
    // an existing output is kept on failure
    std::fs::write(&out, "previous").unwrap();
    let output = cli()
        .arg("resolve")
        .arg(d.join("g.webnn"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
}

#[test]
fn resolve_unknown_output_extension_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    let output = cli()
        .arg("resolve")
        .arg(fixtures().join("packed4/quant.webnn"))
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr_of(&output).contains(".webnn"));
    assert!(!out.exists());
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn inspect_json_lists_every_constant_with_exact_keys() {
    for (graph, weights, manifest) in CASES
        .iter()
        .chain([("tiny-extract/tiny.webnn", None, None)].iter())
    {
        let graph = fixtures().join(graph);
        let original = read_graph_file(&graph).unwrap();
        let resolved = library_resolved(&graph, *weights, *manifest);
        let mut cmd = cli();
        cmd.arg("inspect").arg(&graph).arg("--json");
        with_paths(&mut cmd, *weights, *manifest);
        let output = cmd.output().unwrap();
        assert!(output.status.success(), "{}", stderr_of(&output));
        let rows: Vec<serde_json::Map<String, serde_json::Value>> =
            serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(rows.len(), original.consts.len());
        for row in rows {
            let mut keys: Vec<&str> = row.keys().map(String::as_str).collect();
            keys.sort();
            assert_eq!(
                keys,
                [
                    "byteLength",
                    "dataType",
                    "name",
                    "ref",
                    "sha256",
                    "shape",
                    "sharedWith",
                    "source"
                ]
            );
            let name = row["name"].as_str().unwrap();
            let decl = &original.consts[name];
            assert_eq!(row["dataType"], decl.data_type.json_name());
            assert_eq!(row["shape"], serde_json::json!(decl.shape));
            let ConstInit::InlineBytes { bytes } = &resolved.consts[name].init else {
                // scalars have no byte form
                assert!(row["sha256"].is_null() && row["byteLength"].is_null());
                continue;
            };
            assert_eq!(row["byteLength"], bytes.len() as u64, "{name}");
            assert_eq!(row["sha256"], sha(bytes), "{name}");
            match &decl.init {
                ConstInit::Weights { r#ref } => {
                    assert_eq!(row["ref"], r#ref.as_str());
                    let source = row["source"].as_str().unwrap();
                    assert!(
                        source.ends_with(".safetensors") || source.ends_with(".weights"),
                        "{source}"
                    );
                    assert!(Path::new(source).is_file(), "{source}");
                }
                _ => {
                    assert!(row["ref"].is_null());
                    assert_eq!(row["source"], "inline");
                }
            }
        }
    }
}

#[test]
fn inspect_table_has_a_header_and_one_row_per_constant() {
    let graph = fixtures().join("hf-safetensors/head.webnn");
    let output = cli()
        .arg("inspect")
        .arg(&graph)
        .args(["--weights", "lm_head.safetensors"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "name",
            "ref",
            "dataType",
            "shape",
            "source",
            "byteLength",
            "sha256"
        ]
    );
    assert_eq!(
        lines.len(),
        1 + read_graph_file(&graph).unwrap().consts.len()
    );
    let resolved = library_resolved(&graph, Some("lm_head.safetensors"), None);
    let ConstInit::InlineBytes { bytes } = &resolved.consts["lm_head_weight"].init else {
        panic!()
    };
    let row = lines
        .iter()
        .find(|l| l.starts_with("lm_head_weight"))
        .unwrap();
    assert!(
        row.contains("lm_head.weight")
            && row.contains("lm_head.safetensors")
            && row.contains(&sha(bytes)),
        "{row}"
    );
    assert!(
        row.contains(" 128 "),
        "BF16 widened to 4 bytes per element: {row}"
    );
}

#[test]
fn inspect_checks_the_rules_too() {
    let output = cli()
        .arg("inspect")
        .arg(fixtures().join("hf-safetensors/head.webnn"))
        .output()
        .unwrap();
    // head.webnn has no discoverable sidecar of its own stem, but model.safetensors is
    // found by discovery and lacks lm_head.weight
    assert_eq!(output.status.code(), Some(1));
    let err = stderr_of(&output);
    assert!(
        err.contains("lm_head.weight") && err.contains("model.safetensors"),
        "{err}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn inspect_shows_constants_sharing_stored_bytes() {
    let graph = fixtures().join("tied/tied.webnn");
    let output = cli()
        .arg("inspect")
        .arg(&graph)
        .arg("--json")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
    let shared: Vec<(&str, &serde_json::Value)> = rows
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), &r["sharedWith"]))
        .collect();
    assert_eq!(
        shared,
        [
            ("bias", &serde_json::Value::Null),
            ("embed", &serde_json::Value::Null),
            ("lm_head", &serde_json::json!("embed")),
            ("norm_a", &serde_json::Value::Null),
            ("norm_b", &serde_json::json!("norm_a")),
            ("unembed", &serde_json::json!("embed")),
        ]
    );
    // Hashed once, the same digest for every constant of a group.
    let sha = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap()["sha256"].clone();
    assert_eq!(sha("embed"), sha("unembed"));
    assert_ne!(sha("embed"), sha("bias"));

    let output = cli().arg("inspect").arg(&graph).output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("shared:")).collect();
    assert_eq!(
        notes,
        [
            "shared: lm_head, unembed use the bytes of embed (one stored range, 512 bytes, read once)",
            "shared: norm_b uses the bytes of norm_a (one stored range, 32 bytes, read once)",
        ]
    );
    assert_eq!(text.lines().count(), 1 + rows.len() + notes.len());
}
