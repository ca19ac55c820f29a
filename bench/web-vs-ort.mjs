// One model through onnxruntime-web (its WebNN execution provider, on the .onnx) and through the
// module `webnn-weights web` wrote (from `webnn-weights convert-onnx`'s graph of that .onnx), in
// headless Chromium 153 (web/harness.mjs). bench/web-vs-ort.sh prepares everything and explains
// the choices; this file measures.
//
//   node bench/web-vs-ort.mjs SITE ONNX ORT_DIST RUNS CACHE_CONTROL
//     SITE           holds input.json, expected.json (web/vgg16/reference.py) and web-onnx/
//                    (vgg16.js, .weights, .manifest.json)
//     ONNX           the .onnx file onnxruntime-web loads
//     ORT_DIST       onnxruntime-web's dist/ folder (its package.json one folder up)
//     RUNS           runs per way (medians)
//     CACHE_CONTROL  the cache-control header of every response
//
// First a check: one browser computes input.json both ways; the max abs difference of the
// outputs must be <= 1e-4 (also printed against ONNX Runtime in Python, expected.json). Then RUNS
// rounds; each round runs the three ways in a new order, each in a fresh browser (a new profile):
// visit 1 (a new page), the page closed, visit 2 (a new page, same profile). Per visit: load
// time, first and second run, the peak memory of all the browser's processes (each process's
// peak, VmHWM, reset through /proc/PID/clear_refs before the visit, then summed) and the bytes
// the server sent for the library and the model (page.html and input.json left out). Every
// visit's outputs must again be within 1e-4 of the check's. Exit status 1 when a check fails or
// a page fails.

import { withBrowser, serve, processTree } from "../web/harness.mjs";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const TOLERANCE = 1e-4;
const TIMEOUT_MS = 600_000;
const [site, onnx, ortDist, runsArg, cacheControl] = process.argv.slice(2);
const runs = Number(runsArg);
if (!site || !onnx || !ortDist || !(Number.isInteger(runs) && runs >= 1) || !cacheControl) {
  process.stderr.write("usage: node bench/web-vs-ort.mjs SITE ONNX ORT_DIST RUNS CACHE_CONTROL (RUNS a whole number >= 1)\n");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const ortVersion = JSON.parse(fs.readFileSync(path.join(ortDist, "..", "package.json"), "utf8")).version;
const ours = path.join(site, "web-onnx");
for (const f of [path.join(site, "input.json"), path.join(site, "expected.json"), path.join(ours, "vgg16.js"), onnx, path.join(ortDist, "ort.bundle.min.mjs")]) {
  if (!fs.existsSync(f)) {
    process.stderr.write(`web-vs-ort.mjs: ${f} is missing (bench/web-vs-ort.sh prepares it)\n`);
    process.exit(2);
  }
}
const modelName = path.basename(onnx);

// --- the site: one folder of links, served by the harness's server ----------------------------------

// page.html and input.json are the bench's own and are not counted; the rest is what a library
// fetches (its code, .wasm, the model).
const UNCOUNTED = new Set(["/page.html", "/input.json", "/expected.json"]);

let siteRoot = null;

async function serveSite() {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), "web-vs-ort-site-"));
  siteRoot = root;
  const links = {
    ort: ortDist,
    ours,
    model: path.dirname(onnx),
    "page.html": path.join(here, "web-vs-ort", "page.html"),
    "input.json": path.join(site, "input.json"),
    "expected.json": path.join(site, "expected.json"),
  };
  for (const [name, target] of Object.entries(links)) await fsp.symlink(path.resolve(target), path.join(root, name));
  const server = await serve(root, { cacheControl });
  return {
    url: server.url,
    resetCounts: server.resetCounts,
    /** {pathname: bytes} of what the libraries fetched since the last reset, and their sum. */
    counted: () => {
      const files = Object.fromEntries(Object.entries(server.bytesServedByPath()).filter(([p]) => !UNCOUNTED.has(p)));
      return { files, bytes: Object.values(files).reduce((a, b) => a + b, 0) };
    },
    close: async () => {
      await server.close();
      await fsp.rm(root, { recursive: true, force: true });
    },
  };
}

// --- the browser's processes and their peaks (the approach of bench/web-memory.mjs) ---------------

