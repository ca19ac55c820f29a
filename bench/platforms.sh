#!/usr/bin/env bash
# Real-linker checks of the static-library path for every supported target, on Linux.
#
# 1. Installs the tools (Debian): MinGW-w64 gcc, wine64, qemu-user, the AArch64 cross gcc,
#    clang, lld (ld.lld, ld64.lld, lld-link) and llvm.
# 2. Builds `weights-build/examples/for_target.rs` and with it a model of eight constants of
#    odd sizes (1 to 4097 bytes, several types) and, unless WEBNN_PLATFORMS_BIG=0, a model of
#    one 2 GiB constant.
# 3. For each target: runs the build helper with cargo's CARGO_CFG_TARGET_* variables of that
#    target (what cargo sets for a cross build), compiles a "Rust probe" — the macro's
#    `#[link_name]` extern static, compiled by this machine's rustc for the target as a
#    `#![no_core]` object (no standard library for those targets exists here;
#    RUSTC_BOOTSTRAP=1 allows `no_core`) — and links `bench/platforms/check.c`, the probe and
#    the library (found by `-l`/`/libpath` like rustc's linker line), then:
#      x86_64-unknown-linux-gnu   gcc                      run natively
#      aarch64-unknown-linux-gnu  aarch64-linux-gnu-gcc    run under qemu-aarch64
#      x86_64-pc-windows-gnu      x86_64-w64-mingw32-gcc   run under wine
#      x86_64-pc-windows-msvc     clang + lld-link         run under wine, and read back
#      aarch64-pc-windows-msvc    clang + lld-link         read back from the linked image
#      x86_64-apple-darwin        clang + ld64.lld dylib   read back from the linked image
#      aarch64-apple-darwin       clang + ld64.lld dylib   read back from the linked image
#    "Run" means check.c compares every constant's bytes (FNV-1a of the run-time resolver's
#    bytes) and 64-byte alignment, that the Rust probe's references resolved to the same
#    addresses, and that the end symbol is the linked length after the data symbol; "read
#    back" means `for_target check` finds both symbols in the linked image and compares the
#    same. The probe's undefined symbols and the library's defined symbols are printed side
#    by side.
#
# A target past its size limit (docs/embedding.md, "Size limits") is refused by the build
# helper before it writes anything: recorded as REFUSED with the helper's message.
#
# 4. Unless WEBNN_PLATFORMS_HUGE_GIB=0: a model of that many GiB (default 6) in three sparse
#    SafeTensors shards (`for_target sharded`: 1 GiB constants with marked 4 KiB windows at
#    their start, middle and end, and two small constants), built for x86-64 and AArch64 Linux
#    and linked by every linker installed here (GNU ld, lld (rust-lld), gold, mold) with the
#    arguments the build script gives rustc (the linker script where there is one: AArch64
#    past 4 GiB - 128 MiB) as a PIE, as rustc links these targets by default (AArch64 also
#    `-static`), then run (AArch64 under qemu-aarch64): every marked
#    window byte-exact and 64-byte aligned, both ends' symbols as C and the Rust probe see
#    them, and the program's own .bss/.data and C library working beside the data (check.c).
#    A linker that fails is recorded as FAIL with its first message (KNOWN for the combinations
#    docs/embedding.md documents as unsupported: gold, mold, rust-lld -static on AArch64, whose
#    failures do not make the script fail); the largest outputs are
#    deleted after each check. Peak disk: the shards (sparse), the library and one program.
#
# 5. Unless WEBNN_PLATFORMS_MACHO_GIB=0: a sharded model of that many GiB (default 3.75, under
#    the Mach-O limit of 4 GiB - 128 MiB) for both macOS targets, linked by ld64.lld as in 3,
#    read back at the symbol, and the linked file's offsets checked (`for_target check`).
#
# Environment: WEBNN_PLATFORMS_DIR (default target/platforms), WEBNN_PLATFORMS_BIG (1),
# WEBNN_PLATFORMS_HUGE_GIB (6; 0 skips), WEBNN_PLATFORMS_HUGE_LINKERS (the linkers of step 4;
# default "bfd lld gold mold"), WEBNN_PLATFORMS_HUGE_MODES ("pie static"),
# WEBNN_PLATFORMS_MACHO_GIB (3.75; 0 skips), WEBNN_PLATFORMS_TARGETS (space-separated triples;
# default all seven).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${WEBNN_PLATFORMS_DIR:-$repo/target/platforms}
big=${WEBNN_PLATFORMS_BIG:-1}
huge=${WEBNN_PLATFORMS_HUGE_GIB:-6}
macho=${WEBNN_PLATFORMS_MACHO_GIB:-3.75}
mkdir -p "$work"
results=$work/results.txt
: >"$results"

