//! The graph being written: WebNN nodes, constants (host values written where an operation
//! needs them as operands, once each) and fresh names. Operator lowerings (`ops/`) emit through
//! this and nothing else.

use crate::error::{bail, OpResult};
use crate::tensor::{ElemType, HostTensor};
use crate::value::{Operand, Value};
use bytes::{Bytes, BytesMut};
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use webnn_weights_runtime::{ConstDecl, ConstInit, GraphJson, Name, Node, NodeOptions};

/// A constant's bytes for the sidecar: its reference (the constant's name) and bytes.
pub(crate) type Weight = (String, Bytes);

/// The graph under construction.
pub(crate) struct Cx {
    pub graph: GraphJson,
    pub weights: Vec<Weight>,
    used: HashSet<String>,
    /// Host values already written as constants, by the address of their shared tensor (the
    /// `Rc` is kept so the address stays unique).
    written: HashMap<usize, (Rc<HostTensor>, Operand)>,
    /// The base of fresh names: the current ONNX node's first output, sanitized.
    prefix: String,
    inline_threshold: u64,
    inline_all: bool,
}

/// A WebNN name for an ONNX name: `::` becomes `__`, every character the `.webnn` text does
/// not allow in an identifier becomes `_`, and a name that does not start with a letter, `_`,
/// `/` or `$` gets a leading `_` (the empty name becomes `_`).
pub fn sanitize_name(name: &str) -> String {
    let name = name.replace("::", "__");
    let mut out = String::with_capacity(name.len() + 1);
    for (i, c) in name.chars().enumerate() {
        let ok = c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/');
        if i == 0 {
            if c.is_ascii_alphabetic() || matches!(c, '_' | '/' | '$') {
                out.push(c);
            } else {
                out.push('_');
                if ok {
                    out.push(c);
                }
            }
            continue;
        }
        out.push(if ok { c } else { '_' });
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

impl Cx {
    pub fn new(name: Option<String>, inline_threshold: u64, inline_all: bool) -> Cx {
        Cx {
            graph: GraphJson::new(name),
            weights: Vec::new(),
            used: HashSet::new(),
            written: HashMap::new(),
            prefix: "t".into(),
            inline_threshold,
            inline_all,
        }
    }

    /// Names made from now on start with `base` (sanitized).
    pub fn set_prefix(&mut self, base: &str) {
        self.prefix = sanitize_name(base);
    }

    /// A name not used before: `base`, or `base_1`, `base_2`, …
    pub fn fresh_named(&mut self, base: &str) -> String {
        let base = sanitize_name(base);
        let mut name = base.clone();
        let mut i = 1;
        while self.used.contains(&name) {
            name = format!("{base}_{i}");
            i += 1;
        }
        self.used.insert(name.clone());
        name
    }

    /// Makes `name` free again (a name reserved for an output that no operation took).
    pub fn release(&mut self, name: &str) {
        let taken = self.graph.inputs.contains_key(name)
            || self.graph.consts.contains_key(name)
            || self
                .graph
                .nodes
                .iter()
                .any(|n| n.produced().iter().any(|p| p.as_str() == name));
        if !taken {
            self.used.remove(name);
        }
    }

    /// A fresh name from the current prefix.
    pub fn fresh(&mut self) -> String {
        let p = self.prefix.clone();
        self.fresh_named(&p)
    }

    /// Declares a graph input.
    pub fn input(&mut self, onnx_name: &str, elem: ElemType, shape: Vec<u32>) -> Operand {
        let name = self.fresh_named(onnx_name);
        let data_type = elem
            .webnn()
            .unwrap_or(webnn_weights_runtime::DataType::Float32);
        self.graph.inputs.insert(
            name.clone(),
            webnn_weights_runtime::OperandDesc {
                data_type,
                shape: shape
                    .iter()
                    .map(|&d| webnn_weights_runtime::Dimension::Static(d))
                    .collect(),
            },
        );
        Operand { name, elem, shape }
    }

    /// The operand for `value`: itself, or its host value written as a constant (once).
    pub fn operand(&mut self, value: &Value) -> OpResult<Operand> {
        match value {
            Value::Operand(o) => Ok(o.clone()),
            Value::Const(t) => self.const_operand(t),
        }
    }

    /// Writes a host value as a graph constant (once per shared tensor).
    pub fn const_operand(&mut self, t: &Rc<HostTensor>) -> OpResult<Operand> {
        let key = Rc::as_ptr(t) as usize;
        if let Some((_, o)) = self.written.get(&key) {
            return Ok(o.clone());
        }
        let o = self.write_constant(t)?;
        self.written.insert(key, (t.clone(), o.clone()));
        Ok(o)
    }

    /// A new constant of `elem` and `shape` from `values` (converted as a cast does).
    pub fn constant_f64(
        &mut self,
        elem: ElemType,
        shape: Vec<u32>,
        values: &[f64],
    ) -> OpResult<Operand> {
        let t = HostTensor::from_f64s(elem, shape, values);
        self.const_operand(&Rc::new(t))
    }

    /// A scalar constant (shape `[]`).
    pub fn scalar(&mut self, elem: ElemType, value: f64) -> OpResult<Operand> {
        self.constant_f64(elem, vec![], &[value])
    }

    fn write_constant(&mut self, t: &HostTensor) -> OpResult<Operand> {
        if t.shape.contains(&0) {
            let what = if t.name.is_empty() {
                "a constant".to_string()
            } else {
                format!("the value {:?}", t.name)
            };
            bail!(
                "{what} has shape {:?}, with no elements, and an operation reads it: WebNN has no empty tensors (remove the operation in the model, or make the value non-empty)",
                t.shape
            );
        }
        let (elem, bytes) = match t.elem {
            ElemType::Bf16 => {
                // widen to float32, as the format does
                let mut out = BytesMut::with_capacity(t.bytes.len() * 2);
                for c in t.bytes.chunks_exact(2) {
                    let v = half::bf16::from_le_bytes([c[0], c[1]]).to_f32();
                    out.extend_from_slice(&v.to_le_bytes());
                }
                (ElemType::F32, out.freeze())
            }
            e if e.webnn().is_none() => {
                let what = if t.name.is_empty() {
                    "a constant".to_string()
                } else {
                    format!("constant {:?}", t.name)
                };
                bail!(
                    "{what} is {}, which WebNN has no type for (float32, float16, int8, uint8, int32, uint32, int64, uint64, int4 and uint4 only); cast it in the model",
                    e
                )
            }
            e => (e, t.bytes.clone()),
        };
        let data_type = elem
            .webnn()
            .unwrap_or(webnn_weights_runtime::DataType::Float32);
        let base = if t.name.is_empty() {
            format!("{}_const", self.prefix)
        } else {
            t.name.clone()
        };
        let name = self.fresh_named(&base);
        let init = if self.inline_all || bytes.len() as u64 <= self.inline_threshold {
            ConstInit::InlineBytes { bytes }
        } else {
            self.weights.push((name.clone(), bytes));
            ConstInit::Weights {
                r#ref: name.clone(),
            }
        };
        self.graph.consts.insert(
            name.clone(),
            ConstDecl {
                data_type,
                shape: t.shape.clone(),
                init,
            },
        );
        Ok(Operand {
            name,
            elem: if t.elem == ElemType::Bool {
                ElemType::Bool
            } else {
                elem
            },
            shape: t.shape.clone(),
        })
    }

    /// Emits one WebNN operation with one output of `elem` and `shape`.
    pub fn emit(
        &mut self,
        op: &str,
        inputs: &[&Operand],
        options: Vec<(&str, Json)>,
        elem: ElemType,
        shape: Vec<u32>,
    ) -> Operand {
        let name = self.fresh();
        self.push_node(op, inputs, options, name.clone(), None);
        Operand { name, elem, shape }
    }

    /// Emits one WebNN operation whose output is named `name` (made unique).
    pub fn emit_named(
        &mut self,
        op: &str,
        inputs: &[&Operand],
        name: &str,
        elem: ElemType,
        shape: Vec<u32>,
    ) -> Operand {
        let name = self.fresh_named(name);
        self.push_node(op, inputs, vec![], name.clone(), None);
        Operand { name, elem, shape }
    }

    /// Renames the operand `old`, when one of the nodes emitted since node `start` produces
    /// it, to `new` (a name already reserved), in those nodes' outputs, inputs and operand
    /// options. Whether it was renamed.
    pub fn rename_since(&mut self, start: usize, old: &str, new: &str) -> bool {
        let start = start.min(self.graph.nodes.len());
        let nodes = &mut self.graph.nodes[start..];
        let produced = nodes
            .iter()
            .any(|n| n.produced().iter().any(|p| p.as_str() == old));
        if !produced || old == new {
            return false;
        }
        let rename = |n: &mut Name| {
            if n.as_str() == old {
                *n = Name::from(new);
            }
        };
        for node in nodes.iter_mut() {
            rename(&mut node.id);
            if let Some(outputs) = &mut node.outputs {
                outputs.iter_mut().for_each(rename);
            }
            node.inputs.iter_mut().for_each(rename);
            for key in OPERAND_OPTIONS {
                if let Some(v) = node.options.get_mut(key) {
                    if v.as_str() == Some(old) {
                        *v = Json::String(new.to_string());
                    }
                }
            }
        }
        self.used.insert(new.to_string());
        true
    }

    /// Removes graph inputs and constants that no node reads and no output binds; their names.
    pub fn prune_unused(&mut self) -> HashSet<String> {
        let mut read: HashSet<&str> = self.graph.outputs.values().map(String::as_str).collect();
        for node in &self.graph.nodes {
            read.extend(node.inputs.iter().map(|n| n.as_str()));
            for key in OPERAND_OPTIONS {
                if let Some(v) = node.options.get(key).and_then(Json::as_str) {
                    read.insert(v);
                }
            }
        }
        let unused: HashSet<String> = self
            .graph
            .inputs
            .keys()
            .chain(self.graph.consts.keys())
            .filter(|n| !read.contains(n.as_str()))
            .cloned()
            .collect();
        self.graph.inputs.retain(|n, _| !unused.contains(n));
        self.graph.consts.retain(|n, _| !unused.contains(n));
        self.weights.retain(|(r, _)| !unused.contains(r));
        unused
    }

    /// Emits one WebNN operation with several outputs.
    pub fn emit_multi(
        &mut self,
        op: &str,
        inputs: &[&Operand],
        options: Vec<(&str, Json)>,
        outputs: Vec<(ElemType, Vec<u32>)>,
    ) -> Vec<Operand> {
        let names: Vec<String> = outputs.iter().map(|_| self.fresh()).collect();
        let id = names.first().cloned().unwrap_or_else(|| self.fresh());
        self.push_node(
            op,
            inputs,
            options,
            id,
            Some(names.iter().map(|n| Name::from(n.as_str())).collect()),
        );
        names
            .into_iter()
            .zip(outputs)
            .map(|(name, (elem, shape))| Operand { name, elem, shape })
            .collect()
    }

    fn push_node(
        &mut self,
        op: &str,
        inputs: &[&Operand],
        options: Vec<(&str, Json)>,
        id: String,
        outputs: Option<Vec<Name>>,
    ) {
        let mut opts = NodeOptions::with_capacity(options.len());
        for (k, v) in options {
            opts.insert(k.to_string(), v);
        }
        self.graph.nodes.push(Node {
            id: Name::from(id),
            op: Name::from(op),
            inputs: inputs.iter().map(|o| Name::from(o.name.as_str())).collect(),
            options: opts,
            outputs,
        });
    }
}

/// The option keys whose values name operands (rustnn's reading of GraphJson).
pub(crate) const OPERAND_OPTIONS: [&str; 7] = [
    "scale",
    "bias",
    "c",
    "recurrentBias",
    "peepholeWeight",
    "initialHiddenState",
    "initialCellState",
];

/// JSON for an operand name in options (`bias`, `scale`, …).
pub(crate) fn operand_ref(o: &Operand) -> Json {
    Json::String(o.name.clone())
}

/// JSON array of unsigned integers.
pub(crate) fn u32s(values: &[u32]) -> Json {
    Json::Array(values.iter().map(|&v| Json::from(v)).collect())
}

/// A JSON number from an `f32` attribute (kept exact: the f32 widened to f64).
pub(crate) fn number(v: f32) -> Json {
    serde_json::Number::from_f64(f64::from(v)).map_or(Json::Null, Json::Number)
}

#[cfg(test)]
mod tests {
    use super::sanitize_name;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(sanitize_name("x"), "x");
        assert_eq!(sanitize_name("onnx::Conv_12"), "onnx__Conv_12");
        assert_eq!(sanitize_name("0"), "_0");
        assert_eq!(sanitize_name("a:b-c"), "a_b_c");
        assert_eq!(sanitize_name(".w"), "_.w");
        assert_eq!(sanitize_name(""), "_");
        assert_eq!(sanitize_name("layer.0/w"), "layer.0/w");
    }
}
