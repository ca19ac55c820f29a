//! `compare-weight-tools check CLI [CASES]`: runs webnn-graph 0.4.0's blob tools and the
//! `webnn-weights` CLI at path CLI on the same generated inputs and compares every output
//! byte for byte. `compare-weight-tools old-pack|old-unpack ...`: the old functions alone,
//! for timing and peak memory.

use std::fs;
use std::path::Path;
use std::process::Command;
use webnn_graph::ast::GraphJson;
use webnn_graph::weights_io;

/// xorshift64*: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const TYPES: [(&str, u64); 8] = [
    ("float32", 4),
    ("float16", 2),
    ("int32", 4),
    ("uint32", 4),
    ("int64", 8),
    ("uint64", 8),
    ("int8", 1),
    ("uint8", 1),
];

struct Tensor {
    name: String,
    data_type: &'static str,
    shape: Vec<u32>,
    bytes: Vec<u8>,
}

fn tensors(rng: &mut Rng) -> Vec<Tensor> {
    let alphabet = b"abcXYZ019_.-";
    let mut out: Vec<Tensor> = Vec::new();
    for _ in 0..rng.below(8) {
        let len = 1 + rng.below(8) as usize;
        let name: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize] as char)
            .collect();
        if name.starts_with('.') || out.iter().any(|t| t.name == name) {
            continue;
        }
        let (data_type, size) = TYPES[rng.below(TYPES.len() as u64) as usize];
        let shape: Vec<u32> = (0..rng.below(4)).map(|_| rng.below(6) as u32).collect();
        let n: u64 = shape.iter().map(|&d| u64::from(d)).product::<u64>() * size;
        let bytes = (0..n).map(|_| rng.next() as u8).collect();
        out.push(Tensor {
            name,
            data_type,
            shape,
            bytes,
        });
    }
    out
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn run(cli: &str, args: &[&str]) {
    let out = Command::new(cli)
        .arg("-q")
        .args(args)
        .output()
        .expect("run CLI");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn same_files(a: &Path, b: &Path, what: &str) {
    let (x, y) = (fs::read(a).unwrap(), fs::read(b).unwrap());
    assert!(x == y, "{what} differs: {} vs {}", a.display(), b.display());
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn check_case(cli: &str, seed: u64) -> bool {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let tensors = tensors(&mut rng);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("in");
    fs::create_dir(&input).unwrap();
    for t in &tensors {
        fs::write(input.join(format!("{}.bin", t.name)), &t.bytes).unwrap();
        // webnn-graph needs every field in .meta.json; the values are not used.
        let meta = serde_json::json!({"dataType": t.data_type, "shape": t.shape,
            "byteOffset": 0, "byteLength": 0, "layout": "row-major"});
        fs::write(
            input.join(format!("{}.meta.json", t.name)),
            meta.to_string(),
        )
        .unwrap();
    }

    // create-manifest
    let (m_old, m_new) = (d.join("old.json"), d.join("new.json"));
    weights_io::create_manifest(s(&input), s(&m_old), "little").unwrap();
    run(
        cli,
        &[
            "create-manifest",
            "--input-dir",
            s(&input),
            "--output",
            s(&m_new),
        ],
    );
    same_files(&m_old, &m_new, "create-manifest output");

    // pack-weights
    let (w_old, w_new) = (d.join("old.weights"), d.join("new.weights"));
    run(
        cli,
        &[
            "pack-weights",
            "--manifest",
            s(&m_old),
            "--input-dir",
            s(&input),
            "--output",
            s(&w_new),
        ],
    );
    let old_packed = weights_io::pack_weights(s(&m_old), s(&input), s(&w_old)).is_ok();
    if old_packed {
        same_files(&w_old, &w_new, "pack-weights output");
    } else {
        // webnn-graph rejects its own manifest when an empty tensor shares an offset with a
        // non-empty one that sorts first by name; unpack our blob instead.
        fs::copy(&w_new, &w_old).unwrap();
    }

    // unpack-weights
    let (u_old, u_new) = (d.join("u_old"), d.join("u_new"));
    weights_io::unpack_weights(s(&w_old), s(&m_old), s(&u_old)).unwrap();
    run(
        cli,
        &[
            "unpack-weights",
            "--weights",
            s(&w_old),
            "--manifest",
            s(&m_old),
            "--output-dir",
            s(&u_new),
        ],
    );
    assert!(
        listing(&u_old) == listing(&u_new),
        "unpack-weights outputs differ"
    );

    // extract-weights on a graph with these tensors inline, plus a scalar and a reference
    let mut consts = serde_json::Map::new();
    for t in &tensors {
        consts.insert(
            t.name.clone(),
            serde_json::json!({"dataType": t.data_type,
            "shape": t.shape, "init": {"kind": "inlineBytes", "bytes": t.bytes}}),
        );
    }
    consts.insert(
        "~scalar".into(),
        serde_json::json!({"dataType": "float32", "shape": [],
        "init": {"kind": "scalar", "value": 1.5}}),
    );
    let graph_json = serde_json::json!({"format": "webnn-graph-json", "version": 2,
        "name": format!("case{seed}"), "inputs": {"x": {"dataType": "float32", "shape": [1, {"name": "b", "maxSize": 4}]}},
        "consts": consts, "nodes": [{"id": "y", "op": "relu", "inputs": ["x"], "options": {"z": 1, "a": [1, 2]}}],
        "outputs": {"y": "y"}});
    let g = d.join("g.json");
    fs::write(&g, serde_json::to_string(&graph_json).unwrap()).unwrap();
    let graph: GraphJson = serde_json::from_value(graph_json).unwrap();
    let (ew_old, em_old, eg_old) = (
        d.join("e_old.weights"),
        d.join("e_old.json"),
        d.join("eg_old.json"),
    );
    let (ew_new, em_new, eg_new) = (
        d.join("e_new.weights"),
        d.join("e_new.json"),
        d.join("eg_new.json"),
    );
    let extracted =
        weights_io::extract_weights(&graph, s(&d.join("x_old")), s(&ew_old), s(&em_old)).unwrap();
    fs::write(&eg_old, serde_json::to_string_pretty(&extracted).unwrap()).unwrap();
    run(
        cli,
        &[
            "extract-weights",
            "--input",
            s(&g),
            "--output-dir",
            s(&d.join("x_new")),
            "--weights",
            s(&ew_new),
            "--manifest",
            s(&em_new),
            "--output-graph",
            s(&eg_new),
        ],
    );
    same_files(&ew_old, &ew_new, "extract-weights blob");
    same_files(&em_old, &em_new, "extract-weights manifest");
    same_files(&eg_old, &eg_new, "extract-weights graph");

    // inline-weights back
    let (ig_old, ig_new) = (d.join("i_old.json"), d.join("i_new.json"));
    let inlined = weights_io::inline_weights(&extracted, s(&ew_old), s(&em_old)).unwrap();
    fs::write(&ig_old, serde_json::to_string_pretty(&inlined).unwrap()).unwrap();
    run(
        cli,
        &[
            "inline-weights",
            "--input",
            s(&eg_old),
            "--weights",
            s(&ew_old),
            "--manifest",
            s(&em_old),
            "--output",
            s(&ig_new),
        ],
    );
    same_files(&ig_old, &ig_new, "inline-weights graph");
    old_packed
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("check") => {
            let cli = args.get(2).expect("path of the webnn-weights binary");
            let cases: u64 = args.get(3).map_or(200, |n| n.parse().expect("case count"));
            let old_failed = (0..cases).filter(|&seed| !check_case(cli, seed)).count();
            println!(
                "{cases} generated cases: create-manifest, pack-weights, unpack-weights, \
                      extract-weights and inline-weights outputs identical to webnn-graph 0.4.0 \
                      ({old_failed} case(s) where webnn-graph's pack-weights rejected its own \
                      manifest (empty tensor sharing an offset) and ours packed it)"
            );
        }
        Some("old-pack") => weights_io::pack_weights(&args[2], &args[3], &args[4]).unwrap(),
        Some("old-unpack") => weights_io::unpack_weights(&args[2], &args[3], &args[4]).unwrap(),
        _ => {
            eprintln!(
                "usage: compare-weight-tools check CLI [CASES] | old-pack M D W | old-unpack W M D"
            );
            std::process::exit(2);
        }
    }
}
