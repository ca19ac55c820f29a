// load() of the module `webnn-weights web` writes, in headless Chromium, against a local server
// that supports Range, counts the bytes it serves and can cut a response part way: the verified
// cache (first and second visit, corrupt and truncated entries, a new model version at the same
// URLs), resumed downloads (with and without Range support), weights of the page (File, Blob,
// ArrayBuffer, typed array, Response, ReadableStream), the graph cache of WebNN's explainer
// (stubbed on a real MLContext) and an emit-js module (no digests: no cache). Every scenario's
// outputs are checked against a reference computed here; the bytes served per scenario are
// printed as a table (docs/web.md).
//
//   node --test web/tests/cache.test.mjs   (after bash web/setup.sh and cargo build -p webnn-weights-cli)
//
// Environment: WEBNN_WEIGHTS_BIN, the CLI (default: target/debug/webnn-weights of this checkout).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { serve, withBrowser, runPage } from "../harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..", "..");
const BIN = path.resolve(ROOT, process.env.WEBNN_WEIGHTS_BIN ?? "target/debug/webnn-weights");

// A three-layer MLP: six tensors from 128 bytes to 1.2 MiB (more than one 1 MiB chunk of a
// cache put).
const LAYERS = [
  { w: "layer1.weight", b: "layer1.bias", in: 16, out: 64 },
  { w: "layer2.weight", b: "layer2.bias", in: 64, out: 5000 },
  { w: "layer3.weight", b: "layer3.bias", in: 5000, out: 32 },
];
const GRAPH = `webnn_graph "cached" v1 {
  inputs { x: f32[1, 16]; }
  consts {
${LAYERS.map((l, i) => `    w${i + 1}: f32[${l.in}, ${l.out}] @weights("${l.w}");\n    b${i + 1}: f32[${l.out}] @weights("${l.b}");`).join("\n")}
  }
  nodes {
    h1 = matmul(x, w1);
    a1 = add(h1, b1);
    r1 = relu(a1);
    h2 = matmul(r1, w2);
    a2 = add(h2, b2);
    r2 = relu(a2);
    h3 = matmul(r2, w3);
    y = add(h3, b3);
  }
  outputs { y; }
}
`;

// The tensors of a version: v2 changes layer1.bias and layer3.weight only.
function tensors(version) {
  const out = {};
  for (const [i, l] of LAYERS.entries()) {
    const seed = (name) => (version === 2 && (name === "layer1.bias" || name === "layer3.weight") ? 0.37 : 0) + (i + 1) * 0.113;
    const scale = 1 / Math.sqrt(l.in);
    out[l.w] = { shape: [l.in, l.out], data: Float32Array.from({ length: l.in * l.out }, (_, k) => Math.sin(seed(l.w) * (k + 1) + 0.5) * scale) };
    out[l.b] = { shape: [l.out], data: Float32Array.from({ length: l.out }, (_, k) => Math.cos(seed(l.b) * (k + 3)) * 0.1) };
  }
  return out;
}

function writeSafetensors(file, named) {
  const header = {};
  let offset = 0;
  for (const [name, t] of Object.entries(named)) {
    header[name] = { dtype: "F32", shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(file, Buffer.concat([size, json, ...Object.values(named).map((t) => Buffer.from(t.data.buffer))]));
}

// y for x[i] = sin(0.7 i), in float64 from the float32 weights.
function reference(named) {
  let a = Array.from(Float32Array.from({ length: 16 }, (_, i) => Math.sin(0.7 * i)));
  for (const [i, l] of LAYERS.entries()) {
    const w = named[l.w].data;
    const b = named[l.b].data;
    const next = Array.from({ length: l.out }, (_, o) => {
      let s = b[o];
      for (let k = 0; k < l.in; k++) s += a[k] * w[k * l.out + o];
      return s;
    });
    a = i + 1 < LAYERS.length ? next.map((v) => Math.max(0, v)) : next;
  }
  return a;
}

function maxDiff(got, want) {
  assert.equal(got.length, want.length, "output length");
  return got.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i]) / (1e-3 + Math.abs(want[i]))), 0);
}

