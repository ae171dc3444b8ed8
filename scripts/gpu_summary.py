#!/usr/bin/env python3
"""Writes the readable summary of a scripts/gpu-run.sh results directory (Python 3, standard
library only).

    scripts/gpu_summary.py RUN_DIR [--output RUN_DIR.md]

RUN_DIR holds run.env (the machine and the spaces compared), steps.tsv (each step's status and
time), build.env, unit-tests.xml (ctest's JUnit XML), decks/<deck>/results.json and
benchmarks/<part>.json (Google Benchmark), kernel-times/kernel-times.json (miniapp --kernel-times on
input/kernel-times.yaml), profile/ (scripts/profile-kernels.sh's Nsight Compute pages, read by
ncu_profile.py). Any of them may be missing or cut short (a step that ran out of time): the
summary says so and goes on with the rest.

The summary: the machine and build, the steps, the unit tests, seed 000's copy table, per deck
the device space against the host space (speedup, crossover sizes of sweeps, device bandwidth as
a share of the device's measured stream bandwidth: its calibration, else the copy benchmark), the
benchmarks, issue 27's targets as the run measured them (issue_targets.py), each prepared form
against what it is measured against (prepared_forms.py), and where each compute phase's time
went, kernel by kernel.
results.json is read through scripts/report/miniapp_report (results.py, the project's one Python
reader of it) and crossovers are located by the advisor's rule (crossover.py); both are standard
library only, as this script must be: it runs on GPU nodes where matplotlib may be missing.
Exit codes: 0 written; 2 RUN_DIR is not a run directory (no run.env).
"""

import argparse
import json
import math
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # ncu_profile.py, also when run by runpy
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
sys.dont_write_bytecode = True  # nothing written into the source tree or the bundle's copy of it

from miniapp_report import results, stored  # noqa: E402
from miniapp_report.crossover import Crossover, crossover  # noqa: E402
from miniapp_report.names import Policy, Space  # noqa: E402
import issue_targets  # noqa: E402
import prepared_forms  # noqa: E402
import ncu_profile  # noqa: E402

SEED000_DECK = "matrix-seed000-power"
# Seed 000's own table (NREL, H100 node, float32 x ** y on (3, 1e9), 10 loops), for comparison.
SEED000_REFERENCE = ("The seed's own table (H100 node, 3 x 10^9, 10 calls): 39.9 s numpy on the CPU, "
                     "55.7 s copying every call, 0.80 s with the inputs pre-copied, 0.0016 s all resident.")
# Seed 000's table order: no copies, then from the most copying to the least.
SEED000_POLICY_ORDER = [Policy.HOST, Policy.COPY_EVERY_ITERATION, Policy.COPY_EVERY_ITERATION_PINNED,
                        Policy.INPUTS_RESIDENT, Policy.ALL_RESIDENT]
SWEEP_ROWS = 8  # a group with more sizes than this is shortened to its ends and the sizes around its crossover


def read_steps(path):
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    header, rows = lines[0], lines[1:]
    return [dict(zip(header, r + [""] * (len(header) - len(r)))) for r in rows]


def read_json(path, read=None):
    """(data, None) or (None, why): a JSON file (or its .xz, in a compacted directory), or what
    read(path) makes of it where given (stored.read_benchmarks)."""
    try:
        if read is not None:
            return read(path), None
        with stored.open_text(path) as f:
            return json.load(f), None
    except FileNotFoundError:
        return None, "missing"
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        return None, f"incomplete or invalid JSON ({e.msg if hasattr(e, 'msg') else e})"


def fmt_time(seconds):
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    if seconds == 0:
        return "0"
    if seconds >= 100:
        return f"{seconds:.0f}"
    if seconds >= 0.01:
        return f"{seconds:.3f}"
    return f"{seconds:.2e}"


def fmt_ratio(x, digits=2):
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.{digits}f}x" if x < 100 else f"{x:.0f}x"


def fmt_rate(x):
    return "-" if x is None or not math.isfinite(x) else f"{x:.1f}"


