#!/usr/bin/env bash
# Build-time embedding benchmark.
#
# 1. Generates a model shaped like a real checkpoint (bench/embed/gen_model.py: 32 tensors =
#    about 256 MiB in a SafeTensors archive, one in eight of them BF16 declared float32 (12.5 MiB
#    of the archive, widened when embedded), plus one packed int4 tensor; and the resolved bytes
#    as one raw file) and scratch apps:
#      ours     build.rs: webnn_weights_build::compile_or_exit("models/model.webnn");
#               main.rs:  static MODEL = include_webnn_graph!("models/model.webnn");
#      ourslib  the same, with the static in src/lib.rs and used from main.rs
#      ourslock ours with a weights lock (models/model.webnn.lock, renewed with
#               `webnn-weights lock` after every change of the weights, untimed): the build
#               script hashes every byte it writes; its files link to ours's model
#      ibytes1  main.rs:  static DATA: &[u8] = include_bytes!("…/weights.bin");
#               with `codegen-units = 1` in [profile.release]: the strongest control (rustc
#               carries the bytes through one codegen unit instead of sixteen); the ratios use it
#      ibytes   the same under the default release profile (for reference)
#      floor    the build.rs of ours, but none of our crates in the application: main.rs
#               declares the linked symbol by hand (`unsafe extern "C" { safe static … }`,
#               its name and length read from the artifacts' index.json after a first build)
#               and sums it like ibytes1. Not a supported setup: the floor of embedding the
#               bytes through the linker, with no crate of ours for rustc to load
# 2. Measures `cargo build --release` of each (wall time, peak memory of the whole process
#    tree, and what each process held at that peak) after "weights changed" (the first 4 KiB
#    of one tensor rewritten), after "every weight new" (the whole model regenerated with the
#    same shapes; ours, ourslock and ibytes1 only) and after "main.rs changed", median of RUNS,
#    with ratios; in each round the apps build in a new random order. "locked" rows give
#    ourslock against ours: what verifying the lock adds.
#    Each measured step starts after `sync` (not timed), so that none pays for the disk
#    writeback of the step before it.
# 3. Per phase, each rerun by itself with exactly what cargo ran (commands and environment
#    captured from `cargo build -vv`): the build script after the weights changed; rustc up
#    to the object file (`--emit=obj`: front end and code generation); rustc with the link
#    (the link is the difference); removing the previous binary, which cargo does after rustc
#    (the file system frees the whole file then). Median of RUNS. What the phases leave of a
#    whole build is cargo's own work. Then the link again with lld's `--time-trace` (skipped
#    when the linker is not lld): its whole run, reading the inputs, writing the sections
#    (the copy of the data into the new binary), closing the output.
# 4. Checks that a no-op `cargo build --release` runs no build script and compiles nothing
#    (every app, the floor included).
# 5. Builds and runs a 2 GiB model with ours.
#
# Environment: WEBNN_BENCH_DIR (default target/bench-embed; needs ~8 GiB),
# WEBNN_BENCH_RUNS (default 3), WEBNN_BENCH_TENSORS (default 32 = 256 MiB),
# WEBNN_BENCH_BIG_TENSORS (default 256 = 2 GiB; 0 skips), WEBNN_BENCH_PSS=1 (also the peak of
# the proportional set size, which counts pages shared by processes once: see measure.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${WEBNN_BENCH_DIR:-$repo/target/bench-embed}
runs=${WEBNN_BENCH_RUNS:-3}
big=${WEBNN_BENCH_BIG_TENSORS:-256}
tensors=${WEBNN_BENCH_TENSORS:-32}
tools=$here/embed
results=$work/results.jsonl
mkdir -p "$work"
rm -f "$results" "$work/phases.log"

. "$here/scratch-package.sh"

