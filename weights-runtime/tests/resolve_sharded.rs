//! Sharded SafeTensors archives (Hugging Face index + shards): reading, discovery, the
//! rules over the union of names, per-shard validation, path rules, every loader mode,
//! and what our own writer produces read back. Fixtures: `tests/fixtures/hf-sharded/`,
//! made by `tests/fixtures-src/make_sharded.py` (Python `safetensors` + the HF layout).
#![allow(clippy::result_large_err)]

mod common;
use common::MappedHere;
use webnn_weights_runtime::Report;

use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use webnn_weights_runtime::formats::{self, FormatError, SidecarFormat};
use webnn_weights_runtime::{
    load_graph, plan_external_weights, read_graph_file, ConstInit, DataType, Error, GraphJson,
    GraphLoader, ResolveError, SidecarKind,
};

const SHARDS: [&str; 3] = [
    "model-00001-of-00003.safetensors",
    "model-00002-of-00003.safetensors",
    "model-00003-of-00003.safetensors",
];
const INDEX: &str = "model.safetensors.index.json";

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hf-sharded")
}

/// A writable copy of the fixture folder.
fn copy() -> tempfile::TempDir {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture_dir()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

fn consts_bytes(graph: &GraphJson) -> BTreeMap<String, Bytes> {
    graph
        .consts
        .iter()
        .filter_map(|(n, d)| match &d.init {
            ConstInit::InlineBytes { bytes } => Some((n.clone(), bytes.clone())),
            _ => None,
        })
        .collect()
}

fn resolve_err(e: Error) -> ResolveError {
    match e {
        Error::Resolve(e) => *e,
        other => panic!("expected a resolve error, got {other:?}"),
    }
}

fn edit_index(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join(INDEX);
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut index);
    std::fs::write(&path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
}

#[test]
fn sharded_fixture_resolves_like_the_same_tensors_in_one_archive() {
    let d = fixture_dir();
    let single = GraphLoader::new(d.join("encoder_single.webnn"))
        .weights("all.safetensors")
        .load()
        .unwrap();
    let expected = consts_bytes(&single);
    assert_eq!(expected.len(), 9);
    let owned = load_graph(d.join("encoder.webnn")).unwrap();
    let mapped = GraphLoader::new(d.join("encoder.webnn"))
        .mapped_here()
        .load()
        .unwrap();
    let mut memory = GraphLoader::from_graph(read_graph_file(d.join("encoder.webnn")).unwrap())
        .weights_bytes(std::fs::read(d.join(INDEX)).unwrap());
    for shard in SHARDS {
        memory = memory.shard_bytes(shard, std::fs::read(d.join(shard)).unwrap());
    }
    let memory = memory.load().unwrap();
    for (mode, graph) in [("owned", &owned), ("mapped", &mapped), ("memory", &memory)] {
        assert_eq!(consts_bytes(graph), expected, "{mode}");
    }
    // Tied constants (two references, one stored tensor) share one buffer in every mode.
    for graph in [&owned, &mapped, &memory] {
        let b = consts_bytes(graph);
        assert_eq!(b["emb"].as_ptr(), b["tied"].as_ptr());
    }
}

#[test]
fn plan_names_the_index_and_the_shard_of_every_constant() {
    let d = fixture_dir();
    let graph = read_graph_file(d.join("encoder.webnn")).unwrap();
    let plan = plan_external_weights(&graph, &d.join("encoder.webnn"), None, None).unwrap();
    let sidecar = plan.sidecar().unwrap();
    assert_eq!(sidecar.path, d.join(INDEX));
    assert_eq!(sidecar.kind, SidecarKind::ShardedSafeTensors);
    assert_eq!(sidecar.len, std::fs::metadata(d.join(INDEX)).unwrap().len());
    let files: Vec<PathBuf> = plan
        .files()
        .iter()
        .map(|f| f.path().to_path_buf())
        .collect();
    assert_eq!(files, SHARDS.map(|s| d.join(s)));
    let shard_of = |c: &str| plan.constant(c).unwrap().file.clone();
    assert_eq!(shard_of("emb"), d.join(SHARDS[0]));
    assert_eq!(shard_of("q_weight"), d.join(SHARDS[1]));
    assert_eq!(shard_of("pd"), d.join(SHARDS[1])); // exact name wins over a normalized twin
    assert_eq!(shard_of("quant"), d.join(SHARDS[2]));
    assert_eq!(
        plan.constant("emb").unwrap().stored_name,
        "embeddings.word_embeddings.weight"
    );
    // Discovery examined the four candidates, then the two index names.
    let watched: Vec<String> = plan
        .watched_paths()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        watched,
        [
            "encoder.safetensors",
            "encoder.weights",
            "model.safetensors",
            "model.weights",
            "encoder.safetensors.index.json",
            INDEX
        ]
    );
}

