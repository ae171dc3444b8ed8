"""One group's advice: a case's variant at one precision and input location, over its sizes. From
the measured medians: the best host space per size, the device series, the crossovers (device
against the best host, parallel host spaces against Serial), the host thread counts and how many
cores one device matches; then the predictive parts (prediction.py)."""

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .crossover import Crossover, crossover
from .names import Policy, Space
from .prediction import DevicePoints, Devices, Link, amortisation, pinned_predictions, roofline_prediction
from .results import Calibration, Point, host_representative

Threads = Dict[str, Dict[int, Dict[int, float]]]      # host space -> n -> threads -> seconds
Spreads = Dict[Tuple[str, int], float]                # (series label, n) -> spread of its median


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
    device: Devices                                   # space -> policy -> n -> seconds
    crossovers: List[Crossover]
    threads: Threads                                  # host space -> n -> threads -> seconds
    thread_notes: List[str]
    cores_matching_device: List[str]
    amortisation: Optional[dict]
    prediction: Optional[dict]
    pinned: List[dict] = field(default_factory=list)  # per device space: copying through pinned memory, predicted
    stddev: Spreads = field(default_factory=dict)     # (series, n) -> spread of its median

    @property
    def label(self) -> str:
        gen = "" if self.generate == "host" else f", inputs generated on {self.generate}"
        return f"{self.case} / {self.variant} / {self.precision}{gen}"


def groups_of(points: List[Point]) -> Dict[Tuple, List[Point]]:
    """(case, workload, variant, precision, generate) -> its measurements."""
    groups: Dict[Tuple, List[Point]] = {}
    for p in points:
        groups.setdefault((p.case, p.workload, p.variant, p.precision, p.generate), []).append(p)
    return groups


def analyse_group(key: Tuple, points: List[Point], link: Link, profile: Optional[Tuple[str, dict]],
                  calibration: Optional[Dict[str, Calibration]] = None) -> GroupAdvice:
    case, workload, variant, precision, generate = key
    failed = sorted({f"{p.space_label} {p.policy} n={p.size}" for p in points if p.failed})
    good = [p for p in points if not p.failed]
    sizes = sorted({p.size for p in good})
    hosts = host_representative(good)
    best_host, best_host_point = best_host_per_size(hosts)
    device, device_points = device_series(good)
    stddev = spreads(hosts, device_points)
    host_times = {n: t for n, (t, _) in best_host.items()}
    serial = {p.size: p.total for p in hosts if p.space == Space.SERIAL and p.ranks == 1}
    parallel, parallel_label, threads = parallel_host_times(hosts)
    crossovers = (device_crossovers(device, best_host, stddev)
                  + host_crossovers(serial, parallel, parallel_label, threads, stddev))
    return GroupAdvice(
        case=case, workload=workload, variant=variant, precision=precision, generate=generate,
        sizes=sizes, failed=failed, best_host=best_host, device=device, crossovers=crossovers,
        pinned=pinned_predictions(device, device_points, calibration or {}, host_times),
        host_times={lab: {p.size: p.total for p in hosts if p.space_label == lab}
                    for lab in sorted({p.space_label for p in hosts})},
        threads=threads, thread_notes=thread_notes(threads),
        cores_matching_device=cores_matching_device(device, serial, threads),
        amortisation=(amortisation(precision, best_host_point, device, device_points, link, profile)
                      if sizes and best_host_point else None),
        prediction=(roofline_prediction(best_host_point, device, device_points, link, profile)
                    if profile and best_host_point else None),
        stddev=stddev)


def best_host_per_size(hosts: List[Point]) -> Tuple[Dict[int, Tuple[float, str]], Dict[int, Point]]:
    """n -> (seconds, space label) of the fastest host space, and n -> its measurement."""
    best_host: Dict[int, Tuple[float, str]] = {}
    best_host_point: Dict[int, Point] = {}
    for p in hosts:
        if p.size not in best_host or p.total < best_host[p.size][0]:
            best_host[p.size] = (p.total, p.space_label)
            best_host_point[p.size] = p
    return best_host, best_host_point


def device_series(good: List[Point]) -> Tuple[Devices, DevicePoints]:
    device: Devices = {}
    device_points: DevicePoints = {}
    for p in good:
        if not p.host:
            device.setdefault(p.series_space, {}).setdefault(p.policy, {})[p.size] = p.total
            device_points[(p.series_space, p.policy, p.size)] = p
    return device, device_points


def spreads(hosts: List[Point], device_points: DevicePoints) -> Spreads:
    """The spread (standard deviation over the repetitions) of each median the advice compares."""
    stddev: Spreads = {}
    for p in hosts:
        stddev[(p.space_label, p.size)] = p.total_stddev
    for (space, policy, n), p in device_points.items():
        stddev[(f"{space} {policy}", n)] = p.total_stddev
    return stddev


# Each device policy set against the best host space: the series' key and its challenger's name.
DEVICE_CHALLENGERS = ((Policy.ALL_RESIDENT, "data resident"),
                      (Policy.COPY_EVERY_ITERATION_PINNED, "copying every iteration, pinned mirrors"),
                      (Policy.COPY_EVERY_ITERATION, "copying every iteration"))


