//! Step 3 of the pipeline: the files under `OUT_DIR/webnn-weights/<key>/`.
//!
//! The data file first (a static library through [`crate::object`], or `data.bin`), then
//! leftovers of another mode removed, `graph.json`, the constant table, and the index last:
//! the index is what the macro trusts. Every file is written atomically, and a file whose
//! bytes would not change is left untouched (its modification time too).

use crate::embedding::{data_symbol, Embedding};
use crate::layout::ArtifactLayout;
use crate::object::{ObjectTarget, ALIGN};
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
            write_if_changed(&dir.join(&data_file), |file| {
                let io_err = |source| Error::Write {
                    path: PathBuf::new(),
                    source,
                };
                if let Some(object) = &object {
                    file.write_all(&object.prefix).map_err(io_err)?;
                }
                self.write_constants(file)?;
                if let Some(object) = &object {
                    file.write_all(&object.suffix).map_err(io_err)?;
                }
                Ok(())
            })?;
        }
        // Leftovers of another mode or target would only waste space.
        let msvc_file = format!("{lib_name}.lib");
        let gnu_file = artifacts::library_file(key);
        for stale in [DATA_FILE, gnu_file.as_str(), msvc_file.as_str()] {
            if !(have_data && stale == data_file) {
                remove_if_present(&dir.join(stale))?;
            }
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

    /// Writes each entry of the layout at its offset (zero padding between), filled by its
    /// planned constant, then pads to the data's length.
    fn write_constants(&self, file: &mut File) -> Result<(), Error> {
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
            file.write_all(&ZEROS[..(range.offset - at) as usize])
                .map_err(io_err)?;
            let copied = self.plan.copy_constant(c, file)?;
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
        file.write_all(&ZEROS[..(self.layout.data_len() - at) as usize])
            .map_err(io_err)
    }
}

/// Writes `dest` through a temporary file; installs it only when its bytes differ from the
/// current file, so an unchanged artifact keeps its modification time.
fn write_if_changed(
    dest: &Path,
    fill: impl FnOnce(&mut File) -> Result<(), Error>,
) -> Result<(), Error> {
    let write_err = |source| Error::Write {
        path: dest.to_path_buf(),
        source,
    };
    let mut temp = atomic::create_temp(dest).map_err(write_err)?;
    fill(temp.as_file_mut()).map_err(|e| match e {
        Error::Write { source, .. } => Error::Write {
            path: dest.to_path_buf(),
            source,
        },
        other => other,
    })?;
    temp.as_file_mut().flush().map_err(write_err)?;
    if same_contents(temp.path(), dest).map_err(write_err)? {
        return Ok(()); // the temporary file is removed on drop
    }
    let file = temp.reopen().map_err(write_err)?;
    atomic::install(temp, file, dest).map_err(write_err)
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
