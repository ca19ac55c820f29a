//! `webnn-weights lock`: the lock written beside the graph and read back, `--check` (exit 0,
//! 1 with every mismatch, 2 for usage errors), bytes the graph does not use, missing and
//! extra entries, blob and sharded sidecars, `--output`, and a SIGKILL while writing.

#[macro_use]
mod common;

use common::{assert_fails, assert_succeeds, cli, fixtures};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const GRAPH: &str = r#"webnn_graph "g" v2 {
  consts { b: u8[4] @weights("b"); a: u8[4] @weights("a"); }
  nodes { y = add(a, b); }
  outputs { y; }
}
"#;

/// `g.webnn` and `g.safetensors` (tensors `a`, `b` and the unused `spare`) in a new folder.
fn model(a: [u8; 4], spare: [u8; 4]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("g.webnn");
    std::fs::write(&graph, GRAPH).unwrap();
    set_weights(dir.path(), a, spare);
    (dir, graph)
}

fn set_weights(dir: &Path, a: [u8; 4], spare: [u8; 4]) {
    let bytes = webnn_weights_test_support::u8_archive(&[
        ("a", &a),
        ("b", &[5, 6, 7, 8]),
        ("spare", &spare),
    ]);
    std::fs::write(dir.join("g.safetensors"), bytes).unwrap();
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `webnn-weights lock GRAPH --check`, run.
fn check(graph: &Path) -> std::process::Output {
    cli()
        .arg("lock")
        .arg(graph)
        .arg("--check")
        .output()
        .unwrap()
}

fn lock_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn lock_is_written_beside_the_graph_and_checks() {
    let (dir, graph) = model([1, 2, 3, 4], [0; 4]);
    assert_succeeds(cli().arg("lock").arg(&graph));
    let path = dir.path().join("g.webnn.lock");
    let lock = lock_json(&path);
    assert_eq!(lock["format"], "webnn-weights-lock");
    assert_eq!(lock["version"], 1);
    let constants = lock["constants"].as_array().unwrap();
    // Sorted by name, whatever the graph's order; every key of an entry.
    let names: Vec<&str> = constants
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        constants[0],
        serde_json::json!({"name": "a", "ref": "a", "file": "g.safetensors",
            "byteLength": 4, "sha256": sha(&[1, 2, 3, 4])})
    );
    assert_eq!(constants[1]["sha256"], sha(&[5, 6, 7, 8]));
    // Pretty, one key per line, a final newline: reviewable and diffable.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\n      \"sha256\": ") && text.ends_with("}\n"),
        "{text}"
    );
    // The digests are those `inspect` prints.
    let out = assert_succeeds(cli().arg("inspect").arg(&graph).arg("--json"));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for row in rows.as_array().unwrap() {
        let entry = constants.iter().find(|c| c["name"] == row["name"]).unwrap();
        assert_eq!(entry["sha256"], row["sha256"]);
    }
    let out = assert_succeeds(cli().arg("lock").arg(&graph).arg("--check"));
    assert!(common::stderr_of(&out).contains("OK: 2 constants match"));
    // Writing again gives the same bytes.
    assert_succeeds(cli().arg("lock").arg(&graph));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn check_fails_on_a_changed_used_byte_only() {
    let (dir, graph) = model([1, 2, 3, 4], [0; 4]);
    assert_succeeds(cli().arg("lock").arg(&graph));
    let before = std::fs::read(dir.path().join("g.webnn.lock")).unwrap();
    // A byte of a tensor the graph does not use: nothing changes.
    set_weights(dir.path(), [1, 2, 3, 4], [0, 9, 0, 0]);
    assert_succeeds(cli().arg("lock").arg(&graph).arg("--check"));
    assert_succeeds(
        cli()
            .arg("resolve")
            .arg(&graph)
            .arg("-o")
            .arg(dir.path().join("r.json")),
    );
    // A byte of `a`: --check, resolve and to-safetensors fail naming it and both digests;
    // the lock itself is untouched.
    set_weights(dir.path(), [1, 2, 3, 5], [0, 9, 0, 0]);
    let out = check(&graph);
    for needle in [
        "constant `a`",
        "g.safetensors",
        &sha(&[1, 2, 3, 5]),
        &sha(&[1, 2, 3, 4]),
        "the weights do not match the lock",
        "fix: review the new weights, then renew the lock with `webnn-weights lock",
    ] {
        assert_fails(&out, 1, needle);
    }
    assert!(!common::stderr_of(&out).contains("constant `b`"));
    let out = cli()
        .arg("resolve")
        .arg(&graph)
        .arg("-o")
        .arg(dir.path().join("r2.json"))
        .output()
        .unwrap();
    assert_fails(&out, 1, "constant `a`");
    assert!(!dir.path().join("r2.json").exists());
    assert_eq!(
        std::fs::read(dir.path().join("g.webnn.lock")).unwrap(),
        before
    );
    // Renewing the lock accepts the new bytes.
    assert_succeeds(cli().arg("lock").arg(&graph));
    assert_succeeds(cli().arg("lock").arg(&graph).arg("--check"));
}

