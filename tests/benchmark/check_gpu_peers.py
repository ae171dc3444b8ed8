"""benchmarks/gpu_peers.py without a GPU (run by peers_smoke.sh with /usr/bin/python3):

- the rows' generic forms through gpu_peers' own path (copy to the "device", time with the
  library's wait, compare with NumPy's result) on a stand-in library whose namespace is NumPy's;
- a stand-in whose results are off by 1e-5 is refused by that comparison;
- a stand-in whose form raises on one row (Numba's CUDA target failing to compile, say) has that
  row recorded with the error and left out of the times, its other rows timed, the next round
  not calling it again;
- seed 002's Numba kernel in Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set before Numba
  loads), against NumPy's distance matrix: where Numba does not import, it says so and that part
  is skipped (seed 000's `@vectorize(target='cuda')` does not run in the simulator at all);
- where NumPy lacks numpy.row_stack (removed after 2.0; Numba 0.68's CUDA target looks it up),
  numpy_row_stack_for_numba() puts it back as numpy.vstack and says so; where NumPy has it, it is
  left as it is;
- load_all() accounts for all four libraries: each is loaded or has its reason;
- load_all() leaves the calling thread on the CPUs it had, where a library binds it to one CPU as
  it loads (libgomp does so under OMP_PROC_BIND when PyTorch loads): a stand-in loader that does.
Exit 0 when all hold, 1 otherwise; prints what it checked.
"""

import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))

import numpy as np  # noqa: E402

import gpu_peers  # noqa: E402
import peers  # noqa: E402


def stand_in(name, transform=lambda a: a):
    """A 'GPU library' with NumPy's namespace; transform alters every result it hands back."""
    return gpu_peers.Library(name, "0", lambda a: np.array(a, copy=True), lambda a: transform(np.asarray(a)),
                             lambda result: None, xp=np)


def check_a_form_that_raises(table, data, references):
    """A stand-in whose form for the first row raises (as Numba's CUDA target did on the H200
    node): that row is named in `failed` and not timed, the others are, and a second round does
    not call the form again. Returns the failures."""
    calls = []

    def broken_form(row, device_data):
        calls.append(row["key"])
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")
    broken = stand_in("broken")
    broken.forms = {table[0]["key"]: broken_form}
    failed, forms = {}, {}
    rounds = [gpu_peers.run_round([broken], table, data, references, 1, forms, failed) for _ in range(2)]
    timed = [sorted(i for i, _ in times) for times in rounds]
    expected_why = "AttributeError: module 'numpy' has no attribute 'row_stack'"
    if (failed != {(0, "broken"): expected_why} or timed != [list(range(1, len(table)))] * 2
            or calls != [table[0]["key"]]):
        return [f"a form that raises: failed {failed}, rows timed {timed}, form called for {calls}"]
    print(f"ok: a form that raises is named ({failed[(0, 'broken')]}), its other rows timed, not called again")
    return []


def check_row_stack_for_numba():
    had = np.__dict__.get("row_stack")
    if had is not None:
        if gpu_peers.numpy_row_stack_for_numba() != "" or np.row_stack is not had:
            return ["numpy_row_stack_for_numba changed a NumPy that has row_stack"]
        del np.row_stack  # as NumPy 2.5 has it
    try:
        note = gpu_peers.numpy_row_stack_for_numba()
        if np.__dict__.get("row_stack") is not np.vstack or not note:
            return [f"numpy_row_stack_for_numba on a NumPy without row_stack: {note!r}, "
                    f"row_stack {np.__dict__.get('row_stack')!r}"]
    finally:
        if had is not None:
            np.row_stack = had
        else:
            np.__dict__.pop("row_stack", None)
    print(f"ok: a NumPy without row_stack gets it back as vstack for Numba ({note}); one with it is left alone")
    return []


def main():
    failures = []
    table = peers.rows(quick=True)
    data = [row["data"]() for row in table]
    references = [np.asarray(row["form"](np, d)(), dtype=np.float64) for row, d in zip(table, data)]

    times = gpu_peers.run_round([stand_in("numpy-as-gpu")], table, data, references, 1, {}, {})
    if sorted(i for i, _ in times) != list(range(len(table))) or not all(t > 0 for t in times.values()):
        failures.append(f"the generic forms: timed rows {sorted(times)}, expected all {len(table)}")
    else:
        print(f"ok: all {len(table)} rows' generic forms timed and matched NumPy's results")

    try:
        gpu_peers.run_round([stand_in("off", lambda a: a * (1 + 1e-5))], table, data, references, 1, {}, {})
        failures.append("a peer whose results are off by 1e-5 relative was not refused")
    except gpu_peers.WrongResult as e:
        print(f"ok: a wrong peer is refused: {e}")

    failures += check_a_form_that_raises(table, data, references)

    try:
        from numba import cuda

        import gpu_peers_numba
    except ImportError as e:
        print(f"skipped: Numba's kernel in the simulator: Numba does not import ({e})")
    else:
        points = np.random.default_rng(3).random((24, 3))
        result = cuda.device_array((24, 24), dtype=np.float64)
        gpu_peers_numba.distance_kernel[(2, 2), (16, 16)](cuda.to_device(points), result)
        expected = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2))
        error = float(np.max(np.abs(result.copy_to_host() - expected)))
        if error > 1e-14:
            failures.append(f"seed 002's Numba kernel in the simulator: off by {error:.3g}")
        else:
            print(f"ok: seed 002's Numba kernel in the simulator matches NumPy's distances ({error:.1e})")

    failures += check_row_stack_for_numba()

    loaded, reasons = gpu_peers.load_all()
    names = [library.name for library in loaded] + list(reasons)
    if sorted(names) != sorted(name for name, _ in gpu_peers.LOADERS) or not all(reasons.values()):
        failures.append(f"load_all: loaded {[l.name for l in loaded]}, reasons {reasons}")
    else:
        print(f"ok: load_all: loaded {[l.name for l in loaded] or 'none'}; not run: {reasons}")

    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2:
        print(f"skipped: load_all keeping the thread's CPUs: this process may use only CPU {sorted(cpus)}")
    else:
        def binds_to_one_cpu():
            os.sched_setaffinity(0, {min(cpus)})
            raise gpu_peers.Unavailable("stand-in: bound this thread to one CPU")
        loaders = gpu_peers.LOADERS
        gpu_peers.LOADERS = [("binds", binds_to_one_cpu)]
        try:
            gpu_peers.load_all()
        finally:
            gpu_peers.LOADERS = loaders
        after = os.sched_getaffinity(0)
        if after != cpus:
            failures.append(f"load_all left the thread on CPUs {sorted(after)}, not {sorted(cpus)}")
            os.sched_setaffinity(0, cpus)
        else:
            print(f"ok: load_all keeps the thread on its {len(cpus)} CPUs where a library bound it to one")

    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
