//! Activations: each a WebNN operation where WebNN has it, a short decomposition where not.
//!
//! Direct: `Relu` (`relu`; on integers `max(x, 0)`, 8-bit ones computed as int32), `LeakyRelu` (`leakyRelu`), `PRelu`
//! (`prelu`, the slope unidirectionally broadcast to the input; on integers
//! `where(x < 0, x * slope, x)`), `Sigmoid`, `Tanh`, `Softplus`, `Softsign`, `HardSwish`,
//! `HardSigmoid` (`alpha`, `beta`), `Elu` (`alpha`), `Gelu` with `approximate="none"`
//! (`gelu`), `Softmax` from opset 13 (`softmax` on one axis).
//!
//! Decomposed:
//! - `Selu`: `gamma * elu(x, alpha)`.
//! - `Celu`: `alpha * elu(x / alpha, 1)` (equal to `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`).
//! - `Mish`: `x * tanh(softplus(x))`.
//! - `Swish`: `x * sigmoid(alpha * x)`.
//! - `Gelu` with `approximate="tanh"`: `x * (0.5 + 0.5 * tanh(x * (c + c * 0.044715 * x²)))`,
//!   `c = sqrt(2/π)` (the scalar affine steps are `linear`).
//! - `ThresholdedRelu`: `where(x > alpha, x, 0)`.
//! - `Shrink`: `where(x < -lambd, x + bias, where(x > lambd, x - bias, 0))` (on integers the
//!   thresholds are rounded outward, which compares the same).
//! - `Clip`: `clamp` on floats when both bounds are known numbers (attributes before opset 11, constant
//!   inputs after) with `min <= max`; otherwise `min(max(x, min), max)` with the bounds as
//!   operands (integers, as browsers clamp floats only — 8-bit ones computed as int32 —,
//!   bounds the graph computes, and `min > max`, where ONNX gives `max`). Folds
//!   when everything is known on the host.
//! - `LogSoftmax`: `d - reduceLogSumExp(d)` with `d = x - reduceMax(x)` along the axis.
//! - `Hardmax`: `cast(equal(argMax(x, axis, keepDimensions), iota along the axis))`.
//! - `Softmax`, `LogSoftmax`, `Hardmax` before opset 13 coerce the input to 2-D at `axis`
//!   (`[d0 * … * d(axis-1), d(axis) * … * d(n-1)]`), work on axis 1 and reshape back, as ONNX
//!   defined them then.

use super::util::{binary, one, require_type, unary, FLOATS};
use super::Lower;
use crate::cx::{number, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::ElemType;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

mod clip;
mod softmax;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &[
    "Celu",
    "Clip",
    "Elu",
    "Gelu",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "LeakyRelu",
    "LogSoftmax",
    "Mish",
    "PRelu",
    "Relu",
    "Selu",
    "Shrink",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Softsign",
    "Swish",
    "Tanh",
    "ThresholdedRelu",
];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "Sigmoid" | "Tanh" | "Softplus" | "Softsign" | "HardSwish" => plain,
        "LeakyRelu" | "Elu" | "HardSigmoid" => with_alpha,
        "Relu" => relu,
        "PRelu" => prelu,
        "Selu" => selu,
        "Celu" => celu,
        "Mish" => mish,
        "Swish" => swish,
        "Gelu" => gelu,
        "ThresholdedRelu" => thresholded_relu,
        "Shrink" => shrink,
        "Clip" => clip::clip,
        "Softmax" | "LogSoftmax" | "Hardmax" => softmax::softmax,
        _ => return None,
    })
}

/// Input 0 as an operand of a floating-point type.
fn float_input(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Operand> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    cx.operand(x)
}

/// A float attribute as a JSON number (finite: WebNN's options take no infinities).
fn float_attr(n: &NodeCx<'_>, name: &str, default: f32) -> OpResult<Json> {
    let v = n.attrs.float_or(name, default)?;
    if !v.is_finite() {
        bail!("attribute {name} is {v}; WebNN takes finite values only");
    }
    Ok(number(v))
}

