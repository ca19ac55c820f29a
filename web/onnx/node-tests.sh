#!/usr/bin/env bash
# The ONNX node tests (onnx 1.22.0, 1,765 cases) converted by weights-onnx and computed in
# headless Chromium's WebNN; every case's category is checked against web/onnx/expectations.json.
#
#   bash web/onnx/node-tests.sh                      every case; fails (listing them) when a case
#                                                    changed category
#   bash web/onnx/node-tests.sh 'test_add*' test_relu   only the cases matching these shell globs
#   bash web/onnx/node-tests.sh --update [GLOB...]   record this run's categories instead
#   bash web/onnx/node-tests.sh --no-expectations [GLOB...]   only classify (exit status 0)
#
# Another converter, from another worktree: WEBNN_ONNX_ROOT names the checkout whose
# weights-onnx (and runtime and tools) converts the cases; the example, the browser part and the
# expectations file are this checkout's. E.g. from an operator's worktree:
#
#   WEBNN_ONNX_ROOT=/work/wt/shape bash /work/main/web/onnx/node-tests.sh 'test_reshape*'
#
# (this checkout's weights-onnx/examples/node_cases.rs is built against that checkout's crates,
# as a scratch package in $WEBNN_ONNX_ROOT/target/webnn-node-cases: the worktree needs no merge).
# Categories: see web/onnx/node-tests.mjs.
#
# Environment:
#   WEBNN_ONNX_ROOT     the checkout to build the converter from (default: this one)
#   WEBNN_ONNX_CACHE    where the onnx wheel's node tests are kept (default ~/.cache/webnn-weights)
#   WEBNN_ONNX_REPORT   a path: every case's verdict as JSON
#   WEBNN_ONNX_CASES    keep the prepared cases in this folder (default: a temporary one, removed)
#   WEBNN_ONNX_LANES    browsers computing cases at once (default 2)
#   WEBNN_WEIGHTS_BIN   the CLI (default: this checkout's target/debug/webnn-weights, built here)
#   WEBNN_ONNX_WEBNN_GRAPH  a path: webnn-graph's CLI converts the cases (its convert-onnx)
#                       instead of weights-onnx; see web/onnx/compare-webnn-graph.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
web=$(dirname "$here")
root=$(dirname "$web")
onnx_root=$(cd "${WEBNN_ONNX_ROOT:-$root}" && pwd)
start=$(date +%s)

update=()
globs=()
for a in "$@"; do
  case $a in
    --update) update=(--update) ;;
    --no-expectations) update=(--no-expectations) ;;
    -h|--help) sed -n '2,29p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "node-tests.sh: unknown option $a (see --help)" >&2; exit 2 ;;
    *) globs+=("$a") ;;
  esac
done

node_dir=$(bash "$here/fetch-node-tests.sh")
bash "$web/setup.sh" >/dev/null
(cd "$root" && cargo build -q -p webnn-weights-cli)
export WEBNN_WEIGHTS_BIN=${WEBNN_WEIGHTS_BIN:-"${CARGO_TARGET_DIR:-$root/target}/debug/webnn-weights"}

# the example that prepares the cases, built against $onnx_root's converter; unoptimized: it
# prepares every case in 11 s (4 s optimized), and `cargo test --workspace` has built it already
# where a release build would add minutes
target=${CARGO_TARGET_DIR:-$onnx_root/target}
if [[ $onnx_root == "$root" ]]; then
  (cd "$onnx_root" && cargo build -q -p webnn-weights-onnx --example node_cases)
  example=$target/debug/examples/node_cases
else
  # this checkout's example as a bin of a scratch package on $onnx_root's crates (its own
  # [workspace]; $onnx_root's lock file and target folder, so its dependencies are reused)
  scratch=$onnx_root/target/webnn-node-cases
  mkdir -p "$scratch"
  cat > "$scratch/Cargo.toml.new" <<EOF
[package]
name = "webnn-node-cases"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "node_cases"
path = "$root/weights-onnx/examples/node_cases.rs"

[dependencies]
webnn-weights-onnx = { path = "$onnx_root/weights-onnx" }
webnn-weights-runtime = { path = "$onnx_root/weights-runtime", features = ["text"] }
webnn-weights-tools = { path = "$onnx_root/weights-tools" }
serde_json = { version = "1", features = ["float_roundtrip"] }
prost = { version = "0.14", default-features = false, features = ["std", "derive"] }

[workspace]
EOF
  mv "$scratch/Cargo.toml.new" "$scratch/Cargo.toml"
  [[ -f $scratch/Cargo.lock ]] || cp "$onnx_root/Cargo.lock" "$scratch/Cargo.lock"
  echo "node-tests.sh: building $root's node_cases against $onnx_root/weights-onnx" >&2
  CARGO_TARGET_DIR=$target cargo build -q --manifest-path "$scratch/Cargo.toml"
  example=$target/debug/node_cases
fi

if [[ -n ${WEBNN_ONNX_CASES:-} ]]; then
  cases=$WEBNN_ONNX_CASES
  mkdir -p "$cases"
else
  cases=$(mktemp -d "${TMPDIR:-/tmp}/webnn-onnx-XXXXXX")
  trap 'rm -rf "$cases"' EXIT
fi
"$example" "$node_dir" "$cases" "${globs[@]}"

status=0
(cd "$root" && node web/onnx/node-tests.mjs "$cases" "${update[@]}" "${globs[@]}") || status=$?
echo "web/onnx/node-tests.sh: $( ((status == 0)) && echo passed || echo FAILED) in $(( $(date +%s) - start )) s (converter: ${WEBNN_ONNX_WEBNN_GRAPH:-$onnx_root})" >&2
exit "$status"
