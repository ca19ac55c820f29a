//! Errors print their cause once: the message, then "caused by:" for each cause.

mod common;

use common::{cli, stderr_of};

#[test]
fn a_missing_file_says_so_once() {
    for command in ["inspect", "validate"] {
        let output = cli()
            .args([command, "/nonexistent/m.webnn"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stderr = stderr_of(&output);
        assert!(
            stderr.starts_with("error: cannot read /nonexistent/m.webnn\ncaused by: "),
            "{command}: {stderr}"
        );
        assert_eq!(
            stderr.matches("No such file or directory").count(),
            1,
            "{command}: {stderr}"
        );
    }
}

#[test]
fn a_sidecar_that_cannot_be_read_says_why_once() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("g.webnn");
    std::fs::write(
        &graph,
        "webnn_graph \"g\" v2 { inputs { x: f32[1]; } consts { w: f32[1] @weights(\"w\"); } nodes { y = add(x, w); } outputs { y; } }",
    )
    .unwrap();
    // A sharded index that is not JSON: the resolver's message, then the reader's.
    std::fs::write(dir.path().join("model.safetensors.index.json"), "{").unwrap();
    let output = cli().arg("inspect").arg(&graph).output().unwrap();
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("the sidecar cannot be used\ncaused by: "),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("invalid sharded SafeTensors index").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn a_misspelt_reference_gets_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("quant.webnn");
    std::fs::copy(
        common::fixtures().join("packed4/quant.safetensors"),
        dir.path().join("quant.safetensors"),
    )
    .unwrap();
    std::fs::write(
        &graph,
        "webnn_graph \"q\" v1 { inputs { x: f32[3]; } consts { s: f32[3] @weights(\"scael\"); } nodes { y = add(x, s); } outputs { y; } }",
    )
    .unwrap();
    let output = cli().arg("inspect").arg(&graph).output().unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the nearest: `scale`"), "{stderr}");
    assert!(stderr.contains("fix: did you mean `scale`?"), "{stderr}");
}
