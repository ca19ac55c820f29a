//! `inspect`, `resolve` and `to-safetensors` over sharded SafeTensors archives (Hugging
//! Face layout), and `to-safetensors --max-shard-size` read back.

#[macro_use]
mod common;

use common::{assert_succeeds, cli};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{read_graph_file, ConstInit, GraphLoader};

fn fixtures() -> PathBuf {
    common::fixtures().join("hf-sharded")
}

/// `inspect ARGS --json`, which must succeed: its parsed output.
fn inspect_value(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = assert_succeeds(cli().arg("inspect").args(args).arg("--json"));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn inspect_json(args: &[&str]) -> Vec<serde_json::Value> {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    inspect_value(&args).as_array().unwrap().clone()
}

fn by_name(rows: &[serde_json::Value], key: &str) -> BTreeMap<String, serde_json::Value> {
    rows.iter()
        .map(|r| (r["name"].as_str().unwrap().to_string(), r[key].clone()))
        .collect()
}

fn resolved_consts(path: &Path) -> BTreeMap<String, Vec<u8>> {
    read_graph_file(path)
        .unwrap()
        .consts
        .into_iter()
        .map(|(n, d)| match d.init {
            ConstInit::InlineBytes { bytes } => (n, bytes.to_vec()),
            other => panic!("{n}: {other:?}"),
        })
        .collect()
}

#[test]
fn inspect_names_the_shard_and_matches_the_single_archive() {
    let d = fixtures();
    let sharded = inspect_json(&[d.join("encoder.webnn").to_str().unwrap()]);
    let single = inspect_json(&[
        d.join("encoder_single.webnn").to_str().unwrap(),
        "--weights",
        "all.safetensors",
    ]);
    assert_eq!(by_name(&sharded, "sha256"), by_name(&single, "sha256"));
    assert_eq!(
        by_name(&sharded, "byteLength"),
        by_name(&single, "byteLength")
    );
    let source = by_name(&sharded, "source");
    let shard = |n: &str| {
        let s = source[n].as_str().unwrap().to_string();
        Path::new(&s)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    assert_eq!(shard("emb"), "model-00001-of-00003.safetensors");
    assert_eq!(shard("q_bias"), "model-00002-of-00003.safetensors");
    assert_eq!(shard("quant"), "model-00003-of-00003.safetensors");
    // The table shows the shard too.
    let out = cli()
        .arg("inspect")
        .arg(d.join("encoder.webnn"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("model-00002-of-00003.safetensors"), "{text}");
}

#[test]
fn resolve_and_to_safetensors_read_sharded_archives() {
    let d = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let sharded = dir.path().join("sharded.json");
    let single = dir.path().join("single.json");
    let explicit = dir.path().join("explicit.json");
    let archive = dir.path().join("one.safetensors");
    let graph_out = dir.path().join("one.webnn");
    let encoder = d.join("encoder.webnn");
    // `command!` puts flags first; the graph follows.
    let with_graph = |mut cmd: assert_cmd::Command, graph: PathBuf| {
        cmd.arg(graph);
        cmd
    };
    let runs = [
        // Discovery finds the index.
        with_graph(command!("resolve", "--output" => &sharded), encoder.clone()),
        // The same tensors in one archive.
        with_graph(
            command!("resolve", "--weights" => "all.safetensors", "--output" => &single),
            d.join("encoder_single.webnn"),
        ),
        // An explicit index path.
        with_graph(
            command!("resolve", "--weights" => "model.safetensors.index.json", "--output" => &explicit),
            encoder.clone(),
        ),
        // Sharded in, one archive out.
        with_graph(
            command!("to-safetensors", "--output" => &archive, "--graph-output" => &graph_out),
            encoder.clone(),
        ),
    ];
    for mut cmd in runs {
        assert_succeeds(&mut cmd);
    }
    assert_eq!(resolved_consts(&sharded), resolved_consts(&single));
    assert_eq!(resolved_consts(&explicit), resolved_consts(&single));
    let back = GraphLoader::new(&graph_out)
        .weights("one.safetensors")
        .load()
        .unwrap();
    let back: BTreeMap<String, Vec<u8>> = back
        .consts
        .into_iter()
        .map(|(n, d)| match d.init {
            ConstInit::InlineBytes { bytes } => (n, bytes.to_vec()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(back, resolved_consts(&single));
}

#[test]
fn to_safetensors_max_shard_size_writes_the_hugging_face_layout() {
    let d = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.safetensors");
    let graph_out = dir.path().join("model.webnn");
    let run = cli()
        .arg("to-safetensors")
        .arg(d.join("encoder_single.webnn"))
        .args(["--weights", "all.safetensors", "--output"])
        .arg(&out)
        .arg("--graph-output")
        .arg(&graph_out)
        .args(["--max-shard-size", "1KiB"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // The two 1024-byte embeddings each fill a 1 KiB shard; the rest shares.
    assert_eq!(
        names,
        [
            "model-00001-of-00004.safetensors",
            "model-00002-of-00004.safetensors",
            "model-00003-of-00004.safetensors",
            "model-00004-of-00004.safetensors",
            "model.safetensors.index.json",
            "model.webnn",
        ]
    );
    assert!(!out.exists());
    let index: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("model.safetensors.index.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(index["metadata"]["total_size"], 2396);
    assert_eq!(
        index["weight_map"]["embeddings.word_embeddings.weight"],
        "model-00002-of-00004.safetensors"
    );
    // What we write, we read back: the rewritten graph finds the index by discovery.
    let resolved = dir.path().join("resolved.json");
    cli()
        .arg("resolve")
        .arg(&graph_out)
        .arg("--output")
        .arg(&resolved)
        .assert()
        .success();
    let single = dir.path().join("single.json");
    cli()
        .arg("resolve")
        .arg(d.join("encoder_single.webnn"))
        .args(["--weights", "all.safetensors", "--output"])
        .arg(&single)
        .assert()
        .success();
    assert_eq!(resolved_consts(&resolved), resolved_consts(&single));
    let rows = inspect_json(&[graph_out.to_str().unwrap()]);
    let source = by_name(&rows, "source");
    assert!(source["pos"]
        .as_str()
        .unwrap()
        .ends_with("model-00001-of-00004.safetensors"));
}

#[test]
fn bad_shard_sizes_are_usage_errors_and_write_nothing() {
    let d = fixtures();
    let dir = tempfile::tempdir().unwrap();
    for size in ["0", "1.5GB", "12 parsecs", "GB"] {
        let out = cli()
            .arg("to-safetensors")
            .arg(d.join("encoder.webnn"))
            .arg("--output")
            .arg(dir.path().join("m.safetensors"))
            .args(["--max-shard-size", size])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{size}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("invalid shard size"), "{err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn inspect_of_an_index_lists_every_shard() {
    let d = fixtures();
    let index = d.join("model.safetensors.index.json");
    let report = inspect_value(&[index.as_os_str()]);
    assert_eq!(report["kind"], "sharded-safetensors");
    assert_eq!(report["metadata"]["total_size"], "1392");
    assert_eq!(report["metadata"]["shards"], "3");
    let tensors = report["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 10);
    let mask = tensors.iter().find(|t| t["name"] == "pooler.mask").unwrap();
    assert!(mask["shard"]
        .as_str()
        .unwrap()
        .ends_with("model-00003-of-00003.safetensors"));
    // A broken shard is reported, naming it.
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&d).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    std::fs::remove_file(dir.path().join("model-00002-of-00003.safetensors")).unwrap();
    let out = cli()
        .arg("inspect")
        .arg(dir.path().join("model.safetensors.index.json"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("model-00002-of-00003.safetensors") && err.contains("does not exist"),
        "{err}"
    );
}
