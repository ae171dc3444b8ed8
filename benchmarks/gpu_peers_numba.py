"""The seeds' Numba forms (gpu_peers.py imports this only where Numba imports): seed 000's `x ** y`
as a CUDA ufunc and seed 002's distance kernel, one thread per entry. Numba is imported at module
level so that its CUDA simulator (NUMBA_ENABLE_CUDASIM=1) can stand in for `cuda` in the kernel."""

import numpy as np
from numba import cuda, vectorize


def power_form(d):
    """Seed 000's form: a CUDA ufunc, inputs pre-copied, the output kept on the device."""

    @vectorize(["float32(float32, float32)"], target="cuda")
    def power(x, y):
        return x ** y
    out = cuda.device_array(d["x"].shape, dtype=np.float32)
    return lambda: power(d["x"], d["y"], out=out)


@cuda.jit
def distance_kernel(points, result):
    """Seed 002's kernel: one thread per entry of the distance matrix."""
    row, col = cuda.grid(2)
    if row < result.shape[0] and col < result.shape[1]:
        total = 0.0
        for k in range(points.shape[1]):
            diff = points[row, k] - points[col, k]
            total += diff * diff
        result[row, col] = total ** 0.5


def distance_form(d):
    n = d["p"].shape[0]
    result = cuda.device_array((n, n), dtype=np.float64)
    threads, blocks = (16, 16), ((n + 15) // 16, (n + 15) // 16)

    def form():
        distance_kernel[blocks, threads](d["p"], result)
        return result
    return form
