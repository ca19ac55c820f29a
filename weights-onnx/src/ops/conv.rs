//! Convolutions and pooling: `Conv`, `ConvTranspose` (1-D and 2-D, 1-D through a 2-D
//! operation on a height of 1), and the pools in [`pool`]. `auto_pad` is resolved into
//! explicit padding here, so WebNN always sees `padding` as `[top, bottom, left, right]`.

mod pool;

use super::util::{one, require_type, reshape, FLOATS};
use super::Lower;
use crate::cx::{operand_ref, u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::value::{Operand, Value};
use serde_json::Value as Json;
use std::rc::Rc;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &[
    "AveragePool",
    "Conv",
    "ConvTranspose",
    "GlobalAveragePool",
    "GlobalLpPool",
    "GlobalMaxPool",
    "LpPool",
    "MaxPool",
];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "Conv" => conv,
        "ConvTranspose" => conv_transpose,
        "MaxPool" | "AveragePool" | "LpPool" => pool::pool,
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => pool::global_pool,
        _ => return None,
    })
}

/// A sliding window over the spatial dims: kernel, strides, dilations and the padding at the
/// beginning and end of each dim (resolved from `auto_pad`).
#[derive(Debug, Clone)]
pub(crate) struct Window {
    pub kernel: Vec<u32>,
    pub strides: Vec<u32>,
    pub dilations: Vec<u32>,
    pub begin: Vec<u32>,
    pub end: Vec<u32>,
}

impl Window {
    /// The extent of the dilated kernel along dim `i`.
    fn extent(&self, i: usize) -> u64 {
        (u64::from(self.kernel[i]) - 1) * u64::from(self.dilations[i]) + 1
    }

    /// WebNN's `padding`: `[begin0, end0, begin1, end1]`.
    fn padding(&self) -> Vec<u32> {
        self.begin
            .iter()
            .zip(&self.end)
            .flat_map(|(&b, &e)| [b, e])
            .collect()
    }

    /// The window of a 1-D operation as a 2-D one over a height of 1.
    fn lifted(&self) -> Window {
        let lift = |v: &[u32], first: u32| [&[first][..], v].concat();
        Window {
            kernel: lift(&self.kernel, 1),
            strides: lift(&self.strides, 1),
            dilations: lift(&self.dilations, 1),
            begin: lift(&self.begin, 0),
            end: lift(&self.end, 0),
        }
    }

    /// The common options of conv2d and the pools.
    fn options(&self) -> Vec<(&'static str, Json)> {
        vec![
            ("padding", u32s(&self.padding())),
            ("strides", u32s(&self.strides)),
            ("dilations", u32s(&self.dilations)),
        ]
    }
}

/// A positive-integer list attribute of one value per spatial dim, or `default` for each.
fn per_dim(n: &NodeCx<'_>, name: &str, dims: usize, default: u32) -> OpResult<Vec<u32>> {
    let Some(v) = n.attrs.ints(name)? else {
        return Ok(vec![default; dims]);
    };
    if v.len() != dims {
        bail!(
            "attribute {name} is {v:?}: expected {dims} value(s), one per spatial dim of the input"
        );
    }
    v.iter()
        .map(|&x| {
            u32::try_from(x).ok().filter(|&x| x >= 1).ok_or_else(|| {
                format!("attribute {name} is {v:?}: expected positive values").into()
            })
        })
        .collect()
}

/// The `auto_pad` attribute (`NOTSET` when absent).
fn auto_pad(n: &NodeCx<'_>) -> OpResult<String> {
    let a = n.attrs.string_or("auto_pad", "NOTSET")?;
    match a.as_str() {
        "NOTSET" | "SAME_UPPER" | "SAME_LOWER" | "VALID" => Ok(a),
        "" => Ok("NOTSET".into()),
        other => bail!(
            "attribute auto_pad is {other:?}: expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"
        ),
    }
}

