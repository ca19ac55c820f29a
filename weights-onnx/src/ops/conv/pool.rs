//! Pooling: `MaxPool`, `AveragePool`, `LpPool` (p = 2) on 1-D and 2-D inputs, and the global
//! pools (any rank, as reductions over the spatial axes).
//!
//! ONNX's output size is computed here (with `ceil_mode`, a last window starting in the end
//! padding is dropped) and WebNN is told which rounding gives it, or the sizes themselves.
//! Where a window reaches into the padding or past the end, averages and L2 norms are taken
//! over the valid positions whatever the browser counts (see `partial_windows`); with
//! `count_include_pad = 1` the input is padded with zeros first and pooled without padding.

use super::{out_size, reshaped, spatial_rank, window, with_height, Window};
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util::{binary, cast, count, one, require_type, reshape, unary, FLOATS};
use crate::tensor::ElemType;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// The WebNN pool of an ONNX one, checking what WebNN cannot express.
fn pool_op(n: &NodeCx<'_>, x: &Value) -> OpResult<&'static str> {
    Ok(match n.op_type {
        "MaxPool" => {
            if n.output_used(1) {
                bail!("its second output, Indices, is used; WebNN's maxPool2d has no indices output (remove the output or compute the indices another way)");
            }
            let eight_bit = [ElemType::F32, ElemType::F16, ElemType::I8, ElemType::U8];
            require_type(x, &eight_bit, "the input X")?;
            "maxPool2d"
        }
        "AveragePool" => {
            require_type(x, FLOATS, "the input X")?;
            "averagePool2d"
        }
        _ => {
            require_type(x, FLOATS, "the input X")?;
            let p = n.attrs.int_or("p", 2)?;
            if p != 2 {
                bail!("attribute p is {p}; WebNN pools with p = 2 only (l2Pool2d)");
            }
            "l2Pool2d"
        }
    })
}

/// How WebNN should round to reach `want`: no option (floor), `ceil`, or explicit sizes.
fn rounding(win: &Window, spatial: &[u32], want: &[u32]) -> OpResult<Vec<(&'static str, Json)>> {
    let mut floor = Vec::new();
    let mut ceil = Vec::new();
    for (i, &d) in spatial.iter().enumerate() {
        floor.push(out_size(win, i, d, false)?);
        let padded = u64::from(d) + u64::from(win.begin[i]) + u64::from(win.end[i]);
        let extent = (u64::from(win.kernel[i]) - 1) * u64::from(win.dilations[i]) + 1;
        let c = (padded - extent).div_ceil(u64::from(win.strides[i])) + 1;
        ceil.push(c as u32);
    }
    Ok(if want == floor {
        vec![]
    } else if want == ceil {
        vec![("outputShapeRounding", Json::from("ceil"))]
    } else {
        vec![
            ("outputShapeRounding", Json::from("ceil")),
            ("outputSizes", u32s(want)),
        ]
    })
}

/// `x` padded with zeros by the window's padding (for `count_include_pad = 1`).
fn pad_zeros(cx: &mut Cx, x: &Operand, win: &Window) -> Operand {
    let begin: Vec<u32> = [&[0, 0][..], &win.begin].concat();
    let end: Vec<u32> = [&[0, 0][..], &win.end].concat();
    let shape = x
        .shape
        .iter()
        .zip(begin.iter().zip(&end))
        .map(|(&d, (&b, &e))| d.saturating_add(b).saturating_add(e))
        .collect();
    cx.emit(
        "pad",
        &[x],
        vec![
            ("beginningPadding", u32s(&begin)),
            ("endingPadding", u32s(&end)),
            ("mode", Json::from("constant")),
            ("value", Json::from(0)),
        ],
        x.elem,
        shape,
    )
}

pub(super) fn pool(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let op = pool_op(n, x)?;
    spatial_rank(x, "this pool")?;
    let xs = x.shape().to_vec();
    let dims = xs.len() - 2;
    let Some(kernel) = n.attrs.ints("kernel_shape")? else {
        bail!("attribute kernel_shape is required");
    };
    if kernel.len() != dims
        || kernel
            .iter()
            .any(|&k| !(1..=i64::from(u32::MAX)).contains(&k))
    {
        bail!("attribute kernel_shape is {kernel:?}: expected {dims} positive sizes");
    }
    let mut win = window(n, &xs[2..], kernel.iter().map(|&k| k as u32).collect())?;
    let ceil = n.attrs.int_or("ceil_mode", 0)? != 0;
    let mut out: Vec<u32> = Vec::with_capacity(dims);
    for (i, &d) in xs[2..].iter().enumerate() {
        out.push(out_size(&win, i, d, ceil)?);
    }
    let out_shape = [&xs[..2], &out[..]].concat();
    let one_d = dims == 1;
    let mut xo = if one_d {
        reshaped(cx, x, with_height(&xs))?
    } else {
        cx.operand(x)?
    };
    if one_d {
        win = win.lifted();
        out.insert(0, 1);
    }
    let include_pad = n.op_type == "AveragePool" && n.attrs.int_or("count_include_pad", 0)? != 0;
    if include_pad && win.padding().iter().any(|&p| p != 0) {
        xo = pad_zeros(cx, &xo, &win);
        win.begin.fill(0);
        win.end.fill(0);
    }
    let mut options = win.options();
    options.insert(0, ("windowDimensions", u32s(&win.kernel)));
    options.extend(rounding(&win, &xo.shape[2..], &out)?);
    let shape = [&xs[..2], &out[..]].concat();
    let counts = valid_counts(&win, &xo.shape[2..], &out);
    let full = f64::from(win.kernel[0]) * f64::from(win.kernel[1]);
    let y = if op == "maxPool2d" {
        // 8-bit integers pooled as float32 (exact; Chromium pools floats only)
        let elem = xo.elem;
        let xf = cast(cx, &xo, if elem.is_float() { elem } else { ElemType::F32 })?;
        let y = cx.emit(op, &[&xf], options, xf.elem, shape);
        cast(cx, &y, elem)?
    } else if counts.iter().all(|&c| c == full) {
        cx.emit(op, &[&xo], options, xo.elem, shape)
    } else {
        partial_windows(cx, op, &xo, options, shape, &counts)?
    };
    Ok(one(reshape(cx, &y, out_shape)))
}

/// For each output position (row-major over the 2-D output), how many of its window's
/// positions fall inside the input (not in the padding or past the end).
fn valid_counts(win: &Window, spatial: &[u32], out: &[u32]) -> Vec<f64> {
    let per_dim: Vec<Vec<f64>> = (0..2)
        .map(|i| {
            (0..out[i])
                .map(|o| {
                    let start = i64::from(o) * i64::from(win.strides[i]) - i64::from(win.begin[i]);
                    (0..win.kernel[i])
                        .filter(|&j| {
                            let p = start + i64::from(j) * i64::from(win.dilations[i]);
                            p >= 0 && p < i64::from(spatial[i])
                        })
                        .count() as f64
                })
                .collect()
        })
        .collect();
    per_dim[0]
        .iter()
        .flat_map(|&a| per_dim[1].iter().map(move |&b| a * b))
        .collect()
}

/// Average and L2 pools where some window reaches into the padding or past the end. Browsers
/// differ on whether such positions count (Chromium's TFLite backend counts them), so the
/// average is taken as `averagePool(x) / averagePool(ones)`, which is the mean over the valid
/// positions either way, and the L2 norm as `sqrt(that mean of x^2 * valid count)`.
fn partial_windows(
    cx: &mut Cx,
    op: &str,
    x: &Operand,
    options: Vec<(&'static str, Json)>,
    shape: Vec<u32>,
    counts: &[f64],
) -> OpResult<Operand> {
    let e = x.elem;
    let ones_shape = vec![1, 1, x.shape[2], x.shape[3]];
    let ones = cx.constant_f64(e, ones_shape, &vec![1.0; count(&x.shape[2..]) as usize])?;
    let out_hw = vec![1, 1, shape[2], shape[3]];
    let input = if op == "l2Pool2d" {
        binary(cx, "mul", x, x, e)?
    } else {
        x.clone()
    };
    let sum = cx.emit("averagePool2d", &[&input], options.clone(), e, shape);
    let valid = cx.emit("averagePool2d", &[&ones], options, e, out_hw.clone());
    let mean = binary(cx, "div", &sum, &valid, e)?;
    if op != "l2Pool2d" {
        return Ok(mean);
    }
    let n = cx.constant_f64(e, out_hw, counts)?;
    let total = binary(cx, "mul", &mean, &n, e)?;
    Ok(unary(cx, "sqrt", &total))
}

/// The global pools as reductions over every spatial axis, dims kept.
pub(super) fn global_pool(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let op = match n.op_type {
        "GlobalAveragePool" => "reduceMean",
        "GlobalMaxPool" => "reduceMax",
        _ => match n.attrs.int_or("p", 2)? {
            2 => "reduceL2",
            1 => "reduceL1",
            p => bail!("attribute p is {p}; only p = 1 and p = 2 convert (reduceL1, reduceL2)"),
        },
    };
    require_type(x, FLOATS, "the input X")?;
    if x.rank() < 3 {
        bail!(
            "the input has shape {:?}; expected [N, C, spatial...] (rank 3 or more)",
            x.shape()
        );
    }
    let xo = cx.operand(x)?;
    let axes: Vec<u32> = (2..xo.rank() as u32).collect();
    let mut shape = xo.shape.clone();
    shape[2..].fill(1);
    let y = cx.emit(
        op,
        &[&xo],
        vec![("axes", u32s(&axes)), ("keepDimensions", Json::from(true))],
        xo.elem,
        shape,
    );
    Ok(one(y))
}
