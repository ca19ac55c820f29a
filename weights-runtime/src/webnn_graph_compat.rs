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
//! | our [`GraphJson`] | `webnn_graph::ast::GraphJson` | `From`: lossless; bytes a constant owns alone move without a copy, shared, mapped or `'static` bytes are copied once |
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

impl From<GraphJson> for wg::GraphJson {
    /// Moves every field over. A constant's bytes move without a copy when the constant
    /// owns them alone (as [`load_graph`](crate::load_graph) returns them); bytes shared
    /// with another constant or a clone, views of a mapping and `'static` bytes are copied
    /// once, since webnn-graph's constants own a `Vec<u8>`.
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
