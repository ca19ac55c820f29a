//! com.microsoft operators (onnxruntime's contrib ops) common in exported transformers: the
//! GELU variants, `SkipLayerNormalization`, `SimplifiedLayerNormalization` /
//! `SkipSimplifiedLayerNormalization` (RMS norm), and `MatMulNBits` ([`nbits`]).

mod nbits;

use super::util::{binary, one, require_type, unary, FLOATS};
use super::Lower;
use crate::cx::{number, operand_ref, u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// The com.microsoft operators of this family.
pub(crate) const OPS: &[&str] = &[
    "BiasGelu",
    "FastGelu",
    "Gelu",
    "MatMulNBits",
    "QuickGelu",
    "SimplifiedLayerNormalization",
    "SkipLayerNormalization",
    "SkipSimplifiedLayerNormalization",
];

/// The lowering of a com.microsoft `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    // (OPS is the list docs and tests read: keep the two in step)
    if !OPS.contains(&op_type) {
        return None;
    }
    Some(match op_type {
        "Gelu" | "BiasGelu" => gelu,
        "FastGelu" => fast_gelu,
        "QuickGelu" => quick_gelu,
        "SkipLayerNormalization" | "SkipSimplifiedLayerNormalization" => skip_layer_norm,
        "SimplifiedLayerNormalization" => simplified_layer_norm,
        "MatMulNBits" => nbits::matmul_nbits,
        _ => return None,
    })
}

/// Input 0 plus input `i` when the node has it (a bias, broadcast).
fn plus_optional(cx: &mut Cx, n: &NodeCx<'_>, i: usize) -> OpResult<Operand> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let xo = cx.operand(x)?;
    match n.opt_input(i) {
        None => Ok(xo),
        Some(b) => {
            if b.elem() != xo.elem {
                bail!("input {i} is {} but the input is {}", b.elem(), xo.elem);
            }
            let bo = cx.operand(b)?;
            let y = binary(cx, "add", &xo, &bo, xo.elem)?;
            if y.shape != xo.shape {
                bail!(
                    "input {i} has shape {:?}, which does not broadcast to the input's {:?}",
                    bo.shape,
                    xo.shape
                );
            }
            Ok(y)
        }
    }
}

/// `Gelu(x)` and `BiasGelu(a, b) = Gelu(a + b)`: WebNN's exact `gelu`.
fn gelu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = plus_optional(cx, n, 1)?;
    Ok(one(unary(cx, "gelu", &x)))
}

/// `FastGelu(x, bias?)`: the tanh approximation
/// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
fn fast_gelu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = plus_optional(cx, n, 1)?;
    let e = x.elem;
    let x2 = binary(cx, "mul", &x, &x, e)?;
    let x3 = binary(cx, "mul", &x2, &x, e)?;
    let c = cx.scalar(e, 0.044715)?;
    let cx3 = binary(cx, "mul", &x3, &c, e)?;
    let inner = binary(cx, "add", &x, &cx3, e)?;
    let k = cx.scalar(e, (2.0 / std::f64::consts::PI).sqrt())?;
    let scaled = binary(cx, "mul", &inner, &k, e)?;
    let t = unary(cx, "tanh", &scaled);
    let onec = cx.scalar(e, 1.0)?;
    let t1 = binary(cx, "add", &t, &onec, e)?;
    let half = cx.scalar(e, 0.5)?;
    let hx = binary(cx, "mul", &x, &half, e)?;
    Ok(one(binary(cx, "mul", &hx, &t1, e)?))
}

/// `QuickGelu(x) = x * sigmoid(alpha * x)` (alpha 1.702 by default).
fn quick_gelu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = plus_optional(cx, n, usize::MAX)?;
    let alpha = n.attrs.float_or("alpha", 1.702)?;
    let a = cx.scalar(x.elem, f64::from(alpha))?;
    let ax = binary(cx, "mul", &x, &a, x.elem)?;
    let s = unary(cx, "sigmoid", &ax);
    Ok(one(binary(cx, "mul", &x, &s, x.elem)?))
}

/// A per-channel parameter (gamma, beta, bias) of the last dim, as an operand.
fn channel_param(
    cx: &mut Cx,
    n: &NodeCx<'_>,
    i: usize,
    hidden: u32,
    what: &str,
) -> OpResult<Option<Operand>> {
    let Some(v) = n.opt_input(i) else {
        return Ok(None);
    };
    if v.shape() != [hidden] {
        bail!(
            "{what} (input {i}) has shape {:?}; expected [{hidden}]",
            v.shape()
        );
    }
    if v.elem() != n.input(0)?.elem() {
        bail!(
            "{what} (input {i}) is {} but the input is {}",
            v.elem(),
            n.input(0)?.elem()
        );
    }
    Ok(Some(cx.operand(v)?))
}

