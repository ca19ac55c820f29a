//! `QuantizeLinear` and `DequantizeLinear`: per tensor, per axis (`axis`) and blocked
//! (`block_size`, opset 21+), with 8-bit and packed 4-bit values (kept packed: WebNN's `int4`
//! and `uint4` hold them as ONNX does, the first element in the low nibble). The scale and zero
//! point are given WebNN the input's rank, as its blockwise broadcasting wants; a missing zero
//! point is a constant of zeros.

use super::conv::reshaped;
use super::util::{axis as onnx_axis, cast, one, FLOATS};
use super::Lower;
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::ElemType;
use crate::value::{Operand, Value};

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &["DequantizeLinear", "QuantizeLinear"];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "DequantizeLinear" => dequantize_linear,
        "QuantizeLinear" => quantize_linear,
        _ => return None,
    })
}

/// Quantized types WebNN holds.
const QUANTIZED: &[ElemType] = &[ElemType::I8, ElemType::U8, ElemType::I4, ElemType::U4];

/// The shape the scale (and zero point) take at the input's rank: `[1, …]` per tensor, the
/// channel at `axis` per axis, the scale's own shape blocked.
fn param_shape(n: &NodeCx<'_>, x: &[u32], scale: &[u32]) -> OpResult<Vec<u32>> {
    let rank = x.len();
    let block = n.attrs.int_or("block_size", 0)?;
    let per_tensor = scale.iter().all(|&d| d == 1) && scale.len() <= 1.max(rank);
    if block == 0 && per_tensor {
        return Ok(vec![1; rank]);
    }
    let a = onnx_axis(n.attrs.int_or("axis", 1)?, rank)?;
    if block == 0 {
        if scale.len() != 1 || scale[0] != x[a] {
            bail!(
                "the scale has shape {scale:?}; per axis (axis {a} of input {x:?}) it must be [{}]",
                x[a]
            );
        }
        let mut s = vec![1; rank];
        s[a] = x[a];
        return Ok(s);
    }
    let Some(block) = u32::try_from(block).ok().filter(|&b| b > 0) else {
        bail!("attribute block_size is {block}: expected a positive size");
    };
    let mut want = x.to_vec();
    want[a] = x[a].div_ceil(block);
    if scale != want {
        bail!("the scale has shape {scale:?}; blocked by {block} along axis {a} of input {x:?} it must be {want:?}");
    }
    if x[a] % block != 0 {
        bail!("block_size {block} does not divide dim {a} of the input ({}); WebNN's blocks are whole (pad the tensor to a multiple of the block)", x[a]);
    }
    Ok(want)
}

/// The zero point at `shape`: the given one, checked against `scale`'s shape and `elem`, or
/// zeros of `elem`.
fn zero_point(
    cx: &mut Cx,
    zp: Option<&Value>,
    scale: &Value,
    elem: ElemType,
    shape: &[u32],
) -> OpResult<Operand> {
    match zp {
        Some(z) => {
            let one = |v: &Value| v.shape().iter().all(|&d| d == 1);
            if z.shape() != scale.shape() && !(one(z) && one(scale)) {
                bail!(
                    "the zero point has shape {:?} but the scale has {:?}; expected equal shapes",
                    z.shape(),
                    scale.shape()
                );
            }
            if z.elem() != elem {
                bail!(
                    "the zero point is {} but the quantized values are {elem}",
                    z.elem()
                );
            }
            reshaped(cx, z, shape.to_vec())
        }
        None => {
            let count = super::util::count(shape) as usize;
            cx.constant_f64(elem, shape.to_vec(), &vec![0.0; count])
        }
    }
}

fn check_scale(scale: &Value) -> OpResult<()> {
    if !FLOATS.contains(&scale.elem()) {
        bail!(
            "the scale is {}; WebNN's scales are float32 or float16",
            scale.elem()
        );
    }
    Ok(())
}

fn dequantize_linear(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, scale) = (n.input(0)?, n.input(1)?);
    check_scale(scale)?;
    let elem = x.elem();
    if !QUANTIZED.contains(&elem) && elem != ElemType::I32 {
        bail!("the input is {elem}; WebNN dequantizes int8, uint8, int4, uint4 and int32 only");
    }
    let shape = param_shape(n, x.shape(), scale.shape())?;
    let xo = cx.operand(x)?;
    let so = reshaped(cx, scale, shape.clone())?;
    let zo = zero_point(cx, n.opt_input(2), scale, elem, &shape)?;
    let y = cx.emit(
        "dequantizeLinear",
        &[&xo, &so, &zo],
        vec![],
        so.elem,
        xo.shape.clone(),
    );
    let out = match n.attrs.int_or("output_dtype", 0)? {
        0 => y,
        code => match ElemType::from_onnx(code as i32).filter(|e| FLOATS.contains(e)) {
            Some(e) => cast(cx, &y, e)?,
            None => bail!(
                "attribute output_dtype is {}; expected float or float16",
                ElemType::onnx_name(code as i32)
            ),
        },
    };
    Ok(one(out))
}

/// QuantizeLinear's output type: the zero point's, else `output_dtype`, else uint8.
fn quantized_type(n: &NodeCx<'_>) -> OpResult<ElemType> {
    let from_attr = match n.attrs.int_or("output_dtype", 0)? {
        0 => None,
        code => Some(ElemType::from_onnx(code as i32).ok_or_else(|| {
            format!(
                "attribute output_dtype is {}, which this converter does not hold",
                ElemType::onnx_name(code as i32)
            )
        })?),
    };
    let elem = match (n.opt_input(2).map(Value::elem), from_attr) {
        (Some(z), Some(a)) if z != a => bail!("the zero point is {z} but output_dtype says {a}"),
        (Some(z), _) => z,
        (None, Some(a)) => a,
        (None, None) => ElemType::U8,
    };
    if !QUANTIZED.contains(&elem) {
        bail!("the output type is {elem}; WebNN quantizes to int8, uint8, int4 and uint4 only");
    }
    Ok(elem)
}

fn quantize_linear(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, scale) = (n.input(0)?, n.input(1)?);
    check_scale(scale)?;
    if !FLOATS.contains(&x.elem()) {
        bail!(
            "the input is {}; WebNN quantizes float32 and float16 only",
            x.elem()
        );
    }
    let elem = quantized_type(n)?;
    let shape = param_shape(n, x.shape(), scale.shape())?;
    let xo = cx.operand(x)?;
    let so = reshaped(cx, scale, shape.clone())?;
    let so = cast(cx, &so, xo.elem)?;
    let zo = zero_point(cx, n.opt_input(2), scale, elem, &shape)?;
    Ok(one(cx.emit(
        "quantizeLinear",
        &[&xo, &so, &zo],
        vec![],
        elem,
        xo.shape.clone(),
    )))
}
