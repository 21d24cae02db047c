"""Python-path gradient and Hessian of the vectorised Rosenbrock function.

dualad (Dual for the gradient, HyperDual blocks for the Hessian) against hand-written
analytic derivatives in NumPy and, as the limit, the same hand-written code compiled with
numba, all in one process. Ratios are dualad's time over the hand-written one.
"""

import argparse

import numba
import numpy as np

import dualad
from common import fmt_time, per_call, save, table


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_grad(x):
    xm, xn = x[:-1], x[1:]
    t = xn - xm ** 2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * xm * t - 2.0 * (1.0 - xm)
    g[1:] += 200.0 * t
    return g


def rosen_hess(x):
    xm, xn = x[:-1], x[1:]
    diag = np.zeros_like(x)
    diag[:-1] = 1200.0 * xm ** 2 - 400.0 * xn + 2.0
    diag[1:] += 200.0
    off = -400.0 * xm
    return np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)


rosen_grad_numba = numba.njit(cache=True)(rosen_grad)
rosen_hess_numba = numba.njit(cache=True)(rosen_hess)


def run(sizes, min_time):
    rows = []
    for n in sizes:
        x = np.linspace(-1.2, 1.2, n)
        g, h = dualad.grad(rosen), dualad.hessian(rosen)
        np.testing.assert_allclose(g(x), rosen_grad(x), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(h(x), rosen_hess(x), rtol=1e-12, atol=1e-9)
        t = {name: per_call(fn, x, min_time=min_time) for name, fn in [
            ("f", rosen), ("grad_np", rosen_grad), ("grad_nb", rosen_grad_numba), ("grad", g),
            ("hess_np", rosen_hess), ("hess_nb", rosen_hess_numba), ("hess", h)]}
        rows.append([n, fmt_time(t["f"]),
                     fmt_time(t["grad_np"]), fmt_time(t["grad_nb"]), fmt_time(t["grad"]),
                     f"{t['grad'] / t['grad_np']:.1f}×", f"{t['grad'] / t['grad_nb']:.1f}×",
                     fmt_time(t["hess_np"]), fmt_time(t["hess_nb"]), fmt_time(t["hess"]),
                     f"{t['hess'] / t['hess_np']:.0f}×", f"{t['hess'] / t['hess_nb']:.0f}×"])
    header = ["n", "f", "grad: NumPy hand", "numba hand", "dualad", "vs NumPy", "vs numba",
              "Hessian: NumPy hand", "numba hand", "dualad", "vs NumPy", "vs numba"]
    text = ("### Python path: vectorised Rosenbrock, gradient (Dual) and Hessian (HyperDual)\n\n"
            + table(header, rows))
    return text


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = [2, 10, 100] if args.quick else [2, 10, 100, 1000]
    text = run(sizes, min_time=0.01 if args.quick else 0.1)
    print(text)
    save("python_path", text)


if __name__ == "__main__":
    main()
