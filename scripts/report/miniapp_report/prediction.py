"""Transfers and predictions: the link bandwidth the advice uses, when copies amortise (seed 003),
the roofline prediction of a device from a profile, the model check of that prediction against
the device's measurements, and copying through pinned memory predicted from the calibration probe.

transfers amortise (seed 003): copying one value of s bytes over a link of L bytes/s costs s/L;
computing k flops on it saves k (1/F_host - 1/F_device) seconds. Copies pay from
k* = s / (L (1/F_host - 1/F_device)) flops per transferred value. Seed 003's own figures
(15 GB/s link, 1 TFLOP/s GPU, 1 GFLOP/s CPU, float64) give k* = 0.53.
"""

import math
from dataclasses import dataclass, asdict
from typing import Dict, List, Optional, Tuple

from .crossover import crossover
from .devices import figures
from .names import Policy
from .results import Calibration, Point, ResultSet

SEED003_LINK_GBPS = 15.0
VALUE_BYTES = {"float32": 4, "float64": 8}


def amortising_intensity(value_bytes: float, link_bytes_per_s: float, host_flops_per_s: float,
                         device_flops_per_s: float) -> Optional[float]:
    """Flops per transferred value from which copying to the device pays; None if it never does
    (the device computes no faster than the host). device_flops_per_s may be math.inf."""
    saving_per_flop = 1.0 / host_flops_per_s - (0.0 if math.isinf(device_flops_per_s) else 1.0 / device_flops_per_s)
    if saving_per_flop <= 0:
        return None
    return value_bytes / (link_bytes_per_s * saving_per_flop)


@dataclass
class Link:
    gbps: float
    source: str


