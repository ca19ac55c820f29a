//! Lowering: a GraphJson graph checked against the table and turned into the program the
//! JavaScript builder executes, one `MLGraphBuilder` call per node.
//!
//! Every problem of the graph is collected and reported at once, each naming its node (or
//! input, constant, output) and saying what was expected, what was found and the fix.

use crate::table::{self, Absent, Arg, Kind, Op, Opt, Outputs, Param};
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fmt;
use webnn_weights_artifacts::hex;
use webnn_weights_runtime::{
    ConstDecl, ConstInit, DataType, Dimension, GraphJson, Node, OperandDesc,
};

/// A graph that failed the table's checks: every problem found, in graph order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError {
    problems: Vec<String>,
}

impl LowerError {
    /// Each problem as one line, in graph order.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} problems:", many.len())?;
                for problem in many {
                    write!(f, "\n  - {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LowerError {}

/// A graph input as the builder declares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputDesc {
    pub name: String,
    pub data_type: &'static str,
    pub shape: Vec<u32>,
}

/// A constant: its bytes come from the weights (`ref`) or are in the program (`bytes`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConstantDesc {
    pub name: String,
    pub data_type: &'static str,
    pub shape: Vec<u32>,
    pub byte_length: u64,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Base64 of the bytes of an inline or scalar constant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<String>,
    /// Hex SHA-256 of the bytes, checked before they reach the builder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// One builder call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Call {
    pub id: String,
    /// The GraphJson operation, for messages.
    pub op: String,
    /// The `MLGraphBuilder` method.
    pub method: &'static str,
    /// Positional arguments: `{"operand": name}`, `{"operands": [names]}`, `{"value": v}`,
    /// and last `{"options": {key: value or {"operand": name}}}`.
    pub args: Vec<Value>,
    /// Names bound to the result, in order.
    pub outputs: Vec<String>,
    /// Whether the method returns a sequence of operands.
    pub sequence: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<&'static str>,
}

/// A graph output: the binding and the operand it names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct OutputDesc {
    pub name: String,
    pub operand: String,
}

/// A graph lowered onto `MLGraphBuilder` calls by the table: what the JavaScript builder
/// executes.
///
/// ```
/// let graph = webnn_weights_runtime::parse_webnn(r#"webnn_graph "g" v1 {
///   inputs { x: f32[2]; }
///   nodes { y = softmax(x, axis=0); }
///   outputs { y; }
/// }"#).unwrap();
/// let program = webnn_weights_web::WebGraph::new(&graph).unwrap();
/// assert!(program.to_json().contains(r#""method":"softmax""#));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebGraph {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    pub(crate) inputs: Vec<InputDesc>,
    pub(crate) constants: Vec<ConstantDesc>,
    pub(crate) nodes: Vec<Call>,
    pub(crate) outputs: Vec<OutputDesc>,
}

impl WebGraph {
    /// Checks `graph` against the table and lowers it; every problem is reported at once.
    ///
    /// Constants with `@weights` keep their reference (their bytes come from a blob at run
    /// time); inline and scalar constants carry their bytes, scalars expanded as rustnn
    /// does (the value as `f32`, then converted to the declared type, one per element).
    pub fn new(graph: &GraphJson) -> Result<WebGraph, LowerError> {
        let mut lowering = Lowering::default();
        let inputs: Vec<InputDesc> = graph
            .inputs
            .iter()
            .map(|(name, desc)| lowering.input(name, desc))
            .collect();
        let constants: Vec<ConstantDesc> = graph
            .consts
            .iter()
            .filter_map(|(name, decl)| lowering.constant(name, decl))
            .collect();
        let nodes: Vec<Call> = graph
            .nodes
            .iter()
            .filter_map(|node| lowering.node(node))
            .collect();
        let outputs: Vec<OutputDesc> = graph
            .outputs
            .iter()
            .map(|(binding, operand)| lowering.output(binding, operand))
            .collect();
        if outputs.is_empty() {
            lowering
                .problems
                .push("the graph has no outputs: WebNN builds no graph without one".into());
        }
        if !lowering.problems.is_empty() {
            return Err(LowerError {
                problems: lowering.problems,
            });
        }
        Ok(WebGraph {
            name: graph.name.clone(),
            inputs,
            constants,
            nodes,
            outputs,
        })
    }

