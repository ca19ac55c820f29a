//! `ScatterElements` (and `Scatter`, its opset 9–10 name), `ScatterND`, `Compress`, `OneHot`.

use super::gather::{
    empty, index_constant, index_type, int_indices, nd_tuples, no_reduction, wrap_negative,
};
use super::host::{checked_count, foldable, join, map_index, normalize_indices, strides, take};
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util::{self, one};
use crate::tensor::{ElemType, HostTensor};
use crate::value::Value;
use serde_json::Value as Json;

/// `data` with element `dest[k]` replaced by `updates`' element `k`, on the host.
fn scatter_host(data: &HostTensor, updates: &HostTensor, dest: &[usize]) -> HostTensor {
    let total = data.element_count() as usize;
    let mut src: Vec<usize> = (0..total).collect();
    for (k, &d) in dest.iter().enumerate() {
        src[d] = total + k;
    }
    take(&join(&[data, updates]), data.shape.clone(), &src)
}

/// The data and updates of a scatter, checked to share a type.
fn data_updates<'v>(n: &'v NodeCx<'_>) -> OpResult<(&'v Value, &'v Value, &'v Value)> {
    let (x, idx, upd) = (n.input(0)?, n.input(1)?, n.input(2)?);
    util::same_type(x, upd)?;
    int_indices(idx, "the indices")?;
    no_reduction(n)?;
    Ok((x, idx, upd))
}

/// `ScatterElements` along `axis` (default 0), reduction `none` only.
pub(crate) fn scatter_elements(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, idx, upd) = data_updates(n)?;
    let a = util::axis(n.attrs.int_or("axis", 0)?, x.rank())?;
    if idx.shape() != upd.shape() || idx.rank() != x.rank() {
        bail!(
            "indices {:?} and updates {:?} must have one shape, of the data's rank {}",
            idx.shape(),
            upd.shape(),
            x.rank()
        );
    }
    let d = x.shape()[a];
    let opts = || vec![("axis", Json::from(a))];
    let Some(it) = idx.as_const() else {
        return scatter_elements_computed(cx, x, idx, upd, a);
    };
    let norm = normalize_indices(&it.to_i64s(), d, "the indices")?;
    if let (Some(t), Some(u)) = (x.as_const(), upd.as_const()) {
        if foldable(x.shape()) {
            let st = strides(x.shape());
            let mut k = 0;
            let dest = map_index(idx.shape(), |o| {
                let s: usize = (0..o.len())
                    .map(|j| if j == a { norm[k] } else { o[j] } * st[j])
                    .sum();
                k += 1;
                s
            });
            return Ok(vec![Value::constant(scatter_host(t, u, &dest))]);
        }
    }
    if checked_count(idx.shape())? == 0 {
        return Ok(vec![x.clone()]);
    }
    let (xo, uo) = (cx.operand(x)?, cx.operand(upd)?);
    let io = index_constant(cx, idx.shape(), &norm, u64::from(d))?;
    Ok(one(cx.emit(
        "scatterElements",
        &[&xo, &io, &uo],
        opts(),
        x.elem(),
        x.shape().to_vec(),
    )))
}

