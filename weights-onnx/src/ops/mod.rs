//! The operators: one module per family, each with a `lookup` from an ONNX `op_type` to its
//! lowering. A lowering reads its node (`NodeCx`), checks what WebNN cannot express (naming the
//! attribute or input and the fix), folds host values where it can, and emits WebNN operations
//! through `Cx`, returning one value per ONNX output with its static shape.

use crate::cx::Cx;
use crate::error::OpResult;
use crate::node::NodeCx;
use crate::value::Value;

pub(crate) mod activation;
pub(crate) mod attention;
pub(crate) mod contrib;
pub(crate) mod conv;
pub(crate) mod elementwise;
pub(crate) mod loss;
pub(crate) mod matmul;
pub(crate) mod norm;
pub(crate) mod quantize;
pub(crate) mod recurrent;
pub(crate) mod reduce;
pub(crate) mod shape;
pub(crate) mod util;

/// A lowering: the node in, one value per output out.
pub(crate) type Lower = fn(&mut Cx, &NodeCx<'_>) -> OpResult<Vec<Value>>;

/// The lowering of `op_type` in `domain` (`""` is ai.onnx), if there is one.
pub(crate) fn lookup(domain: &str, op_type: &str) -> Option<Lower> {
    match domain {
        "" => elementwise::lookup(op_type)
            .or_else(|| activation::lookup(op_type))
            .or_else(|| conv::lookup(op_type))
            .or_else(|| norm::lookup(op_type))
            .or_else(|| reduce::lookup(op_type))
            .or_else(|| shape::lookup(op_type))
            .or_else(|| matmul::lookup(op_type))
            .or_else(|| quantize::lookup(op_type))
            .or_else(|| recurrent::lookup(op_type))
            .or_else(|| attention::lookup(op_type))
            .or_else(|| loss::lookup(op_type)),
        "com.microsoft" => contrib::lookup(op_type),
        _ => None,
    }
}

/// Every ai.onnx `op_type` with a lowering, sorted (docs and tests list them).
pub(crate) fn supported() -> Vec<&'static str> {
    let mut all = Vec::new();
    for list in [
        elementwise::OPS,
        activation::OPS,
        conv::OPS,
        norm::OPS,
        reduce::OPS,
        shape::OPS,
        matmul::OPS,
        quantize::OPS,
        recurrent::OPS,
        attention::OPS,
        loss::OPS,
    ] {
        all.extend_from_slice(list);
    }
    all.sort_unstable();
    all
}
