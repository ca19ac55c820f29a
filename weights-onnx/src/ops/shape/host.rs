//! Host-side helpers: checked shape arithmetic and moving elements of host tensors by index
//! (as bytes, so integers stay exact), which every folding of this family is built on.

use crate::error::{bail, OpResult};
use crate::ops::elementwise::FOLD_LIMIT;
use crate::tensor::{ElemType, HostTensor};
use crate::value::Value;
use bytes::BytesMut;

/// A dimension computed from ONNX integers, checked to fit WebNN's `u32`.
pub(super) fn dim(v: i64, what: &str) -> OpResult<u32> {
    match u32::try_from(v) {
        Ok(d) => Ok(d),
        Err(_) if v < 0 => bail!("{what} is {v}, a negative dimension"),
        Err(_) => bail!("{what} is {v}, which does not fit a WebNN dimension (u32)"),
    }
}

/// The element count of `shape`, or an error when it overflows.
pub(super) fn checked_count(shape: &[u32]) -> OpResult<u64> {
    let mut n = 1u64;
    for &d in shape {
        n = match n.checked_mul(u64::from(d)) {
            Some(v) => v,
            None => bail!("shape {shape:?} has more elements than fit 64 bits"),
        };
    }
    Ok(n)
}

/// Whether a result of `shape` is small enough to compute on the host.
pub(super) fn foldable(shape: &[u32]) -> bool {
    checked_count(shape).is_ok_and(|n| n <= FOLD_LIMIT)
}

/// The host value of `v` when it has one and a result of `out` folds.
pub(super) fn fold_of<'v>(v: &'v Value, out: &[u32]) -> Option<&'v HostTensor> {
    v.as_const().filter(|_| foldable(out))
}

/// Row-major strides of `shape`, in elements.
pub(super) fn strides(shape: &[u32]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1] as usize;
    }
    s
}

/// For every element of `shape` in row-major order, `f(its index)`.
pub(super) fn map_index(shape: &[u32], mut f: impl FnMut(&[usize]) -> usize) -> Vec<usize> {
    let total: usize = shape.iter().map(|&d| d as usize).product();
    let mut out = Vec::with_capacity(total);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..total {
        out.push(f(&index));
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] as usize {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// A tensor of `shape` whose element `k` is element `src[k]` of `t` (bytes copied as they
/// are; 4-bit types unpacked and packed again).
pub(super) fn take(t: &HostTensor, shape: Vec<u32>, src: &[usize]) -> HostTensor {
    if t.elem.bits() < 8 {
        let v = t.to_i64s();
        let picked: Vec<i64> = src.iter().map(|&i| v[i]).collect();
        return HostTensor::from_i64s(t.elem, shape, &picked);
    }
    let w = (t.elem.bits() / 8) as usize;
    let mut out = BytesMut::with_capacity(src.len() * w);
    for &i in src {
        out.extend_from_slice(&t.bytes[i * w..(i + 1) * w]);
    }
    HostTensor {
        name: String::new(),
        elem: t.elem,
        shape,
        bytes: out.freeze(),
    }
}

/// The elements of every part, one after another, as a 1-D tensor (same element type).
pub(super) fn join(parts: &[&HostTensor]) -> HostTensor {
    let elem = parts.first().map_or(ElemType::F32, |t| t.elem);
    let n: u64 = parts.iter().map(|t| t.element_count()).sum();
    if elem.bits() < 8 {
        let v: Vec<i64> = parts.iter().flat_map(|t| t.to_i64s()).collect();
        return HostTensor::from_i64s(elem, vec![n as u32], &v);
    }
    let mut out = BytesMut::new();
    for t in parts {
        out.extend_from_slice(&t.bytes);
    }
    HostTensor {
        name: String::new(),
        elem,
        shape: vec![n as u32],
        bytes: out.freeze(),
    }
}

/// An int64 tensor.
pub(super) fn ints(shape: Vec<u32>, v: &[i64]) -> HostTensor {
    HostTensor::from_i64s(ElemType::I64, shape, v)
}

/// A host tensor of one element (`what` names it in the error).
pub(super) fn scalar_of<'t>(t: &'t HostTensor, what: &str) -> OpResult<&'t HostTensor> {
    if t.element_count() != 1 {
        bail!("{what} must hold one value, but has shape {:?}", t.shape);
    }
    Ok(t)
}

/// Integer indices into a dimension of `size`, negative ones counted from the end, checked.
pub(super) fn normalize_indices(v: &[i64], size: u32, what: &str) -> OpResult<Vec<usize>> {
    let n = i64::from(size);
    v.iter()
        .map(|&i| {
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                bail!(
                    "{what} holds {i}, out of range for a dimension of {size} (valid: {} to {})",
                    -n,
                    n - 1
                );
            }
            Ok(j as usize)
        })
        .collect()
}

/// `t` with its axes permuted: output axis `i` is input axis `perm[i]`.
pub(super) fn permute(t: &HostTensor, perm: &[u32]) -> HostTensor {
    let st = strides(&t.shape);
    let shape: Vec<u32> = perm.iter().map(|&p| t.shape[p as usize]).collect();
    let src = map_index(&shape, |idx| {
        idx.iter()
            .zip(perm)
            .map(|(&i, &p)| i * st[p as usize])
            .sum()
    });
    take(t, shape, &src)
}
