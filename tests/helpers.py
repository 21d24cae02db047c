"""Helpers shared by the test modules of both folders (tests/ and tests/compiled/)."""

import importlib.util
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def rule_point(rule):
    """A point inside the rule's domain, away from its edges."""
    return [min(max(0.37 + 0.1 * i, lo + 0.05), hi - 0.05) for i, (lo, hi) in enumerate(rule.domain)]


def load_example(name):
    """examples/<name>.py as a module."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def richardson_jacobian(f, x, h):
    """∂f/∂x by central differences of steps h and h/2, Richardson extrapolated (error O(h⁴)):
    shape f(x).shape + x.shape."""
    def central(step):
        columns = []
        for index in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[index] = step
            columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * step))
        return np.moveaxis(np.array(columns).reshape(x.shape + np.shape(f(x))),
                           list(range(x.ndim)), list(range(-x.ndim, 0)))
    return (4 * central(h / 2) - central(h)) / 3


def assert_second_order_three_ways(f, x, atol, differences):
    """The Hessian of a weighted sum of f's output by HyperDual blocks, forward over reverse
    and jacfwd of jacrev agree (rtol 1e-10, atol), and match differences of the gradient
    (differences(gradient, x): a central-difference Jacobian)."""
    import dualad

    weights = np.linspace(0.5, 1.5, np.size(f(x))).reshape(np.shape(f(x)))

    def g(x):
        return np.sum(weights * f(x))
    hessian = dualad.hessian(g, mode="forward")(x)
    np.testing.assert_allclose(dualad.hessian(g, mode="forward-over-reverse")(x), hessian, rtol=1e-10, atol=atol)
    np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(g))(x), hessian, rtol=1e-10, atol=atol)
    np.testing.assert_allclose(hessian, differences(dualad.grad(g), x), rtol=1e-6, atol=1e-7)
