//! ONNX models (feature `onnx`): the model converted with `webnn-weights-onnx` at build time,
//! its `@weights` constants written to a SafeTensors archive in the artifact folder
//! ([`SIDECAR_FILE`]), which the rest of the pipeline plans like any explicit sidecar.
//!
//! The archive is written only when its bytes change (its modification time, size and inode
//! then stay, so the data file's stamp still vouches for the data and nothing is copied
//! again); the run-time mode reads it on first use.

use crate::Error;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use webnn_weights_atomic as atomic;
use webnn_weights_onnx::ConvertOptions;
use webnn_weights_runtime::formats::safetensors::{
    storage_type, PACKED_4BIT_METADATA_KEY, PACKED_4BIT_METADATA_VERSION,
};
use webnn_weights_runtime::{ConstInit, DataType, GraphJson};

/// The converted weights in the artifact folder.
pub(crate) const SIDECAR_FILE: &str = "onnx.safetensors";

/// Where the data starts in the archive: the header is padded with spaces to this multiple
/// (the first tensor then starts page-aligned in a mapping, and 64-byte aligned on disk).
const DATA_START_ALIGN: usize = 64;

/// A model converted for the pipeline.
pub(crate) struct Converted {
    /// The graph; constants over the converter's inline threshold are `@weights` references.
    pub graph: GraphJson,
    /// The archive holding those constants (absolute when the folder is), `None` when the
    /// graph has no `@weights` constants.
    pub sidecar: Option<PathBuf>,
    /// The ONNX external data files the model's initializers were read from.
    pub external_files: Vec<PathBuf>,
}

/// One tensor of the archive.
struct Tensor<'a> {
    reference: &'a str,
    dtype: &'static str,
    shape: Vec<u64>,
    bytes: &'a [u8],
    /// Packed 4-bit: the archive then carries the format's marker.
    packed: bool,
}

/// Converts the model at `model` with the builder's dims and input shapes, and writes its
/// weights to [`SIDECAR_FILE`] in `dir` (removed when there are none).
pub(crate) fn convert(
    model: &Path,
    dims: &[(String, u32)],
    shapes: &[(String, Vec<u32>)],
    dir: &Path,
) -> Result<Converted, Error> {
    let options = dims.iter().fold(ConvertOptions::new(), |o, (name, value)| {
        o.override_dim(name.clone(), *value)
    });
    let options = shapes.iter().fold(options, |o, (name, shape)| {
        o.input_shape(name.clone(), shape)
    });
    let conversion =
        webnn_weights_onnx::convert(model, &options).map_err(|e| Error::Onnx(Box::new(e)))?;
    let path = dir.join(SIDECAR_FILE);
    let tensors = tensors(&conversion.graph, conversion.weights(), &path)?;
    let sidecar = if tensors.is_empty() {
        crate::write::remove_if_present(&path)?;
        None
    } else {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        write_archive(&path, &tensors)?;
        Some(path)
    };
    let external_files = conversion.external_files.clone();
    Ok(Converted {
        graph: conversion.graph,
        sidecar,
        external_files,
    })
}

/// Every `@weights` reference of `graph` with its storage type, stored shape and bytes,
/// sorted by reference. A reference without bytes or with bytes of another length than its
/// declaration is the converter's mistake, reported as such.
fn tensors<'a>(
    graph: &'a GraphJson,
    weights: impl Iterator<Item = (&'a str, &'a [u8])>,
    path: &Path,
) -> Result<Vec<Tensor<'a>>, Error> {
    let bytes: BTreeMap<&str, &[u8]> = weights.collect();
    let mut declared: BTreeMap<&str, (&str, DataType, &[u32])> = BTreeMap::new();
    for (name, decl) in &graph.consts {
        if let ConstInit::Weights { r#ref } = &decl.init {
            declared
                .entry(r#ref.as_str())
                .or_insert((name.as_str(), decl.data_type, &decl.shape));
        }
    }
    let invalid = |message: String| Error::Write {
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the ONNX converter's output is inconsistent: {message}"),
        ),
    };
    let mut out = Vec::with_capacity(declared.len());
    for (reference, (constant, data_type, shape)) in declared {
        let Some(&data) = bytes.get(reference) else {
            return Err(invalid(format!(
                "constant `{constant}` uses @weights({reference:?}), which has no bytes"
            )));
        };
        let length = data_type.byte_length(shape);
        if length != Some(data.len() as u64) || reference == "__metadata__" {
            return Err(invalid(format!(
                "constant `{constant}` ({data_type} {shape:?}) got {} bytes for @weights({reference:?})",
                data.len()
            )));
        }
        let (dtype, shape) = match storage_type(data_type) {
            Some(dtype) => (dtype, shape.iter().map(|&d| u64::from(d)).collect()),
            // Packed 4-bit: 1-D U8 under the archive's marker.
            None => ("U8", vec![data.len() as u64]),
        };
        out.push(Tensor {
            reference,
            dtype,
            shape,
            bytes: data,
            packed: data_type.is_packed_4bit(),
        });
    }
    Ok(out)
}

/// The archive's first bytes: the header's length (8 bytes, little-endian) and the JSON
/// header, padded with spaces so that the data starts at a multiple of [`DATA_START_ALIGN`].
fn head(tensors: &[Tensor<'_>], packed: bool) -> Vec<u8> {
    let mut header = Map::new();
    if packed {
        header.insert(
            "__metadata__".to_string(),
            json!({ PACKED_4BIT_METADATA_KEY: PACKED_4BIT_METADATA_VERSION }),
        );
    }
    let mut at = 0u64;
    for t in tensors {
        let end = at + t.bytes.len() as u64;
        header.insert(
            t.reference.to_string(),
            json!({ "dtype": t.dtype, "shape": t.shape, "data_offsets": [at, end] }),
        );
        at = end;
    }
    let mut text = Value::Object(header).to_string().into_bytes();
    let padded = (8 + text.len()).next_multiple_of(DATA_START_ALIGN) - 8;
    text.resize(padded, b' ');
    let mut head = (text.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(&text);
    head
}

/// Writes the archive of `tensors` at `path` atomically, unless the file there already holds
/// exactly these bytes (then it is left untouched, modification time included).
fn write_archive(path: &Path, tensors: &[Tensor<'_>]) -> Result<(), Error> {
    let head = head(tensors, tensors.iter().any(|t| t.packed));
    let pieces: Vec<&[u8]> = std::iter::once(&head[..])
        .chain(tensors.iter().map(|t| t.bytes))
        .collect();
    if holds(path, &pieces) {
        return Ok(());
    }
    atomic::write_file(path, |w| pieces.iter().try_for_each(|p| w.write_all(p))).map_err(|source| {
        Error::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Whether the file at `path` holds exactly the concatenation of `pieces` (compared 1 MiB
/// at a time; never read whole).
fn holds(path: &Path, pieces: &[&[u8]]) -> bool {
    let total: u64 = pieces.iter().map(|p| p.len() as u64).sum();
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    if file.metadata().map(|m| m.len()).ok() != Some(total) {
        return false;
    }
    let mut buf = vec![0u8; (1 << 20).min(total as usize)];
    for piece in pieces {
        for chunk in piece.chunks(buf.len().max(1)) {
            let read = &mut buf[..chunk.len()];
            if file.read_exact(read).is_err() || read != chunk {
                return false;
            }
        }
    }
    true
}
