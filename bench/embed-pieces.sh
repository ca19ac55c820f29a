#!/usr/bin/env bash
# How the layout of the static library changes the link: a "main.rs changed" rebuild of
# the 256 MiB app of bench/embed.sh, the same library in three layouts, in random order.
#
# webnn-weights-build's ELF writer puts the data in sections of 16 MiB, back to back, so
# that lld copies it with all its threads (docs/benchmarks.md, "Linking the data in
# pieces"), and starts it half a page into a page of the file while the first piece asks
# for a page in the program, so that the linker's copy never reads and writes a whole
# number of pages apart ("Where the data sits in the file"). Layouts:
#   pieces   the library as written
#   one      the data in one section (bench/embed/one_section.py: same bytes, offset,
#            alignment and symbols)
#   aliased  the pieces, with the data moved to a page of the file
#            (bench/embed/alias_data.py): source and destination 4K-aliased
# First runs bench/embed/copy_offsets.c (if a C compiler is there): memcpy alone, by the
# distance between source and destination within a page. Then alternates the layouts in
# random order: append a line to main.rs, `sync`, measure `cargo build --release`
# (bench/embed/measure.py), run the binary (the checksum must not change). Prints median,
# mean and the spread of each; restores the library at the end.
#
# Needs a finished `bash bench/embed.sh` (its folder WEBNN_BENCH_DIR, default
# target/bench-embed). WEBNN_BENCH_RUNS rounds (default 10).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${WEBNN_BENCH_DIR:-$repo/target/bench-embed}
runs=${WEBNN_BENCH_RUNS:-10}
app=$work/ours
target=$work/target-ours
[ -f "$app/Cargo.toml" ] || { echo "run bash bench/embed.sh first (no $app)"; exit 1; }
CARGO_TARGET_DIR=$target cargo build --release --quiet --manifest-path "$app/Cargo.toml"
lib=$(ls -t "$target"/release/build/bench-ours-*/out/webnn-weights/model-*/lib*.a | head -n1)
saved=$work/pieces-ab
mkdir -p "$saved"
cp "$lib" "$saved/pieces.a"
python3 "$here/embed/one_section.py" "$saved/pieces.a" "$saved/one.a"
echo "library: $lib"
echo "  pieces:  $(readelf -SW "$saved/pieces.a" | grep -c ' PROGBITS .*A[lo]* ') data sections"
echo "  one:     $(readelf -SW "$saved/one.a" | grep -c ' PROGBITS .*A[lo]* ') data section"
echo "  aliased: $(python3 "$here/embed/alias_data.py" "$saved/pieces.a" "$saved/aliased.a")"
trap 'cp "$saved/pieces.a" "$lib"' EXIT

if command -v cc >/dev/null; then
  cc -O2 -o "$saved/copy_offsets" "$here/embed/copy_offsets.c"
  mib=$(($(stat -c %s "$saved/pieces.a") / 1048576 - 1))
  echo "memcpy of $mib MiB (from the library) in 16 MiB pieces into a new file's mapping," \
    "by (destination - source) mod 4096:"
  "$saved/copy_offsets" "$saved/pieces.a" "$saved/copy.out" "$mib" | sed 's/^/  /'
fi
results=$saved/results.jsonl
rm -f "$results"
expected=""
for i in $(seq "$runs"); do
  for layout in $(printf 'pieces\none\naliased\n' | shuf); do
    cp "$saved/$layout.a" "$lib"
    echo "// pieces-ab $i $layout" >> "$app/src/main.rs"
    sync
    CARGO_TARGET_DIR=$target python3 "$here/embed/measure.py" "$results" "$layout" -- \
      cargo build --release --quiet --manifest-path "$app/Cargo.toml"
    out=$("$target/release/bench-ours")
    [ -z "$expected" ] && expected=$out
    [ "$out" = "$expected" ] || { echo "FAIL: $layout printed '$out', expected '$expected'"; exit 1; }
  done
done
echo "every layout prints: $expected"
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("main.rs changed, cargo build --release (seconds)")
med = {}
for layout in ("pieces", "one", "aliased"):
    xs = sorted(r["seconds"] for r in rows if r["label"] == layout)
    mem = statistics.median(r["peak_bytes"] for r in rows if r["label"] == layout)
    med[layout] = statistics.median(xs)
    print(f"  {layout:<7} median {med[layout]:.2f}  mean {statistics.mean(xs):.2f}  "
          f"min {xs[0]:.2f}  max {xs[-1]:.2f}  peak {mem / 1e9:.2f} GB")
print(f"  pieces / one: {med['pieces'] / med['one']:.2f}x, "
      f"pieces / aliased: {med['pieces'] / med['aliased']:.2f}x (medians)")
PY
