"""Compiled linear algebra on 2-D arrays of duals against hand-written analytic derivatives.

f(x) = solve(B + diag(x), b) (x in R^n) and g(x) = log|det(B + diag(x))|: their Jacobian
and gradient by dualad compiled (forward mode: LU run on duals of width chunk, n/chunk
passes; reverse mode: the elimination recorded on the tape), by the Python path (the
registry's JVP rules on LAPACK), and by hand with numba (J = −A⁻¹ diag(f(x)), ∇g =
diag(A⁻¹), LAPACK through numba). Ratios are dualad's time over the hand-written numba one,
in the same run; medians of 5 rounds ± half their interquartile range.
"""

import argparse

import numba
import numpy as np

import dualad
from common import fmt_time, per_call_spread, save, table


def problem(n):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, n)), rng.normal(size=n), np.abs(rng.normal(size=n)) + n


def run(sizes, min_time):
    rows = []
    for n in sizes:
        B, b, x = problem(n)

        @numba.njit
        def f(x):
            return np.linalg.solve(B + np.diag(x), b)

        @numba.njit
        def g(x):
            return np.linalg.slogdet(B + np.diag(x))[1]

        @numba.njit
        def jacobian_by_hand(x):
            a = B + np.diag(x)
            return -np.linalg.inv(a) * np.linalg.solve(a, b)[np.newaxis, :]

        @numba.njit
        def gradient_by_hand(x):
            return np.diag(np.linalg.inv(B + np.diag(x))).copy()

        kernels = {"jac forward": dualad.jacobian(f, mode="forward"),
                   "jac reverse": dualad.jacobian(f, mode="reverse"),
                   "jac Python": dualad.jacobian(f, jit=False),
                   "grad forward": dualad.grad(g, mode="forward"),
                   "grad reverse": dualad.grad(g, mode="reverse"),
                   "grad Python": dualad.grad(g, jit=False)}
        for name, kernel in kernels.items():
            expected = jacobian_by_hand(x) if name.startswith("jac") else gradient_by_hand(x)
            np.testing.assert_allclose(kernel(x), expected, rtol=1e-8, atol=1e-12, err_msg=name)
        hand = {"jac": per_call_spread(jacobian_by_hand, x, min_time=min_time)[0],
                "grad": per_call_spread(gradient_by_hand, x, min_time=min_time)[0]}
        row = [n, fmt_time(hand["jac"]), fmt_time(hand["grad"])]
        for name, kernel in kernels.items():
            median, spread = per_call_spread(kernel, x, min_time=min_time, slow=0.5)
            base = hand[name.split()[0]]
            row.append(f"{median / base:.1f}× ± {spread / base:.1f}")
        rows.append(row)
    header = ["n", "Jacobian by hand (numba)", "gradient by hand (numba)"] + [
        f"{name} / hand" for name in ("jac forward", "jac reverse", "jac Python", "grad forward",
                                      "grad reverse", "grad Python")]
    return ("### Compiled linear algebra: Jacobian of solve(B + diag(x), b), gradient of "
            "log|det(B + diag(x))|\n\n" + table(header, rows))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = [5, 20] if args.quick else [5, 20, 50]
    text = run(sizes, min_time=0.01 if args.quick else 0.1)
    print(text)
    save("linalg", text)


if __name__ == "__main__":
    main()
