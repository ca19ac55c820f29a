#!/usr/bin/env bash
# A large sharded checkpoint embedded in a real x86-64 Linux program, built with cargo.
#
# Usage: bash bench/embed-sharded.sh [GIB]   (default 6)
#
# 1. Writes a model of GIB GiB in three SafeTensors shards with a Hugging Face index
#    (`for_target sharded`: 1 GiB uint8 constants, the shards sparse except for marked 4 KiB
#    windows at each constant's start, middle and end, and two small constants; samples.tsv
#    holds each window's FNV-1a, computed from the formula that wrote it) into a scratch
#    package: build.rs `webnn_weights_build::compile_or_exit("models/huge.webnn")`, main.rs
#    `static MODEL = include_webnn_graph!("models/huge.webnn")`, which checks every window
#    through `MODEL.constant(name).bytes()` (byte-exact, 64-byte aligned), and uses the
#    program's own statics and std (a Vec, a HashMap, formatting) beside the data.
# 2. `cargo build --release` of it, measured like bench/embed.sh (bench/embed/measure.py:
#    wall time, peak memory of the whole process tree, and each process's share at that
#    peak): "cold" (the dependencies compile too), then "weights changed" (the first window
#    of w0 rewritten with other bytes, samples.tsv updated), then the program runs.
# 3. Prints the disk the build used: the shards' apparent and allocated size, the static
#    library and the binary.
#
# Needs about 2 x GIB GiB of disk (library and binary; the shards are sparse) and, for the
# link, memory for the mapped input and output (see docs/embedding.md, "Size limits").
# Environment: WEBNN_BENCH_DIR (default target/bench-sharded).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${WEBNN_BENCH_DIR:-$repo/target/bench-sharded}
gib=${1:-6}
tools=$here/embed
results=$work/results.jsonl
. "$here/scratch-package.sh"

rm -rf "$work"
mkdir -p "$work"
: >"$results"
app=$work/app
scratch_manifest bench-sharded "$app" "$repo" ours
(cd "$repo" && cargo build -q -p webnn-weights-build --example for_target)
"$repo/target/debug/examples/for_target" sharded "$app/models" "$gib"
echo 'fn main() { webnn_weights_build::compile_or_exit("models/huge.webnn"); }' >"$app/build.rs"
cat >"$app/src/main.rs" <<'RS'
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

static MODEL: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/huge.webnn");
/// The program's own data beside the embedded bytes.
static OWN: [u64; 4] = [1, 2, 3, 4];
static COUNTER: AtomicU64 = AtomicU64::new(0);

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn main() {
    let samples = std::env::args().nth(1).expect("usage: bench-sharded SAMPLES.TSV");
    let text = std::fs::read_to_string(samples).unwrap();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut total = 0usize;
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (off, len): (usize, usize) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        let c = MODEL.constant(f[0]).unwrap_or_else(|| panic!("no constant {}", f[0]));
        let window = &c.bytes()[off..off + len];
        assert_eq!(window.as_ptr() as usize % 64, 0, "{} at {off}", f[0]);
        let found = format!("{:016x}", fnv1a(window));
        assert_eq!(found, f[3], "{} at {off}: bytes differ", f[0]);
        *seen.entry(f[0].to_string()).or_default() += 1;
        COUNTER.fetch_add(1, Ordering::Relaxed);
        total += c.bytes().len() * usize::from(off == 0);
    }
    let windows: usize = seen.values().sum();
    let counter = COUNTER.load(Ordering::Relaxed);
    assert_eq!(counter as usize, windows);
    assert_eq!(OWN.iter().sum::<u64>(), 10);
    let v: Vec<u64> = (0..1000).collect();
    println!(
        "{} constants, {total} bytes; {windows} windows of {} constants byte-exact and 64-byte \
         aligned; own statics and std ok ({})",
        MODEL.constants().len(),
        seen.len(),
        v.iter().sum::<u64>()
    );
}
RS

build() { # LABEL
  sync
  CARGO_TARGET_DIR=$work/target python3 "$tools/measure.py" "$results" "$1" -- \
    cargo build --release --quiet --manifest-path "$app/Cargo.toml"
}

echo "== $gib GiB in three shards: cold build (dependencies too)"
build cold
echo "== weights changed (the first window of w0 rewritten)"
python3 - "$app/models" <<'PY'
import json, struct, sys
d = sys.argv[1]
index = json.load(open(f"{d}/huge.safetensors.index.json"))
shard = f"{d}/" + index["weight_map"]["w0"]
with open(shard, "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    start = 8 + n + json.loads(f.read(n))["w0"]["data_offsets"][0]
    new = bytes((k * 13 + 7) % 251 + 1 for k in range(4096))
    f.seek(start)
    f.write(new)
h = 0xcbf29ce484222325
for b in new:
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
lines = open(f"{d}/samples.tsv").read().splitlines()
lines = [f"w0\t0\t4096\t{h:016x}" if l.startswith("w0\t0\t") else l for l in lines]
open(f"{d}/samples.tsv", "w").write("\n".join(lines) + "\n")
PY
build "weights-changed"
echo "== run"
python3 "$tools/measure.py" "$results" run -- "$work/target/release/bench-sharded" \
  "$app/models/samples.tsv"
echo "== disk"
du -h --apparent-size -c "$app"/models/*.safetensors | tail -n1 | sed 's/total/shards, apparent size/'
du -h -c "$app"/models/*.safetensors | tail -n1 | sed 's/total/shards, allocated (sparse)/'
ls -l "$work"/target/release/build/bench-sharded-*/out/webnn-weights/*/*.a
ls -l "$work/target/release/bench-sharded"
