#!/usr/bin/env python3
"""One part of scripts/gpu-run.sh's benchmarks, whose benchmarks after one that kills the program
still run (Python 3, standard library only).

    benchmark_part.py [--stall SECONDS] OUT_JSON PROGRAM --benchmark_filter=REGEX [PROGRAM'S OPTIONS...]

Runs PROGRAM (miniapp_benchmarks) with its options and --benchmark_out=OUT_JSON in JSON. A form's
first run on a GPU can fault the device, and the program dies with it (SIGABRT from Kokkos, or
another signal): then the benchmarks it lists for the filter (--benchmark_list_tests, the order they
run in) are set against those its file holds (Google Benchmark flushes it after each). The first
it did not finish is the one it died in; the ones after it run again, by their exact names, into
OUT-resumed-N.json, as often as it dies again. Each benchmark it died in is written to
OUT-crashed.json as an entry with error_occurred and how the program ended, so that the run's
summary (gpu_summary.py) lists it as an error. A program stopped by SIGTERM, SIGINT or SIGKILL
(gpu-run.sh's time limit) or ending with an exit code of its own is not run again. With --stall, a
run whose file gains no benchmark for SECONDS (a form that hangs the device rather than faulting
it) is aborted here (SIGABRT), and taken as one that died in the benchmark it was running.

Exit codes: 0 the program finished; else the first way it ended (128 + the signal, or its exit
code), once what could still run has run; 2 bad usage.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
sys.dont_write_bytecode = True

from miniapp_report import stored  # noqa: E402

# Signals that stop the program from outside (a time limit, a user): nothing is run again.
STOPS = {signal.SIGTERM, signal.SIGINT, signal.SIGKILL}
FILTER = "--benchmark_filter="


def listed(program, args):
    """The benchmarks the program runs with args, in their order (--benchmark_list_tests; Kokkos
    prints its warnings to the same output, which hold spaces where a benchmark's name has none)."""
    proc = subprocess.run([program, "--benchmark_list_tests=true", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    return [line for line in proc.stdout.splitlines() if line and " " not in line and "/" in line]


def finished(path):
    """The names of the benchmarks a (possibly cut) output file holds."""
    try:
        data, _ = stored.read_benchmarks(path)
    except (OSError, ValueError):
        return set()
    return {b.get("run_name", b.get("name")) for b in data.get("benchmarks", [])}


def run(command, path, stall):
    """command's return code, and whether it was aborted here for stall seconds without a new
    benchmark in path (None: no limit)."""
    proc = subprocess.Popen(command)
    count, since = 0, time.monotonic()
    while True:
        try:
            return proc.wait(timeout=None if stall is None else 0.5), False
        except subprocess.TimeoutExpired:
            pass
        now = len(finished(path))  # (a read caught mid-write counts none: only a rise is progress)
        if now > count:
            count, since = now, time.monotonic()
        elif time.monotonic() - since > stall:
            proc.send_signal(signal.SIGABRT)
            return proc.wait(), True


def exact(names):
    """A --benchmark_filter that matches these names and no other."""
    return "^(" + "|".join(re.sub(r"([][\\.^$|()*+?{}])", r"\\\1", n) for n in names) + ")$"


def how(code):
    """A return code as the shell gives it (128 + signal), and in words."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:  # a signal Python has no name for (a real-time one)
            name = f"signal {-code}"
        return 128 - code, f"killed by {name}"
    return code, f"exit {code}"


def write_crashed(path, entries):
    """The benchmarks the program died in, as Google Benchmark entries, written whole."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"context": {"written_by": "scripts/benchmark_part.py"}, "benchmarks": entries}, f, indent=2)
    os.replace(tmp, path)


def main(argv):
    stall = None
    if argv[:1] == ["--stall"]:
        try:
            stall = float(argv[1])
        except (IndexError, ValueError):
            stall = -1.0
        argv = argv[2:]
    if len(argv) < 3 or not any(a.startswith(FILTER) for a in argv[2:]) or (stall is not None and stall <= 0):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out, program, args = argv[0], argv[1], argv[2:]
    stem = out[:-5] if out.endswith(".json") else out
    crashed_path = f"{stem}-crashed.json"
    plan = None  # the part's benchmarks in their order, listed only once the program has died (a
    # listing starts the program, and Kokkos with it: a second or two a part on a GPU)
    options = [a for a in args if not a.startswith(FILTER)]
    crashed, first_code, round_, path, run_args = [], 0, 0, out, args
    while True:
        code, stalled = run([program, *run_args, f"--benchmark_out={path}", "--benchmark_out_format=json"],
                            path, stall)
        if code == 0:
            break
        shell_code, ended = how(code)
        if stalled:
            ended = f"aborted by benchmark_part.py after {stall:g} s without a benchmark finished (a hang?)"
        first_code = first_code or shell_code
        if code > 0 or -code in STOPS:
            print(f"benchmark_part: {os.path.basename(program)} {ended}: not run again", file=sys.stderr)
            break
        done = finished(path)
        # this run's names it did not finish, in their order: the first is the one it died in
        plan = [n for n in (listed(program, args) if plan is None else plan) if n not in done]
        if not plan:  # died after its last benchmark: nothing is left to run
            break
        crashed.append({"name": plan[0], "run_name": plan[0], "run_type": "iteration", "error_occurred": True,
                        "error_message": f"miniapp_benchmarks was {ended} in this benchmark; the part's later "
                                         "benchmarks ran again without it"})
        write_crashed(crashed_path, crashed)
        plan = plan[1:]
        print(f"benchmark_part: {os.path.basename(program)} {ended} in {crashed[-1]['name']}; "
              f"{len(plan)} benchmark(s) after it run again", file=sys.stderr)
        if not plan:
            break
        round_ += 1
        path = f"{stem}-resumed-{round_}.json"
        run_args = [*options, FILTER + exact(plan)]
    return first_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
