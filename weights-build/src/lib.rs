//! # webnn-weights-build
//!
//! The build-script half of build-time embedding. In `build.rs`:
//!
//! ```no_run
//! // fn main() in build.rs:
//! // Resolves models/model.webnn's sidecar with the format's rules, checks every
//! // constant, writes the artifacts under OUT_DIR and prints the rebuild directives.
//! // On error it prints a readable diagnostic and fails the build.
//! webnn_weights_build::compile_or_exit("models/model.webnn");
//! ```
//!
//! and in the crate:
//!
//! ```ignore
//! static MODEL: webnn_weights_runtime::EmbeddedGraph =
//!     webnn_weights_runtime::include_webnn_graph!("models/model.webnn");
//! ```
//!
//! Paths given to [`compile`] / [`Builder::new`] are relative to the package root
//! (`CARGO_MANIFEST_DIR`); [`Builder::weights`] and [`Builder::manifest`] are relative to the
//! graph file, as in the format.
//!
//! ## Artifacts
//!
//! Everything goes to `OUT_DIR/webnn-weights/<key>/`, where `<key>` is the graph's file
//! stem and 16 hex digits of a SHA-256 of its package-relative path. The key, the file names
//! and the `index.json` schema are defined once, in `webnn-weights-artifacts`, which this
//! crate writes through and the macro reads through:
//!
//! | file | content |
//! |---|---|
//! | `index.json` | what the macro reads first ([`webnn_weights_artifacts::Index`], format `webnn-weights-artifacts`, version [`ARTIFACT_FORMAT_VERSION`]): mode, data file and symbol, the table file and the constant count |
//! | `constants.bin` | the constant table ([`webnn_weights_artifacts::ConstantTable`]): one binary entry per constant (name, reference, data type, shape, offset, length), embedded by the macro with one `include_bytes!` |
//! | `graph.json` | the graph as GraphJson, `@weights` references kept |
//! | `libwebnn_weights_<key>.a` (`webnn_weights_<key>.lib` for MSVC) | static-library path: one ELF, Mach-O or COFF object with every constant in a 64-byte aligned section, for the [`Target`] cargo describes (docs/embedding.md, "Platforms") |
//! | `data.bin` | portable path: the same bytes for an aligned `include_bytes!` |
//!
//! Every constant starts at a multiple of 64 bytes; only the bytes the graph selects are
//! written, BF16 widened to float32. Files are written atomically, and a file whose bytes
//! would not change is left untouched (its modification time too). See [`Embedding`] for
//! which targets get which data file.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod object;
mod target;

pub use target::{Endian, ObjectFormat, Target};

use object::{ObjectTarget, ALIGN};
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use webnn_weights_artifacts::{
    self as artifacts, artifact_key, normalize, ConstantTable, Index, IndexData, IndexRuntime,
    Layout as DataLayout, Mode, TableRow, ARTIFACTS_DIR, DATA_FILE, GRAPH_FILE, INDEX_FILE,
    TABLE_FILE,
};
use webnn_weights_runtime::{
    plan_external_weights, read_graph_file, DataType, ResolveError, SidecarKind,
};
use webnn_weights_tools::atomic;

/// The environment variable that switches embedding off (`0`, `false`, `off`, `no`) or forces
/// the portable path (`include-bytes`) while building.
pub const EMBED_ENV: &str = "WEBNN_WEIGHTS_EMBED";

/// The version of `index.json` this crate writes (the macro checks it); the same as
/// `webnn_weights_artifacts::INDEX_VERSION`.
pub const ARTIFACT_FORMAT_VERSION: u32 = artifacts::INDEX_VERSION;

/// How the constants' bytes reach the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// A static library with an object file written by the build script, linked with
    /// `cargo:rustc-link-lib=static:-bundle=…`: rustc never sees the bytes. For x86-64 and
    /// AArch64 on ELF (Linux, Android, the BSDs, illumos, Fuchsia), macOS (Mach-O) and
    /// Windows (COFF: `x86_64-pc-windows-gnu`, `x86_64-pc-windows-msvc`,
    /// `aarch64-pc-windows-msvc`); see docs/embedding.md, "Platforms".
    StaticLib,
    /// A 64-byte aligned `include_bytes!` of `data.bin`: works on every target, but rustc
    /// carries the bytes (slow and memory-hungry above a few hundred MiB, fails above about
    /// 1 GiB per crate).
    IncludeBytes,
    /// Nothing embedded: the program resolves the original sidecar on first use, with the
    /// same checks (fast builds of large models during development).
    Runtime,
}

