//! Losses, in inference (no gradients): `NegativeLogLikelihoodLoss` (opset 12, 13, 22) and
//! `SoftmaxCrossEntropyLoss` (opset 12, 13).
//!
//! - The targets (`[N, d1, …]`, int32 or int64) are cast to int32; with `ignore_index`,
//!   `keep = notEqual(t, ignore_index)` and `t = where(keep, t, -1)` (no class).
//! - A one-hot of the classes, `hot = equal(reshape(t, [N, 1, d1, …]), iota)` (`iota` a constant
//!   `[1, C, 1, …]`), picks without gathering (browsers gather elements at constant indices
//!   only): `picked = reduceSum(where(hot, input, 0), axis 1)`, and the weight of each element
//!   `w = reduceSum(where(hot, weight, 0), axis 1)` (the weight reshaped to `[1, C, 1, …]`; an
//!   ignored element gets 0), `cast(keep)` without weights, none without either.
//! - `loss = -picked * w`; `reduction="none"` keeps it, `"sum"` is `reduceSum` over every axis,
//!   `"mean"` is `reduceSum(loss) / reduceSum(w)` (ONNX divides by the total weight of the
//!   elements not ignored), or `reduceMean(loss)` when nothing weighs.
//! - `SoftmaxCrossEntropyLoss` is the same on `logSoftmax(scores)` along axis 1
//!   (`d - reduceLogSumExp(d)`, `d = x - reduceMax(x)`), its second output.

use super::reduce::emit_reduce;
use super::util::{binary, cast, one, require_type, reshape, unary, FLOATS};
use super::Lower;
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::ElemType;
use crate::value::{Operand, Value};

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "NegativeLogLikelihoodLoss" => nll_loss,
        "SoftmaxCrossEntropyLoss" => sce_loss,
        _ => return None,
    })
}

/// The input (`[N, C, d1, …]`, floating point) as an operand of rank 3 at most (the `d`
/// axes flattened: browsers take 5 or 6 dims at most, and the work is per element), and its
/// shape.
fn scores(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<(Operand, Vec<u32>)> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    if x.rank() < 2 {
        bail!(
            "the input has shape {:?}; expected [N, C, d1, …]",
            x.shape()
        );
    }
    let xo = cx.operand(x)?;
    let shape = xo.shape.clone();
    if shape.len() <= 3 {
        return Ok((xo, shape));
    }
    let d = shape[2..].iter().product();
    Ok((reshape(cx, &xo, vec![shape[0], shape[1], d]), shape))
}

fn nll_loss(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, shape) = scores(cx, n)?;
    Ok(one(nll(cx, n, &x, &shape)?))
}

fn sce_loss(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, shape) = scores(cx, n)?;
    let axes = [1u32];
    let m = emit_reduce(cx, "reduceMax", &x, &axes, true);
    let d = binary(cx, "sub", &x, &m, x.elem)?;
    let l = emit_reduce(cx, "reduceLogSumExp", &d, &axes, true);
    let log_prob = binary(cx, "sub", &d, &l, x.elem)?;
    let loss = nll(cx, n, &log_prob, &shape)?;
    let log_prob = reshape(cx, &log_prob, shape);
    Ok(vec![Value::Operand(loss), Value::Operand(log_prob)])
}

/// The targets as int32 of shape `[N, d1, …]`, and where they are not `ignore_index`.
fn targets(
    cx: &mut Cx,
    n: &NodeCx<'_>,
    x: &Operand,
    shape: &[u32],
) -> OpResult<(Operand, Option<Operand>)> {
    let t = n.input(1)?;
    if !matches!(t.elem(), ElemType::I32 | ElemType::I64) {
        bail!("the targets are {}; expected int32 or int64", t.elem());
    }
    let want: Vec<u32> = [&shape[..1], &shape[2..]].concat();
    if t.shape() != want {
        bail!(
            "the targets have shape {:?}; expected {want:?} (the input's without C)",
            t.shape()
        );
    }
    let to = cx.operand(t)?;
    let to = reshape(cx, &to, [&x.shape[..1], &x.shape[2..]].concat());
    let to = cast(cx, &to, ElemType::I32)?;
    let Some(ii) = n.attrs.int("ignore_index")? else {
        return Ok((to, None));
    };
    let Ok(ii) = i32::try_from(ii) else {
        // no int32 target equals it
        return Ok((to, None));
    };
    let iic = cx.scalar(ElemType::I32, f64::from(ii))?;
    let keep = binary(cx, "notEqual", &to, &iic, ElemType::Bool)?;
    let zero = cx.scalar(ElemType::I32, -1.0)?;
    let safe = cx.emit(
        "where",
        &[&keep, &to, &zero],
        vec![],
        ElemType::I32,
        to.shape.clone(),
    );
    Ok((safe, Some(keep)))
}

