#!/usr/bin/env python3
"""Device code per architecture in a binary (libnccl.so.2, an object file): the bytes each
architecture's images take in its .nv_fatbin section, as stored (compressed or not), and with
--repack, what each image would take under nvcc's compression modes (fatbinary re-packs each
image alone, as nvcc does per object, after zstd decompresses one stored compressed; see
PURLIN_CUDA_COMPRESSION in cmake/PurlinArchitectures.cmake). The README's size table comes
from here. Without any compression option nvcc still compresses PTX and some large images.

usage: fatbin_sizes.py BINARY [--repack]

The fatbin layout is not documented by NVIDIA: a container is a 16-byte header (magic
0xBA55ED50, version, header size, payload size) followed by entries, each a header (kind 1 PTX
or 2 ELF, header size, payload size, architecture at byte 28, flags at byte 40: 0x2000 or
0x8000 compressed, decompressed size at byte 56) and its payload. Checked against nvcc 13.0's
output: re-packing copy_instances.cu's uncompressed sm_90 image (a1f0a6c) gives 179,392 bytes,
nvcc's own --compress-mode=size build of it a section of 179,432.
"""
import collections
import os
import struct
import subprocess
import sys
import tempfile

MAGIC = 0xBA55ED50
COMPRESSED = 0x2000 | 0x8000
MODES = {"size": ["--compress-mode=size"], "balance": ["-compress-all"],
         "speed": ["-compress-all", "--compress-mode=speed"]}


def fatbin_section(path):
    out = subprocess.check_output(["objdump", "-h", path], text=True)
    for line in out.splitlines():
        f = line.split()
        if len(f) > 5 and f[1] == ".nv_fatbin":
            size, offset = int(f[2], 16), int(f[5], 16)
            with open(path, "rb") as fh:
                fh.seek(offset)
                return fh.read(size)
    return b""


def entries(data):
    """(kind, arch, flags, payload offset, payload size, decompressed size) of every entry."""
    pos = 0
    while pos + 16 <= len(data):
        magic, _, header, size = struct.unpack_from("<IHHQ", data, pos)
        if magic != MAGIC:  # padding between containers
            pos += 8
            continue
        p, end = pos + header, pos + header + size
        while p < end:
            kind, _, eheader, psize = struct.unpack_from("<HHIQ", data, p)
            arch, = struct.unpack_from("<I", data, p + 28)
            flags, = struct.unpack_from("<Q", data, p + 40)
            dsize, = struct.unpack_from("<Q", data, p + 56)
            yield kind, arch, flags, p + eheader, psize, dsize if flags & COMPRESSED else psize
            p += eheader + psize
        pos = end


def image(data, kind, flags, offset, psize, dsize):
    """The image as nvcc wrote it: an ELF file (without the payload's padding) or PTX text."""
    raw = data[offset:offset + psize]
    if flags & 0x8000:  # zstd; the frame is followed by padding, which zstd reports
        raw = subprocess.run(["zstd", "-dcq"], input=raw, capture_output=True).stdout[:dsize]
        if len(raw) != dsize:
            sys.exit(f"zstd gave {len(raw)} bytes of an image of {dsize}")
    elif flags & COMPRESSED:
        sys.exit(f"an image compressed other than with zstd (flags {flags:#x})")
    if kind == 1:
        return raw.rstrip(b"\0")
    shoff, = struct.unpack_from("<Q", raw, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", raw, 0x3A)
    return raw[:shoff + shentsize * shnum]


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--repack"]):
        sys.exit(__doc__)
    path, repack = sys.argv[1], sys.argv[2:] == ["--repack"]
    data = fatbin_section(path)
    rows = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory() as tmp:
        for kind, arch, flags, offset, psize, dsize in entries(data):
            name = f"sm_{arch}" if kind == 2 else f"compute_{arch} (PTX)"
            row = rows[name]
            row["images"] += 1
            row["stored"] += psize
            row["decompressed"] += dsize
            if not repack:
                continue
            file = os.path.join(tmp, "image")
            with open(file, "wb") as f:
                f.write(image(data, kind, flags, offset, psize, dsize))
            for mode, options in MODES.items():
                packed = os.path.join(tmp, "packed.fatbin")
                subprocess.check_call(["fatbinary", f"--create={packed}", "--64",
                                       f"--image3=kind={'elf' if kind == 2 else 'ptx'},sm={arch},"
                                       f"file={file}"] + options)
                row[mode] += os.path.getsize(packed)
    print(f"{path}: {os.path.getsize(path)} bytes, .nv_fatbin {len(data)}")
    for name, row in sorted(rows.items()):
        print(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
