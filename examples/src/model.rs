//! The example model `tiny_mlp`: its graph, the generator of its sidecars, and a forward
//! pass in plain Rust.
//!
//! ```text
//! y = (relu(x · fc1_weight + fc1_bias)) · dequantizeLinear(fc2_weight, fc2_scale, fc2_zero) + fc2_bias
//! ```
//!
//! | constant | declared | stored in the SafeTensors sidecar |
//! |---|---|---|
//! | `fc1_weight` | `f32[4, 8]` | `F32` |
//! | `fc1_bias` | `f32[8]` | `BF16` (widened to float32 when resolved) |
//! | `fc2_weight` | `i4[8, 2]` | `U8[8]`, packed two per byte, `rustnn.webnn.packed4` marker |
//! | `fc2_scale` | `f32[2]` | `F32` |
//! | `fc2_zero` | `i8[2]` | `I8` |
//! | `fc2_bias` | `f32[2]` | `F32` |
//!
//! The blob variant (`models/blob/`) stores the resolved bytes (float32 for `fc1_bias`) in a
//! WGWT `.weights` file (8-byte header, offsets from 8) addressed by a v1 manifest.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::Path;
use webnn_weights_atomic as atomic;
use webnn_weights_runtime::{EmbeddedConstant, EmbeddedGraph};

/// The graph, identical for both variants.
pub const GRAPH_TEXT: &str = r#"# A two-layer perceptron with an int4 second layer. Regenerate with
#   cargo run -p webnn-weights-examples --bin generate-models
webnn_graph "tiny_mlp" v1 @quantized {
  inputs {
    x: f32[1, 4];
  }

  consts {
    fc1_weight: f32[4, 8] @weights("fc1.weight");
    fc1_bias: f32[8] @weights("fc1.bias");
    fc2_weight: i4[8, 2] @weights("fc2.weight");
    fc2_scale: f32[2] @weights("fc2.scale");
    fc2_zero: i8[2] @weights("fc2.zero");
    fc2_bias: f32[2] @weights("fc2.bias");
  }

  nodes {
    h0 = matmul(x, fc1_weight);
    h1 = add(h0, fc1_bias);
    h = relu(h1);
    w2 = dequantizeLinear(fc2_weight, fc2_scale, fc2_zero);
    y0 = matmul(h, w2);
    y = add(y0, fc2_bias);
  }

  outputs { y; }
}
"#;

/// The fixed input of the examples.
pub const INPUT: [f32; 4] = [0.5, -1.0, 2.0, 0.25];

/// The fc1 weights, row-major `[4, 8]`.
pub fn fc1_weight() -> Vec<f32> {
    (0..32).map(|i| ((i * 7) % 11) as f32 / 8.0 - 0.5).collect()
}

/// The fc1 bias: multiples of 1/8, exact in BF16.
pub fn fc1_bias() -> Vec<f32> {
    (0..8).map(|i| (i as f32 - 4.0) / 8.0).collect()
}

/// The fc2 weights as int4 values in -8..=7, row-major `[8, 2]`.
pub fn fc2_weight() -> Vec<i8> {
    (0..16).map(|i| ((i * 5) % 16) as i8 - 8).collect()
}

/// Packs int4 values two per byte, the first in the low nibble.
pub fn pack_int4(values: &[i8]) -> Vec<u8> {
    values
        .chunks(2)
        .map(|pair| {
            let lo = (pair[0] as u8) & 0x0f;
            let hi = pair.get(1).map_or(0, |&v| (v as u8) & 0x0f);
            lo | (hi << 4)
        })
        .collect()
}

const FC2_SCALE: [f32; 2] = [0.05, 0.125];
const FC2_ZERO: [i8; 2] = [0, 1];
const FC2_BIAS: [f32; 2] = [0.25, -0.5];

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Every tensor: (reference, dtype name for the manifest, shape, resolved bytes).
fn tensors() -> Vec<(&'static str, &'static str, Vec<usize>, Vec<u8>)> {
    vec![
        (
            "fc1.weight",
            "float32",
            vec![4, 8],
            f32_bytes(&fc1_weight()),
        ),
        ("fc1.bias", "float32", vec![8], f32_bytes(&fc1_bias())),
        ("fc2.weight", "int4", vec![8, 2], pack_int4(&fc2_weight())),
        ("fc2.scale", "float32", vec![2], f32_bytes(&FC2_SCALE)),
        (
            "fc2.zero",
            "int8",
            vec![2],
            FC2_ZERO.iter().map(|&v| v as u8).collect(),
        ),
        ("fc2.bias", "float32", vec![2], f32_bytes(&FC2_BIAS)),
    ]
}

