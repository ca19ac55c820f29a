//! What many lowerings share: axes, broadcasting, and the WebNN operations every family emits
//! (reshape, transpose, cast, unary and binary arithmetic).

use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::tensor::ElemType;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// One output.
pub(crate) fn one(o: Operand) -> Vec<Value> {
    vec![Value::Operand(o)]
}

/// An ONNX axis (negative counts from the end) as an index below `rank`.
pub(crate) fn axis(axis: i64, rank: usize) -> OpResult<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        bail!(
            "axis {axis} is out of range for rank {rank} (valid: {} to {})",
            -r,
            r - 1
        );
    }
    Ok(a as usize)
}

/// ONNX axes as sorted, distinct indices below `rank`.
pub(crate) fn axes(list: &[i64], rank: usize) -> OpResult<Vec<u32>> {
    let mut out = Vec::with_capacity(list.len());
    for &a in list {
        let i = axis(a, rank)? as u32;
        if out.contains(&i) {
            bail!("axes {list:?} name axis {i} twice");
        }
        out.push(i);
    }
    out.sort_unstable();
    Ok(out)
}

/// The numpy-style broadcast of two shapes.
pub(crate) fn broadcast(a: &[u32], b: &[u32]) -> OpResult<Vec<u32>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => bail!("shapes {a:?} and {b:?} do not broadcast (dim {i}: {da} against {db})"),
        };
    }
    Ok(out)
}

/// The number of elements of a shape.
pub(crate) fn count(shape: &[u32]) -> u64 {
    shape.iter().map(|&d| u64::from(d)).product()
}

/// `reshape`, or `x` itself when the shape is already `shape`.
pub(crate) fn reshape(cx: &mut Cx, x: &Operand, shape: Vec<u32>) -> Operand {
    if x.shape == shape {
        return x.clone();
    }
    cx.emit(
        "reshape",
        &[x],
        vec![("newShape", u32s(&shape))],
        x.elem,
        shape,
    )
}

/// `transpose` by `perm`, or `x` itself for the identity permutation.
pub(crate) fn transpose(cx: &mut Cx, x: &Operand, perm: &[u32]) -> Operand {
    if perm.iter().enumerate().all(|(i, &p)| p as usize == i) {
        return x.clone();
    }
    let shape = perm.iter().map(|&p| x.shape[p as usize]).collect();
    cx.emit(
        "transpose",
        &[x],
        vec![("permutation", u32s(perm))],
        x.elem,
        shape,
    )
}

/// `cast` to `to` (a WebNN type; `bool` is `uint8` holding 0 or 1: casting to it compares
/// with zero), or `x` itself when nothing changes.
pub(crate) fn cast(cx: &mut Cx, x: &Operand, to: ElemType) -> OpResult<Operand> {
    if x.elem == to {
        return Ok(x.clone());
    }
    let Some(data_type) = to.webnn() else {
        bail!("cannot cast to {to}: WebNN has no such type");
    };
    if to == ElemType::Bool {
        let zero = cx.scalar(x.elem, 0.0)?;
        let ne = cx.emit(
            "notEqual",
            &[x, &zero],
            vec![],
            ElemType::Bool,
            x.shape.clone(),
        );
        return Ok(ne);
    }
    if x.data_type() == data_type {
        // bool -> uint8 holds the same bytes
        return Ok(Operand {
            elem: to,
            ..x.clone()
        });
    }
    Ok(cx.emit(
        "cast",
        &[x],
        vec![("to", Json::from(data_type.json_name()))],
        to,
        x.shape.clone(),
    ))
}

/// A unary WebNN operation whose output has the input's type and shape.
pub(crate) fn unary(cx: &mut Cx, op: &str, x: &Operand) -> Operand {
    cx.emit(op, &[x], vec![], x.elem, x.shape.clone())
}

/// A binary WebNN operation with broadcasting; the output is of `elem` (the inputs' type for
/// arithmetic, `bool` for comparisons).
///
/// Where WebNN allows the type but Chromium's CPU backend (TFLite) does not, the operation is
/// computed in a wider type that holds every value exactly, with ONNX's wrap-around on the way
/// back (see [`widening`]).
pub(crate) fn binary(
    cx: &mut Cx,
    op: &str,
    a: &Operand,
    b: &Operand,
    elem: ElemType,
) -> OpResult<Operand> {
    let shape = broadcast(&a.shape, &b.shape)?;
    if a.elem == b.elem {
        if let Some(wide) = widening(op, a.elem) {
            return widened(cx, op, a, b, elem, wide);
        }
    }
    Ok(cx.emit(op, &[a, b], vec![], elem, shape))
}

/// The type a binary operation of `elem` values is computed in where Chromium's CPU backend
/// lacks `elem` for it (add, sub: float32, float16, int32, int64; mul adds uint32; div:
/// float32, float16, int32; comparisons: float32, float16, int32, int64; max, min add int8,
/// uint8): 8-bit integers as float32 for arithmetic (every sum, difference, product and
/// truncated quotient of two of them is exact there) and int32 for comparisons, uint32 as
/// int64. `None` when `elem` is taken as it is, or no exact wider type exists (uint64, the
/// quotient of uint32s).
pub(crate) fn widening(op: &str, elem: ElemType) -> Option<ElemType> {
    use ElemType::*;
    let compare = matches!(
        op,
        "equal" | "greater" | "greaterOrEqual" | "lesser" | "lesserOrEqual"
    );
    match (op, elem) {
        (_, I8 | U8 | Bool) if compare => Some(I32),
        ("add" | "sub" | "mul" | "div", I8 | U8) => Some(F32),
        (_, U32) if compare => Some(I64),
        ("add" | "sub" | "max" | "min", U32) => Some(I64),
        _ => None,
    }
}

