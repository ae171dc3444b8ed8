"""What ctest benchmark.stopped-part and benchmark.crashed-part share: a benchmark part's output
file read as gpu-run.sh's summary reads it (scripts/report/miniapp_report/stored.py), and the wait
until it holds its first benchmark."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "report"))
from miniapp_report import stored  # noqa: E402


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def entries(path):
    """(the entries the file holds now, whether it was cut); ([], True) while it holds none."""
    try:
        data, stopped = stored.read_benchmarks(path)
    except (FileNotFoundError, ValueError):
        return [], True
    return data.get("benchmarks", []), stopped


def wait_for_first(proc, path, seconds=300):
    """Until path holds a benchmark; fails where proc ends first or none comes within seconds."""
    deadline = time.monotonic() + seconds
    while not entries(path)[0]:
        if proc.poll() is not None:
            fail(f"the run ended (exit {proc.returncode}) before its file held a benchmark: "
                 f"{proc.stderr.read()[-2000:] if proc.stderr else ''}")
        if time.monotonic() > deadline:
            proc.kill()
            fail(f"no benchmark in the file after {seconds} s")
        time.sleep(0.05)
