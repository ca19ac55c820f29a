//! What the test suites of the webnn-weights crates share: the scratch folders of the
//! fault tests, a full disk (a 1 MiB tmpfs), a writer that fails after a number of bytes,
//! a folder listing to prove that nothing was left behind, the workspace's members as its
//! manifests say, Rust sources read as syntax trees ([`syntax`]: code without its tests, a
//! crate's module files, `unsafe` keywords, function lengths, empty public modules), the
//! paths a crate's files import ([`imports`]) and the structure checks built on them
//! ([`layers`]: layers in a stated order, no import circle), and the repository's Markdown
//! pages for the tests that read the docs.
//!
//! A dev-dependency only (`publish = false`), taken by path, so it never reaches a published
//! manifest.
//!
//! Rust and TOML are read with the crates made for them: `syn` (with `proc-macro2`'s
//! `span-locations` for line numbers) and `toml`. An earlier version read both as text: a
//! hand-written resolver of `use` trees, a comment and test-module stripper that counted
//! braces, and `members = [` found with `split`. Each had to re-learn a piece of Rust's
//! grammar (raw strings, character literals against lifetimes, nested comments, attributes
//! between items) and the new checks (function lengths, public items) needed more of it.
//! The price is compile time for the tests that take this crate: it brings `syn`,
//! `proc-macro2`, `unicode-ident`, and `toml` with its parser (`toml_parser`, `winnow`,
//! `toml_datetime`, `serde_spanned`, `serde_core`): 19 crates in its normal tree instead of
//! 10 (`cargo tree -p webnn-weights-test-support -e normal --prefix none`). The derive
//! macros of the workspace's dependencies already build `syn` for the host; this copy is
//! built once more, for the tests, with `span-locations`. No published crate depends on it.
#![warn(missing_docs)]
// The `unsafe` inventory (tests/tests/unsafe_inventory.rs) counts the `unsafe` of `syntax.rs`,
// all of them string literals (test patterns, the word it looks for); this keeps them so.
#![forbid(unsafe_code)]

pub mod imports;
pub mod layers;
pub mod syntax;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether this is a long run (`WEBNN_WEIGHTS_LONG_TESTS` set): more iterations, larger
/// models, real file systems.
pub fn long() -> bool {
    std::env::var_os("WEBNN_WEIGHTS_LONG_TESTS").is_some()
}

/// A folder for the kill tests: on `/dev/shm` (tmpfs: no disk syncs, so the fast run stays
/// fast) unless this is a long run or there is none; long runs use the temporary folder's
/// real file system.
pub fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if !long() && shm.is_dir() {
        if let Ok(dir) = tempfile::tempdir_in(shm) {
            return dir;
        }
    }
    tempdir().expect("a temporary folder")
}

/// A fresh temporary folder: `tempfile::tempdir()`, also on WASI, where std has no
/// temporary folder (`std::env::temp_dir` panics there): the folder named by `TMPDIR`
/// (default `/tmp`), which the runner must preopen (`web/wasm.sh` does).
pub fn tempdir() -> io::Result<tempfile::TempDir> {
    #[cfg(target_os = "wasi")]
    {
        let dir = std::env::var_os("TMPDIR").unwrap_or_else(|| "/tmp".into());
        // Set once per process; a second call finds it set (to the same folder).
        let _ = tempfile::env::override_temp_dir(Path::new(&dir));
    }
    tempfile::tempdir()
}

