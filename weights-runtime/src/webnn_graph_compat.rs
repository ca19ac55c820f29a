//! The bridge to [`webnn-graph`](https://docs.rs/webnn-graph/0.4.0)'s types (feature
//! `webnn-graph`): the only module that knows them.
//!
//! WebNN runtimes written against `webnn-graph` — above all rustnn, whose
//! `rustnn::webnn_json::from_graph_json_owned` takes a `webnn_graph::ast::GraphJson` — hold
//! graphs in that crate's model, whose constants own a `Vec<u8>`. This module connects ours
//! to theirs without a detour through JSON text:
//!
//! | from | to | how |
//! |---|---|---|
//! | our [`GraphJson`] | `webnn_graph::ast::GraphJson` | `From`: lossless; bytes a constant owns alone move without a copy, shared, mapped or `'static` bytes are copied once; `@weights` references pass as they are (see below) |
//! | our resolved [`GraphJson`] | `webnn_graph::ast::GraphJson` | [`GraphJson::try_into_webnn_graph`]: the same, refusing a graph that still has `@weights` constants ([`UnresolvedWeights`] names them) |
//! | `webnn_graph::ast::GraphJson` | our [`GraphJson`] | `From`: lossless; every `Vec<u8>` becomes a [`Bytes`] without a copy |
//! | an [`EmbeddedGraph`](crate::EmbeddedGraph) | `webnn_graph::ast::GraphJson` | [`EmbeddedGraph::to_webnn_graph`](crate::EmbeddedGraph::to_webnn_graph): the weights are copied once (the target owns them) |
//! | a `webnn_graph::ast::GraphJson` with `@weights` | the same, resolved | [`resolve_external_weights`]: webnn-graph's signature, our resolver |
//! | [`ResolveError`] | `webnn_graph::WeightResolveError` | `From` (see [`resolve_external_weights`] for the mapping) |
//!
//! Every graph of either model has a counterpart in the other, field for field (format,
//! version, name, `quantized`, inputs with static and dynamic dimensions, constants with
//! every initializer, nodes with their options and outputs, graph outputs), so both
//! conversions are `From` and a round trip gives back an equal graph.
//!
//! ```
//! use webnn_weights_runtime::{parse_webnn, GraphJson};
//! let ours = parse_webnn(r#"webnn_graph "g" v2 {
//!   inputs { x: f32[dyn("batch", 8), 4]; }
//!   consts { w: f32[4] @bytes([0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64]); }
//!   nodes { y = mul(x, w); }
//!   outputs { y; }
//! }"#).unwrap();
//! let theirs = webnn_graph::ast::GraphJson::from(ours.clone());
//! assert_eq!(theirs.nodes[0].op, "mul");
//! assert_eq!(GraphJson::from(theirs), ours);
//! ```
//!
//! **The trap: unresolved constants.** `From` is lossless, so a constant that is still a
//! `@weights("ref")` reference (a graph read with
//! [`read_graph_file`](crate::read_graph_file) or [`parse_webnn`](crate::parse_webnn), not
//! yet resolved) stays one in webnn-graph's type — which is right for webnn-graph's own
//! resolver, but rustnn 0.6.0's `webnn_json::from_graph_json_owned` turns every such
//! constant into an **empty** one without a word (its comment: "populated by the safetensors
//! loader after parsing", which that function never does), and the graph then computes on
//! no weights. Hand rustnn a graph from [`load_graph`](crate::load_graph),
//! [`GraphLoader`](crate::GraphLoader), [`resolve_external_weights`](crate::resolve_external_weights)
//! or an [`EmbeddedGraph`](crate::EmbeddedGraph), and convert with
//! [`GraphJson::try_into_webnn_graph`] where the graph's origin is not certain: it returns
//! [`UnresolvedWeights`], naming every such constant and its reference, instead.
//!
//! ```
//! use webnn_weights_runtime::parse_webnn;
//! let text = r#"webnn_graph "g" v2 {
//!   inputs { x: f32[4]; }
//!   consts { w: f32[4] @weights("fc.weight"); }
//!   nodes { y = mul(x, w); }
//!   outputs { y; }
//! }"#;
//! // Lossless: the reference passes as it is.
//! let theirs = webnn_graph::ast::GraphJson::from(parse_webnn(text).unwrap());
//! assert!(matches!(theirs.consts["w"].init, webnn_graph::ast::ConstInit::Weights { .. }));
//! // Checked: refused, naming the constant and its reference.
//! let err = parse_webnn(text).unwrap().try_into_webnn_graph().unwrap_err();
//! assert_eq!(err.constants().collect::<Vec<_>>(), [("w", "fc.weight")]);
//! assert!(err.to_string().contains(r#"`w` (@weights("fc.weight"))"#), "{err}");
//! ```
//!
//! webnn-graph 0.4 declares `rust-version = 1.97`; this crate builds the feature with older
//! toolchains through `cargo ... --ignore-rust-version` (what CI does with stable Rust), and
//! without the feature keeps its own minimum.

