//! Reductions, `ArgMax`/`ArgMin` and `CumSum`.
//!
//! - `ReduceSum`, `ReduceMean`, `ReduceMax`, `ReduceMin`, `ReduceProd`, `ReduceL1`,
//!   `ReduceL2`, `ReduceLogSum`, `ReduceLogSumExp`, `ReduceSumSquare` become the WebNN
//!   reduction of the same name with explicit `axes` and `keepDimensions`. The axes are the
//!   `axes` attribute before opset 13 (`ReduceSum`) or 18 (the others) and the second input
//!   from then on, which must be known while converting. No axes reduce every axis, unless
//!   `noop_with_empty_axes=1`, which makes the node an identity. `ReduceMax`/`ReduceMin` of
//!   `bool` reduce its 0/1 values as int32 and compare the result with zero.
//! - `ArgMax`/`ArgMin` return `int64` (`outputDataType`); `select_last_index=1` reverses the
//!   axis first and maps the index back: `n - 1 - index`.
//! - `CumSum` is `cumulativeSum` (its axis must be known while converting).
//! - A reduction of an empty input (a zero dim) is the reduction's identity (0, 1, -inf, …),
//!   a constant.
//! - With the input known on the host (shape arithmetic: `ReduceProd` of a shape, say) every
//!   reduction and `ArgMax`/`ArgMin` fold instead, empty reductions included.
//!
//! `TopK` is not lowered: WebNN has no top-k or sort.

use super::elementwise::FOLD_LIMIT;
use super::util::{axes as norm_axes, axis as norm_axis, cast, count, require_type, NUMBERS};
use super::Lower;
use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::{ElemType, HostTensor};
use crate::value::{Operand, Value};
use serde_json::Value as Json;

mod fold;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &[
    "ArgMax",
    "ArgMin",
    "CumSum",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "ReduceL1" | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceMax"
        | "ReduceMean" | "ReduceMin" | "ReduceProd" | "ReduceSum" | "ReduceSumSquare" => reduce,
        "ArgMax" | "ArgMin" => arg_extreme,
        "CumSum" => cumsum,
        _ => return None,
    })
}

/// Types WebNN's summing reductions (and `cumulativeSum`) take.
const SUMMABLE: &[ElemType] = &[
    ElemType::F32,
    ElemType::F16,
    ElemType::I32,
    ElemType::U32,
    ElemType::I64,
    ElemType::U64,
];

/// The WebNN reduction of an ONNX one and the types it takes.
fn reduce_op(op_type: &str) -> (&'static str, &'static [ElemType]) {
    use super::util::FLOATS;
    match op_type {
        "ReduceL1" => ("reduceL1", SUMMABLE),
        "ReduceL2" => ("reduceL2", FLOATS),
        "ReduceLogSum" => ("reduceLogSum", FLOATS),
        "ReduceLogSumExp" => ("reduceLogSumExp", FLOATS),
        "ReduceMax" => ("reduceMax", NUMBERS),
        "ReduceMin" => ("reduceMin", NUMBERS),
        "ReduceMean" => ("reduceMean", FLOATS),
        "ReduceProd" => ("reduceProduct", SUMMABLE),
        "ReduceSumSquare" => ("reduceSumSquare", SUMMABLE),
        _ => ("reduceSum", SUMMABLE),
    }
}

/// The shape after reducing `axes` (reduced dims kept as 1 when `keep`).
pub(crate) fn reduced_shape(shape: &[u32], axes: &[u32], keep: bool) -> Vec<u32> {
    let mut out = Vec::with_capacity(shape.len());
    for (i, &d) in shape.iter().enumerate() {
        if !axes.contains(&(i as u32)) {
            out.push(d);
        } else if keep {
            out.push(1);
        }
    }
    out
}

/// Emits the WebNN reduction `op` of `x` over `axes` (sorted, distinct).
pub(crate) fn emit_reduce(cx: &mut Cx, op: &str, x: &Operand, axes: &[u32], keep: bool) -> Operand {
    let shape = reduced_shape(&x.shape, axes, keep);
    cx.emit(
        op,
        &[x],
        vec![("axes", u32s(axes)), ("keepDimensions", Json::Bool(keep))],
        x.elem,
        shape,
    )
}

/// The axes a reduction node names, as ONNX axes (`None`: none given).
fn reduce_axes(n: &NodeCx<'_>) -> OpResult<Option<Vec<i64>>> {
    let in_input = if n.op_type == "ReduceSum" {
        n.opset >= 13
    } else {
        n.opset >= 18
    };
    if in_input {
        if n.attrs.has("axes") {
            bail!(
                "sets the attribute axes, which opset {} replaced by the second input (move the axes to an input, or import an older opset)",
                n.opset
            );
        }
        return n.const_ints(1, "the axes");
    }
    Ok(n.attrs.ints("axes")?)
}

