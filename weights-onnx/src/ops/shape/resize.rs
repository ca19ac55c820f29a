//! `Resize` and `Upsample`: WebNN's `resample2d`, which resizes two consecutive axes of a 4-D
//! input. Its linear mode is ONNX's `half_pixel`; its nearest mode reads input
//! `floor((out + 0.5) · in / out)`. An ONNX mapping is accepted when it picks the same input
//! for every output of the node (checked output by output), refused otherwise, naming the
//! attributes.

use super::host::dim;
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util::{one, require_type, FLOATS};
use crate::value::Value;
use serde_json::Value as Json;

/// The attributes that decide the mapping.
struct Params {
    mode: String,
    coord: String,
    nearest: String,
}

fn params(n: &NodeCx<'_>) -> OpResult<Params> {
    let mode = n.attrs.string_or("mode", "nearest")?;
    if n.op_type == "Upsample" || n.opset < 11 {
        // no coordinate modes yet: asymmetric; nearest floors upsampling (onnxruntime's
        // "simple" mode: it ceils downsampling)
        return Ok(Params {
            mode,
            coord: "asymmetric".into(),
            nearest: "simple".into(),
        });
    }
    if n.attrs.int_or("antialias", 0)? != 0 && mode != "nearest" {
        bail!("antialias=1 is not supported: WebNN's resample2d does not antialias (export without antialiasing)");
    }
    let policy = n.attrs.string_or("keep_aspect_ratio_policy", "stretch")?;
    if policy != "stretch" {
        bail!("keep_aspect_ratio_policy {policy:?} is not supported (give the output sizes with \"stretch\")");
    }
    Ok(Params {
        mode,
        coord: n
            .attrs
            .string_or("coordinate_transformation_mode", "half_pixel")?,
        nearest: n.attrs.string_or("nearest_mode", "round_prefer_floor")?,
    })
}

/// The per-axis scales and output sizes.
fn scales_and_sizes(n: &NodeCx<'_>, shape: &[u32]) -> OpResult<(Vec<f64>, Vec<u32>)> {
    let r = shape.len();
    let (scales, sizes, axes) = if n.op_type == "Upsample" && n.opset < 9 {
        let s = n
            .attrs
            .floats("scales")?
            .ok_or("the scales attribute is required")?;
        (
            Some(s.iter().map(|&v| f64::from(v)).collect::<Vec<_>>()),
            None,
            None,
        )
    } else if n.op_type == "Upsample" || n.opset < 11 {
        (n.const_floats(1, "the scales")?, None, None)
    } else {
        let s = n.const_floats(2, "the scales")?.filter(|v| !v.is_empty());
        let z = n.const_ints(3, "the sizes")?.filter(|v| !v.is_empty());
        (s, z, n.attrs.ints("axes")?)
    };
    let axes: Vec<usize> = match axes {
        Some(a) => a
            .iter()
            .map(|&v| crate::ops::util::axis(v, r))
            .collect::<OpResult<_>>()?,
        None => (0..r).collect(),
    };
    let (mut sc, mut out) = (vec![1.0; r], shape.to_vec());
    match (scales, sizes) {
        (Some(s), None) => {
            if s.len() != axes.len() {
                bail!(
                    "the scales {s:?} must have one entry per axis ({})",
                    axes.len()
                );
            }
            for (&a, &v) in axes.iter().zip(&s) {
                if !(v > 0.0 && v.is_finite()) {
                    bail!("scale {v} of axis {a} must be positive");
                }
                sc[a] = v;
                out[a] = dim(
                    (f64::from(shape[a]) * v).floor() as i64,
                    "a resized dimension",
                )?;
            }
        }
        (None, Some(z)) => {
            if z.len() != axes.len() {
                bail!(
                    "the sizes {z:?} must have one entry per axis ({})",
                    axes.len()
                );
            }
            for (&a, &v) in axes.iter().zip(&z) {
                out[a] = dim(v, "a size")?;
                sc[a] = f64::from(out[a]) / f64::from(shape[a].max(1));
            }
        }
        (Some(_), Some(_)) => bail!("both scales and sizes are given; ONNX allows one"),
        (None, None) => bail!("neither scales nor sizes is given"),
    }
    Ok((sc, out))
}