// Resolver errors carry their whole context (see `crate::resolve`); this signature is
// webnn-graph's, so they are not boxed.
#![allow(clippy::result_large_err)]

use crate::graph::dtype::DataType;
use crate::graph::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc};
use crate::resolve::{Declared, DeclaredInit, ResolveError};
use crate::sidecar::formats::{FormatError, SidecarFormat};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::path::Path;
use webnn_graph::ast as wg;
use webnn_graph::WeightResolveError;

/// Resolves every `@weights` constant of a `webnn_graph::ast::GraphJson` in place: a drop-in
/// replacement for `webnn_graph::resolve_external_weights`, with the same parameters and
/// meaning, and this crate's resolver inside.
///
/// `graph_path` is the graph's file (discovery looks beside it); `weights_path` and
/// `manifest_path` are explicit sidecar paths, relative to the graph's folder unless
/// absolute — exactly as in webnn-graph. Differences, all in the caller's favour:
///
/// - **The graph is untouched on error** (webnn-graph's leaves the constants before the
///   failing one resolved): every constant is planned and read before the graph changes.
/// - **Nothing is printed** (webnn-graph's writes a line to stderr on every call).
/// - **Every rule of the format** is checked, with this crate's messages (file, constant,
///   reference, expected, found; [`ResolveError::fix`] gives the fix): blob lengths must
///   equal the declared size, the packed 4-bit marker, name normalization and ambiguity.
/// - **Sharded Hugging Face archives** (`model.safetensors.index.json`) work, discovered
///   after the format's four candidates or given as `weights_path`.
/// - **Only the ranges the graph uses are read**, each into its own buffer, which moves into
///   the graph without a copy; tied constants (one stored tensor) are read once.
/// - **A weights lock beside the graph** (`<graph file name>.lock`, see
///   [`WeightsLock`](crate::WeightsLock)) is verified while the bytes are read.
///
/// Callers that match on webnn-graph's error keep working with `.map_err(Into::into)`;
/// [`ResolveError`] converts into `WeightResolveError` as follows: a file that cannot be
/// read becomes `ReadFile` (its `io::Error` kept), a manifest that is not JSON of the
/// manifest shape `ManifestJson`, no sidecar, manifest or explicit path `Missing`, other
/// problems of a blob and its manifest `Manifest`, and every other problem (SafeTensors
/// archives and indexes, declarations, a weights lock that does not match or is invalid)
/// `Safetensors`. The message is ours with its causes
/// (`caused by:` lines), then the fix where there is one.
///
/// ```
/// use std::collections::BTreeMap;
/// use webnn_graph::ast::{ConstDecl, ConstInit, DataType, GraphJson};
/// use webnn_weights_runtime::webnn_graph_compat::resolve_external_weights;
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut graph = webnn_graph::ast::new_graph_json();
/// graph.consts.insert("w".into(), ConstDecl {
///     data_type: DataType::Uint8,
///     shape: vec![2],
///     init: ConstInit::Weights { r#ref: "w".into() },
/// });
/// std::fs::write(dir.path().join("model.weights"), [0, 0, 7, 9]).unwrap();
/// std::fs::write(dir.path().join("model.manifest.json"),
///     r#"{"tensors":{"w":{"byteOffset":2,"byteLength":2}}}"#).unwrap();
/// let graph_path = dir.path().join("model.webnn");
///
/// resolve_external_weights(&mut graph, &graph_path, None, None).unwrap();
/// assert_eq!(graph.consts["w"].init, ConstInit::InlineBytes { bytes: vec![7, 9] });
///
/// // An error leaves the graph as it was; webnn-graph's error type is one `into` away.
/// graph.consts.insert("v".into(), ConstDecl {
///     data_type: DataType::Uint8,
///     shape: vec![2],
///     init: ConstInit::Weights { r#ref: "v".into() },
/// });
/// let before = serde_json::to_value(&graph).unwrap();
/// let err = resolve_external_weights(&mut graph, &graph_path, None, None).unwrap_err();
/// assert!(err.to_string().contains("`v`"), "{err}");
/// assert_eq!(serde_json::to_value(&graph).unwrap(), before);
/// let theirs: webnn_graph::WeightResolveError = err.into();
/// assert!(matches!(theirs, webnn_graph::WeightResolveError::Manifest(_)));
/// ```
pub fn resolve_external_weights(
    graph: &mut wg::GraphJson,
    graph_path: &Path,
    weights_path: Option<&str>,
    manifest_path: Option<&str>,
) -> Result<(), ResolveError> {
    let plan = {
        let declared = graph.consts.iter().map(|(name, decl)| Declared {
            name,
            data_type: data_type_from(&decl.data_type),
            shape: &decl.shape,
            init: match &decl.init {
                wg::ConstInit::Weights { r#ref } => DeclaredInit::Weights(r#ref),
                wg::ConstInit::InlineBytes { bytes } => DeclaredInit::Inline(bytes.len() as u64),
                wg::ConstInit::Scalar { .. } => DeclaredInit::Scalar,
            },
        });
        // Without `@weights` constants the plan is empty and touches no file.
        let requests = crate::resolve::requests_of(declared, graph_path)?;
        crate::resolve::plan_requests(
            &requests,
            graph_path,
            weights_path.map(Path::new),
            manifest_path.map(Path::new),
        )?
    };
    let plan = match plan.constants().is_empty() {
        true => plan,
        false => plan.with_lock_file(None)?,
    };
    let mut bytes = plan.materialize()?;
    for (name, decl) in graph.consts.iter_mut() {
        if let wg::ConstInit::Weights { .. } = decl.init {
            // Every Weights constant is in the plan, so in `bytes`.
            if let Some(b) = bytes.remove(name) {
                decl.init = wg::ConstInit::InlineBytes {
                    bytes: Vec::from(b),
                };
            }
        }
    }
    Ok(())
}

impl From<ResolveError> for WeightResolveError {
    /// Sorts our error into webnn-graph's categories (see [`resolve_external_weights`]).
    fn from(err: ResolveError) -> WeightResolveError {
        use crate::sidecar::manifest::ManifestError;
        // Their variants carry a message alone: ours with its causes, then the fix.
        let report = crate::Report::new(&err).to_string();
        let message = match err.fix() {
            Some(fix) => format!("{report}\nfix: {fix}"),
            None => report,
        };
        match err {
            ResolveError::Io { path, source, .. }
            | ResolveError::LockUnreadable {
                lock: path, source, ..
            }
            | ResolveError::Format {
                source: FormatError::Io { path, source },
                ..
            } => WeightResolveError::ReadFile { path, source },
            ResolveError::Format {
                source: FormatError::Manifest(manifest),
                ..
            } => match manifest {
                ManifestError::Io { path, message } => WeightResolveError::ReadFile {
                    path,
                    source: std::io::Error::other(message),
                },
                ManifestError::Syntax { path, message } => WeightResolveError::ManifestJson {
                    path,
                    source: <serde_json::Error as serde::de::Error>::custom(message),
                },
                _ => WeightResolveError::Manifest(message),
            },
            ResolveError::Format {
                source: FormatError::RangeOutOfBounds { .. },
                ..
            } => WeightResolveError::Manifest(message),
            ResolveError::NoSidecar { .. }
            | ResolveError::NoWeightsGiven { .. }
            | ResolveError::NotFound { .. }
            | ResolveError::NotAFile { .. }
            | ResolveError::NoManifest { .. } => WeightResolveError::Missing(message),
            ResolveError::RangeOutOfBounds { .. } => WeightResolveError::Manifest(message),
            ResolveError::MissingTensor { ref sidecar, .. }
            | ResolveError::AmbiguousTensor { ref sidecar, .. }
            | ResolveError::DataTypeMismatch { ref sidecar, .. }
            | ResolveError::ShapeMismatch { ref sidecar, .. }
            | ResolveError::LengthMismatch { ref sidecar, .. }
                if SidecarFormat::of_path(sidecar) == SidecarFormat::Blob =>
            {
                WeightResolveError::Manifest(message)
            }
            _ => WeightResolveError::Safetensors(message),
        }
    }
}

/// A graph that [`GraphJson::try_into_webnn_graph`] refused: some of its constants are still
/// `@weights` references. Names every one (with its reference, in the graph's order of
/// constants) and gives the graph back ([`into_graph`](Self::into_graph)) to be resolved.
///
/// Its message names the graph, the first 20 constants and how many more there are, then the
/// fix; its `Debug` form is the message's facts, not the graph's bytes.
pub struct UnresolvedWeights {
    /// `(constant, reference)`, by constant name.
    constants: Vec<(String, String)>,
    graph: Box<GraphJson>,
}

impl UnresolvedWeights {
    /// How many constants the message names before "and N more".
    const LISTED: usize = 20;

    /// Every constant that is still a `@weights` reference, as `(constant, reference)`, in
    /// the graph's order of constants (by name).
    pub fn constants(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.constants
            .iter()
            .map(|(name, reference)| (name.as_str(), reference.as_str()))
    }

    /// The graph, unchanged: resolve it (e.g. with
    /// [`resolve_external_weights`](crate::resolve_external_weights)), then convert again.
    pub fn into_graph(self) -> GraphJson {
        *self.graph
    }
}

impl std::fmt::Display for UnresolvedWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.constants.len();
        match &self.graph.name {
            Some(name) => write!(f, "graph {name:?}: ")?,
            None => write!(f, "graph: ")?,
        }
        write!(
            f,
            "{count} {} and would reach webnn-graph's type unresolved \
             (rustnn's from_graph_json_owned makes such a constant empty): ",
            match count {
                1 => "constant is still a `@weights` reference",
                _ => "constants are still `@weights` references",
            },
        )?;
        for (i, (name, reference)) in self.constants.iter().take(Self::LISTED).enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}`{name}` (@weights({reference:?}))")?;
        }
        if count > Self::LISTED {
            write!(f, " … and {} more", count - Self::LISTED)?;
        }
        write!(
            f,
            "; resolve the graph first: load_graph, GraphLoader or resolve_external_weights"
        )
    }
}

