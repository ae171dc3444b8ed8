"""The one Python reader of the mini-app's results (schema kokkos-miniapp-results/1): the report,
the advisor and scripts/gpu_summary.py read results.json through here, and nothing else parses it.
Standard library only (gpu_summary.py runs on GPU nodes where matplotlib may be missing).

A results directory holds results.json, or, for a thread sweep, threads-<N>/results.json (and
threads-summary.csv). The results.json of `miniapp merge` has the same shape and is read the same
way: its measurements, its (first task's) provenance, the calibration of each space. Every
measurement becomes one Point holding the medians the mini-app recorded; nothing here recomputes
a median from samples, so what is plotted, advised and summarised is what results.json says.
"""

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import stored
from .names import HOST_POLICY_ORDER, HOST_SPACES, Space

SCHEMA = "kokkos-miniapp-results/1"


class InputError(Exception):
    """Bad input (exit code 2): the message says which file and what is wrong; `reason` is the
    message without the file's path."""

    def __init__(self, message: str, reason: str = ""):
        super().__init__(message)
        self.reason = reason or message


@dataclass
class Gpu:
    name: Optional[str]
    space: Optional[str]
    device_id: Optional[int]
    pci_bus_id: Optional[str]


@dataclass
class Provenance:
    hostname: Optional[str]
    cpu_model: Optional[str]
    gpu: Optional[Gpu]               # None: no GPU backend compiled in
    host_threads: Optional[int]
    host_threads_source: Optional[str]
    cpus_allowed: Optional[int]
    miniapp_version: Optional[str]
    git_commit: Optional[str]
    compiler: Optional[str]
    kokkos_version: Optional[str]
    kokkos_kernels_version: Optional[str]
    spaces_compiled: List[str]
    command_line: List[str]
    environment: Dict[str, str]
    started: Optional[str]
    finished: Optional[str]


@dataclass
class Deck:
    file: Optional[str]
    title: Optional[str]
    text: Optional[str]              # the deck as read
    cases: List[dict]                # the resolved cases (name, workload, parameters, ...)


@dataclass
class Calibration:
    """The probe a run makes of each space before measuring."""
    space: str
    bandwidth_GBps: Dict[str, float]     # stream copy, triad, vendor_copy (Kokkos::deep_copy)
    gemm_GFLOPs: Dict[str, float]        # precision -> vendor GEMM rate
    launch_latency_us: Optional[float]
    link_GBps: Dict[str, float]          # pageable_to_device, pinned_to_device, pageable_to_host, pinned_to_host
    measured_at: str
    stream_bytes_per_array: Optional[float]
    source: str                          # the results.json it was read from

    @property
    def stream_rates(self) -> Dict[str, float]:
        """The stream rates measured (copy, triad, vendor_copy): positive numbers only."""
        return {k: v for k, v in self.bandwidth_GBps.items() if isinstance(v, (int, float)) and v > 0}

    @property
    def stream_GBps(self) -> float:
        """The best stream rate (copy, triad or the vendor's copy), 0 when none was measured."""
        return max(self.stream_rates.values(), default=0)

    @property
    def stream_source(self) -> str:
        """Which stream measurement stream_GBps is: copy, triad or vendor copy."""
        rates = self.stream_rates
        return max(rates, key=rates.get).replace("_", " ") if rates else ""


@dataclass
class GpuEnergy:
    """The GPU's energy over a device measurement's timed repetitions (NVML); null fields: `unavailable` says why."""
    energy_joules: Optional[float]
    mean_power_watts: Optional[float]
    gpu_utilization_percent: Optional[float]
    seconds: Optional[float]
    samples: Optional[int]
    unavailable: Optional[str]


@dataclass
class Source:
    path: str                   # the results.json
    directory: str              # the RESULTS_DIR given on the command line
    host_threads: int           # provenance.host_threads (else the N of threads-N/)
    status: str
    error: str
    planned_measurements: Optional[int]
    finished_measurements: Optional[int]
    provenance: Provenance
    deck: Deck
    calibration: Dict[str, Calibration]  # space -> its probe
    measurements: List[dict]    # as written; read into Points by points()
    kernels_fenced: bool = False  # miniapp --kernel-times: a fence after every kernel (a profile's times)


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
    repetitions: int = 0
    verification_detail: str = ""
    gpu_energy: Optional[GpuEnergy] = None
    gpu_energy_recorded: bool = False  # the file has the field (null on host spaces); older binaries lack it
    ranks: int = 1                  # MPI ranks the measurement was split over (measurements[].ranks.count)

    @property
    def space_label(self) -> str:
        label = self.space
        if self.host and self.space != Space.SERIAL and self.threads:
            label = f"{self.space} ({self.threads} thread{'s' if self.threads != 1 else ''})"
        return label if self.ranks == 1 else f"{label} x {self.ranks} ranks"

    @property
    def series_space(self) -> str:
        """The space as a series of the advice: a run split over several MPI ranks is a series of its own."""
        return self.space if self.ranks == 1 else f"{self.space} x {self.ranks} ranks"

    @property
    def failed(self) -> bool:
        return self.checked and not self.passed

    def key(self) -> Tuple:
        return (self.case, self.workload, self.variant, self.size, self.precision, self.space, self.threads,
                self.ranks, self.policy, self.generate)