# A scratch package: NAME DIR KIND (ours | ourslib | ibytes | ibytes1)
make_app() {
  local name=$1 dir=$2 kind=$3
  case $kind in
    ibytes) scratch_manifest "$name" "$dir" "$repo" none ;;
    ibytes1) scratch_manifest "$name" "$dir" "$repo" none 'codegen-units = 1' ;;
    floor) scratch_manifest "$name" "$dir" "$repo" build ;;
    *) scratch_manifest "$name" "$dir" "$repo" ours ;;
  esac
  if [ "$kind" = ourslock ]; then
    make_app "$name" "$dir" ours
    # Its own models folder (the lock beside the graph applies to this app only), whose
    # graph and sidecar are ours's files.
    mkdir -p "$dir/models"
    ln -sf "$work/ours/models/model.webnn" "$dir/models/model.webnn"
    ln -sf "$work/ours/models/model.safetensors" "$dir/models/model.safetensors"
    return
  fi
  if [ "$kind" = floor ]; then
    echo 'fn main() { webnn_weights_build::compile_or_exit("models/model.webnn"); }' > "$dir/build.rs"
    ln -s "$work/ours/models" "$dir/models"
    # Replaced after the first build, once the artifacts name the symbol.
    echo 'fn main() {}' > "$dir/src/main.rs"
  elif [ "$kind" = ourslib ]; then
    echo 'fn main() { webnn_weights_build::compile_or_exit("models/model.webnn"); }' > "$dir/build.rs"
    ln -s "$work/ours/models" "$dir/models"
    cat > "$dir/src/lib.rs" <<'RS'
pub static MODEL: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/model.webnn");
RS
    cat > "$dir/src/main.rs" <<'RS'
fn main() {
    let model = &bench_ourslib::MODEL;
    let mut sum = 0u64;
    for c in model.constants() {
        sum += c.bytes().iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>();
    }
    println!("{} constants, checksum {sum}", model.constants().len());
}
RS
  elif [ "$kind" = ours ]; then
    echo 'fn main() { webnn_weights_build::compile_or_exit("models/model.webnn"); }' > "$dir/build.rs"
    cat > "$dir/src/main.rs" <<'RS'
static MODEL: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("models/model.webnn");

fn main() {
    let (mut sum, mut bytes) = (0u64, 0usize);
    for c in MODEL.constants() {
        assert_eq!(c.bytes().as_ptr() as usize % 64, 0);
        sum += c.bytes().iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>();
        bytes += c.bytes().len();
    }
    println!("{} constants, {bytes} bytes, checksum {sum}", MODEL.constants().len());
}
RS
  else
    cat > "$dir/src/main.rs" <<RS
static DATA: &[u8] = include_bytes!("$work/ours/weights.bin");

fn main() {
    let sum: u64 = DATA.iter().step_by(4096).map(|&b| u64::from(b)).sum();
    println!("{} bytes, checksum {sum}", DATA.len());
}
RS
  fi
}

# Every measured step starts with nothing left to write back to disk from the step before
# (`sync`, not timed): otherwise a build pays for the previous one's writeback.
build() { # LABEL DIR TARGET_DIR
  # The locked app's lock is renewed for the current weights first, as a user would after
  # reviewing them (not timed).
  if [ "$2" = "$work/ourslock" ]; then
    "$cli" lock "$work/ourslock/models/model.webnn" --quiet
  fi
  sync
  CARGO_TARGET_DIR=$3 python3 "$tools/measure.py" "$results" "$1" -- \
    cargo build --release --quiet --manifest-path "$2/Cargo.toml"
}

phase() { # LABEL SCRIPT (its output goes to $work/phases.log)
  sync
  python3 "$tools/measure.py" "$results" "$1" -- bash "$2" >> "$work/phases.log" 2>&1
}

# The command cargo ran for LABEL's build script or rustc of CRATE, from `cargo build -vv`
# output on stdin, as a line bash can run (environment assignments, then the program).
captured() { # PATTERN
  grep -E "Running \`.*$1" | tail -n1 | sed -e 's/^ *Running `//' -e 's/`$//'
}

echo "== the webnn-weights CLI (renews the locked app's lock; not measured)"
(cd "$repo" && cargo build --release --quiet -p webnn-weights-cli)
cli=$repo/target/release/webnn-weights

echo "== generating the $((tensors * 8)) MiB model in $work/ours"
rm -rf "$work/ours" "$work/ourslock" "$work/ourslib" "$work/ibytes" "$work/ibytes1" "$work/floor"
make_app bench-ours "$work/ours" ours
make_app bench-ourslock "$work/ourslock" ourslock
make_app bench-ibytes "$work/ibytes" ibytes
make_app bench-ibytes1 "$work/ibytes1" ibytes1
sum=$(python3 "$tools/gen_model.py" "$work/ours" "$tensors")
make_app bench-ourslib "$work/ourslib" ourslib
make_app bench-floor "$work/floor" floor
ls -l "$work/ours/models/model.safetensors" "$work/ours/weights.bin"

