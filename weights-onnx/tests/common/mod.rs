//! What the converter's tests share: ONNX protobuf values built in one call each, a model of
//! any nodes converted from its encoded bytes, and the questions the tests ask of a
//! conversion (its WebNN operations, an option of one of them, the refusal's text).
#![allow(dead_code)] // each test file uses its own part

use prost::Message as _;
use webnn_weights_onnx::proto::*;
use webnn_weights_onnx::{convert_bytes, Conversion, ConvertError};

/// `TensorProto.DataType` values the tests use.
pub const FLOAT: i32 = 1;
pub const UINT8: i32 = 2;
pub const INT8: i32 = 3;
pub const INT32: i32 = 6;
pub const INT64: i32 = 7;
pub const BOOL: i32 = 9;
pub const UINT32: i32 = 12;

/// A tensor type of element type `elem` with the fixed dims `dims`.
pub fn tensor_type(elem: i32, dims: &[i64]) -> TypeProto {
    let dim = dims
        .iter()
        .map(|&d| tensor_shape_proto::Dimension {
            value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
            ..Default::default()
        })
        .collect();
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem),
            shape: Some(TensorShapeProto { dim }),
        })),
        ..Default::default()
    }
}

/// A graph input or output `name` of that tensor type.
pub fn info(name: &str, elem: i32, dims: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(tensor_type(elem, dims)),
        ..Default::default()
    }
}

/// A graph output that names its value and says nothing of its type.
pub fn untyped(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        ..Default::default()
    }
}

fn attribute(name: &str, kind: attribute_proto::AttributeType) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(kind as i32),
        ..Default::default()
    }
}

/// An `INT` attribute.
pub fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        i: Some(v),
        ..attribute(name, attribute_proto::AttributeType::Int)
    }
}

/// An `INTS` attribute.
pub fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        ints: v.to_vec(),
        ..attribute(name, attribute_proto::AttributeType::Ints)
    }
}

/// A `FLOAT` attribute.
pub fn attr_float(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        f: Some(v),
        ..attribute(name, attribute_proto::AttributeType::Float)
    }
}

/// A `STRING` attribute.
pub fn attr_string(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        s: Some(v.as_bytes().to_vec().into()),
        ..attribute(name, attribute_proto::AttributeType::String)
    }
}

/// A float32 initializer in `float_data`.
pub fn floats(name: &str, dims: &[i64], v: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(FLOAT),
        float_data: v.to_vec(),
        ..Default::default()
    }
}

/// An int64 initializer in `int64_data`.
pub fn int64s(name: &str, dims: &[i64], v: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(INT64),
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

/// A 1-D int64 initializer (a shape, axes, indices).
pub fn int64_vector(name: &str, v: &[i64]) -> TensorProto {
    int64s(name, &[v.len() as i64], v)
}

/// An initializer of any element type in `raw_data`.
pub fn raw(name: &str, elem: i32, dims: &[i64], bytes: &[u8]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(elem),
        raw_data: Some(bytes.to_vec().into()),
        ..Default::default()
    }
}

/// A node of the default domain.
pub fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

/// A model of `graph` importing `opsets` (domain, version; `""` is ai.onnx), at IR
/// version 9 (which the converter does not read).
pub fn model(opsets: &[(&str, i64)], graph: GraphProto) -> ModelProto {
    ModelProto {
        ir_version: Some(9),
        opset_import: opsets
            .iter()
            .map(|&(domain, version)| OperatorSetIdProto {
                domain: Some(domain.into()),
                version: Some(version),
            })
            .collect(),
        graph: Some(graph),
        ..Default::default()
    }
}

/// Converts the model from its encoded bytes, with the default options.
pub fn convert_model(model: &ModelProto) -> Result<Conversion, ConvertError> {
    convert_bytes(model.encode_to_vec().into(), None, &Default::default())
}

/// The conversion, after the WebNN table accepted its graph (a panic naming the table's
/// complaint and the nodes otherwise).
pub fn webnn_checked(c: Conversion) -> Conversion {
    if let Err(e) = webnn_weights_web::WebGraph::new(&c.graph) {
        panic!(
            "the WebNN table refuses the graph: {e}\n{:#?}",
            c.graph.nodes
        );
    }
    c
}

/// The WebNN operations of the converted graph, in order.
pub fn ops(c: &Conversion) -> Vec<&str> {
    c.graph.nodes.iter().map(|n| n.op.as_str()).collect()
}

/// Option `key` of the first node of operation `op`.
pub fn option<'a>(c: &'a Conversion, op: &str, key: &str) -> &'a serde_json::Value {
    let n = c
        .graph
        .nodes
        .iter()
        .find(|n| n.op.as_str() == op)
        .unwrap_or_else(|| panic!("no {op} in {:?}", ops(c)));
    n.options
        .get(key)
        .unwrap_or_else(|| panic!("{op} has no {key}"))
}

/// The refusal's text (a panic naming the operations when the model converted).
pub fn refusal(r: Result<Conversion, ConvertError>) -> String {
    match r {
        Ok(c) => panic!("converted, expected a refusal: {:?}", ops(&c)),
        Err(e) => e.to_string(),
    }
}

