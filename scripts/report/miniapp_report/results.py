"""Reading results directories of the mini-app (schema kokkos-miniapp-results/1).

A results directory holds results.json, or, for a thread sweep, threads-<N>/results.json (and
threads-summary.csv). Every measurement becomes one Point holding the medians the mini-app
recorded; nothing here recomputes a median from samples, so what is plotted and advised is what
results.json says.
"""

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

SCHEMA = "kokkos-miniapp-results/1"

# Spaces whose mirrors alias (host memory): the results say so per measurement
# (transfers.mirrors_alias); these names are only the fallback for older files.
HOST_SPACE_NAMES = {"serial", "openmp", "threads"}

# Host policies alias one another on a host space; the first present stands for the space.
HOST_POLICY_ORDER = ["host", "all-resident", "inputs-resident", "copy-every-iteration"]
# copy-every-iteration-pinned runs on device spaces only (its host mirrors are page-locked).
DEVICE_POLICIES = ["all-resident", "inputs-resident", "copy-every-iteration", "copy-every-iteration-pinned"]


class InputError(Exception):
    """Bad input (exit code 2): the message says which file and what is wrong."""


@dataclass
class Source:
    path: str               # the results.json
    directory: str          # the RESULTS_DIR given on the command line
    doc: dict               # the whole parsed file
    host_threads: int       # provenance.host_threads


@dataclass
class Point:
    case: str
    workload: str
    variant: str
    size: int
    precision: str
    space: str
    policy: str
    generate: str
    threads: Optional[int]      # host threads of a parallel host space; 1 for serial; None on a device
    host: bool                  # a host space (mirrors alias)
    total: float                # medians of seconds per iteration
    total_stddev: float         # the spread of the total over the repetitions
    compute: float
    to_device: float
    to_host: float
    flops: float
    bytes_moved_by_kernel: float  # work.bytes_read + work.bytes_written
    arithmetic_intensity: float
    gflops: float
    gbps: float
    transfer_bytes: float         # bytes_to_device + bytes_to_host per iteration
    link_gbps: float              # transfers.bandwidth_GBps (0 when nothing moved)
    checked: bool
    passed: bool
    parameters: Dict[str, str] = field(default_factory=dict)
    source: str = ""
    bytes_to_device: float = 0.0  # transfers.bytes_to_device_per_iteration
    bytes_to_host: float = 0.0    # transfers.bytes_to_host_per_iteration

    @property
    def space_label(self) -> str:
        if self.host and self.space != "serial" and self.threads:
            return f"{self.space} ({self.threads} thread{'s' if self.threads != 1 else ''})"
        return self.space

    @property
    def failed(self) -> bool:
        return self.checked and not self.passed

    def key(self) -> Tuple:
        return (self.case, self.workload, self.variant, self.size, self.precision, self.space, self.threads,
                self.policy, self.generate)


@dataclass
class ResultSet:
    sources: List[Source]
    points: List[Point]
    duplicates: List[str]                      # measurements seen twice (the first is kept)
    calibration: Dict[str, dict]               # space -> calibration block, first found
    thread_sweeps: List[str]                   # directories holding threads-summary.csv
    case_parameters: Dict[Tuple[str, str], dict]  # (case, workload) -> resolved deck case


def _thread_count(path: str) -> int:
    m = re.search(r"threads-(\d+)$", os.path.basename(os.path.dirname(path)))
    return int(m.group(1)) if m else 0


def result_files(directory: str) -> List[str]:
    """The results.json files of one RESULTS_DIR, or InputError saying what is missing."""
    if not os.path.exists(directory):
        raise InputError(f"{directory}: no such directory")
    if not os.path.isdir(directory):
        raise InputError(f"{directory}: not a directory (give the directory that holds results.json)")
    files = []
    top = os.path.join(directory, "results.json")
    if os.path.isfile(top):
        files.append(top)
    sweep = [os.path.join(directory, d, "results.json") for d in os.listdir(directory)
             if re.fullmatch(r"threads-\d+", d) and os.path.isfile(os.path.join(directory, d, "results.json"))]
    files += sorted(sweep, key=_thread_count)
    if not files:
        raise InputError(f"{directory}: no results.json in it (nor threads-N/results.json of a thread sweep)")
    return files


