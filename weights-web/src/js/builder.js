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

// Checks a constant's bytes against the digest the module was written with.
async function verifyConstant(constant, bytes) {
  if (constant.sha256 === undefined) return;
  const found = await sha256Hex(bytes);
  if (found !== constant.sha256) {
    throw new Error(`webnn-weights: constant ${constant.name} (weights "${constant.ref}"): SHA-256 ${found}, expected ${constant.sha256}: the weights file is not the one this module was written for (fix: serve the .weights file written with this module)`);
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
  constructor(context, program) {
    if (typeof MLGraphBuilder === "undefined") {
      throw new Error("webnn-weights: this browser has no WebNN (MLGraphBuilder is undefined)");
    }
    this.context = context;
    this.program = program;
    this.builder = new MLGraphBuilder(context);
    this.env = new Map();
    this.missing = new Map();
    for (const input of program.inputs) {
      this.env.set(input.name, this.builder.input(input.name, { dataType: input.dataType, shape: input.shape }));
    }
    for (const constant of program.constants) {
      if (constant.bytes !== undefined) this.constant(constant, decodeBase64(constant.bytes));
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

  async finish() {
    if (this.missing.size > 0) {
      throw new Error(`webnn-weights: no bytes for constant(s) ${[...this.missing.keys()].join(", ")}`);
    }
    for (const call of this.program.nodes) this.node(call);
    const named = {};
    for (const output of this.program.outputs) named[output.name] = this.env.get(output.operand);
    const outputs = this.program.outputs.map((output) => ({
      name: output.name,
      dataType: named[output.name].dataType,
      shape: Array.from(named[output.name].shape),
    }));
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
  await Promise.all(views.map(([constant, bytes]) => verifyConstant(constant, bytes)));
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

// Streams a blob: each stored range is handed to the builder as soon as its last byte
// arrives (after its digest is checked); the page holds one tensor's bytes at a time,
// never the whole blob.
async function buildStreamed(context, program, { weightsUrl, manifestUrl, onProgress }) {
  const manifestResponse = await fetchOk(manifestUrl, "manifest");
  const manifest = await manifestResponse.json();
  checkManifest(manifest, manifestUrl);
  const byRange = new Map();
  for (const constant of program.constants) {
    if (constant.ref === undefined) continue;
    const entry = manifest.tensors[constant.ref];
    if (entry === undefined) throw new Error(`webnn-weights: constant ${constant.name}: tensor "${constant.ref}" is not in the manifest ${manifestUrl}`);
    const key = `${entry.byteOffset}:${entry.byteLength}`;
    if (!byRange.has(key)) byRange.set(key, { offset: entry.byteOffset, length: entry.byteLength, constants: [] });
    byRange.get(key).constants.push(constant);
  }
  const ranges = [...byRange.values()].sort((a, b) => a.offset - b.offset || a.length - b.length);
  for (let i = 1; i < ranges.length; i++) {
    if (ranges[i].offset < ranges[i - 1].offset + ranges[i - 1].length) {
      throw new Error(`webnn-weights: ${manifestUrl}: tensors at ${ranges[i - 1].offset} and ${ranges[i].offset} overlap; streaming needs disjoint ranges (use WeightsFile.load and buildGraph)`);
    }
  }
  const assembler = new GraphAssembler(context, program);
  const totalBytes = ranges.reduce((sum, r) => sum + r.length, 0);
  const totalTensors = ranges.reduce((sum, r) => sum + r.constants.length, 0);
  let loadedBytes = 0;
  let loadedTensors = 0;
  const complete = async (range, bytes) => {
    for (const constant of range.constants) {
      await verifyConstant(constant, bytes);
      assembler.constant(constant, bytes);
      loadedTensors += 1;
      if (onProgress) onProgress({ loadedBytes, totalBytes, loadedTensors, totalTensors, tensor: constant.name });
    }
  };
  // One buffer, the size of the largest tensor, serves every tensor in turn: the builder
  // copies a constant's bytes when it is given them, and digests are awaited before the
  // next tensor's bytes are copied in.
  const scratch = new Uint8Array(ranges.reduce((max, r) => Math.max(max, r.length), 0));
  let next = 0;
  while (next < ranges.length && ranges[next].length === 0) await complete(ranges[next++], new Uint8Array(0));
  if (next < ranges.length) {
    const response = await fetchOk(weightsUrl, "weights");
    const reader = response.body.getReader();
    let position = 0;
    let current = null;
    let filled = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let at = 0;
      while (at < value.length && next < ranges.length) {
        const range = ranges[next];
        if (current === null) {
          const skip = Math.min(range.offset - position, value.length - at);
          at += skip;
          position += skip;
          if (position < range.offset) break;
          current = scratch.subarray(0, range.length);
          filled = 0;
        }
        const take = Math.min(range.length - filled, value.length - at);
        current.set(value.subarray(at, at + take), filled);
        filled += take;
        at += take;
        position += take;
        loadedBytes += take;
        if (filled === range.length) {
          await complete(range, current);
          current = null;
          next += 1;
          while (next < ranges.length && ranges[next].length === 0) await complete(ranges[next++], new Uint8Array(0));
        }
      }
      position += value.length - at;
      if (next === ranges.length) {
        await reader.cancel();
        break;
      }
    }
    if (next < ranges.length) {
      const range = ranges[next];
      throw new Error(`webnn-weights: ${weightsUrl} ends at byte ${position}; tensor "${range.constants[0].ref}" (constant ${range.constants[0].name}) needs bytes ${range.offset}..${range.offset + range.length}`);
    }
  }
  return assembler.finish();
}
