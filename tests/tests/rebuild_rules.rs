//! The rebuild rules of docs/embedding.md ("How rebuilds are triggered"), replayed with the
//! real cargo on a scratch package: a no-op build runs no build script and compiles nothing;
//! a new higher-priority discovery candidate wins the next build; a changed sidecar is
//! re-embedded; `WEBNN_WEIGHTS_EMBED=0` switches to run-time resolution and back; a missing
//! sidecar fails the build with the diagnostic, and putting it back recovers.

mod scratch;

use scratch::App;
use std::time::Duration;

/// Lets the next write have a later modification time than the last build saw.
fn tick() {
    std::thread::sleep(Duration::from_millis(1100));
}

#[test]
fn rebuilds_happen_exactly_when_a_result_could_change() {
    let app = App::new("app-rules");
    app.build_rs("    webnn_weights_build::compile_or_exit(\"models/a.webnn\");");
    app.main_rs(&["a"]);
    let mode = "1";
    // Discovery: no models/a.safetensors, so models/model.safetensors.
    assert!(app
        .run(mode)
        .contains("a scale=[1.0, 1.0, 1.0] embedded=true"));
    app.expect_noop(mode, "the first build");

    // A higher-priority candidate appears: the watched folder reruns the build script.
    tick();
    app.set_scale_in("a.safetensors", 4.0);
    assert!(
        app.run(mode).contains("a scale=[4.0, 4.0, 4.0]"),
        "a new a.safetensors wins"
    );
    app.expect_noop(mode, "a new candidate");

    // The chosen sidecar changes.
    tick();
    app.set_scale_in("a.safetensors", 7.0);
    assert!(
        app.run(mode).contains("a scale=[7.0, 7.0, 7.0]"),
        "a changed sidecar"
    );

    // Run-time resolution and back.
    assert!(app
        .run("0")
        .contains("a scale=[7.0, 7.0, 7.0] embedded=false"));
    assert!(app
        .run(mode)
        .contains("a scale=[7.0, 7.0, 7.0] embedded=true"));
    app.expect_noop(mode, "switching back");

    // No sidecar at all: the build fails with the diagnostic; putting them back recovers.
    let models = app.dir.join("models");
    for name in ["a.safetensors", "model.safetensors"] {
        std::fs::rename(models.join(name), app.dir.join(name)).unwrap();
    }
    let out = app.cargo(mode, "build");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a build without a sidecar succeeded");
    assert!(
        stderr.contains("error: webnn-weights: cannot embed `models/a.webnn`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fix: put one of these files next to the graph"),
        "{stderr}"
    );
    for name in ["a.safetensors", "model.safetensors"] {
        std::fs::rename(app.dir.join(name), models.join(name)).unwrap();
    }
    assert!(
        app.run(mode)
            .contains("a scale=[7.0, 7.0, 7.0] embedded=true"),
        "recovered"
    );
    app.expect_noop(mode, "recovering");
}