def load_file(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: not a mini-app results file (the top level is not an object)")
    schema = doc.get("schema")
    if schema != SCHEMA:
        found = "no schema field" if schema is None else f"schema {schema!r}"
        raise InputError(f"{path}: {found}; expected {SCHEMA!r} (a results.json written by miniapp)")
    measurements = doc.get("measurements")
    if not isinstance(measurements, list) or not measurements:
        status = doc.get("status", "?")
        error = f", error: {doc['error']}" if doc.get("error") else ""
        raise InputError(f"{path}: holds no measurements (status {status!r}{error}); nothing to report")
    return doc


def _median(m: dict, phase: str) -> float:
    value = m.get("seconds", {}).get(phase, {}).get("median")
    if not isinstance(value, (int, float)) or math.isnan(value):
        raise InputError(f"measurement {m.get('case')}/{m.get('variant')}/{m.get('size')}: no seconds.{phase}.median")
    return float(value)


def _point(m: dict, source: Source, parameters: Dict[str, str]) -> Point:
    try:
        space = m["space"]
        transfers = m.get("transfers", {})
        host = bool(transfers.get("mirrors_alias", space in HOST_SPACE_NAMES))
        threads = None
        if host:
            threads = 1 if space == "serial" else (source.host_threads or None)
        work = m.get("work", {})
        verification = m.get("verification", {})
        return Point(
            case=m["case"], workload=m["workload"], variant=m["variant"], size=int(m["size"]),
            precision=m["precision"], space=space, policy=m["policy"], generate=m.get("generate", "host"),
            threads=threads, host=host,
            total=_median(m, "total"), total_stddev=float(m["seconds"]["total"].get("stddev") or 0.0),
            compute=_median(m, "compute"),
            to_device=_median(m, "to_device"), to_host=_median(m, "to_host"),
            flops=float(work.get("flops", 0)),
            bytes_moved_by_kernel=float(work.get("bytes_read", 0)) + float(work.get("bytes_written", 0)),
            arithmetic_intensity=float(work.get("arithmetic_intensity", 0)),
            gflops=float(work.get("GFLOPs", 0)), gbps=float(work.get("GBps", 0)),
            transfer_bytes=float(transfers.get("bytes_to_device_per_iteration", 0))
            + float(transfers.get("bytes_to_host_per_iteration", 0)),
            link_gbps=float(transfers.get("bandwidth_GBps", 0)),
            checked=bool(verification.get("checked", False)), passed=bool(verification.get("passed", False)),
            parameters=parameters, source=source.path,
            bytes_to_device=float(transfers.get("bytes_to_device_per_iteration", 0)),
            bytes_to_host=float(transfers.get("bytes_to_host_per_iteration", 0)))
    except KeyError as e:
        raise InputError(f"{source.path}: a measurement lacks the field {e.args[0]!r}") from None
    except (TypeError, ValueError) as e:
        raise InputError(f"{source.path}: a measurement has a malformed field ({e})") from None


def load(directories: List[str]) -> ResultSet:
    if not directories:
        raise InputError("no results directory given")
    sources: List[Source] = []
    sweeps = []
    for d in directories:
        for path in result_files(d):
            doc = load_file(path)
            threads = int(doc.get("provenance", {}).get("host_threads") or _thread_count(path) or 0)
            sources.append(Source(path=path, directory=d, doc=doc, host_threads=threads))
        if os.path.isfile(os.path.join(d, "threads-summary.csv")):
            sweeps.append(d)
    points: List[Point] = []
    seen: Dict[Tuple, Point] = {}
    duplicates = []
    calibration: Dict[str, dict] = {}
    case_parameters: Dict[Tuple[str, str], dict] = {}
    for s in sources:
        cases = s.doc.get("deck", {}).get("cases", []) or []
        for c in cases:
            case_parameters.setdefault((c.get("name"), c.get("workload")), c)
        for space, block in ((s.doc.get("calibration") or {}).get("spaces") or {}).items():
            calibration.setdefault(space, dict(block, source=s.path))
        for m in s.doc["measurements"]:
            c = case_parameters.get((m.get("case"), m.get("workload")), {})
            p = _point(m, s, {k: str(v) for k, v in (c.get("parameters") or {}).items()})
            if p.key() in seen:
                duplicates.append(f"{p.case} {p.variant} n={p.size} {p.precision} {p.space_label} {p.policy} "
                                  f"({seen[p.key()].source} and {p.source})")
                continue
            seen[p.key()] = p
            points.append(p)
    return ResultSet(sources=sources, points=points, duplicates=duplicates, calibration=calibration,
                     thread_sweeps=sweeps, case_parameters=case_parameters)


def host_representative(points: List[Point]) -> List[Point]:
    """One point per (host space, threads, size) of a series: copies alias on a host space, so the
    policies time the same work; the first present in HOST_POLICY_ORDER stands for them."""
    best: Dict[Tuple, Point] = {}
    for p in points:
        if not p.host:
            continue
        k = (p.space, p.threads, p.size)
        if k not in best or _policy_rank(p.policy) < _policy_rank(best[k].policy):
            best[k] = p
    return list(best.values())


def _policy_rank(policy: str) -> int:
    return HOST_POLICY_ORDER.index(policy) if policy in HOST_POLICY_ORDER else len(HOST_POLICY_ORDER)
