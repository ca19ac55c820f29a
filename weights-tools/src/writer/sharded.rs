//! The Hugging Face sharded layout: [`write_external_weights_safetensors_sharded`], its
//! [`ShardedOutput`], and how tensors are split into shards.

use super::prepare::{prepare, Prepared};
use super::single::stage_archive;
use super::WriteError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use webnn_weights_atomic::StagedFile;
use webnn_weights_runtime::GraphJson;

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
fn shard_boundaries(lengths: &[u64], max_shard_size: u64) -> Vec<usize> {
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
/// checks are those of [`write_external_weights_safetensors`].
///
/// Every file is serialized and synced under a marked temporary name first (a check or
/// write failing then installs nothing), then they are installed as one set, in order, the
/// index last (`webnn_weights_atomic::install_all_staged`): should a rename fail, every file
/// of an earlier archive that the set had replaced is put back, byte for byte, and every new
/// file that replaced nothing is removed, so an existing archive stays whole; the error
/// names the file that failed, and if putting a file back fails too, that as well
/// (`webnn_weights_atomic::RestoreError`: which file, and the marked name its previous
/// version is kept under). A process killed between two renames can leave some shards new
/// and the rest, and the index, old. Shards of an earlier, different split are not removed.
///
/// [`write_external_weights_safetensors`]: crate::write_external_weights_safetensors
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
    let (output, staged) = stage_sharded(graph, weights, destination, max_shard_size)?;
    webnn_weights_atomic::install_all_staged(staged).map_err(|(destination, source)| {
        WriteError::Io {
            destination,
            source,
        }
    })?;
    Ok(output)
}

/// The files of [`write_external_weights_safetensors_sharded`], serialized and synced under
/// marked temporary names, in the order to install them (the index last), each with its
/// destination; nothing is installed. Dropping them removes them.
pub(crate) fn stage_sharded(
    graph: &GraphJson,
    weights: &HashMap<String, &[u8]>,
    destination: &Path,
    max_shard_size: u64,
) -> Result<(ShardedOutput, Vec<(StagedFile, PathBuf)>), WriteError> {
    let tensors = prepare(graph, weights, destination)?;
    let lengths: Vec<u64> = tensors.iter().map(|t| t.length).collect();
    let total_size = lengths.iter().sum();
    let starts = shard_boundaries(&lengths, max_shard_size.max(1));
    if starts.len() <= 1 {
        let staged = stage_archive(tensors, destination)?;
        let output = ShardedOutput {
            shards: vec![destination.to_path_buf()],
            index: None,
            total_size,
        };
        return Ok((output, vec![(staged, destination.to_path_buf())]));
    }
    let names = ShardNames::new(destination, starts.len())?;
    let shards = split(tensors, &starts);
    let index = index_json(&shards, &names, total_size)?;
    let staged = stage_files(shards, &names, &index)?;
    let output = ShardedOutput {
        shards: names.shards(),
        index: Some(names.index),
        total_size,
    };
    Ok((output, staged))
}

/// The files of a sharded layout beside `destination` (`<stem>.safetensors`).
struct ShardNames {
    /// The destination's folder.
    folder: PathBuf,
    /// `<stem>-00001-of-0000N.safetensors`, …
    shards: Vec<String>,
    /// `<stem>.safetensors.index.json`.
    index: PathBuf,
}

impl ShardNames {
    /// The names of `n` shards and their index beside `destination`.
    fn new(destination: &Path, n: usize) -> Result<ShardNames, WriteError> {
        let file_name = destination
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| WriteError::Io {
                destination: destination.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the destination must be a file name in UTF-8 (<stem>.safetensors)",
                ),
            })?;
        let stem = match file_name.rsplit_once('.') {
            Some((stem, ext)) if ext.eq_ignore_ascii_case("safetensors") && !stem.is_empty() => {
                stem
            }
            _ => file_name,
        };
        let folder = destination.parent().unwrap_or(Path::new("")).to_path_buf();
        Ok(ShardNames {
            shards: (1..=n)
                .map(|k| format!("{stem}-{k:05}-of-{n:05}.safetensors"))
                .collect(),
            index: folder.join(format!("{stem}.safetensors.index.json")),
            folder,
        })
    }

    /// The shards' paths, in order.
    fn shards(&self) -> Vec<PathBuf> {
        self.shards.iter().map(|s| self.folder.join(s)).collect()
    }
}

/// `tensors` in shards, each starting at the tensor `starts` gives.
fn split<'a>(tensors: Vec<Prepared<'a>>, starts: &[usize]) -> Vec<Vec<Prepared<'a>>> {
    let mut tensors = tensors.into_iter();
    let mut shards = Vec::with_capacity(starts.len());
    for (k, &start) in starts.iter().enumerate() {
        let count = starts.get(k + 1).map(|&next| next - start);
        shards.push(match count {
            Some(count) => tensors.by_ref().take(count).collect(),
            None => tensors.by_ref().collect(),
        });
    }
    shards
}

