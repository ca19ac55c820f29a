//! Writing a graph's external constants into one SafeTensors archive.

// Errors are cold and carry the context of their message.
#![allow(clippy::result_large_err)]

use safetensors::tensor::TensorView;
use safetensors::Dtype;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use webnn_weights_runtime::formats::safetensors::{
    storage_type, PACKED_4BIT_METADATA_KEY, PACKED_4BIT_METADATA_VERSION,
};
use webnn_weights_runtime::{ConstInit, DataType, GraphJson};

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
    #[error("{}: cannot install the SafeTensors archive", destination.display())]
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
    match storage_type(data_type).and_then(dtype_named) {
        Some(dtype) => (dtype, shape.iter().map(|&d| u64::from(d)).collect()),
        // Packed 4-bit: U8 bytes of shape [ceil(n / 2)].
        None => (Dtype::U8, vec![length]),
    }
}

/// `safetensors`' type of a storage type as a header spells it (the runtime's table gives
/// names; `safetensors` reads its types from those same names). `None` only for a name
/// `safetensors` does not know, which no entry of the table is (a test checks each).
fn dtype_named(name: &str) -> Option<Dtype> {
    use serde::de::{value::StrDeserializer, Deserialize};
    Dtype::deserialize(StrDeserializer::<serde::de::value::Error>::new(name)).ok()
}

impl WriteError {
    /// How to fix the input, where there is an obvious way (data, not part of the message).
    pub fn fix(&self) -> Option<String> {
        let fix = match self {
            WriteError::MissingBytes { .. } => "pass its bytes keyed by the reference",
            WriteError::ConflictingDeclarations { .. } => {
                "give them distinct references or the same declaration"
            }
            _ => return None,
        };
        Some(fix.to_string())
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
    let tensors = prepare(graph, weights, destination)?;
    let packed = tensors.iter().any(|t| t.packed);
    let views = tensors.into_iter().map(|t| (t.reference, t.view));
    let io_error = |source| WriteError::Io {
        destination: dest(),
        source,
    };
    // `serialize_to_file` writes a private temporary file of its own beside the path it is
    // given (named `.tmp…`, without our marker) and renames it over that path;
    // `write_by_path` hands it a path inside a marked temporary folder, so even a killed
    // process leaves only recognizable leftovers, and removes the folder on failure.
    webnn_weights_atomic::write_by_path(
        destination,
        |path| serialize(views, packed, path, destination),
        io_error,
    )
}

/// One tensor to write: checked against its declaration.
struct Prepared<'a> {
    reference: &'a str,
    view: TensorView<'a>,
    length: u64,
    packed: bool,
}

/// Serializes `views` into one archive at `path` (with the packed-4-bit marker when
/// `packed`); errors name `destination`.
fn serialize<'a>(
    views: impl IntoIterator<Item = (&'a str, TensorView<'a>)>,
    packed: bool,
    path: &Path,
    destination: &Path,
) -> Result<(), WriteError> {
    let metadata = packed.then(|| {
        HashMap::from([(
            PACKED_4BIT_METADATA_KEY.to_string(),
            PACKED_4BIT_METADATA_VERSION.to_string(),
        )])
    });
    safetensors::serialize_to_file(views, metadata, path).map_err(|e| WriteError::Serialize {
        destination: destination.to_path_buf(),
        message: e.to_string(),
    })
}

/// Checks every external constant of `graph` against its supplied bytes; one tensor per
/// reference, sorted by reference.
fn prepare<'a>(
    graph: &'a GraphJson,
    weights: &'a HashMap<String, &'a [u8]>,
    destination: &Path,
) -> Result<Vec<Prepared<'a>>, WriteError> {
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

    let mut prepared = Vec::with_capacity(declarations.len());
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
        prepared.push(Prepared {
            reference,
            view,
            length,
            packed: data_type.is_packed_4bit(),
        });
    }
    Ok(prepared)
}

