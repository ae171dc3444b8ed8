"""Synthetic results files (schema kokkos-miniapp-results/1) whose crossovers are known in closed
form: every runtime is a power law t = c n^p, so on a log-log plot each is a straight line and two
of them cross at n* = (c_a / c_b)^(1 / (p_b - p_a)), which the advisor's log-log interpolation
between the measured sizes around n* must find exactly."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "report"))
from miniapp_report.names import HOST_SPACES  # noqa: E402

SIZES = [100, 200, 400, 1000, 2000, 4000]


def power_law(coefficient, exponent):
    return lambda n: coefficient * n ** exponent


def crossing(exponent, through):
    """A power law of the given exponent that equals 1e-9 n^2 (the synthetic serial time) at n = through."""
    return power_law(1e-9 * through ** 2 / through ** exponent, exponent)


def measurement(case, workload, variant, size, precision, space, policy, seconds, flops, transfer_bytes=(0, 0),
                link_gbps=0.0, kernel_bytes=None, phases=(0.0, 1.0, 0.0), stddev=0.0):
    """One measurement taking `seconds` per iteration, split into (to_device, compute, to_host) by `phases`."""
    to_device, compute, to_host = (seconds * f for f in phases)
    summary = lambda v: {"min": v, "median": v, "mean": v, "stddev": stddev * v / seconds if seconds else 0.0,
                         "samples": [v, v, v]}
    kernel_bytes = kernel_bytes if kernel_bytes is not None else 12.0 * size + 4.0 * size * size
    host = space in HOST_SPACES
    return {
        "case": case, "case_index": 0, "workload": workload, "variant": variant, "size": size,
        "precision": precision, "space": space, "policy": policy, "generate": "host", "warmup": 1,
        "repetitions": 3, "seed": 42,
        "seconds": {"to_device": summary(to_device), "compute": summary(compute), "to_host": summary(to_host),
                    "total": summary(seconds), "generate": 0.0, "setup_to_device": 0.0, "final_to_host": 0.0},
        "transfers": {"mirrors_alias": host, "bytes_to_device_per_iteration": transfer_bytes[0],
                      "bytes_to_host_per_iteration": transfer_bytes[1], "bytes_one_time": 0,
                      "bandwidth_GBps": link_gbps},
        "work": {"flops": flops, "bytes_read": 12.0 * size, "bytes_written": kernel_bytes - 12.0 * size,
                 "arithmetic_intensity": flops / kernel_bytes, "GFLOPs": flops / compute * 1e-9,
                 "GBps": kernel_bytes / compute * 1e-9},
        "baseline": "serial", "speedup": None, "difference_from_baseline": None,
        "verification": {"checked": True, "passed": True, "max_abs_error": 0.0, "max_rel_error": 0.0,
                         "tolerance": 1e-6, "reference": "synthetic", "detail": "synthetic"},
    }


def document(measurements, cases, host_threads=2, calibration=None, gpu=None, title="synthetic"):
    doc = {
        "schema": "kokkos-miniapp-results/1", "status": "complete",
        "planned_measurements": len(measurements), "finished_measurements": len(measurements),
        "provenance": {"command_line": ["synthetic"], "miniapp_version": "synthetic", "git_commit": "synthetic",
                       "compiler": "none", "kokkos_version": "none", "kokkos_kernels_version": "none",
                       "spaces_compiled": sorted({m["space"] for m in measurements}),
                       "kokkos_configuration": "", "hostname": "synthetic-host", "cpu_model": "Synthetic CPU",
                       "environment": {}, "host_threads": host_threads, "host_threads_source": "synthetic",
                       "cpus_allowed": host_threads, "gpu": gpu, "started": "2000-01-01T00:00:00Z",
                       "finished": "2000-01-01T00:00:01Z"},
        "deck": {"file": "synthetic.yaml", "title": title, "text": "synthetic\n",
                 "cases": [{"name": name, "workload": workload, "parameters": {}} for name, workload in cases]},
        "measurements": measurements,
    }
    if calibration:
        doc["calibration"] = calibration
    return doc


def write(directory, doc):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)


# The GPU case: serial t = 1e-9 n^2; OpenMP slower everywhere; CUDA with data resident crosses serial
# at n = 800 (between the measured 400 and 1000), CUDA copying every iteration at n = 1500 (between
# 1000 and 2000). A second case where the device wins at every size with data resident and never
# when copying.
RESIDENT_CROSSING = 800.0
COPY_CROSSING = 1500.0
LINK_GBPS = 12.0

serial = power_law(1e-9, 2.0)
openmp = power_law(1.5e-9, 2.0)
resident = crossing(0.5, RESIDENT_CROSSING)
copying = crossing(0.8, COPY_CROSSING)
HOST_PARALLEL_CROSSING = 300.0
host_parallel = crossing(1.5, HOST_PARALLEL_CROSSING)
always_resident = power_law(1e-12, 2.0)
never_copying = power_law(1e-6, 2.0)


def flops(n):
    return 8.0 * n * n


def gpu_results():
    ms = []
    for n in SIZES:
        ms.append(measurement("synthetic-crossover", "distance", "direct", n, "float32", "serial", "host", serial(n),
                              flops(n)))
        ms.append(measurement("synthetic-crossover", "distance", "direct", n, "float32", "openmp", "host", openmp(n),
                              flops(n)))
        ms.append(measurement("synthetic-crossover", "distance", "direct", n, "float32", "cuda", "all-resident",
                              resident(n), flops(n)))
        ms.append(measurement("synthetic-crossover", "distance", "direct", n, "float32", "cuda",
                              "copy-every-iteration", copying(n), flops(n), transfer_bytes=(12 * n, 4 * n * n),
                              link_gbps=LINK_GBPS, phases=(0.1, 0.7, 0.2)))
        ms.append(measurement("synthetic-always", "distance", "tiled", n, "float32", "serial", "host", serial(n),
                              flops(n)))
        ms.append(measurement("synthetic-always", "distance", "tiled", n, "float32", "cuda", "all-resident",
                              always_resident(n), flops(n)))
        ms.append(measurement("synthetic-always", "distance", "tiled", n, "float32", "cuda", "copy-every-iteration",
                              never_copying(n), flops(n), transfer_bytes=(12 * n, 4 * n * n), link_gbps=LINK_GBPS,
                              phases=(0.3, 0.1, 0.6)))
    gpu = {"space": "cuda", "device_id": 0, "name": "Synthetic GPU", "pci_bus_id": "0000:00:00.0",
           "total_memory": 1 << 34, "visible_devices": "0", "selected_by": "synthetic"}
    return document(ms, [("synthetic-crossover", "distance"), ("synthetic-always", "distance")], gpu=gpu,
                    title="synthetic GPU crossover")


CALIBRATION = {"spaces": {"serial": {"bandwidth_GBps": {"copy": 30.0, "triad": 25.0},
                                     "gemm_GFLOPs": {"float32": 100.0, "float64": 50.0},
                                     "launch_latency_us": 0.1}}}


def host_results(with_calibration=False, sizes=SIZES, slow_openmp_at=None, slowdown=1.0, relative_stddev=0.0):
    """Serial against OpenMP, which wins from n = 300 on, except that at n = slow_openmp_at it is
    `slowdown` times the serial time; every median has a spread of relative_stddev."""
    ms = []
    for n in sizes:
        ms.append(measurement("synthetic-host", "matrix", "gemm-tiled", n, "float64", "serial", "host", serial(n),
                              flops(n), stddev=relative_stddev * serial(n)))
        t = serial(n) * slowdown if n == slow_openmp_at else host_parallel(n)
        ms.append(measurement("synthetic-host", "matrix", "gemm-tiled", n, "float64", "openmp", "host",
                              t, flops(n), stddev=relative_stddev * t))
    return document(ms, [("synthetic-host", "matrix")], calibration=CALIBRATION if with_calibration else None,
                    title="synthetic host only")
