#!/usr/bin/env python3
"""The mini-app next to the seeds' own Python forms, same sizes, precision and threads, same run.

Each round runs one mini-app deck holding every row's case (data resident: policy all-resident,
so the timed region is the computation, as a NumPy call on arrays in memory), then each row's
NumPy form, and the next round starts again with the mini-app: a slow spell of the machine lands
on both sides. The table gives the median over rounds of each side's median time and their
ratio, NumPy time / mini-app time (above 1: the mini-app is faster).

    benchmarks/peers.py [--miniapp build/bin/miniapp] [--rounds 3] [--threads 2] [--space openmp]
                        [--gpu-peers [--gpu-space cuda]] [--quick] [--markdown FILE] [--json FILE]
                        [--update FILE] [--deadline SECONDS]

NumPy is Debian's python3-numpy (run this with /usr/bin/python3): its BLAS/LAPACK is the one
Debian's alternatives select; `blas` in the JSON names it. Both sides get OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS = --threads (set before NumPy loads).
--gpu-peers: a second table, the seeds' GPU libraries (CuPy, Numba, JAX, PyTorch: gpu_peers.py)
beside the mini-app's --gpu-space (run in the same deck), each library not run with its reason; a
peer's result that differs from NumPy's beyond its row's tolerance is an error (exit 1).
--quick: small sizes, one repetition and (unless --rounds says) one round, for the benchmark smoke
test (its figures mean nothing).
--update FILE: the table, with the command that made it, replaces what stands between the lines
`<!-- peers.py begin -->` and `<!-- peers.py end -->` in FILE (the README's performance table);
a FILE without both markers, in that order, is refused (exit 2) before anything runs.
--markdown and --json are written again after every round (each replaced whole), so a run that is
killed keeps the rounds it finished. --deadline SECONDS: no round is started that would, at the
pace of the slowest so far, end later than SECONDS after the start (the first always runs); the
tables say how many rounds ran of how many asked.
Exit status: 0, 1 when the mini-app failed or a result did not verify, 2 on bad usage.
"""

import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

BEGIN, END = "<!-- peers.py begin -->", "<!-- peers.py end -->"

# The CPUs this process may use, read before NumPy loads its OpenMP runtime: with OMP_PROC_BIND
# set, libgomp binds this process's main thread to one CPU as it loads, and a child started from
# it would inherit that one CPU (the mini-app's threads all on it). Every mini-app run gets these.
START_CPUS = os.sched_getaffinity(0)


def split_at_markers(text):
    """(before, after) of the block between the markers, each marker line kept; None without them."""
    lines = text.splitlines(keepends=True)
    begin = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    end = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        return None
    return "".join(lines[:begin[0] + 1]), "".join(lines[end[0]:])


