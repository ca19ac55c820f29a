// The page of web/tests/cache.test.mjs: imports a module `webnn-weights web` (or emit-js)
// wrote and runs load() as the query says, then computes. Query:
//   model=PATH           the module, relative to this page (its weights and manifest beside it)
//   cache=default|off|map|lazy|NAME   (map: an object with match/put/delete over a Map of
//                        this page; lazy: the same, but its put keeps the Response unread;
//                        load() runs twice with either)
//   weights=file|blob|arraybuffer|typed|shared|response|stream   weights of the page (fetched
//                        by the page itself from the blob beside the module) instead of
//                        weightsUrl (shared: a view of a SharedArrayBuffer, which needs a
//                        cross-origin isolated page)
//   weights=used|late|corrupt   weights load() must refuse: a Response already read, a 206
//                        Response from byte 100, a stream with one byte flipped (load's error
//                        and whether the stream's source was cancelled are the result)
//   corrupt=HEX,...      before loading, flip a byte of the default cache's entry of these digests
//   truncate=HEX,...     ... or cut these entries to half their length
//   graphcache=1         the context gets loadGraph/saveGraph (a Map of this page) and load()
//                        runs twice
//   clear=1              call the module's clearCache() first (its result: `cleared`)
//   urls=1               pass weightsUrl and manifestUrl explicitly (emit-js modules)
//   retries=N            load's retries
// Result: {runs: [{outputs, outputDescs, graphCache, bytes, sources, dropped}], contentKey,
//          cacheKeys, graphCalls}.
const query = new URLSearchParams(location.search);
const list = (name) => (query.get(name) ? query.get(name).split(",") : []);

// The input: x[i] = sin(0.7 i) (as the test computes its reference).
function input(desc) {
  const count = desc.shape.reduce((a, b) => a * b, 1);
  return Float32Array.from({ length: count }, (_, i) => Math.sin(0.7 * i));
}

async function damage(digests, how) {
  if (digests.length === 0) return;
  const cache = await caches.open("webnn-weights");
  for (const digest of digests) {
    const key = `https://webnn-weights.invalid/sha256/${digest}`;
    const entry = await cache.match(key);
    if (!entry) throw new Error(`no cache entry ${key} to damage`);
    const bytes = new Uint8Array(await entry.arrayBuffer());
    const bad = how === "flip" ? bytes : bytes.slice(0, bytes.length >> 1);
    if (how === "flip") bad[bad.length >> 1] ^= 0x40;
    await cache.put(key, new Response(bad));
  }
}

// Whether the stream of weights=corrupt was cancelled by load().
let sourceCancelled = false;

async function pageWeights(kind, url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  switch (kind) {
    case "file": return new File([await response.blob()], "model.weights");
    case "blob": return response.blob();
    case "arraybuffer": return response.arrayBuffer();
    case "typed": {
      // a view that does not start at its buffer's byte 0
      const bytes = new Uint8Array(await response.arrayBuffer());
      const padded = new Uint8Array(bytes.length + 13);
      padded.set(bytes, 7);
      return padded.subarray(7, 7 + bytes.length);
    }
    case "shared": {
      if (!crossOriginIsolated) throw new Error("weights=shared needs a cross-origin isolated page (COOP and COEP headers)");
      const bytes = new Uint8Array(await response.arrayBuffer());
      const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
      shared.set(bytes);
      return shared;
    }
    case "response": return response;
    case "stream": return response.body;
    case "used": {
      await response.clone().arrayBuffer();
      await response.arrayBuffer();
      return response;
    }
    case "late": {
      const bytes = new Uint8Array(await response.arrayBuffer());
      return new Response(bytes.subarray(100), { status: 206, headers: { "content-range": `bytes 100-${bytes.length - 1}/${bytes.length}` } });
    }
    case "corrupt": {
      const bytes = new Uint8Array(await response.arrayBuffer());
      bytes[bytes.length >> 1] ^= 0x40;
      let at = 0;
      return new ReadableStream({
        pull(controller) {
          if (at >= bytes.length) return controller.close();
          controller.enqueue(bytes.slice(at, at + 65536));
          at += 65536;
        },
        cancel() {
          sourceCancelled = true;
        },
      });
    }
    default: throw new Error(`weights=${kind}?`);
  }
}