#[test]
fn only_shards_holding_a_requested_tensor_are_opened() {
    let dir = copy();
    let d = dir.path();
    std::fs::remove_file(d.join(SHARDS[1])).unwrap();
    std::fs::write(d.join(SHARDS[2]), b"not an archive").unwrap();
    // small.webnn needs only the first shard.
    let plan = plan_external_weights(
        &read_graph_file(d.join("small.webnn")).unwrap(),
        &d.join("small.webnn"),
        None,
        None,
    )
    .unwrap();
    assert_eq!(plan.files().len(), 1);
    assert_eq!(plan.files()[0].path(), d.join(SHARDS[0]));
    for loader in [
        GraphLoader::new(d.join("small.webnn")),
        GraphLoader::new(d.join("small.webnn")).mapped_here(),
    ] {
        let g = loader.load().unwrap();
        assert_eq!(consts_bytes(&g).len(), 2);
    }
    // In memory, only the needed shard has to be given.
    let g = GraphLoader::from_graph(read_graph_file(d.join("small.webnn")).unwrap())
        .weights_bytes(std::fs::read(d.join(INDEX)).unwrap())
        .shard_bytes(SHARDS[0], std::fs::read(d.join(SHARDS[0])).unwrap())
        .load()
        .unwrap();
    assert_eq!(consts_bytes(&g).len(), 2);
    // The full graph needs the missing shard: an error naming it (and a tensor in it).
    let err = resolve_err(load_graph(d.join("encoder.webnn")).unwrap_err());
    let msg = Report::new(&err).to_string();
    assert!(
        msg.contains(SHARDS[1])
            && msg.contains("does not exist")
            && msg.contains("encoder.layer.0"),
        "{msg}"
    );
    assert!(err.fix().unwrap().contains("shard"), "{:?}", err.fix());
}

#[test]
fn every_opened_shard_is_validated_like_a_single_archive() {
    let dir = copy();
    let d = dir.path();
    // Trailing bytes after the last tensor of the third shard.
    let mut bytes = std::fs::read(d.join(SHARDS[2])).unwrap();
    bytes.extend_from_slice(&[0; 8]);
    std::fs::write(d.join(SHARDS[2]), bytes).unwrap();
    let err = resolve_err(load_graph(d.join("encoder.webnn")).unwrap_err());
    match &err {
        ResolveError::Format {
            source: FormatError::SafeTensorsHeader { path, found, .. },
            ..
        } => {
            assert_eq!(path, &d.join(SHARDS[2]));
            assert!(found.contains("8 bytes after the last tensor"), "{found}");
        }
        other => panic!("{other:?}"),
    }
    // A truncated first shard.
    let bytes = std::fs::read(d.join(SHARDS[0])).unwrap();
    std::fs::write(d.join(SHARDS[0]), &bytes[..bytes.len() - 1]).unwrap();
    let err = load_graph(d.join("small.webnn")).unwrap_err();
    let msg = Report::new(&err).to_string();
    assert!(
        msg.contains(SHARDS[0]) && msg.contains("truncated"),
        "{msg}"
    );
}

