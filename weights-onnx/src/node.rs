//! One ONNX node as its lowering sees it: its inputs as values, its attributes, its opset.

use crate::attrs::Attrs;
use crate::error::{OpError, OpResult};
use crate::tensor::HostTensor;
use crate::value::Value;

/// A node being lowered.
pub(crate) struct NodeCx<'a> {
    /// `op_type`.
    pub op_type: &'a str,
    /// The opset version the model imports for the domain.
    pub opset: i64,
    /// The inputs, `None` where the node leaves an optional input out (`""`) or lists fewer.
    pub inputs: Vec<Option<Value>>,
    /// The attributes.
    pub attrs: Attrs<'a>,
    /// Which of the node's outputs are named (an empty name is an optional output left out).
    pub outputs: Vec<bool>,
}

impl<'a> NodeCx<'a> {
    /// Input `i`, which the operator requires.
    pub fn input(&self, i: usize) -> OpResult<&Value> {
        self.opt_input(i).ok_or_else(|| {
            OpError::Message(format!(
                "input {i} is required but the node has {} input(s)",
                self.inputs.iter().filter(|v| v.is_some()).count()
            ))
        })
    }

    /// Input `i` when given.
    pub fn opt_input(&self, i: usize) -> Option<&Value> {
        self.inputs.get(i).and_then(|v| v.as_ref())
    }

    /// Input `i`'s host value, when given; an error when the graph computes it (WebNN needs
    /// it while the graph is built: `what` says as what, e.g. "the new shape").
    pub fn const_input(&self, i: usize, what: &str) -> OpResult<Option<&HostTensor>> {
        match self.opt_input(i) {
            None => Ok(None),
            Some(Value::Const(t)) => Ok(Some(t)),
            Some(Value::Operand(_)) => Err(OpError::NeedsConstant {
                index: i,
                what: what.to_string(),
            }),
        }
    }

    /// Input `i`'s host value as integers, when given (see [`NodeCx::const_input`]).
    pub fn const_ints(&self, i: usize, what: &str) -> OpResult<Option<Vec<i64>>> {
        Ok(self.const_input(i, what)?.map(|t| t.to_i64s()))
    }

    /// Input `i`'s host value as floats, when given (see [`NodeCx::const_input`]).
    pub fn const_floats(&self, i: usize, what: &str) -> OpResult<Option<Vec<f64>>> {
        Ok(self.const_input(i, what)?.map(|t| t.to_f64s()))
    }

    /// The number of outputs the node names.
    pub fn output_count(&self) -> usize {
        self.outputs.len()
    }

    /// Whether output `i` is named (used).
    pub fn output_used(&self, i: usize) -> bool {
        self.outputs.get(i).copied().unwrap_or(false)
    }

    /// Whether every given input is a host value.
    pub fn all_const(&self) -> bool {
        self.inputs
            .iter()
            .flatten()
            .all(|v| matches!(v, Value::Const(_)))
    }
}
