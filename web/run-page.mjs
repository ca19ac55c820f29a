#!/usr/bin/env node
// Usage: node web/run-page.mjs DIR PAGE [--timeout MS]
// Serves DIR on 127.0.0.1, opens PAGE (a path inside DIR, e.g. "index.html" or "t/page.html") in
// headless Chromium with WebNN, waits for window.__done and prints window.__result as JSON on
// stdout. The page's console goes to stderr. Exit status 1 on a page error or a timeout, 2 on
// wrong usage.
import { serve, withBrowser, runPage } from "./harness.mjs";

const args = process.argv.slice(2);
let timeoutMs = 60_000;
const t = args.indexOf("--timeout");
if (t >= 0) {
  timeoutMs = Number(args[t + 1]);
  args.splice(t, 2);
}
if (args.length !== 2 || !Number.isFinite(timeoutMs)) {
  process.stderr.write("usage: node run-page.mjs DIR PAGE [--timeout MS]\n");
  process.exit(2);
}
const [dir, page] = args;
const server = await serve(dir);
let status = 0;
try {
  const result = await withBrowser((browser) =>
    runPage(browser, new URL(page.replace(/^\/+/, ""), server.url).href, { timeoutMs }),
  );
  process.stdout.write(JSON.stringify(result) + "\n");
} catch (e) {
  process.stderr.write(`error: ${e?.message ?? e}\n`);
  status = 1;
} finally {
  await server.close();
}
process.exit(status);
