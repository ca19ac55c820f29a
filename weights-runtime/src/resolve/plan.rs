//! Planning: adds the graph to the readers and rules. Finds the sidecar (discovery),
//! reads its catalog, turns every `@weights` constant into a request, checks it by the
//! rules and records its file, range and conversion; errors get the graph's context.

use super::discover::Context;
use super::error::ResolveError;
use super::model::{PlannedConstant, Sidecar, SidecarKind, WeightPlan};
use super::rules::{self, Ask, Broken, Index};
use crate::graph::dtype::DataType;
use crate::graph::{ConstInit, GraphJson};
use crate::sidecar::formats::sharded::ShardIndex;
use crate::sidecar::formats::{self, Catalog, FormatError, SidecarFormat};
use crate::sidecar::StoredFile;
use std::path::{Path, PathBuf};

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
    let requests = requests(graph, graph_path)?;
    plan_requests(&requests, graph_path, weights, manifest)
}

/// Plans `requests` (see [`requests_of`]) against the sidecar that discovery or the
/// explicit paths give: [`plan_external_weights`] without the graph model.
pub(crate) fn plan_requests(
    requests: &[Request<'_>],
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Result<WeightPlan, ResolveError> {
    let mut watched = Vec::new();
    let Some(first) = requests.first() else {
        return Ok(empty_plan(graph_path, watched));
    };
    let ctx = Context::new(graph_path);
    let found = ctx.find_sidecar(weights, &mut watched, first.name, first.reference)?;
    let catalog = match SidecarFormat::of_path(&found) {
        SidecarFormat::SafeTensors => Catalog::read_safetensors(&found),
        SidecarFormat::ShardedSafeTensors => {
            let index = ShardIndex::read(&found).map_err(|e| format_error(graph_path, e))?;
            return plan_sharded(graph_path, &index, requests, watched, |wanted| {
                index.open(wanted)
            });
        }
        SidecarFormat::Blob => {
            let manifest_path = ctx.find_manifest(manifest, &found, &mut watched)?;
            Catalog::read_blob(&found, &manifest_path)
        }
    }
    .map_err(|e| format_error(graph_path, e))?;
    plan_catalog(graph_path, &found, catalog, requests, watched)
}

/// A plan of a graph without `@weights` constants.
pub(crate) fn empty_plan(graph_path: &Path, watched: Vec<PathBuf>) -> WeightPlan {
    WeightPlan {
        graph: graph_path.to_path_buf(),
        sidecar: None,
        files: Vec::new(),
        constants: Vec::new(),
        watched,
        lock: None,
    }
}

/// Checks every request against `catalog` (read from the sidecar `found`) and plans it.
pub(crate) fn plan_catalog(
    graph_path: &Path,
    found: &Path,
    catalog: Catalog,
    requests: &[Request<'_>],
    watched: Vec<PathBuf>,
) -> Result<WeightPlan, ResolveError> {
    let index = Index::new(catalog.tensors());
    let mut errors = Errors::new(graph_path);
    let chosen: Vec<Option<usize>> = requests
        .iter()
        .map(|request| {
            rules::lookup(&index, request.reference)
                .map_err(|b| errors.push(broken(graph_path, &catalog, request, (b, None))))
                .ok()
        })
        .collect();
    let len = catalog
        .files()
        .iter()
        .find(|f| f.path() == found)
        .map_or(0, |f| f.len());
    let kind = match catalog.format() {
        SidecarFormat::Blob => SidecarKind::Blob {
            manifest: catalog.names_file().to_path_buf(),
        },
        SidecarFormat::ShardedSafeTensors => SidecarKind::ShardedSafeTensors,
        SidecarFormat::SafeTensors => SidecarKind::SafeTensors,
    };
    let sidecar = Sidecar {
        path: found.to_path_buf(),
        kind,
        len,
    };
    plan_chosen(
        graph_path, sidecar, &catalog, requests, &chosen, watched, errors,
    )
}

/// Plans `requests` against a sharded archive: names are looked up over the union of the
/// index's `weight_map` (exact first, then normalized, ambiguity over all shards), then
/// `open` reads the headers of just the shards holding a requested tensor (indices into
/// [`formats::sharded::ShardIndex::shards`]), and every request is checked against its
/// shard's header.
pub(crate) fn plan_sharded(
    graph_path: &Path,
    index: &formats::sharded::ShardIndex,
    requests: &[Request<'_>],
    watched: Vec<PathBuf>,
    open: impl FnOnce(&[usize]) -> Result<Catalog, FormatError>,
) -> Result<WeightPlan, ResolveError> {
    let entries: Vec<(&str, usize)> = index.entries().collect();
    let names = Index::of_names(entries.iter().map(|&(n, _)| n));
    let mut errors = Errors::new(graph_path);
    let mut stored_names = Vec::with_capacity(requests.len());
    let mut wanted = Vec::new();
    for request in requests {
        match rules::lookup(&names, request.reference) {
            Ok(i) => {
                let (name, shard) = entries[i];
                stored_names.push(Some(name));
                wanted.push(shard);
            }
            Err(b) => {
                errors.push(broken_in(graph_path, index.path(), &[], request, (b, None)));
                stored_names.push(None);
            }
        }
    }
    let catalog = open(&wanted).map_err(|e| format_error(graph_path, e))?;
    let positions: std::collections::HashMap<&str, usize> = catalog
        .tensors()
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name(), i))
        .collect();
    let mut chosen = Vec::with_capacity(requests.len());
    for (request, name) in requests.iter().zip(&stored_names) {
        let Some(name) = name else {
            chosen.push(None);
            continue;
        };
        // `open` checked that every entry of an opened shard is in its header.
        let i = positions
            .get(name)
            .copied()
            .ok_or_else(|| ResolveError::NotInPlan {
                graph: graph_path.to_path_buf(),
                constant: request.name.to_string(),
            })?;
        chosen.push(Some(i));
    }
    let sidecar = Sidecar {
        path: index.path().to_path_buf(),
        kind: SidecarKind::ShardedSafeTensors,
        len: index.len(),
    };
    plan_chosen(
        graph_path, sidecar, &catalog, requests, &chosen, watched, errors,
    )
}

/// Checks every request against the stored tensor chosen for it (`chosen[i]`, an index
/// into `catalog.tensors()`; `None` where the lookup failed, already in `errors`) and
/// plans it; fails with every error found, in the order of the requests.
fn plan_chosen(
    graph_path: &Path,
    sidecar: Sidecar,
    catalog: &Catalog,
    requests: &[Request<'_>],
    chosen: &[Option<usize>],
    watched: Vec<PathBuf>,
    mut errors: Errors,
) -> Result<WeightPlan, ResolveError> {
    let files: Vec<StoredFile> = catalog.files().to_vec();
    let mut constants = Vec::with_capacity(requests.len());
    // `requests` follows the BTreeMap, so constants come out sorted by name.
    for (request, &i) in requests.iter().zip(chosen) {
        let Some(i) = i else { continue };
        let broken = |b| broken(graph_path, catalog, request, b);
        let stored = &catalog.tensors()[i];
        let ask = Ask {
            data_type: request.data_type,
            shape: request.shape,
            length: request.length,
        };
        let conversion = match rules::check(catalog, stored, &ask) {
            Ok(conversion) => conversion,
            Err(b) => {
                errors.push(broken((b, Some(stored))));
                continue;
            }
        };
        let file = files
            .get(stored.file())
            .ok_or_else(|| ResolveError::NotInPlan {
                graph: graph_path.to_path_buf(),
                constant: request.name.to_string(),
            })?;
        constants.push(PlannedConstant {
            name: request.name.to_string(),
            reference: request.reference.to_string(),
            stored_name: stored.name().to_string(),
            data_type: request.data_type,
            shape: request.shape.to_vec(),
            file: file.path().to_path_buf(),
            offset: stored.offset(),
            stored_length: stored.length(),
            length: request.length,
            conversion,
            file_index: stored.file(),
        });
    }
    errors.into_result()?;
    Ok(WeightPlan {
        graph: graph_path.to_path_buf(),
        sidecar: Some(sidecar),
        files,
        constants,
        watched,
        lock: None,
    })
}

/// A reader's error with the graph's context: wrapped whole, so that it keeps its type
/// (matched as `ResolveError::Format { source: FormatError::.., .. }`).
pub(crate) fn format_error(graph: &Path, source: FormatError) -> ResolveError {
    ResolveError::Format {
        graph: graph.to_path_buf(),
        source,
    }
}

/// A rule's verdict with the graph's context.
fn broken(
    graph: &Path,
    catalog: &Catalog,
    request: &Request<'_>,
    verdict: (Broken, Option<&formats::StoredTensor>),
) -> ResolveError {
    broken_in(
        graph,
        catalog.names_file(),
        catalog.files(),
        request,
        verdict,
    )
}

/// A rule's verdict with the graph's context: `names_file` holds the stored names (the
/// archive, the manifest or the sharded index), `files` the tensors' bytes.
fn broken_in(
    graph: &Path,
    names_file: &Path,
    files: &[StoredFile],
    request: &Request<'_>,
    (b, stored): (Broken, Option<&formats::StoredTensor>),
) -> ResolveError {
    let at = Culprit {
        graph: graph.to_path_buf(),
        constant: request.name.to_string(),
        reference: request.reference.to_string(),
        stored_name: stored.map(|s| s.name().to_string()).unwrap_or_default(),
        sidecar: stored
            .and_then(|s| files.get(s.file()))
            .map(|f| f.path().to_path_buf())
            .unwrap_or_default(),
    };
    let names_file = names_file.to_path_buf();
    match b {
        Broken::Missing { available, total } => ResolveError::MissingTensor {
            graph: at.graph,
            constant: at.constant,
            reference: at.reference,
            sidecar: names_file,
            available,
            available_total: total,
        },
        Broken::Ambiguous { candidates } => ResolveError::AmbiguousTensor {
            graph: at.graph,
            constant: at.constant,
            reference: at.reference,
            sidecar: names_file,
            candidates,
        },
        Broken::DataType { expected, found } => at.data_type(request.data_type, expected, found),
        Broken::Shape {
            expected,
            found,
            why,
        } => at.shape(request.data_type, expected, found, why),
        Broken::PackedMarker { found } => at.packed_marker(request.data_type, found),
        Broken::Range { file_len } => at.range(names_file, stored, file_len),
        Broken::Length { expected } => at.length(names_file, request, stored, expected),
    }
}

/// The constant a broken stored tensor was planned for, and where that tensor is: what
/// every error about a found tensor names.
struct Culprit {
    graph: PathBuf,
    constant: String,
    reference: String,
    /// The stored tensor's name (empty when none was found).
    stored_name: String,
    /// The file that holds it (empty when none was found).
    sidecar: PathBuf,
}

impl Culprit {
    fn data_type(self, declared: DataType, expected: String, found: String) -> ResolveError {
        ResolveError::DataTypeMismatch {
            graph: self.graph,
            constant: self.constant,
            reference: self.reference,
            stored_name: self.stored_name,
            sidecar: self.sidecar,
            declared,
            expected,
            found,
        }
    }

    fn shape(
        self,
        declared: DataType,
        expected: Vec<u64>,
        found: Vec<u64>,
        why: &'static str,
    ) -> ResolveError {
        ResolveError::ShapeMismatch {
            declared,
            graph: self.graph,
            constant: self.constant,
            reference: self.reference,
            stored_name: self.stored_name,
            sidecar: self.sidecar,
            expected,
            found,
            why: why.to_string(),
        }
    }

    fn packed_marker(self, declared: DataType, found: Option<String>) -> ResolveError {
        ResolveError::PackedMarker {
            graph: self.graph,
            constant: self.constant,
            reference: self.reference,
            sidecar: self.sidecar,
            declared,
            found,
        }
    }

    fn range(
        self,
        manifest: PathBuf,
        stored: Option<&formats::StoredTensor>,
        file_len: u64,
    ) -> ResolveError {
        ResolveError::RangeOutOfBounds {
            graph: self.graph,
            constant: self.constant,
            reference: self.reference,
            stored_name: self.stored_name,
            sidecar: self.sidecar,
            manifest,
            offset: stored.map_or(0, |s| s.offset()),
            length: stored.map_or(0, |s| s.length()),
            file_len,
        }
    }

    fn length(
        self,
        names_file: PathBuf,
        request: &Request<'_>,
        stored: Option<&formats::StoredTensor>,
        expected: u64,
    ) -> ResolveError {
        ResolveError::LengthMismatch {
            graph: self.graph,
            constant: self.constant,
            reference: self.reference,
            stored_name: self.stored_name,
            sidecar: names_file,
            data_type: request.data_type,
            shape: request.shape.to_vec(),
            expected,
            found: stored.map_or(0, |s| s.length()),
        }
    }
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

/// What planning needs of one constant declaration, whichever graph model holds it (ours,
/// or webnn-graph's through the bridge).
pub(crate) struct Declared<'g> {
    pub name: &'g str,
    pub data_type: DataType,
    pub shape: &'g [u32],
    pub init: DeclaredInit<'g>,
}

/// A declaration's initializer as planning sees it.
pub(crate) enum DeclaredInit<'g> {
    /// `@weights("ref")`.
    Weights(&'g str),
    /// Inline bytes of this length.
    Inline(u64),
    /// A scalar (no bytes to check).
    Scalar,
}

/// One request per `@weights` constant of `graph` (sorted by name); inline constants' byte
/// lengths are checked against their declarations.
pub(crate) fn requests<'g>(
    graph: &'g GraphJson,
    graph_path: &Path,
) -> Result<Vec<Request<'g>>, ResolveError> {
    requests_of(
        graph.consts.iter().map(|(name, decl)| Declared {
            name,
            data_type: decl.data_type,
            shape: &decl.shape,
            init: match &decl.init {
                ConstInit::Weights { r#ref } => DeclaredInit::Weights(r#ref),
                ConstInit::InlineBytes { bytes } => DeclaredInit::Inline(bytes.len() as u64),
                ConstInit::Scalar { .. } => DeclaredInit::Scalar,
            },
        }),
        graph_path,
    )
}

/// One request per `@weights` declaration, in the order given (callers give them sorted by
/// name); inline declarations' byte lengths are checked against their types and shapes.
pub(crate) fn requests_of<'g>(
    declared: impl IntoIterator<Item = Declared<'g>>,
    graph_path: &Path,
) -> Result<Vec<Request<'g>>, ResolveError> {
    let mut requests = Vec::new();
    let mut errors = Errors::new(graph_path);
    for Declared {
        name,
        data_type,
        shape,
        init,
    } in declared
    {
        let byte_length = data_type.byte_length(shape);
        let overflow = |reference: Option<&str>| ResolveError::SizeOverflow {
            graph: graph_path.to_path_buf(),
            constant: name.to_string(),
            reference: reference.map(str::to_string),
            data_type,
            shape: shape.to_vec(),
        };
        match init {
            DeclaredInit::Weights(reference) => {
                let Some(length) = byte_length.filter(|&n| usize::try_from(n).is_ok()) else {
                    errors.push(overflow(Some(reference)));
                    continue;
                };
                requests.push(Request {
                    name,
                    reference,
                    data_type,
                    shape,
                    length,
                });
            }
            DeclaredInit::Inline(found) => {
                let Some(expected) = byte_length else {
                    errors.push(overflow(None));
                    continue;
                };
                if found != expected {
                    errors.push(ResolveError::InlineLength {
                        graph: graph_path.to_path_buf(),
                        constant: name.to_string(),
                        data_type,
                        shape: shape.to_vec(),
                        expected,
                        found,
                    });
                }
            }
            DeclaredInit::Scalar => {}
        }
    }
    errors.into_result()?;
    Ok(requests)
}

/// The errors of one planning step: none, one (returned as it is), or several
/// ([`ResolveError::Several`], in the graph's order of constants, the first
/// [`Errors::KEPT`] kept and the rest counted).
pub(crate) struct Errors {
    graph: PathBuf,
    found: Vec<ResolveError>,
}

impl Errors {
    /// How many errors are kept for the message.
    pub const KEPT: usize = 20;

    pub fn new(graph: &Path) -> Errors {
        Errors {
            graph: graph.to_path_buf(),
            found: Vec::new(),
        }
    }

    pub fn push(&mut self, error: ResolveError) {
        self.found.push(error);
    }

    pub fn into_result(mut self) -> Result<(), ResolveError> {
        let total = self.found.len();
        match total {
            0 => Ok(()),
            1 => Err(self.found.remove(0)),
            _ => {
                // Constants are planned by name (the graph's map), looked up before they
                // are checked: sorting (stably) by constant restores the graph's order.
                self.found.sort_by(|a, b| a.constant().cmp(&b.constant()));
                self.found.truncate(Self::KEPT);
                Err(ResolveError::Several {
                    graph: self.graph,
                    errors: self.found,
                    total,
                })
            }
        }
    }
}
