#!/usr/bin/env python3
"""Compares GPU runs of scripts/gpu-run.sh kernel by kernel (Python 3, standard library only):
typically the same GPU with two Kokkos versions (gpu-run.sh --kokkos), so that what the version
changes stands next to what the kernels change.

    scripts/compare_gpu_runs.py RUN_DIR... [--space cuda] [--output FILE.md]

Each RUN_DIR is a results directory of gpu-run.sh (decks/<deck>/results.json, benchmarks/*.json);
a directory holding decks/ alone (a partial run) works too. The tables:
  - the calibration probe of the space: stream copy, triad, the vendor's copy (deep_copy), the
    GEMM rates and the launch latency;
  - every deck measurement on the space (matched by deck, case, variant, precision, size and
    policy): median compute time per run, and each run's time over the first's;
  - every benchmark on the space (Google Benchmark medians): time per run and the ratio;
  - where runs were on different GPUs, issue 27's target across them: each streaming kernel
    (`x * y` and `x ** y` float32 at the largest size both ran, the probe's copy and triad) as
    much faster on the faster memory as the vendor's device-to-device copy is, within 15%. The
    section names each run's build commit: a ratio over two builds holds what their kernels
    changed as well.
A row missing from a run shows "-" there. Columns are named by the runs' Kokkos versions (from
results.json provenance) and directory names.
Exit codes: 0 written; 2 bad usage or a directory with no results.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # issue_targets.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
sys.dont_write_bytecode = True

from miniapp_report import results, stored  # noqa: E402
import issue_targets  # noqa: E402


class Run:
    def __init__(self, directory, space):
        self.directory = directory.rstrip("/")
        self.name = os.path.basename(self.directory)
        self.deck_times = {}     # (deck, case, variant, precision, size, policy) -> median compute seconds
        self.calibration = None  # the first deck's probe of the space
        self.kokkos = "?"
        self.label = ""
        self.gpu = stored.read_env(os.path.join(self.directory, "run.env")).get("device_name", "?")
        self.commit = stored.read_env(os.path.join(self.directory, "build.env")).get("PROJECT_COMMIT", "?")
        for path in stored.matching(os.path.join(self.directory, "decks", "*", "results.json")):
            deck = os.path.basename(os.path.dirname(path))
            source, points = results.read_file(path)
            self.kokkos = source.provenance.kokkos_version or self.kokkos
            if self.calibration is None and space in source.calibration:
                self.calibration = source.calibration[space]
            for p in points:
                if p.space == space and p.passed:
                    self.deck_times[(deck, p.case, p.variant, p.precision, p.size, p.policy)] = p.compute
        self.benchmarks = {}  # benchmark run name -> median real time in seconds
        units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
        self.unread = []  # benchmark files a stopped step left incomplete: (file, why)
        self.stopped = []  # benchmark files of a stopped part, read up to the last benchmark it finished
        for path in stored.matching(os.path.join(self.directory, "benchmarks", "*.json")):
            try:
                data, stopped = stored.read_benchmarks(path)
            except json.JSONDecodeError as e:
                self.unread.append((os.path.relpath(path, self.directory), f"incomplete or invalid JSON ({e.msg})"))
                continue
            if stopped:
                self.stopped.append(os.path.relpath(path, self.directory))
            for b in data.get("benchmarks", []):
                name = b.get("run_name", b.get("name", ""))
                if f"/{space}/" not in name or b.get("error_occurred") or not issue_targets.is_median(b):
                    continue
                self.benchmarks[name] = b["real_time"] * units.get(b.get("time_unit", "ns"), 1e-9)
        if not self.deck_times and not self.benchmarks:
            raise results.InputError(f"{self.directory}: no deck results and no benchmarks on {space}")



def fmt(v):
    return "-" if v is None else f"{v:.3g}"


def ratio(v, base):
    return "-" if v is None or not base else f"{v / base:.2f}"


def table(title, keys, runs, values, describe):
    head = [title] + [r.label for r in runs] + [f"{r.label} / {runs[0].label}" for r in runs[1:]]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k in keys:
        row = [values(r, k) for r in runs]
        out.append("| " + " | ".join([describe(k)] + [fmt(v) for v in row] +
                                     [ratio(v, row[0]) for v in row[1:]]) + " |")
    return out


# issue 27's streaming kernels among the benchmarks (float32, the largest size both runs have)
STREAMING = (("`x * y` float32", "matrix-elementwise-multiply"), ("`x ** y` float32", "matrix-elementwise-power"))


def largest_common(a, b, family):
    """The name of family's float32 benchmark with the largest first argument that runs a and b both have."""
    found = []
    for name in set(a.benchmarks) & set(b.benchmarks):
        parts = name.split("/")
        if parts[0] == family and parts[1] == "float32" and len(parts) > 3 and parts[3].isdigit():
            found.append((int(parts[3]), name))
    return max(found)[1] if found else None


