// The ONNX node tests in Chromium's WebNN: every case weights-onnx/examples/node_cases.rs
// prepared (a folder of case folders, with cases.json) is classified, the converted ones through
// `webnn-weights web` and the page web/onnx/runner.html (the module's `load` + `compute`), and
// the categories are compared with web/onnx/expectations.json. One browser and one server for
// the whole run per lane (a new browser if a case takes it down).
//
//   node web/onnx/node-tests.mjs CASES_DIR [--update | --no-expectations] [GLOB...]
//
// The globs are the ones the cases were prepared with: with none, every case of the expectations
// file must have run. --update writes the categories of this run into the expectations file
// (only the cases that ran, when globs are given) instead of failing on a change.
// --no-expectations only classifies: the expectations file is neither read nor written, and the
// exit status is 0 whatever the categories (web/onnx/compare-webnn-graph.sh runs webnn-graph's
// converter so).
//
// Environment:
//   WEBNN_WEIGHTS_BIN   the CLI (default: target/debug/webnn-weights of this checkout)
//   WEBNN_ONNX_REPORT   a path: write every case's verdict there as JSON
//   WEBNN_ONNX_EXPECTATIONS  another expectations file (default web/onnx/expectations.json)
//
// Categories:
//   computed                       built and computed in Chromium, every output within tolerance
//   computed-with-constant-inputs  the same, with inputs fixed to their test values at conversion
//   wrong                          computed, but an output differs (the max error is recorded)
//   browser-unsupported            Chromium refused to build or compute the graph (its message)
//   web-refused                    our own writers or `webnn-weights web` refused the converted
//                                  graph: a converter bug, must not happen
//   mismatch                       the converted graph's inputs differ from the test's data: a bug
//   refused                        the converter refused the model (its message)
//   unreadable                     a file of the case could not be read
//   timed-out                      the page did not finish within the time limit
//   crashed                        a panic, abort or unclean exit anywhere: fails the run even
//                                  when the expectations file lists it
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve, withBrowser, runPage } from "../harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..", "..");
const BIN = path.resolve(ROOT, process.env.WEBNN_WEIGHTS_BIN ?? "target/debug/webnn-weights");
const EXPECTATIONS = path.resolve(process.env.WEBNN_ONNX_EXPECTATIONS ?? path.join(HERE, "expectations.json"));
const CLI_TIMEOUT_MS = 60_000;
const PAGE_TIMEOUT_MS = 60_000;
// browsers computing cases at once (WEBNN_ONNX_LANES; 2 halve the time on two cores)
const LANES = Math.max(1, Number(process.env.WEBNN_ONNX_LANES ?? 2));
const CATEGORIES = [
  "computed", "computed-with-constant-inputs", "wrong", "browser-unsupported", "web-refused",
  "mismatch", "refused", "unreadable", "timed-out", "crashed",
];
// categories whose message is kept in the expectations file
const WITH_MESSAGE = new Set(["refused", "browser-unsupported", "web-refused", "mismatch", "unreadable", "crashed", "wrong"]);

const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const line = (s) => process.stdout.write(`${s}\n`);

function parseArgs(argv) {
  const args = { dir: null, update: false, noExpectations: false, globs: [] };
  for (const a of argv) {
    if (a === "--update") args.update = true;
    else if (a === "--no-expectations") args.noExpectations = true;
    else if (args.dir === null) args.dir = path.resolve(a);
    else args.globs.push(a);
  }
  if (args.dir === null) throw new Error("usage: node web/onnx/node-tests.mjs CASES_DIR [--update | --no-expectations] [GLOB...]");
  if (args.update && args.noExpectations) throw new Error("--update and --no-expectations exclude each other");
  return args;
}

// A message as the expectations file keeps it: the first line (and the first problem when the
// first line only counts them), without the cases folder, at most 400 characters.
function short(message) {
  const lines = String(message ?? "").split("\n").map((l) => l.trim()).filter(Boolean);
  let s = lines[0] ?? "";
  if (/\d+ problems:$/.test(s) && lines[1]) s = `${s} ${lines[1]}`;
  return s.length > 400 ? `${s.slice(0, 397)}...` : s;
}

// -- webnn-weights web --

