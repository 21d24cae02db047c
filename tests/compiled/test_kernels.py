"""Compiled forward kernels (jit/kernels.py): numba dual and hyper-dual types agree with the
Python path, kernels are callable from numba, argnums, chunks, seeded inputs.

Kernels compile once per module (module-level dispatchers); numba compiles are slow.
"""

import math

import numba
import numpy as np
import pytest

import dualad
import dualad.math as dmath
from functions import FUNCTIONS
from functions import rosen_loop as rosen_loop_py
from numba_functions import (D1, D2, GRAD_ROSEN, M2, X5, mlp, pair, quartic, quartic_prime, rosen_loop,
                             rosen_vec, scalar_mix, textbook)


@numba.njit
def arrays_and_control_flow(x):
    y = np.zeros_like(x)
    y[0] = x[0] ** 2
    for i in range(1, len(x)):
        if x[i] > 0.5:
            y[i] = y[i - 1] * x[i] + 1.0
        else:
            y[i] = -x[i]
    prod, diff = pair(x[0], x[1])
    v = x[2]
    while v < 10.0:
        v = v * 2.0 + 1.0
    ones = np.ones_like(x)
    ones[1] = 3.0
    e = np.empty_like(x)
    e[0] = x[3]
    for i in range(1, x.shape[0]):
        e[i] = 0.5
    return np.sum(y) + prod * diff + v + np.dot(ones, x) + np.sum(e * x) - np.sin(x)[4]


def test_kernels_are_dispatchers_and_match_the_python_path():
    g = GRAD_ROSEN  # dualad.grad(rosen_loop)
    assert hasattr(g, "py_func")
    np.testing.assert_allclose(g(X5), dualad.grad(rosen_loop_py)(X5), rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(rosen_vec)(X5), dualad.grad(rosen_loop_py)(X5), rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(arrays_and_control_flow)(X5),
                               dualad.grad(arrays_and_control_flow.py_func)(X5), rtol=1e-14)
    value, gradient = dualad.value_and_grad(textbook)(np.array([2.0, 5.0]))
    assert value == pytest.approx(math.log(2) + 10 - math.sin(5), rel=1e-15)
    np.testing.assert_allclose(gradient, [5.5, 2 - math.cos(5)], rtol=1e-15)
    np.testing.assert_allclose(dualad.jacobian(mlp)(X5[:4].repeat(2)[:6]),
                               dualad.jacobian(mlp.py_func)(X5[:4].repeat(2)[:6]), rtol=1e-14)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8])
def test_chunk_sweep_compiled(chunk):
    np.testing.assert_allclose(dualad.grad(rosen_loop, chunk=chunk)(X5),
                               dualad.grad(rosen_loop_py)(X5), rtol=1e-15)


@numba.njit
def newton_minimise(x0):
    # Newton's method written entirely in numba, calling compiled derivative kernels.
    x = x0
    for _ in range(50):
        x = x - D1(x) / D2(x)
    return x


def test_kernels_callable_from_njit_code():
    x = newton_minimise(3.0)
    assert abs(D1(x)) < 1e-12
    assert D1(2.0) == quartic_prime(2.0)


def test_jit_option():
    plain = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    compiled = dualad.grad(plain, jit=True)
    assert hasattr(compiled, "py_func")
    np.testing.assert_allclose(compiled(X5), dualad.grad(plain)(X5), rtol=1e-14)
    python = dualad.grad(rosen_loop, jit=False)
    assert not hasattr(python, "py_func")
    np.testing.assert_allclose(python(X5), GRAD_ROSEN(X5), rtol=1e-14)  # dualad.grad(rosen_loop)


@pytest.mark.parametrize("chunk", [None, 2])
def test_compiled_hvp(chunk):
    v = np.linspace(-1.0, 1.0, 5)
    expected = dualad.hessian(rosen_loop_py)(X5) @ v
    kernel = dualad.hvp(rosen_loop, chunk=chunk)
    assert hasattr(kernel, "py_func")
    np.testing.assert_allclose(kernel(X5, v), expected, rtol=1e-13)
    np.testing.assert_allclose(dualad.hvp(rosen_vec, chunk=chunk)(X5, v), expected, rtol=1e-13)
    with pytest.raises(ValueError, match="shapes"):
        kernel(X5, v[:3])


def test_compiled_kernels_of_a_scalar_input_return_scalars():
    """Shapes follow JAX (and the Python path) for a scalar x too: grad is a scalar."""
    for transform, args in ((dualad.grad, (0.5,)), (dualad.hvp, (0.5, 2.0))):
        compiled, python = transform(quartic)(*args), transform(quartic, jit=False)(*args)
        assert np.shape(compiled) == np.shape(python) == ()
        assert compiled == pytest.approx(python, rel=1e-14)
    assert dualad.hvp(quartic)(0.5, 2.0) == pytest.approx(2.0 * (12 * 1.0 + 2.0), rel=1e-14)


