//! `Pad`: `pads`, `mode` and `value` attributes before opset 11; the pads (input 1), the
//! constant value (input 2) and, from opset 18, the axes (input 3) since. Negative pads crop
//! (a `slice` first).

use super::host::{checked_count, scalar_of};
use super::movement::{slice_operand, Span};
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util::{self, one};
use crate::tensor::HostTensor;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// The pads (begin and end per axis of the input, zero where not named) and the fill value.
fn pads_and_value(n: &NodeCx<'_>, rank: usize) -> OpResult<(Vec<i64>, Vec<i64>, Json)> {
    let (pads, value, axes) = if n.opset >= 11 {
        let pads = n
            .const_ints(1, "the pads")?
            .ok_or("the pads (input 1) are required")?;
        let value = match n.const_input(2, "the constant value")? {
            None => Json::from(0),
            Some(t) => fill_json(scalar_of(t, "the constant value (input 2)")?),
        };
        let axes = if n.opset >= 18 {
            n.const_ints(3, "the axes")?
        } else {
            None
        };
        (pads, value, axes)
    } else {
        let pads = n
            .attrs
            .ints("pads")?
            .ok_or("the pads attribute is required")?;
        let v = n.attrs.float_or("value", 0.0)?;
        (pads, crate::cx::number(v), None)
    };
    let axes: Vec<usize> = match axes {
        Some(list) => {
            let mut out = Vec::with_capacity(list.len());
            for &a in &list {
                let a = util::axis(a, rank)?;
                if out.contains(&a) {
                    bail!("the axes {list:?} name axis {a} twice");
                }
                out.push(a);
            }
            out
        }
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        bail!(
            "the pads {pads:?} must have 2 × {} entries (begin then end for each padded axis)",
            axes.len()
        );
    }
    let (mut begin, mut end) = (vec![0i64; rank], vec![0i64; rank]);
    for (k, &a) in axes.iter().enumerate() {
        begin[a] = pads[k];
        end[a] = pads[k + axes.len()];
    }
    Ok((begin, end, value))
}

/// A fill value as JSON: integers exact, floats as numbers.
fn fill_json(t: &HostTensor) -> Json {
    if t.elem.is_float() {
        let v = t.to_f64s().first().copied().unwrap_or(0.0);
        serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number)
    } else {
        Json::from(t.to_i64s().first().copied().unwrap_or(0))
    }
}

/// `Pad` in `constant`, `edge` or `reflect` mode (`wrap` is refused).
pub(crate) fn pad(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let mode = n.attrs.string_or("mode", "constant")?;
    let webnn_mode = match mode.as_str() {
        "constant" => "constant",
        "edge" => "edge",
        "reflect" => "reflection",
        "wrap" => bail!("mode \"wrap\" is not supported: WebNN's pad has constant, edge and reflection modes only (rewrite the wrap as a Concat of Slices)"),
        m => bail!("mode {m:?} is not one of constant, reflect, edge, wrap"),
    };
    let (begin, end, value) = pads_and_value(n, x.rank())?;
    let shape = x.shape().to_vec();
    // crop where a pad is negative
    let mut spec = Vec::with_capacity(shape.len());
    for i in 0..shape.len() {
        let d = i64::from(shape[i]);
        let size = d
            .saturating_add(begin[i].min(0))
            .saturating_add(end[i].min(0));
        if size < 0 {
            bail!(
                "the negative pads {} and {} crop more than the {d} elements of axis {i}",
                begin[i],
                end[i]
            );
        }
        spec.push(Span {
            begin: begin[i].min(0).saturating_neg(),
            size: size as u32,
            step: 1,
        });
    }
    let cropped: Vec<u32> = spec.iter().map(|s| s.size).collect();
    let mut out = Vec::with_capacity(shape.len());
    for i in 0..shape.len() {
        let total = i64::from(cropped[i])
            .saturating_add(begin[i].max(0))
            .saturating_add(end[i].max(0));
        out.push(super::host::dim(total, &format!("padded axis {i}"))?);
        if webnn_mode == "reflection" && begin[i].max(end[i]) >= i64::from(cropped[i]) {
            bail!(
                "reflect pads {} and {} of axis {i} must be smaller than its size {}",
                begin[i],
                end[i],
                cropped[i]
            );
        }
    }
    if checked_count(&cropped)? == 0 {
        bail!("the input (cropped to {cropped:?}) is empty; WebNN cannot pad an empty tensor");
    }
    let o = cx.operand(x)?;
    let c = slice_operand(cx, &o, &spec);
    let b: Vec<u32> = begin.iter().map(|&v| v.max(0) as u32).collect();
    let e: Vec<u32> = end.iter().map(|&v| v.max(0) as u32).collect();
    if b.iter().chain(&e).all(|&v| v == 0) {
        return Ok(one(c));
    }
    if webnn_mode == "edge" {
        return Ok(one(edge_pad(cx, &c, &b, &e)));
    }
    let mut opts = vec![
        ("beginningPadding", u32s(&b)),
        ("endingPadding", u32s(&e)),
        ("mode", Json::from(webnn_mode)),
    ];
    if webnn_mode == "constant" {
        opts.push(("value", value));
    }
    Ok(one(cx.emit("pad", &[&c], opts, c.elem, out)))
}

/// Edge padding as copies of the border: per padded axis, the first and last slices expanded
/// to the pad widths and concatenated around the input (Chromium's TFLite backend has no edge
/// mode in `pad`; this is plain WebNN everywhere).
fn edge_pad(cx: &mut Cx, x: &Operand, begin: &[u32], end: &[u32]) -> Operand {
    let mut cur = x.clone();
    for i in 0..cur.shape.len() {
        if begin[i] == 0 && end[i] == 0 {
            continue;
        }
        let d = cur.shape[i];
        let mut parts = Vec::with_capacity(3);
        for (at, width) in [(0, begin[i]), (d - 1, end[i])] {
            if width == 0 {
                parts.push(None);
                continue;
            }
            let spec: Vec<Span> = cur
                .shape
                .iter()
                .enumerate()
                .map(|(j, &n)| match j == i {
                    true => Span {
                        begin: i64::from(at),
                        size: 1,
                        step: 1,
                    },
                    false => Span {
                        begin: 0,
                        size: n,
                        step: 1,
                    },
                })
                .collect();
            let border = slice_operand(cx, &cur, &spec);
            let mut wide = border.shape.clone();
            wide[i] = width;
            let opts = vec![("newShape", u32s(&wide))];
            parts.push(Some(cx.emit("expand", &[&border], opts, border.elem, wide)));
        }
        let mut shape = cur.shape.clone();
        shape[i] = d + begin[i] + end[i];
        let mut list: Vec<&Operand> = Vec::with_capacity(3);
        list.extend(parts[0].as_ref());
        list.push(&cur);
        list.extend(parts[1].as_ref());
        let opts = vec![("axis", Json::from(i))];
        cur = cx.emit("concat", &list, opts, cur.elem, shape);
    }
    cur
}
