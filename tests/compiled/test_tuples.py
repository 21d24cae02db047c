"""Compiled kernels of numba functions that take a tuple of floats and 1-D arrays (jit/tuples.py):
results have the tuple's structure and equal the Python path's."""

import numba
import numpy as np
import pytest

import dualad
from dualad.tree import flatten


@numba.njit(cache=True)
def energy(params, coupling):
    weights, angles, scale = params  # scalar code, so that the compiled tape records it too
    s, norm = 0.0, 0.0
    for i in range(len(angles)):
        s += np.sin(angles[i]) * weights[i % len(weights)]
    for w in weights:
        norm += w * w
    return norm * scale + s * scale ** 2 + coupling


@numba.njit(cache=True)
def scaled(params):
    vector, factor = params
    return vector * factor


PARAMS = (np.array([1.0, 2.0]), np.array([0.5, 0.1, 0.2]), 1.5)


def assert_same_tree(got, expected):
    got_leaves, got_def = flatten(got)
    expected_leaves, expected_def = flatten(expected)
    assert got_def == expected_def, (got_def.describe(), expected_def.describe())
    for g, e in zip(got_leaves, expected_leaves):
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_compiled_gradient_of_a_tuple_argument(mode):
    value, gradient = dualad.value_and_grad(energy, mode=mode)(PARAMS, 0.5)
    python_value, python_gradient = dualad.value_and_grad(energy, jit=False)(PARAMS, 0.5)
    assert value == pytest.approx(python_value, rel=1e-14)
    assert isinstance(gradient, tuple) and len(gradient) == 3 and np.ndim(gradient[2]) == 0
    assert_same_tree(gradient, python_gradient)


def test_compiled_hessian_of_a_tuple_argument_is_a_tuple_of_blocks():
    hess = dualad.hessian(energy, chunk=2)(PARAMS, 0.5)  # blocks that straddle two leaves
    assert_same_tree(hess, dualad.hessian(energy, jit=False)(PARAMS, 0.5))
    assert hess[0][1].shape == (2, 3) and hess[1][2].shape == (3,) and np.ndim(hess[2][2]) == 0


def test_compiled_jacobian_jvp_and_hvp_of_tuples():
    params = (np.array([1.0, 2.0]), 3.0)
    assert_same_tree(dualad.jacfwd(scaled)(params), dualad.jacfwd(scaled, jit=False)(params))
    tangent = (np.array([1.0, 0.0]), 1.0)
    assert_same_tree(dualad.jvp(scaled, (params,), (tangent,)),
                     dualad.jvp(scaled.py_func, (params,), (tangent,)))
    direction = (np.ones(2), np.ones(3), 1.0)
    assert_same_tree(dualad.hvp(energy)(PARAMS, direction, 0.5),
                     dualad.hvp(energy, jit=False)(PARAMS, direction, 0.5))


def test_tuple_kernels_are_callable_from_numba():
    gradient = dualad.grad(energy)

    @numba.njit
    def descend(params, steps):
        weights, angles, scale = params
        for _ in range(steps):
            g_weights, g_angles, g_scale = gradient((weights, angles, scale), 0.5)
            weights = weights - 0.01 * g_weights
            angles = angles - 0.01 * g_angles
            scale = scale - 0.01 * g_scale
        return energy((weights, angles, scale), 0.5)

    assert descend(PARAMS, 50) < energy(PARAMS, 0.5)


def test_tuples_the_compiled_path_cannot_take_say_so():
    with pytest.raises(numba.core.errors.TypingError,
                       match="(?s)tuple of floats and 1-D float arrays, not .*int64.*jit=False"):
        dualad.grad(energy)((np.ones(2), np.ones(3), 2), 0.5)  # an int leaf: passed through in Python


@numba.njit(cache=True)
def weighted(scale, x, t):
    total = 0.0
    for i in range(len(x)):
        total += scale * x[i] ** 3 * t + np.sin(t * x[i])
    return total


@pytest.mark.parametrize("argnums", [(0, 1), (2, 0)])
def test_compiled_tuple_argnums_give_tuples_as_jax_does(argnums):
    args = (2.0, np.array([0.3, 0.5, 0.9]), 0.5)
    expected = dualad.grad(weighted, argnums=argnums, jit=False)(*args)
    for mode in ("forward", "reverse"):
        assert_same_tree(dualad.grad(weighted, argnums=argnums, mode=mode)(*args), expected)
    assert_same_tree(dualad.hessian(weighted, argnums=argnums)(*args),
                     dualad.hessian(weighted, argnums=argnums, jit=False)(*args))
    gradient = dualad.grad(weighted, argnums=argnums)

    @numba.njit
    def from_numba(x):
        first, second = gradient(2.0, x, 0.5)
        return first + second

    a, b = expected
    np.testing.assert_allclose(from_numba(args[1]), a + b, rtol=1e-13)
    with pytest.raises(ValueError, match="names an argument twice"):
        dualad.grad(weighted, argnums=(1, 1))
    with pytest.raises(ValueError, match="derivative differentiates one scalar argument"):
        dualad.derivative(weighted, argnums=argnums)
