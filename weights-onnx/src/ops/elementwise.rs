//! Elementwise operators: unary math, binary arithmetic and comparisons with numpy
//! broadcasting, the logical operators, `Where`, and the variadic `Max`, `Min`, `Sum`, `Mean`.
//! With every input known on the host (shape arithmetic, mostly) they fold instead.

use super::util::{
    binary, broadcast, cast, count, one, require_type, same_type, unary, FLOATS, NUMBERS,
};
use super::Lower;
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::{ElemType, HostTensor};
use crate::value::Value;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &[
    "Abs",
    "Acosh",
    "Add",
    "And",
    "Asinh",
    "Atanh",
    "Ceil",
    "Cos",
    "Cosh",
    "Div",
    "Dropout",
    "Equal",
    "Erf",
    "Exp",
    "Floor",
    "Greater",
    "GreaterOrEqual",
    "Identity",
    "IsInf",
    "IsNaN",
    "Less",
    "LessOrEqual",
    "Log",
    "Max",
    "Mean",
    "Min",
    "Mod",
    "Mul",
    "Neg",
    "Not",
    "Or",
    "Pow",
    "Reciprocal",
    "Round",
    "Sign",
    "Sin",
    "Sinh",
    "Sqrt",
    "Sub",
    "Sum",
    "Tan",
    "Where",
    "Xor",
];

/// Folding stops at this many output elements: larger results are computed by the graph.
pub(crate) const FOLD_LIMIT: u64 = 1 << 20;

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "Abs" | "Neg" | "Sign" | "Ceil" | "Floor" | "Round" | "Sqrt" | "Exp" | "Log" | "Sin"
        | "Cos" | "Tan" | "Erf" | "Reciprocal" | "Not" | "IsNaN" => simple_unary,
        "Sinh" | "Cosh" | "Asinh" | "Acosh" | "Atanh" => hyperbolic,
        "IsInf" => is_inf,
        "Identity" => identity,
        "Dropout" => dropout,
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Equal" | "Greater" | "GreaterOrEqual" | "Less"
        | "LessOrEqual" | "And" | "Or" | "Xor" | "Mod" => simple_binary,
        "Max" | "Min" | "Sum" | "Mean" => variadic,
        "Where" => where_,
        _ => return None,
    })
}

/// The WebNN operation of a unary ONNX operator, and the types it takes.
fn unary_op(op_type: &str) -> (&'static str, &'static [ElemType]) {
    const SIGNED: &[ElemType] = &[
        ElemType::F32,
        ElemType::F16,
        ElemType::I32,
        ElemType::I64,
        ElemType::I8,
    ];
    match op_type {
        "Abs" => ("abs", SIGNED),
        "Neg" => ("neg", SIGNED),
        "Sign" => ("sign", SIGNED),
        "Ceil" => ("ceil", FLOATS),
        "Floor" => ("floor", FLOATS),
        "Round" => ("roundEven", FLOATS),
        "Sqrt" => ("sqrt", FLOATS),
        "Exp" => ("exp", FLOATS),
        "Log" => ("log", FLOATS),
        "Sin" => ("sin", FLOATS),
        "Cos" => ("cos", FLOATS),
        "Tan" => ("tan", FLOATS),
        "Erf" => ("erf", FLOATS),
        "Reciprocal" => ("reciprocal", FLOATS),
        "Not" => ("logicalNot", &[ElemType::Bool]),
        "IsNaN" => ("isNaN", FLOATS),
        _ => ("identity", NUMBERS),
    }
}

fn simple_unary(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let (op, types) = unary_op(n.op_type);
    // Abs and Neg of unsigned integers: WebNN's abs/neg take signed types only
    if n.op_type == "Abs" && matches!(x.elem(), ElemType::U8 | ElemType::U32 | ElemType::U64) {
        return Ok(vec![x.clone()]);
    }
    if let Some(t) = fold_input(n).filter(|_| x.elem().is_float() || types.contains(&x.elem())) {
        // double constants too (folded in f64)
        return Ok(vec![Value::constant(fold_unary(n.op_type, &t[0]))]);
    }
    require_type(x, types, "the input")?;
    let xo = cx.operand(x)?;
    let elem = if n.op_type == "IsNaN" {
        ElemType::Bool
    } else {
        x.elem()
    };
    Ok(one(cx.emit(op, &[&xo], vec![], elem, xo.shape.clone())))
}