// `webnn-weights web CASE/CASE.webnn [--weights CASE.safetensors] [--manifest M] -o CASE/out`:
// {ok} or {ok: false, crashed, message}.
function webnnWeightsWeb(dir, name, weights, manifest) {
  const args = ["web", path.join(dir, name, `${name}.webnn`), "-o", path.join(dir, name, "out"), "-q"];
  if (weights) args.push("--weights", path.join(dir, name, weights));
  if (manifest) args.push("--manifest", path.join(dir, name, manifest));
  return new Promise((resolve) => {
    const child = spawn(BIN, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, CLI_TIMEOUT_MS);
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ ok: false, fatal: `cannot run ${BIN}: ${e.message} (build it: cargo build -p webnn-weights-cli)` });
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      if (status === 0) return resolve({ ok: true });
      if (timedOut) return resolve({ ok: false, crashed: true, message: `webnn-weights web did not finish within ${CLI_TIMEOUT_MS / 1000} s` });
      // exit status 1 is a refusal with a message; a panic (101) or a signal is a crash
      const crashed = status !== 1;
      const why = signal ? `killed by ${signal}` : `exit status ${status}`;
      resolve({ ok: false, crashed, message: `webnn-weights web (${why}): ${stderr.trim().replaceAll(`${dir}/`, "")}` });
    });
  });
}

// Runs the CLI for every converted case ahead of the browser, two at a time: {name: Promise}.
function prepareAll(dir, names) {
  const jobs = {};
  const lanes = [Promise.resolve(), Promise.resolve()];
  names.forEach((name, i) => {
    const meta = readJson(path.join(dir, name, "case.json"));
    const lane = i % lanes.length;
    jobs[name] = lanes[lane].then(() => webnnWeightsWeb(dir, name, meta.weights, meta.manifest));
    lanes[lane] = jobs[name];
  });
  return jobs;
}

// -- comparison --

const num = (v) => (typeof v === "string" ? Number(v) : v);

function compareOutput(name, got, exp) {
  const problems = [];
  if (got === undefined) return { problems: [`${name}: missing from the results`], maxErr: Infinity };
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
      let same;
      try {
        same = BigInt(got.data[i]) === BigInt(exp.data[i]);
      } catch {
        same = false; // a float where an integer was expected
      }
      if (!same) {
        bad.push(i);
        const d = Math.abs(num(got.data[i]) - num(exp.data[i]));
        maxErr = Math.max(maxErr, Number.isNaN(d) ? Infinity : d);
      }
      continue;
    }
    const g = num(got.data[i]);
    const e = num(exp.data[i]);
    if (Number.isNaN(e) || Number.isNaN(g)) {
      if (!(Number.isNaN(e) && Number.isNaN(g))) {
        bad.push(i);
        maxErr = Infinity;
      }
      continue;
    }
    if (g === e) continue;
    const err = Math.abs(g - e);
    maxErr = Math.max(maxErr, Number.isNaN(err) ? Infinity : err);
    if (!(err <= atol + rtol * Math.abs(e))) bad.push(i);
  }
  if (bad.length) {
    const show = bad.slice(0, 3).map((i) => `[${i}] got ${got.data[i]} expected ${exp.data[i]}`).join(", ");
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
  for (const name of Object.keys(outputs)) if (!(name in expected)) problems.push(`${name}: an output the test does not have`);
  return { problems, maxErr };
}

// -- the browser --

// Runs the page for the next case of `queue` until none is left and calls `done(name, verdict)`. A case that
// takes the browser down (or hangs it) is that case's verdict; the rest go on in a new browser.
async function runBrowser(serverUrl, queue, prepared, dir, done) {
  while (queue.next < queue.names.length) {
    await withBrowser(async (browser) => {
      while (queue.next < queue.names.length) {
        const name = queue.names[queue.next++];
        const verdict = await runCase(browser, serverUrl, name, prepared[name], dir);
        done(name, verdict);
        if (verdict.restart || !browser.connected) return; // a fresh browser for the rest
      }
    });
  }
}