def verified(p):
    """None (not checked), True or False."""
    return p.passed if p.checked else None


def known(value):
    return "?" if value is None else value


class Run:
    def __init__(self, directory):
        self.dir = directory
        self.env = stored.read_env(os.path.join(directory, "run.env"))
        self.build = stored.read_env(os.path.join(directory, "build.env"))
        self.steps = read_steps(os.path.join(directory, "steps.tsv"))
        self.device = self.env.get("device_space", Space.CUDA)
        self.host = self.env.get("host_space", Space.OPENMP)
        self.decks = {}        # deck name -> (results.Source, [results.Point]) of its results.json
        self.deck_problems = {}  # deck name -> why it has no usable results
        decks_dir = os.path.join(directory, "decks")
        if os.path.isdir(decks_dir):
            for name in sorted(os.listdir(decks_dir)):
                path = os.path.join(decks_dir, name, "results.json")
                if not stored.find(path):
                    self.deck_problems[name] = "missing"
                    continue
                try:
                    self.decks[name] = results.read_file(path)
                except results.InputError as e:
                    self.deck_problems[name] = e.reason
        self.benchmarks = []     # (part, benchmark entry)
        self.benchmark_problems = {}
        bench_dir = os.path.join(directory, "benchmarks")
        if os.path.isdir(bench_dir):
            for path in stored.matching(os.path.join(bench_dir, "*.json")):  # a part kept both ways: once
                name = os.path.basename(path)
                read, why = read_json(path, stored.read_benchmarks)
                if read is None:
                    self.benchmark_problems[name] = why
                    continue
                data, stopped = read
                entries = data.get("benchmarks", [])
                if stopped:
                    finished = len({b.get("run_name", b.get("name")) for b in entries})
                    self.benchmark_problems[name] = (f"stopped before it finished; the {finished} benchmark(s) it "
                                                     "finished first are kept")
                for b in entries:
                    self.benchmarks.append((name[:-5], b))
        self.copy_GBps = {space: self.benchmark_rate("copy", space) for space in (self.device, self.host)}
        # The calibration probe's stream bandwidth per space (best of copy, triad and the vendor's
        # device-to-device copy through Kokkos::deep_copy), from the first
        # deck that carries one: arrays of 512 MiB on a device, where the copy benchmark's 16M floats
        # partly fit a large L2.
        self.calibrated = {}  # space -> (its results.Calibration, deck)
        for name, (source, _) in sorted(self.decks.items()):
            for space, cal in source.calibration.items():
                if cal.stream_GBps and space not in self.calibrated:
                    self.calibrated[space] = (cal, name)

    def benchmark_rate(self, prefix, space):
        """GB/s of the median of benchmark prefix/<precision>/space (or of its only run)."""
        best = None
        for _, b in self.benchmarks:
            name = b.get("run_name", b.get("name", ""))
            parts = name.split("/")
            if len(parts) < 3 or parts[0] != prefix or parts[2] != space:
                continue
            if not issue_targets.is_median(b):
                continue
            rate = b.get("GB/s")
            if rate is not None:
                best = rate / 1e9
        return best


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def section_machine(run):
    e, b = run.env, run.build
    rows = []
    if e.get("backend") == "cuda":
        gpu = e.get("device_name", "unknown")
        details = [f"compute capability {e['compute_capability']}" if e.get("compute_capability") else "",
                   e.get("gpu_memory", ""), f"driver {e['driver']}" if e.get("driver") else "",
                   f"PCI {e['pci_bus_id']}" if e.get("pci_bus_id") else ""]
        rows.append(("GPU", gpu + " (" + ", ".join(d for d in details if d) + ")"))
    else:
        rows.append(("GPU", f"none: a host rehearsal ({run.device} stands in for the device space)"))
    if e.get("nvcc"):
        rows.append(("CUDA", "nvcc " + e["nvcc"]))
    rows.append(("CPU", f"{e.get('cpu_model', 'unknown')}, {e.get('cpus', '?')} CPUs; {e.get('omp', '')}"))
    if b:
        commit = b.get("PROJECT_COMMIT", "unknown")
        packed = b.get("BUNDLE_PROJECT_COMMIT")
        if packed and packed != commit:
            # The sources built are the checkout the scripts ran from; the bundle packed another
            # commit's copy (both named, so that a stale bundle or a stale checkout shows).
            commit += f" (the bundle packed {packed})"
        rows.append(("Build", f"{b.get('KOKKOS_DESCRIPTION', '')}; commit {commit}; "
                              f"{b.get('BUILD_SECONDS', '?')} s with {b.get('JOBS', '?')} jobs"))
    rows.append(("Compared", f"device space `{run.device}` against host space `{run.host}`"))
    forms = {"workloads": "; benchmarks: the workloads' own kernels and their bounds only (`--benchmark-forms workloads`)",
             "open": "; benchmarks: the workloads' own kernels, their bounds and the prepared forms still open "
                     "(`--benchmark-forms open`)"}.get(e.get("benchmark_forms"), "")
    rows.append(("Run", f"{e.get('started', '?')} to {e.get('finished', '?')}, budget {e.get('budget_seconds', '?')} s"
                        + forms))
    return "## Machine and build\n\n" + md_table(["", ""], rows)


