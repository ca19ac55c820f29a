//! The operations: pack, unpack, create a manifest, extract inline bytes.

use super::format::{packed_note, DEFAULT_LAYOUT, LITTLE_ENDIAN};
use super::{
    read_small_file, tensor_file_path, wgwt_header, BlobLayout, ManifestV1, ManifestV1Entry,
    Progress, Staging, TensorMeta, ToolError, WGWT_HEADER_LEN,
};
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use webnn_weights_runtime::manifest::Manifest;
use webnn_weights_runtime::{ConstDecl, ConstInit, GraphJson};

/// Size of the buffer through which tensor bytes are copied.
const CHUNK: u64 = 1 << 20;

/// Copies `len` bytes at `offset` of `src` to `dst`, in chunks, reporting progress.
pub(crate) fn copy_range(
    src: &File,
    src_path: &Path,
    offset: u64,
    len: u64,
    dst: &mut impl Write,
    dst_path: &Path,
    progress: &mut dyn Progress,
) -> Result<(), ToolError> {
    let mut reader = src;
    reader
        .seek(SeekFrom::Start(offset))
        .map_err(|e| ToolError::io(src_path, e))?;
    // Bounded by CHUNK, so the conversion cannot truncate.
    let mut buf = vec![0u8; len.min(CHUNK) as usize];
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(CHUNK) as usize;
        let n = match reader.read(&mut buf[..want]) {
            Ok(0) => {
                return Err(ToolError::invalid(
                    src_path,
                    format!(
                        "the file ended after {done} of the {len} bytes at offset {offset}; \
                         was it changed while being read?"
                    ),
                ))
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ToolError::io(src_path, e)),
        };
        dst.write_all(&buf[..n])
            .map_err(|e| ToolError::io(dst_path, e))?;
        done += n as u64;
        progress.advance(n as u64);
    }
    Ok(())
}

/// What [`pack_weights`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackSummary {
    /// Number of tensors.
    pub tensors: usize,
    /// Size of the blob, header included.
    pub bytes: u64,
}

/// `pack-weights`: writes the WGWT blob `output` from `input_dir/NAME.bin` files as laid
/// out by the v1 manifest at `manifest_path`.
///
/// The manifest must pass [`ManifestV1::from_manifest`] and
/// [`ManifestV1::check_contiguous`] from offset 8, and every `.bin` file must have exactly
/// its entry's `byteLength`. All of this is checked before the output is created; the blob
/// is written through a temporary file and renamed into place on success.
pub fn pack_weights(
    manifest_path: &Path,
    input_dir: &Path,
    output: &Path,
    progress: &mut dyn Progress,
) -> Result<PackSummary, ToolError> {
    let manifest = Manifest::parse(&read_small_file(manifest_path)?, manifest_path)?;
    let v1 = ManifestV1::from_manifest(&manifest, manifest_path)?;
    let end = v1.check_contiguous(WGWT_HEADER_LEN, manifest_path)?;
    let mut sources: Vec<(PathBuf, u64)> = Vec::with_capacity(v1.tensors.len());
    for (name, entry) in v1.entries_by_offset() {
        let path = tensor_file_path(input_dir, name, ".bin")
            .map_err(|m| ToolError::invalid(manifest_path, m))?;
        let meta = fs::metadata(&path).map_err(|e| {
            ToolError::invalid(
                &path,
                format!(
                    "tensor \"{name}\" of {}: cannot read its file ({e})",
                    manifest_path.display()
                ),
            )
        })?;
        if !meta.is_file() {
            return Err(ToolError::invalid(
                &path,
                format!("tensor \"{name}\": not a regular file"),
            ));
        }
        if meta.len() != entry.byte_length {
            return Err(ToolError::invalid(
                &path,
                format!(
                    "tensor \"{name}\": the file has {} bytes, the manifest {} gives byteLength {}",
                    meta.len(),
                    manifest_path.display(),
                    entry.byte_length
                ),
            ));
        }
        sources.push((path, entry.byte_length));
    }
    let mut staging = Staging::new();
    progress.start(end - WGWT_HEADER_LEN);
    let result = staging.stage(output, |w| {
        w.write_all(&wgwt_header())
            .map_err(|e| ToolError::io(output, e))?;
        for (path, len) in &sources {
            let file = File::open(path).map_err(|e| ToolError::io(path, e))?;
            copy_range(&file, path, 0, *len, w, output, progress)?;
        }
        Ok(())
    });
    progress.finish();
    result?;
    staging.commit()?;
    Ok(PackSummary {
        tensors: sources.len(),
        bytes: end,
    })
}

