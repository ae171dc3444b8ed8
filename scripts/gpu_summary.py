#!/usr/bin/env python3
"""Writes the readable summary of a scripts/gpu-run.sh results directory (Python 3, standard
library only).

    scripts/gpu_summary.py RUN_DIR [--output RUN_DIR.md]

RUN_DIR holds run.env (the machine and the spaces compared), steps.tsv (each step's status and
time), build.env, unit-tests.xml (ctest's JUnit XML), decks/<deck>/results.json and
benchmarks/<part>.json (Google Benchmark). Any of them may be missing or cut short (a step that
ran out of time): the summary says so and goes on with the rest.

The summary: the machine and build, the steps, the unit tests, seed 000's copy table, per deck
the device space against the host space (speedup, crossover sizes of sweeps, device bandwidth as
a share of the device's measured stream bandwidth: its calibration, else the copy benchmark) and
the benchmarks.
Exit codes: 0 written; 2 RUN_DIR is not a run directory (no run.env).
"""

import argparse
import json
import math
import os
import sys
import xml.etree.ElementTree as ET

SEED000_DECK = "matrix-seed000-power"
# Seed 000's own table (NREL, H100 node, float32 x ** y on (3, 1e9), 10 loops), for comparison.
SEED000_REFERENCE = ("The seed's own table (H100 node, 3 x 10^9, 10 calls): 39.9 s numpy on the CPU, "
                     "55.7 s copying every call, 0.80 s with the inputs pre-copied, 0.0016 s all resident.")
DEVICE_POLICIES = ["copy-every-iteration", "copy-every-iteration-pinned", "inputs-resident", "all-resident"]
SWEEP_ROWS = 8  # a group with more sizes than this is shortened to its ends and crossovers


def read_env(path):
    values = {}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if "=" in line and not line.startswith("#"):
                    key, value = line.split("=", 1)
                    values[key] = value.strip('"')
    return values


def read_steps(path):
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    header, rows = lines[0], lines[1:]
    return [dict(zip(header, r + [""] * (len(header) - len(r)))) for r in rows]


def read_json(path):
    """(data, None) or (None, why)."""
    try:
        with open(path, encoding="utf-8") as f:
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


def median(m, phase):
    return (((m.get("seconds") or {}).get(phase) or {}).get("median"))


def verified(m):
    v = m.get("verification") or {}
    if not v.get("checked", False):
        return None
    return bool(v.get("passed"))


