// The webnn-weights graph builder: executes a program lowered by the WebNN table of
// webnn-weights (one MLGraphBuilder call per node), checks constants' sizes and digests,
// and computes built graphs. Generated modules inline this file; it imports nothing.

const TYPED_ARRAYS = {
  float32: Float32Array,
  float16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int4: Uint8Array,
  uint4: Uint8Array,
};

const ELEMENT_BYTES = {
  float32: 4, float16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8, int8: 1, uint8: 1,
};

function elementCount(shape) {
  return shape.reduce((count, size) => count * size, 1);
}

function byteLengthOf(dataType, shape) {
  const count = elementCount(shape);
  return dataType === "int4" || dataType === "uint4" ? Math.ceil(count / 2) : count * ELEMENT_BYTES[dataType];
}

function describe(dataType, shape) {
  return `${dataType}[${shape.join(", ")}]`;
}

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function toHex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(bytes) {
  if (!globalThis.crypto || !globalThis.crypto.subtle) {
    throw new Error("webnn-weights: SubtleCrypto is not available (serve the page over https or from localhost) to check the weights' SHA-256");
  }
  return toHex(await crypto.subtle.digest("SHA-256", bytes));
}

// Checks the bytes of one or more constants that share them (tied constants) against the
// digests the module was written with, hashing the bytes once.
async function verifyConstants(constants, bytes) {
  const digested = constants.filter((constant) => constant.sha256 !== undefined);
  if (digested.length === 0) return;
  const found = await sha256Hex(bytes);
  for (const constant of digested) {
    if (found !== constant.sha256) {
      throw new Error(`webnn-weights: constant ${constant.name} (weights "${constant.ref}"): SHA-256 ${found}, expected ${constant.sha256}: the weights file is not the one this module was written for (fix: serve the .weights file written with this module)`);
    }
  }
}

// Outputs' descriptors of the graphs this module built, for compute().
const GRAPH_IO = new WeakMap();

const ADAPTERS = {
  // quantizeLinear / dequantizeLinear as rustnn computes them: scale and zero point
  // broadcast like numpy (reshaped to the input's rank), zeros when there is no zero
  // point, and x * s - z * s when the zero point's type is not the input's.
  quantize(builder, call, [input, scale, zeroPoint, options]) {
    const toRank = (operand) => {
      if (operand.shape.length >= input.shape.length) return operand;
      const shape = Array(input.shape.length - operand.shape.length).fill(1).concat(operand.shape);
      return builder.reshape(operand, shape);
    };
    const dequantize = call.method === "dequantizeLinear";
    scale = toRank(scale);
    if (zeroPoint === null) {
      const dataType = dequantize ? input.dataType : "uint8";
      const bytes = new Uint8Array(byteLengthOf(dataType, scale.shape));
      zeroPoint = builder.constant({ dataType, shape: scale.shape }, bytes);
    } else {
      zeroPoint = toRank(zeroPoint);
    }
    if (dequantize && zeroPoint.dataType !== input.dataType) {
      // (x - z) * s as x * s - z * s: the browser casts no 4-bit operand, so the input is
      // dequantized natively around a zero of its own type.
      const zeros = builder.constant({ dataType: input.dataType, shape: zeroPoint.shape }, new Uint8Array(byteLengthOf(input.dataType, zeroPoint.shape)));
      const scaled = builder.dequantizeLinear(input, scale, zeros);
      return builder.sub(scaled, builder.mul(builder.cast(zeroPoint, scale.dataType), scale), options);
    }
    return builder[call.method](input, scale, zeroPoint, options);
  },
};

// Builds one program: inputs at once, constants as their bytes arrive (constant()), nodes
// and build() in finish().
class GraphAssembler {
  // With `placeholders`, every constant read from the weights is declared as a graph input
  // of its type and shape instead (no bytes): the builder then infers the outputs' types
  // and shapes (outputDescriptors()) without a byte of the weights; such a builder never
  // builds.
  constructor(context, program, { placeholders = false } = {}) {
    if (typeof MLGraphBuilder === "undefined") {
      throw new Error("webnn-weights: this browser has no WebNN (MLGraphBuilder is undefined)");
    }
    this.context = context;
    this.program = program;
    this.builder = new MLGraphBuilder(context);
    this.env = new Map();
    this.missing = new Map();
    this.placeholders = placeholders;
    for (const input of program.inputs) {
      this.env.set(input.name, this.builder.input(input.name, { dataType: input.dataType, shape: input.shape }));
    }
    for (const constant of program.constants) {
      if (constant.bytes !== undefined) this.constant(constant, decodeBase64(constant.bytes));
      else if (placeholders) this.env.set(constant.name, this.builder.input(`webnn-weights placeholder ${constant.name}`, { dataType: constant.dataType, shape: constant.shape }));
      else this.missing.set(constant.name, constant);
    }
  }

