#!/usr/bin/env python3
"""Tests scripts/gpu_summary.py, the summary writer of scripts/gpu-run.sh (standard library only).

    test_gpu_summary.py SOURCE_DIR MINIAPP_BINARY

1. On the committed fixture tests/offline/fixtures/host-run/: a real `scripts/gpu-run.sh
   --backend host` run of this machine (OpenMP standing in for the device, Serial for the host;
   seed 000's deck, the copy and matrix benchmarks), its results.json with the per-repetition
   samples removed to keep it small. The seed-000 table, the steps, the unit tests and the copy
   bandwidth shares must carry the numbers of the raw files, computed here independently.
2. On results made now by MINIAPP_BINARY (a small-size distance sweep, Serial against OpenMP), so
   a change of the results' layout breaks this test rather than the first GPU run: every size's
   speedup and the crossover must match the measurements; a failed verification must be listed,
   a cut-off benchmark file and a missing deck reported, not fatal.
3. The crossover is the advisor's (scripts/report/miniapp_report/crossover.py), and the summary runs
   where matplotlib cannot be imported.
"""

import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

SOURCE_DIR = None
MINIAPP = None


def load_summary_module():
    sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts"))
    import gpu_summary  # noqa: E402
    return gpu_summary


def advisors_crossover():
    """The advisor's crossover rule, which the summary must state."""
    sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "report"))
    from miniapp_report.crossover import crossover  # noqa: E402
    return crossover


def run_summary(run_dir):
    out = run_dir.rstrip("/") + ".md"
    proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "gpu_summary.py"), run_dir,
                           "--output", out], capture_output=True, text=True)
    if proc.returncode != 0:
        return proc, ""
    with open(out, encoding="utf-8") as f:
        return proc, f.read()


def table_rows(markdown, header_start):
    """Rows (lists of cells) of the first table whose header line starts with header_start."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header_start):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
            return rows
    raise AssertionError(f"no table starting with {header_start!r} in:\n{markdown}")


def med(m, phase):
    return m["seconds"][phase]["median"]


class FixtureRun(unittest.TestCase):
    """The committed host rehearsal."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpu-summary-")
        cls.run_dir = os.path.join(cls.tmp, "host-run")
        shutil.copytree(os.path.join(SOURCE_DIR, "tests", "offline", "fixtures", "host-run"), cls.run_dir)
        cls.proc, cls.md = run_summary(cls.run_dir)
        with open(os.path.join(cls.run_dir, "decks", "matrix-seed000-power", "results.json")) as f:
            cls.seed000 = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_writes_the_summary(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        for heading in ("## Machine and build", "## Steps", "## Unit tests", "## Seed 000: copy policies",
                        "## Device against host, per deck", "## Benchmarks", "## Verification"):
            self.assertIn(heading, self.md)

    def test_seed000_table_has_every_measurement_with_its_medians(self):
        rows = table_rows(self.md, "| space | policy | to device")
        ms = self.seed000["measurements"]
        self.assertEqual(len(rows), len(ms))
        base = next(m for m in ms if m["space"] == "serial" and m["policy"] == "host")
        gs = load_summary_module()
        for m in ms:
            row = next(r for r in rows if r[0] == m["space"] and r[1] == m["policy"])
            self.assertEqual(row[2], gs.fmt_time(med(m, "to_device")))
            self.assertEqual(row[3], gs.fmt_time(med(m, "compute")))
            self.assertEqual(row[5], gs.fmt_time(med(m, "total")))
            self.assertEqual(row[7], gs.fmt_ratio(med(base, "total") / med(m, "total")))
            self.assertEqual(row[8], "yes" if m["verification"]["passed"] else "**no**")
        # The baseline row itself is 1.00x.
        self.assertEqual(next(r for r in rows if r[0] == "serial" and r[1] == "host")[7], "1.00x")

    def test_build_row_names_the_commit_built_and_a_differing_bundle_commit(self):
        # The fixture's build.env predates BUNDLE_PROJECT_COMMIT: the commit alone.
        self.assertIn("; commit 03e7cec699d1-dirty; 1 s with 2 jobs |", self.md)
        # A checkout at one commit built with a bundle packed at another: both are named.
        other = os.path.join(self.tmp, "stale-bundle")
        shutil.copytree(self.run_dir, other)
        with open(os.path.join(other, "build.env"), "a") as f:
            f.write("BUNDLE_PROJECT_COMMIT=9c34fe0e04ea\n")
        proc, md = run_summary(other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("; commit 03e7cec699d1-dirty (the bundle packed 9c34fe0e04ea); 1 s with 2 jobs |", md)
        # The same commit in both: named once.
        same = os.path.join(self.tmp, "same-bundle")
        shutil.copytree(self.run_dir, same)
        with open(os.path.join(same, "build.env"), "a") as f:
            f.write("BUNDLE_PROJECT_COMMIT=03e7cec699d1-dirty\n")
        proc, md = run_summary(same)
        self.assertIn("; commit 03e7cec699d1-dirty; 1 s with 2 jobs |", md)

    def test_steps_and_unit_tests_come_from_the_raw_files(self):
        steps = table_rows(self.md, "| step | status")
        with open(os.path.join(self.run_dir, "steps.tsv")) as f:
            recorded = [l.split("\t")[:2] for l in f.read().splitlines()[1:]]
        self.assertEqual([r[:2] for r in steps], recorded)
        unit = table_rows(self.md, "| test | result")
        cases = ET.parse(os.path.join(self.run_dir, "unit-tests.xml")).getroot().iter("testcase")
        recorded = {c.get("name"): "failed" if c.find("failure") is not None else "passed" for c in cases}
        self.assertEqual({r[0]: r[1] for r in unit}, recorded)
        self.assertTrue({"unit.serial", "unit.openmp", "unit.common"} <= set(recorded))

    def test_bandwidth_shares_use_the_device_copy_benchmark(self):
        with open(os.path.join(self.run_dir, "benchmarks", "copy.json")) as f:
            copy = [b for b in json.load(f)["benchmarks"]
                    if b["run_name"].startswith("copy/float32/openmp/") and b.get("aggregate_name") == "median"]
        self.assertEqual(len(copy), 1)
        copy_GBps = copy[0]["GB/s"] / 1e9
        self.assertIn(f"{copy_GBps:.1f} GB/s (benchmark copy/float32/openmp)", self.md)
        bench = table_rows(self.md, "| benchmark | time")
        row = next(r for r in bench if r[0].startswith("copy/float32/openmp/"))
        self.assertEqual(row[4], "100%")

    def test_refuses_a_directory_that_is_no_run(self):
        proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "gpu_summary.py"), self.tmp],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no run.env", proc.stderr)


