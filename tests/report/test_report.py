#!/usr/bin/env python3
"""Tests of `miniapp report` and `miniapp advise` (ctest label `report`), run on the real binary.

  test_report.py GROUP MINIAPP SOURCE_DIR      GROUP: one of GROUPS below

What is plotted is read back from plot-data.json (the data of every drawn line, bar and point,
as matplotlib held it) and compared with the medians of results.json, computed here from the
JSON independently of the report's own code. The synthetic results have crossovers known in
closed form (synthetic.py)."""

import atexit
import json
import lzma
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "report"))
sys.dont_write_bytecode = True
import synthetic  # noqa: E402
from miniapp_report.names import DEVICE_POLICIES, HOST_POLICY_ORDER  # noqa: E402  (the one list of each)

MINIAPP = ""
SOURCE = ""


_CALIBRATION_CACHE = []


def calibration_cache():
    """One machine-wide calibration cache for this test process, in a temporary directory: the first
    run probes, later runs reuse it, and nothing is written to $HOME."""
    if not _CALIBRATION_CACHE:
        _CALIBRATION_CACHE.append(tempfile.mkdtemp(prefix="report-test-calibration-"))
        atexit.register(shutil.rmtree, _CALIBRATION_CACHE[0], True)
    return _CALIBRATION_CACHE[0]


def run(*args, env=None, timeout=600):
    full_env = dict(os.environ)
    full_env["MINIAPP_CALIBRATION_CACHE"] = calibration_cache()
    full_env.update(env or {})
    return subprocess.run([MINIAPP, *args], capture_output=True, text=True, env=full_env, timeout=timeout)


def fixture(name):
    return os.path.join(SOURCE, "tests", "report", "fixtures", name)


def load_json(path):
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------
# The expectation, from results.json alone


def result_files(directory):
    files = []
    if os.path.isfile(os.path.join(directory, "results.json")):
        files.append(os.path.join(directory, "results.json"))
    sweep = [d for d in os.listdir(directory) if re.fullmatch(r"threads-\d+", d)]
    files += [os.path.join(directory, d, "results.json") for d in sorted(sweep, key=lambda d: int(d[8:]))]
    return files


def measurements(directories):
    """Every measurement with its host-thread count, the first of duplicates kept (as documented)."""
    seen = {}
    for d in directories:
        for path in result_files(d):
            doc = load_json(path)
            threads = doc["provenance"]["host_threads"]
            for m in doc["measurements"]:
                host = m["transfers"]["mirrors_alias"]
                t = (1 if m["space"] == "serial" else threads) if host else None
                key = (m["case"], m["variant"], m["size"], m["precision"], m["space"], t, m["policy"], m["generate"])
                seen.setdefault(key, dict(m, threads=t, host=host))
    return [m for m in seen.values() if not (m["verification"]["checked"] and not m["verification"]["passed"])]


def label(m):
    if m["host"]:
        if m["space"] == "serial":
            return "serial"
        return f"{m['space']} ({m['threads']} thread{'s' if m['threads'] != 1 else ''})"
    return f"{m['space']} {m['policy']}"


def expected_series(ms):
    """(case, precision, generate) -> variant -> series label -> {size: measurement}."""
    out = {}
    chosen = {}
    for m in ms:
        if m["host"]:
            k = (m["case"], m["variant"], m["precision"], m["generate"], m["space"], m["threads"], m["size"])
            if k not in chosen or HOST_POLICY_ORDER.index(m["policy"]) < HOST_POLICY_ORDER.index(chosen[k]["policy"]):
                chosen[k] = m
        elif m["policy"] in DEVICE_POLICIES:
            chosen[(m["case"], m["variant"], m["precision"], m["generate"], m["space"], m["policy"], m["size"])] = m
    for m in chosen.values():
        out.setdefault((m["case"], m["precision"], m["generate"]), {}).setdefault(m["variant"], {}) \
            .setdefault(label(m), {})[m["size"]] = m
    return out


# ---------------------------------------------------------------------------------------------
# Checks shared by the tests


class ReportChecks(unittest.TestCase):
    def make_report(self, directories, *extra):
        out = os.path.join(self.tmp, "report-" + str(len(os.listdir(self.tmp))))
        r = run("report", *directories, "-o", out, *extra)
        self.assertEqual(r.returncode, 0, f"miniapp report failed:\n{r.stdout}\n{r.stderr}")
        self.assertIn("report: " + os.path.join(out, "report.html"), r.stdout)
        self.assertEqual([f for f in os.listdir(out) if ".tmp" in f], [], "temporary files left behind")
        return out, load_json(os.path.join(out, "plot-data.json")), load_json(os.path.join(out, "advice.json"))

    def check_runtime_plots(self, plot_data, directories):
        expected = expected_series(measurements(directories))
        figures = [f for f in plot_data["figures"] if f["kind"] == "runtime"]
        self.assertEqual({(f["case"], f["meta"]["precision"], f["meta"]["generate"]) for f in figures}, set(expected),
                         "one runtime figure per case, precision and input generation")
        compared = 0
        for f in figures:
            variants = expected[(f["case"], f["meta"]["precision"], f["meta"]["generate"])]
            self.assertEqual(sorted(a["title"] for a in f["axes"]), sorted(variants), f["file"])
            for ax in f["axes"]:
                self.assertEqual((ax["xscale"], ax["yscale"]), ("log", "log"), f"{f['file']} is log-log")
                series = {l["label"]: l for l in ax["lines"] if l["role"] == "series"}
                want = variants[ax["title"]]
                self.assertEqual(sorted(series), sorted(want), f"{f['file']} {ax['title']}: series")
                for name, by_size in want.items():
                    sizes = sorted(by_size)
                    self.assertEqual(series[name]["x"], [float(n) for n in sizes], f"{f['file']} {name}: sizes")
                    self.assertEqual(series[name]["y"], [by_size[n]["seconds"]["total"]["median"] for n in sizes],
                                     f"{f['file']} {ax['title']} {name}: plotted times are not the medians")
                    compared += len(sizes)
        return compared

    def check_phase_plots(self, plot_data, directories):
        expected = expected_series(measurements(directories))
        figures = [f for f in plot_data["figures"] if f["kind"] == "phases"]
        self.assertEqual(len(figures), len(expected))
        compared = 0
        for f in figures:
            variants = expected[(f["case"], f["meta"]["precision"], f["meta"]["generate"])]
            for ax in f["axes"]:
                variant = ax["title"].split(",")[0]
                n = f["meta"]["sizes"][variant]
                self.assertEqual(n, max(s for by_size in variants[variant].values() for s in by_size))
                scale = f["meta"]["unit_seconds"][variant]
                names = [t.replace("\n", " ") for t in ax["xticklabels"]]
                want = {name: by_size[n] for name, by_size in variants[variant].items() if n in by_size}
                self.assertEqual(sorted(names), sorted(want), f"{f['file']} {variant}: bars")
                bars = {b["label"]: b for b in ax["bars"]}
                self.assertEqual(sorted(bars), sorted(["host -> device", "compute", "device -> host"]))
                for i, name in enumerate(names):
                    bottom = 0.0
                    for phase, bar in (("to_device", "host -> device"), ("compute", "compute"),
                                       ("to_host", "device -> host")):
                        median = want[name]["seconds"][phase]["median"]
                        self.assertAlmostEqual(bars[bar]["heights"][i] * scale, median, delta=1e-12 * max(median, 1e-30),
                                               msg=f"{f['file']} {variant} {name} {phase}")
                        self.assertAlmostEqual(bars[bar]["bottoms"][i], bottom, delta=1e-9 * max(bottom, 1e-30))
                        bottom += bars[bar]["heights"][i]
                        compared += 1
        return compared

    def check_crossover_marks(self, plot_data, advice):
        for f in plot_data["figures"]:
            if f["kind"] != "runtime":
                continue
            for ax in f["axes"]:
                group = [g for g in advice["groups"] if (g["case"], g["variant"], g["precision"], g["generate"]) ==
                         (f["case"], ax["title"], f["meta"]["precision"], f["meta"]["generate"])]
                self.assertEqual(len(group), 1)
                want = sorted(c["estimate"] for c in group[0]["crossovers"] if c["status"] == "from")
                got = sorted(l["x"][0] for l in ax["lines"] if l["role"] == "crossover")
                self.assertEqual(got, want, f"{f['file']} {ax['title']}: crossover marks")

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix=f"report-test-{type(self).__name__}-")

    def run(self, result=None):
        # The output of a failed test stays for a look; a passing test's is removed.
        result = result or self.defaultTestResult()
        failures = len(result.failures) + len(result.errors)
        super().run(result)
        tmp = getattr(self, "tmp", None)
        if tmp and os.path.isdir(tmp):
            if len(result.failures) + len(result.errors) > failures or os.environ.get("MINIAPP_KEEP_TEST_OUTPUT"):
                print(f"\ntest output kept in {tmp}")
            else:
                shutil.rmtree(tmp, ignore_errors=True)
        return result


