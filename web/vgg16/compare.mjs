#!/usr/bin/env node
// Usage: node web/vgg16/compare.mjs SITE_DIR [CASE...]
//
// Runs VGG16 in headless Chromium (WebNN, web/harness.mjs) in every way make.sh prepared in
// SITE_DIR (or only the CASEs named: onnx.sh runs `web-onnx` alone) and compares with ONNX
// Runtime (SITE_DIR/expected.json):
//   web            `webnn-weights web` on the rustnn-written graph: load(context), compute(feeds);
//                  max abs diff vs ORT must be <= 1e-4
//   emit           `webnn-weights emit-js` on the same graph, with the blob and manifest `web`
//                  wrote (WGWT): outputs must be bit for bit those of `web`
//   web-convert    `webnn-weights web` on the convert-onnx output: max abs diff vs ORT <= 1e-4
//   emit-convert   `webnn-weights emit-js` on the convert-onnx output (headerless blob): must load
//                  and compute; its diff vs ORT is reported, and whether it equals web-convert's
//   web-onnx       the unpatched model through our own `webnn-weights convert-onnx`, then
//                  `webnn-weights web`: max abs diff vs ORT <= 1e-4
//   wg-emit-rustnn, wg-emit-convert
//                  webnn-graph 0.4.0's own emit-js on both graphs: expected to fail, the error is
//                  recorded (the defects `webnn-weights emit-js` fixes)
// Writes SITE_DIR/results.json and prints one line per case. Exit status 1 when a check fails.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve, withBrowser, runPage } from "../harness.mjs";

const TOLERANCE = 1e-4;
const [site, ...only] = process.argv.slice(2);
if (!site) {
  process.stderr.write("usage: node compare.mjs SITE_DIR [CASE...]\n");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
fs.copyFileSync(path.join(here, "page.html"), path.join(site, "page.html"));
const expected = JSON.parse(fs.readFileSync(path.join(site, "expected.json"), "utf8"));

const emit = (dir, blobDir) =>
  `kind=emit&module=${dir}/vgg16.js&weights=${blobDir}/vgg16.weights&manifest=${blobDir}/vgg16.manifest.json`;
const allCases = [
  { name: "web", query: "kind=web&module=web/vgg16.js", what: "webnn-weights web, rustnn-written graph" },
  { name: "emit", query: emit("emit", "web"), what: "webnn-weights emit-js, rustnn-written graph, web's WGWT blob" },
  { name: "web-convert", query: "kind=web&module=web-convert/vgg16.js", what: "webnn-weights web, convert-onnx output" },
  { name: "emit-convert", query: emit("emit-convert", "convert"), what: "webnn-weights emit-js, convert-onnx output, headerless blob" },
  { name: "web-onnx", query: "kind=web&module=web-onnx/vgg16.js", what: "webnn-weights web, webnn-weights convert-onnx output (unpatched model)" },
  { name: "web-dedup", query: "kind=web&module=web-dedup/vgg16.js", what: "diagnostic: webnn-weights web, rustnn-written graph without the positional bias copies", diagnostic: true },
  { name: "emit-dedup", query: emit("emit-dedup", "web-dedup"), what: "diagnostic: webnn-weights emit-js, the same, web-dedup's WGWT blob", diagnostic: true },
  { name: "wg-emit-rustnn", query: emit("wg-emit-rustnn", "rustnn-wgwt"), what: "webnn-graph 0.4.0 emit-js, rustnn-written graph, a WGWT blob", expectFailure: true },
  { name: "wg-emit-convert", query: emit("wg-emit-convert", "convert"), what: "webnn-graph 0.4.0 emit-js, convert-onnx output, headerless blob", expectFailure: true },
];
const unknown = only.filter((n) => !allCases.some((c) => c.name === n));
if (unknown.length) {
  process.stderr.write(`compare.mjs: unknown case ${unknown.join(", ")} (cases: ${allCases.map((c) => c.name).join(", ")})\n`);
  process.exit(2);
}
const cases = only.length ? allCases.filter((c) => only.includes(c.name)) : allCases;

function maxAbsDiff(outputs) {
  let worst = 0;
  for (const [name, e] of Object.entries(expected)) {
    const got = outputs[name]?.data;
    if (!got || got.length !== e.data.length) throw new Error(`output ${name}: ${got?.length} values, expected ${e.data.length}`);
    for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - e.data[i]));
  }
  return worst;
}
const bits = (outputs) =>
  Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, Buffer.from(new Float32Array(v.data).buffer).toString("hex")]));