class Run:
    def __init__(self, directory):
        self.dir = directory
        self.env = read_env(os.path.join(directory, "run.env"))
        self.build = read_env(os.path.join(directory, "build.env"))
        self.steps = read_steps(os.path.join(directory, "steps.tsv"))
        self.device = self.env.get("device_space", "cuda")
        self.host = self.env.get("host_space", "openmp")
        self.decks = {}        # deck name -> results.json
        self.deck_problems = {}  # deck name -> why it has no usable results
        decks_dir = os.path.join(directory, "decks")
        if os.path.isdir(decks_dir):
            for name in sorted(os.listdir(decks_dir)):
                data, why = read_json(os.path.join(decks_dir, name, "results.json"))
                if data is None:
                    self.deck_problems[name] = why
                else:
                    self.decks[name] = data
        self.benchmarks = []     # (part, benchmark entry)
        self.benchmark_problems = {}
        bench_dir = os.path.join(directory, "benchmarks")
        if os.path.isdir(bench_dir):
            for name in sorted(os.listdir(bench_dir)):
                if not name.endswith(".json"):
                    continue
                data, why = read_json(os.path.join(bench_dir, name))
                if data is None:
                    self.benchmark_problems[name] = why
                    continue
                for b in data.get("benchmarks", []):
                    self.benchmarks.append((name[:-5], b))
        self.copy_GBps = {space: self.benchmark_rate("copy", space) for space in (self.device, self.host)}
        # The calibration probe's stream bandwidth per space (best of copy and triad), from the first
        # deck that carries one: arrays of 512 MiB on a device, where the copy benchmark's 16M floats
        # partly fit a large L2.
        self.calibrated = {}  # space -> (GB/s, deck, bytes per array)
        for name, data in sorted(self.decks.items()):
            for space, cal in ((data.get("calibration") or {}).get("spaces") or {}).items():
                rates = [v for v in (cal.get("bandwidth_GBps") or {}).values() if isinstance(v, (int, float)) and v > 0]
                if rates and space not in self.calibrated:
                    self.calibrated[space] = (max(rates), name, cal.get("stream_bytes_per_array"))

    def benchmark_rate(self, prefix, space):
        """GB/s of the median of benchmark prefix/<precision>/space (or of its only run)."""
        best = None
        for _, b in self.benchmarks:
            name = b.get("run_name", b.get("name", ""))
            parts = name.split("/")
            if len(parts) < 3 or parts[0] != prefix or parts[2] != space:
                continue
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
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
    rows.append(("Run", f"{e.get('started', '?')} to {e.get('finished', '?')}, budget {e.get('budget_seconds', '?')} s"))
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
    data = run.decks[deck]
    ms = data.get("measurements", [])
    if not ms:
        return f"`{deck}`: no finished measurement."
    base = next((m for m in ms if m.get("space") == run.host and m.get("policy") == "host"), None)
    base_total = median(base, "total") if base else None
    rows = []
    order = {p: i for i, p in enumerate(["host"] + DEVICE_POLICIES)}
    for m in sorted(ms, key=lambda m: (m.get("space") != run.host, order.get(m.get("policy"), 9))):
        total = median(m, "total")
        speedup = base_total / total if base_total and total else None
        ok = verified(m)
        rows.append((m.get("space"), m.get("policy"), fmt_time(median(m, "to_device")), fmt_time(median(m, "compute")),
                     fmt_time(median(m, "to_host")), fmt_time(total),
                     fmt_time(total * m.get("repetitions", 0)) if total is not None else "-",
                     fmt_ratio(speedup), {True: "yes", False: "**no**", None: "not checked"}[ok]))
    m0 = ms[0]
    rows_of = (m0.get("parameters") or {}).get("rows")
    size = m0.get("size")
    reps = m0.get("repetitions")
    title = (f"`{deck}`: {m0.get('precision')} x ** y, size {size} columns"
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


def group_key(m):
    return (m.get("case"), m.get("variant"), m.get("precision"), m.get("generate", "host"))


def deck_rows(run, data):
    """Per (case, variant, precision, generate, size): host-space time, best device policy."""
    cells = {}
    for m in data.get("measurements", []):
        key = group_key(m) + (m.get("size"),)
        cells.setdefault(key, []).append(m)
    groups = {}
    for key, ms in cells.items():
        host = [m for m in ms if m.get("space") == run.host and median(m, "total") is not None]
        dev = [m for m in ms if m.get("space") == run.device and median(m, "total") is not None]
        host_m = next((m for m in host if m.get("policy") == "host"), None) or \
            (min(host, key=lambda m: median(m, "total")) if host else None)
        dev_m = min(dev, key=lambda m: median(m, "total")) if dev else None
        ht = median(host_m, "total") if host_m else None
        dt = median(dev_m, "total") if dev_m else None
        row = {"size": key[-1], "host": ht, "device": dt, "policy": dev_m.get("policy") if dev_m else None,
               "speedup": ht / dt if ht and dt else None,
               "GBps": ((dev_m or {}).get("work") or {}).get("GBps"),
               "verified": all(verified(m) is not False for m in ms),
               "failed": [m for m in ms if verified(m) is False]}
        groups.setdefault(key[:-1], []).append(row)
    for rows in groups.values():
        rows.sort(key=lambda r: (r["size"] is None, r["size"]))
    return groups


def crossovers(rows):
    """Sizes at which the faster side changes: [(size below, size above, 'device'|'host')]."""
    out = []
    prev = None
    for r in rows:
        if r["speedup"] is None:
            continue
        side = "device" if r["speedup"] > 1 else "host"
        if prev is not None and side != prev[1]:
            out.append((prev[0], r["size"], side))
        prev = (r["size"], side)
    return out


def section_decks(run):
    if run.device in run.calibrated:
        copy, deck, size = run.calibrated[run.device]
        source = (f"{copy:.1f} GB/s (the calibration probe of `{run.device}`: best of stream copy and triad"
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
        data = run.decks[deck]
        status = data.get("status", "?")
        done = f"{data.get('finished_measurements', '?')} of {data.get('planned_measurements', '?')} measurements"
        lines += ["", f"### {deck}", "", f"Status: {status}, {done}."]
        groups = deck_rows(run, data)
        if not groups:
            continue
        table = []
        notes = []
        for key, rows in groups.items():
            case, variant, precision, generate = key
            shown = rows
            cross = crossovers(rows)
            if len(rows) > SWEEP_ROWS:
                keep = {0, len(rows) - 1}
                for i, r in enumerate(rows):
                    if any(r["size"] in (a, b) for a, b, _ in cross):
                        keep.add(i)
                shown = [rows[i] for i in sorted(keep)]
                notes.append(f"`{case}` {variant} {precision}: {len(rows)} sizes, shown: the ends and the crossovers.")
            for a, b, side in cross:
                notes.append(f"`{case}` {variant} {precision}: the {side} space is faster from size {b} on "
                             f"(the other one at {a}).")
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
    for part, b in run.benchmarks:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b.get("name", "?"))
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
    return "\n".join(lines)


def section_verification(run):
    total = failed = unchecked = 0
    failures = []
    for deck, data in sorted(run.decks.items()):
        for m in data.get("measurements", []):
            total += 1
            ok = verified(m)
            if ok is None:
                unchecked += 1
            elif not ok:
                failed += 1
                detail = (m.get("verification") or {}).get("detail", "")
                failures.append(f"- {deck}: {m.get('case')} {m.get('variant')} {m.get('precision')} size "
                                f"{m.get('size')} on {m.get('space')} ({m.get('policy')}): {detail}")
    head = (f"{total} measurements: {total - failed - unchecked} verified, {failed} failed"
            + (f", {unchecked} not checked" if unchecked else "") + ".")
    return "## Verification\n\n" + head + ("\n\n" + "\n".join(failures) if failures else "")


COARSE_WINDOW_S = 1.0


def section_energy(run):
    """The GPU's energy per device measurement (results.json gpu_energy, read through NVML)."""
    rows, reasons, missing, null, steps = [], {}, 0, 0, []
    for deck, data in sorted(run.decks.items()):
        for m in data.get("measurements", []):
            if m.get("space") != run.device:
                continue
            if "gpu_energy" not in m:
                missing += 1
                continue
            e = m["gpu_energy"]
            if not isinstance(e, dict):
                null += 1
                continue
            if e.get("unavailable"):
                reasons[e["unavailable"]] = reasons.get(e["unavailable"], 0) + 1
            if e.get("energy_joules") is None and e.get("mean_power_watts") is None \
                    and e.get("gpu_utilization_percent") is None:
                continue
            num = lambda v, f: "-" if v is None else format(v, f)
            seconds = e.get("seconds") or 0.0
            joules = e.get("energy_joules")
            if joules is not None and joules > 0 and seconds < 0.1:
                steps.append(joules)
            # Under COARSE_WINDOW_S one update of the counter is a large share of the reading.
            coarse = lambda text: f"({text})" if seconds < COARSE_WINDOW_S and text != "-" else text
            rows.append([deck, str(m.get("case")), str(m.get("variant")), str(m.get("precision")), str(m.get("size")),
                         str(m.get("policy")), coarse(num(joules, ".4g")),
                         coarse(num(e.get("mean_power_watts"), ".4g")), num(e.get("gpu_utilization_percent"), ".3g"),
                         num(e.get("seconds"), ".3g"), str(e.get("samples", "-"))])
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
    if not os.path.isfile(path):
        return "\n".join(lines + ["No advise.txt: the advisor's sweep did not run (see the steps above)."])
    with open(path, errors="replace") as f:
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


def summarize(directory):
    run = Run(directory)
    e = run.env
    what = "GPU run" if e.get("backend", "cuda") == "cuda" else "host rehearsal of the GPU run"
    title = f"# {e.get('device_name', 'unknown device')}: {what}, {e.get('started', '?')[:10]}"
    intro = (f"Written by scripts/gpu_summary.py from `{os.path.basename(os.path.normpath(directory))}/` "
             "(raw results: results.json per deck, benchmark JSON, JUnit XML, logs).")
    parts = [title, intro, section_machine(run), section_steps(run), section_unit_tests(run),
             section_seed000(run), section_decks(run), section_energy(run), section_advice(run, directory),
             section_benchmarks(run), section_verification(run)]
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
