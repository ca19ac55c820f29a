#!/usr/bin/env bash
# wasm32: builds webnn-weights-runtime for wasm32-unknown-unknown and wasm32-wasip1, runs its
# tests (those that need no subprocess, thread or mapping: the others are cfg'd out in the test
# code) on wasm32-wasip1 under Node's WASI, and builds the smoke app web/wasm-smoke
# (`include_webnn_graph!`) for both targets and runs it on wasm32-wasip1 (constants read back,
# 64-byte aligned in linear memory). Fails when any build or test fails.
#
# Toolchain from Debian only (bookworm): rustc-web cargo-web rust-web-src rust-web-llvm lld
# wasi-libc, and nodejs when there is no node; installed here when missing (CI runs as root on
# a fresh machine). std is built from rust-web-src: RUSTC_BOOTSTRAP=1, -Zbuild-std.
#
#   bash web/wasm.sh            # everything
#   WASM_TESTS=0 bash web/wasm.sh   # builds and the smoke app only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

packages=(rustc-web cargo-web rust-web-src rust-web-llvm lld wasi-libc)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
command -v node >/dev/null || missing+=(nodejs)
if [ ${#missing[@]} -gt 0 ]; then
  echo "wasm.sh: installing ${missing[*]}"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

# Debian's rustc-web installs /usr/bin/rustc and /usr/bin/cargo; name them explicitly, since a
# rustup toolchain may come first in PATH.
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
cargo=/usr/bin/cargo
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR_WASM:-$root/target/wasm}
build_std=(-Zbuild-std=std,panic_abort)
mkdir -p "$CARGO_TARGET_DIR"
echo "wasm.sh: $($RUSTC --version), $(node --version), wasi-libc $(dpkg-query -W -f='${Version}' wasi-libc)"

# wasm32-wasip1 links against Debian's wasi-libc (no self-contained copy in rust-web-src's
# std): crt1-command.o and libc.a from /usr/lib/wasm32-wasi, linked by lld's wasm-ld, plus the
# stubs of web/wasi-stubs.rs (pthread and fchmod symbols std links that this wasi-libc lacks).
stubs=$CARGO_TARGET_DIR/wasi-stubs.o
$RUSTC --crate-type=lib --target wasm32-wasip1 --emit=obj -C opt-level=2 -C panic=abort \
  -o "$stubs.new" web/wasi-stubs.rs
cmp -s "$stubs.new" "$stubs" 2>/dev/null && rm "$stubs.new" || mv "$stubs.new" "$stubs"
wasi_libc=/usr/lib/wasm32-wasi
export CARGO_TARGET_WASM32_WASIP1_LINKER=wasm-ld
export CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C link-self-contained=no -L native=$wasi_libc -C link-arg=$wasi_libc/crt1-command.o -C link-arg=$stubs"
# wasm32-unknown-unknown: rustc's default linker is rust-lld, which Debian ships as wasm-ld.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld

# Runs a wasip1 program under node:wasi with / preopened (absolute paths compiled into the tests,
# such as env!("CARGO_MANIFEST_DIR"), name the same files) and a temporary folder as TMPDIR
# (std has no temporary folder on WASI: test-support's tempdir() reads TMPDIR).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
wasi_run() {
  node --no-warnings web/wasm-run.mjs --dir / --env "TMPDIR=$scratch" --env RUST_BACKTRACE=0 "$@"
}

for target in wasm32-unknown-unknown wasm32-wasip1; do
  echo "== webnn-weights-runtime (lib) for $target"
  $cargo build "${build_std[@]}" --target $target -p webnn-weights-runtime --lib
done

failed=()
if [ "${WASM_TESTS:-1}" != 0 ]; then
  echo "== the runtime's tests for wasm32-wasip1"
  $cargo test "${build_std[@]}" --target wasm32-wasip1 -p webnn-weights-runtime --lib --tests \
    --no-run --message-format=json-render-diagnostics >"$scratch/tests.json"
  mapfile -t tests < <(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"] + " " + m["executable"])
' "$scratch/tests.json" | sort)
  for entry in "${tests[@]}"; do
    name=${entry%% *} wasm=${entry#* }
    echo "-- $name"
    start=$SECONDS
    # panic=abort: a failing test aborts its binary (a trap, status 134), so the rest of that
    # binary does not run; the failure is reported either way.
    if wasi_run "$wasm" --test-threads=1 -q; then
      echo "   ($name: $((SECONDS - start)) s)"
    else
      echo "wasm.sh: $name FAILED (status $?)"
      failed+=("$name")
    fi
  done
fi

echo "== web/wasm-smoke (include_webnn_graph!)"
smoke=(--manifest-path web/wasm-smoke/Cargo.toml)
$cargo build "${build_std[@]}" --target wasm32-unknown-unknown "${smoke[@]}"
$cargo rustc "${build_std[@]}" --target wasm32-unknown-unknown "${smoke[@]}" --lib --crate-type cdylib
$cargo build "${build_std[@]}" --target wasm32-wasip1 "${smoke[@]}"
ls -l "$CARGO_TARGET_DIR"/wasm32-unknown-unknown/debug/wasm-smoke.wasm
if ! wasi_run "$CARGO_TARGET_DIR"/wasm32-wasip1/debug/wasm-smoke.wasm; then
  failed+=(wasm-smoke)
fi
if [ "${WASM_SMOKE_UNKNOWN:-1}" != 0 ]; then
  # wasm32-unknown-unknown has no WASI: the library exports check(), which returns the number
  # of constants found intact and 64-byte aligned (or a negative count of failures).
  node --no-warnings -e '
const fs = require("fs");
const module = new WebAssembly.Module(fs.readFileSync(process.argv[1]));
const n = new WebAssembly.Instance(module, {}).exports.webnn_smoke_check();
console.log(`wasm32-unknown-unknown: webnn_smoke_check() = ${n} (constants intact and 64-byte aligned)`);
process.exit(n > 0 ? 0 : 1);
' "$CARGO_TARGET_DIR"/wasm32-unknown-unknown/debug/wasm_smoke_lib.wasm || failed+=(wasm-smoke-unknown)
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "wasm.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "wasm.sh: all passed"
