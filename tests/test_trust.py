"""Regression tests for the silent wrong results of issue 12, one per item; each kind also has
a guard elsewhere (test_properties, test_fuzz, test_special_points, test_cache)."""

import numba
import numpy as np
import pytest

import dualad
from dualad.number import EscapedPerturbation


def doubles_first(x):
    x[0] = 2 * x[0]
    return np.sum(x ** 2)


def doubles_first_gradient(x):
    return np.concatenate([[8.0 * x[0]], 2.0 * x[1:]])


# ---- item 2: f that assigns into its argument ----------------------------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("n", [2, 64])
def test_assigning_into_the_argument_is_differentiated_and_leaves_the_caller_alone(mode, n):
    x = np.linspace(0.5, 3.0, n)
    before = x.copy()
    value, gradient = dualad.value_and_grad(doubles_first, mode=mode)(x)
    assert value == pytest.approx(4 * x[0] ** 2 + np.sum(x[1:] ** 2))
    np.testing.assert_allclose(gradient, doubles_first_gradient(x))
    np.testing.assert_array_equal(x, before)


def test_every_pass_of_forward_mode_sees_the_callers_values():
    x = np.array([0.5, 3.0])
    value, gradient = dualad.value_and_grad(doubles_first, chunk=1, mode="forward")(x)
    assert (value, list(gradient)) == (10.0, [4.0, 6.0])
    np.testing.assert_array_equal(x, [0.5, 3.0])


@pytest.mark.parametrize("mode", ["forward", "forward-over-reverse"])
def test_second_order_of_a_function_assigning_into_its_argument(mode):
    x = np.array([0.5, 3.0, 1.0])
    np.testing.assert_allclose(dualad.hessian(doubles_first, mode=mode)(x), np.diag([8.0, 2.0, 2.0]))
    np.testing.assert_allclose(dualad.hvp(doubles_first)(x, np.ones(3)), [8.0, 2.0, 2.0])
    np.testing.assert_allclose(dualad.jacrev(dualad.grad(doubles_first, mode="reverse"))(x),
                               np.diag([8.0, 2.0, 2.0]))
    np.testing.assert_array_equal(x, [0.5, 3.0, 1.0])


compiled_doubles_first = numba.njit(doubles_first)


@pytest.mark.compiled
def test_compiled_jvp_and_hvp_of_a_function_assigning_into_its_argument():
    x = np.array([0.5, 3.0])
    value, tangent = dualad.jvp(compiled_doubles_first, (x,), (np.array([1.0, 0.0]),))
    assert (value, tangent) == (10.0, 4.0)
    np.testing.assert_array_equal(x, [0.5, 3.0])
    np.testing.assert_allclose(dualad.hvp(compiled_doubles_first)(x, np.array([1.0, 1.0])), [8.0, 2.0])
    np.testing.assert_array_equal(x, [0.5, 3.0])


@pytest.mark.compiled
def test_compiled_gradient_of_a_function_assigning_into_its_argument_says_how_to_fix_it():
    with pytest.raises(numba.core.errors.TypingError) as info:
        dualad.grad(compiled_doubles_first, mode="forward")(np.array([0.5, 3.0]))
    first_line = str(info.value).splitlines()[0]
    assert "read-only" in first_line and "np.zeros_like" in first_line


# ---- item 8: perturbations that escape their transform -------------------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_number_that_escaped_its_transform_raises_when_used(mode):
    leaked = []

    def f(x):
        leaked.append(x)
        return np.sum(x ** 2)

    dualad.grad(f, mode=mode)(np.array([1.0, 2.0]))
    with pytest.raises(EscapedPerturbation, match="escaped its transform"):
        leaked[0] * 2.0
    with pytest.raises(EscapedPerturbation):
        np.sin(leaked[0])
    with pytest.raises(EscapedPerturbation):  # used inside a later transform
        dualad.grad(lambda y: np.sum(leaked[0] * y))(np.array([1.0, 2.0]))
    with pytest.raises(EscapedPerturbation):  # returned by a later transform's function
        dualad.jacobian(lambda y: leaked[0])(np.array([1.0, 2.0]))