/// The window of a convolution or pool over `spatial` input dims with `kernel`: strides,
/// dilations, and pads from `pads` or `auto_pad` (SAME pads so that the output is
/// `ceil(input / stride)`, the odd one at the end for SAME_UPPER, at the beginning for
/// SAME_LOWER).
pub(crate) fn window(n: &NodeCx<'_>, spatial: &[u32], kernel: Vec<u32>) -> OpResult<Window> {
    let dims = spatial.len();
    if kernel.contains(&0) {
        bail!("the kernel shape {kernel:?} has a zero dim");
    }
    let strides = per_dim(n, "strides", dims, 1)?;
    let dilations = per_dim(n, "dilations", dims, 1)?;
    let mut w = Window {
        kernel,
        strides,
        dilations,
        begin: vec![0; dims],
        end: vec![0; dims],
    };
    match auto_pad(n)?.as_str() {
        "NOTSET" => {
            if let Some(p) = n.attrs.ints("pads")? {
                if p.len() != 2 * dims || p.iter().any(|&x| !(0..=i64::from(u32::MAX)).contains(&x))
                {
                    bail!("attribute pads is {p:?}: expected {} non-negative values (the beginnings, then the ends)", 2 * dims);
                }
                for i in 0..dims {
                    w.begin[i] = p[i] as u32;
                    w.end[i] = p[dims + i] as u32;
                }
            }
        }
        "VALID" => {}
        same => {
            for (i, &input) in spatial.iter().enumerate() {
                let (input, s) = (u64::from(input), u64::from(w.strides[i]));
                let out = input.div_ceil(s);
                let total = ((out.max(1) - 1) * s + w.extent(i)).saturating_sub(input);
                let small = (total / 2) as u32;
                let large = (total - total / 2) as u32;
                (w.begin[i], w.end[i]) = if same == "SAME_UPPER" {
                    (small, large)
                } else {
                    (large, small)
                };
            }
        }
    }
    Ok(w)
}

/// The output size of a window along dim `i` (ONNX's formula; with `ceil`, a last window that
/// would start in the end padding is dropped).
pub(crate) fn out_size(w: &Window, i: usize, input: u32, ceil: bool) -> OpResult<u32> {
    let padded = u64::from(input) + u64::from(w.begin[i]) + u64::from(w.end[i]);
    let extent = w.extent(i);
    let s = u64::from(w.strides[i]);
    if padded < extent {
        bail!(
            "the window (kernel {}, dilation {}) spans {extent} elements of spatial dim {i}, which has only {padded} with padding",
            w.kernel[i], w.dilations[i]
        );
    }
    let mut out = if ceil {
        (padded - extent).div_ceil(s) + 1
    } else {
        (padded - extent) / s + 1
    };
    if ceil && (out - 1) * s >= u64::from(input) + u64::from(w.begin[i]) {
        out -= 1;
    }
    u32::try_from(out).map_err(|_| format!("output dim {i} ({out}) does not fit u32").into())
}

/// `x` as an operand of `shape`: a host value reshaped without copying, else `reshape`.
pub(crate) fn reshaped(cx: &mut Cx, x: &Value, shape: Vec<u32>) -> OpResult<Operand> {
    match x {
        Value::Const(t) if t.shape != shape => cx.const_operand(&Rc::new(t.reshaped(shape))),
        _ => {
            let o = cx.operand(x)?;
            Ok(reshape(cx, &o, shape))
        }
    }
}

/// `[N, C, L]` as `[N, C, 1, L]`.
fn with_height(shape: &[u32]) -> Vec<u32> {
    [&shape[..2], &[1], &shape[2..]].concat()
}

/// The rank check of a convolution's or pool's input: 3 (1-D) or 4 (2-D).
pub(crate) fn spatial_rank(x: &Value, what: &str) -> OpResult<()> {
    match x.rank() {
        3 | 4 => Ok(()),
        5 => bail!("{what} is 3-D (input shape {:?}); WebNN has only 2-D convolution and pooling (reshape or split the depth in the model)", x.shape()),
        r => bail!("the input has rank {r} (shape {:?}); expected [N, C, L] or [N, C, H, W]", x.shape()),
    }
}

/// The `group` attribute, checked against the channel counts.
fn group(
    n: &NodeCx<'_>,
    in_channels: u32,
    filter_channels: u32,
    out_channels: u32,
) -> OpResult<u32> {
    let g = n.attrs.int_or("group", 1)?;
    let Some(g) = u32::try_from(g).ok().filter(|&g| g >= 1) else {
        bail!("attribute group is {g}: expected a positive integer");
    };
    if in_channels % g != 0 || out_channels % g != 0 {
        bail!("group {g} does not divide the input channels ({in_channels}) and output channels ({out_channels})");
    }
    if filter_channels != in_channels / g {
        bail!("the weights have {filter_channels} channel(s) per group, but the input has {in_channels} channels in {g} group(s) ({} per group)", in_channels / g);
    }
    Ok(g)
}

