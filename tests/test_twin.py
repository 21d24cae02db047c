"""The twin (twin.py): a numba function inside a Python-path transform runs as its pure-Python
twin, and a Python dual that reaches a dispatcher any other way names the fix. No compiles."""

import numba
import numpy as np
import pytest

import dualad
from functions import rosen_loop

X5 = np.array([-1.2, 1.0, 0.7, 0.3, 1.1])

compiled_rosen_loop = numba.njit(rosen_loop)


def test_reverse_mode_of_a_numba_function_on_the_python_path():
    x = np.array([0.3, 0.4, 0.5])
    np.testing.assert_allclose(dualad.grad(numba.njit(rosen_loop), mode="reverse", jit=False)(x),
                               dualad.grad(rosen_loop)(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.jacrev(numba.njit(rosen_loop), jit=False)(x),
                               dualad.grad(rosen_loop)(x), rtol=1e-14)


def test_python_dual_passed_to_a_dispatcher_names_the_fix():
    namespace = type("Namespace", (), {"f": compiled_rosen_loop})  # reached as an attribute: no twin

    with pytest.raises(TypeError, match="(?s)passed to a numba-compiled function.*dualad.grad"):
        dualad.grad(lambda x: namespace.f(x))(X5)
    # named in the closure, the Python path runs its twin
    np.testing.assert_allclose(dualad.grad(lambda x: compiled_rosen_loop(x) * 2.0)(X5),
                               2.0 * dualad.grad(rosen_loop)(X5), rtol=1e-14)
