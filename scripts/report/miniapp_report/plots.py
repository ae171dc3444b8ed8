"""The report's figures, drawn with matplotlib (Agg).

Each figure is saved as a PNG and read back into plain data (figure_data): the x/y of every line,
the heights and bottoms of every bar, the offsets of every scatter point, exactly as matplotlib
holds them after drawing. That data goes into plot-data.json next to the PNGs, so tests compare
what was drawn with the medians of results.json.
"""

import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .advisor import Advice
from .group import GroupAdvice
from .names import DEVICE_POLICIES, Policy
from .results import Point, ResultSet, host_representative

PHASES = [("to_device", "host -> device", "#d62728"), ("compute", "compute", "#1f77b4"),
          ("to_host", "device -> host", "#ff7f0e")]
POLICY_STYLE = {Policy.ALL_RESIDENT: "--", Policy.INPUTS_RESIDENT: "-.", Policy.COPY_EVERY_ITERATION: ":",
                Policy.COPY_EVERY_ITERATION_PINNED: (0, (5, 1, 1, 1, 1, 1))}
CROSSOVER_COLORS = ["#444444", "#8c564b", "#7f7f7f", "#bcbd22"]


class MissingMatplotlib(RuntimeError):
    pass


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise MissingMatplotlib(
            f"matplotlib cannot be imported ({e}); install Debian's python3-matplotlib "
            "(scripts/bootstrap-debian.sh --report-packages) or point MINIAPP_PYTHON at a python3 that has it") from None
    return plt


@dataclass
class Figure:
    file: str                   # PNG name inside the output directory
    kind: str                   # runtime | phases | threads | roofline
    title: str
    caption: str
    case: Optional[str] = None
    meta: dict = field(default_factory=dict)
    axes: List[dict] = field(default_factory=list)   # figure_data()

    def to_json(self) -> dict:
        return {"file": self.file, "kind": self.kind, "title": self.title, "case": self.case, "meta": self.meta,
                "axes": self.axes}


def slug(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(str(p) for p in parts)).strip("-")


def figure_data(fig) -> List[dict]:
    """What matplotlib holds after drawing: lines, bars, scatter points, per axes."""
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer
    axes = []
    for ax in fig.axes:
        lines = [{"label": l.get_label(), "role": l.get_gid() or "series",
                  "x": [float(v) for v in l.get_xdata()], "y": [float(v) for v in l.get_ydata()]}
                 for l in ax.get_lines()]
        bars = [{"label": c.get_label(),
                 "x": [float(r.get_x() + r.get_width() / 2) for r in c.patches],
                 "heights": [float(r.get_height()) for r in c.patches],
                 "bottoms": [float(r.get_y()) for r in c.patches]}
                for c in ax.containers if isinstance(c, BarContainer)]
        points = [{"label": c.get_label(), "offsets": [[float(a), float(b)] for a, b in c.get_offsets()]}
                  for c in ax.collections if isinstance(c, PathCollection)]
        axes.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                     "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
                     "xticks": [float(t) for t in ax.get_xticks()],
                     "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
                     "lines": lines, "bars": bars, "points": points})
    return axes


def _save(plt, fig, out_dir: str, figure: Figure) -> Figure:
    path = os.path.join(out_dir, figure.file)
    tmp = f"{path}.tmp-{os.getpid()}"
    fig.savefig(tmp, format="png", dpi=90, bbox_inches="tight")
    os.replace(tmp, path)
    figure.axes = figure_data(fig)
    plt.close(fig)
    return figure


class Colors:
    """One colour per series label, the same in every figure."""

    def __init__(self, labels):
        palette = ["#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#ff7f0e", "#17becf", "#e377c2", "#8c564b",
                   "#bcbd22", "#7f7f7f"]
        self.map = {label: palette[i % len(palette)] for i, label in enumerate(sorted(labels))}

    def __call__(self, label):
        return self.map.get(label, "#000000")


def _grid(plt, n: int, width: float = 6.0, height: float = 4.0):
    cols = 1 if n == 1 else 2
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False,
                             layout="constrained")
    flat = [a for row in axes for a in row]
    for extra in flat[n:]:
        extra.set_visible(False)
        fig.delaxes(extra)
    return fig, flat[:n]


def _case_groups(rs: ResultSet) -> Dict[Tuple[str, str, str, str], Dict[str, List[Point]]]:
    """(case, workload, precision, generate) -> variant -> points that passed (or were unchecked)."""
    out: Dict[Tuple[str, str, str, str], Dict[str, List[Point]]] = {}
    for p in rs.points:
        if p.failed:
            continue
        out.setdefault((p.case, p.workload, p.precision, p.generate), {}).setdefault(p.variant, []).append(p)
    return out


def _advice_for(advice: Advice, case: str, variant: str, precision: str, generate: str) -> Optional[GroupAdvice]:
    for g in advice.groups:
        if (g.case, g.variant, g.precision, g.generate) == (case, variant, precision, generate):
            return g
    return None