async function runCase(browser, serverUrl, name, prepared, dir) {
  const meta = readJson(path.join(dir, name, "case.json"));
  const cli = await prepared;
  if (cli.fatal) throw new Error(cli.fatal);
  if (!cli.ok) return { category: cli.crashed ? "crashed" : "web-refused", message: cli.message };
  const url = `${serverUrl}runner.html?case=${encodeURIComponent(name)}`;
  let timer;
  const timeout = new Promise((resolve) => {
    // runPage has its own timeout; this one is for a tab that no longer answers at all
    timer = setTimeout(() => resolve({ hung: true }), PAGE_TIMEOUT_MS + 15_000);
  });
  // settles either way, also after the race is lost (no unhandled rejection)
  const page = runPage(browser, url, { timeoutMs: PAGE_TIMEOUT_MS, quiet: true }).then((r) => ({ r }), (e) => ({ e }));
  const result = await Promise.race([page, timeout]);
  clearTimeout(timer);
  if (result.hung) return { category: "timed-out", message: `the tab did not answer within ${PAGE_TIMEOUT_MS / 1000 + 15} s`, restart: true };
  if (result.e !== undefined) {
    const text = String(result.e?.message ?? result.e);
    if (/did not finish within/.test(text)) return { category: "timed-out", message: `the page did not finish within ${PAGE_TIMEOUT_MS / 1000} s`, restart: true };
    // the tab or the browser went away (a renderer crash), or the page failed outside the stages
    return { category: "crashed", message: `the page failed: ${text}`, restart: !browser.connected || /Target closed|crash|Session closed|detached/i.test(text) };
  }
  const r = result.r;
  if (r.stage === "import") return { category: "crashed", message: `the module of webnn-weights web does not import: ${r.message}` };
  if (r.stage) return { category: "browser-unsupported", message: `${r.stage}: ${r.message}` };
  const expected = readJson(path.join(dir, name, "expected.json"));
  const { problems, maxErr } = compareAll(r.outputs, expected);
  const constantInputs = meta.constantInputs ?? [];
  if (problems.length) return { category: "wrong", maxErr, message: problems.join("; ") };
  return { category: constantInputs.length ? "computed-with-constant-inputs" : "computed", maxErr, constantInputs };
}

// -- expectations --

function entryOf(v) {
  const e = { category: v.category };
  if (WITH_MESSAGE.has(v.category) && v.message) e.message = short(v.message);
  if (v.category === "wrong") e.maxErr = Number.isFinite(v.maxErr) ? Number(v.maxErr.toPrecision(3)) : String(v.maxErr);
  if (v.constantInputs?.length) e.constantInputs = v.constantInputs;
  return e;
}

function sorted(obj) {
  return Object.fromEntries(Object.keys(obj).sort().map((k) => [k, obj[k]]));
}

