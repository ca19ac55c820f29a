//! Planning: find the sidecar, read its header or manifest, check every rule, and record
//! for each external constant where its bytes are and how to convert them.

use super::error::{ResolveError, Stamp};
use super::{blob, discover, names, safetensors as st};
use crate::dtype::DataType;
use crate::graph::{ConstInit, GraphJson};
use std::path::{Path, PathBuf};

/// Which kind of sidecar a plan reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SidecarKind {
    /// A SafeTensors archive (`.safetensors` / `.safetensor`, any letter case).
    SafeTensors,
    /// A raw `.weights` blob addressed by a JSON manifest.
    Blob {
        /// The manifest that addresses the blob.
        manifest: PathBuf,
    },
}

/// The sidecar file a plan reads, as it was when planned.
#[derive(Debug, Clone)]
pub struct Sidecar {
    /// The file (explicit paths already joined to the graph's folder).
    pub path: PathBuf,
    /// Archive or blob.
    pub kind: SidecarKind,
    /// The file's size in bytes when planned.
    pub len: u64,
    pub(crate) stamp: Stamp,
}

/// How planned bytes become resolved bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// The stored bytes are the resolved bytes.
    None,
    /// Stored BF16 values are widened to little-endian F32 (a `float32` declaration
    /// served by a `BF16` tensor).
    Bf16ToF32,
}

/// One external constant of a plan: where its bytes are and what they become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedConstant {
    /// The constant's name in the graph.
    pub name: String,
    /// Its `@weights` reference.
    pub reference: String,
    /// The stored tensor (or manifest entry) name the reference resolved to.
    pub stored_name: String,
    /// The declared logical type.
    pub data_type: DataType,
    /// The declared shape.
    pub shape: Vec<u32>,
    /// Absolute offset of the stored bytes in the sidecar file.
    pub offset: u64,
    /// Number of stored bytes.
    pub stored_length: u64,
    /// Number of resolved bytes (the declaration's byte size).
    pub length: u64,
    /// The conversion from stored to resolved bytes.
    pub conversion: Conversion,
}

/// The result of planning: the sidecar, and for every external constant its range.
///
/// Made by [`plan_external_weights`]; materialized by [`WeightPlan::read_constant`],
/// [`WeightPlan::copy_constant`] or [`WeightPlan::materialize`].
#[derive(Debug, Clone)]
pub struct WeightPlan {
    pub(crate) graph: PathBuf,
    pub(crate) sidecar: Option<Sidecar>,
    pub(crate) constants: Vec<PlannedConstant>,
    pub(crate) watched: Vec<PathBuf>,
}

impl WeightPlan {
    /// The graph file this plan was made for.
    pub fn graph_path(&self) -> &Path {
        &self.graph
    }

    /// The sidecar; `None` when the graph has no `@weights` constants (then no file was
    /// touched).
    pub fn sidecar(&self) -> Option<&Sidecar> {
        self.sidecar.as_ref()
    }

    /// One entry per `@weights` constant, sorted by constant name.
    pub fn constants(&self) -> &[PlannedConstant] {
        &self.constants
    }

    /// The planned constant named `name`, if it is external.
    pub fn constant(&self, name: &str) -> Option<&PlannedConstant> {
        self.constants
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.constants.get(i))
    }

    /// Every path whose existence or contents could change the result: each discovery
    /// candidate examined (existing or not, in order), each manifest candidate examined,
    /// and the chosen sidecar and manifest. Empty when the graph has no `@weights`.
    pub fn watched_paths(&self) -> Vec<PathBuf> {
        self.watched.clone()
    }
}

/// Plans the resolution of `graph`'s `@weights` constants without reading any tensor byte.
///
/// `graph_path` is the graph's file: discovery looks beside it and explicit `weights` /
/// `manifest` paths are relative to its folder (absolute paths are used as given). Every
/// rule of the format is checked here: discovery, names, data types, shapes, the packed
/// 4-bit marker and storage, ranges against the file size, lengths against the
/// declarations, and the byte length of inline constants.
///
/// ```
/// use std::path::Path;
/// use webnn_weights_runtime::{plan_external_weights, GraphJson};
/// // A graph without @weights constants plans without touching any file.
/// let graph = GraphJson::new(None);
/// let plan = plan_external_weights(&graph, Path::new("no/such/model.webnn"), None, None).unwrap();
/// assert!(plan.sidecar().is_none());
/// assert!(plan.constants().is_empty());
/// ```
pub fn plan_external_weights(
    graph: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Result<WeightPlan, ResolveError> {
    let mut requests = Vec::new();
    for (name, decl) in &graph.consts {
        match &decl.init {
            ConstInit::Weights { r#ref } => {
                let length = decl
                    .byte_length()
                    .filter(|&n| usize::try_from(n).is_ok())
                    .ok_or_else(|| ResolveError::SizeOverflow {
                        graph: graph_path.to_path_buf(),
                        constant: name.clone(),
                        reference: Some(r#ref.clone()),
                        data_type: decl.data_type,
                        shape: decl.shape.clone(),
                    })?;
                requests.push(Request {
                    name,
                    reference: r#ref,
                    data_type: decl.data_type,
                    shape: &decl.shape,
                    length,
                });
            }
            ConstInit::InlineBytes { bytes } => {
                let expected = decl
                    .byte_length()
                    .ok_or_else(|| ResolveError::SizeOverflow {
                        graph: graph_path.to_path_buf(),
                        constant: name.clone(),
                        reference: None,
                        data_type: decl.data_type,
                        shape: decl.shape.clone(),
                    })?;
                let found = bytes.len() as u64;
                if found != expected {
                    return Err(ResolveError::InlineLength {
                        graph: graph_path.to_path_buf(),
                        constant: name.clone(),
                        data_type: decl.data_type,
                        shape: decl.shape.clone(),
                        expected,
                        found,
                    });
                }
            }
            ConstInit::Scalar { .. } => {}
        }
    }
    let mut plan = WeightPlan {
        graph: graph_path.to_path_buf(),
        sidecar: None,
        constants: Vec::new(),
        watched: Vec::new(),
    };
    let Some(first) = requests.first() else {
        return Ok(plan);
    };

    let ctx = discover::Context::new(graph_path);
    let found = ctx.find_sidecar(weights, &mut plan.watched, first.name, first.reference)?;
    let source = if discover::is_safetensors(&found) {
        st::read_header(&ctx, &found)?
    } else {
        let manifest_path = ctx.find_manifest(manifest, &found, &mut plan.watched)?;
        blob::read_manifest(&ctx, &found, &manifest_path)?
    };
    // `requests` follows the BTreeMap, so constants come out sorted by name.
    let index = names::Index::new(&source.tensors);
    for request in &requests {
        let stored = index
            .lookup(request.reference)
            .map_err(|candidates| names::lookup_error(&ctx, &source, request, candidates))?;
        plan.constants.push(source.check(&ctx, request, stored)?);
    }
    plan.sidecar = Some(source.sidecar);
    Ok(plan)
}

/// What the graph asks of one external constant.
pub(crate) struct Request<'g> {
    pub name: &'g str,
    pub reference: &'g str,
    pub data_type: DataType,
    pub shape: &'g [u32],
    /// The declaration's byte size (checked, fits `usize`).
    pub length: u64,
}