@pytest.mark.parametrize("f", [rosen_loop, textbook, scalar_mix], ids=["rosen", "textbook", "mix"])
def test_compiled_hessian_matches_python_path(f):
    x = X5[:2] + 2.5 if f is textbook else X5
    expected = dualad.hessian(f, jit=False)(x)
    for chunk in range(1, x.size + 1):
        np.testing.assert_allclose(dualad.hessian(f, chunk=chunk)(x), expected, rtol=1e-13, atol=1e-12)


def test_compiled_second_derivative():
    f = numba.njit(lambda t: math.exp(t) * math.sin(t) + t ** 3)
    for t in (0.5, -1.25):
        assert dualad.second_derivative(f)(t) == pytest.approx(
            2 * math.exp(t) * math.cos(t) + 6 * t, rel=1e-14)
    assert dualad.second_derivative(f, jit=False)(0.5) == pytest.approx(dualad.second_derivative(f)(0.5), rel=1e-15)


def test_compiled_hessian_of_vectorised_code():
    """Arrays of hyper-duals: slices, ** and np.sum on whole arrays, two block widths."""
    expected = dualad.hessian(rosen_loop_py)(X5)
    np.testing.assert_allclose(dualad.hessian(rosen_vec)(X5), expected, rtol=1e-13)
    np.testing.assert_allclose(dualad.hessian(rosen_vec, chunk=2)(X5), expected, rtol=1e-13)


@numba.njit
def _iterates(x):
    total = 0.0
    for xi in x:                 # a seeded input
        total += xi ** 3
    for xi in x[1::2]:           # a seeded slice
        total += math.sin(xi) * x[0]
    for yi in np.tanh(M2 @ x[:3]):  # a stored array of duals
        total += yi * yi
    return total


def test_iteration_over_dual_arrays():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9])
    np.testing.assert_allclose(dualad.grad(_iterates)(x), dualad.grad(_iterates, jit=False)(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.hessian(_iterates, chunk=2)(x), dualad.hessian(_iterates, jit=False)(x),
                               rtol=1e-13, atol=1e-15)


@numba.njit
def _weighted(scale, x, shift):
    return scale * rosen_loop(x) + shift * x[0] ** 3


G1 = dualad.grad(_weighted, argnums=1)


@numba.njit
def _calls_moved_kernel(x):
    return G1(2.0, x, 0.5)[0]


def test_compiled_argnums():
    x = X5[:3]
    expected = dualad.grad(_weighted.py_func, argnums=1)(2.0, x, 0.5)
    assert hasattr(G1, "py_func")
    np.testing.assert_allclose(G1(2.0, x, 0.5), expected, rtol=1e-14)
    assert _calls_moved_kernel(x) == pytest.approx(expected[0], rel=1e-14)
    np.testing.assert_allclose(dualad.hessian(_weighted, argnums=1, chunk=2)(2.0, x, 0.5),
                               dualad.hessian(_weighted.py_func, argnums=1)(2.0, x, 0.5), rtol=1e-13)
    assert dualad.derivative(_weighted, argnums=2)(2.0, x, 0.5) == pytest.approx(x[0] ** 3, rel=1e-15)
    # the Python path runs the moved kernel's Python equivalent
    d_by_scale = dualad.derivative(lambda s: G1(s, x, 0.5)[0])(2.0)  # = ∂rosen/∂x0
    assert d_by_scale == pytest.approx(dualad.grad(rosen_loop_py)(x)[0], rel=1e-14)
    with pytest.raises(ValueError, match="jit=False"):
        dualad.grad(_weighted, argnums=-2)


@numba.njit
def _slices(x):
    even, odd, rev = x[::2], x[1::2], x[::-1]
    inner = x[1:][::2]
    return (np.sum(even * odd) + rev[0] * x[-1] + np.sum(inner ** 3) + x[-2] * rev[-1]
            + np.sum(np.sin(M2 @ x[:3])))


@numba.njit
def _writes_its_input(x):
    x[0] = 1.0
    return x[0]


def test_seeded_input_slices_and_read_only_input():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9, 0.45])
    for chunk in (1, 4, 8):
        np.testing.assert_allclose(dualad.grad(_slices, chunk=chunk)(x),
                                   dualad.grad(_slices, jit=False)(x), rtol=1e-14)
    # f overwrites its input: its output no longer depends on x (issue 12: f works on its own
    # copy, as under NumPy, instead of a compile error), and the caller's x stays as it was
    before = x.copy()
    np.testing.assert_array_equal(dualad.grad(_writes_its_input)(x), np.zeros_like(x))
    np.testing.assert_array_equal(x, before)