echo "== first builds (dependencies; not measured for the comparison)"
build first-ours "$work/ours" "$work/target-ours"
build first-ourslock "$work/ourslock" "$work/target-ours"
build first-ibytes "$work/ibytes" "$work/target-ibytes"
build first-ibytes1 "$work/ibytes1" "$work/target-ibytes1"
build first-ourslib "$work/ourslib" "$work/target-ours"
# The floor app's main.rs: the symbol and length its build script wrote into index.json on a
# first build with an empty main.rs.
build first-floor-empty "$work/floor" "$work/target-ours"
index=$(ls "$work"/target-ours/release/build/bench-floor-*/out/webnn-weights/*/index.json | head -n1)
python3 - "$index" "$work/floor/src/main.rs" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))["data"]
open(sys.argv[2], "w").write(f"""// The floor: the bytes the build script linked, declared by hand (no crate of ours).
unsafe extern "C" {{
    #[link_name = "{data['symbol']}"]
    safe static DATA: [u8; {data['length']}];
}}

fn main() {{
    let sum: u64 = DATA.iter().step_by(4096).map(|&b| u64::from(b)).sum();
    println!("{{}} bytes, checksum {{sum}}", DATA.len());
}}
""")
PY
build first-floor "$work/floor" "$work/target-ours"

# The target folder of an app (ours, ourslib and the floor share one, as they share crates).
target_of() {
  case $1 in
    ibytes) echo "$work/target-ibytes" ;;
    ibytes1) echo "$work/target-ibytes1" ;;
    *) echo "$work/target-ours" ;;
  esac
}
# Builds SCENARIO for each of the APPS, in a new random order each time (so that no app always
# follows the 3 GB build of the default-profile control, or always comes first).
round() { # SCENARIO APPS...
  local scenario=$1 app
  shift
  for app in $(printf '%s\n' "$@" | shuf); do
    build "$scenario-$app" "$work/$app" "$(target_of "$app")"
  done
}

echo "== $runs x weights changed, main.rs changed (apps in random order each time)"
for i in $(seq "$runs"); do
  sum=$(python3 "$tools/gen_model.py" "$work/ours" "$tensors" --touch)
  round weights ours ourslock ibytes1 ibytes ourslib floor
  # Every byte new (a retrained checkpoint of the same shapes): the data file is rewritten.
  sum=$(python3 "$tools/gen_model.py" "$work/ours" "$tensors")
  round retrain ours ourslock ibytes1
  for app in ours ibytes ibytes1 ourslib floor; do echo "// edit $i" >> "$work/$app/src/main.rs"; done
  round main ours ibytes1 ibytes ourslib floor
done

echo "== phases: the build script, rustc to the object file, rustc with the link, cargo removing"
echo "   the previous binary"
# Capture what cargo runs: touch the weights (the build script reruns) and main.rs (rustc).
python3 "$tools/gen_model.py" "$work/ours" "$tensors" --touch > /dev/null
for app in ours ibytes1; do echo "// capture" >> "$work/$app/src/main.rs"; done
CARGO_TARGET_DIR=$work/target-ours cargo build --release -vv \
  --manifest-path "$work/ours/Cargo.toml" > "$work/vv-ours.log" 2>&1
CARGO_TARGET_DIR=$work/target-ibytes1 cargo build --release -vv \
  --manifest-path "$work/ibytes1/Cargo.toml" > "$work/vv-ibytes1.log" 2>&1
# Cargo runs both in the package's folder.
script=$(captured 'build-script-build' < "$work/vv-ours.log")
[ -n "$script" ] || { echo "FAIL: could not capture the build script (see $work/vv-ours.log)"; exit 1; }
printf 'cd %q\n%s\n' "$work/ours" "$script" > "$work/phase-script.sh"
declare -A trace_of
for app in ours ibytes1; do
  rustc_cmd=$(captured "rustc --crate-name bench_$app " < "$work/vv-$app.log")
  [ -n "$rustc_cmd" ] || { echo "FAIL: could not capture rustc of $app (see $work/vv-$app.log)"; exit 1; }
  printf 'cd %q\n%s\n' "$work/$app" "$rustc_cmd" > "$work/phase-link-$app.sh"
  # The same link with lld's time trace, which lld writes beside the binary: rustc links to
  # OUT_DIR/CRATE_NAME + EXTRA_FILENAME.
  printf 'cd %q\n%s -C link-arg=-Wl,--time-trace\n' "$work/$app" "$rustc_cmd" \
    > "$work/phase-lld-$app.sh"
  out_dir=$(sed -n 's/.* --out-dir \([^ ]*\) .*/\1/p' <<<"$rustc_cmd")
  extra=$(sed -n 's/.* -C extra-filename=\([^ ]*\) .*/\1/p' <<<"$rustc_cmd")
  trace_of[$app]=$out_dir/bench_$app$extra.time-trace
  printf 'cd %q\n%s\n' "$work/$app" "${rustc_cmd/--emit=dep-info,link/--emit=dep-info,obj}" \
    > "$work/phase-obj-$app.sh"
  grep -q -- '--emit=dep-info,obj' "$work/phase-obj-$app.sh" \
    || { echo "FAIL: rustc of $app has no --emit=dep-info,link to turn into obj"; exit 1; }
  # After rustc, cargo removes the previous binary's last link (the new one replaces it in
  # target/release): the file system frees the whole file there and then. Timed on a copy
  # of the binary, written and synced like the one a build replaces.
  printf 'rm -- %q\n' "$work/previous-$app" > "$work/phase-remove-$app.sh"
done
for i in $(seq "$runs"); do
  sum=$(python3 "$tools/gen_model.py" "$work/ours" "$tensors" --touch)
  phase "phase-script-ours" "$work/phase-script.sh"
  for app in ours ibytes1; do
    phase "phase-obj-$app" "$work/phase-obj-$app.sh"
    phase "phase-link-$app" "$work/phase-link-$app.sh"
    cp "$(target_of "$app")/release/bench-$app" "$work/previous-$app"
    phase "phase-remove-$app" "$work/phase-remove-$app.sh"
  done
done
grep -E '^  phase-' "$work/phases.log" || true

echo "== inside the linker: lld's own time trace of the link (--time-trace)"
rm -f "$work"/lld-*.json
for app in ours ibytes1; do
  trace=${trace_of[$app]}
  for i in $(seq "$runs"); do
    rm -f "$trace"
    sync
    if bash "$work/phase-lld-$app.sh" >> "$work/phases.log" 2>&1 && [ -f "$trace" ]; then
      mv "$trace" "$work/lld-$app-$i.json"
    else
      echo "  $app: no trace (the linker is not lld, or it failed: see $work/phases.log)"
      break
    fi
  done
done
# Leave the targets as cargo would have them (the reruns above bypassed its bookkeeping).
for app in ours ibytes1; do
  build "resync-$app" "$work/$app" "$work/target-$app"
done
build "resync-ourslib" "$work/ourslib" "$work/target-ours"
build "resync-floor" "$work/floor" "$work/target-ours"
build "resync-ibytes" "$work/ibytes" "$work/target-ibytes"

echo "== every binary holds the current bytes (expected checksum $sum)"
build "resync-ourslock" "$work/ourslock" "$work/target-ours"
for app in ours ourslock ibytes1 ibytes ourslib floor; do
  target=$work/target-$app
  case $app in ourslib | floor | ourslock) target=$work/target-ours ;; esac
  out=$("$target/release/bench-$app")
  echo "  $app: $out"
  case "$out" in *"checksum $sum") ;; *) echo "FAIL: $app has stale bytes"; exit 1 ;; esac