#[test]
fn names_and_ambiguity_work_over_the_union_of_all_shards() {
    let d = fixture_dir();
    let gp = d.join("g.webnn");
    // pooler.dense.weight (shard 1) and pooler_dense.weight (shard 2) both normalize to
    // pooler_dense_weight.
    let g = common::graph(&[("p", DataType::Float32, &[2, 2], "pooler_dense_weight")]);
    match plan_external_weights(&g, &gp, Some(Path::new(INDEX)), None) {
        Err(ResolveError::AmbiguousTensor {
            sidecar,
            candidates,
            ..
        }) => {
            assert_eq!(sidecar, d.join(INDEX));
            assert_eq!(candidates, ["pooler.dense.weight", "pooler_dense.weight"]);
        }
        other => panic!("{other:?}"),
    }
    // Exact before normalized: each spelling reaches its own shard.
    let g = common::graph(&[
        ("a", DataType::Float32, &[2, 2], "pooler.dense.weight"),
        ("b", DataType::Float32, &[2, 2], "pooler_dense.weight"),
    ]);
    let plan = plan_external_weights(&g, &gp, Some(Path::new(INDEX)), None).unwrap();
    assert_eq!(plan.constant("a").unwrap().file, d.join(SHARDS[0]));
    assert_eq!(plan.constant("b").unwrap().file, d.join(SHARDS[1]));
    // A name in no shard: the index is named, with the names it holds.
    let g = common::graph(&[("x", DataType::Float32, &[1], "nope")]);
    let err = plan_external_weights(&g, &gp, Some(Path::new(INDEX)), None).unwrap_err();
    match &err {
        ResolveError::MissingTensor {
            sidecar,
            available_total,
            ..
        } => {
            assert_eq!(sidecar, &d.join(INDEX));
            assert_eq!(*available_total, 10);
        }
        other => panic!("{other:?}"),
    }
    // Declaration checks name the shard holding the tensor.
    let g = common::graph(&[("m", DataType::Int8, &[8], "pooler.mask")]);
    let msg = plan_external_weights(&g, &gp, Some(Path::new(INDEX)), None)
        .unwrap_err()
        .to_string();
    assert!(msg.contains(SHARDS[2]) && msg.contains("found U8"), "{msg}");
}

#[test]
fn packed_marker_is_read_from_the_shard_holding_the_tensor() {
    let d = fixture_dir();
    let gp = d.join("g.webnn");
    // quant.w: shard 3 has the marker.
    let g = common::graph(&[("q", DataType::Int4, &[8], "quant.w")]);
    plan_external_weights(&g, &gp, Some(Path::new(INDEX)), None).unwrap();
    // quant.unmarked: shard 2 has none (although shard 3 of the same archive does).
    let g = common::graph(&[("q", DataType::Uint4, &[8], "quant.unmarked")]);
    match plan_external_weights(&g, &gp, Some(Path::new(INDEX)), None) {
        Err(ResolveError::PackedMarker { sidecar, found, .. }) => {
            assert_eq!(sidecar, d.join(SHARDS[1]));
            assert_eq!(found, None);
        }
        other => panic!("{other:?}"),
    }
    // The same bytes in the single archive (marked) resolve.
    plan_external_weights(&g, &gp, Some(Path::new("all.safetensors")), None).unwrap();
}

#[test]
fn tensor_missing_from_the_shard_the_index_names() {
    let dir = copy();
    let d = dir.path();
    edit_index(d, |i| i["weight_map"]["pooler.mask"] = SHARDS[0].into());
    let err = resolve_err(load_graph(d.join("encoder.webnn")).unwrap_err());
    match &err {
        ResolveError::Format {
            source: FormatError::NotInShard { tensor, shard, .. },
            ..
        } => {
            assert_eq!(tensor, "pooler.mask");
            assert_eq!(shard, &d.join(SHARDS[0]));
        }
        other => panic!("{other:?}"),
    }
    let msg = Report::new(&err).to_string();
    assert!(
        msg.contains("`pooler.mask`") && msg.contains(SHARDS[0]),
        "{msg}"
    );
}

