//! `RMSNormalization` (opset 23): `y = x / sqrt(reduceMean(x², [axis..rank]) + epsilon) * scale`,
//! the statistics in float32 when `stash_type=1` (the default) and the input is float16 (the
//! input cast up, the normalized value cast back before the scale), the scale broadcast
//! unidirectionally to the input.

use super::super::util::{axis, binary, broadcast, cast, one, require_type, unary, FLOATS};
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::reduce::emit_reduce;
use crate::tensor::ElemType;
use crate::value::Value;

pub(super) fn rms_normalization(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let scale = n.input(1)?;
    require_type(scale, FLOATS, "the scale")?;
    let rank = x.rank();
    if rank == 0 {
        bail!("the input is a scalar; RMSNormalization needs at least one axis");
    }
    let a = axis(n.attrs.int_or("axis", -1)?, rank)?;
    let eps = n.attrs.float_or("epsilon", 1e-5)?;
    if !eps.is_finite() {
        bail!("attribute epsilon is {eps}; a finite value is required");
    }
    let stash = match n.attrs.int_or("stash_type", 1)? {
        1 => ElemType::F32,
        code => match ElemType::from_onnx(code as i32) {
            Some(e @ (ElemType::F32 | ElemType::F16)) => e,
            _ => bail!(
                "attribute stash_type is {}; WebNN computes in float32 or float16 only",
                ElemType::onnx_name(code as i32)
            ),
        },
    };
    if broadcast(x.shape(), scale.shape()).ok().as_deref() != Some(x.shape()) {
        bail!(
            "the scale has shape {:?}, which does not broadcast to the input's {:?}",
            scale.shape(),
            x.shape()
        );
    }
    let xo = cx.operand(x)?;
    let xs = cast(cx, &xo, stash)?;
    let axes: Vec<u32> = (a as u32..rank as u32).collect();
    let sq = binary(cx, "mul", &xs, &xs, stash)?;
    let mean = emit_reduce(cx, "reduceMean", &sq, &axes, true);
    let e = cx.scalar(stash, f64::from(eps))?;
    let var = binary(cx, "add", &mean, &e, stash)?;
    let root = unary(cx, "sqrt", &var);
    let norm = binary(cx, "div", &xs, &root, stash)?;
    let norm = cast(cx, &norm, xo.elem)?;
    let so = cx.operand(scale)?;
    let so = cast(cx, &so, xo.elem)?;
    Ok(one(binary(cx, "mul", &norm, &so, xo.elem)?))
}
