//! Multi-file outputs written over the outputs of an earlier run while one of the files
//! cannot be replaced (a folder with something in it is in the way: no rename of a file
//! replaces it, even as root), at each position in turn: the command fails naming that file,
//! and every file of the earlier run is left byte for byte, with no temporary beside it.
//! `to-safetensors --max-shard-size` (four shards, the index, `--graph-output`), `web -o DIR`,
//! `extract-weights` and `unpack-weights`.

#[macro_use]
mod common;

use common::{assert_fails, assert_succeeds};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A graph of four `f32[2]` constants (8 bytes each) given inline, filled from `fill`.
fn inline_graph(fill: u8) -> String {
    let consts: String = ["a", "b", "c", "d"]
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let bytes: Vec<String> = (0..8)
                .map(|i| (fill + 8 * k as u8 + i).to_string())
                .collect();
            format!("    {name}: f32[2] @bytes([{}]);\n", bytes.join(", "))
        })
        .collect();
    format!(
        "webnn_graph \"four\" v1 {{\n  inputs {{ x: f32[2]; }}\n  consts {{\n{consts}  }}\n  \
         nodes {{\n    h = add(x, a);\n    i = add(h, b);\n    j = mul(i, c);\n    \
         y = sub(j, d);\n  }}\n  outputs {{ y; }}\n}}\n"
    )
}

/// Writes the inline graph `dir/four.webnn` filled from `fill`; its path.
fn write_inline(dir: &Path, fill: u8) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let graph = dir.join("four.webnn");
    std::fs::write(&graph, inline_graph(fill)).unwrap();
    graph
}

/// `to-safetensors GRAPH -o OUT/model.safetensors --graph-output OUT/model.webnn
/// --max-shard-size 8`: four shards, their index and the graph.
fn to_sharded(graph: &Path, out: &Path) -> assert_cmd::Command {
    let mut cmd = command!(
        "to-safetensors",
        "-o" => out.join("model.safetensors"),
        "--graph-output" => out.join("model.webnn"),
        "--max-shard-size" => "8",
    );
    cmd.arg(graph);
    cmd
}

/// Each entry of `dir` and its bytes (`None` for a folder).
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, path.is_file().then(|| std::fs::read(&path).unwrap()))
        })
        .collect()
}

/// For each output of `earlier` in `out` (made by `make`): makes that file a folder with
/// something in it, runs `again`, which must fail naming it, and checks that `out` is
/// exactly as before that run (so every other earlier file byte for byte, no temporary).
/// `expected` are the file names `make` must write.
fn each_output_in_the_way(
    root: &Path,
    expected: &[&str],
    make: impl Fn(&Path) -> assert_cmd::Command,
    again: impl Fn(&Path) -> assert_cmd::Command,
) {
    for blocked in expected {
        let out = root.join(format!("out-{blocked}"));
        std::fs::create_dir_all(&out).unwrap();
        assert_succeeds(&mut make(&out));
        let earlier = snapshot(&out);
        assert_eq!(earlier.keys().collect::<Vec<_>>(), expected, "{blocked}");
        let in_the_way = out.join(blocked);
        std::fs::remove_file(&in_the_way).unwrap();
        std::fs::create_dir_all(in_the_way.join("inside")).unwrap();
        let before = snapshot(&out);
        let output = again(&out).output().unwrap();
        assert_fails(&output, 1, blocked);
        assert_eq!(snapshot(&out), before, "{blocked} in the way");
        // The earlier files are complete: every file but the blocked one, as first written.
        for (name, bytes) in &earlier {
            if name != blocked {
                assert_eq!(&before[name], bytes, "{name}");
            }
        }
        // With nothing in the way, the second run replaces them.
        std::fs::remove_dir_all(&in_the_way).unwrap();
        assert_succeeds(&mut again(&out));
        let after = snapshot(&out);
        assert_eq!(after.keys().collect::<Vec<_>>(), expected, "{blocked}");
        assert!(
            expected.iter().any(|name| after[*name] != earlier[*name]),
            "{blocked}: the second run wrote the same bytes"
        );
    }
}

#[test]
fn to_safetensors_sharded_over_an_earlier_archive_that_cannot_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_inline(&dir.path().join("old"), 1);
    let new = write_inline(&dir.path().join("new"), 100);
    each_output_in_the_way(
        dir.path(),
        &[
            "model-00001-of-00004.safetensors",
            "model-00002-of-00004.safetensors",
            "model-00003-of-00004.safetensors",
            "model-00004-of-00004.safetensors",
            "model.safetensors.index.json",
            "model.webnn",
        ],
        |out| to_sharded(&old, out),
        |out| to_sharded(&new, out),
    );
}

#[test]
fn web_over_earlier_outputs_that_cannot_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    // Two versions of `model.webnn`, each beside its own sharded archive.
    let graphs: Vec<PathBuf> = [("old", 1), ("new", 100)]
        .into_iter()
        .map(|(name, fill)| {
            let folder = dir.path().join(name);
            let inline = write_inline(&folder, fill);
            assert_succeeds(&mut to_sharded(&inline, &folder));
            folder.join("model.webnn")
        })
        .collect();
    let web = |graph: &Path, out: &Path| {
        let mut cmd = command!("web", "-o" => out);
        cmd.arg(graph);
        cmd
    };
    each_output_in_the_way(
        dir.path(),
        &["model.js", "model.manifest.json", "model.weights"],
        |out| web(&graphs[0], out),
        |out| web(&graphs[1], out),
    );
}

#[test]
fn extract_weights_over_earlier_outputs_that_cannot_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_inline(&dir.path().join("old"), 1);
    let new = write_inline(&dir.path().join("new"), 100);
    let extract = |graph: &Path, out: &Path| {
        command!(
            "extract-weights",
            "--input" => graph,
            "--weights" => out.join("four.weights"),
            "--manifest" => out.join("four.manifest.json"),
            "--output-graph" => out.join("four.json"),
        )
    };
    each_output_in_the_way(
        dir.path(),
        &["four.json", "four.manifest.json", "four.weights"],
        |out| extract(&old, out),
        |out| extract(&new, out),
    );
}

#[test]
fn unpack_weights_over_earlier_tensor_files_that_cannot_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    // Two versions of a blob and its manifest, extracted from the two inline graphs.
    let blobs: Vec<PathBuf> = [("old", 1), ("new", 100)]
        .into_iter()
        .map(|(name, fill)| {
            let folder = dir.path().join(name);
            let inline = write_inline(&folder, fill);
            assert_succeeds(&mut command!(
                "extract-weights",
                "--input" => &inline,
                "--weights" => folder.join("four.weights"),
                "--manifest" => folder.join("four.manifest.json"),
                "--output-graph" => folder.join("four.json"),
            ));
            folder
        })
        .collect();
    let unpack = |blob: &Path, out: &Path| {
        command!(
            "unpack-weights",
            "--weights" => blob.join("four.weights"),
            "--manifest" => blob.join("four.manifest.json"),
            "--output-dir" => out,
        )
    };
    each_output_in_the_way(
        dir.path(),
        &["a.bin", "b.bin", "c.bin", "d.bin"],
        |out| unpack(&blobs[0], out),
        |out| unpack(&blobs[1], out),
    );
}