function assertComputes(run, want, what) {
  const d = maxDiff(run.outputs.y, want);
  assert.ok(d < 1e-3, `${what}: y differs from the reference (max relative difference ${d})`);
}

function cli(...args) {
  const r = spawnSync(BIN, args, { encoding: "utf8" });
  if (r.error) throw new Error(`cannot run ${BIN}: ${r.error.message} (build it: cargo build -p webnn-weights-cli)`);
  if (r.status !== 0) throw new Error(`webnn-weights ${args.join(" ")} failed (${r.status}):\n${r.stderr}`);
}

const sha256 = (bytes) => crypto.createHash("sha256").update(bytes).digest("hex");

// What the module says of a version: its content key (recomputed here from the module's
// program) and each tensor's {offset, length, sha256} from the blob and manifest.
function describeVersion(dir) {
  const text = fs.readFileSync(path.join(dir, "model.js"), "utf8");
  const program = /\nconst PROGRAM = (.*);\n/.exec(text)[1];
  const digests = JSON.parse(program).constants.filter((c) => c.ref !== undefined).map((c) => `${c.sha256}\n`).join("");
  const contentKey = sha256(`webnn-weights content key v1\n${digests}${program}`);
  const blob = fs.readFileSync(path.join(dir, "model.weights"));
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "model.manifest.json"), "utf8"));
  const byRef = {};
  for (const [ref, e] of Object.entries(manifest.tensors)) {
    byRef[ref] = { offset: e.byteOffset, length: e.byteLength, sha256: sha256(blob.subarray(e.byteOffset, e.byteOffset + e.byteLength)) };
  }
  return { contentKey, blobSize: blob.length, byRef };
}

// The bytes a load downloads for `needed` tensors ({offset, length}): the module reads runs
// of them with one Range request each, joining tensors at most RUN_GAP bytes apart (the bytes
// between are downloaded and skipped).
const RUN_GAP = 65536;
function runBytes(needed) {
  const sorted = [...needed].sort((a, b) => a.offset - b.offset);
  let bytes = 0;
  let start = null;
  let end = 0;
  for (const e of sorted) {
    if (start !== null && e.offset - end <= RUN_GAP) {
      end = e.offset + e.length;
      continue;
    }
    if (start !== null) bytes += end - start;
    start = e.offset;
    end = e.offset + e.length;
  }
  return start === null ? 0 : bytes + end - start;
}

const figures = [];
const line = (s) => process.stdout.write(`${s}\n`);

