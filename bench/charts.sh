#!/bin/sh
# Regenerates the benchmark charts of docs/img/ from the result files beside them
# (docs/img/*.tsv: group, series, metric, value, unit). Python 3 standard library only.
# After a benchmark run, update the .tsv with its figures, then run this script.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
img="$here/../docs/img"

python3 "$here/chart.py" "$img/embed-rebuild.tsv" \
    --title 'Rebuild after a change: webnn-weights vs include_bytes!' \
    --subtitle '256 MiB model (BF16 and int4 tensors), cargo build --release, median of 5 runs, lower is better; ratios: webnn-weights / include_bytes! with codegen-units = 1' \
    --baseline 'include_bytes! (codegen-units = 1)' \
    --output "$img/embed-rebuild.svg"

python3 "$here/chart.py" "$img/resolve-vs-webnn-graph.tsv" \
    --title 'Run-time resolve: webnn-weights vs webnn-graph 0.4.0' \
    --subtitle '512 MiB sidecar, fresh process, fastest of 3 runs, lower is better; ratios: webnn-weights / webnn-graph; the floor reads the file once into memory' \
    --baseline 'webnn-graph 0.4.0' \
    --output "$img/resolve-vs-webnn-graph.svg"
