//! Shared pieces of the fuzz targets: the graphs sidecars are planned against, a scratch
//! folder, and the checks every successful resolution must pass.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use webnn_weights_runtime::{
    parse_graph_json, parse_webnn, ConstInit, GraphJson, PlannedConstant, WeightPlan,
};

/// A graph with one `@weights` constant of every data type (rank 0, zero-size, packed
/// 4-bit with odd element counts, references with dots and `::`).
pub const ALL_TYPES_GRAPH: &str = r#"webnn_graph "all_types" v1 {
  inputs { x: f32[1]; }
  consts {
    f32s: f32[2] @weights("layer.0.f32");
    f16s: f16[] @weights("f16::scalar");
    i32s: i32[1, 0] @weights("i32_empty");
    u32s: u32[1] @weights("u32");
    i64s: i64[1] @weights("i64");
    u64s: u64[1] @weights("u64");
    i8s: i8[3] @weights("i8");
    u8s: u8[2] @weights("u8");
    i4s: i4[3] @weights("i4.packed");
    u4s: u4[2, 2] @weights("u4");
  }
  nodes { y = add(x, x); }
  outputs { y; }
}
"#;

/// The graphs an archive is planned against (the first input byte picks one).
pub fn safetensors_graphs() -> &'static [GraphJson] {
    static GRAPHS: OnceLock<Vec<GraphJson>> = OnceLock::new();
    GRAPHS.get_or_init(|| {
        [
            include_str!("../../tests/fixtures/packed4/quant.webnn"),
            include_str!("../../tests/fixtures/hf-safetensors/encoder.webnn"),
            include_str!("../../tests/fixtures/hf-safetensors/head.webnn"),
            ALL_TYPES_GRAPH,
        ]
        .iter()
        .map(|text| parse_webnn(text).expect("fuzz graph parses"))
        .collect()
    })
}

/// The graphs a manifest and blob are planned against (the first input byte picks one).
pub fn blob_graphs() -> &'static [GraphJson] {
    static GRAPHS: OnceLock<Vec<GraphJson>> = OnceLock::new();
    GRAPHS.get_or_init(|| {
        vec![
            parse_webnn(include_str!("../../tests/fixtures/onnx-layout/model.webnn"))
                .expect("fuzz graph parses"),
            parse_graph_json(include_str!(
                "../../tests/fixtures/tiny-extract/tiny.extracted.json"
            ))
            .expect("fuzz graph parses"),
            parse_webnn(ALL_TYPES_GRAPH).expect("fuzz graph parses"),
        ]
    })
}

/// A scratch folder for this process, on tmpfs when there is one (`/dev/shm`), so that
/// the fsync of atomic installs costs little.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::Builder::new()
                .prefix("webnn-weights-fuzz")
                .tempdir_in(shm)
        } else {
            tempfile::Builder::new()
                .prefix("webnn-weights-fuzz")
                .tempdir()
        };
        dir.expect("scratch folder")
    })
    .path()
}

/// Writes `bytes` to `scratch()/name` and returns the path.
pub fn put(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, bytes).expect("scratch write");
    path
}

/// Splits `data` into a selector byte, a length-prefixed (u16 LE) part, and the rest.
pub fn split3(data: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&selector, rest) = data.split_first()?;
    let (len, rest) = rest.split_first_chunk::<2>()?;
    let len = usize::from(u16::from_le_bytes(*len)).min(rest.len());
    let (first, second) = rest.split_at(len);
    Some((selector, first, second))
}

/// The checks a successful plan must pass: every `@weights` constant is planned with its
/// declared byte length; materializing gives exactly that many bytes per constant, the
/// same bytes as `read_constant` and `copy_constant`; and unconverted constants are the
/// sidecar's bytes at the planned range.
pub fn check_plan(graph: &GraphJson, plan: &WeightPlan, sidecar: &[u8]) {
    let external = graph
        .consts
        .values()
        .filter(|d| matches!(d.init, ConstInit::Weights { .. }))
        .count();
    assert_eq!(plan.constants().len(), external);
    let bytes = plan.materialize().expect("a planned sidecar materializes");
    assert_eq!(bytes.len(), external);
    for c in plan.constants() {
        let decl = &graph.consts[&c.name];
        assert_eq!(Some(c.length), decl.byte_length(), "{c:?}");
        let got = &bytes[&c.name];
        assert_eq!(got.len() as u64, c.length, "{c:?}");
        assert_eq!(&plan.read_constant(c).expect("read_constant"), got);
        let mut copied = Vec::new();
        assert_eq!(plan.copy_constant(c, &mut copied).expect("copy"), c.length);
        assert_eq!(&copied, got);
        check_range(c, sidecar, got);
    }
}

fn check_range(c: &PlannedConstant, sidecar: &[u8], got: &[u8]) {
    let start = usize::try_from(c.offset).expect("offset in file");
    let end = start + usize::try_from(c.stored_length).expect("length in file");
    let stored = &sidecar[start..end];
    match c.conversion {
        webnn_weights_runtime::Conversion::None => assert_eq!(stored, got),
        webnn_weights_runtime::Conversion::Bf16ToF32 => {
            assert_eq!(stored.len() * 2, got.len());
            for (s, g) in stored.chunks_exact(2).zip(got.chunks_exact(4)) {
                // BF16 is the high half of an F32 (NaNs may come out quieted).
                let wide = f32::from_le_bytes([g[0], g[1], g[2], g[3]]);
                let exact = f32::from_le_bytes([0, 0, s[0], s[1]]);
                assert!(wide.to_bits() == exact.to_bits() || (wide.is_nan() && exact.is_nan()));
            }
        }
        other => panic!("constant `{}`: a conversion this target does not know: {other:?}", c.name),
    }
}
