//! The crate-level error of file-based operations.

#[cfg(feature = "load")]
use std::path::PathBuf;

/// Errors of reading and loading graph files (feature `load`).
///
/// Every variant names the file concerned.
#[cfg(feature = "load")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A GraphJson file is not valid JSON of the expected shape.
    #[error("{}: invalid GraphJson", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What is wrong (serde_json's message carries line and column).
        #[source]
        source: crate::GraphJsonError,
    },
    /// A `.webnn` text file does not parse; the [`ParseError`](crate::ParseError) (the
    /// source) carries the file name, line and column.
    #[error("{}: invalid .webnn text", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The located error (its `Display` starts with the file name).
        #[source]
        source: crate::graph::text::ParseError,
    },
    /// A file is neither `.webnn` text nor GraphJson.
    #[error(
        "{}: not a graph file: expected `webnn_graph` (.webnn text) or `{{` (GraphJson) after leading whitespace and `#` comments, found {found}",
        path.display()
    )]
    UnknownGraphFormat {
        /// The file.
        path: PathBuf,
        /// What the file starts with instead.
        found: String,
    },
    /// A graph read from a file breaks structural rules.
    #[error("{}: invalid graph", path.display())]
    Validation {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        #[source]
        source: crate::graph::validate::ValidationError,
    },
    /// The graph's external weights could not be resolved (boxed: resolver errors carry
    /// their whole context, and `Error` stays small). `?` converts a
    /// [`ResolveError`](crate::ResolveError) into this variant.
    #[error(transparent)]
    Resolve(#[from] Box<crate::ResolveError>),
}

#[cfg(feature = "load")]
impl From<crate::ResolveError> for Error {
    fn from(e: crate::ResolveError) -> Error {
        Error::Resolve(Box::new(e))
    }
}

#[cfg(feature = "load")]
impl Error {
    /// How to fix the input, where there is an obvious way: the
    /// [`ResolveError::fix`](crate::ResolveError::fix) of a resolver error, `None` for the
    /// others (their messages say what is expected).
    pub fn fix(&self) -> Option<String> {
        match self {
            Error::Resolve(e) => e.fix(),
            _ => None,
        }
    }
}

/// An error and its causes, each printed once: the error's message, then a `caused by:`
/// line for every error down its [`source`](std::error::Error::source) chain. Every error
/// of these crates either prints its cause or returns it as its source, never both, so
/// nothing is printed twice. The CLI and the build helper print errors this way.
///
/// ```
/// use webnn_weights_runtime::{load_graph, Report};
/// let err = load_graph("/nonexistent/m.webnn").unwrap_err();
/// let text = Report::new(&err).to_string();
/// assert!(text.starts_with("cannot read /nonexistent/m.webnn\ncaused by: "), "{text}");
/// assert_eq!(text.matches("caused by").count(), 1);
/// ```
pub struct Report<'a>(&'a (dyn std::error::Error + 'static));

impl<'a> Report<'a> {
    /// The report of `err`.
    pub fn new(err: &'a (dyn std::error::Error + 'static)) -> Report<'a> {
        Report(err)
    }
}

impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(err) = cause {
            write!(f, "\ncaused by: {err}")?;
            cause = err.source();
        }
        Ok(())
    }
}