/// The input ONNX reads for output `o` of an axis (`inp` → `out`, scale `s`), nearest mode.
fn onnx_nearest(p: &Params, o: u32, inp: u32, out: u32, s: f64) -> i64 {
    let (o, fi, fo) = (f64::from(o), f64::from(inp), f64::from(out));
    let x = match p.coord.as_str() {
        "half_pixel" => (o + 0.5) / s - 0.5,
        "half_pixel_symmetric" => {
            let adj = fo / (fi * s);
            fi / 2.0 * (1.0 - adj) + (o + 0.5) / s - 0.5
        }
        "pytorch_half_pixel" if out > 1 => (o + 0.5) / s - 0.5,
        "pytorch_half_pixel" => 0.0,
        "align_corners" if out > 1 => o * (fi - 1.0) / (fo - 1.0),
        "align_corners" => 0.0,
        "tf_half_pixel_for_nn" => (o + 0.5) / s,
        _ => o / s,
    };
    let i = match p.nearest.as_str() {
        "simple" if s < 1.0 => x.ceil(),
        "simple" | "floor" => x.floor(),
        "ceil" => x.ceil(),
        "round_prefer_ceil" => (x + 0.5).floor(),
        _ if x.fract().abs() == 0.5 => x.floor(),
        _ => x.round(),
    };
    (i as i64).clamp(0, i64::from(inp) - 1)
}

/// Whether WebNN's mapping equals ONNX's on this axis.
fn matches(p: &Params, inp: u32, out: u32, s: f64) -> bool {
    if p.mode == "linear" {
        let exact = (f64::from(out) / f64::from(inp) - s).abs() < 1e-9;
        return exact
            && match p.coord.as_str() {
                "half_pixel" | "half_pixel_symmetric" => true,
                "pytorch_half_pixel" => out > 1,
                _ => false,
            };
    }
    (0..out).all(|o| {
        let web = ((2 * u64::from(o) + 1) * u64::from(inp) / (2 * u64::from(out))) as i64;
        web.min(i64::from(inp) - 1) == onnx_nearest(p, o, inp, out, s)
    })
}

/// `Resize` (opset 10 on) and `Upsample` (opsets 7–9).
pub(crate) fn resize(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let p = params(n)?;
    let mode = match p.mode.as_str() {
        "nearest" => "nearest-neighbor",
        "linear" | "bilinear" => "linear",
        m => bail!("mode {m:?} is not supported: WebNN's resample2d is nearest-neighbor or linear"),
    };
    if p.coord == "tf_crop_and_resize" {
        bail!("coordinate_transformation_mode \"tf_crop_and_resize\" is not supported: WebNN's resample2d has no region of interest");
    }
    let shape = x.shape().to_vec();
    let (scales, out) = scales_and_sizes(n, &shape)?;
    let moved: Vec<usize> = (0..shape.len())
        .filter(|&i| out[i] != shape[i] || scales[i] != 1.0)
        .collect();
    if moved.is_empty() {
        return Ok(vec![x.clone()]);
    }
    let axes: [u32; 2] = match (shape.len(), moved.as_slice()) {
        (4, m) if m.iter().all(|&a| a >= 2) => [2, 3],
        (4, m) if m.iter().all(|&a| a == 1 || a == 2) => [1, 2],
        _ => bail!("it resizes axes {moved:?} of a rank-{} input; WebNN's resample2d resizes two consecutive axes of a 4-D input", shape.len()),
    };
    require_type(x, FLOATS, "the input")?;
    for &a in &axes {
        let a = a as usize;
        if out[a] == 0 || shape[a] == 0 {
            bail!("the output size of axis {a} is 0; WebNN has no empty tensors");
        }
        if !matches(&p, shape[a], out[a], scales[a]) {
            bail!(
                "mode {:?} with coordinate_transformation_mode {:?}{} resizing axis {a} from {} to {} (scale {}) reads other input pixels than WebNN's resample2d (half-pixel centers{}); re-export with coordinate_transformation_mode \"half_pixel\"{}",
                p.mode,
                p.coord,
                if p.mode == "nearest" { format!(" and nearest_mode {:?}", p.nearest) } else { String::new() },
                shape[a],
                out[a],
                scales[a],
                if p.mode == "nearest" { ", input floor((out + 0.5) / scale)" } else { ", scale = output / input" },
                if p.mode == "nearest" { " and nearest_mode \"round_prefer_ceil\"" } else { " and sizes that are whole multiples" },
            );
        }
    }
    let o = cx.operand(x)?;
    let sizes = [out[axes[0] as usize], out[axes[1] as usize]];
    let opts = vec![
        ("mode", Json::from(mode)),
        ("sizes", u32s(&sizes)),
        ("axes", u32s(&axes)),
    ];
    Ok(one(cx.emit("resample2d", &[&o], opts, o.elem, out)))
}