class Crossovers(unittest.TestCase):
    """The summary's crossover is the advisor's: from which size the device wins for good, a loss
    within the spread of the two medians being noise."""

    @staticmethod
    def rows(speedups, spread=0.0):
        return [{"size": n, "host": 1.0, "device": None if s is None else 1.0 / s, "speedup": s, "spread": spread}
                for n, s in speedups]

    def test_the_device_wins_for_good_from_one_size(self):
        gs = load_summary_module()
        rows = self.rows([(10, 0.2), (20, 0.9), (40, None), (80, 1.5), (160, 3.0), (320, 0.8)])
        # The summary's own rule before issue 29 named every change of the faster side (20 -> 80 the
        # device, 160 -> 320 the host). The advisor's: the device loses at the largest size, so it
        # never wins for good; its wins below are named.
        c = gs.device_crossover(rows)
        self.assertEqual((c.status, c.wins_below), ("never", [80, 160]))
        c = gs.device_crossover(rows[:5])
        self.assertEqual((c.status, c.last_losing, c.first_winning), ("from", 20, 80))
        self.assertEqual(gs.device_crossover(rows[:2]).status, "never")

    def test_a_loss_within_the_spread_is_noise(self):
        gs = load_summary_module()
        c = gs.device_crossover(self.rows([(10, 0.5), (20, 1.2), (40, 0.95), (80, 2.0)], spread=0.1))
        self.assertEqual((c.status, c.last_losing, c.first_winning, c.ignored_losses), ("from", 10, 20, [40]))


class WithoutMatplotlib(unittest.TestCase):
    def test_the_summary_runs_where_matplotlib_cannot_be_imported(self):
        # GPU nodes may lack matplotlib: neither the summary nor the package modules it imports may need it.
        tmp = tempfile.mkdtemp(prefix="gpu-summary-no-mpl-")
        try:
            run_dir = os.path.join(tmp, "host-run")
            shutil.copytree(os.path.join(SOURCE_DIR, "tests", "offline", "fixtures", "host-run"), run_dir)
            code = ("import runpy, sys; sys.modules['matplotlib'] = None; "
                    f"sys.argv = ['gpu_summary.py', {run_dir!r}]; "
                    f"runpy.run_path({os.path.join(SOURCE_DIR, 'scripts', 'gpu_summary.py')!r}, run_name='__main__')")
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(run_dir + ".md", encoding="utf-8") as f:
                self.assertIn("## Device against host, per deck", f.read())
        finally:
            shutil.rmtree(tmp)


SWEEP_DECK = """title: summary test - distance sweep, Serial against OpenMP
cases:
  - name: sweep
    workload: distance
    variant: direct
    sizes: [8, 16, 32, 64, 128, 256, 512, 1024, 1536, 2048]
    precision: float64
    spaces: [serial, openmp]
    policies: [host, copy-every-iteration]
    warmup: 1
    repetitions: 3
"""


