#!/usr/bin/env python3
"""Prints the CUDA architectures an object file's device code was compiled for, one entry of its
fat binary a word: elf:90 (machine code for sm_90), ptx:90 (PTX for compute_90).

    fatbin_archs.py OBJECT.o

For machines whose CUDA toolkit has nvcc but no cuobjdump. Reads the .nv_fatbin section (objcopy)
in the layout nvcc writes: a 16-byte container header (magic 0xBA55ED50, version, header size,
size), then entries, each with its kind (1 PTX, 2 ELF), header size, payload size and, at offset
0x1c, the architecture. Exit codes: 0 listed (empty line: no device code); 1 unreadable.
"""
import os
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50


def entries(obj):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "fatbin")
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", obj, out], check=True)
        with open(out, "rb") as f:
            data = f.read()
    found, pos = [], 0
    while pos + 16 <= len(data):
        magic, _, header, size = struct.unpack_from("<IHHQ", data, pos)
        if magic != FATBIN_MAGIC:  # containers are 8-byte aligned
            pos += 8
            continue
        entry, end = pos + header, pos + header + size
        while entry + 0x20 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            (arch,) = struct.unpack_from("<I", data, entry + 0x1C)
            found.append(f"{ {1: 'ptx', 2: 'elf'}.get(kind, f'kind{kind}') }:{arch}")
            if entry_header == 0:
                break
            entry += entry_header + payload
        pos = end
    return found


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fatbin_archs.py OBJECT.o")
    try:
        print(" ".join(entries(sys.argv[1])))
    except (OSError, subprocess.CalledProcessError, struct.error) as e:
        print(f"fatbin_archs: cannot read {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