test("load(): verified cache, resumed downloads, weights of the page, graph cache", { timeout: 10 * 60_000 }, async (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "webnn-cache-"));
  try {
    fs.writeFileSync(path.join(work, "model.webnn"), GRAPH);
    const named = { 1: tensors(1), 2: tensors(2) };
    const ref = { 1: reference(named[1]), 2: reference(named[2]) };
    const versions = {};
    for (const v of [1, 2]) {
      writeSafetensors(path.join(work, `v${v}.safetensors`), named[v]);
      cli("web", path.join(work, "model.webnn"), "--weights", path.join(work, `v${v}.safetensors`), "-o", path.join(work, `v${v}`), "-q");
      versions[v] = describeVersion(path.join(work, `v${v}`));
    }
    const site = path.join(work, "site");
    fs.mkdirSync(path.join(site, "m"), { recursive: true });
    fs.mkdirSync(path.join(site, "e"), { recursive: true });
    for (const f of ["cache.html", "cache.js"]) fs.copyFileSync(path.join(HERE, "pages", f), path.join(site, f));
    const publish = (v) => {
      for (const f of ["model.js", "model.weights", "model.manifest.json"]) fs.copyFileSync(path.join(work, `v${v}`, f), path.join(site, "m", f));
    };
    publish(1);
    cli("emit-js", path.join(work, "model.webnn"), "-o", path.join(site, "e", "model.js"));
    for (const f of ["model.weights", "model.manifest.json"]) fs.copyFileSync(path.join(work, "v1", f), path.join(site, "e", f));

    const v1 = versions[1];
    line(`layout of the blob: ${Object.entries(v1.byRef).sort((a, b) => a[1].offset - b[1].offset).map(([r, e]) => `${r} ${e.offset}..${e.offset + e.length}`).join(", ")}`);
    const sizes = Object.values(v1.byRef).map((e) => e.length);
    const total = sizes.reduce((a, b) => a + b, 0);
    const largest = Math.max(...sizes);
    const WEIGHTS = "/m/model.weights";
    const MANIFEST = "/m/model.manifest.json";
    const server = await serve(site);
    try {
      await withBrowser(async (browser) => {
        // Runs the page, counting what the server sent for it.
        const visit = async (query, scenario) => {
          server.resetCounts();
          const result = await runPage(browser, `${server.url}cache.html?${query}`, { timeoutMs: 120_000 });
          const served = { weights: server.bytesServed(WEIGHTS), requests: server.requestsOf(WEIGHTS), manifest: server.requestsOf(MANIFEST).length };
          if (scenario) {
            figures.push({ scenario, bytes: served.weights, requests: served.requests.length, manifest: served.manifest });
            line(`bytes served: ${scenario}: ${served.weights} bytes of the ${v1.blobSize}-byte blob in ${served.requests.length} request(s) [${served.requests.map((r) => `${r.status}${r.range ? ` ${r.range}` : ""}`).join(", ")}], manifest ${served.manifest}x`);
          }
          return { result, served };
        };
        const sourcesOf = (run) => Object.values(run.sources);

        await t.test("first visit: the blob is fetched once, every tensor cached under its SHA-256", async () => {
          const { result, served } = await visit("model=m/model.js", "first visit (cache empty)");
          const [run] = result.runs;
          assertComputes(run, ref[1], "first visit");
          assert.equal(served.requests.length, 1);
          assert.equal(served.requests[0].range, null, "a first download asks for the whole blob");
          assert.equal(served.weights, v1.blobSize);
          assert.deepEqual(run.bytes, { network: total, resumed: 0, cache: 0, weights: 0 });
          assert.ok(sourcesOf(run).length === 6 && sourcesOf(run).every((s) => s === "network"), JSON.stringify(run.sources));
          const keys = Object.values(v1.byRef).map((e) => `https://webnn-weights.invalid/sha256/${e.sha256}`).sort();
          assert.deepEqual([...result.cacheKeys].sort(), keys);
          assert.equal(result.contentKey, v1.contentKey, "contentKey is SHA-256 of the digests and the program");
        });

        await t.test("second visit (new page): no request for the weights or the manifest", async () => {
          const { result, served } = await visit("model=m/model.js", "second visit (all cached)");
          const [run] = result.runs;
          assertComputes(run, ref[1], "second visit");
          assert.equal(served.weights, 0);
          assert.equal(served.requests.length, 0);
          assert.equal(served.manifest, 0, "everything cached: the manifest is not needed");
          assert.deepEqual(run.bytes, { network: 0, resumed: 0, cache: total, weights: 0 });
          assert.ok(sourcesOf(run).every((s) => s === "cache"), JSON.stringify(run.sources));
        });

        await t.test("a corrupt and a truncated cache entry are dropped, fetched again and reported", async () => {
          const flipped = v1.byRef["layer2.weight"];
          const cut = v1.byRef["layer3.bias"];
          const { result, served } = await visit(`model=m/model.js&corrupt=${flipped.sha256}&truncate=${cut.sha256}`, "a corrupt and a truncated entry");
          const [run] = result.runs;
          assertComputes(run, ref[1], "corrupt cache");
          assert.deepEqual(run.dropped.map((d) => d.tensor).sort(), ["b3", "w2"]);
          for (const d of run.dropped) assert.match(d.dropped, d.tensor === "w2" ? /SHA-256/ : /bytes cached/);
          assert.equal(run.sources.w2, "network");
          assert.equal(run.sources.b3, "network");
          assert.equal(served.weights, runBytes([flipped, cut]), "only the two dropped tensors (and what lies less than 64 KiB between them) are downloaded");
          assert.ok(served.weights < v1.blobSize);
          const again = await visit("model=m/model.js");
          assertComputes(again.result.runs[0], ref[1], "after the repair");
          assert.equal(again.served.weights, 0, "the entries fetched again were cached again");
        });

        await t.test("a cache object with match/put/delete: the second load reads it, keys are the digests' URLs", async () => {
          const { result, served } = await visit("model=m/model.js&cache=map", "a cache object of the page: two loads in one page");
          const [first, second] = result.runs;
          assertComputes(first, ref[1], "first load");
          assertComputes(second, ref[1], "from the cache object");
          assert.equal(served.weights, v1.blobSize, "the blob once, for the first load");
          assert.deepEqual(first.bytes, { network: total, resumed: 0, cache: 0, weights: 0 });
          assert.deepEqual(second.bytes, { network: 0, resumed: 0, cache: total, weights: 0 });
          const keys = Object.values(v1.byRef).map((e) => `https://webnn-weights.invalid/sha256/${e.sha256}`).sort();
          assert.deepEqual([...result.mapKeys].sort(), keys);
        });

        await t.test("a connection cut at half the blob resumes with Range from the first byte not verified", async () => {
          const at = Math.floor(v1.blobSize / 2);
          server.cutAfter(WEIGHTS, at);
          const { result, served } = await visit("model=m/model.js&cache=off", "cut at half the blob, resumed (cache off)");
          const [run] = result.runs;
          assertComputes(run, ref[1], "resumed");
          const ordered = Object.values(v1.byRef).sort((a, b) => a.offset - b.offset);
          const pending = ordered.find((e) => e.offset + e.length > at);
          const end = ordered[ordered.length - 1];
          assert.equal(served.requests.length, 2, JSON.stringify(served.requests));
          assert.deepEqual(served.requests[1], { range: `bytes=${pending.offset}-${end.offset + end.length - 1}`, status: 206 });
          assert.ok(served.weights < v1.blobSize + largest, `${served.weights} bytes served, not below the blob plus the largest tensor (${v1.blobSize + largest})`);
          assert.ok(sourcesOf(run).includes("resumed") && sourcesOf(run).includes("network"), JSON.stringify(run.sources));
          assert.equal(run.bytes.network + run.bytes.resumed, total);
        });

        await t.test("a server that ignores Range: the resumed request restarts from byte 0, skipping what is verified", async () => {
          server.ignoreRange(true);
          try {
            server.cutAfter(WEIGHTS, Math.floor(v1.blobSize / 2));
            const { result, served } = await visit("model=m/model.js&cache=off", "cut at half, server ignores Range (cache off)");
            assertComputes(result.runs[0], ref[1], "restarted");
            assert.equal(served.requests.length, 2);
            assert.equal(served.requests[1].status, 200);
            assert.ok(served.weights <= Math.floor(v1.blobSize / 2) + v1.blobSize);
            assert.ok(sourcesOf(result.runs[0]).includes("resumed"));
          } finally {
            server.ignoreRange(false);
          }
        });

        await t.test("a download cut more often than retries allows fails, naming the tensor", async () => {
          server.cutAfter(WEIGHTS, 100);
          await assert.rejects(visit("model=m/model.js&cache=off&retries=0"), /needs bytes \d+\.\.\d+/);
        });

        for (const kind of ["file", "blob", "arraybuffer", "typed", "response", "stream"]) {
          await t.test(`weights of the page: ${kind}`, async () => {
            const { result, served } = await visit(`model=m/model.js&weights=${kind}`, kind === "file" ? "weights: a File of the page (the page's own fetch)" : undefined);
            const [run] = result.runs;
            assertComputes(run, ref[1], kind);
            assert.deepEqual(run.bytes, { network: 0, resumed: 0, cache: 0, weights: total });
            assert.ok(sourcesOf(run).every((s) => s === "weights"));
            assert.equal(served.requests.length, 1, "only the page's own fetch of the blob");
          });
        }

        await t.test("weights of the page: a view of a SharedArrayBuffer (a cross-origin isolated page), read in copies", async () => {
          const isolated = await serve(site, { isolated: true });
          try {
            const result = await runPage(browser, `${isolated.url}cache.html?model=m/model.js&weights=shared`, { timeoutMs: 120_000 });
            const [run] = result.runs;
            assertComputes(run, ref[1], "shared");
            assert.deepEqual(run.bytes, { network: 0, resumed: 0, cache: 0, weights: total });
          } finally {
            await isolated.close();
          }
        });

        await t.test("a blob from another origin, gzip-compressed: its Content-Length is not taken for the blob's size", async () => {
          // Another origin (another port) with CORS, which hides Content-Encoding from the page:
          // the compressed body's Content-Length is all the page sees.
          const other = http.createServer((req, res) => {
            const file = path.join(site, "m", path.basename(new URL(req.url, "http://x").pathname));
            if (!fs.existsSync(file)) return res.writeHead(404).end();
            const headers = { "access-control-allow-origin": "*", "cache-control": "no-store", "content-type": file.endsWith(".js") ? "text/javascript" : "application/octet-stream" };
            let body = fs.readFileSync(file);
            if (file.endsWith(".weights")) {
              body = zlib.gzipSync(body);
              headers["content-encoding"] = "gzip";
            }
            headers["content-length"] = body.length;
            res.writeHead(200, headers).end(body);
          });
          await new Promise((resolve) => other.listen(0, "127.0.0.1", resolve));
          try {
            const model = encodeURIComponent(`http://127.0.0.1:${other.address().port}/model.js`);
            const { result } = await visit(`model=${model}&cache=off`);
            assertComputes(result.runs[0], ref[1], "cross-origin gzip");
            assert.deepEqual(result.runs[0].bytes, { network: total, resumed: 0, cache: 0, weights: 0 });
          } finally {
            other.closeAllConnections();
            await new Promise((resolve) => other.close(resolve));
          }
        });

        await t.test("weights load() refuses: a Response already read, a 206 from a later byte, a corrupt stream (cancelled)", async () => {
          const used = (await visit("model=m/model.js&weights=used")).result;
          assert.match(used.loadError, /^TypeError: webnn-weights: load\(\{weights\}\): the Response's body given has already been read/);
          const late = (await visit("model=m/model.js&weights=late")).result;
          const first = Object.entries(v1.byRef).sort((a, b) => a[1].offset - b[1].offset)[0];
          assert.match(late.loadError, new RegExp(`starts at byte 100; tensor "${first[0].replace(".", "\\.")}" \\(constant \\w+\\) needs bytes ${first[1].offset}\\.\\.`));
          const corrupt = (await visit("model=m/model.js&weights=corrupt")).result;
          assert.match(corrupt.loadError, /SHA-256 [0-9a-f]{64}, expected [0-9a-f]{64}/);
          assert.equal(corrupt.sourceCancelled, true, "load() cancels the stream it stopped reading");
        });

        await t.test("a cache object whose put resolves before reading the body: its entry fails when read, never wrong bytes", async () => {
          const { result, served } = await visit("model=m/model.js&cache=lazy");
          const [first, second] = result.runs;
          assertComputes(first, ref[1], "first load");
          assertComputes(second, ref[1], "second load");
          assert.equal(result.mapKeys.length, 1, "caching stops after the first put that left its body unread");
          assert.equal(second.dropped.length, 1, JSON.stringify(second.dropped));
          assert.match(second.dropped[0].dropped, /the entry cannot be read: .*after its put\(\) had resolved/);
          assert.equal(served.weights, 2 * v1.blobSize, "both loads download the blob");
        });

        await t.test("the graph cache (stubbed on a real MLContext) is hit on the second load", async () => {
          const { result, served } = await visit("model=m/model.js&cache=off&graphcache=1", "graph cache: two loads in one page (cache off)");
          const [first, second] = result.runs;
          assertComputes(first, ref[1], "built");
          assertComputes(second, ref[1], "from the graph cache");
          assert.equal(first.graphCache, false);
          assert.equal(second.graphCache, true);
          assert.deepEqual(result.graphCalls, [["loadGraph", v1.contentKey, false], ["saveGraph", v1.contentKey], ["loadGraph", v1.contentKey, true]]);
          assert.equal(served.weights, v1.blobSize, "the second load fetched no byte");
          assert.equal(served.manifest, 1);
          assert.deepEqual(second.outputDescs, first.outputDescs, "descriptors inferred without weights");
          assert.deepEqual(second.bytes, { network: 0, resumed: 0, cache: 0, weights: 0 });
        });

        await t.test("a new model version at the same URLs: changed tensors downloaded, unchanged ones from the cache", async () => {
          publish(2);
          const v2 = versions[2];
          assert.notEqual(v2.contentKey, v1.contentKey);
          const changed = Object.keys(v2.byRef).filter((r) => v2.byRef[r].sha256 !== v1.byRef[r].sha256).sort();
          assert.deepEqual(changed, ["layer1.bias", "layer3.weight"]);
          const { result, served } = await visit("model=m/model.js", "new version (2 of 6 tensors changed)");
          const [run] = result.runs;
          assertComputes(run, ref[2], "version 2");
          assert.ok(maxDiff(run.outputs.y, ref[1]) > 0.05, "version 2 computed what version 1 does");
          assert.equal(result.contentKey, v2.contentKey);
          assert.equal(served.weights, runBytes(changed.map((r) => v2.byRef[r])));
          assert.equal(served.requests.length, 2, "two runs: the changed tensors lie more than 64 KiB apart");
          assert.deepEqual(run.sources, { w1: "cache", b1: "network", w2: "cache", b2: "cache", w3: "network", b3: "cache" });
          const again = await visit("model=m/model.js", "new version, second visit");
          assertComputes(again.result.runs[0], ref[2], "version 2 again");
          assert.equal(again.served.weights, 0);
        });

        await t.test("clearCache(): the next visit downloads the blob again", async () => {
          const { result, served } = await visit("model=m/model.js&clear=1", "after clearCache()");
          assert.equal(result.cleared, true);
          assertComputes(result.runs[0], ref[2], "after clearCache");
          assert.equal(served.weights, versions[2].blobSize);
          assert.equal(result.cacheKeys.length, 6, "only the entries of this load");
        });

        await t.test("an emit-js module (no digests): no cache by default, an error when one is asked for", async () => {
          const before = (await visit("model=m/model.js")).result.cacheKeys.length;
          const { result } = await visit("model=e/model.js&urls=1");
          assertComputes(result.runs[0], ref[1], "emit-js");
          assert.equal(result.contentKey, null);
          assert.deepEqual(result.runs[0].bytes, { network: total, resumed: 0, cache: 0, weights: 0 });
          assert.equal(result.cacheKeys.length, before, "emit-js cached nothing");
          await assert.rejects(visit("model=e/model.js&urls=1&cache=webnn-weights"), /holds no SHA-256 of its constants/);
        });
      });
    } finally {
      await server.close();
    }
    line("");
    line(`| scenario | weights bytes served (blob ${v1.blobSize}, largest tensor ${largest}) | requests for the blob | manifest requests |`);
    line("|---|---:|---:|---:|");
    for (const f of figures) line(`| ${f.scenario} | ${f.bytes} | ${f.requests} | ${f.manifest} |`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});