class FreshRun(unittest.TestCase):
    """Results made now by the mini-app of this build."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpu-summary-fresh-")
        run = cls.run_dir = os.path.join(cls.tmp, "fresh")
        os.makedirs(os.path.join(run, "decks"))
        os.makedirs(os.path.join(run, "benchmarks"))
        deck = os.path.join(cls.tmp, "sweep.yaml")
        with open(deck, "w") as f:
            f.write(SWEEP_DECK)
        env = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false")
        proc = subprocess.run([MINIAPP, deck, "-o", os.path.join(run, "decks", "sweep"), "-q"], env=env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        with open(os.path.join(run, "decks", "sweep", "results.json")) as f:
            cls.results = json.load(f)
        # A failed verification, as the harness records one.
        bad = cls.results["measurements"][-1]
        bad["verification"]["passed"] = False
        bad["verification"]["detail"] = "planted failure"
        with open(os.path.join(run, "decks", "sweep", "results.json"), "w") as f:
            json.dump(cls.results, f)
        os.makedirs(os.path.join(run, "decks", "stopped"))  # a deck stopped before its first write
        with open(os.path.join(run, "benchmarks", "distance.json"), "w") as f:
            f.write('{"context": {}, "benchmarks": [{"name": "distance-direct/float32/openmp/4096"')
        # A part stopped at its limit after its first benchmark (Google Benchmark flushes its file
        # after each): the file ends after that benchmark's last entry.
        kept = "launch-range/openmp/manual_time"
        with open(os.path.join(run, "benchmarks", "launch.json"), "w") as f:
            f.write('{\n  "context": {},\n  "benchmarks": [\n' + json.dumps(
                {"name": kept + "_median", "run_name": kept, "run_type": "aggregate", "aggregate_name": "median",
                 "real_time": 4.5, "time_unit": "us"}))
        # A benchmark that reported an error, as Google Benchmark writes it: once per repetition,
        # with no time and no aggregates.
        refused = "solver-refused/float64/openmp/8/manual_time"
        errored = {"name": refused, "run_name": refused, "run_type": "iteration", "error_occurred": True,
                   "error_message": "scratch does not fit", "iterations": 0, "real_time": 0.0, "time_unit": "ms"}
        # dense-blocked's resident leaves given up (the counter solved_again), and not
        resident = "solver-dense-blocked-leaf-resident/float64/openmp/2048/1/128/manual_time"
        timed = [{"name": name + "_median", "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
                  "real_time": 21.5, "time_unit": "ms", "solved_again": again}
                 for name, again in ((resident, 2.0), (resident.replace("resident", "resident512"), 0.0))]
        with open(os.path.join(run, "benchmarks", "solver.json"), "w") as f:
            json.dump({"context": {}, "benchmarks": [errored] * 3 + timed}, f)
        with open(os.path.join(run, "run.env"), "w") as f:
            f.write("backend=host\ndevice_space=openmp\nhost_space=serial\ndevice_name=test host\n"
                    "started=2026-01-01T00:00:00Z\n")
        with open(os.path.join(run, "steps.tsv"), "w") as f:
            f.write("step\tstatus\tseconds\texit_code\tdetail\ndeck:sweep\tfailed\t3\t1\texit 1\n")
        cls.proc, cls.md = run_summary(run)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_a_stopped_part_keeps_the_benchmarks_it_finished(self):
        rows = [r for r in table_rows(self.md, "| benchmark | time") if r[0].startswith("launch-range/")]
        self.assertEqual(rows, [["launch-range/openmp/manual_time", "4.5 us", "-", "-", "-"]])
        self.assertIn("- benchmarks/launch.json: stopped before it finished; the 1 benchmark(s) it finished first "
                      "are kept.", self.md)

    def test_a_benchmark_error_is_one_row_with_its_message(self):
        rows = [r for r in table_rows(self.md, "| benchmark | time") if r[0].startswith("solver-refused/")]
        self.assertEqual(rows, [["solver-refused/float64/openmp/8/manual_time", "error: scratch does not fit",
                                 "-", "-", "-"]])

    def test_a_resident_leaf_given_up_is_said(self):
        said = [line for line in self.md.splitlines() if "solved again" in line]
        self.assertEqual(said, ["- solver-dense-blocked-leaf-resident/float64/openmp/2048/1/128/manual_time: 2 system(s) "
                                "solved again: a resident leaf's teams were not all running (a GPU shared with "
                                "others?), so its time includes solving without them."])

    def test_every_size_and_its_speedup(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        rows = table_rows(self.md, "| case | variant")
        by_size = {}
        for m in self.results["measurements"]:
            by_size.setdefault(m["size"], []).append(m)
        gs = load_summary_module()
        shown = {int(r[4]): r for r in rows}
        expected_speedups = {}
        for size, ms in by_size.items():
            host = next(m for m in ms if m["space"] == "serial" and m["policy"] == "host")
            dev = min((m for m in ms if m["space"] == "openmp"), key=lambda m: med(m, "total"))
            expected_speedups[size] = med(host, "total") / med(dev, "total")
            if size in shown:
                self.assertEqual(shown[size][5], gs.fmt_time(med(host, "total")))
                self.assertEqual(shown[size][6], dev["policy"])
                self.assertEqual(shown[size][8], gs.fmt_ratio(expected_speedups[size]))
        # More sizes than a table shows: the ends and both sides of the crossover, which is the
        # advisor's rule applied to these medians and the larger spread of each pair.
        sizes = sorted(by_size)
        self.assertIn(sizes[0], shown)
        self.assertIn(sizes[-1], shown)
        host, dev, spread = {}, {}, {}
        for size, ms in by_size.items():
            h = next(m for m in ms if m["space"] == "serial" and m["policy"] == "host")
            d = min((m for m in ms if m["space"] == "openmp"), key=lambda m: med(m, "total"))
            host[size], dev[size] = med(h, "total"), med(d, "total")
            spread[size] = max(h["seconds"]["total"]["stddev"], d["seconds"]["total"]["stddev"])
        c = advisors_crossover()("`openmp` (its fastest policy per size)", dev, "`serial` (host policy)", host, spread)
        self.assertIn(f"- `sweep` direct float64: {c.text()}.", self.md)
        for n in (c.last_losing, c.first_winning):
            if n is not None:
                self.assertIn(n, shown)

    def summary_of_planted(self, name, plant):
        """The summary of a copy of this run whose decks/sweep/results.json `plant` has edited in place."""
        run_dir = os.path.join(self.tmp, name)
        shutil.copytree(self.run_dir, run_dir)
        path = os.path.join(run_dir, "decks", "sweep", "results.json")
        with open(path) as f:
            data = json.load(f)
        plant(data)
        with open(path, "w") as f:
            json.dump(data, f)
        return run_summary(run_dir)

    def test_bandwidth_shares_prefer_the_calibration(self):
        # Plant a calibration of the device space in one deck: its best stream rate replaces the copy
        # benchmark as the reference of every deck row's share.
        def plant(data):
            data["calibration"] = {"spaces": {"openmp": {"bandwidth_GBps": {"copy": 50.0, "triad": 60.0,
                                                                            "vendor_copy": 64.0},
                                                         "stream_bytes_per_array": 134217728}}}
        proc, md = self.summary_of_planted("calibrated-run", plant)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("64.0 GB/s (the calibration probe of `openmp`: its vendor copy, the best of stream copy, triad "
                      "and the vendor's copy on 128 MiB arrays, deck sweep)", md)
        rows = [r for r in table_rows(md.split("### sweep", 1)[1], "| case | variant |") if r[9] != "-"]
        self.assertTrue(rows)
        for r in rows:  # the share is of the unrounded rate: within one percent of the shown one's
            self.assertLessEqual(abs(float(r[10].rstrip("%")) - float(r[9]) / 64.0 * 100), 1.0, r)

    def test_gpu_energy_rows_carry_the_recorded_readings(self):
        # The fixture predates gpu_energy: plant readings on two device-space measurements (one
        # with every field, one with NVML's reason) and check the section against them.
        device = []

        def plant(data):
            device.extend(m for m in data["measurements"] if m["space"] == "openmp")
            self.assertGreaterEqual(len(device), 3)
            device[0]["gpu_energy"] = {"energy_joules": 12.5, "mean_power_watts": 250.0,
                                       "gpu_utilization_percent": 87.5, "seconds": 0.05, "samples": 3,
                                       "unavailable": None}
            device[1]["gpu_energy"] = {"energy_joules": None, "mean_power_watts": None,
                                       "gpu_utilization_percent": None, "seconds": 0.0, "samples": 0,
                                       "unavailable": "cannot load libnvidia-ml.so.1"}
            device[2]["gpu_energy"] = {"energy_joules": 458.7, "mean_power_watts": 128.0,
                                       "gpu_utilization_percent": 30.3, "seconds": 3.58, "samples": 179,
                                       "unavailable": None}
        proc, md = self.summary_of_planted("energy-run", plant)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = table_rows(md, "| deck | case | variant | precision | size | policy | J |")
        m, long = device[0], device[2]
        # A window under 1 s: energy and power in parentheses (a counter step is a large share);
        # utilisation is a mean of samples and stays plain.
        self.assertEqual(rows, [["sweep", m["case"], m["variant"], m["precision"], str(m["size"]), m["policy"],
                                 "(12.5)", "(250)", "87.5", "0.05", "3"],
                                ["sweep", long["case"], long["variant"], long["precision"], str(long["size"]),
                                 long["policy"], "458.7", "128", "30.3", "3.58", "179"]])
        self.assertIn("order of magnitude only. Here the smallest nonzero reading over a window under 0.1 s was 12.5 J.", md)
        self.assertIn("- 1 measurement(s) with null fields: cannot load libnvidia-ml.so.1", md)
        # The rest come from this binary on a host space: gpu_energy is there, and null.
        self.assertIn(f"- {len(device) - 3} measurement(s) with gpu_energy null", md)
        self.assertNotIn("without gpu_energy", md)

    def section_with_file(self, name, heading, text):
        """The summary's section under `heading` for a copy of this run with `name` holding `text`."""
        run_dir = os.path.join(self.tmp, "with-" + name)
        shutil.copytree(self.run_dir, run_dir)
        with open(os.path.join(run_dir, name), "w") as f:
            f.write(text)
        proc, md = run_summary(run_dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return md.split(heading, 1)[1].split("\n## ", 1)[0]

    def test_the_advisors_answer_is_quoted(self):
        self.assertIn("No advise.txt: the advisor's sweep did not run", self.md)
        advice = ("miniapp advise: x\n\nRecommendation (fastest measured configuration per size; measurements "
                  "only):\n  case-a (distance, float32): n <= 512: openmp (16 threads); n >= 2048: cuda, "
                  "all-resident\n\nLink bandwidth used: 25 GB/s\n\n== case-a / direct / float32 (3 sizes)\n"
                  "  transfers (seed 003) ...\n  at n = 2048, one cuda device (data resident) does the work of "
                  "41.0 serial cores at ...; openmp at 16 threads is still 3.1x slower\n"
                  "    model check, measured / predicted: resident 2.76x at n = 2048\n\nNotes:\n"
                  "  the H100 prediction against the device's measurements, data resident: measured/predicted "
                  "median 4.64x over 35 size(s)\n  measured at one size only, so no crossover ...\n"
                  "  case-a / direct / float32: copying every iteration through pinned host memory would beat the "
                  "best host space from n = 512 (predicted ...); measured through the pageable mirrors, it never "
                  "did\n")
        section = self.section_with_file("advise.txt", "## The advisor's answer", advice)
        self.assertIn("n <= 512: openmp (16 threads); n >= 2048: cuda, all-resident", section)
        self.assertIn("does the work of 41.0 serial cores", section)
        self.assertIn("== case-a / direct / float32", section)
        self.assertIn("the H100 prediction against the device's measurements, data resident: measured/predicted "
                      "median 4.64x", section)
        self.assertIn("case-a / direct / float32: copying every iteration through pinned host memory would beat "
                      "the best host space from n = 512", section)
        self.assertNotIn("measured at one size only", section)
        self.assertNotIn("Link bandwidth used", section)
        self.assertNotIn("transfers (seed 003)", section)

    def test_the_peers_tables_are_quoted(self):
        self.assertIn("No peers.md: the peers step did not run through", self.md)
        quoted = ["| workload | NumPy form | mini-app variant | NumPy ms | mini-app ms | ratio |",
                  "|---|---|---|---|---|---|",
                  "| distance 4096 float64 | einsum + matmul | direct | 251 | 2.19 | 114.75x |", "",
                  "Not run: Numba, distance 4096 float64: its form failed (AttributeError: x)."]
        section = self.section_with_file("peers.md", "## Peers: the seeds' Python forms in the same run",
                                         "\n".join(quoted) + "\n")
        self.assertEqual([line for line in quoted if line not in section], [])
        self.assertNotIn("No peers.md", section)

    def test_kernel_times_name_each_compute_phases_largest_kernels(self):
        """miniapp --kernel-times on the kernel-times deck's batched cases (what the host rehearsal
        runs): one row per compute phase, its time per entry and its largest kernel's share as
        computed here from kernel-times.json."""
        self.assertIn("No kernel times: missing", self.md)
        run_dir = os.path.join(self.tmp, "timed-run")
        shutil.copytree(self.run_dir, run_dir)
        env = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false")
        proc = subprocess.run([MINIAPP, os.path.join(SOURCE_DIR, "input", "kernel-times.yaml"), "--kernel-times",
                               "--spaces", "openmp", "--case", "batched-*", "--no-calibrate", "-q",
                               "-o", os.path.join(run_dir, "kernel-times")], env=env, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(run_dir, "kernel-times", "kernel-times.json")) as f:
            regions = json.load(f)["regions"]
        # By measurement and variant (the variants of a case share the measurement's region).
        compute = {(r["path"][0], r["path"][1].split("/")[1]): r for r in regions
                   if len(r["path"]) == 2 and r["path"][1].endswith("/compute")}
        self.assertEqual(len(compute), 4)  # 10 x 10 and 32 x 32, thread and team
        proc, md = run_summary(run_dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = {(r[0], r[1]): r for r in table_rows(md, "| measurement | variant")}
        self.assertEqual(set(rows), set(compute))
        for key, r in compute.items():
            row = rows[key]
            per_entry = r["seconds"] / r["entries"]  # printed to 3 decimals, or 3 digits below 10 ms
            self.assertAlmostEqual(float(row[2]), per_entry, delta=max(0.0005, per_entry * 0.01))
            top = max(r["kernels"], key=lambda k: k["seconds"])
            self.assertTrue(row[3].startswith(f"{top['name']} {100 * top['seconds'] / r['seconds']:.0f}% "
                                              f"({top['launches']}x)"), row[3])

    def test_failures_and_missing_parts_are_reported(self):
        self.assertIn("planted failure", self.md)
        self.assertIn("1 failed", self.md)
        self.assertIn("No results: results.json missing", self.md)
        self.assertIn("benchmarks/distance.json: incomplete or invalid JSON", self.md)
        self.assertIn("Not passed: deck:sweep", self.md)
        self.assertIn("No JUnit XML", self.md)


class CompareRuns(unittest.TestCase):
    """scripts/compare_gpu_runs.py on the committed H100 runs of 2026-11-24 (Kokkos 3.4.01, 4.6.01)."""

    def compare(self, *runs, space="cuda"):
        base = os.path.join(SOURCE_DIR, "docs", "results")
        return subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "compare_gpu_runs.py"),
                               *[os.path.join(base, r) for r in runs], "--space", space],
                              capture_output=True, text=True)

    def test_versions_side_by_side_with_the_ratio_of_the_raw_medians(self):
        old, new = "nvidia-h100-80gb-hbm3-2026-11-24", "nvidia-h100-80gb-hbm3-2026-11-24-kokkos-4.6.01"
        proc = self.compare(old, new)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("[1] Kokkos 3.4.1", proc.stdout)
        self.assertIn("[2] Kokkos 4.6.1", proc.stdout)
        # The copy benchmark's row: both medians as the JSON has them, and their ratio.
        medians = []
        for run in (old, new):
            sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "report"))
            from miniapp_report import stored  # noqa: E402  (copy.json, or copy.json.xz once compacted)
            with stored.open_text(os.path.join(SOURCE_DIR, "docs", "results", run, "benchmarks", "copy.json")) as f:
                b = [x for x in json.load(f)["benchmarks"]
                     if x.get("run_name", "").startswith("copy/float32/cuda/") and x.get("aggregate_name") == "median"]
            self.assertEqual(len(b), 1, run)
            medians.append(b[0]["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b[0]["time_unit"]])
        row = [r for r in proc.stdout.splitlines() if r.startswith("| `copy/float32/cuda/")]
        self.assertEqual(len(row), 1, proc.stdout)
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        self.assertEqual(cells[1:], [f"{medians[0]:.3g}", f"{medians[1]:.3g}", f"{medians[1] / medians[0]:.2f}"])
        # The probe, including the vendor's copy.
        self.assertRegex(proc.stdout, r"\| vendor copy \(deep_copy\) \| [0-9.e+]+ \| [0-9.e+]+ \| [0-9.]+ \|")

    def test_benchmarks_read_as_the_summary_reads_them(self):
        """The median aggregate of repetitions (not the mean, nor the repetitions' own entries
        written before it), a benchmark run once, and nothing of an entry that failed: the one
        test of a median the summary takes (issue_targets.is_median)."""
        tmp = tempfile.mkdtemp(prefix="compare-")
        self.addCleanup(shutil.rmtree, tmp)
        os.makedirs(os.path.join(tmp, "benchmarks"))
        repeated = "solver-batched-thread/float64/cuda/32/10000/manual_time"
        entries = [{"run_name": repeated, "run_type": "iteration", "real_time": t, "time_unit": "us"}
                   for t in (350.0, 340.0, 360.0)]
        entries += [{"run_name": repeated, "run_type": "aggregate", "aggregate_name": a, "real_time": t,
                     "time_unit": "us"} for a, t in (("mean", 351.0), ("median", 347.0), ("stddev", 8.0))]
        entries += [{"run_name": "copy/float32/cuda/1000/manual_time", "run_type": "iteration", "real_time": 2.5,
                     "time_unit": "ms"},
                    {"run_name": "distance-direct/float32/cuda/4096/manual_time", "run_type": "iteration",
                     "error_occurred": True, "error_message": "verification failed", "real_time": 0.0,
                     "time_unit": "us"}]
        with open(os.path.join(tmp, "benchmarks", "solver.json"), "w", encoding="utf-8") as f:
            json.dump({"benchmarks": entries}, f)
        proc = self.compare(tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = {r.split("|")[1].strip(): r.split("|")[2].strip() for r in proc.stdout.splitlines()
                if r.startswith("| `")}
        self.assertEqual(rows, {f"`{repeated}`": "0.000347", "`copy/float32/cuda/1000/manual_time`": "0.0025"})

    def test_a_stopped_part_is_compared_up_to_what_it_finished(self):
        tmp = tempfile.mkdtemp(prefix="compare-")
        self.addCleanup(shutil.rmtree, tmp)
        os.makedirs(os.path.join(tmp, "benchmarks"))
        done = "copy/float32/cuda/1000/manual_time"
        with open(os.path.join(tmp, "benchmarks", "copy.json"), "w", encoding="utf-8") as f:
            f.write('{\n  "context": {},\n  "benchmarks": [\n' + json.dumps(
                {"run_name": done, "run_type": "aggregate", "aggregate_name": "median", "real_time": 2.5,
                 "time_unit": "ms"}))
        proc = self.compare(tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("- `" + os.path.basename(tmp) + "/benchmarks/copy.json`: its part stopped before it finished; "
                      "the benchmarks it finished first are compared", proc.stdout)
        rows = {r.split("|")[1].strip(): r.split("|")[2].strip() for r in proc.stdout.splitlines()
                if r.startswith("| `")}
        self.assertEqual(rows, {f"`{done}`": "0.0025"})

    def planted_run(self, parent, name, gpu, commit, rates, medians_us):
        """A run directory: run.env naming the GPU, build.env the commit, one deck's probe of cuda
        (bandwidth_GBps: rates, None for none) and the matrix benchmarks' medians (name -> us)."""
        run = os.path.join(parent, name)
        os.makedirs(os.path.join(run, "decks", "matrix"))
        os.makedirs(os.path.join(run, "benchmarks"))
        if gpu:  # None: a run.env-less directory (a rerun of a part), whose GPU is not known
            with open(os.path.join(run, "run.env"), "w", encoding="utf-8") as f:
                f.write(f"name={name}\ndevice_name={gpu}\n")
        with open(os.path.join(run, "build.env"), "w", encoding="utf-8") as f:
            f.write(f"PROJECT_COMMIT={commit}\n")
        doc = {"schema": "kokkos-miniapp-results/1", "status": "complete", "measurements": [],
               "calibration": {"spaces": {"cuda": {"bandwidth_GBps": rates}}} if rates else {}}
        with open(os.path.join(run, "decks", "matrix", "results.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f)
        with open(os.path.join(run, "benchmarks", "matrix.json"), "w", encoding="utf-8") as f:
            json.dump({"benchmarks": [{"run_name": f"{n}/manual_time", "run_type": "aggregate",
                                       "aggregate_name": "median", "real_time": t, "time_unit": "us"}
                                      for n, t in medians_us.items()]}, f)
        return run

    def test_across_gpus_each_streaming_kernel_against_the_vendor_copys_ratio(self):
        """Issue 27: on the faster memory a streaming kernel is as much faster as the vendor copy,
        within 15%: x * y and x ** y at the largest size both runs have, the probe's copy and triad."""
        tmp = tempfile.mkdtemp(prefix="compare-")
        self.addCleanup(shutil.rmtree, tmp)
        mul, pw = "matrix-elementwise-multiply/float32/cuda", "matrix-elementwise-power/float32/cuda"
        slow = self.planted_run(tmp, "h100", "GPU A", "0123456789ab",
                                {"copy": 2700.0, "triad": 2900.0, "vendor_copy": 3000.0},
                                {f"{mul}/1000": 9.0, f"{mul}/16777216": 250.0, f"{pw}/16777216": 270.0})
        fast = self.planted_run(tmp, "h200", "GPU B", "0123456789ab",
                                {"copy": 3500.0, "triad": 4200.0, "vendor_copy": 4290.0},
                                {f"{mul}/1000": 9.0, f"{mul}/16777216": 175.0, f"{mul}/33554432": 300.0,
                                 f"{pw}/16777216": 270.0})
        same_gpu = self.planted_run(tmp, "h100-again", "GPU A", "0123456789ab", None, {f"{mul}/16777216": 250.0})
        unknown = self.planted_run(tmp, "part", None, "0123456789ab", None, {f"{mul}/16777216": 100.0})
        proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "compare_gpu_runs.py"),
                               slow, fast, same_gpu, unknown], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertIn("## Across GPUs", out)
        self.assertIn("4290 GB/s against 3000, 1.43x", out)
        self.assertIn("Builds: 0123456789ab and 0123456789ab: the same build.", out)
        self.assertIn("### [2] GPU B, Kokkos ? against [1] GPU A, Kokkos ?", out)
        self.assertEqual(out.count("### "), 1, out)  # [3] is on [1]'s GPU, [4] on one no run.env names
        rows = table_rows(out, "| kernel | [1] GPU A")
        by_kernel = {r[0].split(" (")[0]: r[3:] for r in rows}
        # 250 / 175 = 1.43x = 100% of 1.43; the size only the faster run has is not compared.
        self.assertIn(f"`{mul}/16777216/manual_time`", rows[0][0])
        self.assertEqual(by_kernel["`x * y` float32"], ["1.43x", "100%", "met"])
        self.assertEqual(by_kernel["`x ** y` float32"], ["1.00x", "70%", "not met"])
        self.assertEqual(by_kernel["the probe's copy"], [f"{3500 / 2700:.2f}x", f"{3500 / 2700 / 1.43:.0%}", "met"])
        self.assertEqual(by_kernel["the probe's triad"], [f"{4200 / 2900:.2f}x", f"{4200 / 2900 / 1.43:.0%}", "met"])
        # Over two builds the section says so; without a vendor copy nothing is held to a ratio.
        other_build = self.planted_run(tmp, "h200-other-build", "GPU B", "fedcba987654", {"copy": 3500.0},
                                       {f"{mul}/16777216": 175.0})
        proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "compare_gpu_runs.py"),
                               slow, other_build], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("not the same build", proc.stdout)
        self.assertIn("No vendor copy in the probe of [2] GPU B, Kokkos ?", proc.stdout)
        rows = {r[0].split(" (")[0]: r[3:] for r in table_rows(proc.stdout, "| kernel | [1] GPU A")}
        self.assertEqual(rows["`x * y` float32"], ["1.43x", "-", "-"])
        self.assertEqual(rows["`x ** y` float32"], ["-", "-", "-"])

    def test_a_directory_without_results_is_refused(self):
        empty = tempfile.mkdtemp()
        try:
            proc = self.compare(empty)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("no deck results and no benchmarks on cuda", proc.stderr)
        finally:
            shutil.rmtree(empty)


class Compaction(unittest.TestCase):
    """scripts/compact_results.py on a copy of the fixture run (every raw file, --threshold 1): the
    summary reads the same from the compressed files, each of which gives back the original bytes."""

    def two_copies_of_the_fixture(self):
        """(a temporary directory, two copies of the fixture run in it), removed after the test."""
        tmp = tempfile.mkdtemp(prefix="compact-")
        self.addCleanup(shutil.rmtree, tmp)
        source = os.path.join(SOURCE_DIR, "tests", "offline", "fixtures", "host-run")
        copies = [os.path.join(tmp, "copy-one"), os.path.join(tmp, "copy-two")]
        for copy in copies:
            shutil.copytree(source, copy)
        return tmp, copies[0], copies[1]

    def assert_same_summary(self, first, second):
        summaries = []
        for run in (first, second):
            p, md = run_summary(run)
            self.assertEqual(p.returncode, 0, p.stderr)
            summaries.append(md.replace(os.path.basename(run), "RUN"))
        self.assertEqual(summaries[0], summaries[1])

    def test_a_compacted_run_summarises_the_same(self):
        tmp, plain, packed = self.two_copies_of_the_fixture()
        script = os.path.join(SOURCE_DIR, "scripts", "compact_results.py")
        for run in (plain, packed):  # an Nsight Compute report (binary) as profile-kernels.sh leaves one
            os.makedirs(os.path.join(run, "profile"), exist_ok=True)
            with open(os.path.join(run, "profile", "target.ncu-rep"), "wb") as f:
                f.write(bytes(range(256)) * 64)
        proc = subprocess.run([sys.executable, script, packed, "--threshold", "1"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        compressed = []
        for root, _, names in os.walk(packed):
            for name in names:
                original = os.path.join(plain, os.path.relpath(os.path.join(root, name), packed))
                if name.endswith(".xz"):
                    compressed.append(name)
                    with lzma.open(os.path.join(root, name)) as f, open(original[:-3], "rb") as g:
                        self.assertEqual(f.read(), g.read(), name)
                else:  # summaries, env, tsv and XML stay as they were, and empty files
                    raw = name.endswith((".json", ".csv", ".log", ".txt", ".ncu-rep"))
                    self.assertFalse(raw and os.path.getsize(os.path.join(root, name)) > 0, name)
        self.assertIn("results.json.xz", compressed)
        self.assertIn("target.ncu-rep.xz", compressed)
        self.assertIn(f"{len(compressed)} file(s) compressed", proc.stdout)
        self.assert_same_summary(plain, packed)
        again = subprocess.run([sys.executable, script, packed, "--threshold", "1"], capture_output=True, text=True)
        self.assertIn("0 file(s) compressed", again.stdout)
        refused = subprocess.run([sys.executable, script, os.path.join(tmp, "missing")], capture_output=True, text=True)
        self.assertEqual(refused.returncode, 2)
        self.assertIn("is not a directory", refused.stderr)

    def test_a_file_kept_both_ways_is_read_once(self):
        """A directory holding FILE and FILE.xz (a compaction stopped before removing the plain
        file) summarises as the plain run: no benchmark part or deck read twice."""
        _, plain, both = self.two_copies_of_the_fixture()
        doubled = 0
        for root, _, names in os.walk(both):
            for name in names:
                if name.endswith(".json"):
                    with open(os.path.join(root, name), "rb") as f, lzma.open(os.path.join(root, name + ".xz"), "wb") as g:
                        g.write(f.read())
                    doubled += 1
        self.assertGreater(doubled, 1)
        self.assert_same_summary(plain, both)


def planted(name, ms, gbps=None, **extra):
    """A benchmark median as Google Benchmark writes it (one part, the device space cuda)."""
    b = {"name": name + "/manual_time_median", "run_name": name + "/manual_time", "run_type": "aggregate",
         "aggregate_name": "median", "real_time": ms, "time_unit": "ms", **extra}
    if gbps is not None:
        b["GB/s"] = gbps * 1e9
    return ("part", b)


class IssueTargets(unittest.TestCase):
    """scripts/issue_targets.py (the summary's "Against issue 27's targets"): planted medians and a
    planted probe whose shares and verdicts are worked out here, and the committed H200 run of
    2026-11-29 against the shares docs/results/README.md worked out by hand from its raw files."""

    def rows(self, benchmarks, rates):
        sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts"))
        sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "report"))
        import issue_targets  # noqa: E402
        from miniapp_report import results  # noqa: E402
        cal = results.Calibration("cuda", rates, {}, None, {}, "", None, "") if rates else None
        listed = issue_targets.rows_of(issue_targets.medians(benchmarks, "cuda"), "cuda", cal)
        by_target = {r[0]: r[1:] for r in listed}
        self.assertEqual(len(by_target), len(listed), "a target listed twice")
        return by_target

    def test_each_target_against_its_bound(self):
        rows = self.rows([
            planted("matrix-elementwise-power/float32/cuda/1000", 0.1, 3000.0),
            planted("matrix-elementwise-power/float32/cuda/16777216", 0.2, 3500.0),  # the largest: 88% of 4000
            planted("matrix-elementwise-power-exp2-k4/float32/cuda/16777216", 0.19, 3800.0),  # a faster form
            planted("matrix-elementwise-power-exp2-k4-compute/float32/cuda/16777216", 0.1, 7000.0),  # a probe: no form
            planted("matrix-elementwise-power-k1/float32/cuda/1000", 0.01, 9000.0),  # another size: not read
            planted("distance-direct/float32/cuda/4096", 0.040),
            planted("distance-direct-flat-k16/float32/cuda/4096", 0.035),
            planted("distance-direct-squared/float32/cuda/4096", 0.030),  # no roots: not a form of direct
            planted("fill-flat-k8/float32/cuda/4096", 0.030), planted("fill/float32/cuda/4096", 0.050),
            planted("distance-direct/float32/cuda/8192", 0.2),  # no fill of its size: no row
            planted("distance-tiled/float32/cuda/4096", 0.3),
            planted("distance-tiled-blocks/float32/cuda/4096", 0.039),  # a form faster than direct
            planted("regression-fused/float64/cuda/1000000/50/1", 0.2),
            planted("regression-fused-launches/float64/cuda/1000000/50/1", 0.25),  # slower: not named
            planted("regression-stream-read/float64/cuda/1000000/50/1", 0.136),
            planted("regression-blas/float64/cuda/1000000/50/1", 0.3),
            planted("solver-batched-thread/float64/cuda/8/100000/0", 0.05, 2112.0),
            planted("solver-batched-thread-registers/float64/cuda/8/100000", 0.03, 3520.0),
            planted("solver-batched-kokkos-kernels/float64/cuda/8/100000/0", 0.288),
            ("part", {"name": "solver-batched-thread/float64/cuda/32/10000/0/manual_time", "error_occurred": True,
                      "error_message": "refused", "real_time": 0.0, "time_unit": "ms"}),
            planted("solver-dense-vendor/float64/cuda/2048/1/128", 6.0),
            planted("solver-dense-vendor/float64/openmp/2048/1/128", 100.0),  # another space: not read
            planted("solver-dense-blocked/float64/openmp/2048/1/128", 150.0),
            planted("solver-dense-blocked/float64/cuda/2048/1/128", 20.0),
            planted("solver-dense-blocked-leaf-resident/float64/cuda/2048/1/128", 9.0, solved_again=1.0),
            planted("solver-dense-blocked-leaf-wide2048/float64/cuda/2048/1/128", 17.0),
        ], {"copy": 3000.0, "triad": 4400.0, "vendor_copy": 4000.0})
        power = rows["`x ** y` float32 >= 85% of the vendor copy"]
        self.assertEqual(power[1:], ("4000 GB/s, the vendor's device-to-device copy", "88%", "met"))
        self.assertIn("matrix-elementwise-power/float32/cuda/16777216", power[0])
        self.assertIn("fastest form 3800 GB/s (matrix-elementwise-power-exp2-k4/float32/cuda/16777216, 95%)", power[0])
        self.assertEqual(rows["`x * y` float32 >= 85% of the vendor copy"][1:], ("-", "-", "-"))
        self.assertEqual(rows["the probe's copy >= 85% of the vendor copy"][1:],
                         ("4000 GB/s, the vendor's device-to-device copy", "75%", "not met"))
        self.assertEqual(rows["the probe's triad >= 85% of the vendor copy"][2:], ("110%", "met"))
        # the triad moves 1.5x the copy's bytes at 4400 against 3000 GB/s: 1.02x its time, 68% of 1.5x
        self.assertEqual(rows["the probe's copy and triad times grow with their bytes"][2:], ("68%", "not met"))
        direct = rows["distance direct >= 70% of writing the output, n = 4096"]
        self.assertEqual(direct[2:], ("75%", "met"))
        self.assertIn("fill-flat-k8/float32/cuda/4096", direct[1])
        self.assertIn("fastest form 35 us (distance-direct-flat-k16/float32/cuda/4096, 86%)", direct[0])
        self.assertNotIn("distance direct >= 70% of writing the output, n = 8192", rows)
        self.assertTrue(rows["distance symmetric >= 70% of writing the output"][0].startswith("not measured"))
        tiled = rows["distance tiled at least as fast as direct, n = 4096"]
        self.assertEqual(tiled[2:], ("13%", "not met"))
        self.assertIn("fastest form 39 us (distance-tiled-blocks/float32/cuda/4096, 103%)", tiled[0])
        fused = rows["regression fused float64, 10^6 x 51: >= 70% of one read of X"]
        self.assertEqual(fused[2:], ("68%", "not met"))
        self.assertNotIn("fastest form", fused[0])
        self.assertEqual(rows["regression fused float64, 10^6 x 51: faster than blas"][2:], ("1.50x", "met"))
        self.assertTrue(rows["regression fused float32, 10^6 x 51: >= 70% of one read of X"][0].startswith("not measured"))
        floor = rows["batched 8 x 8 x 10^5: >= 50% of the bytes floor"]  # against the probe's best: 4400
        self.assertEqual(floor[1:], ("4400 GB/s, the probe's best stream rate", "48%", "not met"))
        self.assertIn("fastest form 30 us (solver-batched-thread-registers/float64/cuda/8/100000, 80%)", floor[0])
        self.assertEqual(rows["batched 8 x 8 x 10^5: no slower than KokkosBatched"][2:], ("5.76x", "met"))
        self.assertFalse([t for t in rows if t.startswith("batched 32 x 32")])  # its benchmark failed
        dense = rows["dense-blocked within 3x of dense-vendor, n = 2048"]
        self.assertEqual(dense[1:], ("6 ms (solver-dense-vendor/float64/cuda/2048/1/128)", "3.33x", "not met"))
        # the resident form was solved again (its time is not the form's): the next fastest is named
        self.assertIn("fastest form 17 ms (solver-dense-blocked-leaf-wide2048/float64/cuda/2048/1/128, 2.83x)",
                      dense[0])

    def test_without_a_probe_the_rates_say_so(self):
        rows = self.rows([planted("matrix-elementwise-power/float32/cuda/16777216", 0.2, 3500.0),
                          planted("solver-batched-thread/float64/cuda/8/100000/0", 0.05, 2112.0)], {})
        self.assertEqual(rows["`x ** y` float32 >= 85% of the vendor copy"][0],
                         "not measured in this run (no calibration probe of the device)")
        self.assertNotIn("batched 8 x 8 x 10^5: >= 50% of the bytes floor", rows)
        rows = self.rows([planted("matrix-elementwise-power/float32/cuda/16777216", 0.2, 3500.0)], {"copy": 3800.0})
        self.assertEqual(rows["`x ** y` float32 >= 85% of the vendor copy"][1:],
                         ("3800 GB/s, the probe's copy (no vendor copy measured)", "92%", "met"))
        self.assertNotIn("the probe's copy >= 85% of the vendor copy", rows)  # not against itself

    def test_bound_probes_say_which_bound(self):
        sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts"))
        import issue_targets  # noqa: E402
        import gpu_summary  # noqa: E402
        from miniapp_report import results  # noqa: E402
        benchmarks = [
            # bytes 3000 / 4000 GB/s: 75% (0.15 ms); work 60%: 1.33x the larger, their sum 135%
            planted("matrix-elementwise-power/float32/cuda/16777216", 0.2, 3000.0),
            planted("matrix-elementwise-power-compute/float32/cuda/16777216", 0.12),
            # bytes 50%, work 90%: within 15% of the work
            planted("distance-direct-flat-k16/float32/cuda/4096", 0.05, 2000.0),
            planted("distance-direct-flat-k16-compute/float32/cuda/4096", 0.045),
            planted("distance-direct/float32/cuda/4096", 0.06), planted("fill-flat-k8/float32/cuda/4096", 0.03),
            planted("distance-direct-flat-k16-compute/float32/cuda/8192", 0.1),  # no kernel at 8192: no row
            # bytes 25%, work 40%: 2.5x the larger, their sum 65%
            planted("solver-batched-thread-registers/float64/cuda/8/100000", 0.05, 1000.0),
            planted("solver-batched-thread-registers-compute/float64/cuda/8/100000", 0.02),
            # bytes 95%, work 25%: within 15% of the bytes
            planted("solver-batched-thread-registers/float64/cuda/10/100000", 0.04, 3800.0),
            planted("solver-batched-thread-registers-compute/float64/cuda/10/100000", 0.01),
            planted("solver-batched-thread-registers-compute/float64/openmp/10/100000", 0.5),  # another space
            # a prepared form's probe beside that form (not the workload's kernel): bytes 87.5%, work 82%
            planted("matrix-elementwise-power-exp2-k4/float32/cuda/16777216", 0.17, 3500.0),
            planted("matrix-elementwise-power-exp2-k4-compute/float32/cuda/16777216", 0.14),
        ]
        cal = results.Calibration("cuda", {"vendor_copy": 4000.0}, {}, None, {}, "", None, "")
        timed = issue_targets.medians(benchmarks, "cuda")
        probes = {r[0]: r[1:] for r in issue_targets.probe_rows(timed, cal)}
        self.assertEqual(probes["matrix-elementwise-power/float32/cuda/16777216"],
                         ("200 us", "120 us (60%)", "150 us (75%) at 4000 GB/s", "work and bytes in turn, not overlapped"))
        self.assertEqual(probes["distance-direct-flat-k16/float32/cuda/4096"][1:],
                         ("45 us (90%)", "25 us (50%) at 4000 GB/s", "overlapped: bound by its work"))
        self.assertEqual(probes["solver-batched-thread-registers/float64/cuda/8/100000"][3],
                         "partly overlapped: neither the work nor the bytes alone takes its time")
        self.assertEqual(probes["solver-batched-thread-registers/float64/cuda/10/100000"][1:],
                         ("10 us (25%)", "38 us (95%) at 4000 GB/s", "overlapped: bound by its bytes"))
        self.assertEqual(probes["matrix-elementwise-power-exp2-k4/float32/cuda/16777216"][1:],
                         ("140 us (82%)", "149 us (88%) at 4000 GB/s", "overlapped: bound by its bytes"))
        self.assertEqual(len(probes), 5)
        # a probe computes no result: never a kernel's fastest form
        direct = {r[0]: r[1:] for r in issue_targets.rows_of(timed, "cuda", cal)}[
            "distance direct >= 70% of writing the output, n = 4096"]
        self.assertIn("fastest form 50 us (distance-direct-flat-k16/float32/cuda/4096", direct[0])
        text = issue_targets.section(benchmarks, "cuda", cal, gpu_summary.md_table)
        self.assertIn("| distance-direct-flat-k16/float32/cuda/4096 | 50 us | 45 us (90%) |", text)
        self.assertNotIn("Which bound", issue_targets.section(benchmarks[:1] + benchmarks[2:3], "cuda", cal,
                                                              gpu_summary.md_table))

    def test_the_committed_h200_run_gives_the_shares_worked_out_by_hand(self):
        run = os.path.join(SOURCE_DIR, "docs", "results", "nvidia-h200-2026-11-29-kokkos-4.6.01")
        out = os.path.join(tempfile.mkdtemp(prefix="targets-"), "summary.md")
        self.addCleanup(shutil.rmtree, os.path.dirname(out))
        proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "gpu_summary.py"), run,
                               "--output", out], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out, encoding="utf-8") as f:
            rows = {r[0]: r[1:] for r in table_rows(f.read(), "| target | measured")}
        # the probe's copy at 3190 GB/s against the vendor copy's 3919 (docs/tuning-notes.md)
        self.assertEqual(rows["the probe's copy >= 85% of the vendor copy"][2:], ["81%", "not met"])
        # docs/results/README.md, "Against the issue's targets" of 2026-11-29
        self.assertEqual(rows["distance direct >= 70% of writing the output, n = 4096"][2], "53%")
        self.assertEqual(rows["regression fused float64, 10^6 x 51: >= 70% of one read of X"][2], "64%")
        self.assertEqual(rows["regression fused float32, 10^6 x 51: >= 70% of one read of X"][2], "50%")
        self.assertEqual(rows["regression fused float64, 10^6 x 51: faster than blas"][3], "met")
        self.assertEqual(rows["batched 8 x 8 x 10^5: >= 50% of the bytes floor"][2], "31%")
        self.assertIn("solver-batched-thread-lanes/float64/cuda/32/10000, 6%)",
                      rows["batched 32 x 32 x 10^4: >= 50% of the bytes floor"][0])
        self.assertEqual(rows["batched 8 x 8 x 10^5: no slower than KokkosBatched"][3], "met")
        self.assertIn("(solver-dense-blocked-leaf-one-team/float64/cuda/2048/1/128, 3.31x)",
                      rows["dense-blocked within 3x of dense-vendor, n = 2048"][0])