/// RMS normalization over the last axis: `x / sqrt(mean(x^2) + epsilon)`.
fn rms_norm(cx: &mut Cx, x: &Operand, epsilon: f32) -> OpResult<Operand> {
    let e = x.elem;
    let last = x.rank() as u32 - 1;
    let sq = binary(cx, "mul", x, x, e)?;
    let mut shape = x.shape.clone();
    shape[last as usize] = 1;
    let mean = cx.emit(
        "reduceMean",
        &[&sq],
        vec![
            ("axes", u32s(&[last])),
            ("keepDimensions", Json::from(true)),
        ],
        e,
        shape,
    );
    let eps = cx.scalar(e, f64::from(epsilon))?;
    let var = binary(cx, "add", &mean, &eps, e)?;
    let root = unary(cx, "sqrt", &var);
    binary(cx, "div", x, &root, e)
}

/// Layer normalization (or RMS normalization) of `x` over its last axis with gamma and beta.
fn normalize(
    cx: &mut Cx,
    x: &Operand,
    gamma: &Operand,
    beta: Option<&Operand>,
    eps: f32,
    rms: bool,
) -> OpResult<Operand> {
    if rms {
        let y = rms_norm(cx, x, eps)?;
        let y = binary(cx, "mul", &y, gamma, x.elem)?;
        return match beta {
            Some(b) => binary(cx, "add", &y, b, x.elem),
            None => Ok(y),
        };
    }
    let mut options = vec![
        ("axes", u32s(&[x.rank() as u32 - 1])),
        ("epsilon", number(eps)),
        ("scale", operand_ref(gamma)),
    ];
    if let Some(b) = beta {
        options.push(("bias", operand_ref(b)));
    }
    Ok(cx.emit("layerNormalization", &[x], options, x.elem, x.shape.clone()))
}

/// `SkipLayerNormalization(input, skip, gamma, beta?, bias?)` and its RMS form
/// (`SkipSimplifiedLayerNormalization(input, skip, gamma, bias?)`): outputs 0 (normalized) and
/// 3 (`input + skip + bias`); the mean and inverse deviation (1, 2) are refused when used.
fn skip_layer_norm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let rms = n.op_type == "SkipSimplifiedLayerNormalization";
    for i in [1, 2] {
        if n.output_used(i) {
            bail!("output {i} (the mean or inverse standard deviation) is used; WebNN's layerNormalization does not return it");
        }
    }
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    if x.rank() == 0 {
        bail!("the input is a scalar; expected [..., hidden]");
    }
    let hidden = *x.shape().last().unwrap_or(&1);
    let xo = cx.operand(x)?;
    let skip = n.input(1)?;
    let so = cx.operand(skip)?;
    let mut sum = binary(cx, "add", &xo, &so, xo.elem)?;
    if sum.shape != xo.shape || skip.elem() != xo.elem {
        bail!(
            "skip ({} {:?}) must be of the input's type and broadcast to its shape {:?}",
            skip.elem(),
            skip.shape(),
            xo.shape
        );
    }
    let Some(gamma) = channel_param(cx, n, 2, hidden, "gamma")? else {
        bail!("gamma (input 2) is required");
    };
    let (beta_i, bias_i) = if rms { (usize::MAX, 3) } else { (3, 4) };
    let beta = channel_param(cx, n, beta_i, hidden, "beta")?;
    if let Some(b) = channel_param(cx, n, bias_i, hidden, "bias")? {
        sum = binary(cx, "add", &sum, &b, xo.elem)?;
    }
    let eps = n.attrs.float_or("epsilon", 1e-12)?;
    let y = normalize(cx, &sum, &gamma, beta.as_ref(), eps, rms)?;
    let placeholder = Value::Operand(y.clone());
    Ok(vec![
        Value::Operand(y),
        placeholder.clone(),
        placeholder,
        Value::Operand(sum),
    ])
}

/// `SimplifiedLayerNormalization(x, scale)` (RMS norm over `axis`, the last only).
fn simplified_layer_norm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    if n.output_used(1) {
        bail!("output 1 (the inverse standard deviation) is used; it is not computed");
    }
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let rank = x.rank() as i64;
    if rank == 0 || ![-1, rank - 1].contains(&n.attrs.int_or("axis", -1)?) {
        bail!("only normalization over the last axis converts (axis -1 of a non-scalar input)");
    }
    let hidden = *x.shape().last().unwrap_or(&1);
    let Some(gamma) = channel_param(cx, n, 1, hidden, "scale")? else {
        bail!("the scale (input 1) is required");
    };
    let xo = cx.operand(x)?;
    let eps = n.attrs.float_or("epsilon", 1e-5)?;
    Ok(one(normalize(cx, &xo, &gamma, None, eps, true)?))
}
