#!/usr/bin/env python3
"""Rewrites a static library from webnn-weights-build's ELF writer with the data in ONE
section instead of pieces (the layout before the pieces), for bench/embed-pieces.sh.

Usage: one_section.py LIBRARY.a OUT.a

Keeps the archive's index and member position, the data's offset in the file, the section
name, flags and (first piece's) alignment, the data symbol and the end symbol; drops the
`.rela` sections that chain the pieces. Only for x86-64 and AArch64 ELF as the writer makes
them (little-endian, 64-bit).
"""
import struct
import sys

import elf_library

src, dst = sys.argv[1:]
ar, header_at, obj = elf_library.read(src)
_, sections = elf_library.section_headers(obj)
(shstrndx,) = struct.unpack_from("<H", obj, 0x3E)
shstr = sections[shstrndx]


def name(sec):
    start = shstr[4] + sec[0]
    return obj[start:obj.index(b"\0", start)].decode()


data = [s for s in sections if name(s).endswith("webnn_weights") and s[1] == 1]
assert data, "no data section"
start, flags, align = data[0][4], data[0][2], data[0][8]
length = sum(s[5] for s in data)
assert data[-1][4] + data[-1][5] == start + length, "the pieces are not back to back"
symtab = next(s for s in sections if s[1] == 2)
strtab = sections[symtab[6]]


def sym_name(off):
    start = strtab[4] + off
    return obj[start:obj.index(b"\0", start)]


globals_ = []
for i in range(symtab[7], symtab[5] // 24):
    st_name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", obj, symtab[4] + 24 * i)
    globals_.append(sym_name(st_name))
symbol, end_symbol = globals_
machine = struct.unpack_from("<H", obj, 0x12)[0]
section_name = name(data[0]).encode()

# The object: header, data, symbols, strings, section headers (null, data, stack note,
# symtab, strtab, shstrtab).
shstrtab = b"\0" + section_name + b"\0.note.GNU-stack\0.symtab\0.strtab\0.shstrtab\0"
n_data, n_stack = 1, 2 + len(section_name)
n_symtab = n_stack + len(".note.GNU-stack") + 1
n_strtab = n_symtab + len(".symtab") + 1
n_shstrtab = n_strtab + len(".strtab") + 1
strtab_bytes = b"\0" + symbol + b"\0" + end_symbol + b"\0"
syms = b"\0" * 24
syms += struct.pack("<IBBHQQ", 1, 0x11, 0, 1, 0, length)
syms += struct.pack("<IBBHQQ", 2 + len(symbol), 0x11, 0, 1, length, 0)
symtab_off = (start + length + 7) // 8 * 8
strtab_off = symtab_off + len(syms)
shstrtab_off = strtab_off + len(strtab_bytes)
shdr_off = (shstrtab_off + len(shstrtab) + 7) // 8 * 8
headers = [
    (0, 0, 0, 0, 0, 0, 0, 0, 0),
    (n_data, 1, flags, start, length, 0, 0, align, 0),
    (n_stack, 1, 0, start, 0, 0, 0, 1, 0),
    (n_symtab, 2, 0, symtab_off, len(syms), 4, 1, 8, 24),
    (n_strtab, 3, 0, strtab_off, len(strtab_bytes), 0, 0, 1, 0),
    (n_shstrtab, 3, 0, shstrtab_off, len(shstrtab), 0, 0, 1, 0),
]
ehdr = obj[:16] + struct.pack("<HHIQQQIHHHHHH", 1, machine, 1, 0, 0, shdr_off, 0, 64, 0, 0, 64, 6, 5)
new_obj = bytearray(ehdr) + obj[64:start]  # the zeros up to the data
new_obj += obj[start:start + length]
new_obj += b"\0" * (symtab_off - len(new_obj))
new_obj += syms + strtab_bytes + shstrtab
new_obj += b"\0" * (shdr_off - len(new_obj))
for h in headers:
    new_obj += struct.pack("<IIQQQQIIQQ", h[0], h[1], h[2], 0, h[3], h[4], h[5], h[6], h[7], h[8])

elf_library.write(dst, ar, header_at, new_obj)
