//! Attention, RMS normalization, rotary embeddings, dropout and the losses: small models
//! converted and checked against the WebNN table.

mod common;

use common::*;

fn attention(inputs: &[&'static str]) -> Model {
    Model {
        opset: 23,
        ..Model::new("Attention", inputs)
    }
}

#[test]
fn attention_4d_plain() {
    let c = attention(&["q", "k", "v"])
        .input("q", &[2, 3, 4, 8])
        .input("k", &[2, 3, 6, 8])
        .input("v", &[2, 3, 6, 10])
        .output("y")
        .ok();
    let o = ops(&c);
    assert_eq!(o.iter().filter(|&&op| op == "matmul").count(), 2);
    assert!(o.contains(&"softmax"));
    assert!(!o.contains(&"where"));
}

#[test]
fn attention_3d_gqa_past_present_and_probabilities() {
    let c = attention(&["q", "k", "v", "mask", "pk", "pv"])
        .attr(attr_int("q_num_heads", 9))
        .attr(attr_int("kv_num_heads", 3))
        .attr(attr_int("is_causal", 1))
        .attr(attr_int("qk_matmul_output_mode", 3))
        .attr(attr_float("softcap", 2.0))
        .input("q", &[2, 4, 72])
        .input("k", &[2, 6, 24])
        .input("v", &[2, 6, 24])
        .typed_input("mask", BOOL, &[4, 15])
        .input("pk", &[2, 3, 12, 8])
        .input("pv", &[2, 3, 12, 8])
        .output("y")
        .output("present_key")
        .output("present_value")
        .output("qk")
        .ok();
    let o = ops(&c);
    // past concatenated, the short mask padded
    assert_eq!(o.iter().filter(|&&op| op == "concat").count(), 3);
    assert!(o.contains(&"expand") && o.contains(&"where") && o.contains(&"tanh"));
    let names: Vec<&str> = c.outputs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["y", "present_key", "present_value", "qk"]);
}

#[test]
fn attention_padding_lengths_from_the_graph() {
    let mut m = Model {
        opset: 24,
        ..Model::new("Attention", &["q", "k", "v", "", "", "", "lens"])
    };
    m = m
        .input("q", &[2, 3, 4, 8])
        .input("k", &[2, 3, 6, 8])
        .input("v", &[2, 3, 6, 8])
        .typed_input("lens", INT64, &[2])
        .output("y");
    let c = m.ok();
    assert!(ops(&c).contains(&"lesser"));
}

#[test]
fn attention_refusals() {
    let e = attention(&["q", "k", "v"])
        .attr(attr_int("softmax_precision", 11))
        .input("q", &[1, 1, 2, 4])
        .input("k", &[1, 1, 2, 4])
        .input("v", &[1, 1, 2, 4])
        .output("y")
        .err();
    assert!(e.contains("softmax_precision"), "{e}");
    let e = attention(&["q", "k", "v"])
        .input("q", &[1, 2, 8])
        .input("k", &[1, 2, 8])
        .input("v", &[1, 2, 8])
        .output("y")
        .err();
    assert!(e.contains("q_num_heads"), "{e}");
    let e = attention(&["q", "k", "v", "", "pk"])
        .input("q", &[1, 1, 2, 4])
        .input("k", &[1, 1, 2, 4])
        .input("v", &[1, 1, 2, 4])
        .input("pk", &[1, 1, 2, 4])
        .output("y")
        .err();
    assert!(e.contains("past_value"), "{e}");
}

#[test]
fn rms_normalization() {
    let c = Model {
        opset: 23,
        ..Model::new("RMSNormalization", &["x", "w"])
    }
    .attr(attr_int("axis", 1))
    .input("x", &[2, 3, 4])
    .init(floats("w", &[3, 4], &[1.0; 12]))
    .output("y")
    .ok();
    assert_eq!(ops(&c), ["mul", "reduceMean", "add", "sqrt", "div", "mul"]);
    assert_eq!(c.graph.nodes[1].options["axes"], serde_json::json!([1, 2]));
}

#[test]
fn rotary_embedding_interleaved_with_positions() {
    let c = Model {
        opset: 23,
        ..Model::new("RotaryEmbedding", &["x", "cos", "sin", "pos"])
    }
    .attr(attr_int("interleaved", 1))
    .attr(attr_int("rotary_embedding_dim", 4))
    .input("x", &[2, 4, 3, 8])
    .input("cos", &[50, 2])
    .input("sin", &[50, 2])
    .typed_input("pos", INT64, &[2, 3])
    .output("y")
    .ok();
    let o = ops(&c);
    assert_eq!(o.iter().filter(|&&op| op == "gather").count(), 2);
    assert_eq!(o.last(), Some(&"concat"));
    let e = Model {
        opset: 23,
        ..Model::new("RotaryEmbedding", &["x", "cos", "sin"])
    }
    .input("x", &[2, 3, 32])
    .input("cos", &[2, 3, 4])
    .input("sin", &[2, 3, 4])
    .output("y")
    .err();
    assert!(e.contains("num_heads"), "{e}");
}

#[test]
fn dropout_inference_only() {
    let c = Model {
        opset: 22,
        ..Model::new("Dropout", &["x"])
    }
    .input("x", &[3, 4])
    .output("y")
    .output("mask")
    .ok();
    assert!(c.graph.consts.len() == 1, "the mask is a constant");
    let e = Model {
        opset: 22,
        ..Model::new("Dropout", &["x", "", "t"])
    }
    .input("x", &[3, 4])
    .init(raw("t", BOOL, &[], &[1]))
    .output("y")
    .err();
    assert!(e.contains("training_mode"), "{e}");
}

#[test]
fn softmax_cross_entropy_mean_weighted_with_ignore_index() {
    let c = Model {
        opset: 13,
        ..Model::new("SoftmaxCrossEntropyLoss", &["x", "t", "w"])
    }
    .attr(attr_string("reduction", "mean"))
    .attr(attr_int("ignore_index", -1))
    .input("x", &[3, 5, 2, 2, 2])
    .typed_input("t", INT64, &[3, 2, 2, 2])
    .init(floats("w", &[5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
    .output("loss")
    .output("log_prob")
    .ok();
    let o = ops(&c);
    // no gather at indices the graph computes: a one-hot of the targets
    assert!(!o.contains(&"gatherElements") && !o.contains(&"gather"));
    assert!(o.contains(&"reduceLogSumExp") && o.contains(&"equal") && o.contains(&"div"));
    // the spatial axes flattened (browsers take rank 5 or 6 at most)
    assert!(c.graph.nodes[0].options["newShape"] == serde_json::json!([3, 5, 8]));
}

#[test]
fn nll_loss_reductions() {
    for (reduction, last) in [
        ("none", "neg"),
        ("sum", "reduceSum"),
        ("mean", "reduceMean"),
    ] {
        let c = Model {
            opset: 22,
            ..Model::new("NegativeLogLikelihoodLoss", &["x", "t"])
        }
        .attr(attr_string("reduction", reduction))
        .input("x", &[3, 5, 2])
        .typed_input("t", INT64, &[3, 2])
        .output("loss")
        .ok();
        assert_eq!(ops(&c).last(), Some(&last), "{reduction}");
    }
    let e = Model {
        opset: 22,
        ..Model::new("NegativeLogLikelihoodLoss", &["x", "t"])
    }
    .input("x", &[3, 5])
    .typed_input("t", INT64, &[3, 2])
    .output("loss")
    .err();
    assert!(e.contains("targets"), "{e}");
}
