//! The driver: graph inputs with their dims resolved, initializers as host values, every node
//! lowered in order (each problem recorded, the rest of the graph still checked), outputs bound.

use crate::attrs::Attrs;
use crate::cx::{sanitize_name, Cx, Weight};
use crate::error::{ConvertError, OpError, Problem};
use crate::model::{map_file, Model};
use crate::node::NodeCx;
use crate::options::ConvertOptions;
use crate::proto::{
    tensor_shape_proto::{self, dimension},
    type_proto, GraphProto, NodeProto, ValueInfoProto,
};
use crate::tensor::{within_limit, ElemType, MAX_ELEMENTS};
use crate::value::Value;
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use webnn_weights_runtime::GraphJson;

/// The oldest and newest ai.onnx opsets this converter reads.
pub const OPSET_RANGE: (i64, i64) = (7, 28);

/// A converted model: the WebNN graph, the bytes of its `@weights` constants, and what it read.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The graph. Constants over the inline threshold are `@weights("name")` references whose
    /// bytes are in [`Conversion::weights`]; the rest are `inlineBytes`.
    pub graph: GraphJson,
    weights: Vec<Weight>,
    /// Every external data file the model's initializers were read from.
    pub external_files: Vec<PathBuf>,
    /// Each ONNX graph input (not fixed by an option) and its name in the graph.
    pub inputs: Vec<(String, String)>,
    /// Each ONNX graph output and its name in the graph.
    pub outputs: Vec<(String, String)>,
}

impl Conversion {
    /// The weights: each `@weights` reference and its bytes (views of the model file or its
    /// external data where nothing had to change), in graph order.
    pub fn weights(&self) -> impl ExactSizeIterator<Item = (&str, &[u8])> {
        self.weights.iter().map(|(r, b)| (r.as_str(), &b[..]))
    }

    /// The weights as the map the SafeTensors writer takes.
    pub fn weights_map(&self) -> std::collections::HashMap<String, &[u8]> {
        self.weights
            .iter()
            .map(|(r, b)| (r.clone(), &b[..]))
            .collect()
    }

    /// The graph with every `@weights` constant's bytes inline, as views of the same buffers
    /// (no byte is copied): what writers of a sidecar beside the graph take, and what an
    /// application that reads an `.onnx` model at run time hands to its WebNN runtime.
    ///
    /// ```no_run
    /// let options = webnn_weights_onnx::ConvertOptions::new().override_dim("batch", 1);
    /// let graph = webnn_weights_onnx::convert("models/model.onnx", &options)?.inlined();
    /// assert!(!graph.has_external_weights());
    /// # Ok::<(), webnn_weights_onnx::ConvertError>(())
    /// ```
    pub fn inlined(&self) -> GraphJson {
        let by_ref: HashMap<&str, &Bytes> =
            self.weights.iter().map(|(r, b)| (r.as_str(), b)).collect();
        let mut out = self.graph.clone();
        for decl in out.consts.values_mut() {
            if let webnn_weights_runtime::ConstInit::Weights { r#ref } = &decl.init {
                if let Some(bytes) = by_ref.get(r#ref.as_str()) {
                    decl.init = webnn_weights_runtime::ConstInit::InlineBytes {
                        bytes: Bytes::clone(bytes),
                    };
                }
            }
        }
        out
    }

    /// The total bytes of the weights.
    pub fn weights_len(&self) -> u64 {
        self.weights.iter().map(|(_, b)| b.len() as u64).sum()
    }
}

/// Converts the ONNX model at `path` (external data read relative to its folder).
///
/// ```no_run
/// let options = webnn_weights_onnx::ConvertOptions::new().override_dim("batch", 1);
/// let conversion = webnn_weights_onnx::convert("models/model.onnx", &options)?;
/// println!("{} nodes, {} weight bytes", conversion.graph.nodes.len(), conversion.weights_len());
/// # Ok::<(), webnn_weights_onnx::ConvertError>(())
/// ```
pub fn convert(
    path: impl AsRef<Path>,
    options: &ConvertOptions,
) -> Result<Conversion, ConvertError> {
    let path = path.as_ref();
    let file = Some(path.display().to_string());
    let bytes = map_file(path).map_err(|e| {
        ConvertError::one(
            file.clone(),
            "the model file",
            format!("cannot read it: {e}"),
        )
    })?;
    let dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .map(Path::to_path_buf);
    convert_model(bytes, dir, file, options)
}