/// Hyperbolic functions from `exp`, `log` and `sqrt`:
/// sinh = (e^x - e^-x)/2, cosh = (e^x + e^-x)/2, asinh = ln(x + sqrt(x^2 + 1)),
/// acosh = ln(x + sqrt(x^2 - 1)), atanh = ln((1 + x)/(1 - x))/2.
fn hyperbolic(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let x = cx.operand(x)?;
    let e = x.elem;
    let half = cx.scalar(e, 0.5)?;
    let onec = cx.scalar(e, 1.0)?;
    let out = match n.op_type {
        "Sinh" | "Cosh" => {
            let ex = unary(cx, "exp", &x);
            let nx = unary(cx, "neg", &x);
            let enx = unary(cx, "exp", &nx);
            let op = if n.op_type == "Sinh" { "sub" } else { "add" };
            let s = binary(cx, op, &ex, &enx, e)?;
            binary(cx, "mul", &s, &half, e)?
        }
        "Asinh" | "Acosh" => {
            let sq = binary(cx, "mul", &x, &x, e)?;
            let op = if n.op_type == "Asinh" { "add" } else { "sub" };
            let inner = binary(cx, op, &sq, &onec, e)?;
            let root = unary(cx, "sqrt", &inner);
            let s = binary(cx, "add", &x, &root, e)?;
            unary(cx, "log", &s)
        }
        _ => {
            let num = binary(cx, "add", &onec, &x, e)?;
            let den = binary(cx, "sub", &onec, &x, e)?;
            let q = binary(cx, "div", &num, &den, e)?;
            let l = unary(cx, "log", &q);
            binary(cx, "mul", &l, &half, e)?
        }
    };
    Ok(one(out))
}

/// `IsInf` with its `detect_positive`/`detect_negative` attributes.
fn is_inf(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    require_type(x, FLOATS, "the input")?;
    let pos = n.attrs.int_or("detect_positive", 1)? != 0;
    let neg = n.attrs.int_or("detect_negative", 1)? != 0;
    let x = cx.operand(x)?;
    let shape = x.shape.clone();
    let inf = cx.emit("isInfinite", &[&x], vec![], ElemType::Bool, shape.clone());
    let out = match (pos, neg) {
        (true, true) => inf,
        (false, false) => {
            let zero = cx.scalar(ElemType::Bool, 0.0)?;
            binary(cx, "logicalAnd", &inf, &zero, ElemType::Bool)?
        }
        (p, _) => {
            let zero = cx.scalar(x.elem, 0.0)?;
            let side = binary(
                cx,
                if p { "greater" } else { "lesser" },
                &x,
                &zero,
                ElemType::Bool,
            )?;
            binary(cx, "logicalAnd", &inf, &side, ElemType::Bool)?
        }
    };
    Ok(one(out))
}

fn identity(_cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    Ok(vec![n.input(0)?.clone()])
}

/// `Dropout` for inference: the input unchanged and a mask of `true`. In training mode (input
/// 2 from opset 12, a constant) only a ratio of 0 is deterministic; others are refused.
fn dropout(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let training = n
        .const_ints(2, "training_mode")?
        .is_some_and(|v| v.first().is_some_and(|&t| t != 0));
    if training {
        let ratio = match n.const_floats(1, "the ratio")? {
            Some(r) => r.first().copied().unwrap_or(0.5),
            None => 0.5,
        };
        if ratio != 0.0 {
            bail!("training_mode is true with ratio {ratio}: dropout then zeroes random elements, and WebNN has no random numbers (set training_mode to false, or export the model for inference)");
        }
    }
    let mut out = vec![x.clone()];
    if n.output_used(1) {
        let shape = x.shape().to_vec();
        if count(&shape) <= FOLD_LIMIT {
            let ones = vec![1i64; count(&shape) as usize];
            out.push(Value::constant(HostTensor::from_i64s(
                ElemType::Bool,
                shape,
                &ones,
            )));
        } else {
            let one = cx.scalar(ElemType::Bool, 1.0)?;
            let opts = vec![("newShape", crate::cx::u32s(&shape))];
            out.push(Value::Operand(cx.emit(
                "expand",
                &[&one],
                opts,
                ElemType::Bool,
                shape,
            )));
        }
    }
    Ok(out)
}

