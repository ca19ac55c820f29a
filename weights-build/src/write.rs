//! Step 3 of the pipeline: the files under `OUT_DIR/webnn-weights/<key>/`.
//!
//! The data file first (a static library through [`crate::object`], or `data.bin`), then
//! leftovers of another mode removed, `graph.json`, the constant table, and the index last:
//! the index is what the macro trusts. A static library links the table and the graph JSON
//! after the data instead of the two files, so that rustc never reads them. A file whose
//! bytes would not change is left untouched (its modification time too). Every small file is
//! written atomically; the data file is updated in place when its length stays, and is not
//! even read again when the cheap facts it was written from are unchanged (see
//! `Job::write_data`).

use crate::embedding::{data_symbol, Embedding};
use crate::layout::ArtifactLayout;
use crate::object::{ArchiveFraming, ObjectTarget, ALIGN};
use crate::{Error, Target};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use webnn_weights_artifacts::{
    self as artifacts, normalize, ConstantTable, DataRange, Index, IndexData, IndexRuntime,
    TableRow, ARTIFACTS_DIR, DATA_ALIGN, DATA_FILE, GRAPH_FILE, INDEX_FILE, TABLE_FILE,
};
use webnn_weights_atomic as atomic;
use webnn_weights_runtime::{Conversion, GraphJson, SidecarKind, WeightPlan};

/// Everything the writer needs, from the steps before it.
pub(crate) struct Job<'a> {
    /// The graph as given to the builder (package-relative), recorded in the index.
    pub graph_arg: &'a Path,
    /// The graph file (joined to the package root).
    pub graph_path: &'a Path,
    /// The explicit weights and manifest paths (relative to the graph's folder).
    pub weights: Option<&'a Path>,
    pub manifest: Option<&'a Path>,
    /// The explicit lock path (relative to the graph's folder).
    pub lock: Option<&'a Path>,
    pub graph: &'a GraphJson,
    pub plan: &'a WeightPlan,
    pub layout: &'a ArtifactLayout,
    pub embedding: Embedding,
    pub writer: Option<ObjectTarget>,
    pub target: &'a Target,
    /// The package's name and version (part of the data symbol's name).
    pub package: (&'a str, &'a str),
    pub key: &'a str,
    pub out_dir: &'a Path,
}

/// What was written, for the directives.
pub(crate) struct Written {
    /// The artifact folder.
    pub dir: PathBuf,
    /// The static library written (its `-l` name and file name), if any.
    pub library: Option<(String, String)>,
    /// The `index.json` written, for the stamp that vouches for this run's artifacts.
    pub index_json: Vec<u8>,
    /// The linker script written beside the static library, if the link needs one
    /// ([`ObjectTarget::linker_script`]).
    pub linker_script: Option<PathBuf>,
}

/// The file name of the linker script some static libraries need (AArch64 ELF past
/// 4 GiB - 128 MiB).
const LINKER_SCRIPT_FILE: &str = "webnn_weights.ld";

