#!/usr/bin/env bash
# The ONNX node tests (onnx 1.22.0, 1,765 cases) through two converters in one run, side by
# side: weights-onnx (`webnn-weights convert-onnx`'s converter, as web/onnx/node-tests.sh runs
# it) and webnn-graph 0.4.0's `convert-onnx`. Both go through the same harness: each case
# prepared by weights-onnx/examples/node_cases.rs (with WEBNN_ONNX_WEBNN_GRAPH set, its child
# runs `webnn-graph convert-onnx --input model.onnx --output C.webnn --weights C.weights
# --manifest C.manifest.json` instead of our converter), written by `webnn-weights web`, computed
# in headless Chromium by web/onnx/node-tests.mjs and compared with the test's outputs (the same
# tolerances). Prints the count of each category per converter.
#
#   bash web/onnx/compare-webnn-graph.sh                  every case
#   bash web/onnx/compare-webnn-graph.sh 'test_add*'      only the cases matching these globs
#
# For webnn-graph: its non-zero exit is `refused` (its message), a panic (exit status 101), a
# signal or a hang `crashed`; a graph our `.webnn` parser or `webnn-weights web` refuses is
# `web-refused` ("not WebNN": an operation or option WebNN does not have); graph inputs and
# outputs are matched with the test's by name. It has no way to fix an input as a constant, so
# it never gets `computed-with-constant-inputs`. Categories: see web/onnx/node-tests.mjs.
#
# Only classifies (node-tests.sh --no-expectations): the exit status is 0 whatever the
# categories, non-zero when the harness itself failed. Installs webnn-graph 0.4.0 when missing,
# as bench/onnx.sh does (protoc from apt; `cargo install`, nightly when there is one) into
# target/bench-onnx/webnn-graph, the folder bench/onnx.sh uses.
#
# Environment:
#   WEBNN_ONNX_REPORT   a path: both runs' verdicts of every case, side by side, as JSON
#   WEBNN_ONNX_CASES    keep the prepared cases in DIR/webnn-weights and DIR/webnn-graph
#   WEBNN_GRAPH_BIN     webnn-graph's CLI (default: target/bench-onnx/webnn-graph/bin/webnn-graph,
#                       installed there when missing)
#   WEBNN_ONNX_LOGS     where each run's per-case lines go (default target/compare-webnn-graph)
#   and those of node-tests.sh (WEBNN_ONNX_CACHE, WEBNN_ONNX_LANES, WEBNN_WEIGHTS_BIN, ...)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$(dirname "$here")")
start=$(date +%s)

for a in "$@"; do
  case $a in
    -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "compare-webnn-graph.sh: unknown option $a (see --help)" >&2; exit 2 ;;
  esac
done

# webnn-graph 0.4.0, as bench/onnx.sh installs it
wg_version=0.4.0
if [[ -n ${WEBNN_GRAPH_BIN:-} ]]; then
  wg=$WEBNN_GRAPH_BIN
else
  wg_root=$root/target/bench-onnx/webnn-graph
  wg=$wg_root/bin/webnn-graph
  if [[ ! -x $wg ]]; then
    if ! command -v protoc >/dev/null; then
      apt-get update -qq && apt-get install -y -qq protobuf-compiler >/dev/null
    fi
    echo "compare-webnn-graph.sh: installing webnn-graph $wg_version into $wg_root" >&2
    if cargo +nightly --version >/dev/null 2>&1; then
      CARGO_TARGET_DIR=$root/target/bench-onnx/webnn-graph-build cargo +nightly install -q \
        webnn-graph --version "$wg_version" --locked --root "$wg_root"
    else
      CARGO_TARGET_DIR=$root/target/bench-onnx/webnn-graph-build cargo install -q \
        webnn-graph --version "$wg_version" --locked --ignore-rust-version --root "$wg_root"
    fi
  fi
fi
wg=$(cd "$(dirname "$wg")" && pwd)/$(basename "$wg")
[[ -x $wg ]] || { echo "compare-webnn-graph.sh: $wg is not an executable" >&2; exit 1; }