/// The WebNN operation of a binary ONNX operator, whether it yields `bool`, and the types.
fn binary_op(op_type: &str) -> (&'static str, bool, &'static [ElemType]) {
    const BOOL: &[ElemType] = &[ElemType::Bool];
    match op_type {
        "Add" => ("add", false, NUMBERS),
        "Sub" => ("sub", false, NUMBERS),
        "Mul" => ("mul", false, NUMBERS),
        "Div" => ("div", false, NUMBERS),
        "Pow" => ("pow", false, NUMBERS),
        "Equal" => ("equal", true, NUMBERS),
        "Greater" => ("greater", true, NUMBERS),
        "GreaterOrEqual" => ("greaterOrEqual", true, NUMBERS),
        "Less" => ("lesser", true, NUMBERS),
        "LessOrEqual" => ("lesserOrEqual", true, NUMBERS),
        "And" => ("logicalAnd", true, BOOL),
        "Or" => ("logicalOr", true, BOOL),
        "Xor" => ("logicalXor", true, BOOL),
        _ => ("", false, NUMBERS),
    }
}

fn simple_binary(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let a = n.input(0)?;
    let b = n.input(1)?;
    if n.op_type == "Equal" && a.elem() == ElemType::Bool && b.elem() == ElemType::Bool {
        // bool == bool: uint8 equality
    } else if n.op_type != "Pow" {
        same_type(a, b)?;
    }
    let (op, boolean, types) = binary_op(n.op_type);
    let types: &[ElemType] = if n.op_type == "Equal" {
        &[
            ElemType::F32,
            ElemType::F16,
            ElemType::I32,
            ElemType::U32,
            ElemType::I64,
            ElemType::U64,
            ElemType::I8,
            ElemType::U8,
            ElemType::Bool,
        ]
    } else {
        types
    };
    if let Some(t) = fold_input(n) {
        return Ok(vec![Value::constant(fold_binary(
            n.op_type, &t[0], &t[1], n,
        )?)]);
    }
    if n.op_type == "Mod" {
        return modulo(cx, n, a, b);
    }
    require_type(a, types, "the first input")?;
    let ao = cx.operand(a)?;
    let mut bo = cx.operand(b)?;
    if n.op_type == "Pow" && bo.elem != ao.elem {
        // ONNX lets the exponent's type differ (opset 12+); WebNN's pow takes one type
        bo = cast(cx, &bo, ao.elem)?;
    }
    let elem = if boolean { ElemType::Bool } else { ao.elem };
    Ok(one(binary(cx, op, &ao, &bo, elem)?))
}

/// `Mod` of floats with `fmod=1`: a - b * trunc(a / b), trunc(x) = sign(x) * floor(|x|).
/// Integer `Mod` folds on the host only (WebNN has no integer remainder).
fn modulo(cx: &mut Cx, n: &NodeCx<'_>, a: &Value, b: &Value) -> OpResult<Vec<Value>> {
    let fmod = n.attrs.int_or("fmod", 0)?;
    if !a.elem().is_float() {
        bail!("integer Mod of values the graph computes is not supported: WebNN has no integer remainder (only Mod of constants folds)");
    }
    if fmod != 1 {
        bail!("Mod of floats requires fmod=1 (ONNX defines fmod=0 for integers only)");
    }
    let e = a.elem();
    let ao = cx.operand(a)?;
    let bo = cx.operand(b)?;
    let q = binary(cx, "div", &ao, &bo, e)?;
    let s = unary(cx, "sign", &q);
    let abs = unary(cx, "abs", &q);
    let fl = unary(cx, "floor", &abs);
    let t = binary(cx, "mul", &s, &fl, e)?;
    let bt = binary(cx, "mul", &bo, &t, e)?;
    Ok(one(binary(cx, "sub", &ao, &bt, e)?))
}

/// `Max`, `Min`, `Sum`, `Mean` over one or more inputs, pairwise.
fn variadic(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let inputs: Vec<&Value> = n.inputs.iter().flatten().collect();
    let Some(first) = inputs.first() else {
        bail!("has no inputs (at least one is required)");
    };
    for v in &inputs[1..] {
        same_type(first, v)?;
    }
    require_type(first, NUMBERS, "the inputs")?;
    let op = match n.op_type {
        "Max" => "max",
        "Min" => "min",
        _ => "add",
    };
    let e = first.elem();
    let mut acc = cx.operand(first)?;
    for v in &inputs[1..] {
        let o = cx.operand(v)?;
        acc = binary(cx, op, &acc, &o, e)?;
    }
    if inputs.len() == 1 {
        acc = unary(cx, "identity", &acc);
    }
    if n.op_type == "Mean" && inputs.len() > 1 {
        let k = cx.scalar(e, inputs.len() as f64)?;
        acc = binary(cx, "div", &acc, &k, e)?;
    }
    Ok(one(acc))
}

