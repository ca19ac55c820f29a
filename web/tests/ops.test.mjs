// The browser op suite: every case of web/ops/make_cases.py is turned into an ES module by
// `webnn-weights web`, loaded and computed in headless Chromium's WebNN (CPU), and compared with
// numpy's result. One browser and one server for the whole run.
//
// Environment:
//   WEBNN_WEIGHTS_BIN   the CLI (default: target/debug/webnn-weights of this checkout)
//   WEBNN_OPS_CASES     a folder make_cases.py already wrote (default: generated into a temp folder)
//   WEBNN_OPS_ONLY      comma-separated case or op names to run (default: all)
//   WEBNN_OPS_REPORT    a path: write a JSON report of every case's verdict there
//
// Lists kept beside the cases (web/ops/):
//   expected-unsupported.json  cases Chromium itself rejects: {case: {message, note}}; the
//                              module must fail with that exact browser message, and so must a
//                              graph built by hand (mode "direct")
//   browser-deviations.json    cases Chromium computes differently from the WebNN spec (numpy):
//                              {case: {note}}; the module must agree with the graph built by
//                              hand, and the numpy mismatch is reported
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve, withBrowser, runPage } from "../harness.mjs";

const WEB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ROOT = path.resolve(WEB, "..");
const BIN = path.resolve(ROOT, process.env.WEBNN_WEIGHTS_BIN ?? "target/debug/webnn-weights");
const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const UNSUPPORTED = readJson(path.join(WEB, "ops", "expected-unsupported.json"));
const DEVIATIONS = readJson(path.join(WEB, "ops", "browser-deviations.json"));
const TAMPERED_CASE = "weights_sharded";
const TAMPERED_CONSTANT = "w2"; // stored as "decoder.weight" in the second shard
const TAMPERED_REF = "decoder.weight";

let generated = null; // a folder this run wrote, removed at the end

function casesDir() {
  if (process.env.WEBNN_OPS_CASES) return path.resolve(process.env.WEBNN_OPS_CASES);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "webnn-ops-"));
  generated = dir;
  const r = spawnSync("python3", [path.join(WEB, "ops", "make_cases.py"), dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`make_cases.py failed (${r.status}): ${r.stderr}`);
  return dir;
}

// `webnn-weights web CASE/CASE.webnn --weights W -o OUT`; resolves when it succeeded.
function webnnWeightsWeb(dir, name, weights, out) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ["web", path.join(dir, name, `${name}.webnn`), "--weights", weights, "-o", out, "-q"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (e) => reject(new Error(`cannot run ${BIN}: ${e.message} (build it: cargo build -p webnn-weights-cli)`)));
    child.on("close", (status) => (status === 0 ? resolve() : reject(new Error(`webnn-weights web ${name} failed (${status}):\n${stderr}`))));
  });
}

// Runs the CLI for every case ahead of the browser, two at a time: {name: Promise}.
function prepareAll(dir, cases) {
  const jobs = {};
  const lanes = [Promise.resolve(), Promise.resolve()];
  cases.forEach((c, i) => {
    const meta = readJson(path.join(dir, c.name, "case.json"));
    const lane = i % lanes.length;
    const job = lanes[lane].then(() => webnnWeightsWeb(dir, c.name, meta.weights, path.join(dir, c.name, "out")));
    lanes[lane] = job.catch(() => {});
    job.catch(() => {}); // awaited (and reported) by the case's test
    jobs[c.name] = job;
  });
  return jobs;
}

// -- comparison --

const num = (v) => (typeof v === "string" ? Number(v) : v);

function compareOutput(name, got, exp) {
  const problems = [];
  if (got === undefined) return { problems: [`${name}: missing from the results`], maxErr: 0 };
  if (got.dataType !== exp.dataType) problems.push(`${name}: dataType ${got.dataType}, expected ${exp.dataType}`);
  if (JSON.stringify(got.shape) !== JSON.stringify(exp.shape)) problems.push(`${name}: shape [${got.shape}], expected [${exp.shape}]`);
  if (got.data.length !== exp.data.length) {
    problems.push(`${name}: ${got.data.length} values, expected ${exp.data.length}`);
    return { problems, maxErr: Infinity };
  }
  const integer = !["float32", "float16"].includes(exp.dataType);
  const { atol, rtol } = exp.tolerance;
  let maxErr = 0;
  const bad = [];
  for (let i = 0; i < exp.data.length; i++) {
    if (integer) {
      if (BigInt(got.data[i]) !== BigInt(exp.data[i])) bad.push(i);
      continue;
    }
    const g = num(got.data[i]);
    const e = num(exp.data[i]);
    if (Number.isNaN(e) || Number.isNaN(g)) {
      if (!(Number.isNaN(e) && Number.isNaN(g))) bad.push(i);
      continue;
    }
    if (g === e) continue;
    const err = Math.abs(g - e);
    maxErr = Math.max(maxErr, err);
    if (!(err <= atol + rtol * Math.abs(e))) bad.push(i);
  }
  if (bad.length) {
    const show = bad.slice(0, 4).map((i) => `[${i}] got ${got.data[i]} expected ${exp.data[i]}`).join(", ");
    problems.push(`${name}: ${bad.length} of ${exp.data.length} values differ (atol ${atol}, rtol ${rtol}): ${show}`);
  }
  return { problems, maxErr };
}

