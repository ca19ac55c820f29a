// Headless Chromium (with WebNN) for tests: launch it, serve a folder, run a page.
//
// The browser is the one npm's @sparticuz/chromium ships (Chromium 153, WebNN on the CPU through
// LiteRT/XNNPACK). Debian's chromium has no WebNN. `chromium.executablePath()` extracts the
// browser, its fonts and swiftshader into os.tmpdir() (/tmp/chromium); without swiftshader's
// libraries `navigator.ml.createContext` fails with "WebNN is disabled".
//
// A page reports through three globals: it sets `window.__result` (anything JSON can carry) or
// `window.__error` (a string), then `window.__done = true`.

import chromium from "@sparticuz/chromium";
import puppeteer from "puppeteer-core";
import fs from "node:fs";
import fsp from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--enable-features=WebMachineLearningNeuralNetwork",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** The browser's path (extracts it on first use). */
export async function chromiumPath() {
  return chromium.executablePath();
}

/**
 * Launches the browser with a fresh user-data-dir, calls `fn(browser)` and always closes the
 * browser and removes the folder, also when `fn` throws. Resolves to what `fn` resolves to.
 */
export async function withBrowser(fn) {
  const executablePath = await chromiumPath();
  const userDataDir = await fsp.mkdtemp(path.join(os.tmpdir(), "webnn-harness-profile-"));
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath,
      headless: "shell",
      userDataDir,
      // A copy: puppeteer moves --enable-features out of the array it is given, so a second
      // launch with the same array would start without WebNN.
      args: [...CHROMIUM_ARGS],
      protocolTimeout: 600_000,
    });
    return await fn(browser);
  } finally {
    if (browser) await browser.close().catch(() => {});
    await fsp.rm(userDataDir, { recursive: true, force: true }).catch(() => {});
  }
}

export const MIME_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".weights": "application/octet-stream",
  ".bin": "application/octet-stream",
  ".safetensors": "application/octet-stream",
  ".onnx": "application/octet-stream",
  ".css": "text/css; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".webnn": "text/plain; charset=utf-8",
};

// The headers of a cross-origin isolated page (crossOriginIsolated, SharedArrayBuffer).
const ISOLATION_HEADERS = {
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
};

/**
 * A static HTTP server for `dir` on 127.0.0.1 (a free port), every response with
 * `cache-control: <cacheControl>` (default `no-store`) and `last-modified`, and with `isolated`
 * the two headers that make its pages cross-origin isolated (SharedArrayBuffer). Files are streamed
 * (fs.createReadStream, so large blobs never sit in memory); a missing file, a folder or a path
 * outside `dir` is a 404. A single `Range: bytes=a-b` (or `a-`, or `-n`) is answered with a 206
 * and its Content-Range (416 past the end); other Range headers get the whole file (200).
 * Resolves to {url, close, ...}: `url` ends with "/", `close()` resolves when the server
 * stopped, and for tests of downloads:
 *   bytesServed(pathname)      body bytes written for that path (e.g. "/v1/model.weights")
 *   bytesServedByPath()        {pathname: body bytes} of every path served since the last reset
 *   requestsOf(pathname)       [{range, status}] of every GET of that path, in order
 *   resetCounts()              forgets both
 *   cutAfter(pathname, bytes)  the next response for that path sends `bytes` body bytes, then
 *                              the connection is closed: the body ends short of its
 *                              Content-Length (once per call)
 *   ignoreRange(on)            while on, Range headers are ignored (200, the whole file)
 */
