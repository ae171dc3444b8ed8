"""The GPU-or-CPU advisor: from measured medians to crossover sizes and a recommendation.

Everything here is a pure function of a ResultSet (and, for predictions, a device profile), so the
report and `miniapp advise` print the same conclusions. Every number the advice rests on is kept
in the returned structures (and so in advice.json).

Definitions
- best host(n): the fastest host space at size n (Serial, OpenMP/Threads at each measured thread
  count); on a host space the copy policies alias, so one policy stands for the space
  (results.HOST_POLICY_ORDER).
- crossover of A over B: the smallest measured size from which A is faster than B at every larger
  measured size; between the last size where A loses and the first where it wins, the sizes where
  the two runtimes cross on a log-log plot (straight lines between measured points): the estimate.
- transfers amortise (seed 003): copying one value of s bytes over a link of L bytes/s costs s/L;
  computing k flops on it saves k (1/F_host - 1/F_device) seconds. Copies pay from
  k* = s / (L (1/F_host - 1/F_device)) flops per transferred value. Seed 003's own figures
  (15 GB/s link, 1 TFLOP/s GPU, 1 GFLOP/s CPU, float64) give k* = 0.53.
"""

import math
import os
import re
from dataclasses import dataclass, field, asdict
from typing import Dict, List, Optional, Tuple

from .results import InputError, Point, ResultSet, host_representative

SEED003_LINK_GBPS = 15.0
VALUE_BYTES = {"float32": 4, "float64": 8}


# ---------------------------------------------------------------------------------------------
# Crossover


def sizes_text(sizes: List[int], measured: List[int]) -> str:
    """n = 10, 30..80, 100: runs of consecutive measured sizes as ranges."""
    index = {n: i for i, n in enumerate(measured)}
    runs: List[List[int]] = []
    for n in sorted(sizes):
        if runs and index.get(n, -2) == index.get(runs[-1][-1], -5) + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}..{r[-1]}" for r in runs)


@dataclass
class Crossover:
    challenger: str
    incumbent: str
    status: str                 # always | from | never | no-common-size
    sizes: List[int]            # sizes where both were measured
    first_winning: Optional[int] = None
    last_losing: Optional[int] = None
    estimate: Optional[float] = None    # log-log interpolated crossing between last_losing and first_winning
    wins_below: List[int] = field(default_factory=list)  # sizes where the challenger won but lost later
    ignored_losses: List[int] = field(default_factory=list)  # later losses within the measured spread

    def text(self) -> str:
        if self.status == "no-common-size":
            return f"{self.challenger} vs {self.incumbent}: never measured at a common size"
        lo, hi = self.sizes[0], self.sizes[-1]
        measured = f"n = {lo}..{hi}" if lo != hi else f"n = {lo}, the only size measured"
        ignored = (f"; losses within the measured spread ignored at n = {sizes_text(self.ignored_losses, self.sizes)}"
                   if self.ignored_losses else "")
        if self.status == "always":
            return f"{self.challenger} is faster than {self.incumbent} at every measured size ({measured}){ignored}"
        if self.status == "never":
            extra = f" (it wins only at n = {sizes_text(self.wins_below, self.sizes)})" if self.wins_below else ""
            return f"{self.challenger} never beats {self.incumbent} in the measured range ({measured}){extra}"
        est = f"; crossing at n ~ {self.estimate:.4g} (log-log interpolation)" if self.estimate else ""
        extra = f"; it also won at n = {sizes_text(self.wins_below, self.sizes)}" if self.wins_below else ""
        return (f"{self.challenger} beats {self.incumbent} from n = {self.first_winning} "
                f"(loses at n = {self.last_losing}{est}{extra}{ignored}; measured {measured})")


def crossover(challenger: str, a: Dict[int, float], incumbent: str, b: Dict[int, float],
              spread: Optional[Dict[int, float]] = None) -> Crossover:
    """Where the times a(n) of the challenger fall below b(n) of the incumbent for good.

    A loss by no more than spread[n] (the larger standard deviation of the two over their
    repetitions) between two wins is noise, not a crossing back: it is reported, not used."""
    spread = spread or {}
    sizes = sorted(set(a) & set(b))
    if not sizes:
        return Crossover(challenger, incumbent, "no-common-size", [])
    wins = [a[n] < b[n] for n in sizes]
    within = [not w and a[n] - b[n] <= spread.get(n, 0.0) for w, n in zip(wins, sizes)]
    won_later = [any(wins[i + 1:]) for i in range(len(sizes))]
    decisive = [not w and not (within[i] and won_later[i]) for i, w in enumerate(wins)]
    if not any(decisive):
        return Crossover(challenger, incumbent, "always", sizes, first_winning=sizes[0],
                         ignored_losses=[n for i, n in enumerate(sizes) if not wins[i]])
    last_loss = max(i for i, d in enumerate(decisive) if d)
    earlier_wins = [sizes[i] for i in range(last_loss) if wins[i]]
    if last_loss == len(sizes) - 1 or not won_later[last_loss]:
        return Crossover(challenger, incumbent, "never", sizes, wins_below=earlier_wins)
    first_win = next(i for i in range(last_loss + 1, len(sizes)) if wins[i])
    n0, n1 = sizes[last_loss], sizes[first_win]
    # log(a/b) is linear in log n between the two points on a log-log plot; it is >= 0 at n0, < 0 at n1.
    r0, r1 = math.log(a[n0] / b[n0]), math.log(a[n1] / b[n1])
    t = r0 / (r0 - r1)
    estimate = math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0)))
    return Crossover(challenger, incumbent, "from", sizes, first_winning=n1, last_losing=n0, estimate=estimate,
                     wins_below=earlier_wins,
                     ignored_losses=[n for i, n in enumerate(sizes) if i > first_win and not wins[i]])


# ---------------------------------------------------------------------------------------------
# Transfer amortisation (seed 003)


def amortising_intensity(value_bytes: float, link_bytes_per_s: float, host_flops_per_s: float,
                         device_flops_per_s: float) -> Optional[float]:
    """Flops per transferred value from which copying to the device pays; None if it never does
    (the device computes no faster than the host). device_flops_per_s may be math.inf."""
    saving_per_flop = 1.0 / host_flops_per_s - (0.0 if math.isinf(device_flops_per_s) else 1.0 / device_flops_per_s)
    if saving_per_flop <= 0:
        return None
    return value_bytes / (link_bytes_per_s * saving_per_flop)


# ---------------------------------------------------------------------------------------------
# Device profiles and predictions


def load_profiles(path: str) -> Dict[str, dict]:
    import json
    with open(path, encoding="utf-8") as f:
        return json.load(f)["devices"]


