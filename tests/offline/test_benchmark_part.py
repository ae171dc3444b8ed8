#!/usr/bin/env python3
"""Tests scripts/benchmark_part.py, gpu-run.sh's runner of one benchmark part (standard library only).

    test_benchmark_part.py SOURCE_DIR

The benchmark program here is a stand-in written by the test: it answers --benchmark_list_tests and
--benchmark_filter as Google Benchmark does (a regex searched in each name, the names in their
order, Kokkos' warnings on the same output), writes its --benchmark_out file an entry at a time as
Google Benchmark 1.7 does, and dies by the signal the test names in the benchmark it names, or
sleeps there. The real program's names and filters are checked by ctest benchmark.crashed-part,
which kills miniapp_benchmarks itself in the middle of a part.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

SOURCE_DIR = None

STAND_IN = textwrap.dedent("""\
    #!{python}
    import json, os, re, signal, sys, time
    args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    with open(os.environ["STANDIN_LOG"], "a") as log:
        log.write(json.dumps(sys.argv[1:]) + "\\n")
    if os.environ.get("STANDIN_EXIT"):
        sys.exit(int(os.environ["STANDIN_EXIT"]))
    names = [n for n in os.environ["STANDIN_NAMES"].split(",") if re.search(args["benchmark_filter"], n)]
    if args.get("benchmark_list_tests") == "true":
        print("Kokkos::OpenMP::initialize WARNING: OMP_PROC_BIND environment variable not set")
        print("\\n".join(names))
        sys.exit(0)
    dies = dict(c.split(":") for c in os.environ.get("STANDIN_DIES", "").split(",") if c)
    with open(args["benchmark_out"], "w") as out:
        out.write('{{\\n  "context": {{}},\\n  "benchmarks": [\\n')
        for i, name in enumerate(names):
            out.flush()
            if dies.get(name, "").startswith("sleep="):  # a slow benchmark, or one that hangs
                time.sleep(float(dies[name][6:]))
            elif name in dies:
                os.kill(os.getpid(), getattr(signal, dies[name]))
            entry = {{"name": name, "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
                      "real_time": 1.0 + i, "time_unit": "ms"}}
            out.write((",\\n" if i else "") + "    " + json.dumps(entry))
        out.write("\\n  ]\\n}}\\n")
    """)

NAMES = ["part-a/float32/cuda/1/manual_time", "part-b/float32/cuda/1/manual_time",
         "part-c/float32/cuda/1/manual_time", "part-c/float32/cuda/10/manual_time",
         "part-d/float32/cuda/1/manual_time", "part-e/float32/cuda/1/manual_time"]


class BenchmarkPart(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="benchmark-part-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.program = os.path.join(self.tmp, "benchmarks")
        with open(self.program, "w", encoding="utf-8") as f:
            f.write(STAND_IN.format(python=sys.executable))
        os.chmod(self.program, 0o755)
        self.log = os.path.join(self.tmp, "calls.log")
        self.out = os.path.join(self.tmp, "solver.json")

    def run_part(self, dies="", exit_code="", names=NAMES, options=("--benchmark_repetitions=3",), stall=()):
        env = dict(os.environ, STANDIN_NAMES=",".join(names), STANDIN_DIES=dies, STANDIN_EXIT=exit_code,
                   STANDIN_LOG=self.log)
        return subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "benchmark_part.py"), *stall,
                               self.out, self.program, "--benchmark_filter=^part-", *options],
                              env=env, capture_output=True, text=True, timeout=120)

    def names_in(self, path):
        with open(path, encoding="utf-8") as f:  # each file must be whole JSON, not a cut one
            return [b["run_name"] for b in json.load(f)["benchmarks"]]

    def crashed(self):
        with open(os.path.join(self.tmp, "solver-crashed.json"), encoding="utf-8") as f:
            return json.load(f)["benchmarks"]

    def files(self):
        return sorted(f for f in os.listdir(self.tmp) if f.startswith("solver"))

    def runs(self):
        """The options of each run of the program (not its listings)."""
        with open(self.log, encoding="utf-8") as f:
            calls = [json.loads(line) for line in f]
        return [c for c in calls if "--benchmark_list_tests=true" not in c]

    def test_a_part_that_finishes_runs_once(self):
        proc = self.run_part()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.files(), ["solver.json"])
        self.assertEqual(self.names_in(self.out), NAMES)
        with open(self.log, encoding="utf-8") as f:  # one call: no listing where nothing died
            self.assertEqual([json.loads(line) for line in f], self.runs())
        self.assertEqual(len(self.runs()), 1)
        self.assertIn(f"--benchmark_out={self.out}", self.runs()[0])

    def test_the_benchmarks_after_the_one_it_died_in_run_again(self):
        proc = self.run_part(dies=f"{NAMES[1]}:SIGABRT")
        self.assertEqual(proc.returncode, 128 + 6, proc.stderr)
        self.assertEqual(self.files(), ["solver-crashed.json", "solver-resumed-1.json", "solver.json"])
        crashed = self.crashed()
        self.assertEqual([(c["run_name"], c["error_occurred"]) for c in crashed], [(NAMES[1], True)])
        self.assertIn("killed by SIGABRT", crashed[0]["error_message"])
        self.assertIn(f"killed by SIGABRT in {NAMES[1]}; 4 benchmark(s) after it run again", proc.stderr)
        resumed = os.path.join(self.tmp, "solver-resumed-1.json")
        self.assertEqual(self.names_in(resumed), NAMES[2:])
        # The second run names exactly those four (part-c/.../1 is a prefix of part-c/.../10, and
        # its '.'-free names still hold '/'), keeps the other options, and writes its own file.
        second = self.runs()[1]
        self.assertIn("--benchmark_repetitions=3", second)
        self.assertIn(f"--benchmark_out={resumed}", second)
        self.assertEqual([a for a in second if a.startswith("--benchmark_filter")],
                         ["--benchmark_filter=^(" + "|".join(NAMES[2:]) + ")$"])
        # The cut first file still holds the benchmark it finished.
        from_first = [b["run_name"] for b in self.stored().read_benchmarks(self.out)[0]["benchmarks"]]
        self.assertEqual(from_first, NAMES[:1])

    def test_it_runs_again_as_often_as_it_dies(self):
        proc = self.run_part(dies=f"{NAMES[1]}:SIGABRT,{NAMES[4]}:SIGSEGV")
        self.assertEqual(proc.returncode, 128 + 6, proc.stderr)  # the first way it ended
        crashed = self.crashed()
        self.assertEqual([c["run_name"] for c in crashed], [NAMES[1], NAMES[4]])
        self.assertIn("killed by SIGSEGV", crashed[1]["error_message"])
        self.assertEqual(self.names_in(os.path.join(self.tmp, "solver-resumed-2.json")), NAMES[5:])
        first_resumed = self.stored().read_benchmarks(os.path.join(self.tmp, "solver-resumed-1.json"))[0]
        self.assertEqual([b["run_name"] for b in first_resumed["benchmarks"]], NAMES[2:4])
        self.assertEqual(len(self.runs()), 3)

    def test_dying_in_the_last_benchmark_runs_nothing_again(self):
        proc = self.run_part(dies=f"{NAMES[-1]}:SIGSEGV")
        self.assertEqual(proc.returncode, 128 + 11, proc.stderr)
        self.assertEqual(self.files(), ["solver-crashed.json", "solver.json"])
        self.assertEqual(len(self.runs()), 1)

    def test_a_stop_from_outside_or_an_exit_code_is_not_run_again(self):
        for dies, exit_code, code in ((f"{NAMES[1]}:SIGTERM", "", 143), (f"{NAMES[1]}:SIGKILL", "", 137),
                                      ("", "1", 1)):
            with self.subTest(dies=dies, exit_code=exit_code):
                for f in self.files():
                    os.remove(os.path.join(self.tmp, f))
                if os.path.exists(self.log):
                    os.remove(self.log)
                proc = self.run_part(dies=dies, exit_code=exit_code)
                self.assertEqual(proc.returncode, code, proc.stderr)
                self.assertNotIn("solver-crashed.json", self.files())
                self.assertNotIn("solver-resumed-1.json", self.files())
                self.assertIn("not run again", proc.stderr)

    def test_with_stall_a_hang_is_aborted_and_the_rest_run_again(self):
        proc = self.run_part(dies=f"{NAMES[1]}:sleep=600", stall=("--stall", "1.5"))
        self.assertEqual(proc.returncode, 128 + 6, proc.stderr)
        self.assertEqual([c["run_name"] for c in self.crashed()], [NAMES[1]])
        self.assertIn("aborted by benchmark_part.py after 1.5 s without a benchmark finished",
                      self.crashed()[0]["error_message"])
        self.assertEqual(self.names_in(os.path.join(self.tmp, "solver-resumed-1.json")), NAMES[2:])

    def test_with_stall_a_slow_benchmark_under_it_is_left_alone(self):
        proc = self.run_part(dies=f"{NAMES[1]}:sleep=1,{NAMES[3]}:sleep=1", stall=("--stall", "4"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.files(), ["solver.json"])
        self.assertEqual(self.names_in(self.out), NAMES)

    def test_without_a_filter_it_says_how_to_call_it(self):
        proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "benchmark_part.py"), self.out,
                               self.program], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("benchmark_part.py [--stall SECONDS] OUT_JSON PROGRAM --benchmark_filter=REGEX", proc.stderr)
        for stall in ("0", "soon"):
            proc = self.run_part(stall=("--stall", stall))
            self.assertEqual(proc.returncode, 2, stall)
        self.assertFalse(os.path.exists(self.log))  # refused before the program ran

    def test_the_summary_lists_the_benchmark_it_died_in_as_an_error(self):
        self.run_part(dies=f"{NAMES[1]}:SIGABRT")
        run = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(SOURCE_DIR, "tests", "offline", "fixtures", "host-run"), run)
        for f in ("solver.json", "solver-resumed-1.json", "solver-crashed.json"):
            shutil.copy(os.path.join(self.tmp, f), os.path.join(run, "benchmarks", f))
        proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "gpu_summary.py"), run,
                               "--output", run + ".md"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(run + ".md", encoding="utf-8") as f:
            summary = f.read()
        self.assertIn(f"| {NAMES[1]} | error: miniapp_benchmarks was killed by SIGABRT in this benchmark", summary)
        for name in NAMES[2:]:  # the resumed ones are rows of their own
            self.assertRegex(summary, rf"\| {name} \| [0-9.]+ ms \|")
        self.assertIn("benchmarks/solver.json: stopped before it finished", summary)

    def stored(self):
        sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "report"))
        from miniapp_report import stored  # noqa: E402
        return stored


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_benchmark_part.py SOURCE_DIR")
    SOURCE_DIR = sys.argv[1]
    unittest.main(argv=sys.argv[:1], verbosity=2)