/// `ScatterElements` of indices the graph computes, as a `scatterND` of whole coordinate
/// tuples (Chromium's scatterElements takes constant indices only, and this is exact): each
/// element's tuple is its own position with the index at `axis`, `position + i * e_axis`.
fn scatter_elements_computed(
    cx: &mut Cx,
    x: &Value,
    idx: &Value,
    upd: &Value,
    a: usize,
) -> OpResult<Vec<Value>> {
    if checked_count(idx.shape())? == 0 {
        return Ok(vec![x.clone()]);
    }
    let (xo, uo) = (cx.operand(x)?, cx.operand(upd)?);
    let r = x.rank();
    let most = x.shape().iter().map(|&d| u64::from(d)).max().unwrap_or(0);
    let io = index_type(cx, idx, most)?;
    let bound = cx.scalar(io.elem, f64::from(x.shape()[a]))?;
    let io = wrap_negative(cx, &io, &bound)?;
    let mut col = io.shape.clone();
    col.push(1);
    let io = util::reshape(cx, &io, col);
    let mut tuples_shape = idx.shape().to_vec();
    tuples_shape.push(r as u32);
    let mut positions = Vec::new();
    map_index(idx.shape(), |o| {
        positions.extend((0..r).map(|j| if j == a { 0 } else { o[j] }));
        0
    });
    let positions = index_constant(cx, &tuples_shape, &positions, most)?;
    let unit: Vec<f64> = (0..r).map(|j| f64::from(u8::from(j == a))).collect();
    let unit = cx.constant_f64(io.elem, vec![r as u32], &unit)?;
    let along = util::binary(cx, "mul", &io, &unit, io.elem)?;
    let tuples = util::binary(cx, "add", &positions, &along, io.elem)?;
    Ok(one(cx.emit(
        "scatterND",
        &[&xo, &tuples, &uo],
        vec![],
        x.elem(),
        x.shape().to_vec(),
    )))
}

/// `ScatterND`, reduction `none` only.
pub(crate) fn scatter_nd(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, idx, upd) = data_updates(n)?;
    let q = idx.rank();
    let Some(&k) = idx.shape().last() else {
        bail!("the indices are a scalar; ScatterND needs indices of rank 1 or more");
    };
    let k = k as usize;
    if k > x.rank() {
        bail!(
            "index tuples of length {k} are longer than the data's rank {}",
            x.rank()
        );
    }
    let mut want = idx.shape()[..q - 1].to_vec();
    want.extend_from_slice(&x.shape()[k..]);
    if upd.shape() != want.as_slice() {
        bail!(
            "the updates have shape {:?}; indices {:?} into data {:?} need {want:?}",
            upd.shape(),
            idx.shape(),
            x.shape()
        );
    }
    let dims = &x.shape()[..k];
    let Some(it) = idx.as_const() else {
        let (xo, uo) = (cx.operand(x)?, cx.operand(upd)?);
        let most = dims.iter().map(|&d| u64::from(d)).max().unwrap_or(0);
        let io = index_type(cx, idx, most)?;
        let d: Vec<f64> = dims.iter().map(|&d| f64::from(d)).collect();
        let bound = cx.constant_f64(io.elem, vec![k as u32], &d)?;
        let io = wrap_negative(cx, &io, &bound)?;
        return Ok(one(cx.emit(
            "scatterND",
            &[&xo, &io, &uo],
            vec![],
            x.elem(),
            x.shape().to_vec(),
        )));
    };
    let tuples = nd_tuples(it, dims)?;
    if let (Some(t), Some(u)) = (x.as_const(), upd.as_const()) {
        if foldable(x.shape()) {
            let st = strides(x.shape());
            let inner: usize = x.shape()[k..].iter().map(|&d| d as usize).product();
            let count = tuples.len() / k.max(1);
            let mut dest = Vec::with_capacity(count * inner);
            for p in 0..count {
                let base: usize = (0..k).map(|j| tuples[p * k + j] * st[j]).sum();
                dest.extend((0..inner).map(|i| base + i));
            }
            return Ok(vec![Value::constant(scatter_host(t, u, &dest))]);
        }
    }
    if checked_count(idx.shape())? == 0 {
        return Ok(vec![x.clone()]);
    }
    let (xo, uo) = (cx.operand(x)?, cx.operand(upd)?);
    let bound = dims.iter().map(|&d| u64::from(d)).max().unwrap_or(0);
    let io = index_constant(cx, idx.shape(), &tuples, bound)?;
    Ok(one(cx.emit(
        "scatterND",
        &[&xo, &io, &uo],
        vec![],
        x.elem(),
        x.shape().to_vec(),
    )))
}