fn where_(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let c = n.input(0)?;
    let a = n.input(1)?;
    let b = n.input(2)?;
    if c.elem() != ElemType::Bool {
        bail!("the condition is {}, expected bool", c.elem());
    }
    same_type(a, b)?;
    if let Some(t) = fold_input(n) {
        let shape = broadcast(&broadcast(&t[0].shape, &t[1].shape)?, &t[2].shape)?;
        let cv = expand_to(&t[0].to_f64s(), &t[0].shape, &shape);
        let out_is_int = !t[1].elem.is_float();
        if out_is_int {
            let av = expand_to_i(&t[1].to_i64s(), &t[1].shape, &shape);
            let bv = expand_to_i(&t[2].to_i64s(), &t[2].shape, &shape);
            let v: Vec<i64> = (0..av.len())
                .map(|i| if cv[i] != 0.0 { av[i] } else { bv[i] })
                .collect();
            return Ok(vec![Value::constant(HostTensor::from_i64s(
                t[1].elem, shape, &v,
            ))]);
        }
        let av = expand_to(&t[1].to_f64s(), &t[1].shape, &shape);
        let bv = expand_to(&t[2].to_f64s(), &t[2].shape, &shape);
        let v: Vec<f64> = (0..av.len())
            .map(|i| if cv[i] != 0.0 { av[i] } else { bv[i] })
            .collect();
        return Ok(vec![Value::constant(HostTensor::from_f64s(
            t[1].elem, shape, &v,
        ))]);
    }
    let co = cx.operand(c)?;
    let ao = cx.operand(a)?;
    let bo = cx.operand(b)?;
    let shape = broadcast(&broadcast(&co.shape, &ao.shape)?, &bo.shape)?;
    Ok(one(cx.emit(
        "where",
        &[&co, &ao, &bo],
        vec![],
        ao.elem,
        shape,
    )))
}

// -- folding on the host --

/// The inputs' host values when every input is one and the output stays under [`FOLD_LIMIT`].
pub(crate) fn fold_input(n: &NodeCx<'_>) -> Option<Vec<HostTensor>> {
    if !n.all_const() || n.inputs.iter().all(|v| v.is_none()) {
        return None;
    }
    let ts: Vec<HostTensor> = n
        .inputs
        .iter()
        .flatten()
        .filter_map(|v| v.as_const().cloned())
        .collect();
    let mut shape: Vec<u32> = Vec::new();
    for t in &ts {
        shape = broadcast(&shape, &t.shape).ok()?;
    }
    (count(&shape) <= FOLD_LIMIT).then_some(ts)
}

/// Values of `shape` broadcast to `to` (row-major).
pub(crate) fn expand_to(values: &[f64], shape: &[u32], to: &[u32]) -> Vec<f64> {
    let idx = broadcast_indices(shape, to);
    idx.into_iter().map(|i| values[i]).collect()
}

/// Integer values of `shape` broadcast to `to` (row-major).
pub(crate) fn expand_to_i(values: &[i64], shape: &[u32], to: &[u32]) -> Vec<i64> {
    let idx = broadcast_indices(shape, to);
    idx.into_iter().map(|i| values[i]).collect()
}

