//! A scratch package built with the real cargo, shared by the tests that check what a build
//! does (`stale_artifacts.rs`, `rebuild_rules.rs`). It embeds copies of the packed4 fixture
//! graph (`models/a.webnn`, `models/b.webnn`) whose sidecar, `models/model.safetensors`, is
//! found by discovery; its target folder is kept between runs (the first run compiles our
//! crates for it once).
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub struct App {
    /// The package's folder; its name is also the package's name.
    pub dir: PathBuf,
    pub target: PathBuf,
}

impl App {
    /// A fresh package `name` under the tests' temporary folder. The target folder is shared
    /// by every app (our crates compile once for all of them), so each app has its own
    /// package name: tests of one binary run in parallel, and `cargo run` runs the binary
    /// uplifted to `target/debug/<package>` after the build lock is released; with one name
    /// for all, a test could run the binary another test had just built.
    pub fn new(name: &str) -> App {
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
name = "{1}"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
# `load`: the tests switch to the run-time mode (WEBNN_WEIGHTS_EMBED=0) too.
webnn-weights-runtime = {{ path = "{0}/weights-runtime", features = ["load"] }}

[build-dependencies]
webnn-weights-build = {{ path = "{0}/weights-build" }}
"#,
                repo.display(),
                name
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
    pub fn set_scale(&self, value: f32) {
        self.set_scale_in("model.safetensors", value);
    }

    /// Writes `models/<file>`, a copy of the fixture's archive whose `scale` is [value; 3]
    /// (installed by a rename, as a sidecar should be).
    pub fn set_scale_in(&self, file: &str, value: f32) {
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
        let tmp = self.dir.join(format!("models/{file}.tmp"));
        std::fs::write(&tmp, out).unwrap();
        std::fs::rename(tmp, self.dir.join("models").join(file)).unwrap();
    }

    pub fn build_rs(&self, body: &str) {
        std::fs::write(
            self.dir.join("build.rs"),
            format!("fn main() {{\n{body}\n}}\n"),
        )
        .unwrap();
    }

    /// main.rs embeds the given graphs and prints each one's `scale`.
    pub fn main_rs(&self, graphs: &[&str]) {
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

    pub fn cargo(&self, mode: &str, verb: &str) -> Output {
        Command::new(env!("CARGO"))
            .args([verb, "--quiet", "--offline"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target)
            .env("WEBNN_WEIGHTS_EMBED", mode)
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap()
    }

    /// A second build with nothing changed: fails when cargo runs a build script or compiles
    /// anything (`cargo build -v` prints `Running`, `Compiling` or `Dirty` then).
    pub fn expect_noop(&self, mode: &str, after: &str) {
        let out = Command::new(env!("CARGO"))
            .args(["build", "-v", "--offline"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target)
            .env("WEBNN_WEIGHTS_EMBED", mode)
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{after}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let log = String::from_utf8_lossy(&out.stderr);
        let ran: Vec<&str> = log
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                l.starts_with("Compiling") || l.starts_with("Running") || l.starts_with("Dirty")
            })
            .collect();
        assert!(ran.is_empty(), "{after}: a no-op build ran {ran:#?}");
    }

    /// Builds and runs; the program's output.
    pub fn run(&self, mode: &str) -> String {
        let out = self.cargo(mode, "run");
        assert!(
            out.status.success(),
            "{mode}: cargo run failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Builds, expecting the macro's error for `graph`; the compiler's output.
    pub fn expect_not_prepared(&self, mode: &str, graph: &str, why: &str) {
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