/// `x * s` for a scalar `s`.
fn scale(cx: &mut Cx, x: &Operand, s: f64) -> OpResult<Operand> {
    let k = cx.scalar(x.elem, s)?;
    binary(cx, "mul", x, &k, x.elem)
}

/// `alpha * x + beta` as WebNN's `linear`.
fn linear(cx: &mut Cx, x: &Operand, alpha: f64, beta: f64) -> Operand {
    let num = |v: f64| serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number);
    cx.emit(
        "linear",
        &[x],
        vec![("alpha", num(alpha)), ("beta", num(beta))],
        x.elem,
        x.shape.clone(),
    )
}

fn plain(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let op = match n.op_type {
        "Sigmoid" => "sigmoid",
        "Tanh" => "tanh",
        "Softplus" => "softplus",
        "Softsign" => "softsign",
        _ => "hardSwish",
    };
    let x = float_input(cx, n)?;
    Ok(one(unary(cx, op, &x)))
}

fn with_alpha(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = float_input(cx, n)?;
    let (op, options) = match n.op_type {
        "LeakyRelu" => ("leakyRelu", vec![("alpha", float_attr(n, "alpha", 0.01)?)]),
        "Elu" => ("elu", vec![("alpha", float_attr(n, "alpha", 1.0)?)]),
        _ => (
            "hardSigmoid",
            vec![
                ("alpha", float_attr(n, "alpha", 0.2)?),
                ("beta", float_attr(n, "beta", 0.5)?),
            ],
        ),
    };
    Ok(one(cx.emit(op, &[&x], options, x.elem, x.shape.clone())))
}

/// Signed integer types the integer forms of `Relu` and `PRelu` take.
const SIGNED_INTS: &[ElemType] = &[ElemType::I32, ElemType::I64, ElemType::I8];

fn relu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    if !x.elem().is_float() {
        require_type(x, SIGNED_INTS, "the input")?;
        let xo = cx.operand(x)?;
        let wide = clip::widen(cx, &xo)?;
        let zero = cx.scalar(wide.elem, 0.0)?;
        let y = binary(cx, "max", &wide, &zero, wide.elem)?;
        return Ok(one(super::util::cast(cx, &y, xo.elem)?));
    }
    let x = float_input(cx, n)?;
    Ok(one(unary(cx, "relu", &x)))
}

fn prelu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let slope = n.input(1)?;
    if slope.elem() != x.elem() {
        bail!(
            "the slope is {} and the input {}; they must have one type",
            slope.elem(),
            x.elem()
        );
    }
    let out = super::util::broadcast(x.shape(), slope.shape())?;
    if out != x.shape() {
        bail!(
            "the slope's shape {:?} does not broadcast to the input's {:?} (PRelu broadcasts the slope to the input only)",
            slope.shape(),
            x.shape()
        );
    }
    let xo = cx.operand(x)?;
    let so = cx.operand(slope)?;
    if x.elem().is_float() {
        require_type(x, FLOATS, "the input")?;
        return Ok(one(cx.emit(
            "prelu",
            &[&xo, &so],
            vec![],
            xo.elem,
            xo.shape.clone(),
        )));
    }
    require_type(x, SIGNED_INTS, "the input")?;
    let zero = cx.scalar(xo.elem, 0.0)?;
    let neg = binary(cx, "lesser", &xo, &zero, ElemType::Bool)?;
    let scaled = binary(cx, "mul", &xo, &so, xo.elem)?;
    let shape = xo.shape.clone();
    Ok(one(cx.emit(
        "where",
        &[&neg, &scaled, &xo],
        vec![],
        xo.elem,
        shape,
    )))
}

fn selu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = float_input(cx, n)?;
    let alpha = float_attr(n, "alpha", 1.673_263_2)?;
    let gamma = n.attrs.float_or("gamma", 1.050_701)?;
    let e = cx.emit(
        "elu",
        &[&x],
        vec![("alpha", alpha)],
        x.elem,
        x.shape.clone(),
    );
    Ok(one(scale(cx, &e, f64::from(gamma))?))
}

