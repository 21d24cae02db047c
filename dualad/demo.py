"""`python -m dualad demo`: the textbook worked examples, computed live.

The forward evaluation trace follows Griewank & Walther's table for
f(x1, x2) = ln x1 + x1·x2 − sin x2 at (2, 5): every intermediate v_i with its primal and
its tangent for the seeds ẋ = (1, 0) and ẋ = (0, 1), carried together by one Dual with two
partials.
"""

import numpy as np

from .dual import Dual
from .number import new_tag
from .transforms import derivative, grad, hessian, jvp, second_derivative


def _trace(x1, x2):
    """The intermediates of f as (name, expression, Dual) rows."""
    tag = new_tag()
    v_1 = Dual(x1, [1.0, 0.0], tag=tag)
    v0 = Dual(x2, [0.0, 1.0], tag=tag)
    v1 = np.log(v_1)
    v2 = v_1 * v0
    v3 = np.sin(v0)
    v4 = v1 + v2
    v5 = v4 - v3
    return [("v-1", "x1", v_1), ("v0", "x2", v0), ("v1", "ln v-1", v1), ("v2", "v-1 · v0", v2),
            ("v3", "sin v0", v3), ("v4", "v1 + v2", v4), ("v5", "v4 − v3", v5)]


def textbook(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def run(out=print):
    out("dualad demo: forward mode on the textbook examples\n")
    out("f(x1, x2) = ln x1 + x1·x2 − sin x2 at (x1, x2) = (2, 5)")
    out("forward evaluation trace (one Dual pass carries both seeds):\n")
    out(f"  {'':4} {'':10} {'primal':>12} {'tangent ẋ=(1,0)':>17} {'tangent ẋ=(0,1)':>17}")
    for name, expr, d in _trace(2.0, 5.0):
        out(f"  {name:4} {expr:10} {float(d.value):12.6f} {d.partials[0]:17.6f} {d.partials[1]:17.6f}")
    x = np.array([2.0, 5.0])
    f = lambda z: textbook(z[0], z[1])  # noqa: E731
    g = grad(f)(x)
    h = hessian(f)(x)
    out(f"\n  gradient  ∇f = {np.array2string(g, precision=6)}   (exact: [5.5, 2 − cos 5])")
    out("  Hessian (exact, one HyperDual block):")
    for row in h:
        out(f"    {np.array2string(row, precision=6)}")
    out("  (exact: [[−1/x1², 1], [1, sin x2]])")

    out("\nf(x) = x² + ln x at x = 2")
    out(f"  f'(2)  = {derivative(lambda z: z ** 2 + np.log(z))(2.0)}   (2x + 1/x = 4.5)")
    out(f"  f''(2) = {second_derivative(lambda z: z ** 2 + np.log(z))(2.0)}  (2 − 1/x² = 1.75)")

    def logistic(z):
        for _ in range(3):
            z = 4 * z * (1 - z)
        return z

    def closed(z):
        return 64 * z * (1 - z) * (1 - 2 * z) ** 2 * (1 - 8 * z + 8 * z * z) ** 2

    out("\nlogistic map v ← 4v(1−v), three times, at x = 0.3")
    out(f"  d/dx of the loop        = {derivative(logistic)(0.3):.12f}")
    out(f"  d/dx of the closed form = {derivative(closed)(0.3):.12f}   (64x(1−x)(1−2x)²(1−8x+8x²)²)")

    out("\nloss = (x + 1 − 2x)² at x = 3")
    out(f"  d loss/dx = {derivative(lambda z: (z + 1 - 2 * z) ** 2)(3.0)}   (= 2(x − 1) = 4)")

    value, slope = jvp(lambda z: z ** 3, (2.0,), (1.0,))
    out("\nf(x) = x³ at x = 2, value and derivative fused in one Dual evaluation")
    out(f"  (f, f') = ({value}, {slope})   (8, 12)")
