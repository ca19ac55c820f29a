//! The `convert` and `validate` subcommands, run as a process.

mod common;

use common::{cli, fixtures, stderr_of};
use std::path::PathBuf;
use webnn_weights_runtime::{parse_graph_json, parse_webnn, GraphJson};

fn fixture(name: &str) -> PathBuf {
    fixtures().join("format").join(name)
}

fn reference() -> GraphJson {
    parse_graph_json(&std::fs::read_to_string(fixture("format_reference.json")).unwrap()).unwrap()
}

#[test]
fn convert_text_to_json_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json");
    cli()
        .arg("convert")
        .arg(fixture("format_reference.webnn"))
        .arg("--output")
        .arg(&json)
        .assert()
        .success();
    let written = std::fs::read_to_string(&json).unwrap();
    assert!(written.starts_with("{\n  \"format\": \"webnn-graph-json\",\n"));
    assert_eq!(parse_graph_json(&written).unwrap(), reference());

    let text = dir.path().join("g.WEBNN");
    cli()
        .args(["convert", "-o"])
        .arg(&text)
        .arg(&json)
        .assert()
        .success();
    let written = std::fs::read_to_string(&text).unwrap();
    assert!(written.starts_with("webnn_graph \"format_reference\" v2 @quantized {\n"));
    assert_eq!(parse_webnn(&written).unwrap(), reference());
}

#[test]
fn convert_rejects_unknown_output_extension() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["g.txt", "g"] {
        let out = dir.path().join(name);
        let output = cli()
            .arg("convert")
            .arg(fixture("format_reference.webnn"))
            .arg("--output")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(stderr_of(&output).contains("the extension must be `.webnn` or `.json`"));
        assert!(!out.exists());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn convert_bad_input_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.webnn");
    std::fs::write(
        &bad,
        "webnn_graph \"g\" v2 {\n  consts {\n    m: u8[1] @bytes([300]);\n  }\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out.json");
    let output = cli()
        .arg("convert")
        .arg(&bad)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains(&format!(
            "{}:3:22: @bytes value 300 is out of range 0..=255",
            bad.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("                     ^"), "{stderr}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn convert_inexpressible_graph_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = reference();
    g.outputs.insert("renamed".into(), "result".into());
    let json = dir.path().join("g.json");
    std::fs::write(&json, serde_json::to_string(&g).unwrap()).unwrap();
    let out = dir.path().join("g.webnn");
    std::fs::write(&out, "previous").unwrap();
    let output = cli()
        .arg("convert")
        .arg(&json)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(stderr.contains("output `renamed`"), "{stderr}");
    assert!(stderr.contains("bound to operand `result`"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn convert_missing_and_unknown_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.webnn");
    let output = cli()
        .arg("convert")
        .arg(&missing)
        .arg("-o")
        .arg(dir.path().join("o.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr_of(&output).contains(&missing.display().to_string()));

    let other = dir.path().join("weights.bin");
    std::fs::write(&other, b"WGWT\x00\x01").unwrap();
    let output = cli()
        .arg("convert")
        .arg(&other)
        .arg("-o")
        .arg(dir.path().join("o.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(stderr.contains("weights.bin: not a graph file"), "{stderr}");
    assert!(!dir.path().join("o.json").exists());
}

#[test]
fn validate_ok_prints_summary() {
    let output = cli()
        .arg("validate")
        .arg(fixture("format_reference.webnn"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "OK: graph \"format_reference\" v2 @quantized, 1 inputs, 3 constants (1 external weights), 3 nodes, 1 outputs"
        ),
        "{stdout}"
    );
    cli()
        .arg("validate")
        .arg(fixture("format_reference.json"))
        .assert()
        .success();
}

#[test]
fn validate_lists_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.webnn");
    std::fs::write(
        &path,
        "webnn_graph \"g\" v2 {\n consts { m: i4[3] @bytes([1]); }\n nodes { y = relu(x); }\n outputs { y; z; }\n}\n",
    )
    .unwrap();
    let output = cli().arg("validate").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = stderr_of(&output);
    assert!(stderr.contains("invalid graph: 3 problems"), "{stderr}");
    assert!(stderr.contains("constant `m` (int4[3]) has 1 inline bytes, expected 2"));
    assert!(stderr.contains("node 0 (`y` = relu): input `x` is not defined"));
    assert!(stderr.contains("output `z` names operand `z`, which is not defined"));

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"format\": \"webnn-graph-json\", \"version\": 9, \"inputs\": {}, \"nodes\": [], \"outputs\": {}}").unwrap();
    let output = cli().arg("validate").arg(&bad).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr_of(&output).contains("unsupported version 9"));
}

#[test]
fn usage_errors_and_help() {
    let output = cli().output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let output = cli().args(["convert", "in.webnn"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr_of(&output).contains("--output"));
    for (command, example) in [
        (
            "convert",
            "webnn-weights convert model.webnn --output model.json",
        ),
        ("validate", "webnn-weights validate model.webnn"),
    ] {
        let output = cli().args([command, "--help"]).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&output.stdout).contains(example));
    }
}