def section_steps(run):
    if not run.steps:
        return "## Steps\n\nNo steps.tsv: the run stopped before its first step."
    rows = [(s["step"], s["status"], s["seconds"], s.get("detail", "")) for s in run.steps]
    bad = [s["step"] for s in run.steps if s["status"] not in ("ok", "skipped")]
    head = "Every step finished and passed." if not bad else f"Not passed: {', '.join(bad)}."
    return "## Steps\n\n" + head + "\n\n" + md_table(["step", "status", "seconds", "detail"], rows)


def section_unit_tests(run):
    path = os.path.join(run.dir, "unit-tests.xml")
    if not os.path.isfile(path):
        step = next((s for s in run.steps if s["step"] == "unit-tests"), None)
        status = step["status"] if step else "not run"
        return f"## Unit tests\n\nNo JUnit XML (step: {status}); see logs/unit-tests.log."
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return f"## Unit tests\n\nunit-tests.xml cannot be read ({e})."
    rows = []
    for case in root.iter("testcase"):
        status = case.get("status", "")
        if case.find("failure") is not None or status == "fail":
            result = "failed"
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            result = "skipped"
        else:
            result = "passed"
        rows.append((case.get("name", "?"), result, fmt_time(float(case.get("time", "nan")))))
    failed = sum(1 for r in rows if r[1] == "failed")
    head = f"{len(rows) - failed} of {len(rows)} passed."
    return "## Unit tests\n\n" + head + "\n\n" + md_table(["test", "result", "seconds"], rows)


def seed000_table(run, deck):
    _, ms = run.decks[deck]
    if not ms:
        return f"`{deck}`: no finished measurement."
    base = next((p for p in ms if p.space == run.host and p.policy == Policy.HOST), None)
    base_total = base.total if base else None
    rows = []
    order = {p: i for i, p in enumerate(SEED000_POLICY_ORDER)}
    for p in sorted(ms, key=lambda p: (p.space != run.host, order.get(p.policy, 9))):
        speedup = base_total / p.total if base_total and p.total else None
        rows.append((p.space, p.policy, fmt_time(p.to_device), fmt_time(p.compute), fmt_time(p.to_host),
                     fmt_time(p.total), fmt_time(p.total * p.repetitions),
                     fmt_ratio(speedup), {True: "yes", False: "**no**", None: "not checked"}[verified(p)]))
    m0 = ms[0]
    rows_of = m0.parameters.get("rows")
    size = m0.size
    reps = m0.repetitions
    title = (f"`{deck}`: {m0.precision} x ** y, size {size} columns"
             + (f" x {rows_of} rows" if rows_of else "") + f", {reps} repetitions, median per call (s)")
    return title + "\n\n" + md_table(
        ["space", "policy", "to device", "compute", "to host", "total", f"{reps} calls", f"vs {run.host} host", "verified"],
        rows)