need=()
for tool in x86_64-w64-mingw32-gcc qemu-aarch64 aarch64-linux-gnu-gcc clang lld-link llvm-nm mold; do
  command -v "$tool" >/dev/null || need+=("$tool")
done
[ -x /usr/lib/wine/wine64 ] || command -v wine64 >/dev/null || need+=(wine64)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing tools (missing: ${need[*]})"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    gcc-mingw-w64-x86-64 wine64 qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
    clang lld llvm mold >/dev/null
fi
wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
ld64=$(command -v ld64.lld || ls /usr/bin/ld64.lld-* 2>/dev/null | head -n1)
export WINEPREFIX=$work/wineprefix WINEDEBUG=-all

(cd "$repo" && cargo build -q -p webnn-weights-build --example for_target) || exit 1
drv=$repo/target/debug/examples/for_target
rm -rf "$work/odd" "$work/big" "$work/huge" "$work/macho"
"$drv" model "$work/odd/models" || exit 1
[ "$big" = 1 ] && { "$drv" big "$work/big/models" || exit 1; }
[ "$huge" != 0 ] && { "$drv" sharded "$work/huge/models" "$huge" || exit 1; }
[ "$macho" != 0 ] && { "$drv" sharded "$work/macho/models" "$macho" || exit 1; }
# rustc's own lld, as `-fuse-ld=lld` finds it (what `-C link-self-contained=+linker` uses).
rust_lld_dir=$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/gcc-ld
# A folder whose `ld` is mold, for the cross gcc (gcc 12 finds mold only as `ld` on -B).
mkdir -p "$work/mold-bin" && ln -sf "$(command -v mold)" "$work/mold-bin/ld"

# Cargo's description of a target: sets the variables a build script sees.
describe() {
  local triple=$1 arch os env
  arch=${triple%%-*}
  case $triple in
    *-apple-darwin) os=macos env= ;;
    *-windows-msvc) os=windows env=msvc ;;
    *-windows-gnu) os=windows env=gnu ;;
    *-linux-gnu) os=linux env=gnu ;;
  esac
  export TARGET=$triple CARGO_CFG_TARGET_OS=$os CARGO_CFG_TARGET_ARCH=$arch \
    CARGO_CFG_TARGET_ENV=$env CARGO_CFG_TARGET_ENDIAN=little CARGO_CFG_TARGET_POINTER_WIDTH=64 \
    CARGO_PKG_NAME=platform-check CARGO_PKG_VERSION=0.0.0
}

# The macro's declarations, compiled by rustc for the target (no_core: no std here): the
# zero-sized symbols at the first linked byte and just past the last, whose addresses
# (`&raw const`) the probe returns.
probe() {
  local triple=$1 symbol=$2 dir=$3 end=$4
  cat >"$dir/probe.rs" <<EOF
#![feature(no_core, lang_items)]
#![allow(internal_features)]
#![no_core]
#[lang = "pointee_sized"] pub trait PointeeSized {}
#[lang = "meta_sized"] pub trait MetaSized: PointeeSized {}
#[lang = "sized"] pub trait Sized: MetaSized {}
unsafe extern "C" {
    #[link_name = "$symbol"]
    safe static __WEBNN_WEIGHTS_DATA: [u8; 0];
    #[link_name = "$end"]
    safe static __WEBNN_WEIGHTS_DATA_END: [u8; 0];
}
#[no_mangle]
pub extern "C" fn webnn_probe() -> *const u8 {
    &raw const __WEBNN_WEIGHTS_DATA as *const u8
}
#[no_mangle]
pub extern "C" fn webnn_probe_end() -> *const u8 {
    &raw const __WEBNN_WEIGHTS_DATA_END as *const u8
}
EOF
  RUSTC_BOOTSTRAP=1 rustc --crate-type=lib --target "$triple" --emit=obj -C opt-level=2 \
    -C panic=abort -o "$dir/probe.o" "$dir/probe.rs"
}

record() { echo "$*" | tee -a "$results"; }

