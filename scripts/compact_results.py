#!/usr/bin/env python3
"""Compresses a results directory's large raw files with xz, in place (Python 3, standard library
only): every .json, .csv, .log, .txt and Nsight Compute report (.ncu-rep, which xz takes to a
tenth or less) of at least --threshold bytes (default 64 KiB) below each DIR becomes FILE.xz,
checked to decompress to the same bytes before FILE is removed. Summaries (.md), env, tsv and XML files, and files already compressed, stay as they are. The project's
readers (scripts/report/miniapp_report/stored.py) open FILE or FILE.xz alike; `xz -dk FILE.xz`
gives the plain file back (and the report Nsight Compute opens).

    scripts/compact_results.py DIR [DIR...] [--threshold BYTES]

scripts/gpu-run.sh runs it on its results directory once the summary is written: the committed
GPU runs (docs/results) keep their distance sweeps and benchmark files at a tenth of the size.
Exit codes: 0 done (also where nothing was large enough); 2 a DIR is not a directory.
"""

import argparse
import lzma
import os
import sys

SUFFIXES = (".json", ".csv", ".log", ".txt", ".ncu-rep")


def compact_file(path):
    """PATH -> PATH.xz (written beside it, checked, then renamed into place); returns bytes saved."""
    with open(path, "rb") as f:
        data = f.read()
    packed = lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)
    if lzma.decompress(packed) != data:
        raise RuntimeError(f"{path}: the compressed copy does not decompress to the file")
    tmp = path + ".xz.tmp"
    with open(tmp, "wb") as f:
        f.write(packed)
    os.replace(tmp, path + ".xz")
    os.remove(path)
    return len(data) - len(packed)


def compact(directory, threshold):
    """(files compressed, bytes saved) below DIRECTORY."""
    count = saved = 0
    for root, _, names in os.walk(directory):
        for name in sorted(names):
            path = os.path.join(root, name)
            if name.endswith(SUFFIXES) and os.path.getsize(path) >= threshold:
                saved += compact_file(path)
                count += 1
    return count, saved


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", metavar="DIR")
    parser.add_argument("--threshold", type=int, default=64 * 1024, help="bytes (default 65536)")
    args = parser.parse_args(argv)
    for d in args.dirs:
        if not os.path.isdir(d):
            print(f"compact_results: {d} is not a directory", file=sys.stderr)
            return 2
    for d in args.dirs:
        count, saved = compact(d, args.threshold)
        print(f"{d}: {count} file(s) compressed, {saved / 1e6:.1f} MB saved")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