#[test]
fn shard_paths_are_relative_to_the_index_and_stay_inside_its_folder() {
    let cases: [(&str, &str); 7] = [
        ("/etc/model-00001.safetensors", "an absolute path"),
        ("C:\\models\\model-00001.safetensors", "an absolute path"),
        ("sub\\..\\..\\x.safetensors", "`..`"),
        ("../model-00001-of-00003.safetensors", "`..`"),
        ("sub/../../x.safetensors", "`..`"),
        ("", "an empty shard name"),
        ("model-00001-of-00003.bin", "not a SafeTensors archive"),
    ];
    for (entry, why) in cases {
        let dir = copy();
        let d = dir.path();
        edit_index(d, |i| {
            i["weight_map"]["embeddings.position_ids"] = entry.into();
        });
        let err = resolve_err(load_graph(d.join("small.webnn")).unwrap_err());
        let msg = Report::new(&err).to_string();
        assert!(
            msg.contains("`embeddings.position_ids`")
                && msg.contains(&format!("\"{entry}\""))
                && msg.contains(why),
            "{entry}: {msg}"
        );
        assert!(err.fix().is_some());
    }
    // A shard in a subfolder of the index's folder is fine.
    let dir = copy();
    let d = dir.path();
    std::fs::create_dir(d.join("shards")).unwrap();
    for shard in SHARDS {
        std::fs::rename(d.join(shard), d.join("shards").join(shard)).unwrap();
    }
    edit_index(d, |i| {
        for (_, v) in i["weight_map"].as_object_mut().unwrap() {
            *v = format!("./shards/{}", v.as_str().unwrap()).into();
        }
    });
    let g = load_graph(d.join("encoder.webnn")).unwrap();
    let single = GraphLoader::new(d.join("encoder_single.webnn"))
        .weights("all.safetensors")
        .load()
        .unwrap();
    assert_eq!(consts_bytes(&g), consts_bytes(&single));
}

#[test]
fn invalid_index_files_are_named_with_what_was_expected() {
    let cases: [(&str, &str); 6] = [
        ("[]", "found an array"),
        (
            "{\"weight_map\":{\"a\":\"x.safetensors\",\"a\":\"y.safetensors\"}}",
            "every key once (a tensor names one shard), found duplicate key \"a\" at line 1",
        ),
        ("{\"metadata\":{}}", "no `weight_map`"),
        ("{\"weight_map\":[]}", "found an array"),
        ("{\"weight_map\":{\"a\":3}}", "a number for tensor `a`"),
        ("{\"weight_map\":", "invalid JSON"),
    ];
    for (text, words) in cases {
        let dir = copy();
        let d = dir.path();
        std::fs::write(d.join(INDEX), text).unwrap();
        let err = load_graph(d.join("small.webnn")).unwrap_err();
        let msg = Report::new(&err).to_string();
        assert!(
            msg.contains(INDEX)
                && msg.contains("invalid sharded SafeTensors index")
                && msg.contains(words),
            "{text}: {msg}"
        );
    }
    // metadata.total_size is informational: a wrong one is not an error.
    let dir = copy();
    edit_index(dir.path(), |i| i["metadata"]["total_size"] = 1.into());
    load_graph(dir.path().join("encoder.webnn")).unwrap();
}

#[test]
fn discovery_finds_an_index_only_after_the_four_candidates() {
    let dir = copy();
    let d = dir.path();
    // model.safetensors (a format candidate) wins over any index.
    std::fs::copy(d.join("all.safetensors"), d.join("model.safetensors")).unwrap();
    let g = read_graph_file(d.join("encoder.webnn")).unwrap();
    let plan = plan_external_weights(&g, &d.join("encoder.webnn"), None, None).unwrap();
    assert_eq!(plan.sidecar().unwrap().path, d.join("model.safetensors"));
    assert!(!plan
        .watched_paths()
        .iter()
        .any(|p| p.to_string_lossy().ends_with(".index.json")));
    std::fs::remove_file(d.join("model.safetensors")).unwrap();
    // <stem>.safetensors.index.json before model.safetensors.index.json.
    let own_index = d.join("encoder.safetensors.index.json");
    std::fs::copy(d.join(INDEX), &own_index).unwrap();
    std::fs::write(d.join(INDEX), "not even JSON").unwrap();
    let plan = plan_external_weights(&g, &d.join("encoder.webnn"), None, None).unwrap();
    assert_eq!(plan.sidecar().unwrap().path, own_index);
    // An explicit path ending in .safetensors.index.json is an index.
    let plan = plan_external_weights(
        &g,
        &d.join("encoder.webnn"),
        Some(Path::new("encoder.safetensors.index.json")),
        None,
    )
    .unwrap();
    assert_eq!(
        plan.sidecar().unwrap().kind,
        SidecarKind::ShardedSafeTensors
    );
    assert_eq!(
        SidecarFormat::of_path(Path::new("X.SafeTensors.Index.JSON")),
        SidecarFormat::ShardedSafeTensors
    );
    // Nothing at all: the message lists the index names after the four.
    let empty = webnn_weights_test_support::tempdir().unwrap();
    let err =
        plan_external_weights(&g, &empty.path().join("encoder.webnn"), None, None).unwrap_err();
    let msg = Report::new(&err).to_string();
    assert!(
        msg.contains("model.weights, then for a sharded archive's index")
            && msg.contains("encoder.safetensors.index.json")
            && msg.ends_with("model.safetensors.index.json"),
        "{msg}"
    );
}

