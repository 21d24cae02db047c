"""Compile errors of the compiled path name the problem and the fix (jit/kernels._explained)."""

import numba
import numpy as np
import pytest

import dualad
from numba_functions import D1, X5


def test_nested_compiled_transforms_explain_the_fix():
    with pytest.raises(numba.core.errors.TypingError, match="jit=False to the outer"):
        dualad.derivative(D1)(2.0)
    # the outer transform on the Python path runs the inner kernel's Python equivalent
    assert dualad.derivative(D1, jit=False)(2.0) == pytest.approx(12 * 0.5 ** 2 + 2, rel=1e-14)


@numba.njit
def _float_argument_buffer(x, y):
    y[0] = x[0]  # y is the caller's float array: it cannot hold a dual
    return y[0]


def test_a_dual_stored_in_a_float_array_it_did_not_allocate_names_the_fix():
    # (a buffer f allocates itself holds duals: tests/compiled/test_numpy_compiled.py)
    with pytest.raises(numba.core.errors.TypingError,
                       match="(?s)float array cannot hold a dual.*argument.*zeros_like"):
        dualad.grad(_float_argument_buffer)(X5, np.zeros(5))


@numba.njit
def _uses_pad(x):
    return np.pad(x, 1)[-2] * x[0]  # no compiled entry (docs/numpy.md)


def test_uncompilable_function_names_the_operation_and_the_fix():
    with pytest.raises(numba.core.errors.TypingError, match="(?s)pad.*jit=False"):
        dualad.grad(_uses_pad)(X5)
    x = np.array([2.0, 3.0])
    np.testing.assert_array_equal(dualad.grad(_uses_pad, jit=False)(x), [3.0, 2.0])
