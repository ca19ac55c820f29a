//! The `resolve` and `inspect` subcommands, run as a process.

#[macro_use]
mod common;

use common::{assert_fails_leaving, cli, fixtures, library_resolved, stderr_of, with_paths};
use sha2::{Digest, Sha256};
use std::path::Path;
use webnn_weights_runtime::{read_graph_file, ConstInit};

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

/// `resolve` and `inspect` map the sidecar by default; `--no-map` reads it. The output is
/// byte-identical either way, for every fixture (BF16 widening in `head.webnn`, packed
/// 4-bit, blobs) and every output format.
#[test]
fn mapped_and_read_sidecars_give_identical_output() {
    let dir = tempfile::tempdir().unwrap();
    let lm_head = std::fs::read(fixtures().join("hf-safetensors/lm_head.safetensors")).unwrap();
    assert!(
        lm_head.windows(4).any(|w| w == b"BF16"),
        "a BF16 case is covered"
    );
    let run = |args: &[&std::ffi::OsStr]| {
        let output = cli().args(args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {}", stderr_of(&output));
        output.stdout
    };
    for (i, (graph, weights, manifest)) in CASES.iter().enumerate() {
        let graph = fixtures().join(graph);
        let mut sidecar: Vec<&std::ffi::OsStr> = Vec::new();
        for (flag, path) in [("--weights", weights), ("--manifest", manifest)] {
            if let Some(path) = path {
                sidecar.extend([std::ffi::OsStr::new(flag), std::ffi::OsStr::new(path)]);
            }
        }
        for (ext, style) in [("json", None), ("json", Some("--compact")), ("webnn", None)] {
            let [mapped, read] = ["mapped", "read"].map(|how| {
                let out = dir
                    .path()
                    .join(format!("{i}-{how}-{}.{ext}", style.is_some()));
                let mut args = vec!["resolve".as_ref(), graph.as_os_str()];
                args.extend(&sidecar);
                args.extend(["--output".as_ref(), out.as_os_str(), "-q".as_ref()]);
                args.extend(style.map(std::ffi::OsStr::new));
                if how == "read" {
                    args.push("--no-map".as_ref());
                }
                assert!(run(&args).is_empty());
                std::fs::read(out).unwrap()
            });
            assert!(!mapped.is_empty());
            assert!(mapped == read, "{} -> {ext} {style:?}", graph.display());
        }
        for json in [false, true] {
            let [mapped, read] = [false, true].map(|no_map| {
                let mut args = vec!["inspect".as_ref(), graph.as_os_str()];
                args.extend(&sidecar);
                if json {
                    args.push("--json".as_ref());
                }
                if no_map {
                    args.push("--no-map".as_ref());
                }
                run(&args)
            });
            assert!(!mapped.is_empty());
            assert_eq!(
                String::from_utf8(mapped).unwrap(),
                String::from_utf8(read).unwrap(),
                "inspect {}",
                graph.display()
            );
        }
    }
}

/// One row per way `resolve` must refuse: exit status, what the message says, and
/// nothing written (an existing output stays as it was).
#[test]
fn resolve_failures_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let quant = fixtures().join("packed4/quant.webnn");
    // A rule violation: the blob fixture's graph with a manifest whose range is too short for W.
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
    let short = d.join("g.webnn");
    let (out, previous) = (d.join("out.json"), d.join("previous.json"));
    std::fs::write(&previous, "previous").unwrap();
    // (graph, flags, output, exit status, what the message says)
    type Row<'a> = (&'a Path, &'a [&'a str], &'a Path, i32, &'a [&'a str]);
    #[rustfmt::skip]
    let rows: [Row; 4] = [
        (&quant, &["--weights", "missing.safetensors"], &out, 1,
            &["missing.safetensors", "does not exist", "quant.webnn"]),
        (&short, &[], &out, 1, &["needs 8192000 bytes, found 8"]),
        (&short, &[], &previous, 1, &["needs 8192000 bytes, found 8"]),
        (&quant, &[], &d.join("out.txt"), 2, &[".webnn"]),
    ];
    for (graph, flags, output, code, needles) in rows {
        let mut resolve = command!("resolve", "--output" => output);
        resolve.arg(graph).args(flags);
        assert_fails_leaving(d, resolve, code, needles);
    }
    assert_eq!(std::fs::read_to_string(&previous).unwrap(), "previous");
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