/// The kernel from the weights, checked against `kernel_shape` when set.
fn kernel_of(n: &NodeCx<'_>, w: &Value) -> OpResult<Vec<u32>> {
    let kernel = w.shape()[2..].to_vec();
    if let Some(k) = n.attrs.ints("kernel_shape")? {
        if k.len() != kernel.len() || k.iter().zip(&kernel).any(|(&a, &b)| a != i64::from(b)) {
            bail!("attribute kernel_shape is {k:?} but the weights' spatial dims are {kernel:?}");
        }
    }
    Ok(kernel)
}

/// The bias input (index 2): 1-D of `channels`, as an operand.
fn bias(cx: &mut Cx, n: &NodeCx<'_>, channels: u32) -> OpResult<Option<Operand>> {
    let Some(b) = n.opt_input(2) else {
        return Ok(None);
    };
    if b.shape() != [channels] {
        bail!(
            "the bias B has shape {:?}; expected [{channels}] (one per output channel)",
            b.shape()
        );
    }
    if b.elem() != n.input(0)?.elem() {
        bail!(
            "the bias B is {} but the input is {}",
            b.elem(),
            n.input(0)?.elem()
        );
    }
    Ok(Some(cx.operand(b)?))
}

/// The input and weights checked as a pair: float types, equal types, equal ranks.
fn check_pair(x: &Value, w: &Value, what: &str) -> OpResult<()> {
    require_type(x, FLOATS, "the input X")?;
    spatial_rank(x, what)?;
    if w.elem() != x.elem() {
        bail!(
            "the weights W are {} but the input X is {}",
            w.elem(),
            x.elem()
        );
    }
    if w.rank() != x.rank() {
        bail!(
            "the weights W have shape {:?} but the input X has rank {} (expected rank {})",
            w.shape(),
            x.rank(),
            x.rank()
        );
    }
    Ok(())
}

fn conv(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, w) = (n.input(0)?, n.input(1)?);
    check_pair(x, w, "this convolution")?;
    let (xs, ws) = (x.shape().to_vec(), w.shape().to_vec());
    let out_channels = ws[0];
    let g = group(n, xs[1], ws[1], out_channels)?;
    let win = window(n, &xs[2..], kernel_of(n, w)?)?;
    let mut out_shape = vec![xs[0], out_channels];
    for (i, &d) in xs[2..].iter().enumerate() {
        out_shape.push(out_size(&win, i, d, false)?);
    }
    let b = bias(cx, n, out_channels)?;
    let one_d = xs.len() == 3;
    let (xo, wo, win) = if one_d {
        let xo = reshaped(cx, x, with_height(&xs))?;
        (xo, reshaped(cx, w, with_height(&ws))?, win.lifted())
    } else {
        (cx.operand(x)?, cx.operand(w)?, win)
    };
    let mut options = win.options();
    options.push(("groups", Json::from(g)));
    if let Some(b) = &b {
        options.push(("bias", operand_ref(b)));
    }
    let shape2 = if one_d {
        with_height(&out_shape)
    } else {
        out_shape.clone()
    };
    let y = cx.emit("conv2d", &[&xo, &wo], options, xo.elem, shape2);
    Ok(one(reshape(cx, &y, out_shape)))
}

