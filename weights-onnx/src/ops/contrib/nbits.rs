//! `MatMulNBits` (com.microsoft): `A @ dequantize(B)^T` with B's 4-bit (or 8-bit) values
//! quantized in blocks along K. B (`uint8 [N, blocks, block_size * bits / 8]`, two 4-bit values
//! a byte, the first in the low nibble) is already WebNN's packed `uint4 [N, blocks *
//! block_size]`: its bytes are written as they are. The zero points (packed per row of N) are
//! repacked on the host to `[N, blocks]`; without them a 4-bit zero point is 8 (128 for 8
//! bits). Then `dequantizeLinear` (blockwise), a slice when K is not a whole number of blocks,
//! a transpose, and `matmul`.

use crate::cx::{u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::ops::conv::reshaped;
use crate::ops::matmul::matmul_values;
use crate::ops::util::{binary, one, require_type, transpose, FLOATS};
use crate::tensor::{ElemType, HostTensor};
use crate::value::{Operand, Value};
use std::rc::Rc;

/// The sizes of the operation, read from its attributes and checked against B.
struct Sizes {
    k: u32,
    n: u32,
    bits: u32,
    block: u32,
    blocks: u32,
}

fn read_sizes(n: &NodeCx<'_>) -> OpResult<Sizes> {
    let get = |name: &str| -> OpResult<u32> {
        match n.attrs.int(name)? {
            Some(v) if v > 0 && v <= i64::from(u32::MAX) => Ok(v as u32),
            Some(v) => bail!("attribute {name} is {v}: expected a positive size"),
            None => bail!("attribute {name} is required"),
        }
    };
    let (k, nn, block) = (get("K")?, get("N")?, get("block_size")?);
    let bits = n.attrs.int_or("bits", 4)?;
    if bits != 4 && bits != 8 {
        bail!("attribute bits is {bits}; WebNN holds 4-bit and 8-bit values only");
    }
    let bits = bits as u32;
    if !(16..=1 << 16).contains(&block) || !block.is_power_of_two() {
        bail!("attribute block_size is {block}: expected a power of two from 16 to 65536");
    }
    Ok(Sizes {
        k,
        n: nn,
        bits,
        block,
        blocks: k.div_ceil(block),
    })
}

/// B as the quantized `[N, blocks * block_size]` constant.
fn weights(cx: &mut Cx, n: &NodeCx<'_>, s: &Sizes) -> OpResult<Operand> {
    let Some(b) = n.const_input(1, "the quantized weights B")? else {
        bail!("input B is required");
    };
    let blob = s.block * s.bits / 8;
    let want = [s.n, s.blocks, blob];
    if b.elem != ElemType::U8 || b.shape != want {
        bail!(
            "B is {} {:?}; expected uint8 {want:?} (N, blocks of K, bytes a block)",
            b.elem,
            b.shape
        );
    }
    let elem = if s.bits == 4 {
        ElemType::U4
    } else {
        ElemType::U8
    };
    let t = HostTensor {
        name: b.name.clone(),
        elem,
        shape: vec![s.n, s.blocks * s.block],
        bytes: b.bytes.clone(),
    };
    cx.const_operand(&Rc::new(t))
}

/// The zero points as `[N, blocks]` of B's type: given (packed uint8, repacked) or the middle.
fn zero_points(cx: &mut Cx, n: &NodeCx<'_>, s: &Sizes) -> OpResult<Operand> {
    let shape = vec![s.n, s.blocks];
    let count = (s.n * s.blocks) as usize;
    let Some(z) = n.opt_input(3) else {
        let mid = if s.bits == 4 { 8.0 } else { 128.0 };
        return if s.bits == 4 {
            cx.constant_f64(ElemType::U4, shape, &vec![mid; count])
        } else {
            cx.constant_f64(ElemType::U8, shape, &vec![mid; count])
        };
    };
    if z.elem() != ElemType::U8 {
        bail!("the zero points are {}; only packed uint8 zero points convert (not ones of the scales' type)", z.elem());
    }
    let Some(t) = n.const_input(3, "the zero points")? else {
        bail!("input 3 (the zero points) is missing")
    };
    let row = (s.blocks * s.bits).div_ceil(8) as usize;
    if t.bytes.len() != row * s.n as usize {
        bail!(
            "the zero points hold {} bytes; expected {} ({} a row of N)",
            t.bytes.len(),
            row * s.n as usize,
            row
        );
    }
    if s.bits == 8 {
        return cx.const_operand(&Rc::new(t.reshaped(shape)));
    }
    let mut values = Vec::with_capacity(count);
    for r in t.bytes.chunks_exact(row) {
        for j in 0..s.blocks as usize {
            let byte = r[j / 2];
            values.push(f64::from(if j % 2 == 0 { byte & 0x0f } else { byte >> 4 }));
        }
    }
    cx.constant_f64(ElemType::U4, shape, &values)
}

pub(super) fn matmul_nbits(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let a = n.input(0)?;
    require_type(a, FLOATS, "the input A")?;
    let s = read_sizes(n)?;
    if a.shape().last() != Some(&s.k) {
        bail!("A has shape {:?}; expected K = {} last", a.shape(), s.k);
    }
    if n.opt_input(4).is_some() {
        bail!("input g_idx (act_order) is given; only blocks in order convert");
    }
    let q = weights(cx, n, &s)?;
    let scales = n.input(2)?;
    if scales.elem() != a.elem()
        || crate::ops::util::count(scales.shape()) != u64::from(s.n * s.blocks)
    {
        bail!(
            "the scales are {} {:?}; expected {} with N * blocks = {} values",
            scales.elem(),
            scales.shape(),
            a.elem(),
            s.n * s.blocks
        );
    }
    let so = reshaped(cx, scales, vec![s.n, s.blocks])?;
    let zo = zero_points(cx, n, &s)?;
    let mut w = cx.emit(
        "dequantizeLinear",
        &[&q, &so, &zo],
        vec![],
        so.elem,
        q.shape.clone(),
    );
    if s.blocks * s.block != s.k {
        w = cx.emit(
            "slice",
            &[&w],
            vec![("starts", u32s(&[0, 0])), ("sizes", u32s(&[s.n, s.k]))],
            w.elem,
            vec![s.n, s.k],
        );
    }
    let wt = transpose(cx, &w, &[1, 0]);
    let mut y = matmul_values(cx, a, &Value::Operand(wt))?;
    if let Some(bias) = n.opt_input(5) {
        if bias.shape() != [s.n] || bias.elem() != a.elem() {
            bail!(
                "the bias is {} {:?}; expected {} [{}]",
                bias.elem(),
                bias.shape(),
                a.elem(),
                s.n
            );
        }
        let bo = cx.operand(bias)?;
        y = binary(cx, "add", &y, &bo, y.elem)?;
    }
    Ok(one(y))
}
