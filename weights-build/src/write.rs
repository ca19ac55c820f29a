//! Step 3 of the pipeline: the files under `OUT_DIR/webnn-weights/<key>/`.
//!
//! The data file first (a static library through [`crate::object`], or `data.bin`), then
//! leftovers of another mode removed, `graph.json`, the constant table, and the index last:
//! the index is what the macro trusts. A file whose bytes would not change is left
//! untouched (its modification time too). Every file is written atomically; the data file
//! is not even read again when the cheap facts it was written from are unchanged (see
//! `Job::write_data`).

use crate::embedding::{data_symbol, Embedding};
use crate::layout::ArtifactLayout;
use crate::object::{Layout as ObjectLayout, ObjectTarget, ALIGN};
use crate::{Error, Target};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use webnn_weights_artifacts::{
    self as artifacts, normalize, ConstantTable, Index, IndexData, IndexRuntime, TableRow,
    ARTIFACTS_DIR, DATA_FILE, GRAPH_FILE, INDEX_FILE, TABLE_FILE,
};
use webnn_weights_runtime::{GraphJson, SidecarKind, WeightPlan};
use webnn_weights_tools::atomic;

/// Everything the writer needs, from the steps before it.
pub(crate) struct Job<'a> {
    /// The graph as given to the builder (package-relative), recorded in the index.
    pub graph_arg: &'a Path,
    /// The graph file (joined to the package root).
    pub graph_path: &'a Path,
    /// The explicit weights and manifest paths (relative to the graph's folder).
    pub weights: Option<&'a Path>,
    pub manifest: Option<&'a Path>,
    pub graph: &'a GraphJson,
    pub plan: &'a WeightPlan,
    pub layout: &'a ArtifactLayout,
    pub embedding: Embedding,
    pub writer: Option<ObjectTarget>,
    pub target: &'a Target,
    pub key: &'a str,
    pub out_dir: &'a Path,
}

