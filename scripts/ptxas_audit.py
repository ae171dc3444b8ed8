#!/usr/bin/env python3
"""Registers, stack and spills of each CUDA kernel of one compile unit, read from `ptxas -v`.

A kernel's registers decide how many of its teams a GPU multiprocessor holds; stack bytes beyond a
reducer's few mean an array the compiler could not keep in registers (indexed by a value it could
not unroll); spills mean registers ran out. All three can be read on a machine without a GPU, from
the CUDA build's own compile of the unit:

  scripts/ptxas-audit.sh BUILD_DIR SOURCE [REGEX]   compile SOURCE as BUILD_DIR's ninja does, with
                                                    -Xptxas -v, and print the table below
  scripts/ptxas_audit.py LOG [REGEX]                the table from a saved ptxas -v log

One line a kernel, in the log's order: registers, stack bytes, spill stores / loads, a mark ("!")
where the stack is over 16 bytes or anything spilled, and the kernel's demangled name (c++filt;
the mangled name where it is absent) without Kokkos' launch wrappers. REGEX keeps the kernels
whose demangled name it matches. Exit codes: 0 printed, 1 no kernel in the log (or none matched),
2 bad arguments or an unreadable log.
"""

import re
import shutil
import subprocess
import sys

ENTRY = re.compile(r"Compiling entry function '([^']+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
# Kokkos' launch and dispatch wrappers around the functor or lambda that names the kernel.
WRAPPERS = re.compile(r"^void Kokkos::Impl::cuda_parallel_launch_\w+<Kokkos::Impl::(?:ParallelFor|ParallelReduce|"
                      r"ParallelScan)\w*<")
STACK_OF_A_REDUCER = 16


def kernels(text):
    """[{name, registers, stack, spill_stores, spill_loads}] in the order ptxas compiled them."""
    found, current = [], None
    for line in text.splitlines():
        m = ENTRY.search(line)
        if m:
            current = {"name": m.group(1), "registers": 0, "stack": 0, "spill_stores": 0, "spill_loads": 0}
            found.append(current)
            continue
        if current is None:
            continue
        m = FRAME.search(line)
        if m:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
        m = USED.search(line)
        if m:
            current["registers"] = int(m.group(1))
    return found


def demangle(names):
    if not names or shutil.which("c++filt") is None:
        return list(names)
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=False).stdout
    lines = out.splitlines()
    return lines if len(lines) == len(names) else list(names)


def short(name):
    return WRAPPERS.sub("", name)


def table(found, pattern=None):
    """The printed lines for the kernels whose demangled name matches pattern (all if None)."""
    lines = []
    for k, name in zip(found, demangle([k["name"] for k in found])):
        if pattern and not re.search(pattern, name):
            continue
        flag = "!" if k["stack"] > STACK_OF_A_REDUCER or k["spill_stores"] or k["spill_loads"] else " "
        lines.append(f"{k['registers']:4d} regs {k['stack']:5d} B stack {k['spill_stores']:5d}/{k['spill_loads']:<5d} "
                     f"B spilled {flag} {short(name)}")
    return lines


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[1], errors="replace") as f:
            text = f.read()
    except OSError as e:
        print(f"ptxas_audit: cannot read {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    pattern = argv[2] if len(argv) == 3 else None
    try:
        lines = table(kernels(text), pattern)
    except re.error as e:
        print(f"ptxas_audit: bad REGEX '{pattern}': {e}", file=sys.stderr)
        return 2
    if not lines:
        print("ptxas_audit: no kernel in the log" + (f" matches '{pattern}'" if pattern else
                                                      " (was it compiled with -Xptxas -v for a GPU?)"),
              file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
