"""The textbook walkthrough: Griewank & Walther's worked examples, computed live.

Prints the forward evaluation trace of f(x1, x2) = ln x1 + x1·x2 − sin x2 at (2, 5) (both
tangents carried by one Dual), the reverse (adjoint) trace (one sweep back from v̄5 = 1),
the exact gradient and Hessian, and the other small examples; then checks that forward
mode, reverse mode and hyper-duals agree. Same as `python -m dualad demo`, plus the check.
Run: python examples/textbook.py
"""

import numpy as np

import dualad
from dualad.demo import run as demo


def textbook(x):
    return np.log(x[0]) + x[0] * x[1] - np.sin(x[1])


def check():
    """The gradient by each mode and the Hessian by each mode, against the closed forms."""
    x = np.array([2.0, 5.0])
    exact_gradient = np.array([1 / x[0] + x[1], x[0] - np.cos(x[1])])
    exact_hessian = np.array([[-1 / x[0] ** 2, 1.0], [1.0, np.sin(x[1])]])
    gradients = {mode: dualad.grad(textbook, mode=mode)(x) for mode in ("forward", "reverse")}
    hessians = {mode: dualad.hessian(textbook, mode=mode)(x) for mode in ("forward", "forward-over-reverse")}
    return gradients, hessians, exact_gradient, exact_hessian


def main():
    demo()
    gradients, hessians, exact_gradient, exact_hessian = check()
    print("\nevery mode against the closed forms:")
    for mode, g in gradients.items():
        print(f"  gradient, {mode:21} max error {np.max(np.abs(g - exact_gradient)):.1e}")
    for mode, h in hessians.items():
        print(f"  Hessian,  {mode:21} max error {np.max(np.abs(h - exact_hessian)):.1e}")


if __name__ == "__main__":
    main()
