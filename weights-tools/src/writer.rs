//! Writing a graph's external constants into one SafeTensors archive.

// Errors are cold and carry the context of their message.
#![allow(clippy::result_large_err)]

use safetensors::tensor::TensorView;
use safetensors::Dtype;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use webnn_weights_runtime::formats::safetensors::storage_dtype;
use webnn_weights_runtime::{
    ConstInit, DataType, GraphJson, PACKED_4BIT_METADATA_KEY, PACKED_4BIT_METADATA_VERSION,
};

/// Why [`write_external_weights_safetensors`] refused or failed. Nothing is installed at
/// the destination in any of these cases.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// No bytes were supplied for a reference the graph uses.
    #[error("{}: @weights(\"{reference}\") (constant `{constant}`) has no supplied bytes", destination.display())]
    MissingBytes {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
    },
    /// Two constants use the same reference with different types or shapes.
    #[error(
        "{}: @weights(\"{reference}\") has conflicting declarations: constant `{first}` is {first_type} {first_shape:?}, constant `{second}` is {second_type} {second_shape:?}",
        destination.display()
    )]
    ConflictingDeclarations {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The shared reference.
        reference: String,
        /// The first constant (by name).
        first: String,
        /// Its type.
        first_type: DataType,
        /// Its shape.
        first_shape: Vec<u32>,
        /// The conflicting constant.
        second: String,
        /// Its type.
        second_type: DataType,
        /// Its shape.
        second_shape: Vec<u32>,
    },
    /// A reference or declaration that SafeTensors cannot store.
    #[error("{}: @weights(\"{reference}\") (constant `{constant}`) cannot be stored: {reason}", destination.display())]
    Unsupported {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
        /// Why.
        reason: String,
    },
    /// The supplied bytes do not have the declared size.
    #[error(
        "{}: @weights(\"{reference}\") (constant `{constant}`): declared {data_type} {shape:?} needs {expected} bytes, found {found}",
        destination.display()
    )]
    LengthMismatch {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
        /// Declared type.
        data_type: DataType,
        /// Declared shape.
        shape: Vec<u32>,
        /// Bytes the declaration needs.
        expected: u64,
        /// Bytes supplied.
        found: u64,
    },
    /// The declaration's element count or byte size overflows.
    #[error(
        "{}: @weights(\"{reference}\") (constant `{constant}`): declared {data_type} {shape:?} has an element count or byte size that overflows",
        destination.display()
    )]
    Overflow {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
        /// Declared type.
        data_type: DataType,
        /// Declared shape.
        shape: Vec<u32>,
    },
    /// SafeTensors could not serialize the archive.
    #[error("{}: cannot serialize the SafeTensors archive: {message}", destination.display())]
    Serialize {
        /// The archive that was to be written.
        destination: PathBuf,
        /// What safetensors reported.
        message: String,
    },
    /// The temporary file could not be created, synced or renamed into place.
    #[error("{}: cannot install the SafeTensors archive: {source}", destination.display())]
    Io {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The SafeTensors storage of a declaration: type and shape (packed rule for 4-bit).
fn storage(data_type: DataType, shape: &[u32], length: u64) -> (Dtype, Vec<u64>) {
    match storage_dtype(data_type) {
        Some(dtype) => (dtype, shape.iter().map(|&d| u64::from(d)).collect()),
        // Packed 4-bit: U8 bytes of shape [ceil(n / 2)].
        None => (Dtype::U8, vec![length]),
    }
}

impl WriteError {
    /// How to fix the input, where there is an obvious way (data, not part of the message).
    pub fn fix(&self) -> Option<&'static str> {
        match self {
            WriteError::MissingBytes { .. } => Some("pass its bytes keyed by the reference"),
            WriteError::ConflictingDeclarations { .. } => {
                Some("give them distinct references or the same declaration")
            }
            _ => None,
        }
    }
}