/// A one-node model: `op` of `domain` (ai.onnx when empty, then imported at version 1
/// besides ai.onnx) at `opset`, reading `node_inputs`, writing the graph's outputs.
pub struct Model {
    pub op: &'static str,
    pub domain: &'static str,
    pub opset: i64,
    pub inputs: Vec<ValueInfoProto>,
    pub node_inputs: Vec<&'static str>,
    pub outputs: Vec<ValueInfoProto>,
    pub attrs: Vec<AttributeProto>,
    pub inits: Vec<TensorProto>,
}

impl Model {
    /// `op(node_inputs)` at opset 21, no graph input or output yet.
    pub fn new(op: &'static str, node_inputs: &[&'static str]) -> Model {
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

    /// A float32 graph input.
    pub fn input(self, name: &str, dims: &[i64]) -> Model {
        self.typed_input(name, FLOAT, dims)
    }

    /// A graph input of element type `elem`.
    pub fn typed_input(mut self, name: &str, elem: i32, dims: &[i64]) -> Model {
        self.inputs.push(info(name, elem, dims));
        self
    }

    /// One more input of the node (an initializer's or an input's name, or `""`).
    pub fn node_input(mut self, name: &'static str) -> Model {
        self.node_inputs.push(name);
        self
    }

    /// An output of the node; `""` is an output the node leaves out, not a graph output.
    pub fn output(mut self, name: &str) -> Model {
        self.outputs.push(info(name, FLOAT, &[]));
        self
    }

    pub fn attr(mut self, a: AttributeProto) -> Model {
        self.attrs.push(a);
        self
    }

    pub fn init(mut self, t: TensorProto) -> Model {
        self.inits.push(t);
        self
    }

    pub fn convert(&self) -> Result<Conversion, ConvertError> {
        let mut opsets = vec![("", self.opset)];
        if !self.domain.is_empty() {
            opsets.push((self.domain, 1));
        }
        let outputs: Vec<&str> = self.outputs.iter().map(|o| o.name()).collect();
        let node = NodeProto {
            domain: Some(self.domain.into()),
            ..node(self.op, &self.node_inputs, &outputs, self.attrs.clone())
        };
        let graph = GraphProto {
            node: vec![node],
            input: self.inputs.clone(),
            output: self
                .outputs
                .iter()
                .filter(|o| !o.name().is_empty())
                .cloned()
                .collect(),
            initializer: self.inits.clone(),
            ..Default::default()
        };
        convert_model(&model(&opsets, graph)).map(webnn_checked)
    }

    /// The conversion (its graph accepted by the WebNN table).
    pub fn ok(&self) -> Conversion {
        self.convert().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The refusal's text.
    pub fn err(&self) -> String {
        refusal(self.convert())
    }
}

/// A model of any nodes of ai.onnx at `opset`.
pub struct Graph {
    pub opset: i64,
    pub inputs: Vec<ValueInfoProto>,
    pub outputs: Vec<ValueInfoProto>,
    pub nodes: Vec<NodeProto>,
    pub inits: Vec<TensorProto>,
}

impl Graph {
    pub fn new(opset: i64) -> Graph {
        Graph {
            opset,
            inputs: vec![],
            outputs: vec![],
            nodes: vec![],
            inits: vec![],
        }
    }

    pub fn input(mut self, name: &str, elem: i32, dims: &[i64]) -> Graph {
        self.inputs.push(info(name, elem, dims));
        self
    }

    /// A graph output declared float32 of rank 0 (the converter takes the type it computes).
    pub fn output(mut self, name: &str) -> Graph {
        self.outputs.push(info(name, FLOAT, &[]));
        self
    }

    /// A graph output declared without a type.
    pub fn untyped_output(mut self, name: &str) -> Graph {
        self.outputs.push(untyped(name));
        self
    }

    pub fn init(mut self, t: TensorProto) -> Graph {
        self.inits.push(t);
        self
    }

    /// A node without attributes (give them with [`Graph::attr`]).
    pub fn node(self, op: &str, inputs: &[&str], outputs: &[&str]) -> Graph {
        self.push(node(op, inputs, outputs, vec![]))
    }

    pub fn push(mut self, n: NodeProto) -> Graph {
        self.nodes.push(n);
        self
    }

    /// An attribute of the last node.
    pub fn attr(mut self, a: AttributeProto) -> Graph {
        self.nodes
            .last_mut()
            .expect("a node before its attributes")
            .attribute
            .push(a);
        self
    }

    /// Converts; a graph that converts must be accepted by the WebNN table.
    pub fn convert(&self) -> Result<Conversion, ConvertError> {
        let graph = GraphProto {
            node: self.nodes.clone(),
            input: self.inputs.clone(),
            output: self.outputs.clone(),
            initializer: self.inits.clone(),
            ..Default::default()
        };
        convert_model(&model(&[("", self.opset)], graph)).map(webnn_checked)
    }

    /// The conversion (its graph accepted by the WebNN table).
    pub fn ok(&self) -> Conversion {
        self.convert().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The refusal's text.
    pub fn err(&self) -> String {
        refusal(self.convert())
    }
}
