// The ONNX node tests' page script (runner.html?case=NAME, served from the prepared cases
// folder): imports CASE/out/CASE.js (what `webnn-weights web` wrote for the converted model),
// `load(context)` (every digest checked) and `compute(feeds)` with CASE/inputs.json, and reports
// each output as {dataType, shape, data} (plain numbers; 64-bit integers and non-finite floats
// as strings; float16 as its values; int4/uint4 unpacked).
//
// window.__result = {outputs} when the graph was built and computed, or {stage, message} when a
// stage failed: "import" (the module does not load: our bug), "load" (building the graph:
// Chromium refused it) or "compute".

const TYPED = {
  float32: Float32Array, float16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, int8: Int8Array, uint8: Uint8Array,
  int4: Uint8Array, uint4: Uint8Array,
};

function typed(desc) {
  if (desc.dataType === "float16") return new Uint16Array(desc.bits);
  if (desc.dataType === "int4" || desc.dataType === "uint4") return new Uint8Array(desc.packed);
  const T = TYPED[desc.dataType];
  if (!T) throw new Error(`input data type ${desc.dataType} has no typed array`);
  if (desc.dataType === "int64" || desc.dataType === "uint64") return new T(desc.data.map((v) => BigInt(v)));
  return new T(desc.data.map((v) => (typeof v === "string" ? Number(v) : v)));
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

function plain(dataType, shape, array) {
  const values = [];
  if (dataType === "int4" || dataType === "uint4") {
    const count = (shape ?? []).reduce((a, b) => a * b, 1);
    for (let i = 0; i < count; i++) {
      let v = (array[i >> 1] >> ((i & 1) * 4)) & 0xf;
      if (dataType === "int4" && v > 7) v -= 16;
      values.push(v);
    }
    return values;
  }
  for (const v of array) {
    let x = dataType === "float16" ? halfToFloat(v) : typeof v === "bigint" ? v.toString() : v;
    if (typeof x === "number" && !Number.isFinite(x)) x = Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
    values.push(x);
  }
  return values;
}

const json = async (url) => {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
};

const message = (e) => `${e?.name ?? "Error"}: ${e?.message ?? e}`;

async function main() {
  const name = new URLSearchParams(location.search).get("case");
  if (!("ml" in navigator)) throw new Error("navigator.ml is undefined: this browser has no WebNN");
  const inputs = await json(`./${name}/inputs.json`);
  const context = await navigator.ml.createContext({ deviceType: "cpu" });
  let mod;
  try {
    mod = await import(`./${name}/out/${name}.js`);
  } catch (e) {
    return { stage: "import", message: message(e) };
  }
  let model;
  try {
    model = await mod.load(context);
  } catch (e) {
    return { stage: "load", message: message(e) };
  }
  let got;
  try {
    const feeds = {};
    for (const [n, d] of Object.entries(inputs)) feeds[n] = typed(d);
    got = await model.compute(feeds);
  } catch (e) {
    return { stage: "compute", message: message(e) };
  }
  const described = Object.fromEntries(model.outputs.map((o) => [o.name, o]));
  const outputs = {};
  for (const [n, arr] of Object.entries(got)) {
    const { dataType, shape } = described[n] ?? {};
    outputs[n] = { dataType, shape, data: plain(dataType, shape, arr) };
  }
  return { outputs };
}

try {
  window.__result = await main();
} catch (e) {
  window.__error = message(e);
}
window.__done = true;