fn celu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = float_input(cx, n)?;
    let alpha = n.attrs.float_or("alpha", 1.0)?;
    if alpha == 0.0 || !alpha.is_finite() {
        bail!(
            "attribute alpha is {alpha}; Celu divides by it (a finite, nonzero alpha is required)"
        );
    }
    let a = cx.scalar(x.elem, f64::from(alpha))?;
    let scaled = binary(cx, "div", &x, &a, x.elem)?;
    let e = cx.emit(
        "elu",
        &[&scaled],
        vec![("alpha", number(1.0))],
        x.elem,
        x.shape.clone(),
    );
    Ok(one(binary(cx, "mul", &e, &a, x.elem)?))
}

fn mish(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = float_input(cx, n)?;
    let sp = unary(cx, "softplus", &x);
    let t = unary(cx, "tanh", &sp);
    Ok(one(binary(cx, "mul", &x, &t, x.elem)?))
}

fn swish(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = float_input(cx, n)?;
    let alpha = n.attrs.float_or("alpha", 1.0)?;
    let ax = if alpha == 1.0 {
        x.clone()
    } else {
        scale(cx, &x, f64::from(alpha))?
    };
    let s = unary(cx, "sigmoid", &ax);
    Ok(one(binary(cx, "mul", &x, &s, x.elem)?))
}

fn gelu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = float_input(cx, n)?;
    match n.attrs.string_or("approximate", "none")?.as_str() {
        "none" => Ok(one(unary(cx, "gelu", &x))),
        "tanh" => {
            let c = (2.0 / std::f64::consts::PI).sqrt();
            let sq = binary(cx, "mul", &x, &x, x.elem)?;
            let inner = linear(cx, &sq, c * 0.044715, c);
            let u = binary(cx, "mul", &x, &inner, x.elem)?;
            let t = unary(cx, "tanh", &u);
            let h = linear(cx, &t, 0.5, 0.5);
            Ok(one(binary(cx, "mul", &x, &h, x.elem)?))
        }
        other => bail!("attribute approximate is {other:?}; ONNX defines \"none\" and \"tanh\""),
    }
}

fn thresholded_relu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = float_input(cx, n)?;
    let alpha = n.attrs.float_or("alpha", 1.0)?;
    let a = cx.scalar(x.elem, f64::from(alpha))?;
    let zero = cx.scalar(x.elem, 0.0)?;
    let above = binary(cx, "greater", &x, &a, ElemType::Bool)?;
    let shape = x.shape.clone();
    Ok(one(cx.emit(
        "where",
        &[&above, &x, &zero],
        vec![],
        x.elem,
        shape,
    )))
}

fn shrink(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, super::util::NUMBERS, "the input")?;
    let x = cx.operand(x)?;
    let lambd = f64::from(n.attrs.float_or("lambd", 0.5)?);
    let bias = f64::from(n.attrs.float_or("bias", 0.0)?);
    let e = x.elem;
    // integers: x < -l is x < ceil(-l), x > l is x > floor(l)
    let (low, high) = if e.is_float() {
        (-lambd, lambd)
    } else {
        ((-lambd).ceil(), lambd.floor())
    };
    let low = cx.scalar(e, low)?;
    let high = cx.scalar(e, high)?;
    let b = cx.scalar(e, bias)?;
    let zero = cx.scalar(e, 0.0)?;
    let is_low = binary(cx, "lesser", &x, &low, ElemType::Bool)?;
    let is_high = binary(cx, "greater", &x, &high, ElemType::Bool)?;
    let plus = binary(cx, "add", &x, &b, e)?;
    let minus = binary(cx, "sub", &x, &b, e)?;
    let shape = x.shape.clone();
    let upper = cx.emit(
        "where",
        &[&is_high, &minus, &zero],
        vec![],
        e,
        shape.clone(),
    );
    Ok(one(cx.emit(
        "where",
        &[&is_low, &plus, &upper],
        vec![],
        e,
        shape,
    )))
}
