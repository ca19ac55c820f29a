//! Transformer building blocks of ai.onnx opset 23/24, decomposed into WebNN operations.
//!
//! - `Attention` (opset 23, 24): Q, K, V made 4-D (`[B, heads, S, head]`; 3-D inputs
//!   `[B, S, heads * head]` are reshaped to `[B, S, heads, head]` and transposed), past keys and
//!   values prepended with `concat` on the sequence axis (the `present_*` outputs), KV heads
//!   repeated for grouped-query attention (`reshape` to `[B, kv, 1, S, D]`, `expand` to
//!   `[B, kv, q/kv, S, D]`, `reshape` to `[B, q, S, D]`: each KV head serves consecutive query
//!   heads), then `Q * sqrt(scale)` `matmul` `(K * sqrt(scale))ᵀ`, the softcap
//!   `tanh(s / c) * c`, the bias (a float mask added; a boolean mask as
//!   `where(mask, 0, -inf)`; a mask shorter than the total sequence padded with `-inf`/false by
//!   `concat`; `is_causal` as a constant `[Sq, total]` of 0 and `-inf` masking key `j` for query
//!   `i` when `j > i + past`; `nonpad_kv_seqlen` as `where(iota < len[b], 0, -inf)`), `softmax`
//!   on the last axis (in `softmax_precision` by `cast` when it differs), and `matmul` with V
//!   (transposed and reshaped back to 3-D for 3-D inputs). `qk_matmul_output` is computed when
//!   used, for each mode: 0 the scaled product, 1 after the softcap, 2 with the bias, 3 the
//!   softmax.
//! - `RMSNormalization` (opset 23): `x / sqrt(reduceMean(x², axes) + epsilon) * scale` over
//!   `axis..rank`, in float32 when `stash_type=1` (the input cast and the result cast back).
//! - `RotaryEmbedding` (opset 23): see [`rope`].
//!   Training (`training_mode` true, or a `training_mode` the graph computes) is refused.

mod rms;
mod rope;

use super::util::{binary, cast, reshape, transpose, unary};
use super::Lower;
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::{ElemType, HostTensor};
use crate::value::{Operand, Value};
use serde_json::Value as Json;
use std::rc::Rc;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &["Attention", "RMSNormalization", "RotaryEmbedding"];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "Attention" => attention,
        "RMSNormalization" => rms::rms_normalization,
        "RotaryEmbedding" => rope::rotary_embedding,
        _ => return None,
    })
}

/// What the attention lowering reads from the node.
struct Params {
    q_heads: Option<u32>,
    kv_heads: Option<u32>,
    scale: Option<f32>,
    causal: bool,
    softcap: f32,
    mode: i64,
    softmax_elem: Option<ElemType>,
}

fn params(n: &NodeCx<'_>) -> OpResult<Params> {
    let heads = |name: &str| -> OpResult<Option<u32>> {
        match n.attrs.int(name)? {
            None => Ok(None),
            Some(h) if h > 0 && h <= i64::from(u32::MAX) => Ok(Some(h as u32)),
            Some(h) => bail!("attribute {name} is {h}; expected a positive count"),
        }
    };
    let softcap = n.attrs.float_or("softcap", 0.0)?;
    if !softcap.is_finite() || softcap < 0.0 {
        bail!("attribute softcap is {softcap}; expected a finite value, 0 for none");
    }
    let mode = n.attrs.int_or("qk_matmul_output_mode", 0)?;
    if !(0..=3).contains(&mode) {
        bail!("attribute qk_matmul_output_mode is {mode}; ONNX defines 0 to 3");
    }
    let softmax_elem = match n.attrs.int("softmax_precision")? {
        None => None,
        Some(code) => match ElemType::from_onnx(code as i32) {
            Some(e @ (ElemType::F32 | ElemType::F16)) => Some(e),
            _ => bail!(
                "attribute softmax_precision is {}; WebNN computes softmax in float32 or float16 only",
                ElemType::onnx_name(code as i32)
            ),
        },
    };
    Ok(Params {
        q_heads: heads("q_num_heads")?,
        kv_heads: heads("kv_num_heads")?,
        scale: n.attrs.float("scale")?,
        causal: n.attrs.int_or("is_causal", 0)? != 0,
        softcap,
        mode,
        softmax_elem,
    })
}

