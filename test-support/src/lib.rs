//! What the test suites of the webnn-weights crates share: the scratch folders of the
//! fault tests, a full disk (a 1 MiB tmpfs), a writer that fails after a number of bytes,
//! a folder listing to prove that nothing was left behind, Rust source without its comments
//! and test code, the paths a crate's files import ([`imports`]) and the structure checks
//! built on them ([`layers`]: layers in a stated order, no import circle), and the
//! repository's Markdown pages for the tests that read the docs.
//!
//! A dev-dependency only (`publish = false`), taken by path, so it never reaches a published
//! manifest.
#![warn(missing_docs)]

pub mod imports;
pub mod layers;

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

/// The source with its comments blanked out (line, block and nested block comments; a `//`
/// inside a string or character literal is not a comment). String literals are kept: the
/// macro's emitted code is in them.
pub fn without_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(b' ');
        } else if b[i] == b'"' || (b[i] == b'r' && matches!(b.get(i + 1), Some(b'"') | Some(b'#')))
        {
            // a string literal, raw or not, copied whole
            let raw = b[i] == b'r';
            let start = i;
            let mut hashes = 0;
            if raw {
                i += 1;
                while b.get(i) == Some(&b'#') {
                    hashes += 1;
                    i += 1;
                }
                if b.get(i) != Some(&b'"') {
                    out.extend_from_slice(&b[start..i]);
                    continue;
                }
            }
            i += 1;
            while i < b.len() {
                if !raw && b[i] == b'\\' {
                    i += 2;
                } else if b[i] == b'"'
                    && b[i + 1..].iter().take(hashes).all(|&c| c == b'#')
                    && b.len() >= i + 1 + hashes
                {
                    i += 1 + hashes;
                    break;
                } else {
                    i += 1;
                }
            }
            out.extend_from_slice(&b[start..i.min(b.len())]);
        } else if b[i] == b'\'' && (b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\')) {
            // a character literal ('"', '\'', '/'): copied; a lifetime has no closing quote
            let start = i;
            i += if b.get(i + 1) == Some(&b'\\') { 3 } else { 2 };
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
            out.extend_from_slice(&b[start..i.min(b.len())]);
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `code` (comments already out) with the contents of its string and character literals
/// blanked, the same length: where braces can be counted.
fn blank_literals(code: &str) -> Vec<u8> {
    let b = code.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        let raw = b[i] == b'r' && matches!(b.get(i + 1), Some(b'"') | Some(b'#'));
        if b[i] == b'"' || raw {
            let mut hashes = 0;
            let mut j = i;
            if raw {
                j += 1;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    i = j;
                    continue;
                }
            }
            j += 1;
            while j < b.len() {
                if !raw && b[j] == b'\\' {
                    out[j] = b' ';
                    if j + 1 < b.len() {
                        out[j + 1] = b' ';
                    }
                    j += 2;
                } else if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == b'#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                } else {
                    if b[j] != b'\n' {
                        out[j] = b' ';
                    }
                    j += 1;
                }
            }
            i = j;
        } else if b[i] == b'\'' && (b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\')) {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'\'' {
                out[j] = b' ';
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Rust source `text` without comments (a `//` inside a string is no comment) and without
/// test code, for the tests that read the crates' sources (layers, import circles):
/// `#[cfg(test)] mod x;`, and each `#[cfg(test)] mod x { … }` up to its closing brace,
/// wherever it is in the file (lines are kept, blank, so the rest keeps its line numbers).
pub fn code_without_tests(text: &str) -> String {
    let code = without_comments(text);
    let blank = blank_literals(&code);
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut pos = 0;
    while pos < bytes.len() {
        let end = code[pos..].find('\n').map_or(bytes.len(), |e| pos + e + 1);
        let line = &code[pos..end];
        if line.trim() == "#[cfg(test)]" {
            let next_end = code[end..].find('\n').map_or(bytes.len(), |e| end + e + 1);
            let next = code[end..next_end].trim_start();
            let item = next
                .strip_prefix("pub(crate) ")
                .or_else(|| next.strip_prefix("pub "))
                .unwrap_or(next);
            if item.starts_with("mod ") {
                let skip_to = if item.trim_end().ends_with(';') {
                    next_end
                } else {
                    closing_brace(&blank, end).unwrap_or(bytes.len())
                };
                out.extend(std::iter::repeat_n(
                    '\n',
                    code[pos..skip_to].matches('\n').count(),
                ));
                pos = skip_to;
                continue;
            }
        }
        out.push_str(line);
        pos = end;
    }
    out
}

/// The position just past the brace that closes the first `{` at or after `from` in
/// `blank` (literals blanked), or `None` when it is not closed.
fn closing_brace(blank: &[u8], from: usize) -> Option<usize> {
    let open = from + blank[from..].iter().position(|&c| c == b'{')?;
    let mut depth = 0usize;
    for (i, &c) in blank.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support lives in the repository")
        .to_path_buf()
}

/// The folders of the workspace's members, as the root `Cargo.toml` lists them
/// (`weights-runtime`, …, `tests`, `test-support`), in its order.
pub fn workspace_members() -> Vec<String> {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml"))
        .expect("the workspace's Cargo.toml is readable");
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the workspace's Cargo.toml lists its members");
    members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
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

#[cfg(test)]
mod source_tests {
    use super::*;

    #[test]
    fn test_modules_go_wherever_they_are_and_strings_keep_their_slashes() {
        let text = "use a::b; // x\n#[cfg(test)]\nmod tests {\n    fn f() { let s = \"}\"; }\n}\nuse c::d;\nconst U: &str = \"http://e\";\n#[cfg(test)]\nmod more;\nuse f::g;\n";
        let code = code_without_tests(text);
        assert!(code.contains("use a::b;"), "{code}");
        assert!(!code.contains("// x"), "{code}");
        assert!(!code.contains("fn f()"), "{code}");
        assert!(
            code.contains("use c::d;"),
            "a line after a test module is read: {code}"
        );
        assert!(code.contains("\"http://e\""), "{code}");
        assert!(!code.contains("mod more"), "{code}");
        assert!(code.contains("use f::g;"), "{code}");
        assert_eq!(code.lines().count(), text.lines().count(), "{code}");
    }
}
