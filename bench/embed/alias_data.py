#!/usr/bin/env python3
"""Rewrites a static library from webnn-weights-build's ELF writer so that its data starts
at a multiple of 4096 bytes in the file, for bench/embed-pieces.sh.

Usage: alias_data.py LIBRARY.a OUT.a

The writer starts the data half a page into a page of the file, and the linked program
starts it on a page, so the linker's copy of each piece reads and writes half a page apart
(modulo 4096). This rewrite moves the data (zeros inserted before it) so that the two are
a whole number of pages apart: the "4K aliased" copy the writer avoids. Everything else
(index, member position, sections, relocations, symbols) is kept. Only for x86-64 and
AArch64 ELF as the writer makes them (little-endian, 64-bit).
"""
import struct
import sys

import elf_library

src, dst = sys.argv[1:]
ar, header_at, obj = elf_library.read(src)
object_at = header_at + 60
obj = bytearray(obj)
shoff, sections = elf_library.section_headers(obj)
# Section 1 is the first piece; the pieces share its name and lie back to back.
first = sections[1]
assert first[8] == 4096, f"the first piece is aligned to {first[8]}, not a page"
data_off = first[4]
data_end = max(s[4] + s[5] for s in sections if s[0] == first[0])
shift = -(object_at + data_off) % 4096
after = shift + (-shift) % 8  # what follows the data keeps its 8-byte alignment
for i, s in enumerate(sections):
    if s[4] >= data_off:
        moved = s[4] + (shift if s[4] < data_end else after)
        struct.pack_into("<Q", obj, shoff + 64 * i + 0x18, moved)
struct.pack_into("<Q", obj, 0x28, shoff + after)
obj[data_end:data_end] = bytes(after - shift)
obj[data_off:data_off] = bytes(shift)
assert (object_at + data_off + shift) % 4096 == 0

elf_library.write(dst, ar, header_at, obj)
print(f"data moved by {shift} bytes to file offset {object_at + data_off + shift:#x}")
