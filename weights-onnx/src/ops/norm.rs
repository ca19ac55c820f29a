//! Normalizations.
//!
//! - `BatchNormalization` (inference): `batchNormalization(x, mean, var)` with `scale`,
//!   `bias`, `axis=1`, `epsilon`. Training (`training_mode=1` from opset 14, or any use of the
//!   running-statistics outputs) and `spatial=0` (opset 7–8) with per-element statistics are
//!   refused: WebNN normalizes with given statistics only.
//! - `InstanceNormalization`: `instanceNormalization` (NCHW). WebNN's takes 4-D inputs, so other
//!   ranks are reshaped to `[N, C, D1 * … * Dk, 1]` and back (the statistics are over every
//!   spatial element either way).
//! - `LayerNormalization` (opset 17): `layerNormalization` over axes `axis..rank`; a scale or
//!   bias whose shape is not the normalized shape (ONNX lets them broadcast) is applied with
//!   `mul`/`add` afterwards. The `Mean` and `InvStdDev` outputs, when used, are computed
//!   beside it: `reduceMean(x)` and `1 / sqrt(reduceMean((x - mean)²) + epsilon)`, kept dims,
//!   in float32 when `stash_type=1`.
//! - `GroupNormalization` (opset 18, 21): `x` reshaped to `[N, G, C/G * D1 * … * Dk]`,
//!   `layerNormalization` over the last axis, then the scale and bias per group (`[G]`, opset
//!   18) or per channel (`[C]`, opset 21).
//! - `LRN`: the channel window sum of squares as an average pool: `x²` reshaped to
//!   `[N, 1, C, rest]`, zero-padded on the channel axis by `floor((size-1)/2)` before and
//!   `ceil((size-1)/2)` after, `averagePool2d` with window `[size, 1]` (the mean over `size`
//!   values, padding included, so `alpha/size * sum = alpha * mean`);
//!   `y = x / pow(bias + alpha * mean, beta)`.
//! - `MeanVarianceNormalization`: `d / (sqrt(reduceMean(d²)) + 1e-9)`, `d = x - reduceMean(x)`
//!   over `axes` (default `[0, 2, 3]`), as ONNX's definition.
//! - `LpNormalization`: `x / reduceL1(x)` or `x / reduceL2(x)` along `axis` (kept).

use super::reduce::emit_reduce;
use super::util::{axes as norm_axes, axis as norm_axis, binary, cast, one, require_type, reshape};
use super::util::{unary, FLOATS};
use super::Lower;
use crate::cx::{number, operand_ref, u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::ElemType;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

mod extra;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &[
    "BatchNormalization",
    "GroupNormalization",
    "InstanceNormalization",
    "LRN",
    "LayerNormalization",
    "LpNormalization",
    "MeanVarianceNormalization",
];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "BatchNormalization" => batch_norm,
        "InstanceNormalization" => instance_norm,
        "LayerNormalization" => layer_norm,
        "GroupNormalization" => extra::group_norm,
        "LRN" => extra::lrn,
        "MeanVarianceNormalization" => extra::mvn,
        "LpNormalization" => extra::lp_norm,
        _ => return None,
    })
}

/// Input `i` as a vector of `len` elements of `elem` (reshaped and cast as needed).
fn vector(cx: &mut Cx, n: &NodeCx<'_>, i: usize, len: u32, elem: ElemType) -> OpResult<Operand> {
    let v = n.input(i)?;
    let have: u64 = v.shape().iter().map(|&d| u64::from(d)).product();
    if have != u64::from(len) || v.shape().iter().filter(|&&d| d != 1).count() > 1 {
        bail!(
            "input {i} has shape {:?}; expected [{len}] (one value per channel)",
            v.shape()
        );
    }
    let o = cx.operand(v)?;
    let o = reshape(cx, &o, vec![len]);
    cast(cx, &o, elem)
}

/// The `epsilon` attribute as a JSON number.
fn epsilon(n: &NodeCx<'_>) -> OpResult<Json> {
    let e = n.attrs.float_or("epsilon", 1e-5)?;
    if !e.is_finite() {
        bail!("attribute epsilon is {e}; a finite value is required");
    }
    Ok(number(e))
}

fn batch_norm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    if n.attrs.int_or("training_mode", 0)? != 0 {
        bail!("training_mode=1 computes the batch's statistics; only inference (training_mode=0) converts (export the model in eval mode)");
    }
    if (1..5).any(|i| n.output_used(i)) {
        bail!("uses the running mean/variance outputs, which only training computes; only the first output converts (export the model in eval mode)");
    }
    if n.opset < 9 && n.attrs.int_or("spatial", 1)? == 0 {
        for i in 1..5 {
            if n.input(i)?.shape().len() > 1 {
                bail!("spatial=0 with per-element statistics (input {i} has shape {:?}) is not supported: WebNN normalizes per channel", n.input(i)?.shape());
            }
        }
    }
    if x.rank() < 2 {
        bail!("the input has shape {:?}; expected [N, C, …]", x.shape());
    }
    let c = x.shape()[1];
    let e = x.elem();
    let scale = vector(cx, n, 1, c, e)?;
    let bias = vector(cx, n, 2, c, e)?;
    let mean = vector(cx, n, 3, c, e)?;
    let var = vector(cx, n, 4, c, e)?;
    let xo = cx.operand(x)?;
    let options = vec![
        ("scale", operand_ref(&scale)),
        ("bias", operand_ref(&bias)),
        ("axis", Json::from(1u32)),
        ("epsilon", epsilon(n)?),
    ];
    let shape = xo.shape.clone();
    Ok(one(cx.emit(
        "batchNormalization",
        &[&xo, &mean, &var],
        options,
        e,
        shape,
    )))
}

