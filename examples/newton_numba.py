"""Newton's method entirely inside @numba.njit, calling dualad's compiled kernels.

The objective is a smooth, convex regularised log-sum-exp fit, written as ordinary scalar
numba code. dualad.grad and dualad.hessian turn it into compiled kernels, which the
compiled Newton loop below calls like any other numba function: no Python in the loop.
Run: python examples/newton_numba.py [n]
"""

import math
import sys
import time

import numba
import numpy as np

import dualad


@numba.njit(cache=True)
def objective(x, a, b):
    """Σ_i log(1 + exp(a_i · x − b_i)) + ½‖x‖²."""
    total = 0.0
    for i in range(a.shape[0]):
        s = -b[i]
        for j in range(x.shape[0]):
            s += a[i, j] * x[j]
        total += math.log(1.0 + math.exp(s))
    for j in range(x.shape[0]):
        total += 0.5 * x[j] * x[j]
    return total


gradient = dualad.grad(objective)
hessian = dualad.hessian(objective)


@numba.njit
def newton(x, a, b, tolerance, max_steps):
    """Newton steps x ← x − H⁻¹∇f until ‖∇f‖ < tolerance: (x, steps, ‖∇f‖)."""
    for step in range(max_steps):
        g = gradient(x, a, b)
        norm = np.sqrt(np.sum(g * g))
        if norm < tolerance:
            return x, step, norm
        x = x - np.linalg.solve(hessian(x, a, b), g)
    g = gradient(x, a, b)
    return x, max_steps, np.sqrt(np.sum(g * g))


def run(n=20, m=200, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, n)), rng.normal(size=m)
    x0 = np.zeros(n)
    newton(x0, a, b, 1e-12, 50)  # compile
    start = time.perf_counter()
    x, steps, norm = newton(x0, a, b, 1e-12, 50)
    return x, steps, norm, time.perf_counter() - start


def main(n=20):
    x, steps, norm, seconds = run(n)
    print(f"Newton's method in numba, n = {n}: {steps} steps, ‖∇f‖ = {norm:.2e}, "
          f"{seconds * 1e3:.2f} ms (compiled kernels called from compiled code)")
    print("x* =", np.array2string(x[:6], precision=6), "..." if n > 6 else "")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