/** Sets each process's VmHWM back to its current VmRSS ("5" to clear_refs, Linux 4.0 and later). */
function resetPeaks(root) {
  for (const pid of processTree(root)) {
    try {
      fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
    } catch (e) {
      if (e.code === "ENOENT" || e.code === "ESRCH") continue; // the process just ended
      throw new Error(`resetting the peak memory of process ${pid}: ${e.message} (writing /proc/PID/clear_refs needs Linux 4.0 or later and the browser's user)`);
    }
  }
}

/** The sum of the VmHWM of every process of the browser, in bytes. */
function peakSum(root) {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      total += Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) * 1024;
    } catch {}
  }
  return total;
}

// --- one visit ----------------------------------------------------------------------------------

const WAYS = [
  { key: "ort", label: `onnxruntime-web ${ortVersion}`, query: `kind=ort&model=model/${encodeURIComponent(modelName)}` },
  { key: "ours", label: "ours, cache default", query: "kind=ours&cache=default" },
  { key: "ours-nocache", label: "ours, cache: false", query: "kind=ours&cache=off" },
];

async function visit(browser, server, way, log) {
  const page = await browser.newPage();
  try {
    page.on("console", (m) => log(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => log(`uncaught: ${e.message ?? e}`));
    resetPeaks(browser.process().pid);
    server.resetCounts();
    const response = await page.goto(`${server.url}page.html?${way.query}`, { waitUntil: "load", timeout: TIMEOUT_MS });
    if (!response || response.status() !== 200) throw new Error(`${way.label}: page.html: HTTP ${response?.status()}`);
    await page.waitForFunction("window.__done === true", { timeout: TIMEOUT_MS, polling: 50 });
    const { error, result } = await page.evaluate(() => ({ error: window.__error ?? null, result: window.__result ?? null }));
    const memory = peakSum(browser.process().pid);
    if (error !== null) throw new Error(`${way.label}: ${error}`);
    const { bytes, files } = server.counted();
    return { ...result.times, memory, served: bytes, files, outputs: result.outputs };
  } finally {
    await page.close().catch(() => {});
  }
}

function maxAbsDiff(a, b, what) {
  let worst = 0;
  for (const [name, want] of Object.entries(b)) {
    const got = a[name];
    if (!got || got.length !== want.length) throw new Error(`${what}: output ${name} has ${got?.length} values, expected ${want.length}`);
    for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  }
  return worst;
}

// --- stopping on a signal --------------------------------------------------------------------------

// On SIGINT, SIGTERM or SIGHUP: the browser under way (every process of its tree, by id) is
// killed and its profile folder removed, synchronously, before puppeteer's own handlers run, and
// so is the site's folder of links; the server ends with this process.
let current = null;
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
for (const [signal, number] of Object.entries(SIGNALS)) {
  process.on(signal, () => {
    process.stderr.write(`web-vs-ort.mjs: ${signal}: stopping the browser\n`);
    const child = current?.process();
    if (child?.pid) {
      for (const pid of processTree(child.pid).reverse()) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
      const profile = child.spawnargs.find((a) => a.startsWith("--user-data-dir="))?.slice("--user-data-dir=".length);
      if (profile) fs.rmSync(profile, { recursive: true, force: true });
    }
    if (siteRoot) fs.rmSync(siteRoot, { recursive: true, force: true });
    process.exit(128 + number);
  });
}

async function inBrowser(fn) {
  return withBrowser(async (browser) => {
    current = browser;
    try {
      return await fn(browser);
    } finally {
      current = null;
    }
  });
}

// --- the check, then the rounds -----------------------------------------------------------------

const server = await serveSite();
const failures = [];
const rows = [];
let reference;
try {
  const expected = Object.fromEntries(
    Object.entries(JSON.parse(fs.readFileSync(path.join(site, "expected.json"), "utf8"))).map(([k, v]) => [k, v.data]),
  );
  await inBrowser(async (browser) => {
    const ortRun = await visit(browser, server, WAYS[0], (t) => process.stderr.write(`[ort page] ${t}\n`));
    const oursRun = await visit(browser, server, WAYS[2], (t) => process.stderr.write(`[ours page] ${t}\n`));
    const diff = maxAbsDiff(oursRun.outputs, ortRun.outputs, "ours against onnxruntime-web");
    const show = (o) => Object.entries(o).map(([k, v]) => `${k} = [${v.map((x) => x.toPrecision(8)).join(", ")}]`).join("; ");
    console.log(`check: onnxruntime-web ${ortVersion} (WebNN EP) ${show(ortRun.outputs)}`);
    console.log(`check: ours                        ${show(oursRun.outputs)}`);
    console.log(
      `check: max abs diff ours vs onnxruntime-web ${diff.toExponential(3)} (limit ${TOLERANCE}); ` +
        `vs ONNX Runtime in Python: onnxruntime-web ${maxAbsDiff(ortRun.outputs, expected, "onnxruntime-web against expected.json").toExponential(3)}, ` +
        `ours ${maxAbsDiff(oursRun.outputs, expected, "ours against expected.json").toExponential(3)}`,
    );
    if (!(diff <= TOLERANCE)) throw new Error(`ours and onnxruntime-web differ by ${diff} > ${TOLERANCE}: not timed`);
    reference = ortRun.outputs;
  });

  for (let round = 0; round < runs; round++) {
    const order = WAYS.map((_, i) => WAYS[(i + round) % WAYS.length]);
    for (const way of order) {
      const quiet = () => {}; // the check above showed the pages' console
      await inBrowser(async (browser) => {
        for (const n of [1, 2]) {
          const r = await visit(browser, server, way, quiet);
          const diff = maxAbsDiff(r.outputs, reference, `${way.label}, visit ${n}`);
          if (!(diff <= TOLERANCE)) failures.push(`${way.label}, round ${round + 1}, visit ${n}: outputs differ from the check's by ${diff}`);
          rows.push({ way: way.key, round, visit: n, ...r });
          process.stderr.write(
            `round ${round + 1} ${way.label} visit ${n}: load ${r.load.toFixed(0)} ms, runs ${r.run1.toFixed(0)} / ${r.run2.toFixed(0)} ms, ` +
              `peak ${(r.memory / 2 ** 20).toFixed(0)} MiB, served ${Object.entries(r.files).map(([f, b]) => `${f} ${b}`).join(", ") || "nothing"}\n`,
          );
        }
      });
    }
  }
} catch (e) {
  failures.push(String(e?.stack ?? e));
} finally {
  await server.close();
}

// --- the table ----------------------------------------------------------------------------------

if (rows.length === runs * WAYS.length * 2) {
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const pick = (way, n, field) => median(rows.filter((r) => r.way === way && r.visit === n).map((r) => r[field]));
  const fmt = {
    load: (v) => `${v.toFixed(0)} ms`,
    run1: (v) => `${v.toFixed(0)} ms`,
    run2: (v) => `${v.toFixed(0)} ms`,
    memory: (v) => `${(v / 2 ** 20).toFixed(0)} MiB`,
    served: (v) => `${(v / 1e6).toFixed(1)} MB`,
  };
  const names = { load: "load", run1: "first run", run2: "second run", memory: "peak memory, all processes", served: "bytes served (code, wasm, model)" };
  const ratio = (a, b) => (b === 0 ? (a === 0 ? "-" : "inf") : `${(a / b).toFixed(2)}x`);
  const header = ["", WAYS[0].label, WAYS[1].label, "ratio", WAYS[2].label, "ratio"];
  const table = [header];
  for (const n of [1, 2]) {
    for (const field of Object.keys(fmt)) {
      const o = pick("ort", n, field);
      const c = pick("ours", n, field);
      const f = pick("ours-nocache", n, field);
      table.push([`visit ${n}: ${names[field]}`, fmt[field](o), fmt[field](c), ratio(c, o), fmt[field](f), ratio(f, o)]);
    }
  }
  const widths = header.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  console.log(`\nVGG16 (${modelName}), headless Chromium 153, WebNN on the CPU; cache-control: ${cacheControl} on every response`);
  console.log(`medians of ${runs} round(s); each way in a fresh browser per round, in a new order each round; ratio = ours / onnxruntime-web`);
  for (const r of table) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
  console.log("| | " + header.slice(1).join(" | ") + " |\n|---|" + header.slice(1).map(() => "---|").join(""));
  for (const r of table.slice(1)) console.log(`| ${r.join(" | ")} |`);
}
for (const f of failures) console.log(`FAIL: ${f}`);
process.exit(failures.length ? 1 : 0);
