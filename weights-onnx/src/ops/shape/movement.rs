//! Data movement along axes: `Transpose`, `Concat`, `Split`, `Slice`, `Expand`, `Tile`, `Pad`.

use super::host::{self, checked_count, dim, fold_of, foldable, join, map_index, permute, take};
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::elementwise::broadcast_indices;
use crate::ops::util::{self, one};
use crate::tensor::HostTensor;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// `Transpose` by `perm` (default: the axes reversed).
pub(crate) fn transpose(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let r = x.rank();
    let perm: Vec<u32> = match n.attrs.ints("perm")? {
        Some(p) => {
            let mut seen = vec![false; r];
            for &a in &p {
                match usize::try_from(a).ok().filter(|&a| a < r) {
                    Some(a) if !seen[a] => seen[a] = true,
                    _ => bail!(
                        "perm {p:?} is not a permutation of the axes 0..{r} of shape {:?}",
                        x.shape()
                    ),
                }
            }
            if p.len() != r {
                bail!(
                    "perm {p:?} has {} entries but the input has rank {r}",
                    p.len()
                );
            }
            p.iter().map(|&a| a as u32).collect()
        }
        None => (0..r as u32).rev().collect(),
    };
    if let Some(t) = fold_of(x, x.shape()) {
        return Ok(vec![Value::constant(permute(t, &perm))]);
    }
    let o = cx.operand(x)?;
    Ok(one(util::transpose(cx, &o, &perm)))
}

/// `Concat` along `axis` (required; negative from opset 11).
pub(crate) fn concat(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let inputs: Vec<&Value> = n.inputs.iter().flatten().collect();
    let Some(first) = inputs.first() else {
        bail!("has no inputs (at least one is required)");
    };
    let Some(a) = n.attrs.int("axis")? else {
        bail!("the axis attribute is required");
    };
    let a = util::axis(a, first.rank())?;
    let mut out = first.shape().to_vec();
    out[a] = 0;
    for v in &inputs {
        util::same_type(first, v)?;
        let s = v.shape();
        let same = s.len() == out.len() && (0..s.len()).all(|i| i == a || s[i] == out[i]);
        if !same {
            bail!(
                "input shapes {:?} do not agree except on axis {a}",
                inputs.iter().map(|v| v.shape()).collect::<Vec<_>>()
            );
        }
        out[a] = dim(
            i64::from(out[a]) + i64::from(s[a]),
            "the concatenated dimension",
        )?;
    }
    if foldable(&out) && inputs.iter().all(|v| v.as_const().is_some()) {
        let parts: Vec<&HostTensor> = inputs.iter().filter_map(|v| v.as_const()).collect();
        return Ok(vec![Value::constant(concat_host(&parts, a, out))]);
    }
    let nonempty: Vec<&&Value> = inputs
        .iter()
        .filter(|v| checked_count(v.shape()).is_ok_and(|c| c > 0))
        .collect();
    if let [only] = nonempty.as_slice() {
        return Ok(vec![(**only).clone()]);
    }
    let mut ops = Vec::with_capacity(nonempty.len());
    for v in nonempty {
        ops.push(cx.operand(v)?);
    }
    let refs: Vec<&Operand> = ops.iter().collect();
    let elem = first.elem();
    Ok(one(cx.emit(
        "concat",
        &refs,
        vec![("axis", Json::from(a))],
        elem,
        out,
    )))
}

fn concat_host(parts: &[&HostTensor], a: usize, out: Vec<u32>) -> HostTensor {
    let all = join(parts);
    let outer: usize = out[..a].iter().map(|&d| d as usize).product();
    let inner: usize = out[a + 1..].iter().map(|&d| d as usize).product();
    let mut base = Vec::with_capacity(parts.len());
    let mut acc = 0usize;
    for p in parts {
        base.push(acc);
        acc += p.element_count() as usize;
    }
    let mut src = Vec::with_capacity(acc);
    for o in 0..outer {
        for (p, &b) in parts.iter().zip(&base) {
            let slab = p.shape[a] as usize * inner;
            src.extend((0..slab).map(|k| b + o * slab + k));
        }
    }
    take(&all, out, &src)
}

