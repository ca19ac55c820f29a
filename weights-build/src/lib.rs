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
//! ## ONNX models
//!
//! With the feature `onnx` (`webnn-weights-build = { …, features = ["onnx"] }`), a path ending
//! in `.onnx` is an ONNX model: `compile_or_exit("models/model.onnx")` converts it (and its
//! external data) with `webnn-weights-onnx` at build time, and `include_webnn_graph!` takes the
//! same path string. `Builder::override_dim` and `Builder::input_shape` give the sizes the
//! model leaves open. Constants over 1 KiB are embedded like any sidecar's; smaller ones stay
//! in the graph. The converted weights go to a SafeTensors archive in the artifact folder
//! (rewritten only when its bytes change), which the run-time mode reads on first use; the
//! build script reruns when the model, one of its external data files, its lock
//! (`<model>.onnx.lock`) or `WEBNN_WEIGHTS_EMBED` changes. Without the feature, an `.onnx`
//! path is an error that names the feature. See docs/embedding.md, "ONNX models".
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
//! | `index.json` | what the macro reads first ([`webnn_weights_artifacts::Index`]: format `webnn-weights-artifacts` and the schema's version, which the macro checks): mode, data file, symbol and end symbol (every object format), where the table and graph JSON are, the constant count |
//! | `libwebnn_weights_<key>.a` (`webnn_weights_<key>.lib` for MSVC) | static-library path: one ELF, Mach-O or COFF object with every constant in a 64-byte aligned section, for the [`Target`] cargo describes (docs/embedding.md, "Platforms"), followed by the constant table and the graph JSON: the linker carries them, rustc never reads them |
//! | `constants.bin` | portable path: the constant table ([`webnn_weights_artifacts::ConstantTable`]): one binary entry per constant (name, reference, data type, shape, offset, length), embedded by the macro with one `include_bytes!` |
//! | `graph.json` | portable and run-time paths: the graph as GraphJson, `@weights` references kept |
//! | `data.bin` | portable path: the same bytes for an aligned `include_bytes!` |
//!
//! Every constant starts at a multiple of 64 bytes; only the bytes the graph selects are
//! written, BF16 widened to float32, and constants on the same stored bytes share one range
//! ([`CompiledGraph::shared_constants`]). A file whose bytes would not change is left
//! untouched (its modification time too, so cargo does not relink). The data file is not
//! even read again when the cheap facts it was written from — the layout, each sidecar
//! file's size, times and inode — are unchanged (`data.stamp`). See [`Embedding`] for
//! which targets get which data file.
//!
//! ## A failed or killed build
//!
//! The files are replaced one at a time, not as a set, in this order: the data file, then
//! the other files, `index.json` last. Each file but the data file is written to a marked
//! temporary file and renamed over the old one, so each is always absent, old or new,
//! never partial. The data file is one of two cases:
//!
//! - of a new length (or the first build): written to a marked temporary file, the old one
//!   removed, the new one renamed in: absent, old or new, never partial;
//! - of the same length: **updated in place**, only the pieces whose bytes differ
//!   rewritten. A build killed part way through leaves it partly updated — the right
//!   length, some pieces new and some old — but never with a `data.stamp`: the stamp is
//!   removed before the first byte is written and written again only after the last. An
//!   update that fails with an error removes the data file (should that removal fail too, it
//!   stays partly updated, still without a stamp).
//!
//! So after a build script that failed or was killed, the artifact folder can mix old and
//! new files and hold a partly updated data file, and temporary files (named
//! `.<file>.webnn-weights-tmp…`) can be left in it. cargo never compiles a crate against a
//! build script that did not finish: it runs the script again, and that run, finding no
//! stamp to vouch for the data file, compares every byte of it and rewrites the pieces that
//! differ (or writes it afresh), then the other files, the index last, so that every
//! artifact the finished run names is exactly what a clean build writes (marked leftovers of
//! the killed run may stay beside them; `weights-build/tests/hardening_faults.rs` kills builds at random
//! moments to check this). Nothing but such a rerun should read the artifact folder of a
//! build that did not finish.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The pipeline, in the order data flows: the plan (the runtime's `plan_external_weights`),
// then `layout` (ranges and alignment: the runtime's `WeightPlan::data_layout`), `write` (data
// file or static library through `object`, the index last) and `directives` (the `cargo:`
// lines). `embedding` decides the mode.
mod directives;
mod embedding;
mod env;
mod error;
mod layout;
mod missing;
mod object;
#[cfg(feature = "onnx")]
mod onnx;
mod target;
mod write;