def spread(name, ms):
    """A benchmark's standard deviation over its repetitions as Google Benchmark writes it."""
    return ("part", {"name": name + "/manual_time_stddev", "run_name": name + "/manual_time", "run_type": "aggregate",
                     "aggregate_name": "stddev", "real_time": ms, "time_unit": "ms"})


class PreparedForms(unittest.TestCase):
    """scripts/prepared_forms.py (the summary's "Prepared forms against what each is measured
    against"): a planted table of forms and planted medians and spreads whose readings are worked
    out here, the project's own table, and the committed H200 run of 2026-12-01 against the times
    docs/results/README.md quotes from it."""

    def setUp(self):
        sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts"))
        sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "report"))
        import prepared_forms  # noqa: E402
        self.forms = prepared_forms
        self.tmp = tempfile.mkdtemp(prefix="forms-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def table(self, text):
        path = os.path.join(self.tmp, "forms.tsv")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_each_form_beside_its_baselines_at_the_same_arguments(self):
        path = self.table("# a comment\n"
                          "fused\tworkload\tthe workload's\t-\n"
                          "base\topen\ta baseline\t-\n"
                          "other\topen\tanother baseline\t-\n"
                          "fast\topen\ta form\tbase,other\n"
                          "slow\topen\ta form\tbase\n"
                          "late\topen\ta form not run\tbase\n"
                          "elsewhere\topen\ta form at other arguments\tbase\n"
                          "once\topen\ta form run once\tother\n")
        self.assertEqual(self.forms.pairs(path), [("fast", ["base", "other"]), ("slow", ["base"]),
                                                  ("late", ["base"]), ("elsewhere", ["base"]), ("once", ["other"])])
        benchmarks = [
            planted("base/float64/cuda/8/100", 1.0), spread("base/float64/cuda/8/100", 0.01),
            planted("base/float32/cuda/8/100", 1.0), spread("base/float32/cuda/8/100", 0.01),
            planted("other/float64/cuda/8/100", 0.93), spread("other/float64/cuda/8/100", 0.02),
            # 0.9 against 1.0 (spreads 0.01 + 0.01): faster by 1.11x; against 0.93 (0.01 + 0.02): the same
            planted("fast/float64/cuda/8/100", 0.9), spread("fast/float64/cuda/8/100", 0.01),
            # float32: 0.985 against 1.0, spreads 0.01 + 0.01: the same within the spread
            planted("fast/float32/cuda/8/100", 0.985), spread("fast/float32/cuda/8/100", 0.01),
            planted("fast/float64/openmp/8/100", 0.1),  # another space: not read
            planted("slow/float64/cuda/8/100", 1.25), spread("slow/float64/cuda/8/100", 0.05),
            planted("elsewhere/float64/cuda/16/100", 0.5), spread("elsewhere/float64/cuda/16/100", 0.01),
            ("part", {"name": "once/float64/cuda/8/100/manual_time", "run_name": "once/float64/cuda/8/100/manual_time",
                      "run_type": "iteration", "real_time": 0.8, "time_unit": "ms"}),
        ]
        text = self.forms.section(benchmarks, "cuda", load_summary_module().md_table, path)
        rows = table_rows(text, "| form | against")
        by = {(r[0], r[1]): r[2:] for r in rows}
        self.assertEqual(len(by), len(rows), "a pair listed twice")
        self.assertEqual(by[("fast/float64/cuda/8/100", "base")], ["900 us", "1 ms", "0.90", "faster (1.11x)"])
        self.assertEqual(by[("fast/float64/cuda/8/100", "other")][2:], ["0.97", "the same within the spread"])
        self.assertEqual(by[("fast/float32/cuda/8/100", "base")][3], "the same within the spread")
        self.assertEqual(by[("slow/float64/cuda/8/100", "base")][2:], ["1.25", "slower (1.25x)"])
        self.assertEqual(by[("late", "base")], ["-", "-", "-", "not measured against it in this run (did not run)"])
        self.assertEqual(by[("elsewhere", "base")][3],
                         "not measured against it in this run (ran, but none of base at its arguments)")
        self.assertEqual(by[("once/float64/cuda/8/100", "other")][3], "faster (1.16x), one run each: no spread")
        self.assertFalse([r for r in rows if "openmp" in r[0]])
        self.assertIn("2 of 5 pairs measured were faster", text)
        # nothing of the table's forms ran: one sentence, no table
        text = self.forms.section(benchmarks[:2], "cuda", load_summary_module().md_table, path)
        self.assertIn("No prepared form of `forms.tsv` ran beside its baseline", text)
        self.assertNotIn("| form |", text)

    def test_the_projects_table_names_families_of_its_own(self):
        families = set()
        with open(self.forms.FORMS_TSV, encoding="utf-8") as f:
            for line in f:
                if not line.startswith("#") and line.strip():
                    families.add(line.split("\t")[0])
        listed = self.forms.pairs()
        self.assertGreaterEqual(len(listed), 10)
        for form, against in listed:
            self.assertTrue(set(against) <= families - {form}, (form, against))

    def test_the_committed_h200_run_gives_the_times_quoted_by_hand(self):
        run = os.path.join(SOURCE_DIR, "docs", "results", "nvidia-h200-2026-12-01-kokkos-4.6.01")
        out = os.path.join(self.tmp, "summary.md")
        proc = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "gpu_summary.py"), run,
                               "--output", out], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out, encoding="utf-8") as f:
            rows = {(r[0], r[1]): r[2:] for r in table_rows(f.read(), "| form | against")}
        # docs/results/README.md: the block at 32 x 10^4, 0.312 ms against the lanes' 0.347
        block = rows[("solver-batched-thread-lanes-rows32/float64/cuda/32/10000", "solver-batched-thread-lanes")]
        self.assertEqual(block[:2], ["312 us", "347 us"])
        self.assertTrue(block[3].startswith("faster"), block)
        # the staged sums came after this run
        self.assertTrue(rows[("regression-sums-registers-lanes4-staged", "regression-sums-registers-lanes4")][3]
                        .startswith("not measured"))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_gpu_summary.py SOURCE_DIR MINIAPP_BINARY")
    SOURCE_DIR, MINIAPP = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