# check TRIPLE PKG GRAPH LABEL
check() {
  local triple=$1 pkg=$2 graph=$3 label=$4
  local out=$work/out/$label-$triple
  rm -rf "$out"
  mkdir -p "$out"
  local info
  info=$(describe "$triple" && "$drv" build "$pkg" "$graph" "$out") || {
    record "$label $triple: FAIL build helper"
    return
  }
  local error lib libdir sym len linked end
  error=$(sed -n 's/^error=//p' <<<"$info")
  if [ -n "$error" ]; then
    record "$label $triple: REFUSED before writing: $error"
    return
  fi
  lib=$(sed -n 's/^library=//p' <<<"$info")
  libdir=$(sed -n 's/^library_dir=//p' <<<"$info")
  sym=$(sed -n 's/^link_name=//p' <<<"$info")
  len=$(sed -n 's/^data_len=//p' <<<"$info")
  linked=$(sed -n 's/^linked_len=//p' <<<"$info")
  end=$(sed -n 's/^end_link_name=//p' <<<"$info")
  local name=${lib##*/}
  name=${name%.a}
  name=${name%.lib}
  name=${name#lib}
  local defined=$sym defined_end=$end
  case $triple in *-apple-darwin) defined=_$sym defined_end=_$end ;; esac
  # Every symbol the macro declares: the data's and the end symbol (the library defines
  # exactly these).
  if [ -z "$end" ]; then
    record "$label $triple: FAIL no end symbol in the index"
    return
  fi
  local expected="$defined $defined_end"
  if ! probe "$triple" "$sym" "$out" "$end"; then
    record "$label $triple: FAIL rustc probe"
    return
  fi
  local referenced in_lib
  referenced=$(llvm-nm -u "$out/probe.o" | awk '{print $NF}' | grep webnn_weights_data | sort | xargs)
  in_lib=$(llvm-nm --defined-only "$lib" 2>/dev/null | awk '$2 ~ /[RrDdSsTt]/ {print $NF}' | grep webnn_weights_data | sort | xargs)
  expected=$(echo "$expected" | tr ' ' '\n' | sort | xargs)
  echo "  $triple: rustc references '$referenced', the library defines '$in_lib'"
  if [ "$referenced" != "$expected" ] || [ "$in_lib" != "$expected" ]; then
    record "$label $triple: FAIL symbol: rustc references '$referenced', library defines '$in_lib'"
    return
  fi
  local c=$here/platforms/check.c
  local cflags=(-O1 -I"$out" -DWEBNN_SYMBOL="$sym" -DHAVE_PROBE -DWEBNN_END_SYMBOL="$end"
    -DWEBNN_LINKED_LEN="${linked}ull")
  local how status=0
  case $triple in
    x86_64-unknown-linux-gnu)
      how="gcc, run natively"
      # -fPIC: reach the symbols through the GOT, as rustc's code does (R_X86_64_GOTPCREL);
      # gcc's default PIE code reaches extern data with 32-bit PC-relative offsets, which
      # cannot span the data up to its end symbol past 2 GiB.
      gcc -fPIC "${cflags[@]}" -DHAVE_LIBC "$c" "$out/probe.o" -L"$libdir" -l"$name" -o "$out/check" &&
        "$out/check" || status=$?
      ;;
    aarch64-unknown-linux-gnu)
      how="aarch64-linux-gnu-gcc -static, run under qemu-aarch64"
      aarch64-linux-gnu-gcc -static "${cflags[@]}" -DHAVE_LIBC "$c" "$out/probe.o" \
        -L"$libdir" -l"$name" -o "$out/check" && qemu-aarch64 "$out/check" || status=$?
      ;;
    x86_64-pc-windows-gnu)
      how="x86_64-w64-mingw32-gcc, run under wine"
      x86_64-w64-mingw32-gcc "${cflags[@]}" -DHAVE_LIBC "$c" "$out/probe.o" -L"$libdir" \
        -l"$name" -o "$out/check.exe" && "$wine" "$out/check.exe" || status=$?
      ;;
    *-pc-windows-msvc)
      local machine=x64
      [ "${triple%%-*}" = aarch64 ] && machine=arm64
      clang --target="$triple" "${cflags[@]}" -c "$c" -o "$out/check.obj" &&
        lld-link /nologo /machine:$machine /entry:main /subsystem:console /nodefaultlib \
          /export:"$sym",DATA /export:"$end",DATA /libpath:"$libdir" /out:"$out/check.exe" "$out/check.obj" \
          "$out/probe.o" "$name.lib" || status=$?
      if [ $status = 0 ] && [ $machine = x64 ]; then
        how="clang + lld-link, run under wine, read back"
        "$wine" "$out/check.exe" || status=$?
      else
        how="clang + lld-link, read back"
      fi
      [ $status = 0 ] && { "$drv" check "$out/check.exe" "$sym" "$out/constants.tsv" "$end" "$linked" || status=$?; }
      ;;
    *-apple-darwin)
      local arch=${triple%%-*} clang_target=arm64-apple-macos11 version=11.0
      [ "$arch" = aarch64 ] && arch=arm64
      [ "$arch" = x86_64 ] && clang_target=x86_64-apple-macos10.12 version=10.12
      how="clang -target $clang_target + ld64.lld -dylib, read back"
      clang -target $clang_target "${cflags[@]}" -c "$c" -o "$out/check.o" &&
        "$ld64" -arch "$arch" -platform_version macos "$version" "$version" -dylib \
          -o "$out/check.dylib" "$out/check.o" "$out/probe.o" -L"$libdir" -l"$name" &&
        "$drv" check "$out/check.dylib" "$defined" "$out/constants.tsv" "$defined_end" "$linked" || status=$?
      ;;
  esac
  if [ $status = 0 ]; then
    record "$label $triple: OK ($how; $len data bytes; symbol $defined)"
  else
    record "$label $triple: FAIL status $status ($how)"
  fi
  # The large outputs: keep only what the record says.
  case $label in big | macho) rm -rf "$out" ;; esac
}