done

echo "== no-op rebuild"
for app in ours ourslock ibytes1 ibytes ourslib floor; do
  target=$work/target-$app
  case $app in ourslib | floor | ourslock) target=$work/target-ours ;; esac
  log=$work/noop-$app.log
  CARGO_TARGET_DIR=$target python3 "$tools/measure.py" "$results" "noop-$app" -- \
    cargo build --release -v --manifest-path "$work/$app/Cargo.toml" 2> "$log"
  if grep -E '^ *(Compiling|Running|Dirty)' "$log"; then
    echo "FAIL: the no-op build of $app ran something (see $log)"
    exit 1
  fi
  echo "  $app: no build script run, nothing compiled"
done

if [ "$big" -gt 0 ]; then
  echo "== $((big * 8)) MiB model: build and run (ours)"
  rm -rf "$work/big"
  make_app bench-big "$work/big" ours
  bigsum=$(python3 "$tools/gen_model.py" "$work/big" "$big")
  rm -f "$work/big/weights.bin"
  build "big-build" "$work/big" "$work/target-ours"
  out=$(python3 "$tools/measure.py" "$results" "big-run" -- "$work/target-ours/release/bench-big")
  echo "  $out"
  case "$out" in *"checksum $bigsum") ;; *) echo "FAIL: 2 GiB binary has wrong bytes"; exit 1 ;; esac
  ls -l "$work/target-ours/release/bench-big"
  CARGO_TARGET_DIR=$work/target-ours python3 "$tools/measure.py" "$results" "big-noop" -- \
    cargo build --release -v --manifest-path "$work/big/Cargo.toml" 2> "$work/noop-big.log"
  if grep -E '^ *(Compiling|Running|Dirty)' "$work/noop-big.log"; then
    echo "FAIL: the no-op build of the 2 GiB app ran something"; exit 1
  fi