def device_crossovers(device: Devices, best_host: Dict[int, Tuple[float, str]], stddev: Spreads) -> List[Crossover]:
    host_times = {n: t for n, (t, _) in best_host.items()}
    host_label = {n: label for n, (_, label) in best_host.items()}
    out = []
    for space, policies in sorted(device.items()):
        for policy, what in DEVICE_CHALLENGERS:
            if policy in policies:
                noise = {n: max(stddev.get((f"{space} {policy}", n), 0.0), stddev.get((o, n), 0.0))
                         for n, o in host_label.items()}
                out.append(crossover(f"{space} ({what})", policies[policy], "the best host space", host_times, noise))
    return out


def parallel_host_times(hosts: List[Point]) -> Tuple[Dict[str, Dict[int, float]], Dict[str, Dict[int, str]], Threads]:
    """Per parallel host space: its best time per size over the thread counts measured, the label of
    that best run, and every thread count's time."""
    parallel: Dict[str, Dict[int, float]] = {}
    parallel_label: Dict[str, Dict[int, str]] = {}
    threads: Threads = {}
    for p in hosts:
        if p.space == Space.SERIAL and p.ranks == 1:
            continue
        space = p.series_space  # several MPI ranks: a parallel configuration of its own
        per = parallel.setdefault(space, {})
        if p.total < per.get(p.size, math.inf):
            per[p.size] = p.total
            parallel_label.setdefault(space, {})[p.size] = p.space_label
        threads.setdefault(space, {}).setdefault(p.size, {})[p.threads or 0] = p.total
    return parallel, parallel_label, threads


def host_crossovers(serial: Dict[int, float], parallel: Dict[str, Dict[int, float]],
                    parallel_label: Dict[str, Dict[int, str]], threads: Threads, stddev: Spreads) -> List[Crossover]:
    """Serial against the parallel host spaces, each at its best thread count per size."""
    out = []
    for space, times in sorted(parallel.items()):
        if serial:
            counts = sorted({t for per_size in threads[space].values() for t in per_size})
            label = f"{space} ({'/'.join(map(str, counts))} threads, best per size)" if len(counts) > 1 \
                else f"{space} ({counts[0]} threads)"
            noise = {n: max(stddev.get((Space.SERIAL, n), 0.0), stddev.get((lab, n), 0.0))
                     for n, lab in parallel_label[space].items()}
            out.append(crossover(label, times, Space.SERIAL, serial, noise))
    return out


def thread_notes(threads: Threads) -> List[str]:
    notes: List[str] = []
    for space, per_size in sorted(threads.items()):
        swept = {n: t for n, t in per_size.items() if len(t) > 1}
        if not swept:
            continue
        n = max(swept)
        counts = sorted(swept[n])
        base = swept[n][counts[0]]
        best = min(counts, key=lambda c: swept[n][c])
        speedups = ", ".join(f"{c}: {base / swept[n][c]:.2f}x" for c in counts)
        notes.append(f"{space} at n = {n}: speedup over {counts[0]} thread(s) {speedups}; fastest with {best} "
                     f"threads (parallel efficiency {base / swept[n][best] * counts[0] / best:.0%})")
        best_by_size = ", ".join(f"n={m}: {min(t, key=lambda c: t[c])}" for m, t in sorted(swept.items()))
        notes.append(f"{space} fastest thread count per size: {best_by_size}")
    return notes


def cores_matching_device(device: Devices, serial: Dict[int, float], threads: Threads) -> List[str]:
    """How many host cores one device (data resident) does the work of, at the largest size both
    were measured at; how many threads of each parallel host space match it."""
    cores: List[str] = []
    for space, policies in sorted(device.items()):
        resident = policies.get(Policy.ALL_RESIDENT, {})
        one_core, one_core_label = _one_core(resident, serial, threads)
        common = sorted(set(resident) & set(one_core))
        if not common:
            line = _cores_extrapolated(space, resident, threads)
            if line:
                cores.append(line)
            continue
        n = common[-1]
        ratio = one_core[n] / resident[n]
        if one_core_label == Space.SERIAL:
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
    return cores


def _one_core(resident: Dict[int, float], serial: Dict[int, float], threads: Threads
              ) -> Tuple[Dict[int, float], str]:
    """The times of one core: Serial's, else a thread sweep's 1-thread run, which measures one core
    as a Serial run does (the GPU run's advise step sweeps OpenMP 1, 2, 4, ... threads and runs no
    Serial)."""
    if not set(resident) & set(serial):
        for hspace, per_size in sorted(threads.items()):
            ones = {n: counts[1] for n, counts in per_size.items() if 1 in counts}
            if set(resident) & set(ones):
                return ones, f"{hspace} with 1 thread"
    return serial, Space.SERIAL


def _cores_extrapolated(space: str, resident: Dict[int, float], threads: Threads) -> Optional[str]:
    """No run measured one core: extrapolate from the fastest parallel host run. c threads taking r
    times as long as the device: one core would take at most c * r times as long (parallel
    efficiency is at most 1), so the device does the work of at most c * r cores."""
    runs = [(hspace, n, c, t) for hspace, per_size in sorted(threads.items()) for n, counts in per_size.items()
            if n in resident for c, t in counts.items() if c > 0]
    if not runs:
        return None
    n = max(r[1] for r in runs)
    hspace, _, c, t = min((r for r in runs if r[1] == n), key=lambda r: r[3])
    return (f"at n = {n}, one {space} device (data resident) does the work of at most "
            f"{c * t / resident[n]:.0f} serial cores, extrapolated: {hspace} with {c} threads took "
            f"{t / resident[n]:.2g}x as long as the device, and below perfect scaling the true "
            "figure is smaller (no Serial run measured one core)")
