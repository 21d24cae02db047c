"""Special points: the conventions of docs/user/conventions.md, identical on the compiled and the Python path.

One table per arity. A row is (expression, point, value, first, second): the Python path must
give these (0, ±inf and nan exactly, other numbers to rounding), and the compiled kernels
exactly what the Python path gives (nan == nan).
Adding a point is one line (the tables are in tests/special_points.py). Every expression of a
table is one branch of one generated @njit function, so the whole table costs one compilation
per kernel kind (tests/compiled/test_special_points_compiled.py).

Rows also pin item by item why the numbers are what they are:
  * where a first derivative is ±inf, the second derivative is nan: the chain rule multiplies
    f' = ±inf by the seed's zero second-order part (JAX gives nan the same way);
  * x ** z keeps JAX's constants where its formula is 0·inf, and is differentiated right
    where smooth, by every mode (nested derivatives, forward-over-reverse, hyper-duals).
"""

import mpmath as mp
import numpy as np
import pytest

import dualad
from special_points import (BINARY, BINARY_EXPRS, BINARY_F, INF, SCALAR, SCALAR_EXPRS, SCALAR_F, close,
                            python_binary, python_scalar, same)


@pytest.mark.parametrize("expr, t, value, first, second", SCALAR)
def test_python_path_follows_the_conventions(expr, t, value, first, second):
    got = python_scalar(expr, t)
    assert all(close(g, e) for g, e in zip(got, (value, first, second))), (expr, t, got)


@pytest.mark.parametrize("expr, x, value, gradient, hessian", BINARY)
def test_python_path_follows_the_conventions_in_two_arguments(expr, x, value, gradient, hessian):
    got = python_binary(expr, x)
    assert all(close(g, e) for g, e in zip(got, (value, gradient, hessian))), (expr, x, got)


# ---- every mode, where the table's numbers are finite --------------------------------------------
# A partial that is itself differentiated (nested derivatives, forward-over-reverse) must be
# right there, not only the hyper-dual's second partial: no constant branch may hide a slope.
FINITE_SCALAR = [row for row in SCALAR if np.all(np.isfinite(np.array(row[2:], dtype=float)))]
# At a = 0 with 0 < b <= 1 (the edge of the power's domain, where the true ∂²/∂a∂b is −inf)
# the mixed partial depends on the order nested modes take it, as in JAX: ∂/∂b of ∂/∂a gives
# 0**(b−1) (the hyper-dual's value), ∂/∂a of ∂/∂b gives 0 (log 0 → log 1 is constant in a).
ORDER_DEPENDENT = [("a ** b", (0.0, 1.0))]
FINITE_BINARY = [row for row in BINARY if row[:2] not in ORDER_DEPENDENT and
                 np.all(np.isfinite(np.hstack([np.ravel(v) for v in row[2:]])))]


@pytest.mark.parametrize("expr, t, value, first, second", FINITE_SCALAR)
def test_nested_modes_give_the_conventions_too(expr, t, value, first, second):
    k = SCALAR_EXPRS.index(expr)
    d = dualad.derivative
    f = lambda s: SCALAR_F(s, k)  # noqa: E731
    assert close(d(d(f, jit=False), jit=False)(t), second)
    on_vector = lambda x: SCALAR_F(x[0], k)  # noqa: E731
    x = np.array([t])
    assert close(dualad.hessian(on_vector, mode="forward-over-reverse", jit=False)(x), [[second]])
    assert close(dualad.jacfwd(dualad.grad(on_vector, mode="reverse", jit=False), jit=False)(x),
                 [[second]])


@pytest.mark.parametrize("expr, x, value, gradient, hessian", FINITE_BINARY)
def test_nested_modes_give_the_conventions_in_two_arguments(expr, x, value, gradient, hessian):
    k, x = BINARY_EXPRS.index(expr), np.array(x)
    f = lambda v: BINARY_F(v, k)  # noqa: E731
    for mode in ("forward", "reverse"):
        jac_of_grad = dualad.jacfwd(dualad.grad(f, mode=mode, jit=False), jit=False)(x)
        assert close(jac_of_grad, hessian), (mode, jac_of_grad)
    assert close(dualad.hessian(f, mode="forward-over-reverse", jit=False)(x), hessian)


def test_mixed_partials_at_the_edge_of_the_power_are_order_dependent_as_documented():
    (expr, x), = ORDER_DEPENDENT
    f = lambda v: BINARY_F(v, BINARY_EXPRS.index(expr))  # noqa: E731
    jac_of_grad = dualad.jacfwd(dualad.grad(f, mode="reverse", jit=False), jit=False)(np.array(x))
    assert same(jac_of_grad, [[0.0, 1.0], [0.0, 0.0]])