fi

echo
python3 - "$results" "$work" <<'PY'
import glob, json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(label, key):
    values = [r[key] for r in rows if r["label"] == label and key in r]
    return statistics.median(values) if values else None
print("control: include_bytes! with codegen-units = 1 (ibytes1); include_bytes! under the default")
print("release profile (ibytes) for reference; floor: our build script, none of our crates in the")
print("application (the linked symbol declared by hand); medians; ratios to three places, so")
print("that a target such as 0.3x reads off exactly")
print(f"{'rebuild after':<16} {'ours':>18} {'ibytes1':>18} {'time ratio':>11} {'memory ratio':>13} {'ibytes':>18}")
for scenario, name, ours in (("weights", "weights changed", "ours"), ("main", "main.rs changed", "ours"),
                             ("retrain", "every weight new", "ours"),
                             ("noop", "nothing changed", "ours"),
                             ("weights", "weights (lib)", "ourslib"), ("main", "main.rs (lib)", "ourslib"),
                             ("weights", "weights (floor)", "floor"), ("main", "main.rs (floor)", "floor")):
    o_t, o_m = med(f"{scenario}-{ours}", "seconds"), med(f"{scenario}-{ours}", "peak_bytes")
    c_t, c_m = med(f"{scenario}-ibytes1", "seconds"), med(f"{scenario}-ibytes1", "peak_bytes")
    d_t, d_m = med(f"{scenario}-ibytes", "seconds"), med(f"{scenario}-ibytes", "peak_bytes")
    reference = f"{d_t:7.2f} s {d_m/1e9:5.2f} GB" if d_t is not None else f"{'(not run)':>18}"
    print(f"{name:<16} {o_t:7.2f} s {o_m/1e9:5.2f} GB {c_t:7.2f} s {c_m/1e9:5.2f} GB"
          f" {o_t/c_t:10.3f}x {o_m/c_m:12.3f}x {reference}")
print()
print("verifying a weights lock: ourslock against ours, side by side in the same rounds (medians)")
print(f"{'rebuild after':<18} {'ours':>18} {'ourslock':>18} {'added':>9} {'time ratio':>11}")
for scenario, name in (("weights", "weights changed"), ("retrain", "every weight new"),
                       ("noop", "nothing changed")):
    o_t, o_m = med(f"{scenario}-ours", "seconds"), med(f"{scenario}-ours", "peak_bytes")
    l_t, l_m = med(f"{scenario}-ourslock", "seconds"), med(f"{scenario}-ourslock", "peak_bytes")
    if o_t is not None and l_t is not None:
        print(f"{name:<18} {o_t:7.2f} s {o_m/1e9:5.2f} GB {l_t:7.2f} s {l_m/1e9:5.2f} GB"
              f" {l_t - o_t:+7.2f} s {l_t/o_t:10.3f}x")
print()
print("phases, each rerun by itself (medians): time, peak memory; then what the phases leave of")
print("the whole builds above: cargo's own work (fingerprints, scheduling, starting processes)")
print("and the noise between separate measurements")
def row(name, seconds, peak=None):
    memory = f" {peak/1e9:5.2f} GB" if peak is not None else ""
    print(f"  {name:<46} {seconds:7.2f} s{memory}")