# check_huge TRIPLE: the sharded model for a Linux target, linked by each linker.
check_huge() {
  local triple=$1 out=$work/out/huge-$1 info
  rm -rf "$out"
  mkdir -p "$out"
  local start=$(date +%s)
  info=$(describe "$triple" && "$drv" build "$work/huge" models/huge.webnn "$out") || {
    record "huge $triple: FAIL build helper"
    return
  }
  local error
  error=$(sed -n 's/^error=//p' <<<"$info")
  if [ -n "$error" ]; then
    record "huge $triple: REFUSED before writing: $error"
    return
  fi
  echo "   build helper: $(($(date +%s) - start)) s"
  local lib libdir sym len linked end script name
  lib=$(sed -n 's/^library=//p' <<<"$info")
  libdir=$(sed -n 's/^library_dir=//p' <<<"$info")
  sym=$(sed -n 's/^link_name=//p' <<<"$info")
  len=$(sed -n 's/^data_len=//p' <<<"$info")
  linked=$(sed -n 's/^linked_len=//p' <<<"$info")
  end=$(sed -n 's/^end_link_name=//p' <<<"$info")
  script=$(sed -n 's/^linker_script=//p' <<<"$info")
  name=${lib##*/}
  name=${name%.a}
  name=${name#lib}
  probe "$triple" "$sym" "$out" "$end" || {
    record "huge $triple: FAIL rustc probe"
    return
  }
  local cc=gcc run=() variants=("pie bfd" "pie lld" "pie gold" "pie mold")
  if [ "$triple" = aarch64-unknown-linux-gnu ]; then
    # rustc links aarch64-unknown-linux-gnu programs as dynamic PIEs; static (crt-static)
    # too, for the record.
    cc=aarch64-linux-gnu-gcc run=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
    variants+=("static bfd" "static lld")
  fi
  local args=(-fPIC -O1 -I"$out" -DWEBNN_SYMBOL="$sym" -DHAVE_PROBE -DHAVE_LIBC
    -DWEBNN_END_SYMBOL="$end" -DWEBNN_LINKED_LEN="${linked}ull")
  # What rustc's linker line gets from the build script: the archive, and the script.
  local link=(-L"$libdir" -l"$name")
  [ -n "$script" ] && link+=(-Xlinker --script="$script")
  "$cc" "${args[@]}" -c "$here/platforms/check.c" -o "$out/check.o" || {
    record "huge $triple: FAIL compiling check.c"
    return
  }
  local variant
  for variant in "${variants[@]}"; do
    local mode=${variant% *} linker=${variant#* } how=() static=()
    case " ${WEBNN_PLATFORMS_HUGE_LINKERS:-bfd lld gold mold} " in
      *" $linker "*) ;;
      *) continue ;;
    esac
    case " ${WEBNN_PLATFORMS_HUGE_MODES:-pie static} " in
      *" $mode "*) ;;
      *) continue ;;
    esac
    case $linker in
      lld) how=(-B"$rust_lld_dir" -fuse-ld=lld) ;;
      mold) how=(-B"$work/mold-bin") ;;
      *) how=(-fuse-ld="$linker") ;;
    esac
    [ "$mode" = static ] && static=(-static)
    local t0 msg status=0 secs
    t0=$(date +%s)
    msg=$(/usr/bin/time -f "peak %M KiB" "$cc" "${static[@]}" "${how[@]}" "$out/check.o" "$out/probe.o" \
      "${link[@]}" -o "$out/check" 2>&1) || status=$?
    secs=$(($(date +%s) - t0))
    local peak
    peak=$(grep -o 'peak [0-9]* KiB' <<<"$msg" | tail -n1)
    # Combinations docs/embedding.md documents as unsupported past 4 GiB: their failure is
    # recorded as KNOWN, so that the script's status reports only unexpected failures.
    local verdict=FAIL
    case "$linker $mode $triple" in
      "gold "* | "mold "* | "lld static aarch64"*) verdict="KNOWN (unsupported, docs/embedding.md)" ;;
    esac
    if [ $status != 0 ]; then
      record "huge $triple $mode $linker: $verdict link ($secs s): $(grep -m1 -iE 'error|fatal|truncated|range' <<<"$msg" | cut -c1-240)"
      rm -f "$out/check"
      continue
    fi
    local layout
    layout=$(readelf -SW "$out/check" | awk '$2 ~ /^\./ && $2 !~ /^\.(debug|comment|symtab|strtab|shstrtab|note|gnu.warning)/ {printf "%s ", $2}')
    if "${run[@]}" "$out/check" >"$out/run.txt"; then
      record "huge $triple $mode $linker: OK (linked in $secs s, $peak; run${run:+ under ${run[*]}}; $len data bytes; sections: $layout)"
    else
      record "huge $triple $mode $linker: $verdict run status $? (linked in $secs s; sections: $layout): $(tail -n1 "$out/run.txt")"
    fi
    rm -f "$out/check"
  done
  rm -rf "$out"
}