fn reduce(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let keep = n.attrs.int_or("keepdims", 1)? != 0;
    let noop = n.attrs.int_or("noop_with_empty_axes", 0)? != 0;
    let rank = x.rank();
    let axes = match reduce_axes(n)? {
        Some(list) if !list.is_empty() => norm_axes(&list, rank)?,
        _ if noop => return Ok(vec![x.clone()]),
        _ => (0..rank as u32).collect(),
    };
    if count(x.shape()) == 0 {
        // nothing to reduce: the result is the reduction's identity, known now
        let empty = HostTensor::from_f64s(x.elem(), x.shape().to_vec(), &[]);
        return Ok(vec![Value::constant(fold::reduce(
            n.op_type, &empty, &axes, keep,
        ))]);
    }
    if let Some(t) = x.as_const() {
        if count(&t.shape) <= FOLD_LIMIT && t.elem != ElemType::Bf16 {
            return Ok(vec![Value::constant(fold::reduce(
                n.op_type, t, &axes, keep,
            ))]);
        }
    }
    let (op, types) = reduce_op(n.op_type);
    let is_bool_extreme = x.elem() == ElemType::Bool && matches!(op, "reduceMax" | "reduceMin");
    if !is_bool_extreme {
        require_type(x, types, "the input")?;
    }
    let xo = cx.operand(x)?;
    if is_bool_extreme {
        // browsers reduce no uint8: the 0/1 values as int32
        let wide = cast(cx, &xo, ElemType::I32)?;
        let r = emit_reduce(cx, op, &wide, &axes, keep);
        return Ok(vec![Value::Operand(cast(cx, &r, ElemType::Bool)?)]);
    }
    Ok(vec![Value::Operand(emit_reduce(cx, op, &xo, &axes, keep))])
}

/// `ArgMax` / `ArgMin`: `int64` indices.
fn arg_extreme(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let keep = n.attrs.int_or("keepdims", 1)? != 0;
    let last = n.attrs.int_or("select_last_index", 0)? != 0;
    let a = norm_axis(n.attrs.int_or("axis", 0)?, x.rank())?;
    let max = n.op_type == "ArgMax";
    let shape = reduced_shape(x.shape(), &[a as u32], keep);
    if let Some(t) = x.as_const() {
        if count(&t.shape) <= FOLD_LIMIT {
            let v = fold::arg(t, a, max, last);
            return Ok(vec![Value::constant(HostTensor::from_i64s(
                ElemType::I64,
                shape,
                &v,
            ))]);
        }
    }
    require_type(x, NUMBERS, "the input")?;
    let mut xo = cx.operand(x)?;
    if last {
        xo = cx.emit(
            "reverse",
            &[&xo],
            vec![("axes", u32s(&[a as u32]))],
            xo.elem,
            xo.shape.clone(),
        );
    }
    let op = if max { "argMax" } else { "argMin" };
    let mut idx = cx.emit(
        op,
        &[&xo],
        vec![
            ("axis", Json::from(a as u32)),
            ("keepDimensions", Json::Bool(keep)),
            ("outputDataType", Json::from("int64")),
        ],
        ElemType::I64,
        shape.clone(),
    );
    if last {
        let top = cx.scalar(ElemType::I64, f64::from(x.shape()[a]) - 1.0)?;
        idx = cx.emit("sub", &[&top, &idx], vec![], ElemType::I64, shape);
    }
    Ok(vec![Value::Operand(idx)])
}

/// `CumSum`: `cumulativeSum` with `exclusive` and `reversed`.
fn cumsum(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    n.input(1)?;
    let list = n.const_ints(1, "the axis")?.unwrap_or_default();
    let [a] = list[..] else {
        bail!("the axis must hold one integer, it holds {}", list.len());
    };
    let a = norm_axis(a, x.rank())?;
    let exclusive = n.attrs.int_or("exclusive", 0)? != 0;
    let reverse = n.attrs.int_or("reverse", 0)? != 0;
    require_type(x, SUMMABLE, "the input")?;
    let xo = cx.operand(x)?;
    let out = cx.emit(
        "cumulativeSum",
        &[&xo],
        vec![
            ("axis", Json::from(a as u32)),
            ("exclusive", Json::Bool(exclusive)),
            ("reversed", Json::Bool(reverse)),
        ],
        xo.elem,
        xo.shape.clone(),
    );
    Ok(vec![Value::Operand(out)])
}