#[test]
fn in_memory_shards_are_slices_and_a_missing_one_is_named() {
    let d = fixture_dir();
    let graph = read_graph_file(d.join("encoder.webnn")).unwrap();
    let buffers: Vec<Bytes> = SHARDS
        .iter()
        .map(|s| Bytes::from(std::fs::read(d.join(s)).unwrap()))
        .collect();
    let mut loader =
        GraphLoader::from_graph(graph.clone()).weights_bytes(std::fs::read(d.join(INDEX)).unwrap());
    for (name, b) in SHARDS.iter().zip(&buffers) {
        loader = loader.shard_bytes(*name, b.clone());
    }
    let resolved = consts_bytes(&loader.load().unwrap());
    let within = |b: &Bytes, buf: &Bytes| {
        let start = buf.as_ptr() as usize;
        let p = b.as_ptr() as usize;
        p >= start && p + b.len() <= start + buf.len()
    };
    assert!(within(&resolved["emb"], &buffers[0]));
    assert!(within(&resolved["q_weight"], &buffers[1]));
    assert!(within(&resolved["quant"], &buffers[2]));
    // Shard 2 not given.
    let err = GraphLoader::from_graph(graph)
        .weights_bytes(std::fs::read(d.join(INDEX)).unwrap())
        .shard_bytes(SHARDS[0], buffers[0].clone())
        .shard_bytes(SHARDS[2], buffers[2].clone())
        .load()
        .unwrap_err();
    let msg = Report::new(&err).to_string();
    assert!(
        msg.contains(SHARDS[1]) && msg.contains("was not given") && msg.contains("shard_bytes"),
        "{msg}"
    );
}

#[test]
fn catalog_of_a_whole_sharded_archive() {
    let d = fixture_dir();
    let catalog = formats::sharded::ShardIndex::read(&d.join(INDEX))
        .unwrap()
        .open_all()
        .unwrap();
    assert_eq!(catalog.format(), SidecarFormat::ShardedSafeTensors);
    assert_eq!(catalog.names_file(), d.join(INDEX));
    assert_eq!(catalog.files().len(), 3);
    assert_eq!(catalog.tensors().len(), 10);
    assert_eq!(catalog.metadata()["total_size"], "1392");
    let by_name: HashMap<&str, usize> = catalog
        .tensors()
        .iter()
        .map(|t| (t.name(), t.file()))
        .collect();
    assert_eq!(by_name["pooler.dense.weight"], 0);
    assert_eq!(by_name["pooler_dense.weight"], 1);
    let marked: Vec<Option<&str>> = catalog
        .tensors()
        .iter()
        .filter(|t| t.name().starts_with("quant."))
        .map(|t| catalog.packed_marker_of(t))
        .collect();
    assert_eq!(marked.len(), 2);
    assert!(marked.contains(&None) && marked.contains(&Some("1")));
}

proptest::proptest! {
    /// Any bytes: a typed error or an index, never a panic; every accepted shard path
    /// stays inside the index's folder.
    #[test]
    fn index_parsing_never_panics_and_never_leaves_the_folder(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        entries in proptest::collection::vec("[a-z./\\\\:]{0,12}", 0..6),
    ) {
        let folder = Path::new("ckpt");
        let index_path = folder.join(INDEX);
        let _ = formats::sharded::ShardIndex::parse(&bytes, &index_path);
        let map: serde_json::Map<String, serde_json::Value> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (format!("t{i}"), serde_json::Value::from(format!("{e}.safetensors"))))
            .collect();
        let json = serde_json::to_vec(&serde_json::json!({"weight_map": map})).unwrap();
        if let Ok(index) = formats::sharded::ShardIndex::parse(&json, &index_path) {
            for shard in index.shards() {
                let relative = shard.path().strip_prefix(folder).unwrap();
                proptest::prop_assert!(relative
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_))), "{:?}", shard);
                proptest::prop_assert!(!shard.entry().split(['/', '\\']).any(|p| p == ".."));
            }
        }
    }
}
