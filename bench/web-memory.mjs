// The page's peak memory when `webnn-weights web`'s module loads a model: streamed
// (`load`, each tensor handed to the builder as it arrives) against whole (`WeightsFile.load`
// and `buildGraph`, the blob in one ArrayBuffer), each in a fresh browser. Prints, per mode,
// the peak resident memory (VmHWM) of the renderer and of every process of the browser.
//
//   node bench/web-memory.mjs DIR STEM [RUNS]   (DIR holds STEM.js, .weights, .manifest.json)

import { withBrowser, serve, processTree } from "../web/harness.mjs";
import fs from "node:fs";

const [dir, stem, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 1);

function peaks(root) {
  const result = {};
  for (const pid of processTree(root)) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) * 1024;
      // Chromium rewrites its children's command lines into one space-separated string.
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split(/[\0 ]/);
      const type = (cmd.find((a) => a.startsWith("--type=")) ?? "--type=browser").slice(7);
      const sub = (cmd.find((a) => a.startsWith("--utility-sub-type=")) ?? "").slice(19);
      const key = sub ? `${type}:${sub}` : type;
      result[key] = (result[key] ?? 0) + hwm;
    } catch {}
  }
  return result;
}

const page = (mode) => `<!doctype html><script type="module">
const m = await import("./${stem}.js");
try {
  const context = await navigator.ml.createContext({ deviceType: "cpu" });
  const started = performance.now();
  let graph;
  if ("${mode}" === "streamed") {
    graph = (await m.load(context)).graph;
  } else {
    const weights = await m.WeightsFile.load("./${stem}.weights", "./${stem}.manifest.json");
    graph = await m.buildGraph(context, weights);
  }
  const built = performance.now() - started;
  const [input] = m.inputs;
  const count = input.shape.reduce((a, b) => a * b, 1);
  const out = await m.compute(context, graph, { [input.name]: new Float32Array(count).fill(1) });
  const first = Object.values(out)[0];
  window.__result = { built, first: Array.from(first.slice(0, 4)) };
} catch (e) { window.__error = e.stack ?? String(e); }
window.__done = true;
</script>`;

for (const mode of ["streamed", "whole"]) fs.writeFileSync(`${dir}/memory-${mode}.html`, page(mode));
const server = await serve(dir);
const rows = [];
try {
  for (let run = 0; run < runs; run++) {
    for (const mode of run % 2 === 0 ? ["streamed", "whole"] : ["whole", "streamed"]) {
      await withBrowser(async (browser) => {
        const tab = await browser.newPage();
        await tab.goto(`${server.url}memory-${mode}.html`);
        await tab.waitForFunction("window.__done === true", { timeout: 600_000, polling: 200 });
        const { error, result } = await tab.evaluate(() => ({ error: window.__error ?? null, result: window.__result ?? null }));
        const p = peaks(browser.process().pid);
        const total = Object.values(p).reduce((a, b) => a + b, 0);
        // A mode that fails (the whole blob past what one fetch can hold) is reported, not fatal.
        rows.push({ mode, run, renderer: p.renderer, total, processes: p, error, built: result?.built, first: result?.first });
      });
    }
  }
} finally {
  await server.close();
}
const mib = (bytes) => (bytes / 2 ** 20).toFixed(0);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const blob = fs.statSync(`${dir}/${stem}.weights`).size;
console.log(`blob ${mib(blob)} MiB; ${runs} run(s) per mode, medians; peak resident memory (VmHWM)`);
const summary = {};
for (const mode of ["streamed", "whole"]) {
  const failed = rows.filter((x) => x.mode === mode && x.error);
  if (failed.length > 0) {
    console.log(`${mode.padEnd(9)} FAILED in ${failed.length} of ${runs} run(s): ${failed[0].error.split("\n")[0]} (renderer peak ${mib(failed[0].renderer)} MiB)`);
    continue;
  }
  const r = rows.filter((x) => x.mode === mode);
  summary[mode] = { renderer: median(r.map((x) => x.renderer)), total: median(r.map((x) => x.total)), built: median(r.map((x) => x.built)) };
  console.log(`${mode.padEnd(9)} renderer ${mib(summary[mode].renderer).padStart(6)} MiB  all processes ${mib(summary[mode].total).padStart(6)} MiB  built in ${(summary[mode].built / 1000).toFixed(2)} s  y[0..4] ${JSON.stringify(r[0].first)}`);
}
if (summary.streamed && summary.whole) console.log(`streamed / whole: renderer ${(summary.streamed.renderer / summary.whole.renderer).toFixed(2)}x, all processes ${(summary.streamed.total / summary.whole.total).toFixed(2)}x`);
for (const row of rows) console.log(`  ${row.mode} run ${row.run}: ${Object.entries(row.processes).map(([k, v]) => `${k} ${mib(v)} MiB`).join(", ")}`);