impl std::fmt::Debug for UnresolvedWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnresolvedWeights")
            .field("graph", &self.graph.name)
            .field("constants", &self.constants)
            .finish_non_exhaustive()
    }
}

impl std::error::Error for UnresolvedWeights {}

impl GraphJson {
    /// Converts to `webnn_graph::ast::GraphJson` as `From` does, but only a resolved graph:
    /// one whose constants are all bytes or scalars, what rustnn's
    /// `webnn_json::from_graph_json_owned` computes on. A constant that is still a
    /// `@weights` reference would reach rustnn unresolved and become an empty constant there
    /// (see [the module](crate::webnn_graph_compat)); this returns [`UnresolvedWeights`] instead, naming every
    /// such constant and its reference, with the graph unchanged inside.
    ///
    /// Graphs from [`load_graph`](crate::load_graph), [`GraphLoader`](crate::GraphLoader),
    /// [`resolve_external_weights`](crate::resolve_external_weights) and
    /// [`EmbeddedGraph::to_graph_json`](crate::EmbeddedGraph::to_graph_json) are resolved;
    /// graphs from [`read_graph_file`](crate::read_graph_file),
    /// [`parse_webnn`](crate::parse_webnn) or
    /// [`parse_graph_json`](crate::parse_graph_json) are not until resolved. The check reads
    /// only the constants' kinds: no copy beyond the conversion's own.
    ///
    /// ```
    /// use webnn_weights_runtime::{parse_webnn, resolve_external_weights};
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("model.weights"), [0, 0, 128, 63]).unwrap();
    /// std::fs::write(dir.path().join("model.manifest.json"),
    ///     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":4}}}"#).unwrap();
    /// let graph = parse_webnn(r#"webnn_graph "g" v2 {
    ///   inputs { x: f32[1]; }
    ///   consts { w: f32[1] @weights("w"); }
    ///   nodes { y = mul(x, w); }
    ///   outputs { y; }
    /// }"#).unwrap();
    ///
    /// let err = graph.try_into_webnn_graph().unwrap_err();
    /// assert!(err.to_string().contains("resolve the graph first"), "{err}");
    /// let mut graph = err.into_graph();
    /// resolve_external_weights(&mut graph, &dir.path().join("model.webnn"), None, None).unwrap();
    /// let theirs = graph.try_into_webnn_graph().unwrap();
    /// assert_eq!(theirs.consts["w"].init,
    ///     webnn_graph::ast::ConstInit::InlineBytes { bytes: vec![0, 0, 128, 63] });
    /// ```
    pub fn try_into_webnn_graph(self) -> Result<wg::GraphJson, UnresolvedWeights> {
        let constants: Vec<(String, String)> = self
            .consts
            .iter()
            .filter_map(|(name, decl)| match &decl.init {
                ConstInit::Weights { r#ref } => Some((name.clone(), r#ref.clone())),
                ConstInit::InlineBytes { .. } | ConstInit::Scalar { .. } => None,
            })
            .collect();
        match constants.is_empty() {
            true => Ok(wg::GraphJson::from(self)),
            false => Err(UnresolvedWeights {
                constants,
                graph: Box::new(self),
            }),
        }
    }
}

