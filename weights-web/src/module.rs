//! The ES modules: `webnn-weights web`'s (digests, streamed loading, default URLs beside the
//! module) and `emit-js`'s (webnn-graph's drop-in), both around the one builder in
//! `js/builder.js`.

use crate::lower::WebGraph;

/// The builder runtime every module inlines.
const BUILDER: &str = include_str!("js/builder.js");

/// Where a module's weights are, relative to the module's own URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightsFiles {
    /// The blob's file name (or URL relative to the module), e.g. `model.weights`.
    pub weights: String,
    /// The manifest's file name (or relative URL), e.g. `model.manifest.json`.
    pub manifest: String,
}

/// A JavaScript string literal (JSON's escapes are JavaScript's).
fn js_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string is JSON")
}

fn header(writer: &str, source: &str) -> String {
    format!(
        "// Written by {writer} from {}; do not edit (write it again instead).\n\
         // An ES module with no imports: WebNN graph builder, weights loader and compute.\n\n",
        source.replace(['\n', '\r'], " ")
    )
}

const EXPORTS: &str = r#"
export { WeightsFile };

/** The graph's name, or null. */
export const graphName = PROGRAM.name ?? null;

/** The graph's inputs, in order: [{name, dataType, shape}]. */
export const inputs = PROGRAM.inputs.map(({ name, dataType, shape }) => ({ name, dataType, shape: [...shape] }));

/** The graph's outputs: [{name}] (types and shapes: describeGraph(graph) once built). */
export const outputs = PROGRAM.outputs.map(({ name }) => ({ name }));

/**
 * Builds the MLGraph, constants read from a loaded WeightsFile (webnn-graph's contract).
 * @param {MLContext} context
 * @param {WeightsFile} weights
 * @returns {Promise<MLGraph>}
 */
export async function buildGraph(context, weights) {
  return buildFromWeights(context, PROGRAM, weights);
}

/**
 * Computes a graph this module built.
 * @param {MLContext} context
 * @param {MLGraph} graph
 * @param {Object<string, ArrayBufferView>} feeds one typed array per input
 * @returns {Promise<Object<string, ArrayBufferView>>} one typed array per output
 */
export async function compute(context, graph, feeds) {
  return computeGraph(context, graph, feeds);
}

/** The inputs and outputs of a graph this module built: {inputs, outputs}, each [{name, dataType, shape}]. */
export function describeGraph(graph) {
  return graphDescriptors(graph);
}

/**
 * The model's content key: SHA-256 (hex) of the constants' digests and the lowered graph,
 * written into the module, so known before any byte is fetched; null when a constant read
 * from the weights has no digest (emit-js modules). The key load() gives the graph cache.
 */
export const contentKey = CONTENT_KEY;

/**
 * Deletes the Cache API cache load() keeps tensors in.
 * @param {string} [cacheName] the cache's name (load's `cache` option when a string)
 * @returns {Promise<boolean>} whether there was such a cache
 */
export async function clearCache(cacheName = DEFAULT_CACHE) {
  if (typeof caches === "undefined") throw new Error("webnn-weights: clearCache: this page has no Cache API (it needs a secure context: https or localhost)");
  return caches.delete(cacheName);
}

/**
 * Streams the weights into a new graph: each tensor reaches the builder as soon as it has
 * arrived and its SHA-256 matched (modules written by `webnn-weights web`); no buffer holds
 * the whole blob. Tensors come from the cache first (verified again), the rest from the blob
 * (resumed with Range requests when a download stops part way) or from `weights`. Where the
 * context has a graph cache (loadGraph/saveGraph), it is tried first under contentKey.
 * @param {MLContext} context
 * @param {{weightsUrl?: string|URL, manifestUrl?: string|URL, onProgress?: function,
 *   cache?: boolean|string|{match: function, put: function, delete: function},
 *   weights?: Blob|ArrayBuffer|ArrayBufferView|Response|ReadableStream, retries?: number}} [options]
 *   onProgress({loadedBytes, totalBytes, loadedTensors, totalTensors, tensor, source}) after
 *   each constant (source "network", "resumed", "cache" or "weights"), and with `dropped`
 *   (why) for a cache entry that failed its check
 * @returns {Promise<{graph: MLGraph, inputs: Array, outputs: Array, compute: function,
 *   graphCache: boolean, bytes: {network: number, resumed: number, cache: number, weights: number}}>}
 */
export async function load(context, { weightsUrl, manifestUrl, onProgress, cache, weights, retries } = {}) {
  if (weights !== undefined && weightsUrl !== undefined) {
    throw new TypeError("webnn-weights: load(): pass weightsUrl or weights, not both");
  }
  const done = (graph, graphCache, bytes) => {
    const io = graphDescriptors(graph);
    return { graph, inputs: io.inputs, outputs: io.outputs, compute: (feeds) => computeGraph(context, graph, feeds), graphCache, bytes };
  };
  const graphCache = CONTENT_KEY !== null && context !== null && typeof context === "object";
  if (graphCache && typeof context.loadGraph === "function") {
    let cached = null;
    try {
      cached = await context.loadGraph(CONTENT_KEY);
    } catch {
      cached = null; // not in the graph cache
    }
    if (cached) return done(registerGraph(context, PROGRAM, cached), true, { network: 0, resumed: 0, cache: 0, weights: 0 });
  }
  const { graph, bytes } = await buildStreamed(context, PROGRAM, {
    weightsUrl: () => String(weightsUrl ?? defaultUrl("weights")),
    manifestUrl: () => String(manifestUrl ?? defaultUrl("manifest")),
    onProgress,
    cache,
    weights,
    retries,
  });
  if (graphCache && typeof context.saveGraph === "function") {
    try {
      await context.saveGraph(CONTENT_KEY, graph);
    } catch (error) {
      console.warn(`webnn-weights: the context's graph cache did not save the graph (${error.message})`);
    }
  }
  return done(graph, false, bytes);
}
"#;

