#!/usr/bin/env bash
# Does cutting the data into sections ("pieces") speed up each format's lld?
#
# The ELF writer cuts the data into 16 MiB sections because rust-lld copies each input
# section in one task (docs/embedding.md, "The data in pieces (ELF)"). The Mach-O and COFF
# writers keep one section. This script checks that choice on the linkers that run here:
# it assembles the same random bytes twice per format with llvm-mc (`.incbin`), once as one
# section and once as 16 MiB sections back to back, and times the link of each with the
# toolchain's rust-lld (the lld that Rust ships, in each of its flavours). Every object is
# laid out so that the copy runs half a page apart, as the writer's libraries are
# (docs/embedding.md, "Where the data sits in the file"): a non-loaded padding section before
# the data moves it in the object until (output offset - input offset) mod 4096 is about
# 2048; the script prints that distance for each. Linkers:
#   ELF     -flavor gnu (default threads, and --threads=1)   a static executable
#   COFF    -flavor link /nodefaultlib /entry:main            a console .exe
#   Mach-O  -flavor darwin -dylib                             a dylib
# Each link writes a new file (the old output is removed first, untimed, after `sync`), in
# random order, RUNS rounds; it prints the medians and pieces / one per linker.
#
# Needs llvm-mc (`apt-get install llvm`; bench/platforms.sh installs it).
# Environment: WEBNN_BENCH_DIR (default target/bench-pieces-linkers; needs ~1.5 GiB),
# WEBNN_BENCH_RUNS (default 7), WEBNN_BENCH_MIB (default 256).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${WEBNN_BENCH_DIR:-$repo/target/bench-pieces-linkers}
runs=${WEBNN_BENCH_RUNS:-7}
mib=${WEBNN_BENCH_MIB:-256}
piece_mib=16

command -v llvm-mc >/dev/null || { echo "missing: llvm-mc (apt-get install llvm)"; exit 1; }
lld=$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-lld
[ -x "$lld" ] || { echo "missing: $lld (rustup component add llvm-tools? it ships with rustc)"; exit 1; }

mkdir -p "$work"
cd "$work"
rm -f results.tsv
[ "$(stat -c %s blob.bin 2>/dev/null || echo 0)" = $((mib << 20)) ] \
  || head -c $((mib << 20)) /dev/urandom > blob.bin

# Assembly for FORMAT (elf | coff | macho) and LAYOUT (one | pieces), with PAD bytes of a
# section the linker does not load before the data.
source_for() {
  local format=$1 layout=$2 pad=$3 n=1 i
  [ "$layout" = pieces ] && n=$(((mib + piece_mib - 1) / piece_mib))
  case $format in
    elf) echo '.section .pad,"",@progbits' ;;
    coff) echo '.section .pad,"n"' ;;
    macho) echo '.section __DWARF,__pad,regular,debug' ;;
  esac
  echo ".zero $((pad + 1))"
  for ((i = 0; i < n; i++)); do
    local at=$((i * (piece_mib << 20))) len=$((piece_mib << 20))
    [ "$n" = 1 ] && { at=0; len=$((mib << 20)); }
    [ $((at + len)) -gt $((mib << 20)) ] && len=$(((mib << 20) - at))
    case $format in
      # (the writer also sets SHF_X86_64_LARGE, which llvm-mc 14 cannot spell; the copy
      # is the same)
      elf) echo ".section .lrodata.webnn_weights,\"a\",@progbits,unique,$i" ;;
      coff) printf '.section .webnn$%04d,"dr"\n' "$i" ;;
      macho) printf '.section __TEXT,__w%04d\n' "$i" ;;
    esac
    echo ".p2align 6"
    if [ "$i" = 0 ]; then
      case $format in
        macho) printf '.globl _data\n_data:\n' ;;
        *) printf '.globl data\ndata:\n' ;;
      esac
    fi
    echo ".incbin \"$work/blob.bin\", $at, $len"
  done
  case $format in
    elf) printf '.text\n.globl _start\n_start:\nleaq data(%%rip), %%rax\nret\n' ;;
    coff) printf '.text\n.globl main\nmain:\nleaq data(%%rip), %%rax\nret\n' ;;
    macho) printf '.text\n.globl _main\n_main:\nleaq _data(%%rip), %%rax\nret\n' ;;
  esac
}