impl From<GraphJson> for wg::GraphJson {
    /// Moves every field over. A constant's bytes move without a copy when the constant
    /// owns them alone (as [`load_graph`](crate::load_graph) returns them); bytes shared
    /// with another constant or a clone, views of a mapping and `'static` bytes are copied
    /// once, since webnn-graph's constants own a `Vec<u8>`.
    ///
    /// **`@weights` constants pass unresolved**, as `ConstInit::Weights` (the conversion is
    /// lossless, and webnn-graph's own resolver takes them so). rustnn 0.6.0's
    /// `webnn_json::from_graph_json_owned` makes every such constant **empty, without an
    /// error**, so a graph read with [`read_graph_file`](crate::read_graph_file) and
    /// converted this way computes on no weights. Give rustnn resolved graphs
    /// ([`load_graph`](crate::load_graph), [`GraphLoader`](crate::GraphLoader),
    /// [`resolve_external_weights`](crate::resolve_external_weights)), or convert with
    /// [`GraphJson::try_into_webnn_graph`], which refuses an unresolved graph and names
    /// its constants.
    fn from(graph: GraphJson) -> wg::GraphJson {
        wg::GraphJson {
            format: graph.format,
            version: graph.version,
            name: graph.name,
            quantized: graph.quantized,
            inputs: graph
                .inputs
                .into_iter()
                .map(|(name, desc)| (name, operand_to(desc)))
                .collect(),
            consts: graph
                .consts
                .into_iter()
                .map(|(name, decl)| (name, const_to(decl)))
                .collect(),
            nodes: graph.nodes.into_iter().map(node_to).collect(),
            outputs: graph.outputs,
        }
    }
}

