//! quantize operators.

use super::Lower;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &[];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    let _ = op_type;
    None
}