def section_seed000(run):
    decks = [d for d in run.decks if d.startswith(SEED000_DECK)]
    if not decks:
        why = "; ".join(f"{d}: {w}" for d, w in run.deck_problems.items() if d.startswith(SEED000_DECK))
        return "## Seed 000: copy policies\n\nNo results" + (f" ({why})." if why else ".")
    parts = [seed000_table(run, d) for d in decks]
    return "## Seed 000: copy policies\n\n" + SEED000_REFERENCE + "\n\n" + "\n\n".join(parts)


def group_key(p):
    return (p.case, p.variant, p.precision, p.generate)


def deck_rows(run, points):
    """Per (case, variant, precision, generate), per size: the host space's time (its host policy)
    against the device space's fastest policy, with the larger spread of the two medians."""
    cells = {}
    for p in points:
        cells.setdefault(group_key(p) + (p.size,), []).append(p)
    groups = {}
    for key, ps in cells.items():
        host = [p for p in ps if p.space == run.host]
        dev = [p for p in ps if p.space == run.device]
        host_p = next((p for p in host if p.policy == Policy.HOST), None) or \
            (min(host, key=lambda p: p.total) if host else None)
        dev_p = min(dev, key=lambda p: p.total) if dev else None
        ht = host_p.total if host_p else None
        dt = dev_p.total if dev_p else None
        row = {"size": key[-1], "host": ht, "device": dt, "policy": dev_p.policy if dev_p else None,
               "speedup": ht / dt if ht and dt else None,
               "spread": max(host_p.total_stddev, dev_p.total_stddev) if host_p and dev_p else 0.0,
               "GBps": dev_p.gbps if dev_p else None,
               "verified": all(verified(p) is not False for p in ps),
               "failed": [p for p in ps if verified(p) is False]}
        groups.setdefault(key[:-1], []).append(row)
    for rows in groups.values():
        rows.sort(key=lambda r: r["size"])
    return groups


def device_crossover(rows, device="device", host="host") -> Crossover:
    """The advisor's crossover (miniapp_report/crossover.py) of the device's fastest policy over the
    host space, at the sizes where both were measured."""
    both = [r for r in rows if r["speedup"] is not None]
    return crossover(f"`{device}` (its fastest policy per size)", {r["size"]: r["device"] for r in both},
                     f"`{host}` ({Policy.HOST} policy)", {r["size"]: r["host"] for r in both},
                     {r["size"]: r["spread"] for r in both})


def section_decks(run):
    if run.device in run.calibrated:
        cal, deck = run.calibrated[run.device]
        copy, size = cal.stream_GBps, cal.stream_bytes_per_array
        source = (f"{copy:.1f} GB/s (the calibration probe of `{run.device}`: its {cal.stream_source}, the best of "
                  + ("stream copy, triad and the vendor's copy" if "vendor_copy" in cal.stream_rates
                     else "stream copy and triad")
                  + (f" on {size / 2**20:.0f} MiB arrays" if isinstance(size, (int, float)) else "") + f", deck {deck})")
    else:
        copy = run.copy_GBps.get(run.device)
        source = f"{copy:.1f} GB/s (benchmark copy/float32/{run.device})" if copy else ""
    lines = ["## Device against host, per deck", "",
             f"Each row: the host space `{run.host}` (its `host` policy) against the device space `{run.device}` "
             "under its fastest mirror policy, median total time per call; speedup = host / device. "
             + (f"Device bandwidth (the kernel's bytes over its compute time) as a share of the device's measured "
                f"bandwidth, {source}." if copy else
                "No calibration and no device copy benchmark finished, so no bandwidth shares.")]
    for deck in sorted(run.decks):
        source, points = run.decks[deck]
        done = f"{known(source.finished_measurements)} of {known(source.planned_measurements)} measurements"
        lines += ["", f"### {deck}", "", f"Status: {source.status}, {done}."]
        groups = deck_rows(run, points)
        if not groups:
            continue
        table = []
        notes = []
        for key, rows in groups.items():
            case, variant, precision, generate = key
            shown = rows
            cross = device_crossover(rows, run.device, run.host)
            around = [n for n in (cross.last_losing, cross.first_winning) if n is not None]
            if len(rows) > SWEEP_ROWS:
                keep = {0, len(rows) - 1} | {i for i, r in enumerate(rows) if r["size"] in around}
                shown = [rows[i] for i in sorted(keep)]
                notes.append(f"`{case}` {variant} {precision}: {len(rows)} sizes, shown: the ends"
                             + (" and the sizes either side of the crossover." if around else "."))
            if len(cross.sizes) > 1:
                notes.append(f"`{case}` {variant} {precision}: {cross.text()}.")
            for r in shown:
                share = (r["GBps"] / copy * 100) if copy and r["GBps"] else None
                table.append((case, variant, precision, generate, r["size"], fmt_time(r["host"]), r["policy"] or "-",
                              fmt_time(r["device"]), fmt_ratio(r["speedup"]), fmt_rate(r["GBps"]),
                              "-" if share is None else f"{share:.0f}%", "yes" if r["verified"] else "**no**"))
        lines += ["", md_table(["case", "variant", "precision", "generate", "size", f"{run.host} (s)",
                                f"{run.device} policy", f"{run.device} (s)", "speedup", "GB/s", "% of bandwidth",
                                "verified"], table)]
        if notes:
            lines += [""] + [f"- {n}" for n in notes]
    for deck, why in sorted(run.deck_problems.items()):
        lines += ["", f"### {deck}", "", f"No results: results.json {why}."]
    return "\n".join(lines)