# A described device: --assume-device 'peak64=9700,peak32=19500,bandwidth=2039,link=25[,launch=5][,name=X]'
# (GFLOP/s, GB/s, GB/s one direction, us), or the path of a JSON file holding one profile in
# devices.json's shape.
DESCRIBED_KEYS = {"peak64": "float64 peak, GFLOP/s", "peak32": "float32 peak, GFLOP/s",
                  "bandwidth": "memory bandwidth, GB/s", "link": "host link, GB/s one direction"}
DEFAULT_LAUNCH_US = 5.0


def _positive(value, what: str, where: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"--assume-device {where}: {what} is {value!r}, not a number")
    if not (x > 0 and math.isfinite(x)):
        raise InputError(f"--assume-device {where}: {what} must be a positive number, not {value!r}")
    return x


def described_profile(text: str) -> Tuple[str, dict]:
    """The profile of a device described by its figures on the command line."""
    fields: Dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--assume-device {text!r}: '{part}' is not key=value (keys: "
                             f"{', '.join(DESCRIBED_KEYS)}, launch, name)")
        if key not in DESCRIBED_KEYS and key not in ("launch", "name"):
            raise InputError(f"--assume-device {text!r}: unknown key {key!r} (keys: {', '.join(DESCRIBED_KEYS)}, "
                             "launch, name)")
        if key in fields:
            raise InputError(f"--assume-device {text!r}: {key} given twice")
        fields[key] = value.strip()
    missing = [f"{k} ({what})" for k, what in DESCRIBED_KEYS.items() if k not in fields]
    if missing:
        raise InputError(f"--assume-device {text!r}: missing {', '.join(missing)}")
    v = {k: _positive(fields[k], k, repr(text)) for k in DESCRIBED_KEYS}
    launch = _positive(fields["launch"], "launch", repr(text)) if "launch" in fields else DEFAULT_LAUNCH_US
    return "described", {
        "name": fields.get("name") or "the described device",
        "peak_GFLOPs": {"float64": v["peak64"], "float32": v["peak32"]},
        "memory_GBps": v["bandwidth"], "link_GBps": v["link"], "link": "host link, one direction",
        "launch_latency_us": launch, "figures": "described",
        "source": f"--assume-device {text}" + ("" if "launch" in fields else f" (launch {DEFAULT_LAUNCH_US:g} us assumed)"),
    }


def profile_file(path: str) -> Tuple[str, dict]:
    """A profile in devices.json's shape, from a file of its own."""
    import json
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"--assume-device {path}: cannot read it as JSON: {e}")
    if not isinstance(doc, dict):
        raise InputError(f"--assume-device {path}: expected one device profile (an object)")
    peaks = doc.get("peak_GFLOPs")
    if not isinstance(peaks, dict) or not {"float64", "float32"} <= set(peaks):
        raise InputError(f"--assume-device {path}: peak_GFLOPs must hold float64 and float32 (GFLOP/s)")
    where = path
    profile = dict(doc)
    profile["peak_GFLOPs"] = {p: _positive(peaks[p], f"peak_GFLOPs.{p}", where) for p in ("float64", "float32")}
    for key in ("memory_GBps", "link_GBps"):
        if key not in doc:
            raise InputError(f"--assume-device {path}: missing {key}")
        profile[key] = _positive(doc[key], key, where)
    profile["launch_latency_us"] = _positive(doc.get("launch_latency_us", DEFAULT_LAUNCH_US), "launch_latency_us", where)
    profile.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    profile.setdefault("figures", "described")
    profile.setdefault("link", "host link, one direction")
    profile.setdefault("source", path)
    return os.path.basename(path), profile


def find_profile(profiles: Dict[str, dict], name: str) -> Tuple[str, dict]:
    """A named profile of devices.json, a described device (key=value figures), or a profile file."""
    if "=" in name:
        return described_profile(name)
    if name.endswith(".json"):
        return profile_file(name)
    for key, profile in profiles.items():
        if key.lower() == name.lower():
            return key, profile
    raise InputError(f"--assume-device: unknown device {name!r}; known: {', '.join(sorted(profiles))} "
                     f"(profiles in scripts/report/devices.json), none, a described device "
                     f"('peak64=GFLOPs,peak32=GFLOPs,bandwidth=GBps,link=GBps[,launch=us][,name=X]') or a profile "
                     "file (.json)")


def figures(profile: dict) -> str:
    """'published' for the profiles of devices.json, 'described' for a device given by its figures."""
    return profile.get("figures", "published")


def measured_gpu_names(rs: ResultSet) -> List[str]:
    """The GPUs the results' device measurements ran on (provenance.gpu.name of the files that hold
    a device measurement)."""
    with_device = {p.source for p in rs.points if not p.host}
    names = set()
    for s in rs.sources:
        gpu = s.doc.get("provenance", {}).get("gpu") or {}
        if s.path in with_device and gpu.get("name"):
            names.add(gpu["name"])
    return sorted(names)


def profile_for_measured_gpu(profiles: Dict[str, dict], rs: ResultSet) -> Tuple[Optional[Tuple[str, dict]], str]:
    """The profile whose `matches` (regular expressions, matched in full) names the one GPU the
    results were measured on, so that a device run gets its prediction printed next to its
    measurements without being asked; (None, why) otherwise."""
    names = measured_gpu_names(rs)
    if not names:
        return None, ""
    if len(names) > 1:
        return None, f"no profile chosen: the results were measured on {len(names)} GPUs ({', '.join(names)})"
    for key, profile in profiles.items():
        if any(re.fullmatch(pattern, names[0]) for pattern in profile.get("matches", [])):
            return (key, profile), f"chosen from the measured GPU's name, {names[0]!r} (--assume-device none: no prediction)"
    return None, (f"no published profile matches the measured GPU {names[0]!r} (known: {', '.join(sorted(profiles))}; "
                  "--assume-device NAME predicts for one of them)")


def launches_per_iteration(p: Point) -> Tuple[int, str]:
    """Kernel launches in one harness iteration, as far as the results tell."""
    steps = p.parameters.get("iterations")
    if p.workload == "regression" and steps and steps.isdigit():
        return 2 * int(steps), f"2 per gradient step x {steps} steps"
    return 1, "1 per iteration"


def transfer_bytes_estimate(p: Point, measured: Optional[float]) -> Tuple[float, str]:
    if measured:
        return measured, "measured on the device"
    steps = p.parameters.get("iterations")
    if steps and steps.isdigit() and int(steps) > 0:
        return (p.bytes_moved_by_kernel / int(steps),
                "estimate: kernel bytes per pass over the data (work bytes / iterations); host runs move none")
    return p.bytes_moved_by_kernel, "estimate: kernel bytes (inputs read + outputs written); host runs move none"


