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

src, dst = sys.argv[1:]
ar = open(src, "rb").read()
assert ar.startswith(b"!<arch>\n"), "not an ar archive"
at = 8
members = []
while at < len(ar):
    name = ar[at:at + 16].decode().strip()
    size = int(ar[at + 48:at + 58].decode().strip())
    members.append((name, at, size))
    at += 60 + size + (size % 2)
assert len(members) == 2 and members[0][0] == "/", members
_, header_at, obj_size = members[1]
object_at = header_at + 60
obj = bytearray(ar[object_at:object_at + obj_size])
assert obj[:4] == b"\x7fELF" and obj[4] == 2 and obj[5] == 1, "not a 64-bit little-endian ELF"

(shoff,) = struct.unpack_from("<Q", obj, 0x28)
(shnum,) = struct.unpack_from("<H", obj, 0x3C)
sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + 64 * i) for i in range(shnum)]
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

member_header = ar[header_at:header_at + 48] + f"{len(obj):<10}".encode() + ar[header_at + 58:header_at + 60]
with open(dst, "wb") as f:
    f.write(ar[:header_at])
    f.write(member_header)
    f.write(obj)
    if len(obj) % 2:
        f.write(b"\n")
print(f"data moved by {shift} bytes to file offset {object_at + data_off + shift:#x}")
