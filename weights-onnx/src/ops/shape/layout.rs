//! Operators that only relabel dimensions (`Reshape`, `Flatten`, `Squeeze`, `Unsqueeze`: a
//! `reshape`, zero-copy on host values), those that only read the static shape (`Shape`,
//! `Size`), and the block rearrangements (`DepthToSpace`, `SpaceToDepth`: reshape, transpose,
//! reshape).

use super::host::{checked_count, dim, foldable, ints, permute};
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util;
use crate::value::Value;

/// `x` with the shape `shape` (same element count): host values keep their bytes.
pub(super) fn relayout(cx: &mut Cx, x: &Value, shape: Vec<u32>) -> OpResult<Value> {
    let from = checked_count(x.shape())?;
    let to = checked_count(&shape)?;
    if from != to {
        bail!(
            "cannot reshape {:?} ({from} elements) to {shape:?} ({to} elements)",
            x.shape()
        );
    }
    Ok(match x {
        Value::Const(t) => Value::constant(t.reshaped(shape)),
        Value::Operand(o) => Value::Operand(util::reshape(cx, o, shape)),
    })
}

/// `Reshape` (the shape is input 1 from opset 5; `allowzero` from opset 14).
pub(crate) fn reshape(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let Some(spec) = n.const_ints(1, "the new shape")? else {
        bail!("the new shape (input 1) is required");
    };
    let allowzero = n.attrs.int_or("allowzero", 0)? != 0;
    let shape = reshape_dims(x.shape(), &spec, allowzero)?;
    Ok(vec![relayout(cx, x, shape)?])
}

/// ONNX's reshape rules: `0` copies the input's dimension (unless `allowzero`), one `-1` is
/// inferred from the element count.
pub(super) fn reshape_dims(input: &[u32], spec: &[i64], allowzero: bool) -> OpResult<Vec<u32>> {
    let mut out = Vec::with_capacity(spec.len());
    let mut infer = None;
    for (i, &s) in spec.iter().enumerate() {
        match s {
            0 if !allowzero => match input.get(i) {
                Some(&d) => out.push(d),
                None => bail!("the new shape {spec:?} has 0 (copy the input's dimension) at position {i}, but the input {input:?} has rank {}", input.len()),
            },
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            -1 => bail!("the new shape {spec:?} has more than one -1"),
            s => out.push(dim(s, &format!("dimension {i} of the new shape {spec:?}"))?),
        }
    }
    let total = checked_count(input)?;
    if let Some(i) = infer {
        let known = checked_count(&out)?;
        if known == 0 || total % known != 0 {
            bail!("the new shape {spec:?} cannot take the {total} elements of input shape {input:?} (the -1 has no whole size)");
        }
        out[i] = dim((total / known) as i64, "the inferred dimension")?;
    }
    if checked_count(&out)? != total {
        bail!("the new shape {spec:?} resolves to {out:?}, which does not hold the {total} elements of input shape {input:?}");
    }
    Ok(out)
}

/// `Flatten`: to 2-D at `axis` (default 1; `-rank..=rank`).
pub(crate) fn flatten(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let r = x.rank() as i64;
    let a = n.attrs.int_or("axis", 1)?;
    let at = if a < 0 { a + r } else { a };
    if at < 0 || at > r {
        bail!(
            "axis {a} is out of range for rank {r} (valid: {} to {r})",
            -r
        );
    }
    let (head, tail) = x.shape().split_at(at as usize);
    let rows = dim(checked_count(head)? as i64, "the flattened rows")?;
    let cols = dim(checked_count(tail)? as i64, "the flattened columns")?;
    Ok(vec![relayout(cx, x, vec![rows, cols])?])
}

/// The `axes` of `Squeeze`/`Unsqueeze`: an attribute before opset 13, input 1 since.
fn axes_list(n: &NodeCx<'_>) -> OpResult<Option<Vec<i64>>> {
    if n.opset >= 13 {
        n.const_ints(1, "the axes")
    } else {
        Ok(n.attrs.ints("axes")?)
    }
}

/// `Squeeze`: the named axes (every size-1 axis without them) removed.
pub(crate) fn squeeze(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let shape = x.shape();
    let axes = match axes_list(n)? {
        Some(list) => util::axes(&list, shape.len())?,
        None => (0..shape.len() as u32)
            .filter(|&i| shape[i as usize] == 1)
            .collect(),
    };
    for &a in &axes {
        if shape[a as usize] != 1 {
            bail!(
                "axis {a} of shape {shape:?} has size {}; Squeeze removes only axes of size 1",
                shape[a as usize]
            );
        }
    }
    let out = (0..shape.len())
        .filter(|i| !axes.contains(&(*i as u32)))
        .map(|i| shape[i])
        .collect();
    Ok(vec![relayout(cx, x, out)?])
}

