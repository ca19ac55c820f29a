#!/usr/bin/env python3
"""Writes the browser op suite's cases: one folder per case under OUT.

    python3 web/ops/make_cases.py OUT [--only NAME ...]

Each folder CASE/ holds
  CASE.webnn            the graph (.webnn text); constants are @weights("ref")
  CASE.safetensors      its weights (or, for the sharded case, model.safetensors.index.json and
                        two shards; case.json's "weights" names the file to pass to --weights)
  inputs.json           name -> {dataType, shape, data}       (flat row-major data)
  expected.json         name -> {dataType, shape, data, tolerance: {atol, rtol}}
  case.json             {name, op, weights, description, direct}: what the runner needs; "direct"
                        is the same graph as data (constants with values), so that a page can
                        build it with MLGraphBuilder directly, independently of the generated module
Non-finite floats are written as the strings "NaN", "Infinity", "-Infinity". float16 values are
written as numbers (exact halves) and, under "bits", as their raw uint16 bits. Data is
deterministic (numpy's seeded generator); numpy only.
"""

import json
import math
import os
import shutil
import struct
import sys
import zlib

import numpy as np

# ---------------------------------------------------------------------------------------------
# types

DT = {  # WebNN dataType -> (text spelling, numpy dtype, SafeTensors dtype)
    "float32": ("f32", np.float32, "F32"),
    "float16": ("f16", np.float16, "F16"),
    "int32": ("i32", np.int32, "I32"),
    "uint32": ("u32", np.uint32, "U32"),
    "int64": ("i64", np.int64, "I64"),
    "uint64": ("u64", np.uint64, "U64"),
    "int8": ("i8", np.int8, "I8"),
    "uint8": ("u8", np.uint8, "U8"),
    "int4": ("i4", np.int8, "U8"),
    "uint4": ("u4", np.uint8, "U8"),
}

F32 = {"atol": 1e-5, "rtol": 1e-5}
LOOSE = {"atol": 1e-4, "rtol": 1e-4}
TRANSC = {"atol": 2e-4, "rtol": 2e-4}  # transcendental functions, long reductions, recurrences
EXACT = {"atol": 0, "rtol": 0}


def is_int(dt):
    return dt not in ("float32", "float16")


def flat(a, dt):
    a = np.asarray(a)
    if is_int(dt):
        return [int(v) for v in a.reshape(-1)]
    out = []
    for v in a.astype(np.float64).reshape(-1):
        if math.isnan(v):
            out.append("NaN")
        elif math.isinf(v):
            out.append("Infinity" if v > 0 else "-Infinity")
        else:
            out.append(float(v))
    return out


def desc(a, dt):
    a = np.asarray(a)
    d = {"dataType": dt, "shape": list(a.shape), "data": flat(a, dt)}
    if dt == "float16":
        d["bits"] = [int(b) for b in np.asarray(a, np.float16).reshape(-1).view(np.uint16)]
    return d


def pack4(values, dt):
    """Packed 4-bit bytes: two elements a byte, the first in the low nibble."""
    v = np.asarray(values).reshape(-1).astype(np.int64)
    lo, hi = (-8, 7) if dt == "int4" else (0, 15)
    assert v.min() >= lo and v.max() <= hi
    nib = (v & 0xF).astype(np.uint8)
    if len(nib) % 2:
        nib = np.concatenate([nib, np.zeros(1, np.uint8)])
    return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# SafeTensors, by hand


def bf16_bytes(a):
    """float32 -> bfloat16 bytes (round to nearest even); the values must survive the trip."""
    u = np.asarray(a, np.float32).reshape(-1).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r.tobytes()


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> (st_dtype, shape, raw bytes). Writes header length, JSON header, bytes."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    off = 0
    blobs = []
    for name, (st, shape, raw) in tensors.items():
        header[name] = {"dtype": st, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)  # aligned data, as the safetensors crate writes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# ---------------------------------------------------------------------------------------------
# .webnn text


def fmt_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        assert math.isfinite(v)
        r = repr(v)
        return r
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_value(x) for x in v) + "]"
    raise TypeError(v)


class Case:
    def __init__(self, name, op, description=""):
        self.name = name
        self.op = op
        self.description = description
        self.inputs = {}  # name -> (dt, array)
        self.consts = {}  # name -> dict(dt, array, ref, storage)
        self.nodes = []  # (outputs list, op, operand args, options)
        self.outputs = {}  # name -> (dt, array, tol)
        self.metadata = None
        self.sharded = False
        self.direct_extra = {}
        self.no_direct = False  # large constants: no hand-built description (JSON would be huge)

    def input(self, name, dt, a):
        a = np.asarray(a, DT[dt][1])
        self.inputs[name] = (dt, a)
        return a

    def const(self, name, dt, a, storage=None, ref=None, inline=None):
        """storage: None (the declared type), "BF16" (float32 stored as bfloat16).
        inline: None (@weights), "scalar" (@scalar(v), shape []) or "bytes" (@bytes([...]))."""
        if dt in ("int4", "uint4"):
            a = np.asarray(a, np.int64)
        else:
            a = np.asarray(a, DT[dt][1])
        if storage == "BF16":
            # keep only values bfloat16 holds exactly
            shape = a.shape
            u = np.frombuffer(bf16_bytes(a), np.uint16).astype(np.uint32) << 16
            a = u.view(np.float32).reshape(shape)
        self.consts[name] = {"dt": dt, "a": a, "ref": ref or name, "storage": storage, "inline": inline}
        return a

    def node(self, out, op, *args, direct_options=None, direct_inputs=None, **options):
        """direct_options: options the "direct" description adds (the spelled-out meaning of an
        option the graph omits, where rustnn's default is not the WebNN spec's); direct_inputs:
        the operands the WebNN call takes positionally, where rustnn reads more inputs (an
        operand option given as an input)."""
        outs = out if isinstance(out, list) else [out]
        self.nodes.append((outs, op, list(args), options))
        self.direct_extra[len(self.nodes) - 1] = (direct_options or {}, direct_inputs)

    def output(self, name, dt, a, tol=None):
        a = np.asarray(a)
        if dt in ("float32", "float16"):
            tol = tol or F32
        else:
            tol = EXACT
        self.outputs[name] = (dt, np.asarray(a, DT[dt][1]), tol)

    # -- writing --

    def webnn_text(self):
        lines = [f'# {self.description}' if self.description else f"# op suite case {self.name}"]
        lines.append(f'webnn_graph "{self.name}" v1 {{')
        lines.append("  inputs {")
        for n, (dt, a) in self.inputs.items():
            lines.append(f"    {n}: {DT[dt][0]}{list(a.shape)};")
        lines.append("  }")
        if self.consts:
            lines.append("  consts {")
            for n, c in self.consts.items():
                decl = f'    {n}: {DT[c["dt"]][0]}{list(np.asarray(c["a"]).shape)}'
                if c["inline"] == "scalar":
                    v = np.asarray(c["a"]).reshape(-1)[0]
                    lines.append(f"{decl} @scalar({fmt_value(int(v) if is_int(c['dt']) else float(v))});")
                elif c["inline"] == "bytes":
                    raw = pack4(c["a"], c["dt"]) if c["dt"] in ("int4", "uint4") else np.ascontiguousarray(c["a"], DT[c["dt"]][1]).view(np.uint8)
                    lines.append(f"{decl} @bytes([{', '.join(str(int(b)) for b in raw.reshape(-1))}]);")
                else:
                    lines.append(f'{decl} @weights("{c["ref"]}");')
            lines.append("  }")
        lines.append("  nodes {")
        for outs, op, args, opts in self.nodes:
            parts = [a for a in args] + [f"{k}={fmt_value(v)}" for k, v in opts.items()]
            lhs = outs[0] if len(outs) == 1 else "[" + ", ".join(outs) + "]"
            lines.append(f"    {lhs} = {op}({', '.join(parts)});")
        lines.append("  }")
        lines.append("  outputs { " + " ".join(f"{o};" for o in self.outputs) + " }")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def tensors(self):
        t = {}
        for n, c in self.consts.items():
            dt, a = c["dt"], c["a"]
            if c["inline"]:
                continue
            if dt in ("int4", "uint4"):
                raw = pack4(a, dt).tobytes()
                t[c["ref"]] = ("U8", [len(raw)], raw)
            elif c["storage"] == "BF16":
                t[c["ref"]] = ("BF16", list(a.shape), bf16_bytes(a))
            else:
                t[c["ref"]] = (DT[dt][2], list(a.shape), np.ascontiguousarray(a, DT[dt][1]).tobytes())
        return t

    def direct(self):
        if self.no_direct:
            return None
        consts = {}
        for n, c in self.consts.items():
            dt, a = c["dt"], c["a"]
            d = {"dataType": dt, "shape": list(np.asarray(a).shape)}
            if dt in ("int4", "uint4"):
                d["packed"] = [int(b) for b in pack4(a, dt)]
            else:
                d.update(desc(a, dt))
            consts[n] = d
        return {
            "consts": consts,
            "nodes": [{"outputs": o, "op": op, "inputs": self.direct_extra[i][1] or a,
                       "options": {**opts, **self.direct_extra[i][0]}}
                      for i, (o, op, a, opts) in enumerate(self.nodes)],
        }

    def write(self, root):
        d = os.path.join(root, self.name)
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        with open(os.path.join(d, f"{self.name}.webnn"), "w") as f:
            f.write(self.webnn_text())
        tensors = self.tensors()
        meta = {"rustnn.webnn.packed4": "1"} if any(c["dt"] in ("int4", "uint4") for c in self.consts.values()) else None
        if self.sharded:
            names = list(tensors)
            half = (len(names) + 1) // 2
            shards = {"model-00001-of-00002.safetensors": names[:half], "model-00002-of-00002.safetensors": names[half:]}
            weight_map = {}
            for fname, ns in shards.items():
                write_safetensors(os.path.join(d, fname), {n: tensors[n] for n in ns}, meta)
                for n in ns:
                    weight_map[n] = fname
            total = sum(len(v[2]) for v in tensors.values())
            with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)
            weights = "model.safetensors.index.json"
        else:
            weights = f"{self.name}.safetensors"
            write_safetensors(os.path.join(d, weights), tensors, meta)
        with open(os.path.join(d, "inputs.json"), "w") as f:
            json.dump({n: desc(a, dt) for n, (dt, a) in self.inputs.items()}, f)
        exp = {}
        for n, (dt, a, tol) in self.outputs.items():
            e = desc(a, dt)
            e["tolerance"] = tol
            exp[n] = e
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump(exp, f)
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"name": self.name, "op": self.op, "weights": weights,
                       "description": self.description, "direct": self.direct()}, f)


# ---------------------------------------------------------------------------------------------
# numpy references

rng = np.random.default_rng(20261202)


