// The page for `webnn-weights web`'s output: load() with progress, compute x, show y and
// compare it with the native run.
import { load, graphName } from "./model/tiny_mlp.js";
import { X, bitsOf, createContext, expected, status, progress, showResult, table, done } from "./common.js";

try {
  const started = performance.now();
  const native = await expected();
  const context = await createContext();
  const events = [];
  status(`loading ${graphName ?? "the graph"}…`);
  const model = await load(context, {
    onProgress: (p) => {
      events.push(p);
      progress(`${p.tensor}: ${p.loadedTensors}/${p.totalTensors} tensors, ${p.loadedBytes}/${p.totalBytes} bytes`);
    },
  });
  table("io", [
    ...model.inputs.map((d) => ["input", d.name, d.dataType, `[${d.shape.join(", ")}]`]),
    ...model.outputs.map((d) => ["output", d.name, d.dataType, `[${d.shape.join(", ")}]`]),
  ]);
  const outputs = await model.compute({ x: new Float32Array(X) });
  const y = outputs.y;
  progress(`computed in ${(performance.now() - started).toFixed(1)} ms from page load`);
  const same = showResult(X, y, native);
  status(same === false ? "computed: y DIFFERS from the native run" : "computed");
  done({
    page: "web",
    graph: graphName,
    x: X,
    y: Array.from(y),
    yBits: bitsOf(y),
    equalToNative: same,
    inputs: model.inputs,
    outputs: model.outputs,
    progress: events,
    ms: performance.now() - started,
  });
} catch (error) {
  done(undefined, error);
}