all="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-pc-windows-gnu
  x86_64-pc-windows-msvc aarch64-pc-windows-msvc x86_64-apple-darwin aarch64-apple-darwin"
# shellcheck disable=SC2206 # split on blanks on purpose
triples=(${WEBNN_PLATFORMS_TARGETS:-$all})

for triple in "${triples[@]}"; do
  echo "== odd sizes, $triple"
  check "$triple" "$work/odd" models/odd.webnn odd
done
if [ "$big" = 1 ]; then
  for triple in "${triples[@]}"; do
    echo "== 2 GiB, $triple"
    start=$(date +%s)
    check "$triple" "$work/big" models/big.webnn big
    echo "   ($(($(date +%s) - start)) s)"
  done
fi
if [ "$macho" != 0 ]; then
  for triple in "${triples[@]}"; do
    case $triple in
      *-apple-darwin)
        echo "== $macho GiB in three shards, $triple"
        start=$(date +%s)
        check "$triple" "$work/macho" models/huge.webnn macho
        echo "   ($(($(date +%s) - start)) s)"
        ;;
    esac
  done
fi
if [ "$huge" != 0 ]; then
  for triple in "${triples[@]}"; do
    case $triple in
      *-linux-gnu)
        echo "== $huge GiB in three shards, $triple"
        check_huge "$triple"
        ;;
      *)
        echo "== $huge GiB in three shards, $triple (refusal expected)"
        out=$work/out/huge-$triple
        rm -rf "$out"
        info=$(describe "$triple" && "$drv" build "$work/huge" models/huge.webnn "$out")
        error=$(sed -n 's/^error=//p' <<<"$info")
        if [ -n "$error" ] && [ ! -e "$out/webnn-weights" ]; then
          record "huge $triple: REFUSED before writing: $error"
        else
          record "huge $triple: FAIL not refused, or wrote before refusing"
        fi
        rm -rf "$out"
        ;;
    esac
  done
fi
echo
echo "== results ($results)"
cat "$results"
! grep -q FAIL "$results"