/// `reduceSum(where(hot, v, 0), axis 1)`: the value of each element's class.
fn pick(cx: &mut Cx, hot: &Operand, v: &Operand, out: &[u32]) -> OpResult<Operand> {
    let zero = cx.scalar(v.elem, 0.0)?;
    let chosen = cx.emit("where", &[hot, v, &zero], vec![], v.elem, hot.shape.clone());
    let s = emit_reduce(cx, "reduceSum", &chosen, &[1], false);
    Ok(reshape(cx, &s, out.to_vec()))
}

/// The weight of each element: the class weight of its target, 0 where ignored.
fn element_weights(
    cx: &mut Cx,
    n: &NodeCx<'_>,
    x: &Operand,
    hot: &Operand,
    out: &[u32],
    keep: Option<&Operand>,
) -> OpResult<Option<Operand>> {
    let e = x.elem;
    match (n.opt_input(2), keep) {
        (None, None) => Ok(None),
        (None, Some(k)) => Ok(Some(cast(cx, k, e)?)),
        (Some(w), _) => {
            if w.shape() != [x.shape[1]] || w.elem() != e {
                bail!(
                    "the weight is {} {:?}; expected {e} [{}] (one per class)",
                    w.elem(),
                    w.shape(),
                    x.shape[1]
                );
            }
            let wo = cx.operand(w)?;
            let mut shape = vec![1; x.rank()];
            shape[1] = x.shape[1];
            let wo = reshape(cx, &wo, shape);
            Ok(Some(pick(cx, hot, &wo, out)?))
        }
    }
}

/// The one-hot `[N, C, d1, …]` of the targets `[N, d1, …]` (all false where no class).
fn one_hot(cx: &mut Cx, x: &Operand, t: &Operand) -> OpResult<Operand> {
    let mut idx_shape = t.shape.clone();
    idx_shape.insert(1, 1);
    let idx = reshape(cx, t, idx_shape);
    let c = x.shape[1];
    let mut iota_shape = vec![1; x.rank()];
    iota_shape[1] = c;
    let values: Vec<f64> = (0..c).map(f64::from).collect();
    let iota = cx.constant_f64(ElemType::I32, iota_shape, &values)?;
    binary(cx, "equal", &idx, &iota, ElemType::Bool)
}

/// The negative log-likelihood of `x` (log-probabilities) at the node's targets, reduced.
/// (`x` as [`scores`] makes it, `shape` the input's).
fn nll(cx: &mut Cx, n: &NodeCx<'_>, x: &Operand, shape: &[u32]) -> OpResult<Operand> {
    let reduction = n.attrs.string_or("reduction", "mean")?;
    if !matches!(reduction.as_str(), "none" | "sum" | "mean") {
        bail!("attribute reduction is {reduction:?}; ONNX defines none, sum and mean");
    }
    let e = x.elem;
    let (t, keep) = targets(cx, n, x, shape)?;
    let hot = one_hot(cx, x, &t)?;
    let picked = pick(cx, &hot, x, &t.shape)?;
    let neg = unary(cx, "neg", &picked);
    let w = element_weights(cx, n, x, &hot, &t.shape, keep.as_ref())?;
    let loss = match &w {
        Some(w) => binary(cx, "mul", &neg, w, e)?,
        None => neg,
    };
    let all: Vec<u32> = (0..loss.rank() as u32).collect();
    Ok(match (reduction.as_str(), w) {
        ("none", _) => reshape(cx, &loss, [&shape[..1], &shape[2..]].concat()),
        ("sum", _) => emit_reduce(cx, "reduceSum", &loss, &all, false),
        (_, None) => emit_reduce(cx, "reduceMean", &loss, &all, false),
        (_, Some(w)) => {
            let num = emit_reduce(cx, "reduceSum", &loss, &all, false);
            let den = emit_reduce(cx, "reduceSum", &w, &all, false);
            binary(cx, "div", &num, &den, e)?
        }
    })
}
