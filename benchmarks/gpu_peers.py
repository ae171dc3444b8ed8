"""The seeds' GPU Python libraries as peers of the mini-app's device space (benchmarks/peers.py --gpu-peers).

Each library runs the rows' forms on the same arrays as NumPy (the data copied to the device once,
before any timing: the mini-app's side is data resident too), each call followed by the library's
own synchronisation, and each result compared with NumPy's. A library that does not import or sees
no GPU is not run, with its reason; a row it has no form for (Numba: the seeds write only `x ** y`
and the distance matrix as Numba kernels) is left empty.

    CuPy     the NumPy forms on cupy arrays (seeds 001 and 002)
    Numba    `x ** y` as seed 000's `@vectorize(target='cuda')` into a device array; the distance
             matrix as seed 002's `@cuda.jit` kernel, one thread per entry (gpu_peers_numba.py)
    JAX      the NumPy forms on jax.numpy arrays (64-bit enabled); the regression as seed 001's
             jitted step, `beta - lr * jax.grad(loss)(beta, X, y)` with the loss the mean square
    PyTorch  the NumPy forms on torch tensors
"""

import os
import statistics
import time

import numpy as np


class Unavailable(Exception):
    """Why a library is not run here."""


class WrongResult(RuntimeError):
    """A peer's result differs from NumPy's beyond the row's tolerance: the run fails, loudly."""


class Library:
    """An array library on its GPU: moves arrays there and back, waits for a result, names itself."""

    def __init__(self, name, version, to_device, to_host, wait, xp=None, forms=None):
        self.name, self.version = name, version
        self.to_device, self.to_host, self.wait = to_device, to_host, wait
        self.xp = xp  # a namespace with NumPy's names for the rows' generic forms, or None
        self.forms = forms or {}  # row key -> form(row, device data), overriding the generic one


def load_cupy():
    import cupy as cp
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA's runtime without a driver or device raises its own error types
        raise Unavailable(f"CuPy {cp.__version__} finds no GPU ({e})")
    if count < 1:
        raise Unavailable(f"CuPy {cp.__version__} finds no GPU")
    return Library("CuPy", cp.__version__, cp.asarray, cp.asnumpy, lambda result: cp.cuda.Device().synchronize(),
                   xp=cp)


def numpy_row_stack_for_numba():
    """Puts numpy.row_stack back as numpy.vstack where NumPy no longer has it, for Numba.

    row_stack was an alias of vstack (deprecated in NumPy 2.0, since removed); Numba 0.68's CUDA
    target still looks it up when it compiles a kernel, so on the H200 node of 2026-11-28 (NumPy
    2.5.2) both Numba rows failed with "module 'numpy' has no attribute 'row_stack'". Returns what
    it did, for the library's version string, or '' where NumPy has the name.
    """
    if hasattr(np, "row_stack"):
        return ""
    np.row_stack = np.vstack
    return "numpy.row_stack set to numpy.vstack for it"


def load_numba():
    shim = numpy_row_stack_for_numba()
    import numba
    from numba import cuda
    if not cuda.is_available():
        raise Unavailable(f"Numba {numba.__version__}: numba.cuda.is_available() is False")
    import gpu_peers_numba as forms
    version = f"{numba.__version__} ({shim})" if shim else numba.__version__
    return Library("Numba", version, cuda.to_device, lambda a: a.copy_to_host(),
                   lambda result: cuda.synchronize(),
                   forms=dict(power=lambda row, d: forms.power_form(d),
                              distance=lambda row, d: forms.distance_form(d)))


def jax_regression(row, d):
    """Seed 001's JAX form: the step jitted, its gradient by jax.grad."""
    import jax
    import jax.numpy as jnp
    learning_rate = row["learning_rate"]

    def loss(beta, x, y):
        return jnp.mean((x @ beta - y) ** 2)

    @jax.jit
    def step(beta, x, y):
        return beta - learning_rate * jax.grad(loss)(beta, x, y)

    def fit():
        beta = d["beta"]
        for _ in range(row["steps"]):
            beta = step(beta, d["x"], d["y"])
        return beta
    return fit


def load_jax():
    # JAX takes 75% of the GPU's memory as it starts unless told not to: the mini-app's own runs and
    # the other libraries need theirs.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)  # the rows' float64 stays float64
    gpus = [device for device in jax.devices() if device.platform == "gpu"]
    if not gpus:
        platforms = ", ".join(sorted({device.platform for device in jax.devices()}))
        raise Unavailable(f"JAX {jax.__version__} has no GPU device (only {platforms})")
    return Library("JAX", jax.__version__, lambda a: jax.device_put(a, gpus[0]), np.asarray,
                   lambda result: result.block_until_ready(), xp=jnp,
                   forms=dict(regression=jax_regression))