def section_benchmarks(run):
    lines = ["## Benchmarks", ""]
    rows = []
    errored = set()
    solved_again = {}  # dense-blocked's resident leaves given up (benchmarks/bench_solver.cpp)
    for part, b in run.benchmarks:
        if not issue_targets.is_median(b):
            continue
        name = b.get("run_name", b.get("name", "?"))
        if b.get("solved_again"):
            solved_again[name] = max(solved_again.get(name, 0), b["solved_again"])
        if b.get("error_occurred"):  # one entry per repetition, no aggregates: shown once, with its reason
            if name not in errored:
                errored.add(name)
                rows.append((name, f"error: {b.get('error_message') or 'no message'}", "-", "-", "-"))
            continue
        space = name.split("/")[2] if name.count("/") >= 2 else ""
        gbps = b["GB/s"] / 1e9 if b.get("GB/s") is not None else None
        gflops = b["GFLOP/s"] / 1e9 if b.get("GFLOP/s") is not None else None
        copy = run.copy_GBps.get(space)
        share = f"{gbps / copy * 100:.0f}%" if gbps and copy else "-"
        unit = b.get("time_unit", "ns")
        rows.append((name, f"{b.get('real_time', float('nan')):.3g} {unit}", fmt_rate(gbps), fmt_rate(gflops), share))
    if rows:
        lines += ["Median of the repetitions; bandwidth shares against the copy benchmark of the same space.", "",
                  md_table(["benchmark", "time", "GB/s", "GFLOP/s", "% of copy"], rows)]
    else:
        lines.append("No benchmark results.")
    for name, why in sorted(run.benchmark_problems.items()):
        lines.append(f"\n- benchmarks/{name}: {why}.")
    for name, count in sorted(solved_again.items()):
        lines.append(f"\n- {name}: {count:g} system(s) solved again: a resident leaf's teams were not all running "
                     "(a GPU shared with others?), so its time includes solving without them.")
    return "\n".join(lines)


def section_verification(run):
    total = failed = unchecked = 0
    failures = []
    for deck, (_, points) in sorted(run.decks.items()):
        for p in points:
            total += 1
            ok = verified(p)
            if ok is None:
                unchecked += 1
            elif not ok:
                failed += 1
                failures.append(f"- {deck}: {p.case} {p.variant} {p.precision} size "
                                f"{p.size} on {p.space} ({p.policy}): {p.verification_detail}")
    head = (f"{total} measurements: {total - failed - unchecked} verified, {failed} failed"
            + (f", {unchecked} not checked" if unchecked else "") + ".")
    return "## Verification\n\n" + head + ("\n\n" + "\n".join(failures) if failures else "")


