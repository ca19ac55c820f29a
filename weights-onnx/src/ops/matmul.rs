//! Matrix products: `MatMul` (numpy's matmul: 1-D operands get a 1 prepended or appended and
//! removed again, batch dims broadcast) and `Gemm`.

use super::conv::reshaped;
use super::util::{broadcast, one, require_type, reshape, FLOATS};
use super::Lower;
use crate::cx::{number, operand_ref, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::value::{Operand, Value};
use serde_json::Value as Json;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &["Gemm", "MatMul"];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "MatMul" => matmul,
        "Gemm" => gemm,
        _ => return None,
    })
}

fn float_pair(a: &Value, b: &Value) -> OpResult<()> {
    require_type(a, FLOATS, "the input A")?;
    if a.elem() != b.elem() {
        bail!(
            "the inputs are {} and {}; expected one type",
            a.elem(),
            b.elem()
        );
    }
    Ok(())
}

/// `a @ b` with numpy's rules, as WebNN `matmul` on operands of equal rank (at least 2).
pub(crate) fn matmul_values(cx: &mut Cx, a: &Value, b: &Value) -> OpResult<Operand> {
    let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
    if sa.is_empty() || sb.is_empty() {
        bail!("MatMul of a scalar (shapes {sa:?} and {sb:?}); expected operands of rank 1 or more");
    }
    let a2 = if sa.len() == 1 {
        vec![1, sa[0]]
    } else {
        sa.clone()
    };
    let b2 = if sb.len() == 1 {
        vec![sb[0], 1]
    } else {
        sb.clone()
    };
    let (ra, rb) = (a2.len(), b2.len());
    let (m, k, k2, nn) = (a2[ra - 2], a2[ra - 1], b2[rb - 2], b2[rb - 1]);
    if k != k2 {
        bail!("the shapes {sa:?} and {sb:?} do not multiply: A has {k} columns, B has {k2} rows");
    }
    let batch = broadcast(&a2[..ra - 2], &b2[..rb - 2])?;
    let rank = batch.len() + 2;
    let lift = |s: &[u32]| [vec![1; rank - s.len()], s.to_vec()].concat();
    let ao = reshaped(cx, a, lift(&a2))?;
    let bo = reshaped(cx, b, lift(&b2))?;
    let full = [batch.clone(), vec![m, nn]].concat();
    let y = cx.emit("matmul", &[&ao, &bo], vec![], ao.elem, full);
    let mut out = batch;
    if sa.len() > 1 {
        out.push(m);
    }
    if sb.len() > 1 {
        out.push(nn);
    }
    Ok(reshape(cx, &y, out))
}

fn matmul(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    float_pair(a, b)?;
    Ok(one(matmul_values(cx, a, b)?))
}

fn gemm(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    float_pair(a, b)?;
    if a.rank() != 2 || b.rank() != 2 {
        bail!(
            "A and B have shapes {:?} and {:?}; Gemm takes 2-D matrices (use MatMul for others)",
            a.shape(),
            b.shape()
        );
    }
    let ta = n.attrs.int_or("transA", 0)? != 0;
    let tb = n.attrs.int_or("transB", 0)? != 0;
    let (sa, sb) = (a.shape(), b.shape());
    let (m, k) = if ta { (sa[1], sa[0]) } else { (sa[0], sa[1]) };
    let (k2, nn) = if tb { (sb[1], sb[0]) } else { (sb[0], sb[1]) };
    if k != k2 {
        bail!(
            "A {sa:?} (transA {ta}) and B {sb:?} (transB {tb}) do not multiply: {k} against {k2}"
        );
    }
    let alpha = n.attrs.float_or("alpha", 1.0)?;
    let beta = n.attrs.float_or("beta", 1.0)?;
    let mut options = vec![
        ("alpha", number(alpha)),
        ("beta", number(beta)),
        ("aTranspose", Json::from(ta)),
        ("bTranspose", Json::from(tb)),
    ];
    if let Some(c) = n.opt_input(2) {
        if c.elem() != a.elem() {
            bail!("C is {} but A is {}", c.elem(), a.elem());
        }
        if c.rank() > 2 || broadcast(c.shape(), &[m, nn]).ok().as_deref() != Some(&[m, nn][..]) {
            bail!(
                "C has shape {:?}, which does not broadcast to the product's [{m}, {nn}]",
                c.shape()
            );
        }
        let co = cx.operand(c)?;
        options.push(("c", operand_ref(&co)));
    } else if n.opset < 11 {
        bail!("input C is required before opset 11");
    }
    let (ao, bo) = (cx.operand(a)?, cx.operand(b)?);
    Ok(one(cx.emit(
        "gemm",
        &[&ao, &bo],
        options,
        ao.elem,
        vec![m, nn],
    )))
}
