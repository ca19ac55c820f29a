//! Indexing: `Gather`, `GatherElements`, `GatherND`, `ScatterElements` (and the old
//! `Scatter`), `ScatterND`, `Compress`, `OneHot`. Constant indices are checked and their
//! negative values counted from the end on the host; indices the graph computes get the same
//! treatment in the graph (`where(i < 0, i + size, i)`), as WebNN leaves negative indices
//! implementation-defined.

use super::host::{checked_count, fold_of, map_index, normalize_indices, strides, take};
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util::{self, one};
use crate::tensor::{ElemType, HostTensor};
use crate::value::{Operand, Value};
use serde_json::Value as Json;
use std::rc::Rc;

/// The indices must be int32 or int64.
pub(super) fn int_indices(v: &Value, what: &str) -> OpResult<()> {
    if !matches!(v.elem(), ElemType::I32 | ElemType::I64) {
        bail!(
            "{what} are {}; ONNX and WebNN take int32 or int64 indices",
            v.elem()
        );
    }
    Ok(())
}

/// Constant indices as an int32 (int64 for sizes beyond int32) graph constant.
pub(super) fn index_constant(
    cx: &mut Cx,
    shape: &[u32],
    v: &[usize],
    bound: u64,
) -> OpResult<Operand> {
    let elem = if bound > i32::MAX as u64 {
        ElemType::I64
    } else {
        ElemType::I32
    };
    let v: Vec<i64> = v.iter().map(|&i| i as i64).collect();
    cx.const_operand(&Rc::new(HostTensor::from_i64s(elem, shape.to_vec(), &v)))
}

/// `where(i < 0, i + bound, i)` for indices the graph computes (`bound` broadcasts).
pub(super) fn wrap_negative(cx: &mut Cx, i: &Operand, bound: &Operand) -> OpResult<Operand> {
    let zero = cx.scalar(i.elem, 0.0)?;
    let neg = util::binary(cx, "lesser", i, &zero, ElemType::Bool)?;
    let up = util::binary(cx, "add", i, bound, i.elem)?;
    Ok(cx.emit("where", &[&neg, &up, i], vec![], i.elem, i.shape.clone()))
}

/// An empty result: a host value (WebNN has no empty operands).
pub(super) fn empty(elem: ElemType, shape: Vec<u32>) -> Vec<Value> {
    vec![Value::constant(HostTensor::from_i64s(elem, shape, &[]))]
}

/// `Gather` along `axis` (default 0).
pub(crate) fn gather(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let idx = n.input(1)?;
    int_indices(idx, "the indices")?;
    if x.rank() == 0 {
        bail!("the data is a scalar; Gather needs rank 1 or more");
    }
    let a = util::axis(n.attrs.int_or("axis", 0)?, x.rank())?;
    let d = x.shape()[a];
    let mut out = x.shape()[..a].to_vec();
    out.extend_from_slice(idx.shape());
    out.extend_from_slice(&x.shape()[a + 1..]);
    let Some(it) = idx.as_const() else {
        if checked_count(&out)? == 0 {
            return Ok(empty(x.elem(), out));
        }
        // the indices in one dimension (Chromium limits the ranks of the comparison)
        let xo = cx.operand(x)?;
        let io = cx.operand(idx)?;
        let count = checked_count(idx.shape())? as u32;
        let io = util::reshape(cx, &io, vec![count]);
        let bound = cx.scalar(io.elem, f64::from(d))?;
        let io = wrap_negative(cx, &io, &bound)?;
        let mut flat = x.shape()[..a].to_vec();
        flat.push(count);
        flat.extend_from_slice(&x.shape()[a + 1..]);
        let picked = cx.emit(
            "gather",
            &[&xo, &io],
            vec![("axis", Json::from(a))],
            x.elem(),
            flat,
        );
        return Ok(one(util::reshape(cx, &picked, out)));
    };
    let norm = normalize_indices(&it.to_i64s(), d, "the indices")?;
    if let Some(t) = fold_of(x, &out) {
        let st = strides(x.shape());
        let ist = strides(idx.shape());
        let q = idx.rank();
        let src = map_index(&out, |o| {
            let pos: usize = (0..q).map(|j| o[a + j] * ist[j]).sum();
            let head: usize = (0..a).map(|j| o[j] * st[j]).sum();
            let tail: usize = (a + 1..x.rank()).map(|j| o[j + q - 1] * st[j]).sum();
            head + norm[pos] * st[a] + tail
        });
        return Ok(vec![Value::constant(take(t, out, &src))]);
    }
    if checked_count(&out)? == 0 {
        return Ok(empty(x.elem(), out));
    }
    let xo = cx.operand(x)?;
    let io = index_constant(cx, idx.shape(), &norm, u64::from(d))?;
    Ok(one(cx.emit(
        "gather",
        &[&xo, &io],
        vec![("axis", Json::from(a))],
        x.elem(),
        out,
    )))
}