def rnd(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def rint(*shape, lo=-5, hi=5, dt=np.int32):
    return rng.integers(lo, hi + 1, size=shape).astype(dt)


f32 = np.float32
erf = np.vectorize(math.erf, otypes=[np.float64])


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def relu(x):
    return np.maximum(x, 0)


ACT = {"sigmoid": sigmoid, "tanh": np.tanh, "relu": relu}


def conv2d_ref(x, w, b=None, padding=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), groups=1):
    """x nchw, w oihw (o = out channels, i = in channels / groups)."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    o, ig, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])))
    oh = (h + padding[0] + padding[1] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (wd + padding[2] + padding[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for oc in range(g * og, (g + 1) * og):
            for i in range(oh):
                for j in range(ow):
                    patch = xp[:, g * ig:(g + 1) * ig,
                               i * strides[0]:i * strides[0] + (kh - 1) * dilations[0] + 1:dilations[0],
                               j * strides[1]:j * strides[1] + (kw - 1) * dilations[1] + 1:dilations[1]]
                    y[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def conv_transpose2d_ref(x, w, b=None, padding=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1),
                         output_padding=(0, 0), groups=1):
    """x nchw, w iohw ([in channels, out channels / groups, kh, kw])."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    ic, og, kh, kw = w.shape
    ig = c // groups
    full_h = (h - 1) * strides[0] + (kh - 1) * dilations[0] + 1 + output_padding[0]
    full_w = (wd - 1) * strides[1] + (kw - 1) * dilations[1] + 1 + output_padding[1]
    y = np.zeros((n, og * groups, full_h, full_w))
    for g in range(groups):
        for ci in range(g * ig, (g + 1) * ig):
            for i in range(h):
                for j in range(wd):
                    for a in range(kh):
                        for bb in range(kw):
                            y[:, g * og:(g + 1) * og, i * strides[0] + a * dilations[0],
                              j * strides[1] + bb * dilations[1]] += x[:, ci, i, j][:, None] * w[ci, :, a, bb][None, :]
    oh = full_h - padding[0] - padding[1]
    ow = full_w - padding[2] - padding[3]
    y = y[:, :, padding[0]:padding[0] + oh, padding[2]:padding[2] + ow]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def pool_ref(x, kind, window, strides=(1, 1), padding=(0, 0, 0, 0)):
    n, c, h, w = x.shape
    oh = (h + padding[0] + padding[1] - window[0]) // strides[0] + 1
    ow = (w + padding[2] + padding[3] - window[1]) // strides[1] + 1
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])),
                constant_values=fill)
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            p = xp[:, :, i * strides[0]:i * strides[0] + window[0], j * strides[1]:j * strides[1] + window[1]]
            if kind == "max":
                y[:, :, i, j] = p.max(axis=(2, 3))
            elif kind == "avg":
                y[:, :, i, j] = p.mean(axis=(2, 3))
            else:
                y[:, :, i, j] = np.sqrt((p * p).sum(axis=(2, 3)))
    return y


def gru_cell_ref(x, w, r, h, hs, b=None, rb=None, reset_after=True, layout="zrn", acts=("sigmoid", "tanh")):
    """WebNN gruCell: w [3hs, in], r [3hs, hs]; gates z r n ("zrn") or r z n ("rzn")."""
    f, g = ACT[acts[0]], ACT[acts[1]]
    st = {"z": 0, "r": hs, "n": 2 * hs} if layout == "zrn" else {"r": 0, "z": hs, "n": 2 * hs}
    zb = np.zeros(3 * hs)
    b = zb if b is None else b
    rb = zb if rb is None else rb
    S = lambda a, k: a[st[k]:st[k] + hs]
    z = f(x @ S(w, "z").T + S(b, "z") + h @ S(r, "z").T + S(rb, "z"))
    rr = f(x @ S(w, "r").T + S(b, "r") + h @ S(r, "r").T + S(rb, "r"))
    if reset_after:
        n = g(x @ S(w, "n").T + S(b, "n") + rr * (h @ S(r, "n").T + S(rb, "n")))
    else:
        n = g(x @ S(w, "n").T + S(b, "n") + (rr * h) @ S(r, "n").T + S(rb, "n"))
    return z * h + (1 - z) * n


def lstm_cell_ref(x, w, r, h, c, hs, b=None, rb=None, p=None, layout="iofg", acts=("sigmoid", "tanh", "tanh")):
    """WebNN lstmCell: w [4hs, in], r [4hs, hs], peephole [3hs] (i, o, f, whatever the layout);
    returns (h', c').
    As the spec's decomposition (and webnn-baseline), the output gate's peephole term uses the
    cell state given (not the new one)."""
    fa, ga, ha = ACT[acts[0]], ACT[acts[1]], ACT[acts[2]]
    st = {"i": 0, "o": hs, "f": 2 * hs, "g": 3 * hs} if layout == "iofg" else {"i": 0, "f": hs, "g": 2 * hs, "o": 3 * hs}
    zb = np.zeros(4 * hs)
    b = zb if b is None else b
    rb = zb if rb is None else rb
    pp = np.zeros(3 * hs) if p is None else p
    S = lambda a, k: a[st[k]:st[k] + hs]
    pst = {"i": 0, "o": hs, "f": 2 * hs}  # the peephole weight is always (i, o, f)
    P = lambda k: pp[pst[k]:pst[k] + hs]
    lin = lambda k: x @ S(w, k).T + S(b, k) + h @ S(r, k).T + S(rb, k)
    i = fa(lin("i") + P("i") * c)
    f = fa(lin("f") + P("f") * c)
    g = ga(lin("g"))
    o = fa(lin("o") + P("o") * c)
    c2 = f * c + i * g
    return o * ha(c2), c2


def rnn_ref(kind, x, w, r, hs, b=None, rb=None, h0=None, c0=None, direction="forward", **cell):
    """WebNN gru/lstm: x [steps, batch, in]; w [dirs, G*hs, in]. Returns (final states..., sequence)."""
    steps, batch, _ = x.shape
    dirs = 2 if direction == "both" else 1
    hs_out = np.zeros((dirs, batch, hs))
    cs_out = np.zeros((dirs, batch, hs))
    seq = np.zeros((steps, dirs, batch, hs))
    for d in range(dirs):
        backward = direction == "backward" or d == 1
        h = np.zeros((batch, hs)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((batch, hs)) if c0 is None else c0[d].astype(np.float64)
        order = range(steps - 1, -1, -1) if backward else range(steps)
        for t in order:
            bb = None if b is None else b[d]
            rbb = None if rb is None else rb[d]
            if kind == "gru":
                h = gru_cell_ref(x[t], w[d], r[d], h, hs, bb, rbb, **cell)
            else:
                h, c = lstm_cell_ref(x[t], w[d], r[d], h, c, hs, bb, rbb, **cell)
            seq[t, d] = h
        hs_out[d] = h
        cs_out[d] = c
    return hs_out, cs_out, seq


def resample_linear_ref(x, scales):
    """half-pixel bilinear on the last two axes (WebNN resample2d mode "linear")."""
    n, c, h, w = x.shape
    oh, ow = int(h * scales[0]), int(w * scales[1])

    def coords(o, i, s):
        src = (np.arange(o) + 0.5) / s - 0.5
        src = np.clip(src, 0, i - 1)
        lo = np.floor(src).astype(int)
        hi = np.minimum(lo + 1, i - 1)
        return lo, hi, src - lo

    y0, y1, fy = coords(oh, h, scales[0])
    x0, x1, fx = coords(ow, w, scales[1])
    xx = x.astype(np.float64)
    top = xx[:, :, y0][:, :, :, x0] * (1 - fx) + xx[:, :, y0][:, :, :, x1] * fx
    bot = xx[:, :, y1][:, :, :, x0] * (1 - fx) + xx[:, :, y1][:, :, :, x1] * fx
    return top * (1 - fy)[:, None] + bot * fy[:, None]


# ---------------------------------------------------------------------------------------------
# the cases

CASES = []


def case(name, op, description=""):
    """A new case; the random data of each case comes from its own seed (its name), so adding
    or reordering cases changes no other case's data."""
    global rng
    rng = np.random.default_rng([20261202, zlib.crc32(name.encode())])
    c = Case(name, op, description)
    CASES.append(c)
    return c


def binary_cases():
    fns = {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "max": np.maximum, "min": np.minimum,
    }
    for op, fn in fns.items():
        c = case(op, op, f"{op}(x, w) with broadcasting [2,3,4] x [3,4]")
        x = c.input("x", "float32", rnd(2, 3, 4))
        w = c.const("w", "float32", rnd(3, 4, lo=0.5, hi=2.0) * np.where(rnd(3, 4) > 0, 1, -1).astype(f32))
        c.node("y", op, "x", "w")
        c.output("y", "float32", fn(x.astype(np.float64), w))
    c = case("pow", "pow", "pow(x, w): positive base, fractional exponents")
    x = c.input("x", "float32", rnd(2, 3, lo=0.5, hi=2.0))
    w = c.const("w", "float32", rnd(2, 3, lo=-2.0, hi=2.0))
    c.node("y", "pow", "x", "w")
    c.output("y", "float32", np.power(x.astype(np.float64), w), TRANSC)
    c = case("add_int32", "add", "add(x, w) on int32")
    x = c.input("x", "int32", rint(2, 3, lo=-100, hi=100))
    w = c.const("w", "int32", rint(2, 3, lo=-100, hi=100))
    c.node("y", "add", "x", "w")
    c.output("y", "int32", x + w)
    c = case("mul_float16", "mul", "mul(x, w) on float16")
    x = c.input("x", "float16", rnd(2, 4).astype(np.float16))
    w = c.const("w", "float16", rnd(2, 4).astype(np.float16))
    c.node("y", "mul", "x", "w")
    c.output("y", "float16", (x.astype(np.float64) * w.astype(np.float64)).astype(np.float16), {"atol": 1e-3, "rtol": 1e-3})


def matmul_cases():
    c = case("matmul", "matmul", "matmul(x, w): [2,3,4] x [4,5] (broadcast batch)")
    x = c.input("x", "float32", rnd(2, 3, 4))
    w = c.const("w", "float32", rnd(4, 5))
    c.node("y", "matmul", "x", "w")
    c.output("y", "float32", x.astype(np.float64) @ w)
    c = case("gemm", "gemm", "gemm(a, b, c, alpha, beta, bTranspose)")
    a = c.input("a", "float32", rnd(3, 4))
    b = c.const("b", "float32", rnd(5, 4))
    cc = c.const("c", "float32", rnd(5))
    c.node("y", "gemm", "a", "b", c="c", alpha=0.5, beta=2.0, aTranspose=False, bTranspose=True)
    c.output("y", "float32", 0.5 * (a.astype(np.float64) @ b.T) + 2.0 * cc)
    c = case("gemm_atranspose", "gemm", "gemm(a, b) with aTranspose, no c")
    a = c.input("a", "float32", rnd(4, 3))
    b = c.const("b", "float32", rnd(4, 2))
    c.node("y", "gemm", "a", "b", aTranspose=True)
    c.output("y", "float32", a.T.astype(np.float64) @ b)


def comparison_cases():
    fns = {
        "equal": np.equal, "notEqual": np.not_equal, "greater": np.greater,
        "greaterOrEqual": np.greater_equal, "lesser": np.less, "lesserOrEqual": np.less_equal,
    }
    for op, fn in fns.items():
        c = case(op, op, f"{op}(x, w) on float32 (integer values, so some are equal) -> uint8")
        x = c.input("x", "float32", rint(3, 4, lo=-2, hi=2).astype(f32))
        w = c.const("w", "float32", rint(3, 4, lo=-2, hi=2).astype(f32))
        c.node("y", op, "x", "w")
        c.output("y", "uint8", fn(x, w).astype(np.uint8))
    for op, dt, npdt in (("greater", "int8", np.int8), ("equal", "int32", np.int32), ("lesserOrEqual", "int32", np.int32),
                         ("notEqual", "int8", np.int8)):
        c = case(f"{op}_{dt}", op, f"{op}(x, w) on {dt} -> uint8")
        x = c.input("x", dt, rint(2, 5, lo=-3, hi=3, dt=npdt))
        w = c.const("w", dt, rint(2, 5, lo=-3, hi=3, dt=npdt))
        c.node("y", op, "x", "w")
        c.output("y", "uint8", fns[op](x, w).astype(np.uint8))


def unary_cases():
    def case1(op, fn, lo=-2.0, hi=2.0, tol=None, shape=(2, 3), opts=None, suffix="", x=None):
        c = case(op + suffix, op, f"{op}(x) on an input and {op}(w) on a constant")
        x = c.input("x", "float32", rnd(*shape, lo=lo, hi=hi) if x is None else x)
        w = c.const("w", "float32", rnd(*shape, lo=lo, hi=hi))
        opts = opts or {}
        c.node("y", op, "x", **opts)
        c.node("yw", op, "w", **opts)
        c.output("y", "float32", fn(x.astype(np.float64)), tol)
        c.output("yw", "float32", fn(w.astype(np.float64)), tol)
        return c

    case1("abs", np.abs)
    case1("ceil", np.ceil, lo=-3, hi=3)
    case1("floor", np.floor, lo=-3, hi=3)
    case1("cos", np.cos, lo=-3, hi=3, tol=TRANSC)
    case1("sin", np.sin, lo=-3, hi=3, tol=TRANSC)
    case1("tan", np.tan, lo=-1.2, hi=1.2, tol=TRANSC)
    case1("exp", np.exp, tol=TRANSC)
    case1("log", np.log, lo=0.1, hi=5, tol=TRANSC)
    case1("neg", np.negative)
    case1("erf", erf, tol=TRANSC)
    case1("identity", lambda v: v)
    case1("reciprocal", lambda v: 1.0 / v, lo=0.5, hi=3, tol=LOOSE)
    case1("sign", np.sign, x=np.array([[-2.5, 0.0, 3.0], [0.5, -0.0, -1.0]], f32))
    case1("sqrt", np.sqrt, lo=0.0, hi=4, tol=LOOSE)
    case1("tanh", np.tanh, tol=TRANSC)
    case1("relu", relu)
    case1("sigmoid", sigmoid, tol=TRANSC)
    case1("softplus", lambda v: np.log1p(np.exp(v)), tol=TRANSC)
    case1("softsign", lambda v: v / (1 + np.abs(v)), tol=LOOSE)
    case1("gelu", lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2))), tol=TRANSC)
    case1("hardSwish", lambda v: v * np.clip(v + 3, 0, 6) / 6, lo=-4, hi=4, tol=LOOSE)
    case1("roundEven", np.rint, x=np.array([[0.5, 1.5, 2.5], [-0.5, -1.5, 2.4]], f32))
    case1("elu", lambda v: np.where(v > 0, v, 0.5 * (np.exp(v) - 1)), opts={"alpha": 0.5}, tol=TRANSC)
    case1("hardSigmoid", lambda v: np.clip(0.3 * v + 0.4, 0, 1), lo=-4, hi=4, opts={"alpha": 0.3, "beta": 0.4}, tol=LOOSE)
    case1("leakyRelu", lambda v: np.where(v >= 0, v, 0.1 * v), opts={"alpha": 0.1})
    case1("linear", lambda v: 2.0 * v - 0.5, opts={"alpha": 2.0, "beta": -0.5})
    case1("clamp", lambda v: np.clip(v, -0.5, 1.0), opts={"minValue": -0.5, "maxValue": 1.0})
    case1("elu", lambda v: np.where(v > 0, v, np.exp(v) - 1), suffix="_default", tol=TRANSC)
    case1("leakyRelu", lambda v: np.where(v >= 0, v, 0.01 * v), suffix="_default")
    case1("hardSigmoid", lambda v: np.clip(0.2 * v + 0.5, 0, 1), lo=-4, hi=4, suffix="_default", tol=LOOSE)

    c = case("clamp_min_only", "clamp", "clamp with minValue only")
    x = c.input("x", "float32", rnd(2, 3, lo=-2, hi=2))
    c.node("y", "clamp", "x", minValue=0.25)
    c.output("y", "float32", np.maximum(x, f32(0.25)))
    c = case("prelu", "prelu", "prelu(x, slope) with slope broadcast [3]")
    x = c.input("x", "float32", rnd(2, 3))
    s = c.const("slope", "float32", np.array([0.1, 0.5, 2.0], f32))
    c.node("y", "prelu", "x", "slope")
    c.output("y", "float32", np.where(x >= 0, x, s * x))

    c = case("isNaN", "isNaN", "isNaN(sqrt(x)): negative x gives NaN -> uint8")
    x = c.input("x", "float32", np.array([[-1.0, 0.0, 4.0], [-0.5, 2.0, -9.0]], f32))
    c.const("w", "float32", np.array([1.0, 0.0, -1.0], f32))
    c.node("s", "sqrt", "x")
    c.node("y", "isNaN", "s")
    c.node("d", "div", "w", "w")
    c.node("yw", "isNaN", "d")
    c.output("y", "uint8", (x < 0).astype(np.uint8))
    c.output("yw", "uint8", np.array([0, 1, 0], np.uint8))

    c = case("isInfinite", "isInfinite", "isInfinite(div(w, x)): x = 0 gives +-Infinity -> uint8")
    x = c.input("x", "float32", np.array([[0.0, 1.0, 2.0], [0.0, -1.0, 0.5]], f32))
    c.const("w", "float32", np.array([1.0, -1.0, 3.0], f32))
    c.node("q", "div", "w", "x")
    c.node("y", "isInfinite", "q")
    c.output("y", "uint8", np.array([[1, 0, 0], [1, 0, 0]], np.uint8))

    c = case("isNaN_input", "isNaN", "isNaN / isInfinite of NaN and Infinity given as input values")
    x = c.input("x", "float32", np.array([np.nan, np.inf, -np.inf, 1.0, 0.0, -2.0], f32))
    c.const("w", "float32", np.array([1.0], f32))
    c.node("m", "mul", "x", "w")
    c.node("y", "isNaN", "m")
    c.node("z", "isInfinite", "m")
    c.output("y", "uint8", np.array([1, 0, 0, 0, 0, 0], np.uint8))
    c.output("z", "uint8", np.array([0, 1, 1, 0, 0, 0], np.uint8))


