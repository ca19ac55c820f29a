//! Flags every command shares: a manifest the format ignores is not checked, and `-o` is
//! `--output` wherever there is one.

#[macro_use]
mod common;

use common::{assert_succeeds, fixtures};
use std::path::Path;

/// A copy of the hf-safetensors head fixture (graph and archive) in a scratch folder.
fn head(dir: &Path) -> std::path::PathBuf {
    for name in ["head.webnn", "lm_head.safetensors"] {
        std::fs::copy(fixtures().join("hf-safetensors").join(name), dir.join(name)).unwrap();
    }
    dir.join("head.webnn")
}

#[test]
fn a_safetensors_weights_path_ignores_the_manifest_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let graph = head(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // The manifest does not exist: the format says an archive ignores it.
    let sidecar = [
        "--weights",
        "lm_head.safetensors",
        "--manifest",
        "missing.json",
    ];
    assert_succeeds(
        command!("inspect", "--weights" => sidecar[1], "--manifest" => sidecar[3]).arg(&graph),
    );
    assert_succeeds(
        command!("resolve", "--weights" => sidecar[1], "--manifest" => sidecar[3], "--output" => out.join("r.json"))
            .arg(&graph),
    );
    assert_succeeds(
        command!("to-safetensors", "--weights" => sidecar[1], "--manifest" => sidecar[3],
            "--output" => out.join("t.safetensors"))
        .arg(&graph),
    );
    // A blob still needs its manifest: the missing one is named.
    std::fs::write(dir.path().join("x.weights"), [0u8; 8]).unwrap();
    let blob = command!("inspect", "--weights" => "x.weights", "--manifest" => "missing.json")
        .arg(&graph)
        .output()
        .unwrap();
    assert_eq!(blob.status.code(), Some(1));
    assert!(common::stderr_of(&blob).contains("missing.json"));
}

#[test]
fn dash_o_is_output_wherever_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let graph = head(dir.path());
    let d = dir.path();
    assert_succeeds(
        command!("to-safetensors", "--weights" => "lm_head.safetensors", "-o" => d.join("a.safetensors"))
            .arg(&graph),
    );
    assert!(d.join("a.safetensors").is_file());
    assert_succeeds(
        command!("resolve", "--weights" => "lm_head.safetensors", "-o" => d.join("r.json"))
            .arg(&graph),
    );
    assert_succeeds(command!("convert", "-o" => d.join("c.json")).arg(&graph));
    assert!(d.join("c.json").is_file());
    // The blob tools: a tensor folder packed, a manifest for it, back inline.
    let tensors = fixtures().join("resnet-head/tensors");
    assert_succeeds(
        &mut command!("create-manifest", "--input-dir" => &tensors, "-o" => d.join("m.json")),
    );
    assert!(d.join("m.json").is_file());
    assert_succeeds(
        &mut command!("pack-weights", "--manifest" => d.join("m.json"), "--input-dir" => &tensors,
        "-o" => d.join("w.weights")),
    );
    assert!(d.join("w.weights").is_file());
    assert_succeeds(&mut command!("man", "-o" => d.join("man")));
    assert!(d.join("man").is_dir());
}

#[test]
fn docs_list_exactly_the_keys_inspect_json_prints() {
    let dir = tempfile::tempdir().unwrap();
    let graph = head(dir.path());
    let output = assert_succeeds(
        command!("inspect", "--weights" => "lm_head.safetensors")
            .arg("--json")
            .arg(&graph),
    );
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut printed: Vec<String> = rows[0].as_object().unwrap().keys().cloned().collect();
    printed.sort();
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md"))
            .unwrap();
    let listed = docs
        .split("`--json` prints an array of objects with exactly the keys `")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .expect("docs/cli.md lists the keys of inspect --json");
    let mut listed: Vec<String> = listed.split_whitespace().map(str::to_string).collect();
    listed.sort();
    assert_eq!(printed, listed);
}
