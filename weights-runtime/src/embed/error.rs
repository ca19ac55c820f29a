//! Why an embedded graph could not provide its graph or constants: [`EmbedError`] and its
//! [`EmbedErrorKind`].

use std::fmt;
use std::sync::Arc;

/// Why an [`EmbeddedGraph`](crate::EmbeddedGraph) could not provide its graph or constants.
///
/// Cheap to clone: the result of the first attempt is kept and every later call returns
/// the same error.
#[derive(Debug, Clone)]
pub struct EmbedError {
    pub(super) graph: String,
    pub(super) kind: Arc<EmbedErrorKind>,
}

/// The message names the graph and says what went wrong (the kind's message).
impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "embedded graph `{}`: {}", self.graph, self.kind)
    }
}

/// The kind is part of the message, so the chain goes on with the kind's own cause.
impl std::error::Error for EmbedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source()
    }
}

impl EmbedError {
    /// The graph path as written in `include_webnn_graph!`.
    pub fn graph(&self) -> &str {
        &self.graph
    }

    /// What went wrong.
    pub fn kind(&self) -> &EmbedErrorKind {
        &self.kind
    }
}

/// The cause of an [`EmbedError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedErrorKind {
    /// The embedded graph JSON does not parse.
    /// (serde_json's message as text: keeping its error type would link serde_json's error
    /// machinery into every binary that embeds a graph; `examples/tests/binary.rs` checks
    /// that none of it is linked.)
    #[error("the embedded graph JSON is invalid: {0}")]
    GraphJson(String),
    /// The embedded description contradicts itself.
    #[error("{0}")]
    Inconsistent(String),
    /// Run-time mode: the sidecar could not be resolved (feature `load`).
    #[cfg(feature = "load")]
    #[cfg_attr(docsrs, doc(cfg(feature = "load")))]
    #[error(transparent)]
    Resolve(Box<crate::ResolveError>),
}
