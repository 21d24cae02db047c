"""Accuracy: finite differences against dual numbers, and symbolic expression swell.

1. The derivative of the logistic map v ← 4v(1 − v) iterated k = 3 times, at x = 0.3:
   the error of forward and central finite differences against the exact value, for steps
   h = 10^-1 … 10^-15 (truncation error falls with h, round-off grows as eps/h: the V), and
   dualad's error, which has no step (benchmarks/results/fd_error.png).
2. Expression swell: sympy's derivative of the logistic map iterated k = 1 … 8 times (its
   size in operations and the time to form it) against one Dual evaluation of the loop.
"""

import argparse
import time
from fractions import Fraction

import numpy as np

import dualad
from common import fmt_time, per_call, pyplot, save, save_plot, table

X0 = 0.3


def logistic(x, k=3):
    for _ in range(k):
        x = 4.0 * x * (1.0 - x)
    return x


def exact_derivative(x, k=3):
    """d/dx of the map iterated k times at the float x, in exact rational arithmetic (the
    chain rule: ∏ (4 − 8 v_i) over the iterates), rounded once at the end."""
    v, slope = Fraction(x), Fraction(1)
    for _ in range(k):
        slope *= 4 - 8 * v
        v = 4 * v * (1 - v)
    return float(slope)


def step_errors():
    """(steps, forward-difference errors, central-difference errors, dualad's error)."""
    exact = exact_derivative(X0)
    steps = 10.0 ** -np.arange(1, 16)
    forward = [abs((logistic(X0 + h) - logistic(X0)) / h - exact) for h in steps]
    central = [abs((logistic(X0 + h) - logistic(X0 - h)) / (2 * h) - exact) for h in steps]
    ad = abs(dualad.derivative(logistic)(X0) - exact)
    return steps, np.array(forward), np.array(central), ad


def swell(max_k, min_time):
    """Rows per k: sympy's derivative size and time, dualad's time for the same derivative."""
    try:
        import sympy
    except ImportError:
        return None
    x = sympy.Symbol("x")
    rows = []
    for k in range(1, max_k + 1):
        expr = logistic(x, k)
        start = time.perf_counter()
        derivative = sympy.diff(expr, x)
        expanded = sympy.expand(derivative)
        symbolic = time.perf_counter() - start
        dual = per_call(dualad.derivative(lambda t: logistic(t, k)), X0, min_time=min_time, repeats=3)
        value = float(derivative.subs(x, X0))
        assert abs(value - dualad.derivative(lambda t: logistic(t, k))(X0)) <= 1e-9 * max(1.0, abs(value))
        rows.append([k, sympy.count_ops(derivative), sympy.count_ops(expanded), fmt_time(symbolic),
                     fmt_time(dual)])
    return rows


def plot(steps, forward, central, ad):
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    floor = np.finfo(float).eps / 2  # plot an exact 0 at half an ulp
    ax.loglog(steps, np.maximum(forward, floor), "o-", label="forward difference")
    ax.loglog(steps, np.maximum(central, floor), "s-", label="central difference")
    ax.axhline(max(ad, floor), color="C2", label="dualad (dual numbers, no step)")
    ax.set_xlabel("step h")
    ax.set_ylabel("absolute error of d/dx")
    ax.set_title("logistic map ×3 at x = 0.3: finite differences vs AD")
    ax.invert_xaxis()
    ax.legend()
    save_plot(fig, "fd_error")


def run(max_k, min_time):
    steps, forward, central, ad = step_errors()
    rows = [[f"1e-{int(round(-np.log10(h)))}", f"{f:.1e}", f"{c:.1e}"] for h, f, c in zip(steps, forward, central)]
    best = int(np.argmin(central))
    text = ("### Finite differences vs dual numbers: d/dx of the logistic map iterated 3 times at x = 0.3\n\n"
            + table(["step h", "forward difference error", "central difference error"], rows)
            + f"\n\ndualad's error: {ad:.1e} (no step to choose). The best central difference "
              f"(h = {steps[best]:.0e}) is off by {central[best]:.1e}.")
    swell_rows = swell(max_k, min_time)
    if swell_rows is None:
        text += "\n\nsympy is not installed (pip install -e \".[peers]\"): no expression-swell table."
    else:
        text += ("\n\n### Expression swell: d/dx of the logistic map iterated k times\n\n"
                 + table(["k", "sympy derivative (operations)", "expanded (operations)",
                          "sympy: differentiate + expand", "dualad: one Dual evaluation"], swell_rows))
    return text, (steps, forward, central, ad)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    text, curves = run(max_k=5 if args.quick else 8, min_time=0.01 if args.quick else 0.1)
    print(text)
    save("accuracy", text)
    plot(*curves)


if __name__ == "__main__":
    main()