for app in ("ours", "ibytes1"):
    phases = {p: med(f"phase-{p}-{app}", "seconds") for p in ("script", "obj", "link", "remove")}
    for p, name in (("script", "build script (weights changed)"),
                    ("obj", "rustc to the object file"), ("link", "rustc with the link")):
        if phases[p] is not None:
            row(f"{app}: {name}", phases[p], med(f"phase-{p}-{app}", "peak_bytes"))
    if phases["obj"] is not None and phases["link"] is not None:
        row(f"{app}: the link (difference)", phases["link"] - phases["obj"])
    if phases["remove"] is not None:
        row(f"{app}: removing the previous binary", phases["remove"])
    for scenario, name, parts in (("weights", "weights changed", ("script", "link", "remove")),
                                  ("main", "main.rs changed", ("link", "remove"))):
        whole = med(f"{scenario}-{app}", "seconds")
        spent = [phases[p] for p in parts if p != "script" or app == "ours"]
        if whole is not None and None not in spent:
            row(f"{app}: the rest, {name}", whole - sum(spent))
def lld_traces(app):
    traces = []
    for path in sorted(glob.glob(f"{sys.argv[2]}/lld-{app}-*.json")):
        events = json.load(open(path))["traceEvents"]
        traces.append({e["name"][len("Total "):]: e["dur"] / 1e6 for e in events
                       if e.get("ph") == "X" and e["name"].startswith("Total ")})
    return traces
traces_of = {app: lld_traces(app) for app in ("ours", "ibytes1")}
if any(traces_of.values()):
    print("inside the linker (lld's --time-trace of the link phase, medians): the whole link,")
    print("then its largest parts; writing the sections is the copy of the data into the output")
for app, traces in traces_of.items():
    for part, name in (("ExecuteLinker", "the whole link"),
                       ("Parse input files", "reading the inputs"),
                       ("Write sections", "writing the sections"),
                       ("Commit buffer to disk", "closing and renaming the output")):
        values = [t[part] for t in traces if part in t]
        if values:
            row(f"{app}: lld, {name}", statistics.median(values))
def group(name):
    if name in ("cargo", "rustc"):
        return name
    if name in ("rust-lld", "ld.lld", "lld", "ld", "ld.bfd", "ld.gold", "mold", "ld.mold"):
        return "linker"
    if name in ("cc", "gcc", "collect2", "clang"):
        return "cc"
    return "build script" if name.startswith("build-script") else "other"
groups = ("cargo", "rustc", "linker", "cc", "build script", "other")
def by_group(record):
    held = dict.fromkeys(groups, 0)
    for name, size in record["peak_by_process"].items():
        held[group(name)] += size
    return held
scenarios = (("weights", "weights changed"), ("main", "main.rs changed"))
peak_apps = ("ours", "floor", "ibytes1")
heading = ["memory at the peak, by process (medians, GB): what each process held when the whole",
           "tree peaked (cc: the linker driver, cc and collect2)",
           f"  {'':<24}" + "".join(f"{g:>13}" for g in groups) + f"{'whole':>8}"]
for scenario, name in scenarios:
    for app in peak_apps:
        runs = [r for r in rows if r["label"] == f"{scenario}-{app}" and "peak_by_process" in r]
        if not runs:
            continue
        if heading:  # printed once, before the first row there is
            print("\n".join(heading))
            heading = None
        held = [by_group(r) for r in runs]
        cells = "".join(f"{statistics.median(h[g] for h in held)/1e9:13.3f}" for g in groups)
        whole = statistics.median(r["peak_bytes"] for r in runs)
        print(f"  {app + ', ' + name:<24}" + cells + f"{whole/1e9:8.3f}")
for scenario, name in scenarios:
    pss = {app: med(f"{scenario}-{app}", "peak_pss_bytes") for app in peak_apps}
    if None not in pss.values():
        print(f"  proportional set size (WEBNN_BENCH_PSS=1), {name}: ours {pss['ours']/1e9:.3f} GB,"
              f" floor {pss['floor']/1e9:.3f} GB, ibytes1 {pss['ibytes1']/1e9:.3f} GB;"
              f" ratios {pss['ours']/pss['ibytes1']:.3f}x, floor {pss['floor']/pss['ibytes1']:.3f}x")
for label in ("big-build", "big-run", "big-noop"):
    t, m = med(label, "seconds"), med(label, "peak_bytes")
    if t is not None:
        print(f"{label:<16} {t:7.2f} s {m/1e9:5.2f} GB")
PY