/// Q, K or V as `[B, heads, S, head]`: a 4-D input itself, a 3-D `[B, S, heads * head]` one
/// reshaped and transposed.
fn heads_4d(cx: &mut Cx, v: &Value, heads: Option<u32>, what: &str) -> OpResult<Operand> {
    if v.elem() != ElemType::F32 && v.elem() != ElemType::F16 {
        bail!(
            "{what} is {}; WebNN computes attention on float32 or float16",
            v.elem()
        );
    }
    let o = cx.operand(v)?;
    match o.shape.as_slice() {
        [_, _, _, _] => Ok(o),
        &[b, s, hidden] => {
            let Some(h) = heads else {
                bail!("{what} is 3-D; attributes q_num_heads and kv_num_heads are required");
            };
            if hidden % h != 0 {
                bail!("{what} has hidden size {hidden}, not a multiple of {h} heads");
            }
            let r = reshape(cx, &o, vec![b, s, h, hidden / h]);
            Ok(transpose(cx, &r, &[0, 2, 1, 3]))
        }
        s => bail!("{what} has shape {s:?}; expected 3-D or 4-D"),
    }
}

/// `concat(past, x)` on the sequence axis (2), when the past is given.
fn with_past(cx: &mut Cx, past: Option<&Value>, x: Operand, what: &str) -> OpResult<Operand> {
    let Some(p) = past else {
        return Ok(x);
    };
    let po = cx.operand(p)?;
    let fits = po.rank() == 4
        && po.elem == x.elem
        && po.shape[0] == x.shape[0]
        && po.shape[1] == x.shape[1]
        && po.shape[3] == x.shape[3];
    if !fits {
        bail!(
            "{what} ({} {:?}) does not match the new entries ({} {:?}) but for the sequence axis",
            po.elem,
            po.shape,
            x.elem,
            x.shape
        );
    }
    let mut shape = x.shape.clone();
    shape[2] += po.shape[2];
    Ok(cx.emit(
        "concat",
        &[&po, &x],
        vec![("axis", Json::from(2u32))],
        x.elem,
        shape,
    ))
}

/// KV heads repeated `reps` times each, consecutively (`[h0, h0, h1, h1, …]`).
fn repeat_heads(cx: &mut Cx, x: &Operand, reps: u32) -> Operand {
    if reps == 1 {
        return x.clone();
    }
    let (b, h, s, d) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let r = reshape(cx, x, vec![b, h, 1, s, d]);
    let e = cx.emit(
        "expand",
        &[&r],
        vec![("newShape", u32s(&[b, h, reps, s, d]))],
        x.elem,
        vec![b, h, reps, s, d],
    );
    reshape(cx, &e, vec![b, h * reps, s, d])
}

/// `x * k` for a scalar `k`.
fn times(cx: &mut Cx, x: &Operand, k: f64) -> OpResult<Operand> {
    let c = cx.scalar(x.elem, k)?;
    binary(cx, "mul", x, &c, x.elem)
}

/// A host constant of `elem`.
fn constant(cx: &mut Cx, elem: ElemType, shape: Vec<u32>, values: &[f64]) -> OpResult<Operand> {
    cx.const_operand(&Rc::new(HostTensor::from_f64s(elem, shape, values)))
}

/// The mask as an additive bias of `elem` whose last axis is `total` long.
fn mask_bias(cx: &mut Cx, m: &Value, elem: ElemType, total: u32) -> OpResult<Operand> {
    let boolean = m.elem() == ElemType::Bool;
    if !boolean && m.elem() != elem {
        bail!(
            "the attention mask is {}; expected bool or the type of Q ({elem})",
            m.elem()
        );
    }
    let mut mo = cx.operand(m)?;
    let Some(&last) = mo.shape.last() else {
        bail!("the attention mask is a scalar; expected [..., q_sequence, total_sequence]");
    };
    if last > total {
        bail!(
            "the attention mask's last axis is {last} long, past the total sequence length {total}"
        );
    }
    if last < total {
        let mut pad = mo.shape.clone();
        *pad.last_mut().unwrap_or(&mut 0) = total - last;
        let count = pad.iter().map(|&d| d as usize).product::<usize>();
        let fill = if boolean { 0.0 } else { f64::NEG_INFINITY };
        let p = constant(cx, mo.elem, pad, &vec![fill; count])?;
        let mut shape = mo.shape.clone();
        *shape.last_mut().unwrap_or(&mut 0) = total;
        let axis = Json::from(mo.rank() as u32 - 1);
        mo = cx.emit("concat", &[&mo, &p], vec![("axis", axis)], mo.elem, shape);
    }
    if !boolean {
        return Ok(mo);
    }
    let zero = cx.scalar(elem, 0.0)?;
    let ninf = cx.scalar(elem, f64::NEG_INFINITY)?;
    Ok(cx.emit(
        "where",
        &[&mo, &zero, &ninf],
        vec![],
        elem,
        mo.shape.clone(),
    ))
}