/// Converts a model already in memory. External data, if the model has any, is read relative
/// to `dir`; without a `dir` such a model is an error.
pub fn convert_bytes(
    bytes: Bytes,
    dir: Option<&Path>,
    options: &ConvertOptions,
) -> Result<Conversion, ConvertError> {
    convert_model(bytes, dir.map(Path::to_path_buf), None, options)
}

/// The conversion behind [`convert`] and [`convert_bytes`]: every problem of the model is
/// collected before it fails (`file` names it in the error).
fn convert_model(
    bytes: Bytes,
    dir: Option<PathBuf>,
    file: Option<String>,
    options: &ConvertOptions,
) -> Result<Conversion, ConvertError> {
    let mut model =
        Model::decode(bytes, dir).map_err(|e| ConvertError::one(file.clone(), "the model", e))?;
    let mut run = Run {
        problems: Vec::new(),
        env: HashMap::new(),
        poisoned: HashSet::new(),
        unproduced: HashMap::new(),
    };
    check_opset(&model, &file)?;
    let graph = model.proto.graph.take().unwrap_or_default();
    let name = graph.name.clone().filter(|n| !n.is_empty());
    let mut cx = Cx::new(name, options.inline_threshold, options.inline_all);
    let free_dims = free_dimension_overrides(&model);
    if let Err(p) = &free_dims {
        run.problems.push(p.clone());
    }
    let free_dims = free_dims.unwrap_or_default();

    run.initializers(&graph, &mut model);
    let mut inputs = run.graph_inputs(&graph, options, &free_dims, &mut cx);
    run.options_without_input(&graph, options);

    run.nodes(&graph, &mut model, &mut cx);
    let outputs = run.outputs(&graph, &mut cx);
    if graph.output.is_empty() {
        run.problem(
            "the graph".into(),
            "declares no outputs: WebNN builds no graph without one (list the values to compute in the graph's outputs)".into(),
        );
    }
    // inputs and constants no operation reads (everything that used them folded): WebNN
    // would refuse a tensor for an input its graph does not use
    let unused = cx.prune_unused();
    inputs.retain(|(_, name)| !unused.contains(name));
    run.empty_inputs(&inputs, &cx);
    if !run.problems.is_empty() {
        return Err(ConvertError {
            file,
            problems: run.problems,
        });
    }
    Ok(Conversion {
        graph: cx.graph,
        weights: cx.weights,
        external_files: model.external_files,
        inputs,
        outputs,
    })
}

/// Refuses a model whose ai.onnx opset is outside [`OPSET_RANGE`] (nothing else is checked
/// then: the operators' meanings are unknown).
fn check_opset(model: &Model, file: &Option<String>) -> Result<(), ConvertError> {
    let opset = model.opset("").unwrap_or(0);
    if !(OPSET_RANGE.0..=OPSET_RANGE.1).contains(&opset) {
        return Err(ConvertError::one(
            file.clone(),
            "the model",
            format!(
                "imports ai.onnx opset {opset}; this converter reads opsets {} to {} (convert the model to a newer opset with onnx.version_converter)",
                OPSET_RANGE.0, OPSET_RANGE.1
            ),
        ));
    }
    Ok(())
}

/// The state of one conversion.
struct Run {
    problems: Vec<Problem>,
    env: HashMap<String, Value>,
    /// Values whose producer failed: their users are skipped, their problem already reported.
    poisoned: HashSet<String>,
    /// Named outputs a lowering did not produce: where, and which output.
    unproduced: HashMap<String, (String, usize)>,
}

impl Run {
    fn problem(&mut self, place: String, message: String) {
        self.problems.push(Problem {
            place,
            message,
            needs_constant: None,
        });
    }

    /// Binds every initializer to its value as a constant. They come before the graph
    /// inputs: a graph input of the same name (IR < 4) is the initializer.
    fn initializers(&mut self, graph: &GraphProto, model: &mut Model) {
        for t in &graph.initializer {
            let name = t.name.clone().unwrap_or_default();
            match model.tensor(t) {
                Ok(host) => {
                    self.env.insert(name, Value::constant(host));
                }
                Err(e) => self.problem(format!("initializer {name:?}"), e),
            }
        }
    }