def threads_before_numpy(argv):
    """--threads into OMP_NUM_THREADS and OPENBLAS_NUM_THREADS before NumPy loads: its OpenMP OpenBLAS
    reads them as it loads (set afterwards, NumPy runs on every CPU whatever --threads says)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", default="2")
    threads = pre.parse_known_args(argv)[0].threads
    if threads.isdigit() and int(threads) >= 1:  # anything else is refused by the real parser
        os.environ.update(OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)


if __name__ == "__main__":
    threads_before_numpy(sys.argv[1:])
try:
    import numpy as np
except ImportError:  # pragma: no cover - reported, not hidden
    print("peers.py: needs NumPy (Debian: apt-get install python3-numpy; run with /usr/bin/python3)", file=sys.stderr)
    sys.exit(2)

import gpu_peers  # beside this script


def rows(quick):
    """Each row: the mini-app case(s), its data and its form over an array namespace `xp` (NumPy's, or a
    GPU library's: gpu_peers.py), at the same size and precision; `tolerance` bounds a peer's result
    against NumPy's, relative to its largest value."""
    s = (lambda full, small: small if quick else full)
    n_pow, n_gemm, batch, n_dense = s(30_000_000, 300_000), s(1024, 256), s(10_000, 500), s(2048, 384)
    n_reg, steps, n_dist = s(1_000_000, 20_000), s(20, 5), s(4096, 512)
    learning_rate = 0.001
    rng = np.random.default_rng(7)

    def fit(xp, d):
        def steps_of_gd():
            b = d["beta"]
            for _ in range(steps):
                r = d["x"] @ b - d["y"]
                b = b - learning_rate * (2.0 / n_reg) * (d["x"].T @ r)
            return b
        return steps_of_gd

    def distance(xp, d):
        p = d["p"]

        def form():
            sq = xp.einsum("ij,ij->i", p, p)
            return xp.sqrt(xp.maximum(sq[:, None] + sq[None, :] - 2.0 * (p @ p.T), 0.0))
        return form

    def two(shape_a, shape_b):
        return lambda: dict(a=rng.random(shape_a) * 2 - 1, b=rng.random(shape_b) * 2 - 1)

    case = (lambda name, workload, variants, size, precision, **keys:
            dict(name=name, workload=workload, variants=variants, sizes=size, precision=precision, **keys))
    return [
        dict(key="power", label=f"`x ** y` float32, {n_pow:.0e}", numpy="`x ** y`", tolerance=1e-6,
             data=lambda: dict(x=1 - rng.random((1000, n_pow // 1000), dtype=np.float32),
                               y=1 - rng.random((1000, n_pow // 1000), dtype=np.float32)),
             form=lambda xp, d: lambda: d["x"] ** d["y"],
             cases=[case("power", "matrix", ["elementwise"], n_pow // 1000, "float32", op="power", rows=1000)]),
        dict(key="gemm", label=f"GEMM float64, {n_gemm}", numpy="`A @ B`", tolerance=1e-10,
             data=two((n_gemm, n_gemm), (n_gemm, n_gemm)), form=lambda xp, d: lambda: d["a"] @ d["b"],
             cases=[case("gemm", "matrix", ["gemm-tiled", "gemm-kokkos-kernels"], n_gemm, "float64")]),
        dict(key="batched", label=f"{batch} solves of 32 x 32 float64", numpy="`linalg.solve`", tolerance=1e-8,
             data=lambda: dict(a=rng.random((batch, 32, 32)), b=rng.random((batch, 32, 1))),
             form=lambda xp, d: lambda: xp.linalg.solve(d["a"], d["b"]),
             cases=[case("batched", "solver", ["batched-team", "batched-thread"], 32, "float64", systems=batch)]),
        dict(key="dense", label=f"one {n_dense} x {n_dense} solve float64", numpy="`linalg.solve`", tolerance=1e-8,
             data=lambda: dict(a=rng.random((n_dense, n_dense)), b=rng.random((n_dense, 1))),
             form=lambda xp, d: lambda: xp.linalg.solve(d["a"], d["b"]),
             cases=[case("dense", "solver", ["dense-blocked", "dense-vendor"], n_dense, "float64", systems=1)]),
        dict(key="regression", label=f"GD, {steps} steps of {n_reg:.0e} x 51 float64", numpy="`X @ b`, `X.T @ r`",
             tolerance=1e-10, steps=steps, learning_rate=learning_rate,
             data=lambda: dict(x=np.hstack([np.ones((n_reg, 1)), rng.random((n_reg, 50))]), y=rng.random(n_reg),
                               beta=np.zeros(51)),
             form=fit,
             cases=[case("regression", "regression", ["fused", "blas"], n_reg, "float64", features=50,
                         iterations=steps, learning_rate=learning_rate)]),
        dict(key="distance", label=f"distance {n_dist} float64", numpy="einsum + matmul", tolerance=1e-6,
             data=lambda: dict(p=rng.random((n_dist, 3))), form=distance,
             cases=[case("distance", "distance", ["direct", "gemm"], n_dist, "float64", dim=3)]),
    ]


def deck_text(table, spaces, repetitions):
    lines = ["title: peers.py - the mini-app beside the seeds' NumPy forms", "cases:"]
    for row in table:
        for c in row["cases"]:
            lines.append(f"  - name: {c['name']}")
            for key, value in c.items():
                if key == "name":
                    continue
                if isinstance(value, list):
                    value = "[" + ", ".join(value) + "]"
                lines.append(f"    {key}: {value}")
            lines += [f"    spaces: [{', '.join(spaces)}]", "    policies: [all-resident]", "    warmup: 1",
                      f"    repetitions: {repetitions}"]
    return "\n".join(lines) + "\n"


def run_miniapp(binary, deck, env, threads):
    """{(case, variant, space): median compute seconds}; raises on a failed run or a failed verification."""
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "peers.yaml")
        with open(path, "w") as f:
            f.write(deck)
        done = subprocess.run([binary, path, "--output", os.path.join(out, "results")], env=env,
                              capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, START_CPUS))
        if done.returncode != 0:
            raise RuntimeError(f"miniapp exited with {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        with open(os.path.join(out, "results", "results.json")) as f:
            results = json.load(f)
    times = {}
    for m in results["measurements"]:
        if not m["verification"]["passed"]:
            raise RuntimeError(f"{m['case']} {m['variant']}: verification failed: {m['verification']['detail']}")
        # The regression's compute is the whole fit of `iterations` steps, as its NumPy form is.
        times[(m["case"], m["variant"], m["space"])] = m["seconds"]["compute"]["median"]
    provenance = results.get("provenance", {})
    allowed = provenance.get("cpus_allowed")
    if allowed is not None and allowed < min(threads, len(START_CPUS)):
        raise RuntimeError(f"the mini-app could use {allowed} CPU(s) for {threads} threads (this script started with "
                           f"{len(START_CPUS)}): its times would not be those of {threads} threads")
    return times, provenance


def time_numpy(form, repetitions):
    """Median seconds of a NumPy form: gpu_peers' timing with nothing to wait for."""
    return gpu_peers.time_on_device(form, lambda result: None, repetitions)[0]


def machine():
    """CPU model name, its family and model numbers (VMs often name no model: Sapphire Rapids is
    model 143, Ice Lake server 106, Zen 3 family 25), CPUs, ISA and the L2 per core."""
    model, numbers, flags = None, {}, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model is None:
                    model = value.strip()
                elif key in ("cpu family", "model") and key not in numbers:
                    numbers[key] = value.strip()
                elif key == "flags":
                    flags = set(value.split())
    except OSError:
        pass
    model = model or platform.processor() or "unknown CPU"
    if numbers:
        model += f" (family {numbers.get('cpu family', '?')} model {numbers.get('model', '?')})"
    isa = "AVX-512F" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE/other"
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as f:
            l2 = f", L2 {f.read().strip()} per core"
    except OSError:
        l2 = ""
    return f"{model}, {os.cpu_count()} CPUs, {isa}{l2}"


def numpy_blas():
    """The BLAS library NumPy has loaded (after a matrix product), from this process's maps."""
    a = np.ones((64, 64))
    a @ a
    try:
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "blas" in line.split()[-1].lower()})
        return ", ".join(os.path.realpath(lib) for lib in libs) or "unknown"
    except OSError:
        return "unknown"


OPENBLAS_CORENAME = ("import ctypes, sys\n"
                     "f = ctypes.CDLL(sys.argv[1]).openblas_get_corename\n"
                     "f.restype = ctypes.c_char_p\n"
                     "print(f().decode())\n")


def openblas_core():
    """The kernels OpenBLAS runs (`openblas_get_corename`), for NumPy and the mini-app alike (it
    inherits this script's environment), and the OPENBLAS_* settings of the environment. Where
    OPENBLAS_CORETYPE forces a core, also the one OpenBLAS detects without it (a child process):
    a reference held to older kernels than the CPU has is a handicapped one. None where NumPy's
    BLAS is not OpenBLAS."""
    try:
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "openblas" in line.split()[-1].lower()})
    except OSError:
        return None
    for lib in libs:
        try:
            name = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        name.restype = ctypes.c_char_p
        core = name().decode()
        settings = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("OPENBLAS_"))
        if not settings:
            return core + " (detected)"
        note = ", ".join(settings)
        if "OPENBLAS_CORETYPE" in os.environ:
            env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
            detected = subprocess.run([sys.executable, "-c", OPENBLAS_CORENAME, lib], env=env,
                                      capture_output=True, text=True)
            if detected.returncode == 0 and detected.stdout.strip():
                note += f"; without OPENBLAS_CORETYPE it takes {detected.stdout.strip()}"
        return f"{core} ({note})"
    return None


def ratio_rows(table, mini, peer, space):
    """One row per mini-app variant: the medians of both sides' rounds and NumPy time / mini-app time."""
    result_rows = []
    for i, row in enumerate(table):
        numpy_s = statistics.median(peer[i])
        for c in row["cases"]:
            for variant in c["variants"]:
                if (c["name"], variant, space) not in mini:
                    continue  # a variant this build lacks (the deck would have been refused otherwise)
                mini_s = statistics.median(mini[(c["name"], variant, space)])
                result_rows.append(dict(workload=row["label"], numpy_form=row["numpy"], variant=variant,
                                        numpy_ms=numpy_s * 1e3, miniapp_ms=mini_s * 1e3, ratio=numpy_s / mini_s))
    return result_rows


def gpu_ratio_rows(table, mini, gpu, names, space):
    """One row per mini-app variant on the device space: each GPU library's median time where it ran
    the row, and its ratio, the library's time / the mini-app's (above 1: the mini-app is faster)."""
    result_rows = []
    for i, row in enumerate(table):
        for c in row["cases"]:
            for variant in c["variants"]:
                if (c["name"], variant, space) not in mini:
                    continue
                mini_s = statistics.median(mini[(c["name"], variant, space)])
                peers = {}
                for name in names:
                    if (i, name) in gpu:
                        peer_s = statistics.median(gpu[(i, name)])
                        peers[name] = dict(ms=peer_s * 1e3, ratio=peer_s / mini_s)
                result_rows.append(dict(workload=row["label"], variant=variant, miniapp_ms=mini_s * 1e3, peers=peers))
    return result_rows


def gpu_markdown(result_rows, libraries, reasons, space, rounds, repetitions):
    """The GPU peers' table: a column per library that ran, and why each other one did not."""
    names = [library.name for library in libraries]
    ran = ", ".join(f"{library.name} {library.version}" for library in libraries) or "none"
    lines = [f"GPU peers beside the mini-app's `{space}` space (data resident on both sides; each peer's result "
             f"checked against NumPy's): {ran}; medians of {rounds} alternating rounds of {repetitions} "
             f"repetitions; ratio = peer time / mini-app time."]
    if reasons:
        lines.append("Not run: " + "; ".join(f"{name}: {why}" for name, why in reasons.items()) + ".")
    if names:
        lines += ["", "| workload | mini-app variant | mini-app ms | " + " | ".join(names) + " |",
                  "|---|---|---|" + "---|" * len(names)]
        for row in result_rows:
            cells = [f"{row['peers'][n]['ms']:.3g} ms ({row['peers'][n]['ratio']:.2f}x)" if n in row["peers"] else "-"
                     for n in names]
            lines.append(f"| {row['workload']} | {row['variant']} | {row['miniapp_ms']:.3g} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def markdown_table(result_rows, where, blas, args, provenance, rounds, repetitions):
    """The table, under a line naming the machine, the threads, both sides' versions and the rounds;
    `blas` is (numpy_blas(), openblas_core()), found once for the table and the JSON."""
    library, core = blas
    header = (f"Machine: {where}; {args.threads} threads on {provenance.get('cpus_allowed', '?')} CPUs "
              f"(OpenMP space `{args.space}`, NumPy's BLAS "
              f"{library}{', OpenBLAS kernels ' + core if core else ''}); "
              f"NumPy {np.__version__}; Kokkos {provenance.get('kokkos_version', '?')}; medians of {rounds} "
              f"alternating rounds of {repetitions} repetitions; ratio = NumPy time / mini-app time.")
    lines = [header, "", "| workload | NumPy form | mini-app variant | NumPy ms | mini-app ms | ratio |",
             "|---|---|---|---|---|---|"]
    for row in result_rows:
        lines.append(f"| {row['workload']} | {row['numpy_form']} | {row['variant']} | {row['numpy_ms']:.3g} | "
                     f"{row['miniapp_ms']:.3g} | {row['ratio']:.2f}x |")
    return "\n".join(lines) + "\n"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--miniapp", default=os.path.join("build", "bin", "miniapp"))
    parser.add_argument("--rounds", type=int, help="alternating rounds (default 3; 1 with --quick)")
    parser.add_argument("--repetitions", type=int, default=3, help="timed repetitions per side per round")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--space", default="openmp")
    parser.add_argument("--gpu-peers", action="store_true",
                        help="also the seeds' GPU libraries (CuPy, Numba, JAX, PyTorch) beside --gpu-space")
    parser.add_argument("--gpu-space", default="cuda", help="the mini-app's space beside the GPU peers")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown")
    parser.add_argument("--json")
    parser.add_argument("--update", metavar="FILE")
    parser.add_argument("--deadline", type=float, metavar="SECONDS",
                        help="start no round that would end later than this after the start")
    args = parser.parse_args(argv)
    if args.update:
        try:
            with open(args.update) as f:
                args.update_text = f.read()
        except OSError as e:
            parser.error(f"--update: {e}")
        if split_at_markers(args.update_text) is None:
            parser.error(f"--update: {args.update} has no single '{BEGIN}' line followed by one '{END}' line")
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.rounds < 1 or args.repetitions < 1 or args.threads < 1:
        parser.error("--rounds, --repetitions and --threads must be at least 1")
    if args.deadline is not None and not args.deadline > 0:
        parser.error("--deadline must be a positive number of seconds")
    if not os.access(args.miniapp, os.X_OK):
        parser.error(f"no mini-app binary at {args.miniapp} (build it, or pass --miniapp)")
    return args


def measure(args, table, libraries, rounds, repetitions, after_round=None, deadline=None):
    """Alternating rounds: the mini-app's deck, NumPy's forms, the GPU libraries' forms.
    Returns (mini-app times, NumPy times, GPU peers' times, provenance, {(row, library): why a
    GPU peer's form failed}, rounds run); raises RuntimeError. after_round(the same five, rounds
    run so far) after each round; deadline: time.monotonic() past which no round may end (by the
    slowest round so far), None for none."""
    env = dict(os.environ, OMP_PROC_BIND="spread", OMP_PLACES="threads")
    spaces = [args.space] + ([args.gpu_space] if args.gpu_peers and args.gpu_space != args.space else [])
    deck = deck_text(table, spaces, repetitions)
    data = [row["data"]() for row in table]
    forms = [row["form"](np, d) for row, d in zip(table, data)]
    references = [np.asarray(form(), dtype=np.float64) for form in forms] if libraries else []
    mini, peer, gpu, device_forms, failed = {}, {i: [] for i in range(len(table))}, {}, {}, {}
    provenance = {}
    slowest = 0.0
    for r in range(rounds):
        if r > 0 and deadline is not None and time.monotonic() + slowest > deadline:
            print(f"stopping after {r} of {rounds} rounds: another would end past --deadline", file=sys.stderr)
            return mini, peer, gpu, provenance, failed, r
        started = time.monotonic()
        times, provenance = run_miniapp(args.miniapp, deck, env, args.threads)
        for key, seconds in times.items():
            mini.setdefault(key, []).append(seconds)
        for i, form in enumerate(forms):
            peer[i].append(time_numpy(form, repetitions))
        if libraries:
            for key, seconds in gpu_peers.run_round(libraries, table, data, references, repetitions,
                                                    device_forms, failed).items():
                gpu.setdefault(key, []).append(seconds)
        slowest = max(slowest, time.monotonic() - started)
        if after_round is not None:
            after_round(mini, peer, gpu, provenance, failed, r + 1)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return mini, peer, gpu, provenance, failed, rounds


def write_whole(path, text):
    """text as the file at path, replaced whole (a kill leaves the old file or the new one)."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(argv):
    args = parse_args(argv)
    start = time.monotonic()
    rounds, repetitions = args.rounds, 1 if args.quick else args.repetitions
    numpy_blas_library = numpy_blas()  # before the GPU libraries load their own BLAS (cuBLAS)
    libraries, reasons = gpu_peers.load_all() if args.gpu_peers else ([], {})
    table = rows(args.quick)
    where = machine()
    blas = (numpy_blas_library, openblas_core())

    def tables(mini, peer, gpu, provenance, failed, done):
        """The markdown and the JSON of the rounds run so far (`done` of `rounds`)."""
        not_run = dict(reasons)
        for (i, name), why in failed.items():
            not_run[f"{name}, {table[i]['label']}"] = f"its form failed ({why})"
        ran = f"{done}" if done == rounds else f"{done} (of {rounds} asked)"
        result_rows = ratio_rows(table, mini, peer, args.space)
        text = markdown_table(result_rows, where, blas, args, provenance, ran, repetitions)
        gpu_rows = []
        if args.gpu_peers:
            gpu_rows = gpu_ratio_rows(table, mini, gpu, [library.name for library in libraries], args.gpu_space)
            text += "\n" + gpu_markdown(gpu_rows, libraries, not_run, args.gpu_space, ran, repetitions)
        gpu_json = dict(space=args.gpu_space, libraries={lib.name: lib.version for lib in libraries},
                        not_run=not_run, rows=gpu_rows) if args.gpu_peers else None
        record = dict(machine=where, threads=args.threads, space=args.space, numpy=np.__version__,
                      numpy_blas=blas[0], openblas_core=blas[1], miniapp_cpus_allowed=provenance.get("cpus_allowed"),
                      start_cpus=len(START_CPUS), rounds=done, rounds_asked=rounds, repetitions=repetitions,
                      quick=args.quick, rows=result_rows, gpu_peers=gpu_json)
        return text, record

    def write(mini, peer, gpu, provenance, failed, done):
        text, record = tables(mini, peer, gpu, provenance, failed, done)
        if args.markdown:
            write_whole(args.markdown, text)
        if args.json:
            write_whole(args.json, json.dumps(record, indent=1))

    deadline = start + args.deadline if args.deadline is not None else None
    try:
        mini, peer, gpu, provenance, failed, done = measure(args, table, libraries, rounds, repetitions,
                                                            after_round=write, deadline=deadline)
    except RuntimeError as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return 1
    text, _ = tables(mini, peer, gpu, provenance, failed, done)
    print(text)
    if args.update:
        before, after = split_at_markers(args.update_text)
        made_by = ("benchmarks/peers.py " + " ".join(argv)).strip()
        write_whole(args.update, f"{before}\n{time.strftime('%Y-%m-%d')}, `{made_by}`:\n\n{text}\n{after}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
