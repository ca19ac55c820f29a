//! What the CLI's integration tests share: the fixtures, the command, and the checks every
//! test makes of a run (exit status, the message on stderr, files left behind).
#![allow(dead_code, unused_macros)] // each test binary uses its own part

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The shared fixtures, `tests/fixtures/` at the repository's root.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The `webnn-weights` binary of this build.
pub fn cli() -> Command {
    Command::cargo_bin("webnn-weights").unwrap()
}

/// `command!("unpack-weights", "--weights" => w, "--output-dir" => dir)`: the
/// `webnn-weights` command with a subcommand and flag/value pairs, in order (values are
/// anything a process argument can be: `&str`, `&Path`, `PathBuf`).
macro_rules! command {
    ($name:expr $(, $flag:expr => $value:expr)* $(,)?) => {{
        let mut cmd = $crate::common::cli();
        cmd.arg($name);
        $( cmd.arg($flag).arg($value); )*
        cmd
    }};
}

/// What the run printed on stderr.
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `cmd`, which must succeed; its output.
pub fn assert_succeeds(cmd: &mut Command) -> Output {
    let output = cmd.output().unwrap();
    assert!(output.status.success(), "{cmd:?}: {}", stderr_of(&output));
    output
}

/// Asserts that a run failed with exit status `code` and a message containing `needle`.
pub fn assert_fails(output: &Output, code: i32, needle: &str) {
    let err = stderr_of(output);
    assert_eq!(output.status.code(), Some(code), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
}

/// Every entry in `dir`, sorted, as names (to prove nothing else was left behind).
pub use webnn_weights_test_support::entries as listing;

/// Runs `cmd`, which must fail with exit status `code` and a message containing every one
/// of `needles`, leaving `dir` exactly as it was: no output, no folder, no temporary file.
pub fn assert_fails_leaving(dir: &Path, mut cmd: Command, code: i32, needles: &[&str]) {
    let before = listing(dir);
    let output = cmd.output().unwrap();
    for needle in needles {
        assert_fails(&output, code, needle);
    }
    assert_eq!(listing(dir), before, "{cmd:?} left files behind");
}

/// The graph as the library resolves it, with explicit sidecar paths when given.
pub fn library_resolved(
    graph: &Path,
    weights: Option<&str>,
    manifest: Option<&str>,
) -> webnn_weights_runtime::GraphJson {
    let mut loader = webnn_weights_runtime::GraphLoader::new(graph);
    if let Some(w) = weights {
        loader = loader.weights(w);
    }
    if let Some(m) = manifest {
        loader = loader.manifest(m);
    }
    loader.load().unwrap()
}

/// Adds `--weights` / `--manifest` to `cmd` when given.
pub fn with_paths(cmd: &mut assert_cmd::Command, weights: Option<&str>, manifest: Option<&str>) {
    if let Some(w) = weights {
        cmd.args(["--weights", w]);
    }
    if let Some(m) = manifest {
        cmd.args(["--manifest", m]);
    }
}
