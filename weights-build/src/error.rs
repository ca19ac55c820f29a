//! What can go wrong while preparing a graph ([`Error`]), and how a build script shows it
//! ([`Diagnostic`]).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::ResolveError;

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
    /// The graph or model file does not exist. [`Diagnostic`]'s fix names a graph file of
    /// the same folder with a close name (`did you mean …?`), or the folder that was searched
    /// and what it is relative to.
    #[error("cannot read {}", path.display())]
    GraphNotFound {
        /// The graph path as given to the builder (relative to the package root).
        graph: PathBuf,
        /// The file that was looked for: the package root joined with `graph`.
        path: PathBuf,
        /// The package root (`CARGO_MANIFEST_DIR`), which `graph` is relative to.
        package_dir: PathBuf,
        /// Whether the folder of `path` exists.
        folder_exists: bool,
        /// A graph file (`.webnn`, `.json`, `.onnx`) of that folder with a close name,
        /// written as `graph` with its name.
        near: Option<PathBuf>,
        /// The file system's error.
        #[source]
        source: io::Error,
    },
    /// An explicit sidecar or manifest path names no file relative to the graph's folder
    /// (where the format reads it), but does relative to the package root (where build.rs
    /// paths of graphs are read): the usual mix-up.
    #[error(
        "graph {}: the {role} {} does not exist (explicit paths are relative to the graph's folder), but {} does (the same path relative to the package root)",
        graph.display(), path.display(), other.display()
    )]
    ExplicitPath {
        /// The graph file.
        graph: PathBuf,
        /// `weights file`, `manifest` or `weights lock`.
        role: &'static str,
        /// The path as the format reads it (joined to the graph's folder).
        path: PathBuf,
        /// The file the same path names from the package root.
        other: PathBuf,
        /// What to pass instead: `other` relative to the graph's folder.
        instead: PathBuf,
    },
    /// An artifact could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The artifact.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The constants do not fit this target's address space.
    #[error("graph {}: the constants need {needed} bytes, more than a {pointer_width}-bit target can address", graph.display())]
    TooLarge {
        /// The graph file.
        graph: PathBuf,
        /// The data's total size (exact, also past `u64::MAX`).
        needed: u128,
        /// The target's pointer width.
        pointer_width: u32,
    },
    /// [`Embedding::StaticLib`](crate::Embedding::StaticLib) was requested for a target it does not support.
    #[error("static-library embedding does not support target {0}; use Embedding::IncludeBytes or the default")]
    UnsupportedTarget(String),
    /// The constants are past a hard limit of the target's object format; detected before
    /// anything is written.
    #[error("graph {}: the constants, their table and the graph need {needed} bytes, but a {format} static library for {target} holds at most {limit} bytes ({reason}); fix: load the weights at run time (`Builder::embedding(Embedding::Runtime)` or WEBNN_WEIGHTS_EMBED=0), or split the constants over several graphs", graph.display())]
    ObjectLimit {
        /// The graph file.
        graph: PathBuf,
        /// The target triple.
        target: String,
        /// The object format (`ELF`, `Mach-O`, `COFF`).
        format: &'static str,
        /// Total size of the linked bytes: the data, the constant table, the graph JSON.
        needed: u64,
        /// The largest size the format takes.
        limit: u64,
        /// Which field or tool sets the limit.
        reason: &'static str,
    },
    /// The graph is an ONNX model (its path ends in `.onnx`), and the build helper was built
    /// without its feature `onnx`.
    #[error("{} is an ONNX model (its name ends in `.onnx`), but this webnn-weights-build was built without its feature `onnx`, which converts ONNX models at build time", graph.display())]
    OnnxFeature {
        /// The model file.
        graph: PathBuf,
    },
    /// The ONNX model does not convert to a WebNN graph: every problem found (each node,
    /// input or initializer, with what and why), naming the model file.
    #[cfg(feature = "onnx")]
    #[error(transparent)]
    Onnx(Box<webnn_weights_onnx::ConvertError>),
    /// A [`Builder`](crate::Builder) setting that does not apply to this kind of graph.
    #[error("{}: {setting} {reason}", graph.display())]
    Setting {
        /// The graph or model file.
        graph: PathBuf,
        /// The setting, as the builder's method is named (`.weights(…)`).
        setting: &'static str,
        /// Why it does not apply.
        reason: &'static str,
    },
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
        // The message and each cause once, on lines of their own ("caused by:").
        let message = webnn_weights_runtime::Report::new(err)
            .to_string()
            .replace('\n', "\n  ");
        // The fix is data of the error (never searched for in its text).
        let fix = match err {
            Error::Resolve(e) => e.fix(),
            Error::Graph(e) => e.fix(),
            Error::ExplicitPath { role, instead, .. } => Some(format!(
                "write `.{}({:?})` (relative to the graph's folder)",
                // The Builder setter that took the path.
                match *role {
                    "manifest" => "manifest",
                    "weights lock" => "lock",
                    _ => "weights",
                },
                instead.display().to_string()
            )),
            Error::GraphNotFound {
                graph,
                package_dir,
                folder_exists,
                near,
                ..
            } => Some(graph_not_found_fix(
                graph,
                package_dir,
                *folder_exists,
                near.as_ref(),
            )),
            Error::OnnxFeature { .. } => Some(
                "turn the feature on in Cargo.toml: `[build-dependencies] webnn-weights-build = { …, features = [\"onnx\"] }`"
                    .to_string(),
            ),
            #[cfg(feature = "onnx")]
            Error::Onnx(e) => e
                .problems()
                .iter()
                .any(|p| p.place.starts_with("input "))
                .then(|| {
                    "give the sizes in build.rs, on the Builder: `.override_dim(\"batch\", 1)` for a named dim, `.input_shape(\"x\", &[1, 3, 224, 224])` for a whole input (`--override-dim` and `--input-shape` are the CLI's names of the same options)"
                        .to_string()
                }),
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

/// The fix line of [`Error::GraphNotFound`]: the near name, or which folder was searched
/// relative to what, and what to check.
fn graph_not_found_fix(
    graph: &Path,
    package_dir: &Path,
    folder_exists: bool,
    near: Option<&PathBuf>,
) -> String {
    if let Some(near) = near {
        return format!(
            "did you mean `{}`? (a path in build.rs is relative to the package root)",
            near.display()
        );
    }
    let folder = graph.parent().unwrap_or(Path::new(""));
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    let root = format!(
        "the package root (CARGO_MANIFEST_DIR, the folder of Cargo.toml: {})",
        package_dir.display()
    );
    let name = graph.file_name().unwrap_or_default().to_string_lossy();
    let relative = if graph.is_absolute() {
        String::new()
    } else {
        format!(" relative to {root}")
    };
    if folder_exists {
        format!(
            "the folder `{}`{relative} holds no graph file (.webnn, .json, .onnx) named like \
             `{name}`; check the file name in build.rs and that the file is in that folder",
            folder.display()
        )
    } else {
        format!(
            "the folder `{}` does not exist{relative}; a path in build.rs is relative to the \
             package root, not to build.rs or the workspace: check the path",
            folder.display()
        )
    }
}