/// The sizes `Split` cuts `d` into: given (attribute `split` before opset 13, input 1
/// since), or `num_outputs` (opset 18) parts of ceil(d / n), or equal parts per output.
fn split_sizes(n: &NodeCx<'_>, d: u32) -> OpResult<Vec<u32>> {
    let given = if n.opset >= 13 {
        n.const_ints(1, "the split sizes")?
    } else {
        n.attrs.ints("split")?
    };
    let sizes: Vec<u32> = match given {
        Some(s) => s
            .iter()
            .map(|&v| dim(v, "a split size"))
            .collect::<OpResult<_>>()?,
        None => {
            let num = n.attrs.int("num_outputs")?;
            let k = match num {
                Some(k) => k,
                None => n.output_count() as i64,
            };
            if k <= 0 || k as usize != n.output_count() {
                bail!(
                    "cannot split into {k} parts: the node has {} outputs",
                    n.output_count()
                );
            }
            let k = k as u32;
            let chunk = if num.is_some() { d.div_ceil(k) } else { d / k };
            if num.is_none() && d % k != 0 {
                bail!("the axis has size {d}, which {k} outputs cannot split equally (give the split sizes)");
            }
            let last = i64::from(d) - i64::from(chunk) * i64::from(k - 1);
            if last < 0 {
                bail!("num_outputs {k} does not fit an axis of size {d}");
            }
            let mut v = vec![chunk; k as usize - 1];
            v.push(last as u32);
            v
        }
    };
    let total: u64 = sizes.iter().map(|&s| u64::from(s)).sum();
    if total != u64::from(d) {
        bail!("the split sizes {sizes:?} add up to {total}, but the axis has size {d}");
    }
    if sizes.len() != n.output_count() {
        bail!(
            "the split makes {} parts but the node has {} outputs",
            sizes.len(),
            n.output_count()
        );
    }
    Ok(sizes)
}

/// `Split` along `axis` (default 0).
pub(crate) fn split(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let a = util::axis(n.attrs.int_or("axis", 0)?, x.rank())?;
    let sizes = split_sizes(n, x.shape()[a])?;
    let part_shape = |s: u32| {
        let mut p = x.shape().to_vec();
        p[a] = s;
        p
    };
    if let Some(t) = fold_of(x, x.shape()) {
        let mut out = Vec::with_capacity(sizes.len());
        let mut start = 0i64;
        for &s in &sizes {
            let spec = axis_spec(x.shape(), a, start, s);
            out.push(Value::constant(slice_host(t, &spec)));
            start += i64::from(s);
        }
        return Ok(out);
    }
    let o = cx.operand(x)?;
    let nonzero: Vec<u32> = sizes.iter().copied().filter(|&s| s > 0).collect();
    let mut made = if nonzero.len() <= 1 {
        // one part (or none: the input is empty) needs no split
        nonzero
            .iter()
            .map(|_| o.clone())
            .collect::<Vec<_>>()
            .into_iter()
    } else {
        let outs = nonzero.iter().map(|&s| (o.elem, part_shape(s))).collect();
        let opts = vec![("splits", u32s(&nonzero)), ("axis", Json::from(a))];
        cx.emit_multi("split", &[&o], opts, outs).into_iter()
    };
    let mut out = Vec::with_capacity(sizes.len());
    for &s in &sizes {
        if s == 0 {
            // an empty part: a host value (WebNN has no empty operands)
            out.push(Value::constant(HostTensor::from_i64s(
                o.elem,
                part_shape(0),
                &[],
            )));
        } else if let Some(p) = made.next() {
            out.push(Value::Operand(p));
        }
    }
    Ok(out)
}

/// One axis's part of a slice: first element, element count, step (negative walks back).
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub begin: i64,
    pub size: u32,
    pub step: i64,
}

/// Every axis whole, except `a` from `start` for `size` elements.
fn axis_spec(shape: &[u32], a: usize, start: i64, size: u32) -> Vec<Span> {
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| match i == a {
            true => Span {
                begin: start,
                size,
                step: 1,
            },
            false => Span {
                begin: 0,
                size: d,
                step: 1,
            },
        })
        .collect()
}