/// `GatherElements` along `axis` (default 0).
pub(crate) fn gather_elements(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let idx = n.input(1)?;
    int_indices(idx, "the indices")?;
    let a = util::axis(n.attrs.int_or("axis", 0)?, x.rank())?;
    if idx.rank() != x.rank() {
        bail!(
            "the indices have rank {} but the data has rank {}; they must match",
            idx.rank(),
            x.rank()
        );
    }
    let d = x.shape()[a];
    let out = idx.shape().to_vec();
    let opts = || vec![("axis", Json::from(a))];
    let Some(it) = idx.as_const() else {
        return gather_elements_computed(cx, x, idx, a);
    };
    let norm = normalize_indices(&it.to_i64s(), d, "the indices")?;
    if let Some(t) = fold_of(x, &out) {
        let st = strides(x.shape());
        let mut k = 0;
        let src = map_index(&out, |o| {
            let s: usize = (0..o.len())
                .map(|j| if j == a { norm[k] } else { o[j] } * st[j])
                .sum();
            k += 1;
            s
        });
        return Ok(vec![Value::constant(take(t, out, &src))]);
    }
    if checked_count(&out)? == 0 {
        return Ok(empty(x.elem(), out));
    }
    let xo = cx.operand(x)?;
    let io = index_constant(cx, idx.shape(), &norm, u64::from(d))?;
    Ok(one(cx.emit(
        "gatherElements",
        &[&xo, &io],
        opts(),
        x.elem(),
        out,
    )))
}

/// `GatherElements` of indices the graph computes, as a `gather` from the data flattened
/// (Chromium's gatherElements takes constant indices only, and this is exact): the flat index
/// is `i * stride[axis] + base`, `base` the offset of every other coordinate (a constant).
fn gather_elements_computed(cx: &mut Cx, x: &Value, idx: &Value, a: usize) -> OpResult<Vec<Value>> {
    let out = idx.shape().to_vec();
    let total = checked_count(x.shape())?;
    if checked_count(&out)? == 0 {
        return Ok(empty(x.elem(), out));
    }
    let xo = cx.operand(x)?;
    let flat_x = util::reshape(cx, &xo, vec![total as u32]);
    let io = index_type(cx, idx, total)?;
    // one dimension all along (Chromium limits ranks)
    let count = checked_count(&out)? as u32;
    let io = util::reshape(cx, &io, vec![count]);
    let bound = cx.scalar(io.elem, f64::from(x.shape()[a]))?;
    let io = wrap_negative(cx, &io, &bound)?;
    let st = strides(x.shape());
    let base = map_index(&out, |o| {
        (0..o.len()).filter(|&j| j != a).map(|j| o[j] * st[j]).sum()
    });
    let base = index_constant(cx, &[count], &base, total)?;
    let scaled = if st[a] == 1 {
        io
    } else {
        let stride = cx.scalar(io.elem, st[a] as f64)?;
        util::binary(cx, "mul", &io, &stride, io.elem)?
    };
    let flat = util::binary(cx, "add", &scaled, &base, scaled.elem)?;
    let picked = cx.emit(
        "gather",
        &[&flat_x, &flat],
        vec![("axis", Json::from(0))],
        x.elem(),
        vec![count],
    );
    Ok(one(util::reshape(cx, &picked, out)))
}

/// Computed indices as an operand of int32 when every index below `bound` fits it (Chromium's
/// scatters take int32 only), int64 otherwise; indices out of range are undefined in ONNX and
/// WebNN alike.
pub(super) fn index_type(cx: &mut Cx, idx: &Value, bound: u64) -> OpResult<Operand> {
    let io = cx.operand(idx)?;
    let elem = if bound > i32::MAX as u64 {
        ElemType::I64
    } else {
        ElemType::I32
    };
    util::cast(cx, &io, elem)
}