/// Every entry of `dir`, by name, sorted.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("b"), "").unwrap();
/// std::fs::write(dir.path().join("a"), "").unwrap();
/// assert_eq!(webnn_weights_test_support::entries(dir.path()), ["a", "b"]);
/// ```
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("a readable folder")
        .map(|e| {
            e.expect("a readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A 1 MiB tmpfs mounted on a fresh folder, unmounted on drop: a disk that fills up.
pub struct SmallTmpfs {
    dir: tempfile::TempDir,
}

impl SmallTmpfs {
    /// Mounts it; `None`, with a printed note naming `test`, where that is not possible
    /// (not Linux, or mounting is not permitted here).
    pub fn mount(test: &str) -> Option<SmallTmpfs> {
        if !cfg!(target_os = "linux") {
            println!("note: {test} on tmpfs skipped (not Linux)");
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => Some(SmallTmpfs { dir }),
            _ => {
                println!("note: {test} on tmpfs skipped (mount not permitted here)");
                None
            }
        }
    }

    /// The mounted folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A writer that accepts `left` bytes, then fails every write with
/// [`io::ErrorKind::StorageFull`] ("no space left (injected)").
///
/// ```
/// use std::io::Write;
/// let mut w = webnn_weights_test_support::FailAfter::new(2);
/// assert_eq!(w.write(b"abc").unwrap(), 2);
/// assert_eq!(w.write(b"c").unwrap_err().kind(), std::io::ErrorKind::StorageFull);
/// ```
pub struct FailAfter {
    left: usize,
}

impl FailAfter {
    /// A writer that takes `left` bytes before it fails.
    pub fn new(left: usize) -> FailAfter {
        FailAfter { left }
    }
}

impl Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "no space left (injected)",
            ));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A small xorshift64 generator: reproducible pseudo-random test inputs without a
/// dependency.
///
/// ```
/// let mut a = webnn_weights_test_support::Rng::new(7);
/// let mut b = webnn_weights_test_support::Rng::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed` (made odd, so never the all-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// A generator for the fault tests: seeded from `WEBNN_WEIGHTS_FAULT_SEED` when set,
    /// else from the clock; the seed is printed with `what` so a failing run can be replayed.
    pub fn from_env(what: &str) -> Rng {
        let seed = std::env::var("WEBNN_WEIGHTS_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            })
            | 1;
        println!("{what}: WEBNN_WEIGHTS_FAULT_SEED={seed}");
        Rng(seed)
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform enough in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// `n` pseudo-random bytes (the low byte of each value).
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// A SafeTensors archive of one-dimensional `U8` tensors, stored in the order given (names
/// are written as they are: plain names without quotes or backslashes).
pub fn u8_archive(tensors: &[(&str, &[u8])]) -> Vec<u8> {
    let mut header = String::from("{");
    let mut at = 0;
    for (i, (name, bytes)) in tensors.iter().enumerate() {
        if i > 0 {
            header.push(',');
        }
        let end = at + bytes.len();
        header.push_str(&format!(
            "\"{name}\":{{\"dtype\":\"U8\",\"shape\":[{}],\"data_offsets\":[{at},{end}]}}",
            bytes.len()
        ));
        at = end;
    }
    header.push('}');
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    for (_, bytes) in tensors {
        out.extend_from_slice(bytes);
    }
    out
}

/// Golden files: expected output checked into the repository and compared byte for byte.
///
/// A mismatch fails with the differing lines (`-` expected, `+` actual) and the command that
/// regenerates the files. Set `WEBNN_WEIGHTS_BLESS=1` to write the actual output instead
/// of comparing (then review the change with `git diff`).
pub mod golden {
    use std::fmt::Write as _;
    use std::path::Path;

    /// The variable that turns checking into regenerating.
    pub const BLESS: &str = "WEBNN_WEIGHTS_BLESS";

    /// Whether this run writes golden files instead of comparing with them.
    pub fn blessing() -> bool {
        std::env::var_os(BLESS).is_some_and(|v| !v.is_empty() && v != "0")
    }

    /// Compares `actual` with the golden file `path` byte for byte, or writes it there when
    /// [`blessing`]. `regenerate` is the command to show on a mismatch.
    ///
    /// ```
    /// use webnn_weights_test_support::golden;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("out.txt");
    /// std::fs::write(&path, "a\nb\nc\n").unwrap();
    /// golden::check(&path, "a\nb\nc\n", "cargo test");
    /// let diff = golden::diff("a\nb\nc\n", "a\nB\nc\n");
    /// assert!(diff.contains("-b\n+B\n"), "{diff}");
    /// ```
    pub fn check(path: &Path, actual: &str, regenerate: &str) {
        if blessing() {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
            }
            std::fs::write(path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            return;
        }
        let expected = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => panic!(
                "golden file {}: {e}\nto create it: {BLESS}=1 {regenerate}",
                path.display()
            ),
        };
        if expected != actual {
            panic!(
                "output differs from the golden file {}:\n{}\nif the change is intended: {BLESS}=1 {regenerate}",
                path.display(),
                diff(&expected, actual)
            );
        }
    }

    /// The lines where `expected` and `actual` differ, between their common first and last
    /// lines, with up to 3 lines of context: `-` expected, `+` actual (at most 40 of each).
    pub fn diff(expected: &str, actual: &str) -> String {
        let old: Vec<&str> = expected.split_inclusive('\n').collect();
        let new: Vec<&str> = actual.split_inclusive('\n').collect();
        let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let suffix = old[prefix..]
            .iter()
            .rev()
            .zip(new[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let context = prefix.saturating_sub(3);
        let mut out = format!("@@ line {} @@\n", prefix + 1);
        let line = |out: &mut String, mark: char, text: &str| {
            let _ = write!(out, "{mark}{}", text.trim_end_matches('\n'));
            if !text.ends_with('\n') {
                out.push_str("  (no newline at end)");
            }
            out.push('\n');
        };
        for text in &old[context..prefix] {
            line(&mut out, ' ', text);
        }
        for (side, mark) in [(&old, '-'), (&new, '+')] {
            let changed = &side[prefix..side.len() - suffix];
            for text in changed.iter().take(40) {
                line(&mut out, mark, text);
            }
            if changed.len() > 40 {
                let _ = writeln!(out, "{mark}... {} more lines", changed.len() - 40);
            }
        }
        for text in old[old.len() - suffix..].iter().take(3) {
            line(&mut out, ' ', text);
        }
        out
    }
}

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support lives in the repository")
        .to_path_buf()
}

/// The root `Cargo.toml`, parsed; a manifest that cannot be read or parsed fails, naming it.
fn manifest(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{} is not valid TOML: {e}", path.display()))
}

/// The folders of the workspace's members, as the root `Cargo.toml` lists them
/// (`weights-runtime`, …, `tests`, `test-support`), in its order. A manifest without a
/// `[workspace] members` list of plain folder names (no globs) fails, saying what it found.
pub fn workspace_members() -> Vec<String> {
    let path = repo_root().join("Cargo.toml");
    let root = manifest(&path);
    let members = root
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .unwrap_or_else(|| panic!("{}: no `[workspace] members` array", path.display()));
    members
        .iter()
        .map(|m| match m.as_str() {
            Some(folder) if !folder.contains(['*', '?', '[']) => folder.to_string(),
            _ => panic!(
                "{}: workspace member {m:?} is not a plain folder name; list each member's folder",
                path.display()
            ),
        })
        .collect()
}

/// The members of [`workspace_members`] that are published: those whose `Cargo.toml` does
/// not say `publish = false` (nor `publish = []`, nor `publish.workspace = true` with the
/// workspace's `[workspace.package] publish` saying so), in the root manifest's order.
pub fn published_members() -> Vec<String> {
    let root = manifest(&repo_root().join("Cargo.toml"));
    let inherited = root
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("publish"))
        .cloned();
    let publishes = |value: Option<&toml::Value>| match value {
        None => true,
        Some(toml::Value::Boolean(b)) => *b,
        Some(toml::Value::Array(registries)) => !registries.is_empty(),
        Some(_) => true,
    };
    workspace_members()
        .into_iter()
        .filter(|member| {
            let path = repo_root().join(member).join("Cargo.toml");
            let package = manifest(&path);
            let publish = package.get("package").and_then(|p| p.get("publish"));
            match publish {
                Some(toml::Value::Table(t))
                    if t.get("workspace")
                        .is_some_and(|w| w.as_bool() == Some(true)) =>
                {
                    publishes(inherited.as_ref())
                }
                other => publishes(other),
            }
        })
        .collect()
}

/// The repository's Markdown pages that the doc tests read, in this order: the README, the
/// CHANGELOG, every `docs/*.md` (sorted) and the README of every top-level folder (sorted:
/// the crates' crates.io pages, `fuzz/`, …).
pub fn markdown_pages(root: &Path) -> Vec<PathBuf> {
    let sorted = |mut paths: Vec<PathBuf>| {
        paths.sort();
        paths
    };
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    files.extend(sorted(
        std::fs::read_dir(root.join("docs"))
            .expect("docs/ exists")
            .map(|e| e.expect("docs/ is readable").path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect(),
    ));
    files.extend(sorted(
        std::fs::read_dir(root)
            .expect("the repository is readable")
            .map(|e| {
                e.expect("the repository is readable")
                    .path()
                    .join("README.md")
            })
            .filter(|p| p.is_file() && !p.starts_with(root.join("target")))
            .collect(),
    ));
    files
}
