#!/usr/bin/env node
// Usage: node examples/web/test.mjs SITE [--serve]
// Serves SITE (what run.sh assembled: both pages, builder.js, the wasm, model/ and
// expected.json), runs wasm.html (the Rust app) and index.html (`webnn-weights web`'s module)
// in headless Chromium with WebNN (web/harness.mjs), prints both results and fails unless each
// y equals the native run's bit for bit, and, for the wasm page, unless every constant was a
// view of the wasm memory, 64-byte aligned there. --serve keeps the folder served for a person
// to open instead (Ctrl-C stops it).
import fs from "node:fs";
import path from "node:path";
import { serve, withBrowser, runPage } from "../../web/harness.mjs";

const args = process.argv.slice(2);
const keep = args.includes("--serve");
const site = args.find((a) => !a.startsWith("--"));
if (!site) {
  process.stderr.write("usage: node test.mjs SITE [--serve]\n");
  process.exit(2);
}
const expected = JSON.parse(fs.readFileSync(path.join(site, "expected.json"), "utf8"));
const server = await serve(site);
if (keep) {
  process.stdout.write(`serving ${site}:\n  ${server.url}wasm.html   (the Rust app in wasm)\n  ${server.url}index.html  (webnn-weights web's module)\nCtrl-C stops.\n`);
  await new Promise(() => {});
}

const problems = [];
const sameBits = (name, result) => {
  const ok = result.yBits.length === expected.yBits.length && result.yBits.every((b, i) => b === expected.yBits[i]);
  if (!ok) problems.push(`${name}: y = [${result.y}] (bits ${result.yBits.join(" ")}), native y = [${expected.y}] (bits ${expected.yBits.join(" ")})`);
  return ok;
};

const started = Date.now();
try {
  const [wasm, web] = await withBrowser(async (browser) => [
    await runPage(browser, new URL("wasm.html", server.url).href, { prefix: "[wasm.html] " }),
    await runPage(browser, new URL("index.html", server.url).href, { prefix: "[index.html] " }),
  ]);
  console.log(`native (x86-64, plain Rust): x = [${expected.x.join(", ")}]  y = [${expected.y.join(", ")}]  bits ${expected.yBits.join(" ")}`);

  const wasmSame = sameBits("wasm.html", wasm);
  console.log(`wasm.html  (Rust app, WebNN): y = [${wasm.y.join(", ")}]  bits ${wasm.yBits.join(" ")}  ${wasmSame ? "== native" : "!= native"}  (${wasm.ms.toFixed(1)} ms in the page)`);
  for (const c of wasm.constants) {
    console.log(`  ${c.name.padEnd(11)} ${c.dataType.padEnd(8)} ${String(c.byteLength).padStart(4)} bytes at ${c.ptr}  ptr % 64 = ${c.ptrMod64}  view of wasm memory: ${c.viewOfWasmMemory ? "yes" : "NO"}`);
    if (c.ptrMod64 !== 0) problems.push(`wasm.html: constant ${c.name} at ${c.ptr} is not 64-byte aligned in the wasm memory`);
    if (!c.viewOfWasmMemory) problems.push(`wasm.html: constant ${c.name} was not a view of the wasm memory`);
  }
  if (wasm.handedOver.length !== wasm.constants.length) problems.push(`wasm.html: ${wasm.handedOver.length} constants handed over, the program has ${wasm.constants.length}`);
  console.log(`  ${wasm.wasmImports} wasm imports, memory ${wasm.memoryBytes} bytes, program ${wasm.programBytes} bytes of JSON`);

  const webSame = sameBits("index.html", web);
  console.log(`index.html (webnn-weights web's module): y = [${web.y.join(", ")}]  bits ${web.yBits.join(" ")}  ${webSame ? "== native" : "!= native"}  (${web.ms.toFixed(1)} ms in the page)`);
  const last = web.progress.at(-1);
  console.log(`  progress: ${web.progress.length} events, last ${last ? `${last.loadedTensors}/${last.totalTensors} tensors, ${last.loadedBytes}/${last.totalBytes} bytes` : "none"}`);
  if (!last || last.loadedTensors !== last.totalTensors) problems.push("index.html: onProgress did not report every tensor");
} catch (error) {
  problems.push(String(error?.message ?? error));
} finally {
  await server.close();
}
console.log(`browser: ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (problems.length > 0) {
  for (const p of problems) console.error(`FAIL: ${p}`);
  process.exit(1);
}
console.log("both pages: y equal to the native run bit for bit");