@dataclass
class ResultSet:
    sources: List[Source]
    points: List[Point]
    duplicates: List[str]                      # measurements seen twice (the first is kept)
    calibration: Dict[str, Calibration]        # space -> calibration, first found


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
    if stored.find(top):
        files.append(top)
    sweep = [os.path.join(directory, d, "results.json") for d in os.listdir(directory)
             if re.fullmatch(r"threads-\d+", d) and stored.find(os.path.join(directory, d, "results.json"))]
    files += sorted(sweep, key=_thread_count)
    if not files:
        raise InputError(f"{directory}: no results.json in it (nor threads-N/results.json of a thread sweep)")
    return files


def _bad(path: str, reason: str) -> InputError:
    return InputError(f"{path}: {reason}", reason)


def _parse(path: str) -> dict:
    try:
        with stored.open_text(path) as f:  # results.json, or results.json.xz in a compacted directory
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise _bad(path, f"not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except UnicodeDecodeError as e:
        raise _bad(path, f"not valid JSON (not UTF-8 text at byte {e.start})") from None
    except OSError as e:
        raise _bad(path, f"cannot read: {e.strerror}") from None
    if not isinstance(doc, dict):
        raise _bad(path, "not a mini-app results file (the top level is not an object)")
    schema = doc.get("schema")
    if schema != SCHEMA:
        found = "no schema field" if schema is None else f"schema {schema!r}"
        raise _bad(path, f"{found}; expected {SCHEMA!r} (a results.json written by miniapp)")
    return doc


def _provenance(p: dict) -> Provenance:
    gpu = p.get("gpu")
    return Provenance(
        hostname=p.get("hostname"), cpu_model=p.get("cpu_model"),
        gpu=Gpu(gpu.get("name"), gpu.get("space"), gpu.get("device_id"), gpu.get("pci_bus_id")) if gpu else None,
        host_threads=p.get("host_threads"), host_threads_source=p.get("host_threads_source"),
        cpus_allowed=p.get("cpus_allowed"), miniapp_version=p.get("miniapp_version"), git_commit=p.get("git_commit"),
        compiler=p.get("compiler"), kokkos_version=p.get("kokkos_version"),
        kokkos_kernels_version=p.get("kokkos_kernels_version"), spaces_compiled=p.get("spaces_compiled") or [],
        command_line=p.get("command_line") or [], environment=p.get("environment") or {},
        started=p.get("started"), finished=p.get("finished"))


def _calibration(doc: dict, path: str) -> Dict[str, Calibration]:
    return {space: Calibration(
        space=space, bandwidth_GBps=c.get("bandwidth_GBps") or {}, gemm_GFLOPs=c.get("gemm_GFLOPs") or {},
        launch_latency_us=c.get("launch_latency_us"), link_GBps=c.get("link_GBps") or {},
        measured_at=c.get("measured_at", ""), stream_bytes_per_array=c.get("stream_bytes_per_array"), source=path)
        for space, c in ((doc.get("calibration") or {}).get("spaces") or {}).items()}


def read_source(path: str, directory: str = "") -> Source:
    """One results.json, checked for its schema; it may hold no measurements yet (a run cut short)."""
    doc = _parse(path)
    provenance = _provenance(doc.get("provenance") or {})
    deck = doc.get("deck") or {}
    return Source(
        path=path, directory=directory or os.path.dirname(path),
        host_threads=int(provenance.host_threads or _thread_count(path) or 0),
        status=doc.get("status", "?"), error=doc.get("error") or "",
        planned_measurements=doc.get("planned_measurements"), finished_measurements=doc.get("finished_measurements"),
        provenance=provenance,
        deck=Deck(file=deck.get("file"), title=deck.get("title"), text=deck.get("text"), cases=deck.get("cases") or []),
        calibration=_calibration(doc, path),
        measurements=doc.get("measurements") if isinstance(doc.get("measurements"), list) else [],
        kernels_fenced=doc.get("kernels_fenced") is True)


def _median(m: dict, phase: str) -> float:
    value = m.get("seconds", {}).get(phase, {}).get("median")
    if not isinstance(value, (int, float)) or math.isnan(value):
        raise InputError(f"measurement {m.get('case')}/{m.get('variant')}/{m.get('size')}: no seconds.{phase}.median")
    return float(value)


def _gpu_energy(m: dict) -> Optional[GpuEnergy]:
    e = m.get("gpu_energy")
    if not isinstance(e, dict):
        return None
    return GpuEnergy(energy_joules=e.get("energy_joules"), mean_power_watts=e.get("mean_power_watts"),
                     gpu_utilization_percent=e.get("gpu_utilization_percent"), seconds=e.get("seconds"),
                     samples=e.get("samples"), unavailable=e.get("unavailable"))


def _point(m: dict, source: Source, parameters: Dict[str, str]) -> Point:
    try:
        space = m["space"]
        transfers = m.get("transfers", {})
        host = bool(transfers.get("mirrors_alias", space in HOST_SPACES))
        threads = None
        if host:
            threads = 1 if space == Space.SERIAL else (source.host_threads or None)
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
            bytes_to_host=float(transfers.get("bytes_to_host_per_iteration", 0)),
            repetitions=int(m.get("repetitions", 0)), verification_detail=str(verification.get("detail", "")),
            gpu_energy=_gpu_energy(m), gpu_energy_recorded="gpu_energy" in m,
            ranks=int((m.get("ranks") or {}).get("count", 1)))
    except KeyError as e:
        raise InputError(f"{source.path}: a measurement lacks the field {e.args[0]!r}") from None
    except (TypeError, ValueError) as e:
        raise InputError(f"{source.path}: a measurement has a malformed field ({e})") from None


