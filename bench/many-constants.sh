#!/usr/bin/env bash
# Graphs of many small constants: the rebuild after "main.rs changed" must not grow with the
# constant count (issue 16), and the build script that reruns after "weights changed" (an
# unoptimized build, issue 11) must stay a small part of that rebuild.
#
# For each COUNT (default 1, 2000 and 20000) it generates a graph of COUNT `f32[64]` constants in
# one SafeTensors archive (bench/many-constants-gen.py) and two scratch packages:
#   ours    build.rs: webnn_weights_build::compile_or_exit("models/model.webnn");
#           main.rs:  static MODEL = include_webnn_graph!("models/model.webnn");
#   ibytes  main.rs:  static DATA: &[u8] = include_bytes!(".../weights.bin");  (the same bytes)
# then measures `cargo build --release` after the last tensor's bytes changed and after
# appending a comment to main.rs (wall time, peak memory of the whole process tree; median of
# RUNS), runs both binaries (same checksum; ours also prints its first-access times: graph
# structure, constant table, one lookup), and prints a table for each; the main.rs one with
# the targets: COUNT=20000 rebuild <= 1 s and <= 2x include_bytes!, COUNT=2000 <= 0.5 s.
#
# Environment: WEBNN_BENCH_DIR (default target/bench-many), WEBNN_BENCH_RUNS (default 3),
# WEBNN_BENCH_COUNTS (default "1 2000 20000"; 1 shows the fixed cost of any embedding app),
# WEBNN_BENCH_REPO (the webnn-weights checkout to build against; default this one, so an
# older checkout gives the "before" figures).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${WEBNN_BENCH_REPO:-$(cd "$here/.." && pwd)}
work=${WEBNN_BENCH_DIR:-$(cd "$here/.." && pwd)/target/bench-many}
runs=${WEBNN_BENCH_RUNS:-3}
counts=${WEBNN_BENCH_COUNTS:-1 2000 20000}
measure=$here/embed/measure.py
results=$work/results.jsonl
mkdir -p "$work"
rm -f "$results"

. "$here/scratch-package.sh"

# A scratch package: DIR KIND (ours | ibytes) COUNT
make_app() {
  local dir=$1 kind=$2 count=$3
  scratch_manifest "many-$kind-$count" "$dir" "$repo" "$kind"
  if [ "$kind" = ours ]; then
    echo 'fn main() { webnn_weights_build::compile_or_exit("models/model.webnn"); }' > "$dir/build.rs"
    cat > "$dir/src/main.rs" <<'RS'
use std::time::Instant;

static MODEL: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/model.webnn");

fn main() {
    let start = Instant::now();
    let nodes = MODEL.nodes().len();
    let graph = start.elapsed();
    let start = Instant::now();
    let constants = MODEL.constants();
    let table = start.elapsed();
    let start = Instant::now();
    let last = MODEL.constant(constants[constants.len() - 1].name()).expect("lookup");
    let lookup = start.elapsed();
    let mut sum = 0u64;
    for c in constants {
        assert_eq!(c.bytes().as_ptr() as usize % 64, 0);
        assert_eq!(c.shape(), &[64]);
        sum += c.bytes().iter().map(|&b| u64::from(b)).sum::<u64>();
    }
    assert_eq!(last.as_f32().map(<[f32]>::len), Some(64));
    eprintln!(
        "first access: graph structure {:.2} ms ({nodes} node), constant table {:.2} ms, \
         lookup {:.1} us",
        graph.as_secs_f64() * 1e3,
        table.as_secs_f64() * 1e3,
        lookup.as_secs_f64() * 1e6
    );
    println!("{} constants, checksum {sum}", constants.len());
}
RS
  else
    cat > "$dir/src/main.rs" <<RS
static DATA: &[u8] = include_bytes!("$work/ours-$count/weights.bin");

fn main() {
    let sum: u64 = DATA.iter().map(|&b| u64::from(b)).sum();
    println!("{} bytes, checksum {sum}", DATA.len());
}
RS
  fi
}