    /// Binds the graph inputs that are not initializers: to their fixed value where an
    /// option gives one, otherwise to a graph input of the resolved type. Returns each input
    /// of the graph with its name there.
    fn graph_inputs(
        &mut self,
        graph: &GraphProto,
        options: &ConvertOptions,
        free_dims: &BTreeMap<String, u32>,
        cx: &mut Cx,
    ) -> Vec<(String, String)> {
        let mut inputs: Vec<(String, String)> = Vec::new();
        for info in &graph.input {
            let name = info.name.clone().unwrap_or_default();
            if self.env.contains_key(&name) {
                continue;
            }
            if let Some(value) = options.constant_inputs.get(&name) {
                match check_fixed(info, value) {
                    Ok(()) => {
                        self.env.insert(name, Value::constant(value.clone()));
                    }
                    Err(e) => self.problem(format!("input {name:?}"), e),
                }
                continue;
            }
            match input_type(info, options, free_dims) {
                Ok((elem, shape)) => {
                    let operand = cx.input(&name, elem, shape);
                    inputs.push((name.clone(), operand.name.clone()));
                    self.env.insert(name, Value::Operand(operand));
                }
                Err(e) => {
                    self.problem(format!("input {name:?}"), e);
                    self.poisoned.insert(name);
                }
            }
        }
        inputs
    }