#[test]
fn missing_and_extra_entries_are_each_named() {
    let (dir, graph) = model([1, 2, 3, 4], [0; 4]);
    assert_succeeds(cli().arg("lock").arg(&graph));
    let path = dir.path().join("g.webnn.lock");
    let mut lock = lock_json(&path);
    let constants = lock["constants"].as_array_mut().unwrap();
    constants.retain(|c| c["name"] != "a");
    constants.push(
        serde_json::json!({"name": "gone", "ref": "gone", "file": "g.safetensors",
        "byteLength": 4, "sha256": sha(b"gone")}),
    );
    constants[0]["byteLength"] = 5.into(); // `b`: a length the graph no longer has
    std::fs::write(&path, serde_json::to_vec_pretty(&lock).unwrap()).unwrap();
    let out = check(&graph);
    for needle in [
        "(3 problems)",
        "constant `a` is not in the lock",
        "constant `b` (from",
        "4 bytes, the lock pins 5",
        "the lock has constant `gone`, which the graph no longer has",
    ] {
        assert_fails(&out, 1, needle);
    }
}

#[test]
fn usage_and_lock_file_errors() {
    let (dir, graph) = model([1, 2, 3, 4], [0; 4]);
    // No lock to check: exit 1, naming the file.
    let out = check(&graph);
    assert_fails(&out, 1, "g.webnn.lock cannot be read");
    // A damaged lock: exit 1 with what is wrong and the fix.
    std::fs::write(dir.path().join("g.webnn.lock"), "{\"format\": 1}").unwrap();
    let out = check(&graph);
    assert_fails(&out, 1, "is not a valid lock");
    assert_fails(&out, 1, "write it anew with `webnn-weights lock GRAPH`");
    // Usage: exit 2.
    let out = cli().arg("lock").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = cli()
        .arg("lock")
        .arg(&graph)
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn output_is_relative_to_the_working_directory() {
    let (dir, graph) = model([1, 2, 3, 4], [0; 4]);
    let work = tempfile::tempdir().unwrap();
    assert_succeeds(
        cli()
            .current_dir(work.path())
            .arg("lock")
            .arg(&graph)
            .arg("-o")
            .arg("pinned.lock"),
    );
    assert!(work.path().join("pinned.lock").is_file());
    assert!(!dir.path().join("g.webnn.lock").exists());
    // Sidecar paths inside stay relative to the graph's folder.
    let lock = lock_json(&work.path().join("pinned.lock"));
    assert_eq!(lock["constants"][0]["file"], "g.safetensors");
    assert_succeeds(
        cli()
            .current_dir(work.path())
            .args(["lock", "--check", "--output", "pinned.lock"])
            .arg(&graph),
    );
}

/// A copy of the fixture folder `name` in a new temporary folder.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixtures().join(name)).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
    }
    dir
}

/// Changes the byte at `at` of the file at `path` (installed by a rename, as a new sidecar
/// would be).
fn flip(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at as usize] ^= 0x5A;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(tmp, path).unwrap();
}