logs=${WEBNN_ONNX_LOGS:-$root/target/compare-webnn-graph}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/webnn-compare-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# one run of node-tests.sh, classifying only: run NAME [env assignments...]
run() {
  local name=$1
  shift
  local cases=()
  [[ -n ${WEBNN_ONNX_CASES:-} ]] && cases=("WEBNN_ONNX_CASES=$WEBNN_ONNX_CASES/$name")
  local t0
  t0=$(date +%s)
  echo "compare-webnn-graph.sh: $name: the node tests (per-case lines in $logs/$name.log)" >&2
  local status=0
  env "${cases[@]}" "$@" WEBNN_ONNX_REPORT="$tmp/$name.json" \
    bash "$here/node-tests.sh" --no-expectations "${globs[@]}" >"$logs/$name.log" 2>&1 || status=$?
  if ((status != 0)) || [[ ! -s $tmp/$name.json ]]; then
    echo "compare-webnn-graph.sh: $name: node-tests.sh failed (exit status $status); the end of $logs/$name.log:" >&2
    tail -n 20 "$logs/$name.log" >&2
    exit 1
  fi
  echo "compare-webnn-graph.sh: $name: $(grep '^onnx node tests: [0-9]* cases' "$logs/$name.log" | tail -1) ($(( $(date +%s) - t0 )) s)" >&2
}

globs=("$@")
run webnn-weights -u WEBNN_ONNX_WEBNN_GRAPH
run webnn-graph "WEBNN_ONNX_WEBNN_GRAPH=$wg"

node - "$tmp/webnn-weights.json" "$tmp/webnn-graph.json" "$here/expectations.json" "$wg_version" "$(( $(date +%s) - start ))" "$#" <<'EOF'
const fs = require("fs");
const [ours, theirs, expectationsPath, version, seconds, globCount] = process.argv.slice(2);
const a = JSON.parse(fs.readFileSync(ours, "utf8"));
const b = JSON.parse(fs.readFileSync(theirs, "utf8"));
const wgName = `webnn-graph ${version}`;
const rows = [
  ["computed", "computed"],
  ["computed-with-constant-inputs", "computed with constant inputs"],
  ["wrong", "wrong"],
  ["browser-unsupported", "browser-unsupported"],
  ["web-refused", "web-refused (not WebNN)"],
  ["mismatch", "mismatch"],
  ["refused", "refused"],
  ["unreadable", "unreadable"],
  ["timed-out", "timed-out"],
  ["crashed", "crashed (panic)"],
];
const names = [...new Set([...Object.keys(a.cases), ...Object.keys(b.cases)])].sort();
const table = [["category", "webnn-weights", wgName]];
for (const [key, label] of rows) table.push([label, String(a.counts[key] ?? 0), String(b.counts[key] ?? 0)]);
table.push(["total", String(Object.keys(a.cases).length), String(Object.keys(b.cases).length)]);
const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => r[i].length)));
const fmt = (r) => `${r[0].padEnd(widths[0])} | ${r[1].padStart(widths[1])} | ${r[2].padStart(widths[2])}`;
const out = [fmt(table[0]), `${"-".repeat(widths[0])}-|-${"-".repeat(widths[1])}-|-${"-".repeat(widths[2])}`];
for (const r of table.slice(1)) out.push(fmt(r));

const computed = (v) => v?.category?.startsWith("computed");
let both = 0, onlyOurs = 0, onlyTheirs = 0;
for (const n of names) {
  const x = computed(a.cases[n]), y = computed(b.cases[n]);
  if (x && y) both++;
  else if (x) onlyOurs++;
  else if (y) onlyTheirs++;
}
out.push("");
out.push(`computed by both: ${both}; by webnn-weights only: ${onlyOurs}; by ${wgName} only: ${onlyTheirs}`);
if (Number(globCount) === 0 && fs.existsSync(expectationsPath)) {
  const exp = JSON.parse(fs.readFileSync(expectationsPath, "utf8"));
  const changed = names.filter((n) => a.cases[n] && exp[n]?.category !== a.cases[n].category);
  out.push(`webnn-weights: ${changed.length} case${changed.length === 1 ? "" : "s"} in another category than web/onnx/expectations.json records${changed.length ? ` (${changed.slice(0, 5).join(", ")}${changed.length > 5 ? ", ..." : ""})` : ""}`);
}
out.push(`(${seconds} s: webnn-weights ${a.seconds.toFixed(0)} s, ${wgName} ${b.seconds.toFixed(0)} s in node-tests.mjs)`);
process.stdout.write(`${out.join("\n")}\n`);

if (process.env.WEBNN_ONNX_REPORT) {
  const report = {
    converters: {
      "webnn-weights": { counts: a.counts, seconds: a.seconds },
      [wgName]: { counts: b.counts, seconds: b.seconds },
    },
    computed: { both, webnnWeightsOnly: onlyOurs, webnnGraphOnly: onlyTheirs },
    cases: Object.fromEntries(names.map((n) => [n, { "webnn-weights": a.cases[n], [wgName]: b.cases[n] }])),
  };
  fs.writeFileSync(process.env.WEBNN_ONNX_REPORT, `${JSON.stringify(report, null, 1)}\n`);
}
EOF