impl Job<'_> {
    /// Writes the artifacts; refuses data past the object format's hard limit before
    /// anything is written.
    pub fn write(&self) -> Result<Written, Error> {
        let data_len = self.layout.data_len();
        let key = self.key;
        let embedding = self.embedding;
        let lib_name = artifacts::library_name(key);
        let lib_file = match self.writer {
            Some(w) => w.library_file(&lib_name),
            None => artifacts::library_file(key),
        };
        let symbol = data_symbol(key, self.target, embedding, self.package);
        let have_data = embedding != Embedding::Runtime && !self.layout.constants.is_empty();
        let dir = self.out_dir.join(ARTIFACTS_DIR).join(key);
        // Compact: the program parses it on first use.
        let graph_json = serde_json::to_vec(self.graph).map_err(|e| Error::Write {
            path: dir.join(GRAPH_FILE),
            source: io::Error::other(e),
        })?;
        // The constant table (embedding modes only; the run-time mode resolves the sidecar).
        let table = (embedding != Embedding::Runtime)
            .then(|| self.table(data_len, &dir))
            .transpose()?;
        // A static library links the table and the graph JSON after the data.
        let linked = match (&table, embedding) {
            (Some(table), Embedding::StaticLib) if have_data => {
                Some(LinkedTail::new(data_len, table, &graph_json))
            }
            _ => None,
        };
        let tail: &[u8] = linked.as_ref().map_or(&[], |l| &l.tail);
        let linked_len = data_len + tail.len() as u64;
        // Past a format's hard limit: refused before anything is written.
        let object = match self.writer {
            Some(w) if embedding == Embedding::StaticLib && have_data => Some(
                w.layout(&symbol, linked_len)
                    .map_err(|limit| Error::ObjectLimit {
                        graph: self.graph_path.to_path_buf(),
                        target: self.target.triple().to_string(),
                        format: w.format_name(),
                        needed: linked_len,
                        limit: limit.limit,
                        reason: limit.reason,
                    })?,
            ),
            _ => None,
        };
        // The symbol past the linked bytes (the macro declares it too).
        let end_symbol = (self.writer)
            .filter(|_| object.is_some())
            .map(|w| w.end_link_name(&symbol));
        fs::create_dir_all(&dir).map_err(|source| Error::Write {
            path: dir.clone(),
            source,
        })?;
        let data_file = match embedding {
            Embedding::StaticLib => lib_file.clone(),
            _ => DATA_FILE.to_string(),
        };

        // The data file first, the index last: the index is what the macro trusts.
        if have_data {
            self.write_data(&dir, &data_file, object.as_ref(), tail)?;
        }
        // Leftovers of another mode or target would only waste space.
        let msvc_file = format!("{lib_name}.lib");
        let gnu_file = artifacts::library_file(key);
        for stale in [DATA_FILE, gnu_file.as_str(), msvc_file.as_str()] {
            if !(have_data && stale == data_file) {
                remove_if_present(&dir.join(stale))?;
            }
        }
        if !have_data {
            remove_if_present(&dir.join(STAMP_FILE))?;
            // No byte is read: the lock's entries and lengths are still checked (in the
            // run-time mode the program verifies the digests when it reads the bytes).
            self.plan.reader().finish()?;
        }
        let script_path = dir.join(LINKER_SCRIPT_FILE);
        let linker_script = match (self.writer, &object) {
            (Some(w), Some(_)) => w.linker_script(linked_len),
            _ => None,
        };
        let linker_script = match linker_script {
            Some(text) => {
                write_bytes_if_changed(&script_path, text.as_bytes())?;
                Some(script_path)
            }
            None => {
                remove_if_present(&script_path)?;
                None
            }
        };

        // The files rustc embeds (`include_str!`, `include_bytes!`) where nothing links them.
        let files = linked.is_none();
        match &table {
            Some(table) if files => write_bytes_if_changed(&dir.join(TABLE_FILE), table)?,
            _ => remove_if_present(&dir.join(TABLE_FILE))?,
        }
        if files {
            write_bytes_if_changed(&dir.join(GRAPH_FILE), &graph_json)?;
        } else {
            remove_if_present(&dir.join(GRAPH_FILE))?;
        }

        let sidecar = self.plan.sidecar().map(|s| s.path.clone());
        let chosen_manifest = self.plan.sidecar().and_then(|s| match &s.kind {
            SidecarKind::Blob { manifest } => Some(manifest.clone()),
            _ => None,
        });
        let graph_dir = self.graph_path.parent().unwrap_or(Path::new(""));
        let absolute =
            |p: Option<&Path>| p.map(|p| normalize(&graph_dir.join(p)).display().to_string());
        let index = Index {
            graph: normalize(self.graph_arg).display().to_string(),
            graph_json: files.then(|| GRAPH_FILE.to_string()),
            data: have_data.then(|| IndexData {
                file: data_file.clone(),
                symbol: (embedding == Embedding::StaticLib).then(|| symbol.clone()),
                end_symbol: end_symbol.clone(),
                length: data_len,
                table: linked.as_ref().map(|l| l.table),
                graph: linked.as_ref().map(|l| l.graph),
            }),
            runtime: (embedding == Embedding::Runtime).then(|| IndexRuntime {
                graph_path: self.graph_path.display().to_string(),
                weights: absolute(self.weights),
                manifest: absolute(self.manifest),
                lock: absolute(self.lock),
            }),
            sidecar: sidecar.as_ref().map(|p| p.display().to_string()),
            manifest: chosen_manifest.as_ref().map(|p| p.display().to_string()),
            table: (table.is_some() && files).then(|| TABLE_FILE.to_string()),
            constant_count: self.layout.constants.len() as u64,
            ..Index::new(embedding.mode())
        };
        let index_json = index.to_json();
        write_bytes_if_changed(&dir.join(INDEX_FILE), &index_json)?;

        let library =
            (embedding == Embedding::StaticLib && have_data).then_some((lib_name, lib_file));
        Ok(Written {
            dir,
            library,
            index_json,
            linker_script,
        })
    }

    /// The constant table's bytes: every constant's row, with its digest where a weights
    /// lock pins it (verified while the data is written or, when the data file is not even
    /// read again, by the run that wrote it, from the same sidecar and lock files: see
    /// `input_facts`).
    fn table(&self, data_len: u64, dir: &Path) -> Result<Vec<u8>, Error> {
        let lock = self.plan.lock();
        let rows: Vec<TableRow<'_>> = self
            .layout
            .constants
            .iter()
            .map(|c| TableRow {
                sha256: lock.and_then(|l| l.entry(&c.name)).map(|e| e.sha256),
                ..c.table_row()
            })
            .collect();
        ConstantTable::encode(&rows, data_len).map_err(|e| Error::Write {
            path: dir.join(TABLE_FILE),
            source: io::Error::other(e),
        })
    }

    /// Writes the data file `name` in `dir` (the static library, or `data.bin`) unless the
    /// cheap facts it was last written from — the layout, and each stored file's size,
    /// modification and change times and inode — are the same now ([`STAMP_FILE`]); then
    /// not a byte is read.
    ///
    /// Otherwise an existing data file of the right length is updated in place: compared
    /// piece by piece with the bytes it should hold, and written only where it differs
    /// ([`InPlace`]). No disk block is allocated or freed and no unchanged page is dirtied,
    /// and a file whose bytes are already right keeps its modification time (cargo does not
    /// relink). The stamp is removed first, so a build killed half-way leaves no stamp
    /// vouching for the half-updated file: cargo reruns the build script, which compares
    /// every byte again; a failed update removes the file. Any other data file is written
    /// to a temporary file and renamed into place (the old one removed first: ext4 writes a
    /// file renamed over another back to disk at once, in the middle of the build). Build
    /// outputs are not synced to disk (cargo does not sync its own either): syncing
    /// hundreds of MiB would cost more than the rest of the build script.
    fn write_data(
        &self,
        dir: &Path,
        name: &str,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
    ) -> Result<(), Error> {
        let path = dir.join(name);
        let stamp_path = dir.join(STAMP_FILE);
        let write_err = |source| Error::Write {
            path: path.clone(),
            source,
        };
        let facts = self.input_facts(name, object, tail);
        if let Some(facts) = &facts {
            if stamp_matches(&stamp_path, facts, &path) {
                // The data was verified against the same lock file when it was written;
                // the lock's entries are checked against the plan again all the same.
                self.plan.reader().finish()?;
                return Ok(());
            }
        }
        let total = object.map_or(0, ArchiveFraming::framing_len)
            + self.layout.data_len()
            + tail.len() as u64;
        match in_place_candidate(&path, total) {
            Some(file) => {
                // The stamp goes first: a data file interrupted half-updated is never
                // trusted by a stamp (cargo reruns an unfinished build script, which
                // compares every byte again).
                remove_if_present(&stamp_path)?;
                if let Err(e) = self.update_in_place(&path, file, object, tail) {
                    // No half-updated data file stays behind a failed build.
                    let _ = fs::remove_file(&path);
                    return Err(e);
                }
            }
            None => {
                // A stamp left from before stays until replaced: its line for the data
                // file's own facts (inode, times) no longer matches once a new file is
                // installed.
                let mut temp = atomic::create_temp(&path).map_err(write_err)?;
                // Small writes (paddings, small constants) are gathered; large unconverted
                // constants still go file to file by `copy_file_range` on Linux (std's
                // `io::copy` flushes the buffer and copies past it).
                let mut out = io::BufWriter::with_capacity(FRESH_BUFFER, temp.as_file_mut());
                self.write_object(&mut out, object, tail, &path)?;
                drop(out);
                // A file of another length: removed before the rename, which then
                // replaces nothing (ext4 would write a replaced file's successor back to
                // disk at once, in the middle of the build).
                remove_if_present(&path)?;
                temp.persist(&path).map_err(write_err)?;
            }
        }
        if let (Some(facts), Ok(meta)) = (facts, fs::metadata(&path)) {
            let stamp = facts + &file_facts("output", &meta);
            // Written even when its bytes are the same: its modification time is when the
            // facts were last checked, which decides when they are settled (cargo does not
            // watch this file).
            atomic::write_file(&stamp_path, |w| w.write_all(stamp.as_bytes())).map_err(
                |source| Error::Write {
                    path: stamp_path.clone(),
                    source,
                },
            )?;
        }
        Ok(())
    }

    /// The whole data file `path` into `out`: the object's head, the constants, `tail`
    /// (the linked table and graph JSON), the object's end. A write error names `path` (a
    /// read error names the sidecar).
    fn write_object<W: Write>(
        &self,
        out: &mut W,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
        path: &Path,
    ) -> Result<(), Error> {
        let err = |source| Error::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(o) = object {
            out.write_all(&o.prefix).map_err(err)?;
        }
        // Data cut over several archive members: the bytes between them go in its stream.
        let written = match object.filter(|o| !o.gaps.is_empty()) {
            Some(o) => self.write_constants(&mut o.gapped(&mut *out), tail),
            None => self.write_constants(out, tail),
        };
        written.map_err(|e| match e {
            Error::Write { source, .. } => err(source),
            other => other,
        })?;
        if let Some(o) = object {
            out.write_all(&o.suffix).map_err(err)?;
        }
        out.flush().map_err(err)
    }

    /// Brings the existing data file `file` (of the right length) up to date by comparing
    /// it chunk by chunk with the bytes it should hold and writing only the chunks that
    /// differ. No block is allocated or freed; unchanged chunks are only read (from the
    /// page cache, after a recent build), and a file that is already right keeps its
    /// modification time.
    fn update_in_place(
        &self,
        path: &Path,
        file: File,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
    ) -> Result<(), Error> {
        // `io::copy` reads straight into a `BufWriter`'s buffer: whole chunks reach
        // `InPlace`, each compared with one read of the file and one `memcmp`.
        let mut out = io::BufWriter::with_capacity(IN_PLACE_CHUNK, InPlace::new(file));
        self.write_object(&mut out, object, tail, path)?;
        let in_place = out.get_ref();
        let (end, len) = (in_place.position, in_place.file.metadata().map(|m| m.len()));
        match len {
            Ok(len) if len == end => Ok(()),
            Ok(len) => Err(Error::Write {
                path: path.to_path_buf(),
                source: io::Error::other(format!(
                    "the data file changed length while it was updated: {len} bytes, expected {end}"
                )),
            }),
            Err(source) => Err(Error::Write {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// The cheap facts the data file is written from, as the first lines of
    /// [`STAMP_FILE`]: a digest of the layout (object head and end, and for every entry its
    /// range and the stored range, file and conversion that fill it) and of `tail` (the
    /// linked table and graph JSON), then every stored file's size, modification and change
    /// times and inode. `None` when a fact cannot be read.
    fn input_facts(
        &self,
        name: &str,
        object: Option<&ArchiveFraming>,
        tail: &[u8],
    ) -> Option<String> {
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
        // Gathered into one buffer and hashed at once, a file's path only where it changes
        // from the entry before: SHA-256 runs at about 27 MB/s in an unoptimized build
        // script, so for 20,000 constants every byte per entry costs about a millisecond.
        let planned = self.plan.constants();
        let entries = self.layout.layout.ranges();
        let mut bytes: Vec<u8> = Vec::with_capacity(entries.len() * 42 + 256);
        let mut file: Option<&Path> = None;
        for (range, &fill) in entries.iter().zip(&self.layout.fills) {
            let c = &planned[fill];
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
        digest.update(&bytes);
        digest.update(self.layout.data_len().to_le_bytes());
        let mut facts = format!(
            "{STAMP_HEADER}\ndata {name} {}\nlayout {}\n",
            self.layout.data_len(),
            artifacts::hex(&digest.finalize())
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

    /// Writes each entry of the layout at its offset (zero padding between), filled by its
    /// planned constant, pads to the data's length, then writes `tail`.
    fn write_constants<W: Write>(&self, out: &mut W, tail: &[u8]) -> Result<(), Error> {
        const ZEROS: [u8; ALIGN as usize] = [0; ALIGN as usize];
        let graph = self.graph_path;
        let io_err = |source| Error::Write {
            path: graph.to_path_buf(),
            source,
        };
        let planned = self.plan.constants();
        // One reader for the whole pass: each stored file opened once, small neighbouring
        // constants read together.
        let mut reader = self.plan.reader();
        let mut at = 0u64;
        for (range, &fill) in self.layout.layout.ranges().iter().zip(&self.layout.fills) {
            let c = &planned[fill];
            out.write_all(&ZEROS[..(range.offset - at) as usize])
                .map_err(io_err)?;
            // Writes exactly `c.length` bytes (the range's length) or fails.
            reader.copy_constant(c, out)?;
            at = range.end();
        }
        out.write_all(&ZEROS[..(self.layout.data_len() - at) as usize])
            .map_err(io_err)?;
        out.write_all(tail).map_err(io_err)?;
        // The stored files are compared with the plan once more, after the last read.
        reader.finish()?;
        Ok(())
    }
}

/// The constant table and the graph JSON as a static library links them after the data:
/// the table at the data's end, the graph JSON at the next multiple of [`DATA_ALIGN`],
/// zeros up to the one after.
struct LinkedTail {
    /// The bytes after the data.
    tail: Vec<u8>,
    /// Where the table and the graph JSON are, counted from the data's first byte.
    table: DataRange,
    graph: DataRange,
}

impl LinkedTail {
    fn new(data_len: u64, table: &[u8], graph_json: &[u8]) -> LinkedTail {
        let align = |n: usize| n.next_multiple_of(DATA_ALIGN as usize);
        let mut tail = Vec::with_capacity(align(table.len()) + align(graph_json.len()));
        tail.extend_from_slice(table);
        tail.resize(align(table.len()), 0);
        let graph_at = tail.len();
        tail.extend_from_slice(graph_json);
        tail.resize(align(tail.len()), 0);
        LinkedTail {
            tail,
            table: DataRange {
                offset: data_len,
                length: table.len() as u64,
            },
            graph: DataRange {
                offset: data_len + graph_at as u64,
                length: graph_json.len() as u64,
            },
        }
    }
}

/// The build helper's record of the cheap facts a data file was written from (the
/// layout's digest, each stored file's size, times and inode, and the data file's own),
/// so that a rerun with the same facts skips the data file without reading a byte. Private
/// to the build helper: the macro never reads it.
const STAMP_FILE: &str = "data.stamp";

/// The first line of [`STAMP_FILE`] (a new layout of the file changes it).
const STAMP_HEADER: &str = "webnn-weights data stamp 1";

/// Whether the stamp at `stamp_path` records exactly `facts` and the data file's current
/// facts, and is not racy: a stored file modified less than two seconds before the stamp
/// was written could have changed again within the file system's time granularity without
/// a visible difference, so such a stamp is not trusted (the bytes are compared instead).
fn stamp_matches(stamp_path: &Path, facts: &str, data: &Path) -> bool {
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

/// The size of the pieces an existing data file is compared and updated in.
const IN_PLACE_CHUNK: usize = 8 << 20;

/// Buffer of the writer of a fresh data file: gathers the writes of small constants and
/// paddings (a graph of thousands of constants would otherwise make a write call each).
const FRESH_BUFFER: usize = 1 << 20;

/// The existing data file at `path`, open for reading and writing, when it can be updated
/// in place: a regular file of exactly `len` bytes with no other name (a hard link
/// elsewhere would see the change). `None` sends the caller to a fresh file.
fn in_place_candidate(path: &Path, len: u64) -> Option<File> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() != len {
        return None;
    }
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::nlink(&meta) != 1 {
        return None;
    }
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .ok()?;
    // The file opened is the one examined (not replaced in between).
    (file.metadata().ok()?.len() == len).then_some(file)
}

/// A writer over an existing file that writes a piece only where the file's bytes differ
/// from it, so that an unchanged piece stays untouched (no dirty page, no write-back).
struct InPlace {
    file: File,
    /// Where the next piece goes.
    position: u64,
    /// The file's current bytes of the piece being compared.
    current: Vec<u8>,
}

impl InPlace {
    fn new(file: File) -> InPlace {
        InPlace {
            file,
            position: 0,
            current: Vec::new(),
        }
    }
}

impl Write for InPlace {
    fn write(&mut self, piece: &[u8]) -> io::Result<usize> {
        let piece = &piece[..piece.len().min(IN_PLACE_CHUNK)];
        // Read without zero-filling: the buffer's contents are overwritten by the read.
        self.current.clear();
        self.current.reserve(piece.len());
        let read = (&mut self.file)
            .take(piece.len() as u64)
            .read_to_end(&mut self.current)?;
        if self.current[..read] != *piece {
            self.file.seek(SeekFrom::Start(self.position))?;
            self.file.write_all(piece)?;
        }
        self.position += piece.len() as u64;
        Ok(piece.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn write_bytes_if_changed(dest: &Path, bytes: &[u8]) -> Result<(), Error> {
    if fs::read(dest).is_ok_and(|current| current == bytes) {
        return Ok(());
    }
    atomic::write_file(dest, |w| w.write_all(bytes)).map_err(|source| Error::Write {
        path: dest.to_path_buf(),
        source,
    })
}

fn remove_if_present(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::Write {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}