/// For each element of `to`, the index of the element of `shape` it reads under broadcasting.
pub(crate) fn broadcast_indices(shape: &[u32], to: &[u32]) -> Vec<usize> {
    let total = count(to) as usize;
    let r = to.len();
    let pad = r - shape.len();
    // strides of the source, 0 where it broadcasts
    let mut strides = vec![0usize; r];
    let mut s = 1usize;
    for i in (0..shape.len()).rev() {
        strides[i + pad] = if shape[i] == 1 { 0 } else { s };
        s *= shape[i] as usize;
    }
    let mut out = Vec::with_capacity(total);
    let mut index = vec![0u32; r];
    for _ in 0..total {
        out.push(
            index
                .iter()
                .zip(&strides)
                .map(|(&i, &st)| i as usize * st)
                .sum(),
        );
        for d in (0..r).rev() {
            index[d] += 1;
            if index[d] < to[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

fn fold_unary(op_type: &str, t: &HostTensor) -> HostTensor {
    let shape = t.shape.clone();
    if !t.elem.is_float() && t.elem != ElemType::Bool {
        let v: Vec<i64> = t
            .to_i64s()
            .into_iter()
            .map(|x| match op_type {
                "Abs" => x.wrapping_abs(),
                "Neg" => x.wrapping_neg(),
                "Sign" => x.signum(),
                _ => x,
            })
            .collect();
        return HostTensor::from_i64s(t.elem, shape, &v);
    }
    let v: Vec<f64> = t
        .to_f64s()
        .into_iter()
        .map(|x| match op_type {
            "Abs" => x.abs(),
            "Neg" => -x,
            "Sign" => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x
                }
            }
            "Ceil" => x.ceil(),
            "Floor" => x.floor(),
            "Round" => x.round_ties_even(),
            "Sqrt" => x.sqrt(),
            "Exp" => x.exp(),
            "Log" => x.ln(),
            "Sin" => x.sin(),
            "Cos" => x.cos(),
            "Tan" => x.tan(),
            "Erf" => erf(x),
            "Reciprocal" => 1.0 / x,
            "Not" => f64::from(u8::from(x == 0.0)),
            "IsNaN" => f64::from(u8::from(x.is_nan())),
            _ => x,
        })
        .collect();
    let elem = if op_type == "IsNaN" {
        ElemType::Bool
    } else {
        t.elem
    };
    HostTensor::from_f64s(elem, shape, &v)
}

/// erf by Abramowitz-Stegun 7.1.26 refined: accurate to about 1e-7, enough for folding.
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let y = 1.0
        - t * (-x * x - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        y
    } else {
        -y
    }
}

fn fold_binary(
    op_type: &str,
    a: &HostTensor,
    b: &HostTensor,
    n: &NodeCx<'_>,
) -> OpResult<HostTensor> {
    let shape = broadcast(&a.shape, &b.shape)?;
    let (_, boolean, _) = binary_op(op_type);
    let out_elem = if boolean { ElemType::Bool } else { a.elem };
    if !a.elem.is_float() && !b.elem.is_float() {
        let av = expand_to_i(&a.to_i64s(), &a.shape, &shape);
        let bv = expand_to_i(&b.to_i64s(), &b.shape, &shape);
        let fmod = n.attrs.int_or("fmod", 0)? != 0;
        let mut v = Vec::with_capacity(av.len());
        for (&x, &y) in av.iter().zip(&bv) {
            v.push(match op_type {
                "Add" => x.wrapping_add(y),
                "Sub" => x.wrapping_sub(y),
                "Mul" => x.wrapping_mul(y),
                "Div" | "Mod" if y == 0 => {
                    bail!("integer division by zero while folding constants")
                }
                "Div" => x.wrapping_div(y),
                "Mod" if fmod => x.wrapping_rem(y),
                "Mod" => x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 },
                "Pow" => {
                    if y < 0 {
                        0
                    } else {
                        x.wrapping_pow(y.min(u32::MAX as i64) as u32)
                    }
                }
                "Equal" => i64::from(x == y),
                "Greater" => i64::from(x > y),
                "GreaterOrEqual" => i64::from(x >= y),
                "Less" => i64::from(x < y),
                "LessOrEqual" => i64::from(x <= y),
                "And" => i64::from(x != 0 && y != 0),
                "Or" => i64::from(x != 0 || y != 0),
                "Xor" => i64::from((x != 0) != (y != 0)),
                _ => bail!("{op_type} does not fold"),
            });
        }
        return Ok(HostTensor::from_i64s(out_elem, shape, &v));
    }
    let av = expand_to(&a.to_f64s(), &a.shape, &shape);
    let bv = expand_to(&b.to_f64s(), &b.shape, &shape);
    let mut v = Vec::with_capacity(av.len());
    for (&x, &y) in av.iter().zip(&bv) {
        v.push(match op_type {
            "Add" => x + y,
            "Sub" => x - y,
            "Mul" => x * y,
            "Div" => x / y,
            "Mod" => x % y,
            "Pow" => x.powf(y),
            "Equal" => f64::from(u8::from(x == y)),
            "Greater" => f64::from(u8::from(x > y)),
            "GreaterOrEqual" => f64::from(u8::from(x >= y)),
            "Less" => f64::from(u8::from(x < y)),
            "LessOrEqual" => f64::from(u8::from(x <= y)),
            _ => bail!("{op_type} does not fold"),
        });
    }
    Ok(HostTensor::from_f64s(out_elem, shape, &v))
}