/// The files [`write_external_weights_safetensors_sharded`] installed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShardedOutput {
    /// The shards, in order (`<stem>-00001-of-0000N.safetensors`, …); one entry, the
    /// destination itself, when everything fits in one shard.
    pub shards: Vec<PathBuf>,
    /// The index `<stem>.safetensors.index.json`; `None` when one shard held everything
    /// (then no index is written, as Hugging Face does).
    pub index: Option<PathBuf>,
    /// The sum of the tensors' byte sizes (the index's `metadata.total_size`).
    pub total_size: u64,
}

/// Splits tensors (in order) into shards of at most `max_shard_size` bytes of tensor data
/// without splitting a tensor: a tensor that does not fit the current shard starts the
/// next one, and a tensor larger than the limit gets a shard of its own. Returns the index
/// of the first tensor of each shard.
pub(crate) fn shard_boundaries(lengths: &[u64], max_shard_size: u64) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut current = 0u64;
    for (i, &length) in lengths.iter().enumerate() {
        if i == 0 || current.saturating_add(length) > max_shard_size {
            starts.push(i);
            current = 0;
        }
        current = current.saturating_add(length);
    }
    starts
}

/// Parses a shard size as Hugging Face's `max_shard_size` does: plain bytes (`1000000`),
/// or a number with a decimal unit (`kB`/`KB`, `MB`, `GB`, `TB`: powers of 1000) or a
/// binary unit (`KiB`, `MiB`, `GiB`, `TiB`: powers of 1024), letter case ignored, with an
/// optional `B` for bytes. Zero, fractions, bits and overflow are rejected.
///
/// ```
/// use webnn_weights_tools::parse_shard_size;
/// assert_eq!(parse_shard_size("500MB"), Ok(500_000_000));
/// assert_eq!(parse_shard_size("2GiB"), Ok(2 << 30));
/// assert_eq!(parse_shard_size("4096"), Ok(4096));
/// assert!(parse_shard_size("0").is_err());
/// assert!(parse_shard_size("5 parsecs").is_err());
/// ```
pub fn parse_shard_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    let (number, unit) = trimmed.split_at(digits);
    let unit = unit.trim();
    let expected = "expected bytes (e.g. 1000000) or a whole number with a unit: kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
    let bad = |why: &str| format!("invalid shard size \"{text}\": {why}; {expected}");
    if number.is_empty() {
        return Err(bad("no number"));
    }
    if unit.starts_with('.') || unit.starts_with(',') {
        return Err(bad("fractions are not accepted (use a smaller unit)"));
    }
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => return Err(bad(&format!("unknown unit \"{unit}\""))),
    };
    let n: u64 = number.parse().map_err(|_| bad("the number is too large"))?;
    let size = n
        .checked_mul(multiplier)
        .ok_or_else(|| bad("the size does not fit 64 bits"))?;
    if size == 0 {
        return Err(bad("a shard size must be at least one byte"));
    }
    Ok(size)
}