/// `op` computed in `wide` and brought back to `elem` (see [`widening`]): wrapped around as
/// ONNX's fixed-width integers do, quotients truncated toward zero.
fn widened(
    cx: &mut Cx,
    op: &str,
    a: &Operand,
    b: &Operand,
    elem: ElemType,
    wide: ElemType,
) -> OpResult<Operand> {
    let aw = cast(cx, a, wide)?;
    let bw = cast(cx, b, wide)?;
    let shape = broadcast(&a.shape, &b.shape)?;
    let out_elem = if elem == ElemType::Bool { elem } else { wide };
    let mut r = cx.emit(op, &[&aw, &bw], vec![], out_elem, shape);
    if elem == ElemType::Bool {
        return Ok(r);
    }
    if op == "div" {
        // truncation toward zero: floor of positive quotients, ceil of negative ones
        let zero = cx.scalar(wide, 0.0)?;
        let neg = cx.emit(
            "lesser",
            &[&r, &zero],
            vec![],
            ElemType::Bool,
            r.shape.clone(),
        );
        let up = unary(cx, "ceil", &r);
        let down = unary(cx, "floor", &r);
        r = cx.emit("where", &[&neg, &up, &down], vec![], wide, r.shape.clone());
    }
    let r = wrap(cx, op, &r, a.elem)?;
    cast(cx, &r, elem)
}

/// `r` (computed in a wider type) wrapped into `elem`'s range, as ONNX's integers wrap.
fn wrap(cx: &mut Cx, op: &str, r: &Operand, elem: ElemType) -> OpResult<Operand> {
    let (lo, span) = match elem {
        ElemType::I8 => (-128.0, 256.0),
        ElemType::U8 => (0.0, 256.0),
        ElemType::U32 => (0.0, 4294967296.0),
        _ => return Ok(r.clone()),
    };
    if r.elem.is_float() {
        // r - span * floor((r - lo) / span): exact (span a power of two, |r| < 2^24)
        let loc = cx.scalar(r.elem, lo)?;
        let spanc = cx.scalar(r.elem, span)?;
        let shifted = cx.emit("sub", &[r, &loc], vec![], r.elem, r.shape.clone());
        let q = cx.emit("div", &[&shifted, &spanc], vec![], r.elem, r.shape.clone());
        let f = unary(cx, "floor", &q);
        let m = cx.emit("mul", &[&f, &spanc], vec![], r.elem, r.shape.clone());
        return Ok(cx.emit("sub", &[r, &m], vec![], r.elem, r.shape.clone()));
    }
    // uint32 in int64: a sum is below 2 * 2^32, a difference above -2^32; max and min stay
    let (test, fix) = match op {
        "add" => ("greaterOrEqual", "sub"),
        "sub" => ("lesser", "add"),
        _ => return Ok(r.clone()),
    };
    let bound = cx.scalar(r.elem, if op == "add" { span } else { 0.0 })?;
    let spanc = cx.scalar(r.elem, span)?;
    let out = cx.emit(test, &[r, &bound], vec![], ElemType::Bool, r.shape.clone());
    let fixed = cx.emit(fix, &[r, &spanc], vec![], r.elem, r.shape.clone());
    Ok(cx.emit("where", &[&out, &fixed, r], vec![], r.elem, r.shape.clone()))
}

/// Both inputs of an elementwise operation must have one element type.
pub(crate) fn same_type(a: &Value, b: &Value) -> OpResult<ElemType> {
    if a.elem() != b.elem() {
        bail!(
            "its inputs have different element types ({} and {})",
            a.elem(),
            b.elem()
        );
    }
    Ok(a.elem())
}

/// The element type must be one of `allowed` (WebNN's list for the operation).
pub(crate) fn require_type(v: &Value, allowed: &[ElemType], what: &str) -> OpResult<()> {
    if !allowed.contains(&v.elem()) {
        let names: Vec<&str> = allowed.iter().map(|e| e.name()).collect();
        bail!(
            "{what} is {}; WebNN computes this only on {}",
            v.elem(),
            names.join(", ")
        );
    }
    Ok(())
}

/// Floating-point types WebNN computes on.
pub(crate) const FLOATS: &[ElemType] = &[ElemType::F32, ElemType::F16];

/// Numeric types WebNN's arithmetic takes.
pub(crate) const NUMBERS: &[ElemType] = &[
    ElemType::F32,
    ElemType::F16,
    ElemType::I32,
    ElemType::U32,
    ElemType::I64,
    ElemType::U64,
    ElemType::I8,
    ElemType::U8,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast(&[2, 1, 3], &[4, 1]).unwrap(), [2, 4, 3]);
        assert_eq!(broadcast(&[], &[5]).unwrap(), [5]);
        assert!(broadcast(&[2], &[3]).is_err());
    }

    #[test]
    fn axes_wrap_and_refuse() {
        assert_eq!(axis(-1, 4).unwrap(), 3);
        assert!(axis(4, 4).is_err());
        assert!(axis(-5, 4).is_err());
        assert_eq!(axes(&[-1, 0], 3).unwrap(), [0, 2]);
        assert!(axes(&[1, -2], 3).is_err());
    }
}
