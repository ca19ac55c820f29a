//! `Softmax`, `LogSoftmax` and `Hardmax`: one axis from opset 13, the 2-D coercion before.

use super::super::reduce::{emit_reduce, reduced_shape};
use super::super::util::{axis, binary, cast, one, require_type, reshape, FLOATS};
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::{ElemType, HostTensor};
use crate::value::{Operand, Value};
use serde_json::Value as Json;
use std::rc::Rc;

pub(super) fn softmax(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let rank = x.rank();
    if rank == 0 {
        bail!(
            "the input is a scalar; {} needs at least one axis",
            n.op_type
        );
    }
    let xo = cx.operand(x)?;
    if n.opset >= 13 {
        let a = axis(n.attrs.int_or("axis", -1)?, rank)?;
        return Ok(one(along(cx, n.op_type, &xo, a)?));
    }
    // before opset 13: the input as a matrix [d0 * … * d(axis-1), d(axis) * … * d(n-1)]
    let a = axis(n.attrs.int_or("axis", 1)?, rank)?;
    let outer: u32 = xo.shape[..a].iter().product();
    let inner: u32 = xo.shape[a..].iter().product();
    let flat = reshape(cx, &xo, vec![outer, inner]);
    let y = along(cx, n.op_type, &flat, 1)?;
    Ok(one(reshape(cx, &y, xo.shape.clone())))
}

/// The operation along axis `a` of `x`.
fn along(cx: &mut Cx, op_type: &str, x: &Operand, a: usize) -> OpResult<Operand> {
    let axes = [a as u32];
    match op_type {
        "Softmax" => Ok(cx.emit(
            "softmax",
            &[x],
            vec![("axis", Json::from(a as u32))],
            x.elem,
            x.shape.clone(),
        )),
        "LogSoftmax" => {
            // d - log(sum(exp(d))), d = x - max(x): no overflow, no log of zero
            let m = emit_reduce(cx, "reduceMax", x, &axes, true);
            let d = binary(cx, "sub", x, &m, x.elem)?;
            let l = emit_reduce(cx, "reduceLogSumExp", &d, &axes, true);
            binary(cx, "sub", &d, &l, x.elem)
        }
        _ => hardmax(cx, x, a),
    }
}

/// One-hot of the first largest value along `a`.
fn hardmax(cx: &mut Cx, x: &Operand, a: usize) -> OpResult<Operand> {
    let axes = [a as u32];
    let idx = cx.emit(
        "argMax",
        &[x],
        vec![
            ("axis", Json::from(a as u32)),
            ("keepDimensions", Json::Bool(true)),
            ("outputDataType", Json::from("int32")),
        ],
        ElemType::I32,
        reduced_shape(&x.shape, &axes, true),
    );
    let len = x.shape[a];
    let mut iota_shape = vec![1u32; x.rank()];
    iota_shape[a] = len;
    let values: Vec<i64> = (0..i64::from(len)).collect();
    let iota = HostTensor::from_i64s(ElemType::I32, iota_shape, &values);
    let iota = cx.const_operand(&Rc::new(iota))?;
    let hot = binary(cx, "equal", &idx, &iota, ElemType::Bool)?;
    cast(cx, &hot, x.elem)
}
