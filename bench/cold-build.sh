#!/usr/bin/env bash
# The cold build of a scratch application that embeds a graph (runtime + build helper, empty
# target folder, offline): how many crates compile and the wall time.
# Usage: bash bench/cold-build.sh [REPO] [WORK]   (defaults: this checkout, target/cold-build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${1:-$(cd "$here/.." && pwd)}
work=${2:-$repo/target/cold-build}
rm -rf "$work"; mkdir -p "$work/src" "$work/models"
source "$repo/bench/scratch-package.sh"
scratch_manifest coldapp "$work" "$repo" ours
cp "$repo/tests/fixtures/packed4/quant.webnn" "$work/models/"
cp "$repo/tests/fixtures/packed4/quant.safetensors" "$work/models/"
echo 'fn main() { webnn_weights_build::compile_or_exit("models/quant.webnn"); }' > "$work/build.rs"
cat > "$work/src/main.rs" <<'RS'
static M: webnn_weights_runtime::EmbeddedGraph = webnn_weights_runtime::include_webnn_graph!("models/quant.webnn");
fn main() { println!("{}", M.constants().len()); }
RS
cd "$work"
start=$(date +%s.%N)
CARGO_TARGET_DIR=$work/target cargo build --offline 2>&1 | tee "$work/log" | grep -c Compiling > "$work/count"
end=$(date +%s.%N)
echo "crates compiled: $(cat "$work/count"), seconds: $(python3 -c "print(round($end - $start, 2))")"
grep -o "Compiling [a-z0-9_-]*" "$work/log" | sort > "$work/crates"