# ---------------------------------------------------------------------------------------------


class Advisor(ReportChecks):
    """Synthetic results with crossovers known in closed form."""

    def advise(self, doc, *extra):
        d = os.path.join(self.tmp, "results-" + str(len(os.listdir(self.tmp))))
        synthetic.write(d, doc)
        r = run("advise", d, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"advice: {os.path.join(d, 'advice.json')}", r.stderr)
        return r.stdout, load_json(os.path.join(d, "advice.json"))

    @staticmethod
    def group(advice, case, variant):
        return [g for g in advice["groups"] if g["case"] == case and g["variant"] == variant][0]

    @staticmethod
    def crossing(group, challenger):
        return [c for c in group["crossovers"] if c["challenger"] == challenger][0]

    def test_device_crossovers_found_exactly(self):
        text, advice = self.advise(synthetic.gpu_results())
        g = self.group(advice, "synthetic-crossover", "direct")
        resident = self.crossing(g, "cuda (data resident)")
        self.assertEqual((resident["status"], resident["last_losing"], resident["first_winning"]), ("from", 400, 1000))
        self.assertAlmostEqual(resident["estimate"], synthetic.RESIDENT_CROSSING, delta=1e-9 * synthetic.RESIDENT_CROSSING)
        copying = self.crossing(g, "cuda (copying every iteration)")
        self.assertEqual((copying["status"], copying["last_losing"], copying["first_winning"]), ("from", 1000, 2000))
        self.assertAlmostEqual(copying["estimate"], synthetic.COPY_CROSSING, delta=1e-9 * synthetic.COPY_CROSSING)
        self.assertIn("cuda (data resident) beats the best host space from n = 1000 (loses at n = 400; crossing at "
                      "n ~ 800 (log-log interpolation)", text)
        openmp = self.crossing(g, "openmp (2 threads)")
        self.assertEqual(openmp["status"], "never")
        n = max(synthetic.SIZES)
        self.assertIn(f"at n = {n}, one cuda device (data resident) does the work of "
                      f"{synthetic.serial(n) / synthetic.resident(n):.1f} serial cores at perfect scaling",
                      g["cores_matching_device"][0])
        self.assertIn("openmp (2 threads) never beats serial in the measured range (n = 100..4000)", text)

    def test_prediction_stands_next_to_every_device_measurement(self):
        # A device measured only copying every iteration (as seed 002's small-n sweep on the H100):
        # the prediction lines still show that measurement.
        doc = synthetic.gpu_results()
        doc["measurements"] = [m for m in doc["measurements"] if m["policy"] != "all-resident"]
        text, advice = self.advise(doc, "--assume-device", "H100")
        rows = self.group(advice, "synthetic-crossover", "direct")["prediction"]["rows"]
        self.assertEqual([r["size"] for r in rows], sorted(synthetic.SIZES))
        for r in rows:
            self.assertIsNone(r["measured_resident_s"])
            self.assertAlmostEqual(r["measured_copy_s"], synthetic.copying(r["size"]), delta=1e-12)
        # The transfer arithmetic takes the device's compute rate from the copying runs' compute phase.
        a = self.group(advice, "synthetic-crossover", "direct")["amortisation"]
        n = max(synthetic.SIZES)
        copy_point = [m for m in doc["measurements"] if m["case"] == "synthetic-crossover" and m["space"] == "cuda"
                      and m["size"] == n][0]
        self.assertAlmostEqual(a["device_GFLOPs"], copy_point["work"]["GFLOPs"], delta=1e-9 * a["device_GFLOPs"])
        self.assertEqual(a["device_source"], f"measured on cuda (compute phase of copy-every-iteration) at n = {n}")
        shown = [line for line in text.splitlines() if line.startswith("    n=") and "predicted resident" in line]
        self.assertTrue(shown)
        for line in shown:
            self.assertIn("; measured on the device: copying ", line)
            self.assertNotIn("measured on the device: resident", line)

    def test_measured_gpu_gets_its_profile_and_the_model_check(self):
        # Results measured on a GPU that a profile matches get that profile's prediction without
        # --assume-device, and measured / predicted per size and policy, computed here by hand.
        doc = synthetic.gpu_results()
        doc["provenance"]["gpu"]["name"] = "NVIDIA H100 80GB HBM3"
        text, advice = self.advise(doc)
        profile = load_json(os.path.join(SOURCE, "scripts", "report", "devices.json"))["devices"]["H100"]
        self.assertEqual(advice["assumed_device"]["name"], "NVIDIA H100 SXM5 80 GB")
        self.assertIn("'NVIDIA H100 80GB HBM3'", advice["assumed_device_source"])
        self.assertIn("Predictions for NVIDIA H100 SXM5 80 GB: chosen from the measured GPU's name", text)
        link = advice["link"]["gbps"]
        self.assertEqual(link, synthetic.LINK_GBPS)
        g = self.group(advice, "synthetic-crossover", "direct")
        checks = {(c["policy"], c["size"]): c["measured_over_predicted"] for c in g["prediction"]["model_check"]}
        self.assertEqual(set(checks), {(pol, n) for pol in ("all-resident", "copy-every-iteration")
                                       for n in synthetic.SIZES})
        for n in synthetic.SIZES:
            kernel_bytes = 12.0 * n + 4.0 * n * n
            resident = max(synthetic.flops(n) / (profile["peak_GFLOPs"]["float32"] * 1e9),
                           kernel_bytes / (profile["memory_GBps"] * 1e9)) + profile["launch_latency_us"] * 1e-6
            copying = resident + (12 * n + 4 * n * n) / (link * 1e9)
            self.assertAlmostEqual(checks[("all-resident", n)], synthetic.resident(n) / resident,
                                   delta=1e-9 * checks[("all-resident", n)])
            self.assertAlmostEqual(checks[("copy-every-iteration", n)], synthetic.copying(n) / copying,
                                   delta=1e-9 * checks[("copy-every-iteration", n)])
        ratios = sorted(v for (pol, _), v in checks.items() if pol == "all-resident")
        self.assertIn(f"    model check, measured / predicted: resident {ratios[0]:.3g}x", text)
        # synthetic-always's resident device beats the H100's roofline bound at every size: said so,
        # in its group and in the notes, and kept in advice.json.
        fast = self.group(advice, "synthetic-always", "tiled")["prediction"]["model_check"]
        self.assertTrue(all(c["measured_over_predicted"] < 1 for c in fast if c["policy"] == "all-resident"))
        self.assertIn(f"faster than predicted at {len(synthetic.SIZES)} of {len(synthetic.SIZES)} sizes", text)
        summary = advice["model_check"]["all-resident"]
        self.assertEqual((summary["points"], summary["groups"]), (2 * len(synthetic.SIZES), 2))
        every = ratios + [c["measured_over_predicted"] for c in fast if c["policy"] == "all-resident"]
        self.assertEqual(len(summary["faster_than_predicted"]), sum(1 for v in every if v < 1))
        self.assertEqual(summary["median"], sorted(every)[len(every) // 2])
        self.assertRegex(text, r"the H100 prediction against the device's measurements, data resident: "
                               r"measured/predicted median [0-9.e+-]+x over 12 size\(s\) in 2 group\(s\)")
        # The prediction never enters the measured recommendation.
        recommendation = text.split("Recommendation")[1].split("\n\n")[0]
        self.assertNotIn("H100", recommendation)

    def test_measured_gpu_without_a_profile_and_none(self):
        doc = synthetic.gpu_results()   # "Synthetic GPU": no profile matches it
        text, advice = self.advise(doc)
        self.assertIsNone(advice["assumed_device"])
        self.assertIsNone(advice["model_check"])
        self.assertIn("no published profile matches the measured GPU 'Synthetic GPU'", text)
        self.assertNotIn("PREDICTION", text)
        doc["provenance"]["gpu"]["name"] = "NVIDIA H200"
        text, advice = self.advise(doc)
        self.assertEqual(advice["assumed_device"]["name"], "NVIDIA H200 SXM 141 GB")
        text, advice = self.advise(doc, "--assume-device", "none")
        self.assertIsNone(advice["assumed_device"])
        self.assertNotIn("PREDICTION", text)
        self.assertNotIn("model check", text)
        # An explicit profile wins over the measured GPU's.
        text, advice = self.advise(doc, "--assume-device", "A100")
        self.assertEqual(advice["assumed_device"]["name"], "NVIDIA A100 SXM4 80 GB")
        self.assertEqual(advice["assumed_device_source"], "--assume-device A100")

    def test_a_described_device_is_predicted_from_its_figures(self):
        # The same figures inline and as a file give the same prediction, computed here by hand.
        figures = {"peak64": 1000.0, "peak32": 2000.0, "bandwidth": 500.0, "link": 10.0, "launch": 2.0}
        inline = ",".join(f"{k}={v:g}" for k, v in figures.items()) + ",name=Test GPU"
        profile_path = os.path.join(self.tmp, "test-gpu.json")
        with open(profile_path, "w") as f:
            json.dump({"name": "Test GPU", "peak_GFLOPs": {"float64": 1000, "float32": 2000}, "memory_GBps": 500,
                       "link_GBps": 10, "launch_latency_us": 2}, f)
        rows = {}
        for how in (inline, profile_path):
            text, advice = self.advise(synthetic.host_results(), "--assume-device", how)
            self.assertIn("PREDICTION for Test GPU (not a measurement): roofline at the described 1000 GFLOP/s "
                          "float64 and 500 GB/s, link 10 GB/s, 2", text)
            self.assertEqual(advice["link"]["source"], "described figure for Test GPU (host link, one direction)")
            g = self.group(advice, "synthetic-host", "gemm-tiled")
            for row in g["prediction"]["rows"]:
                n = row["size"]
                kernel_bytes = 12.0 * n + 4.0 * n * n
                resident = max(synthetic.flops(n) / 1e12, kernel_bytes / 500e9) + 2e-6
                self.assertAlmostEqual(row["resident_s"], resident, delta=1e-12 * resident)
                self.assertAlmostEqual(row["copy_every_iteration_s"], resident + kernel_bytes / 10e9,
                                       delta=1e-12 * resident)
            rows[how] = g["prediction"]["rows"]
        self.assertEqual(rows[inline], rows[profile_path])

    def test_cores_matching_a_device_without_a_serial_run(self):
        # Only OpenMP (2 threads) on the host, as the H100 decks ran: the device's share in cores
        # is extrapolated from the OpenMP run at the largest size, and labelled as at most.
        doc = synthetic.gpu_results()
        doc["measurements"] = [m for m in doc["measurements"] if m["space"] != "serial"]
        text, advice = self.advise(doc)
        n = max(synthetic.SIZES)
        g = self.group(advice, "synthetic-crossover", "direct")
        ratio = synthetic.openmp(n) / synthetic.resident(n)
        self.assertEqual(g["cores_matching_device"],
                         [f"at n = {n}, one cuda device (data resident) does the work of at most {2 * ratio:.0f} serial "
                          f"cores, extrapolated: openmp with 2 threads took {ratio:.2g}x as long as the device, and "
                          "below perfect scaling the true figure is smaller (no Serial run measured one core)"])
        self.assertIn(g["cores_matching_device"][0], text)

    def test_cores_matching_a_device_from_a_thread_sweep_without_a_serial_run(self):
        # The GPU run's advise step: OpenMP at 1 and 2 threads (threads-1/, threads-2/), no Serial.
        # Its 1-thread run measures one core, so the figure is measured, not an upper bound.
        base = synthetic.gpu_results()
        d = os.path.join(self.tmp, "sweep")
        two = lambda n: synthetic.serial(n) / 1.8
        for count, host_time in ((1, synthetic.serial), (2, two)):
            doc = json.loads(json.dumps(base))
            doc["provenance"]["host_threads"] = count
            kept = []
            for m in doc["measurements"]:
                if m["space"] == "serial":
                    if m["case"] != "synthetic-crossover":
                        continue
                    m = synthetic.measurement(m["case"], m["workload"], m["variant"], m["size"], m["precision"],
                                              "openmp", "host", host_time(m["size"]), m["work"]["flops"])
                elif m["space"] == "openmp":
                    continue
                kept.append(m)
            doc["measurements"] = kept
            synthetic.write(os.path.join(d, f"threads-{count}"), doc)
        r = run("advise", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        advice = load_json(os.path.join(d, "advice.json"))
        n = max(synthetic.SIZES)
        g = self.group(advice, "synthetic-crossover", "direct")
        ratio = synthetic.serial(n) / synthetic.resident(n)
        self.assertEqual(g["cores_matching_device"],
                         [f"at n = {n}, one cuda device (data resident) does the work of {ratio:.1f} cores at perfect "
                          "scaling (one core measured as openmp with 1 thread); openmp at 2 threads is still "
                          f"{two(n) / synthetic.resident(n):.1f}x slower"])
        self.assertIn(g["cores_matching_device"][0], r.stdout)

    def test_copying_through_pinned_memory_is_predicted_from_the_probes_pinned_link(self):
        # Copies that take 90% of each copying iteration (through pageable mirrors, 12 GB/s), and a
        # probe whose pinned link is 40 GB/s to the device and 50 GB/s back: the prediction keeps
        # the measured rest of the iteration and moves the measured bytes at the pinned rates.
        doc = synthetic.gpu_results()
        to_dev, to_host = 40.0, 50.0
        doc["calibration"] = {"spaces": {"cuda": {"link_GBps": {
            "pageable_to_device": 10.0, "pageable_to_host": 12.0, "pinned_to_device": to_dev, "pinned_to_host": to_host}}}}
        doc["measurements"] = [
            synthetic.measurement(m["case"], m["workload"], m["variant"], m["size"], m["precision"], "cuda",
                                  "copy-every-iteration", synthetic.copying(m["size"]), m["work"]["flops"],
                                  transfer_bytes=(12 * m["size"], 4 * m["size"] ** 2), link_gbps=synthetic.LINK_GBPS,
                                  phases=(0.45, 0.1, 0.45))
            if m["case"] == "synthetic-crossover" and m["policy"] == "copy-every-iteration" else m
            for m in doc["measurements"]]
        text, advice = self.advise(doc)
        g = self.group(advice, "synthetic-crossover", "direct")
        [pp] = g["pinned_copy_prediction"]
        self.assertEqual((pp["space"], pp["pinned_to_device_GBps"], pp["pinned_to_host_GBps"]), ("cuda", to_dev, to_host))
        expected = {n: 0.1 * synthetic.copying(n) + 12 * n / (to_dev * 1e9) + 4 * n * n / (to_host * 1e9)
                    for n in synthetic.SIZES}
        self.assertEqual([r["size"] for r in pp["rows"]], synthetic.SIZES)
        for r in pp["rows"]:
            self.assertAlmostEqual(r["predicted_s"], expected[r["size"]], delta=1e-9 * expected[r["size"]])
            self.assertAlmostEqual(r["measured_copies_s"], 0.9 * synthetic.copying(r["size"]),
                                   delta=1e-9 * r["measured_copies_s"])
        # The best host space is Serial at every size: the pinned copies win from the first size
        # after which they never lose.
        wins = [expected[n] < synthetic.serial(n) for n in synthetic.SIZES]
        first = next(n for i, n in enumerate(synthetic.SIZES) if all(wins[i:]))
        self.assertEqual(first, 400, "the synthetic case is meant to move the crossing from 2000 to 400")
        c = pp["crossover"]
        self.assertEqual((c["status"], c["first_winning"], c["last_losing"]), ("from", 400, 200))
        self.assertEqual(self.crossing(g, "cuda (copying every iteration)")["first_winning"], 2000)
        self.assertIn("PREDICTION, cuda copying every iteration through pinned host memory (not a measurement)", text)
        self.assertIn("40 GB/s to the device and 50 GB/s back; the measured copies went through pageable mirrors, "
                      "probed at 10 / 12 GB/s", text)
        self.assertIn("synthetic-crossover / direct / float32: copying every iteration through pinned host memory "
                      "would beat the best host space from n = 400 (predicted from the probe's pinned link, 40 GB/s "
                      "to the device); measured through the pageable mirrors, only from n = 2000", advice["notes"])
        # Never in the recommendation: it stays the measured one.
        rec = [r for r in advice["recommendations"] if r["case"] == "synthetic-crossover"][0]
        self.assertNotIn("pinned", rec["text"])
        # Measured through pinned mirrors too (copy-every-iteration-pinned): each prediction row
        # carries the measurement, the crossover is a measured one, and the recommendation says
        # where it pays.
        measured_pinned = {n: 1.1 * expected[n] for n in synthetic.SIZES}
        doc["measurements"] += [
            synthetic.measurement("synthetic-crossover", "distance", "direct", n, "float32", "cuda",
                                  "copy-every-iteration-pinned", measured_pinned[n], synthetic.flops(n),
                                  transfer_bytes=(12 * n, 4 * n * n), link_gbps=45.0, phases=(0.05, 0.9, 0.05))
            for n in synthetic.SIZES]
        text, advice = self.advise(doc)
        g = self.group(advice, "synthetic-crossover", "direct")
        [pp] = g["pinned_copy_prediction"]
        for r in pp["rows"]:
            self.assertAlmostEqual(r["measured_pinned_s"], measured_pinned[r["size"]], delta=1e-12)
        wins = [measured_pinned[n] < synthetic.serial(n) for n in synthetic.SIZES]
        first = next(n for i, n in enumerate(synthetic.SIZES) if all(wins[i:]))
        pinned = self.crossing(g, "cuda (copying every iteration, pinned mirrors)")
        self.assertEqual((pinned["status"], pinned["first_winning"]), ("from", first))
        rec = [r for r in advice["recommendations"] if r["case"] == "synthetic-crossover"][0]
        pays = [n for n in synthetic.SIZES if n >= 1000 and measured_pinned[n] < synthetic.serial(n)]
        self.assertIn("; through pinned mirrors copying pays at n = " + ", ".join(map(str, pays)), rec["text"])
        self.assertIn(f"measured through pinned mirrors {measured_pinned[4000] * 1e3:.3g} ms", text)
        # Without the probe's pinned figures, no prediction.
        doc.pop("calibration")
        _, advice = self.advise(doc)
        self.assertEqual(self.group(advice, "synthetic-crossover", "direct")["pinned_copy_prediction"], [])

    def test_always_and_never(self):
        text, advice = self.advise(synthetic.gpu_results())
        g = self.group(advice, "synthetic-always", "tiled")
        self.assertEqual(self.crossing(g, "cuda (data resident)")["status"], "always")
        self.assertEqual(self.crossing(g, "cuda (copying every iteration)")["status"], "never")
        self.assertIn("cuda (copying every iteration) never beats the best host space in the measured range "
                      "(n = 100..4000)", text)

    def test_recommendation_per_size_range(self):
        _, advice = self.advise(synthetic.gpu_results())
        rec = [r for r in advice["recommendations"] if r["case"] == "synthetic-crossover"][0]
        self.assertEqual([(r["from"], r["to"], r["where"]) for r in rec["ranges"]],
                         [(100, 400, "serial"), (1000, 4000, "cuda")])
        self.assertIn("n <= 400: serial, direct; n >= 1000: cuda, direct, data resident (copying every iteration "
                      "also pays at n = 2000, 4000)", rec["text"])

    def test_transfer_amortisation_numbers(self):
        text, advice = self.advise(synthetic.gpu_results())
        a = self.group(advice, "synthetic-crossover", "direct")["amortisation"]
        n = max(synthetic.SIZES)
        host_rate = synthetic.flops(n) / synthetic.serial(n)
        device_rate = synthetic.flops(n) / synthetic.resident(n)
        link = synthetic.LINK_GBPS * 1e9
        k_star = 4 / (link * (1 / host_rate - 1 / device_rate))
        self.assertEqual((a["size"], a["value_bytes"], a["link_GBps"]), (n, 4, synthetic.LINK_GBPS))
        self.assertIn("measured", a["link_source"])
        self.assertAlmostEqual(a["amortising_flops_per_value"], k_star, delta=1e-9 * k_star)
        per_value = synthetic.flops(n) / ((12 * n + 4 * n * n) / 4)
        self.assertAlmostEqual(a["workload_flops_per_value"], per_value, delta=1e-9 * per_value)
        self.assertEqual(a["amortises"], per_value >= k_star)
        self.assertIn(f"copies pay from k* = {k_star:.4g} flops per transferred value", text)

    def test_seed003_worked_example(self):
        from miniapp_report.prediction import amortising_intensity
        # Seed 003: 15 GB/s link, GPU 1 TFLOP/s, CPU 1 GFLOP/s; a float64 value is 8 bytes.
        k = amortising_intensity(8, 15e9, 1e9, 1e12)
        self.assertAlmostEqual(k, 8 / 15 / (1 - 1e-3), places=12)
        self.assertIsNone(amortising_intensity(8, 15e9, 1e12, 1e9), "a slower device never pays")
        text, _ = self.advise(synthetic.gpu_results())
        self.assertIn("copies pay from 0.53 flops per transferred value", text)

    def test_noise_does_not_move_the_crossover(self):
        # OpenMP loses at n = 2000 by 1%: within a 5% spread that is noise, beyond a 0.1% spread it is not.
        _, advice = self.advise(synthetic.host_results(slow_openmp_at=2000, slowdown=1.01, relative_stddev=0.05))
        g = self.group(advice, "synthetic-host", "gemm-tiled")
        c = self.crossing(g, "openmp (2 threads)")
        self.assertEqual((c["status"], c["first_winning"], c["ignored_losses"]), ("from", 400, [2000]))
        self.assertAlmostEqual(c["estimate"], synthetic.HOST_PARALLEL_CROSSING, delta=1e-9 * 300)
        rec = advice["recommendations"][0]
        self.assertEqual([(r["from"], r["to"], r["where"]) for r in rec["ranges"]],
                         [(100, 200, "serial"), (400, 4000, "openmp (2 threads)")])
        _, advice = self.advise(synthetic.host_results(slow_openmp_at=2000, slowdown=1.01, relative_stddev=0.001))
        c = self.crossing(self.group(advice, "synthetic-host", "gemm-tiled"), "openmp (2 threads)")
        self.assertEqual((c["status"], c["last_losing"], c["first_winning"], c["wins_below"]),
                         ("from", 2000, 4000, [400, 1000]))

    def test_host_only_serial_against_openmp_and_prediction(self):
        text, advice = self.advise(synthetic.host_results(), "--assume-device", "H100")
        g = self.group(advice, "synthetic-host", "gemm-tiled")
        c = self.crossing(g, "openmp (2 threads)")
        self.assertEqual((c["status"], c["last_losing"], c["first_winning"]), ("from", 200, 400))
        self.assertAlmostEqual(c["estimate"], synthetic.HOST_PARALLEL_CROSSING, delta=1e-9 * 300)
        self.assertIn("no device space measured", text)
        profile = load_json(os.path.join(SOURCE, "scripts", "report", "devices.json"))["devices"]["H100"]
        self.assertEqual(g["prediction"]["profile"], profile)
        for row in g["prediction"]["rows"]:
            n = row["size"]
            best = min(synthetic.serial(n), synthetic.host_parallel(n))
            kernel_bytes = 12.0 * n + 4.0 * n * n
            resident = max(synthetic.flops(n) / (profile["peak_GFLOPs"]["float64"] * 1e9),
                           kernel_bytes / (profile["memory_GBps"] * 1e9)) + profile["launch_latency_us"] * 1e-6
            self.assertAlmostEqual(row["resident_s"], resident, delta=1e-12 * resident)
            self.assertAlmostEqual(row["copy_every_iteration_s"], resident + kernel_bytes / (profile["link_GBps"] * 1e9),
                                   delta=1e-12 * resident)
            self.assertEqual(row["best_host_s"], best)
        self.assertIn("PREDICTION for NVIDIA H100 SXM5 80 GB (not a measurement)", text)
        recommendation = text.split("Recommendation")[1].split("\n\n")[0]
        self.assertNotIn("H100", recommendation, "a prediction leaked into the measured recommendation")


class BadInput(ReportChecks):
    def expect(self, args, code, message, env=None):
        r = run(*args, env=env)
        self.assertEqual(r.returncode, code, f"miniapp {' '.join(args)}: {r.stdout}{r.stderr}")
        self.assertRegex(r.stderr, message)
        return r

    def results_dir(self, name, content):
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        if content is not None:
            with open(os.path.join(d, "results.json"), "w") as f:
                f.write(content)
        return d

    def test_bad_results_exit_2(self):
        out = os.path.join(self.tmp, "never-written")
        self.expect(["report"], 2, r"no results directory given")
        for sub in ("report", "advise"):
            self.expect([sub, os.path.join(self.tmp, "missing"), "-o", out], 2, r"missing: no such directory")
        # advise runs a deck it is given: a bad one is refused by the deck's own checks, and nothing is advised.
        bad = os.path.join(self.tmp, "bad.yaml")
        with open(bad, "w") as f:
            f.write("cases:\n  - workload: distance\n    sizes: [32]\n    repetitons: 2\n")
        r = self.expect(["advise", bad, "-o", os.path.join(self.tmp, "bad-sweep")], 2,
                        r"bad.yaml:4:5: cases\[0\].repetitons: unknown key")
        self.assertIn("the sweep ended with exit code 2 (bad deck); no advice", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "bad-sweep", "advice.json")))
        # A device the advisor would refuse is refused before the deck runs.
        for device in ("V100", "peak64=1,peak32=1,bandwidth=1"):
            sweep = os.path.join(self.tmp, "refused-sweep")
            r = self.expect(["advise", os.path.join(SOURCE, "input", "quickstart.yaml"), "-o", sweep,
                             "--assume-device", device], 2, r"refused \(above\); nothing was run")
            self.assertRegex(r.stderr, r"unknown device 'V100'|missing link")
            self.assertFalse(os.path.exists(os.path.join(sweep, "results.json")), "the sweep ran")
        empty = self.results_dir("empty", None)
        other = self.results_dir("other", '{"schema": "kokkos-miniapp-results/2", "measurements": [{}]}')
        broken = self.results_dir("broken", '{"schema": "kokkos-miniapp-results/1", ')
        nothing = self.results_dir("nothing", '{"schema": "kokkos-miniapp-results/1", "status": "failed", '
                                              '"measurements": []}')
        packed = self.results_dir("packed", None)
        with open(os.path.join(SOURCE, "tests", "report", "fixtures", "thread-sweep", "threads-1", "results.json"),
                  "rb") as f, lzma.open(os.path.join(packed, "results.json.xz"), "wb") as g:
            g.write(f.read())
        for sub in ("report", "advise"):
            self.expect([sub, empty, "-o", out], 2, r"empty: no results.json in it")
            self.expect([sub, packed, "-o", out], 2, r"packed: its results are kept compressed \(results.json.xz\): "
                                                     r"decompress them first \(xz -dk ")
            self.expect([sub, other, "-o", out], 2,
                        r"schema 'kokkos-miniapp-results/2'; expected 'kokkos-miniapp-results/1'")
            self.expect([sub, broken, "-o", out], 2, r"broken/results.json: not valid JSON \(line")
            self.expect([sub, nothing, "-o", out], 2, r"holds no measurements \(status 'failed'\)")
            self.expect([sub, fixture("host-sweep"), "-o", out, "--assume-device", "V100"], 2,
                        r"unknown device 'V100'; known: A100, H100, H200, MI250X")
            for device, message in (("peak64=9700,bandwidth=2039,link=25", r"missing peak32 \(float32 peak"),
                                    ("peak64=9700,peak32=-1,bandwidth=2039,link=25",
                                     r"peak32 must be a positive number, not '-1'"),
                                    ("peak64=1,peak32=1,bandwidth=1,link=1,colour=red", r"unknown key 'colour'"),
                                    (os.path.join(self.tmp, "missing.json"), r"missing.json: cannot read it as JSON")):
                self.expect([sub, fixture("host-sweep"), "-o", out, "--assume-device", device], 2, message)
            self.expect([sub, fixture("host-sweep"), "--link-GBps", "fast"], 2, r"--link-GBps: 'fast' is not")
            self.expect([sub, fixture("host-sweep"), "--colour"], 2, r"unknown option '--colour'")
        self.assertFalse(os.path.exists(out), "bad input must write nothing")

    def test_one_size_only_exit_2(self):
        d = os.path.join(self.tmp, "one-size")
        synthetic.write(d, synthetic.host_results(sizes=[1000]))
        self.expect(["advise", d], 2, r"every case was measured at one size only \(n = 1000\): a crossover needs a "
                                      r"size sweep")
        self.assertFalse(os.path.exists(os.path.join(d, "advice.json")))

    def test_runtime_errors_exit_3(self):
        no_site = os.path.join(self.tmp, "python-without-site-packages")
        with open(no_site, "w") as f:
            f.write("#!/bin/sh\nexec /usr/bin/python3 -I -S \"$@\"\n")
        os.chmod(no_site, 0o755)
        self.expect(["report", fixture("host-sweep"), "-o", os.path.join(self.tmp, "r")], 3,
                    r"no python3 with matplotlib: tried .*python-without-site-packages",
                    env={"MINIAPP_PYTHON": no_site})
        # The advisor needs only the standard library.
        r = run("advise", fixture("host-sweep"), "-o", os.path.join(self.tmp, "a"), env={"MINIAPP_PYTHON": no_site})
        self.assertEqual(r.returncode, 0, r.stderr)
        a_file = os.path.join(self.tmp, "a-file")
        open(a_file, "w").close()
        self.expect(["report", fixture("host-sweep"), "-o", os.path.join(a_file, "out")], 3, r"cannot write")
        self.expect(["advise", fixture("host-sweep"), "-o", os.path.join(a_file, "out")], 3, r"cannot write")

    def test_help(self):
        for sub in ("report", "advise"):
            r = run(sub, "--help")
            self.assertEqual(r.returncode, 0)
            self.assertIn(f"miniapp {sub} RESULTS_DIR...", r.stdout)
            self.assertIn("exit codes:", r.stdout)
        self.assertIn("miniapp report RESULTS_DIR", run("--help").stdout)


class FixturePlots(ReportChecks):
    """The committed results of a real host run (fixtures/host-sweep: four workloads, size sweeps)."""

    def test_plots_hold_the_medians(self):
        dirs = [fixture("host-sweep")]
        out, plot_data, advice = self.make_report(dirs)
        self.assertGreater(self.check_runtime_plots(plot_data, dirs), 50)
        self.assertGreater(self.check_phase_plots(plot_data, dirs), 20)
        self.check_crossover_marks(plot_data, advice)
        for f in plot_data["figures"]:
            self.assertTrue(open(os.path.join(out, f["file"]), "rb").read(8) == b"\x89PNG\r\n\x1a\n", f["file"])
        workloads = {r["workload"] for r in advice["recommendations"]}
        self.assertEqual(workloads, {"distance", "matrix", "solver", "regression"})
        html = open(os.path.join(out, "report.html")).read()
        self.assertIn("No calibration data in these results", html)
        for case in {m["case"] for m in measurements(dirs)}:
            self.assertIn(f'id="case-{case}"', html)


    def test_a_measured_gpus_model_check_is_in_the_page(self):
        doc = synthetic.gpu_results()
        doc["provenance"]["gpu"]["name"] = "NVIDIA H100 80GB HBM3"
        d = os.path.join(self.tmp, "h100")
        synthetic.write(d, doc)
        out, _, advice = self.make_report([d])
        html = open(os.path.join(out, "report.html")).read()
        self.assertIn("chosen from the measured GPU&#x27;s name", html)
        # One line per group and policy in the prediction column, with the extremes of the ratios.
        for policy, word in (("all-resident", "resident"), ("copy-every-iteration", "copying every iteration")):
            groups = [g for g in advice["groups"] if any(c["policy"] == policy for c in g["prediction"]["model_check"])]
            self.assertEqual(len(groups), 2)
            self.assertEqual(html.count(f"<br>measured / predicted: {word} "), len(groups))  # in the table (the full text has them as well)
            for g in groups:
                lowest = min((c for c in g["prediction"]["model_check"] if c["policy"] == policy),
                             key=lambda c: c["measured_over_predicted"])
                self.assertIn(f"<br>measured / predicted: {word} {lowest['measured_over_predicted']:.3g}x "
                              f"(n = {lowest['size']})..", html)


class ThreadSweep(ReportChecks):
    """The committed thread sweep (fixtures/thread-sweep: threads-1/, threads-2/)."""

    def test_speedup_against_threads(self):
        dirs = [fixture("thread-sweep")]
        _, plot_data, advice = self.make_report(dirs)
        self.check_runtime_plots(plot_data, dirs)
        times = {}
        for m in measurements(dirs):
            if m["space"] == "openmp":
                times.setdefault((m["case"], m["variant"], m["precision"], m["size"]), {})[m["threads"]] = \
                    m["seconds"]["total"]["median"]
        figures = [f for f in plot_data["figures"] if f["kind"] == "threads"]
        self.assertEqual(sorted(f["case"] for f in figures), ["distance-threads", "regression-threads"])
        compared = 0
        for f in figures:
            lines = {l["label"]: l for l in f["axes"][0]["lines"]}
            for s in f["meta"]["series"]:
                t = times[(f["case"], s["variant"], s["precision"], s["size"])]
                self.assertEqual(lines[s["label"]]["x"], [1.0, 2.0])
                self.assertEqual(lines[s["label"]]["y"], [t[1] / t[c] for c in (1, 2)])
                compared += 1
            self.assertEqual(lines["ideal (linear)"]["y"], [1.0, 2.0])
        self.assertEqual(compared, 4, "smallest and largest swept size of each case")
        notes = [n for g in advice["groups"] for n in g["thread_notes"]]
        self.assertTrue(any("speedup over 1 thread(s)" in n for n in notes), notes)


class RealRun(ReportChecks):
    """A real run of the mini-app made here, then its report and advice."""

    def check_schema(self, directory):
        """Every results.json the run wrote matches miniapp/record/results.schema.json."""
        v = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "tests", "record", "validate_results.py"),
                            directory], capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)

    def test_real_run(self):
        results = os.path.join(self.tmp, "results")
        r = run(os.path.join(HERE, "real-run.yaml"), "-o", results, "-q", env={"OMP_PROC_BIND": "false"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_schema(results)
        dirs = [results]
        _, plot_data, _ = self.make_report(dirs)
        self.check_runtime_plots(plot_data, dirs)
        self.check_phase_plots(plot_data, dirs)
        self.check_calibration(results, plot_data)
        a = run("advise", results)
        self.assertEqual(a.returncode, 0, a.stderr)
        advice = load_json(os.path.join(results, "advice.json"))
        self.assertEqual({r["workload"] for r in advice["recommendations"]}, {"distance", "matrix", "solver", "regression"})
        self.check_advice_matches(results, advice, a.stdout)


    def check_advice_matches(self, results, advice, text):
        """The advisor answers for every case of the results, and its best host time per size is the
        fastest host median the run measured."""
        ms = measurements([results])
        for case in {m["case"] for m in ms}:
            self.assertIn(case, text)
        for g in advice["groups"]:
            for n, best in g["best_host"].items():
                fastest = min(m["seconds"]["total"]["median"] for m in ms if m["host"] and m["policy"] == "host" and
                              (m["case"], m["variant"], m["precision"], m["size"]) ==
                              (g["case"], g["variant"], g["precision"], int(n)))
                self.assertEqual(best["seconds"], fastest, f"{g['case']} {g['variant']} n={n}")

    def test_advise_runs_a_deck_then_advises(self):
        out = os.path.join(self.tmp, "advise-deck")
        deck = os.path.join(self.tmp, "two-sizes.yaml")
        with open(deck, "w") as f:
            f.write("cases:\n  - name: tiny-distance\n    workload: distance\n    sizes: [32, 128]\n"
                    "    spaces: [serial, openmp]\n    policies: [host]\n    repetitions: 2\n")
        a = run("advise", deck, "-o", out, env={"OMP_PROC_BIND": "false"})
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertIn("tiny-distance", open(os.path.join(out, "tables.txt")).read(), "the run's tables")
        self.assertEqual(load_json(os.path.join(out, "results.json"))["status"], "complete")
        self.check_schema(out)
        self.check_advice_matches(out, load_json(os.path.join(out, "advice.json")), a.stdout)

    def test_advise_passes_a_signal_on_to_its_sweep(self):
        """`kill <pid of miniapp advise>` (or `timeout`) reaches only the advisor: the sweep it runs
        must still stop, save what finished and end the advisor with 128+15, with no advice."""
        out = os.path.join(self.tmp, "advise-stopped")
        deck = os.path.join(self.tmp, "long.yaml")
        with open(deck, "w") as f:
            f.write("cases:\n  - name: long\n    workload: distance\n    sizes: {from: 200, to: 20000, step: 200}\n"
                    "    spaces: [serial]\n    policies: [host]\n    repetitions: 3\n")
        env = dict(os.environ, MINIAPP_CALIBRATION_CACHE=calibration_cache(), OMP_PROC_BIND="false")
        p = subprocess.Popen([MINIAPP, "advise", deck, "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
        results = os.path.join(out, "results.json")
        deadline = time.monotonic() + 120
        finished = 0
        while finished < 1 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
            try:
                finished = load_json(results)["finished_measurements"]
            except (OSError, ValueError, KeyError):
                pass
        self.assertGreaterEqual(finished, 1, "the sweep never saved a measurement")
        os.kill(p.pid, signal.SIGTERM)
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        self.assertIn("the sweep ended with exit code 143 (stopped by a signal", err)
        doc = load_json(results)
        self.assertEqual(doc["status"], "interrupted")
        self.check_schema(out)
        self.assertGreaterEqual(doc["finished_measurements"], finished)
        self.assertFalse(os.path.exists(os.path.join(out, "advice.json")))

    def test_builtin_sweep(self):
        """`miniapp advise` alone: the compiled-in sweep over all four workloads and host thread counts."""
        out = os.path.join(self.tmp, "advise-sweep")
        a = run("advise", "-o", out, env={"OMP_PROC_BIND": "false"})
        self.assertEqual(a.returncode, 0, a.stderr)
        with open(os.path.join(SOURCE, "input", "advise.yaml")) as f:
            self.assertEqual(open(os.path.join(out, "advise.yaml")).read(), f.read(), "the deck it ran is kept")
        advice = load_json(os.path.join(out, "advice.json"))
        self.assertEqual({r["workload"] for r in advice["recommendations"]}, {"distance", "matrix", "solver", "regression"})
        self.check_advice_matches(out, advice, a.stdout)
        self.check_schema(out)
        counts = sorted(int(d.split("-")[1]) for d in os.listdir(out) if re.fullmatch(r"threads-[0-9]+", d))
        cpus = len(os.sched_getaffinity(0))
        expected = [1 << k for k in range(cpus.bit_length()) if 1 << k < cpus] + [cpus]
        self.assertEqual(counts, expected, "one run per host thread count 1, 2, 4, ... up to the CPUs")
        if len(counts) > 1:
            notes = [n for g in advice["groups"] for n in g["thread_notes"]]
            self.assertTrue(any("speedup over 1 thread(s)" in n for n in notes), notes)

    def check_calibration(self, results, plot_data):
        """The run probed both spaces, placed every measurement under their roofs, and the report drew them."""
        doc = load_json(os.path.join(results, "results.json"))
        cal = doc["calibration"]["spaces"]
        self.assertEqual(sorted(cal), ["openmp", "serial"])
        self.assertEqual(load_json(os.path.join(results, "calibration.json"))["spaces"], cal)
        for space, c in cal.items():
            self.assertGreater(c["bandwidth_GBps"]["triad"], 0.1, space)
            self.assertGreater(c["bandwidth_GBps"]["copy"], 0.1, space)
            self.assertGreater(c["gemm_GFLOPs"]["float64"], 0.1, space)
            self.assertGreater(c["gemm_GFLOPs"]["float32"], 0.1, space)
            self.assertGreater(c["launch_latency_us"], 0, space)
            self.assertIsNone(c["link_GBps"], "host spaces have no link")
        placed = 0
        for m in doc["measurements"]:
            c, w, roof = cal[m["space"]], m["work"], m["roofline"]
            # Recomputed here from the calibration block and the measurement's own work and median.
            intensity = w["flops"] / (w["bytes_read"] + w["bytes_written"])
            bandwidth = max(c["bandwidth_GBps"].values())
            peak = c["gemm_GFLOPs"][m["precision"]]
            bound = min(peak, bandwidth * intensity)
            achieved = w["flops"] / m["seconds"]["compute"]["median"] * 1e-9
            self.assertAlmostEqual(roof["bound_GFLOPs"], bound, delta=1e-9 * bound)
            self.assertAlmostEqual(roof["fraction"], achieved / bound, delta=1e-9 * achieved / bound)
            self.assertEqual(roof["limited_by"], "memory" if bandwidth * intensity < peak else "compute")
            placed += 1
        self.assertEqual(placed, len(doc["measurements"]))
        roofs = {f["meta"]["space"]: f for f in plot_data["figures"] if f["kind"] == "roofline"}
        self.assertEqual(sorted(roofs), ["openmp", "serial"])
        for space, f in roofs.items():
            self.assertEqual(f["meta"]["bandwidth_GBps"], max(cal[space]["bandwidth_GBps"].values()))

    def test_no_calibrate(self):
        results = os.path.join(self.tmp, "uncalibrated")
        r = run(os.path.join(HERE, "real-run.yaml"), "-o", results, "-q", "--no-calibrate", "--case", "real-matrix",
                env={"OMP_PROC_BIND": "false"})
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = load_json(os.path.join(results, "results.json"))
        self.assertIsNone(doc["calibration"])
        self.assertEqual(doc["calibration_skipped"], "--no-calibrate")
        self.assertTrue(all(m["roofline"] is None for m in doc["measurements"]))
        self.assertFalse(os.path.exists(os.path.join(results, "calibration.json")))

    def test_advice_on_a_kernel_times_run_says_its_times_are_a_profiles(self):
        """A --kernel-times run's results (a fence after every kernel) are advised on with a note
        saying so; a plain run's advice has no such note."""
        notes = {}
        for name, extra in (("fenced", ["--kernel-times"]), ("plain", [])):
            results = os.path.join(self.tmp, name)
            r = run(os.path.join(HERE, "real-run.yaml"), "-o", results, "-q", "--no-calibrate", "--case", "real-matrix",
                    *extra, env={"OMP_PROC_BIND": "false"})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(load_json(os.path.join(results, "results.json")).get("kernels_fenced"), bool(extra) or None)
            self.assertEqual(os.path.exists(os.path.join(results, "kernel-times.json")), bool(extra))
            a = run("advise", results)
            self.assertEqual(a.returncode, 0, a.stderr)
            notes[name] = a.stdout
        self.assertIn("with --kernel-times", notes["fenced"])
        self.assertNotIn("with --kernel-times", notes["plain"])


class Roofline(ReportChecks):
    """Synthetic results with a calibration block: a roofline per calibrated space."""

    def test_roofline_from_calibration(self):
        d = os.path.join(self.tmp, "calibrated")
        synthetic.write(d, synthetic.host_results(with_calibration=True))
        out, plot_data, _ = self.make_report([d])
        roofs = [f for f in plot_data["figures"] if f["kind"] == "roofline"]
        self.assertEqual([f["meta"]["space"] for f in roofs], ["serial"])
        ax = roofs[0]["axes"][0]
        cal = synthetic.CALIBRATION["spaces"]["serial"]
        points = sorted(tuple(p) for c in ax["points"] for p in c["offsets"])
        want = sorted((m["work"]["arithmetic_intensity"], m["work"]["GFLOPs"]) for m in load_json(
            os.path.join(d, "results.json"))["measurements"] if m["space"] == "serial")
        self.assertEqual(points, want)
        for line in (l for l in ax["lines"] if l["role"] == "roof"):
            peak = cal["gemm_GFLOPs"]["float32" if "float32" in line["label"] else "float64"]
            for x, y in zip(line["x"], line["y"]):
                self.assertAlmostEqual(y, min(peak, max(cal["bandwidth_GBps"].values()) * x), delta=1e-9 * y)
        self.assertEqual(len([l for l in ax["lines"] if l["role"] == "roof"]), 2)
        self.assertNotIn("No calibration data", open(os.path.join(out, "report.html")).read())


def read_png_pixels(path):
    import matplotlib.image
    return matplotlib.image.imread(path)


class Chromium(ReportChecks):
    """The report opened in headless Chromium (Debian's): a non-blank page that names every case."""

    def chromium(self, *args):
        profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=self.tmp)
        command = [shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                   "--no-first-run", "--disable-background-networking", "--disable-component-update",
                   "--disable-sync", f"--user-data-dir={profile}", *args]
        # Chromium is started here, in its own session, and stopped by its process group if it hangs.
        p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.communicate()
            self.fail(f"chromium did not finish within 120 s: {' '.join(command)}")
        self.assertEqual(p.returncode, 0, err[-2000:])
        return out

    def test_report_in_chromium(self):
        gpu = os.path.join(self.tmp, "gpu")
        synthetic.write(gpu, synthetic.gpu_results())
        dirs = [fixture("host-sweep"), gpu]
        out, _, _ = self.make_report(dirs, "--assume-device", "A100")
        page = os.path.join(out, "report.html")
        html = open(page).read()
        references = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html)
        self.assertTrue(references)
        self.assertEqual([r for r in references if not (r.startswith("data:image/png;base64,") or
                                                        r.startswith("#"))], [], "the page must be self-contained")
        shot = os.path.join(self.tmp, "screenshot.png")
        self.chromium(f"--screenshot={shot}", "--window-size=1280,2000", "file://" + page)
        pixels = read_png_pixels(shot)
        self.assertEqual(pixels.shape[:2], (2000, 1280))
        self.assertGreater(float(pixels[..., :3].std()), 0.05, "the screenshot is blank")
        colours = {tuple(int(255 * v) for v in px[:3]) for px in pixels[::7, ::7].reshape(-1, pixels.shape[2])}
        self.assertGreater(len(colours), 50, "the screenshot shows too few colours to hold text and figures")
        keep = os.environ.get("MINIAPP_REPORT_SCREENSHOT")
        if keep:
            shutil.copyfile(shot, keep)
        dom = self.chromium("--dump-dom", "file://" + page)
        for case in {m["case"] for m in measurements(dirs)}:
            self.assertIn(f"Case {case}", dom)
        self.assertIn("The answer", dom)
        self.assertEqual(dom.count("<img "), html.count("<img "))


GROUPS = {"advisor": Advisor, "bad-input": BadInput, "fixture-plots": FixturePlots, "thread-sweep": ThreadSweep,
          "real-run": RealRun, "roofline": Roofline, "chromium": Chromium}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in GROUPS:
        sys.exit(f"usage: test_report.py {{{','.join(GROUPS)}}} MINIAPP SOURCE_DIR")
    MINIAPP, SOURCE = os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(GROUPS[sys.argv[1]])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
