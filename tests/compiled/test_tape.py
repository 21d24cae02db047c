"""Compiled reverse mode (jit/tape.py): the tape inside numba equals forward mode and the Python
path, grows, keeps its buffers safely, records array code and vector outputs."""

import math

import numba
import numpy as np
import pytest

import dualad
from functions import rosen_loop as rosen_loop_py
from numba_functions import X5, layer, rosen_loop, rosen_vec, scalar_mix, textbook


@numba.njit
def _iterates_scalars(x):
    total = 0.0
    for xi in x:                 # iteration over the active input
        total += xi ** 3
    for xi in x[1::2]:           # and over a slice of it
        total += math.sin(xi) * x[0]
    return total


@pytest.mark.parametrize("f", [rosen_loop, textbook, scalar_mix, _iterates_scalars],
                         ids=["rosen", "textbook", "mix", "iterates"])
def test_compiled_reverse_equals_forward_and_python(f):
    x = X5[:2] + 2.5 if f is textbook else X5
    reverse = dualad.grad(f, mode="reverse")
    assert hasattr(reverse, "py_func")
    np.testing.assert_allclose(reverse(x), dualad.grad(f, mode="forward")(x), rtol=1e-13)
    np.testing.assert_allclose(reverse(x), dualad.grad(f, jit=False, mode="reverse")(x), rtol=1e-13)
    value, gradient = dualad.value_and_grad(f, mode="reverse")(x)
    assert value == pytest.approx(f(x), rel=1e-15)
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x), gradient, rtol=1e-15)


@numba.njit
def _long_loop(x):
    # far more nodes than the tape's first capacity (16 per input + 256): the kernel re-runs
    total = 0.0
    for step in range(2000):
        total += math.sin(x[step % 2] * 0.001 * step) * x[1]
    return total


GR = dualad.grad(_long_loop, mode="reverse")


@numba.njit
def _calls_reverse_kernel(x):
    return GR(x)[0] + GR(x * 2.0)[1]


def test_compiled_reverse_grows_its_tape_and_is_callable_from_njit():
    x = np.array([0.7, -0.3])
    np.testing.assert_allclose(GR(x), dualad.grad(_long_loop, jit=False)(x), rtol=1e-12)
    expected = dualad.grad(_long_loop, jit=False)(x)[0] + dualad.grad(_long_loop, jit=False)(2 * x)[1]
    assert _calls_reverse_kernel(x) == pytest.approx(expected, rel=1e-12)
    assert dualad.grad(numba.njit(lambda t: t ** 3 * math.sin(t)), mode="reverse")(0.7) == pytest.approx(
        3 * 0.49 * math.sin(0.7) + 0.343 * math.cos(0.7), rel=1e-15)


@numba.njit
def _fails_below_zero(x):
    if x[0] < 0.0:
        raise ValueError("x[0] < 0")
    total = 0.0
    for i in range(len(x)):
        total += math.sin(x[i]) * x[0]
    return total


GF = dualad.grad(_fails_below_zero, mode="reverse")


@numba.njit(parallel=True)
def _reverse_kernels_in_parallel(xs):
    out = np.empty_like(xs)
    for i in numba.prange(xs.shape[0]):
        out[i] = GR(xs[i])  # one call takes the kept buffers, the others their own
    return out


def test_compiled_tape_keeps_its_buffers_safely():
    reference = dualad.grad(_fails_below_zero, jit=False)
    for n in (3, 2000, 5, 2000):  # the kept buffers grow, then serve smaller tapes
        x = np.linspace(0.1, 2.0, n)
        np.testing.assert_allclose(GF(x), reference(x), rtol=1e-13)
    with pytest.raises(ValueError, match="x\\[0\\] < 0"):
        GF(np.array([-1.0, 2.0]))  # raised while the buffers were taken: later calls use new ones
    x = np.linspace(0.1, 2.0, 50)
    np.testing.assert_allclose(GF(x), reference(x), rtol=1e-13)
    xs = np.random.default_rng(3).normal(size=(64, 2))
    serial = np.array([GR(row) for row in xs])  # one call at a time: the pool is never shared
    np.testing.assert_array_equal(_reverse_kernels_in_parallel(xs), serial)
    # and the kernel is right (the Python path takes 0.5 s a row here: a sample of rows)
    expected = np.array([dualad.grad(_long_loop, jit=False)(row) for row in xs[::16]])
    np.testing.assert_allclose(serial[::16], expected, rtol=1e-12)


@numba.njit
def _buffer(x):
    y = np.zeros_like(x)  # a buffer of actives: zeros are constants
    for i in range(1, len(y)):
        y[i] = y[i - 1] * x[i] + x[0] ** 2
    return y


@numba.njit
def _vector_and_scale(p):
    v, s = p
    return np.sin(v) * s


JR = dualad.jacrev(_buffer)


@numba.njit
def _calls_jacrev(x):
    return JR(x)[2, 0]


def test_compiled_tape_records_array_code_and_vector_outputs():
    rng = np.random.default_rng(5)
    w, b, x = rng.normal(size=(3, 6)), rng.normal(size=3), rng.normal(size=6)
    jac = dualad.jacrev(layer)(x, w, b)  # np.tanh(W @ x + b): arrays of actives
    np.testing.assert_allclose(jac, dualad.jacfwd(layer, jit=False)(x, w, b), rtol=1e-13)
    np.testing.assert_allclose(dualad.jacobian(layer, mode="reverse")(x, w, b), jac, rtol=1e-15)
    np.testing.assert_allclose(dualad.grad(rosen_vec, mode="reverse")(X5),
                               dualad.grad(rosen_loop_py)(X5), rtol=1e-13)
    np.testing.assert_allclose(dualad.jacrev(_buffer)(X5), dualad.jacfwd(_buffer, jit=False)(X5), rtol=1e-13)
    pair = (X5[:2], 0.5)  # a tuple input: one block per leaf
    for got, expected in zip(dualad.jacrev(_vector_and_scale)(pair),
                             dualad.jacfwd(_vector_and_scale, jit=False)(pair)):
        np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert _calls_jacrev(X5) == pytest.approx(dualad.jacfwd(_buffer, jit=False)(X5)[2, 0], rel=1e-14)