/// A slice of a host value.
fn slice_host(t: &HostTensor, spec: &[Span]) -> HostTensor {
    let st = host::strides(&t.shape);
    let shape: Vec<u32> = spec.iter().map(|s| s.size).collect();
    let src = map_index(&shape, |idx| {
        idx.iter()
            .zip(spec)
            .zip(&st)
            .map(|((&i, s), &stride)| (s.begin + i as i64 * s.step) as usize * stride)
            .sum()
    });
    take(t, shape, &src)
}

/// ONNX's clamping of one axis's `start`, `end`, `step` against size `d`.
fn span(start: i64, end: i64, step: i64, d: u32) -> OpResult<Span> {
    let d = i64::from(d);
    if step == 0 {
        bail!("a step is 0");
    }
    let s = if start < 0 {
        start.saturating_add(d)
    } else {
        start
    };
    let e = if end < 0 { end.saturating_add(d) } else { end };
    if d == 0 {
        return Ok(Span {
            begin: 0,
            size: 0,
            step,
        });
    }
    let (s, size) = if step > 0 {
        let (s, e) = (s.clamp(0, d), e.clamp(0, d));
        (s, (i128::from(e) - i128::from(s)).max(0) as u128)
    } else {
        let (s, e) = (s.clamp(0, d - 1), e.clamp(-1, d - 1));
        (s, (i128::from(s) - i128::from(e)).max(0) as u128)
    };
    let size = size.div_ceil(u128::from(step.unsigned_abs()));
    Ok(Span {
        begin: s,
        size: size as u32,
        step,
    })
}

/// `Slice`: attributes `starts`, `ends`, `axes` before opset 10; inputs 1–4 since (with
/// `steps`; a negative step reverses the axis first).
pub(crate) fn slice(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let shape = x.shape().to_vec();
    let (starts, ends, axes, steps) = if n.opset >= 10 {
        let starts = n
            .const_ints(1, "the starts")?
            .ok_or("the starts (input 1) are required")?;
        let ends = n
            .const_ints(2, "the ends")?
            .ok_or("the ends (input 2) are required")?;
        (
            starts,
            ends,
            n.const_ints(3, "the axes")?,
            n.const_ints(4, "the steps")?,
        )
    } else {
        let starts = n
            .attrs
            .ints("starts")?
            .ok_or("the starts attribute is required")?;
        let ends = n
            .attrs
            .ints("ends")?
            .ok_or("the ends attribute is required")?;
        (starts, ends, n.attrs.ints("axes")?, None)
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        bail!("starts {starts:?}, ends {ends:?}, axes {axes:?} and steps {steps:?} must have one entry each per sliced axis");
    }
    util::axes(&axes, shape.len())?; // distinct and in range
    let mut spec: Vec<Span> = shape
        .iter()
        .map(|&d| Span {
            begin: 0,
            size: d,
            step: 1,
        })
        .collect();
    for (k, &a) in axes.iter().enumerate() {
        let a = util::axis(a, shape.len())?;
        spec[a] = span(starts[k], ends[k], steps[k], shape[a])?;
    }
    let out: Vec<u32> = spec.iter().map(|s| s.size).collect();
    if let Some(t) = x.as_const().filter(|_| foldable(&out)) {
        return Ok(vec![Value::constant(slice_host(t, &spec))]);
    }
    if checked_count(&out)? == 0 {
        return Ok(vec![Value::constant(HostTensor::from_i64s(
            x.elem(),
            out,
            &[],
        ))]);
    }
    let o = cx.operand(x)?;
    Ok(one(slice_operand(cx, &o, &spec)))
}