  // Hands one constant's bytes (an ArrayBufferView, not copied here) to the builder.
  constant(constant, bytes) {
    if (bytes.byteLength !== constant.byteLength) {
      throw new Error(`webnn-weights: constant ${constant.name}${constant.ref === undefined ? "" : ` (weights "${constant.ref}")`}: ${bytes.byteLength} bytes, ${describe(constant.dataType, constant.shape)} takes ${constant.byteLength}`);
    }
    this.env.set(constant.name, this.builder.constant({ dataType: constant.dataType, shape: constant.shape }, bytes));
    this.missing.delete(constant.name);
  }

  operand(name, call) {
    const operand = this.env.get(name);
    if (operand === undefined) throw new Error(`webnn-weights: node ${call.id} (${call.op}): operand ${name} is not defined`);
    return operand;
  }

  value(arg, call) {
    if (arg === null) return null;
    if ("operand" in arg) return this.operand(arg.operand, call);
    if ("operands" in arg) return arg.operands.map((name) => this.operand(name, call));
    if ("options" in arg) {
      const options = {};
      for (const [key, value] of Object.entries(arg.options)) {
        const isOperand = value !== null && typeof value === "object" && !Array.isArray(value) && "operand" in value;
        options[key] = isOperand ? this.operand(value.operand, call) : value;
      }
      return options;
    }
    return arg.value;
  }

  node(call) {
    const args = call.args.map((arg) => this.value(arg, call));
    let result;
    try {
      result = call.adapter === undefined ? this.builder[call.method](...args) : ADAPTERS[call.adapter](this.builder, call, args);
    } catch (error) {
      throw new Error(`webnn-weights: node ${call.id} (${call.op}): ${error.message}`);
    }
    const results = call.sequence ? result : [result];
    if (results.length !== call.outputs.length) {
      throw new Error(`webnn-weights: node ${call.id} (${call.op}): ${results.length} results, the graph names ${call.outputs.length}`);
    }
    call.outputs.forEach((name, i) => this.env.set(name, results[i]));
  }

  // Runs the nodes: the output operands by name and their descriptors.
  operands() {
    for (const call of this.program.nodes) this.node(call);
    const named = {};
    for (const output of this.program.outputs) named[output.name] = this.env.get(output.operand);
    const outputs = this.program.outputs.map((output) => ({
      name: output.name,
      dataType: named[output.name].dataType,
      shape: Array.from(named[output.name].shape),
    }));
    return { named, outputs };
  }

  // The outputs' descriptors, [{name, dataType, shape}] (a placeholders builder).
  outputDescriptors() {
    return this.operands().outputs;
  }

  async finish() {
    if (this.placeholders) throw new Error("webnn-weights: a builder of placeholders does not build");
    if (this.missing.size > 0) {
      throw new Error(`webnn-weights: no bytes for constant(s) ${[...this.missing.keys()].join(", ")}`);
    }
    const { named, outputs } = this.operands();
    const graph = await this.builder.build(named);
    GRAPH_IO.set(graph, { inputs: this.program.inputs, outputs });
    return graph;
  }
}

// The descriptors of a graph this module built: {inputs, outputs}, each [{name, dataType, shape}].
function graphDescriptors(graph) {
  const io = GRAPH_IO.get(graph);
  if (io === undefined) throw new Error("webnn-weights: this MLGraph was not built by this module");
  return io;
}

// Computes a graph this module built: feeds {name: TypedArray or ArrayBuffer} -> {name: TypedArray}.
async function computeGraph(context, graph, feeds) {
  const io = graphDescriptors(graph);
  const inputs = {};
  const outputs = {};
  const tensors = [];
  try {
    for (const input of io.inputs) {
      const data = feeds[input.name];
      if (data === undefined) throw new Error(`webnn-weights: compute: no value for input ${input.name} (${describe(input.dataType, input.shape)})`);
      const expected = byteLengthOf(input.dataType, input.shape);
      if (data.byteLength !== expected) {
        throw new Error(`webnn-weights: compute: input ${input.name}: ${data.byteLength} bytes, ${describe(input.dataType, input.shape)} takes ${expected}`);
      }
      const tensor = await context.createTensor({ dataType: input.dataType, shape: input.shape, writable: true });
      tensors.push(tensor);
      context.writeTensor(tensor, data);
      inputs[input.name] = tensor;
    }
    for (const output of io.outputs) {
      const tensor = await context.createTensor({ dataType: output.dataType, shape: output.shape, readable: true });
      tensors.push(tensor);
      outputs[output.name] = tensor;
    }
    context.dispatch(graph, inputs, outputs);
    const results = {};
    for (const output of io.outputs) {
      results[output.name] = new TYPED_ARRAYS[output.dataType](await context.readTensor(outputs[output.name]));
    }
    return results;
  } finally {
    for (const tensor of tensors) tensor.destroy();
  }
}

