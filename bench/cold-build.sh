#!/usr/bin/env bash
# The cold release build of an application that embeds a graph, against the code before a change
# and against the same application with `include_bytes!`.
#
# Usage: bash bench/cold-build.sh [--rounds N] [--work DIR] [--base-rev REV | BASE_REPO]
#
# Three scratch packages outside the workspace (bench/scratch-package.sh: release profile with
# `debug = false`, the Cargo.lock of the repository they build against, so `--offline` works),
# each with tests/fixtures/packed4/quant.webnn and quant.safetensors of its repository:
#   ours   this checkout: build.rs `webnn_weights_build::compile_or_exit("models/quant.webnn")`,
#          main.rs `include_webnn_graph!`, prints the number of constants and a checksum of
#          their bytes (so the data cannot be dropped)
#   base   the same against BASE_REPO, or a temporary `git worktree add --detach` of REV under
#          the work folder (removed at the end); left out when neither is given
#   floor  no dependencies: `include_bytes!` of models/quant.safetensors, prints its length and
#          the same kind of checksum
# `cargo fetch` runs once per app first (network allowed; a failure is tolerated when the
# registry already has the crates). Then each round builds ours, base, floor in this order:
# the target folder removed, `cargo build --release --offline` timed (wall seconds), the
# distinct crates compiled counted (cargo's `Compiling name vX` lines, one per name and
# version), and a stripped copy of the binary measured. Printed: medians over the rounds, with
# the ratios ours/base and ours/floor. The crates each app compiled go to WORK/crates-APP.txt.
#
# Defaults: 3 rounds, work folder target/cold-build of this checkout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=3
work=$repo/target/cold-build
base_repo=
base_rev=

die() { echo "cold-build: $*" >&2; exit 1; }
usage() { sed -n 5p "$0" | sed 's/^# //' >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    --work) [ $# -ge 2 ] || usage; work=$2; shift 2 ;;
    --base-rev) [ $# -ge 2 ] || usage; base_rev=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "cold-build: unknown option $1" >&2; usage ;;
    *) [ -z "$base_repo" ] || usage; base_repo=$1; shift ;;
  esac
done
case $rounds in ''|*[!0-9]*|0) die "--rounds takes a positive number, not '$rounds'" ;; esac
[ -z "$base_repo" ] || [ -z "$base_rev" ] || die "give BASE_REPO or --base-rev, not both"

. "$here/scratch-package.sh"
mkdir -p "$work"
work=$(cd "$work" && pwd)
# Only what this script creates is removed, never the work folder itself.
rm -rf "$work/apps" "$work/targets" "$work/logs" "$work/stripped" "$work/results.tsv" \
  "$work"/crates-*.txt

base_tree=$work/base-tree
remove_base_tree() {
  if [ -e "$base_tree" ]; then
    git -C "$repo" worktree remove --force "$base_tree" 2>/dev/null || rm -rf "$base_tree"
  fi
  git -C "$repo" worktree prune
}
if [ -n "$base_rev" ]; then
  remove_base_tree
  rev=$(git -C "$repo" rev-parse --verify --quiet "$base_rev^{commit}") \
    || die "--base-rev: no commit '$base_rev' in $repo"
  trap remove_base_tree EXIT
  git -C "$repo" worktree add --quiet --detach "$base_tree" "$rev"
  base_repo=$base_tree
fi

apps="ours"
if [ -n "$base_repo" ]; then
  [ -d "$base_repo" ] || die "BASE_REPO $base_repo is not a folder"
  base_repo=$(cd "$base_repo" && pwd)
  [ -f "$base_repo/Cargo.lock" ] || die "BASE_REPO $base_repo has no Cargo.lock"
  for crate in weights-runtime weights-build; do
    [ -f "$base_repo/$crate/Cargo.toml" ] || die "BASE_REPO $base_repo has no $crate crate"
  done
  apps="$apps base"
fi
apps="$apps floor"

