//! `Clip`: `clamp` with known bounds, `max`/`min` with computed ones, folded on the host.

use super::super::elementwise::FOLD_LIMIT;
use super::super::util::{binary, cast, count, one, require_type, NUMBERS};
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::{ElemType, HostTensor};
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// One bound of a clip.
enum Bound {
    /// None given.
    Open,
    /// A number known while converting.
    Known(f64),
    /// Computed by the graph (a scalar).
    Computed(Operand),
}

/// The bound in input `i` (opset 11+) or attribute `name` (before).
fn bound(n: &NodeCx<'_>, i: usize, name: &str) -> OpResult<Bound> {
    if n.opset < 11 {
        return Ok(match n.attrs.float(name)? {
            Some(v) => Bound::Known(f64::from(v)),
            None => Bound::Open,
        });
    }
    let Some(v) = n.opt_input(i) else {
        return Ok(Bound::Open);
    };
    if v.elem() != n.input(0)?.elem() {
        bail!(
            "the {name} bound is {} and the input {}; they must have one type",
            v.elem(),
            n.input(0)?.elem()
        );
    }
    if v.shape().iter().product::<u32>() != 1 {
        bail!(
            "the {name} bound has shape {:?}; ONNX requires a scalar",
            v.shape()
        );
    }
    Ok(match v {
        Value::Const(t) => {
            let x = t.elem;
            if x.is_float() {
                Bound::Known(t.to_f64s()[0])
            } else {
                Bound::Known(t.to_i64s()[0] as f64)
            }
        }
        Value::Operand(o) => Bound::Computed(o.clone()),
    })
}

/// A finite number for `clamp` (an infinite or absent bound is left out).
fn number(v: f64) -> Option<Json> {
    v.is_finite()
        .then(|| serde_json::Number::from_f64(v).map(Json::Number))
        .flatten()
}

pub(super) fn clip(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, NUMBERS, "the input")?;
    let lo = bound(n, 1, "min")?;
    let hi = bound(n, 2, "max")?;
    if let Some(t) = x.as_const() {
        if let (Bound::Known(_) | Bound::Open, Bound::Known(_) | Bound::Open) = (&lo, &hi) {
            if count(&t.shape) <= FOLD_LIMIT {
                return Ok(vec![Value::constant(fold(t, &lo, &hi))]);
            }
        }
    }
    let xo = cx.operand(x)?;
    let ordered = match (&lo, &hi) {
        (Bound::Known(a), Bound::Known(b)) => a <= b,
        _ => true,
    };
    let known = |b: &Bound| matches!(b, Bound::Known(_) | Bound::Open);
    if ordered && known(&lo) && known(&hi) && xo.elem.is_float() {
        let mut options = Vec::new();
        if let Bound::Known(v) = lo {
            options.extend(number(v).map(|j| ("minValue", j)));
        }
        if let Bound::Known(v) = hi {
            options.extend(number(v).map(|j| ("maxValue", j)));
        }
        let shape = xo.shape.clone();
        return Ok(one(cx.emit("clamp", &[&xo], options, xo.elem, shape)));
    }
    // min(max(x, lo), hi): integers (browsers clamp floats only), bounds the graph computes,
    // or lo > hi (ONNX then gives hi); 8-bit integers computed as int32
    let elem = xo.elem;
    let mut y = widen(cx, &xo)?;
    for (b, op) in [(lo, "max"), (hi, "min")] {
        let operand = match b {
            Bound::Open => continue,
            Bound::Known(v) => cx.scalar(y.elem, v)?,
            Bound::Computed(o) => widen(cx, &o)?,
        };
        y = binary(cx, op, &y, &operand, y.elem)?;
    }
    Ok(one(cast(cx, &y, elem)?))
}

/// 8-bit integers as int32 (browsers' `max`/`min`/comparisons take no 8-bit types).
pub(super) fn widen(cx: &mut Cx, x: &Operand) -> OpResult<Operand> {
    match x.elem {
        ElemType::I8 | ElemType::U8 => cast(cx, x, ElemType::I32),
        _ => Ok(x.clone()),
    }
}

fn fold(t: &HostTensor, lo: &Bound, hi: &Bound) -> HostTensor {
    let get = |b: &Bound, d: f64| match b {
        Bound::Known(v) => *v,
        _ => d,
    };
    let (l, h) = (get(lo, f64::NEG_INFINITY), get(hi, f64::INFINITY));
    if t.elem.is_float() {
        let v: Vec<f64> = t.to_f64s().into_iter().map(|x| x.max(l).min(h)).collect();
        return HostTensor::from_f64s(t.elem, t.shape.clone(), &v);
    }
    let v: Vec<i64> = t
        .to_i64s()
        .into_iter()
        .map(|x| {
            let mut y = x;
            if (y as f64) < l {
                y = l as i64;
            }
            if (y as f64) > h {
                y = h as i64;
            }
            y
        })
        .collect();
    HostTensor::from_i64s(t.elem, t.shape.clone(), &v)
}