fn module(command: &str, source: &str, graph: &WebGraph, files: Option<&WeightsFiles>) -> String {
    let mut out = header(&format!("`webnn-weights {command}`"), source);
    out.push_str(BUILDER);
    out.push_str("\n// The graph, lowered by the WebNN table of webnn-weights.\nconst PROGRAM = ");
    out.push_str(&graph.to_json());
    out.push_str(";\n");
    out.push_str(&format!(
        "\n// SHA-256 of the constants' digests and the program above (null: a constant has no digest).\nconst CONTENT_KEY = {};\n",
        graph
            .content_key()
            .map_or_else(|| "null".to_string(), |key| js_string(&key))
    ));
    match files {
        Some(files) => out.push_str(&format!(
            "\nconst FILES = {{ weights: {}, manifest: {} }};\n\
             function defaultUrl(which) {{\n  return new URL(FILES[which], import.meta.url).href;\n}}\n",
            js_string(&files.weights),
            js_string(&files.manifest)
        )),
        None => out.push_str(
            "\nfunction defaultUrl(which) {\n  throw new Error(`webnn-weights: load() needs ${which}Url: this module was written by emit-js, which does not know where the weights are`);\n}\n",
        ),
    }
    out.push_str(EXPORTS);
    out
}

/// The ES module of `webnn-weights web`: the graph, the SHA-256 of every constant it
/// reads from the weights (set them first with [`WebGraph::set_digests`]), and the names
/// of the blob and manifest written beside it.
///
/// It exports webnn-graph's `WeightsFile` and `buildGraph(context, weights)`, and
/// `graphName`, `inputs`, `outputs`, `contentKey` ([`WebGraph::content_key`]),
/// `load(context, {weightsUrl, manifestUrl, onProgress, cache, weights, retries})`
/// (streamed and verified tensor by tensor; URLs default to the files beside the module;
/// tensors kept in the Cache API `webnn-weights` keyed by their SHA-256; downloads resumed
/// with `Range` requests; `weights` a Blob, buffer, Response or stream of the page; the
/// context's graph cache tried first when it has one), `clearCache(cacheName)`,
/// `compute(context, graph, feeds)` and `describeGraph(graph)` (docs/web.md).
/// `source` names the graph in the module's first line.
///
/// ```
/// use webnn_weights_web::{web_module, WebGraph, WeightsFiles};
/// let graph = webnn_weights_runtime::parse_webnn(r#"webnn_graph "g" v1 {
///   inputs { x: f32[2]; } consts { w: f32[2] @weights("w"); }
///   nodes { y = add(x, w); } outputs { y; }
/// }"#).unwrap();
/// let mut program = WebGraph::new(&graph).unwrap();
/// program.set_digests(|_| Some([0; 32]));
/// let files = WeightsFiles { weights: "g.weights".into(), manifest: "g.manifest.json".into() };
/// let js = web_module(&program, &files, "g.webnn");
/// assert!(js.contains("export async function buildGraph(context, weights)"));
/// assert!(js.contains(r#""sha256":"0000"#));
/// let key = program.content_key().unwrap();
/// assert!(js.contains(&format!("const CONTENT_KEY = \"{key}\";")));
/// ```
pub fn web_module(graph: &WebGraph, files: &WeightsFiles, source: &str) -> String {
    module("web", source, graph, Some(files))
}

/// The ES module of `webnn-weights emit-js`: webnn-graph's `emit-js` contract
/// (`WeightsFile.load(weightsUrl, manifestUrl)`, `getSlice(ref)`, `buffer`,
/// `buildGraph(context, weights)`) with the graph lowered by the table, for blobs with
/// WGWT headers and headerless ones alike; it also exports what [`web_module`] does
/// (`load` needs both URLs here). No digests: the module does not know the blob, so
/// nothing keys its tensors by content: `load` caches nothing by default (asking for a
/// cache is an error), `contentKey` is `null` when the graph reads weights, and the
/// context's graph cache is not used.
///
/// ```
/// let graph = webnn_weights_runtime::parse_webnn(r#"webnn_graph "g" v1 {
///   inputs { x: f32[2]; } nodes { y = relu(x); } outputs { y; }
/// }"#).unwrap();
/// let program = webnn_weights_web::WebGraph::new(&graph).unwrap();
/// let js = webnn_weights_web::emit_js(&program, "g.webnn");
/// assert!(js.contains("export { WeightsFile };"));
/// assert!(js.contains("const CONTENT_KEY = \""), "no weights: the graph alone is the content");
/// ```
pub fn emit_js(graph: &WebGraph, source: &str) -> String {
    module("emit-js", source, graph, None)
}

/// The builder alone, as an ES module for applications that lower a graph themselves
/// (a Rust app compiled to wasm hands [`WebGraph::to_json`] and views of its memory):
/// `buildProgram(context, program, bytesOf)` builds a program (the parsed JSON) whose
/// weights' bytes `bytesOf(constant)` returns as an `ArrayBufferView` (not copied), and
/// `compute`, `describeGraph` and `WeightsFile` are those of the other modules.
///
/// ```
/// let js = webnn_weights_web::builder_module();
/// assert!(js.contains("export { buildProgram, computeGraph as compute"));
/// ```
pub fn builder_module() -> String {
    let mut out = header(
        "webnn_weights_web::builder_module()",
        "no graph (the builder alone)",
    );
    out.push_str(BUILDER);
    out.push_str(
        "\nexport { buildProgram, computeGraph as compute, graphDescriptors as describeGraph, WeightsFile };\n",
    );
    out
}