impl Embedding {
    /// The index's `mode` for this embedding.
    ///
    /// ```
    /// use webnn_weights_build::Embedding;
    /// assert_eq!(Embedding::IncludeBytes.mode().as_str(), "include-bytes");
    /// ```
    pub fn mode(self) -> Mode {
        match self {
            Embedding::StaticLib => Mode::StaticLib,
            Embedding::IncludeBytes => Mode::IncludeBytes,
            Embedding::Runtime => Mode::Runtime,
        }
    }
}

impl From<ResolveError> for Error {
    fn from(err: ResolveError) -> Error {
        Error::Resolve(Box::new(err))
    }
}

/// Why a graph could not be prepared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A variable that cargo sets for build scripts is missing.
    #[error("environment variable {0} is not set: webnn-weights-build runs inside a build script (build.rs), where cargo sets it")]
    MissingEnv(&'static str),
    /// The graph file could not be read or parsed.
    #[error(transparent)]
    Graph(#[from] webnn_weights_runtime::Error),
    /// The graph's weights do not resolve (names the file, constant, expected and found).
    #[error(transparent)]
    Resolve(Box<ResolveError>),
    /// An artifact could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The artifact.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The sidecar provided a different number of bytes than planned.
    #[error("constant `{constant}` (@weights(\"{reference}\")) of {}: expected {expected} bytes from {}, found {found}; the sidecar changed while it was read: rebuild", graph.display(), sidecar.display())]
    ShortCopy {
        /// The graph file.
        graph: PathBuf,
        /// The sidecar.
        sidecar: PathBuf,
        /// The constant.
        constant: String,
        /// Its reference.
        reference: String,
        /// Planned length.
        expected: u64,
        /// Copied length.
        found: u64,
    },
    /// The constants do not fit this target's address space.
    #[error("graph {}: the constants need {needed} bytes, more than a {pointer_width}-bit target can address", graph.display())]
    TooLarge {
        /// The graph file.
        graph: PathBuf,
        /// Total size.
        needed: u64,
        /// The target's pointer width.
        pointer_width: u32,
    },
    /// [`Embedding::StaticLib`] was requested for a target it does not support.
    #[error("static-library embedding does not support target {0}; use Embedding::IncludeBytes or the default")]
    UnsupportedTarget(String),
    /// The constants are past a hard limit of the target's object format; detected before
    /// anything is written.
    #[error("graph {}: the constants need {needed} bytes, but a {format} static library for {target} holds at most {limit} bytes ({reason}); fix: load the weights at run time (`Builder::embed(false)` or WEBNN_WEIGHTS_EMBED=0), or split the constants over several graphs", graph.display())]
    ObjectLimit {
        /// The graph file.
        graph: PathBuf,
        /// The target triple.
        target: String,
        /// The object format (`ELF`, `Mach-O`, `COFF`).
        format: &'static str,
        /// Total size of the data.
        needed: u64,
        /// The largest size the format takes.
        limit: u64,
        /// Which field or tool sets the limit.
        reason: &'static str,
    },
}

/// The build-script helper: prepares one graph for `include_webnn_graph!`.
///
/// ```no_run
/// // build.rs
/// webnn_weights_build::Builder::new("models/model.webnn")
///     .weights("weights/model.weights")      // relative to the graph's folder
///     .manifest("weights/model.manifest.json")
///     .compile_or_exit();
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    graph: PathBuf,
    weights: Option<PathBuf>,
    manifest: Option<PathBuf>,
    embed: bool,
    embedding: Option<Embedding>,
    out_dir: Option<PathBuf>,
    manifest_dir: Option<PathBuf>,
    emit: bool,
    target: Option<Target>,
}

