#!/bin/sh
# Run-time resolve of a generated 512 MiB SafeTensors model and a 512 MiB WGWT blob:
# webnn-weights-runtime against webnn-graph 0.4.0, side by side with the floor.
#
# webnn-graph 0.4.0 declares rust-version 1.97, so its comparison crate lives outside the
# workspace and is built with --ignore-rust-version.
# Environment: WEBNN_BENCH_DIR (where to generate ~1 GiB of files), WEBNN_BENCH_RUNS.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/compare-webnn-graph"
cargo build --release --ignore-rust-version --quiet
exec "$here/compare-webnn-graph/target/release/compare-webnn-graph"