@dataclass
class Prediction:
    size: int
    flops: float
    kernel_bytes: float
    transfer_bytes: float
    transfer_bytes_source: str
    launches: int
    launches_source: str
    resident_s: float
    copy_every_iteration_s: float
    best_host_s: float
    best_host: str
    measured_resident_s: Optional[float] = None
    measured_copy_s: Optional[float] = None


def predict(p: Point, profile: dict, link_bytes_per_s: float, measured_transfer: Optional[float]) -> Prediction:
    """Roofline bound of device time for the work of host measurement p: the device at its
    published peak and memory bandwidth (a lower bound on time), plus launch latency, plus the
    copies over the link for copy-every-iteration."""
    peak = profile["peak_GFLOPs"][p.precision] * 1e9
    bandwidth = profile["memory_GBps"] * 1e9
    launches, launches_source = launches_per_iteration(p)
    transfer, transfer_source = transfer_bytes_estimate(p, measured_transfer)
    resident = max(p.flops / peak, p.bytes_moved_by_kernel / bandwidth) + launches * profile["launch_latency_us"] * 1e-6
    return Prediction(size=p.size, flops=p.flops, kernel_bytes=p.bytes_moved_by_kernel, transfer_bytes=transfer,
                      transfer_bytes_source=transfer_source, launches=launches, launches_source=launches_source,
                      resident_s=resident, copy_every_iteration_s=resident + transfer / link_bytes_per_s,
                      best_host_s=p.total, best_host=p.space_label)


def model_check(rows: List[Prediction]) -> List[dict]:
    """The prediction against the device's own measurement at the same size and policy: measured
    time over predicted time. The resident prediction is a roofline bound (peak rate, full memory
    bandwidth), so a ratio below 1 means the device beat its published figures: the profile, or
    the flops and bytes counted for the workload, are wrong. The copying prediction also rests on
    the link figure used, so below 1 there says the copies were faster than that figure."""
    checks = []
    for r in rows:
        for policy, measured, predicted in (("all-resident", r.measured_resident_s, r.resident_s),
                                            ("copy-every-iteration", r.measured_copy_s, r.copy_every_iteration_s)):
            if measured is not None and predicted > 0:
                checks.append({"size": r.size, "policy": policy, "measured_s": measured, "predicted_s": predicted,
                               "measured_over_predicted": measured / predicted})
    return checks


def _ratio_text(ratios: List[Tuple[float, int]]) -> str:
    """2.76x at n = 4096, or: 1.9x..3.1x over 8 sizes (median 2.4x)."""
    if len(ratios) == 1:
        return f"{ratios[0][0]:.3g}x at n = {ratios[0][1]}"
    values = sorted(r for r, _ in ratios)
    lo, hi = min(ratios), max(ratios)
    return (f"{lo[0]:.3g}x (n = {lo[1]})..{hi[0]:.3g}x (n = {hi[1]}) over {len(ratios)} sizes "
            f"(median {values[len(values) // 2]:.3g}x)")


def model_check_lines(checks: List[dict]) -> List[str]:
    lines = []
    for policy, what in (("all-resident", "resident"), ("copy-every-iteration", "copying every iteration")):
        ratios = [(c["measured_over_predicted"], c["size"]) for c in checks if c["policy"] == policy]
        if ratios:
            below = [n for r, n in ratios if r < 1]
            shown = ", ".join(map(str, below[:6])) + (", ..." if len(below) > 6 else "")
            lines.append(f"{what} {_ratio_text(ratios)}" +
                         (f"; faster than predicted at {len(below)} of {len(ratios)} sizes (n = {shown}): "
                          + FASTER_THAN_PREDICTED[policy] if below else ""))
    return lines


FASTER_THAN_PREDICTED = {
    "all-resident": "the device beat its roofline bound, so the profile's figures or the workload's counted "
                    "flops and bytes are off",
    "copy-every-iteration": "its copies ran faster than the link bandwidth used",
}


# ---------------------------------------------------------------------------------------------
# Per group analysis


@dataclass
class Link:
    gbps: float
    source: str


@dataclass
class GroupAdvice:
    case: str
    workload: str
    variant: str
    precision: str
    generate: str
    sizes: List[int]
    failed: List[str]
    best_host: Dict[int, Tuple[float, str]]           # n -> (seconds, space label)
    host_times: Dict[str, Dict[int, float]]           # host space label -> n -> seconds
    device: Dict[str, Dict[str, Dict[int, float]]]    # space -> policy -> n -> seconds
    crossovers: List[Crossover]
    threads: Dict[str, Dict[int, Dict[int, float]]]   # host space -> n -> threads -> seconds
    thread_notes: List[str]
    cores_matching_device: List[str]
    amortisation: Optional[dict]
    prediction: Optional[dict]
    pinned: List[dict] = field(default_factory=list)  # per device space: copying through pinned memory, predicted
    stddev: Dict[Tuple[str, int], float] = field(default_factory=dict)  # (series, n) -> spread of its median

    @property
    def label(self) -> str:
        gen = "" if self.generate == "host" else f", inputs generated on {self.generate}"
        return f"{self.case} / {self.variant} / {self.precision}{gen}"


