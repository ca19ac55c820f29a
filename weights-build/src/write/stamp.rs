//! The stamp (`data.stamp`): what the data file was written from, and the check that
//! lets a rerun with the same facts skip the data file without reading a byte.

use super::Job;
use crate::object::ArchiveFraming;
use crate::Error;
use std::fs;
use std::io::{self, Write};
use std::path::Path;
use webnn_weights_artifacts as artifacts;
use webnn_weights_atomic as atomic;
use webnn_weights_runtime::Conversion;

/// The build helper's record of the cheap facts a data file was written from (the
/// layout's digest, each stored file's size, times and inode, and the data file's own),
/// so that a rerun with the same facts skips the data file without reading a byte. Private
/// to the build helper: the macro never reads it.
pub(super) const STAMP_FILE: &str = "data.stamp";

/// The first line of [`STAMP_FILE`] (a new layout of the file changes it).
const STAMP_HEADER: &str = "webnn-weights data stamp 1";

impl Job<'_> {
    /// The cheap facts the data file is written from, as the first lines of
    /// [`STAMP_FILE`]: a digest of the layout (object head and end, and for every entry its
    /// range and the stored range, file and conversion that fill it) and of `tail` (the
    /// linked table and graph JSON), then every stored file's size, modification and change
    /// times and inode. `None` when a fact cannot be read.
    pub(super) fn input_facts(
        &self,
        name: &str,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
    ) -> Option<String> {
        let mut facts = format!(
            "{STAMP_HEADER}\ndata {name} {}\nlayout {}\n",
            self.layout.data_len(),
            artifacts::hex(&self.layout_digest(object, tail))
        );
        for file in self.plan.files() {
            let meta = fs::metadata(file.path()).ok()?;
            facts.push_str(&file_facts(&file.path().display().to_string(), &meta));
        }
        // The weights lock the data was verified against: a changed (or added, or removed)
        // lock is verified again.
        match self.plan.lock() {
            Some(lock) => {
                let meta = fs::metadata(lock.path()).ok()?;
                facts.push_str(&file_facts(
                    &format!("lock {}", lock.path().display()),
                    &meta,
                ));
            }
            None => facts.push_str("no lock\n"),
        }
        Some(facts)
    }

    /// The SHA-256 of the layout: `tail`, the object's head, end and gaps, every entry
    /// ([`Job::entry_facts`]) and the data's length.
    fn layout_digest(&self, object: Option<&ArchiveFraming>, tail: &[u8]) -> [u8; 32] {
        let mut digest = hmac_sha256::Hash::new();
        // The tail (megabytes for a large graph) through ring's assembly with the feature
        // `ring`, which is as fast in this unoptimized build script as optimized.
        digest.update((tail.len() as u64).to_le_bytes());
        #[cfg(feature = "ring")]
        digest.update(ring::digest::digest(&ring::digest::SHA256, tail));
        #[cfg(not(feature = "ring"))]
        digest.update(hmac_sha256::Hash::hash(tail));
        if let Some(o) = object {
            digest.update((o.prefix.len() as u64).to_le_bytes());
            digest.update(&o.prefix);
            digest.update((o.suffix.len() as u64).to_le_bytes());
            digest.update(&o.suffix);
            for gap in &o.gaps {
                digest.update(gap.at.to_le_bytes());
                digest.update((gap.bytes.len() as u64).to_le_bytes());
                digest.update(&gap.bytes);
            }
        }
        digest.update(self.entry_facts());
        digest.update(self.layout.data_len().to_le_bytes());
        digest.finalize()
    }

    /// For every entry of the layout, its range and the stored range, file and conversion
    /// that fill it, in one buffer.
    fn entry_facts(&self) -> Vec<u8> {
        // Gathered into one buffer and hashed at once, a file's path only where it changes
        // from the entry before: SHA-256 runs at about 27 MB/s in an unoptimized build
        // script, so for 20,000 constants every byte per entry costs about a millisecond.
        let entries = self.layout.data.ranges().len();
        let mut bytes: Vec<u8> = Vec::with_capacity(entries * 42 + 256);
        let mut file: Option<&Path> = None;
        for (range, c) in self.layout.data.filled() {
            if file.is_none_or(|f| f.as_os_str() != c.file.as_os_str()) {
                let path = c.file.as_os_str().as_encoded_bytes();
                bytes.push(b'F');
                bytes.extend_from_slice(&(path.len() as u64).to_le_bytes());
                bytes.extend_from_slice(path);
                file = Some(&c.file);
            }
            match c.conversion {
                Conversion::None => bytes.push(b'N'),
                Conversion::Bf16ToF32 => bytes.push(b'B'),
                other => {
                    // A conversion added later: its name, never confused with the above.
                    let name = format!("{other:?}");
                    bytes.push(b'C');
                    bytes.extend_from_slice(&(name.len() as u64).to_le_bytes());
                    bytes.extend_from_slice(name.as_bytes());
                }
            }
            for n in [
                c.offset,
                c.stored_length,
                c.length,
                range.offset,
                range.length,
            ] {
                bytes.extend_from_slice(&n.to_le_bytes());
            }
        }
        bytes
    }
}

