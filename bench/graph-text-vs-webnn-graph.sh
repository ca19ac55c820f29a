#!/bin/sh
# Graph text at memory speed: the whole `webnn-weights convert` of a generated 100k-node
# .webnn graph against webnn-graph 0.4.0's parse + serialize, plus our other conversions
# and `validate`, each as a fresh process (wall time, peak RSS via /usr/bin/time).
# The in-process figures (parse MB/s) come from `cargo bench -p webnn-weights-runtime --bench parse`.
#
# webnn-graph 0.4.0 declares rust-version 1.97, so its comparison crate lives outside the
# workspace and is built with --ignore-rust-version.
# Environment: WEBNN_BENCH_DIR (default /dev/shm when it exists: tmpfs, so that neither
# disk speed nor our fsync before the atomic rename, which webnn-graph does not do, is
# measured), WEBNN_BENCH_RUNS (default 5).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ -z "${WEBNN_BENCH_DIR:-}" ] && [ -d /dev/shm ]; then
    WEBNN_BENCH_DIR=/dev/shm
    export WEBNN_BENCH_DIR
fi
(cd "$root" && cargo build --release -p webnn-weights-cli --quiet)
cd "$here/compare-webnn-graph"
cargo build --release --ignore-rust-version --quiet --bin graph-text
exec "$here/compare-webnn-graph/target/release/graph-text" "$root/target/release/webnn-weights"