def points(source: Source, cases: Optional[Dict[Tuple[str, str], dict]] = None) -> List[Point]:
    """The measurements of one source, each with the parameters of its deck case: from `cases`
    ((case, workload) -> resolved case) where given, else from the source's own deck."""
    if cases is None:
        cases = {}
        for c in source.deck.cases:
            cases.setdefault((c.get("name"), c.get("workload")), c)
    out = []
    for m in source.measurements:
        c = cases.get((m.get("case"), m.get("workload")), {})
        out.append(_point(m, source, {k: str(v) for k, v in (c.get("parameters") or {}).items()}))
    return out


def read_file(path: str) -> Tuple[Source, List[Point]]:
    """One results.json and its measurements (none when the run stopped before its first)."""
    source = read_source(path)
    return source, points(source)


def _require_measurements(source: Source) -> None:
    if not source.measurements:
        error = f", error: {source.error}" if source.error else ""
        raise _bad(source.path, f"holds no measurements (status {source.status!r}{error}); nothing to report")


def load(directories: List[str]) -> ResultSet:
    """Every measurement of the RESULTS_DIRs, a measurement seen in two files once (the first)."""
    if not directories:
        raise InputError("no results directory given")
    sources: List[Source] = []
    for d in directories:
        for path in result_files(d):
            source = read_source(path, d)
            _require_measurements(source)
            sources.append(source)
    points_read: List[Point] = []
    seen: Dict[Tuple, Point] = {}
    duplicates = []
    calibration: Dict[str, Calibration] = {}
    cases: Dict[Tuple[str, str], dict] = {}
    for s in sources:
        for c in s.deck.cases:
            cases.setdefault((c.get("name"), c.get("workload")), c)
        for space, block in s.calibration.items():
            calibration.setdefault(space, block)
        for p in points(s, cases):
            if p.key() in seen:
                duplicates.append(f"{p.case} {p.variant} n={p.size} {p.precision} {p.space_label} {p.policy} "
                                  f"({seen[p.key()].source} and {p.source})")
                continue
            seen[p.key()] = p
            points_read.append(p)
    return ResultSet(sources=sources, points=points_read, duplicates=duplicates, calibration=calibration)


def host_representative(points: List[Point]) -> List[Point]:
    """One point per (host space, threads, size) of a series: copies alias on a host space, so the
    policies time the same work; the first present in HOST_POLICY_ORDER stands for them."""
    best: Dict[Tuple, Point] = {}
    for p in points:
        if not p.host:
            continue
        k = (p.series_space, p.threads, p.size)
        if k not in best or _policy_rank(p.policy) < _policy_rank(best[k].policy):
            best[k] = p
    return list(best.values())


def _policy_rank(policy: str) -> int:
    return HOST_POLICY_ORDER.index(policy) if policy in HOST_POLICY_ORDER else len(HOST_POLICY_ORDER)
