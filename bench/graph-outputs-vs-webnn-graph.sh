#!/bin/sh
# Graph outputs stream to disk: `webnn-weights resolve` of a generated 512 MiB model to
# pretty JSON, compact JSON and .webnn, beside webnn-graph 0.4.0's library writing compact
# JSON; time and peak memory of each whole process, and the memory target
# (peak <= 1.1x resolved bytes + 64 MiB).
#
# Outputs go to WEBNN_BENCH_DIR, by default /dev/shm when it exists (tmpfs: the figures
# leave out disk speed and our fsync before the atomic rename, which webnn-graph does not
# do; pretty JSON is ~7.5 GB there, removed after each run). WEBNN_BENCH_RUNS (default 3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ -z "${WEBNN_BENCH_DIR:-}" ] && [ -d /dev/shm ]; then
    WEBNN_BENCH_DIR=/dev/shm
    export WEBNN_BENCH_DIR
fi
(cd "$root" && cargo build --release -p webnn-weights-cli --quiet)
cd "$here/compare-webnn-graph"
cargo build --release --ignore-rust-version --quiet --bin graph-outputs
exec "$here/compare-webnn-graph/target/release/graph-outputs" "$root/target/release/webnn-weights"