function checkManifest(manifest, url) {
  if (manifest === null || typeof manifest !== "object" || typeof manifest.tensors !== "object") {
    throw new Error(`webnn-weights: ${url}: not a weights manifest (no "tensors" object)`);
  }
  if (manifest.format !== undefined && manifest.format !== "wg-weights-manifest") {
    throw new Error(`webnn-weights: ${url}: manifest format ${JSON.stringify(manifest.format)}, expected "wg-weights-manifest"`);
  }
  if (manifest.version !== undefined && manifest.version !== 1) {
    throw new Error(`webnn-weights: ${url}: manifest version ${manifest.version}, this module reads version 1`);
  }
}

async function fetchOk(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`webnn-weights: cannot load the ${what} ${url}: HTTP ${response.status} ${response.statusText}`);
  return response;
}

// A weights blob and its manifest, loaded whole (webnn-graph's emit-js contract). Offsets
// are absolute, so WGWT blobs (tensors from byte 8) and headerless blobs (from byte 0) read
// alike.
class WeightsFile {
  constructor(buffer, manifest) {
    this.buffer = buffer;
    this.manifest = manifest;
  }

  static async load(weightsUrl, manifestUrl) {
    const [weights, manifest] = await Promise.all([
      fetchOk(weightsUrl, "weights").then((r) => r.arrayBuffer()),
      fetchOk(manifestUrl, "manifest").then((r) => r.json()),
    ]);
    checkManifest(manifest, manifestUrl);
    return new WeightsFile(weights, manifest);
  }

  // The manifest entry of a tensor: {byteOffset, byteLength, ...}, checked against the blob.
  getSlice(name) {
    const entry = this.manifest.tensors[name];
    if (entry === undefined) throw new Error(`webnn-weights: tensor "${name}" is not in the weights manifest`);
    const { byteOffset, byteLength } = entry;
    if (!Number.isSafeInteger(byteOffset) || !Number.isSafeInteger(byteLength) || byteOffset < 0 || byteLength < 0) {
      throw new Error(`webnn-weights: tensor "${name}": byteOffset ${byteOffset} and byteLength ${byteLength} must be non-negative integers`);
    }
    if (byteOffset + byteLength > this.buffer.byteLength) {
      throw new Error(`webnn-weights: tensor "${name}": bytes ${byteOffset}..${byteOffset + byteLength} lie past the end of the ${this.buffer.byteLength}-byte weights file`);
    }
    return entry;
  }

  // A copy of a tensor's bytes.
  getData(name) {
    const slice = this.getSlice(name);
    return this.buffer.slice(slice.byteOffset, slice.byteOffset + slice.byteLength);
  }

  getTensorNames() {
    return Object.keys(this.manifest.tensors);
  }
}

// Builds a program whose constants' bytes come from bytesOf(constant) (an ArrayBufferView,
// not copied), every digest checked before the builder sees a byte.
async function buildProgram(context, program, bytesOf) {
  const views = program.constants.filter((c) => c.ref !== undefined).map((c) => [c, bytesOf(c)]);
  await Promise.all(views.map(([constant, bytes]) => verifyConstants([constant], bytes)));
  const assembler = new GraphAssembler(context, program);
  for (const [constant, bytes] of views) assembler.constant(constant, bytes);
  return assembler.finish();
}

// buildGraph(context, weights): views into weights.buffer.
function buildFromWeights(context, program, weights) {
  return buildProgram(context, program, (constant) => {
    const slice = weights.getSlice(constant.ref);
    return new Uint8Array(weights.buffer, slice.byteOffset, slice.byteLength);
  });
}

// -- Loading: the verified cache, resumed downloads, weights already in the page --

// The Cache API cache load() uses unless told otherwise.
const DEFAULT_CACHE = "webnn-weights";