/// The causal bias `[sq, total]`: `-inf` where key `j` comes after query `i + past`.
fn causal_bias(cx: &mut Cx, elem: ElemType, sq: u32, total: u32, past: u32) -> OpResult<Operand> {
    let mut v = Vec::with_capacity(sq as usize * total as usize);
    for i in 0..sq {
        for j in 0..total {
            v.push(if j > i + past { f64::NEG_INFINITY } else { 0.0 });
        }
    }
    constant(cx, elem, vec![sq, total], &v)
}

/// The padding bias `[B, 1, 1, total]` of `nonpad_kv_seqlen`: `-inf` at keys past each length.
fn padding_bias(cx: &mut Cx, lens: &Value, elem: ElemType, total: u32) -> OpResult<Operand> {
    let b = match lens.shape() {
        [b] => *b,
        s => bail!("nonpad_kv_seqlen has shape {s:?}; expected [batch]"),
    };
    if let Some(t) = lens.as_const() {
        let lens = t.to_i64s();
        let mut v = Vec::with_capacity(b as usize * total as usize);
        for l in lens {
            v.extend((0..total).map(|j| {
                if i64::from(j) < l {
                    0.0
                } else {
                    f64::NEG_INFINITY
                }
            }));
        }
        return constant(cx, elem, vec![b, 1, 1, total], &v);
    }
    let lo = cx.operand(lens)?;
    let lo = cast(cx, &lo, ElemType::I32)?;
    let lo = reshape(cx, &lo, vec![b, 1, 1, 1]);
    let iota: Vec<f64> = (0..total).map(f64::from).collect();
    let iota = constant(cx, ElemType::I32, vec![1, 1, 1, total], &iota)?;
    let keep = binary(cx, "lesser", &iota, &lo, ElemType::Bool)?;
    let zero = cx.scalar(elem, 0.0)?;
    let ninf = cx.scalar(elem, f64::NEG_INFINITY)?;
    Ok(cx.emit(
        "where",
        &[&keep, &zero, &ninf],
        vec![],
        elem,
        vec![b, 1, 1, total],
    ))
}

/// The sum of the biases that apply (mask, causal, padding), if any.
fn total_bias(
    cx: &mut Cx,
    n: &NodeCx<'_>,
    p: &Params,
    sq: u32,
    total: u32,
    past: u32,
    elem: ElemType,
) -> OpResult<Option<Operand>> {
    let mut parts = Vec::new();
    if let Some(m) = n.opt_input(3) {
        parts.push(mask_bias(cx, m, elem, total)?);
    }
    if p.causal {
        parts.push(causal_bias(cx, elem, sq, total, past)?);
    }
    if let Some(l) = n.opt_input(6) {
        parts.push(padding_bias(cx, l, elem, total)?);
    }
    let mut sum: Option<Operand> = None;
    for part in parts {
        sum = Some(match sum {
            None => part,
            Some(s) => binary(cx, "add", &s, &part, elem)?,
        });
    }
    Ok(sum)
}

