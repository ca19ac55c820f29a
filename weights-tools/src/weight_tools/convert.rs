//! Graph-level tools on top of the resolver: inlining a blob, converting to SafeTensors.

use super::{BlobLayout, Progress, Staging, ToolError};
use crate::{write_external_weights_safetensors, write_external_weights_safetensors_sharded};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::manifest::Manifest;
use webnn_weights_runtime::{plan_external_weights, ConstInit, GraphJson, SidecarKind, WeightPlan};

/// A path given on the command line (relative to the working directory) made absolute,
/// so that the resolver does not take it relative to the graph's folder.
fn from_cwd(path: &Path) -> Result<PathBuf, ToolError> {
    std::path::absolute(path).map_err(|e| ToolError::io(path, e))
}

/// Validates the WGWT header of a plan's blob sidecar when it has one ([`BlobLayout`]).
fn check_blob_header(plan: &WeightPlan) -> Result<(), ToolError> {
    if let Some(sidecar) = plan.sidecar() {
        if let SidecarKind::Blob { manifest } = &sidecar.kind {
            let parsed = Manifest::read(manifest)?;
            let file = File::open(&sidecar.path).map_err(|e| ToolError::io(&sidecar.path, e))?;
            BlobLayout::detect(
                &file,
                &sidecar.path,
                sidecar.len,
                parsed
                    .tensors
                    .iter()
                    .map(|e| (e.byte_offset, e.byte_length)),
            )?;
        }
    }
    Ok(())
}

/// `inline-weights`: `graph` with every `@weights` constant replaced by its bytes from
/// the blob `weights` addressed by `manifest` (paths relative to the working directory,
/// as with `webnn-graph`).
///
/// Resolution follows the format (exact names, then the normalized fallback; each
/// constant's length checked against its declaration, 4-bit types packed). Offsets are
/// absolute, so WGWT and headerless blobs both work; a WGWT header, when present (see
/// [`BlobLayout`]), must be version 1. Only the referenced ranges are read. A SafeTensors
/// path for `weights` works too (the manifest is then ignored, as in the format).
pub fn inline_weights(
    graph: &GraphJson,
    graph_path: &Path,
    weights: &Path,
    manifest: &Path,
    progress: &mut dyn Progress,
) -> Result<GraphJson, ToolError> {
    let weights = from_cwd(weights)?;
    let manifest = from_cwd(manifest)?;
    let plan = plan_external_weights(graph, graph_path, Some(&weights), Some(&manifest))?;
    check_blob_header(&plan)?;
    progress.start(plan.constants().iter().map(|c| c.length).sum());
    let mut bytes = BTreeMap::new();
    let mut reader = plan.reader();
    let read: Result<(), ToolError> = plan.constants().iter().try_for_each(|c| {
        bytes.insert(c.name.clone(), reader.read_constant(c)?);
        progress.advance(c.length);
        Ok(())
    });
    progress.finish();
    read?;
    reader.finish()?;
    let mut out = graph.clone();
    for (name, decl) in out.consts.iter_mut() {
        if let Some(data) = bytes.remove(name) {
            decl.init = ConstInit::InlineBytes { bytes: data.into() };
        }
    }
    Ok(out)
}

/// A graph ready to be written as one SafeTensors archive; made by [`to_safetensors`].
#[derive(Debug, Clone)]
pub struct SafetensorsConversion<'g> {
    /// The graph rewritten so that every constant with bytes is `@weights`: constants that
    /// were `@weights` keep their reference, inline-bytes constants get their own name as
    /// reference. Scalars stay scalars. It resolves against the archive once written.
    pub graph: GraphJson,
    /// Bytes read from the sidecar, by reference.
    external: BTreeMap<String, Vec<u8>>,
    /// Inline bytes of the source graph, by constant name (= new reference).
    inline: Vec<(String, &'g [u8])>,
}