// Ranges to download separated by at most this many bytes are read by one request (the
// bytes between skipped); a wider gap starts a new request.
const RUN_GAP = 65536;

// Before the n-th resumed request in a row of a download: RESUME_DELAY_MS * 2^(n-1)
// milliseconds, at most RESUME_DELAY_MAX_MS (a dropped connection often needs a moment).
const RESUME_DELAY_MS = 250;
const RESUME_DELAY_MAX_MS = 4000;

// A tensor's entry in a cache: the URL-shaped key of its SHA-256 (never the blob's URL).
// The Cache API only stores http(s) keys; `.invalid` is a name that can never resolve.
function cacheKey(sha256) {
  return `https://webnn-weights.invalid/sha256/${sha256}`;
}

// The store of load({cache}): a Cache API cache, an object with match/put/delete, or null
// (off). Modules that hold no digest (emit-js) have nothing to key entries by: the default
// is then off, and asking for a cache is an error.
async function openStore(option, program, hasWeightsOption) {
  const digested = program.constants.some((c) => c.ref !== undefined && c.sha256 !== undefined);
  if (option === false || option === null) return null;
  if (option === undefined && (hasWeightsOption || !digested)) return null;
  if (!digested) {
    throw new Error("webnn-weights: load({cache}): this module holds no SHA-256 of its constants (emit-js writes none), so the cache cannot key its entries by content (fix: pass cache: false, or write the module with `webnn-weights web`)");
  }
  if (typeof option === "object") {
    for (const method of ["match", "put", "delete"]) {
      if (typeof option[method] !== "function") {
        throw new TypeError(`webnn-weights: load({cache}): the cache object has no ${method}() (it needs async match(key), put(key, response) and delete(key))`);
      }
    }
    return option;
  }
  if (option !== undefined && option !== true && typeof option !== "string") {
    throw new TypeError(`webnn-weights: load({cache}): ${typeof option}; expected true, false, a cache name or an object with match/put/delete`);
  }
  if (typeof caches === "undefined") {
    if (option === undefined) return null; // the default, where the Cache API is missing (not a secure context)
    throw new Error("webnn-weights: load({cache}): this page has no Cache API (it needs a secure context: https or localhost); pass cache: false or a cache object");
  }
  return caches.open(typeof option === "string" ? option : DEFAULT_CACHE);
}

// Bytes copied at a time when a tensor is written into the cache.
const PUT_CHUNK = 1 << 20;

// A cache entry of a tensor: {response, read, cutOff}. The response streams a view in
// PUT_CHUNK copies (no copy of the whole tensor), so the view must stay unchanged until the
// store has read it all; read() says whether it has, and cutOff() makes the rest of the body
// an error (a store that kept the body unread then holds an entry that fails when read, never
// bytes of another tensor).
function cacheEntry(view) {
  let at = 0;
  let stream;
  const body = new ReadableStream({
    start(controller) {
      stream = controller;
    },
    pull(controller) {
      if (at >= view.length) {
        controller.close();
        return;
      }
      controller.enqueue(view.slice(at, at + PUT_CHUNK));
      at += PUT_CHUNK;
    },
  }, { highWaterMark: 0 });
  return {
    response: new Response(body, { headers: { "content-type": "application/octet-stream", "content-length": String(view.length) } }),
    read: () => at >= view.length,
    cutOff: () => stream.error(new Error("webnn-weights: the store read this entry after its put() had resolved; the bytes were gone")),
  };
}

// Reads a cached entry (a Response, or anything with body or arrayBuffer()) into `target`:
// the byte count, or target.length + 1 when the entry holds more.
async function readEntry(entry, target) {
  if (entry.body !== undefined) {
    if (entry.body === null) return 0;
    const reader = entry.body.getReader();
    let count = 0;
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) return count;
      const value = asBytes(chunk, "the cache entry");
      if (count + value.length > target.length) {
        await reader.cancel().catch(() => {});
        return target.length + 1;
      }
      target.set(value, count);
      count += value.length;
    }
  }
  const bytes = new Uint8Array(await entry.arrayBuffer());
  if (bytes.length > target.length) return target.length + 1;
  target.set(bytes);
  return bytes.length;
}

// Whether a view's memory is a SharedArrayBuffer (which SubtleCrypto and WebNN do not take).
function isShared(bytes) {
  return typeof SharedArrayBuffer !== "undefined" && bytes.buffer instanceof SharedArrayBuffer;
}

