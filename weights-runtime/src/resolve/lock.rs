//! The weights lock: pinned SHA-256 digests of a graph's resolved constants, read from a
//! `<graph file name>.lock` file beside the graph (or one named explicitly), and the
//! checks a plan carries while its bytes are read.
//!
//! The lock is plain JSON, sorted by constant name:
//!
//! ```json
//! {
//!   "format": "webnn-weights-lock",
//!   "version": 1,
//!   "constants": [
//!     {
//!       "name": "fc1_bias",
//!       "ref": "fc1.bias",
//!       "file": "tiny_mlp.safetensors",
//!       "byteLength": 32,
//!       "sha256": "…64 hex digits…"
//!     }
//!   ]
//! }
//! ```
//!
//! What is verified: the set of constant names (every `@weights` constant of the graph has
//! an entry, and every entry a constant), each constant's resolved byte length and the
//! SHA-256 of its resolved bytes (BF16 already widened to float32: the bytes the graph
//! gets). `ref` and `file` record where the bytes came from, for reviewers; they are
//! written by `webnn-weights lock` and not compared (the bytes are what is pinned).

use super::discover::Context;
use super::error::ResolveError;
use super::model::{
    hex, LockCheck, LockEntry, LockProblem, PlannedConstant, WeightPlan, WeightsLock,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The `format` of every weights lock.
pub(crate) const LOCK_FORMAT: &str = "webnn-weights-lock";
/// The only `version` of the lock format there is.
pub(crate) const LOCK_VERSION: u32 = 1;

impl LockEntry {
    /// An entry; the lock sorts entries by name.
    pub fn new(
        name: impl Into<String>,
        reference: impl Into<String>,
        file: impl Into<String>,
        byte_length: u64,
        sha256: [u8; 32],
    ) -> LockEntry {
        LockEntry {
            name: name.into(),
            reference: reference.into(),
            file: file.into(),
            byte_length,
            sha256,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock {
    format: String,
    version: u32,
    constants: Vec<RawEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawEntry {
    name: String,
    #[serde(rename = "ref")]
    reference: String,
    file: String,
    byte_length: u64,
    sha256: String,
}

impl WeightsLock {
    /// A lock of `entries` (sorted here by name), labelled `path` in messages.
    ///
    /// Fails when two entries have the same name.
    pub fn new(
        path: impl Into<PathBuf>,
        mut entries: Vec<LockEntry>,
    ) -> Result<WeightsLock, ResolveError> {
        let path = path.into();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(pair) = entries.windows(2).find(|p| p[0].name == p[1].name) {
            return Err(ResolveError::LockInvalid {
                lock: path,
                why: format!("constant `{}` is listed twice", pair[0].name),
            });
        }
        Ok(WeightsLock { path, entries })
    }

    /// Where the lock of the graph file `graph` is found: `<graph file name>.lock` in the
    /// same folder (`models/model.webnn` -> `models/model.webnn.lock`).
    ///
    /// ```
    /// use std::path::Path;
    /// use webnn_weights_runtime::WeightsLock;
    /// assert_eq!(WeightsLock::path_for(Path::new("models/model.webnn")),
    ///            Path::new("models/model.webnn.lock"));
    /// ```
    pub fn path_for(graph: &Path) -> PathBuf {
        let mut name = graph.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// Reads and checks the lock file at `path`.
    pub fn read(path: impl AsRef<Path>) -> Result<WeightsLock, ResolveError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ResolveError::LockUnreadable {
            lock: path.to_path_buf(),
            source,
        })?;
        WeightsLock::parse(&bytes, path)
    }

    /// Parses a lock's JSON; `path` names it in messages. Unknown keys, a missing key, a
    /// constant listed twice, a digest that is not 64 hex digits, and another format or
    /// version are errors.
    pub fn parse(json: &[u8], path: impl Into<PathBuf>) -> Result<WeightsLock, ResolveError> {
        let path = path.into();
        let invalid = |why: String| ResolveError::LockInvalid {
            lock: path.clone(),
            why,
        };
        let raw: RawLock = serde_json::from_slice(json).map_err(|e| invalid(e.to_string()))?;
        if raw.format != LOCK_FORMAT {
            return Err(invalid(format!(
                "its format is \"{}\", expected \"{LOCK_FORMAT}\"",
                raw.format
            )));
        }
        if raw.version != LOCK_VERSION {
            return Err(invalid(format!(
                "its version is {}, this build reads version {LOCK_VERSION}",
                raw.version
            )));
        }
        let entries = raw
            .constants
            .into_iter()
            .map(|e| {
                let sha256 = parse_hex(&e.sha256).ok_or_else(|| {
                    invalid(format!(
                        "constant `{}`: sha256 \"{}\" is not 64 hex digits",
                        e.name, e.sha256
                    ))
                })?;
                Ok(LockEntry {
                    name: e.name,
                    reference: e.reference,
                    file: e.file,
                    byte_length: e.byte_length,
                    sha256,
                })
            })
            .collect::<Result<Vec<_>, ResolveError>>()?;
        WeightsLock::new(path, entries)
    }

    /// The lock as JSON: pretty-printed, one key per line, constants sorted by name, a
    /// newline at the end (diffs well).
    pub fn to_json(&self) -> Vec<u8> {
        let raw = RawLock {
            format: LOCK_FORMAT.to_string(),
            version: LOCK_VERSION,
            constants: self
                .entries
                .iter()
                .map(|e| RawEntry {
                    name: e.name.clone(),
                    reference: e.reference.clone(),
                    file: e.file.clone(),
                    byte_length: e.byte_length,
                    sha256: hex(&e.sha256),
                })
                .collect(),
        };
        // Plain strings and integers: serializing cannot fail.
        let mut json = serde_json::to_vec_pretty(&raw).unwrap_or_default();
        json.push(b'\n');
        json
    }

    /// The file the lock was read from (or the label it was given).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry, sorted by name.
    pub fn entries(&self) -> &[LockEntry] {
        &self.entries
    }

    /// The entry of the constant `name`.
    pub fn entry(&self, name: &str) -> Option<&LockEntry> {
        self.entries
            .binary_search_by(|e| e.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }
}

impl WeightPlan {
    /// Attaches a weights lock: from now on every way of reading this plan's constants
    /// ([`WeightPlan::materialize`], the mapped and in-memory ways, a
    /// [`ConstantReader`](crate::ConstantReader)) hashes the resolved bytes while it reads
    /// them and fails, once the reading is done, with [`ResolveError::LockMismatch`]
    /// naming every problem: a digest or length that differs, a constant missing from the
    /// lock, an entry the graph no longer has. Constants on the same stored bytes are
    /// hashed once.
    ///
    /// ```
    /// use webnn_weights_runtime::{parse_webnn, plan_external_weights, ResolveError};
    /// let dir = tempfile::tempdir().unwrap();
    /// let graph = parse_webnn(r#"webnn_graph "g" v2 {
    ///   consts { w: u8[2] @weights("w"); }
    ///   nodes { y = relu(w); }
    ///   outputs { y; }
    /// }"#).unwrap();
    /// let path = dir.path().join("g.webnn");
    /// std::fs::write(dir.path().join("g.weights"), [7, 9]).unwrap();
    /// std::fs::write(dir.path().join("g.manifest.json"),
    ///     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#).unwrap();
    /// let plan = plan_external_weights(&graph, &path, None, None).unwrap();
    /// let lock = plan.to_lock().unwrap(); // what `webnn-weights lock` writes
    /// assert!(plan.clone().with_lock(lock.clone()).materialize().is_ok());
    /// // The sidecar is replaced by other bytes: the lock catches it.
    /// std::fs::write(dir.path().join("g.weights"), [7, 8]).unwrap();
    /// let plan = plan_external_weights(&graph, &path, None, None).unwrap();
    /// let err = plan.with_lock(lock).materialize().unwrap_err();
    /// assert!(matches!(err, ResolveError::LockMismatch { .. }));
    /// assert!(err.to_string().contains("constant `w`"));
    /// ```
    pub fn with_lock(mut self, lock: WeightsLock) -> WeightPlan {
        let first = self.first_with_same_bytes();
        self.lock = Some(std::sync::Arc::new(LockCheck::new(
            lock,
            &self.constants,
            &first,
        )));
        self
    }

    /// Attaches the lock file that applies to this plan's graph, if there is one: `explicit`
    /// (relative to the graph's folder unless absolute; an error when it does not exist),
    /// else `<graph file name>.lock` beside the graph ([`WeightsLock::path_for`]). The path
    /// looked at joins [`WeightPlan::watched_paths`], so that a build script reruns when a
    /// lock is added, changed or removed.
    ///
    /// Problems found without reading (entries missing or extra, lengths) are reported by
    /// [`ConstantReader::finish`](crate::ConstantReader::finish) even when nothing was
    /// read: `plan.reader().finish()` checks them alone.
    pub fn with_lock_file(mut self, explicit: Option<&Path>) -> Result<WeightPlan, ResolveError> {
        let lock = find_lock(&self.graph, explicit, true, &mut self.watched)?;
        Ok(match lock {
            Some(lock) => self.with_lock(lock),
            None => self,
        })
    }

    /// The weights lock attached with [`WeightPlan::with_lock`].
    pub fn lock(&self) -> Option<&WeightsLock> {
        self.lock.as_ref().map(|check| &check.lock)
    }

    /// `c`'s file as a lock records it: relative to the graph's folder where it lies
    /// below it, else as planned.
    pub(crate) fn lock_file_name(&self, c: &PlannedConstant) -> String {
        let ctx = Context::new(&self.graph);
        let file = c.file.strip_prefix(ctx.folder()).unwrap_or(&c.file);
        file.to_string_lossy().replace('\\', "/")
    }
}

/// The lock that applies to the graph at `graph`: the file `explicit` (relative to the
/// graph's folder unless absolute; an error when it does not exist), else, when
/// `discover`, `<graph file name>.lock` beside the graph if it exists. The path looked
/// at is added to `watched` (so a lock added later is noticed).
pub(crate) fn find_lock(
    graph: &Path,
    explicit: Option<&Path>,
    discover: bool,
    watched: &mut Vec<PathBuf>,
) -> Result<Option<WeightsLock>, ResolveError> {
    let ctx = Context::new(graph);
    // Discovery's checks, with a lock's own error for a path that cannot be inspected.
    let unreadable = |e| match e {
        ResolveError::Io { path, source, .. } => {
            ResolveError::LockUnreadable { lock: path, source }
        }
        other => other,
    };
    let path = match explicit {
        Some(p) => {
            watched.push(ctx.relative(p));
            ctx.explicit(p, "weights lock").map_err(unreadable)?
        }
        None if discover => {
            let path = WeightsLock::path_for(graph);
            watched.push(path.clone());
            if !ctx.is_file(&path, "weights lock").map_err(unreadable)? {
                return Ok(None);
            }
            path
        }
        None => return Ok(None),
    };
    WeightsLock::read(&path).map(Some)
}

fn parse_hex(text: &str) -> Option<[u8; 32]> {
    let text = text.as_bytes();
    if text.len() != 64 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (i, pair) in text.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// A SHA-256 in progress. With the feature `ring`, ring's assembly (the same speed in an
/// unoptimized build: build scripts are compiled at `opt-level = 0`); without it, the
/// pure-Rust `hmac-sha256` crate (no dependencies), compiled at the application's
/// optimization level.
pub(crate) struct Sha256 {
    #[cfg(feature = "ring")]
    inner: ring::digest::Context,
    #[cfg(not(feature = "ring"))]
    inner: hmac_sha256::Hash,
}

impl Sha256 {
    pub fn new() -> Sha256 {
        Sha256 {
            #[cfg(feature = "ring")]
            inner: ring::digest::Context::new(&ring::digest::SHA256),
            #[cfg(not(feature = "ring"))]
            inner: hmac_sha256::Hash::new(),
        }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        #[cfg(feature = "ring")]
        self.inner.update(bytes);
        #[cfg(not(feature = "ring"))]
        self.inner.update(bytes);
    }

    pub fn finish(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        #[cfg(feature = "ring")]
        out.copy_from_slice(self.inner.finish().as_ref());
        #[cfg(not(feature = "ring"))]
        out.copy_from_slice(&self.inner.finalize());
        out
    }

    pub fn of(bytes: &[u8]) -> [u8; 32] {
        let mut d = Sha256::new();
        d.update(bytes);
        d.finish()
    }
}

/// A writer that hashes what passes through it.
pub(crate) struct Hashing<'w, W: ?Sized> {
    pub inner: &'w mut W,
    pub digest: Sha256,
}

impl<W: std::io::Write + ?Sized> std::io::Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.digest.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl LockCheck {
    /// Compares `lock` with the planned `constants` (sorted by name); `first` is
    /// `WeightPlan::first_with_same_bytes`.
    pub fn new(lock: WeightsLock, constants: &[PlannedConstant], first: &[usize]) -> LockCheck {
        let mut before = Vec::new();
        let mut pinned = Vec::with_capacity(constants.len());
        for c in constants {
            match lock.entry(&c.name) {
                None => {
                    before.push(LockProblem::NotLocked {
                        constant: c.name.clone(),
                    });
                    pinned.push(None);
                }
                Some(e) => {
                    if e.byte_length != c.length {
                        before.push(LockProblem::Length {
                            constant: c.name.clone(),
                            file: c.file.clone(),
                            expected: e.byte_length,
                            found: c.length,
                        });
                    }
                    pinned.push(Some(e.sha256));
                }
            }
        }
        for e in lock.entries() {
            if constants
                .binary_search_by(|c| c.name.as_str().cmp(&e.name))
                .is_err()
            {
                before.push(LockProblem::NotInGraph {
                    constant: e.name.clone(),
                });
            }
        }
        let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, &f) in first.iter().enumerate() {
            groups.entry(f).or_default().push(i);
        }
        let mut peers = HashMap::new();
        for members in groups.into_values().filter(|m| m.len() > 1) {
            for &i in &members {
                peers.insert(i, members.clone());
            }
        }
        LockCheck {
            lock,
            pinned,
            peers,
            before,
        }
    }

    /// Records in `found` every constant on the bytes of `constants[index]` whose pinned
    /// digest is not `digest`.
    pub fn check(
        &self,
        constants: &[PlannedConstant],
        index: usize,
        digest: [u8; 32],
        found: &mut Vec<LockProblem>,
    ) {
        let own = [index];
        let members = self.peers.get(&index).map_or(&own[..], |m| &m[..]);
        for &i in members {
            let c = &constants[i];
            if let Some(expected) = self.pinned[i] {
                if expected != digest {
                    found.push(LockProblem::Digest {
                        constant: c.name.clone(),
                        file: c.file.clone(),
                        expected,
                        found: digest,
                    });
                }
            }
        }
    }

    /// The problems found before reading and while reading (`found`), as one error naming
    /// every one of them; `Ok` when there are none.
    pub fn finish(&self, graph: &Path, found: Vec<LockProblem>) -> Result<(), ResolveError> {
        let mut problems = self.before.clone();
        problems.extend(found);
        if problems.is_empty() {
            return Ok(());
        }
        // A constant read twice is reported once.
        problems.sort_by(|a, b| a.constant().cmp(b.constant()));
        problems.dedup_by(|a, b| a.constant() == b.constant());
        Err(ResolveError::LockMismatch {
            graph: graph.to_path_buf(),
            lock: self.lock.path().to_path_buf(),
            problems,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256() {
        // FIPS 180-2 test vectors.
        assert_eq!(
            hex(&Sha256::of(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut d = Sha256::new();
        for piece in [
            &b"abcdbcdecdefdefgefghfghighijhijk"[..],
            b"ijkljklmklmnlmnomnopnopq",
        ] {
            d.update(piece);
        }
        assert_eq!(
            hex(&d.finish()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        // The pure-Rust implementation agrees on every length around a block.
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in [0, 1, 55, 56, 63, 64, 65, 127, 128, 300] {
            use sha2::Digest;
            let expected: [u8; 32] = sha2::Sha256::digest(&data[..n]).into();
            assert_eq!(Sha256::of(&data[..n]), expected, "{n} bytes");
        }
    }

    fn sample() -> WeightsLock {
        WeightsLock::new(
            "m.webnn.lock",
            vec![
                LockEntry::new("b", "B", "m.safetensors", 4, [0xAB; 32]),
                LockEntry::new("a", "A", "m.safetensors", 2, [1; 32]),
            ],
        )
        .unwrap()
    }

    #[test]
    fn json_round_trips_sorted_and_readable() {
        let lock = sample();
        let json = String::from_utf8(lock.to_json()).unwrap();
        assert!(json.find("\"a\"").unwrap() < json.find("\"b\"").unwrap());
        assert!(json.contains("\"byteLength\": 4"));
        assert!(json.contains(&"ab".repeat(32)));
        assert!(json.ends_with("}\n"));
        assert_eq!(
            WeightsLock::parse(json.as_bytes(), "m.webnn.lock").unwrap(),
            lock
        );
    }

    #[test]
    fn bad_locks_are_clear_errors() {
        let good = String::from_utf8(sample().to_json()).unwrap();
        let cases = [
            (
                good.replace("webnn-weights-lock", "other"),
                "format is \"other\"",
            ),
            (
                good.replace("\"version\": 1", "\"version\": 2"),
                "version is 2",
            ),
            (
                good.replace("\"byteLength\"", "\"bytes\""),
                "unknown field `bytes`",
            ),
            (
                good.replace(&"ab".repeat(32), "xyz"),
                "`b`: sha256 \"xyz\" is not 64 hex",
            ),
            (
                good.replace("\"name\": \"b\"", "\"name\": \"a\""),
                "`a` is listed twice",
            ),
            ("{".to_string(), "EOF"),
        ];
        for (json, expected) in cases {
            let err = WeightsLock::parse(json.as_bytes(), "m.webnn.lock").unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("m.webnn.lock") && text.contains(expected),
                "{text}"
            );
            assert!(err.fix().unwrap().contains("webnn-weights lock"), "{text}");
        }
    }
}
