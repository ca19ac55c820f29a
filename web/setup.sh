#!/usr/bin/env bash
# Installs the browser harness's npm packages (web/node_modules) from web/package-lock.json when
# they are missing or stale, extracts the Chromium of @sparticuz/chromium and prints its path.
# Idempotent: a second run does nothing but print the path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

command -v node >/dev/null || { echo "setup.sh: node is not installed (Node 20 or later)" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup.sh: npm is not installed" >&2; exit 1; }

stamp=node_modules/.webnn-lock.sha256
want=$(sha256sum package-lock.json package.json | sha256sum | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" \
      || ! -d node_modules/@sparticuz/chromium || ! -d node_modules/puppeteer-core ]]; then
  echo "setup.sh: npm ci in $(pwd)" >&2
  # @sparticuz/chromium 153 declares node >= 22; it works on Node 20 (engine warnings only)
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

# extracts chromium.br, its fonts and swiftshader into os.tmpdir() on first use
node --input-type=module -e '
import chromium from "@sparticuz/chromium";
console.log(await chromium.executablePath());
'