fn attention(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let p = params(n)?;
    let (qv, kv, vv) = (n.input(0)?, n.input(1)?, n.input(2)?);
    if qv.rank() != kv.rank() || qv.rank() != vv.rank() {
        bail!(
            "Q, K and V have ranks {}, {} and {}; expected all 3-D or all 4-D",
            qv.rank(),
            kv.rank(),
            vv.rank()
        );
    }
    if kv.elem() != qv.elem() || vv.elem() != qv.elem() {
        bail!(
            "Q, K and V are {}, {} and {}; expected one type",
            qv.elem(),
            kv.elem(),
            vv.elem()
        );
    }
    if n.opt_input(4).is_some() != n.opt_input(5).is_some() {
        bail!("only one of past_key and past_value is given; ONNX requires both or neither");
    }
    let q = heads_4d(cx, qv, p.q_heads, "Q")?;
    let k = heads_4d(cx, kv, p.kv_heads, "K")?;
    let v = heads_4d(cx, vv, p.kv_heads, "V")?;
    let past = n
        .opt_input(4)
        .map_or(0, |pk| pk.shape().get(2).copied().unwrap_or(0));
    let k = with_past(cx, n.opt_input(4), k, "past_key")?;
    let v = with_past(cx, n.opt_input(5), v, "past_value")?;
    let (b, qh, sq, d) = (q.shape[0], q.shape[1], q.shape[2], q.shape[3]);
    let (kh, total) = (k.shape[1], k.shape[2]);
    let consistent = k.shape[0] == b
        && v.shape[0] == b
        && k.shape[3] == d
        && v.shape[1] == kh
        && v.shape[2] == total;
    if !consistent || kh == 0 || qh % kh != 0 {
        bail!("Q {:?}, K {:?} and V {:?} (as [batch, heads, sequence, head]) do not fit: batches, K's and Q's head sizes, K's and V's heads and sequences must match, and Q's heads be a multiple of K's", q.shape, k.shape, v.shape);
    }
    let (probs_out, y) = scores_and_output(cx, n, &p, &q, &k, &v, past)?;
    let y = if qv.rank() == 3 {
        let t = transpose(cx, &y, &[0, 2, 1, 3]);
        let dv = v.shape[3];
        reshape(cx, &t, vec![b, sq, qh * dv])
    } else {
        y
    };
    let mut out = vec![Value::Operand(y), Value::Operand(k), Value::Operand(v)];
    if let Some(s) = probs_out {
        out.push(Value::Operand(s));
    }
    Ok(out)
}

/// The scores, softmax and product with V: `(qk_matmul_output if used, Y as 4-D)`.
fn scores_and_output(
    cx: &mut Cx,
    n: &NodeCx<'_>,
    p: &Params,
    q: &Operand,
    k: &Operand,
    v: &Operand,
    past: u32,
) -> OpResult<(Option<Operand>, Operand)> {
    let e = q.elem;
    let (qh, sq, d) = (q.shape[1], q.shape[2], q.shape[3]);
    let reps = qh / k.shape[1];
    let k = repeat_heads(cx, k, reps);
    let v = repeat_heads(cx, v, reps);
    let scale = p.scale.map_or(1.0 / f64::from(d).sqrt(), f64::from);
    let root = scale.sqrt();
    let qs = times(cx, q, root)?;
    let ks = times(cx, &k, root)?;
    let kt = transpose(cx, &ks, &[0, 1, 3, 2]);
    let total = k.shape[2];
    let shape = vec![q.shape[0], qh, sq, total];
    let mut s = cx.emit("matmul", &[&qs, &kt], vec![], e, shape.clone());
    let wanted = n.output_used(3);
    let mut kept = (wanted && p.mode == 0).then(|| s.clone());
    if p.softcap > 0.0 {
        let c = f64::from(p.softcap);
        let x = times(cx, &s, 1.0 / c)?;
        let t = unary(cx, "tanh", &x);
        s = times(cx, &t, c)?;
    }
    if wanted && p.mode == 1 {
        kept = Some(s.clone());
    }
    if let Some(bias) = total_bias(cx, n, p, sq, total, past, e)? {
        s = binary(cx, "add", &s, &bias, e)?;
        if s.shape != shape {
            bail!("the attention mask does not broadcast to [batch, {qh}, {sq}, {total}] (scores {:?})", s.shape);
        }
    }
    if wanted && p.mode == 2 {
        kept = Some(s.clone());
    }
    let se = p.softmax_elem.unwrap_or(e);
    let sc = cast(cx, &s, se)?;
    let probs = cx.emit(
        "softmax",
        &[&sc],
        vec![("axis", Json::from(3u32))],
        se,
        sc.shape.clone(),
    );
    let probs = cast(cx, &probs, e)?;
    if wanted && p.mode == 3 {
        kept = Some(probs.clone());
    }
    let mut yshape = probs.shape.clone();
    yshape[3] = v.shape[3];
    let y = cx.emit("matmul", &[&probs, &v], vec![], e, yshape);
    Ok((kept, y))
}
