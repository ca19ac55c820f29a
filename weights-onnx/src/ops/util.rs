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
pub(crate) fn binary(
    cx: &mut Cx,
    op: &str,
    a: &Operand,
    b: &Operand,
    elem: ElemType,
) -> OpResult<Operand> {
    let shape = broadcast(&a.shape, &b.shape)?;
    Ok(cx.emit(op, &[a, b], vec![], elem, shape))
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