function compareAll(outputs, expected) {
  const problems = [];
  let maxErr = 0;
  for (const [name, exp] of Object.entries(expected)) {
    const r = compareOutput(name, outputs[name], exp);
    problems.push(...r.problems);
    maxErr = Math.max(maxErr, r.maxErr);
  }
  for (const name of Object.keys(outputs)) if (!(name in expected)) problems.push(`${name}: an output the graph does not declare`);
  return { problems, maxErr };
}

const TYPED_NAMES = {
  float32: "Float32Array", float16: "Uint16Array", int32: "Int32Array", uint32: "Uint32Array",
  int64: "BigInt64Array", uint64: "BigUint64Array", int8: "Int8Array", uint8: "Uint8Array",
};

// The module's descriptors against the case (the contract: inputs in graph order, typed arrays).
function checkContract(result, inputs, expected, hasWeights) {
  const problems = [];
  // "graph order": GraphJson keeps inputs in a map sorted by name, so the declaration order of
  // the .webnn text and the order by name are both accepted
  const want = Object.entries(inputs).map(([name, d]) => ({ name, dataType: d.dataType, shape: d.shape }));
  const byName = [...want].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sameDescs = (got) => {
    const g = JSON.stringify(got?.map((d) => ({ name: d.name, dataType: d.dataType, shape: d.shape })));
    return g === JSON.stringify(want) || g === JSON.stringify(byName);
  };
  if (!sameDescs(result.moduleInputs)) problems.push(`export inputs ${JSON.stringify(result.moduleInputs)}, expected ${JSON.stringify(want)}`);
  if (!sameDescs(result.loadInputs)) problems.push(`load().inputs ${JSON.stringify(result.loadInputs)}, expected ${JSON.stringify(want)}`);
  const outNames = (list) => (list ?? []).map((o) => o.name).sort().join(",");
  const wantOut = Object.keys(expected).sort().join(",");
  if (outNames(result.moduleOutputs) !== wantOut) problems.push(`export outputs [${outNames(result.moduleOutputs)}], expected [${wantOut}]`);
  if (outNames(result.loadOutputs) !== wantOut) problems.push(`load().outputs [${outNames(result.loadOutputs)}], expected [${wantOut}]`);
  if (hasWeights && !(result.progressCalls > 0)) problems.push("load() never called onProgress");
  for (const [name, o] of Object.entries(result.outputs)) {
    const e = expected[name];
    if (e && o.typedArray !== TYPED_NAMES[e.dataType]) problems.push(`compute() gave ${name} as ${o.typedArray}, the contract says ${TYPED_NAMES[e.dataType]}`);
  }
  return problems;
}

// The results of the module's whole-file path (WeightsFile.load + buildGraph + compute).
function wholeFile(result, expected) {
  const p = compareAll(result.wholeFile ?? {}, expected).problems;
  return p.length ? [`WeightsFile.load + buildGraph + compute: ${p.join("; ")}`] : [];
}

// -- the suite --

const report = [];
const line = (s) => process.stdout.write(`${s}\n`);

