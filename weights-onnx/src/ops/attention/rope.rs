//! `RotaryEmbedding` (opset 23), in the input's own layout (no transposes):
//!
//! - The input as `[B, H, S, D]` (4-D) or `[B, S, H, D]` (3-D `[B, S, H * D]` reshaped with
//!   `num_heads`); the caches as `[B, S, R/2]`: `gather(cache, position_ids)` on axis 0 when
//!   the positions are given (a host `gather` when both are constants), the caches themselves
//!   otherwise; then reshaped to broadcast over the heads (`[B, 1, S, R/2]` or
//!   `[B, S, 1, R/2]`).
//! - The first `R = rotary_embedding_dim` (default `D`) channels rotate, the rest pass
//!   (`slice` and `concat`). Halves: `x1 = x[..., :R/2]`, `x2 = x[..., R/2:R]`; interleaved:
//!   the rotated part reshaped to `[..., R/2, 2]` and sliced on the last axis (so the caches get
//!   a trailing 1).
//! - `real = cos * x1 - sin * x2`, `imag = sin * x1 + cos * x2`, concatenated (halves) or
//!   interleaved back by `concat` on the pair axis and `reshape`.

use super::super::util::{binary, one, reshape, FLOATS};
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util::require_type;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// `x[..., start..start + len]` on the last axis.
fn slice_last(cx: &mut Cx, x: &Operand, start: u32, len: u32) -> Operand {
    let r = x.rank();
    let mut starts = vec![0; r];
    starts[r - 1] = start;
    let mut sizes = x.shape.clone();
    sizes[r - 1] = len;
    cx.emit(
        "slice",
        &[x],
        vec![("starts", u32s(&starts)), ("sizes", u32s(&sizes))],
        x.elem,
        sizes,
    )
}

/// `concat` on the last axis.
fn concat_last(cx: &mut Cx, parts: &[&Operand]) -> Operand {
    let r = parts[0].rank();
    let mut shape = parts[0].shape.clone();
    shape[r - 1] = parts.iter().map(|p| p.shape[r - 1]).sum();
    cx.emit(
        "concat",
        parts,
        vec![("axis", Json::from(r as u32 - 1))],
        parts[0].elem,
        shape,
    )
}

/// A cache as `[B, S, half]`: gathered at the positions, or itself.
fn cache(cx: &mut Cx, n: &NodeCx<'_>, i: usize, b: u32, s: u32, half: u32) -> OpResult<Operand> {
    let c = n.input(i)?;
    if c.elem() != n.input(0)?.elem() {
        bail!("input {i} is {}; expected the input's type", c.elem());
    }
    let what = if i == 1 { "cos_cache" } else { "sin_cache" };
    let Some(pos) = n.opt_input(3) else {
        if c.shape() != [b, s, half] {
            bail!(
                "{what} has shape {:?}; without position_ids expected [{b}, {s}, {half}]",
                c.shape()
            );
        }
        return cx.operand(c);
    };
    if c.rank() != 2 || c.shape()[1] != half {
        bail!(
            "{what} has shape {:?}; expected [max_position, {half}]",
            c.shape()
        );
    }
    if pos.shape() != [b, s] {
        bail!(
            "position_ids has shape {:?}; expected [{b}, {s}]",
            pos.shape()
        );
    }
    let co = cx.operand(c)?;
    let po = cx.operand(pos)?;
    Ok(cx.emit(
        "gather",
        &[&co, &po],
        vec![("axis", Json::from(0u32))],
        co.elem,
        vec![b, s, half],
    ))
}

pub(super) fn rotary_embedding(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let xo = cx.operand(x)?;
    let interleaved = n.attrs.int_or("interleaved", 0)? != 0;
    // the input as 4-D, and whether its layout is [B, H, S, D] (else [B, S, H, D])
    let (x4, heads_first) = match xo.shape.as_slice() {
        [_, _, _, _] => (xo.clone(), true),
        &[b, s, hidden] => {
            let h = n.attrs.int_or("num_heads", 0)?;
            if h <= 0 || hidden % h as u32 != 0 {
                bail!("the input is 3-D [{b}, {s}, {hidden}]; attribute num_heads must divide {hidden}");
            }
            let h = h as u32;
            (reshape(cx, &xo, vec![b, s, h, hidden / h]), false)
        }
        s => bail!("the input has shape {s:?}; expected [B, H, S, D] or [B, S, H * D]"),
    };
    let sh = &x4.shape;
    let (b, s, d) = if heads_first {
        (sh[0], sh[2], sh[3])
    } else {
        (sh[0], sh[1], sh[3])
    };
    let rot = match n.attrs.int_or("rotary_embedding_dim", 0)? {
        0 => d,
        r if r > 0 && r as u32 <= d && r % 2 == 0 => r as u32,
        r => bail!(
            "attribute rotary_embedding_dim is {r}; expected an even count up to the head size {d}"
        ),
    };
    if rot % 2 != 0 {
        bail!("the head size {d} is odd; rotation needs pairs");
    }
    let half = rot / 2;
    let cos = cache(cx, n, 1, b, s, half)?;
    let sin = cache(cx, n, 2, b, s, half)?;
    let mut cshape = if heads_first {
        vec![b, 1, s, half]
    } else {
        vec![b, s, 1, half]
    };
    if interleaved {
        cshape.push(1);
    }
    let cos = reshape(cx, &cos, cshape.clone());
    let sin = reshape(cx, &sin, cshape);
    let xr = if rot == d {
        x4.clone()
    } else {
        slice_last(cx, &x4, 0, rot)
    };
    let y = rotate(cx, &xr, &cos, &sin, interleaved)?;
    let y = if rot == d {
        y
    } else {
        let rest = slice_last(cx, &x4, rot, d - rot);
        concat_last(cx, &[&y, &rest])
    };
    Ok(one(reshape(cx, &y, xo.shape.clone())))
}

/// The rotation of `x` (last axis `R`), `cos` and `sin` shaped to broadcast against the halves.
fn rotate(
    cx: &mut Cx,
    x: &Operand,
    cos: &Operand,
    sin: &Operand,
    interleaved: bool,
) -> OpResult<Operand> {
    let r = x.rank();
    let rot = x.shape[r - 1];
    let half = rot / 2;
    let e = x.elem;
    let (x1, x2) = if interleaved {
        let mut pairs = x.shape.clone();
        pairs[r - 1] = half;
        pairs.push(2);
        let p = reshape(cx, x, pairs);
        (slice_last(cx, &p, 0, 1), slice_last(cx, &p, 1, 1))
    } else {
        (slice_last(cx, x, 0, half), slice_last(cx, x, half, half))
    };
    let c1 = binary(cx, "mul", cos, &x1, e)?;
    let s2 = binary(cx, "mul", sin, &x2, e)?;
    let real = binary(cx, "sub", &c1, &s2, e)?;
    let s1 = binary(cx, "mul", sin, &x1, e)?;
    let c2 = binary(cx, "mul", cos, &x2, e)?;
    let imag = binary(cx, "add", &s1, &c2, e)?;
    let y = concat_last(cx, &[&real, &imag]);
    Ok(reshape(cx, &y, x.shape.clone()))
}