def runtime_series(points: List[Point]) -> List[Tuple[str, str, List[Point]]]:
    """(label, policy, points sorted by size): one per host space (its representative policy) and
    one per device space and policy."""
    series: Dict[Tuple[str, str], List[Point]] = {}
    for p in host_representative(points):
        series.setdefault((p.space_label, Policy.HOST), []).append(p)
    for p in points:
        if not p.host and p.policy in DEVICE_POLICIES:
            series.setdefault((f"{p.space} {p.policy}", p.policy), []).append(p)
    return [(label, policy, sorted(ps, key=lambda q: q.size)) for (label, policy), ps in sorted(series.items())]


def runtime_figures(plt, rs: ResultSet, advice: Advice, out_dir: str, colors: Colors) -> List[Figure]:
    figures = []
    for (case, workload, precision, generate), variants in sorted(_case_groups(rs).items()):
        names = sorted(variants)
        fig, axes = _grid(plt, len(names))
        for ax, variant in zip(axes, names):
            for label, policy, ps in runtime_series(variants[variant]):
                color = colors(label.split(" ")[0] if policy != Policy.HOST else label)
                ax.plot([p.size for p in ps], [p.total for p in ps], marker="o", markersize=4,
                        linestyle=POLICY_STYLE.get(policy, "-"), color=color, label=label)
            g = _advice_for(advice, case, variant, precision, generate)
            if g:
                for i, c in enumerate(x for x in g.crossovers if x.status == "from" and x.estimate):
                    ax.axvline(c.estimate, color=CROSSOVER_COLORS[i % len(CROSSOVER_COLORS)], linestyle=(0, (1, 2)),
                               linewidth=1.2, gid="crossover",
                               label=f"crossover n~{c.estimate:.3g}: {c.challenger} / {c.incumbent}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(variant)
            ax.set_xlabel("size n")
            ax.set_ylabel("seconds per iteration (median)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        figures.append(_save_case_figure(
            plt, fig, out_dir, "runtime", (case, workload, precision, generate),
            "median time per iteration against size",
            "Log-log, one line per space (device spaces: one per mirror policy); dotted verticals mark "
            "crossovers located by the advisor.",
            {"variants": names}))
    return figures


def _save_case_figure(plt, fig, out_dir: str, kind: str, group: Tuple[str, str, str, str], what: str, caption: str,
                      meta: dict) -> Figure:
    """Titles the figure of one case group (case, workload, precision, generate) with what it shows and
    saves it as <kind>-<slug>.png."""
    case, workload, precision, generate = group
    gen = "" if generate == "host" else f", inputs generated on {generate}"
    title = f"{case}: {workload}, {precision}{gen}: {what}"
    fig.suptitle(title, fontsize=10)
    return _save(plt, fig, out_dir, Figure(
        file=f"{kind}-{slug(case, precision, generate)}.png", kind=kind, title=title, case=case, caption=caption,
        meta={"workload": workload, "precision": precision, "generate": generate, **meta}))


def _unit(seconds: float) -> Tuple[float, str]:
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return scale, name
    return 1e-9, "ns"


def phase_figures(plt, rs: ResultSet, out_dir: str) -> List[Figure]:
    figures = []
    for (case, workload, precision, generate), variants in sorted(_case_groups(rs).items()):
        names = sorted(variants)
        fig, axes = _grid(plt, len(names), width=6.0, height=3.8)
        sizes = {}
        scales = {}
        for ax, variant in zip(axes, names):
            n = max(p.size for p in variants[variant])
            sizes[variant] = n
            bars = [(label, [p for p in ps if p.size == n][0]) for label, _, ps in runtime_series(variants[variant])
                    if any(p.size == n for p in ps)]
            scale, unit = _unit(max(p.to_device + p.compute + p.to_host for _, p in bars))
            scales[variant] = scale
            x = list(range(len(bars)))
            bottom = [0.0] * len(bars)
            for attr, label, color in PHASES:
                heights = [getattr(p, attr) / scale for _, p in bars]
                ax.bar(x, heights, bottom=bottom, color=color, label=label, width=0.6)
                bottom = [b + h for b, h in zip(bottom, heights)]
            for xi, (_, p) in zip(x, bars):
                ax.annotate(f"{p.total / scale:.3g}", (xi, bottom[xi]), ha="center", va="bottom", fontsize=7,
                            xytext=(0, 2), textcoords="offset points")
            ax.set_xticks(x)
            ax.set_xticklabels([label.replace(" ", "\n", 1) for label, _ in bars], fontsize=7)
            ax.set_ylabel(f"{unit} per iteration (median per phase)")
            ax.set_title(f"{variant}, n = {n}")
            ax.legend(fontsize=7)
            ax.margins(y=0.15)
        figures.append(_save_case_figure(
            plt, fig, out_dir, "phases", (case, workload, precision, generate),
            "time per phase and mirror policy at the largest size",
            "Seed 000's copy table as a picture: median host->device, compute and device->host time per "
            "iteration for every space and mirror policy (numbers on top: the median total). On host "
            "spaces copies alias and move nothing.",
            {"sizes": sizes, "unit_seconds": scales}))
    return figures