pub use embedding::Embedding;
pub use error::{Diagnostic, Error};
pub use layout::ArtifactConstant;
pub use target::{Endian, ObjectFormat, Target};

use directives::{slow_lock_message, Directives};
use env::BuildEnv;
use layout::ArtifactLayout;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use webnn_weights_artifacts::{artifact_key, normalize};
use webnn_weights_runtime::{
    plan_external_weights, read_graph_file, ResolveError, SidecarKind, WeightPlan,
};

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
    lock: Option<PathBuf>,
    embedding: Option<Embedding>,
    out_dir: Option<PathBuf>,
    package_dir: Option<PathBuf>,
    emit: bool,
    target: Option<Target>,
    /// ONNX models: sizes of named dims (`override_dim`), and whole input shapes.
    dims: Vec<(String, u32)>,
    input_shapes: Vec<(String, Vec<u32>)>,
}

impl Builder {
    /// A builder for the graph at `graph`, relative to the package root: a WebNN graph
    /// (`.webnn` text or GraphJson), or with the feature `onnx` an ONNX model (a path ending
    /// in `.onnx`, in any letter case), converted at build time.
    pub fn new(graph: impl AsRef<Path>) -> Builder {
        Builder {
            graph: graph.as_ref().to_path_buf(),
            weights: None,
            manifest: None,
            lock: None,
            embedding: None,
            out_dir: None,
            package_dir: None,
            emit: true,
            target: None,
            dims: Vec::new(),
            input_shapes: Vec::new(),
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

    /// A weights lock to verify the weights against, relative to the graph's folder,
    /// instead of `<graph file name>.lock` beside the graph, which is verified whenever it
    /// exists (write one with `webnn-weights lock GRAPH`).
    ///
    /// Every constant's resolved bytes are hashed while they are written to the artifacts
    /// (SHA-256 in assembly, as fast in a build script as in an optimized program); a
    /// constant whose bytes differ, a constant missing from the lock and an entry the graph
    /// no longer has fail the build, all reported at once, with both digests and the fix.
    /// The lock is watched: adding, changing or removing it reruns the build script. With
    /// [`Embedding::Runtime`], the build checks the lock's entries and lengths, and the
    /// program verifies the digests when it resolves the sidecar.
    /// `EmbeddedConstant::sha256()` of a locked graph returns the verified digest.
    ///
    /// ```no_run
    /// // build.rs
    /// webnn_weights_build::Builder::new("models/model.webnn")
    ///     .lock("model.lock") // models/model.lock
    ///     .compile_or_exit();
    /// ```
    pub fn lock(mut self, path: impl AsRef<Path>) -> Builder {
        self.lock = Some(path.as_ref().to_path_buf());
        self
    }

    /// How the weights reach the program, instead of the target's default
    /// ([`Embedding::StaticLib`] where supported, else [`Embedding::IncludeBytes`]).
    /// [`Embedding::Runtime`] embeds nothing: the program resolves the sidecar on first use.
    ///
    /// The environment variable `WEBNN_WEIGHTS_EMBED` overrides it without editing build.rs:
    /// `0` (or `false`, `off`, `no`) gives [`Embedding::Runtime`], `include-bytes` gives
    /// [`Embedding::IncludeBytes`] unless this asks for [`Embedding::Runtime`].
    ///
    /// ```no_run
    /// // build.rs: fast builds of a large model during development.
    /// use webnn_weights_build::{Builder, Embedding};
    /// Builder::new("models/model.webnn")
    ///     .embedding(Embedding::Runtime)
    ///     .compile_or_exit();
    /// ```
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
        self.package_dir = Some(dir.as_ref().to_path_buf());
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

    /// For an ONNX model: gives the symbolic dim `name` (an ONNX `dim_param`, such as
    /// `batch`) the size `value` wherever a graph input uses it. WebNN graphs have static
    /// shapes, so every dim of every input needs a size; the conversion fails naming each
    /// input and dim that has none. Calling it again for the same name replaces the size. An
    /// error for a WebNN graph, which has no symbolic dims ([`Error::Setting`]).
    ///
    /// Always available, but converting an ONNX model needs the feature `onnx`: without it
    /// the build fails with [`Error::OnnxFeature`], naming the feature to turn on.
    ///
    /// ```no_run
    /// // build.rs
    /// webnn_weights_build::Builder::new("models/model.onnx")
    ///     .override_dim("batch", 1)
    ///     .override_dim("sequence", 128)
    ///     .compile_or_exit();
    /// ```
    pub fn override_dim(mut self, name: impl Into<String>, value: u32) -> Builder {
        let name = name.into();
        self.dims.retain(|(n, _)| *n != name);
        self.dims.push((name, value));
        self
    }

    /// For an ONNX model: gives the graph input `name` the shape `dims`, replacing what the
    /// model declares (for dims with no size and no name, or to fix every dim of one input at
    /// once). Its rank must match the model's declaration; a name that is no graph input of
    /// the model fails the conversion. Calling it again for the same input replaces the
    /// shape. An error for a WebNN graph, whose inputs have their shapes
    /// ([`Error::Setting`]).
    ///
    /// Always available, but converting an ONNX model needs the feature `onnx`: without it
    /// the build fails with [`Error::OnnxFeature`], naming the feature to turn on.
    ///
    /// ```no_run
    /// // build.rs
    /// webnn_weights_build::Builder::new("models/model.onnx")
    ///     .input_shape("x", &[1, 3, 224, 224])
    ///     .compile_or_exit();
    /// ```
    pub fn input_shape(mut self, name: impl Into<String>, dims: &[u32]) -> Builder {
        let name = name.into();
        self.input_shapes.retain(|(n, _)| *n != name);
        self.input_shapes.push((name, dims.to_vec()));
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
        let mut directives = Directives::new();
        let result = self.compile_inner(&mut directives);
        let directives = directives.into_lines();
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

    fn compile_inner(&self, directives: &mut Directives) -> Result<CompiledGraph, Error> {
        let env = BuildEnv::read(
            self.package_dir.as_ref(),
            self.out_dir.as_ref(),
            self.target.as_ref(),
        )?;
        let (package_dir, out_dir, target) = (&env.package_dir, &env.out_dir, &env.target);
        let key = artifact_key(package_dir, &self.graph);
        let graph_path = normalize(&package_dir.join(&self.graph));
        directives.graph(&graph_path);

        // 1. Plan: the runtime's rules, the same as at run time. An ONNX model is converted
        //    first, its weights written to an archive in the artifact folder, which is then
        //    planned as the graph's explicit sidecar (with the model's path as the graph's:
        //    errors name the model, and its lock is `<model>.onnx.lock` beside it).
        let artifact_dir = out_dir
            .join(webnn_weights_artifacts::ARTIFACTS_DIR)
            .join(&key);
        missing::check(&self.graph, &graph_path, package_dir)?;
        let source = self.read_source(&graph_path, &artifact_dir)?;
        let plan = self.plan(&source, &graph_path, package_dir)?;
        // A failed build script always reruns, so only success needs the watch list.
        directives.watch(&watched_paths(&plan, &source), out_dir);
        let (embedding, writer) = embedding::choose(self.embedding, env.embed, target)?;

        // 2. Layout: every constant's range in the data.
        let layout = ArtifactLayout::of_plan(&plan, &graph_path)?;
        layout.check_fits(embedding, target, &graph_path)?;

        // 3. Write: the data file (with the table and graph JSON it links), the files for
        //    `include_bytes!`, the index last.
        let written = write::Job {
            graph_arg: &self.graph,
            graph_path: &graph_path,
            weights: source.weights.as_deref(),
            manifest: source.manifest.as_deref(),
            lock: self.lock.as_deref(),
            graph: &source.graph,
            plan: &plan,
            layout: &layout,
            embedding,
            writer,
            target,
            package: (&env.package.0, &env.package.1),
            key: &key,
            out_dir,
        }
        .write()?;

        // 4. Directives: link the static library, and vouch for this run's artifacts.
        written_directives(directives, &written, &key, &plan, layout.data_len());
        let target = env.target.clone();
        let compiled = compiled(
            graph_path,
            key,
            written.dir,
            embedding,
            &plan,
            layout,
            target,
        );
        Ok(compiled)
    }

    /// The plan of the graph's weights by the format's rules, with the weights lock that
    /// applies (explicit, or beside the graph); then the structural checks of
    /// `webnn-weights validate` (every problem at once), before any tensor byte is read.
    fn plan(
        &self,
        source: &Source,
        graph_path: &Path,
        package_dir: &Path,
    ) -> Result<WeightPlan, Error> {
        let (weights, manifest) = (source.weights.as_deref(), source.manifest.as_deref());
        let explicit = [weights, manifest, self.lock.as_deref()];
        let path_error = |e| explicit_path_error(e, package_dir, graph_path, explicit);
        let plan = plan_external_weights(&source.graph, graph_path, weights, manifest)
            .map_err(path_error)?
            .with_lock_file(self.lock.as_deref())
            .map_err(path_error)?;
        source
            .graph
            .validate()
            .map_err(|source| webnn_weights_runtime::Error::Validation {
                path: graph_path.to_path_buf(),
                source,
            })?;
        Ok(plan)
    }
}

/// The files a change of which reruns the build script: what discovery examined, then the
/// files holding the bytes (for a sharded archive, the shards that hold a requested
/// constant; the index is the chosen sidecar), then the files the graph was made from (an
/// ONNX model's external data: the archive written from them under OUT_DIR is never
/// watched).
fn watched_paths(plan: &WeightPlan, source: &Source) -> Vec<PathBuf> {
    let mut watched = plan.watched_paths();
    watched.extend(plan.files().iter().map(|f| f.path().to_path_buf()));
    watched.extend(source.watch.iter().cloned());
    watched
}

/// The directives of what was written: link the static library (with its linker script),
/// vouch for this run's artifacts, and warn once, with the fix, when the pass that read
/// `data_len` bytes, verified them against the weights lock and wrote the data file took
/// long without `ring`.
fn written_directives(
    directives: &mut Directives,
    written: &write::Written,
    key: &str,
    plan: &WeightPlan,
    data_len: u64,
) {
    if let Some((lib_name, lib_file)) = &written.library {
        directives.link(&written.dir, lib_name, lib_file);
    }
    if let Some(script) = &written.linker_script {
        directives.linker_script(script);
    }
    directives.prepared(key, &written.index_json);
    // Verifying a lock without `ring` can take seconds: say so once, with the fix.
    if let (Some(elapsed), Some(lock)) = (written.lock_pass, plan.lock()) {
        let ring = cfg!(feature = "ring");
        if let Some(message) = slow_lock_message(elapsed, lock.path(), data_len, ring) {
            directives.warning(&message);
        }
    }
}

/// What [`Builder::compile`] returns about the graph at `graph` (key `key`), whose artifacts
/// are in `dir`: the sidecar the plan chose (and the manifest of a `.weights` blob), and
/// every constant's range of the data.
fn compiled(
    graph: PathBuf,
    key: String,
    dir: PathBuf,
    embedding: Embedding,
    plan: &WeightPlan,
    layout: ArtifactLayout,
    target: Target,
) -> CompiledGraph {
    let sidecar = plan.sidecar().map(|s| s.path.clone());
    let manifest = plan.sidecar().and_then(|s| match &s.kind {
        SidecarKind::Blob { manifest } => Some(manifest.clone()),
        _ => None,
    });
    let data_len = layout.data_len();
    CompiledGraph {
        graph,
        key,
        dir,
        embedding,
        sidecar,
        manifest,
        constants: layout.constants,
        entries: layout.entries,
        data_len,
        directives: Vec::new(),
        target,
    }
}

/// What the pipeline plans: the graph, and the sidecar paths to plan it with.
struct Source {
    graph: webnn_weights_runtime::GraphJson,
    /// Explicit sidecar and manifest: the builder's (relative to the graph's folder), or an
    /// ONNX model's converted archive (absolute).
    weights: Option<PathBuf>,
    manifest: Option<PathBuf>,
    /// Files the graph was made from besides the graph file: an ONNX model's external data.
    watch: Vec<PathBuf>,
}

/// Whether `path` names an ONNX model: the extension `.onnx`, in any letter case.
fn is_onnx(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
}

impl Builder {
    /// The graph at `graph_path` with the sidecar paths to plan it with: a WebNN graph read
    /// as it is, or an ONNX model converted (feature `onnx`), its weights written to an
    /// archive in `artifact_dir`.
    fn read_source(&self, graph_path: &Path, artifact_dir: &Path) -> Result<Source, Error> {
        let setting = |setting, reason| Error::Setting {
            graph: graph_path.to_path_buf(),
            setting,
            reason,
        };
        if is_onnx(graph_path) {
            let holds = "applies to WebNN graphs; an ONNX model holds its weights (or names its external data files), which the build helper converts";
            if self.weights.is_some() {
                return Err(setting(".weights(…)", holds));
            }
            if self.manifest.is_some() {
                return Err(setting(".manifest(…)", holds));
            }
            return self.convert_onnx(graph_path, artifact_dir);
        }
        if !self.dims.is_empty() {
            return Err(setting(
                ".override_dim(…)",
                "applies to ONNX models (`.onnx`); a WebNN graph has no symbolic dims",
            ));
        }
        if !self.input_shapes.is_empty() {
            return Err(setting(
                ".input_shape(…)",
                "applies to ONNX models (`.onnx`); a WebNN graph's inputs have their shapes",
            ));
        }
        Ok(Source {
            graph: read_graph_file(graph_path)?,
            weights: self.weights.clone(),
            manifest: self.manifest.clone(),
            watch: Vec::new(),
        })
    }

    #[cfg(feature = "onnx")]
    fn convert_onnx(&self, model: &Path, artifact_dir: &Path) -> Result<Source, Error> {
        let converted = onnx::convert(model, &self.dims, &self.input_shapes, artifact_dir)?;
        Ok(Source {
            graph: converted.graph,
            weights: converted.sidecar,
            manifest: None,
            watch: converted.external_files,
        })
    }

    #[cfg(not(feature = "onnx"))]
    fn convert_onnx(&self, model: &Path, _: &Path) -> Result<Source, Error> {
        Err(Error::OnnxFeature {
            graph: model.to_path_buf(),
        })
    }
}

/// `err`, or when it is an explicit path that does not exist relative to the graph's folder
/// but does relative to the package root, the error that says so and what to write instead.
fn explicit_path_error(
    err: ResolveError,
    package_dir: &Path,
    graph_path: &Path,
    [weights, manifest, lock]: [Option<&Path>; 3],
) -> Error {
    let ResolveError::NotFound { role, path, .. } = &err else {
        return err.into();
    };
    let given = match (*role, weights, manifest, lock) {
        ("weights file", Some(given), _, _)
        | ("manifest", _, Some(given), _)
        | ("weights lock", _, _, Some(given)) => given,
        _ => return err.into(),
    };
    let other = normalize(&package_dir.join(given));
    if given.is_absolute() || !other.is_file() {
        return err.into();
    }
    let folder = normalize(graph_path.parent().unwrap_or(Path::new("")));
    Error::ExplicitPath {
        graph: graph_path.to_path_buf(),
        role,
        path: path.clone(),
        instead: relative_to(&other, &folder),
        other,
    }
}

/// `path` relative to the folder `base` (both absolute and normalized): `..` for each
/// component of `base` past their common prefix.
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let path: Vec<_> = path.components().collect();
    let base: Vec<_> = base.components().collect();
    let common = path.iter().zip(&base).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..base.len() {
        out.push("..");
    }
    out.extend(&path[common..]);
    out
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
    /// For every constant, its entry (distinct range) of the data.
    entries: Vec<usize>,
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
    /// The constants that share their bytes: constants whose references resolve to the same
    /// stored bytes with the same conversion (tied weights, such as an embedding matrix
    /// reused as the output projection) get one range of the data, written once, so their
    /// `EmbeddedConstant::bytes()` return the same address.
    ///
    /// Each group holds two or more constants (sorted by name, with the same
    /// [`ArtifactConstant::offset`] and [`ArtifactConstant::length`]); groups are in data
    /// order. Empty when every constant has bytes of its own.
    ///
    /// ```no_run
    /// // build.rs
    /// let compiled = webnn_weights_build::compile_or_exit("models/model.webnn");
    /// for group in compiled.shared_constants() {
    ///     let names: Vec<&str> = group.iter().map(|c| c.name.as_str()).collect();
    ///     println!("cargo:warning=one copy of {} bytes for {}", group[0].length, names.join(", "));
    /// }
    /// ```
    pub fn shared_constants(&self) -> Vec<Vec<&ArtifactConstant>> {
        let ranges = self.entries.iter().copied().max().map_or(0, |m| m + 1);
        let mut groups: Vec<Vec<&ArtifactConstant>> = vec![Vec::new(); ranges];
        for (c, &entry) in self.constants.iter().zip(&self.entries) {
            groups[entry].push(c);
        }
        groups.retain(|g| g.len() > 1);
        groups
    }

    /// The number of distinct ranges in the data: the number of constants minus those
    /// that share another's bytes ([`CompiledGraph::shared_constants`]).
    pub fn range_count(&self) -> usize {
        self.entries.iter().copied().max().map_or(0, |m| m + 1)
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