@numba.njit
def _vectorised(x):
    big = x > 0.4                                  # comparison: a boolean array
    y = np.where(big, x ** 2, -3.0 * x)            # derivative of the branch taken
    z = np.where(x < 0.0, 0.0, np.roll(x, 2))      # a plain number in one branch
    return (np.sum(y * z) + np.prod(x[:3] + 2.0) + np.dot(x, x[::-1]) + np.sum(-x)
            + np.sum(np.roll(np.sin(x), -1) * x))


def test_vectorised_dual_array_operations():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9, 0.45])
    np.testing.assert_allclose(dualad.grad(_vectorised)(x), dualad.grad(_vectorised, jit=False)(x),
                               rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(_vectorised, chunk=4)(x),
                               dualad.grad(_vectorised, jit=False)(x), rtol=1e-14)
    # the same operations on arrays of hyper-duals
    np.testing.assert_allclose(dualad.hessian(_vectorised, chunk=3)(x),
                               dualad.hessian(_vectorised, jit=False)(x), rtol=1e-13, atol=1e-14)


def test_compiled_jvp():
    x, v = np.array([0.3, -0.4, 0.5, 0.8, -0.9]), np.linspace(1.0, 2.0, 5)
    value, tangent = dualad.jvp(rosen_loop, (x,), (v,))
    expected = dualad.jvp(rosen_loop_py, (x,), (v,))
    assert value == expected[0]
    assert tangent == pytest.approx(expected[1], rel=1e-14)
    out, slope = dualad.jvp(mlp, (X5.repeat(2)[:6],), (np.ones(6),))
    np.testing.assert_allclose(slope, dualad.jacobian(mlp)(X5.repeat(2)[:6]).sum(axis=1), rtol=1e-14)
    assert dualad.jvp(quartic, (2.0,), (3.0,)) == (quartic(2.0), pytest.approx(3.0 * quartic_prime(2.0)))


# ---- the shared test functions through the compiled path ------------------------------------------
# These compile for duals and must agree with the Python path (an n-D input through its flat
# view); every other function of the shared list uses what numba cannot compile for duals
# (np.linalg, lists of mixed types, recursive closures) and must say that jit=False works.
COMPILES = {"rosen", "rosen_loop", "textbook", "mlp", "assignment", "matrices"}
FLAT_VIEW = {"matrix_input"}  # an n-D input: from Python, its flat view compiles


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=[name for name, _, _ in FUNCTIONS])
def test_shared_functions_compiled(name, f, x):
    compiled = numba.njit(f)
    if name in COMPILES:  # forward, the compiled tape and auto agree with the Python path
        expected = dualad.jacobian(f)(x)
        for mode in ("forward", "reverse", "auto"):
            np.testing.assert_allclose(dualad.jacobian(compiled, mode=mode)(x), expected, rtol=1e-13,
                                       err_msg=mode)
        cotangent = np.linspace(0.5, 1.5, np.size(f(x))).reshape(np.shape(f(x)))
        value, vjp_fn = dualad.vjp(compiled, x)  # vjp_fn runs dualad.jit.tape.vjp(compiled)
        np.testing.assert_allclose(value, f(x), rtol=1e-14)
        pullback = vjp_fn(cotangent if np.ndim(cotangent) else float(cotangent))[0]
        np.testing.assert_allclose(pullback, np.tensordot(cotangent, expected, np.ndim(cotangent)),
                                   rtol=1e-13)
    elif name in FLAT_VIEW:
        expected = dualad.jacobian(f)(x)
        for mode in ("forward", "reverse", "auto"):
            np.testing.assert_allclose(dualad.jacobian(compiled, mode=mode)(x), expected, rtol=1e-13,
                                       err_msg=mode)
    else:
        with pytest.raises(Exception, match="jit=False") as info:
            dualad.jacobian(compiled)(x)
        assert isinstance(info.value, (numba.core.errors.NumbaError, NotImplementedError, ImportError))


@numba.njit
def _builtins_and_joins(x):
    if math.isnan(x[0]) or dmath.isinf(x[1]):
        return x[0] * 0.0
    top = max(x[0], x[1]) + min(x[2], 0.25) + max(0.1, x[3])
    stacked = np.stack((x[0], x[1] * 2.0, 3.0))
    joined = np.concatenate((x[:2], np.ones(2), np.sin(x[2:])))
    joined[1:3] = stacked[:2]
    items = [x[0] * 2.0]                 # a list of duals, grown in a loop
    for i in range(1, 3):
        items.append(x[i] ** 2)
    return (np.sum(np.stack(items) * x[2:]) + top + np.sum(stacked * x[:3]) + np.dot(joined, joined) + dmath.log(x[0] + 2.0, 2.0)
            + dmath.erf(x[1]) + dmath.log(3.0))