/// ConvTranspose's padding and output padding per spatial dim, from `pads`, `auto_pad`,
/// `output_padding` and `output_shape` (which, when given, decides the pads as ONNX says).
fn transpose_window(
    n: &NodeCx<'_>,
    spatial: &[u32],
    kernel: Vec<u32>,
) -> OpResult<(Window, Vec<u32>)> {
    let dims = spatial.len();
    let mut win = window(n, spatial, kernel)?;
    let mut out_pad = match n.attrs.ints("output_padding")? {
        None => vec![0; dims],
        Some(p) if p.len() == dims && p.iter().all(|&v| (0..i64::from(u32::MAX)).contains(&v)) => {
            p.iter().map(|&v| v as u32).collect()
        }
        Some(p) => bail!("attribute output_padding is {p:?}: expected {dims} non-negative values"),
    };
    let auto = auto_pad(n)?;
    let target: Option<Vec<u64>> = match n.attrs.ints("output_shape")? {
        Some(o) => {
            let o = if o.len() == dims + 2 {
                o[2..].to_vec()
            } else {
                o
            };
            if o.len() != dims || o.iter().any(|&v| v <= 0) {
                bail!("attribute output_shape is {o:?}: expected {dims} positive sizes");
            }
            Some(o.iter().map(|&v| v as u64).collect())
        }
        None if auto.starts_with("SAME") => Some(
            spatial
                .iter()
                .zip(&win.strides)
                .map(|(&d, &s)| u64::from(d) * u64::from(s))
                .collect(),
        ),
        None => None,
    };
    if let Some(target) = target {
        for i in 0..dims {
            let natural = u64::from(win.strides[i]) * (u64::from(spatial[i]).max(1) - 1)
                + u64::from(out_pad[i])
                + win.extent(i);
            if natural >= target[i] {
                let total = natural - target[i];
                let (small, large) = ((total / 2) as u32, (total - total / 2) as u32);
                (win.begin[i], win.end[i]) = if auto == "SAME_UPPER" {
                    (small, large)
                } else {
                    (large, small)
                };
            } else {
                (win.begin[i], win.end[i]) = (0, 0);
                out_pad[i] = out_pad[i]
                    .saturating_add(u32::try_from(target[i] - natural).unwrap_or(u32::MAX));
            }
        }
    }
    for (i, &p) in out_pad.iter().enumerate() {
        if p >= win.strides[i].max(win.dilations[i]) {
            bail!("the output padding along spatial dim {i} is {p} (from output_padding or output_shape), but WebNN takes output padding below the stride ({}) only", win.strides[i]);
        }
    }
    Ok((win, out_pad))
}

fn conv_transpose(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (x, w) = (n.input(0)?, n.input(1)?);
    check_pair(x, w, "this transposed convolution")?;
    let (xs, ws) = (x.shape().to_vec(), w.shape().to_vec());
    if ws[0] != xs[1] {
        bail!("the weights W have shape {ws:?}: expected {} input channels first ([C, M/group, k...]), as the input has", xs[1]);
    }
    let g = n.attrs.int_or("group", 1)?;
    let Some(g) = u32::try_from(g).ok().filter(|&g| g >= 1 && xs[1] % g == 0) else {
        bail!(
            "attribute group is {g}: expected a positive divisor of the input channels ({})",
            xs[1]
        );
    };
    let out_channels = ws[1]
        .checked_mul(g)
        .ok_or_else(|| format!("{} channels per group times group {g} overflow", ws[1]))?;
    let (win, out_pad) = transpose_window(n, &xs[2..], kernel_of(n, w)?)?;
    let mut out_shape = vec![xs[0], out_channels];
    for i in 0..xs.len() - 2 {
        let full = u64::from(win.strides[i]) * (u64::from(xs[i + 2]).max(1) - 1)
            + u64::from(out_pad[i])
            + win.extent(i);
        let pads = u64::from(win.begin[i]) + u64::from(win.end[i]);
        match u32::try_from(full.saturating_sub(pads)) {
            Ok(d) if full > pads => out_shape.push(d),
            _ => bail!(
                "the pads {:?} leave no output along spatial dim {i} (the full output is {full})",
                (win.begin[i], win.end[i])
            ),
        }
    }
    let b = bias(cx, n, out_channels)?;
    let one_d = xs.len() == 3;
    let (xo, wo, win, out_pad) = if one_d {
        let xo = reshaped(cx, x, with_height(&xs))?;
        let wo = reshaped(cx, w, with_height(&ws))?;
        (xo, wo, win.lifted(), [&[0][..], &out_pad].concat())
    } else {
        (cx.operand(x)?, cx.operand(w)?, win, out_pad)
    };
    let mut options = win.options();
    options.push(("outputPadding", u32s(&out_pad)));
    options.push(("groups", Json::from(g)));
    options.push(("filterLayout", Json::from("iohw")));
    if let Some(b) = &b {
        options.push(("bias", operand_ref(b)));
    }
    let shape2 = if one_d {
        with_height(&out_shape)
    } else {
        out_shape.clone()
    };
    let y = cx.emit("convTranspose2d", &[&xo, &wo], options, xo.elem, shape2);
    Ok(one(reshape(cx, &y, out_shape)))
}
