//! Reading a model: the `.onnx` file mapped and decoded (initializers' `raw_data` stay views of
//! the mapping), and ONNX external data files mapped once each and sliced, never read whole.

use crate::proto::{ModelProto, TensorProto};
use crate::tensor::{decode_inline, external_ref, proto_shape, ElemType, HostTensor};
use bytes::Bytes;
use prost::Message as _;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// A decoded model and where its external data lives.
pub(crate) struct Model {
    pub proto: ModelProto,
    /// The folder external data locations are relative to (`None` for a model from memory).
    pub dir: Option<PathBuf>,
    /// External data files already mapped, by location.
    files: HashMap<String, Bytes>,
    /// Every external data file read, in first-use order (for rebuild tracking).
    pub external_files: Vec<PathBuf>,
}

/// Maps `path` read-only into a `Bytes` (an empty file is an empty `Bytes`: mapping zero
/// bytes fails on some systems).
pub(crate) fn map_file(path: &Path) -> std::io::Result<Bytes> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(Bytes::new());
    }
    let map = map_readonly(&file)?;
    Ok(Bytes::from_owner(map))
}

/// Maps `file` read-only: the one `unsafe` block of the converter.
#[allow(unsafe_code)]
fn map_readonly(file: &File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: `Mmap::map` is unsafe because the returned bytes are only immutable if the
    // file is: the mapping is read-only but shared, so bytes written to the file by anyone
    // show through, and pages past a truncation fault when read (`SIGBUS` on Unix). Nothing
    // here writes through the mapping. The documented contract of the converter (crate docs,
    // docs/onnx.md) is that the model and its external data files are neither truncated nor
    // rewritten while it converts and while a `Conversion`'s weights are in use.
    unsafe { memmap2::Mmap::map(file) }
}

impl Model {
    /// Decodes `bytes` as a `ModelProto`; `dir` is the model's folder.
    pub fn decode(bytes: Bytes, dir: Option<PathBuf>) -> Result<Model, String> {
        let proto = ModelProto::decode(bytes).map_err(|e| {
            format!("not an ONNX model (the protobuf does not decode as a ModelProto: {e})")
        })?;
        if proto.graph.is_none() {
            return Err("the ModelProto has no graph".into());
        }
        Ok(Model {
            proto,
            dir,
            files: HashMap::new(),
            external_files: Vec::new(),
        })
    }

    /// The opset version the model imports for `domain` (`""` and `"ai.onnx"` are the same
    /// domain).
    pub fn opset(&self, domain: &str) -> Option<i64> {
        let norm = |d: &str| {
            if d == "ai.onnx" {
                String::new()
            } else {
                d.to_string()
            }
        };
        let want = norm(domain);
        self.proto
            .opset_import
            .iter()
            .find(|o| norm(o.domain.as_deref().unwrap_or("")) == want)
            .and_then(|o| o.version)
    }

    /// The tensor's values, external data read as a view of its mapped file.
    pub fn tensor(&mut self, t: &TensorProto) -> Result<HostTensor, String> {
        let Some(ext) = external_ref(t).map_err(|e| e.to_string())? else {
            return decode_inline(t).map_err(|e| e.to_string());
        };
        let code = t.data_type.unwrap_or(0);
        let elem = ElemType::from_onnx(code).ok_or_else(|| {
            format!(
                "element type {} is not supported (WebNN has no such type)",
                ElemType::onnx_name(code)
            )
        })?;
        let shape = proto_shape(t).map_err(|e| e.to_string())?;
        let count = crate::tensor::checked_count(&shape)
            .filter(|_| crate::tensor::within_limit(&shape))
            .ok_or_else(|| {
                format!(
                    "dims {:?} are too large (at most {} elements)",
                    t.dims,
                    crate::tensor::MAX_ELEMENTS
                )
            })?;
        let want = elem
            .byte_len(count)
            .ok_or_else(|| format!("dims {:?} are too large", t.dims))?;
        let file = self.external_file(&ext.location)?;
        let length = ext.length.unwrap_or(want);
        if length != want {
            return Err(format!(
                "external data length {length} does not match the {want} bytes that {count} {elem} elements of dims {:?} take",
                t.dims
            ));
        }
        let end = ext
            .offset
            .checked_add(length)
            .filter(|&e| e <= file.len() as u64);
        let Some(end) = end else {
            return Err(format!(
                "external data {:?} offset {} + length {length} runs past the file's end ({} bytes)",
                ext.location,
                ext.offset,
                file.len()
            ));
        };
        Ok(HostTensor {
            name: t.name.clone().unwrap_or_default(),
            elem,
            shape,
            bytes: file.slice(ext.offset as usize..end as usize),
        })
    }

    /// The mapped external data file at `location` (relative to the model's folder).
    fn external_file(&mut self, location: &str) -> Result<Bytes, String> {
        if let Some(b) = self.files.get(location) {
            return Ok(b.clone());
        }
        let Some(dir) = &self.dir else {
            return Err(format!(
                "external data {location:?}: the model was given as bytes, with no folder to read external data from"
            ));
        };
        let rel = Path::new(location);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
        {
            return Err(format!(
                "external data location {location:?} must be a relative path inside the model's folder"
            ));
        }
        let path = dir.join(rel);
        let bytes =
            map_file(&path).map_err(|e| format!("external data file {}: {e}", path.display()))?;
        self.external_files.push(path);
        self.files.insert(location.to_string(), bytes.clone());
        Ok(bytes)
    }
}
