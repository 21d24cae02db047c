"""`python -m dualad demo`: the textbook worked examples, computed live.

The forward evaluation trace follows Griewank & Walther's table for
f(x1, x2) = ln x1 + x1·x2 − sin x2 at (2, 5): every intermediate v_i with its primal and
its tangent for the seeds ẋ = (1, 0) and ẋ = (0, 1), carried together by one Dual with two
partials. The reverse (adjoint) trace records the same intermediates on a tape and sweeps
back once from v̄5 = 1: each v̄_i = ∂f/∂v_i, ending with the whole gradient in (v̄-1, v̄0).
Then the mode dualad.choose_mode picks for a wide and for a tall Jacobian, and why.
"""

import numpy as np

from .dual import Dual
from .number import new_tag
from .modes import choose_mode
from .transforms import derivative, grad, hessian, jvp, second_derivative


def _trace(v_1, v0):
    """The intermediates of f as (name, expression, value) rows, for any kind of number."""
    v1 = np.log(v_1)
    v2 = v_1 * v0
    v3 = np.sin(v0)
    v4 = v1 + v2
    v5 = v4 - v3
    return [("v-1", "x1", v_1), ("v0", "x2", v0), ("v1", "ln v-1", v1), ("v2", "v-1 · v0", v2),
            ("v3", "sin v0", v3), ("v4", "v1 + v2", v4), ("v5", "v4 − v3", v5)]


def _adjoint_trace(out):
    """Record the intermediates on a tape, then one backward sweep from v̄5 = 1."""
    from .reverse import Tape, leaf

    tape = Tape()
    rows = _trace(leaf(2.0, tape), leaf(5.0, tape))
    adjoints = tape.backward(rows[-1][2].node, 1.0, [v.node for _, _, v in rows])
    out("\nreverse (adjoint) trace: one sweep back from v̄5 = 1 gives the whole gradient\n")
    out(f"  {'':4} {'':10} {'primal':>12} {'adjoint v̄ = ∂f/∂v':>20}")
    for (name, expr, v), adjoint in reversed(list(zip(rows, adjoints))):
        out(f"  {name:4} {expr:10} {float(v.value):12.6f} {float(adjoint):20.6f}")


def _mode_choices(out):
    rng = np.random.default_rng(0)
    out("\nforward or reverse? dualad.choose_mode for f(x) = tanh(W x), W of shape (M, N)")
    for kind, (n_out, n_in) in (("wide", (10, 1000)), ("tall", (1000, 10))):
        w = rng.normal(size=(n_out, n_in))
        out(f"  {kind} Jacobian: {choose_mode(lambda x: np.tanh(w @ x), np.ones(n_in)).reason}")


def textbook(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def run(out=print):
    out("dualad demo: forward and reverse mode on the textbook examples\n")
    out("f(x1, x2) = ln x1 + x1·x2 − sin x2 at (x1, x2) = (2, 5)")
    out("forward evaluation trace (one Dual pass carries both seeds):\n")
    out(f"  {'':4} {'':10} {'primal':>12} {'tangent ẋ=(1,0)':>17} {'tangent ẋ=(0,1)':>17}")
    tag = new_tag()
    for name, expr, d in _trace(Dual(2.0, [1.0, 0.0], tag=tag), Dual(5.0, [0.0, 1.0], tag=tag)):
        out(f"  {name:4} {expr:10} {float(d.value):12.6f} {d.partials[0]:17.6f} {d.partials[1]:17.6f}")
    _adjoint_trace(out)
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

    _mode_choices(out)

    value, slope = jvp(lambda z: z ** 3, (2.0,), (1.0,))
    out("\nf(x) = x³ at x = 2, value and derivative fused in one Dual evaluation")
    out(f"  (f, f') = ({value}, {slope})   (8, 12)")
