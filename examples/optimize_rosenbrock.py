"""scipy.optimize.minimize on the Rosenbrock function with dualad's exact derivatives.

Newton-CG and trust-exact get `jac=` and `hess=` from dualad (the gradient by reverse mode,
the Hessian by forward-over-reverse); BFGS without `jac=` is what you get with finite
differences. Run: python examples/optimize_rosenbrock.py [n]
"""

import sys
import time

import numpy as np
from scipy.optimize import minimize

import dualad


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def run(n=100):
    """One row per method: (method, iterations, function evaluations, seconds, distance to the minimum)."""
    x0 = np.linspace(-1.0, 2.0, n)
    jac = dualad.grad(rosen, mode="reverse")
    hess = dualad.hessian(rosen, mode="forward-over-reverse")
    setups = [("Newton-CG, dualad jac + hess", dict(method="Newton-CG", jac=jac, hess=hess), {"xtol": 1e-10}),
              ("trust-exact, dualad jac + hess", dict(method="trust-exact", jac=jac, hess=hess), {"gtol": 1e-10}),
              ("BFGS, dualad jac", dict(method="BFGS", jac=jac), {"gtol": 1e-8}),
              ("BFGS, finite differences", dict(method="BFGS"), {"gtol": 1e-8})]
    rows = []
    for name, method, options in setups:
        start = time.perf_counter()
        result = minimize(rosen, x0, options=dict(options, maxiter=20000), **method)
        rows.append((name, result.nit, result.nfev, time.perf_counter() - start,
                     float(np.max(np.abs(result.x - 1.0)))))
    return rows


def main(n=100):
    print(f"Rosenbrock, n = {n}, from x0 = linspace(-1, 2, n)\n")
    print(f"{'method':34} {'iterations':>10} {'f evals':>8} {'time':>9} {'max |x - 1|':>12}")
    for name, nit, nfev, seconds, error in run(n):
        print(f"{name:34} {nit:10d} {nfev:8d} {seconds:8.3f}s {error:12.2e}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
