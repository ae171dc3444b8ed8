#!/usr/bin/env python3
"""Reads what scripts/profile-kernels.sh wrote (Nsight Compute's raw pages, NAME.csv, and
profile.tsv) and says for each kernel which bound it hits (Python 3, standard library only).

    scripts/ncu_profile.py PROFILE_DIR

Prints the markdown section that scripts/gpu_summary.py puts in a GPU run's summary: a row per
target and kernel (launches profiled, median time, DRAM / memory / SM throughput as shares of
their peaks, achieved and theoretical occupancy, registers, launch shape, the two stall reasons
its warps spend most cycles on) and the reading. The reading follows Nsight Compute's own Speed
Of Light rule: a unit above 60% of its peak bounds the kernel; below that on every unit the
kernel is latency-bound, and its stalls and occupancy say on what.
Exit codes: 0 printed; 2 PROFILE_DIR holds no profile.tsv.
"""

import csv
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
from miniapp_report import stored  # noqa: E402

BOUND_SHARE = 60.0  # % of a unit's peak from which it bounds the kernel (Nsight Compute's SOL rule)
TIME_UNITS = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
              "second": 1.0, "s": 1.0}
METRICS = {
    "time": "gpu__time_duration.sum",
    "dram": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "achieved": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical": "sm__maximum_warps_per_active_cycle_pct",
    "registers": "launch__registers_per_thread",
    "block": "launch__block_size",
    "grid": "launch__grid_size",
    "waves": "launch__waves_per_multiprocessor",
    "read": "dram__bytes_read.sum",
    "written": "dram__bytes_write.sum",
}
STALL = re.compile(r"^smsp__average_warps?_(?:latency_)?issue_stalled_([a-z_]+?)(?:_per_issue_active)?\.ratio$")
NOT_A_STALL = {"selected"}  # the cycles a warp issues


def number(text):
    """A metric's value as a float (thousands separators dropped), None where ncu gave none."""
    text = (text or "").replace(",", "").strip()
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_raw_page(path):
    """The launches of one raw page (`ncu --import R --csv --page raw --print-units base`): a list
    of (kernel name, {metric: value}, {metric: unit}). Lines before the header (ncu's own
    messages) and the units row under it are skipped."""
    with stored.open_text(path, errors="replace") as f:  # NAME.csv, or NAME.csv.xz once compacted
        rows = list(csv.reader(f))
    start = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if start is None:
        return []
    header = rows[start]
    units = {}
    launches = []
    for r in rows[start + 1:]:
        if not r:
            continue
        cells = dict(zip(header, r))
        if not cells.get("ID", "").strip().isdigit():
            units = {k: v for k, v in cells.items() if v}  # the units row: no ID
            continue
        launches.append((cells.get("Kernel Name", "?"), cells, units))
    return launches


def short_name(name, pattern=None):
    """A readable name for a kernel's demangled name: the identifier holding the first match of the
    target's kernel regex (a KOKKOS_LAMBDA's kernel is named after the function that launched it,
    a functor's after its class), else the first `miniapp::` name, else its first identifier (a
    vendor library's kernel)."""
    m = re.search(pattern, name) if pattern else None
    if m and m.end() > m.start():
        start, end = m.start(), m.end()
        while start > 0 and (name[start - 1].isalnum() or name[start - 1] == "_"):
            start -= 1
        while end < len(name) and (name[end].isalnum() or name[end] == "_"):
            end += 1
        return clip(name[start:end])
    ours = re.search(r"miniapp::(?:\w+::)*?([A-Za-z_]\w*)(?=<|\b(?!::))", name)
    if ours:
        return ours.group(1)
    first = re.search(r"[A-Za-z_]\w*", re.sub(r"^void\s+", "", name))
    return clip(first.group(0) if first else name)


def clip(text, width=48):
    return text if len(text) <= width else text[:width - 3] + "..."


def median_of(launches, key):
    values = [v for v in (number(cells.get(METRICS[key])) for _, cells, _ in launches) if v is not None]
    return statistics.median(values) if values else None


def seconds_of(launches):
    metric = METRICS["time"]
    values = []
    for _, cells, units in launches:
        v = number(cells.get(metric))
        scale = TIME_UNITS.get(units.get(metric, "nsecond"))
        if v is not None and scale is not None:
            values.append(v * scale)
    return statistics.median(values) if values else None


def stalls_of(launches, shown=2):
    """The stall reasons with the most cycles per issued instruction (medians over the launches)."""
    reasons = {}
    for _, cells, _ in launches:
        for metric, text in cells.items():
            m = STALL.match(metric)
            v = number(text)
            if m and v is not None and m.group(1) not in NOT_A_STALL:
                reasons.setdefault(m.group(1), []).append(v)
    ranked = sorted(((statistics.median(v), k) for k, v in reasons.items()), reverse=True)
    return [(k, v) for v, k in ranked[:shown]]


