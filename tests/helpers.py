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
