//! Attention, RMS normalization, rotary embeddings, dropout and the losses: small models
//! converted and checked against the WebNN table.

use prost::Message as _;
use webnn_weights_onnx::proto::*;
use webnn_weights_onnx::{convert_bytes, Conversion, ConvertError};

fn tensor_type(elem: i32, dims: &[i64]) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem),
            shape: Some(TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|&d| tensor_shape_proto::Dimension {
                        value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
                        ..Default::default()
                    })
                    .collect(),
            }),
        })),
        ..Default::default()
    }
}

const FLOAT: i32 = 1;

fn info(name: &str, elem: i32, dims: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(tensor_type(elem, dims)),
        ..Default::default()
    }
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

fn float_attr(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Float as i32),
        f: Some(v),
        ..Default::default()
    }
}

fn string_attr(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec().into()),
        ..Default::default()
    }
}

fn float_init(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(FLOAT),
        float_data: values.to_vec(),
        ..Default::default()
    }
}

fn raw_init(name: &str, elem: i32, dims: &[i64], raw: &[u8]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(elem),
        raw_data: Some(raw.to_vec().into()),
        ..Default::default()
    }
}

/// A one-node model.
struct Model {
    op: &'static str,
    domain: &'static str,
    opset: i64,
    inputs: Vec<ValueInfoProto>,
    node_inputs: Vec<&'static str>,
    outputs: Vec<ValueInfoProto>,
    attrs: Vec<AttributeProto>,
    inits: Vec<TensorProto>,
}

impl Model {
    fn new(op: &'static str, node_inputs: &[&'static str]) -> Model {
        Model {
            op,
            domain: "",
            opset: 21,
            inputs: vec![],
            node_inputs: node_inputs.to_vec(),
            outputs: vec![],
            attrs: vec![],
            inits: vec![],
        }
    }
    fn input(mut self, name: &str, dims: &[i64]) -> Model {
        self.inputs.push(info(name, FLOAT, dims));
        self
    }
    fn typed_input(mut self, name: &str, elem: i32, dims: &[i64]) -> Model {
        self.inputs.push(info(name, elem, dims));
        self
    }
    fn output(mut self, name: &str) -> Model {
        self.outputs.push(info(name, FLOAT, &[]));
        self
    }
    fn attr(mut self, a: AttributeProto) -> Model {
        self.attrs.push(a);
        self
    }
    fn init(mut self, t: TensorProto) -> Model {
        self.inits.push(t);
        self
    }
    fn convert(&self) -> Result<Conversion, ConvertError> {
        let mut opset_import = vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(self.opset),
        }];
        if !self.domain.is_empty() {
            opset_import.push(OperatorSetIdProto {
                domain: Some(self.domain.into()),
                version: Some(1),
            });
        }
        let model = ModelProto {
            ir_version: Some(9),
            opset_import,
            graph: Some(GraphProto {
                node: vec![NodeProto {
                    op_type: Some(self.op.into()),
                    domain: Some(self.domain.into()),
                    input: self.node_inputs.iter().map(|s| s.to_string()).collect(),
                    output: self
                        .outputs
                        .iter()
                        .map(|o| o.name.clone().unwrap())
                        .collect(),
                    attribute: self.attrs.clone(),
                    ..Default::default()
                }],
                input: self.inputs.clone(),
                output: self
                    .outputs
                    .iter()
                    .filter(|o| o.name.as_deref() != Some(""))
                    .cloned()
                    .collect(),
                initializer: self.inits.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        convert_bytes(
            bytes::Bytes::from(model.encode_to_vec()),
            None,
            &Default::default(),
        )
    }
    /// Converts, checks the graph against the WebNN table, and returns it.
    fn ok(&self) -> Conversion {
        let c = self.convert().unwrap_or_else(|e| panic!("{e}"));
        if let Err(e) = webnn_weights_web::WebGraph::new(&c.graph) {
            panic!("not a valid WebNN graph: {e}\n{:#?}", c.graph.nodes);
        }
        c
    }
    fn err(&self) -> String {
        match self.convert() {
            Ok(_) => panic!("{} converted, expected a refusal", self.op),
            Err(e) => e.to_string(),
        }
    }
}

fn ops(c: &Conversion) -> Vec<&str> {
    c.graph.nodes.iter().map(|n| n.op.as_str()).collect()
}

const BOOL: i32 = 9;
const INT64: i32 = 7;

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
        .attr(int_attr("q_num_heads", 9))
        .attr(int_attr("kv_num_heads", 3))
        .attr(int_attr("is_causal", 1))
        .attr(int_attr("qk_matmul_output_mode", 3))
        .attr(float_attr("softcap", 2.0))
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
        .attr(int_attr("softmax_precision", 11))
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
    .attr(int_attr("axis", 1))
    .input("x", &[2, 3, 4])
    .init(float_init("w", &[3, 4], &[1.0; 12]))
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
    .attr(int_attr("interleaved", 1))
    .attr(int_attr("rotary_embedding_dim", 4))
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
    .init(raw_init("t", BOOL, &[], &[1]))
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
    .attr(string_attr("reduction", "mean"))
    .attr(int_attr("ignore_index", -1))
    .input("x", &[3, 5, 2, 2, 2])
    .typed_input("t", INT64, &[3, 2, 2, 2])
    .init(float_init("w", &[5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
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
        .attr(string_attr("reduction", reduction))
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