COARSE_WINDOW_S = 1.0


def section_energy(run):
    """The GPU's energy per device measurement (results.json gpu_energy, read through NVML)."""
    rows, reasons, missing, null, steps = [], {}, 0, 0, []
    for deck, (_, points) in sorted(run.decks.items()):
        for p in points:
            if p.space != run.device:
                continue
            if not p.gpu_energy_recorded:
                missing += 1
                continue
            e = p.gpu_energy
            if e is None:
                null += 1
                continue
            if e.unavailable:
                reasons[e.unavailable] = reasons.get(e.unavailable, 0) + 1
            if e.energy_joules is None and e.mean_power_watts is None and e.gpu_utilization_percent is None:
                continue
            num = lambda v, f: "-" if v is None else format(v, f)
            seconds = e.seconds or 0.0
            joules = e.energy_joules
            if joules is not None and joules > 0 and seconds < 0.1:
                steps.append(joules)
            # Under COARSE_WINDOW_S one update of the counter is a large share of the reading.
            coarse = lambda text: f"({text})" if seconds < COARSE_WINDOW_S and text != "-" else text
            rows.append([deck, p.case, p.variant, p.precision, str(p.size), p.policy, coarse(num(joules, ".4g")),
                         coarse(num(e.mean_power_watts, ".4g")), num(e.gpu_utilization_percent, ".3g"),
                         num(e.seconds, ".3g"), "-" if e.samples is None else str(e.samples)])
    lines = ["## GPU energy", "",
             f"Per `{run.device}` measurement, over its timed repetitions (warm-up excluded, per-iteration copies "
             "included), from NVML: the energy counter's difference, the mean power and the mean utilisation "
             "(the share of time a kernel ran)."]
    if rows:
        step = f" Here the smallest nonzero reading over a window under 0.1 s was {min(steps):.4g} J." if steps else ""
        lines += ["", f"In parentheses: readings over windows shorter than {COARSE_WINDOW_S:g} s. The counter "
                      "advances in steps, one per update period of up to 100 ms, so a short window reads 0 or a "
                      f"whole step: read those as order of magnitude only.{step}"]
        lines += ["", md_table(["deck", "case", "variant", "precision", "size", "policy", "J", "W", "util %",
                                "seconds", "samples"], rows)]
    else:
        lines += ["", "No energy was recorded."]
    for why, count in sorted(reasons.items()):
        lines.append(f"- {count} measurement(s) with null fields: {why}")
    if null:
        lines.append(f"- {null} measurement(s) with gpu_energy null: recorded on GPU spaces only (a host "
                     "rehearsal's stand-in device has none)")
    if missing:
        lines.append(f"- {missing} measurement(s) without gpu_energy (results written by a binary that does not "
                     "record it)")
    return "\n".join(lines)


def section_advice(run, directory):
    """`miniapp advise` on the advisor's sweep (advise.txt): its recommendation lines, how many
    host cores match the device, and how the published profile's prediction compared with the
    device's measurements (the model check), as it printed them."""
    path = os.path.join(directory, "advise.txt")
    lines = ["## The advisor's answer", ""]
    if not stored.find(path):
        return "\n".join(lines + ["No advise.txt: the advisor's sweep did not run (see the steps above)."])
    with stored.open_text(path, errors="replace") as f:
        text = f.read().splitlines()
    keep, in_recommendation = [], False
    for line in text:
        if line.startswith("Recommendation"):
            in_recommendation = True
        elif in_recommendation and not line.startswith("  "):
            in_recommendation = False
        if (in_recommendation or "does the work of" in line or line.startswith("== ") or line.startswith("Predictions for")
                or "prediction against the device's measurements" in line
                or "through pinned host memory would beat" in line):
            keep.append(line)
    lines += [f"From `{os.path.basename(os.path.normpath(directory))}/advise.txt` (the whole text is there):", "",
              "```", *keep, "```"]
    return "\n".join(lines)