async function main() {
  const started = Date.now();
  const args = parseArgs(process.argv.slice(2));
  const dir = args.dir;
  const names = readJson(path.join(dir, "cases.json")).map((c) => c.name);
  for (const f of ["runner.html", "runner.js"]) fs.copyFileSync(path.join(HERE, f), path.join(dir, f));

  const verdicts = {};
  const converted = [];
  for (const name of names) {
    const meta = readJson(path.join(dir, name, "case.json"));
    if (meta.status === "converted") converted.push(name);
    else verdicts[name] = { category: meta.status, message: meta.message, constantInputs: meta.constantInputs };
    if (!CATEGORIES.includes(meta.status) && meta.status !== "converted") {
      throw new Error(`${name}: case.json has the unknown status ${JSON.stringify(meta.status)}`);
    }
  }

  const prepared = prepareAll(dir, converted);
  const server = await serve(dir);
  const browserStarted = Date.now();
  try {
    // LANES browsers, each taking the next case when it is free
    const queue = { names: converted, next: 0 };
    await Promise.all(Array.from({ length: LANES }, () => runBrowser(server.url, queue, prepared, dir, (name, v) => {
      verdicts[name] = v;
      const tail = v.category.startsWith("computed") ? `max |err| ${v.maxErr.toExponential(1)}` : short(v.message);
      line(`${v.category.padEnd(29)} ${name}: ${tail}`);
    })));
  } finally {
    await server.close();
  }
  const browserSeconds = (Date.now() - browserStarted) / 1000;

  // compare with the expectations (none with --no-expectations)
  const expectations = !args.noExpectations && fs.existsSync(EXPECTATIONS) ? readJson(EXPECTATIONS) : {};
  const changes = [];
  for (const name of args.noExpectations ? [] : names) {
    const want = expectations[name];
    const got = verdicts[name];
    if (!want) changes.push(`${name}: new case, now ${got.category}${got.message ? ` (${short(got.message)})` : ""}`);
    else if (want.category !== got.category) {
      changes.push(`${name}: ${want.category} -> ${got.category}${got.message ? ` (${short(got.message)})` : ""}`);
    }
  }
  const ran = new Set(names);
  if (args.globs.length === 0 && !args.noExpectations) {
    for (const name of Object.keys(expectations)) if (!ran.has(name)) changes.push(`${name}: expected ${expectations[name].category}, but there is no such case`);
  }
  let messagesChanged = 0;
  for (const name of names) {
    const want = expectations[name];
    if (want && want.category === verdicts[name].category && (want.message ?? "") !== (entryOf(verdicts[name]).message ?? "")) messagesChanged += 1;
  }

  const counts = Object.fromEntries(CATEGORIES.map((c) => [c, 0]));
  for (const v of Object.values(verdicts)) counts[v.category] += 1;
  const seconds = (Date.now() - started) / 1000;
  if (process.env.WEBNN_ONNX_REPORT) {
    const report = {
      counts,
      seconds,
      browserSeconds,
      changes,
      cases: sorted(Object.fromEntries(Object.entries(verdicts).map(([n, v]) => [n, { ...entryOf(v), message: v.message ?? undefined, maxErr: v.maxErr }]))),
    };
    fs.writeFileSync(process.env.WEBNN_ONNX_REPORT, `${JSON.stringify(report, null, 1)}\n`);
  }

  let status = 0;
  if (args.update) {
    const next = args.globs.length ? { ...expectations } : {};
    for (const name of names) next[name] = entryOf(verdicts[name]);
    fs.writeFileSync(EXPECTATIONS, `${JSON.stringify(sorted(next), null, 1)}\n`);
    line(`onnx node tests: ${changes.length} category change${changes.length === 1 ? "" : "s"} and ${messagesChanged} message change${messagesChanged === 1 ? "" : "s"} written to ${path.relative(process.cwd(), EXPECTATIONS)}`);
    for (const c of changes) line(`  ${c}`);
  } else if (changes.length) {
    status = 1;
    line(`\nonnx node tests: ${changes.length} case${changes.length === 1 ? "" : "s"} changed category (expectations: ${path.relative(process.cwd(), EXPECTATIONS)}):`);
    for (const c of changes) line(`  ${c}`);
    line("If the change is intended (an operator landed, a message changed category), record it: bash web/onnx/node-tests.sh --update [GLOB...]");
  } else if (messagesChanged) {
    line(`onnx node tests: ${messagesChanged} message${messagesChanged === 1 ? "" : "s"} differ from the expectations (not a failure; --update records them)`);
  }
  // never recordable: a crash fails the run whatever the expectations say (classifying only, it
  // is listed)
  const crashed = names.filter((n) => verdicts[n].category === "crashed");
  if (crashed.length) {
    if (!args.noExpectations) status = 1;
    line(`\nonnx node tests: ${crashed.length} case${crashed.length === 1 ? "" : "s"} crashed (a panic, an abort or an unclean exit${args.noExpectations ? "" : ": always a failure"}):`);
    for (const n of crashed) line(`  ${n}: ${short(verdicts[n].message)}`);
  }
  const webRefused = names.filter((n) => verdicts[n].category === "web-refused");
  if (webRefused.length) {
    line(`onnx node tests: ${webRefused.length} converted graph${webRefused.length === 1 ? " was" : "s were"} refused by our own writers or webnn-weights web${args.noExpectations ? "" : " (converter bugs)"}: ${webRefused.slice(0, 8).join(", ")}${webRefused.length > 8 ? ", ..." : ""}`);
  }
  const summary = CATEGORIES.filter((c) => counts[c] > 0 || ["computed", "wrong", "web-refused", "crashed"].includes(c)).map((c) => `${counts[c]} ${c}`);
  line(`onnx node tests: ${names.length} cases: ${summary.join(", ")} (${seconds.toFixed(1)} s, ${browserSeconds.toFixed(1)} s of it in the browser)`);
  return status;
}

main().then(
  (status) => process.exit(status),
  (e) => {
    process.stderr.write(`node-tests.mjs: ${e?.stack ?? e}\n`);
    process.exit(2);
  },
);