impl From<wg::GraphJson> for GraphJson {
    /// Moves every field over; each `Vec<u8>` of inline bytes becomes a [`Bytes`] without a
    /// copy, and node options become [`NodeOptions`](crate::NodeOptions) (sorted by name, as
    /// GraphJson writes them).
    fn from(graph: wg::GraphJson) -> GraphJson {
        GraphJson {
            format: graph.format,
            version: graph.version,
            name: graph.name,
            quantized: graph.quantized,
            inputs: graph
                .inputs
                .into_iter()
                .map(|(name, desc)| (name, operand_from(desc)))
                .collect(),
            consts: graph
                .consts
                .into_iter()
                .map(|(name, decl)| (name, const_from(decl)))
                .collect::<BTreeMap<_, _>>(),
            nodes: graph.nodes.into_iter().map(node_from).collect(),
            outputs: graph.outputs,
        }
    }
}

impl crate::EmbeddedGraph {
    /// The whole graph as a `webnn_graph::ast::GraphJson` (feature `webnn-graph`), every
    /// `@weights` constant replaced by its bytes: what
    /// `webnn_graph::resolve_external_weights` gives for the same files, and what rustnn's
    /// `webnn_json::from_graph_json_owned` takes.
    ///
    /// **Copies the weights once**: webnn-graph's constants own a `Vec<u8>`, so each
    /// constant's bytes are copied out of the binary (or, in run-time mode, out of the kept
    /// mapping). To share the binary's bytes instead, use
    /// [`to_graph_json`](crate::EmbeddedGraph::to_graph_json).
    ///
    /// # Panics
    /// As [`constants`](crate::EmbeddedGraph::constants): only in run-time mode, when the
    /// sidecar cannot be resolved; [`try_to_webnn_graph`](Self::try_to_webnn_graph) returns
    /// that error instead.
    ///
    /// ```ignore
    /// static MODEL: webnn_weights_runtime::EmbeddedGraph =
    ///     webnn_weights_runtime::include_webnn_graph!("models/model.webnn");
    /// let graph: webnn_graph::ast::GraphJson = MODEL.to_webnn_graph();
    /// let compiled = rustnn::webnn_json::from_graph_json_owned(graph)?;
    /// ```
    pub fn to_webnn_graph(&'static self) -> wg::GraphJson {
        match self.try_to_webnn_graph() {
            Ok(graph) => graph,
            Err(err) => panic!("{}", crate::Report::new(&err)),
        }
    }

