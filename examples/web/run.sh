#!/usr/bin/env bash
# The browser example end to end: builds the Rust app for wasm32-unknown-unknown (Debian's
# cargo-web/rustc-web 1.96 with -Zbuild-std: no prebuilt std for wasm32 here), the host bins
# (`native`: the expected y in plain Rust; `builder-js`: the builder module) and the CLI
# (`webnn-weights web`), assembles the site, and runs both pages in headless Chromium with
# WebNN (web/harness.mjs; web/setup.sh installs it from npm). Fails unless both outputs equal
# the native run bit for bit.
#
#   bash examples/web/run.sh            build, run both pages, check
#   bash examples/web/run.sh --serve    build, then serve the site for a browser with WebNN
#
# Environment: CARGO_TARGET_DIR (default target/web-example), WEBNN_WEIGHTS_BIN (a built CLI
# to use instead of building one), WEBNN_WASM_CARGO and
# WEBNN_WASM_RUSTC (default Debian's /usr/bin/cargo and /usr/bin/rustc), WEBNN_WASM_LINKER
# (default wasm-ld: Debian's rust-lld points at lld-22, not installed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
start=$(date +%s)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/web-example}
out=$CARGO_TARGET_DIR
site=$out/site
wasm_cargo=${WEBNN_WASM_CARGO:-/usr/bin/cargo}
wasm_rustc=${WEBNN_WASM_RUSTC:-/usr/bin/rustc}
wasm_linker=${WEBNN_WASM_LINKER:-wasm-ld}
step() { echo "run.sh: $* ($(( $(date +%s) - start )) s)" >&2; }

# Debian's toolchain (bookworm), installed when missing as web/wasm.sh does (CI runs as root
# on a fresh machine); nodejs and npm for the browser.
packages=(rustc-web cargo-web rust-web-src lld)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [[ -z ${WEBNN_WASM_CARGO:-} && ${#missing[@]} -gt 0 ]]; then
  echo "run.sh: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
for tool in "$wasm_cargo" "$wasm_rustc" "$wasm_linker" node npm; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 1; }
done
src=$("$wasm_rustc" --print sysroot)/lib/rustlib/src/rust/library
[[ -d $src ]] || { echo "run.sh: no std sources at $src (apt-get install rust-web-src)" >&2; exit 1; }

step "browser (web/setup.sh)"
bash "$root/web/setup.sh" >/dev/null

step "wasm32-unknown-unknown app ($("$wasm_cargo" --version))"
(cd "$here" && env RUSTC="$wasm_rustc" RUSTDOC="$(dirname "$wasm_rustc")/rustdoc" RUSTC_BOOTSTRAP=1 \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$wasm_linker" \
  "$wasm_cargo" build --quiet --release --lib --target wasm32-unknown-unknown \
  -Zbuild-std=std,panic_abort)
wasm=$out/wasm32-unknown-unknown/release/webnn_weights_web_example.wasm

step "host bins: native, builder-js"
(cd "$here" && cargo build --quiet --bins)
if [[ -n ${WEBNN_WEIGHTS_BIN:-} ]]; then
  cli=$WEBNN_WEIGHTS_BIN
else
  step "CLI (webnn-weights web)"
  (cd "$root" && cargo build --quiet -p webnn-weights-cli)
  cli=$out/debug/webnn-weights
fi

step "site $site"
rm -rf "$site"
mkdir -p "$site"
cp "$here"/page/*.html "$here"/page/*.js "$wasm" "$site"/
"$out/debug/builder-js" "$site/builder.js"
"$out/debug/native" > "$site/expected.json"
"$cli" web "$root/examples/models/tiny_mlp.webnn" -o "$site/model" >&2
echo "run.sh: $(stat -c %s "$wasm") bytes of wasm; native: $(cat "$site/expected.json")" >&2

if [[ ${1:-} == --serve ]]; then
  exec node "$here/test.mjs" "$site" --serve
fi
step "headless Chromium"
status=0
node "$here/test.mjs" "$site" || status=$?
echo "run.sh: $( ((status == 0)) && echo passed || echo FAILED) in $(( $(date +%s) - start )) s" >&2
exit "$status"