test("op suite: generated modules computed in Chromium's WebNN vs numpy", { timeout: 30 * 60_000 }, async (t) => {
  const dir = casesDir();
  const only = process.env.WEBNN_OPS_ONLY ? new Set(process.env.WEBNN_OPS_ONLY.split(",")) : null;
  const cases = readJson(path.join(dir, "cases.json")).filter((c) => !only || only.has(c.name) || only.has(c.op));
  assert.ok(cases.length > 0 || only?.has("tampered"), `no cases in ${dir}${only ? ` named ${[...only]}` : ""}`);
  for (const f of ["runner.html", "runner.js"]) fs.copyFileSync(path.join(WEB, "ops", f), path.join(dir, f));
  for (const name of [...Object.keys(UNSUPPORTED), ...Object.keys(DEVIATIONS)]) {
    if (!only) assert.ok(cases.some((c) => c.name === name), `${name} is listed in web/ops/*.json but make_cases.py writes no such case`);
  }
  const prepared = prepareAll(dir, cases);
  const server = await serve(dir);
  const started = Date.now();
  try {
    await withBrowser(async (browser) => {
      const page = (name, mode) => runPage(browser, `${server.url}runner.html?case=${encodeURIComponent(name)}&mode=${mode}`, { timeoutMs: 120_000, quiet: true });
      const direct = async (name) => {
        try {
          return { ok: true, result: await page(name, "direct") };
        } catch (e) {
          return { ok: false, message: e.message };
        }
      };
      for (const c of cases) {
        await t.test(`${c.op}: ${c.name}`, async () => {
          const meta = readJson(path.join(dir, c.name, "case.json"));
          const inputs = readJson(path.join(dir, c.name, "inputs.json"));
          const expected = readJson(path.join(dir, c.name, "expected.json"));
          const entry = { name: c.name, op: c.op, description: meta.description };
          report.push(entry);
          try {
            await prepared[c.name];
          } catch (e) {
            entry.verdict = "cli-error";
            entry.message = e.message;
            line(`FAIL ${c.op.padEnd(22)} ${c.name}: ${e.message.split("\n").slice(0, 3).join(" | ")}`);
            throw e;
          }
          let result;
          let error;
          try {
            result = await page(c.name, "module");
          } catch (e) {
            error = e.message;
          }
          const unsupported = UNSUPPORTED[c.name];
          if (unsupported) {
            entry.verdict = "unsupported";
            entry.message = error;
            const d = await direct(c.name);
            assert.ok(error !== undefined, `${c.name} is listed as unsupported by Chromium, but the module computed it: remove it from expected-unsupported.json`);
            assert.ok(error.includes(unsupported.message), `${c.name}: expected Chromium's message "${unsupported.message}", got: ${error}`);
            assert.ok(!d.ok && d.message.includes(unsupported.message), `${c.name}: built by hand, Chromium gave ${d.ok ? "a result" : d.message}`);
            line(`unsup ${c.op.padEnd(21)} ${c.name}: Chromium: ${unsupported.message}`);
            return;
          }
          if (error !== undefined) {
            const d = await direct(c.name);
            entry.verdict = "fail";
            entry.message = error;
            entry.direct = d.ok ? "computed" : d.message;
            const hint = d.ok ? `built by hand the browser computes it (${compareAll(d.result.outputs, expected).problems.length ? "NOT matching numpy" : "matching numpy"})` : `built by hand: ${d.message}`;
            line(`FAIL ${c.op.padEnd(22)} ${c.name}: ${error} [${hint}]`);
            assert.fail(`${c.name}: ${error}\n${hint}`);
          }
          const hasWeights = Object.keys(readJson(path.join(dir, c.name, "out", `${c.name}.manifest.json`)).tensors).length > 0;
          const contract = checkContract(result, inputs, expected, hasWeights);
          const { problems, maxErr } = compareAll(result.outputs, expected);
          const wholeFileProblems = wholeFile(result, expected);
          const deviation = DEVIATIONS[c.name];
          if (deviation) {
            const d = await direct(c.name);
            assert.ok(d.ok, `${c.name}: built by hand: ${d.message}`);
            const browser = Object.fromEntries(Object.entries(expected).map(([n, e]) => [n, { ...e, data: d.result.outputs[n].data }]));
            const vsDirect = compareAll(result.outputs, browser);
            vsDirect.problems.push(...wholeFile(result, browser));
            entry.verdict = problems.length ? "browser-deviation" : "pass";
            entry.problems = problems;
            assert.deepEqual([...contract, ...vsDirect.problems], [], `${c.name}: the module differs from the graph built by hand`);
            line(problems.length
              ? `dev  ${c.op.padEnd(22)} ${c.name}: known Chromium deviation (${deviation.note}): ${problems.join("; ")}`
              : `ok   ${c.op.padEnd(22)} ${c.name} (listed in browser-deviations.json but now matches numpy)`);
            return;
          }
          contract.push(...wholeFileProblems);
          if (problems.length || contract.length) {
            const d = await direct(c.name);
            const directProblems = d.ok ? compareAll(d.result.outputs, expected).problems : [d.message];
            entry.verdict = "fail";
            entry.problems = [...contract, ...problems];
            entry.direct = directProblems.length ? directProblems : "matches numpy";
            const hint = directProblems.length ? `built by hand: ${directProblems.join("; ")}` : "built by hand the browser matches numpy: the module is wrong";
            line(`FAIL ${c.op.padEnd(22)} ${c.name}: ${[...contract, ...problems].join("; ")} [${hint}]`);
            assert.fail(`${c.name}:\n  ${[...contract, ...problems].join("\n  ")}\n  ${hint}`);
          }
          entry.verdict = "pass";
          entry.maxErr = maxErr;
          line(`ok   ${c.op.padEnd(22)} ${c.name} (${Object.keys(expected).length} output${Object.keys(expected).length > 1 ? "s" : ""}, max |err| ${maxErr.toExponential(1)})`);
        });
      }

      if (!only || only.has(TAMPERED_CASE) || only.has("tampered")) {
        await t.test("load rejects a weights file with one flipped byte, naming the constant and both digests", async () => {
          const meta = readJson(path.join(dir, TAMPERED_CASE, "case.json"));
          const name = "tampered";
          const out = path.join(dir, name, "out");
          fs.mkdirSync(out, { recursive: true });
          // a copy of the case under the stem "tampered": tampered/out/tampered.{js,weights,manifest.json}
          for (const f of fs.readdirSync(path.join(dir, TAMPERED_CASE))) {
            const src = path.join(dir, TAMPERED_CASE, f);
            if (fs.statSync(src).isFile()) fs.copyFileSync(src, path.join(dir, name, f === `${TAMPERED_CASE}.webnn` ? `${name}.webnn` : f));
          }
          await webnnWeightsWeb(dir, name, meta.weights, out);
          const manifest = readJson(path.join(out, `${name}.manifest.json`));
          const entryOf = manifest.tensors[TAMPERED_REF] ?? manifest.tensors[TAMPERED_CONSTANT];
          assert.ok(entryOf, `the manifest has no tensor "${TAMPERED_REF}": ${Object.keys(manifest.tensors)}`);
          const blobPath = path.join(out, `${name}.weights`);
          const blob = fs.readFileSync(blobPath);
          const slice = (b) => b.subarray(entryOf.byteOffset, entryOf.byteOffset + entryOf.byteLength);
          const before = crypto.createHash("sha256").update(slice(blob)).digest("hex");
          blob[entryOf.byteOffset + 5] ^= 0x10;
          fs.writeFileSync(blobPath, blob);
          const after = crypto.createHash("sha256").update(slice(blob)).digest("hex");
          fs.writeFileSync(path.join(out, `${name}.short.weights`), blob.subarray(0, entryOf.byteOffset + 3));
          const r = await page(name, "tampered");
          assert.equal(r.rejected, true, "load accepted a weights file with a flipped byte");
          line(`ok   ${"tampered".padEnd(22)} load rejected: ${r.message}`);
          assert.ok(r.message.includes(TAMPERED_CONSTANT), `the message does not name the constant ${TAMPERED_CONSTANT}: ${r.message}`);
          assert.ok(r.message.includes(before), `the message does not give the expected digest ${before}: ${r.message}`);
          assert.ok(r.message.includes(after), `the message does not give the digest found ${after}: ${r.message}`);
          assert.equal(r.builds, 0, "MLGraphBuilder.build was called although a constant's digest was wrong");
          line(`ok   ${"tampered".padEnd(22)} WeightsFile.load + buildGraph rejected: ${r.wholeFile.message}`);
          assert.equal(r.wholeFile.rejected, true, "WeightsFile.load + buildGraph accepted a weights file with a flipped byte");
          assert.ok(r.wholeFile.message.includes(TAMPERED_CONSTANT) && r.wholeFile.message.includes(before) && r.wholeFile.message.includes(after), r.wholeFile.message);
          assert.equal(r.wholeFile.builds, 0, "buildGraph called MLGraphBuilder.build although a constant's digest was wrong");
          line(`ok   ${"tampered".padEnd(22)} a blob cut short rejected: ${r.short.message}`);
          assert.equal(r.short.rejected, true, "load accepted a blob cut short");
          assert.ok(r.short.message.includes(TAMPERED_REF), `the message does not name the missing tensor: ${r.short.message}`);
          assert.equal(r.short.builds, 0, "MLGraphBuilder.build was called for a blob cut short");
          report.push({ name: "tampered", op: "weights", verdict: "pass", message: r.message });
        });
      }
    });
  } finally {
    await server.close();
    const count = (v) => report.filter((e) => e.verdict === v).length;
    line(`op suite: ${report.length} cases, ${count("pass")} pass, ${count("fail") + count("cli-error")} fail, ${count("unsupported")} unsupported by Chromium, ${count("browser-deviation")} Chromium deviations, ${((Date.now() - started) / 1000).toFixed(1)} s in the browser (cases in ${dir})`);
    if (process.env.WEBNN_OPS_REPORT) fs.writeFileSync(process.env.WEBNN_OPS_REPORT, JSON.stringify(report, null, 1));
    if (generated) fs.rmSync(generated, { recursive: true, force: true });
  }
});