def choose_link(rs: ResultSet, link_gbps: Optional[float], profile: Optional[Tuple[str, dict]]) -> Link:
    if link_gbps:
        return Link(link_gbps, "--link-GBps")
    measured = sorted(p.link_gbps for p in rs.points
                      if not p.host and p.policy == Policy.COPY_EVERY_ITERATION and p.link_gbps > 0)
    if measured:
        mid = measured[len(measured) // 2]
        return Link(mid, f"measured: median transfers.bandwidth_GBps of {len(measured)} copy-every-iteration "
                         f"measurement(s)")
    for space, cal in rs.calibration.items():
        value = cal.link_GBps.get("pageable_to_device") or cal.link_GBps.get("pinned_to_device")
        if value:
            return Link(float(value), f"calibration of {space} (host->device)")
    if profile:
        name, prof = profile
        return Link(float(prof["link_GBps"]), f"{figures(prof)} figure for {prof['name']} ({prof.get('link', 'host link')})")
    return Link(SEED003_LINK_GBPS, "seed 003's assumption (no device measured, no --link-GBps)")


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
        for policy, measured, predicted in ((Policy.ALL_RESIDENT, r.measured_resident_s, r.resident_s),
                                            (Policy.COPY_EVERY_ITERATION, r.measured_copy_s,
                                             r.copy_every_iteration_s)):
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
    for policy, what in ((Policy.ALL_RESIDENT, "resident"), (Policy.COPY_EVERY_ITERATION, "copying every iteration")):
        ratios = [(c["measured_over_predicted"], c["size"]) for c in checks if c["policy"] == policy]
        if ratios:
            below = [n for r, n in ratios if r < 1]
            shown = ", ".join(map(str, below[:6])) + (", ..." if len(below) > 6 else "")
            lines.append(f"{what} {_ratio_text(ratios)}" +
                         (f"; faster than predicted at {len(below)} of {len(ratios)} sizes (n = {shown}): "
                          + FASTER_THAN_PREDICTED[policy] if below else ""))
    return lines


FASTER_THAN_PREDICTED = {
    Policy.ALL_RESIDENT: "the device beat its roofline bound, so the profile's figures or the workload's counted "
                    "flops and bytes are off",
    Policy.COPY_EVERY_ITERATION: "its copies ran faster than the link bandwidth used",
}



# ---------------------------------------------------------------------------------------------
# The predictive parts of one group's advice (group.analyse_group)

Devices = Dict[str, Dict[str, Dict[int, float]]]       # space -> policy -> n -> seconds
DevicePoints = Dict[Tuple[str, str, int], Point]      # (space, policy, n) -> measurement


def _device_rate(n: int, device: Devices, device_points: DevicePoints) -> Tuple[Optional[Point], str, str]:
    """The fastest device's measurement at n whose compute rate (work.GFLOPs: flops over the median
    compute phase, copies excluded) counts: resident data first, else the compute phase of a policy
    that copies (a sweep may have run copy-every-iteration only); (None, "", "") without one."""
    for pol in (Policy.ALL_RESIDENT, Policy.INPUTS_RESIDENT, Policy.COPY_EVERY_ITERATION):
        dev = {sp: device_points.get((sp, pol, n)) for sp in device}
        dev = {sp: p for sp, p in dev.items() if p and p.gflops > 0}
        if dev:
            space, dp = max(dev.items(), key=lambda kv: kv[1].gflops)
            return dp, space, pol
    return None, "", ""


def amortisation(precision: str, best_host_point: Dict[int, Point], device: Devices, device_points: DevicePoints,
                 link: Link, profile: Optional[Tuple[str, dict]]) -> dict:
    """Seed 003's test at the largest size: the flops per transferred value from which copies pay,
    against those the workload does, with the device's measured compute rate (else the profile's
    prediction, else an infinitely fast device)."""
    n = max(best_host_point)
    hp = best_host_point[n]
    s = VALUE_BYTES.get(precision, 8)
    host_rate = hp.gflops * 1e9
    dp, space, dev_policy = _device_rate(n, device, device_points)
    if dp:
        where = "data resident" if dev_policy == Policy.ALL_RESIDENT else f"compute phase of {dev_policy}"
        device_rate, device_source = dp.gflops * 1e9, f"measured on {space} ({where}) at n = {n}"
    elif profile:
        pred = predict(hp, profile[1], link.gbps * 1e9, None)
        device_rate = hp.flops / pred.resident_s if pred.resident_s > 0 else math.inf
        device_source = f"PREDICTED for {profile[1]['name']} (roofline at {figures(profile[1])} peaks, n = {n})"
    else:
        device_rate, device_source = math.inf, "no device: an infinitely fast one (the most favourable case)"
    copy_points = [device_points.get((sp, Policy.COPY_EVERY_ITERATION, n)) for sp in device]
    measured_transfer = next((p.transfer_bytes for p in copy_points if p and p.transfer_bytes > 0), None)
    transfer, transfer_source = transfer_bytes_estimate(hp, measured_transfer)
    k_star = amortising_intensity(s, link.gbps * 1e9, host_rate, device_rate) if host_rate > 0 else None
    k = hp.flops / (transfer / s) if transfer > 0 else None
    return {
        "size": n, "value_bytes": s, "link_GBps": link.gbps, "link_source": link.source,
        "host_GFLOPs": hp.gflops, "host": hp.space_label,
        "device_GFLOPs": None if math.isinf(device_rate) else device_rate * 1e-9, "device_source": device_source,
        "flops_per_iteration": hp.flops, "transfer_bytes_per_iteration": transfer,
        "transfer_bytes_source": transfer_source,
        "amortising_flops_per_value": k_star, "workload_flops_per_value": k,
        "amortises": None if k is None or k_star is None else k >= k_star,
    }


def roofline_prediction(best_host_point: Dict[int, Point], device: Devices, device_points: DevicePoints,
                        link: Link, profile: Tuple[str, dict]) -> dict:
    """The profile's device on the work of the best host measurement at each size, next to the
    device's own measurements where there are any, and the predicted crossovers."""
    name, prof = profile
    rows = []
    for n in sorted(best_host_point):
        hp = best_host_point[n]
        measured_transfer = next((device_points[(sp, Policy.COPY_EVERY_ITERATION, n)].transfer_bytes for sp in device
                                  if (sp, Policy.COPY_EVERY_ITERATION, n) in device_points), None)
        pr = predict(hp, prof, link.gbps * 1e9, measured_transfer)
        for sp in device:
            if (sp, Policy.ALL_RESIDENT, n) in device_points:
                pr.measured_resident_s = device_points[(sp, Policy.ALL_RESIDENT, n)].total
            if (sp, Policy.COPY_EVERY_ITERATION, n) in device_points:
                pr.measured_copy_s = device_points[(sp, Policy.COPY_EVERY_ITERATION, n)].total
        rows.append(pr)
    host_t = {r.size: r.best_host_s for r in rows}
    return {
        "device": name, "profile": prof, "link_GBps": link.gbps, "link_source": link.source,
        "rows": [asdict(r) for r in rows],
        "model_check": model_check(rows),
        "crossovers": [asdict(crossover(f"{name} (data resident, predicted)", {r.size: r.resident_s for r in rows},
                                        "the best host space (measured)", host_t)),
                       asdict(crossover(f"{name} (copying every iteration, predicted)",
                                        {r.size: r.copy_every_iteration_s for r in rows},
                                        "the best host space (measured)", host_t))],
    }


def pinned_copy_prediction(space: str, copying: Dict[int, Point], calibration: Dict[str, Calibration],
                           host_times: Dict[int, float], measured_pinned: Optional[Dict[int, float]] = None
                           ) -> Optional[dict]:
    """Copying every iteration through pinned host memory, from a measured copy-every-iteration run
    (pageable mirrors) and the calibration probe's pinned link: the measured time with its copy
    phases replaced by the bytes copied over the pinned rate of each direction. A prediction from
    measurements, never one itself."""
    cal = calibration.get(space)
    link = cal.link_GBps if cal else {}
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


def pinned_predictions(device: Devices, device_points: DevicePoints, calibration: Dict[str, Calibration],
                       host_times: Dict[int, float]) -> List[dict]:
    """pinned_copy_prediction for every device space of the group that has one."""
    pinned = []
    for space in sorted(device):
        copying = {n: device_points[(space, Policy.COPY_EVERY_ITERATION, n)]
                   for n in device[space].get(Policy.COPY_EVERY_ITERATION, {})}
        pr = pinned_copy_prediction(space, copying, calibration, host_times,
                                    device[space].get(Policy.COPY_EVERY_ITERATION_PINNED))
        if pr:
            pinned.append(pr)
    return pinned