export async function serve(dir, { cacheControl = "no-store", isolated = false } = {}) {
  const root = path.resolve(dir);
  const served = new Map();
  const requests = new Map();
  const cuts = new Map();
  let ignoringRange = false;
  const server = http.createServer(async (req, res) => {
    const fail = (code, text, headers = {}) => {
      res.writeHead(code, { "content-type": "text/plain; charset=utf-8", ...headers });
      res.end(text);
    };
    try {
      if (req.method !== "GET" && req.method !== "HEAD") return fail(405, "method not allowed\n");
      const pathname = decodeURIComponent(new URL(req.url, "http://127.0.0.1").pathname);
      let file = path.join(root, pathname);
      if (file !== root && !file.startsWith(root + path.sep)) return fail(404, "not found\n");
      let st = await fsp.stat(file).catch(() => null);
      if (st && st.isDirectory()) {
        file = path.join(file, "index.html");
        st = await fsp.stat(file).catch(() => null);
      }
      if (!st || !st.isFile()) return fail(404, `not found: ${pathname}\n`);
      const type = MIME_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream";
      const headers = { "content-type": type, "cache-control": cacheControl, "last-modified": st.mtime.toUTCString() };
      if (isolated) Object.assign(headers, ISOLATION_HEADERS);
      let start = 0;
      let end = st.size; // exclusive
      let status = 200;
      const range = ignoringRange ? undefined : req.headers.range;
      const single = range === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(range.trim());
      if (!ignoringRange) headers["accept-ranges"] = "bytes";
      if (single && (single[1] !== "" || single[2] !== "")) {
        if (single[1] === "") {
          start = Math.max(0, st.size - Number(single[2]));
        } else {
          start = Number(single[1]);
          if (single[2] !== "") end = Math.min(st.size, Number(single[2]) + 1);
        }
        if (start >= st.size || start >= end) {
          if (req.method === "GET") {
            if (!requests.has(pathname)) requests.set(pathname, []);
            requests.get(pathname).push({ range: req.headers.range ?? null, status: 416 });
          }
          return fail(416, "range not satisfiable\n", { "content-range": `bytes */${st.size}` });
        }
        status = 206;
        headers["content-range"] = `bytes ${start}-${end - 1}/${st.size}`;
      }
      headers["content-length"] = end - start;
      res.writeHead(status, headers);
      if (req.method === "HEAD" || end === start) return res.end();
      if (!requests.has(pathname)) requests.set(pathname, []);
      requests.get(pathname).push({ range: req.headers.range ?? null, status });
      let budget = cuts.get(pathname);
      cuts.delete(pathname);
      const stream = fs.createReadStream(file, { start, end: end - 1 });
      const count = (n) => served.set(pathname, (served.get(pathname) ?? 0) + n);
      stream.on("error", (e) => res.destroy(e));
      stream.on("data", (chunk) => {
        if (budget !== undefined && chunk.length >= budget) {
          const part = chunk.subarray(0, budget);
          count(part.length);
          stream.destroy();
          // the cut: what was written reaches the client, then the connection is closed (FIN,
          // so the client reads every byte sent before it sees the body end short)
          res.write(part, () => res.socket?.destroySoon());
          return;
        }
        if (budget !== undefined) budget -= chunk.length;
        count(chunk.length);
        if (!res.write(chunk)) {
          stream.pause();
          res.once("drain", () => stream.resume());
        }
      });
      stream.on("end", () => res.end());
      res.on("close", () => stream.destroy());
    } catch (e) {
      fail(500, `${e}\n`);
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
    bytesServed: (pathname) => served.get(pathname) ?? 0,
    bytesServedByPath: () => Object.fromEntries(served),
    requestsOf: (pathname) => [...(requests.get(pathname) ?? [])],
    resetCounts: () => {
      served.clear();
      requests.clear();
    },
    cutAfter: (pathname, bytes) => {
      if (!Number.isSafeInteger(bytes) || bytes < 0) throw new TypeError(`cutAfter: ${bytes} is not a byte count`);
      cuts.set(pathname, bytes);
    },
    ignoreRange: (on) => {
      ignoringRange = Boolean(on);
    },
  };
}

/**
 * The process `root` (a browser's, `browser.process().pid`) and all its descendants, read from
 * /proc (Linux): parent before children.
 */
export function processTree(root) {
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // the process ended while /proc was read
    }
  }
  const out = [];
  const walk = (pid) => {
    out.push(pid);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(root);
  return out;
}

/**
 * Opens `url` in a new tab, forwards its console messages and uncaught errors to stderr (each
 * line prefixed with `prefix`, default "[page] "), waits until `window.__done === true` and
 * resolves to `window.__result`; rejects with the page's `window.__error` text, or on a timeout
 * (default 60 s). The tab is always closed.
 */
export async function runPage(browser, url, { timeoutMs = 60_000, prefix = "[page] ", quiet = false } = {}) {
  const page = await browser.newPage();
  const log = (text) => {
    if (!quiet) process.stderr.write(`${prefix}${text}\n`);
  };
  page.on("console", (m) => log(`${m.type() === "log" ? "" : m.type() + ": "}${m.text()}`));
  page.on("pageerror", (e) => log(`uncaught: ${e.message ?? e}`));
  page.on("requestfailed", (r) => log(`request failed: ${r.url()} ${r.failure()?.errorText ?? ""}`));
  page.on("response", (r) => {
    if (r.status() >= 400) log(`HTTP ${r.status()}: ${r.url()}`);
  });
  try {
    const response = await page.goto(url, { waitUntil: "load", timeout: timeoutMs });
    if (response && response.status() >= 400) throw new Error(`page ${url}: HTTP ${response.status()}`);
    try {
      await page.waitForFunction("window.__done === true", { timeout: timeoutMs, polling: 50 });
    } catch (e) {
      if (e?.name === "TimeoutError") throw new Error(`page ${url} did not finish within ${timeoutMs} ms`);
      throw e;
    }
    const { error, result } = await page.evaluate(() => ({
      error: window.__error === undefined || window.__error === null ? null : String(window.__error),
      result: window.__result === undefined ? null : window.__result,
    }));
    if (error !== null) throw new PageError(error);
    return result;
  } finally {
    await page.close().catch(() => {});
  }
}

/** The error `runPage` throws when the page set `window.__error`; `message` is the page's text. */
export class PageError extends Error {
  constructor(message) {
    super(message);
    this.name = "PageError";
  }
}