def reading(k):
    """Which bound the kernel hits, by the Speed Of Light rule (see the module's doc)."""
    shares = [(k["dram"], "DRAM bandwidth"), (k["memory"], "the memory pipeline (L1/L2)"), (k["sm"], "the SMs' issue")]
    for share, unit in shares:
        if share is not None and share >= BOUND_SHARE:
            return f"bound by {unit} ({share:.0f}% of peak)"
    why = []
    if k["waves"] is not None and k["waves"] < 1:
        why.append(f"{k['waves']:.2f} waves: part of the GPU idle")
    if k["achieved"] is not None and k["achieved"] < 25:
        why.append(f"{k['achieved']:.0f}% occupancy")
    if k["stalls"]:
        why.append(f"warps wait on {k['stalls'][0][0].replace('_', ' ')}")
    return "latency-bound" + (": " + ", ".join(why) if why else "")


def kernels_of(path, pattern=None):
    """The launches of one target's raw page grouped by kernel (its full name), in the order first
    profiled; kernels of one short name are numbered: a function launches several lambdas."""
    groups = {}
    for name, cells, units in read_raw_page(path):
        groups.setdefault(name, []).append((name, cells, units))
    shorts = [short_name(name, pattern) for name in groups]
    seen = {}
    out = []
    for short, launches in zip(shorts, groups.values()):
        seen[short] = seen.get(short, 0) + 1
        name = short if shorts.count(short) == 1 else f"{short} ({seen[short]})"
        k = {key: median_of(launches, key) for key in METRICS if key != "time"}
        k.update(name=name, launches=len(launches), seconds=seconds_of(launches), stalls=stalls_of(launches))
        out.append(k)
    return out


def read_status(directory):
    path = os.path.join(directory, "profile.tsv")
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def fmt(value, form="{:.0f}", suffix=""):
    return "n/a" if value is None else form.format(value) + suffix


def fmt_seconds(s):
    if s is None:
        return "n/a"
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.3g} ms"


def kernel_row(target, k):
    occupancy = f"{fmt(k['achieved'], suffix='%')} / {fmt(k['theoretical'], suffix='%')}"
    shape = f"{fmt(k['block'])} x {fmt(k['grid'])} ({fmt(k['waves'], '{:.2g}')} waves)"
    stalls = ", ".join(f"{r.replace('_', ' ')} {v:.1f}" for r, v in k["stalls"]) or "n/a"
    moved = None if k["read"] is None or k["written"] is None else (k["read"] + k["written"]) / 1e6
    return (target, f"`{k['name']}`", k["launches"], fmt_seconds(k["seconds"]), fmt(moved, "{:.3g}", " MB"),
            fmt(k["dram"], suffix="%"), fmt(k["memory"], suffix="%"), fmt(k["sm"], suffix="%"), occupancy,
            fmt(k["registers"]), shape, stalls, reading(k))


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def section(directory):
    """The summary's section on a profile directory (profile.tsv and its NAME.csv)."""
    head = "## Which bound each kernel hits (Nsight Compute)"
    if not os.path.isfile(os.path.join(directory, "profile.tsv")):
        return f"{head}\n\nNo profile: the profile step did not run (see the steps above)."
    status = read_status(directory)
    plan = os.path.join(directory, "profile-plan.txt")
    if os.path.isfile(plan):  # targets the run was stopped before
        done = {s["target"] for s in status}
        with open(plan, encoding="utf-8") as f:
            status += [{"target": t, "status": "not-reached", "detail": "the profile step was stopped first"}
                       for t in f.read().split() if t not in done]
    rows, missing = [], []
    for s in status:
        csv_path = os.path.join(directory, s["target"] + ".csv")
        found = s["status"] == "ok" and stored.find(csv_path)
        kernels = kernels_of(csv_path, s.get("kernels")) if found else []
        rows += [kernel_row(s["target"], k) for k in kernels]
        if not kernels:
            missing.append((s["target"], s["status"], s.get("detail") or "the report holds no launch"))
    parts = [head, "From `profile/` (scripts/profile-kernels.sh: one ncu run per target of "
             "scripts/lib/profile-targets.tsv, kernel replay, clocks not locked; NAME.ncu-rep opens in Nsight "
             "Compute). Shares are of each unit's peak over the kernel's time; stalls in cycles per issued "
             f"instruction; a unit above {BOUND_SHARE:.0f}% bounds the kernel, below that on every unit it is "
             "latency-bound."]
    if rows:
        parts.append(md_table(["target", "kernel", "launches", "time", "DRAM moved", "DRAM", "memory", "SM",
                               "occupancy", "registers", "block x grid", "warps wait on", "reading"], rows))
    if missing:
        parts.append("Not profiled:\n\n" + md_table(["target", "status", "why"], missing))
    return "\n\n".join(parts)


def main(argv):
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    if not os.path.isfile(os.path.join(argv[0], "profile.tsv")):
        print(f"ncu_profile: no profile.tsv in {argv[0]} (scripts/profile-kernels.sh writes it)", file=sys.stderr)
        return 2
    print(section(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