// A chunk of a stream as a Uint8Array (streams of the page may carry any view); a chunk over
// shared memory is copied.
function asBytes(value, what) {
  let bytes;
  if (value instanceof Uint8Array) bytes = value;
  else if (value instanceof ArrayBuffer) bytes = new Uint8Array(value);
  else if (ArrayBuffer.isView(value)) bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  else if (typeof SharedArrayBuffer !== "undefined" && value instanceof SharedArrayBuffer) bytes = new Uint8Array(value);
  else throw new TypeError(`webnn-weights: ${what} gave a chunk that is not bytes (${Object.prototype.toString.call(value)})`);
  return isShared(bytes) ? bytes.slice() : bytes;
}

// An error a resumed request may cure (the connection, not the content).
class Interrupted extends Error {}

// The sources of the blob's bytes. open(from, end, ranged) resolves to {reader, start,
// whole, size}: a reader of the blob from byte `start` (at most `from`) on, for the bytes
// [from, end), or on to the blob's end when `whole`; `ranged` says a partial read is wanted
// (a Range request for a URL); `size` is the blob's size when the source tells it.
function urlSource(url) {
  return {
    what: url,
    label: "network",
    resumable: true,
    async open(from, end, ranged) {
      const headers = ranged ? { Range: `bytes=${from}-${end - 1}` } : {};
      let response;
      try {
        response = await fetch(url, { headers });
      } catch (error) {
        throw new Interrupted(`webnn-weights: cannot load the weights ${url}: ${error.message}`);
      }
      if (response.status === 416) {
        throw new Error(`webnn-weights: ${url}: the server has no byte ${from} (HTTP 416): the weights file is shorter than its manifest says (fix: serve the .weights file written with this module)`);
      }
      if (response.status >= 500) throw new Interrupted(`webnn-weights: cannot load the weights ${url}: HTTP ${response.status} ${response.statusText}`);
      if (!response.ok) throw new Error(`webnn-weights: cannot load the weights ${url}: HTTP ${response.status} ${response.statusText}`);
      let start = 0;
      let size = null;
      if (response.status === 206) {
        const match = /^bytes (\d+)-\d+\/(\d+|\*)/.exec(response.headers.get("content-range") ?? "");
        start = match ? Number(match[1]) : from;
        if (match && match[2] !== "*") size = Number(match[2]);
      } else if (response.type === "basic" && response.headers.get("content-length") !== null && response.headers.get("content-encoding") === null) {
        // Content-Length is the blob's size only when the body is not encoded; a cross-origin
        // response hides Content-Encoding (it is not a CORS-safelisted header), so its length
        // is not trusted: a short body is found when it ends
        size = Number(response.headers.get("content-length"));
      }
      return { reader: response.body.getReader(), start, whole: response.status === 200, size };
    },
  };
}

// weights given to load(): a Blob or File, an ArrayBuffer or typed array, a Response or a
// ReadableStream (the last two read once, from byte 0).
function pageSource(weights) {
  if (typeof Blob !== "undefined" && weights instanceof Blob) {
    return {
      what: `the ${weights instanceof File ? `File ${JSON.stringify(weights.name)}` : "Blob"} given as weights`,
      label: "weights",
      resumable: true,
      async open(from, end) {
        return { reader: weights.slice(from, end).stream().getReader(), start: from, whole: false, size: weights.size };
      },
    };
  }
  const isSharedBuffer = typeof SharedArrayBuffer !== "undefined" && weights instanceof SharedArrayBuffer;
  if (weights instanceof ArrayBuffer || isSharedBuffer || ArrayBuffer.isView(weights)) {
    const bytes = isSharedBuffer ? new Uint8Array(weights) : new Uint8Array(weights.buffer ?? weights, weights.byteOffset ?? 0, weights.byteLength);
    // A view of the buffer in one piece; over shared memory (which SubtleCrypto and WebNN do
    // not take), copies of PUT_CHUNK bytes at a time instead.
    const step = isShared(bytes) ? PUT_CHUNK : Infinity;
    return {
      what: `the ${bytes.length}-byte buffer given as weights`,
      label: "weights",
      resumable: true,
      async open(from, end) {
        let at = from;
        const reader = {
          read: async () => {
            if (at >= end) return { done: true, value: undefined };
            const upto = Math.min(end, at + step);
            const value = step === Infinity ? bytes.subarray(at, upto) : bytes.slice(at, upto);
            at = upto;
            return { done: false, value };
          },
          cancel: async () => {},
        };
        return { reader, start: from, whole: false, size: bytes.length };
      },
    };
  }
  const isResponse = typeof Response !== "undefined" && weights instanceof Response;
  if (isResponse || (typeof ReadableStream !== "undefined" && weights instanceof ReadableStream)) {
    if (isResponse ? weights.bodyUsed || weights.body?.locked : weights.locked) {
      throw new TypeError(`webnn-weights: load({weights}): the ${isResponse ? "Response's body" : "ReadableStream"} given has already been read or is locked (fix: pass a new ${isResponse ? "Response, or response.clone() before reading it" : "stream, or one branch of stream.tee()"})`);
    }
    let used = false;
    return {
      what: isResponse ? `the Response given as weights${weights.url ? ` (${weights.url})` : ""}` : "the ReadableStream given as weights",
      label: "weights",
      resumable: false,
      async open() {
        if (used) throw new Error("webnn-weights: a Response or ReadableStream given as weights is read once");
        used = true;
        if (!isResponse) return { reader: weights.getReader(), start: 0, whole: true };
        if (!weights.ok) throw new Error(`webnn-weights: the Response given as weights: HTTP ${weights.status} ${weights.statusText}`);
        if (weights.body === null) throw new Error("webnn-weights: the Response given as weights has no body");
        const match = weights.status === 206 ? /^bytes (\d+)-\d+\//.exec(weights.headers.get("content-range") ?? "") : null;
        return { reader: weights.body.getReader(), start: match ? Number(match[1]) : 0, whole: true };
      },
    };
  }
  throw new TypeError(`webnn-weights: load({weights}): ${Object.prototype.toString.call(weights)}; expected a Blob or File, an ArrayBuffer or typed array, a Response or a ReadableStream`);
}