try {
  const modelUrl = new URL(query.get("model"), location.href);
  const model = await import(modelUrl.href);
  const cleared = query.get("clear") === "1" ? await model.clearCache() : null;
  await damage(list("corrupt"), "flip");
  await damage(list("truncate"), "cut");
  const context = await navigator.ml.createContext({ deviceType: "cpu" });
  const graphCalls = [];
  if (query.get("graphcache") === "1") {
    // the graph cache of WebNN's explainer, which Chromium 153 lacks: stubbed on the real context
    const graphs = new Map();
    context.loadGraph = async (key) => {
      graphCalls.push(["loadGraph", key, graphs.has(key)]);
      return graphs.get(key) ?? null;
    };
    context.saveGraph = async (key, graph) => {
      graphCalls.push(["saveGraph", key]);
      graphs.set(key, graph);
    };
  }
  const cacheOption = query.get("cache") ?? "default";
  const stored = new Map();
  const mapStore = {
    match: async (key) => (stored.has(key) ? new Response(stored.get(key)) : undefined),
    put: async (key, response) => {
      stored.set(key, new Uint8Array(await response.arrayBuffer()));
    },
    delete: async (key) => stored.delete(key),
  };
  const lazyStore = {
    match: async (key) => stored.get(key),
    put: async (key, response) => {
      stored.set(key, response);
    },
    delete: async (key) => stored.delete(key),
  };
  const runs = [];
  const twice = query.get("graphcache") === "1" || cacheOption === "map" || cacheOption === "lazy";
  const refused = ["used", "late", "corrupt"].includes(query.get("weights"));
  for (let run = 0; run < (twice ? 2 : 1); run++) {
    const sources = {};
    const dropped = [];
    const options = {
      onProgress: (event) => {
        if (event.dropped !== undefined) dropped.push({ tensor: event.tensor, dropped: event.dropped });
        else sources[event.tensor] = event.source;
      },
    };
    if (cacheOption === "off") options.cache = false;
    else if (cacheOption === "map") options.cache = mapStore;
    else if (cacheOption === "lazy") options.cache = lazyStore;
    else if (cacheOption !== "default") options.cache = cacheOption;
    if (query.get("retries") !== null) options.retries = Number(query.get("retries"));
    const weightsUrl = new URL(modelUrl.pathname.replace(/\.js$/, ".weights"), location.href).href;
    if (query.get("urls") === "1") {
      options.weightsUrl = weightsUrl;
      options.manifestUrl = weightsUrl.replace(/\.weights$/, ".manifest.json");
    }
    if (query.get("weights")) options.weights = await pageWeights(query.get("weights"), weightsUrl);
    if (refused) {
      const loadError = await model.load(context, options).then(() => null, (e) => `${e?.name ?? "Error"}: ${e?.message ?? e}`);
      window.__result = { loadError, sourceCancelled };
      break;
    }
    const loaded = await model.load(context, options);
    const feeds = Object.fromEntries(loaded.inputs.map((d) => [d.name, input(d)]));
    const results = await loaded.compute(feeds);
    const outputs = Object.fromEntries(Object.entries(results).map(([name, data]) => [name, Array.from(data)]));
    runs.push({ outputs, outputDescs: model.describeGraph(loaded.graph).outputs, graphCache: loaded.graphCache, bytes: loaded.bytes, sources, dropped });
  }
  if (!refused) {
    const cacheKeys = (await caches.has("webnn-weights")) ? (await (await caches.open("webnn-weights")).keys()).map((r) => r.url) : [];
    window.__result = { runs, contentKey: model.contentKey, cacheKeys, graphCalls, mapKeys: [...stored.keys()], cleared };
  }
} catch (e) {
  window.__error = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
}
window.__done = true;