build() { # LABEL DIR TARGET_DIR
  CARGO_TARGET_DIR=$3 python3 "$measure" "$results" "$1" -- \
    cargo build --release --quiet --manifest-path "$2/Cargo.toml"
}

for n in $counts; do
  echo "== $n constants: generating in $work/ours-$n"
  rm -rf "$work/ours-$n" "$work/ibytes-$n"
  make_app "$work/ours-$n" ours "$n"
  make_app "$work/ibytes-$n" ibytes "$n"
  sum=$(python3 "$here/many-constants-gen.py" "$work/ours-$n" "$n")
  echo "== $n constants: first builds (build script, dependencies; not compared)"
  build "first-ours-$n" "$work/ours-$n" "$work/target-ours"
  build "first-ibytes-$n" "$work/ibytes-$n" "$work/target-ibytes"
  echo "== $n constants: $runs x main.rs changed"
  for i in $(seq "$runs"); do
    for app in ours ibytes; do
      echo "// edit $i" >> "$work/$app-$n/src/main.rs"
      build "main-$app-$n" "$work/$app-$n" "$work/target-$app"
    done
  done
  echo "== $n constants: $runs x weights changed (the last tensor rewritten)"
  for i in $(seq "$runs"); do
    sum=$(python3 "$here/many-constants-gen.py" "$work/ours-$n" "$n" --touch)
    for app in ours ibytes; do
      build "weights-$app-$n" "$work/$app-$n" "$work/target-$app"
    done
  done
  out_ours=$("$work/target-ours/release/many-ours-$n")
  out_ibytes=$("$work/target-ibytes/release/many-ibytes-$n")
  echo "  ours:   $out_ours"
  echo "  ibytes: $out_ibytes"
  case "$out_ours" in "$n constants, checksum $sum") ;; *) echo "FAIL: ours has wrong bytes"; exit 1 ;; esac
  case "$out_ibytes" in *"checksum $sum") ;; *) echo "FAIL: ibytes has wrong bytes"; exit 1 ;; esac
done

echo
python3 - "$results" "$counts" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(label, key):
    values = [r[key] for r in rows if r["label"] == label]
    return statistics.median(values) if values else None
print("rebuild after the weights changed (the build script reruns; release, median):")
print(f"{'constants':>10} {'ours':>18} {'include_bytes!':>18} {'time ratio':>11} {'memory ratio':>13}")
for n in sys.argv[2].split():
    o_t, o_m = med(f"weights-ours-{n}", "seconds"), med(f"weights-ours-{n}", "peak_bytes")
    i_t, i_m = med(f"weights-ibytes-{n}", "seconds"), med(f"weights-ibytes-{n}", "peak_bytes")
    print(f"{n:>10} {o_t:7.2f} s {o_m/1e6:5.0f} MB {i_t:7.2f} s {i_m/1e6:5.0f} MB"
          f" {o_t/i_t:10.2f}x {o_m/i_m:12.2f}x")
print()
print("rebuild after main.rs changed (release, median):")
print(f"{'constants':>10} {'ours':>18} {'include_bytes!':>18} {'time ratio':>11} {'memory ratio':>13}  target")
for n in sys.argv[2].split():
    o_t, o_m = med(f"main-ours-{n}", "seconds"), med(f"main-ours-{n}", "peak_bytes")
    i_t, i_m = med(f"main-ibytes-{n}", "seconds"), med(f"main-ibytes-{n}", "peak_bytes")
    if int(n) >= 20000:
        target, ok = "<= 1 s and <= 2x", o_t <= 1.0 and o_t <= 2 * i_t
    elif int(n) == 2000:
        target, ok = "<= 0.5 s", o_t <= 0.5
    else:
        target, ok = "-", True
    print(f"{n:>10} {o_t:7.2f} s {o_m/1e6:5.0f} MB {i_t:7.2f} s {i_m/1e6:5.0f} MB"
          f" {o_t/i_t:10.2f}x {o_m/i_m:12.2f}x  {target}: {'met' if ok else 'MISSED'}")
PY