impl Builder {
    /// A builder for the graph at `graph`, relative to the package root.
    pub fn new(graph: impl AsRef<Path>) -> Builder {
        Builder {
            graph: graph.as_ref().to_path_buf(),
            weights: None,
            manifest: None,
            embed: true,
            embedding: None,
            out_dir: None,
            manifest_dir: None,
            emit: true,
            target: None,
        }
    }

    /// An explicit sidecar (SafeTensors archive or `.weights` blob), relative to the graph's
    /// folder. Without it, discovery applies.
    pub fn weights(mut self, path: impl AsRef<Path>) -> Builder {
        self.weights = Some(path.as_ref().to_path_buf());
        self
    }

    /// An explicit manifest for a `.weights` blob, relative to the graph's folder.
    pub fn manifest(mut self, path: impl AsRef<Path>) -> Builder {
        self.manifest = Some(path.as_ref().to_path_buf());
        self
    }

    /// `false`: do not embed the weights; the program resolves the sidecar on first use
    /// ([`Embedding::Runtime`]). The environment variable `WEBNN_WEIGHTS_EMBED=0` does the
    /// same without editing build.rs.
    pub fn embed(mut self, embed: bool) -> Builder {
        self.embed = embed;
        self
    }

    /// Forces one embedding path instead of the target's default
    /// ([`Embedding::StaticLib`] where supported, else [`Embedding::IncludeBytes`]).
    /// `WEBNN_WEIGHTS_EMBED=0` still wins.
    pub fn embedding(mut self, embedding: Embedding) -> Builder {
        self.embedding = Some(embedding);
        self
    }