    /// The program as JSON, as the JavaScript builder reads it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("the program is plain JSON")
    }

    /// Sets the SHA-256 that the page checks for every constant whose bytes come from
    /// the weights: `digest` gives each reference's digest (`None` for a reference it
    /// does not know leaves that constant unchecked).
    pub fn set_digests(&mut self, digest: impl Fn(&str) -> Option<[u8; 32]>) {
        for constant in &mut self.constants {
            if let Some(reference) = &constant.reference {
                constant.sha256 = digest(reference).map(|d| hex(&d));
            }
        }
    }

    /// The model's content key: the hex SHA-256 of `webnn-weights content key v1\n`, then the
    /// digest of every constant read from the weights (in the program's order, one line each),
    /// then [`WebGraph::to_json`]. It names the weights and the graph together, so a page knows
    /// it before fetching a byte (the generated modules export it as `contentKey`, the key of
    /// WebNN's graph cache). `None` while a constant read from the weights has no digest (set
    /// them with [`WebGraph::set_digests`]).
    ///
    /// ```
    /// let graph = webnn_weights_runtime::parse_webnn(r#"webnn_graph "g" v1 {
    ///   inputs { x: f32[2]; } consts { w: f32[2] @weights("w"); }
    ///   nodes { y = add(x, w); } outputs { y; }
    /// }"#).unwrap();
    /// let mut program = webnn_weights_web::WebGraph::new(&graph).unwrap();
    /// assert_eq!(program.content_key(), None);
    /// program.set_digests(|_| Some([0; 32]));
    /// let key = program.content_key().unwrap();
    /// assert_eq!(key.len(), 64);
    /// program.set_digests(|_| Some([1; 32]));
    /// assert_ne!(program.content_key().unwrap(), key);
    /// ```
    pub fn content_key(&self) -> Option<String> {
        let mut hasher = Sha256::new();
        hasher.update(b"webnn-weights content key v1\n");
        for constant in &self.constants {
            if constant.reference.is_some() {
                hasher.update(constant.sha256.as_ref()?.as_bytes());
                hasher.update(b"\n");
            }
        }
        hasher.update(self.to_json().as_bytes());
        let digest: [u8; 32] = hasher.finalize().into();
        Some(hex(&digest))
    }

    /// The references of constants whose bytes come from the weights, each once, in the
    /// order of the constants' names.
    pub fn references(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.constants
            .iter()
            .filter_map(|c| c.reference.as_deref())
            .filter(|r| seen.insert(*r))
            .collect()
    }
}

/// What lowering a graph carries from one declaration to the next, in graph order: the
/// operand names defined so far, and every problem found.
#[derive(Default)]
struct Lowering {
    known: HashSet<String>,
    problems: Vec<String>,
}

impl Lowering {
    /// A graph input with its static shape. A dynamic dimension is a problem; its maximum
    /// size stands in for it.
    fn input(&mut self, name: &str, desc: &OperandDesc) -> InputDesc {
        let mut shape = Vec::with_capacity(desc.shape.len());
        for dim in &desc.shape {
            match dim {
                Dimension::Static(size) => shape.push(*size),
                Dimension::Dynamic {
                    name: dim,
                    max_size,
                } => {
                    self.problems.push(format!(
                        "input \"{name}\": dimension dyn(\"{dim}\", {max_size}) is dynamic; \
                         WebNN in browsers builds static shapes (fix: give the input a \
                         static shape, e.g. {max_size})"
                    ));
                    shape.push(*max_size);
                }
            }
        }
        self.known.insert(name.to_string());
        InputDesc {
            name: name.to_string(),
            data_type: desc.data_type.json_name(),
            shape,
        }
    }

