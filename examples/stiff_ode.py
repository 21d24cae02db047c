"""A stiff ODE: Robertson's chemical kinetics with scipy's BDF, given dualad's Jacobian.

    y1' = -0.04 y1 + 1e4 y2 y3
    y2' =  0.04 y1 - 1e4 y2 y3 - 3e7 y2²
    y3' =  3e7 y2²

The right-hand side is a numba function, so dualad.jacobian(rhs, argnums=1) is a compiled
forward-mode kernel. Without `jac=`, BDF estimates the Jacobian by finite differences (one
more f evaluation per state variable each time). Run: python examples/stiff_ode.py [t_end]
"""

import sys
import time

import numba
import numpy as np
from scipy.integrate import solve_ivp

import dualad


@numba.njit(cache=True)
def robertson(t, y):
    fast = 1e4 * y[1] * y[2]
    slow = 3e7 * y[1] ** 2
    dy = np.zeros_like(y)
    dy[0] = -0.04 * y[0] + fast
    dy[1] = 0.04 * y[0] - fast - slow
    dy[2] = slow
    return dy


def run(t_end=1e5):
    """{label: (solution at t_end, steps, f evaluations, Jacobian evaluations, seconds)}; the
    f evaluations include those of finite-difference Jacobians."""
    jacobian = dualad.jacobian(robertson, argnums=1)  # J = ∂f/∂y, compiled
    y0 = np.array([1.0, 0.0, 0.0])
    jacobian(0.0, y0)  # compile before timing
    robertson(0.0, y0)
    results = {}
    for label, jac in (("dualad Jacobian", jacobian), ("finite differences", None)):
        calls = [0]

        def rhs(t, y):  # counts every evaluation, the finite-difference Jacobian's included
            calls[0] += 1
            return robertson(t, y)

        start = time.perf_counter()
        sol = solve_ivp(rhs, (0.0, t_end), y0, method="BDF", jac=jac, rtol=1e-8, atol=1e-10)
        seconds = time.perf_counter() - start
        if not sol.success:
            raise RuntimeError(sol.message)
        results[label] = (sol.y[:, -1], sol.t.size - 1, calls[0], sol.njev, seconds)
    return results


def main(t_end=1e5):
    print(f"Robertson kinetics on [0, {t_end:g}], BDF, rtol 1e-8\n")
    print(f"{'Jacobian':20} {'steps':>6} {'f evals':>8} {'J evals':>8} {'time':>8}  y(t_end)")
    for label, (y, steps, nfev, njev, seconds) in run(t_end).items():
        print(f"{label:20} {steps:6d} {nfev:8d} {njev:8d} {seconds:7.3f}s  {np.array2string(y, precision=6)}")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1e5)