def thread_figures(plt, rs: ResultSet, advice: Advice, out_dir: str) -> List[Figure]:
    figures = []
    by_case: Dict[str, List[GroupAdvice]] = {}
    for g in advice.groups:
        if any(len(t) > 1 for per in g.threads.values() for t in per.values()):
            by_case.setdefault(g.case, []).append(g)
    for case, groups in sorted(by_case.items()):
        fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
        top = 1
        lowest = None
        series_meta = []
        for g in groups:
            for space, per in sorted(g.threads.items()):
                swept = sorted(n for n, t in per.items() if len(t) > 1)
                for n in sorted({swept[0], swept[-1]}):
                    counts = sorted(per[n])
                    base = per[n][counts[0]]
                    lowest = counts[0] if lowest is None else min(lowest, counts[0])
                    top = max(top, counts[-1])
                    label = f"{g.variant} {g.precision} {space} n={n}"
                    ax.plot(counts, [base / per[n][c] for c in counts], marker="o", label=label)
                    series_meta.append({"label": label, "variant": g.variant, "precision": g.precision,
                                        "generate": g.generate, "space": space, "size": n, "threads": counts})
        ideal = list(range(lowest or 1, top + 1))
        ax.plot(ideal, [c / (lowest or 1) for c in ideal], color="black", linestyle="--", linewidth=0.8,
                gid="ideal", label="ideal (linear)")
        ax.set_xlabel("host threads")
        ax.set_ylabel("speedup over the fewest threads (median total)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        title = f"{case}: speedup against host threads"
        ax.set_title(title, fontsize=10)
        figures.append(_save(plt, fig, out_dir, Figure(
            file=f"threads-{slug(case)}.png", kind="threads", title=title, case=case,
            caption="Seed 001's 'dry-run with multiple CPUs too': median time at the fewest threads over the "
                    "median at each count, for the smallest and largest swept size.",
            meta={"series": series_meta})))
    return figures


def roofline_figures(plt, rs: ResultSet, out_dir: str) -> List[Figure]:
    figures = []
    for space, cal in sorted(rs.calibration.items()):
        # The best stream rate, as the binary's per-measurement roofline places use (calibration.cpp).
        bandwidth = cal.stream_GBps
        peaks = {k: v for k, v in cal.gemm_GFLOPs.items() if v}
        pts = [p for p in rs.points if p.space == space and not p.failed and p.arithmetic_intensity > 0]
        pts = [p for p in pts if not p.host] + host_representative(pts)
        if not bandwidth or not peaks or not pts:
            continue
        fig, ax = plt.subplots(figsize=(6.8, 4.6), layout="constrained")
        lo = min(p.arithmetic_intensity for p in pts) / 4
        hi = max(p.arithmetic_intensity for p in pts) * 4
        xs = [lo * (hi / lo) ** (i / 63) for i in range(64)]
        for precision, peak in sorted(peaks.items()):
            ax.plot(xs, [min(peak, bandwidth * x) for x in xs], gid="roof", linewidth=1.5,
                    label=f"roof {precision}: {peak:.4g} GFLOP/s, {bandwidth:.4g} GB/s")
        for workload in sorted({p.workload for p in pts}):
            mine = [p for p in pts if p.workload == workload]
            ax.scatter([p.arithmetic_intensity for p in mine], [p.gflops for p in mine], s=14, label=workload)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (flops per byte)")
        ax.set_ylabel("GFLOP/s (median compute time)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        title = f"roofline of {space} (calibrated)"
        ax.set_title(title, fontsize=10)
        figures.append(_save(plt, fig, out_dir, Figure(
            file=f"roofline-{slug(space)}.png", kind="roofline", title=title,
            caption=f"Every measurement on {space} placed under the calibrated roofs (memory bandwidth "
                    f"{bandwidth:.4g} GB/s, vendor GEMM rate per precision).",
            meta={"space": space, "bandwidth_GBps": bandwidth, "peaks_GFLOPs": peaks})))
    return figures


def draw_all(rs: ResultSet, advice: Advice, out_dir: str) -> List[Figure]:
    plt = pyplot()
    labels = set()
    for p in rs.points:
        labels.add(p.space_label if p.host else p.space)
    colors = Colors(labels)
    return (runtime_figures(plt, rs, advice, out_dir, colors) + phase_figures(plt, rs, out_dir)
            + thread_figures(plt, rs, advice, out_dir) + roofline_figures(plt, rs, out_dir))