def choose_link(rs: ResultSet, link_gbps: Optional[float], profile: Optional[Tuple[str, dict]]) -> Link:
    if link_gbps:
        return Link(link_gbps, "--link-GBps")
    measured = sorted(p.link_gbps for p in rs.points
                      if not p.host and p.policy == "copy-every-iteration" and p.link_gbps > 0)
    if measured:
        mid = measured[len(measured) // 2]
        return Link(mid, f"measured: median transfers.bandwidth_GBps of {len(measured)} copy-every-iteration "
                         f"measurement(s)")
    for space, cal in rs.calibration.items():
        link = cal.get("link_GBps") or {}
        value = link.get("pageable_to_device") or link.get("pinned_to_device")
        if value:
            return Link(float(value), f"calibration of {space} (host->device)")
    if profile:
        name, prof = profile
        return Link(float(prof["link_GBps"]), f"{figures(prof)} figure for {prof['name']} ({prof.get('link', 'host link')})")
    return Link(SEED003_LINK_GBPS, "seed 003's assumption (no device measured, no --link-GBps)")


def _groups(points: List[Point]) -> Dict[Tuple, List[Point]]:
    groups: Dict[Tuple, List[Point]] = {}
    for p in points:
        groups.setdefault((p.case, p.workload, p.variant, p.precision, p.generate), []).append(p)
    return groups


def pinned_copy_prediction(space: str, copying: Dict[int, Point], calibration: Dict[str, dict],
                           host_times: Dict[int, float], measured_pinned: Optional[Dict[int, float]] = None
                           ) -> Optional[dict]:
    """Copying every iteration through pinned host memory, from a measured copy-every-iteration run
    (pageable mirrors) and the calibration probe's pinned link: the measured time with its copy
    phases replaced by the bytes copied over the pinned rate of each direction. A prediction from
    measurements, never one itself."""
    link = (calibration.get(space) or {}).get("link_GBps") or {}
    to_device, to_host = link.get("pinned_to_device"), link.get("pinned_to_host")
    if not copying or not to_device or not to_host:
        return None
    rows = []
    for n, p in sorted(copying.items()):
        rest = max(p.total - p.to_device - p.to_host, 0.0)
        predicted = rest + p.bytes_to_device / (to_device * 1e9) + p.bytes_to_host / (to_host * 1e9)
        rows.append({"size": n, "measured_s": p.total, "measured_copies_s": p.to_device + p.to_host,
                     "bytes_to_device": p.bytes_to_device, "bytes_to_host": p.bytes_to_host,
                     "predicted_s": predicted, "measured_pinned_s": (measured_pinned or {}).get(n)})
    cross = crossover(f"{space} (copying every iteration through pinned memory, predicted)",
                      {r["size"]: r["predicted_s"] for r in rows}, "the best host space (measured)", host_times)
    return {"space": space, "pinned_to_device_GBps": float(to_device), "pinned_to_host_GBps": float(to_host),
            "pageable_to_device_GBps": link.get("pageable_to_device"), "pageable_to_host_GBps": link.get("pageable_to_host"),
            "source": f"calibration of {space}", "rows": rows, "crossover": asdict(cross)}


def pinned_notes(groups: List["GroupAdvice"]) -> List[str]:
    """Where copying every iteration through pinned memory would win (predicted) against the best
    host space at more sizes than the measured copies through pageable mirrors did."""
    notes = []
    for g in groups:
        for pp in g.pinned:
            pinned = Crossover(**pp["crossover"])
            measured = next((c for c in g.crossovers
                             if c.challenger == f"{pp['space']} (copying every iteration)"), None)
            # The sizes won for good: from first_winning on ("always": all of them; "never": none).
            wins = lambda c: 0 if c is None or c.first_winning is None else sum(n >= c.first_winning for n in c.sizes)
            if wins(pinned) <= wins(measured):
                continue
            where = ("at every measured size" if pinned.status == "always"
                     else f"from n = {pinned.first_winning}")
            was = ("it never did" if measured is None or measured.status == "never"
                   else f"only from n = {measured.first_winning}")
            notes.append(f"{g.label}: copying every iteration through pinned host memory would beat the best host "
                         f"space {where} (predicted from the probe's pinned link, "
                         f"{pp['pinned_to_device_GBps']:.3g} GB/s to the device); measured through the pageable "
                         f"mirrors, {was}")
    return notes


def analyse_group(key: Tuple, points: List[Point], link: Link, profile: Optional[Tuple[str, dict]],
                  calibration: Optional[Dict[str, dict]] = None) -> GroupAdvice:
    case, workload, variant, precision, generate = key
    failed = sorted({f"{p.space_label} {p.policy} n={p.size}" for p in points if p.failed})
    good = [p for p in points if not p.failed]
    sizes = sorted({p.size for p in good})
    hosts = host_representative(good)

    best_host: Dict[int, Tuple[float, str]] = {}
    best_host_point: Dict[int, Point] = {}
    for p in hosts:
        if p.size not in best_host or p.total < best_host[p.size][0]:
            best_host[p.size] = (p.total, p.space_label)
            best_host_point[p.size] = p

    device: Dict[str, Dict[str, Dict[int, float]]] = {}
    device_points: Dict[Tuple[str, str, int], Point] = {}
    for p in good:
        if not p.host:
            device.setdefault(p.space, {}).setdefault(p.policy, {})[p.size] = p.total
            device_points[(p.space, p.policy, p.size)] = p

    # The spread (standard deviation over the repetitions) of each median the advice compares.
    stddev: Dict[Tuple[str, int], float] = {}
    for p in hosts:
        stddev[(p.space_label, p.size)] = p.total_stddev
    for (space, policy, n), p in device_points.items():
        stddev[(f"{space} {policy}", n)] = p.total_stddev

    def spread(label: str, other: Dict[int, str]) -> Dict[int, float]:
        return {n: max(stddev.get((label, n), 0.0), stddev.get((o, n), 0.0)) for n, o in other.items()}

    crossovers: List[Crossover] = []
    host_times = {n: t for n, (t, _) in best_host.items()}
    host_label = {n: label for n, (_, label) in best_host.items()}
    for space, policies in sorted(device.items()):
        if "all-resident" in policies:
            crossovers.append(crossover(f"{space} (data resident)", policies["all-resident"], "the best host space",
                                        host_times, spread(f"{space} all-resident", host_label)))
        if "copy-every-iteration-pinned" in policies:
            crossovers.append(crossover(f"{space} (copying every iteration, pinned mirrors)",
                                        policies["copy-every-iteration-pinned"], "the best host space", host_times,
                                        spread(f"{space} copy-every-iteration-pinned", host_label)))
        if "copy-every-iteration" in policies:
            crossovers.append(crossover(f"{space} (copying every iteration)", policies["copy-every-iteration"],
                                        "the best host space", host_times,
                                        spread(f"{space} copy-every-iteration", host_label)))

    # Serial against the parallel host spaces, each at its best thread count per size.
    serial = {p.size: p.total for p in hosts if p.space == "serial"}
    parallel: Dict[str, Dict[int, float]] = {}
    parallel_label: Dict[str, Dict[int, str]] = {}
    threads: Dict[str, Dict[int, Dict[int, float]]] = {}
    for p in hosts:
        if p.space == "serial":
            continue
        per = parallel.setdefault(p.space, {})
        if p.total < per.get(p.size, math.inf):
            per[p.size] = p.total
            parallel_label.setdefault(p.space, {})[p.size] = p.space_label
        threads.setdefault(p.space, {}).setdefault(p.size, {})[p.threads or 0] = p.total
    for space, times in sorted(parallel.items()):
        if serial:
            counts = sorted({t for per_size in threads[space].values() for t in per_size})
            label = f"{space} ({'/'.join(map(str, counts))} threads, best per size)" if len(counts) > 1 \
                else f"{space} ({counts[0]} threads)"
            noise = {n: max(stddev.get(("serial", n), 0.0), stddev.get((lab, n), 0.0))
                     for n, lab in parallel_label[space].items()}
            crossovers.append(crossover(label, times, "serial", serial, noise))

    thread_notes: List[str] = []
    for space, per_size in sorted(threads.items()):
        swept = {n: t for n, t in per_size.items() if len(t) > 1}
        if not swept:
            continue
        n = max(swept)
        counts = sorted(swept[n])
        base = swept[n][counts[0]]
        best = min(counts, key=lambda c: swept[n][c])
        speedups = ", ".join(f"{c}: {base / swept[n][c]:.2f}x" for c in counts)
        thread_notes.append(f"{space} at n = {n}: speedup over {counts[0]} thread(s) {speedups}; fastest with {best} "
                            f"threads (parallel efficiency {base / swept[n][best] * counts[0] / best:.0%})")
        best_by_size = ", ".join(f"n={m}: {min(t, key=lambda c: t[c])}" for m, t in sorted(swept.items()))
        thread_notes.append(f"{space} fastest thread count per size: {best_by_size}")

    cores: List[str] = []
    for space, policies in sorted(device.items()):
        resident = policies.get("all-resident", {})
        one_core, one_core_label = serial, "serial"
        if not set(resident) & set(serial):
            # A thread sweep's 1-thread run measures one core as a Serial run does (the GPU run's
            # advise step sweeps OpenMP 1, 2, 4, ... threads and runs no Serial).
            for hspace, per_size in sorted(threads.items()):
                ones = {n: counts[1] for n, counts in per_size.items() if 1 in counts}
                if set(resident) & set(ones):
                    one_core, one_core_label = ones, f"{hspace} with 1 thread"
                    break
        common = sorted(set(resident) & set(one_core))
        if not common:
            # No Serial run to measure one core: extrapolate from the fastest parallel host run.
            # c threads taking r times as long as the device: one core would take at most c * r
            # times as long (parallel efficiency is at most 1), so the device does the work of at
            # most c * r cores.
            runs = [(hspace, n, c, t) for hspace, per_size in sorted(threads.items()) for n, counts in per_size.items()
                    if n in resident for c, t in counts.items() if c > 0]
            if runs:
                n = max(r[1] for r in runs)
                hspace, _, c, t = min((r for r in runs if r[1] == n), key=lambda r: r[3])
                cores.append(f"at n = {n}, one {space} device (data resident) does the work of at most "
                             f"{c * t / resident[n]:.0f} serial cores, extrapolated: {hspace} with {c} threads took "
                             f"{t / resident[n]:.2g}x as long as the device, and below perfect scaling the true "
                             "figure is smaller (no Serial run measured one core)")
            continue
        n = common[-1]
        ratio = one_core[n] / resident[n]
        if one_core_label == "serial":
            line = (f"at n = {n}, one {space} device (data resident) does the work of {ratio:.1f} serial cores at "
                    f"perfect scaling")
        else:
            line = (f"at n = {n}, one {space} device (data resident) does the work of {ratio:.1f} cores at perfect "
                    f"scaling (one core measured as {one_core_label})")
        for hspace, per_size in sorted(threads.items()):
            counts = per_size.get(n, {})
            enough = sorted(c for c, t in counts.items() if t <= resident[n])
            if enough:
                line += f"; {hspace} matches it with {enough[0]} threads (measured)"
            elif counts:
                line += f"; {hspace} at {max(counts)} threads is still {counts[max(counts)] / resident[n]:.1f}x slower"
        cores.append(line)

    amortisation = None
    if sizes and best_host_point:
        n = max(best_host_point)
        hp = best_host_point[n]
        s = VALUE_BYTES.get(precision, 8)
        host_rate = hp.gflops * 1e9
        # The device's compute rate (work.GFLOPs: flops over the median compute phase, copies
        # excluded) from the first policy measured at n: resident data first, else the compute
        # phase of a policy that copies (a sweep may have run copy-every-iteration only).
        dev, dev_policy = {}, None
        for pol in ("all-resident", "inputs-resident", "copy-every-iteration"):
            dev = {sp: device_points.get((sp, pol, n)) for sp in device}
            dev = {sp: p for sp, p in dev.items() if p and p.gflops > 0}
            if dev:
                dev_policy = pol
                break
        if dev:
            space, dp = max(dev.items(), key=lambda kv: kv[1].gflops)
            where = "data resident" if dev_policy == "all-resident" else f"compute phase of {dev_policy}"
            device_rate, device_source = dp.gflops * 1e9, f"measured on {space} ({where}) at n = {n}"
        elif profile:
            pred = predict(hp, profile[1], link.gbps * 1e9, None)
            device_rate = hp.flops / pred.resident_s if pred.resident_s > 0 else math.inf
            device_source = f"PREDICTED for {profile[1]['name']} (roofline at {figures(profile[1])} peaks, n = {n})"
        else:
            device_rate, device_source = math.inf, "no device: an infinitely fast one (the most favourable case)"
        copy_points = [device_points.get((sp, "copy-every-iteration", n)) for sp in device]
        measured_transfer = next((p.transfer_bytes for p in copy_points if p and p.transfer_bytes > 0), None)
        transfer, transfer_source = transfer_bytes_estimate(hp, measured_transfer)
        k_star = amortising_intensity(s, link.gbps * 1e9, host_rate, device_rate) if host_rate > 0 else None
        k = hp.flops / (transfer / s) if transfer > 0 else None
        amortisation = {
            "size": n, "value_bytes": s, "link_GBps": link.gbps, "link_source": link.source,
            "host_GFLOPs": hp.gflops, "host": hp.space_label,
            "device_GFLOPs": None if math.isinf(device_rate) else device_rate * 1e-9, "device_source": device_source,
            "flops_per_iteration": hp.flops, "transfer_bytes_per_iteration": transfer,
            "transfer_bytes_source": transfer_source,
            "amortising_flops_per_value": k_star, "workload_flops_per_value": k,
            "amortises": None if k is None or k_star is None else k >= k_star,
        }

    prediction = None
    if profile and best_host_point:
        name, prof = profile
        rows = []
        for n in sorted(best_host_point):
            hp = best_host_point[n]
            measured_transfer = next((device_points[(sp, "copy-every-iteration", n)].transfer_bytes for sp in device
                                      if (sp, "copy-every-iteration", n) in device_points), None)
            pr = predict(hp, prof, link.gbps * 1e9, measured_transfer)
            for sp in device:
                if (sp, "all-resident", n) in device_points:
                    pr.measured_resident_s = device_points[(sp, "all-resident", n)].total
                if (sp, "copy-every-iteration", n) in device_points:
                    pr.measured_copy_s = device_points[(sp, "copy-every-iteration", n)].total
            rows.append(pr)
        host_t = {r.size: r.best_host_s for r in rows}
        prediction = {
            "device": name, "profile": prof, "link_GBps": link.gbps, "link_source": link.source,
            "rows": [asdict(r) for r in rows],
            "model_check": model_check(rows),
            "crossovers": [asdict(crossover(f"{name} (data resident, predicted)", {r.size: r.resident_s for r in rows},
                                            "the best host space (measured)", host_t)),
                           asdict(crossover(f"{name} (copying every iteration, predicted)",
                                            {r.size: r.copy_every_iteration_s for r in rows},
                                            "the best host space (measured)", host_t))],
        }

    pinned = []
    for space in sorted(device):
        copying = {n: device_points[(space, "copy-every-iteration", n)] for n in device[space].get("copy-every-iteration", {})}
        pr = pinned_copy_prediction(space, copying, calibration or {}, host_times,
                                    device[space].get("copy-every-iteration-pinned"))
        if pr:
            pinned.append(pr)

    return GroupAdvice(case=case, workload=workload, variant=variant, precision=precision, generate=generate,
                       sizes=sizes, failed=failed, best_host=best_host, device=device, crossovers=crossovers,
                       pinned=pinned,
                       host_times={lab: {p.size: p.total for p in hosts if p.space_label == lab}
                                   for lab in sorted({p.space_label for p in hosts})},
                       threads=threads, thread_notes=thread_notes, cores_matching_device=cores,
                       amortisation=amortisation, prediction=prediction, stddev=stddev)


# ---------------------------------------------------------------------------------------------
# Recommendation per case


def _fmt_sizes(lo: int, hi: int, first: bool, last: bool) -> str:
    if first and last:
        return f"n = {lo}..{hi}" if lo != hi else f"n = {lo}"
    if first:
        return f"n <= {hi}"
    if last:
        return f"n >= {lo}"
    return f"n = {lo}..{hi}" if lo != hi else f"n = {lo}"


def same_problem_families(groups: List[GroupAdvice], points: List[Point]) -> List[List[GroupAdvice]]:
    """Variants of one case that solve the same problem, so that the fastest of them can be
    recommended. A case normally is one problem, but some workloads' variants compute different
    things (matrix: elementwise z = x ** y against GEMM): variants whose flops at a common size
    differ by more than MAX_FLOP_RATIO_SAME_PROBLEM are told apart. (Variants that skip work,
    like distance/symmetric's one entry per pair, stay within it.)"""
    flops: Dict[Tuple[str, int], float] = {}
    for p in points:
        if p.case == groups[0].case:
            flops.setdefault((p.variant, p.size), p.flops)
    families: List[List[GroupAdvice]] = []
    for g in groups:
        for family in families:
            head = family[0]
            common = [n for n in g.sizes if n in head.sizes]
            ratios = [max(flops[(g.variant, n)], flops[(head.variant, n)]) /
                      max(min(flops[(g.variant, n)], flops[(head.variant, n)]), 1e-300) for n in common]
            if common and max(ratios) <= MAX_FLOP_RATIO_SAME_PROBLEM:
                family.append(g)
                break
        else:
            families.append([g])
    return families


MAX_FLOP_RATIO_SAME_PROBLEM = 4.0


def recommend(case: str, precision: str, generate: str, groups: List[GroupAdvice], name_variants: bool = False) -> dict:
    """The fastest configuration per measured size over every variant of the case, as size ranges.
    Going up in size, the choice changes only where another configuration wins by more than the
    spread of the two medians (their larger standard deviation): noise does not split a range."""
    candidates: Dict[int, List[Tuple[float, float, str, str, str]]] = {}  # n -> (s, stddev, variant, where, kind)
    copy_vs_host: Dict[str, Dict[int, Tuple[float, float]]] = {}
    pinned_vs_host: Dict[str, Dict[int, Tuple[float, float]]] = {}
    for g in groups:
        for label, times in g.host_times.items():
            for n, t in times.items():
                candidates.setdefault(n, []).append((t, g.stddev.get((label, n), 0.0), g.variant, label, "host"))
        for space, policies in g.device.items():
            for n, t in policies.get("all-resident", {}).items():
                candidates.setdefault(n, []).append((t, g.stddev.get((f"{space} all-resident", n), 0.0), g.variant,
                                                     space, "device"))
            for policy, table in (("copy-every-iteration", copy_vs_host), ("copy-every-iteration-pinned", pinned_vs_host)):
                for n, t in policies.get(policy, {}).items():
                    if n in g.best_host:
                        prev = table.setdefault(space, {}).get(n)
                        if prev is None or t < prev[0]:
                            table[space][n] = (t, g.best_host[n][0])
    winners: Dict[int, Tuple[float, str, str, str]] = {}   # n -> (seconds, variant, where, kind)
    previous = None
    for n in sorted(candidates):
        best = min(candidates[n], key=lambda c: c[0])
        choice = best
        if previous:
            same = [c for c in candidates[n] if c[2:] == previous]
            if same and same[0][0] - best[0] <= max(same[0][1], best[1]):
                choice = same[0]
        winners[n] = (choice[0],) + choice[2:]
        previous = choice[2:]
    sizes = sorted(winners)
    ranges: List[Tuple[int, int, Tuple[str, str, str]]] = []
    for n in sizes:
        who = winners[n][1:]
        if ranges and ranges[-1][2] == who:
            ranges[-1] = (ranges[-1][0], n, who)
        else:
            ranges.append((n, n, who))
    parts = []
    for i, (lo, hi, (variant, where, kind)) in enumerate(ranges):
        text = f"{_fmt_sizes(lo, hi, i == 0, i == len(ranges) - 1)}: {where}, {variant}"
        if kind == "device":
            copies = copy_vs_host.get(where, {})
            pays = sorted(m for m, (tc, th) in copies.items() if tc < th and lo <= m <= hi)
            if not copies:
                text += ", data resident (copying every iteration not measured)"
            elif not pays:
                text += ", data resident only (copying every iteration loses to the host here)"
            else:
                text += f", data resident (copying every iteration also pays at n = {', '.join(map(str, pays))})"
            pinned = {m: v for m, v in pinned_vs_host.get(where, {}).items() if lo <= m <= hi}
            if pinned:
                pays = sorted(m for m, (tc, th) in pinned.items() if tc < th)
                text += (f"; through pinned mirrors copying pays at n = {', '.join(map(str, pays))}" if pays
                         else "; through pinned mirrors copying still loses")
        parts.append(text)
    has_device = any(g.device for g in groups)
    if not has_device:
        parts.append("no device space measured")
    gen = "" if generate == "host" else f", inputs generated on {generate}"
    which = f" [{', '.join(g.variant for g in groups)}]" if name_variants else ""
    line = f"{case}{which} ({groups[0].workload}, {precision}{gen}): " + "; ".join(parts)
    return {"case": case, "workload": groups[0].workload, "precision": precision, "generate": generate,
            "variants": [g.variant for g in groups],
            "ranges": [{"from": lo, "to": hi, "variant": v, "where": w, "kind": k} for lo, hi, (v, w, k) in ranges],
            "text": line}


# ---------------------------------------------------------------------------------------------
# Whole result set


@dataclass
class Advice:
    link: Link
    profile: Optional[Tuple[str, dict]]
    groups: List[GroupAdvice]
    recommendations: List[dict]
    notes: List[str]
    calibration: Dict[str, dict]
    profile_source: str = ""
    model_check: Optional[dict] = None  # model_check_summary(groups), set once by analyse()

    def to_json(self) -> dict:
        def crossovers(g):
            return [dict(asdict(c), text=c.text()) for c in g.crossovers]
        return {
            "schema": "kokkos-miniapp-advice/1",
            "link": asdict(self.link),
            "assumed_device": None if not self.profile else {"name": self.profile[0], **self.profile[1]},
            "assumed_device_source": self.profile_source,
            "model_check": self.model_check,
            "calibration": "present" if self.calibration else "missing",
            "recommendations": self.recommendations,
            "groups": [{
                "case": g.case, "workload": g.workload, "variant": g.variant, "precision": g.precision,
                "generate": g.generate, "sizes": g.sizes, "failed_verification": g.failed,
                "best_host": {str(n): {"seconds": t, "space": s} for n, (t, s) in sorted(g.best_host.items())},
                "device": {sp: {pol: {str(n): t for n, t in sorted(ts.items())} for pol, ts in pols.items()}
                           for sp, pols in g.device.items()},
                "crossovers": crossovers(g),
                "threads": {sp: {str(n): {str(c): t for c, t in sorted(ts.items())} for n, ts in sorted(per.items())}
                            for sp, per in g.threads.items()},
                "thread_notes": g.thread_notes, "cores_matching_device": g.cores_matching_device,
                "amortisation": g.amortisation, "prediction": g.prediction, "pinned_copy_prediction": g.pinned,
            } for g in self.groups],
            "notes": self.notes,
        }


def model_check_summary(groups: List[GroupAdvice], device: str) -> Optional[dict]:
    """Measured over predicted, per policy, over every group and size where both exist."""
    checks = [dict(c, group=g.label) for g in groups if g.prediction for c in g.prediction["model_check"]]
    if not checks:
        return None
    summary = {"device": device}
    for policy in ("all-resident", "copy-every-iteration"):
        mine = sorted((c for c in checks if c["policy"] == policy), key=lambda c: c["measured_over_predicted"])
        if mine:
            summary[policy] = {
                "points": len(mine), "groups": len({c["group"] for c in mine}),
                "median": mine[len(mine) // 2]["measured_over_predicted"],
                "lowest": mine[0], "highest": mine[-1],
                "faster_than_predicted": [c for c in mine if c["measured_over_predicted"] < 1],
            }
    return summary


def analyse(rs: ResultSet, profile: Optional[Tuple[str, dict]] = None, link_gbps: Optional[float] = None,
            profile_source: str = "") -> Advice:
    link = choose_link(rs, link_gbps, profile)
    groups = [analyse_group(k, pts, link, profile, rs.calibration) for k, pts in sorted(_groups(rs.points).items())]
    by_case: Dict[Tuple[str, str, str], List[GroupAdvice]] = {}
    for g in groups:
        by_case.setdefault((g.case, g.precision, g.generate), []).append(g)
    recs = []
    for (c, prec, gen), gs in sorted(by_case.items(), key=lambda kv: kv[0]):
        families = same_problem_families(gs, rs.points)
        recs += [recommend(c, prec, gen, family, len(families) > 1) for family in families]
    notes = []
    if rs.duplicates:
        notes.append(f"{len(rs.duplicates)} measurement(s) appear in more than one results file (Serial runs in every "
                     "run of a thread sweep, for one); the first read is used, e.g. " + "; ".join(rs.duplicates[:3]))
    if not rs.calibration:
        notes.append("no calibration in these results (made with --no-calibrate, or by an older mini-app): no "
                     "roofline, and the link bandwidth cannot come from the probe")
    single = [g.label for g in groups if len(g.sizes) == 1]
    if single:
        notes.append("measured at one size only, so no crossover can be located: " + "; ".join(single))
    summary = model_check_summary(groups, profile[0]) if profile else None
    if summary:
        for policy, what in (("all-resident", "data resident"), ("copy-every-iteration", "copying every iteration")):
            m = summary.get(policy)
            if not m:
                continue
            low, high = m["lowest"], m["highest"]
            line = (f"the {profile[0]} prediction against the device's measurements, {what}: measured/predicted "
                    f"median {m['median']:.3g}x over {m['points']} size(s) in {m['groups']} group(s); lowest "
                    f"{low['measured_over_predicted']:.3g}x ({low['group']}, n = {low['size']}), highest "
                    f"{high['measured_over_predicted']:.3g}x ({high['group']}, n = {high['size']})")
            faster = m["faster_than_predicted"]
            if faster:
                line += (f"; faster than predicted at {len(faster)} size(s) ({FASTER_THAN_PREDICTED[policy]}"
                         + (f", {link.gbps:.4g} GB/s" if policy == "copy-every-iteration" else "") + "), e.g. "
                         + "; ".join(f"{c['group']} n = {c['size']}" for c in faster[:3]))
            notes.append(line)
    elif profile_source and not profile:
        notes.append(profile_source)
    notes += pinned_notes(groups)
    return Advice(link=link, profile=profile, groups=groups, recommendations=recs, notes=notes,
                  calibration=rs.calibration, profile_source=profile_source, model_check=summary)


def require_size_sweep(advice: Advice) -> None:
    """`miniapp advise` needs at least one group with two sizes; otherwise there is nothing to advise."""
    if all(len(g.sizes) < 2 for g in advice.groups):
        sizes = sorted({n for g in advice.groups for n in g.sizes})
        raise InputError("every case was measured at one size only (n = " + ", ".join(map(str, sizes)) +
                         "): a crossover needs a size sweep; give the case several sizes, e.g. "
                         "sizes: {from: 64, to: 4096, factor: 2}")


# ---------------------------------------------------------------------------------------------
# Text


def _spread_out(sizes: List[int], most: int = 8) -> List[int]:
    """At most `most` of the sizes, evenly spread, the first and the last included."""
    if len(sizes) <= most:
        return sizes
    return sorted({sizes[round(i * (len(sizes) - 1) / (most - 1))] for i in range(most)})


def _s(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def to_text(advice: Advice, rs: ResultSet) -> str:
    out = []
    w = out.append
    hosts = sorted({(s.doc.get("provenance", {}).get("hostname", "?"), s.doc.get("provenance", {}).get("cpu_model", "?"))
                    for s in rs.sources})
    w("miniapp advise: " + ", ".join(sorted({s.directory for s in rs.sources})))
    for h, cpu in hosts:
        w(f"  measured on {h} ({cpu})")
    w("")
    w("Recommendation (fastest measured configuration per size; measurements only):")
    for r in advice.recommendations:
        w("  " + r["text"])
    w("")
    w(f"Link bandwidth used: {advice.link.gbps:.4g} GB/s ({advice.link.source})")
    if advice.profile and advice.profile_source:
        w(f"Predictions for {advice.profile[1]['name']}: {advice.profile_source}")
    w("Seed 003's worked example: 15 GB/s link, 1 TFLOP/s device, 1 GFLOP/s host, float64 values: copies pay from "
      f"{amortising_intensity(8, 15e9, 1e9, 1e12):.2f} flops per transferred value")
    for g in advice.groups:
        w("")
        w(f"== {g.label} ({len(g.sizes)} size{'s' if len(g.sizes) != 1 else ''}: n = {sizes_text(g.sizes, g.sizes)})")
        if g.failed:
            w(f"  left out (verification failed): {'; '.join(g.failed)}")
        shown = _spread_out(sorted(g.best_host))
        more = "" if len(shown) == len(g.best_host) else f" ({len(shown)} of {len(g.best_host)} sizes; all in advice.json)"
        host = ", ".join(f"n={n}: {g.best_host[n][1]} {_s(g.best_host[n][0])}" for n in shown)
        if host:
            w(f"  best host per size{more}: {host}")
        for space, pols in sorted(g.device.items()):
            for pol, ts in sorted(pols.items()):
                w(f"  {space} {pol}: " + ", ".join(f"n={n}: {_s(ts[n])}" for n in _spread_out(sorted(ts))))
        if not g.device:
            w("  no device space measured: the crossover against a device cannot be measured here"
              + (" (see the prediction below)" if advice.profile else " (--assume-device H100|A100|MI250X predicts one)"))
        for c in g.crossovers:
            w("  " + c.text())
        for line in g.thread_notes + g.cores_matching_device:
            w("  " + line)
        a = g.amortisation
        if a:
            k_star = a["amortising_flops_per_value"]
            k = a["workload_flops_per_value"]
            dev = "inf" if a["device_GFLOPs"] is None else f"{a['device_GFLOPs']:.4g}"
            w(f"  transfers (seed 003) at n = {a['size']}: {a['value_bytes']}-byte values, link {a['link_GBps']:.4g} GB/s,"
              f" host {a['host_GFLOPs']:.4g} GFLOP/s ({a['host']}), device {dev} GFLOP/s ({a['device_source']})")
            if k_star is None:
                w("    the device computes no faster than the host: copying every iteration never pays")
            else:
                verdict = "" if k is None else (
                    f"; this workload does {k:.4g} flops per transferred value "
                    f"({a['flops_per_iteration']:.4g} flops over {a['transfer_bytes_per_iteration']:.4g} bytes, "
                    f"{a['transfer_bytes_source']}): " +
                    (("copies amortise" if a["amortises"] else "copies do not amortise; keep the data resident")
                     if a["device_GFLOPs"] is not None else
                     ("copies could pay on a device fast enough" if a["amortises"] else
                      "copies cannot pay even on an infinitely fast device; keep the data resident")))
                w(f"    copies pay from k* = {k_star:.4g} flops per transferred value{verdict}")
        for pp in g.pinned:
            pageable = ""
            if pp["pageable_to_device_GBps"] and pp["pageable_to_host_GBps"]:
                pageable = (f"; the measured copies went through pageable mirrors, probed at "
                            f"{pp['pageable_to_device_GBps']:.4g} / {pp['pageable_to_host_GBps']:.4g} GB/s")
            w(f"  PREDICTION, {pp['space']} copying every iteration through pinned host memory (not a measurement): "
              f"the measured copy-every-iteration times with their copies at the pinned link that the calibration "
              f"probe measured, {pp['pinned_to_device_GBps']:.4g} GB/s to the device and "
              f"{pp['pinned_to_host_GBps']:.4g} GB/s back" + pageable)
            cross = Crossover(**pp["crossover"])
            keep = set(_spread_out([r["size"] for r in pp["rows"]]))
            keep.update(n for n in (cross.last_losing, cross.first_winning) if n is not None)
            w("    " + ", ".join(f"n={r['size']}: measured {_s(r['measured_s'])} (copies {_s(r['measured_copies_s'])}), "
                                 f"predicted {_s(r['predicted_s'])}"
                                 + (f", measured through pinned mirrors {_s(r['measured_pinned_s'])}"
                                    if r.get("measured_pinned_s") else "")
                                 for r in pp["rows"] if r["size"] in keep))
            w("    " + cross.text())
        pr = g.prediction
        if pr:
            prof = pr["profile"]
            rows = pr["rows"]
            sources = ["launches: " + "/".join(sorted({r["launches_source"] for r in rows})),
                       "bytes copied: " + "/".join(sorted({r["transfer_bytes_source"] for r in rows}))]
            w(f"  PREDICTION for {prof['name']} (not a measurement): roofline at the {figures(prof)} "
              f"{prof['peak_GFLOPs'][g.precision]:.4g} GFLOP/s {g.precision} and {prof['memory_GBps']:.4g} GB/s, "
              f"link {pr['link_GBps']:.4g} GB/s, {prof['launch_latency_us']} us per launch; "
              + "; ".join(sources))
            keep = set(_spread_out([r["size"] for r in rows]))
            for c in pr["crossovers"]:
                keep.update(n for n in (c["last_losing"], c["first_winning"]) if n is not None)
            if len(keep) < len(rows):
                w(f"    ({len(keep)} of {len(rows)} sizes shown, those around the crossings included; all in advice.json)")
            for r in (r for r in rows if r["size"] in keep):
                # The device's own measurements at this size, whichever policies were run, so the
                # model can be judged (a sweep may have measured only copy-every-iteration).
                seen = [f"{label} {_s(r[key])}" for label, key in (("resident", "measured_resident_s"),
                                                                    ("copying", "measured_copy_s"))
                        if r[key] is not None]
                measured = "; measured on the device: " + ", ".join(seen) if seen else ""
                w(f"    n={r['size']}: predicted resident {_s(r['resident_s'])}, copying every iteration "
                  f"{_s(r['copy_every_iteration_s'])} ({r['transfer_bytes']:.4g} B, {r['launches']} launch(es)); "
                  f"measured best host {_s(r['best_host_s'])} ({r['best_host']}){measured}")
            for c in pr["crossovers"]:
                w("    " + Crossover(**c).text())
            for line in model_check_lines(pr["model_check"]):
                w(f"    model check, measured / predicted: {line}")
    if advice.notes:
        w("")
        w("Notes:")
        for n in advice.notes:
            w("  " + n)
    return "\n".join(out) + "\n"
