#!/usr/bin/env bash
# Checks the rebuild rules of "How rebuilds are triggered" (README) on a scratch crate that
# embeds tests/fixtures/packed4/quant.webnn with models/model.safetensors found by discovery:
#   - a no-op build runs no build script and compiles nothing;
#   - creating models/quant.safetensors (a higher-priority discovery candidate) reruns the
#     build script and the new file wins;
#   - changing the chosen sidecar reruns it;
#   - WEBNN_WEIGHTS_EMBED=0 switches to run-time resolution and back;
#   - a missing sidecar fails the build with the diagnostic, and fixing it recovers.
# Environment: WEBNN_RULES_DIR (default target/rebuild-rules).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${WEBNN_RULES_DIR:-$repo/target/rebuild-rules}
app=$work/app
export CARGO_TARGET_DIR=$work/target
rm -rf "$app"
mkdir -p "$app/src" "$app/models"
cp "$repo/Cargo.lock" "$app/"
cat > "$app/Cargo.toml" <<TOML
[package]
name = "rules-app"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
webnn-weights-runtime = { path = "$repo/weights-runtime" }

[build-dependencies]
webnn-weights-build = { path = "$repo/weights-build" }
TOML
echo 'fn main() { webnn_weights_build::compile_or_exit("models/quant.webnn"); }' > "$app/build.rs"
cat > "$app/src/main.rs" <<'RS'
static M: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/quant.webnn");
fn main() {
    let scale = M.constant("scale").expect("scale").as_f32().expect("f32");
    println!("embedded={} scale={scale:?}", M.is_embedded());
}
RS
cp "$repo/tests/fixtures/packed4/quant.webnn" "$app/models/"
cp "$repo/tests/fixtures/packed4/quant.safetensors" "$app/models/model.safetensors"

# Writes models/$1 as a copy of model.safetensors whose `scale` is [$2, $3, $4].
with_scale() {
  python3 - "$app/models/model.safetensors" "$app/models/$1" "$2" "$3" "$4" <<'PY'
import json, struct, sys
src, dst, *values = sys.argv[1:]
data = open(src, "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
a, b = header["scale"]["data_offsets"]
body = bytearray(data[8 + n:])
body[a:b] = struct.pack("<3f", *map(float, values))
open(dst + ".tmp", "wb").write(data[:8 + n] + bytes(body))
import os; os.replace(dst + ".tmp", dst)
PY
}
run() { cargo run -q --manifest-path "$app/Cargo.toml"; }
expect() { # WHAT OUTPUT PATTERN
  case "$2" in *"$3"*) echo "ok: $1 ($2)" ;; *) echo "FAIL: $1: got '$2', expected '$3'"; exit 1 ;; esac
}
noop() {
  local log=$work/noop.log
  cargo build -v --manifest-path "$app/Cargo.toml" 2> "$log"
  if grep -E '^ *(Compiling|Running|Dirty)' "$log"; then echo "FAIL: no-op build ran something"; exit 1; fi
  echo "ok: no-op build runs no build script and compiles nothing"
}

with_scale model.safetensors 1 2 3
expect "discovery finds model.safetensors" "$(run)" "embedded=true scale=[1.0, 2.0, 3.0]"
noop
sleep 1
with_scale quant.safetensors 4 5 6
expect "a new quant.safetensors wins the next build" "$(run)" "scale=[4.0, 5.0, 6.0]"
noop
sleep 1
with_scale quant.safetensors 7 8 9
expect "a changed sidecar is re-embedded" "$(run)" "scale=[7.0, 8.0, 9.0]"
expect "WEBNN_WEIGHTS_EMBED=0 resolves at run time" "$(WEBNN_WEIGHTS_EMBED=0 run)" "embedded=false scale=[7.0, 8.0, 9.0]"
expect "unsetting it embeds again" "$(run)" "embedded=true scale=[7.0, 8.0, 9.0]"
noop
mv "$app/models/quant.safetensors" "$work/quant.safetensors.away"
mv "$app/models/model.safetensors" "$work/model.safetensors.away"
if cargo build -q --manifest-path "$app/Cargo.toml" 2> "$work/fail.log"; then
  echo "FAIL: build without a sidecar succeeded"; exit 1
fi
grep -q "error: webnn-weights: cannot embed \`models/quant.webnn\`" "$work/fail.log"
grep -q "fix: put one of these files next to the graph" "$work/fail.log"
echo "ok: a missing sidecar fails the build with the diagnostic"
mv "$work/quant.safetensors.away" "$app/models/quant.safetensors"
mv "$work/model.safetensors.away" "$app/models/model.safetensors"
expect "restoring it recovers" "$(run)" "scale=[7.0, 8.0, 9.0]"
noop
echo "all rebuild rules hold"