/// Whether the stamp at `stamp_path` records exactly `facts` and the data file's current
/// facts, and is not racy: a stored file modified less than two seconds before the stamp
/// was written could have changed again within the file system's time granularity without
/// a visible difference, so such a stamp is not trusted (the bytes are compared instead).
pub(super) fn stamp_matches(stamp_path: &Path, facts: &str, data: &Path) -> bool {
    let (Ok(recorded), Ok(stamp_meta), Ok(data_meta)) = (
        fs::read_to_string(stamp_path),
        fs::metadata(stamp_path),
        fs::metadata(data),
    ) else {
        return false;
    };
    let Some(output) = recorded.strip_prefix(facts) else {
        return false;
    };
    let Ok(written) = stamp_meta.modified() else {
        return false;
    };
    let settled = written
        .checked_sub(std::time::Duration::from_secs(2))
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let inputs_settled = facts
        .lines()
        .filter_map(|line| line.strip_prefix("file "))
        .all(|line| {
            let mtime = line.split(' ').nth(2).and_then(|t| t.parse::<u128>().ok());
            mtime.is_some_and(|m| m < settled)
        });
    inputs_settled && output == file_facts("output", &data_meta)
}

/// One line of facts about a file: size, modification time, and on Unix the change time,
/// device and inode (a file replaced by a rename, or changed and reset to its old
/// modification time, differs in these).
fn file_facts(label: &str, meta: &fs::Metadata) -> String {
    let nanos = |t: io::Result<std::time::SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos())
    };
    #[cfg(unix)]
    let more = {
        use std::os::unix::fs::MetadataExt;
        format!(
            " ctime {}.{:09} dev {} ino {}",
            meta.ctime(),
            meta.ctime_nsec(),
            meta.dev(),
            meta.ino()
        )
    };
    #[cfg(not(unix))]
    let more = String::new();
    format!(
        "file {} mtime {}{more} {label}\n",
        meta.len(),
        nanos(meta.modified())
    )
}

/// Records `facts` and the current facts of the data file at `data` in the stamp at
/// `stamp_path` (nothing when the data file's facts cannot be read).
pub(super) fn write_stamp(stamp_path: &Path, facts: String, data: &Path) -> Result<(), Error> {
    let Ok(meta) = fs::metadata(data) else {
        return Ok(());
    };
    let stamp = facts + &file_facts("output", &meta);
    // Written even when its bytes are the same: its modification time is when the
    // facts were last checked, which decides when they are settled (cargo does not
    // watch this file).
    atomic::write_file(stamp_path, |w| w.write_all(stamp.as_bytes())).map_err(|source| {
        Error::Write {
            path: stamp_path.to_path_buf(),
            source,
        }
    })
}