const results = {};
const server = await serve(site);
try {
  await withBrowser(async (browser) => {
    for (const c of cases) {
      const t = performance.now();
      const generation = path.join(site, c.name, "error.txt");
      try {
        if (fs.existsSync(generation)) throw new Error(`generation: ${fs.readFileSync(generation, "utf8").trim()}`);
        if (!fs.existsSync(path.join(site, c.name, "vgg16.js"))) throw new Error(`generation: no ${c.name}/vgg16.js`);
        const r = await runPage(browser, `${server.url}page.html?${c.query}`, { timeoutMs: 600_000, quiet: true });
        results[c.name] = { what: c.what, ok: true, maxAbsDiff: maxAbsDiff(r.outputs), times: r.times, outputs: r.outputs };
      } catch (e) {
        results[c.name] = { what: c.what, ok: false, error: String(e?.message ?? e) };
      }
      results[c.name].pageMs = performance.now() - t;
    }
  });
} finally {
  await server.close();
}

const failures = [];
const ms = (v) => `${v.toFixed(0)} ms`;
for (const c of cases) {
  const r = results[c.name];
  if (r.ok) {
    const t = r.times;
    const first = Object.entries(r.outputs).map(([k, v]) => `${k} = [${v.data.map((x) => x.toPrecision(8)).join(", ")}]`).join("; ");
    console.log(`${c.name}: ${c.what}: max abs diff vs ORT ${r.maxAbsDiff.toExponential(3)}; load ${ms(t.loadMs)}, compute ${ms(t.computeMs)} (again ${ms(t.secondComputeMs)}); ${first}`);
    if (c.expectFailure) console.log(`${c.name}: (it was expected to fail; it did not)`);
  } else {
    const lines = r.error.split("\n");
    const shown = lines.length > 3 ? [...lines.slice(0, 3), `  … (${lines.length - 3} more lines)`] : lines;
    console.log(`${c.name}: ${c.what}: FAILED: ${JSON.stringify(shown.join("\n"))}`);
    if (!c.expectFailure && !c.diagnostic) failures.push(`${c.name} failed: ${r.error.split("\n")[0]}`);
  }
}
if (results.web?.ok && !(results.web.maxAbsDiff <= TOLERANCE)) failures.push(`web: max abs diff ${results.web.maxAbsDiff} > ${TOLERANCE}`);
if (results.web?.ok && results.emit?.ok) {
  const same = JSON.stringify(bits(results.web.outputs)) === JSON.stringify(bits(results.emit.outputs));
  results.emit.bitForBitWithWeb = same;
  console.log(`emit vs web: bit for bit ${same ? "the same" : "DIFFERENT"}`);
  if (!same) failures.push("emit-js outputs differ from web's");
}
for (const name of ["web-convert", "web-onnx"]) {
  const r = results[name];
  if (r?.ok && !(r.maxAbsDiff <= TOLERANCE)) failures.push(`${name}: max abs diff ${r.maxAbsDiff} > ${TOLERANCE}`);
}
for (const [a, b] of [["web", "web-convert"], ["web-convert", "emit-convert"], ["web-dedup", "emit-dedup"], ["web-dedup", "web-convert"], ["web-convert", "web-onnx"]]) {
  if (results[a]?.ok && results[b]?.ok) {
    const same = JSON.stringify(bits(results[a].outputs)) === JSON.stringify(bits(results[b].outputs));
    console.log(`${b} vs ${a}: bit for bit ${same ? "the same" : "different"}`);
  }
}
fs.writeFileSync(path.join(site, "results.json"), JSON.stringify(results, null, 1) + "\n");
for (const f of failures) console.log(`FAIL: ${f}`);
console.log(failures.length ? "compare: FAILED" : "compare: all checks pass");
process.exit(failures.length ? 1 : 0);