/// `Unsqueeze`: size-1 axes inserted at the named positions of the output.
pub(crate) fn unsqueeze(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let Some(list) = axes_list(n)? else {
        bail!("the axes are required (the attribute before opset 13, input 1 since)");
    };
    let rank = x.rank() + list.len();
    let axes = util::axes(&list, rank)?;
    let mut rest = x.shape().iter();
    let out = (0..rank as u32)
        .map(|i| {
            if axes.contains(&i) {
                1
            } else {
                rest.next().copied().unwrap_or(1)
            }
        })
        .collect();
    Ok(vec![relayout(cx, x, out)?])
}

/// `Shape` (with `start`/`end` from opset 15): the static shape as an int64 constant.
pub(crate) fn shape(_cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let r = x.rank() as i64;
    let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let start = clamp(n.attrs.int_or("start", 0)?);
    let end = clamp(n.attrs.int_or("end", r)?).max(start);
    let dims: Vec<i64> = x.shape()[start..end]
        .iter()
        .map(|&d| i64::from(d))
        .collect();
    Ok(vec![Value::constant(ints(vec![dims.len() as u32], &dims))])
}

/// `Size`: the element count as an int64 scalar constant.
pub(crate) fn size(_cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let count = checked_count(n.input(0)?.shape())?;
    Ok(vec![Value::constant(ints(vec![], &[count as i64]))])
}

/// `x` reshaped to `pre`, permuted by `perm` and reshaped to `post` (on the host when `x`
/// is a host value).
fn rearrange(
    cx: &mut Cx,
    x: &Value,
    pre: Vec<u32>,
    perm: &[u32],
    post: Vec<u32>,
) -> OpResult<Value> {
    if let Some(t) = x.as_const().filter(|_| foldable(&post)) {
        let moved = permute(&t.reshaped(pre), perm);
        return Ok(Value::constant(moved.reshaped(post)));
    }
    let o = cx.operand(x)?;
    let a = util::reshape(cx, &o, pre);
    let b = util::transpose(cx, &a, perm);
    Ok(Value::Operand(util::reshape(cx, &b, post)))
}

/// The `[N, C, H, W]` shape of a block operator's input and its `blocksize`.
fn block_input(n: &NodeCx<'_>) -> OpResult<([u32; 4], u32)> {
    let x = n.input(0)?;
    let Ok(s) = <[u32; 4]>::try_from(x.shape()) else {
        bail!(
            "the input has shape {:?}; {} takes a 4-D [N, C, H, W] input",
            x.shape(),
            n.op_type
        );
    };
    let Some(b) = n.attrs.int("blocksize")? else {
        bail!("the blocksize attribute is required");
    };
    let b = dim(b, "blocksize")?;
    if b == 0 {
        bail!("blocksize is 0; it must be at least 1");
    }
    Ok((s, b))
}

/// `DepthToSpace` in `DCR` (default) or `CRD` mode (opset 11).
pub(crate) fn depth_to_space(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let ([nb, c, h, w], b) = block_input(n)?;
    let bb = u64::from(b) * u64::from(b);
    if u64::from(c) % bb != 0 {
        bail!("the input has {c} channels, not a multiple of blocksize² = {bb}");
    }
    let c2 = (u64::from(c) / bb) as u32;
    let post = vec![
        nb,
        c2,
        dim(i64::from(h) * i64::from(b), "the output height")?,
        dim(i64::from(w) * i64::from(b), "the output width")?,
    ];
    let mode = n.attrs.string_or("mode", "DCR")?;
    let (pre, perm) = match mode.as_str() {
        "DCR" => (vec![nb, b, b, c2, h, w], [0, 3, 4, 1, 5, 2]),
        "CRD" => (vec![nb, c2, b, b, h, w], [0, 1, 4, 2, 5, 3]),
        m => bail!("mode {m:?} is not DCR or CRD"),
    };
    Ok(vec![rearrange(cx, n.input(0)?, pre, &perm, post)?])
}

/// `SpaceToDepth`.
pub(crate) fn space_to_depth(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let ([nb, c, h, w], b) = block_input(n)?;
    if h % b != 0 || w % b != 0 {
        bail!("the input's height {h} and width {w} must be multiples of blocksize {b}");
    }
    let pre = vec![nb, c, h / b, b, w / b, b];
    let post = vec![
        nb,
        dim(
            i64::from(c) * i64::from(b) * i64::from(b),
            "the output channels",
        )?,
        h / b,
        w / b,
    ];
    Ok(vec![rearrange(
        cx,
        n.input(0)?,
        pre,
        &[0, 3, 5, 1, 2, 4],
        post,
    )?])
}