# The file offset of the first section named NAME (or NAME$…) in FILE.
offset_of() {
  llvm-readobj --sections "$1" | python3 -c '
import re, sys
name = sys.argv[1]
current = None
for line in sys.stdin:
    m = re.match(r"\s*Name: (\S+)", line)
    if m:
        current = m.group(1)
    m = re.match(r"\s*(Offset|PointerToRawData): (\S+)", line)
    if m and current is not None and (current == name or current.startswith(name + "$")):
        print(int(m.group(2), 0))
        break
' "$2"
}

# The link command of LINKER for LAYOUT, writing OUT.
link() {
  local linker=$1 layout=$2 out=$3
  case $linker in
    ld.lld) "$lld" -flavor gnu -o "$out" "elf-$layout.o" ;;
    ld.lld-1) "$lld" -flavor gnu --threads=1 -o "$out" "elf-$layout.o" ;;
    lld-link) "$lld" -flavor link /nologo /machine:x64 /entry:main /subsystem:console \
      /nodefaultlib /out:"$out" "coff-$layout.o" ;;
    ld64.lld) "$lld" -flavor darwin -arch x86_64 -platform_version macos 11.0 11.0 -dylib \
      -o "$out" "macho-$layout.o" ;;
  esac
}

# Assemble; link once; move the data in the object so the copy runs half a page apart.
declare -A distance
for format in elf coff macho; do
  case $format in
    elf) triple=x86_64-linux-gnu in_name=.lrodata.webnn_weights out_name=.lrodata linker=ld.lld ;;
    coff) triple=x86_64-pc-windows-msvc in_name=.webnn out_name=.webnn linker=lld-link ;;
    macho) triple=x86_64-apple-macos11 in_name=__w0000 out_name=__w0000 linker=ld64.lld ;;
  esac
  for layout in one pieces; do
    pad=0
    for pass in 1 2; do
      source_for "$format" "$layout" "$pad" > "$format-$layout.s"
      llvm-mc -triple "$triple" -filetype=obj "$format-$layout.s" -o "$format-$layout.o"
      link "$linker" "$layout" probe.out
      in_off=$(offset_of "$format-$layout.o" "$in_name")
      out_off=$(offset_of probe.out "$out_name")
      d=$(((out_off - in_off) & 4095))
      pad=$(((d - 2048) & 4095))
    done
    distance[$format-$layout]=$d
  done
done
rm -f probe.out

linkers="ld.lld ld.lld-1 lld-link ld64.lld"
# One untimed link of each, so every input is in the page cache.
for linker in $linkers; do for layout in one pieces; do link "$linker" "$layout" warm.out; done; done
rm -f warm.out
for i in $(seq "$runs"); do
  for job in $(for l in $linkers; do echo "$l:one"; echo "$l:pieces"; done | shuf); do
    linker=${job%%:*} layout=${job##*:}
    rm -f out.bin
    sync
    start=$(date +%s%N)
    link "$linker" "$layout" out.bin
    end=$(date +%s%N)
    printf '%s\t%s\t%s\n' "$linker" "$layout" $(((end - start) / 1000)) >> results.tsv
  done
done
rm -f out.bin

echo "link of $mib MiB of data: one section vs ${piece_mib} MiB pieces, median of $runs ($(nproc) cores)"
echo "  (output - input offset) mod 4096 of the data: ELF ${distance[elf-one]} / ${distance[elf-pieces]}," \
  "COFF ${distance[coff-one]} / ${distance[coff-pieces]}, Mach-O ${distance[macho-one]} / ${distance[macho-pieces]}" \
  "(one / pieces)"
python3 - results.tsv "$("$lld" -flavor gnu --version | head -n1)" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
print(f"  {sys.argv[2]}")
names = {"ld.lld": "ELF    ld.lld", "ld.lld-1": "ELF    ld.lld --threads=1",
         "lld-link": "COFF   lld-link", "ld64.lld": "Mach-O ld64.lld -dylib"}
print(f"  {'linker':<28} {'one':>8} {'pieces':>8} {'pieces/one':>11}")
for key, name in names.items():
    med = {lay: statistics.median(int(us) for l, y, us in rows if l == key and y == lay) / 1e6
           for lay in ("one", "pieces")}
    print(f"  {name:<28} {med['one']:>7.3f}s {med['pieces']:>7.3f}s {med['pieces'] / med['one']:>10.2f}x")
PY
