#!/usr/bin/env bash
# The browser tests from a fresh machine: numpy, the npm packages and Chromium (web/setup.sh),
# the CLI, the op suite's cases (into a temporary folder), then node's test runner over
# web/tests/ (the harness's self-test, the op suite and load()'s cache, resume and page-weights
# scenarios, which print the bytes served). Exit status non-zero on any failure.
#
#   bash web/test.sh                    everything
#   WEBNN_OPS_ONLY=conv2d,gru bash web/test.sh   only these cases or ops of the suite
set -euo pipefail
web=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$web")
start=$(date +%s)

python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet numpy \
  || python3 -m pip install --quiet --break-system-packages numpy
bash "$web/setup.sh"
(cd "$root" && cargo build -q -p webnn-weights-cli)
export WEBNN_WEIGHTS_BIN=${WEBNN_WEIGHTS_BIN:-"${CARGO_TARGET_DIR:-$root/target}/debug/webnn-weights"}

cases=$(mktemp -d "${TMPDIR:-/tmp}/webnn-ops-XXXXXX")
trap 'rm -rf "$cases"' EXIT
python3 "$web/ops/make_cases.py" "$cases"
export WEBNN_OPS_CASES=$cases

status=0
(cd "$root" && node --test web/tests/) || status=$?
echo "web/test.sh: $( ((status == 0)) && echo passed || echo FAILED) in $(( $(date +%s) - start )) s" >&2
exit "$status"
