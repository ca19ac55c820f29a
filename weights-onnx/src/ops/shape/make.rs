//! Values made from shapes and scalars: `ConstantOfShape`, `Range` and `EyeLike` (folded),
//! and `Trilu` (`triangular`, folded on host values).

use super::host::{checked_count, dim, foldable, join, map_index, scalar_of, take};
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::elementwise::FOLD_LIMIT;
use crate::ops::util::one;
use crate::tensor::{decode_inline, ElemType, HostTensor};
use crate::value::Value;
use serde_json::Value as Json;
use std::rc::Rc;

/// Results made on the host stop at this many elements (a bigger one is a mistake, or belongs
/// in the graph).
const MAKE_LIMIT: u64 = 1 << 26;

/// `ConstantOfShape`: the `value` attribute (one element, default float 0) at the shape
/// (input 0); large results are an `expand` of the one value.
pub(crate) fn constant_of_shape(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let spec = n
        .const_ints(0, "the shape")?
        .ok_or("the shape (input 0) is required")?;
    let shape: Vec<u32> = spec
        .iter()
        .map(|&v| dim(v, "a dimension of the shape"))
        .collect::<OpResult<_>>()?;
    let value = match n.attrs.tensor("value") {
        Some(t) => decode_inline(t).map_err(|e| format!("the value attribute: {e}"))?,
        None => HostTensor::from_f64s(ElemType::F32, vec![1], &[0.0]),
    };
    let value = scalar_of(&value, "the value attribute")?;
    let count = checked_count(&shape)?;
    if count <= FOLD_LIMIT {
        let src = vec![0usize; count as usize];
        return Ok(vec![Value::constant(take(value, shape, &src))]);
    }
    let one_shape = vec![1; shape.len()];
    let v = cx.const_operand(&Rc::new(value.reshaped(one_shape)))?;
    let opts = vec![("newShape", crate::cx::u32s(&shape))];
    Ok(one(cx.emit("expand", &[&v], opts, v.elem, shape)))
}

/// `Range` of constant `start`, `limit`, `delta`: folded (integers exactly).
pub(crate) fn range(_cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let s = n
        .const_input(0, "the start")?
        .ok_or("the start (input 0) is required")?;
    let l = n
        .const_input(1, "the limit")?
        .ok_or("the limit (input 1) is required")?;
    let d = n
        .const_input(2, "the delta")?
        .ok_or("the delta (input 2) is required")?;
    let (s, l, d) = (
        scalar_of(s, "the start")?,
        scalar_of(l, "the limit")?,
        scalar_of(d, "the delta")?,
    );
    if s.elem != l.elem || s.elem != d.elem {
        bail!(
            "start, limit and delta have types {}, {} and {}; they must match",
            s.elem,
            l.elem,
            d.elem
        );
    }
    let elem = s.elem;
    if elem.is_float() {
        let (a, b, step) = (s.to_f64s()[0], l.to_f64s()[0], d.to_f64s()[0]);
        let count = ((b - a) / step).ceil();
        if step == 0.0 || !count.is_finite() && count > 0.0 {
            bail!("delta is {step}: the range from {a} to {b} has no end");
        }
        let count = range_count(count.max(0.0) as u64)?;
        let v: Vec<f64> = (0..count).map(|i| a + i as f64 * step).collect();
        return Ok(vec![Value::constant(HostTensor::from_f64s(
            elem,
            vec![count as u32],
            &v,
        ))]);
    }
    let (a, b, step) = (s.to_i64s()[0], l.to_i64s()[0], d.to_i64s()[0]);
    if step == 0 {
        bail!("delta is 0: the range from {a} to {b} has no end");
    }
    let span = i128::from(b) - i128::from(a);
    let step128 = i128::from(step);
    let count = if (span > 0) == (step > 0) && span != 0 {
        (span + step128 - step128.signum()) / step128
    } else {
        0
    };
    let count = range_count(count.clamp(0, i128::from(u32::MAX) + 1) as u64)?;
    let v: Vec<i64> = (0..count as i64)
        .map(|i| a.wrapping_add(i.wrapping_mul(step)))
        .collect();
    Ok(vec![Value::constant(HostTensor::from_i64s(
        elem,
        vec![count as u32],
        &v,
    ))])
}

fn range_count(count: u64) -> OpResult<u64> {
    if count > MAKE_LIMIT {
        bail!("the range has {count} elements; ranges over {MAKE_LIMIT} are not folded (a WebNN graph has no range operation)");
    }
    Ok(count)
}

/// `EyeLike`: ones on diagonal `k` of the input's 2-D shape, of `dtype` (default the input's).
pub(crate) fn eye_like(_cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let [rows, cols] = <[u32; 2]>::try_from(x.shape()).map_err(|_| {
        format!(
            "the input has shape {:?}; EyeLike takes a 2-D input",
            x.shape()
        )
    })?;
    let elem = match n.attrs.int("dtype")? {
        Some(code) => ElemType::from_onnx(code as i32).ok_or_else(|| {
            format!(
                "dtype {} is not supported",
                ElemType::onnx_name(code as i32)
            )
        })?,
        None => x.elem(),
    };
    let k = n.attrs.int_or("k", 0)?;
    let shape = vec![rows, cols];
    if checked_count(&shape)? > MAKE_LIMIT {
        bail!("the output {shape:?} is too large to make on the host (over {MAKE_LIMIT} elements)");
    }
    let mut v = vec![0i64; rows as usize * cols as usize];
    for r in 0..i64::from(rows) {
        let c = r.saturating_add(k);
        if (0..i64::from(cols)).contains(&c) {
            v[(r * i64::from(cols) + c) as usize] = 1;
        }
    }
    Ok(vec![Value::constant(HostTensor::from_i64s(
        elem, shape, &v,
    ))])
}

/// `Trilu`: `upper` (default 1) and the diagonal offset `k` (input 1, default 0).
pub(crate) fn trilu(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    if x.rank() < 2 {
        bail!(
            "the input has shape {:?}; Trilu takes rank 2 or more",
            x.shape()
        );
    }
    let upper = n.attrs.int_or("upper", 1)? != 0;
    let k = match n.const_input(1, "the diagonal offset k")? {
        Some(t) => scalar_of(t, "k")?.to_i64s().first().copied().unwrap_or(0),
        None => 0,
    };
    if let Some(t) = x.as_const().filter(|_| foldable(x.shape())) {
        let zero = HostTensor::from_i64s(t.elem, vec![1], &[0]);
        let total = t.element_count() as usize;
        let r = t.shape.len();
        let mut flat = 0;
        let src = map_index(&t.shape, |o| {
            let off = o[r - 1] as i64 - o[r - 2] as i64;
            let keep = if upper { off >= k } else { off <= k };
            flat += 1;
            if keep {
                flat - 1
            } else {
                total
            }
        });
        return Ok(vec![Value::constant(take(
            &join(&[t, &zero]),
            t.shape.clone(),
            &src,
        ))]);
    }
    let o = cx.operand(x)?;
    let k = k.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
    let opts = vec![("upper", Json::from(upper)), ("diagonal", Json::from(k))];
    Ok(one(cx.emit(
        "triangular",
        &[&o],
        opts,
        o.elem,
        o.shape.clone(),
    )))
}