fn instance_norm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    if x.rank() < 2 {
        bail!(
            "the input has shape {:?}; expected [N, C, D1, …]",
            x.shape()
        );
    }
    let shape = x.shape().to_vec();
    let (batch, c) = (shape[0], shape[1]);
    let spatial: u32 = shape[2..].iter().product();
    let scale = vector(cx, n, 1, c, x.elem())?;
    let bias = vector(cx, n, 2, c, x.elem())?;
    let xo = cx.operand(x)?;
    let x4 = if shape.len() == 4 {
        xo
    } else {
        reshape(cx, &xo, vec![batch, c, spatial, 1])
    };
    let options = vec![
        ("scale", operand_ref(&scale)),
        ("bias", operand_ref(&bias)),
        ("epsilon", epsilon(n)?),
        ("layout", Json::from("nchw")),
    ];
    let s4 = x4.shape.clone();
    let y = cx.emit("instanceNormalization", &[&x4], options, x4.elem, s4);
    Ok(one(reshape(cx, &y, shape)))
}

/// A scale or bias for `layerNormalization`: an option when its shape is the normalized one,
/// else an operand applied afterwards with `op` (`mul`, `add`).
fn affine(
    cx: &mut Cx,
    n: &NodeCx<'_>,
    i: usize,
    normalized: &[u32],
    elem: ElemType,
) -> OpResult<Option<(Operand, bool)>> {
    let Some(v) = n.opt_input(i) else {
        return Ok(None);
    };
    let o = cx.operand(v)?;
    let o = cast(cx, &o, elem)?;
    let squeezed: Vec<u32> = v.shape().iter().copied().skip_while(|&d| d == 1).collect();
    let target: Vec<u32> = normalized.iter().copied().skip_while(|&d| d == 1).collect();
    if v.shape() == normalized || (squeezed == target && v.rank() <= normalized.len()) {
        return Ok(Some((reshape(cx, &o, normalized.to_vec()), true)));
    }
    Ok(Some((o, false)))
}

fn layer_norm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let rank = x.rank();
    let a = norm_axis(n.attrs.int_or("axis", -1)?, rank)?;
    let axes: Vec<u32> = (a as u32..rank as u32).collect();
    let e = x.elem();
    let normalized = x.shape()[a..].to_vec();
    let scale = affine(cx, n, 1, &normalized, e)?;
    let bias = affine(cx, n, 2, &normalized, e)?;
    let xo = cx.operand(x)?;
    let mut options = vec![("axes", u32s(&axes)), ("epsilon", epsilon(n)?)];
    for (key, v) in [("scale", &scale), ("bias", &bias)] {
        if let Some((o, true)) = v {
            options.push((key, operand_ref(o)));
        }
    }
    let shape = xo.shape.clone();
    let mut y = cx.emit("layerNormalization", &[&xo], options, e, shape);
    for (op, v) in [("mul", scale), ("add", bias)] {
        if let Some((o, false)) = v {
            y = binary(cx, op, &y, &o, e)?;
            if y.shape != xo.shape {
                bail!(
                    "the scale or bias does not broadcast to the input's shape {:?}",
                    xo.shape
                );
            }
        }
    }
    let mut out = one(y);
    if n.output_used(1) || n.output_used(2) {
        let stash = n.attrs.int_or("stash_type", 1)?;
        let (mean, inv) = statistics(cx, &xo, &axes, n.attrs.float_or("epsilon", 1e-5)?)?;
        let to = if stash == 1 { ElemType::F32 } else { e };
        out.push(Value::Operand(cast(cx, &mean, to)?));
        out.push(Value::Operand(cast(cx, &inv, to)?));
    }
    Ok(out)
}

/// The mean and `1 / sqrt(variance + epsilon)` of `x` over `axes` (kept).
fn statistics(cx: &mut Cx, x: &Operand, axes: &[u32], eps: f32) -> OpResult<(Operand, Operand)> {
    let e = x.elem;
    let mean = emit_reduce(cx, "reduceMean", x, axes, true);
    let d = binary(cx, "sub", x, &mean, e)?;
    let sq = binary(cx, "mul", &d, &d, e)?;
    let var = emit_reduce(cx, "reduceMean", &sq, axes, true);
    let k = cx.scalar(e, f64::from(eps))?;
    let v = binary(cx, "add", &var, &k, e)?;
    let s = unary(cx, "sqrt", &v);
    Ok((mean, unary(cx, "reciprocal", &s)))
}

/// Normalized ONNX axes (re-exported for `extra`).
fn axes_of(list: &[i64], rank: usize) -> OpResult<Vec<u32>> {
    norm_axes(list, rank)
}
