//! Step 3 of the pipeline: the files under `OUT_DIR/webnn-weights/<key>/`.
//!
//! In this order ([`Job::write`]): the data file first (a static library through
//! [`crate::object`], or `data.bin`), then leftovers of another mode removed, the linker
//! script (when the static library needs one), the constant table and `graph.json`, and the
//! index last: the index is what the macro trusts. A static library links the table and the
//! graph JSON after the data (`tail`) instead of the two files, so that rustc never reads
//! them. A file whose bytes would not change is left untouched (its modification time too).
//! Every small file is written atomically; the data file (`data`) is updated in place when
//! its length stays (`in_place`), and is not even read again when the cheap facts it was
//! written from are unchanged (`stamp`; see `Job::write_data`).

mod data;
mod in_place;
mod stamp;
mod tail;

use crate::embedding::{data_symbol, Embedding};
use crate::layout::ArtifactLayout;
use crate::object::{ArchiveFraming, ObjectTarget};
use crate::{Error, Target};
use stamp::STAMP_FILE;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tail::LinkedTail;
use webnn_weights_artifacts::{
    self as artifacts, normalize, ConstantTable, Index, IndexData, IndexRuntime, TableRow,
    ARTIFACTS_DIR, DATA_FILE, GRAPH_FILE, INDEX_FILE, TABLE_FILE,
};
use webnn_weights_atomic as atomic;
use webnn_weights_runtime::{GraphJson, SidecarKind, WeightPlan};

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
    pub layout: &'a ArtifactLayout<'a>,
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
    /// How long the pass that read the constants, verified them against the weights lock
    /// and wrote the data file took: `None` without a lock, or when nothing was read (the
    /// stamp vouched for the data file, or there is none).
    pub lock_pass: Option<Duration>,
}

/// The file name of the linker script some static libraries need (AArch64 ELF past
/// 4 GiB - 128 MiB).
const LINKER_SCRIPT_FILE: &str = "webnn_weights.ld";

/// What [`Job::write`] writes, all computed before any file is touched.
struct Contents {
    /// The artifact folder.
    dir: PathBuf,
    /// The static library's `-l` name and file name.
    lib_name: String,
    lib_file: String,
    /// The data symbol.
    symbol: String,
    /// Whether there is a data file (an embedding mode, and at least one constant).
    have_data: bool,
    /// The data file's name: the static library, or `data.bin`.
    data_file: String,
    /// The graph as compact GraphJson.
    graph_json: Vec<u8>,
    /// The constant table (embedding modes only; the run-time mode resolves the sidecar).
    table: Option<Vec<u8>>,
    /// The table and graph JSON a static library links after the data.
    linked: Option<LinkedTail>,
    /// The data's length with the linked tail.
    linked_len: u64,
    /// The static library's object around the data.
    object: Option<ArchiveFraming>,
    /// The symbol past the linked bytes (the macro declares it too).
    end_symbol: Option<String>,
}

impl Contents {
    /// The bytes linked after the data (none without a static library).
    fn tail(&self) -> &[u8] {
        self.linked.as_ref().map_or(&[], |l| &l.tail)
    }

    /// Whether rustc embeds `graph.json` and the table (`include_str!`, `include_bytes!`):
    /// where nothing links them.
    fn files(&self) -> bool {
        self.linked.is_none()
    }
}

