//! Step 4 of the pipeline: the `cargo:` lines a build script prints — what reruns it, and
//! how the static library is linked.

use crate::env::EMBED_ENV;
use std::path::{Path, PathBuf};
use std::time::Duration;
use webnn_weights_artifacts::{normalize, prepared_env_var, prepared_stamp};

/// The `cargo:` lines of one build, in the order printed.
#[derive(Debug, Default)]
pub(crate) struct Directives {
    lines: Vec<String>,
}

impl Directives {
    /// Starts with the environment variable every build depends on.
    pub fn new() -> Directives {
        Directives {
            lines: vec![format!("cargo:rerun-if-env-changed={EMBED_ENV}")],
        }
    }

    /// The lines so far.
    pub fn into_lines(self) -> Vec<String> {
        self.lines
    }

    /// Reruns the build script when the graph file changes.
    pub fn graph(&mut self, graph: &Path) {
        self.lines
            .push(format!("cargo:rerun-if-changed={}", graph.display()));
    }

    /// Emits `rerun-if-changed` for the paths a plan examined. Existing files are watched
    /// directly. A missing path cannot be (cargo would rerun the build script on every
    /// build), so its folder is watched instead: cargo then reruns when any file in that
    /// folder is created, removed or modified — a new `<stem>.safetensors` wins the next
    /// build. A folder that contains the build's own output (the package root of a
    /// single-crate project, whose `target/` changes on every build) is not watched; keep
    /// graphs in a subfolder such as `models/` to get that rule.
    ///
    /// Paths under `out_dir` are never watched: those are files the build script writes
    /// itself (an ONNX model's converted weights), newer than the run that wrote them, so
    /// cargo would rerun the build script on every build.
    pub fn watch(&mut self, paths: &[PathBuf], out_dir: &Path) {
        let out_dir = normalize(out_dir);
        let mut folders: Vec<PathBuf> = Vec::new();
        for path in paths {
            if normalize(path).starts_with(&out_dir) {
                continue;
            }
            if path.is_file() {
                let line = format!("cargo:rerun-if-changed={}", path.display());
                if !self.lines.contains(&line) {
                    self.lines.push(line);
                }
            } else if let Some(parent) = path.parent() {
                let parent = normalize(parent);
                let parent = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent
                };
                if parent.is_dir() && !out_dir.starts_with(&parent) && !folders.contains(&parent) {
                    folders.push(parent);
                }
            }
        }
        for folder in folders {
            self.lines
                .push(format!("cargo:rerun-if-changed={}", folder.display()));
        }
    }

    /// Tells `include_webnn_graph!` that this run prepared the graph of `key`, whose
    /// `index.json` is `index_json` (cargo hands the value to rustc; artifacts of an earlier
    /// run have none, and the macro refuses them).
    pub fn prepared(&mut self, key: &str, index_json: &[u8]) {
        self.lines.push(format!(
            "cargo:rustc-env={}={}",
            prepared_env_var(key),
            prepared_stamp(index_json)
        ));
    }

    /// Links the static library `lib_file` (named `lib_name` for `-l`) in `dir`.
    pub fn link(&mut self, dir: &Path, lib_name: &str, lib_file: &str) {
        self.lines
            .push(format!("cargo:rustc-link-search=native={}", dir.display()));
        self.lines
            .push(format!("cargo:rustc-link-lib=static:-bundle={lib_name}"));
        // Cargo passes `-l` only to the library target of a package that has one; the
        // archive as a link argument also serves its binaries, tests and examples that
        // embed the graph themselves (an archive member is pulled in once, if needed).
        self.lines.push(format!(
            "cargo:rustc-link-arg={}",
            dir.join(lib_file).display()
        ));
    }

    /// Prints `message` (one line) among cargo's warnings.
    pub fn warning(&mut self, message: &str) {
        self.lines.push(format!("cargo:warning={message}"));
    }

    /// Passes the linker script `script` with `-T` (as `-Xlinker --script=…`: the C compiler
    /// driver rustc links with on Linux hands it to the linker whole, commas included). With
    /// `INSERT` it augments the linker's default script (GNU ld, lld); see
    /// `ObjectTarget::linker_script`.
    pub fn linker_script(&mut self, script: &Path) {
        self.lines.push("cargo:rustc-link-arg=-Xlinker".to_string());
        self.lines.push(format!(
            "cargo:rustc-link-arg=--script={}",
            script.display()
        ));
    }
}