    /// See [`to_webnn_graph`](Self::to_webnn_graph); fails only in run-time mode, when the
    /// sidecar cannot be resolved.
    pub fn try_to_webnn_graph(&'static self) -> Result<wg::GraphJson, crate::EmbedError> {
        self.try_to_graph_json().map(wg::GraphJson::from)
    }
}

fn data_type_to(data_type: DataType) -> wg::DataType {
    match data_type {
        DataType::Float32 => wg::DataType::Float32,
        DataType::Float16 => wg::DataType::Float16,
        DataType::Int4 => wg::DataType::Int4,
        DataType::Uint4 => wg::DataType::Uint4,
        DataType::Int32 => wg::DataType::Int32,
        DataType::Uint32 => wg::DataType::Uint32,
        DataType::Int64 => wg::DataType::Int64,
        DataType::Uint64 => wg::DataType::Uint64,
        DataType::Int8 => wg::DataType::Int8,
        DataType::Uint8 => wg::DataType::Uint8,
    }
}

fn data_type_from(data_type: &wg::DataType) -> DataType {
    match data_type {
        wg::DataType::Float32 => DataType::Float32,
        wg::DataType::Float16 => DataType::Float16,
        wg::DataType::Int4 => DataType::Int4,
        wg::DataType::Uint4 => DataType::Uint4,
        wg::DataType::Int32 => DataType::Int32,
        wg::DataType::Uint32 => DataType::Uint32,
        wg::DataType::Int64 => DataType::Int64,
        wg::DataType::Uint64 => DataType::Uint64,
        wg::DataType::Int8 => DataType::Int8,
        wg::DataType::Uint8 => DataType::Uint8,
    }
}

fn operand_to(desc: OperandDesc) -> wg::OperandDesc {
    wg::OperandDesc {
        data_type: data_type_to(desc.data_type),
        shape: desc
            .shape
            .into_iter()
            .map(|dim| match dim {
                Dimension::Static(size) => wg::Dimension::Static(size),
                Dimension::Dynamic { name, max_size } => {
                    wg::Dimension::Dynamic(wg::DynamicDimension { name, max_size })
                }
            })
            .collect(),
    }
}