/// `Compress` with a constant condition: a `gather` of the kept positions (the input
/// flattened when there is no `axis`).
pub(crate) fn compress(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let cond = n
        .const_input(1, "the condition")?
        .ok_or("the condition (input 1) is required")?;
    let (x, a) = match n.attrs.int("axis")? {
        Some(a) => (x.clone(), util::axis(a, x.rank())?),
        None => {
            let flat = vec![checked_count(x.shape())?.min(u64::from(u32::MAX)) as u32];
            (super::layout::relayout(cx, x, flat)?, 0)
        }
    };
    let d = x.shape()[a];
    let flags = cond.to_i64s();
    if flags.len() > d as usize {
        bail!(
            "the condition has {} entries but the axis has size {d}",
            flags.len()
        );
    }
    let kept: Vec<i64> = (0..flags.len())
        .filter(|&i| flags[i] != 0)
        .map(|i| i as i64)
        .collect();
    let mut out = x.shape().to_vec();
    out[a] = kept.len() as u32;
    if let Some(t) = x.as_const().filter(|_| foldable(&out)) {
        let st = strides(&t.shape);
        let src = map_index(&out, |o| {
            (0..o.len())
                .map(|j| if j == a { kept[o[j]] as usize } else { o[j] } * st[j])
                .sum()
        });
        return Ok(vec![Value::constant(take(t, out, &src))]);
    }
    if checked_count(&out)? == 0 {
        return Ok(empty(x.elem(), out));
    }
    let xo = cx.operand(&x)?;
    let kept: Vec<usize> = kept.iter().map(|&i| i as usize).collect();
    let io = index_constant(cx, &[kept.len() as u32], &kept, u64::from(d))?;
    Ok(one(cx.emit(
        "gather",
        &[&xo, &io],
        vec![("axis", Json::from(a))],
        x.elem(),
        out,
    )))
}

/// `OneHot`: `equal(indices, range(depth))` along `axis` selects `values[1]` (on) or
/// `values[0]` (off) by a `gather`; negative indices count from the end, as ONNX says.
pub(crate) fn one_hot(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let idx = n.input(0)?;
    let depth = n
        .const_input(1, "the depth")?
        .ok_or("the depth (input 1) is required")?;
    let vals = n.input(2)?;
    let depth = *super::host::scalar_of(depth, "the depth")?
        .to_i64s()
        .first()
        .unwrap_or(&0);
    let depth = super::host::dim(depth, "the depth")?;
    if vals.shape() != [2] {
        bail!(
            "the values have shape {:?}; OneHot takes [off, on] of shape [2]",
            vals.shape()
        );
    }
    let r = idx.rank();
    let a = util::axis(n.attrs.int_or("axis", -1)?, r + 1)?;
    let mut out = idx.shape().to_vec();
    out.insert(a, depth);
    if depth == 0 || checked_count(&out)? == 0 {
        return Ok(empty(vals.elem(), out));
    }
    let mut io = cx.operand(idx)?;
    if !matches!(io.elem, ElemType::I32 | ElemType::I64) {
        io = util::cast(cx, &io, ElemType::I64)?;
    }
    let bound = cx.scalar(io.elem, f64::from(depth))?;
    let io = wrap_negative(cx, &io, &bound)?;
    let mut col = io.shape.clone();
    col.insert(a, 1);
    let io = util::reshape(cx, &io, col);
    let mut rshape = vec![1; r + 1];
    rshape[a] = depth;
    let range: Vec<f64> = (0..depth).map(f64::from).collect();
    let ar = cx.constant_f64(io.elem, rshape, &range)?;
    let eq = util::binary(cx, "equal", &io, &ar, ElemType::Bool)?;
    let sel = util::cast(cx, &eq, ElemType::I32)?;
    let vo = cx.operand(vals)?;
    Ok(one(cx.emit(
        "gather",
        &[&vo, &sel],
        vec![("axis", Json::from(0))],
        vo.elem,
        out,
    )))
}
