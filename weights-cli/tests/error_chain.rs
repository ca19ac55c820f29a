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

/// No sidecar beside the graph: the message names every file discovery looked for, the
/// sharded indexes after the archives and blobs, then the fix (docs/embedding.md quotes it).
#[test]
fn a_missing_sidecar_names_every_candidate_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    std::fs::write(
        models.join("quant.webnn"),
        "webnn_graph \"q\" v1 { inputs { x: f32[3]; } consts { scale: f32[3] @weights(\"scale\"); } nodes { y = add(x, scale); } outputs { y; } }",
    )
    .unwrap();
    let output = cli()
        .current_dir(dir.path())
        .args(["inspect", "models/quant.webnn"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr_of(&output),
        "error: graph models/quant.webnn: constant `scale` uses @weights(\"scale\") but no weights \
         file was found; looked for models/quant.safetensors, models/quant.weights, \
         models/model.safetensors, models/model.weights, then for a sharded archive's index \
         models/quant.safetensors.index.json, models/model.safetensors.index.json\n  \
         fix: put one of these files next to the graph or pass an explicit weights path\n"
    );
}