/// What [`unpack_weights`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnpackSummary {
    /// Number of tensor files.
    pub tensors: usize,
    /// Sum of their sizes.
    pub bytes: u64,
    /// Whether the blob carried a WGWT header.
    pub layout: BlobLayout,
}

/// `unpack-weights`: writes `output_dir/NAME.bin` for every tensor of the manifest.
///
/// Offsets are absolute, so WGWT blobs and headerless blobs both work; a WGWT header is
/// validated when present (see [`BlobLayout`]). The manifest needs only `byteOffset` and
/// `byteLength` per tensor. Every range is checked against the blob's size and every name
/// against path escapes before anything is written; then all files are staged as
/// temporary files and renamed into place together as one set ([`Staging::commit`]), so a
/// failure leaves no new tensor file, no folder that the call created, and every tensor file
/// it would have replaced as it was.
pub fn unpack_weights(
    weights: &Path,
    manifest_path: &Path,
    output_dir: &Path,
    progress: &mut dyn Progress,
) -> Result<UnpackSummary, ToolError> {
    let manifest = Manifest::parse(&read_small_file(manifest_path)?, manifest_path)?;
    let blob = File::open(weights).map_err(|e| ToolError::io(weights, e))?;
    let blob_len = blob
        .metadata()
        .map_err(|e| ToolError::io(weights, e))?
        .len();
    let mut outputs = Vec::with_capacity(manifest.tensors.len());
    let mut total = 0u64;
    for entry in &manifest.tensors {
        let end = entry.end().filter(|&end| end <= blob_len).ok_or_else(|| {
            ToolError::invalid(
                weights,
                format!(
                    "tensor \"{}\": bytes {}..{} (from {}) lie beyond the end of the file \
                     ({blob_len} bytes)",
                    entry.name,
                    entry.byte_offset,
                    u128::from(entry.byte_offset) + u128::from(entry.byte_length),
                    manifest_path.display()
                ),
            )
        })?;
        let path = tensor_file_path(output_dir, &entry.name, ".bin")
            .map_err(|m| ToolError::invalid(manifest_path, m))?;
        total = total.saturating_add(end - entry.byte_offset);
        outputs.push((path, entry.byte_offset, entry.byte_length));
    }
    let layout = BlobLayout::detect(
        &blob,
        weights,
        blob_len,
        manifest
            .tensors
            .iter()
            .map(|e| (e.byte_offset, e.byte_length)),
    )?;
    let mut staging = Staging::new();
    staging.ensure_dir(output_dir)?;
    progress.start(total);
    let result = outputs.iter().try_for_each(|(path, offset, len)| {
        if let Some(parent) = path.parent() {
            staging.ensure_dir(parent)?;
        }
        staging.stage(path, |w| {
            copy_range(&blob, weights, *offset, *len, w, path, progress)
        })
    });
    progress.finish();
    result?;
    staging.commit()?;
    Ok(UnpackSummary {
        tensors: outputs.len(),
        bytes: total,
        layout,
    })
}

/// `create-manifest`: a v1 manifest for every regular file `input_dir/NAME.bin`, taken in
/// file-name order, with `dataType`, `shape` and `layout` (default `"row-major"`) from
/// `NAME.meta.json` and offsets assigned contiguously from 8.
///
/// Only `dataType` and `shape` are required in a `.meta.json`. Each `.bin` file's size
/// must equal what its type and shape require (4-bit types packed). `endianness` must be
/// `"little"`. Nothing is written; see [`ManifestV1::write_to`].
pub fn create_manifest(input_dir: &Path, endianness: &str) -> Result<ManifestV1, ToolError> {
    if endianness != LITTLE_ENDIAN {
        return Err(ToolError::invalid(
            input_dir,
            format!(
                "endianness \"{endianness}\" is not supported: tensor bytes are always \
                 little-endian, use \"{LITTLE_ENDIAN}\""
            ),
        ));
    }
    let mut files = Vec::new();
    for item in fs::read_dir(input_dir).map_err(|e| ToolError::io(input_dir, e))? {
        let item = item.map_err(|e| ToolError::io(input_dir, e))?;
        let path = item.path();
        if path.extension().is_some_and(|ext| ext == "bin")
            && fs::metadata(&path).is_ok_and(|m| m.is_file())
        {
            files.push((item.file_name(), path));
        }
    }
    files.sort();
    let mut manifest = ManifestV1::new();
    let mut offset = WGWT_HEADER_LEN;
    for (_, path) in files {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| ToolError::invalid(&path, "the file name is not valid UTF-8"))?
            .to_string();
        let meta_path = path.with_extension("meta.json");
        let meta = TensorMeta::parse(&read_small_file(&meta_path)?, &meta_path)?;
        let size = fs::metadata(&path)
            .map_err(|e| ToolError::io(&path, e))?
            .len();
        let expected = meta.data_type.byte_length(&meta.shape).ok_or_else(|| {
            ToolError::invalid(
                &meta_path,
                format!("shape {:?} of {} is too large", meta.shape, meta.data_type),
            )
        })?;
        if size != expected {
            return Err(ToolError::invalid(
                &path,
                format!(
                    "tensor \"{name}\": the file has {size} bytes, expected {expected} for {} {:?} \
                     (from {}){}",
                    meta.data_type,
                    meta.shape,
                    meta_path.display(),
                    packed_note(meta.data_type)
                ),
            ));
        }
        manifest.tensors.insert(
            name,
            ManifestV1Entry {
                data_type: meta.data_type,
                shape: meta.shape,
                byte_offset: offset,
                byte_length: size,
                layout: Some(meta.layout.unwrap_or_else(|| DEFAULT_LAYOUT.to_string())),
            },
        );
        offset = offset
            .checked_add(size)
            .ok_or_else(|| ToolError::invalid(&path, "offsets overflow"))?;
    }
    Ok(manifest)
}

