"""The registry's compiled column (docs/numpy.md): every entry marked compiled runs in @njit
code on arrays of duals, and its compiled Jacobian equals the Python path's. One kernel
calls them all (one compile)."""

import numba
import numpy as np

import dualad
from dualad.functions import REGISTRY

W = np.array([0.3, -1.2, 0.8, 0.5])

# the entries exercised by all_compiled below
EXERCISED = {np.matmul, np.dot, np.sum, np.max, np.amax, np.min, np.amin, np.prod, np.roll,
             np.concatenate, np.stack, np.where, np.zeros_like, np.empty_like, np.ones_like,
             np.full_like}


@numba.njit
def all_compiled(x):
    y = x * x
    buf = np.zeros_like(x)
    buf[0] = np.sum(y)
    empty = np.empty_like(x)
    for i in range(len(x)):
        empty[i] = y[i] - x[0]
    ones = np.ones_like(x) * x[1]
    full = np.full_like(x, 2.0) * x[2]
    return np.concatenate((
        np.stack((np.dot(x, W), x @ W, np.matmul(x, W), np.max(y), np.amax(x), np.min(y), np.amin(x),
                  np.prod(x), np.sum(np.roll(x, 1) * W))),
        np.where(x > 0.5, y, x), buf, empty, ones, full))


def test_every_compiled_entry_is_exercised():
    assert EXERCISED == {func for func, entry in REGISTRY.items() if entry.compiled}


def test_compiled_entries_match_the_python_path():
    x = np.array([0.7, -0.4, 1.3, 0.2])
    for mode in ("forward", "reverse"):
        compiled = dualad.jacobian(all_compiled, mode=mode)(x)
        python = dualad.jacobian(all_compiled, mode=mode, jit=False)(x)
        np.testing.assert_array_equal(compiled, python)
