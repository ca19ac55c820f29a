//! The `convert` and `validate` subcommands, run as a process.

#[macro_use]
mod common;

use common::{assert_fails_leaving, cli, fixtures, stderr_of};
use std::path::{Path, PathBuf};
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

/// One row per way `convert` must refuse: exit status, what the message says, and
/// nothing written (an existing output stays as it was).
#[test]
fn convert_failures_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let reference_text = fixture("format_reference.webnn");
    // Text with an out-of-range byte (the message points at line 3, column 22).
    let bad = d.join("bad.webnn");
    std::fs::write(
        &bad,
        "webnn_graph \"g\" v2 {\n  consts {\n    m: u8[1] @bytes([300]);\n  }\n}\n",
    )
    .unwrap();
    // A graph that text cannot express, over an existing output.
    let mut g = reference();
    g.outputs.insert("renamed".into(), "result".into());
    let inexpressible = d.join("g.json");
    std::fs::write(&inexpressible, serde_json::to_string(&g).unwrap()).unwrap();
    let previous = d.join("g.webnn");
    std::fs::write(&previous, "previous").unwrap();
    // Not a graph at all, and no file.
    let other = d.join("weights.bin");
    std::fs::write(&other, b"WGWT\x00\x01").unwrap();
    let missing = d.join("missing.webnn");

    let bad_byte = format!(
        "{}:3:22: @bytes value 300 is out of range 0..=255",
        bad.display()
    );
    let missing_name = missing.display().to_string();
    let extension = "the extension must be `.webnn` or `.json`";
    #[rustfmt::skip]
    let rows: [(&Path, PathBuf, i32, &[&str]); 6] = [
        (&reference_text, d.join("g.txt"), 2, &[extension]),
        (&reference_text, d.join("g"), 2, &[extension]),
        (&bad, d.join("out.json"), 1, &[&bad_byte, "                     ^"]),
        (&inexpressible, previous.clone(), 1, &["output `renamed`", "bound to operand `result`"]),
        (&missing, d.join("o.json"), 1, &[&missing_name]),
        (&other, d.join("o.json"), 1, &["weights.bin: not a graph file"]),
    ];
    for (input, output, code, needles) in rows {
        let mut convert = command!("convert", "-o" => output);
        convert.arg(input);
        assert_fails_leaving(d, convert, code, needles);
    }
    assert_eq!(std::fs::read_to_string(&previous).unwrap(), "previous");
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
            "OK: graph \"format_reference\" v2 @quantized, 1 input, 3 constants (1 external weight), 3 nodes, 1 output"
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