impl SafetensorsConversion<'_> {
    /// Number of tensors the archive will hold.
    pub fn tensors(&self) -> usize {
        self.external.len() + self.inline.len()
    }

    /// Sum of their byte sizes.
    pub fn bytes(&self) -> u64 {
        let external: u64 = self.external.values().map(|b| b.len() as u64).sum();
        external + self.inline.iter().map(|(_, b)| b.len() as u64).sum::<u64>()
    }

    /// Writes the archive through [`write_external_weights_safetensors`] (packed 4-bit
    /// marker when needed; a temporary file renamed into place only on success).
    pub fn write(&self, output: &Path) -> Result<(), ToolError> {
        write_external_weights_safetensors(&self.graph, &self.by_reference(), output)?;
        Ok(())
    }

    /// Writes the archive sharded in the Hugging Face layout through
    /// [`write_external_weights_safetensors_sharded`]: shards of at most `max_shard_size`
    /// bytes of tensor data beside `output` (`<stem>-0000k-of-0000N.safetensors`) and the
    /// index `<stem>.safetensors.index.json`, installed together as one set, the index
    /// last (a failure leaves an existing archive as it was); just `output` when everything
    /// fits in one shard.
    pub fn write_sharded(
        &self,
        output: &Path,
        max_shard_size: u64,
    ) -> Result<crate::ShardedOutput, ToolError> {
        Ok(write_external_weights_safetensors_sharded(
            &self.graph,
            &self.by_reference(),
            output,
            max_shard_size,
        )?)
    }

    /// Stages the archive for `output` in `staging` (serialized and synced under marked
    /// temporary names, nothing installed): one archive, or with `max_shard_size` the
    /// layout of [`SafetensorsConversion::write_sharded`], the index last. Installed by
    /// [`Staging::commit`] together with whatever else is staged there (such as the
    /// rewritten graph, after them): a failure then leaves every destination as it was.
    pub fn stage(
        &self,
        output: &Path,
        max_shard_size: Option<u64>,
        staging: &mut Staging,
    ) -> Result<crate::ShardedOutput, ToolError> {
        let (written, files) = crate::writer::stage_sharded(
            &self.graph,
            &self.by_reference(),
            output,
            max_shard_size.unwrap_or(u64::MAX),
        )?;
        for (file, destination) in files {
            staging.push(file, destination);
        }
        Ok(written)
    }

    fn by_reference(&self) -> HashMap<String, &[u8]> {
        let mut bytes: HashMap<String, &[u8]> = HashMap::with_capacity(self.tensors());
        for (reference, b) in &self.external {
            bytes.insert(reference.clone(), b.as_slice());
        }
        for (name, b) in &self.inline {
            bytes.insert(name.clone(), b);
        }
        bytes
    }
}