    /// A problem for each constant input and input shape of `options` that names no graph
    /// input.
    fn options_without_input(&mut self, graph: &GraphProto, options: &ConvertOptions) {
        for name in options.constant_inputs.keys() {
            if !graph.input.iter().any(|i| i.name.as_deref() == Some(name)) {
                self.problem(
                    format!("constant input {name:?}"),
                    "the model has no graph input of that name".to_string(),
                );
            }
        }
        for name in options.input_shapes.keys() {
            if !graph.input.iter().any(|i| i.name.as_deref() == Some(name)) {
                self.problem(
                    format!("input shape for {name:?}"),
                    format!(
                        "the model has no graph input of that name (its inputs: {})",
                        graph
                            .input
                            .iter()
                            .filter_map(|i| i.name.as_deref())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
    }

    fn nodes(&mut self, graph: &GraphProto, model: &mut Model, cx: &mut Cx) {
        for (index, node) in graph.node.iter().enumerate() {
            let op_type = node.op_type.as_deref().unwrap_or("");
            let (domain, opset, place) = place_of(node, index, model);
            let outputs: Vec<String> = node.output.clone();
            let Some(values) = self.node_inputs(node, &place) else {
                self.poisoned.extend(outputs.iter().cloned());
                continue;
            };
            // Each named output's own name is kept for the operand that computes it; operations
            // a lowering adds on the way are named after the first output with a suffix.
            let start = cx.graph.nodes.len();
            let reserved: Vec<Option<String>> = outputs
                .iter()
                .map(|o| (!o.is_empty()).then(|| cx.fresh_named(o)))
                .collect();
            if let Some(first) = outputs.iter().find(|o| !o.is_empty()) {
                cx.set_prefix(first);
            }
            let n = NodeCx {
                op_type,
                opset,
                inputs: values,
                attrs: Attrs::new(&node.attribute),
                outputs: outputs.iter().map(|o| !o.is_empty()).collect(),
            };
            let result = if domain.is_empty() && op_type == "Constant" {
                constant_node(&n, model)
            } else {
                match crate::ops::lookup(domain, op_type) {
                    Some(lower) => lower(cx, &n),
                    None => Err(OpError::Message(unsupported(domain, op_type))),
                }
            };
            let outcome: Result<(), Option<Problem>> = match result {
                Ok(values) if values.iter().any(|v| !within_limit(v.shape())) => {
                    let shapes: Vec<&[u32]> = values.iter().map(Value::shape).collect();
                    Err(Some(Problem {
                        place,
                        message: format!("its outputs would have shapes {shapes:?}: more than {MAX_ELEMENTS} elements (WebNN's limit)"),
                        needs_constant: None,
                    }))
                }
                Ok(values) => {
                    let values = name_outputs(cx, start, &reserved, values);
                    self.bind(&outputs, &values, &place);
                    Ok(())
                }
                // an empty graph input is the problem to report (its value as a constant
                // folds this node), not what the node made of it
                Err(OpError::Message(m)) => match empty_input(node, &n, cx) {
                    Some((name, shape)) => {
                        self.empty_input(&name, &shape);
                        Err(None)
                    }
                    None => Err(Some(Problem {
                        place,
                        message: m,
                        needs_constant: None,
                    })),
                },
                Err(OpError::NeedsConstant { index, what }) => {
                    Err(Some(needs_constant(graph, node, place, index, &what)))
                }
            };
            if let Err(problem) = outcome {
                self.problems.extend(problem);
                for name in reserved.iter().flatten() {
                    cx.release(name);
                }
                self.poisoned.extend(outputs.iter().cloned());
            }
        }
    }

    /// The values of `node`'s inputs (`None` for one left out), or `None` when one of them
    /// failed before (already reported) or is produced nowhere (reported here).
    fn node_inputs(&mut self, node: &NodeProto, place: &str) -> Option<Vec<Option<Value>>> {
        let mut values = Vec::with_capacity(node.input.len());
        let mut skip = false;
        for name in &node.input {
            if name.is_empty() {
                values.push(None);
            } else if let Some(v) = self.env.get(name) {
                values.push(Some(v.clone()));
            } else if self.poisoned.contains(name) {
                skip = true;
            } else {
                self.problem(
                    place.to_string(),
                    format!("input {name:?} is not produced by any earlier node, graph input or initializer (the nodes are not in topological order, or the graph has a cycle)"),
                );
                skip = true;
            }
        }
        (!skip).then_some(values)
    }

    /// Binds a lowered node's named outputs to their values; one the lowering did not produce
    /// is an error only when something reads it.
    fn bind(&mut self, outputs: &[String], values: &[Value], place: &str) {
        for (i, name) in outputs.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            match values.get(i) {
                Some(v) => {
                    self.env.insert(name.clone(), v.clone());
                }
                None => {
                    self.poisoned.insert(name.clone());
                    self.unproduced.insert(name.clone(), (place.to_string(), i));
                }
            }
        }
    }

    /// Graph inputs with a zero dim that an operation still reads (ones only their type or
    /// shape was taken from are gone): WebNN has no empty tensors. Their (empty) value as a
    /// constant folds what reads them.
    fn empty_inputs(&mut self, inputs: &[(String, String)], cx: &Cx) {
        for (onnx, name) in inputs {
            let Some(desc) = cx.graph.inputs.get(name) else {
                continue;
            };
            let shape: Vec<u32> = desc
                .shape
                .iter()
                .map(|d| match d {
                    webnn_weights_runtime::Dimension::Static(v) => *v,
                    _ => 1,
                })
                .collect();
            if shape.contains(&0) {
                self.empty_input(onnx, &shape);
            }
        }
    }

    /// The problem of graph input `onnx`, of `shape` with a zero dim (once).
    fn empty_input(&mut self, onnx: &str, shape: &[u32]) {
        let place = format!("input {onnx:?}");
        if self.problems.iter().any(|p| p.place == place) {
            return;
        }
        self.problems.push(Problem {
            place,
            message: format!(
                "has shape {shape:?}, with no elements: WebNN has no empty tensors (give the input a size of at least 1 in every dim with --input-shape, or its empty value as a constant with ConvertOptions::constant_input, which folds what reads it)"
            ),
            needs_constant: Some(onnx.to_string()),
        });
    }

    /// Binds the graph outputs; an output the graph does not compute (a constant, an input)
    /// goes through `identity`.
    fn outputs(&mut self, graph: &GraphProto, cx: &mut Cx) -> Vec<(String, String)> {
        let mut bound = Vec::new();
        let mut taken = HashSet::new();
        for info in &graph.output {
            let name = info.name.clone().unwrap_or_default();
            let Some(value) = self.env.get(&name).cloned() else {
                if let Some((place, i)) = self.unproduced.get(&name).cloned() {
                    self.problem(
                        format!("output {name:?}"),
                        format!("is output {i} of {place}, which this converter does not compute"),
                    );
                } else if !self.poisoned.contains(&name) {
                    self.problem(
                        format!("output {name:?}"),
                        "is not produced by any node, graph input or initializer".into(),
                    );
                }
                continue;
            };
            if value.shape().contains(&0) {
                self.problem(
                    format!("output {name:?}"),
                    format!(
                        "has shape {:?}, with no elements: WebNN has no empty tensors",
                        value.shape()
                    ),
                );
                continue;
            }
            let binding = sanitize_name(&name);
            let operand = match &value {
                Value::Operand(o)
                    if o.name == binding
                        && !cx.graph.inputs.contains_key(&o.name)
                        && !taken.contains(&o.name) =>
                {
                    o.clone()
                }
                Value::Operand(o) => {
                    // an input, an operand bound twice, or one named otherwise: an identity
                    // named after the output (the text format binds outputs by name)
                    cx.set_prefix(&name);
                    cx.emit_named("identity", &[o], &name, o.elem, o.shape.clone())
                }
                Value::Const(_) => {
                    cx.set_prefix(&name);
                    match cx.operand(&value) {
                        Ok(c) => cx.emit_named("identity", &[&c], &name, c.elem, c.shape.clone()),
                        Err(e) => {
                            let m = match e {
                                OpError::Message(m) => m,
                                OpError::NeedsConstant { what, .. } => what,
                            };
                            self.problem(format!("output {name:?}"), m);
                            continue;
                        }
                    }
                }
            };
            taken.insert(operand.name.clone());
            let binding = operand.name.clone();
            cx.graph
                .outputs
                .insert(binding.clone(), operand.name.clone());
            bound.push((name, binding));
        }
        bound
    }
}

/// The first input of `node` that is a graph input with a zero dim: its ONNX name and shape.
fn empty_input(
    node: &crate::proto::NodeProto,
    n: &NodeCx<'_>,
    cx: &Cx,
) -> Option<(String, Vec<u32>)> {
    node.input
        .iter()
        .zip(&n.inputs)
        .find_map(|(name, v)| match v {
            Some(Value::Operand(o))
                if o.shape.contains(&0) && cx.graph.inputs.contains_key(&o.name) =>
            {
                Some((name.clone(), o.shape.clone()))
            }
            _ => None,
        })
}

/// A node's domain (`""` for ai.onnx), the opset the model imports for it, and how
/// messages name it: `node "conv1" (Conv, ai.onnx opset 13)`.
fn place_of<'a>(node: &'a NodeProto, index: usize, model: &Model) -> (&'a str, i64, String) {
    let op_type = node.op_type.as_deref().unwrap_or("");
    let domain = node.domain.as_deref().unwrap_or("");
    let domain = if domain == "ai.onnx" { "" } else { domain };
    let label = node
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| node.output.iter().find(|o| !o.is_empty()).cloned())
        .unwrap_or_else(|| format!("#{index}"));
    let opset = model.opset(domain).unwrap_or(1);
    let place = format!(
        "node {label:?} ({op_type}, {} opset {opset})",
        if domain.is_empty() { "ai.onnx" } else { domain }
    );
    (domain, opset, place)
}

/// Gives each output's operand, when this node's operations (from index `start`) made it,
/// the name reserved for that output; frees the reserved names no operand took.
fn name_outputs(
    cx: &mut Cx,
    start: usize,
    reserved: &[Option<String>],
    mut values: Vec<Value>,
) -> Vec<Value> {
    let mut renamed: HashMap<String, String> = HashMap::new();
    for (value, name) in values.iter_mut().zip(reserved) {
        if let (Value::Operand(o), Some(name)) = (value, name) {
            if let Some(new) = renamed.get(&o.name) {
                o.name = new.clone();
            } else if cx.rename_since(start, &o.name, name) {
                renamed.insert(o.name.clone(), name.clone());
                o.name = name.clone();
            }
        }
    }
    // names kept for outputs that turned out host values or existing operands
    for name in reserved.iter().flatten() {
        if !renamed.values().any(|n| n == name) {
            cx.release(name);
        }
    }
    values
}

/// The problem of a node that needs input `index` while the graph is built: a graph input
/// can be fixed (`needs_constant` names it), a computed value cannot.
fn needs_constant(
    graph: &GraphProto,
    node: &NodeProto,
    place: String,
    index: usize,
    what: &str,
) -> Problem {
    let input = node.input.get(index).cloned().unwrap_or_default();
    let is_graph_input = graph
        .input
        .iter()
        .any(|i| i.name.as_deref() == Some(input.as_str()));
    let message = if is_graph_input {
        format!("{what} (input {index}, {input:?}) must be known while the graph is built, but it is the graph input {input:?}; WebNN graphs have static shapes and parameters: fix its value (ConvertOptions::constant_input, `--constant-input {input}=FILE.pb`)")
    } else {
        format!("{what} (input {index}, {input:?}) must be known while the graph is built, but the graph computes it from its inputs at run time; WebNN graphs have static shapes and parameters")
    };
    Problem {
        place,
        message,
        needs_constant: is_graph_input.then_some(input),
    }
}

/// The message for an operator this converter has no lowering for.
fn unsupported(domain: &str, op_type: &str) -> String {
    let d = if domain.is_empty() { "ai.onnx" } else { domain };
    format!("operator {d}::{op_type} is not supported: WebNN has no operation for it and no decomposition is implemented (docs/onnx.md lists the operators that convert)")
}

/// `Constant`: its value (one of `value`, `value_float(s)`, `value_int(s)`).
fn constant_node(n: &NodeCx<'_>, model: &mut Model) -> crate::error::OpResult<Vec<Value>> {
    use crate::tensor::HostTensor;
    let a = &n.attrs;
    if let Some(t) = a.tensor("value") {
        let host = model.tensor(t)?;
        return Ok(vec![Value::constant(host)]);
    }
    if let Some(v) = a.float("value_float")? {
        return Ok(vec![Value::constant(HostTensor::from_f64s(
            ElemType::F32,
            vec![],
            &[f64::from(v)],
        ))]);
    }
    if let Some(v) = a.floats("value_floats")? {
        let f: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
        return Ok(vec![Value::constant(HostTensor::from_f64s(
            ElemType::F32,
            vec![f.len() as u32],
            &f,
        ))]);
    }
    if let Some(v) = a.int("value_int")? {
        return Ok(vec![Value::constant(HostTensor::from_i64s(
            ElemType::I64,
            vec![],
            &[v],
        ))]);
    }
    if let Some(v) = a.ints("value_ints")? {
        return Ok(vec![Value::constant(HostTensor::from_i64s(
            ElemType::I64,
            vec![v.len() as u32],
            &v,
        ))]);
    }
    if a.has("sparse_value") {
        return Err("a sparse_value is not supported (store the constant dense)".into());
    }
    Err("has no value attribute of a supported kind (value, value_float(s), value_int(s); strings are not supported)".into())
}

/// The element type and static shape of a graph input.
fn input_type(
    info: &ValueInfoProto,
    options: &ConvertOptions,
    free_dims: &BTreeMap<String, u32>,
) -> Result<(ElemType, Vec<u32>), String> {
    let name = info.name.as_deref().unwrap_or("");
    let Some(type_proto::Value::TensorType(tensor)) =
        info.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return Err("is not a tensor (sequences, maps and optionals are not supported)".into());
    };
    let code = tensor.elem_type.unwrap_or(0);
    let elem = ElemType::from_onnx(code)
        .filter(|e| e.webnn().is_some())
        .ok_or_else(|| {
            format!(
                "has element type {}, which WebNN has no type for (cast it in the model)",
                ElemType::onnx_name(code)
            )
        })?;
    let declared = tensor.shape.as_ref().map(|s| &s.dim[..]);
    if let Some(shape) = options.input_shapes.get(name) {
        return Ok((elem, given_shape(shape, declared)?));
    }
    let Some(dims) = declared else {
        return Err(format!(
            "has no declared shape; give one with --input-shape {name}=D0,D1,… (ConvertOptions::input_shape)"
        ));
    };
    Ok((elem, declared_shape(name, dims, options, free_dims)?))
}