impl Job<'_> {
    /// Writes the artifacts; refuses data past the object format's hard limit before
    /// anything is written.
    pub fn write(&self) -> Result<Written, Error> {
        let contents = self.contents()?;
        fs::create_dir_all(&contents.dir).map_err(|source| Error::Write {
            path: contents.dir.clone(),
            source,
        })?;
        // The data file first, the index last: the index is what the macro trusts.
        let mut lock_pass = None;
        if contents.have_data {
            let object = contents.object.as_ref();
            let read =
                self.write_data(&contents.dir, &contents.data_file, object, contents.tail())?;
            lock_pass = read.filter(|_| self.plan.lock().is_some());
        }
        self.remove_leftovers(&contents)?;
        if !contents.have_data {
            // No byte is read: the lock's entries and lengths are still checked (in the
            // run-time mode the program verifies the digests when it reads the bytes).
            self.plan.reader().finish()?;
        }
        let linker_script = self.write_linker_script(&contents)?;
        write_small_files(&contents)?;
        let index_json = self.write_index(&contents)?;
        let library = (self.embedding == Embedding::StaticLib && contents.have_data)
            .then_some((contents.lib_name, contents.lib_file));
        Ok(Written {
            dir: contents.dir,
            library,
            index_json,
            linker_script,
            lock_pass,
        })
    }

    /// Names, the graph JSON, the table, the linked tail and the object layout: everything
    /// written, refused past the object format's hard limit.
    fn contents(&self) -> Result<Contents, Error> {
        let (key, embedding) = (self.key, self.embedding);
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
        let data_len = self.layout.data_len();
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
        let linked_len = data_len + linked.as_ref().map_or(0, |l| l.tail.len() as u64);
        let object = self.object_layout(&symbol, linked_len, have_data)?;
        let end_symbol = (self.writer)
            .filter(|_| object.is_some())
            .map(|w| w.end_link_name(&symbol));
        let data_file = match embedding {
            Embedding::StaticLib => lib_file.clone(),
            _ => DATA_FILE.to_string(),
        };
        Ok(Contents {
            dir,
            lib_name,
            lib_file,
            symbol,
            have_data,
            data_file,
            graph_json,
            table,
            linked,
            linked_len,
            object,
            end_symbol,
        })
    }

    /// The static library's object around `linked_len` bytes of data (with the tail), if
    /// there is one; past the format's hard limit, refused before anything is written.
    fn object_layout(
        &self,
        symbol: &str,
        linked_len: u64,
        have_data: bool,
    ) -> Result<Option<ArchiveFraming>, Error> {
        match self.writer {
            Some(w) if self.embedding == Embedding::StaticLib && have_data => w
                .archive_framing(symbol, linked_len)
                .map(Some)
                .map_err(|limit| Error::ObjectLimit {
                    graph: self.graph_path.to_path_buf(),
                    target: self.target.triple().to_string(),
                    format: w.format_name(),
                    needed: linked_len,
                    limit: limit.limit,
                    reason: limit.reason,
                }),
            _ => Ok(None),
        }
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

    /// Removes leftovers of another mode or target, which would only waste space: the data
    /// files this run does not write, and without a data file its stamp.
    fn remove_leftovers(&self, contents: &Contents) -> Result<(), Error> {
        let dir = &contents.dir;
        let msvc_file = format!("{}.lib", contents.lib_name);
        let gnu_file = artifacts::library_file(self.key);
        for stale in [DATA_FILE, gnu_file.as_str(), msvc_file.as_str()] {
            if !(contents.have_data && stale == contents.data_file) {
                remove_if_present(&dir.join(stale))?;
            }
        }
        if !contents.have_data {
            remove_if_present(&dir.join(STAMP_FILE))?;
        }
        Ok(())
    }

    /// Writes the linker script the static library needs, if any
    /// ([`ObjectTarget::linker_script`]), or removes one left from before.
    fn write_linker_script(&self, contents: &Contents) -> Result<Option<PathBuf>, Error> {
        let script_path = contents.dir.join(LINKER_SCRIPT_FILE);
        let linker_script = match (self.writer, &contents.object) {
            (Some(w), Some(_)) => w.linker_script(contents.linked_len),
            _ => None,
        };
        match linker_script {
            Some(text) => {
                write_bytes_if_changed(&script_path, text.as_bytes())?;
                Ok(Some(script_path))
            }
            None => {
                remove_if_present(&script_path)?;
                Ok(None)
            }
        }
    }

    /// Writes `index.json`, last, and returns its bytes.
    fn write_index(&self, contents: &Contents) -> Result<Vec<u8>, Error> {
        let embedding = self.embedding;
        let files = contents.files();
        let sidecar = self.plan.sidecar();
        let chosen_manifest = sidecar.and_then(|s| match &s.kind {
            SidecarKind::Blob { manifest } => Some(manifest),
            _ => None,
        });
        let graph_dir = self.graph_path.parent().unwrap_or(Path::new(""));
        let absolute =
            |p: Option<&Path>| p.map(|p| normalize(&graph_dir.join(p)).display().to_string());
        let linked = contents.linked.as_ref();
        let index = Index {
            graph: normalize(self.graph_arg).display().to_string(),
            graph_json: files.then(|| GRAPH_FILE.to_string()),
            data: contents.have_data.then(|| IndexData {
                file: contents.data_file.clone(),
                symbol: (embedding == Embedding::StaticLib).then(|| contents.symbol.clone()),
                end_symbol: contents.end_symbol.clone(),
                length: self.layout.data_len(),
                table: linked.map(|l| l.table),
                graph: linked.map(|l| l.graph),
            }),
            runtime: (embedding == Embedding::Runtime).then(|| IndexRuntime {
                graph_path: self.graph_path.display().to_string(),
                weights: absolute(self.weights),
                manifest: absolute(self.manifest),
                lock: absolute(self.lock),
            }),
            sidecar: sidecar.map(|s| s.path.display().to_string()),
            manifest: chosen_manifest.map(|p| p.display().to_string()),
            table: (contents.table.is_some() && files).then(|| TABLE_FILE.to_string()),
            constant_count: self.layout.constants.len() as u64,
            ..Index::new(embedding.mode())
        };
        let index_json = index.to_json();
        write_bytes_if_changed(&contents.dir.join(INDEX_FILE), &index_json)?;
        Ok(index_json)
    }
}

/// Writes the files rustc embeds (`include_str!`, `include_bytes!`) where nothing links
/// them, the constant table then `graph.json`, or removes them where the static library
/// links them (or, for the table, in the run-time mode).
fn write_small_files(contents: &Contents) -> Result<(), Error> {
    let dir = &contents.dir;
    let files = contents.files();
    match &contents.table {
        Some(table) if files => write_bytes_if_changed(&dir.join(TABLE_FILE), table)?,
        _ => remove_if_present(&dir.join(TABLE_FILE))?,
    }
    if files {
        write_bytes_if_changed(&dir.join(GRAPH_FILE), &contents.graph_json)
    } else {
        remove_if_present(&dir.join(GRAPH_FILE))
    }
}

/// Writes `bytes` to `dest` atomically, unless `dest` already holds exactly them (then its
/// modification time stays too).
fn write_bytes_if_changed(dest: &Path, bytes: &[u8]) -> Result<(), Error> {
    if fs::read(dest).is_ok_and(|current| current == bytes) {
        return Ok(());
    }
    atomic::write_file(dest, |w| w.write_all(bytes)).map_err(|source| Error::Write {
        path: dest.to_path_buf(),
        source,
    })
}

/// Removes the file at `path`; one that is not there is no error.
pub(crate) fn remove_if_present(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::Write {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}