/// Emits `reverse` for the axes with negative steps, then `slice` (each only when needed).
pub(super) fn slice_operand(cx: &mut Cx, o: &Operand, spec: &[Span]) -> Operand {
    let rev: Vec<u32> = (0..spec.len() as u32)
        .filter(|&i| spec[i as usize].step < 0)
        .collect();
    let mut x = o.clone();
    if !rev.is_empty() {
        x = cx.emit(
            "reverse",
            &[&x],
            vec![("axes", u32s(&rev))],
            x.elem,
            x.shape.clone(),
        );
    }
    let (mut starts, mut sizes, mut strides) = (Vec::new(), Vec::new(), Vec::new());
    for (s, &d) in spec.iter().zip(&o.shape) {
        let begin = if s.step < 0 {
            i64::from(d) - 1 - s.begin
        } else {
            s.begin
        };
        let stride = s.step.unsigned_abs().min(u64::from(u32::MAX)) as u32;
        starts.push(begin as u32);
        // WebNN's sizes are the extent read, the output ceil(sizes / strides): the last
        // element read is the first plus (count - 1) strides
        let extent = u64::from(s.size.saturating_sub(1)) * u64::from(stride) + 1;
        sizes.push(if s.size == 0 {
            0
        } else {
            extent.min(u64::from(d)) as u32
        });
        strides.push(stride);
    }
    let out: Vec<u32> = spec.iter().map(|s| s.size).collect();
    if starts.iter().all(|&v| v == 0) && sizes == o.shape && strides.iter().all(|&v| v == 1) {
        return x;
    }
    let mut opts = vec![("starts", u32s(&starts)), ("sizes", u32s(&sizes))];
    if strides.iter().any(|&v| v != 1) {
        opts.push(("strides", u32s(&strides)));
    }
    cx.emit("slice", &[&x], opts, x.elem, out)
}

/// `Expand`: numpy broadcasting of the input and the shape (input 1) both ways.
pub(crate) fn expand(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let spec = n
        .const_ints(1, "the shape")?
        .ok_or("the shape (input 1) is required")?;
    let spec: Vec<u32> = spec
        .iter()
        .map(|&v| dim(v, "a dimension of the shape"))
        .collect::<OpResult<_>>()?;
    let out = util::broadcast(x.shape(), &spec)?;
    if out == x.shape() {
        return Ok(vec![x.clone()]);
    }
    if let Some(t) = fold_of(x, &out) {
        let src = broadcast_indices(&t.shape, &out);
        return Ok(vec![Value::constant(take(t, out, &src))]);
    }
    if checked_count(&out)? == 0 {
        return Ok(vec![Value::constant(HostTensor::from_i64s(
            x.elem(),
            out,
            &[],
        ))]);
    }
    let o = cx.operand(x)?;
    let o = util::reshape(cx, &o, padded(&o.shape, out.len()));
    Ok(one(cx.emit(
        "expand",
        &[&o],
        vec![("newShape", u32s(&out))],
        o.elem,
        out,
    )))
}

/// `shape` with leading 1s up to `rank`.
fn padded(shape: &[u32], rank: usize) -> Vec<u32> {
    let mut v = vec![1; rank.saturating_sub(shape.len())];
    v.extend_from_slice(shape);
    v
}

/// `Tile` by the repeats (input 1).
pub(crate) fn tile(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let reps = n
        .const_ints(1, "the repeats")?
        .ok_or("the repeats (input 1) are required")?;
    if reps.len() != x.rank() {
        bail!(
            "the repeats {reps:?} have {} entries but the input has rank {}",
            reps.len(),
            x.rank()
        );
    }
    let mut out = Vec::with_capacity(reps.len());
    let mut rep = Vec::with_capacity(reps.len());
    for (&r, &d) in reps.iter().zip(x.shape()) {
        rep.push(dim(r, "a repeat")?);
        out.push(dim(r.saturating_mul(i64::from(d)), "a tiled dimension")?);
    }
    if rep.iter().all(|&r| r == 1) {
        return Ok(vec![x.clone()]);
    }
    if let Some(t) = fold_of(x, &out) {
        let st = host::strides(&t.shape);
        let src = map_index(&out, |idx| {
            idx.iter()
                .zip(&t.shape)
                .zip(&st)
                .map(|((&i, &d), &s)| (i % d as usize) * s)
                .sum()
        });
        return Ok(vec![Value::constant(take(t, out, &src))]);
    }
    if checked_count(&out)? == 0 {
        return Ok(vec![Value::constant(HostTensor::from_i64s(
            x.elem(),
            out,
            &[],
        ))]);
    }
    let o = cx.operand(x)?;
    Ok(one(cx.emit(
        "tile",
        &[&o],
        vec![("repetitions", u32s(&rep))],
        o.elem,
        out,
    )))
}