/// The index's text: `{"metadata": {"total_size": N}, "weight_map": {tensor: shard, …}}`,
/// pretty-printed with a final newline, as Hugging Face writes it.
fn index_json(
    shards: &[Vec<Prepared<'_>>],
    names: &ShardNames,
    total_size: u64,
) -> Result<String, WriteError> {
    let mut weight_map = serde_json::Map::new();
    for (shard, name) in shards.iter().zip(&names.shards) {
        for t in shard {
            weight_map.insert(
                t.reference.to_string(),
                serde_json::Value::String(name.clone()),
            );
        }
    }
    let index = serde_json::json!({
        "metadata": { "total_size": total_size },
        "weight_map": weight_map,
    });
    let text = serde_json::to_string_pretty(&index).map_err(|e| WriteError::Serialize {
        destination: names.index.clone(),
        message: e.to_string(),
    })?;
    Ok(text + "\n")
}

/// Serializes every shard and writes the index, each under a marked temporary name beside
/// its destination (a shard inside a marked folder first: the serializer makes unmarked
/// temporary files of its own), in the order to install them, the index last.
fn stage_files(
    shards: Vec<Vec<Prepared<'_>>>,
    names: &ShardNames,
    index: &str,
) -> Result<Vec<(StagedFile, PathBuf)>, WriteError> {
    let mut staged = Vec::with_capacity(shards.len() + 1);
    for (shard, destination) in shards.into_iter().zip(names.shards()) {
        staged.push((stage_archive(shard, &destination)?, destination));
    }
    let index_file = webnn_weights_atomic::stage_by_path(
        &names.index,
        |path| std::fs::write(path, index.as_bytes()),
        |source| source,
    )
    .map_err(|source| WriteError::Io {
        destination: names.index.clone(),
        source,
    })?;
    staged.push((index_file, names.index.clone()));
    Ok(staged)
}

#[cfg(test)]
mod tests {
    use super::super::test_graphs::{files, graph};
    use super::*;
    use webnn_weights_runtime::formats::safetensors::PACKED_4BIT_METADATA_KEY;
    use webnn_weights_runtime::{ConstInit, DataType};

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
        // renamed, which replaced nothing, are removed again, the index is never installed,
        // no temporary is left.
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

    /// Each entry of `dir` and its bytes (`None` for a folder).
    fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Option<Vec<u8>>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, path.is_file().then(|| std::fs::read(&path).unwrap()))
            })
            .collect()
    }

    /// An archive of four shards and its index overwritten with other weights while one of
    /// its files cannot be replaced (a folder with something in it is in the way, at each
    /// position in turn): the error names that file, and every other file of the earlier
    /// archive is left byte for byte, with no temporary beside it.
    #[test]
    fn a_failed_overwrite_leaves_the_earlier_archive_whole() {
        let refs = ["a", "b", "c", "d"];
        let g = graph(&[
            ("a", DataType::Uint8, &[4], "a"),
            ("b", DataType::Uint8, &[4], "b"),
            ("c", DataType::Uint8, &[4], "c"),
            ("d", DataType::Uint8, &[4], "d"),
        ]);
        let old: &[u8] = &[1; 4];
        let new: &[u8] = &[2; 4];
        let weights = |bytes| HashMap::from(refs.map(|r| (r.to_string(), bytes)));
        let files = [
            "m-00001-of-00004.safetensors",
            "m-00002-of-00004.safetensors",
            "m-00003-of-00004.safetensors",
            "m-00004-of-00004.safetensors",
            "m.safetensors.index.json",
        ];
        for blocked in files {
            let dir = tempfile::tempdir().unwrap();
            let dest = dir.path().join("m.safetensors");
            write_external_weights_safetensors_sharded(&g, &weights(old), &dest, 4).unwrap();
            let earlier = snapshot(dir.path());
            assert_eq!(earlier.keys().collect::<Vec<_>>(), files, "{blocked}");
            let in_the_way = dir.path().join(blocked);
            std::fs::remove_file(&in_the_way).unwrap();
            std::fs::create_dir_all(in_the_way.join("x")).unwrap();
            let before = snapshot(dir.path());
            let err = write_external_weights_safetensors_sharded(&g, &weights(new), &dest, 4)
                .unwrap_err();
            assert!(
                matches!(&err, WriteError::Io { destination, .. } if *destination == in_the_way),
                "{blocked}: {err:?}"
            );
            assert_eq!(snapshot(dir.path()), before, "{blocked}");
            // And with nothing in the way, the new archive replaces the earlier one.
            std::fs::remove_dir_all(&in_the_way).unwrap();
            write_external_weights_safetensors_sharded(&g, &weights(new), &dest, 4).unwrap();
            let after = snapshot(dir.path());
            assert_eq!(after.keys().collect::<Vec<_>>(), files, "{blocked}");
            assert_ne!(after[files[0]], earlier[files[0]]);
        }
    }

    #[test]
    fn shards_are_filled_in_order_without_splitting_a_tensor() {
        assert_eq!(shard_boundaries(&[8, 1], 8), vec![0, 1]);
        assert_eq!(shard_boundaries(&[4, 4, 4], 8), vec![0, 2]);
        assert_eq!(shard_boundaries(&[2, 20, 2, 2], 8), vec![0, 1, 2]);
        assert_eq!(shard_boundaries(&[], 8), Vec::<usize>::new());
        assert_eq!(shard_boundaries(&[3, 3, 2, 9, 1], 8), vec![0, 3, 4]);
    }
}