    /// A constant with its reference or its bytes; `None` when its size does not fit
    /// `u64`.
    fn constant(&mut self, name: &str, decl: &ConstDecl) -> Option<ConstantDesc> {
        if !self.known.insert(name.to_string()) {
            self.problems.push(format!(
                "constant \"{name}\": the name is also an input (fix: rename one)"
            ));
        }
        let Some(byte_length) = decl.byte_length() else {
            self.problems.push(format!(
                "constant \"{name}\": shape {:?} of {} is too large",
                decl.shape, decl.data_type
            ));
            return None;
        };
        let mut constant = ConstantDesc {
            name: name.to_string(),
            data_type: decl.data_type.json_name(),
            shape: decl.shape.clone(),
            byte_length,
            reference: None,
            bytes: None,
            sha256: None,
        };
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        match &decl.init {
            ConstInit::Weights { r#ref } => constant.reference = Some(r#ref.clone()),
            ConstInit::InlineBytes { bytes } => {
                if bytes.len() as u64 != byte_length {
                    self.problems.push(format!(
                        "constant \"{name}\": {} inline bytes, {} {:?} takes {byte_length}",
                        bytes.len(),
                        decl.data_type,
                        decl.shape
                    ));
                }
                constant.bytes = Some(encode(bytes));
            }
            ConstInit::Scalar { value } => match scalar_bytes(value, decl.data_type, byte_length) {
                Ok(bytes) => constant.bytes = Some(encode(&bytes)),
                Err(why) => self.problems.push(format!("constant \"{name}\": {why}")),
            },
        }
        Some(constant)
    }

    /// A node's builder call, its outputs now defined. `None` when the node has problems;
    /// the names it would define are defined all the same, so later nodes are checked
    /// against the graph as written.
    fn node(&mut self, node: &Node) -> Option<Call> {
        match lower_node(node, &self.known) {
            Ok(call) => {
                for output in &call.outputs {
                    if !self.known.insert(output.clone()) {
                        self.problems.push(format!(
                            "node \"{}\" ({}): output \"{output}\" is already defined \
                             (fix: give it a name of its own)",
                            node.id, node.op
                        ));
                    }
                }
                Some(call)
            }
            Err(mut found) => {
                for name in node.produced() {
                    self.known.insert(name.to_string());
                }
                self.problems.append(&mut found);
                None
            }
        }
    }

    /// A graph output: `binding` names `operand`, which must be defined.
    fn output(&mut self, binding: &str, operand: &str) -> OutputDesc {
        if !self.known.contains(operand) {
            self.problems.push(format!(
                "output \"{binding}\": operand \"{operand}\" is not defined by any input, \
                 constant or node"
            ));
        }
        OutputDesc {
            name: binding.to_string(),
            operand: operand.to_string(),
        }
    }
}

/// A scalar constant's bytes, as rustnn 0.6.0 expands it: the value read as `f64` (or
/// integer) and narrowed to `f32`, then converted to the declared type with Rust's
/// saturating casts, repeated for every element.
fn scalar_bytes(value: &Value, data_type: DataType, byte_length: u64) -> Result<Vec<u8>, String> {
    let scalar = value
        .as_f64()
        .map(|v| v as f32)
        .ok_or_else(|| format!("scalar value {value} is not a number"))?;
    let element: Vec<u8> = match data_type {
        DataType::Float32 => scalar.to_le_bytes().to_vec(),
        DataType::Float16 => half::f16::from_f32(scalar).to_bits().to_le_bytes().to_vec(),
        DataType::Int32 => (scalar as i32).to_le_bytes().to_vec(),
        DataType::Uint32 => (scalar as u32).to_le_bytes().to_vec(),
        DataType::Int64 => (scalar as i64).to_le_bytes().to_vec(),
        DataType::Uint64 => (scalar as u64).to_le_bytes().to_vec(),
        DataType::Int8 => vec![scalar as i8 as u8],
        DataType::Uint8 => vec![scalar as u8],
        DataType::Int4 | DataType::Uint4 => {
            return Err(format!(
                "a {data_type} scalar has no byte form rustnn accepts (fix: give its packed \
                 bytes with @bytes)"
            ))
        }
    };
    let count = byte_length / element.len() as u64;
    if count > (1 << 28) {
        return Err(format!(
            "a scalar expanded to {byte_length} bytes is too large for a program (fix: use @weights)"
        ));
    }
    Ok(element.repeat(count as usize))
}

/// Lowers one node, or lists every problem it has.
fn lower_node(node: &Node, known: &HashSet<String>) -> Result<Call, Vec<String>> {
    let at = format!("node \"{}\" ({})", node.id, node.op);
    let op = find_op(node, &at).map_err(|why| vec![why])?;
    let mut lowering = NodeLowering {
        node,
        op,
        at,
        known,
        problems: Vec::new(),
    };
    // Empty strings and nulls mean absent, as rustnn's writer emits them.
    let mut options: Map<String, Value> = node
        .options
        .iter()
        .filter(|(_, v)| !(v.is_null() || v.as_str() == Some("")))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let mut inputs = node.inputs.iter().map(|n| n.as_str());
    let (mut args, positional) = lowering.positional_args(&mut inputs, &mut options);
    lowering.inputs_as_options(positional, inputs, &mut options);
    let dictionary = lowering.dictionary(&mut options);
    lowering.unknown_options(&options);
    args.push(serde_json::json!({ "options": dictionary }));
    let (sequence, expected) = output_count(op, &args);
    let outputs: Vec<String> = node.produced().iter().map(|n| n.to_string()).collect();
    if let Some(expected) = expected {
        lowering.check_output_count(outputs.len(), expected);
    }
    if !lowering.problems.is_empty() {
        return Err(lowering.problems);
    }
    Ok(Call {
        id: node.id.to_string(),
        op: node.op.to_string(),
        method: op.method,
        args,
        outputs,
        sequence,
        adapter: op.adapter.map(|a| a.name()),
    })
}

/// The table's entry for the node's operation, or the problem: no WebNN operation (and the
/// fix), or an unknown one (and the nearest name the table knows).
fn find_op(node: &Node, at: &str) -> Result<&'static Op, String> {
    if let Some(op) = table::find(&node.op) {
        return Ok(op);
    }
    if let Some((_, fix)) = table::NOT_WEBNN.iter().find(|(name, _)| *name == &*node.op) {
        return Err(format!(
            "{at}: \"{}\" is no WebNN operation (fix: {fix})",
            node.op
        ));
    }
    let near = nearest(&node.op, &table::names());
    Err(format!(
        "{at}: unknown operation \"{}\"{}; the WebNN table knows {} operations \
         (docs/web.md lists them)",
        node.op,
        near.map_or(String::new(), |n| format!(" (did you mean \"{n}\"?)")),
        table::OPS.len()
    ))
}

