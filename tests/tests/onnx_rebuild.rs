//! The rebuild rules for an ONNX model embedded straight from build.rs (docs/embedding.md,
//! "ONNX models"), replayed with the real cargo on a scratch package: a no-op build runs no
//! build script (the converted weights the build script writes under OUT_DIR are never
//! watched); a changed external data file is converted and embedded again; the run-time mode
//! (`WEBNN_WEIGHTS_EMBED=0`) reads the converted weights on first use; a model rewritten with
//! the same bytes reruns the build script but changes no artifact.

mod scratch;

use scratch::{repo, App};
use std::time::Duration;

/// Lets the next write have a later modification time than the last build saw.
fn tick() {
    std::thread::sleep(Duration::from_millis(1100));
}

#[test]
fn an_onnx_model_rebuilds_exactly_when_it_or_its_data_changes() {
    let app = App::new("app-onnx");
    let runtime = repo().join("weights-runtime").canonicalize().unwrap();
    let build = repo().join("weights-build").canonicalize().unwrap();
    std::fs::write(
        app.dir.join("Cargo.toml"),
        format!(
            r#"[package]
name = "app-onnx"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
webnn-weights-runtime = {{ path = "{}", features = ["load"] }}

[build-dependencies]
webnn-weights-build = {{ path = "{}", features = ["onnx"] }}
"#,
            runtime.display(),
            build.display()
        ),
    )
    .unwrap();
    let models = app.dir.join("models");
    for name in ["tiny.onnx", "tiny.onnx.data"] {
        std::fs::copy(
            repo().join("tests/fixtures/onnx-model").join(name),
            models.join(name),
        )
        .unwrap();
    }
    app.build_rs(
        "    webnn_weights_build::Builder::new(\"models/tiny.onnx\").override_dim(\"batch\", 1).compile_or_exit();",
    );
    std::fs::write(
        app.dir.join("src/main.rs"),
        "static M: webnn_weights_runtime::EmbeddedGraph =\n    \
         webnn_weights_runtime::include_webnn_graph!(\"models/tiny.onnx\");\n\
         fn main() {\n    \
         let b = M.constant(\"b\").unwrap().as_f32().unwrap();\n    \
         println!(\"b0={:?} embedded={}\", b[0], M.is_embedded());\n}\n",
    )
    .unwrap();

    assert!(app.run("1").contains("b0=1.0 embedded=true"));
    app.expect_noop("1", "the first build");

    // New weights in the external data file: converted and embedded again.
    tick();
    let data = models.join("tiny.onnx.data");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[..4].copy_from_slice(&7.5f32.to_le_bytes());
    std::fs::write(&data, &bytes).unwrap();
    assert!(
        app.run("1").contains("b0=7.5 embedded=true"),
        "a changed external data file"
    );
    app.expect_noop("1", "a changed external data file");

    // Run-time resolution (from the converted weights under OUT_DIR) and back.
    assert!(app.run("0").contains("b0=7.5 embedded=false"));
    app.expect_noop("0", "switching to the run-time mode");
    assert!(app.run("1").contains("b0=7.5 embedded=true"));
    app.expect_noop("1", "switching back");

    // The model rewritten with the same bytes: the build script reruns, rewrites nothing, and
    // the next build is a no-op again.
    tick();
    let model = models.join("tiny.onnx");
    std::fs::write(&model, std::fs::read(&model).unwrap()).unwrap();
    assert!(app.run("1").contains("b0=7.5 embedded=true"));
    app.expect_noop("1", "a model rewritten with the same bytes");

    // A model that does not convert: the build fails with the diagnostic naming it.
    tick();
    std::fs::write(&model, b"not a model").unwrap();
    let out = app.cargo("1", "build");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("error: webnn-weights: cannot embed `models/tiny.onnx`"),
        "{stderr}"
    );
    assert!(stderr.contains("not an ONNX model"), "{stderr}");
}