# ---- x ** p near and at p = 0, 1, 2: every mode against mpmath --------------------------------
mp.mp.dps = 30


def _mp_partial(orders, x, p):
    """∂^(i+j) x**p / ∂x^i ∂p^j at (x, p) by mpmath, 30 digits."""
    return float(mp.diff(lambda a, b: mp.power(a, b), (mp.mpf(x), mp.mpf(p)), orders))


@pytest.mark.parametrize("p", [0.0, 1e-3, 1.0, 2.0, -1.0, 2.5])
@pytest.mark.parametrize("x", [0.5, 2.0])
def test_power_in_both_arguments_by_every_mode_against_mpmath(x, p):
    """Second derivatives by nesting (either order), forward-over-reverse and hyper-duals, and
    third derivatives by nesting a derivative over a hyper-dual one: the partials of x ** p are
    differentiated right at p = 0 and p = 1, where the conventions live (issue 12 item 3)."""
    d = dualad.derivative
    power = lambda a, b: a ** b  # noqa: E731
    expected_xp = _mp_partial((1, 1), x, p)
    assert d(lambda b: d(lambda a: power(a, b), jit=False)(x), jit=False)(p) == pytest.approx(
        expected_xp, rel=1e-13)
    assert d(lambda a: d(lambda b: power(a, b), jit=False)(p), jit=False)(x) == pytest.approx(
        expected_xp, rel=1e-13)
    v = np.array([x, p])
    expected = [[_mp_partial((2, 0), x, p), expected_xp], [expected_xp, _mp_partial((0, 2), x, p)]]
    for mode in ("forward", "forward-over-reverse"):
        h = dualad.hessian(lambda u: u[0] ** u[1], mode=mode, jit=False)(v)
        np.testing.assert_allclose(h, expected, rtol=1e-13, atol=1e-15, err_msg=mode)
    d2 = dualad.second_derivative
    third_xxp = d(lambda b: d2(lambda a: power(a, b), jit=False)(x), jit=False)(p)
    third_xpp = d(lambda a: d2(lambda b: power(a, b), jit=False)(p), jit=False)(x)
    assert third_xxp == pytest.approx(_mp_partial((2, 1), x, p), rel=1e-12, abs=1e-15)
    assert third_xpp == pytest.approx(_mp_partial((1, 2), x, p), rel=1e-12, abs=1e-15)


def test_default_hessian_of_a_shared_exponent_at_zero():
    """sum(u[:-1] ** u[-1]) at n = 150, exponent 0: the default (forward-over-reverse at this
    size) against the closed form ∂²/∂u_i∂p = 1/u_i, ∂²/∂p² = Σ log² u_i, ∂²/∂u_i² = 0."""
    u = np.append(np.linspace(0.5, 3.0, 149), 0.0)
    h = dualad.hessian(lambda v: np.sum(v[:-1] ** v[-1]))(u)
    expected = np.zeros((150, 150))
    expected[:-1, -1] = expected[-1, :-1] = 1.0 / u[:-1]
    expected[-1, -1] = np.sum(np.log(u[:-1]) ** 2)
    np.testing.assert_allclose(h, expected, rtol=1e-13, atol=0.0)


# ---- Python-number constants: NumPy's semantics, never ZeroDivisionError (item 11) --------------
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power", "maximum",
                                  "minimum", "remainder", "floor_divide", "arctan2", "hypot"])
@pytest.mark.parametrize("zero", [0.0, 0, -0.0])
def test_a_python_zero_constant_divides_like_numpy(name, zero):
    """A rule with a Python float or int constant gives what the same NumPy float gives."""
    ufunc = getattr(np, name)
    x = np.array([0.0, 1.0, -2.0])
    results = []
    for constant in (zero, np.float64(zero)):
        for fn in (lambda v: ufunc(v, constant), lambda v: ufunc(constant, v)):
            with np.errstate(all="ignore"):
                results.append((dualad.grad(lambda v: np.sum(fn(v)), mode="forward", jit=False)(x),
                                dualad.grad(lambda v: np.sum(fn(v)), mode="reverse", jit=False)(x),
                                dualad.hessian(lambda v: np.sum(fn(v)), mode="forward", jit=False)(x)))
    for python, numpy_constant in zip(results[:2], results[2:]):
        assert all(same(a, b) for a, b in zip(python, numpy_constant)), (name, python, numpy_constant)


def test_dividing_by_a_python_zero_gives_inf():
    with np.errstate(all="ignore"):
        assert same(dualad.grad(lambda x: np.sum(x / 0.0), jit=False)(np.array([1.0, 2.0])), [INF, INF])
        assert same(dualad.grad(lambda x: np.sum(x / 0), mode="reverse", jit=False)(np.array([1.0])),
                    [INF])
