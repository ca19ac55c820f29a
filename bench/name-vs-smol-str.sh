#!/usr/bin/env bash
# The runtime's `Name` against `smol_str` 0.3.7 and `String`, side by side in one run: making
# names from `&str` and `String`, cloning, `HashMap` lookups by `&str`, a `BTreeMap` of all
# names (bench/name-vs-smol-str/src/main.rs). Release build, outside the workspace (smol_str
# 0.3.7 needs Rust 1.89; the workspace's MSRV is 1.85).
#
# usage: bash bench/name-vs-smol-str.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/name-vs-smol-str"
cargo run --release --quiet
