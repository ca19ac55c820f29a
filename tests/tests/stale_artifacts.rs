//! `include_webnn_graph!` embeds only what the build script's current run prepared: with a
//! build.rs line removed, a graph renamed, or the build helper call gone, a real `cargo
//! build` of a scratch package fails with the `compile_error!` that names the line to add —
//! never a linker error, never the weights an earlier run left in `OUT_DIR` — in the
//! static-library and the `include_bytes!` mode. Switching modes back and forth rebuilds
//! with the current weights.
//!
//! The scratch package lives under cargo's temporary folder for tests, with its own target
//! folder kept between runs (the first run compiles our crates for it once).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct App {
    dir: PathBuf,
    target: PathBuf,
}

impl App {
    fn new(name: &str) -> App {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stale-artifacts");
        let dir = root.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("models")).unwrap();
        let repo = repo().canonicalize().unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            format!(
                r#"[package]
name = "stale-app"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
webnn-weights-runtime = {{ path = "{0}/weights-runtime" }}

[build-dependencies]
webnn-weights-build = {{ path = "{0}/weights-build" }}
"#,
                repo.display()
            ),
        )
        .unwrap();
        std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        for graph in ["a", "b"] {
            std::fs::copy(
                repo.join("tests/fixtures/packed4/quant.webnn"),
                dir.join(format!("models/{graph}.webnn")),
            )
            .unwrap();
        }
        let app = App {
            dir,
            target: root.join("target"),
        };
        app.set_scale(1.0);
        app
    }

    /// Writes models/model.safetensors (the sidecar of both graphs) with `scale` =
    /// [value; 3].
    fn set_scale(&self, value: f32) {
        let bytes = std::fs::read(repo().join("tests/fixtures/packed4/quant.safetensors")).unwrap();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
        let range = &header["scale"]["data_offsets"];
        let (a, b) = (
            range[0].as_u64().unwrap() as usize,
            range[1].as_u64().unwrap() as usize,
        );
        let mut out = bytes.clone();
        for chunk in out[8 + n + a..8 + n + b].chunks_mut(4) {
            chunk.copy_from_slice(&value.to_le_bytes());
        }
        let tmp = self.dir.join("models/model.safetensors.tmp");
        std::fs::write(&tmp, out).unwrap();
        std::fs::rename(tmp, self.dir.join("models/model.safetensors")).unwrap();
    }

    fn build_rs(&self, body: &str) {
        std::fs::write(
            self.dir.join("build.rs"),
            format!("fn main() {{\n{body}\n}}\n"),
        )
        .unwrap();
    }

    /// main.rs embeds the given graphs and prints each one's `scale`.
    fn main_rs(&self, graphs: &[&str]) {
        let mut text = String::new();
        let mut prints = String::new();
        for (i, g) in graphs.iter().enumerate() {
            text.push_str(&format!(
                "static G{i}: webnn_weights_runtime::EmbeddedGraph =\n    webnn_weights_runtime::include_webnn_graph!(\"models/{g}.webnn\");\n"
            ));
            prints.push_str(&format!(
                "    println!(\"{g} scale={{:?}} embedded={{}}\", G{i}.constant(\"scale\").unwrap().as_f32().unwrap(), G{i}.is_embedded());\n"
            ));
        }
        text.push_str(&format!("fn main() {{\n{prints}}}\n"));
        std::fs::write(self.dir.join("src/main.rs"), text).unwrap();
    }

    fn cargo(&self, mode: &str, verb: &str) -> Output {
        Command::new(env!("CARGO"))
            .args([verb, "--quiet", "--offline"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target)
            .env("WEBNN_WEIGHTS_EMBED", mode)
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap()
    }

    /// Builds and runs; the program's output.
    fn run(&self, mode: &str) -> String {
        let out = self.cargo(mode, "run");
        assert!(
            out.status.success(),
            "{mode}: cargo run failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Builds, expecting the macro's error for `graph`; the compiler's output.
    fn expect_not_prepared(&self, mode: &str, graph: &str, why: &str) {
        let out = self.cargo(mode, "build");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{mode}, {why}: the build succeeded");
        let wanted =
            format!("graph `models/{graph}.webnn` was not prepared by this package's build script");
        assert!(stderr.contains(&wanted), "{mode}, {why}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "add this line to build.rs: `webnn_weights_build::compile_or_exit(\"models/{graph}.webnn\");`"
            )),
            "{mode}, {why}: {stderr}"
        );
        assert!(
            !stderr.contains("undefined symbol") && !stderr.contains("linking with"),
            "{mode}, {why}: a link error instead: {stderr}"
        );
    }
}

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
