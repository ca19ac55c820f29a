//! Weights locks at run time: every way of loading verifies the lock beside the graph (or
//! one named with `GraphLoader::lock`); a changed used byte fails with every problem named;
//! bytes the graph does not use change nothing; BF16 constants are pinned as widened;
//! constants on one stored tensor are each checked.

use std::path::Path;
use webnn_weights_runtime::{
    load_graph, load_graph_mapped, parse_webnn, plan_external_weights, read_graph_file,
    resolve_external_weights, ConstInit, Error, GraphLoader, LockProblem, ResolveError,
    WeightsLock,
};

const GRAPH: &str = r#"webnn_graph "g" v2 {
  consts { a: u8[4] @weights("a"); big: u8[100000] @weights("big"); t: u8[4] @weights("a"); }
  nodes { x = add(a, t); y = relu(big); }
  outputs { x; y; }
}
"#;

/// Writes `g.safetensors`: `a`, `big` (100,000 bytes: read in chunks, not in the small
/// constants' window) and `spare`, which the graph does not use.
fn weights(dir: &Path, a: [u8; 4], big_last: u8, spare: u8) -> Vec<u8> {
    let mut big = vec![3u8; 100_000];
    big[99_999] = big_last;
    let bytes = webnn_weights_test_support::u8_archive(&[
        ("a", &a[..]),
        ("big", &big[..]),
        ("spare", &[spare; 8][..]),
    ]);
    let tmp = dir.join("g.tmp");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(tmp, dir.join("g.safetensors")).unwrap();
    bytes
}

/// A model folder whose lock pins the first weights.
fn locked() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let graph = dir.path().join("g.webnn");
    std::fs::write(&graph, GRAPH).unwrap();
    weights(dir.path(), [1, 2, 3, 4], 9, 0);
    let plan = plan_external_weights(&parse_webnn(GRAPH).unwrap(), &graph, None, None).unwrap();
    let lock = plan.to_lock().unwrap();
    std::fs::write(WeightsLock::path_for(&graph), lock.to_json()).unwrap();
    (dir, graph)
}

fn problems(err: &Error) -> Vec<LockProblem> {
    match err {
        Error::Resolve(e) => match &**e {
            ResolveError::LockMismatch { problems, .. } => problems.clone(),
            other => panic!("not a lock mismatch: {other}"),
        },
        other => panic!("not a resolve error: {other}"),
    }
}

/// Every way of loading `graph`: owned, mapped, weights in memory.
fn every_way(
    graph: &Path,
) -> Vec<(
    &'static str,
    Result<webnn_weights_runtime::GraphJson, Error>,
)> {
    let bytes = std::fs::read(graph.with_extension("safetensors")).unwrap();
    let mut ways = vec![
        ("owned", load_graph(graph)),
        (
            "memory",
            GraphLoader::new(graph).weights_bytes(bytes).load(),
        ),
    ];
    // wasm32 cannot map files (`MappingUnsupported`, checked by resolve_api.rs).
    if cfg!(not(target_family = "wasm")) {
        ways.insert(1, ("mapped", load_graph_mapped(graph)));
    }
    ways
}

#[test]
fn every_way_of_loading_verifies_the_lock_beside_the_graph() {
    let (dir, graph) = locked();
    for (way, result) in every_way(&graph) {
        let loaded = result.unwrap_or_else(|e| panic!("{way}: {e}"));
        assert!(
            matches!(loaded.consts["a"].init, ConstInit::InlineBytes { .. }),
            "{way}"
        );
    }
    // A byte of a tensor the graph does not use: nothing changes.
    weights(dir.path(), [1, 2, 3, 4], 9, 7);
    for (way, result) in every_way(&graph) {
        assert!(result.is_ok(), "{way}: {:?}", result.err());
    }
    // The last byte of `big` and a byte of `a` (shared by `t`): every constant named, in
    // every way, with both digests.
    weights(dir.path(), [1, 2, 3, 5], 8, 7);
    for (way, result) in every_way(&graph) {
        let err = result.expect_err(way);
        let names: Vec<String> = problems(&err)
            .iter()
            .map(|p| p.constant().to_string())
            .collect();
        assert_eq!(names, ["a", "big", "t"], "{way}");
        let text = err.to_string();
        assert!(
            text.contains("do not match the lock") && text.contains("g.webnn.lock"),
            "{way}: {text}"
        );
        assert!(err.fix().unwrap().contains("webnn-weights lock"), "{way}");
    }
    // resolve_external_weights too, leaving the graph untouched.
    let mut graph_json = read_graph_file(&graph).unwrap();
    let before = graph_json.clone();
    let err = resolve_external_weights(&mut graph_json, &graph, None, None).unwrap_err();
    assert!(matches!(err, ResolveError::LockMismatch { .. }), "{err}");
    assert_eq!(graph_json, before);
}

