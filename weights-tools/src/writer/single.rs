//! One SafeTensors archive: [`write_external_weights_safetensors`], and the serialization
//! of one archive that the sharded writer uses for each shard.

use super::prepare::{prepare, Prepared};
use super::WriteError;
use safetensors::tensor::TensorView;
use std::collections::HashMap;
use std::path::Path;
use webnn_weights_atomic::StagedFile;
use webnn_weights_runtime::formats::safetensors::{
    PACKED_4BIT_METADATA_KEY, PACKED_4BIT_METADATA_VERSION,
};
use webnn_weights_runtime::GraphJson;

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
    let tensors = prepare(graph, weights, destination)?;
    write_archive(tensors, destination)
}

/// Writes checked `tensors` into one archive installed at `destination` (the marker when
/// one of them is packed).
fn write_archive(tensors: Vec<Prepared<'_>>, destination: &Path) -> Result<(), WriteError> {
    let packed = tensors.iter().any(|t| t.packed);
    let views = tensors.into_iter().map(|t| (t.reference, t.view));
    let io_error = |source| WriteError::Io {
        destination: destination.to_path_buf(),
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

/// Serializes checked `tensors` into one archive (the marker when one of them is packed)
/// staged for `destination` under a marked temporary name, installed by the caller.
pub(super) fn stage_archive(
    tensors: Vec<Prepared<'_>>,
    destination: &Path,
) -> Result<StagedFile, WriteError> {
    let packed = tensors.iter().any(|t| t.packed);
    let views = tensors.into_iter().map(|t| (t.reference, t.view));
    // As in `write_archive`: the serializer's own temporary file stays in a marked folder.
    webnn_weights_atomic::stage_by_path(
        destination,
        |path| serialize(views, packed, path, destination),
        |source| WriteError::Io {
            destination: destination.to_path_buf(),
            source,
        },
    )
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

#[cfg(test)]
mod tests {
    use super::super::test_graphs::{files, graph};
    use super::*;
    use safetensors::Dtype;
    use webnn_weights_runtime::DataType;

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