describe() { # a checkout's commit, and whether its work tree has changes
  local rev; rev=$(git -C "$1" rev-parse --short HEAD 2>/dev/null) || { echo "not a git checkout"; return; }
  if [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    rev="$rev + uncommitted changes"
  fi
  echo "$rev"
}

# make_app APP REPO: the scratch package of APP under WORK/apps/APP.
make_app() {
  local app=$1 src=$2 dir=$work/apps/$1
  local fixture=$src/tests/fixtures/packed4
  [ -f "$fixture/quant.webnn" ] && [ -f "$fixture/quant.safetensors" ] \
    || die "$src has no tests/fixtures/packed4/quant.webnn and quant.safetensors"
  mkdir -p "$dir/models"
  cp "$fixture/quant.webnn" "$fixture/quant.safetensors" "$dir/models/"
  if [ "$app" = floor ]; then
    scratch_manifest coldapp "$dir" "$src" none
    cat > "$dir/src/main.rs" <<'RS'
static DATA: &[u8] = include_bytes!("../models/quant.safetensors");

fn main() {
    let mut sum = 0u64;
    for &b in DATA {
        sum = sum.wrapping_mul(31).wrapping_add(u64::from(b));
    }
    println!("{} {}", DATA.len(), sum);
}
RS
  else
    scratch_manifest coldapp "$dir" "$src" ours
    echo 'fn main() { webnn_weights_build::compile_or_exit("models/quant.webnn"); }' > "$dir/build.rs"
    cat > "$dir/src/main.rs" <<'RS'
static M: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/quant.webnn");

fn main() {
    let mut sum = 0u64;
    for c in M.constants() {
        for &b in c.bytes() {
            sum = sum.wrapping_mul(31).wrapping_add(u64::from(b));
        }
    }
    println!("{} {}", M.constants().len(), sum);
}
RS
  fi
}

make_app ours "$repo"
[ -z "$base_repo" ] || make_app base "$base_repo"
make_app floor "$repo"
mkdir -p "$work/targets" "$work/logs" "$work/stripped"
export CARGO_TERM_COLOR=never CARGO_TERM_PROGRESS_WHEN=never

for app in $apps; do
  if ! (cd "$work/apps/$app" && cargo fetch --quiet) > "$work/logs/fetch-$app.log" 2>&1; then
    echo "cold-build: cargo fetch failed for $app (offline?); building with the registry as it is" >&2
  fi
done

# build APP ROUND: one cold build; appends "round app seconds crates stripped" to results.tsv.
build() {
  local app=$1 round=$2 dir=$work/apps/$1 target=$work/targets/$1
  local log=$work/logs/build-$app-$round.log start end seconds crates bin size
  rm -rf "$target"
  start=$(date +%s.%N)
  if ! (cd "$dir" && CARGO_TARGET_DIR=$target cargo build --release --offline) > "$log" 2>&1; then
    echo "cold-build: cargo build --release --offline of $app failed (round $round); last 30 lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
  # "Compiling name vX.Y.Z[ (path)]": one entry per name and version.
  sed -n 's/^ *Compiling \([^ ]*\) \(v[^ ]*\).*/\1 \2/p' "$log" | sort -u > "$work/logs/crates-$app-$round.txt"
  crates=$(wc -l < "$work/logs/crates-$app-$round.txt")
  bin=$target/release/coldapp
  [ -x "$bin" ] || die "no binary $bin after the build of $app"
  strip -o "$work/stripped/$app" "$bin"
  size=$(stat -c %s "$work/stripped/$app")
  printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$app" "$seconds" "$crates" "$size" >> "$work/results.tsv"
  if [ "$round" = 1 ]; then
    cp "$work/logs/crates-$app-$round.txt" "$work/crates-$app.txt"
    "$bin" > "$work/logs/run-$app.txt" || die "the binary of $app failed to run"
  fi
  echo "round $round/$rounds: $app $seconds s, $crates crates, stripped $size bytes" >&2
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
for round in $(seq 1 "$rounds"); do
  for app in $apps; do
    build "$app" "$round"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

sidecar=$work/apps/floor/models/quant.safetensors
echo
echo "cold build, release (debug = false), empty target folder, --offline; $rounds round(s), apps alternating, medians"
echo "ours:  $repo ($(describe "$repo"))"
if [ -n "$base_repo" ]; then
  if [ -n "$base_rev" ]; then
    echo "base:  --base-rev $base_rev ($(describe "$base_repo"))"
  else
    echo "base:  $base_repo ($(describe "$base_repo"))"
  fi
fi
echo "floor: include_bytes! of models/quant.safetensors, no dependencies"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load average before $load_before, after $load_after; $(rustc --version)"
for app in $apps; do
  echo "$app prints: $(cat "$work/logs/run-$app.txt")"
done
echo
python3 - "$work/results.tsv" "$sidecar" "$apps" <<'PY'
import statistics
import struct
import sys

results, sidecar, apps = sys.argv[1], sys.argv[2], sys.argv[3].split()
rows = {}
with open(results) as f:
    for line in f:
        _, app, seconds, crates, size = line.split("\t")
        rows.setdefault(app, []).append((float(seconds), int(crates), int(size)))

with open(sidecar, "rb") as f:
    blob = f.read()
(header_len,) = struct.unpack("<Q", blob[:8])
data = len(blob) - 8 - header_len

med = {}
for app in apps:
    r = rows[app]
    med[app] = {
        "seconds": statistics.median(x[0] for x in r),
        "min": min(x[0] for x in r),
        "max": max(x[0] for x in r),
        "crates": statistics.median(x[1] for x in r),
        "size": statistics.median(x[2] for x in r),
    }
floor = med["floor"]["size"]

def num(x):
    return f"{x:g}" if x == int(x) else f"{x:.1f}"

def kib(x):
    return f"{x / 1024:+.1f}"

print(f"sidecar models/quant.safetensors: {len(blob)} bytes, {data} of them tensor data")
print()
print("| app | crates | cold s (median) | min-max s | stripped bytes | beyond the weights KiB | vs include_bytes! KiB |")
print("|---|---:|---:|---:|---:|---:|---:|")
for app in apps:
    m = med[app]
    print(
        f"| {app} | {num(m['crates'])} | {m['seconds']:.2f} | {m['min']:.2f}-{m['max']:.2f} "
        f"| {num(m['size'])} | {kib(m['size'] - data)} | {kib(m['size'] - floor)} |"
    )
print()
for other in ("base", "floor"):
    if other in med:
        o, m = med[other], med["ours"]
        print(
            f"ours/{other}: seconds {m['seconds'] / o['seconds']:.2f}x, "
            f"stripped size {m['size'] / o['size']:.3f}x, crates {m['crates'] - o['crates']:+g}"
        )
PY
echo
lists=; for app in $apps; do lists="$lists $work/crates-$app.txt"; done
echo "crates compiled (round 1, one name and version a line; the package itself is coldapp in each):$lists"