def logical_cases():
    c = case("logicalNot", "logicalNot", "logicalNot(x) and logicalNot(w) on uint8")
    x = c.input("x", "uint8", np.array([0, 1, 2, 0, 255, 0], np.uint8))
    w = c.const("w", "uint8", np.array([1, 0, 0, 3, 0, 1], np.uint8))
    c.node("y", "logicalNot", "x")
    c.node("yw", "logicalNot", "w")
    c.output("y", "uint8", (x == 0).astype(np.uint8))
    c.output("yw", "uint8", (w == 0).astype(np.uint8))
    fns = {"logicalAnd": np.logical_and, "logicalOr": np.logical_or, "logicalXor": np.logical_xor}
    for op, fn in fns.items():
        c = case(op, op, f"{op}(x, w) on uint8 (non-zero is true)")
        x = c.input("x", "uint8", np.array([0, 0, 1, 1, 2, 0, 7, 1], np.uint8))
        w = c.const("w", "uint8", np.array([0, 1, 0, 1, 0, 9, 3, 1], np.uint8))
        c.node("y", op, "x", "w")
        c.output("y", "uint8", fn(x != 0, w != 0).astype(np.uint8))
    c = case("where", "where", "where(cond, x, w) with broadcasting")
    cond = c.input("cond", "uint8", np.array([[1, 0, 1], [0, 0, 2]], np.uint8))
    x = c.input("x", "float32", rnd(2, 3))
    w = c.const("w", "float32", rnd(3))
    c.node("y", "where", "cond", "x", "w")
    c.output("y", "float32", np.where(cond != 0, x, w))
    c = case("where_int32", "where", "where(cond, a, b) on int32, cond from greater")
    x = c.input("x", "int32", rint(2, 4, lo=-9, hi=9))
    w = c.const("w", "int32", rint(2, 4, lo=-9, hi=9))
    c.node("g", "greater", "x", "w")
    c.node("y", "where", "g", "x", "w")
    c.output("y", "int32", np.maximum(x, w))


def reduction_cases():
    x0 = rnd(2, 3, 4, lo=0.2, hi=1.5)
    fns = {
        "reduceSum": lambda v, ax, kd: v.sum(axis=ax, keepdims=kd),
        "reduceMean": lambda v, ax, kd: v.mean(axis=ax, keepdims=kd),
        "reduceMax": lambda v, ax, kd: v.max(axis=ax, keepdims=kd),
        "reduceMin": lambda v, ax, kd: v.min(axis=ax, keepdims=kd),
        "reduceProduct": lambda v, ax, kd: v.prod(axis=ax, keepdims=kd),
        "reduceL1": lambda v, ax, kd: np.abs(v).sum(axis=ax, keepdims=kd),
        "reduceL2": lambda v, ax, kd: np.sqrt((v * v).sum(axis=ax, keepdims=kd)),
        "reduceLogSum": lambda v, ax, kd: np.log(v.sum(axis=ax, keepdims=kd)),
        "reduceLogSumExp": lambda v, ax, kd: np.log(np.exp(v).sum(axis=ax, keepdims=kd)),
        "reduceSumSquare": lambda v, ax, kd: (v * v).sum(axis=ax, keepdims=kd),
    }
    for op, fn in fns.items():
        c = case(op, op, f"{op}: axes [1, 2] keepDimensions true on an input; all axes on a constant")
        x = c.input("x", "float32", x0 * (np.where(rnd(2, 3, 4) > 0, 1, -1).astype(f32) if op in ("reduceL1", "reduceSum", "reduceMax", "reduceMin") else 1))
        w = c.const("w", "float32", rnd(3, 2, lo=0.5, hi=1.5))
        c.node("y", op, "x", axes=[1, 2], keepDimensions=True)
        c.node("yw", op, "w")
        xx = x.astype(np.float64)
        c.output("y", "float32", fn(xx, (1, 2), True), TRANSC)
        c.output("yw", "float32", np.asarray(fn(w.astype(np.float64), None, False)), TRANSC)
    c = case("reduceSum_axis0", "reduceSum", "reduceSum axes [0] keepDimensions false on int32")
    x = c.input("x", "int32", rint(3, 4, lo=-50, hi=50))
    c.const("w", "int32", rint(4))
    c.node("s", "reduceSum", "x", axes=[0])
    c.node("y", "add", "s", "w")
    c.output("y", "int32", x.sum(axis=0) + c.consts["w"]["a"])
    for op, fn in (("argMax", np.argmax), ("argMin", np.argmin)):
        c = case(op, op, f"{op}(x, axis=1) -> int32; keepDimensions on a constant, axis 0")
        x = c.input("x", "float32", rnd(3, 5))
        w = c.const("w", "float32", rnd(4, 2))
        c.node("y", op, "x", axis=1, keepDimensions=False, outputDataType="int32")
        c.node("yw", op, "w", axis=0, keepDimensions=True, outputDataType="int32")
        c.output("y", "int32", fn(x, axis=1).astype(np.int32))
        c.output("yw", "int32", fn(w, axis=0).reshape(1, 2).astype(np.int32))
    c = case("argMax_int64", "argMax", "argMax(x, axis=0) with outputDataType int64")
    x = c.input("x", "float32", rnd(4, 3))
    c.const("w", "float32", rnd(3))
    c.node("s", "add", "x", "w")
    c.node("y", "argMax", "s", axis=0, outputDataType="int64")
    c.output("y", "int64", np.argmax(x + c.consts["w"]["a"], axis=0).astype(np.int64))
    c = case("cumulativeSum", "cumulativeSum", "cumulativeSum on axis 1; exclusive and reversed variants")
    x = c.input("x", "float32", rnd(2, 4))
    w = c.const("w", "float32", rnd(3, 2))
    c.node("y", "cumulativeSum", "x", axis=1)
    c.node("ye", "cumulativeSum", "x", axis=1, exclusive=True, reversed=False)
    c.node("yr", "cumulativeSum", "w", axis=0, exclusive=False, reversed=True)
    c.node("yer", "cumulativeSum", "w", axis=0, exclusive=True, reversed=True)
    xx = x.astype(np.float64)
    ww = w.astype(np.float64)
    c.output("y", "float32", np.cumsum(xx, axis=1))
    c.output("ye", "float32", np.cumsum(xx, axis=1) - xx)
    rc = np.flip(np.cumsum(np.flip(ww, 0), axis=0), 0)
    c.output("yr", "float32", rc)
    c.output("yer", "float32", rc - ww)