// The constants read from the weights, by reference (tied constants share one): [{ref,
// constants, length, sha256}], sha256 set when every constant of the reference has the same.
function weightUnits(program) {
  const byRef = new Map();
  for (const constant of program.constants) {
    if (constant.ref === undefined) continue;
    if (!byRef.has(constant.ref)) byRef.set(constant.ref, { ref: constant.ref, constants: [], length: constant.byteLength });
    byRef.get(constant.ref).constants.push(constant);
  }
  for (const unit of byRef.values()) {
    const digest = unit.constants[0].sha256;
    unit.sha256 = unit.constants.every((c) => c.sha256 === digest) ? digest : undefined;
  }
  return [...byRef.values()];
}

// The descriptors of a graph built elsewhere from this program (the graph cache): the
// builder infers them with the weights declared as inputs, no byte read.
function registerGraph(context, program, graph) {
  if (!GRAPH_IO.has(graph)) {
    const outputs = new GraphAssembler(context, program, { placeholders: true }).outputDescriptors();
    GRAPH_IO.set(graph, { inputs: program.inputs, outputs });
  }
  return graph;
}

// Builds a program whose weights come, tensor by tensor, from the cache (verified again),
// then from the blob (a URL fetched with resumed Range requests, or `weights` of the page):
// each tensor reaches the builder once its SHA-256 matched; the page holds one buffer the
// size of the largest tensor, never the whole blob. Resolves to {graph, bytes}, bytes the
// count of verified bytes by source.
async function buildStreamed(context, program, { weightsUrl, manifestUrl, onProgress, cache, weights, retries = 3 }) {
  if (!Number.isSafeInteger(retries) || retries < 0) throw new TypeError(`webnn-weights: load({retries}): ${retries}; expected a whole number >= 0`);
  const source = weights !== undefined ? pageSource(weights) : null;
  const store = await openStore(cache, program, weights !== undefined);
  const assembler = new GraphAssembler(context, program);
  const units = weightUnits(program);
  const totalBytes = units.reduce((sum, u) => sum + u.length, 0);
  const totalTensors = units.reduce((sum, u) => sum + u.constants.length, 0);
  const bytes = { network: 0, resumed: 0, cache: 0, weights: 0 };
  let loadedBytes = 0;
  let loadedTensors = 0;
  let storing = store !== null;
  const report = (event) => {
    if (onProgress) onProgress({ loadedBytes, totalBytes, loadedTensors, totalTensors, ...event });
  };
  // Hands a unit's bytes to the builder (checked first unless they came from the cache,
  // which checked them) and keeps bytes from elsewhere in the cache.
  const complete = async (unit, view, from) => {
    if (from !== "cache") await verifyConstants(unit.constants, view);
    for (const constant of unit.constants) assembler.constant(constant, view);
    if (storing && from !== "cache" && unit.sha256 !== undefined) {
      // the store reads the view as it writes, so it is awaited before the scratch buffer
      // takes the next tensor
      const entry = cacheEntry(view);
      try {
        await store.put(cacheKey(unit.sha256), entry.response);
        if (!entry.read()) {
          entry.cutOff();
          storing = false;
          console.warn(`webnn-weights: the cache's put() resolved before it had read tensor "${unit.ref}" (a store must read the Response's body before its put resolves, as the Cache API does); this load caches nothing more`);
        }
      } catch (error) {
        storing = false;
        console.warn(`webnn-weights: the cache refused tensor "${unit.ref}" (${error.message}); this load caches nothing more`);
      }
    }
    // a range two references share (a foreign manifest) counts for each, as totalBytes does
    const counted = unit.length * (unit.refs ?? 1);
    loadedBytes += counted;
    bytes[from] += counted;
    for (const constant of unit.constants) {
      loadedTensors += 1;
      report({ tensor: constant.name, source: from });
    }
  };
  // One buffer, the size of the largest tensor, serves every tensor in turn: the builder
  // copies a constant's bytes when it is given them, and digests are awaited before the
  // next tensor's bytes are copied in.
  const scratch = new Uint8Array(units.reduce((max, u) => Math.max(max, u.length), 0));
  let needed = [];
  for (const unit of units) {
    if (unit.length === 0) {
      await complete(unit, new Uint8Array(0), source === null ? "network" : "weights");
      continue;
    }
    if (store !== null && unit.sha256 !== undefined) {
      let entry;
      try {
        entry = await store.match(cacheKey(unit.sha256));
      } catch (error) {
        entry = undefined;
        console.warn(`webnn-weights: the cache could not be read for tensor "${unit.ref}" (${error.message})`);
      }
      if (entry) {
        const target = scratch.subarray(0, unit.length);
        let problem;
        try {
          const count = await readEntry(entry, target);
          if (count !== unit.length) problem = `${count > unit.length ? "more than" : count} bytes cached, the tensor has ${unit.length}`;
          else if ((await sha256Hex(target)) !== unit.sha256) problem = `the cached bytes' SHA-256 is not ${unit.sha256}`;
        } catch (error) {
          problem = `the entry cannot be read: ${error.message}`;
        }
        if (problem === undefined) {
          await complete(unit, target, "cache");
          continue;
        }
        await Promise.resolve(store.delete(cacheKey(unit.sha256))).catch(() => {});
        report({ tensor: unit.constants[0].name, source: "cache", dropped: `${problem}; dropped, fetched again` });
      }
    }
    needed.push(unit);
  }
  if (needed.length > 0) {
    const manifestResponse = await fetchOk(manifestUrl(), "manifest");
    const manifest = await manifestResponse.json();
    checkManifest(manifest, manifestUrl());
    // Units stored at the same range are read once.
    const byRange = new Map();
    for (const unit of needed) {
      const entry = manifest.tensors[unit.ref];
      if (entry === undefined) throw new Error(`webnn-weights: constant ${unit.constants[0].name}: tensor "${unit.ref}" is not in the manifest ${manifestUrl()}`);
      const { byteOffset, byteLength } = entry;
      if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteLength !== unit.length) {
        throw new Error(`webnn-weights: ${manifestUrl()}: tensor "${unit.ref}": byteOffset ${byteOffset}, byteLength ${byteLength}; constant ${unit.constants[0].name} (${describe(unit.constants[0].dataType, unit.constants[0].shape)}) takes ${unit.length} bytes (fix: serve the manifest written with this module)`);
      }
      const key = `${byteOffset}:${byteLength}`;
      if (!byRange.has(key)) byRange.set(key, { ...unit, offset: byteOffset, constants: [], refs: 0 });
      const range = byRange.get(key);
      range.refs += 1;
      range.constants.push(...unit.constants);
      if (range.sha256 !== unit.sha256) range.sha256 = undefined;
    }
    const ranges = [...byRange.values()].sort((a, b) => a.offset - b.offset);
    for (let i = 1; i < ranges.length; i++) {
      if (ranges[i].offset < ranges[i - 1].offset + ranges[i - 1].length) {
        throw new Error(`webnn-weights: ${manifestUrl()}: tensors at ${ranges[i - 1].offset} and ${ranges[i].offset} overlap; streaming needs disjoint ranges (use WeightsFile.load and buildGraph)`);
      }
    }
    const from = source ?? urlSource(weightsUrl());
    // Runs of ranges read by one request: a gap wider than RUN_GAP (a cached tensor, most
    // often) is not downloaded but skipped by a new request; runEnd[i] is the index after
    // the run that range i is in.
    const runEnd = new Array(ranges.length);
    for (let i = ranges.length - 1; i >= 0; i--) {
      const joined = i + 1 < ranges.length && ranges[i + 1].offset - (ranges[i].offset + ranges[i].length) <= RUN_GAP;
      runEnd[i] = joined ? runEnd[i + 1] : i + 1;
    }
    const skipped = needed.length < units.filter((u) => u.length > 0).length;
    let next = 0;
    let position = 0;
    // Reads one response until the ranges before `until` are complete (null) or it stops
    // ({error}).
    const pump = async (reader, start, label, until) => {
      position = start;
      let current = null;
      let filled = 0;
      for (;;) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (error) {
          return { error };
        }
        if (chunk.done) return { error: null };
        const value = asBytes(chunk.value, from.what);
        let at = 0;
        while (at < value.length && next < until) {
          const range = ranges[next];
          if (current === null) {
            if (position < range.offset) {
              const skip = Math.min(range.offset - position, value.length - at);
              at += skip;
              position += skip;
              if (position < range.offset) break;
            }
            if (value.length - at >= range.length) {
              // the whole tensor in this chunk: handed over as a view, not copied
              const view = value.subarray(at, at + range.length);
              at += range.length;
              position += range.length;
              next += 1;
              await complete(range, view, label);
              continue;
            }
            current = scratch.subarray(0, range.length);
            filled = 0;
          }
          const take = Math.min(range.length - filled, value.length - at);
          current.set(value.subarray(at, at + take), filled);
          filled += take;
          at += take;
          position += take;
          if (filled === range.length) {
            next += 1;
            await complete(range, current, label);
            current = null;
          }
        }
        position += value.length - at;
        if (next === until) {
          await reader.cancel().catch(() => {});
          return null;
        }
      }
    };
    // A response that stops part way is resumed from the first byte not yet verified (the
    // start of the tensor it was in); `retries` resumed requests in a row that verify no new
    // tensor end the load. A whole response (a server that ignores Range answers 200) is
    // read on past its run, skipping the bytes already verified.
    let failures = 0;
    let resumed = false;
    while (next < ranges.length) {
      const before = next;
      const run = runEnd[next];
      const runBytes = ranges[run - 1].offset + ranges[run - 1].length;
      const ranged = resumed || skipped || next > 0 || run < ranges.length;
      let stop;
      try {
        const { reader, start, whole, size } = await from.open(ranges[next].offset, runBytes, ranged);
        const first = ranges[next];
        if (start > first.offset) {
          await reader.cancel().catch(() => {});
          throw new Error(`webnn-weights: ${from.what} starts at byte ${start}; tensor "${first.ref}" (constant ${first.constants[0].name}) needs bytes ${first.offset}..${first.offset + first.length}`);
        }
        const beyond = Number.isSafeInteger(size) ? ranges.find((r) => r.offset + r.length > size) : undefined;
        if (beyond !== undefined) {
          await reader.cancel().catch(() => {});
          throw new Error(`webnn-weights: ${from.what} has ${size} bytes; tensor "${beyond.ref}" (constant ${beyond.constants[0].name}) needs bytes ${beyond.offset}..${beyond.offset + beyond.length} (fix: serve the .weights file written with this module)`);
        }
        try {
          stop = await pump(reader, start, resumed ? "resumed" : from.label, whole ? ranges.length : run);
        } catch (error) {
          // a tensor that failed its check, or a chunk that is not bytes: the rest is not read
          await reader.cancel(error).catch(() => {});
          throw error;
        }
      } catch (error) {
        if (!(error instanceof Interrupted)) throw error;
        stop = { error };
      }
      if (next > before) failures = 0;
      if (stop === null) {
        resumed = false;
        continue;
      }
      const range = ranges[next];
      const why = stop.error === null ? `it ended at byte ${position}` : `${stop.error.message} at byte ${position}`;
      if (!from.resumable || failures >= retries) {
        const tried = from.resumable ? ` after ${failures} resumed request${failures === 1 ? "" : "s"} that verified no new tensor` : "";
        throw new Error(`webnn-weights: ${from.what}: ${why}${tried}; tensor "${range.ref}" (constant ${range.constants[0].name}) needs bytes ${range.offset}..${range.offset + range.length}`);
      }
      failures += 1;
      resumed = true;
      if (from.label === "network") {
        const delay = Math.min(RESUME_DELAY_MS * 2 ** (failures - 1), RESUME_DELAY_MAX_MS);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
  const graph = await assembler.finish();
  return { graph, bytes };
}