def test_builtins_stack_concatenate_and_dualad_math_compiled():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9])
    np.testing.assert_allclose(dualad.grad(_builtins_and_joins)(x),
                               dualad.grad(_builtins_and_joins, jit=False)(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.hessian(_builtins_and_joins, chunk=3)(x),
                               dualad.hessian(_builtins_and_joins, jit=False)(x), rtol=1e-13, atol=1e-15)


@numba.njit
def _of_a_scalar(x):
    return np.sin(x) * x ** 3


@numba.njit
def _vector_of_a_scalar(x):
    return np.array([np.sin(x), x * x])


def test_every_transform_of_a_scalar_input_equals_the_python_path_in_value_and_shape():
    """A float input is one seeded element, not an array of one (guards: the compiled Hessian
    of a scalar failing to compile, its forward-over-reverse Hessian a 1 × 1 array)."""
    scalar_transforms = [dualad.grad, dualad.value_and_grad, dualad.hessian,
                         lambda f, **k: dualad.grad(f, mode="reverse", **k),
                         lambda f, **k: dualad.hessian(f, mode="forward-over-reverse", **k)]
    for transform in scalar_transforms:
        compiled, python = transform(_of_a_scalar)(0.7), transform(_of_a_scalar, jit=False)(0.7)
        assert np.shape(compiled) == np.shape(python)
        np.testing.assert_allclose(compiled, python, rtol=1e-14)
    for mode in ("forward", "forward-over-reverse"):
        np.testing.assert_allclose(dualad.hvp(_of_a_scalar, mode=mode)(0.7, 2.0),
                                   dualad.hvp(_of_a_scalar, jit=False)(0.7, 2.0), rtol=1e-14)
    for mode in ("forward", "reverse"):
        jac = dualad.jacobian(_vector_of_a_scalar, mode=mode)(0.7)
        assert jac.shape == (2,)
        np.testing.assert_allclose(jac, dualad.jacobian(_vector_of_a_scalar, jit=False)(0.7), rtol=1e-14)


def test_the_same_transform_of_the_same_function_is_made_once():
    """dualad.grad(f)(x) inside a loop: the second transform is the kernel made by the first
    (compiled once), as jax.jit keeps one per function; a new one would compile again, in
    seconds and megabytes a time (docs/decisions/0003-kernel-cache-and-identity.md). Other
    options, another."""
    import time

    first = dualad.grad(rosen_loop, mode="reverse")
    np.testing.assert_allclose(first(X5), GRAD_ROSEN(X5), rtol=1e-13)
    start = time.perf_counter()
    again = dualad.grad(rosen_loop, mode="reverse")
    np.testing.assert_allclose(again(X5), GRAD_ROSEN(X5), rtol=1e-13)
    assert again is first and time.perf_counter() - start < 0.5
    assert dualad.grad(rosen_loop, mode="forward") is not first
    assert dualad.jacobian(rosen_loop, mode="reverse") is not first


@numba.njit
def _scalar_out(x):
    return np.sum(np.sin(x) * x)


@numba.njit
def _vector_out(x):
    return np.cumsum(x * x[::-1])


@numba.njit
def _matrix_out(x):
    return np.outer(np.sin(x), x[:3]).T  # a transposed view: strided components


@numba.njit
def _tensor_out(x):
    t = np.zeros((2, 3, 2))
    for i in range(2):
        for j in range(3):
            t[i, j, 0] = x[i] * x[j + 1]
            t[i, j, 1] = np.exp(x[i + j])
    return t


@numba.njit
def _input_out(x):
    return x


@numba.njit
def _constant_out(x):
    return 2.5


@numba.njit
def _constant_array_out(x):
    return np.ones(4)


@pytest.mark.parametrize("f", [_scalar_out, _vector_out, _matrix_out, _tensor_out, _input_out,
                               _constant_out, _constant_array_out])
def test_forward_jacobian_of_every_output_kind_equals_the_python_paths(f):
    # 11 inputs in passes of 4, 4 and 3: each pass writes its partials into its columns only
    x = np.linspace(-0.7, 0.9, 11)
    expected = dualad.jacobian(f.py_func, mode="forward", jit=False)(x)
    for chunk in (4, None):
        got = dualad.jacobian(f, mode="forward", chunk=chunk)(x)
        assert got.shape == np.shape(expected)
        np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)


@numba.njit
def _tuple_out(x):
    return x[0], x[1] * 2.0


def test_a_compiled_jacobian_names_an_output_it_cannot_take():
    with pytest.raises(numba.core.errors.TypingError, match="returned UniTuple.*a float, a 1-D, 2-D or 3-D array of floats or a list"):
        dualad.jacobian(_tuple_out, mode="forward")(np.ones(2))
