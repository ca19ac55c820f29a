// The harness itself: the static server (MIME types, streaming, 404) and runPage (a WebNN add
// graph in Chromium, a page that reports an error).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve, runPage, withBrowser, PageError, CHROMIUM_ARGS, processTree } from "../harness.mjs";
import { spawn } from "node:child_process";

const pages = path.join(path.dirname(fileURLToPath(import.meta.url)), "pages");

test("serve: MIME types, a streamed large file, 404", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "webnn-serve-"));
  const big = Buffer.alloc(9 * 1024 * 1024 + 3);
  for (let i = 0; i < big.length; i += 4099) big[i] = i & 0xff;
  const files = {
    "a.js": "text/javascript", "a.mjs": "text/javascript", "a.wasm": "application/wasm",
    "a.json": "application/json", "a.html": "text/html", "a.weights": "application/octet-stream",
    "a.bin": "application/octet-stream",
  };
  for (const f of Object.keys(files)) await fs.writeFile(path.join(dir, f), "x");
  await fs.mkdir(path.join(dir, "sub"));
  await fs.writeFile(path.join(dir, "sub", "big.weights"), big);
  const server = await serve(dir);
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    for (const [f, type] of Object.entries(files)) {
      const r = await fetch(server.url + f);
      assert.equal(r.status, 200, f);
      assert.equal(r.headers.get("content-type").split(";")[0], type, f);
    }
    const r = await fetch(server.url + "sub/big.weights");
    assert.equal(Number(r.headers.get("content-length")), big.length);
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(big));
    for (const missing of ["nope.js", "sub/", "sub", "../" + path.basename(dir) + "/a.js/x"]) {
      assert.equal((await fetch(server.url + missing)).status, 404, missing);
    }
  } finally {
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("runPage: add(x, constant) in Chromium's WebNN; a page error is thrown", async () => {
  const server = await serve(pages);
  try {
    await withBrowser(async (browser) => {
      const r = await runPage(browser, server.url + "add.html", { quiet: true });
      assert.deepEqual(r.y, [11, 22, 33, 44]);
      assert.match(r.userAgent, /HeadlessChrome\/153\./);
      await assert.rejects(runPage(browser, server.url + "fails.html", { quiet: true }), (e) => {
        assert.ok(e instanceof PageError);
        assert.equal(e.message, "deliberate failure from fails.html");
        return true;
      });
      await assert.rejects(runPage(browser, server.url + "missing.html", { quiet: true }), /HTTP 404/);
    });
  } finally {
    await server.close();
  }
});

test("withBrowser closes the browser when fn throws", async () => {
  let seen;
  await assert.rejects(
    withBrowser(async (browser) => {
      seen = browser;
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.equal(seen.connected, false);
});

test("a second browser of the same process has WebNN too (the flags are not consumed)", async () => {
  const flags = [...CHROMIUM_ARGS];
  const server = await serve(pages);
  try {
    for (let i = 0; i < 2; i++) {
      const r = await withBrowser((browser) => runPage(browser, server.url + "add.html", { quiet: true }));
      assert.deepEqual(r.y, [11, 22, 33, 44], `browser ${i + 1}`);
    }
    assert.deepEqual(CHROMIUM_ARGS, flags);
  } finally {
    await server.close();
  }
});

test("serve: Range (206, suffix, 416, several ranges whole), bytes counted, a cut response, Range ignored", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "webnn-serve-"));
  const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => i & 0xff));
  await fs.writeFile(path.join(dir, "d.bin"), data);
  const server = await serve(dir);
  const get = (headers = {}) => fetch(server.url + "d.bin", { headers });
  try {
    let r = await get({ Range: "bytes=10-19" });
    assert.equal(r.status, 206);
    assert.equal(r.headers.get("content-range"), "bytes 10-19/1000");
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(data.subarray(10, 20)));
    r = await get({ Range: "bytes=990-" });
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(data.subarray(990)));
    r = await get({ Range: "bytes=-5" });
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(data.subarray(995)));
    r = await get({ Range: "bytes=1000-" });
    assert.equal(r.status, 416);
    assert.equal(r.headers.get("content-range"), "bytes */1000");
    await r.arrayBuffer();
    r = await get({ Range: "bytes=0-1,5-6" });
    assert.equal(r.status, 200);
    assert.equal((await r.arrayBuffer()).byteLength, 1000);
    assert.equal(server.bytesServed("/d.bin"), 10 + 10 + 5 + 1000);
    assert.deepEqual(server.bytesServedByPath(), { "/d.bin": 1025 });
    assert.deepEqual(server.requestsOf("/d.bin").map((q) => q.status), [206, 206, 206, 416, 200]);
    assert.equal(r.headers.get("cache-control"), "no-store");
    assert.ok(!Number.isNaN(Date.parse(r.headers.get("last-modified"))));
    server.resetCounts();
    server.cutAfter("/d.bin", 300);
    await assert.rejects(get().then((res) => res.arrayBuffer()));
    assert.equal(server.bytesServed("/d.bin"), 300);
    r = await get();
    assert.equal((await r.arrayBuffer()).byteLength, 1000, "a cut applies to one response");
    server.ignoreRange(true);
    r = await get({ Range: "bytes=10-19" });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("accept-ranges"), null);
    assert.equal((await r.arrayBuffer()).byteLength, 1000);
  } finally {
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test("serve: the cache-control header is the caller's, isolation headers when asked; processTree: this process and its children", async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "webnn-serve-"));
  await fs.writeFile(path.join(dir, "m.onnx"), "x");
  const server = await serve(dir, { cacheControl: "max-age=60" });
  try {
    const r = await fetch(server.url + "m.onnx");
    assert.equal(r.headers.get("cache-control"), "max-age=60");
    assert.equal(r.headers.get("content-type"), "application/octet-stream");
    assert.equal(r.headers.get("cross-origin-opener-policy"), null, "not isolated unless asked");
    await r.arrayBuffer();
  } finally {
    await server.close();
  }
  const isolated = await serve(dir, { isolated: true });
  try {
    const r = await fetch(isolated.url + "m.onnx");
    assert.equal(r.headers.get("cache-control"), "no-store");
    assert.equal(r.headers.get("cross-origin-opener-policy"), "same-origin");
    assert.equal(r.headers.get("cross-origin-embedder-policy"), "require-corp");
    await r.arrayBuffer();
  } finally {
    await isolated.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 10000)"]);
  try {
    await new Promise((resolve) => child.once("spawn", resolve));
    const tree = processTree(process.pid);
    assert.equal(tree[0], process.pid);
    assert.ok(tree.includes(child.pid), `${child.pid} in ${tree}`);
    assert.deepEqual(processTree(child.pid), [child.pid]);
  } finally {
    child.kill();
  }
});