/// Writes every external constant of `graph` as a sharded SafeTensors archive in the
/// Hugging Face layout, beside `destination` (`<stem>.safetensors`):
/// `<stem>-00001-of-0000N.safetensors` … and the index `<stem>.safetensors.index.json`
/// = `{"metadata": {"total_size": N}, "weight_map": {tensor: shard, …}}`.
///
/// Tensors are taken in reference order and filled into shards of at most
/// `max_shard_size` bytes of tensor data (no tensor is split; one
/// larger than the limit gets its own shard). Each shard is a complete archive, carrying
/// the packed-4-bit marker when it holds a packed tensor. When everything fits in one
/// shard, `destination` alone is written, without an index, as Hugging Face does. The
/// checks are those of [`write_external_weights_safetensors`]; all files are written into
/// a temporary folder first and installed together, the index last, so a failure installs
/// nothing (`webnn_weights_atomic::write_set_by_path`). Shards of an earlier, different split
/// are not removed.
///
/// ```
/// use std::collections::HashMap;
/// use webnn_weights_runtime::*;
/// use webnn_weights_tools::write_external_weights_safetensors_sharded;
/// let dir = tempfile::tempdir().unwrap();
/// let mut graph = GraphJson::new(None);
/// for name in ["a", "b", "c"] {
///     graph.consts.insert(name.into(), ConstDecl {
///         data_type: DataType::Uint8, shape: vec![4],
///         init: ConstInit::Weights { r#ref: format!("layer.{name}") },
///     });
/// }
/// let bytes: &[u8] = &[1, 2, 3, 4];
/// let weights = HashMap::from([
///     ("layer.a".to_string(), bytes), ("layer.b".to_string(), bytes), ("layer.c".to_string(), bytes),
/// ]);
/// let out = write_external_weights_safetensors_sharded(
///     &graph, &weights, &dir.path().join("model.safetensors"), 8).unwrap();
/// assert_eq!(out.shards.len(), 2); // a and b, then c
/// assert!(out.shards[1].ends_with("model-00002-of-00002.safetensors"));
/// assert!(out.index.unwrap().ends_with("model.safetensors.index.json"));
/// // What we write, we read back: discovery finds the index beside model.webnn.
/// resolve_external_weights(&mut graph, &dir.path().join("model.webnn"), None, None).unwrap();
/// assert_eq!(graph.consts["c"].init, ConstInit::InlineBytes { bytes: bytes.to_vec().into() });
/// ```
pub fn write_external_weights_safetensors_sharded(
    graph: &GraphJson,
    weights: &HashMap<String, &[u8]>,
    destination: &Path,
    max_shard_size: u64,
) -> Result<ShardedOutput, WriteError> {
    let dest = || destination.to_path_buf();
    let tensors = prepare(graph, weights, destination)?;
    let lengths: Vec<u64> = tensors.iter().map(|t| t.length).collect();
    let total_size = lengths.iter().sum();
    let starts = shard_boundaries(&lengths, max_shard_size.max(1));
    if starts.len() <= 1 {
        write_external_weights_safetensors(graph, weights, destination)?;
        return Ok(ShardedOutput {
            shards: vec![destination.to_path_buf()],
            index: None,
            total_size,
        });
    }
    let file_name = destination
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| WriteError::Io {
            destination: dest(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the destination must be a file name in UTF-8 (<stem>.safetensors)",
            ),
        })?;
    let stem = match file_name.rsplit_once('.') {
        Some((stem, ext)) if ext.eq_ignore_ascii_case("safetensors") && !stem.is_empty() => stem,
        _ => file_name,
    };
    let folder = destination.parent().unwrap_or(Path::new(""));
    let n = starts.len();
    let shard_names: Vec<String> = (1..=n)
        .map(|k| format!("{stem}-{k:05}-of-{n:05}.safetensors"))
        .collect();
    let index_path = folder.join(format!("{stem}.safetensors.index.json"));
    let mut weight_map = serde_json::Map::new();
    let mut groups: Vec<Vec<Prepared<'_>>> = Vec::with_capacity(n);
    let mut tensors = tensors.into_iter();
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(lengths.len());
        let group: Vec<Prepared<'_>> = tensors.by_ref().take(end - start).collect();
        for t in &group {
            weight_map.insert(
                t.reference.to_string(),
                serde_json::Value::String(shard_names[k].clone()),
            );
        }
        groups.push(group);
    }
    let index = serde_json::json!({
        "metadata": { "total_size": total_size },
        "weight_map": weight_map,
    });
    let index_text = serde_json::to_string_pretty(&index).map_err(|e| WriteError::Serialize {
        destination: index_path.clone(),
        message: e.to_string(),
    })? + "\n";
    let mut destinations: Vec<PathBuf> = shard_names.iter().map(|s| folder.join(s)).collect();
    destinations.push(index_path.clone());
    let io_error = |source| WriteError::Io {
        destination: dest(),
        source,
    };
    webnn_weights_atomic::write_set_by_path(
        &destinations,
        |paths| {
            for ((group, path), shard) in groups.into_iter().zip(paths).zip(&destinations) {
                let packed = group.iter().any(|t| t.packed);
                serialize(
                    group.into_iter().map(|t| (t.reference, t.view)),
                    packed,
                    path,
                    shard,
                )?;
            }
            std::fs::write(&paths[n], index_text.as_bytes()).map_err(|source| WriteError::Io {
                destination: index_path.clone(),
                source,
            })
        },
        io_error,
    )?;
    destinations.pop();
    Ok(ShardedOutput {
        shards: destinations,
        index: Some(index_path),
        total_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use webnn_weights_runtime::ConstDecl;

    /// Every error of the crates that offers a fix gives it as the same type (checked when
    /// this test compiles), and this crate's fix is data of the error.
    #[test]
    fn every_fix_is_an_owned_string() {
        use webnn_weights_runtime::formats::FormatError;
        use webnn_weights_runtime::{Error, ResolveError};
        let _: fn(&FormatError) -> Option<String> = FormatError::fix;
        let _: fn(&ResolveError) -> Option<String> = ResolveError::fix;
        let _: fn(&Error) -> Option<String> = Error::fix;
        let fix: fn(&WriteError) -> Option<String> = WriteError::fix;
        let missing = WriteError::MissingBytes {
            destination: PathBuf::from("m.safetensors"),
            reference: "r".into(),
            constant: "w".into(),
        };
        assert_eq!(
            fix(&missing).as_deref(),
            Some("pass its bytes keyed by the reference")
        );
    }

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

    #[test]
    fn every_storage_type_of_the_table_is_a_safetensors_type() {
        for data_type in DataType::ALL {
            let (dtype, shape) = storage(data_type, &[2, 3], 3);
            match storage_type(data_type) {
                Some(name) => {
                    assert_eq!(dtype.to_string(), name, "{data_type}");
                    assert_eq!(shape, [2, 3]);
                    let size = data_type.element_size().unwrap();
                    assert_eq!(dtype.bitsize() as u64, size * 8, "{data_type}");
                }
                None => {
                    assert!(data_type.is_packed_4bit(), "{data_type}");
                    assert_eq!((dtype, shape), (Dtype::U8, vec![3]));
                }
            }
        }
        assert_eq!(dtype_named("F8_E4M3"), Some(Dtype::F8_E4M3));
        assert_eq!(dtype_named("f32"), None);
    }

    fn index_of(path: &Path) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn sharded_layout_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let g = graph(&[
            ("ca", DataType::Uint8, &[4], "a"),
            ("cb", DataType::Float32, &[5], "b"),
            ("cc", DataType::Int4, &[8], "c"),
            ("cd", DataType::Uint8, &[4], "d"),
            ("cd2", DataType::Uint8, &[4], "d"),
        ]);
        let a: &[u8] = &[1, 2, 3, 4];
        let b: &[u8] = &[9; 20];
        let c: &[u8] = &[0x10, 0x32, 0x54, 0x76];
        let d: &[u8] = &[5, 6, 7, 8];
        let weights = HashMap::from([
            ("a".to_string(), a),
            ("b".to_string(), b),
            ("c".to_string(), c),
            ("d".to_string(), d),
        ]);
        let dest = dir.path().join("net.safetensors");
        let out = write_external_weights_safetensors_sharded(&g, &weights, &dest, 8).unwrap();
        // a | b (20 bytes > 8: alone) | c + d (4 + 4 = 8)
        let names = [
            "net-00001-of-00003.safetensors",
            "net-00002-of-00003.safetensors",
            "net-00003-of-00003.safetensors",
        ];
        assert_eq!(out.shards, names.map(|n| dir.path().join(n)));
        let index_path = dir.path().join("net.safetensors.index.json");
        assert_eq!(out.index.as_deref(), Some(index_path.as_path()));
        assert_eq!(out.total_size, 32);
        assert_eq!(
            index_of(&index_path),
            serde_json::json!({
                "metadata": {"total_size": 32},
                "weight_map": {"a": names[0], "b": names[1], "c": names[2], "d": names[2]},
            })
        );
        let text = std::fs::read_to_string(&index_path).unwrap();
        assert!(
            text.starts_with("{\n  \"metadata\": {\n    \"total_size\": 32\n  },"),
            "{text}"
        );
        assert!(text.ends_with("}\n"));
        // Each shard is a complete archive; the marker only where packed tensors are.
        let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
        for (n, marked) in [(names[0], false), (names[1], false), (names[2], true)] {
            let bytes = read(n);
            let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
            assert_eq!(
                meta.metadata()
                    .as_ref()
                    .is_some_and(
                        |m| m.get(PACKED_4BIT_METADATA_KEY).map(String::as_str) == Some("1")
                    ),
                marked,
                "{n}"
            );
        }
        // Read back by discovery beside net.webnn: the same bytes.
        let mut back = g.clone();
        webnn_weights_runtime::resolve_external_weights(
            &mut back,
            &dir.path().join("net.webnn"),
            None,
            None,
        )
        .unwrap();
        for (name, bytes) in [("ca", a), ("cb", b), ("cc", c), ("cd", d), ("cd2", d)] {
            assert_eq!(
                back.consts[name].init,
                ConstInit::InlineBytes {
                    bytes: bytes.to_vec().into()
                },
                "{name}"
            );
        }
        assert_eq!(files(dir.path()), 4);
    }

    #[test]
    fn one_shard_writes_the_archive_alone() {
        let dir = tempfile::tempdir().unwrap();
        let g = graph(&[("a", DataType::Uint8, &[4], "a")]);
        let a: &[u8] = &[1, 2, 3, 4];
        let dest = dir.path().join("m.safetensors");
        let out = write_external_weights_safetensors_sharded(
            &g,
            &HashMap::from([("a".to_string(), a)]),
            &dest,
            1 << 20,
        )
        .unwrap();
        assert_eq!(out.shards, vec![dest.clone()]);
        assert_eq!(out.index, None);
        assert_eq!(files(dir.path()), 1);
        assert!(dest.is_file());
    }

    #[test]
    fn sharded_failures_install_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("m.safetensors");
        let four: &[u8] = &[0; 4];
        let g = graph(&[
            ("a", DataType::Uint8, &[4], "a"),
            ("b", DataType::Uint8, &[4], "b"),
            ("c", DataType::Uint8, &[4], "c"),
        ]);
        // A check fails: nothing written.
        let partial = HashMap::from([("a".to_string(), four), ("b".to_string(), four)]);
        let err = write_external_weights_safetensors_sharded(&g, &partial, &dest, 4).unwrap_err();
        assert!(err.to_string().contains("no supplied bytes"), "{err}");
        assert_eq!(files(dir.path()), 0);
        // Installing the third shard fails (a folder is in the way): the shards already
        // renamed are removed again, the index is never installed, no temporary is left.
        std::fs::create_dir(dir.path().join("m-00003-of-00003.safetensors")).unwrap();
        std::fs::write(dir.path().join("m-00003-of-00003.safetensors/x"), b"x").unwrap();
        let all = HashMap::from([
            ("a".to_string(), four),
            ("b".to_string(), four),
            ("c".to_string(), four),
        ]);
        let err = write_external_weights_safetensors_sharded(&g, &all, &dest, 4).unwrap_err();
        assert!(matches!(err, WriteError::Io { .. }), "{err:?}");
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["m-00003-of-00003.safetensors"]);
    }

    #[test]
    fn shard_sizes_parse_like_hugging_face() {
        for (text, size) in [
            ("500MB", 500_000_000),
            ("500mb", 500_000_000),
            ("2GiB", 2 << 30),
            ("10KiB", 10 << 10),
            ("5kB", 5_000),
            ("1TB", 1_000_000_000_000),
            ("123", 123),
            ("64 B", 64),
        ] {
            assert_eq!(parse_shard_size(text), Ok(size), "{text}");
        }
        for (text, words) in [
            ("0", "at least one byte"),
            ("1.5GB", "fractions"),
            ("GB", "no number"),
            ("5PB", "unknown unit"),
            ("99999999999TB", "64 bits"),
        ] {
            let err = parse_shard_size(text).unwrap_err();
            assert!(err.contains(words) && err.contains(text), "{err}");
        }
        assert_eq!(shard_boundaries(&[8, 1], 8), vec![0, 1]);
        assert_eq!(shard_boundaries(&[4, 4, 4], 8), vec![0, 2]);
        assert_eq!(shard_boundaries(&[2, 20, 2, 2], 8), vec![0, 1, 2]);
        assert_eq!(shard_boundaries(&[], 8), Vec::<usize>::new());
        assert_eq!(shard_boundaries(&[3, 3, 2, 9, 1], 8), vec![0, 3, 4]);
    }
}