/// Passes over a locked model's data (read, verify, write) slower than this print
/// [`slow_lock_message`].
pub(crate) const SLOW_LOCK: Duration = Duration::from_secs(1);

/// The warning for a data pass of `elapsed` that read `data_len` bytes of weights, verified
/// them against the weights lock `lock` and wrote the data file (one streamed pass, timed
/// whole), when it took over [`SLOW_LOCK`] without the feature `ring` (`ring`: whether it is
/// on); `None` otherwise. Without `ring` the digests are the pure-Rust `hmac-sha256`,
/// compiled unoptimized in a build script (about 45 MB/s, docs/lock.md, "How fast").
pub(crate) fn slow_lock_message(
    elapsed: Duration,
    lock: &Path,
    data_len: u64,
    ring: bool,
) -> Option<String> {
    if ring || elapsed <= SLOW_LOCK {
        return None;
    }
    Some(format!(
        "webnn-weights: reading {:.1} MiB of weights, verifying them against {} and writing the \
         data file took {:.1} s: the build script hashes them with unoptimized pure-Rust SHA-256; for ring's assembly, \
         as fast here as in an optimized program, use `webnn-weights-build = {{ version = \"{}\", \
         features = [\"ring\"] }}` in [build-dependencies]",
        data_len as f64 / (1024.0 * 1024.0),
        lock.display(),
        elapsed.as_secs_f64(),
        env!("CARGO_PKG_VERSION"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_lock_without_ring_gets_one_warning_with_the_fix() {
        let lock = Path::new("/pkg/models/model.webnn.lock");
        let message = slow_lock_message(Duration::from_millis(6_250), lock, 256 << 20, false);
        assert_eq!(
            message.as_deref(),
            Some(
                format!(
                    "webnn-weights: reading 256.0 MiB of weights, verifying them against \
                     /pkg/models/model.webnn.lock and writing the data file took 6.2 s: the \
                     build script hashes them with unoptimized pure-Rust SHA-256; for ring's assembly, as fast here as in an \
                     optimized program, use `webnn-weights-build = {{ version = \"{}\", \
                     features = [\"ring\"] }}` in [build-dependencies]",
                    env!("CARGO_PKG_VERSION")
                )
                .as_str()
            )
        );
        // One line: cargo reads a directive up to the end of its line.
        assert!(!message.unwrap().contains('\n'));
        // Fast enough, or with `ring` on: nothing.
        for (elapsed, ring) in [(SLOW_LOCK, false), (Duration::from_millis(20), false)] {
            assert_eq!(slow_lock_message(elapsed, lock, 256 << 20, ring), None);
        }
        let slow = Duration::from_secs(30);
        assert_eq!(slow_lock_message(slow, lock, 256 << 20, true), None);
        let mut d = Directives::new();
        d.warning("w");
        assert_eq!(d.into_lines()[1], "cargo:warning=w");
    }

    #[test]
    fn the_linker_script_goes_to_the_linker_whole() {
        let mut d = Directives::new();
        d.linker_script(Path::new("/out/a,b/webnn_weights.ld"));
        let lines = d.into_lines();
        assert_eq!(
            lines[1..],
            [
                "cargo:rustc-link-arg=-Xlinker",
                "cargo:rustc-link-arg=--script=/out/a,b/webnn_weights.ld",
            ]
        );
    }
}
