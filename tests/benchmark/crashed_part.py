"""ctest `benchmark.crashed-part`: a benchmark part whose program dies in one benchmark still runs
the benchmarks after it (scripts/benchmark_part.py, which gpu-run.sh runs each part through).

miniapp_benchmarks runs three benchmarks of a few seconds each through benchmark_part.py; once its
file holds the first, the program gets SIGABRT, as it does from Kokkos when a kernel faults the
device. The runner must name the second as the one it died in (benchmarks/<part>-crashed.json),
run the third again by its exact name into <part>-resumed-1.json, whole, and end with the
program's 134. This checks what the unit test's stand-in cannot: that the real program's list
(--benchmark_list_tests) and its output name the benchmarks alike, in the order they run, and
that its filter takes the runner's exact names.

    crashed_part.py MINIAPP_BENCHMARKS SOURCE_DIR
"""

import json
import os
import signal
import subprocess
import sys
import tempfile

from part_files import entries, fail, wait_for_first

BENCHMARKS, SOURCE_DIR = sys.argv[1], sys.argv[2]

FILTER = "^(fill/float32/serial/1024|launch-(range|team)/serial)/"  # each some 5 s by the options below
ORDER = ["fill/float32/serial/1024/manual_time", "launch-range/serial/manual_time", "launch-team/serial/manual_time"]


def names(path):
    held, stopped = entries(path)
    return sorted({b.get("run_name") for b in held}), stopped


def running_program(runner_pid, out):
    """The PID of the runner's child that writes out (the benchmark run, not its listing)."""
    try:
        with open(f"/proc/{runner_pid}/task/{runner_pid}/children", encoding="utf-8") as f:
            children = f.read().split()
    except OSError:
        return None
    for pid in children:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f"--benchmark_out={out}".encode() in f.read():
                    return int(pid)
        except OSError:
            continue
    return None


with tempfile.TemporaryDirectory(prefix="crashed-part-") as tmp:
    out = os.path.join(tmp, "copy.json")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    runner = subprocess.Popen([sys.executable, os.path.join(SOURCE_DIR, "scripts", "benchmark_part.py"), out,
                               BENCHMARKS, f"--benchmark_filter={FILTER}", "--benchmark_min_time=0.05",
                               "--benchmark_repetitions=100", "--benchmark_report_aggregates_only=true"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_first(runner, out)
    if names(out)[0] != ORDER[:1]:
        runner.kill()
        fail(f"the file's first benchmark is {names(out)[0]}, not {ORDER[0]}")
    program = running_program(runner.pid, out)
    if program is None:
        runner.kill()
        fail("found no benchmark program running under the runner")
    os.kill(program, signal.SIGABRT)
    try:
        _, err = runner.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        runner.kill()
        fail("the runner did not end within 300 s of the program's death")
    if runner.returncode != 128 + signal.SIGABRT:
        fail(f"the runner ended with {runner.returncode}, not 134 (the program's SIGABRT): {err[-2000:]}")
    first, stopped = names(out)
    if first != ORDER[:1] or not stopped:
        fail(f"the first file holds {first} (cut: {stopped}), not the first benchmark alone, cut")
    with open(os.path.join(tmp, "copy-crashed.json"), encoding="utf-8") as f:
        crashed = json.load(f)["benchmarks"]
    if [(c["run_name"], c["error_occurred"]) for c in crashed] != [(ORDER[1], True)]:
        fail(f"the benchmark it died in is recorded as {crashed}, not {ORDER[1]}")
    resumed, cut = names(os.path.join(tmp, "copy-resumed-1.json"))
    if resumed != ORDER[2:] or cut:
        fail(f"the run again holds {resumed} (cut: {cut}), not {ORDER[2:]} whole")
    print(f"ok: died in {ORDER[1]}, {ORDER[2]} run again; runner exit {runner.returncode}")
