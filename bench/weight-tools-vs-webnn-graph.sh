#!/bin/sh
# The WGWT blob tools of webnn-weights against webnn-graph 0.4.0's, side by side:
# 1. byte equality of every output on generated inputs (CASES, default 200);
# 2. time and peak memory of pack/unpack on a 1 GiB blob (needs /usr/bin/time, ~3 GiB in
#    WEBNN_BENCH_DIR, default a temporary folder), when BIG=1.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
(cd "$root" && cargo build --release -p webnn-weights-cli --quiet)
cli="$root/target/release/webnn-weights"
cd "$here/compare-weight-tools"
cargo build --release --ignore-rust-version --quiet
cmp_bin="$here/compare-weight-tools/target/release/compare-weight-tools"
"$cmp_bin" check "$cli" "${CASES:-200}"
[ "${BIG:-0}" = 1 ] || exit 0
dir=${WEBNN_BENCH_DIR:-$(mktemp -d)}
mkdir -p "$dir/t"
python3 - "$dir/t" <<'PY'
import json, os, sys
d = sys.argv[1]
for i in range(4):
    block = os.urandom(1 << 20)
    with open(f"{d}/w{i}.bin", "wb") as f:
        for _ in range(256):
            f.write(block)
    json.dump({"dataType": "float32", "shape": [1 << 26], "byteOffset": 0, "byteLength": 0,
               "layout": "row-major"}, open(f"{d}/w{i}.meta.json", "w"))
PY
"$cli" -q create-manifest --input-dir "$dir/t" --output "$dir/m.json"
t="/usr/bin/time -f %e_s_%M_KiB"
echo "pack 1 GiB:   webnn-graph $($t "$cmp_bin" old-pack "$dir/m.json" "$dir/t" "$dir/old.weights" 2>&1)   webnn-weights $($t "$cli" -q pack-weights --manifest "$dir/m.json" --input-dir "$dir/t" --output "$dir/new.weights" 2>&1)"
cmp "$dir/old.weights" "$dir/new.weights"
echo "unpack 1 GiB: webnn-graph $($t "$cmp_bin" old-unpack "$dir/old.weights" "$dir/m.json" "$dir/u_old" 2>&1)   webnn-weights $($t "$cli" -q unpack-weights --weights "$dir/old.weights" --manifest "$dir/m.json" --output-dir "$dir/u_new" 2>&1)"
rm -rf "$dir/t" "$dir/u_old" "$dir/u_new" "$dir/old.weights" "$dir/new.weights"
