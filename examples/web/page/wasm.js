// The Rust app's page: instantiates the wasm (src/lib.rs's exports), builds its program with
// the builder module (builder.js, webnn_weights_web::builder_module()) on views of the wasm
// memory, computes x and compares y with the native run.
import { buildProgram, compute } from "./builder.js";
import { X, bitsOf, createContext, expected, status, progress, showResult, table, done } from "./common.js";

const WASM = "./webnn_weights_web_example.wasm";

function utf8(memory, ptr, len) {
  return new TextDecoder().decode(new Uint8Array(memory.buffer, ptr, len));
}

try {
  const started = performance.now();
  const native = await expected();
  const { module, instance } = await WebAssembly.instantiateStreaming(fetch(WASM), {});
  const wasm = instance.exports;
  const imports = WebAssembly.Module.imports(module).length;
  progress(`instantiated ${WASM} (${imports} imports)`);

  // Everything that allocates in the wasm first: program_ok() lowers the program (once).
  const lowered = wasm.program_ok() === 1;
  const text = utf8(wasm.memory, wasm.program_ptr(), wasm.program_len());
  if (!lowered) throw new Error(`the wasm could not lower its graph: ${text}`);
  const program = JSON.parse(text);
  progress(`program: ${program.nodes.length} nodes, ${program.constants.length} constants (${text.length} bytes of JSON from the wasm)`);

  // No call below allocates in the wasm, so its memory does not grow and these views stay
  // attached to memory.buffer.
  const count = wasm.constant_count();
  const slots = new Map();
  for (let i = 0; i < count; i++) {
    const name = utf8(wasm.memory, wasm.constant_name_ptr(i), wasm.constant_name_len(i));
    slots.set(name, { ptr: wasm.constant_bytes_ptr(i) >>> 0, len: wasm.constant_bytes_len(i) >>> 0 });
  }
  const buffer = wasm.memory.buffer;
  const views = new Map([...slots].map(([name, { ptr, len }]) => [name, new Uint8Array(buffer, ptr, len)]));

  const context = await createContext();
  const handed = [];
  const graph = await buildProgram(context, program, (constant) => {
    const view = views.get(constant.name);
    if (view === undefined) throw new Error(`the wasm has no bytes for constant ${constant.name}`);
    handed.push(constant.name);
    return view;
  });
  progress(`built the MLGraph from ${handed.length} views of the wasm memory (SHA-256 of each checked against the weights lock)`);

  const outputs = await compute(context, graph, { x: new Float32Array(X) });
  const y = outputs.y;
  progress(`computed in ${(performance.now() - started).toFixed(1)} ms from page load`);

  const constants = program.constants.map((c) => {
    const view = views.get(c.name);
    return {
      name: c.name,
      dataType: c.dataType,
      shape: c.shape,
      byteLength: view.byteLength,
      ptr: view.byteOffset,
      ptrMod64: view.byteOffset % 64,
      viewOfWasmMemory: view.buffer === wasm.memory.buffer && view.buffer.byteLength > 0,
    };
  });
  table("constants", constants.map((c) => [c.name, c.dataType, `[${c.shape.join(", ")}]`, c.byteLength, c.ptr, c.ptrMod64, c.viewOfWasmMemory ? "yes" : "NO"]));
  const same = showResult(X, y, native);
  status(same === false ? "computed: y DIFFERS from the native run" : "computed");
  done({
    page: "wasm",
    x: X,
    y: Array.from(y),
    yBits: bitsOf(y),
    equalToNative: same,
    constants,
    handedOver: handed,
    wasmImports: imports,
    memoryBytes: wasm.memory.buffer.byteLength,
    programBytes: text.length,
    ms: performance.now() - started,
  });
} catch (error) {
  done(undefined, error);
}
