"""ctest `benchmark.stopped-part`: a benchmark run stopped at its time limit keeps what it finished.

gpu-run.sh gives each part of its benchmark step a limit and stops it with SIGTERM (`timeout`).
Here miniapp_benchmarks runs two benchmarks of a few seconds each into a JSON --benchmark_out
file; once the file holds the first one, the run gets SIGTERM, as from `timeout`. The file it
leaves must read (scripts/report/miniapp_report/stored.py, read_benchmarks) as stopped, with every
aggregate of the first benchmark and nothing half-written. This relies on Google Benchmark
flushing its file after each benchmark (1.7.1, Debian's, does): a version that did not would
leave nothing to read, and fail here.

    stopped_part.py MINIAPP_BENCHMARKS SOURCE_DIR
"""

import os
import signal
import subprocess
import sys
import tempfile

from part_files import fail, stored, wait_for_first

BENCHMARKS, SOURCE_DIR = sys.argv[1], sys.argv[2]

FILTER = "^launch-(range|team)/serial/"  # two benchmarks, each here some 5 s by the options below
FIRST = "launch-range/serial/manual_time"


with tempfile.TemporaryDirectory(prefix="stopped-part-") as tmp:
    out = os.path.join(tmp, "part.json")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    proc = subprocess.Popen([BENCHMARKS, f"--benchmark_filter={FILTER}", "--benchmark_min_time=0.05",
                             "--benchmark_repetitions=100", "--benchmark_report_aggregates_only=true",
                             f"--benchmark_out={out}", "--benchmark_out_format=json"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_first(proc, out)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    if proc.returncode != -signal.SIGTERM:
        fail(f"the run was to be stopped mid-run by SIGTERM, but it ended with {proc.returncode}")
    data, stopped = stored.read_benchmarks(out)
    if not stopped:
        fail("the stopped run's file reads as complete")
    names = {b.get("run_name") for b in data["benchmarks"]}
    if names != {FIRST}:
        fail(f"the file holds {sorted(names)}, not the one benchmark that finished, {FIRST}")
    aggregates = sorted(b.get("aggregate_name") for b in data["benchmarks"])
    if not {"mean", "median", "stddev"} <= set(aggregates):
        fail(f"the finished benchmark's aggregates are {aggregates}")
    if data.get("context", {}).get("miniapp_git_commit") is None:
        fail("the stopped file lost its context")
    print(f"ok: stopped by SIGTERM after {FIRST}; its file reads as stopped, with that benchmark's "
          f"{len(aggregates)} aggregates and the run's context")