def norm_cases():
    c = case("batchNormalization", "batchNormalization", "batchNormalization(x, mean, var, scale, bias, epsilon) on nchw")
    x = c.input("x", "float32", rnd(2, 3, 2, 2))
    m = c.const("mean", "float32", rnd(3))
    v = c.const("var", "float32", rnd(3, lo=0.5, hi=2))
    s = c.const("s", "float32", rnd(3))
    b = c.const("b", "float32", rnd(3))
    c.node("y", "batchNormalization", "x", "mean", "var", scale="s", bias="b", epsilon=1e-3, axis=1)
    r = lambda a: a.reshape(1, 3, 1, 1).astype(np.float64)
    c.output("y", "float32", (x - r(m)) / np.sqrt(r(v) + 1e-3) * r(s) + r(b), LOOSE)
    c = case("batchNormalization_axis3", "batchNormalization", "batchNormalization on axis 3 (nhwc), no scale/bias, default epsilon")
    x = c.input("x", "float32", rnd(1, 2, 2, 4))
    m = c.const("mean", "float32", rnd(4))
    v = c.const("var", "float32", rnd(4, lo=0.5, hi=2))
    c.node("y", "batchNormalization", "x", "mean", "var", axis=3)
    c.output("y", "float32", (x - m) / np.sqrt(v.astype(np.float64) + 1e-5), LOOSE)

    c = case("instanceNormalization", "instanceNormalization", "instanceNormalization nchw with scale/bias")
    x = c.input("x", "float32", rnd(2, 3, 2, 3))
    s = c.const("s", "float32", rnd(3))
    b = c.const("b", "float32", rnd(3))
    c.node("y", "instanceNormalization", "x", scale="s", bias="b", epsilon=1e-4, layout="nchw")
    xx = x.astype(np.float64)
    mu = xx.mean(axis=(2, 3), keepdims=True)
    var = xx.var(axis=(2, 3), keepdims=True)
    c.output("y", "float32", (xx - mu) / np.sqrt(var + 1e-4) * s.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1), LOOSE)
    c = case("instanceNormalization_nhwc", "instanceNormalization", "instanceNormalization nhwc with scale/bias")
    x = c.input("x", "float32", rnd(1, 2, 3, 4))
    s = c.const("s", "float32", rnd(4))
    b = c.const("b", "float32", rnd(4))
    c.node("y", "instanceNormalization", "x", scale="s", bias="b", layout="nhwc")
    xx = x.astype(np.float64)
    mu = xx.mean(axis=(1, 2), keepdims=True)
    var = xx.var(axis=(1, 2), keepdims=True)
    c.output("y", "float32", (xx - mu) / np.sqrt(var + 1e-5) * s + b, LOOSE)

    c = case("layerNormalization", "layerNormalization", "layerNormalization axes [1, 2] with scale/bias")
    x = c.input("x", "float32", rnd(2, 3, 4))
    s = c.const("s", "float32", rnd(3, 4))
    b = c.const("b", "float32", rnd(3, 4))
    c.node("y", "layerNormalization", "x", scale="s", bias="b", axes=[1, 2], epsilon=1e-5)
    xx = x.astype(np.float64)
    mu = xx.mean(axis=(1, 2), keepdims=True)
    var = xx.var(axis=(1, 2), keepdims=True)
    c.output("y", "float32", (xx - mu) / np.sqrt(var + 1e-5) * s + b, LOOSE)
    c = case("layerNormalization_lastaxis", "layerNormalization", "layerNormalization axes [2] (scale only)")
    x = c.input("x", "float32", rnd(2, 3, 4))
    s = c.const("s", "float32", rnd(4))
    c.node("y", "layerNormalization", "x", scale="s", axes=[2])
    xx = x.astype(np.float64)
    mu = xx.mean(axis=2, keepdims=True)
    var = xx.var(axis=2, keepdims=True)
    c.output("y", "float32", (xx - mu) / np.sqrt(var + 1e-5) * s, LOOSE)

    c = case("softmax", "softmax", "softmax(x, axis=1) and softmax(w, axis=0)")
    x = c.input("x", "float32", rnd(2, 5, lo=-3, hi=3))
    w = c.const("w", "float32", rnd(3, 2, lo=-3, hi=3))
    c.node("y", "softmax", "x", axis=1)
    c.node("yw", "softmax", "w", axis=0)
    e = np.exp(x.astype(np.float64))
    c.output("y", "float32", e / e.sum(axis=1, keepdims=True), LOOSE)
    e = np.exp(w.astype(np.float64))
    c.output("yw", "float32", e / e.sum(axis=0, keepdims=True), LOOSE)