/// The result of [`extract_weights`]: the rewritten graph, the manifest, and the blob's
/// tensor bytes (borrowed from the source graph) in blob order.
#[derive(Debug, Clone)]
pub struct Extraction<'a> {
    /// The graph with every inline-bytes constant replaced by `@weights("NAME")`.
    pub graph: GraphJson,
    /// The manifest of the blob: offsets from 8, layout `"row-major"`.
    pub manifest: ManifestV1,
    parts: Vec<&'a [u8]>,
}

impl Extraction<'_> {
    /// Size of the blob, header included.
    pub fn blob_len(&self) -> u64 {
        WGWT_HEADER_LEN + self.payload_len()
    }

    /// Size of the tensor bytes.
    pub fn payload_len(&self) -> u64 {
        self.parts.iter().map(|p| p.len() as u64).sum()
    }

    /// Writes the WGWT blob; `path` names the destination in errors.
    pub fn write_blob(
        &self,
        w: &mut impl Write,
        path: &Path,
        progress: &mut dyn Progress,
    ) -> Result<(), ToolError> {
        w.write_all(&wgwt_header())
            .map_err(|e| ToolError::io(path, e))?;
        for part in &self.parts {
            for chunk in part.chunks(CHUNK as usize) {
                w.write_all(chunk).map_err(|e| ToolError::io(path, e))?;
                progress.advance(chunk.len() as u64);
            }
        }
        Ok(())
    }
}

/// `extract-weights`: moves every inline-bytes constant of `graph` into a WGWT blob.
///
/// Constants are taken in name order and get offsets from 8; the manifest key and the new
/// `@weights` reference are the constant's name. Each constant's byte count must match its
/// declaration (4-bit types packed); `graph_path` names the graph in errors. Nothing is
/// written here: write [`Extraction::write_blob`], [`ManifestV1::write_to`] and the graph.
///
/// ```
/// use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson};
/// use webnn_weights_tools::weight_tools::extract_weights;
/// let mut g = GraphJson::new(None);
/// g.consts.insert("q".into(), ConstDecl { data_type: DataType::Int4, shape: vec![3],
///     init: ConstInit::InlineBytes { bytes: vec![0x21, 0x03].into() } });
/// let x = extract_weights(&g, std::path::Path::new("g.json")).unwrap();
/// assert_eq!(x.manifest.tensors["q"].byte_length, 2);
/// assert_eq!(x.blob_len(), 10);
/// ```
pub fn extract_weights<'a>(
    graph: &'a GraphJson,
    graph_path: &Path,
) -> Result<Extraction<'a>, ToolError> {
    let mut out = graph.clone();
    let mut manifest = ManifestV1::new();
    let mut parts = Vec::new();
    let mut offset = WGWT_HEADER_LEN;
    for (name, decl) in &graph.consts {
        let ConstInit::InlineBytes { bytes } = &decl.init else {
            continue;
        };
        let expected = decl.byte_length().ok_or_else(|| {
            ToolError::invalid(
                graph_path,
                format!(
                    "constant \"{name}\": shape {:?} of {} is too large",
                    decl.shape, decl.data_type
                ),
            )
        })?;
        if bytes.len() as u64 != expected {
            return Err(ToolError::invalid(
                graph_path,
                format!(
                    "constant \"{name}\": {} inline bytes, expected {expected} for {} {:?}{}",
                    bytes.len(),
                    decl.data_type,
                    decl.shape,
                    packed_note(decl.data_type)
                ),
            ));
        }
        manifest.tensors.insert(
            name.clone(),
            ManifestV1Entry {
                data_type: decl.data_type,
                shape: decl.shape.clone(),
                byte_offset: offset,
                byte_length: expected,
                layout: Some(DEFAULT_LAYOUT.to_string()),
            },
        );
        offset += expected;
        parts.push(&bytes[..]);
        out.consts.insert(
            name.clone(),
            ConstDecl {
                data_type: decl.data_type,
                shape: decl.shape.clone(),
                init: ConstInit::Weights {
                    r#ref: name.clone(),
                },
            },
        );
    }
    Ok(Extraction {
        graph: out,
        manifest,
        parts,
    })
}