    /// The output folder; defaults to the `OUT_DIR` cargo gives build scripts.
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Builder {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The package root relative paths start from; defaults to `CARGO_MANIFEST_DIR`.
    pub fn package_dir(mut self, dir: impl AsRef<Path>) -> Builder {
        self.manifest_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The target to write artifacts for, instead of the one cargo's `CARGO_CFG_TARGET_*`
    /// variables describe ([`Target::from_env`], read once per [`Builder::compile`]).
    ///
    /// Setting those variables (and `OUT_DIR`, `CARGO_MANIFEST_DIR`) as cargo would is the
    /// other supported way to drive the builder for a foreign target.
    ///
    /// ```
    /// use webnn_weights_build::{Builder, Target};
    /// let windows = Target::from_vars(|name| match name {
    ///     "TARGET" => Some("x86_64-pc-windows-msvc".into()),
    ///     "CARGO_CFG_TARGET_OS" => Some("windows".into()),
    ///     "CARGO_CFG_TARGET_ARCH" => Some("x86_64".into()),
    ///     "CARGO_CFG_TARGET_ENV" => Some("msvc".into()),
    ///     _ => None,
    /// });
    /// let builder = Builder::new("models/model.webnn").target(windows);
    /// # let _ = builder;
    /// ```
    pub fn target(mut self, target: Target) -> Builder {
        self.target = Some(target);
        self
    }

    /// Whether to print `cargo:` directives on stdout (default `true`).
    pub fn emit_directives(mut self, emit: bool) -> Builder {
        self.emit = emit;
        self
    }

    /// Resolves the graph and writes its artifacts; prints the cargo directives (also on
    /// error, so that fixing the input reruns the build script).
    pub fn compile(&self) -> Result<CompiledGraph, Error> {
        let mut directives = vec![format!("cargo:rerun-if-env-changed={EMBED_ENV}")];
        let result = self.compile_inner(&mut directives);
        if self.emit {
            let stdout = io::stdout();
            let mut lock = stdout.lock();
            for line in &directives {
                // A closed stdout cannot be reported anywhere better than the result.
                let _ = writeln!(lock, "{line}");
            }
        }
        result.map(|mut compiled| {
            compiled.directives = directives;
            compiled
        })
    }

    /// [`Builder::compile`], and on error prints a diagnostic on stderr and exits the build
    /// script with status 1 (no panic, no backtrace).
    pub fn compile_or_exit(&self) -> CompiledGraph {
        match self.compile() {
            Ok(compiled) => compiled,
            Err(err) => {
                eprintln!("{}", Diagnostic::new(&self.graph, &err));
                std::process::exit(1);
            }
        }
    }

    fn env_path(value: &Option<PathBuf>, var: &'static str) -> Result<PathBuf, Error> {
        match value {
            Some(path) => Ok(path.clone()),
            None => std::env::var_os(var)
                .map(PathBuf::from)
                .ok_or(Error::MissingEnv(var)),
        }
    }

    fn choose_embedding(
        &self,
        target: &Target,
    ) -> Result<(Embedding, Option<ObjectTarget>), Error> {
        let var = std::env::var(EMBED_ENV).unwrap_or_default();
        let var = var.trim().to_ascii_lowercase();
        let off = matches!(var.as_str(), "0" | "false" | "off" | "no");
        let writer = ObjectTarget::for_target(target);
        if !self.embed || off {
            return Ok((Embedding::Runtime, None));
        }
        let forced = if var == "include-bytes" {
            Some(Embedding::IncludeBytes)
        } else {
            self.embedding
        };
        match forced {
            Some(Embedding::Runtime) => Ok((Embedding::Runtime, None)),
            Some(Embedding::IncludeBytes) => Ok((Embedding::IncludeBytes, None)),
            Some(Embedding::StaticLib) => match writer {
                Some(w) => Ok((Embedding::StaticLib, Some(w))),
                None => Err(Error::UnsupportedTarget(target.triple().to_string())),
            },
            None => Ok(match writer {
                Some(w) => (Embedding::StaticLib, Some(w)),
                None => (Embedding::IncludeBytes, None),
            }),
        }
    }

    fn compile_inner(&self, directives: &mut Vec<String>) -> Result<CompiledGraph, Error> {
        let package_dir = Self::env_path(&self.manifest_dir, "CARGO_MANIFEST_DIR")?;
        let out_dir = Self::env_path(&self.out_dir, "OUT_DIR")?;
        let key = artifact_key(&package_dir, &self.graph);
        let graph_path = normalize(&package_dir.join(&self.graph));
        directives.push(format!("cargo:rerun-if-changed={}", graph_path.display()));

        let graph = read_graph_file(&graph_path)?;
        let weights = self.weights.as_deref();
        let manifest = self.manifest.as_deref();
        // A failed build script always reruns, so only success needs the watch list.
        let plan = plan_external_weights(&graph, &graph_path, weights, manifest)?;
        // What discovery examined, then the files holding the bytes (for a sharded archive,
        // the shards that hold a requested constant; the index is the chosen sidecar).
        let mut watched = plan.watched_paths();
        watched.extend(plan.files().iter().map(|f| f.path().to_path_buf()));
        watch(&watched, &out_dir, directives);
        let target = self.target.clone().unwrap_or_else(Target::from_env);
        let (embedding, writer) = self.choose_embedding(&target)?;

        // Layout (the contract's, shared with the runtime): one aligned range per constant.
        let layout =
            DataLayout::of_lengths(plan.constants().iter().map(|c| c.length)).map_err(|_| {
                Error::TooLarge {
                    graph: graph_path.clone(),
                    needed: u64::MAX,
                    pointer_width: 64,
                }
            })?;
        let constants: Vec<ArtifactConstant> = plan
            .constants()
            .iter()
            .zip(layout.ranges())
            .map(|(c, range)| ArtifactConstant {
                name: c.name.clone(),
                reference: c.reference.clone(),
                data_type: c.data_type,
                shape: c.shape.clone(),
                offset: range.offset,
                length: range.length,
            })
            .collect();
        let data_len = layout.data_len();
        let pointer_width = target.pointer_width();
        if embedding != Embedding::Runtime
            && pointer_width < 64
            && data_len > (1u64 << (pointer_width - 1))
        {
            return Err(Error::TooLarge {
                graph: graph_path,
                needed: data_len,
                pointer_width,
            });
        }

        let lib_name = artifacts::library_name(&key);
        let lib_file = match writer {
            Some(w) => w.library_file(&lib_name),
            None => artifacts::library_file(&key),
        };
        let symbol = data_symbol(&key, &target, embedding);
        // Past a format's hard limit: refused before anything is written.
        let layout = match writer {
            Some(w) if embedding == Embedding::StaticLib && !constants.is_empty() => Some(
                w.layout(&symbol, data_len)
                    .map_err(|limit| Error::ObjectLimit {
                        graph: graph_path.clone(),
                        target: target.triple().to_string(),
                        format: w.format_name(),
                        needed: data_len,
                        limit: limit.limit,
                        reason: limit.reason,
                    })?,
            ),
            _ => None,
        };
        let dir = out_dir.join(ARTIFACTS_DIR).join(&key);
        fs::create_dir_all(&dir).map_err(|source| Error::Write {
            path: dir.clone(),
            source,
        })?;
        let have_data = embedding != Embedding::Runtime && !constants.is_empty();
        let data_file = match embedding {
            Embedding::StaticLib => lib_file.clone(),
            _ => DATA_FILE.to_string(),
        };

        // The data file first, the index last: the index is what the macro trusts.
        if have_data {
            let path = dir.join(&data_file);
            write_if_changed(&path, |file| {
                if let Some(layout) = &layout {
                    let io_err = |source| Error::Write {
                        path: PathBuf::new(),
                        source,
                    };
                    file.write_all(&layout.prefix).map_err(io_err)?;
                    write_constants(&plan, &constants, data_len, &graph_path, file)?;
                    file.write_all(&layout.suffix).map_err(io_err)
                } else {
                    write_constants(&plan, &constants, data_len, &graph_path, file)
                }
            })?;
        }
        // Leftovers of another mode or target would only waste space.
        let msvc_file = format!("{lib_name}.lib");
        let gnu_file = artifacts::library_file(&key);
        for stale in [DATA_FILE, gnu_file.as_str(), msvc_file.as_str()] {
            if !(have_data && stale == data_file) {
                match fs::remove_file(dir.join(stale)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => {
                        return Err(Error::Write {
                            path: dir.join(stale),
                            source: e,
                        })
                    }
                    _ => {}
                }
            }
        }

        // Compact: rustc embeds it (include_str!) and the program parses it on first use.
        let graph_json = serde_json::to_vec(&graph).map_err(|e| Error::Write {
            path: dir.join(GRAPH_FILE),
            source: io::Error::other(e),
        })?;
        write_bytes_if_changed(&dir.join(GRAPH_FILE), &graph_json)?;

        // The constant table (embedding modes only; the run-time mode resolves the sidecar).
        let table_path = dir.join(TABLE_FILE);
        if embedding != Embedding::Runtime {
            let rows: Vec<TableRow<'_>> = constants.iter().map(table_row).collect();
            let table = ConstantTable::encode(&rows, data_len).map_err(|e| Error::Write {
                path: table_path.clone(),
                source: io::Error::other(e),
            })?;
            write_bytes_if_changed(&table_path, &table)?;
        } else {
            remove_if_present(&table_path)?;
        }

        let sidecar = plan.sidecar().map(|s| s.path.clone());
        let chosen_manifest = plan.sidecar().and_then(|s| match &s.kind {
            SidecarKind::Blob { manifest } => Some(manifest.clone()),
            _ => None,
        });
        let graph_dir = graph_path.parent().unwrap_or(Path::new(""));
        let absolute = |p: &Option<PathBuf>| {
            p.as_ref()
                .map(|p| normalize(&graph_dir.join(p)).display().to_string())
        };
        let index = Index {
            graph: normalize(&self.graph).display().to_string(),
            data: have_data.then(|| IndexData {
                file: data_file.clone(),
                symbol: (embedding == Embedding::StaticLib).then(|| symbol.clone()),
                length: data_len,
            }),
            runtime: (embedding == Embedding::Runtime).then(|| IndexRuntime {
                graph_path: graph_path.display().to_string(),
                weights: absolute(&self.weights),
                manifest: absolute(&self.manifest),
            }),
            sidecar: sidecar.as_ref().map(|p| p.display().to_string()),
            manifest: chosen_manifest.as_ref().map(|p| p.display().to_string()),
            table: (embedding != Embedding::Runtime).then(|| TABLE_FILE.to_string()),
            constant_count: constants.len() as u64,
            ..Index::new(embedding.mode())
        };
        let index_json = index.to_json().map_err(|e| Error::Write {
            path: dir.join(INDEX_FILE),
            source: io::Error::other(e),
        })?;
        write_bytes_if_changed(&dir.join(INDEX_FILE), &index_json)?;

        if embedding == Embedding::StaticLib && have_data {
            directives.push(format!("cargo:rustc-link-search=native={}", dir.display()));
            directives.push(format!("cargo:rustc-link-lib=static:-bundle={lib_name}"));
            // Cargo passes `-l` only to the library target of a package that has one; the
            // archive as a link argument also serves its binaries, tests and examples that
            // embed the graph themselves (an archive member is pulled in once, if needed).
            directives.push(format!(
                "cargo:rustc-link-arg={}",
                dir.join(&lib_file).display()
            ));
        }
        Ok(CompiledGraph {
            graph: graph_path,
            key,
            dir,
            embedding,
            sidecar,
            manifest: chosen_manifest,
            constants,
            data_len,
            directives: Vec::new(),
            target,
        })
    }
}

/// The name Rust code declares for a graph's data (`#[link_name]`; the object spells it for
/// its format). It depends only on what is the same wherever the package and the target
/// folder are — the package's name and version, the artifact key (from the graph's path
/// relative to the package root), the target and the embedding — so builds are reproducible,
/// and it differs between two packages embedding a graph at the same relative path and
/// between two targets of one package.
fn data_symbol(key: &str, target: &Target, embedding: Embedding) -> String {
    use sha2::{Digest, Sha256};
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let seed = [
        package.as_str(),
        version.as_str(),
        key,
        target.triple(),
        embedding.mode().as_str(),
    ]
    .join("\0");
    let digest = Sha256::digest(seed.as_bytes());
    format!("webnn_weights_data_{}", artifacts::hex(&digest[..8]))
}

/// Emits `rerun-if-changed` for the paths a plan examined. Existing files are watched
/// directly. A missing path cannot be (cargo would rerun the build script on every build),
/// so its folder is watched instead: cargo then reruns when any file in that folder is
/// created, removed or modified — a new `<stem>.safetensors` wins the next build. A folder
/// that contains the build's own output (the package root of a single-crate project, whose
/// `target/` changes on every build) is not watched; keep graphs in a subfolder such as
/// `models/` to get that rule.
fn watch(paths: &[PathBuf], out_dir: &Path, directives: &mut Vec<String>) {
    let out_dir = normalize(out_dir);
    let mut folders: Vec<PathBuf> = Vec::new();
    for path in paths {
        if path.is_file() {
            let line = format!("cargo:rerun-if-changed={}", path.display());
            if !directives.contains(&line) {
                directives.push(line);
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
        directives.push(format!("cargo:rerun-if-changed={}", folder.display()));
    }
}

/// Writes each constant at its offset (zero padding between), then pads to `data_len`.
fn write_constants(
    plan: &webnn_weights_runtime::WeightPlan,
    constants: &[ArtifactConstant],
    data_len: u64,
    graph: &Path,
    file: &mut File,
) -> Result<(), Error> {
    const ZEROS: [u8; ALIGN as usize] = [0; ALIGN as usize];
    let mut at = 0u64;
    let io_err = |source| Error::Write {
        path: graph.to_path_buf(),
        source,
    };
    for (planned, c) in plan.constants().iter().zip(constants) {
        file.write_all(&ZEROS[..(c.offset - at) as usize])
            .map_err(io_err)?;
        let copied = plan.copy_constant(planned, file)?;
        if copied != c.length {
            return Err(Error::ShortCopy {
                graph: graph.to_path_buf(),
                sidecar: plan.sidecar().map(|s| s.path.clone()).unwrap_or_default(),
                constant: c.name.clone(),
                reference: c.reference.clone(),
                expected: c.length,
                found: copied,
            });
        }
        at = c.offset + c.length;
    }
    file.write_all(&ZEROS[..(data_len - at) as usize])
        .map_err(io_err)
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

/// Prepares the graph at `graph` (relative to the package root) with discovery, the default
/// embedding for the target, and the directives printed. See [`Builder`].
pub fn compile(graph: impl AsRef<Path>) -> Result<CompiledGraph, Error> {
    Builder::new(graph).compile()
}

/// [`compile`], printing a diagnostic and exiting the build script with status 1 on error.
/// The one line a build.rs needs.
pub fn compile_or_exit(graph: impl AsRef<Path>) -> CompiledGraph {
    Builder::new(graph).compile_or_exit()
}

/// One constant as laid out in the artifacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactConstant {
    /// Name in the graph.
    pub name: String,
    /// The `@weights` reference.
    pub reference: String,
    /// Declared data type.
    pub data_type: DataType,
    /// Declared shape.
    pub shape: Vec<u32>,
    /// Start within the data (a multiple of 64).
    pub offset: u64,
    /// Byte length (BF16 already widened).
    pub length: u64,
}

/// What [`Builder::compile`] prepared.
#[derive(Debug, Clone)]
pub struct CompiledGraph {
    graph: PathBuf,
    key: String,
    dir: PathBuf,
    embedding: Embedding,
    sidecar: Option<PathBuf>,
    manifest: Option<PathBuf>,
    constants: Vec<ArtifactConstant>,
    data_len: u64,
    directives: Vec<String>,
    target: Target,
}

impl CompiledGraph {
    /// The target the artifacts were written for.
    pub fn target(&self) -> &Target {
        &self.target
    }
    /// The graph file (absolute when `CARGO_MANIFEST_DIR` is).
    pub fn graph_path(&self) -> &Path {
        &self.graph
    }
    /// The artifact key (`<stem>-<hash>`), the same the macro computes.
    pub fn key(&self) -> &str {
        &self.key
    }
    /// The artifact folder `OUT_DIR/webnn-weights/<key>`.
    pub fn artifact_dir(&self) -> &Path {
        &self.dir
    }
    /// How the bytes reach the program.
    pub fn embedding(&self) -> Embedding {
        self.embedding
    }
    /// The sidecar used, if the graph has `@weights` constants.
    pub fn sidecar(&self) -> Option<&Path> {
        self.sidecar.as_deref()
    }
    /// The manifest used, for a `.weights` blob.
    pub fn manifest(&self) -> Option<&Path> {
        self.manifest.as_deref()
    }
    /// Every `@weights` constant, sorted by name, with its place in the data.
    pub fn constants(&self) -> &[ArtifactConstant] {
        &self.constants
    }
    /// The data's length (a multiple of 64; 0 without constants).
    pub fn data_len(&self) -> u64 {
        self.data_len
    }
    /// The `cargo:` lines printed (or that would have been).
    pub fn directives(&self) -> &[String] {
        &self.directives
    }
}

fn table_row(c: &ArtifactConstant) -> TableRow<'_> {
    TableRow {
        name: &c.name,
        reference: &c.reference,
        data_type: c.data_type,
        shape: &c.shape,
        offset: c.offset,
        length: c.length,
    }
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

/// A build-script diagnostic in the style of cxx-build: what failed, the cause (naming the
/// file, constant, expected and found) and the fix on its own line.
///
/// ```
/// use webnn_weights_build::{Diagnostic, Error};
/// let err = Error::MissingEnv("OUT_DIR");
/// let text = Diagnostic::new("models/model.webnn", &err).to_string();
/// assert!(text.starts_with("error: webnn-weights: cannot embed `models/model.webnn`"));
/// ```
#[derive(Debug)]
pub struct Diagnostic {
    graph: String,
    cause: String,
    fix: Option<String>,
}

impl Diagnostic {
    /// The diagnostic for `err` while preparing `graph`.
    pub fn new(graph: impl AsRef<Path>, err: &Error) -> Diagnostic {
        let mut message = err.to_string();
        let mut source = std::error::Error::source(err);
        // Transparent variants already carry their source's text.
        while let Some(s) = source {
            let text = s.to_string();
            if !message.contains(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            source = s.source();
        }
        // The fix is data of the error (never searched for in its text).
        let fix = match err {
            Error::Resolve(e) => e.fix(),
            Error::Graph(e) => e.fix(),
            _ => None,
        };
        Diagnostic {
            graph: graph.as_ref().display().to_string(),
            cause: message,
            fix,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: webnn-weights: cannot embed `{}`", self.graph)?;
        writeln!(f)?;
        writeln!(f, "  {}", self.cause)?;
        if let Some(fix) = &self.fix {
            writeln!(f)?;
            writeln!(f, "  fix: {fix}")?;
        }
        Ok(())
    }
}