#[test]
fn blob_and_sharded_sidecars() {
    // A WGWT blob with its manifest: the lock names the blob.
    let blob = copy_fixture("resnet-head");
    let graph = blob.path().join("resnet_head.webnn");
    assert_succeeds(cli().arg("lock").arg(&graph));
    let lock = lock_json(&blob.path().join("resnet_head.webnn.lock"));
    let first = &lock["constants"][0];
    assert_eq!(first["file"], "resnet_head.weights");
    assert_succeeds(cli().arg("lock").arg(&graph).arg("--check"));
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(blob.path().join("resnet_head.manifest.json")).unwrap(),
    )
    .unwrap();
    let entry = &manifest["tensors"][first["ref"].as_str().unwrap()];
    flip(
        &blob.path().join("resnet_head.weights"),
        entry["byteOffset"].as_u64().unwrap(),
    );
    let out = check(&graph);
    assert_fails(
        &out,
        1,
        &format!("constant `{}`", first["name"].as_str().unwrap()),
    );

    // A sharded archive: each entry names its shard.
    let sharded = copy_fixture("hf-sharded");
    let graph = sharded.path().join("encoder.webnn");
    assert_succeeds(cli().arg("lock").arg(&graph));
    let lock = lock_json(&sharded.path().join("encoder.webnn.lock"));
    let constants = lock["constants"].as_array().unwrap();
    let shards: std::collections::BTreeSet<&str> = constants
        .iter()
        .map(|c| c["file"].as_str().unwrap())
        .collect();
    assert!(shards.len() > 1, "{shards:?}");
    assert!(
        shards.iter().all(|s| s.starts_with("model-0000")),
        "{shards:?}"
    );
    assert_succeeds(cli().arg("lock").arg(&graph).arg("--check"));
    // Flip the last byte of the first entry's tensor in its shard.
    let target = &constants[0];
    let shard = sharded.path().join(target["file"].as_str().unwrap());
    let bytes = std::fs::read(&shard).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n as usize]).unwrap();
    let stored = header
        .as_object()
        .unwrap()
        .iter()
        .find(|(name, _)| {
            // The reference's stored name, normalized or exact.
            let r = target["ref"].as_str().unwrap();
            name.as_str() == r || name.replace(['.', '/'], "_") == r.replace(['.', '/'], "_")
        })
        .map(|(_, v)| v["data_offsets"][1].as_u64().unwrap())
        .unwrap();
    flip(&shard, 8 + n + stored - 1);
    let out = check(&graph);
    assert_fails(
        &out,
        1,
        &format!("constant `{}`", target["name"].as_str().unwrap()),
    );
    assert_fails(&out, 1, target["file"].as_str().unwrap());
}

/// SIGKILL at random moments of `lock` rewriting a lock for a 48 MiB model: the lock is
/// always the old one or the complete new one, never partial.
#[cfg(unix)]
#[test]
fn the_lock_survives_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("m.webnn");
    std::fs::write(
        &graph,
        r#"webnn_graph "m" v2 {
  consts { a: u8[16777216] @weights("a"); b: u8[16777216] @weights("b"); c: u8[16777216] @weights("c"); }
  nodes { x = add(a, b); y = add(x, c); }
  outputs { y; }
}
"#,
    )
    .unwrap();
    let write = |fill: u8| {
        let big = vec![fill; 16 << 20];
        let bytes =
            webnn_weights_test_support::u8_archive(&[("a", &big), ("b", &big), ("c", &big)]);
        std::fs::write(dir.path().join("m.safetensors"), bytes).unwrap();
    };
    let path = dir.path().join("m.webnn.lock");
    write(1);
    assert_succeeds(cli().arg("lock").arg(&graph));
    let old = std::fs::read(&path).unwrap();
    write(2);
    let bin = env!("CARGO_BIN_EXE_webnn-weights");
    let mut rng = webnn_weights_test_support::Rng::from_env("lock kill");
    let mut news = None;
    for _ in 0..20 {
        let mut child = std::process::Command::new(bin)
            .arg("lock")
            .arg(&graph)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(rng.below(150_000)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let now = std::fs::read(&path).unwrap();
        if status.success() {
            news = Some(now.clone());
        }
        let parsed: serde_json::Value = serde_json::from_slice(&now).unwrap();
        assert_eq!(parsed["constants"].as_array().unwrap().len(), 3);
        assert!(
            now == old || news.as_ref().is_none_or(|n| *n == now),
            "a lock that is neither the old nor the new one"
        );
        if now != old {
            assert_eq!(parsed["constants"][0]["sha256"], sha(&vec![2u8; 16 << 20]));
        }
    }
}
