//! `Cast` (`to`) and `CastLike` (the type of input 1): folded on host values; in the graph a
//! WebNN `cast` (to bool: `notEqual 0`). `saturate` only concerns float8 types, which WebNN
//! does not have.

use super::host::foldable;
use crate::cx::Cx;
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::util::{self, one};
use crate::tensor::{ElemType, HostTensor};
use crate::value::Value;

/// `t` converted to `to`: integers exactly (wrapping as a cast does), floats rounded to
/// nearest, floats to integers truncated toward zero, anything to bool `!= 0`.
pub(super) fn cast_host(t: &HostTensor, to: ElemType) -> HostTensor {
    if t.elem == to {
        return t.clone();
    }
    let ints = |e: ElemType| !e.is_float();
    let out = if to == ElemType::Bool && t.elem.is_float() {
        let v: Vec<f64> = t
            .to_f64s()
            .into_iter()
            .map(|x| f64::from(u8::from(x != 0.0)))
            .collect();
        HostTensor::from_f64s(to, t.shape.clone(), &v)
    } else if ints(t.elem) && (ints(to) || to == ElemType::Bool) {
        HostTensor::from_i64s(to, t.shape.clone(), &t.to_i64s())
    } else {
        HostTensor::from_f64s(to, t.shape.clone(), &t.to_f64s())
    };
    HostTensor {
        name: t.name.clone(),
        ..out
    }
}

/// `Cast` and `CastLike`.
pub(crate) fn cast(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let x = n.input(0)?;
    let to = if n.op_type == "CastLike" {
        n.input(1)?.elem()
    } else {
        let Some(code) = n.attrs.int("to")? else {
            bail!("the to attribute is required");
        };
        let code = i32::try_from(code).unwrap_or(-1);
        ElemType::from_onnx(code).ok_or_else(|| {
            format!("casting to {} is not supported: WebNN has no such type (float32, float16, int8, uint8, int32, uint32, int64, uint64, int4, uint4, bool)", ElemType::onnx_name(code))
        })?
    };
    if let Some(t) = x.as_const().filter(|_| foldable(x.shape())) {
        return Ok(vec![Value::constant(cast_host(t, to))]);
    }
    if to.webnn().is_none() || to == ElemType::Bf16 {
        let what = match x.as_const() {
            Some(t) if !t.name.is_empty() => format!("the tensor {:?}", t.name),
            _ => "a tensor the graph computes".to_string(),
        };
        bail!("casting {what} ({}) to {to} is not supported: WebNN has no {to} type (only constants fold to it); cast to float32 or float16 in the model", x.elem());
    }
    let o = cx.operand(x)?;
    if o.elem == to {
        return Ok(vec![x.clone()]);
    }
    Ok(one(util::cast(cx, &o, to)?))
}