/// The index tuples of GatherND/ScatterND: each component normalized against its axis.
pub(super) fn nd_tuples(it: &HostTensor, dims: &[u32]) -> OpResult<Vec<usize>> {
    let k = dims.len();
    let v = it.to_i64s();
    let mut out = Vec::with_capacity(v.len());
    for (j, &i) in v.iter().enumerate() {
        out.extend(normalize_indices(&[i], dims[j % k.max(1)], "the indices")?);
    }
    Ok(out)
}

/// `GatherND` (`batch_dims` from opset 12: 0 only, unless everything is constant).
pub(crate) fn gather_nd(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let idx = n.input(1)?;
    int_indices(idx, "the indices")?;
    let b = n.attrs.int_or("batch_dims", 0)?;
    let (r, q) = (x.rank(), idx.rank());
    let Some(&k) = idx.shape().last() else {
        bail!("the indices are a scalar; GatherND needs indices of rank 1 or more");
    };
    let k = k as usize;
    if b < 0 || b as usize >= q.min(r) || b as usize + k > r {
        bail!(
            "batch_dims {b} with indices {:?} does not fit data {:?}",
            idx.shape(),
            x.shape()
        );
    }
    let b = b as usize;
    if x.shape()[..b] != idx.shape()[..b] {
        bail!(
            "the first batch_dims={b} dimensions of data {:?} and indices {:?} differ",
            x.shape(),
            idx.shape()
        );
    }
    let mut out = idx.shape()[..q - 1].to_vec();
    out.extend_from_slice(&x.shape()[b + k..]);
    let dims = &x.shape()[b..b + k];
    if let Some(it) = idx.as_const() {
        let tuples = nd_tuples(it, dims)?;
        if let Some(t) = fold_of(x, &out) {
            let st = strides(x.shape());
            let ist = strides(&idx.shape()[..q - 1]);
            let src = map_index(&out, |o| {
                let pos: usize = (0..q - 1).map(|j| o[j] * ist[j]).sum();
                let batch: usize = (0..b).map(|j| o[j] * st[j]).sum();
                let picked: usize = (0..k).map(|j| tuples[pos * k + j] * st[b + j]).sum();
                let rest: usize = (b + k..r).map(|j| o[j - b - k + q - 1] * st[j]).sum();
                batch + picked + rest
            });
            return Ok(vec![Value::constant(take(t, out, &src))]);
        }
        if b != 0 {
            bail!("batch_dims {b} is not supported for data the graph computes: WebNN's gatherND has no batch dimensions (only batch_dims=0 converts)");
        }
        if checked_count(&out)? == 0 {
            return Ok(empty(x.elem(), out));
        }
        let xo = cx.operand(x)?;
        let bound = dims.iter().map(|&d| u64::from(d)).max().unwrap_or(0);
        let io = index_constant(cx, idx.shape(), &tuples, bound)?;
        return Ok(one(cx.emit("gatherND", &[&xo, &io], vec![], x.elem(), out)));
    }
    if b != 0 {
        bail!("batch_dims {b} is not supported: WebNN's gatherND has no batch dimensions (only batch_dims=0 converts)");
    }
    let xo = cx.operand(x)?;
    let io = cx.operand(idx)?;
    let d: Vec<f64> = dims.iter().map(|&d| f64::from(d)).collect();
    let bound = cx.constant_f64(io.elem, vec![k as u32], &d)?;
    let io = wrap_negative(cx, &io, &bound)?;
    Ok(one(cx.emit("gatherND", &[&xo, &io], vec![], x.elem(), out)))
}

/// The `reduction` attribute of the scatters must be `none` (WebNN has no scatter-reduce).
pub(super) fn no_reduction(n: &NodeCx<'_>) -> OpResult<()> {
    let r = n.attrs.string_or("reduction", "none")?;
    if r != "none" {
        bail!("reduction {r:?} is not supported: WebNN's scatter operations replace values only (reduction \"none\")");
    }
    Ok(())
}

pub(crate) use super::scatter::{compress, one_hot, scatter_elements, scatter_nd};