/// Writes every external constant of `graph` into one SafeTensors archive at
/// `destination`.
///
/// `weights` holds the bytes of each `@weights` reference, keyed by reference (entries
/// the graph does not use are ignored). Ordinary types are stored with the format's
/// SafeTensors type and the declared shape; `int4`/`uint4` as packed 1-D `U8` tensors of
/// `ceil(n / 2)` bytes, with the `rustnn.webnn.packed4: "1"` metadata entry, which is
/// added only when the graph has such tensors. Every check runs before anything is
/// written; the archive is serialized into a temporary file in the destination folder
/// and renamed into place after a sync, so a failure leaves no file and an existing
/// destination unchanged.
///
/// ```
/// use std::collections::HashMap;
/// use webnn_weights_runtime::*;
/// use webnn_weights_tools::write_external_weights_safetensors;
/// let dir = tempfile::tempdir().unwrap();
/// let mut graph = GraphJson::new(None);
/// graph.consts.insert("w".into(), ConstDecl {
///     data_type: DataType::Int4, shape: vec![3],
///     init: ConstInit::Weights { r#ref: "layer.w".into() },
/// });
/// let bytes: &[u8] = &[0x21, 0x03];
/// let archive = dir.path().join("model.safetensors");
/// write_external_weights_safetensors(&graph, &HashMap::from([("layer.w".to_string(), bytes)]), &archive).unwrap();
/// resolve_external_weights(&mut graph, &dir.path().join("model.webnn"), None, None).unwrap();
/// assert_eq!(graph.consts["w"].init, ConstInit::InlineBytes { bytes: vec![0x21, 0x03].into() });
/// ```
pub fn write_external_weights_safetensors(
    graph: &GraphJson,
    weights: &HashMap<String, &[u8]>,
    destination: &Path,
) -> Result<(), WriteError> {
    let dest = || destination.to_path_buf();
    // reference -> (first constant, type, shape)
    let mut declarations: BTreeMap<&str, (&str, DataType, &[u32])> = BTreeMap::new();
    for (name, decl) in &graph.consts {
        let ConstInit::Weights { r#ref } = &decl.init else {
            continue;
        };
        match declarations.get(r#ref.as_str()) {
            Some(&(first, first_type, first_shape)) => {
                if first_type != decl.data_type || first_shape != decl.shape.as_slice() {
                    return Err(WriteError::ConflictingDeclarations {
                        destination: dest(),
                        reference: r#ref.clone(),
                        first: first.to_string(),
                        first_type,
                        first_shape: first_shape.to_vec(),
                        second: name.clone(),
                        second_type: decl.data_type,
                        second_shape: decl.shape.clone(),
                    });
                }
            }
            None => {
                declarations.insert(r#ref, (name, decl.data_type, &decl.shape));
            }
        }
    }

    let mut views = Vec::with_capacity(declarations.len());
    let mut packed = false;
    for (&reference, &(constant, data_type, shape)) in &declarations {
        if reference == "__metadata__" {
            return Err(WriteError::Unsupported {
                destination: dest(),
                reference: reference.to_string(),
                constant: constant.to_string(),
                reason: "`__metadata__` is the SafeTensors header's metadata key, not a tensor name; rename the reference".to_string(),
            });
        }
        let Some(length) = data_type.byte_length(shape) else {
            return Err(WriteError::Overflow {
                destination: dest(),
                reference: reference.to_string(),
                constant: constant.to_string(),
                data_type,
                shape: shape.to_vec(),
            });
        };
        let Some(&bytes) = weights.get(reference) else {
            return Err(WriteError::MissingBytes {
                destination: dest(),
                reference: reference.to_string(),
                constant: constant.to_string(),
            });
        };
        if bytes.len() as u64 != length {
            return Err(WriteError::LengthMismatch {
                destination: dest(),
                reference: reference.to_string(),
                constant: constant.to_string(),
                data_type,
                shape: shape.to_vec(),
                expected: length,
                found: bytes.len() as u64,
            });
        }
        packed |= data_type.is_packed_4bit();
        let (dtype, stored_shape) = storage(data_type, shape, length);
        let unsupported = |reason: String| WriteError::Unsupported {
            destination: dest(),
            reference: reference.to_string(),
            constant: constant.to_string(),
            reason,
        };
        let stored_shape = stored_shape
            .into_iter()
            .map(usize::try_from)
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| unsupported("its shape does not fit this platform's usize".to_string()))?;
        let view = TensorView::new(dtype, stored_shape, bytes)
            .map_err(|e| unsupported(format!("safetensors rejected the tensor: {e}")))?;
        views.push((reference, view));
    }

    let metadata = packed.then(|| {
        HashMap::from([(
            PACKED_4BIT_METADATA_KEY.to_string(),
            PACKED_4BIT_METADATA_VERSION.to_string(),
        )])
    });
    let io_error = |source| WriteError::Io {
        destination: dest(),
        source,
    };
    // `serialize_to_file` writes a private temporary file of its own beside the path it is
    // given (named `.tmp…`, without our marker) and renames it over that path;
    // `write_by_path` hands it a path inside a marked temporary folder, so even a killed
    // process leaves only recognizable leftovers, and removes the folder on failure.
    crate::atomic::write_by_path(
        destination,
        |path| {
            safetensors::serialize_to_file(views, metadata, path).map_err(|e| {
                WriteError::Serialize {
                    destination: dest(),
                    message: e.to_string(),
                }
            })
        },
        io_error,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use webnn_weights_runtime::ConstDecl;

    fn graph(consts: &[(&str, DataType, &[u32], &str)]) -> GraphJson {
        let mut g = GraphJson::new(None);
        for &(name, data_type, shape, reference) in consts {
            g.consts.insert(
                name.to_string(),
                ConstDecl {
                    data_type,
                    shape: shape.to_vec(),
                    init: ConstInit::Weights {
                        r#ref: reference.to_string(),
                    },
                },
            );
        }
        g
    }

    fn files(dir: &Path) -> usize {
        std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
    }

    #[test]
    fn rejections_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.safetensors");
        let four: &[u8] = &[0; 4];
        type Case<'a> = (GraphJson, HashMap<String, &'a [u8]>, &'a str);
        let cases: Vec<Case> = vec![
            (
                graph(&[("a", DataType::Float32, &[1], "r")]),
                HashMap::new(),
                "no supplied bytes",
            ),
            (
                graph(&[
                    ("a", DataType::Float32, &[1], "r"),
                    ("b", DataType::Int32, &[1], "r"),
                ]),
                HashMap::from([("r".to_string(), four)]),
                "conflicting declarations",
            ),
            (
                graph(&[("a", DataType::Float32, &[2], "r")]),
                HashMap::from([("r".to_string(), four)]),
                "needs 8 bytes, found 4",
            ),
            (
                graph(&[("a", DataType::Uint8, &[4], "__metadata__")]),
                HashMap::from([("__metadata__".to_string(), four)]),
                "__metadata__",
            ),
            (
                graph(&[("a", DataType::Int64, &[u32::MAX, u32::MAX, u32::MAX], "r")]),
                HashMap::from([("r".to_string(), four)]),
                "overflows",
            ),
            (
                graph(&[("a", DataType::Int4, &[u32::MAX, u32::MAX, u32::MAX], "r")]),
                HashMap::from([("r".to_string(), four)]),
                "overflows",
            ),
            (
                graph(&[("a", DataType::Uint4, &[9], "r")]),
                HashMap::from([("r".to_string(), four)]),
                "needs 5 bytes, found 4",
            ),
        ];
        for (g, w, words) in cases {
            let err = write_external_weights_safetensors(&g, &w, &dest).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains(words) && msg.contains("out.safetensors"),
                "{msg}"
            );
            assert_eq!(files(dir.path()), 0, "{msg}");
        }
    }

    #[test]
    fn failure_keeps_existing_destination() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.safetensors");
        std::fs::write(&dest, b"previous").unwrap();
        let g = graph(&[("a", DataType::Float32, &[1], "r")]);
        assert!(write_external_weights_safetensors(&g, &HashMap::new(), &dest).is_err());
        assert_eq!(std::fs::read(&dest).unwrap(), b"previous");
        assert_eq!(files(dir.path()), 1);
        // and a missing folder is an I/O error, not a panic
        let err = write_external_weights_safetensors(
            &g,
            &HashMap::from([("r".to_string(), &[0u8; 4][..])]),
            &dir.path().join("no/x.safetensors"),
        )
        .unwrap_err();
        assert!(matches!(err, WriteError::Io { .. }), "{err:?}");
    }

    #[test]
    fn marker_only_with_packed_tensors() {
        let dir = tempfile::tempdir().unwrap();
        let read_meta = |p: &Path| {
            let bytes = std::fs::read(p).unwrap();
            let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
            meta.metadata().clone()
        };
        let four: &[u8] = &[1, 2, 3, 4];
        let plain = dir.path().join("plain.safetensors");
        let g = graph(&[("a", DataType::Uint8, &[4], "r")]);
        write_external_weights_safetensors(&g, &HashMap::from([("r".to_string(), four)]), &plain)
            .unwrap();
        assert_eq!(read_meta(&plain), None);
        let packed = dir.path().join("packed.safetensors");
        let g = graph(&[("a", DataType::Int4, &[2, 4], "r")]);
        write_external_weights_safetensors(&g, &HashMap::from([("r".to_string(), four)]), &packed)
            .unwrap();
        assert_eq!(
            read_meta(&packed),
            Some(HashMap::from([(
                PACKED_4BIT_METADATA_KEY.to_string(),
                "1".to_string()
            )]))
        );
        let bytes = std::fs::read(&packed).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        let t = st.tensor("r").unwrap();
        assert_eq!(
            (t.dtype(), t.shape(), t.data()),
            (Dtype::U8, &[4usize][..], four)
        );
        assert_eq!(files(dir.path()), 2);
    }
}