/// One node on its way to a builder call: its operation's table entry, the names defined
/// before it, and every problem found, each starting with `at` (the node and its
/// operation).
struct NodeLowering<'a> {
    node: &'a Node,
    op: &'static Op,
    at: String,
    known: &'a HashSet<String>,
    problems: Vec<String>,
}

impl NodeLowering<'_> {
    /// Records a problem of this node.
    fn problem(&mut self, message: String) {
        self.problems.push(format!("{}: {message}", self.at));
    }

    /// `{"operand": name}`; a problem when `name` (the node's `what`) is not defined before
    /// this node.
    fn operand(&mut self, name: &str, what: &str) -> Value {
        if !self.known.contains(name) {
            self.problem(format!(
                "{what} \"{name}\" is not defined before this node (missing or forward \
                 reference)"
            ));
        }
        serde_json::json!({ "operand": name })
    }

    /// The operation's positional arguments in the table's order, from the node's `inputs`
    /// (taken as the arguments read them) and `options` (taken out); and how many input
    /// arguments the operation has before its extra inputs.
    fn positional_args<'n>(
        &mut self,
        inputs: &mut impl Iterator<Item = &'n str>,
        options: &mut Map<String, Value>,
    ) -> (Vec<Value>, usize) {
        let op = self.op;
        let mut args = Vec::new();
        let mut positional = 0;
        for arg in op.args {
            match arg {
                Arg::Input(what) => {
                    positional += 1;
                    match inputs.next() {
                        Some(name) => args.push(self.operand(name, &format!("input {what}"))),
                        None => self.problem(format!(
                            "input {positional} ({what}) is missing; {} takes {} \
                             (fix: add it to the node's inputs)",
                            op.name,
                            arity(op)
                        )),
                    }
                }
                Arg::OptionalInput(what) => {
                    positional += 1;
                    match inputs.next() {
                        Some(name) => args.push(self.operand(name, &format!("input {what}"))),
                        None => args.push(Value::Null),
                    }
                }
                Arg::Inputs => args.push(self.all_inputs(inputs)),
                Arg::Param(param) => args.extend(self.param(param, options)),
            }
        }
        (args, positional)
    }

    /// Every remaining input, as one sequence (`concat`).
    fn all_inputs<'n>(&mut self, inputs: &mut impl Iterator<Item = &'n str>) -> Value {
        let names: Vec<&str> = inputs.collect();
        if names.is_empty() {
            self.problem(format!("{} needs at least one input", self.op.name));
        }
        for name in &names {
            self.operand(name, "input");
        }
        serde_json::json!({ "operands": names })
    }

    /// A positional argument taken out of `options`: `{"value": v}` with the node's value
    /// (checked) or the table's default; `None` when it is left out, or missing (a problem).
    fn param(&mut self, param: &Param, options: &mut Map<String, Value>) -> Option<Value> {
        let Some((key, value)) = take(options, param.key, param.aliases) else {
            return match param.absent {
                Absent::Required => {
                    self.problem(format!(
                        "{} is missing; {} takes it as a positional argument \
                         (fix: add {}=… to the node)",
                        param.key, self.op.name, param.key
                    ));
                    None
                }
                Absent::Default(literal) => Some(
                    serde_json::json!({ "value": serde_json::from_str::<Value>(literal)
                        .expect("table defaults are JSON") }),
                ),
                Absent::Omit => None,
            };
        };
        if let Err(why) = check_kind(param.kind, &value) {
            self.problem(format!("{key}={value}: {why}"));
        }
        Some(serde_json::json!({ "value": value }))
    }

    /// The inputs past the positional ones (`rest`, numbered from `positional`), which
    /// rustnn reads as operand options: each put in `options` under its key, or a problem.
    fn inputs_as_options<'n>(
        &mut self,
        positional: usize,
        rest: impl Iterator<Item = &'n str>,
        options: &mut Map<String, Value>,
    ) {
        let op = self.op;
        for (index, name) in (positional..).zip(rest) {
            match op.extra_inputs.iter().find(|(i, _)| *i == index) {
                // rustnn's writer names a conv2d's bias both ways; the option wins in rustnn,
                // so the same operand twice is one bias.
                Some((_, key)) if options.get(*key).and_then(Value::as_str) == Some(name) => {}
                Some((_, key)) if options.contains_key(*key) => self.problem(format!(
                    "input {} (\"{name}\") and option {key}={} give two different values of \
                     {key} (fix: keep one)",
                    index + 1,
                    options[*key]
                )),
                Some((_, key)) => {
                    options.insert(key.to_string(), Value::String(name.to_string()));
                }
                None => self.problem(format!(
                    "{} inputs, {} takes {} (fix: remove the extra inputs, or pass them as \
                     options)",
                    self.node.inputs.len(),
                    op.name,
                    arity(op)
                )),
            }
        }
    }

    /// The options dictionary, the call's last argument: the label, then each of the
    /// table's options taken out of `options` (checked), or its default.
    fn dictionary(&mut self, options: &mut Map<String, Value>) -> Map<String, Value> {
        let mut dictionary = Map::new();
        if let Some(label) = options.remove("label") {
            match label {
                Value::String(_) => {
                    dictionary.insert("label".into(), label);
                }
                other => self.problem(format!("label={other}: expected a string")),
            }
        }
        for spec in self.op.options {
            match take(options, spec.key, spec.aliases) {
                Some((key, value)) => self.option(spec, &key, value, &mut dictionary),
                None => {
                    if let Absent::Default(literal) = spec.absent {
                        dictionary.insert(
                            spec.key.to_string(),
                            serde_json::from_str(literal).expect("table defaults are JSON"),
                        );
                    }
                }
            }
        }
        dictionary
    }

    /// The node's value of one option (given as `key`), checked and put in `dictionary`
    /// under the table's key and the keys the browser also reads; or dropped (legacy keys,
    /// and `batchDimensions`, which must be 0).
    fn option(&mut self, spec: &Opt, key: &str, value: Value, dictionary: &mut Map<String, Value>) {
        if let Err(why) = check_kind(spec.kind, &value) {
            self.problem(format!("{key}={value}: {why}"));
            return;
        }
        match spec.kind {
            Kind::Dropped => {}
            Kind::Operand => {
                let name = value.as_str().unwrap_or_default();
                let reference = self.operand(name, &format!("option {key}"));
                dictionary.insert(spec.key.to_string(), reference);
            }
            _ if spec.key == "batchDimensions" => {
                if value.as_u64() != Some(0) {
                    self.problem(format!(
                        "{key}={value}: WebNN's {} has no batch dimensions \
                         (fix: remove it, or give 0)",
                        self.op.name
                    ));
                }
            }
            _ => {
                for also in spec.also {
                    dictionary.insert(also.to_string(), value.clone());
                }
                dictionary.insert(spec.key.to_string(), value);
            }
        }
    }

    /// A problem for each option left in `options`: none the operation reads.
    fn unknown_options(&mut self, options: &Map<String, Value>) {
        let op = self.op;
        for key in options.keys() {
            let mut known_keys: Vec<&str> = op
                .args
                .iter()
                .filter_map(|a| match a {
                    Arg::Param(p) => Some(p.key),
                    _ => None,
                })
                .chain(op.options.iter().map(|o| o.key))
                .collect();
            known_keys.push("label");
            let near = nearest(key, &known_keys);
            self.problem(format!(
                "unknown option \"{key}\"{}; {} reads {}",
                near.map_or(String::new(), |n| format!(" (did you mean \"{n}\"?)")),
                op.name,
                if known_keys.len() == 1 {
                    "only label".to_string()
                } else {
                    known_keys.join(", ")
                }
            ));
        }
    }

    /// A problem when the node names `found` outputs and the call returns `expected`.
    fn check_output_count(&mut self, found: usize, expected: usize) {
        if found != expected {
            self.problem(format!(
                "{found} output names, {} returns {expected} here (fix: name {expected} \
                 outputs: [{}] = {}(...))",
                self.op.name,
                (0..expected)
                    .map(|i| format!("out{i}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.op.name
            ));
        }
    }
}

/// Whether the method returns a sequence of operands, and how many operands it returns
/// with these arguments (the options dictionary last); `None` when the arguments do not
/// say.
fn output_count(op: &Op, args: &[Value]) -> (bool, Option<usize>) {
    match op.outputs {
        Outputs::One => (false, Some(1)),
        Outputs::Fixed(n) => (true, Some(n)),
        Outputs::Recurrent { base } => {
            let returns = dictionary_bool(args, "returnSequence");
            (true, Some(base + usize::from(returns)))
        }
        Outputs::Split => {
            let count = args.iter().find_map(|a| {
                let value = a.get("value")?;
                match value {
                    Value::Array(sizes) => Some(sizes.len()),
                    Value::Number(n) => n.as_u64().map(|n| n as usize),
                    _ => None,
                }
            });
            (true, count)
        }
    }
}

/// How many inputs an operation takes, for messages.
fn arity(op: &Op) -> String {
    let required = op
        .args
        .iter()
        .filter(|a| matches!(a, Arg::Input(_)))
        .count();
    let optional = op
        .args
        .iter()
        .filter(|a| matches!(a, Arg::OptionalInput(_)))
        .count()
        + op.extra_inputs.len();
    if op.args.iter().any(|a| matches!(a, Arg::Inputs)) {
        "one or more inputs".into()
    } else if optional == 0 {
        format!("{required} input{}", if required == 1 { "" } else { "s" })
    } else {
        format!("{required} to {} inputs", required + optional)
    }
}

fn dictionary_bool(args: &[Value], key: &str) -> bool {
    args.last()
        .and_then(|a| a.get("options"))
        .and_then(|o| o.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Takes `key` (or the first alias present) out of `options`.
fn take(options: &mut Map<String, Value>, key: &str, aliases: &[&str]) -> Option<(String, Value)> {
    std::iter::once(key)
        .chain(aliases.iter().copied())
        .find_map(|k| options.remove(k).map(|v| (k.to_string(), v)))
}

fn check_kind(kind: Kind, value: &Value) -> Result<(), String> {
    let u32_of = |v: &Value| v.as_u64().is_some_and(|n| n <= u64::from(u32::MAX));
    let ok = match kind {
        Kind::Operand => value.is_string(),
        Kind::U32 => u32_of(value),
        Kind::U32s => value.as_array().is_some_and(|a| a.iter().all(u32_of)),
        Kind::Number => value.is_number(),
        Kind::Numbers => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_number)),
        Kind::I32 => value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
        Kind::Bool => value.is_boolean(),
        Kind::Enum(names) => value.as_str().is_some_and(|s| names.contains(&s)),
        Kind::DataType => value
            .as_str()
            .is_some_and(|s| DataType::from_json_name(s).is_some()),
        Kind::Splits => u32_of(value) || value.as_array().is_some_and(|a| a.iter().all(u32_of)),
        Kind::Activations => value.as_array().is_some_and(|a| {
            a.iter()
                .all(|v| matches!(v.as_str(), Some("relu" | "sigmoid" | "tanh")))
        }),
        Kind::Dropped => true,
    };
    if ok {
        return Ok(());
    }
    Err(match kind {
        Kind::Operand => "expected the name of an operand".into(),
        Kind::U32 => format!("expected an unsigned integer up to {}", u32::MAX),
        Kind::U32s => "expected an array of unsigned integers (static sizes)".into(),
        Kind::Number => "expected a number".into(),
        Kind::Numbers => "expected an array of numbers".into(),
        Kind::I32 => "expected an integer that fits i32".into(),
        Kind::Bool => "expected true or false".into(),
        Kind::Enum(names) => format!("expected one of {}", names.join(", ")),
        Kind::DataType => format!(
            "expected a data type: {}",
            DataType::ALL.map(|t| t.json_name()).join(", ")
        ),
        Kind::Splits => "expected a count or an array of sizes".into(),
        Kind::Activations => "expected an array of relu, sigmoid, tanh".into(),
        Kind::Dropped => unreachable!("anything goes"),
    })
}

/// The closest of `candidates` to `word`, when it is close enough to be a slip.
fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min()
        .map(|(_, c)| c)
}
