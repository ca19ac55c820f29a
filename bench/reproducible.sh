#!/usr/bin/env bash
# Reproducible builds: the same scratch package built twice must give byte-identical binaries.
#
# The package: models/encoder.webnn with its SafeTensors sidecar (a fixture of this repo),
# build.rs = `webnn_weights_build::compile_or_exit("models/encoder.webnn")`, main.rs embeds it
# with `include_webnn_graph!` and prints a checksum. `cargo build --release`:
#
#   1. one checkout, two target folders (CARGO_TARGET_DIR=.../tgtA and .../tgtB);
#   2. two checkouts in different folders, each built with
#      RUSTFLAGS=--remap-path-prefix=<checkout>=/app (and its own target folder);
#
# each for the static-library path (the default on this host) and the `include_bytes!` path
# (WEBNN_WEIGHTS_EMBED=include-bytes: only the build script and the app crate rebuild), and
# compares the binaries with `cmp`. Too slow for CI (four cold release builds of the
# runtime's dependency tree); the last result is in docs/embedding.md.
#
# Environment: WEBNN_REPRO_DIR (default target/reproducible).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${WEBNN_REPRO_DIR:-$repo/target/reproducible}
rm -rf "$work"
mkdir -p "$work"

make_checkout() { # DIR
  local dir=$1
  mkdir -p "$dir/src" "$dir/models"
  cp "$repo/tests/fixtures/hf-safetensors/encoder.webnn" "$dir/models/"
  cp "$repo/tests/fixtures/hf-safetensors/model.safetensors" "$dir/models/encoder.safetensors"
  cp "$repo/Cargo.lock" "$dir/Cargo.lock"
  cat >"$dir/Cargo.toml" <<EOF
[package]
name = "repro-app"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[profile.release]
debug = false

[dependencies]
webnn-weights-runtime = { path = "$repo/weights-runtime" }

[build-dependencies]
webnn-weights-build = { path = "$repo/weights-build" }
EOF
  echo 'fn main() { webnn_weights_build::compile_or_exit("models/encoder.webnn"); }' >"$dir/build.rs"
  cat >"$dir/src/main.rs" <<'RS'
static MODEL: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/encoder.webnn");

fn main() {
    let mut sum = 0u64;
    for c in MODEL.constants() {
        sum = c.bytes().iter().fold(sum, |s, &b| s.wrapping_mul(31).wrapping_add(u64::from(b)));
    }
    println!("{} constants, checksum {sum}", MODEL.constants().len());
}
RS
}

build() { # CHECKOUT TARGET_DIR MODE REMAP(0|1) -> path of the binary
  local dir=$1 target=$2 mode=$3 remap=$4 flags=""
  [ "$remap" = 1 ] && flags="--remap-path-prefix=$dir=/app"
  (cd "$dir" && WEBNN_WEIGHTS_EMBED=$mode RUSTFLAGS="$flags" CARGO_TARGET_DIR=$target \
    cargo build --release --quiet)
  "$target/release/repro-app" >/dev/null
  echo "$target/release/repro-app"
}

compare() { # LABEL A B
  local size
  size=$(stat -c %s "$2")
  if cmp -s "$2" "$3"; then
    echo "$1: identical ($size bytes, sha256 $(sha256sum "$2" | cut -c1-16))" | tee -a "$work/results.txt"
  else
    echo "$1: DIFFERENT ($(cmp "$2" "$3" | head -n1))" | tee -a "$work/results.txt"
    diff <(nm "$2" | grep -i webnn) <(nm "$3" | grep -i webnn) | head -n 10 || true
  fi
}

make_checkout "$work/checkout"
make_checkout "$work/elsewhere/deeper/checkout2"
: >"$work/results.txt"
for mode in static-lib include-bytes; do
  env_mode=1
  [ "$mode" = include-bytes ] && env_mode=include-bytes
  a=$(build "$work/checkout" "$work/tgtA" "$env_mode" 0)
  cp "$a" "$work/$mode-A"
  b=$(build "$work/checkout" "$work/tgtB" "$env_mode" 0)
  cp "$b" "$work/$mode-B"
  kind=$(grep -o '"mode": "[a-z-]*"' "$work"/tgtA/release/build/repro-app-*/out/webnn-weights/*/index.json | head -n1)
  echo "($mode: index $kind)"
  compare "$mode, two target folders" "$work/$mode-A" "$work/$mode-B"
  c=$(build "$work/checkout" "$work/tgtC" "$env_mode" 1)
  cp "$c" "$work/$mode-C"
  d=$(build "$work/elsewhere/deeper/checkout2" "$work/tgtD" "$env_mode" 1)
  cp "$d" "$work/$mode-D"
  compare "$mode, two checkouts with --remap-path-prefix" "$work/$mode-C" "$work/$mode-D"
done
echo
cat "$work/results.txt"
! grep -q DIFFERENT "$work/results.txt"