/// The shape `--input-shape` gives an input, checked against the rank and fixed dims the
/// model `declared` (if it declares a shape) and against WebNN's size limit.
fn given_shape(
    shape: &[u32],
    declared: Option<&[tensor_shape_proto::Dimension]>,
) -> Result<Vec<u32>, String> {
    if let Some(dims) = declared {
        if dims.len() != shape.len() {
            return Err(format!(
                "--input-shape gives {} dims ({shape:?}) but the model declares rank {}",
                shape.len(),
                dims.len()
            ));
        }
        for (i, (d, &given)) in dims.iter().zip(shape).enumerate() {
            if let Some(dimension::Value::DimValue(v)) = d.value {
                if v >= 0 && v as u64 != u64::from(given) {
                    return Err(format!(
                        "--input-shape gives dim {i} as {given}, but the model fixes it at {v}"
                    ));
                }
            }
        }
    }
    if !within_limit(shape) {
        return Err(format!(
            "--input-shape gives {shape:?}: more than {MAX_ELEMENTS} elements (WebNN's limit)"
        ));
    }
    Ok(shape.to_vec())
}

/// The static shape of input `name` from the `dims` the model declares, named dims sized by
/// `--override-dim` or else the model's `freeDimensionOverrides`; every dim without a size
/// is named in the one error.
fn declared_shape(
    name: &str,
    dims: &[tensor_shape_proto::Dimension],
    options: &ConvertOptions,
    free_dims: &BTreeMap<String, u32>,
) -> Result<Vec<u32>, String> {
    let mut shape = Vec::with_capacity(dims.len());
    let mut missing = Vec::new();
    for (i, d) in dims.iter().enumerate() {
        match &d.value {
            Some(dimension::Value::DimValue(v)) if *v >= 0 => match u32::try_from(*v) {
                Ok(v) => shape.push(v),
                Err(_) => return Err(format!("dim {i} is {v}, which does not fit u32")),
            },
            Some(dimension::Value::DimParam(p)) if !p.is_empty() => {
                match options.dims.get(p).or_else(|| free_dims.get(p)) {
                    Some(&v) => shape.push(v),
                    None => missing.push(format!("dim {i} is {p:?}: give it with --override-dim {p}=N")),
                }
            }
            _ => missing.push(format!(
                "dim {i} has no size or name: give the whole shape with --input-shape {name}=D0,D1,…"
            )),
        }
    }
    if !missing.is_empty() {
        return Err(format!("has dims without a size: {}", missing.join("; ")));
    }
    if !within_limit(&shape) {
        return Err(format!(
            "has shape {shape:?}: more than {MAX_ELEMENTS} elements (WebNN's limit)"
        ));
    }
    Ok(shape)
}