def section_peers(directory):
    """benchmarks/peers.py's tables as it wrote them (peers.md): NumPy beside the host space, the
    GPU libraries beside the device space, and why each library or form that did not run did not."""
    path = os.path.join(directory, "peers.md")
    head = "## Peers: the seeds' Python forms in the same run"
    if not os.path.isfile(path):
        return f"{head}\n\nNo peers.md: the peers step did not run through (see the steps above)."
    with open(path, errors="replace") as f:
        text = f.read().strip()
    return f"{head}\n\nFrom `{os.path.basename(os.path.normpath(directory))}/peers.md` (peers.json holds the same):\n\n{text}"


KERNEL_TIMES_SHOWN = 4  # kernels and inner regions named per compute phase


def section_kernel_times(run):
    """Each compute phase of kernel-times/kernel-times.json: its time per entry, its largest
    kernels and inner regions (vendor calls) with their shares, and the share outside all of them."""
    path = os.path.join(run.dir, "kernel-times", "kernel-times.json")
    head = "## Where the time goes (`--kernel-times`, fenced after every kernel)"
    data, why = read_json(path)
    if data is None:
        return f"{head}\n\nNo kernel times: {why} (see the kernel-times step above)."
    regions = data.get("regions", [])
    rows = []
    for r in regions:
        p = r.get("path", [])
        if len(p) != 2 or not p[1].endswith("/compute") or not r.get("entries"):
            continue
        items = [(k["name"], k["seconds"], k["launches"]) for k in r.get("kernels", [])]
        items += [("region " + q["path"][2], q["seconds"], q["entries"]) for q in regions
                  if len(q.get("path", [])) == 3 and q["path"][:2] == p]
        items.sort(key=lambda item: -item[1])
        total = r.get("seconds") or 0
        share = (lambda x: f"{100 * x / total:.0f}%") if total > 0 else (lambda x: "?")
        named = "; ".join(f"{name} {share(sec)} ({count}x)" for name, sec, count in items[:KERNEL_TIMES_SHOWN])
        outside = total - sum(sec for _, sec, _ in items)
        rows.append((p[0], p[1].rsplit("/", 2)[1], fmt_time(total / r["entries"]), named or "-",
                     share(max(outside, 0.0))))
    if not rows:
        return f"{head}\n\nkernel-times.json holds no compute phase."
    return (f"{head}\n\nFrom `kernel-times/kernel-times.json` (every phase there). A kernel's time runs from its "
            "launch to the fence after it, so launch-bound phases take longer than in the decks above.\n\n"
            + md_table(["measurement", "variant", "compute s per entry", "largest kernels and regions", "outside"], rows))


def summarize(directory):
    run = Run(directory)
    e = run.env
    what = "GPU run" if e.get("backend", "cuda") == "cuda" else "host rehearsal of the GPU run"
    title = f"# {e.get('device_name', 'unknown device')}: {what}, {e.get('started', '?')[:10]}"
    intro = (f"Written by scripts/gpu_summary.py from `{os.path.basename(os.path.normpath(directory))}/` "
             "(raw results: results.json per deck, benchmark JSON, JUnit XML, logs).")
    parts = [title, intro, section_machine(run), section_steps(run), section_unit_tests(run),
             section_seed000(run), section_decks(run), section_energy(run), section_advice(run, directory),
             section_peers(directory), section_benchmarks(run),
             issue_targets.section(run.benchmarks, run.device, run.calibrated.get(run.device, (None,))[0], md_table),
             prepared_forms.section(run.benchmarks, run.device, md_table),
             section_kernel_times(run),
             ncu_profile.section(os.path.join(directory, "profile")), section_verification(run)]
    return "\n\n".join(parts) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--output", help="default: RUN_DIR.md")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.run_dir, "run.env")):
        print(f"gpu_summary: {args.run_dir} is not a gpu-run.sh results directory (no run.env)", file=sys.stderr)
        return 2
    text = summarize(args.run_dir)
    output = args.output or os.path.normpath(args.run_dir) + ".md"
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, output)
    print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
