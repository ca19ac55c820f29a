//! `include_webnn_graph!` embeds only what the build script's current run prepared: with a
//! build.rs line removed, a graph renamed, or the build helper call gone, a real `cargo
//! build` of a scratch package fails with the `compile_error!` that names the line to add —
//! never a linker error, never the weights an earlier run left in `OUT_DIR` — in the
//! static-library and the `include_bytes!` mode. Switching modes back and forth rebuilds
//! with the current weights.
//!
//! The scratch package lives under cargo's temporary folder for tests, with its own target
//! folder kept between runs (the first run compiles our crates for it once).

mod scratch;

use scratch::App;

const BOTH: &str = "    webnn_weights_build::compile_or_exit(\"models/a.webnn\");\n    webnn_weights_build::compile_or_exit(\"models/b.webnn\");";

fn no_stale_weights(mode: &str) {
    let app = App::new(&format!("app-{mode}"));
    app.build_rs(BOTH);
    app.main_rs(&["a", "b"]);
    let out = app.run(mode);
    assert!(out.contains("a scale=[1.0, 1.0, 1.0]"), "{out}");
    assert!(out.contains("b scale=[1.0, 1.0, 1.0]"), "{out}");

    // New weights, and b's line removed: b's artifacts of the first run are still in
    // OUT_DIR, with the old weights.
    app.set_scale(3.0);
    app.build_rs("    webnn_weights_build::compile_or_exit(\"models/a.webnn\");");
    app.expect_not_prepared(mode, "b", "a line removed");

    // The graph renamed in build.rs (and on disk), main.rs not yet.
    std::fs::rename(
        app.dir.join("models/b.webnn"),
        app.dir.join("models/c.webnn"),
    )
    .unwrap();
    app.build_rs(
        "    webnn_weights_build::compile_or_exit(\"models/a.webnn\");\n    webnn_weights_build::compile_or_exit(\"models/c.webnn\");",
    );
    app.expect_not_prepared(mode, "b", "a graph renamed");

    // No build helper call at all.
    app.build_rs("");
    app.expect_not_prepared(mode, "a", "the build helper call removed");

    // Put right: the current weights, never the old ones.
    std::fs::rename(
        app.dir.join("models/c.webnn"),
        app.dir.join("models/b.webnn"),
    )
    .unwrap();
    app.build_rs(BOTH);
    let out = app.run(mode);
    assert!(out.contains("a scale=[3.0, 3.0, 3.0]"), "{out}");
    assert!(out.contains("b scale=[3.0, 3.0, 3.0]"), "{out}");
}

#[test]
fn no_stale_weights_with_the_static_library() {
    no_stale_weights("1");
}

#[test]
fn no_stale_weights_with_include_bytes() {
    no_stale_weights("include-bytes");
}

#[test]
fn switching_embedding_modes_rebuilds_with_the_current_weights() {
    let app = App::new("app-switch");
    app.build_rs("    webnn_weights_build::compile_or_exit(\"models/a.webnn\");");
    app.main_rs(&["a"]);
    for (round, mode) in ["1", "include-bytes", "0", "1", "include-bytes"]
        .into_iter()
        .enumerate()
    {
        let value = round as f32 + 1.0;
        app.set_scale(value);
        let out = app.run(mode);
        let embedded = mode != "0";
        assert!(
            out.contains(&format!(
                "a scale=[{value:?}, {value:?}, {value:?}] embedded={embedded}"
            )),
            "round {round}, mode {mode}: {out}"
        );
    }
}
