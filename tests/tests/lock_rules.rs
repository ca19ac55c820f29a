//! The weights lock in real `cargo build`s of a scratch package: a lock beside the graph is
//! verified by the build script; a sidecar whose used bytes changed fails the build with
//! the constant, both digests and the fix; a lock added later is noticed; a renewed lock
//! builds; an unchanged locked model runs nothing; the program sees the verified digests
//! (`EmbeddedConstant::sha256`), embedded and in the run-time mode.

mod scratch;

use scratch::App;
use std::path::Path;
use std::time::Duration;
use webnn_weights_artifacts::hex;
use webnn_weights_runtime::{plan_external_weights, read_graph_file};

/// Lets the next write have a later modification time than the last build saw.
fn tick() {
    std::thread::sleep(Duration::from_millis(1100));
}

/// Writes `models/a.webnn.lock` for the current sidecar (what `webnn-weights lock` writes);
/// the pinned digest of `scale`, in hex.
fn lock(app: &App) -> String {
    let graph_path = app.dir.join("models/a.webnn");
    let graph = read_graph_file(&graph_path).unwrap();
    let plan = plan_external_weights(&graph, &graph_path, None, None).unwrap();
    let lock = plan.to_lock().unwrap();
    let tmp = app.dir.join("models/a.webnn.lock.tmp");
    std::fs::write(&tmp, lock.to_json()).unwrap();
    std::fs::rename(&tmp, app.dir.join("models/a.webnn.lock")).unwrap();
    hex(&lock.entry("scale").unwrap().sha256)
}

/// main.rs prints `scale`, and each constant's digest or `none`.
fn main_rs(app: &App) {
    std::fs::write(
        app.dir.join("src/main.rs"),
        r#"static G: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/a.webnn");
fn main() {
    println!("scale={:?} embedded={}", G.constant("scale").unwrap().as_f32().unwrap(), G.is_embedded());
    for c in G.constants() {
        let hex: Option<String> = c.sha256().map(|d| d.iter().map(|b| format!("{b:02x}")).collect());
        println!("{} sha256={}", c.name(), hex.as_deref().unwrap_or("none"));
    }
}
"#,
    )
    .unwrap();
}

fn fails_naming(app: &App, mode: &str, what: &str, needles: &[&str]) {
    let out = app.cargo(mode, "build");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what}: the build succeeded");
    for needle in needles {
        assert!(stderr.contains(needle), "{what}: no {needle:?} in {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

#[test]
fn the_build_verifies_the_lock_beside_the_graph() {
    let app = App::new("app-lock");
    app.build_rs("    webnn_weights_build::compile_or_exit(\"models/a.webnn\");");
    main_rs(&app);
    let mode = "1";
    let first = app.run(mode);
    assert!(first.contains("scale=[1.0, 1.0, 1.0]"), "{first}");
    assert!(
        first.contains("scale sha256=none"),
        "no lock, no digests: {first}"
    );
    app.expect_noop(mode, "an unlocked build");

    // A lock added later is noticed (the graph's folder is watched), and its digests reach
    // the program.
    tick();
    let pinned = lock(&app);
    let locked = app.run(mode);
    assert!(
        locked.contains(&format!("scale sha256={pinned}")),
        "{locked}"
    );
    assert!(!locked.contains("sha256=none"), "{locked}");
    app.expect_noop(mode, "a locked build");

    // The sidecar is replaced: every byte of `scale` changed. The build fails, naming the
    // constant, the sidecar, both digests and the fix.
    tick();
    app.set_scale(5.0);
    let graph_path = app.dir.join("models/a.webnn");
    let graph = read_graph_file(&graph_path).unwrap();
    let plan = plan_external_weights(&graph, &graph_path, None, None).unwrap();
    let scale = plan.constant("scale").unwrap();
    let found = hex(&plan.reader().sha256(scale).unwrap());
    fails_naming(
        &app,
        mode,
        "changed weights",
        &[
            "constant `scale`",
            "model.safetensors",
            &found,
            &pinned,
            "webnn-weights lock",
            "do not match the lock",
        ],
    );
    // Fixing nothing fails again (a failed build script reruns); the run-time mode checks
    // the lock when the program reads the weights.
    fails_naming(&app, mode, "again", &["constant `scale`"]);
    let out = app.cargo("0", "run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "run-time mode: {stderr}");
    assert!(
        stderr.contains("constant `scale`") && stderr.contains(&pinned),
        "run-time mode: {stderr}"
    );

    // Renewing the lock after review builds, embedded and in the run-time mode.
    let renewed = lock(&app);
    assert_eq!(renewed, found);
    let out = app.run(mode);
    assert!(out.contains("scale=[5.0, 5.0, 5.0]"), "{out}");
    assert!(out.contains(&format!("scale sha256={renewed}")), "{out}");
    let runtime = app.run("0");
    assert!(runtime.contains("embedded=false"), "{runtime}");
    assert!(
        runtime.contains(&format!("scale sha256={renewed}")),
        "{runtime}"
    );
    assert!(app.run(mode).contains("embedded=true"));
    app.expect_noop(mode, "a renewed lock");

    // A lock entry the graph no longer has, and a constant missing from the lock, both
    // named in one build.
    let lock_path = app.dir.join("models/a.webnn.lock");
    let text = std::fs::read_to_string(&lock_path).unwrap();
    let text = text.replacen("\"name\": \"scale\"", "\"name\": \"scales\"", 1);
    std::fs::write(&lock_path, text).unwrap();
    fails_naming(
        &app,
        mode,
        "entries",
        &[
            "constant `scale` is not in the lock",
            "the lock has constant `scales`, which the graph no longer has",
        ],
    );
    assert!(Path::new(&lock_path).exists());
}
