//! `LSTM` and `GRU` as WebNN's `lstm` and `gru`. ONNX's gate orders are WebNN's default
//! layouts (LSTM `iofc` is `iofg`, GRU `zrh` is `zrn`); `B` is split into the input and
//! recurrent biases; `layout = 1` (batch first) is transposed in and out; GRU's
//! `linear_before_reset` is `resetAfter`. Outputs: `Y` is WebNN's sequence output
//! (`[steps, directions, batch, hidden]`, as ONNX), `Y_h` and `Y_c` its final states.

use super::util::{require_type, transpose, FLOATS};
use super::Lower;
use crate::cx::{operand_ref, u32s, Cx};
use crate::error::{bail, OpResult};
use crate::node::NodeCx;
use crate::tensor::HostTensor;
use crate::value::{Operand, Value};
use bytes::BytesMut;
use serde_json::Value as Json;
use std::rc::Rc;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &["GRU", "LSTM"];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "LSTM" | "GRU" => recurrent,
        _ => return None,
    })
}

/// What both networks share, read and checked.
struct Net {
    lstm: bool,
    gates: u32,
    hidden: u32,
    dirs: u32,
    steps: u32,
    batch: u32,
    batch_first: bool,
}

/// The activations as WebNN names (one list for every direction), or `None` for the defaults.
fn activations(n: &NodeCx<'_>, net: &Net) -> OpResult<Option<Json>> {
    for a in ["activation_alpha", "activation_beta", "clip"] {
        if n.attrs.has(a) {
            bail!("attribute {a} is set; WebNN's recurrent networks have no such parameter");
        }
    }
    let Some(list) = n.attrs.strings("activations")? else {
        return Ok(None);
    };
    let per_dir = if net.lstm { 3 } else { 2 };
    if list.len() != per_dir * net.dirs as usize {
        bail!(
            "attribute activations lists {} function(s); expected {} per direction",
            list.len(),
            per_dir
        );
    }
    if list[..per_dir] != list[per_dir..] && net.dirs == 2 {
        bail!("the directions use different activations ({list:?}); WebNN takes one list for both");
    }
    let names = list[..per_dir]
        .iter()
        .map(|a| match a.to_ascii_lowercase().as_str() {
            "sigmoid" => Ok(Json::from("sigmoid")),
            "tanh" => Ok(Json::from("tanh")),
            "relu" => Ok(Json::from("relu")),
            _ => Err(format!(
                "activation {a:?} has no WebNN equivalent (Sigmoid, Tanh and Relu do)"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(Json::Array(names)))
}

/// `B` (`[dirs, 2 * gates * hidden]`) as the input and recurrent biases: split on the host
/// when known, else by two slices.
fn split_bias(cx: &mut Cx, b: &Value, net: &Net) -> OpResult<(Operand, Operand)> {
    let width = net.gates * net.hidden;
    if b.shape().len() != 2
        || b.shape()[0] != net.dirs
        || u64::from(b.shape()[1]) != 2 * u64::from(width)
    {
        bail!(
            "the bias B has shape {:?}; expected [{}, {}]",
            b.shape(),
            net.dirs,
            2 * width
        );
    }
    if let Value::Const(t) = b {
        let item = (t.elem.bits() / 8) as usize;
        let row = 2 * width as usize * item;
        let mut halves = [BytesMut::new(), BytesMut::new()];
        for r in t.bytes.chunks_exact(row) {
            halves[0].extend_from_slice(&r[..row / 2]);
            halves[1].extend_from_slice(&r[row / 2..]);
        }
        let [w, r] = halves.map(|h| HostTensor {
            name: String::new(),
            elem: t.elem,
            shape: vec![net.dirs, width],
            bytes: h.freeze(),
        });
        return Ok((
            cx.const_operand(&Rc::new(w))?,
            cx.const_operand(&Rc::new(r))?,
        ));
    }
    let bo = cx.operand(b)?;
    let mut half = |start: u32| {
        cx.emit(
            "slice",
            &[&bo],
            vec![
                ("starts", u32s(&[0, start])),
                ("sizes", u32s(&[net.dirs, width])),
            ],
            bo.elem,
            vec![net.dirs, width],
        )
    };
    Ok((half(0), half(width)))
}

/// An initial state (`[dirs, batch, hidden]`, batch first when `layout = 1`) as WebNN wants it.
fn state(cx: &mut Cx, v: &Value, net: &Net, what: &str) -> OpResult<Operand> {
    let want = if net.batch_first {
        [net.batch, net.dirs, net.hidden]
    } else {
        [net.dirs, net.batch, net.hidden]
    };
    if v.shape() != want {
        bail!("{what} has shape {:?}; expected {want:?}", v.shape());
    }
    let o = cx.operand(v)?;
    Ok(if net.batch_first {
        transpose(cx, &o, &[1, 0, 2])
    } else {
        o
    })
}

/// `sequence_lens`, when given, must be known and the full length everywhere.
fn check_sequence_lens(n: &NodeCx<'_>, net: &Net) -> OpResult<()> {
    if let Some(lens) = n.const_ints(4, "sequence_lens")? {
        if lens.iter().any(|&l| l != i64::from(net.steps)) {
            bail!("sequence_lens is {lens:?}; WebNN runs every batch entry for all {} steps (pad the sequences or drop sequence_lens)", net.steps);
        }
    }
    Ok(())
}

/// Reads the shapes and attributes of the node.
fn read_net(n: &NodeCx<'_>) -> OpResult<Net> {
    let lstm = n.op_type == "LSTM";
    let gates = if lstm { 4 } else { 3 };
    let (x, w) = (n.input(0)?, n.input(1)?);
    require_type(x, FLOATS, "the input X")?;
    let batch_first = n.attrs.int_or("layout", 0)? != 0;
    let dirs = match n.attrs.string_or("direction", "forward")?.as_str() {
        "forward" | "reverse" => 1,
        "bidirectional" => 2,
        d => bail!("attribute direction is {d:?}: expected forward, reverse or bidirectional"),
    };
    let (xs, ws) = (x.shape(), w.shape());
    if xs.len() != 3 || ws.len() != 3 || ws[0] != dirs || ws[1] % gates != 0 || ws[2] != xs[2] {
        bail!("X has shape {xs:?} and W {ws:?}; expected X [steps, batch, input] (batch first with layout 1) and W [{dirs}, {gates} * hidden, input]");
    }
    let hidden = ws[1] / gates;
    if let Some(h) = n.attrs.int("hidden_size")? {
        if h != i64::from(hidden) {
            bail!("attribute hidden_size is {h} but W has {gates} * {hidden} rows");
        }
    }
    let (steps, batch) = if batch_first {
        (xs[1], xs[0])
    } else {
        (xs[0], xs[1])
    };
    if lstm && n.attrs.int_or("input_forget", 0)? != 0 {
        bail!("attribute input_forget is 1 (coupled input and forget gates); WebNN's lstm has no such mode");
    }
    let net = Net {
        lstm,
        gates,
        hidden,
        dirs,
        steps,
        batch,
        batch_first,
    };
    let r = n.input(2)?;
    if r.shape() != [dirs, ws[1], hidden] || r.elem() != x.elem() || w.elem() != x.elem() {
        bail!(
            "R has shape {:?} ({}); expected [{dirs}, {}, {hidden}] of {}",
            r.shape(),
            r.elem(),
            ws[1],
            x.elem()
        );
    }
    check_sequence_lens(n, &net)?;
    Ok(net)
}

fn recurrent(cx: &mut Cx, n: &NodeCx<'_>) -> OpResult<Vec<Value>> {
    let net = read_net(n)?;
    let x = cx.operand(n.input(0)?)?;
    let x = if net.batch_first {
        transpose(cx, &x, &[1, 0, 2])
    } else {
        x
    };
    let w = cx.operand(n.input(1)?)?;
    let r = cx.operand(n.input(2)?)?;
    let direction = match n.attrs.string_or("direction", "forward")?.as_str() {
        "reverse" => "backward",
        "bidirectional" => "both",
        _ => "forward",
    };
    let sequence = n.output_used(0);
    let mut options = vec![
        ("steps", Json::from(net.steps)),
        ("hiddenSize", Json::from(net.hidden)),
        ("direction", Json::from(direction)),
        ("returnSequence", Json::from(sequence)),
        ("layout", Json::from(if net.lstm { "iofg" } else { "zrn" })),
    ];
    if let Some(b) = n.opt_input(3) {
        let (wb, rb) = split_bias(cx, b, &net)?;
        options.push(("bias", operand_ref(&wb)));
        options.push(("recurrentBias", operand_ref(&rb)));
    }
    if let Some(h) = n.opt_input(5) {
        let h = state(cx, h, &net, "initial_h")?;
        options.push(("initialHiddenState", operand_ref(&h)));
    }
    if net.lstm {
        if let Some(c) = n.opt_input(6) {
            let c = state(cx, c, &net, "initial_c")?;
            options.push(("initialCellState", operand_ref(&c)));
        }
        if let Some(p) = n.opt_input(7) {
            if p.shape().len() != 2
                || p.shape()[0] != net.dirs
                || u64::from(p.shape()[1]) != 3 * u64::from(net.hidden)
            {
                bail!(
                    "the peephole weights P have shape {:?}; expected [{}, 3 * {}]",
                    p.shape(),
                    net.dirs,
                    net.hidden
                );
            }
            let p = cx.operand(p)?;
            options.push(("peepholeWeight", operand_ref(&p)));
        }
    } else {
        let reset_after = n.attrs.int_or("linear_before_reset", 0)? != 0;
        options.push(("resetAfter", Json::from(reset_after)));
    }
    if let Some(a) = activations(n, &net)? {
        options.push(("activations", a));
    }
    let used: Vec<bool> = (0..3).map(|i| n.output_used(i)).collect();
    finish(cx, &net, &x, &w, &r, options, &used)
}

/// Emits the network and arranges its outputs as ONNX's `Y`, `Y_h` (and `Y_c`).
fn finish(
    cx: &mut Cx,
    net: &Net,
    x: &Operand,
    w: &Operand,
    r: &Operand,
    options: Vec<(&str, Json)>,
    used: &[bool],
) -> OpResult<Vec<Value>> {
    let sequence = used[0];
    let e = x.elem;
    let state_shape = vec![net.dirs, net.batch, net.hidden];
    let mut shapes = vec![(e, state_shape.clone())];
    if net.lstm {
        shapes.push((e, state_shape));
    }
    if sequence {
        shapes.push((e, vec![net.steps, net.dirs, net.batch, net.hidden]));
    }
    let op = if net.lstm { "lstm" } else { "gru" };
    let mut outs = cx.emit_multi(op, &[x, w, r], options, shapes);
    let y = if sequence { outs.pop() } else { None };
    let mut values = Vec::with_capacity(3);
    values.push(match y {
        Some(y) if net.batch_first => Value::Operand(transpose(cx, &y, &[2, 0, 1, 3])),
        Some(y) => Value::Operand(y),
        None => Value::constant(HostTensor::from_f64s(e, vec![0], &[])),
    });
    for (i, s) in outs.into_iter().enumerate() {
        // a state nobody reads is left as WebNN returns it
        let s = if net.batch_first && used[i + 1] {
            transpose(cx, &s, &[1, 0, 2])
        } else {
            s
        };
        values.push(Value::Operand(s));
    }
    Ok(values)
}
