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

/// The commands named in `webnn-weights --help`, without `help`.
fn commands() -> Vec<String> {
    let help = assert_succeeds(&mut command!("--help")).stdout;
    let help = String::from_utf8(help).unwrap();
    help.split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|&name| name != "help")
        .map(str::to_string)
        .collect()
}

fn help_of(command: &str) -> String {
    String::from_utf8(assert_succeeds(command!(command).arg("--help")).stdout).unwrap()
}

/// The commands that read `--weights`/`--manifest` relative to the graph's folder (the
/// format's sidecar arguments): each is run in the tests above with a manifest it must
/// ignore. A new one must be added there.
const SIDECAR_COMMANDS: [&str; 5] = ["inspect", "lock", "resolve", "to-safetensors", "web"];

#[test]
fn every_command_with_sidecar_arguments_is_tested_and_every_output_has_dash_o() {
    let mut sidecar = Vec::new();
    for command in commands() {
        let help = help_of(&command);
        // SidecarArgs' help text (inline-weights and extract-weights have required
        // `--weights <WEIGHTS>` for a blob, read as given).
        if help.contains("--weights <P>") {
            sidecar.push(command.clone());
        }
        // The option lines (not the usage line or the examples).
        let options = help.lines().filter(|l| {
            let l = l.trim_start();
            l.starts_with('-') && l.contains("--output <")
        });
        for line in options {
            assert!(
                line.trim_start().starts_with("-o, --output"),
                "`{command}`: --output without -o: {line}"
            );
        }
    }
    sidecar.sort();
    assert_eq!(sidecar, SIDECAR_COMMANDS);
}

#[test]
fn a_sharded_index_ignores_the_manifest_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let graph = fixtures().join("hf-sharded/encoder.webnn");
    let index = "model.safetensors.index.json";
    for command in SIDECAR_COMMANDS {
        let mut cmd = command!(command, "--weights" => index, "--manifest" => "missing.json");
        match command {
            "resolve" => cmd.arg("-o").arg(dir.path().join("r.json")),
            "to-safetensors" => cmd.arg("-o").arg(dir.path().join("t.safetensors")),
            "lock" => cmd.arg("-o").arg(dir.path().join("l.lock")),
            "web" => cmd.arg("-o").arg(dir.path().join("site")),
            _ => &mut cmd,
        };
        assert_succeeds(cmd.arg(&graph));
    }
    for output in ["r.json", "t.safetensors", "l.lock", "site/encoder.js"] {
        assert!(dir.path().join(output).is_file(), "{output}");
    }
}

#[test]
fn inline_weights_takes_dash_o() {
    let dir = tempfile::tempdir().unwrap();
    let d = fixtures().join("tiny-extract");
    let out = dir.path().join("inline.json");
    assert_succeeds(
        &mut command!("inline-weights", "--input" => d.join("tiny.extracted.json"),
        "--weights" => d.join("tiny.weights"), "--manifest" => d.join("tiny.manifest.json"),
        "-o" => &out),
    );
    assert!(out.is_file());
}

#[test]
fn docs_list_the_keys_inspect_json_prints_for_a_sidecar_alone() {
    // `{path, kind, fileLength, metadata, tensors: [{name, ...}]}`, as docs/cli.md writes it.
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md"))
            .unwrap();
    let section = docs
        .split("## `inspect` of a sidecar alone")
        .nth(1)
        .expect("docs/cli.md has the sidecar section");
    let listed = section
        .split("`--json` prints `{")
        .nth(1)
        .and_then(|rest| rest.split("}]}`").next())
        .expect("the sidecar section lists the keys of --json")
        .replace('\n', " ");
    let (top, row) = listed.split_once(", tensors: [{").unwrap();
    let words = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .split([',', ' '])
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    let mut top = words(top);
    top.push("tensors".into());
    top.sort();
    // A row's optional keys are written `key?` in the docs.
    let row = words(row);
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    for sidecar in [
        "hf-safetensors/lm_head.safetensors",
        "hf-sharded/model.safetensors.index.json",
    ] {
        let output = assert_succeeds(
            command!("inspect")
                .arg(fixtures().join(sidecar))
                .arg("--json"),
        );
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(keys(&report), top, "{sidecar}");
        for tensor in report["tensors"].as_array().unwrap() {
            for key in keys(tensor) {
                assert!(
                    row.contains(&key) || row.contains(&format!("{key}?")),
                    "{sidecar}: `{key}` is printed but not in docs/cli.md ({row:?})"
                );
            }
        }
        let first = keys(&report["tensors"][0]);
        for key in row.iter().filter(|k| !k.ends_with('?')) {
            assert!(
                first.contains(key),
                "{sidecar}: docs list `{key}`, not printed"
            );
        }
    }
}