#[test]
fn an_explicit_lock_and_graphs_in_memory() {
    let (dir, graph) = locked();
    // Moved away: found only when named.
    let named = dir.path().join("pinned.lock");
    std::fs::rename(WeightsLock::path_for(&graph), &named).unwrap();
    weights(dir.path(), [1, 2, 3, 5], 9, 0);
    assert!(load_graph(&graph).is_ok(), "no lock beside the graph");
    let err = GraphLoader::new(&graph)
        .lock("pinned.lock")
        .load()
        .unwrap_err();
    assert_eq!(problems(&err).len(), 2); // a and t
                                         // A graph in memory without a path: only a lock named explicitly applies (relative to
                                         // the working directory: give it absolute here).
    let in_memory = || {
        GraphLoader::from_graph(parse_webnn(GRAPH).unwrap())
            .weights_bytes(std::fs::read(dir.path().join("g.safetensors")).unwrap())
    };
    assert!(in_memory().load().is_ok());
    assert!(in_memory().lock(&named).load().is_err());
    // With a path, discovery applies as for a file.
    std::fs::rename(&named, WeightsLock::path_for(&graph)).unwrap();
    assert!(in_memory().graph_path(&graph).load().is_err());
    // A named lock that does not exist is an error, not a silent pass.
    let err = GraphLoader::new(&graph)
        .lock("nope.lock")
        .load()
        .unwrap_err();
    assert!(
        err.to_string().contains("weights lock") && err.to_string().contains("nope.lock"),
        "{err}"
    );
}

#[test]
fn bf16_constants_are_pinned_as_widened_and_entries_are_checked() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hf-safetensors");
    let dir = webnn_weights_test_support::tempdir().unwrap();
    for name in ["head.webnn", "lm_head.safetensors"] {
        std::fs::copy(fixtures.join(name), dir.path().join(name)).unwrap();
    }
    let graph_path = dir.path().join("head.webnn");
    let graph = read_graph_file(&graph_path).unwrap();
    let plan = plan_external_weights(
        &graph,
        &graph_path,
        Some(Path::new("lm_head.safetensors")),
        None,
    )
    .unwrap();
    let lock = plan.to_lock().unwrap();
    let resolved = plan.materialize().unwrap();
    for entry in lock.entries() {
        use sha2::Digest;
        let bytes = &resolved[&entry.name];
        assert_eq!(entry.byte_length, bytes.len() as u64);
        assert_eq!(entry.sha256, <[u8; 32]>::from(sha2::Sha256::digest(bytes)));
        assert_eq!(entry.file, "lm_head.safetensors");
    }
    // An entry too many and one missing: reported even when nothing is read.
    let mut entries = lock.entries().to_vec();
    let missing = entries.remove(0).name;
    entries.push(webnn_weights_runtime::LockEntry::new(
        "zz_gone", "r", "f", 1, [0; 32],
    ));
    let edited = WeightsLock::new("edited.lock", entries).unwrap();
    let err = plan.with_lock(edited).reader().finish().unwrap_err();
    let ResolveError::LockMismatch { problems, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        problems,
        &[
            LockProblem::NotLocked {
                constant: missing.clone()
            },
            LockProblem::NotInGraph {
                constant: "zz_gone".into()
            },
        ]
    );
}

#[test]
fn a_constant_read_twice_is_reported_once() {
    let (dir, graph_path) = locked();
    let lock = WeightsLock::read(WeightsLock::path_for(&graph_path)).unwrap();
    weights(dir.path(), [1, 2, 3, 5], 9, 0);
    let graph = read_graph_file(&graph_path).unwrap();
    let plan = plan_external_weights(&graph, &graph_path, None, None)
        .unwrap()
        .with_lock(lock);
    let mut reader = plan.reader();
    let a = plan.constant("a").unwrap();
    for _ in 0..3 {
        reader.read_constant(a).unwrap();
    }
    let err = reader.finish().unwrap_err();
    let ResolveError::LockMismatch { problems, .. } = &err else {
        panic!("{err}")
    };
    // `a` and `t` share their stored bytes: both named, each once.
    let names: Vec<&str> = problems.iter().map(|p| p.constant()).collect();
    assert_eq!(names, ["a", "t"]);
}