/// `to-safetensors`, first step: resolves every constant with bytes of `graph` (external
/// from a blob or an archive, or inline) and rewrites the graph for one archive; write it
/// with [`SafetensorsConversion::write`].
///
/// `weights` / `manifest` are explicit sidecar paths, relative to the graph's folder
/// unless absolute, as everywhere in the format and in `resolve`/`inspect` (discovery
/// beside the graph otherwise). Archive tensor names are the existing
/// `@weights` references (so the original graph still resolves against the archive) and,
/// for inline-bytes constants, the constant names. An inline constant whose name is
/// already another constant's reference is an error. Each external range is read once
/// (per reference) and held in memory until the archive is written. A blob's WGWT header
/// is validated when present ([`BlobLayout`]).
///
/// ```
/// use webnn_weights_runtime::{resolve_external_weights, ConstDecl, ConstInit, DataType, GraphJson};
/// use webnn_weights_tools::weight_tools::{to_safetensors, NoProgress};
/// let dir = tempfile::tempdir().unwrap();
/// let graph_path = dir.path().join("m.webnn");
/// let mut g = GraphJson::new(None);
/// g.consts.insert("w".into(), ConstDecl { data_type: DataType::Uint8, shape: vec![2],
///     init: ConstInit::InlineBytes { bytes: vec![1, 2].into() } });
/// let conversion = to_safetensors(&g, &graph_path, None, None, &mut NoProgress).unwrap();
/// conversion.write(&dir.path().join("m.safetensors")).unwrap();
/// // The rewritten graph finds m.safetensors by discovery and gets the same bytes back.
/// let mut back = conversion.graph.clone();
/// assert_eq!(back.consts["w"].init, ConstInit::Weights { r#ref: "w".into() });
/// resolve_external_weights(&mut back, &graph_path, None, None).unwrap();
/// assert_eq!(back, g);
/// ```
pub fn to_safetensors<'g>(
    graph: &'g GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
    progress: &mut dyn Progress,
) -> Result<SafetensorsConversion<'g>, ToolError> {
    let plan = plan_external_weights(graph, graph_path, weights, manifest)?;
    check_blob_header(&plan)?;

    // Rewrite first, so that reference clashes are reported before any byte is read.
    let mut rewritten = graph.clone();
    let mut users: BTreeMap<&str, &str> = BTreeMap::new(); // reference -> first constant
    for (name, decl) in &graph.consts {
        if let ConstInit::Weights { r#ref } = &decl.init {
            users.entry(r#ref.as_str()).or_insert(name.as_str());
        }
    }
    let mut inline = Vec::new();
    for (name, decl) in &graph.consts {
        if let ConstInit::InlineBytes { bytes } = &decl.init {
            if let Some(other) = users.get(name.as_str()) {
                return Err(ToolError::invalid(
                    graph_path,
                    format!(
                        "inline constant \"{name}\" would be stored under its name, but \
                         constant \"{other}\" already uses @weights(\"{name}\"); rename one of them"
                    ),
                ));
            }
            inline.push((name.clone(), &bytes[..]));
            if let Some(d) = rewritten.consts.get_mut(name) {
                d.init = ConstInit::Weights {
                    r#ref: name.clone(),
                };
            }
        }
    }

    // Read each external range once per reference.
    let mut pending = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for c in plan.constants() {
        if seen.insert(c.reference.as_str()) {
            pending.push(c);
        }
    }
    progress.start(pending.iter().map(|c| c.length).sum());
    let mut external = BTreeMap::new();
    let mut reader = plan.reader();
    let read: Result<(), ToolError> = pending.iter().try_for_each(|c| {
        external.insert(c.reference.clone(), reader.read_constant(c)?);
        progress.advance(c.length);
        Ok(())
    });
    progress.finish();
    read?;
    reader.finish()?;
    Ok(SafetensorsConversion {
        graph: rewritten,
        external,
        inline,
    })
}

/// Stages the SafeTensors archive of `graph`'s `@weights` constants (bytes by reference, as
/// [`write_external_weights_safetensors`](crate::write_external_weights_safetensors) takes them) as part of a set of files: serialized
/// and synced under a marked temporary name in `destination`'s folder, installed with the rest
/// of the set by [`Staging::commit`](crate::weight_tools::Staging::commit) (nothing is
/// installed if the set fails). What a command that writes a graph and its archive together
/// uses (`convert-onnx`).
///
/// ```
/// use std::collections::HashMap;
/// use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson};
/// let mut graph = GraphJson::new(None);
/// graph.consts.insert("w".into(), ConstDecl {
///     data_type: DataType::Uint8,
///     shape: vec![2],
///     init: ConstInit::Weights { r#ref: "w".into() },
/// });
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("model.safetensors");
/// let mut staging = webnn_weights_tools::weight_tools::Staging::new();
/// let weights = HashMap::from([("w".to_string(), &[1u8, 2][..])]);
/// webnn_weights_tools::weight_tools::stage_external_weights_safetensors(&graph, &weights, &path, &mut staging)
///     .unwrap();
/// assert!(!path.exists(), "staged, not installed");
/// staging.commit().unwrap();
/// assert!(path.exists());
/// ```
pub fn stage_external_weights_safetensors(
    graph: &GraphJson,
    weights: &std::collections::HashMap<String, &[u8]>,
    destination: &std::path::Path,
    staging: &mut Staging,
) -> Result<(), ToolError> {
    let (_, files) = crate::writer::stage_sharded(graph, weights, destination, u64::MAX)?;
    for (file, path) in files {
        staging.push(file, path);
    }
    Ok(())
}
