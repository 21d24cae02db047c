"""Python-path gradient, Hessian and Hessian-vector product of the vectorised Rosenbrock function.

dualad's modes (gradient: forward Duals, the reverse tape, and auto's pick; Hessian:
HyperDual blocks and forward-over-reverse; hvp: the default, against dualad's own reverse
gradient, issue 16's "hvp ≤ 5× the reverse gradient") against hand-written analytic derivatives in
NumPy and, as the limit, the same hand-written code compiled with numba, all in one
process. Ratios are dualad's time over the hand-written NumPy one. Modes whose cost grows
like n² or n³ are skipped ("—") at sizes where one call would take seconds.
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


def rosen_hvp(x, v):
    """H v without forming H: the tridiagonal Hessian's rows applied to v."""
    xm, xn = x[:-1], x[1:]
    diag = np.zeros_like(x)
    diag[:-1] = 1200.0 * xm ** 2 - 400.0 * xn + 2.0
    diag[1:] += 200.0
    off = -400.0 * xm
    out = diag * v
    out[:-1] += off * v[1:]
    out[1:] += off * v[:-1]
    return out


rosen_grad_numba = numba.njit(cache=True)(rosen_grad)
rosen_hess_numba = numba.njit(cache=True)(rosen_hess)


def run(sizes, min_time):
    rows = []
    for n in sizes:
        x = np.linspace(-1.2, 1.2, n)
        grads = {"forward": dualad.grad(rosen, mode="forward") if n <= 10 ** 4 else None,
                 "reverse": dualad.grad(rosen, mode="reverse"), "auto": dualad.grad(rosen)}
        hessians = {"forward": dualad.hessian(rosen, mode="forward") if n <= 100 else None,
                    "forward-over-reverse": (dualad.hessian(rosen, mode="forward-over-reverse")
                                             if n <= 1000 else None)}
        for fn in list(grads.values()):
            if fn is not None:
                np.testing.assert_allclose(fn(x), rosen_grad(x), rtol=1e-12, atol=1e-9)
        for fn in hessians.values():
            if fn is not None:
                np.testing.assert_allclose(fn(x), rosen_hess(x), rtol=1e-12, atol=1e-9)
        v = np.cos(np.arange(n))
        hvp = dualad.hvp(rosen)
        np.testing.assert_allclose(hvp(x, v), rosen_hvp(x, v), rtol=1e-12, atol=1e-9)
        t = {name: per_call(fn, x, min_time=min_time) for name, fn in [
            ("f", rosen), ("grad_np", rosen_grad), ("grad_nb", rosen_grad_numba)]}
        t.update({name: per_call(fn, x, min_time=min_time) for name, fn in grads.items() if fn})
        show = {name: fmt_time(t[name]) if name in t else "—" for name in grads}
        row = [n, fmt_time(t["f"]), fmt_time(t["grad_np"]), fmt_time(t["grad_nb"]), show["forward"],
               show["reverse"], f"{show['auto']} ({dualad.choose_mode(rosen, x).mode})",
               f"{t['reverse'] / t['grad_np']:.1f}×"]
        hvp_time = per_call(hvp, x, v, min_time=min_time)
        row += [fmt_time(per_call(rosen_hvp, x, v, min_time=min_time)), fmt_time(hvp_time),
                f"{hvp_time / t['reverse']:.1f}×"]
        if n <= 1000:
            hess_np = per_call(rosen_hess, x, min_time=min_time)
            times = {name: per_call(fn, x, min_time=min_time) for name, fn in hessians.items() if fn}
            row += [fmt_time(hess_np)] + [fmt_time(times[k]) if k in times else "—" for k in hessians]
        else:
            row += ["—"] * 3
        rows.append(row)
    header = ["n", "f", "grad: NumPy hand", "numba hand", "forward", "reverse", "auto (its pick)",
              "reverse vs NumPy", "hvp: NumPy hand", "dualad hvp", "hvp vs reverse grad",
              "Hessian: NumPy hand", "HyperDual", "forward-over-reverse"]
    return ("### Python path: vectorised Rosenbrock, gradient, hvp and Hessian by mode\n\n"
            + table(header, rows))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = [2, 10, 100] if args.quick else [2, 10, 100, 1000, 10 ** 4, 10 ** 6]
    text = run(sizes, min_time=0.01 if args.quick else 0.1)
    print(text)
    save("python_path", text)


if __name__ == "__main__":
    main()