/// Writes `models/tiny_mlp.{webnn,safetensors}` and
/// `models/blob/tiny_mlp.{webnn,weights,manifest.json}` under `dir`, atomically. The output
/// depends on nothing but this code.
pub fn write_models(dir: &Path) -> io::Result<Vec<std::path::PathBuf>> {
    let blob_dir = dir.join("blob");
    std::fs::create_dir_all(&blob_dir)?;
    let mut written = Vec::new();
    let mut put = |path: std::path::PathBuf, bytes: &[u8]| -> io::Result<()> {
        atomic::write_file(&path, |w| w.write_all(bytes))?;
        written.push(path);
        Ok(())
    };

    // SafeTensors: fc1.bias as BF16, fc2.weight as packed U8 with the marker.
    let bias_bf16: Vec<u8> = fc1_bias()
        .iter()
        .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
        .collect();
    let mut stored: Vec<(String, safetensors::Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, dtype, shape, bytes) in tensors() {
        let (dtype, shape, bytes) = match (name, dtype) {
            ("fc1.bias", _) => (safetensors::Dtype::BF16, shape, bias_bf16.clone()),
            (_, "int4") => (safetensors::Dtype::U8, vec![bytes.len()], bytes),
            (_, "int8") => (safetensors::Dtype::I8, shape, bytes),
            _ => (safetensors::Dtype::F32, shape, bytes),
        };
        stored.push((name.to_string(), dtype, shape, bytes));
    }
    let views = stored
        .iter()
        .map(|(name, dtype, shape, bytes)| {
            safetensors::tensor::TensorView::new(*dtype, shape.clone(), bytes)
                .map(|view| (name.clone(), view))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(io::Error::other)?;
    let metadata = HashMap::from([(
        webnn_weights_runtime::formats::safetensors::PACKED_4BIT_METADATA_KEY.to_string(),
        webnn_weights_runtime::formats::safetensors::PACKED_4BIT_METADATA_VERSION.to_string(),
    )]);
    let archive = safetensors::serialize(views, Some(metadata)).map_err(io::Error::other)?;
    put(dir.join("tiny_mlp.webnn"), GRAPH_TEXT.as_bytes())?;
    put(dir.join("tiny_mlp.safetensors"), &archive)?;
    // The weights lock `webnn-weights lock models/tiny_mlp.webnn` writes: the build verifies
    // it, and each embedded constant carries its digest.
    let graph_path = dir.join("tiny_mlp.webnn");
    let graph = webnn_weights_runtime::read_graph_file(&graph_path).map_err(io::Error::other)?;
    let plan = webnn_weights_runtime::plan_external_weights(&graph, &graph_path, None, None)
        .map_err(io::Error::other)?;
    let lock = plan.to_lock().map_err(io::Error::other)?;
    put(
        webnn_weights_runtime::WeightsLock::path_for(&graph_path),
        &lock.to_json(),
    )?;

    // WGWT blob + v1 manifest with the resolved bytes.
    let mut blob = b"WGWT".to_vec();
    blob.extend_from_slice(&1u32.to_le_bytes());
    let mut entries = BTreeMap::new();
    for (name, dtype, shape, bytes) in tensors() {
        entries.insert(
            name,
            serde_json::json!({
                "dataType": dtype,
                "shape": shape,
                "byteOffset": blob.len(),
                "byteLength": bytes.len(),
                "layout": "row-major",
            }),
        );
        blob.extend_from_slice(&bytes);
    }
    let manifest = serde_json::json!({
        "format": "wg-weights-manifest",
        "version": 1,
        "endianness": "little",
        "tensors": entries,
    });
    let mut manifest_text = serde_json::to_string_pretty(&manifest).map_err(io::Error::other)?;
    manifest_text.push('\n');
    put(blob_dir.join("tiny_mlp.webnn"), GRAPH_TEXT.as_bytes())?;
    put(blob_dir.join("tiny_mlp.weights"), &blob)?;
    put(
        blob_dir.join("tiny_mlp.manifest.json"),
        manifest_text.as_bytes(),
    )?;
    Ok(written)
}

/// Why [`forward`] could not run.
#[derive(Debug)]
pub struct ForwardError(pub String);

impl std::fmt::Display for ForwardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ForwardError {}

/// Runs `tiny_mlp` on `x` with plain Rust loops, reading the weights straight from the
/// embedded (or run-time resolved) constants: zero-copy `&[f32]` views, int4 unpacked.
pub fn forward(
    graph: &'static EmbeddedGraph,
    x: &[f32; 4],
) -> Result<[f32; 2], Box<dyn std::error::Error>> {
    let constant = |name: &str| -> Result<&'static EmbeddedConstant, Box<dyn std::error::Error>> {
        graph
            .try_constant(name)?
            .ok_or_else(|| ForwardError(format!("the graph has no constant `{name}`")).into())
    };
    let f32s = |name: &str| -> Result<&'static [f32], Box<dyn std::error::Error>> {
        constant(name)?
            .as_f32()
            .ok_or_else(|| ForwardError(format!("`{name}` is not float32")).into())
    };
    let (w1, b1) = (f32s("fc1_weight")?, f32s("fc1_bias")?);
    let (scale, bias) = (f32s("fc2_scale")?, f32s("fc2_bias")?);
    let zero = constant("fc2_zero")?
        .as_i8()
        .ok_or_else(|| ForwardError("`fc2_zero` is not int8".into()))?;
    let fc2_weight = constant("fc2_weight")?;
    let w2_bytes = fc2_weight.bytes();
    for (name, len, expected) in [
        ("fc1_weight", w1.len(), 32),
        ("fc1_bias", b1.len(), 8),
        ("fc2_scale", scale.len(), 2),
        ("fc2_bias", bias.len(), 2),
        ("fc2_zero", zero.len(), 2),
        ("fc2_weight", w2_bytes.len(), 8),
    ] {
        if len != expected {
            return Err(ForwardError(format!(
                "`{name}` has {len} elements (bytes for int4), expected {expected}"
            ))
            .into());
        }
    }
    let w2 = fc2_weight
        .unpack_int4()
        .filter(|w2| w2.len() == 16)
        .ok_or_else(|| ForwardError("`fc2_weight` is not 16 elements of int4".into()))?;

    // h = relu(x · W1 + b1), W1: [4, 8]
    let mut h = [0f32; 8];
    for (j, hj) in h.iter_mut().enumerate() {
        let dot: f32 = (0..4).map(|i| x[i] * w1[i * 8 + j]).sum();
        *hj = (dot + b1[j]).max(0.0);
    }
    // y = h · ((W2 - zero) * scale) + b2, W2: [8, 2], per-column scale and zero point
    let mut y = [0f32; 2];
    for (k, yk) in y.iter_mut().enumerate() {
        let dot: f32 = (0..8)
            .map(|j| h[j] * (f32::from(w2[j * 2 + k]) - f32::from(zero[k])) * scale[k])
            .sum();
        *yk = dot + bias[k];
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int4_round_trip() {
        let values = fc2_weight();
        assert!(values.iter().all(|v| (-8..=7).contains(v)));
        let packed = pack_int4(&values);
        let decl = webnn_weights_runtime::ConstDecl {
            data_type: webnn_weights_runtime::DataType::Int4,
            shape: vec![values.len() as u32],
            init: webnn_weights_runtime::ConstInit::InlineBytes {
                bytes: packed.into(),
            },
        };
        assert_eq!(decl.unpack_int4(), Some(values));
        assert_eq!(pack_int4(&[-1, 1]), vec![0x1f]);
    }

    #[test]
    fn generator_is_deterministic_and_matches_the_shipped_models() {
        let a = tempfile_dir("a");
        let b = tempfile_dir("b");
        let files_a = write_models(&a).unwrap();
        write_models(&b).unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
        for file in files_a {
            let rel = file.strip_prefix(&a).unwrap();
            let bytes = std::fs::read(&file).unwrap();
            assert_eq!(
                bytes,
                std::fs::read(b.join(rel)).unwrap(),
                "{}",
                rel.display()
            );
            assert_eq!(
                bytes,
                std::fs::read(shipped.join(rel)).unwrap(),
                "models/{} differs from the generator's output: rerun generate-models",
                rel.display()
            );
        }
        std::fs::remove_dir_all(&a).unwrap();
        std::fs::remove_dir_all(&b).unwrap();
    }

    fn tempfile_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "webnn-weights-examples-{}-{tag}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