def across_gpus(runs):
    """Issue 27's target across GPUs: each run on another GPU than run [1] against it, its streaming
    kernels' speedup beside the ratio of the vendor copy's rates (the memory's, as measured)."""
    base, lines = runs[0], []
    for other in runs[1:]:
        if other.gpu in (base.gpu, "?") or base.gpu == "?":  # the same GPU, or no run.env to say which
            continue
        copies = [r.calibration.bandwidth_GBps.get("vendor_copy") if r.calibration else None for r in (base, other)]
        ratio_wanted = copies[1] / copies[0] if all(copies) else None
        same = base.commit == other.commit and "?" not in base.commit and not base.commit.endswith("-dirty")
        lines += [f"### {other.label} against {base.label}", ""]
        if ratio_wanted:
            lines.append(f"The vendor's device-to-device copy: {copies[1]:.0f} GB/s against {copies[0]:.0f}, "
                         f"{ratio_wanted:.2f}x. A streaming kernel bound by the memory is as much faster: met where "
                         f"its speedup is within {issue_targets.TOLERANCE - 1:.0%} of {ratio_wanted:.2f}x.")
        else:
            missing = " and ".join(r.label for r, c in zip((base, other), copies) if not c)
            lines.append(f"No vendor copy in the probe of {missing}: the speedups below have no ratio to be held to.")
        lines += ["", f"Builds: {base.commit} and {other.commit}: " + (
            "the same build." if same else "not the same build (or not a clean one), so a kernel's speedup holds "
            "what the kernels changed as well as the GPU."), ""]
        rows = []
        for label, family in STREAMING:
            name = largest_common(base, other, family)
            if name:
                t0, t1 = base.benchmarks[name], other.benchmarks[name]
                rows.append((f"{label} (`{name}`)", issue_targets.fmt_s(t0), issue_targets.fmt_s(t1), t0 / t1))
            else:
                rows.append((f"{label} ({family})", "-", "-", None))
        for kernel in ("copy", "triad"):
            rates = [r.calibration.bandwidth_GBps.get(kernel) if r.calibration else None for r in (base, other)]
            rows.append((f"the probe's {kernel}", *[f"{v:.0f} GB/s" if v else "-" for v in rates],
                         rates[1] / rates[0] if all(rates) else None))
        head = ["kernel", base.label, other.label, "speedup", "of the copy's ratio", ""]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for kernel, v0, v1, speedup in rows:
            share = speedup / ratio_wanted if speedup and ratio_wanted else None
            verdict = "-" if share is None else issue_targets.verdict(
                1 / issue_targets.TOLERANCE <= share <= issue_targets.TOLERANCE)
            lines.append("| " + " | ".join([kernel, v0, v1, "-" if speedup is None else f"{speedup:.2f}x",
                                            "-" if share is None else f"{share:.0%}", verdict]) + " |")
        lines.append("")
    if lines:
        lines = ["## Across GPUs: the streaming kernels against the memory's ratio (issue 27)", ""] + lines
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--space", default="cuda")
    parser.add_argument("--output")
    args = parser.parse_args()
    try:
        runs = [Run(d, args.space) for d in args.runs]
    except (results.InputError, OSError, ValueError) as e:
        print(f"compare_gpu_runs.py: {e}", file=sys.stderr)
        return 2
    several_gpus = len({r.gpu for r in runs}) > 1
    for i, r in enumerate(runs):
        r.label = f"[{i + 1}] {r.gpu + ', ' if several_gpus else ''}Kokkos {r.kokkos}"
    lines = [f"# `{args.space}` kernel by kernel", ""] + [f"- {r.label}: `{r.name}`" for r in runs] + [
        "", "Times in seconds (medians); a ratio above 1 is slower than run [1] (above 1 in the probe: faster).", ""]
    unread = [f"- `{r.name}/{path}` left out: {why}" for r in runs for path, why in r.unread]
    unread += [f"- `{r.name}/{path}`: its part stopped before it finished; the benchmarks it finished first are "
               "compared" for r in runs for path in r.stopped]
    if unread:
        lines += unread + [""]
    cal = [r for r in runs if r.calibration]
    if cal:
        lines += ["## Calibration probe (GB/s, GFLOP/s, us: higher is faster, but for the latency)", ""]
        rows = [("stream copy", lambda c: c.bandwidth_GBps.get("copy")),
                ("stream triad", lambda c: c.bandwidth_GBps.get("triad")),
                ("vendor copy (deep_copy)", lambda c: c.bandwidth_GBps.get("vendor_copy")),
                ("GEMM float64", lambda c: c.gemm_GFLOPs.get("float64")),
                ("GEMM float32", lambda c: c.gemm_GFLOPs.get("float32")),
                ("launch latency", lambda c: c.launch_latency_us)]
        lines += table("probe", rows, cal, lambda r, k: k[1](r.calibration) if r.calibration else None, lambda k: k[0])
        lines.append("")
    keys = sorted(set().union(*(r.deck_times for r in runs)), key=lambda k: tuple(map(str, k)))
    if keys:
        lines += ["## Deck measurements: median compute time", ""]
        lines += table("deck / case / variant / precision / size / policy", keys, runs,
                       lambda r, k: r.deck_times.get(k), lambda k: " / ".join(map(str, k)))
        lines.append("")
    lines += across_gpus(runs)
    names = sorted(set().union(*(r.benchmarks for r in runs)))
    if names:
        lines += ["## Benchmarks: median real time", ""]
        lines += table("benchmark", names, runs, lambda r, k: r.benchmarks.get(k), lambda k: f"`{k}`")
        lines.append("")
    text = "\n".join(lines)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