/// What was written, for the directives.
pub(crate) struct Written {
    /// The artifact folder.
    pub dir: PathBuf,
    /// The static library written (its `-l` name and file name), if any.
    pub library: Option<(String, String)>,
}

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
        let symbol = data_symbol(key, self.target, embedding);
        let have_data = embedding != Embedding::Runtime && !self.layout.constants.is_empty();
        // Past a format's hard limit: refused before anything is written.
        let object = match self.writer {
            Some(w) if embedding == Embedding::StaticLib && have_data => Some(
                w.layout(&symbol, data_len)
                    .map_err(|limit| Error::ObjectLimit {
                        graph: self.graph_path.to_path_buf(),
                        target: self.target.triple().to_string(),
                        format: w.format_name(),
                        needed: data_len,
                        limit: limit.limit,
                        reason: limit.reason,
                    })?,
            ),
            _ => None,
        };
        let dir = self.out_dir.join(ARTIFACTS_DIR).join(key);
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
            self.write_data(&dir, &data_file, object.as_ref())?;
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
        }

        // Compact: rustc embeds it (include_str!) and the program parses it on first use.
        let graph_json = serde_json::to_vec(self.graph).map_err(|e| Error::Write {
            path: dir.join(GRAPH_FILE),
            source: io::Error::other(e),
        })?;
        write_bytes_if_changed(&dir.join(GRAPH_FILE), &graph_json)?;

        // The constant table (embedding modes only; the run-time mode resolves the sidecar).
        let table_path = dir.join(TABLE_FILE);
        if embedding != Embedding::Runtime {
            let rows: Vec<TableRow<'_>> = self
                .layout
                .constants
                .iter()
                .map(|c| c.table_row())
                .collect();
            let table = ConstantTable::encode(&rows, data_len).map_err(|e| Error::Write {
                path: table_path.clone(),
                source: io::Error::other(e),
            })?;
            write_bytes_if_changed(&table_path, &table)?;
        } else {
            remove_if_present(&table_path)?;
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
            data: have_data.then(|| IndexData {
                file: data_file.clone(),
                symbol: (embedding == Embedding::StaticLib).then(|| symbol.clone()),
                length: data_len,
            }),
            runtime: (embedding == Embedding::Runtime).then(|| IndexRuntime {
                graph_path: self.graph_path.display().to_string(),
                weights: absolute(self.weights),
                manifest: absolute(self.manifest),
            }),
            sidecar: sidecar.as_ref().map(|p| p.display().to_string()),
            manifest: chosen_manifest.as_ref().map(|p| p.display().to_string()),
            table: (embedding != Embedding::Runtime).then(|| TABLE_FILE.to_string()),
            constant_count: self.layout.constants.len() as u64,
            ..Index::new(embedding.mode())
        };
        let index_json = index.to_json().map_err(|e| Error::Write {
            path: dir.join(INDEX_FILE),
            source: io::Error::other(e),
        })?;
        write_bytes_if_changed(&dir.join(INDEX_FILE), &index_json)?;

        let library =
            (embedding == Embedding::StaticLib && have_data).then_some((lib_name, lib_file));
        Ok(Written { dir, library })
    }

    /// Writes the data file `name` in `dir` (the static library, or `data.bin`) unless the
    /// cheap facts it was last written from — the layout, and each stored file's size,
    /// modification and change times and inode — are the same now ([`STAMP_FILE`]); then
    /// not a byte is read.
    ///
    /// Otherwise the file is written to a temporary file, compared with the current one
    /// (stopping at the first difference) and renamed over it only when the bytes differ,
    /// so an unchanged file keeps its modification time (cargo does not relink). A killed
    /// or failed build leaves the old file or the new one, never a mix. Build outputs are
    /// not synced to disk (cargo does not sync its own either): syncing hundreds of MiB
    /// would cost more than the rest of the build script.
    fn write_data(
        &self,
        dir: &Path,
        name: &str,
        object: Option<&ObjectLayout>,
    ) -> Result<(), Error> {
        let path = dir.join(name);
        let stamp_path = dir.join(STAMP_FILE);
        let write_err = |source| Error::Write {
            path: path.clone(),
            source,
        };
        let facts = self.input_facts(name, object);
        if let Some(facts) = &facts {
            if stamp_matches(&stamp_path, facts, &path) {
                return Ok(());
            }
        }
        // A stamp left from before stays until replaced: its line for the data file's own
        // facts (inode, times) no longer matches once a new file is installed.
        let mut temp = atomic::create_temp(&path).map_err(write_err)?;
        let file = temp.as_file_mut();
        if let Some(o) = object {
            file.write_all(&o.prefix).map_err(write_err)?;
        }
        // A write error names the data file (a read error names the sidecar).
        self.write_constants(file).map_err(|e| match e {
            Error::Write { source, .. } => write_err(source),
            other => other,
        })?;
        if let Some(o) = object {
            file.write_all(&o.suffix).map_err(write_err)?;
        }
        file.flush().map_err(write_err)?;
        if !same_contents(temp.path(), &path).map_err(write_err)? {
            temp.persist(&path).map_err(|e| write_err(e.error))?;
        } // else the temporary file is removed on drop
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

    /// The cheap facts the data file is written from, as the first lines of
    /// [`STAMP_FILE`]: a digest of the layout (object head and tail, and for every entry its
    /// range and the stored range, file and conversion that fill it), then every stored
    /// file's size, modification and change times and inode. `None` when a fact cannot be
    /// read.
    fn input_facts(&self, name: &str, object: Option<&ObjectLayout>) -> Option<String> {
        use sha2::{Digest, Sha256};
        let mut digest = Sha256::new();
        if let Some(o) = object {
            digest.update((o.prefix.len() as u64).to_le_bytes());
            digest.update(&o.prefix);
            digest.update((o.suffix.len() as u64).to_le_bytes());
            digest.update(&o.suffix);
        }
        let planned = self.plan.constants();
        for (range, &fill) in self.layout.layout.ranges().iter().zip(&self.layout.fills) {
            let c = &planned[fill];
            let file = c.file.display().to_string();
            digest.update((file.len() as u64).to_le_bytes());
            digest.update(file.as_bytes());
            for n in [
                c.offset,
                c.stored_length,
                c.length,
                range.offset,
                range.length,
            ] {
                digest.update(n.to_le_bytes());
            }
            digest.update(format!("{:?}", c.conversion).as_bytes());
        }
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
        Some(facts)
    }

    /// Writes each entry of the layout at its offset (zero padding between), filled by its
    /// planned constant, then pads to the data's length.
    fn write_constants<W: Write>(&self, out: &mut W) -> Result<(), Error> {
        const ZEROS: [u8; ALIGN as usize] = [0; ALIGN as usize];
        let graph = self.graph_path;
        let io_err = |source| Error::Write {
            path: graph.to_path_buf(),
            source,
        };
        let planned = self.plan.constants();
        let mut at = 0u64;
        for (range, &fill) in self.layout.layout.ranges().iter().zip(&self.layout.fills) {
            let c = &planned[fill];
            out.write_all(&ZEROS[..(range.offset - at) as usize])
                .map_err(io_err)?;
            let copied = self.plan.copy_constant(c, out)?;
            if copied != range.length {
                return Err(Error::ShortCopy {
                    graph: graph.to_path_buf(),
                    sidecar: self
                        .plan
                        .sidecar()
                        .map(|s| s.path.clone())
                        .unwrap_or_default(),
                    constant: c.name.clone(),
                    reference: c.reference.clone(),
                    expected: range.length,
                    found: copied,
                });
            }
            at = range.end();
        }
        out.write_all(&ZEROS[..(self.layout.data_len() - at) as usize])
            .map_err(io_err)
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

fn write_bytes_if_changed(dest: &Path, bytes: &[u8]) -> Result<(), Error> {
    if fs::read(dest).is_ok_and(|current| current == bytes) {
        return Ok(());
    }
    atomic::write_file(dest, |w| w.write_all(bytes)).map_err(|source| Error::Write {
        path: dest.to_path_buf(),
        source,
    })
}

fn same_contents(a: &Path, b: &Path) -> io::Result<bool> {
    let (Ok(mut fa), Ok(mut fb)) = (File::open(a), File::open(b)) else {
        return Ok(false);
    };
    if fa.metadata()?.len() != fb.metadata()?.len() {
        return Ok(false);
    }
    let mut ba = vec![0u8; 1 << 20];
    let mut bb = vec![0u8; 1 << 20];
    loop {
        let n = read_full(&mut fa, &mut ba)?;
        let m = read_full(&mut fb, &mut bb)?;
        if n != m || ba[..n] != bb[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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