def conv_cases():
    c = case("conv2d", "conv2d", "conv2d nchw/oihw, bias, padding 1, stride 1")
    x = c.input("x", "float32", rnd(1, 2, 5, 5))
    w = c.const("w", "float32", rnd(3, 2, 3, 3))
    b = c.const("b", "float32", rnd(3))
    c.node("y", "conv2d", "x", "w", bias="b", padding=[1, 1, 1, 1], strides=[1, 1], groups=1)
    c.output("y", "float32", conv2d_ref(x, w, b, (1, 1, 1, 1)), LOOSE)
    c = case("conv2d_strided_dilated", "conv2d", "conv2d stride 2, dilation 2, asymmetric padding, no bias")
    x = c.input("x", "float32", rnd(1, 2, 7, 6))
    w = c.const("w", "float32", rnd(2, 2, 2, 3))
    c.node("y", "conv2d", "x", "w", padding=[0, 1, 2, 1], strides=[2, 2], dilations=[2, 1])
    c.output("y", "float32", conv2d_ref(x, w, None, (0, 1, 2, 1), (2, 2), (2, 1)), LOOSE)
    c = case("conv2d_groups", "conv2d", "conv2d groups=2 (4 in, 4 out channels)")
    x = c.input("x", "float32", rnd(1, 4, 4, 4))
    w = c.const("w", "float32", rnd(4, 2, 3, 3))
    b = c.const("b", "float32", rnd(4))
    c.node("y", "conv2d", "x", "w", bias="b", groups=2)
    c.output("y", "float32", conv2d_ref(x, w, b, groups=2), LOOSE)
    c = case("conv2d_depthwise", "conv2d", "depthwise conv2d groups=3 with filter [3,1,3,3]")
    x = c.input("x", "float32", rnd(1, 3, 4, 4))
    w = c.const("w", "float32", rnd(3, 1, 3, 3))
    c.node("y", "conv2d", "x", "w", groups=3, padding=[1, 1, 1, 1])
    c.output("y", "float32", conv2d_ref(x, w, None, (1, 1, 1, 1), groups=3), LOOSE)
    c = case("conv2d_nhwc_ohwi", "conv2d", "conv2d inputLayout nhwc, filterLayout ohwi, bias")
    xn = rnd(1, 2, 4, 4)
    wn = rnd(3, 2, 3, 3)
    b0 = rnd(3)
    x = c.input("x", "float32", xn.transpose(0, 2, 3, 1))
    c.const("w", "float32", wn.transpose(0, 2, 3, 1))
    c.const("b", "float32", b0)
    c.node("y", "conv2d", "x", "w", bias="b", padding=[1, 1, 1, 1], inputLayout="nhwc", filterLayout="ohwi")
    c.output("y", "float32", conv2d_ref(xn, wn, b0, (1, 1, 1, 1)).transpose(0, 2, 3, 1), LOOSE)
    c = case("conv2d_nhwc_hwio", "conv2d", "conv2d inputLayout nhwc, filterLayout hwio")
    xn = rnd(1, 2, 4, 4)
    wn = rnd(3, 2, 2, 2)
    x = c.input("x", "float32", xn.transpose(0, 2, 3, 1))
    c.const("w", "float32", wn.transpose(2, 3, 1, 0))
    c.node("y", "conv2d", "x", "w", inputLayout="nhwc", filterLayout="hwio")
    c.output("y", "float32", conv2d_ref(xn, wn).transpose(0, 2, 3, 1), LOOSE)
    c = case("conv2d_nhwc_ihwo_depthwise", "conv2d", "depthwise conv2d nhwc with filterLayout ihwo [1,kh,kw,C]")
    xn = rnd(1, 3, 4, 4)
    wn = rnd(3, 1, 3, 3)
    x = c.input("x", "float32", xn.transpose(0, 2, 3, 1))
    c.const("w", "float32", wn.transpose(1, 2, 3, 0))
    c.node("y", "conv2d", "x", "w", groups=3, inputLayout="nhwc", filterLayout="ihwo")
    c.output("y", "float32", conv2d_ref(xn, wn, groups=3).transpose(0, 2, 3, 1), LOOSE)

    c = case("convTranspose2d", "convTranspose2d", "convTranspose2d nchw/iohw, stride 2, padding 1, bias")
    x = c.input("x", "float32", rnd(1, 2, 3, 3))
    w = c.const("w", "float32", rnd(2, 3, 3, 3))
    b = c.const("b", "float32", rnd(3))
    c.node("y", "convTranspose2d", "x", "w", bias="b", strides=[2, 2], padding=[1, 1, 1, 1])
    c.output("y", "float32", conv_transpose2d_ref(x, w, b, (1, 1, 1, 1), (2, 2)), LOOSE)
    c = case("convTranspose2d_outputPadding", "convTranspose2d", "convTranspose2d stride 2 with outputPadding [1, 1], groups 1")
    x = c.input("x", "float32", rnd(1, 1, 2, 3))
    w = c.const("w", "float32", rnd(1, 2, 3, 3))
    c.node("y", "convTranspose2d", "x", "w", strides=[2, 2], outputPadding=[1, 1])
    c.output("y", "float32", conv_transpose2d_ref(x, w, None, strides=(2, 2), output_padding=(1, 1)), LOOSE)
    c = case("convTranspose2d_nhwc_ohwi", "convTranspose2d", "convTranspose2d inputLayout nhwc, filterLayout ohwi")
    xn = rnd(1, 2, 3, 3)
    wn = rnd(2, 3, 2, 2)  # iohw
    x = c.input("x", "float32", xn.transpose(0, 2, 3, 1))
    c.const("w", "float32", wn.transpose(1, 2, 3, 0))  # ohwi
    c.node("y", "convTranspose2d", "x", "w", strides=[2, 2], inputLayout="nhwc", filterLayout="ohwi")
    c.output("y", "float32", conv_transpose2d_ref(xn, wn, strides=(2, 2)).transpose(0, 2, 3, 1), LOOSE)

    for op, kind in (("averagePool2d", "avg"), ("maxPool2d", "max"), ("l2Pool2d", "l2")):
        c = case(op, op, f"{op} window 2x2 stride 2 on nchw")
        x = c.input("x", "float32", rnd(1, 2, 4, 6))
        c.const("w", "float32", rnd(1, 2, 1, 1))
        c.node("t", "add", "x", "w")
        c.node("y", op, "t", windowDimensions=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0], dilations=[1, 1],
               layout="nchw", outputShapeRounding="floor")
        c.output("y", "float32", pool_ref(x + c.consts["w"]["a"], kind, (2, 2), (2, 2)), LOOSE)
    c = case("maxPool2d_padded", "maxPool2d", "maxPool2d window 3x3 stride 1 padding 1 (same size)")
    x = c.input("x", "float32", rnd(1, 1, 4, 4))
    c.node("y", "maxPool2d", "x", windowDimensions=[3, 3], padding=[1, 1, 1, 1])
    c.output("y", "float32", pool_ref(x, "max", (3, 3), (1, 1), (1, 1, 1, 1)))
    c = case("averagePool2d_global", "averagePool2d", "averagePool2d without windowDimensions (global) on nhwc")
    x = c.input("x", "float32", rnd(1, 3, 3, 2))
    c.node("y", "averagePool2d", "x", layout="nhwc")
    c.output("y", "float32", x.astype(np.float64).mean(axis=(1, 2), keepdims=True), LOOSE)

    c = case("maxPool2d_ceil", "maxPool2d", "maxPool2d window 2x2 stride 2 on 5x5 with outputShapeRounding ceil (3x3)")
    x = c.input("x", "float32", rnd(1, 1, 5, 5))
    c.node("y", "maxPool2d", "x", windowDimensions=[2, 2], strides=[2, 2], outputShapeRounding="ceil")
    c.output("y", "float32", pool_ref(x, "max", (2, 2), (2, 2), (0, 1, 0, 1)))
    c = case("maxPool2d_dilated_nhwc", "maxPool2d", "maxPool2d nhwc, window 2x2, dilations [2, 2]")
    xn = rnd(1, 2, 5, 5)
    x = c.input("x", "float32", xn.transpose(0, 2, 3, 1))
    c.node("y", "maxPool2d", "x", windowDimensions=[2, 2], dilations=[2, 2], layout="nhwc")
    ref = np.zeros((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            ref[:, :, i, j] = xn[:, :, i:i + 3:2, j:j + 3:2].max(axis=(2, 3))
    c.output("y", "float32", ref.transpose(0, 2, 3, 1))
    c = case("convTranspose2d_outputSizes", "convTranspose2d", "convTranspose2d stride 2 with outputSizes [7, 9] (one row and column more than the 6x8 it computes: outputPadding [1, 1])")
    x = c.input("x", "float32", rnd(1, 1, 3, 4))
    w = c.const("w", "float32", rnd(1, 1, 2, 2))
    c.node("y", "convTranspose2d", "x", "w", strides=[2, 2], outputSizes=[7, 9], padding=[0, 0, 0, 0])
    c.output("y", "float32", conv_transpose2d_ref(x, w, None, strides=(2, 2), output_padding=(1, 1)), LOOSE)
    c = case("resample2d_nhwc", "resample2d", "resample2d nearest-neighbor on axes [1, 2] (nhwc), scales [3, 2]")
    x = c.input("x", "float32", rnd(1, 2, 2, 3))
    c.node("y", "resample2d", "x", scales=[3.0, 2.0], axes=[1, 2])
    c.output("y", "float32", x.repeat(3, axis=1).repeat(2, axis=2))
    c = case("resample2d", "resample2d", "resample2d nearest-neighbor, scales [2, 2]")
    x = c.input("x", "float32", rnd(1, 2, 2, 3))
    c.node("y", "resample2d", "x", mode="nearest-neighbor", scales=[2.0, 2.0], axes=[2, 3])
    c.output("y", "float32", x.repeat(2, axis=2).repeat(2, axis=3))
    c = case("resample2d_linear", "resample2d", "resample2d linear (half-pixel) upsampling to sizes [4, 6]")
    x = c.input("x", "float32", rnd(1, 1, 2, 3))
    c.node("y", "resample2d", "x", mode="linear", sizes=[4, 6])
    c.output("y", "float32", resample_linear_ref(x, (2.0, 2.0)), LOOSE)


def shape_cases():
    c = case("reshape", "reshape", "reshape(x, newShape=[3, 4]) then add a constant")
    x = c.input("x", "float32", rnd(2, 6))
    w = c.const("w", "float32", rnd(3, 4))
    c.node("r", "reshape", "x", newShape=[3, 4])
    c.node("y", "add", "r", "w")
    c.node("yw", "reshape", "w", newShape=[12])
    c.output("y", "float32", x.reshape(3, 4).astype(np.float64) + w)
    c.output("yw", "float32", w.reshape(12))
    c = case("expand", "expand", "expand(x, newShape=[2, 3, 4]) from [3, 1]")
    x = c.input("x", "float32", rnd(3, 1))
    w = c.const("w", "float32", rnd(4))
    c.node("y", "expand", "x", newShape=[2, 3, 4])
    c.node("yw", "expand", "w", newShape=[2, 4])
    c.output("y", "float32", np.broadcast_to(x, (2, 3, 4)))
    c.output("yw", "float32", np.broadcast_to(w, (2, 4)))
    c = case("slice", "slice", "slice(x, starts, sizes) and with strides")
    x = c.input("x", "float32", rnd(4, 6))
    c.const("w", "float32", rnd(5))
    c.node("y", "slice", "x", starts=[1, 2], sizes=[2, 3])
    c.node("ys", "slice", "x", starts=[0, 1], sizes=[2, 3], strides=[2, 2])
    c.node("yw", "slice", "w", starts=[1], sizes=[3])
    c.output("y", "float32", x[1:3, 2:5])
    c.output("ys", "float32", x[0:0 + 2:2, 1:1 + 3:2])  # sizes is the window's extent: ceil(2/2) x ceil(3/2)
    c.output("yw", "float32", c.consts["w"]["a"][1:4])
    c = case("cast", "cast", "cast float32 -> int32 (integer values), int32 -> float32, int8 -> float32, float32 -> float16")
    x = c.input("x", "float32", np.array([[1.0, -2.0, 3.0], [0.0, 7.0, -8.0]], f32))
    w = c.const("w", "int32", rint(2, 3, lo=-1000, hi=1000))
    w8 = c.const("w8", "int8", rint(4, lo=-128, hi=127, dt=np.int8))
    c.node("y", "cast", "x", to="int32")
    c.node("yw", "cast", "w", to="float32")
    c.node("y8", "cast", "w8", to="float32")
    c.node("yh", "cast", "x", to="float16")
    c.output("y", "int32", x.astype(np.int32))
    c.output("yw", "float32", w.astype(f32))
    c.output("y8", "float32", w8.astype(f32))
    c.output("yh", "float16", x.astype(np.float16))
    c = case("cast_int8_uint8", "cast", "cast int32 -> int8, int32 -> uint8 (in range), uint8 -> int32")
    w = c.const("w", "int32", np.array([-128, -1, 0, 1, 127], np.int32))
    u = c.const("u", "int32", np.array([0, 1, 128, 200, 255], np.int32))
    x = c.input("x", "uint8", np.array([0, 7, 255], np.uint8))
    c.node("y8", "cast", "w", to="int8")
    c.node("yu", "cast", "u", to="uint8")
    c.node("yx", "cast", "x", to="int32")
    c.output("y8", "int8", w.astype(np.int8))
    c.output("yu", "uint8", u.astype(np.uint8))
    c.output("yx", "int32", x.astype(np.int32))
    c = case("cast_truncate", "cast", "cast float32 -> int32 of fractional values (truncation toward zero)")
    x = c.input("x", "float32", np.array([1.7, -1.7, 2.5, -0.5, 100.9, 0.2], f32))
    c.node("y", "cast", "x", to="int32")
    c.output("y", "int32", np.trunc(x).astype(np.int32))
    c = case("concat", "concat", "concat(x, w, x, axis=1)")
    x = c.input("x", "float32", rnd(2, 2))
    w = c.const("w", "float32", rnd(2, 3))
    c.node("y", "concat", "x", "w", "x", axis=1)
    c.output("y", "float32", np.concatenate([x, w, x], axis=1))
    c = case("concat_axis0_int32", "concat", "concat(w, x, axis=0) on int32")
    x = c.input("x", "int32", rint(1, 3))
    w = c.const("w", "int32", rint(2, 3))
    c.node("y", "concat", "w", "x", axis=0)
    c.output("y", "int32", np.concatenate([w, x], axis=0))
    c = case("split_count", "split", "split(x, splits=3, axis=1): three equal parts")
    x = c.input("x", "float32", rnd(2, 6))
    c.node(["a", "b", "d"], "split", "x", splits=3, axis=1)
    for n, p in zip("abd", np.split(x, 3, axis=1)):
        c.output(n, "float32", p)
    c = case("split_sizes", "split", "split(x, splits=[1, 2], axis=0) and default axis 0 on a constant")
    x = c.input("x", "float32", rnd(3, 2))
    w = c.const("w", "float32", rnd(4, 2))
    c.node(["a", "b"], "split", "x", splits=[1, 2], axis=0)
    c.node(["p", "q"], "split", "w", splits=[3, 1])
    c.output("a", "float32", x[0:1])
    c.output("b", "float32", x[1:3])
    c.output("p", "float32", w[0:3])
    c.output("q", "float32", w[3:4])
    c = case("transpose", "transpose", "transpose with permutation [2, 0, 1]; default (reversed) on a constant")
    x = c.input("x", "float32", rnd(2, 3, 4))
    w = c.const("w", "float32", rnd(2, 3))
    c.node("y", "transpose", "x", permutation=[2, 0, 1])
    c.node("yw", "transpose", "w")
    c.output("y", "float32", x.transpose(2, 0, 1))
    c.output("yw", "float32", w.T)
    c = case("tile", "tile", "tile(x, repetitions=[2, 3])")
    x = c.input("x", "float32", rnd(2, 2))
    c.const("w", "int32", rint(3))
    c.node("y", "tile", "x", repetitions=[2, 3])
    c.node("yw", "tile", "w", repetitions=[2])
    c.output("y", "float32", np.tile(x, (2, 3)))
    c.output("yw", "int32", np.tile(c.consts["w"]["a"], 2))
    c = case("reverse", "reverse", "reverse axes [1]; all axes (option absent) on a constant")
    x = c.input("x", "float32", rnd(2, 3))
    w = c.const("w", "float32", rnd(2, 2))
    c.node("y", "reverse", "x", axes=[1])
    c.node("yw", "reverse", "w")
    c.output("y", "float32", x[:, ::-1])
    c.output("yw", "float32", w[::-1, ::-1])
    c = case("triangular", "triangular", "triangular upper (default) diagonal 1 and lower diagonal -1")
    x = c.input("x", "float32", rnd(3, 4))
    w = c.const("w", "float32", rnd(3, 3))
    c.node("y", "triangular", "x", upper=True, diagonal=1)
    c.node("yl", "triangular", "x", upper=False, diagonal=-1)
    c.node("yw", "triangular", "w")
    c.output("y", "float32", np.triu(x, 1))
    c.output("yl", "float32", np.tril(x, -1))
    c.output("yw", "float32", np.triu(w, 0))
    c = case("pad", "pad", "pad constant mode, value 0.5, on an input and a constant")
    x = c.input("x", "float32", rnd(2, 3))
    w = c.const("w", "float32", rnd(2, 2))
    c.node("y", "pad", "x", beginningPadding=[1, 2], endingPadding=[0, 1], mode="constant", value=0.5)
    c.node("yw", "pad", "w", beginningPadding=[1, 0], endingPadding=[1, 1], mode="constant", value=-1.0)
    c.output("y", "float32", np.pad(x, ((1, 0), (2, 1)), constant_values=0.5))
    c.output("yw", "float32", np.pad(w, ((1, 1), (0, 1)), constant_values=-1.0))
    c = case("pad_edge", "pad", "pad edge mode")
    x = c.input("x", "float32", rnd(2, 3))
    c.node("y", "pad", "x", beginningPadding=[1, 1], endingPadding=[1, 2], mode="edge")
    c.output("y", "float32", np.pad(x, ((1, 1), (1, 2)), mode="edge"))
    c = case("pad_reflection", "pad", "pad reflection mode")
    x = c.input("x", "float32", rnd(3, 4))
    c.node("y", "pad", "x", beginningPadding=[1, 2], endingPadding=[2, 1], mode="reflection")
    c.output("y", "float32", np.pad(x, ((1, 2), (2, 1)), mode="reflect"))
    c = case("pad_default", "pad", "pad with mode and value absent (constant 0)")
    x = c.input("x", "float32", rnd(2, 2))
    c.node("y", "pad", "x", beginningPadding=[0, 1], endingPadding=[1, 0])
    c.output("y", "float32", np.pad(x, ((0, 1), (1, 0))))


def gather_scatter_cases():
    c = case("gather", "gather", "gather(w, indices) on axis 0 (embedding lookup)")
    w = c.const("w", "float32", rnd(5, 3))
    idx = c.input("indices", "int32", np.array([[4, 0], [2, 2]], np.int32))
    c.node("y", "gather", "w", "indices")
    c.output("y", "float32", np.take(w, idx, axis=0))
    c = case("gather_axis1", "gather", "gather(x, indices, axis=1) with constant int32 indices; and int64 indices")
    x = c.input("x", "float32", rnd(2, 5, 3))
    i32 = c.const("idx", "int32", np.array([3, 0, 4], np.int32))
    i64 = c.const("idx64", "int64", np.array([[1], [2]], np.int64))
    c.node("y", "gather", "x", "idx", axis=1)
    c.node("y64", "gather", "x", "idx64", axis=2)
    c.output("y", "float32", np.take(x, i32, axis=1))
    c.output("y64", "float32", np.take(x, i64, axis=2))
    c = case("gather_uint32", "gather", "gather with uint32 indices on a scalar index shape [] (rank drop)")
    x = c.input("x", "float32", rnd(3, 4))
    c.const("i", "uint32", np.array(2, np.uint32))
    c.node("y", "gather", "x", "i", axis=1)
    c.output("y", "float32", x[:, 2])
    c = case("gatherElements", "gatherElements", "gatherElements(x, indices, axis=1)")
    x = c.input("x", "float32", rnd(3, 4))
    idx = c.const("idx", "int32", rng.integers(0, 4, size=(3, 2)).astype(np.int32))
    c.node("y", "gatherElements", "x", "idx", axis=1)
    c.output("y", "float32", np.take_along_axis(x, idx, axis=1))
    c = case("gatherElements_axis0", "gatherElements", "gatherElements(x, indices) default axis 0")
    x = c.input("x", "float32", rnd(3, 3))
    idx = c.const("idx", "int32", np.array([[2, 0, 1], [1, 1, 0]], np.int32))
    c.node("y", "gatherElements", "x", "idx")
    c.output("y", "float32", np.take_along_axis(x, idx, axis=0))
    c = case("gatherND", "gatherND", "gatherND(x, indices) with index tuples of length 2 (rows of a matrix of vectors)")
    x = c.input("x", "float32", rnd(3, 4, 2))
    idx = c.const("idx", "int32", np.array([[0, 1], [2, 3], [1, 0]], np.int32))
    c.node("y", "gatherND", "x", "idx")
    c.output("y", "float32", np.stack([x[i, j] for i, j in idx]))
    c = case("scatterElements", "scatterElements", "scatterElements(x, indices, updates, axis=1)")
    x = c.input("x", "float32", rnd(3, 4))
    idx = c.const("idx", "int32", np.array([[1, 3], [0, 2], [3, 0]], np.int32))
    upd = c.const("upd", "float32", rnd(3, 2, lo=5, hi=6))
    c.node("y", "scatterElements", "x", "idx", "upd", axis=1)
    ref = x.copy()
    np.put_along_axis(ref, idx, upd, axis=1)
    c.output("y", "float32", ref)
    c = case("scatterND", "scatterND", "scatterND(x, indices, updates): rows 2 and 0 replaced")
    x = c.input("x", "float32", rnd(4, 3))
    idx = c.const("idx", "int32", np.array([[2], [0]], np.int32))
    upd = c.const("upd", "float32", rnd(2, 3, lo=5, hi=6))
    c.node("y", "scatterND", "x", "idx", "upd")
    ref = x.copy()
    ref[2] = upd[0]
    ref[0] = upd[1]
    c.output("y", "float32", ref)
    c = case("scatterND_elements", "scatterND", "scatterND with full index tuples (single elements) on int32")
    x = c.input("x", "int32", rint(2, 3))
    idx = c.const("idx", "int32", np.array([[0, 2], [1, 0]], np.int32))
    upd = c.const("upd", "int32", np.array([100, -100], np.int32))
    c.node("y", "scatterND", "x", "idx", "upd")
    ref = x.copy()
    ref[0, 2] = 100
    ref[1, 0] = -100
    c.output("y", "int32", ref)


def quant_cases():
    c = case("quantizeLinear", "quantizeLinear", "quantizeLinear(x, scale [1,4], zeroPoint int8 [1,4]) -> int8 (saturating; no ties)")
    x = c.input("x", "float32", np.array([[0.3, -1.0, 3.0, 100.0], [0.8, -0.2, -50.0, 0.0]], f32))
    s = c.const("scale", "float32", np.array([[0.5, 0.25, 0.1, 1.0]], f32))
    zp = c.const("zp", "int8", np.array([[0, 3, -2, 100]], np.int8))
    c.node("y", "quantizeLinear", "x", "scale", "zp")
    q = np.clip(np.rint(x.astype(np.float64) / s.astype(np.float64)) + zp, -128, 127)
    c.output("y", "int8", q.astype(np.int8))
    c = case("quantizeLinear_ties", "quantizeLinear", "quantizeLinear of exact halves: the spec rounds half to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0)")
    x = c.input("x", "float32", np.array([[0.25, 0.75, 1.25, -0.25]], f32))
    s = c.const("scale", "float32", np.array([[0.5]], f32))
    zp = c.const("zp", "int8", np.array([[0]], np.int8))
    c.node("y", "quantizeLinear", "x", "scale", "zp")
    c.output("y", "int8", np.rint(x.astype(np.float64) / 0.5).astype(np.int8))
    c = case("quantizeLinear_ties_perchannel", "quantizeLinear", "quantizeLinear of exact halves with a per-column scale [1,4]: half to even per the spec")
    x = c.input("x", "float32", np.array([[0.25, 0.75, 1.25, -0.25], [0.75, 1.25, -0.25, 0.25]], f32))
    s = c.const("scale", "float32", np.array([[0.5, 0.5, 0.5, 0.5]], f32))
    zp = c.const("zp", "int8", np.array([[0, 0, 0, 0]], np.int8))
    c.node("y", "quantizeLinear", "x", "scale", "zp")
    c.output("y", "int8", np.rint(x.astype(np.float64) / 0.5).astype(np.int8))
    c = case("quantizeLinear_uint8", "quantizeLinear", "quantizeLinear to uint8 with a per-tensor scale [1,1]")
    x = c.input("x", "float32", rnd(2, 3, lo=-2, hi=2))
    s = c.const("scale", "float32", np.array([[0.02]], f32))
    zp = c.const("zp", "uint8", np.array([[128]], np.uint8))
    c.node("y", "quantizeLinear", "x", "scale", "zp")
    c.output("y", "uint8", np.clip(np.rint(x.astype(np.float32) / f32(0.02)) + 128, 0, 255).astype(np.uint8))
    c = case("dequantizeLinear", "dequantizeLinear", "dequantizeLinear(int8 weight, scale, zeroPoint) then matmul")
    x = c.input("x", "float32", rnd(2, 4))
    wq = c.const("wq", "int8", rint(4, 3, lo=-128, hi=127, dt=np.int8))
    s = c.const("scale", "float32", np.array([[0.01, 0.02, 0.05]], f32))
    zp = c.const("zp", "int8", np.array([[0, -5, 10]], np.int8))
    c.node("w", "dequantizeLinear", "wq", "scale", "zp")
    c.node("y", "matmul", "x", "w")
    wd = (wq.astype(np.float64) - zp) * s
    c.output("y", "float32", x.astype(np.float64) @ wd, LOOSE)
    c = case("dequantizeLinear_uint8_input", "dequantizeLinear", "dequantizeLinear of a uint8 input")
    x = c.input("x", "uint8", rint(2, 3, lo=0, hi=255, dt=np.uint8))
    s = c.const("scale", "float32", np.array([[0.5, 0.25, 2.0]], f32))
    zp = c.const("zp", "uint8", np.array([[128, 0, 255]], np.uint8))
    c.node("y", "dequantizeLinear", "x", "scale", "zp")
    c.output("y", "float32", (x.astype(np.float64) - zp) * s)


def recurrent_cases():
    hs, inp, batch, steps = 3, 2, 2, 3
    # gru: bias, recurrentBias, initialHiddenState, returnSequence; layout zrn, resetAfter true
    c = case("gru", "gru", "gru forward, steps 3, hiddenSize 3, bias, recurrentBias, initialHiddenState, returnSequence, resetAfter true (defaults: zrn, sigmoid/tanh)")
    x = c.input("x", "float32", rnd(steps, batch, inp))
    w = c.const("w", "float32", rnd(1, 3 * hs, inp))
    r = c.const("r", "float32", rnd(1, 3 * hs, hs))
    b = c.const("b", "float32", rnd(1, 3 * hs))
    rb = c.const("rb", "float32", rnd(1, 3 * hs))
    h0 = c.const("h0", "float32", rnd(1, batch, hs))
    c.node(["h", "seq"], "gru", "x", "w", "r", steps=steps, hiddenSize=hs, bias="b", recurrentBias="rb",
           initialHiddenState="h0", returnSequence=True, resetAfter=True)
    H, _, S = rnn_ref("gru", x.astype(np.float64), w, r, hs, b, rb, h0)
    c.output("h", "float32", H, TRANSC)
    c.output("seq", "float32", S, TRANSC)
    c = case("gru_both_rzn", "gru", "gru direction both, layout rzn, resetAfter false, no biases")
    x = c.input("x", "float32", rnd(steps, batch, inp))
    w = c.const("w", "float32", rnd(2, 3 * hs, inp))
    r = c.const("r", "float32", rnd(2, 3 * hs, hs))
    c.node("h", "gru", "x", "w", "r", steps=steps, hiddenSize=hs, direction="both", layout="rzn", resetAfter=False)
    H, _, _ = rnn_ref("gru", x.astype(np.float64), w, r, hs, direction="both", layout="rzn", reset_after=False)
    c.output("h", "float32", H, TRANSC)
    c = case("gruCell", "gruCell", "gruCell with bias and recurrentBias, resetAfter true (zrn)")
    x = c.input("x", "float32", rnd(batch, inp))
    h = c.input("h", "float32", rnd(batch, hs))
    w = c.const("w", "float32", rnd(3 * hs, inp))
    r = c.const("r", "float32", rnd(3 * hs, hs))
    b = c.const("b", "float32", rnd(3 * hs))
    rb = c.const("rb", "float32", rnd(3 * hs))
    c.node("y", "gruCell", "x", "w", "r", "h", hiddenSize=hs, bias="b", recurrentBias="rb", resetAfter=True)
    c.output("y", "float32", gru_cell_ref(x.astype(np.float64), w, r, h, hs, b, rb), TRANSC)
    # resetAfter omitted: rustnn 0.6.0 reads it as false ("default false here; the spec default
    # is true"), and so does the table; the graph means what rustnn reads
    c = case("gruCell_default_resetAfter", "gruCell", "gruCell with resetAfter omitted: false, as rustnn 0.6.0 reads GraphJson (the WebNN spec's default is true)")
    x = c.input("x", "float32", rnd(batch, inp))
    h = c.input("h", "float32", rnd(batch, hs))
    w = c.const("w", "float32", rnd(3 * hs, inp))
    r = c.const("r", "float32", rnd(3 * hs, hs))
    b = c.const("b", "float32", rnd(3 * hs))
    rb = c.const("rb", "float32", rnd(3 * hs))
    c.node("y", "gruCell", "x", "w", "r", "h", hiddenSize=hs, bias="b", recurrentBias="rb",
           direct_options={"resetAfter": False})
    c.output("y", "float32", gru_cell_ref(x.astype(np.float64), w, r, h, hs, b, rb, reset_after=False), TRANSC)
    c = case("gru_default_resetAfter", "gru", "gru with resetAfter omitted: false, as rustnn 0.6.0 reads GraphJson (the WebNN spec's default is true)")
    x = c.input("x", "float32", rnd(steps, batch, inp))
    w = c.const("w", "float32", rnd(1, 3 * hs, inp))
    r = c.const("r", "float32", rnd(1, 3 * hs, hs))
    rb = c.const("rb", "float32", rnd(1, 3 * hs))
    c.node("h", "gru", "x", "w", "r", steps=steps, hiddenSize=hs, recurrentBias="rb", direct_options={"resetAfter": False})
    H, _, _ = rnn_ref("gru", x.astype(np.float64), w, r, hs, None, rb, reset_after=False)
    c.output("h", "float32", H, TRANSC)
    c = case("gruCell_resetBefore", "gruCell", "gruCell resetAfter false, no recurrentBias")
    x = c.input("x", "float32", rnd(batch, inp))
    h = c.input("h", "float32", rnd(batch, hs))
    w = c.const("w", "float32", rnd(3 * hs, inp))
    r = c.const("r", "float32", rnd(3 * hs, hs))
    b = c.const("b", "float32", rnd(3 * hs))
    c.node("y", "gruCell", "x", "w", "r", "h", hiddenSize=hs, bias="b", resetAfter=False)
    c.output("y", "float32", gru_cell_ref(x.astype(np.float64), w, r, h, hs, b, None, reset_after=False), TRANSC)

    c = case("gru_activations", "gru", "gru with activations [sigmoid, relu], resetAfter true, returnSequence")
    x = c.input("x", "float32", rnd(steps, batch, inp))
    w = c.const("w", "float32", rnd(1, 3 * hs, inp))
    r = c.const("r", "float32", rnd(1, 3 * hs, hs))
    b = c.const("b", "float32", rnd(1, 3 * hs))
    c.node(["h", "seq"], "gru", "x", "w", "r", steps=steps, hiddenSize=hs, bias="b", resetAfter=True,
           returnSequence=True, activations=["sigmoid", "relu"])
    H, _, S = rnn_ref("gru", x.astype(np.float64), w, r, hs, b, acts=("sigmoid", "relu"))
    c.output("h", "float32", H, TRANSC)
    c.output("seq", "float32", S, TRANSC)
    c = case("lstmCell_activations", "lstmCell", "lstmCell with activations [sigmoid, relu, tanh] and layout ifgo")
    x = c.input("x", "float32", rnd(batch, inp))
    h = c.input("h", "float32", rnd(batch, hs))
    cs = c.input("c", "float32", rnd(batch, hs))
    w = c.const("w", "float32", rnd(4 * hs, inp))
    r = c.const("r", "float32", rnd(4 * hs, hs))
    b = c.const("b", "float32", rnd(4 * hs))
    c.node(["ho", "co"], "lstmCell", "x", "w", "r", "h", "c", hiddenSize=hs, bias="b", layout="ifgo",
           activations=["sigmoid", "relu", "tanh"])
    H, C = lstm_cell_ref(x.astype(np.float64), w, r, h, cs, hs, b, layout="ifgo", acts=("sigmoid", "relu", "tanh"))
    c.output("ho", "float32", H, TRANSC)
    c.output("co", "float32", C, TRANSC)
    c = case("lstm", "lstm", "lstm forward, steps 3, hiddenSize 3, bias, recurrentBias, initial states, returnSequence (iofg, sigmoid/tanh/tanh)")
    x = c.input("x", "float32", rnd(steps, batch, inp))
    w = c.const("w", "float32", rnd(1, 4 * hs, inp))
    r = c.const("r", "float32", rnd(1, 4 * hs, hs))
    b = c.const("b", "float32", rnd(1, 4 * hs))
    rb = c.const("rb", "float32", rnd(1, 4 * hs))
    h0 = c.const("h0", "float32", rnd(1, batch, hs))
    c0 = c.const("c0", "float32", rnd(1, batch, hs))
    c.node(["h", "c", "seq"], "lstm", "x", "w", "r", steps=steps, hiddenSize=hs, bias="b", recurrentBias="rb",
           initialHiddenState="h0", initialCellState="c0", returnSequence=True)
    H, C, S = rnn_ref("lstm", x.astype(np.float64), w, r, hs, b, rb, h0, c0)
    c.output("h", "float32", H, TRANSC)
    c.output("c", "float32", C, TRANSC)
    c.output("seq", "float32", S, TRANSC)
    c = case("lstm_backward_ifgo", "lstm", "lstm backward, layout ifgo, no biases, zero initial states")
    x = c.input("x", "float32", rnd(steps, batch, inp))
    w = c.const("w", "float32", rnd(1, 4 * hs, inp))
    r = c.const("r", "float32", rnd(1, 4 * hs, hs))
    c.node(["h", "c"], "lstm", "x", "w", "r", steps=steps, hiddenSize=hs, direction="backward", layout="ifgo")
    H, C, _ = rnn_ref("lstm", x.astype(np.float64), w, r, hs, direction="backward", layout="ifgo")
    c.output("h", "float32", H, TRANSC)
    c.output("c", "float32", C, TRANSC)
    c = case("lstmCell", "lstmCell", "lstmCell with bias and recurrentBias (iofg)")
    x = c.input("x", "float32", rnd(batch, inp))
    h = c.input("h", "float32", rnd(batch, hs))
    cs = c.input("c", "float32", rnd(batch, hs))
    w = c.const("w", "float32", rnd(4 * hs, inp))
    r = c.const("r", "float32", rnd(4 * hs, hs))
    b = c.const("b", "float32", rnd(4 * hs))
    rb = c.const("rb", "float32", rnd(4 * hs))
    c.node(["ho", "co"], "lstmCell", "x", "w", "r", "h", "c", hiddenSize=hs, bias="b", recurrentBias="rb")
    H, C = lstm_cell_ref(x.astype(np.float64), w, r, h, cs, hs, b, rb)
    c.output("ho", "float32", H, TRANSC)
    c.output("co", "float32", C, TRANSC)
    c = case("lstmCell_peephole", "lstmCell", "lstmCell with a peepholeWeight [3*hs] (i, o, f), no biases")
    x = c.input("x", "float32", rnd(batch, inp))
    h = c.input("h", "float32", rnd(batch, hs))
    cs = c.input("c", "float32", rnd(batch, hs))
    w = c.const("w", "float32", rnd(4 * hs, inp))
    r = c.const("r", "float32", rnd(4 * hs, hs))
    p = c.const("p", "float32", rnd(3 * hs))
    c.node(["ho", "co"], "lstmCell", "x", "w", "r", "h", "c", hiddenSize=hs, peepholeWeight="p")
    H, C = lstm_cell_ref(x.astype(np.float64), w, r, h, cs, hs, p=p)
    c.output("ho", "float32", H, TRANSC)
    c.output("co", "float32", C, TRANSC)


def weights_cases():
    c = case("weights_bf16", "weights", "a float32 constant stored as BF16 in the archive (widened on load)")
    x = c.input("x", "float32", rnd(2, 4))
    w = c.const("w", "float32", rnd(4, 3), storage="BF16")
    b = c.const("b", "float32", rnd(3), storage="BF16")
    c.node("m", "matmul", "x", "w")
    c.node("y", "add", "m", "b")
    c.output("y", "float32", x.astype(np.float64) @ w + b, LOOSE)
    c.output("m", "float32", x.astype(np.float64) @ w, LOOSE)
    c = case("weights_int8", "weights", "an int8 weight: cast to float32 and multiplied")
    x = c.input("x", "float32", rnd(2, 3))
    w = c.const("w", "int8", rint(3, 3, lo=-128, hi=127, dt=np.int8))
    c.node("wf", "cast", "w", to="float32")
    c.node("y", "matmul", "x", "wf")
    c.output("y", "float32", x.astype(np.float64) @ w.astype(np.float64), LOOSE)
    for dt, lo, hi in (("int4", -8, 7), ("uint4", 0, 15)):
        c = case(f"weights_{dt}", "weights", f"a packed {dt} weight [4, 3] (odd rows: 12 elements, 6 bytes) with an {dt} zero point, dequantizeLinear, matmul")
        x = c.input("x", "float32", rnd(2, 4))
        wq = c.const("wq", dt, rng.integers(lo, hi + 1, size=(4, 3)))
        s = c.const("scale", "float32", np.array([[0.5, 0.25, 0.125]], f32))
        zp = c.const("zp", dt, np.array([[0, 1, -2 if dt == "int4" else 3]]))
        c.node("w", "dequantizeLinear", "wq", "scale", "zp")
        c.node("y", "matmul", "x", "w")
        wd = (wq.astype(np.float64) - zp) * s
        c.output("w", "float32", wd)
        c.output("y", "float32", x.astype(np.float64) @ wd, LOOSE)
    c = case("weights_int4_odd", "weights", "a packed int4 weight with an odd element count (7: 4 bytes, last high nibble unused), dequantized per tensor")
    wq = c.const("wq", "int4", np.array([[-8, 7, 0, 1, -1, 5, -3]]))
    s = c.const("scale", "float32", np.array([[0.5]], f32))
    zp = c.const("zp", "int4", np.array([[1]]))
    x = c.input("x", "float32", rnd(1, 7))
    c.node("w", "dequantizeLinear", "wq", "scale", "zp")
    c.node("y", "add", "x", "w")
    wd = (wq.astype(np.float64) - 1) * 0.5
    c.output("y", "float32", x + wd)
    c = case("weights_sharded", "weights", "a sharded checkpoint: model.safetensors.index.json and two shards")
    c.sharded = True
    x = c.input("x", "float32", rnd(2, 4))
    w1 = c.const("w1", "float32", rnd(4, 5), ref="encoder.layer.0.weight")
    b1 = c.const("b1", "float32", rnd(5), ref="encoder.layer.0.bias")
    w2 = c.const("w2", "float32", rnd(5, 2), ref="decoder.weight")
    b2 = c.const("b2", "float32", rnd(2), ref="decoder.bias")
    c.node("h", "gemm", "x", "w1", c="b1")
    c.node("a", "relu", "h")
    c.node("y", "gemm", "a", "w2", c="b2")
    hh = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    c.output("y", "float32", hh @ w2 + b2, LOOSE)
    c = case("weights_int64", "weights", "an int64 weight added to an int64 input")
    x = c.input("x", "int64", np.array([1, -2, 3], np.int64))
    a = c.const("a", "int64", np.array([10_000_000_000, -5, 7], np.int64))
    c.node("y", "add", "x", "a")
    c.output("y", "int64", x + a)
    c = case("weights_uint64", "weights", "a uint64 weight through reshape")
    x = c.input("x", "float32", rnd(2))
    c.const("w", "float32", rnd(2))
    u = c.const("u", "uint64", np.array([2**40, 1, 0], np.uint64))
    c.node("y", "add", "x", "w")
    c.node("yu", "reshape", "u", newShape=[3, 1])
    c.output("y", "float32", x + c.consts["w"]["a"])
    c.output("yu", "uint64", u.reshape(3, 1))
    c = case("weights_uint32", "weights", "uint32 weights through mul")
    x = c.input("x", "uint32", np.array([1, 3, 5], np.uint32))
    u32 = c.const("u32", "uint32", np.array([4_000_000_000, 1, 2], np.uint32))
    c.node("y", "mul", "u32", "x")
    c.output("y", "uint32", u32 * x)
    c = case("weights_float16", "weights", "a float16 weight added to a float16 input (float16 output)")
    x = c.input("x", "float16", np.array([1.0, 2.5, -3.0, 0.0], np.float16))
    h = c.const("h", "float16", np.array([0.5, -1.25, 65504.0, -0.0009765625], np.float16))
    c.node("s", "add", "x", "h")
    c.output("s", "float16", (x.astype(f32) + h.astype(f32)).astype(np.float16), {"atol": 0, "rtol": 1e-3})
    c = case("cast_float16_constant", "cast", "cast(float16 -> float32) of a float16 constant and of add(input, constant)")
    x = c.input("x", "float16", np.array([0.0, 1.0, 2.0], np.float16))
    h = c.const("h", "float16", np.array([0.5, -1.25, 1000.0], np.float16))
    c.node("k", "cast", "h", to="float32")
    c.node("t", "add", "x", "h")
    c.node("y", "cast", "t", to="float32")
    c.output("k", "float32", h.astype(f32))
    c.output("y", "float32", (x.astype(f32) + h.astype(f32)).astype(np.float16).astype(f32))


def defaults_cases():
    c = case("inline_constants", "weights", "inline constants beside @weights: @scalar (float32, int32), @bytes (float32, uint8, int4)")
    x = c.input("x", "float32", rnd(2, 3))
    w = c.const("w", "float32", rnd(3))
    eps = c.const("eps", "float32", np.array(0.5, f32), inline="scalar")
    k = c.const("k", "int32", np.array(7, np.int32), inline="scalar")
    v = c.const("v", "float32", np.array([1.5, -2.0, 0.25], f32), inline="bytes")
    m = c.const("m", "uint8", np.array([1, 0, 1], np.uint8), inline="bytes")
    q = c.const("q", "int4", np.array([[-8, 7, 3]]), inline="bytes")
    sc = c.const("sc", "float32", np.array([[0.5, 0.5, 0.5]], f32), inline="bytes")
    zq = c.const("zq", "int4", np.array([[0, 1, -1]]), inline="bytes")
    c.node("a", "add", "x", "w")
    c.node("b", "mul", "a", "eps")
    c.node("t", "add", "b", "v")
    c.node("y", "where", "m", "t", "x")
    c.node("ki", "add", "k", "k")
    c.node("dq", "dequantizeLinear", "q", "sc", "zq")
    t = (x.astype(np.float64) + w) * 0.5 + v
    c.output("y", "float32", np.where(m != 0, t, x))
    c.output("ki", "int32", np.array(14, np.int32))
    c.output("dq", "float32", (np.array([[-8, 7, 3]]) - np.array([[0, 1, -1]])) * 0.5)

    c = case("dequantizeLinear_no_zeroPoint", "dequantizeLinear", "dequantizeLinear(x, scale) without a zero point (zeros, as rustnn reads it)")
    wq = c.const("wq", "int8", rint(2, 3, lo=-128, hi=127, dt=np.int8))
    s = c.const("scale", "float32", np.array([[0.5, 0.25, 0.125]], f32))
    x = c.input("x", "float32", rnd(2, 3))
    c.node("w", "dequantizeLinear", "wq", "scale")
    c.node("y", "add", "x", "w")
    c.output("y", "float32", x + wq.astype(np.float64) * s)
    c = case("dequantizeLinear_scale_rank1", "dequantizeLinear", "dequantizeLinear with a scale and zero point of rank 1 [3] on a [4, 3] weight (numpy broadcasting, as rustnn reads it)")
    wq = c.const("wq", "int8", rint(4, 3, lo=-128, hi=127, dt=np.int8))
    s = c.const("scale", "float32", np.array([0.5, 0.25, 0.125], f32))
    zp = c.const("zp", "int8", np.array([1, -2, 3], np.int8))
    x = c.input("x", "float32", rnd(2, 4))
    c.node("w", "dequantizeLinear", "wq", "scale", "zp")
    c.node("y", "matmul", "x", "w")
    c.output("y", "float32", x.astype(np.float64) @ ((wq.astype(np.float64) - zp) * s), LOOSE)
    c = case("quantizeLinear_scale_rank1", "quantizeLinear", "quantizeLinear with a scale and zero point of rank 1 [3] on [2, 3] (numpy broadcasting)")
    x = c.input("x", "float32", np.array([[0.3, -1.1, 2.2], [-0.7, 0.45, 9.0]], f32))
    s = c.const("scale", "float32", np.array([0.5, 0.25, 0.1], f32))
    zp = c.const("zp", "uint8", np.array([10, 128, 0], np.uint8))
    c.node("y", "quantizeLinear", "x", "scale", "zp")
    c.output("y", "uint8", np.clip(np.rint(x.astype(np.float64) / s.astype(np.float64)) + zp, 0, 255).astype(np.uint8))

    c = case("argMax_defaults", "argMax", "argMax(x, axis=1) with keepDimensions and outputDataType omitted (false, int32)")
    x = c.input("x", "float32", rnd(3, 4))
    c.node("y", "argMax", "x", axis=1)
    c.output("y", "int32", np.argmax(x, axis=1).astype(np.int32))
    c = case("layerNormalization_default_axes", "layerNormalization", "layerNormalization with axes omitted: every axis but the first")
    x = c.input("x", "float32", rnd(2, 3, 4))
    c.node("y", "layerNormalization", "x")
    xx = x.astype(np.float64)
    c.output("y", "float32", (xx - xx.mean(axis=(1, 2), keepdims=True)) / np.sqrt(xx.var(axis=(1, 2), keepdims=True) + 1e-5), LOOSE)
    c = case("linear_default", "linear", "linear with alpha and beta omitted (1, 0)")
    x = c.input("x", "float32", rnd(2, 3))
    c.node("y", "linear", "x")
    c.output("y", "float32", x)
    c = case("reverse_empty_axes", "reverse", "reverse with axes [] (no axis: identity) and axes [0, 1]")
    x = c.input("x", "float32", rnd(2, 3))
    c.node("y", "reverse", "x", axes=[])
    c.node("z", "reverse", "x", axes=[0, 1])
    c.output("y", "float32", x)
    c.output("z", "float32", x[::-1, ::-1])
    c = case("cumulativeSum_default", "cumulativeSum", "cumulativeSum(x, axis=0) with exclusive and reversed omitted")
    x = c.input("x", "int32", rint(3, 2))
    c.node("y", "cumulativeSum", "x", axis=0)
    c.output("y", "int32", np.cumsum(x, axis=0).astype(np.int32))
    c = case("cast_dataType_alias", "cast", "cast(x, dataType=\"int32\"): rustnn reads dataType where to is absent")
    x = c.input("x", "float32", np.array([1.0, -3.0, 8.0], f32))
    c.node("y", "cast", "x", dataType="int32", direct_options={"to": "int32"})
    c.output("y", "int32", x.astype(np.int32))
    c = case("reshape_new_shape_alias", "reshape", "reshape(x, new_shape=[..]) and expand(x, new_shape=[..]): the snake_case keys rustnn reads")
    x = c.input("x", "float32", rnd(2, 3))
    c.node("y", "reshape", "x", new_shape=[3, 2], direct_options={"newShape": [3, 2]})
    c.node("z", "expand", "x", new_shape=[2, 2, 3], direct_options={"newShape": [2, 2, 3]})
    c.output("y", "float32", x.reshape(3, 2))
    c.output("z", "float32", np.broadcast_to(x, (2, 2, 3)))
    c = case("conv2d_bias_input", "conv2d", "conv2d(x, w, b): the bias as a third input, as rustnn reads it")
    x = c.input("x", "float32", rnd(1, 2, 4, 4))
    w = c.const("w", "float32", rnd(3, 2, 3, 3))
    b = c.const("b", "float32", rnd(3))
    c.node("y", "conv2d", "x", "w", "b", padding=[1, 1, 1, 1], direct_inputs=["x", "w"], direct_options={"bias": "b"})
    c.output("y", "float32", conv2d_ref(x, w, b, (1, 1, 1, 1)), LOOSE)
    c = case("convTranspose2d_bias_input", "convTranspose2d", "convTranspose2d(x, w, b): the bias as a third input")
    x = c.input("x", "float32", rnd(1, 2, 3, 3))
    w = c.const("w", "float32", rnd(2, 2, 2, 2))
    b = c.const("b", "float32", rnd(2))
    c.node("y", "convTranspose2d", "x", "w", "b", strides=[2, 2], direct_inputs=["x", "w"], direct_options={"bias": "b"})
    c.output("y", "float32", conv_transpose2d_ref(x, w, b, strides=(2, 2)), LOOSE)
    c = case("gruCell_bias_inputs", "gruCell", "gruCell(x, w, r, h, b, rb): bias and recurrentBias as the fifth and sixth inputs, resetAfter true")
    hs, inp, batch = 3, 2, 2
    x = c.input("x", "float32", rnd(batch, inp))
    h = c.input("h", "float32", rnd(batch, hs))
    w = c.const("w", "float32", rnd(3 * hs, inp))
    r = c.const("r", "float32", rnd(3 * hs, hs))
    b = c.const("b", "float32", rnd(3 * hs))
    rb = c.const("rb", "float32", rnd(3 * hs))
    c.node("y", "gruCell", "x", "w", "r", "h", "b", "rb", hiddenSize=hs, resetAfter=True,
           direct_inputs=["x", "w", "r", "h"], direct_options={"bias": "b", "recurrentBias": "rb"})
    c.output("y", "float32", gru_cell_ref(x.astype(np.float64), w, r, h, hs, b, rb), TRANSC)
    c = case("recurrent_explicit_defaults", "lstm", "lstm with every default spelled out: direction forward, layout iofg, returnSequence false, activations [sigmoid, tanh, tanh]")
    hs, inp, batch, steps = 2, 3, 1, 2
    x = c.input("x", "float32", rnd(steps, batch, inp))
    w = c.const("w", "float32", rnd(1, 4 * hs, inp))
    r = c.const("r", "float32", rnd(1, 4 * hs, hs))
    c.node(["h", "c"], "lstm", "x", "w", "r", steps=steps, hiddenSize=hs, direction="forward", layout="iofg",
           returnSequence=False, activations=["sigmoid", "tanh", "tanh"])
    H, C, _ = rnn_ref("lstm", x.astype(np.float64), w, r, hs)
    c.output("h", "float32", H, TRANSC)
    c.output("c", "float32", C, TRANSC)


def large_case():
    c = case("weights_large", "weights", "a 16 MiB float32 weight [2048, 2048] streamed into the builder (and a 1 MiB one), matmul and add")
    c.no_direct = True
    x = c.input("x", "float32", rnd(2, 2048))
    w = c.const("w", "float32", rnd(2048, 2048, lo=-0.05, hi=0.05))
    b = c.const("b", "float32", rnd(512, 512))
    c.node("m", "matmul", "x", "w")
    c.node("r", "reshape", "b", newShape=[128, 2048])
    c.node("s", "reduceSum", "r", axes=[0], keepDimensions=True)
    c.node("y", "add", "m", "s")
    ref = x.astype(np.float64) @ w + b.astype(np.float64).reshape(128, 2048).sum(axis=0, keepdims=True)
    c.output("y", "float32", ref, {"atol": 1e-4, "rtol": 1e-4})


def mlp_case():
    c = case("mlp_tied", "weights", "two constants on one stored tensor (tied weights) in a small MLP")
    x = c.input("x", "float32", rnd(2, 3))
    w = c.const("w_in", "float32", rnd(3, 3), ref="shared.weight")
    c.consts["w_out"] = dict(c.consts["w_in"])
    c.node("h", "matmul", "x", "w_in")
    c.node("t", "tanh", "h")
    c.node("y", "matmul", "t", "w_out")
    c.output("y", "float32", np.tanh(x.astype(np.float64) @ w) @ w, TRANSC)


def build():
    binary_cases()
    matmul_cases()
    comparison_cases()
    unary_cases()
    logical_cases()
    reduction_cases()
    norm_cases()
    conv_cases()
    shape_cases()
    gather_scatter_cases()
    quant_cases()
    recurrent_cases()
    weights_cases()
    mlp_case()
    defaults_cases()
    large_case()
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    return CASES


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    out = argv[0]
    only = set(argv[argv.index("--only") + 1:]) if "--only" in argv else None
    os.makedirs(out, exist_ok=True)
    cases = build()
    n = 0
    for c in cases:
        if only and c.name not in only and c.op not in only:
            continue
        c.write(out)
        n += 1
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump([{"name": c.name, "op": c.op} for c in cases if not only or c.name in only or c.op in only], f, indent=1)
    print(f"wrote {n} cases into {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