fn operand_from(desc: wg::OperandDesc) -> OperandDesc {
    OperandDesc {
        data_type: data_type_from(&desc.data_type),
        shape: desc
            .shape
            .into_iter()
            .map(|dim| match dim {
                wg::Dimension::Static(size) => Dimension::Static(size),
                wg::Dimension::Dynamic(wg::DynamicDimension { name, max_size }) => {
                    Dimension::Dynamic { name, max_size }
                }
            })
            .collect(),
    }
}

fn const_to(decl: ConstDecl) -> wg::ConstDecl {
    wg::ConstDecl {
        data_type: data_type_to(decl.data_type),
        shape: decl.shape,
        init: match decl.init {
            ConstInit::Weights { r#ref } => wg::ConstInit::Weights { r#ref },
            ConstInit::Scalar { value } => wg::ConstInit::Scalar { value },
            // Without a copy when the buffer is a `Vec` this constant owns alone.
            ConstInit::InlineBytes { bytes } => wg::ConstInit::InlineBytes {
                bytes: Vec::from(bytes),
            },
        },
    }
}

fn const_from(decl: wg::ConstDecl) -> ConstDecl {
    ConstDecl {
        data_type: data_type_from(&decl.data_type),
        shape: decl.shape,
        init: match decl.init {
            wg::ConstInit::Weights { r#ref } => ConstInit::Weights { r#ref },
            wg::ConstInit::Scalar { value } => ConstInit::Scalar { value },
            wg::ConstInit::InlineBytes { bytes } => ConstInit::InlineBytes {
                bytes: Bytes::from(bytes),
            },
        },
    }
}

fn node_to(node: Node) -> wg::Node {
    wg::Node {
        id: node.id.into(),
        op: node.op.into(),
        inputs: node.inputs.into_iter().map(String::from).collect(),
        options: node.options.into(),
        outputs: node
            .outputs
            .map(|outputs| outputs.into_iter().map(String::from).collect()),
    }
}

fn node_from(node: wg::Node) -> Node {
    Node {
        id: node.id.into(),
        op: node.op.into(),
        inputs: node.inputs.into_iter().map(Into::into).collect(),
        options: node.options.into(),
        outputs: node
            .outputs
            .map(|outputs| outputs.into_iter().map(Into::into).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph_with(consts: &[(&str, ConstInit)]) -> GraphJson {
        let mut graph = GraphJson::new(Some("g".into()));
        for (name, init) in consts {
            graph.consts.insert(
                name.to_string(),
                ConstDecl {
                    data_type: DataType::Uint8,
                    shape: vec![2],
                    init: init.clone(),
                },
            );
        }
        graph
    }

    fn weights(reference: &str) -> ConstInit {
        ConstInit::Weights {
            r#ref: reference.into(),
        }
    }

    #[test]
    fn the_checked_conversion_refuses_unresolved_constants_naming_each() {
        let inline = ConstInit::InlineBytes {
            bytes: Bytes::from_static(&[1, 2]),
        };
        let scalar = ConstInit::Scalar { value: 1.into() };
        let graph = graph_with(&[
            ("b", weights("layer.b")),
            ("a", weights("layer.a")),
            ("c", inline),
            ("d", scalar),
        ]);

        // The unchecked `From` hands the references over as they are: the trap.
        let theirs = wg::GraphJson::from(graph.clone());
        assert!(matches!(
            theirs.consts["a"].init,
            wg::ConstInit::Weights { .. }
        ));

        let err = graph.clone().try_into_webnn_graph().unwrap_err();
        assert_eq!(
            err.constants().collect::<Vec<_>>(),
            [("a", "layer.a"), ("b", "layer.b")]
        );
        assert_eq!(
            err.to_string(),
            "graph \"g\": 2 constants are still `@weights` references and would reach \
             webnn-graph's type unresolved (rustnn's from_graph_json_owned makes such a \
             constant empty): `a` (@weights(\"layer.a\")), `b` (@weights(\"layer.b\")); \
             resolve the graph first: load_graph, GraphLoader or resolve_external_weights"
        );
        // Debug names the constants, not the bytes.
        let debug = format!("{err:?}");
        assert!(
            debug.contains("layer.a") && !debug.contains("InlineBytes"),
            "{debug}"
        );
        // The graph comes back unchanged.
        assert_eq!(err.into_graph(), graph);
    }

    #[test]
    fn the_checked_conversion_passes_a_resolved_graph_as_from_does() {
        let graph = graph_with(&[
            (
                "a",
                ConstInit::InlineBytes {
                    bytes: Bytes::from(vec![3u8, 4]),
                },
            ),
            ("s", ConstInit::Scalar { value: 2.into() }),
        ]);
        let checked = graph.clone().try_into_webnn_graph().unwrap();
        assert_eq!(
            serde_json::to_value(&checked).unwrap(),
            serde_json::to_value(wg::GraphJson::from(graph)).unwrap()
        );
        // No constants at all: nothing to refuse.
        assert!(GraphJson::new(None).try_into_webnn_graph().is_ok());
    }

    #[test]
    fn the_message_lists_twenty_constants_then_counts_the_rest() {
        let names: Vec<String> = (0..23).map(|i| format!("w{i:02}")).collect();
        let consts: Vec<(&str, ConstInit)> =
            names.iter().map(|n| (n.as_str(), weights(n))).collect();
        let mut graph = graph_with(&consts);
        graph.name = None;
        let err = graph.try_into_webnn_graph().unwrap_err();
        assert_eq!(err.constants().len(), 23);
        let message = err.to_string();
        assert!(
            message.starts_with("graph: 23 constants are still"),
            "{message}"
        );
        assert!(
            message.contains("`w19` (@weights(\"w19\")) … and 3 more;"),
            "{message}"
        );
        assert!(!message.contains("`w20`"), "{message}");

        let one = graph_with(&[("w", weights("w"))]).try_into_webnn_graph();
        let message = one.unwrap_err().to_string();
        assert!(
            message.contains("graph \"g\": 1 constant is still a `@weights` reference and"),
            "{message}"
        );
    }

    #[test]
    fn every_data_type_maps_both_ways() {
        for data_type in DataType::ALL {
            assert_eq!(data_type_from(&data_type_to(data_type)), data_type);
            // The same JSON spelling on both sides.
            assert_eq!(
                serde_json::to_value(data_type_to(data_type)).unwrap(),
                serde_json::to_value(data_type).unwrap()
            );
        }
    }

    #[test]
    fn owned_bytes_move_and_shared_bytes_are_copied() {
        let owned = Bytes::from(vec![1u8, 2, 3, 4]);
        let at = owned.as_ptr();
        let decl = |bytes: Bytes| ConstDecl {
            data_type: DataType::Uint8,
            shape: vec![4],
            init: ConstInit::InlineBytes { bytes },
        };
        let moved = const_to(decl(owned));
        let wg::ConstInit::InlineBytes { bytes } = &moved.init else {
            unreachable!()
        };
        assert_eq!(bytes.as_ptr(), at, "a buffer owned alone moves");

        let shared = Bytes::from(vec![5u8, 6, 7, 8]);
        let keep = shared.clone();
        let copied = const_to(decl(shared));
        let wg::ConstInit::InlineBytes { bytes } = &copied.init else {
            unreachable!()
        };
        assert_ne!(bytes.as_ptr(), keep.as_ptr(), "a shared buffer is copied");
        assert_eq!(bytes[..], keep[..]);

        let back = const_from(copied);
        let ConstInit::InlineBytes { bytes: back } = &back.init else {
            unreachable!()
        };
        let wg_at = {
            let wg::ConstInit::InlineBytes { bytes } = &moved.init else {
                unreachable!()
            };
            bytes.as_ptr()
        };
        assert_eq!(back[..], keep[..]);
        let moved_back = const_from(moved);
        let ConstInit::InlineBytes { bytes } = &moved_back.init else {
            unreachable!()
        };
        assert_eq!(bytes.as_ptr(), wg_at, "a Vec becomes Bytes without a copy");
    }
}