class TorchNamespace:
    """NumPy's names for what the rows' forms use, on torch."""

    def __init__(self, torch):
        self.linalg, self.einsum, self.sqrt = torch.linalg, torch.einsum, torch.sqrt
        self.maximum = lambda a, floor: torch.clamp(a, min=floor)


def load_torch():
    import torch
    if not torch.cuda.is_available():
        raise Unavailable(f"PyTorch {torch.__version__}: torch.cuda.is_available() is False")
    gpu = torch.device("cuda")
    return Library("PyTorch", torch.__version__, lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(gpu),
                   lambda t: t.cpu().numpy(), lambda result: torch.cuda.synchronize(), xp=TorchNamespace(torch))


LOADERS = [("CuPy", load_cupy), ("Numba", load_numba), ("JAX", load_jax), ("PyTorch", load_torch)]


def load_all():
    """([Library], {name: reason not run}) for the four libraries, in the table's order.
    The calling thread's CPUs are the same afterwards: PyTorch loads libgomp, which with OMP_PROC_BIND
    set binds the thread to one CPU as it loads. A pthreads OpenBLAS (pip's NumPy) shuts its
    threads down at each fork (the mini-app's runs) and starts them again from this thread, so
    all of them on that CPU, and NumPy's solves crawl (docs/results/README.md, 2026-11-28)."""
    cpus = os.sched_getaffinity(0)
    loaded, reasons = [], {}
    for name, load in LOADERS:
        try:
            loaded.append(load())
        except ImportError as e:
            reasons[name] = f"does not import ({e})"
        except Unavailable as e:
            reasons[name] = str(e)
        except Exception as e:  # a broken install: named, not hidden
            reasons[name] = f"failed to start: {type(e).__name__}: {e}"
    if os.sched_getaffinity(0) != cpus:
        os.sched_setaffinity(0, cpus)
    return loaded, reasons


def has_form(library, row):
    return row["key"] in library.forms or library.xp is not None


def form_for(library, row, device_data):
    """The callable the library times for a row (has_form(library, row) true)."""
    if row["key"] in library.forms:
        return library.forms[row["key"]](row, device_data)
    return row["form"](library.xp, device_data)


def time_on_device(form, wait, repetitions):
    """(median seconds, last result): a warm-up call (compilation), then each call waited for."""
    result = form()
    wait(result)
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        result = form()
        wait(result)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def mismatch(result, reference, tolerance):
    """None where result matches NumPy's to tolerance (relative to the largest |reference|), else why."""
    result = np.asarray(result, dtype=np.float64).reshape(reference.shape)
    scale = float(np.max(np.abs(reference))) or 1.0
    error = float(np.max(np.abs(result - reference))) / scale
    if error <= tolerance:
        return None
    return f"differs from NumPy's result by {error:.3g} (relative; allowed {tolerance:g})"


def run_round(libraries, table, data, references, repetitions, forms, failed):
    """{(row index, library name): seconds} for one round; raises WrongResult on a wrong result.
    `forms` keeps each library's forms (and its device copies of the data) from round to round.
    A form that raises (its compilation or the library's own call: on the H200 node, Numba's CUDA
    target imports `numpy.row_stack`, which that node's NumPy no longer has) is not run again:
    `failed` gets {(row index, library name): why}, which the table prints beside its reason."""
    times = {}
    for library in libraries:
        for i, row in enumerate(table):
            key = (i, library.name)
            if not has_form(library, row) or key in failed:
                continue
            try:
                if key not in forms:  # the data copied once, before the library's first timing of the row
                    forms[key] = form_for(library, row, {k: library.to_device(v) for k, v in data[i].items()})
                seconds, result = time_on_device(forms[key], library.wait, repetitions)
                host_result = library.to_host(result)
            except Exception as e:  # the library's failure, named in the table, not a number
                lines = str(e).strip().splitlines()
                failed[key] = f"{type(e).__name__}: {lines[-1] if lines else ''}"[:200]
                forms.pop(key, None)
                continue
            why = mismatch(host_result, references[i], row["tolerance"])
            if why:
                raise WrongResult(f"{library.name}, {row['label']}: {why}")
            times[key] = seconds
    return times
