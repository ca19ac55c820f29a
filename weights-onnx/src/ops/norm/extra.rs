//! The decomposed normalizations: `GroupNormalization`, `LRN`, `MeanVarianceNormalization`,
//! `LpNormalization` (see the parent module's docs for each formula).

use super::super::reduce::emit_reduce;
use super::super::util::FLOATS;
use super::super::util::{axis as norm_axis, binary, cast, one, require_type, reshape, unary};
use super::{axes_of, epsilon};
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// Input 0, floating point, of rank 2 or more: its operand.
fn channels_input(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Operand> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    if x.rank() < 2 {
        bail!("the input has shape {:?}; expected [N, C, …]", x.shape());
    }
    cx.operand(x)
}

pub(super) fn group_norm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = channels_input(cx, n)?;
    let Some(groups) = n.attrs.int("num_groups")? else {
        bail!("attribute num_groups is required");
    };
    let (batch, c) = (x.shape[0], x.shape[1]);
    if groups <= 0 || i64::from(c) % groups != 0 {
        bail!("num_groups is {groups}; it must divide the {c} channels");
    }
    let g = groups as u32;
    let per_group = (c / g) * x.shape[2..].iter().product::<u32>();
    let e = x.elem;
    let grouped = reshape(cx, &x, vec![batch, g, per_group]);
    let gs = grouped.shape.clone();
    let normed = cx.emit(
        "layerNormalization",
        &[&grouped],
        vec![("axes", u32s(&[2])), ("epsilon", epsilon(n)?)],
        e,
        gs,
    );
    let scale = n.input(1)?;
    let bias = n.input(2)?;
    let len = scale.shape().iter().product::<u32>();
    if bias.shape().iter().product::<u32>() != len || (len != c && len != g) {
        bail!(
            "the scale {:?} and bias {:?} must both hold one value per channel ({c}) or, before opset 21, per group ({g})",
            scale.shape(),
            bias.shape()
        );
    }
    // per channel: applied in the input's shape; per group: in the grouped one
    let (mut y, ones) = if len == c && (n.opset >= 21 || c != g) {
        (reshape(cx, &normed, x.shape.clone()), x.rank() - 2)
    } else {
        (normed, 1)
    };
    let mut param_shape = vec![len];
    param_shape.extend(std::iter::repeat_n(1, ones));
    for (v, op) in [(scale, "mul"), (bias, "add")] {
        let o = cx.operand(v)?;
        let o = cast(cx, &o, e)?;
        let o = reshape(cx, &o, param_shape.clone());
        y = binary(cx, op, &y, &o, e)?;
    }
    Ok(one(reshape(cx, &y, x.shape.clone())))
}

pub(super) fn lrn(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = channels_input(cx, n)?;
    let Some(size) = n.attrs.int("size")? else {
        bail!("attribute size is required");
    };
    if !(1..=i64::from(u32::MAX)).contains(&size) {
        bail!("attribute size is {size}; a positive window is required");
    }
    let size = size as u32;
    let alpha = f64::from(n.attrs.float_or("alpha", 1e-4)?);
    let beta = n.attrs.float_or("beta", 0.75)?;
    let bias = f64::from(n.attrs.float_or("bias", 1.0)?);
    let e = x.elem;
    let (batch, c) = (x.shape[0], x.shape[1]);
    let rest: u32 = x.shape[2..].iter().product();
    let sq = binary(cx, "mul", &x, &x, e)?;
    let sq = reshape(cx, &sq, vec![batch, 1, c, rest]);
    let (before, after) = ((size - 1) / 2, size / 2);
    let padded = cx.emit(
        "pad",
        &[&sq],
        vec![
            ("beginningPadding", u32s(&[0, 0, before, 0])),
            ("endingPadding", u32s(&[0, 0, after, 0])),
            ("mode", Json::from("constant")),
            ("value", Json::from(0)),
        ],
        e,
        vec![batch, 1, c + before + after, rest],
    );
    let avg = cx.emit(
        "averagePool2d",
        &[&padded],
        vec![
            ("windowDimensions", u32s(&[size, 1])),
            ("strides", u32s(&[1, 1])),
            ("layout", Json::from("nchw")),
        ],
        e,
        vec![batch, 1, c, rest],
    );
    let avg = reshape(cx, &avg, x.shape.clone());
    let num = |v: f64| serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number);
    let base = cx.emit(
        "linear",
        &[&avg],
        vec![("alpha", num(alpha)), ("beta", num(bias))],
        e,
        x.shape.clone(),
    );
    let b = cx.scalar(e, f64::from(beta))?;
    let den = binary(cx, "pow", &base, &b, e)?;
    Ok(one(binary(cx, "div", &x, &den, e)?))
}

pub(super) fn mvn(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let list = n.attrs.ints("axes")?.unwrap_or_else(|| vec![0, 2, 3]);
    let axes = axes_of(&list, x.rank())?;
    let x = cx.operand(x)?;
    let e = x.elem;
    let mean = emit_reduce(cx, "reduceMean", &x, &axes, true);
    let d = binary(cx, "sub", &x, &mean, e)?;
    let sq = binary(cx, "mul", &d, &d, e)?;
    let var = emit_reduce(cx, "reduceMean", &sq, &axes, true);
    let std = unary(cx, "sqrt", &var);
    let tiny = cx.scalar(e, 1e-9)?;
    let den = binary(cx, "add", &std, &tiny, e)?;
    Ok(one(binary(cx, "div", &d, &den, e)?))
}

pub(super) fn lp_norm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let a = norm_axis(n.attrs.int_or("axis", -1)?, x.rank())?;
    let op = match n.attrs.int_or("p", 2)? {
        1 => "reduceL1",
        2 => "reduceL2",
        p => bail!("attribute p is {p}; ONNX defines 1 and 2"),
    };
    let x = cx.operand(x)?;
    let norm = emit_reduce(cx, op, &x, &[a as u32], true);
    // a zero norm (every element 0) divides by 1: the output is 0 there, as ONNX's is
    let zero = cx.scalar(x.elem, 0.0)?;
    let onec = cx.scalar(x.elem, 1.0)?;
    let none = binary(cx, "equal", &norm, &zero, crate::tensor::ElemType::Bool)?;
    let shape = norm.shape.clone();
    let safe = cx.emit("where", &[&none, &onec, &norm], vec![], x.elem, shape);
    Ok(one(binary(cx, "div", &x, &safe, x.elem)?))
}