/// The WGWT blob of a resolved graph's external constants, for `webnn-weights web`.
///
/// `graph` is the graph as written (its `@weights` references name the manifest's
/// entries) and `resolved` the same graph after resolution (every such constant's bytes
/// inline: BF16 already widened, 4-bit types packed). Entries are keyed by reference and
/// laid out in name order from offset 8; constants that resolved to the same stored
/// bytes (tied weights: one buffer in the resolver) are stored once, their entries sharing
/// one range. Inline and scalar constants of `graph` stay out of the blob.
/// `graph_path` names the graph in errors.
///
/// ```
/// use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson};
/// use webnn_weights_tools::weight_tools::pack_resolved;
/// let weights = |r: &str| ConstDecl { data_type: DataType::Float32, shape: vec![1],
///     init: ConstInit::Weights { r#ref: r.into() } };
/// let mut graph = GraphJson::new(None);
/// graph.consts.insert("a".into(), weights("encoder.weight"));
/// graph.consts.insert("b".into(), weights("decoder.weight"));
/// let shared = ConstInit::InlineBytes { bytes: vec![0u8, 0, 128, 63].into() };
/// let mut resolved = graph.clone();
/// for c in resolved.consts.values_mut() {
///     c.init = shared.clone(); // one buffer, as the resolver gives tied weights
/// }
/// let packed = pack_resolved(&graph, &resolved, std::path::Path::new("g.webnn")).unwrap();
/// assert_eq!(packed.blob_len(), 12); // header and one float, stored once
/// assert_eq!(packed.manifest.tensors["encoder.weight"].byte_offset, 8);
/// assert_eq!(packed.manifest.tensors["decoder.weight"].byte_offset, 8);
/// ```
pub fn pack_resolved<'a>(
    graph: &GraphJson,
    resolved: &'a GraphJson,
    graph_path: &Path,
) -> Result<Extraction<'a>, ToolError> {
    let mut manifest = ManifestV1::new();
    let mut parts: Vec<&'a [u8]> = Vec::new();
    // Stored ranges by the address and length of the resolver's buffer.
    let mut stored: std::collections::HashMap<(usize, usize), u64> = Default::default();
    let mut offset = WGWT_HEADER_LEN;
    for (name, decl) in &graph.consts {
        let ConstInit::Weights { r#ref } = &decl.init else {
            continue;
        };
        let bytes = match resolved.consts.get(name).map(|c| &c.init) {
            Some(ConstInit::InlineBytes { bytes }) => &bytes[..],
            _ => {
                return Err(ToolError::invalid(
                    graph_path,
                    format!("constant \"{name}\" (weights \"{ref}\") was not resolved"),
                ))
            }
        };
        let expected = decl.byte_length().filter(|&n| n == bytes.len() as u64);
        let Some(length) = expected else {
            return Err(ToolError::invalid(
                graph_path,
                format!(
                    "constant \"{name}\" (weights \"{ref}\"): {} resolved bytes, {} {:?} takes {}{}",
                    bytes.len(),
                    decl.data_type,
                    decl.shape,
                    decl.byte_length().map_or("more".to_string(), |n| n.to_string()),
                    packed_note(decl.data_type)
                ),
            ));
        };
        if manifest.tensors.contains_key(r#ref) {
            continue;
        }
        let at = *stored
            .entry((bytes.as_ptr() as usize, bytes.len()))
            .or_insert_with(|| {
                let at = offset;
                offset += length;
                parts.push(bytes);
                at
            });
        manifest.tensors.insert(
            r#ref.clone(),
            ManifestV1Entry {
                data_type: decl.data_type,
                shape: decl.shape.clone(),
                byte_offset: at,
                byte_length: length,
                layout: Some(DEFAULT_LAYOUT.to_string()),
            },
        );
    }
    Ok(Extraction {
        graph: graph.clone(),
        manifest,
        parts,
    })
}
