#!/usr/bin/env bash
# Fetches the ONNX node tests (onnx/backend/test/data/node: 1,765 folders, each a model.onnx and
# test_data_set_0/{input,output}_N.pb) of the onnx 1.22.0 wheel from PyPI, the last release that
# ships them as files, into ${WEBNN_ONNX_CACHE:-$HOME/.cache/webnn-weights}/onnx-1.22.0/node, and
# prints that folder. Idempotent: once extracted and verified, a second run only prints the path.
#
# The wheel is pinned (CPython 3.11, manylinux_2_28 x86_64, whatever this machine is) and checked
# by its SHA-256; the node folder is only ever used after the whole extraction succeeded.
set -euo pipefail

version=1.22.0
wheel=onnx-1.22.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
wheel_sha256=1d0a2bdb15eb2b3cb65c438f3423d9620d14fdce32f92380e6bb1b2e09568ef5
cases=1765

cache=${WEBNN_ONNX_CACHE:-$HOME/.cache/webnn-weights}/onnx-$version
node=$cache/node
stamp=$cache/.extracted-$wheel_sha256

if [[ -f $stamp && -d $node ]]; then
  echo "$node"
  exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.fetch-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [[ -f $cache/$wheel ]] && echo "$wheel_sha256  $cache/$wheel" | sha256sum -c --quiet - 2>/dev/null; then
  cp "$cache/$wheel" "$tmp/$wheel"
else
  echo "fetch-node-tests.sh: downloading onnx==$version ($wheel) from PyPI" >&2
  python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
    -d "$tmp" "onnx==$version" >&2
fi
[[ -f $tmp/$wheel ]] || { echo "fetch-node-tests.sh: pip did not download $wheel (got: $(ls "$tmp"))" >&2; exit 1; }
if ! echo "$wheel_sha256  $tmp/$wheel" | sha256sum -c --quiet - >/dev/null 2>&1; then
  echo "fetch-node-tests.sh: $wheel has SHA-256 $(sha256sum "$tmp/$wheel" | cut -d' ' -f1), expected $wheel_sha256" >&2
  exit 1
fi

python3 - "$tmp/$wheel" "$tmp/x" "$cases" <<'PY'
import sys, zipfile
wheel, out, cases = sys.argv[1], sys.argv[2], int(sys.argv[3])
prefix = "onnx/backend/test/data/node/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix)]
    found = {n[len(prefix):].split("/")[0] for n in names if "/" in n[len(prefix):]}
    if len(found) != cases:
        sys.exit(f"fetch-node-tests.sh: the wheel has {len(found)} node test folders, expected {cases}")
    for n in names:
        z.extract(n, out)
PY

cp "$tmp/$wheel" "$cache/$wheel.part" && mv "$cache/$wheel.part" "$cache/$wheel"
rm -rf "$node"
mv "$tmp/x/onnx/backend/test/data/node" "$node"
rm -f "$cache"/.extracted-*
touch "$stamp"
echo "fetch-node-tests.sh: $cases node tests in $node" >&2
echo "$node"
