//! What flows along the graph's edges while it converts: a WebNN operand of the graph being
//! written, or a value known on the host (folded, never written unless an operation needs it).

use crate::tensor::{ElemType, HostTensor};
use std::rc::Rc;
use webnn_weights_runtime::DataType;

/// An operand of the graph being written: its name, its ONNX element type (`bool` is held as
/// WebNN's `uint8`) and its static shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Operand {
    pub name: String,
    pub elem: ElemType,
    pub shape: Vec<u32>,
}

impl Operand {
    /// The WebNN type holding this operand (always defined: operands are only made of types
    /// WebNN has).
    pub fn data_type(&self) -> DataType {
        self.elem.webnn().unwrap_or(DataType::Float32)
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

/// One ONNX value during conversion.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// Computed by the graph.
    Operand(Operand),
    /// Known on the host: an initializer, a `Constant`, or a folded result. Written into the
    /// graph as a constant only where an operation needs it as an operand.
    Const(Rc<HostTensor>),
}

impl Value {
    /// The ONNX element type.
    pub fn elem(&self) -> ElemType {
        match self {
            Value::Operand(o) => o.elem,
            Value::Const(t) => t.elem,
        }
    }

    /// The static shape.
    pub fn shape(&self) -> &[u32] {
        match self {
            Value::Operand(o) => &o.shape,
            Value::Const(t) => &t.shape,
        }
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// The host value, when known.
    pub fn as_const(&self) -> Option<&HostTensor> {
        match self {
            Value::Const(t) => Some(t),
            Value::Operand(_) => None,
        }
    }

    /// A host value.
    pub fn constant(t: HostTensor) -> Value {
        Value::Const(Rc::new(t))
    }
}