/// A fixed input's value against the input's declaration.
fn check_fixed(info: &ValueInfoProto, value: &crate::tensor::HostTensor) -> Result<(), String> {
    if let Some(type_proto::Value::TensorType(tensor)) =
        info.r#type.as_ref().and_then(|t| t.value.as_ref())
    {
        let code = tensor.elem_type.unwrap_or(0);
        if ElemType::from_onnx(code) != Some(value.elem) {
            return Err(format!(
                "the fixed value is {}, but the model declares {}",
                value.elem,
                ElemType::onnx_name(code)
            ));
        }
    }
    Ok(())
}

/// The model's `freeDimensionOverrides` metadata: a JSON object of dim name to size.
fn free_dimension_overrides(model: &Model) -> Result<BTreeMap<String, u32>, Problem> {
    let mut out = BTreeMap::new();
    for entry in &model.proto.metadata_props {
        if entry.key.as_deref() != Some("freeDimensionOverrides") {
            continue;
        }
        let text = entry.value.as_deref().unwrap_or("");
        let bad = |why: String| Problem {
            place: "metadata \"freeDimensionOverrides\"".into(),
            message: format!(
                "{why}; expected a JSON object of dim name to size, e.g. {{\"batch\": 1}}"
            ),
            needs_constant: None,
        };
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(format!("is not JSON ({e})")))?;
        let obj = json
            .as_object()
            .ok_or_else(|| bad("is not a JSON object".into()))?;
        for (k, v) in obj {
            let n = v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| bad(format!("{k:?} is {v}, not a size")))?;
            out.insert(k.clone(), n);
        }
    }
    Ok(out)
}
