"""Reading and rewriting the static libraries of webnn-weights-build's ELF writer, for the
bench scripts beside this file (one_section.py, alias_data.py).

A library is a GNU `ar` archive with the index "/" and one ELF object (64-bit,
little-endian). Only what those scripts need: the object and where it sits, its section
headers, and the archive written back around a rewritten object (index and member position
kept; the member's size updated).
"""
import struct


def read(path):
    """The archive's bytes, the offset of the object's member header, and the object."""
    ar = open(path, "rb").read()
    assert ar.startswith(b"!<arch>\n"), f"{path}: not an ar archive"
    at = 8
    members = []
    while at < len(ar):
        name = ar[at:at + 16].decode().strip()
        size = int(ar[at + 48:at + 58].decode().strip())
        members.append((name, at, size))
        at += 60 + size + (size % 2)
    assert len(members) == 2 and members[0][0] == "/", f"{path}: members {members}"
    _, header_at, size = members[1]
    obj = ar[header_at + 60:header_at + 60 + size]
    assert obj[:4] == b"\x7fELF" and obj[4] == 2 and obj[5] == 1, \
        f"{path}: not a 64-bit little-endian ELF object"
    return ar, header_at, obj


def section_headers(obj):
    """`e_shoff` and every section header as a tuple (name, type, flags, addr, offset, size,
    link, info, addralign, entsize)."""
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    (shnum,) = struct.unpack_from("<H", obj, 0x3C)
    return shoff, [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + 64 * i) for i in range(shnum)]


def write(path, ar, header_at, obj):
    """The archive `ar` with its object replaced by `obj`."""
    member_header = (ar[header_at:header_at + 48] + f"{len(obj):<10}".encode()
                     + ar[header_at + 58:header_at + 60])
    with open(path, "wb") as f:
        f.write(ar[:header_at])
        f.write(member_header)
        f.write(obj)
        if len(obj) % 2:
            f.write(b"\n")