def test_an_outer_number_stays_usable_while_its_transform_runs():
    # closing over the outer transform's number inside the inner one is nesting, not escape
    def outer(a):
        return dualad.derivative(lambda t: np.sin(a * t))(1.0)
    assert dualad.derivative(outer)(0.5) == pytest.approx(np.cos(0.5) - 0.5 * np.sin(0.5))


# ---- items 5-7: argnums, empty inputs and scalar-only transforms, the same on both paths ---------
@numba.njit
def _weighted(x, y):
    return np.sum(x ** 2 * y)


def _weighted_python(x, y):
    return np.sum(x ** 2 * y)


@pytest.mark.compiled
@pytest.mark.parametrize("argnums", [2, 5, (0, 2)])
def test_argnums_past_the_arguments_is_an_error_on_both_paths(argnums):
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with pytest.raises(numba.core.errors.TypingError) as info:
        dualad.grad(_weighted, argnums=argnums)(x, y)
    assert str(info.value).startswith("dualad: cannot compile this derivative kernel: argnums asks for argument")
    assert "pass jit=False" not in str(info.value)  # it fails there too, so it is not advised
    with pytest.raises(ValueError, match="does not name a positional argument"):
        dualad.grad(_weighted_python, argnums=argnums)(x, y)


def test_an_argument_named_twice_gets_its_derivative_twice():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    gx, gx_again = dualad.grad(_weighted_python, argnums=(0, 0))(x, y)
    np.testing.assert_array_equal(gx, [6.0, 16.0])
    np.testing.assert_array_equal(gx_again, [6.0, 16.0])
    gy, gx = dualad.grad(_weighted_python, argnums=(1, 0))(x, y)
    np.testing.assert_array_equal(gy, [1.0, 4.0])
    np.testing.assert_array_equal(gx, [6.0, 16.0])
    with pytest.raises(ValueError, match="names an argument twice"):
        dualad.grad(_weighted, argnums=(0, 0))


@numba.njit
def _five_plus_sum(x):
    return 5.0 + np.sum(x)


@pytest.mark.compiled
@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_value_and_grad_of_an_empty_input_is_the_value(mode):
    for jit in (None, False):
        value, gradient = dualad.value_and_grad(_five_plus_sum, mode=mode, jit=jit)(np.zeros(0))
        assert value == 5.0 and gradient.shape == (0,)


@numba.njit
def _quadratic(t):
    return t ** 2 + t


@pytest.mark.compiled
@pytest.mark.parametrize("transform", [dualad.derivative, dualad.second_derivative])
def test_scalar_transforms_refuse_arrays_on_both_paths(transform):
    with pytest.raises(numba.core.errors.TypingError, match="takes a scalar input"):
        transform(_quadratic)(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="takes a scalar input"):
        transform(_quadratic, jit=False)(np.array([1.0, 2.0]))


# ---- item 15: compile errors name the cause first and advise only what works ---------------------
@numba.njit("float64(float64)")
def _float_only(t):
    return np.exp(-t * t)


@numba.njit
def _calls_float_only(x):
    return _float_only(x[0]) * x[1]


@numba.njit
def _eigenvalues(x):
    return np.sum(np.linalg.eigvals(np.outer(x, x)).real)


@pytest.mark.compiled
def test_compile_errors_name_the_cause_first():
    x = np.array([1.0, 2.0])
    with pytest.raises(numba.core.errors.TypingError) as info:
        dualad.grad(_calls_float_only)(x)
    first_line = str(info.value).splitlines()[0]
    assert "explicit signatures" in first_line and "_float_only" in first_line
    assert "pass jit=False" in str(info.value)  # the twin runs _float_only's Python code
    np.testing.assert_allclose(dualad.grad(_calls_float_only, jit=False)(x),
                               [-2.0 * np.exp(-1.0) * 2.0, np.exp(-1.0)])
    with pytest.raises(Exception) as info:
        dualad.grad(_eigenvalues)(x)
    assert str(info.value).startswith("dualad: cannot compile this derivative kernel")
    assert "fails on it too" in str(info.value) and "pass jit=False" not in str(info.value)
