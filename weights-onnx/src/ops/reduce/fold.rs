//! Reductions of host values (shape arithmetic, mostly): the same results the graph computes,
//! in `f64` for floats and `i64` for integers.

use super::reduced_shape;
use crate::tensor::{ElemType, HostTensor};

/// For each element of `shape` (row-major), the index of its slot in the reduced output.
fn slots(shape: &[u32], axes: &[u32]) -> (Vec<usize>, usize) {
    let kept = reduced_shape(shape, axes, true);
    let out_len: usize = kept.iter().map(|&d| d as usize).product();
    let mut strides = vec![0usize; shape.len()];
    let mut s = 1usize;
    for i in (0..shape.len()).rev() {
        strides[i] = if axes.contains(&(i as u32)) { 0 } else { s };
        s *= kept[i] as usize;
    }
    let total: usize = shape.iter().map(|&d| d as usize).product();
    let mut out = Vec::with_capacity(total);
    let mut index = vec![0u32; shape.len()];
    for _ in 0..total {
        out.push(
            index
                .iter()
                .zip(&strides)
                .map(|(&i, &st)| i as usize * st)
                .sum(),
        );
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    (out, out_len)
}

/// `op_type` (an ONNX reduction) of `t` over `axes`.
pub(super) fn reduce(op_type: &str, t: &HostTensor, axes: &[u32], keep: bool) -> HostTensor {
    let shape = reduced_shape(&t.shape, axes, keep);
    let (slot, len) = slots(&t.shape, axes);
    let integer =
        !t.elem.is_float() && !matches!(op_type, "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp");
    if integer {
        let v = reduce_ints(op_type, &t.to_i64s(), &slot, len);
        return HostTensor::from_i64s(t.elem, shape, &v);
    }
    let v = reduce_floats(op_type, &t.to_f64s(), &slot, len);
    let elem = if t.elem == ElemType::Bool {
        ElemType::Bool
    } else {
        t.elem
    };
    HostTensor::from_f64s(elem, shape, &v)
}

fn reduce_ints(op_type: &str, values: &[i64], slot: &[usize], len: usize) -> Vec<i64> {
    let init = match op_type {
        "ReduceProd" => 1,
        "ReduceMax" => i64::MIN,
        "ReduceMin" => i64::MAX,
        _ => 0,
    };
    let mut acc = vec![init; len];
    let mut n = vec![0i64; len];
    for (&x, &s) in values.iter().zip(slot) {
        let a = &mut acc[s];
        n[s] += 1;
        *a = match op_type {
            "ReduceProd" => a.wrapping_mul(x),
            "ReduceMax" => (*a).max(x),
            "ReduceMin" => (*a).min(x),
            "ReduceL1" => a.wrapping_add(x.wrapping_abs()),
            "ReduceSumSquare" => a.wrapping_add(x.wrapping_mul(x)),
            _ => a.wrapping_add(x),
        };
    }
    if op_type == "ReduceMean" {
        for (a, &k) in acc.iter_mut().zip(&n) {
            *a = if k == 0 { 0 } else { *a / k };
        }
    }
    acc
}

fn reduce_floats(op_type: &str, values: &[f64], slot: &[usize], len: usize) -> Vec<f64> {
    let init = match op_type {
        "ReduceProd" => 1.0,
        "ReduceMax" => f64::NEG_INFINITY,
        "ReduceMin" => f64::INFINITY,
        _ => 0.0,
    };
    let mut acc = vec![init; len];
    let mut n = vec![0u64; len];
    for (&x, &s) in values.iter().zip(slot) {
        let a = &mut acc[s];
        n[s] += 1;
        *a = match op_type {
            "ReduceProd" => *a * x,
            "ReduceMax" => a.max(x),
            "ReduceMin" => a.min(x),
            "ReduceL1" => *a + x.abs(),
            "ReduceL2" | "ReduceSumSquare" => *a + x * x,
            "ReduceLogSumExp" => *a + x.exp(),
            _ => *a + x,
        };
    }
    for (a, &k) in acc.iter_mut().zip(&n) {
        *a = match op_type {
            "ReduceMean" => *a / k as f64,
            "ReduceL2" => a.sqrt(),
            "ReduceLogSum" | "ReduceLogSumExp" => a.ln(),
            _ => *a,
        };
    }
    acc
}

/// The index of the largest (`max`) or smallest value along `axis`, the first of equal ones
/// (the last with `last`).
pub(super) fn arg(t: &HostTensor, axis: usize, max: bool, last: bool) -> Vec<i64> {
    if t.elem.is_float() {
        arg_of(&t.to_f64s(), &t.shape, axis, max, last)
    } else {
        arg_of(&t.to_i64s(), &t.shape, axis, max, last)
    }
}

fn arg_of<T: PartialOrd + Copy>(
    values: &[T],
    shape: &[u32],
    axis: usize,
    max: bool,
    last: bool,
) -> Vec<i64> {
    let outer: usize = shape[..axis].iter().map(|&d| d as usize).product();
    let n = shape[axis] as usize;
    let inner: usize = shape[axis + 1..].iter().map(|&d| d as usize).product();
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| values[(o * n + k) * inner + i];
            let mut best = 0usize;
            for k in 1..n {
                let (v, b) = (at(k), at(best));
                let better = if max { v > b } else { v < b };
                if better || (last && v == b) {
                    best = k;
                }
            }
            out.push(best as i64);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_sum_and_prod_of_shapes() {
        let t = HostTensor::from_i64s(ElemType::I64, vec![2, 3], &[1, 2, 3, 4, 5, 6]);
        let s = reduce("ReduceSum", &t, &[1], false);
        assert_eq!((s.shape.clone(), s.to_i64s()), (vec![2], vec![6, 15]));
        let p = reduce("ReduceProd", &t, &[0, 1], true);
        assert_eq!((p.shape.clone(), p.to_i64s()), (vec![1, 1], vec![720]));
        let m = reduce("ReduceMax", &t, &[0], true);
        assert_eq!(m.to_i64s(), [4, 5, 6]);
    }

    #[test]
    fn folds_floats_and_empty_sets() {
        let t = HostTensor::from_f64s(ElemType::F32, vec![2, 2], &[1.0, -2.0, 3.0, 4.0]);
        assert_eq!(reduce("ReduceL1", &t, &[1], false).to_f64s(), [3.0, 7.0]);
        assert_eq!(reduce("ReduceMean", &t, &[0], false).to_f64s(), [2.0, 1.0]);
        let e = HostTensor::from_f64s(ElemType::F32, vec![2, 0], &[]);
        assert_eq!(reduce("ReduceSum", &e, &[1], false).to_f64s(), [0.0, 0.0]);
    }

    #[test]
    fn arg_picks_first_or_last() {
        let t = HostTensor::from_f64s(ElemType::F32, vec![2, 3], &[1.0, 3.0, 3.0, 0.0, 0.0, -1.0]);
        assert_eq!(arg(&t, 1, true, false), [1, 0]);
        assert_eq!(arg(&t, 1, true, true), [2, 1]);
        assert_eq!(arg(&t, 0, false, false), [1, 1, 1]);
    }
}
