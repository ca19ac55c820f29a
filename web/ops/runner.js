// The op suite's page script (loaded by runner.html?case=NAME&mode=MODE from the served cases
// folder). Two modes:
//   module  imports CASE/out/CASE.js (the module `webnn-weights web` wrote), `load(ctx)`,
//           `compute(feeds)`: what the suite tests.
//   direct  builds the same graph from CASE/case.json's "direct" description with
//           MLGraphBuilder calls written here by hand from the WebNN spec (no generated code):
//           tells a browser limitation from a bug of the generated module.
// The page sets window.__result = {outputs: {name: {dataType, shape, data}}, ...} or
// window.__error (the exception's name and message).

const TYPED = {
  float32: Float32Array, float16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, int8: Int8Array, uint8: Uint8Array,
};

function typed(desc) {
  const T = TYPED[desc.dataType];
  if (desc.dataType === "float16") return new Uint16Array(desc.bits);
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

function plain(dataType, array) {
  const out = [];
  for (const v of array) {
    let x = dataType === "float16" ? halfToFloat(v) : typeof v === "bigint" ? v.toString() : v;
    if (typeof x === "number" && !Number.isFinite(x)) x = Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
    out.push(x);
  }
  return out;
}

const json = async (url) => {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
};

// -- direct: the WebNN spec's signatures --

const OPERAND_OPTIONS = new Set(["bias", "recurrentBias", "peepholeWeight", "initialHiddenState", "initialCellState", "scale", "c"]);

function directBuild(builder, direct, inputs) {
  const env = new Map();
  for (const [name, d] of Object.entries(inputs)) env.set(name, builder.input(name, { dataType: d.dataType, shape: d.shape }));
  for (const [name, d] of Object.entries(direct.consts)) {
    const bytes = d.packed ? new Uint8Array(d.packed) : typed(d);
    env.set(name, builder.constant({ dataType: d.dataType, shape: d.shape }, bytes));
  }
  for (const node of direct.nodes) {
    const ins = node.inputs.map((n) => env.get(n));
    const o = {};
    for (const [k, v] of Object.entries(node.options)) {
      o[k] = OPERAND_OPTIONS.has(k) && typeof v === "string" ? env.get(v) : v;
    }
    const take = (...keys) => keys.map((k) => {
      const v = o[k];
      delete o[k];
      return v;
    });
    let r;
    switch (node.op) {
      case "reshape": case "expand": r = builder[node.op](ins[0], ...take("newShape"), o); break;
      case "slice": r = builder.slice(ins[0], ...take("starts", "sizes"), o); break;
      case "cast": r = builder.cast(ins[0], ...take("to"), o); break;
      case "concat": r = builder.concat(ins, ...take("axis"), o); break;
      case "split": r = builder.split(ins[0], ...take("splits"), o); break;
      case "softmax": r = builder.softmax(ins[0], ...take("axis"), o); break;
      case "pad": r = builder.pad(ins[0], ...take("beginningPadding", "endingPadding"), o); break;
      case "tile": r = builder.tile(ins[0], ...take("repetitions"), o); break;
      case "argMax": case "argMin": case "cumulativeSum": r = builder[node.op](ins[0], ...take("axis"), o); break;
      case "gru": case "lstm": r = builder[node.op](...ins, ...take("steps", "hiddenSize"), o); break;
      case "gruCell": case "lstmCell": r = builder[node.op](...ins, ...take("hiddenSize"), o); break;
      default: r = builder[node.op](...ins, o);
    }
    const rs = Array.isArray(r) ? r : [r];
    node.outputs.forEach((n, i) => env.set(n, rs[i]));
  }
  return env;
}

async function runDirect(context, c, inputs, expected) {
  if (c.direct === null) throw new Error("this case has no hand-built description (its constants are too large for JSON)");
  const builder = new MLGraphBuilder(context);
  const env = directBuild(builder, c.direct, inputs);
  const named = {};
  for (const n of Object.keys(expected)) named[n] = env.get(n);
  const graph = await builder.build(named);
  const tin = {};
  const tout = {};
  for (const [n, d] of Object.entries(inputs)) {
    tin[n] = await context.createTensor({ dataType: d.dataType, shape: d.shape, writable: true });
    context.writeTensor(tin[n], typed(d));
  }
  for (const [n, op] of Object.entries(named)) {
    tout[n] = await context.createTensor({ dataType: op.dataType, shape: op.shape, readable: true });
  }
  context.dispatch(graph, tin, tout);
  const outputs = {};
  for (const [n, op] of Object.entries(named)) {
    const T = TYPED[op.dataType];
    outputs[n] = { dataType: op.dataType, shape: Array.from(op.shape), data: plain(op.dataType, new T(await context.readTensor(tout[n]))) };
  }
  return { outputs };
}

// -- module: the generated ES module --

async function runModule(context, name, inputs) {
  const mod = await import(`./${name}/out/${name}.js`);
  let progress = 0;
  const model = await mod.load(context, { onProgress: () => { progress += 1; } });
  const feeds = {};
  for (const [n, d] of Object.entries(inputs)) feeds[n] = typed(d);
  const got = await model.compute(feeds);
  const outputs = {};
  const shapes = Object.fromEntries(model.outputs.map((o) => [o.name, o]));
  for (const [n, arr] of Object.entries(got)) {
    const dataType = shapes[n]?.dataType;
    outputs[n] = { dataType, shape: shapes[n]?.shape, data: plain(dataType, arr), typedArray: arr.constructor.name };
  }
  // the whole-file path of the same module: WeightsFile.load + buildGraph + compute
  const base = new URL(`./${name}/out/${name}`, location.href).href;
  const weights = await mod.WeightsFile.load(`${base}.weights`, `${base}.manifest.json`);
  const graph = await mod.buildGraph(context, weights);
  const again = await mod.compute(context, graph, feeds);
  const wholeFile = {};
  for (const [n, arr] of Object.entries(again)) wholeFile[n] = { dataType: shapes[n]?.dataType, shape: shapes[n]?.shape, data: plain(shapes[n]?.dataType, arr) };
  return {
    outputs,
    wholeFile,
    moduleInputs: mod.inputs,
    moduleOutputs: mod.outputs,
    loadInputs: model.inputs,
    loadOutputs: model.outputs,
    progressCalls: progress,
  };
}

// -- tampered: load must reject a weights file with one flipped byte, before building --

async function runTampered(context, name) {
  let builds = 0;
  const build = MLGraphBuilder.prototype.build;
  MLGraphBuilder.prototype.build = function (...args) {
    builds += 1;
    return build.apply(this, args);
  };
  try {
    const mod = await import(`./${name}/out/${name}.js`);
    const base = new URL(`./${name}/out/${name}`, location.href).href;
    const attempt = async (f) => {
      try {
        await f();
      } catch (e) {
        return { rejected: true, message: String(e?.message ?? e), builds };
      }
      return { rejected: false, builds };
    };
    // cache: false: the case shares its tensors with weights_sharded, whose verified bytes
    // the cache (keyed by content) would serve without reading the tampered blob
    const streamed = await attempt(() => mod.load(context, { cache: false }));
    // the whole-file path: WeightsFile.load + buildGraph must reject it too
    const wholeFile = await attempt(async () => mod.buildGraph(context, await mod.WeightsFile.load(`${base}.weights`, `${base}.manifest.json`)));
    // a blob cut short (the served copy "short.weights")
    const short = await attempt(() => mod.load(context, { weightsUrl: `${base}.short.weights`, cache: false }));
    return { ...streamed, wholeFile, short };
  } finally {
    MLGraphBuilder.prototype.build = build;
  }
}

async function main() {
  const params = new URLSearchParams(location.search);
  const name = params.get("case");
  const mode = params.get("mode") ?? "module";
  if (!("ml" in navigator)) throw new Error("navigator.ml is undefined: this browser has no WebNN");
  const context = await navigator.ml.createContext({ deviceType: "cpu" });
  if (mode === "limits") return { limits: context.opSupportLimits() };
  if (mode === "tampered") return runTampered(context, name);
  const c = await json(`./${name}/case.json`);
  const inputs = await json(`./${name}/inputs.json`);
  const expected = await json(`./${name}/expected.json`);
  if (mode === "direct") return runDirect(context, c, inputs, expected);
  return runModule(context, name, inputs);
}

try {
  window.__result = await main();
} catch (e) {
  window.__error = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
}
window.__done = true;
