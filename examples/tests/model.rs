//! The example model embedded, resolved at run time, and computed from the generator's
//! values agree.

use std::path::Path;
use webnn_weights_examples::{model, TINY_MLP, TINY_MLP_BLOB};
use webnn_weights_runtime::{load_graph, GraphLoader};

/// The forward pass from the generator's values, independent of any sidecar.
fn reference(x: &[f32; 4]) -> [f32; 2] {
    let (w1, b1, w2) = (model::fc1_weight(), model::fc1_bias(), model::fc2_weight());
    let h: Vec<f32> = (0..8)
        .map(|j| ((0..4).map(|i| x[i] * w1[i * 8 + j]).sum::<f32>() + b1[j]).max(0.0))
        .collect();
    let (scale, zero, bias) = ([0.05f32, 0.125], [0f32, 1.0], [0.25f32, -0.5]);
    let mut y = [0f32; 2];
    for k in 0..2 {
        let dot: f32 = (0..8)
            .map(|j| h[j] * (f32::from(w2[j * 2 + k]) - zero[k]) * scale[k])
            .sum();
        y[k] = dot + bias[k];
    }
    y
}

#[test]
fn embedded_and_runtime_models_agree() {
    assert!(TINY_MLP.is_embedded() || std::env::var_os("WEBNN_WEIGHTS_EMBED").is_some());
    assert!(!TINY_MLP_BLOB.is_embedded());
    let expected = reference(&model::INPUT);
    assert_eq!(model::forward(&TINY_MLP, &model::INPUT).unwrap(), expected);
    assert_eq!(
        model::forward(&TINY_MLP_BLOB, &model::INPUT).unwrap(),
        expected
    );
    for c in TINY_MLP.constants() {
        assert_eq!(c.bytes(), TINY_MLP_BLOB.constant(c.name()).unwrap().bytes());
        assert_eq!(c.bytes().as_ptr() as usize % 64, 0);
    }
}

#[test]
fn embedded_equals_load_graph() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    assert_eq!(
        TINY_MLP.to_graph_json(),
        load_graph(dir.join("tiny_mlp.webnn")).unwrap()
    );
    let blob = GraphLoader::new(dir.join("blob/tiny_mlp.webnn"))
        .weights("tiny_mlp.weights")
        .manifest("tiny_mlp.manifest.json")
        .load()
        .unwrap();
    assert_eq!(TINY_MLP_BLOB.to_graph_json(), blob);
    // The BF16 bias was widened: float32 values with empty low halves.
    let bias = TINY_MLP.constant("fc1_bias").unwrap().as_f32().unwrap();
    assert_eq!(bias, &model::fc1_bias()[..]);
}

#[test]
fn fc2_weight_unpacks_to_the_generators_int4_values() {
    let expected = model::fc2_weight();
    assert_eq!(expected[..4], [-8, -3, 2, 7]);
    for graph in [&TINY_MLP, &TINY_MLP_BLOB] {
        let fc2 = graph.constant("fc2_weight").unwrap();
        assert_eq!(fc2.bytes().len(), 8); // 16 elements, two per byte
        assert_eq!(fc2.unpack_int4(), Some(expected.clone()));
        assert_eq!(fc2.unpack_uint4(), None);
    }
    let loaded =
        load_graph(Path::new(env!("CARGO_MANIFEST_DIR")).join("models/tiny_mlp.webnn")).unwrap();
    assert_eq!(loaded.consts["fc2_weight"].unpack_int4(), Some(expected));
}
