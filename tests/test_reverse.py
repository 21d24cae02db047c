"""Reverse mode: the tape agrees with forward mode and hyper-duals on every test function."""

import numpy as np
import pytest

import dualad
from dualad.modes import choose_hessian_mode
from dualad.rules import RULES
from functions import FUNCTIONS, finite_difference_jacobian, rosen, rosen_loop

IDS = [name for name, _, _ in FUNCTIONS]


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=IDS)
def test_reverse_equals_forward_on_every_test_function(name, f, x):
    forward = dualad.jacobian(f, mode="forward")(x)
    reverse = dualad.jacobian(f, mode="reverse")(x)
    assert reverse.shape == forward.shape
    np.testing.assert_allclose(reverse, forward, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(reverse, finite_difference_jacobian(f, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=IDS)
def test_second_derivatives_agree_in_every_mode_on_every_test_function(name, f, x):
    weights = np.linspace(0.5, 1.5, np.size(f(x)))

    def scalar(y):  # a scalar function of each test function, so that it has a Hessian
        return np.sum(np.reshape(f(y), -1) * weights) ** 2 / 4.0

    hyper = dualad.hessian(scalar, mode="forward")(x)
    over = dualad.hessian(scalar, mode="forward-over-reverse")(x)
    np.testing.assert_allclose(over, hyper, rtol=1e-11, atol=1e-11)
    # reverse over reverse: the inner sweep's cotangents are themselves traced
    twice = dualad.jacrev(dualad.grad(scalar, mode="reverse"))(x)
    np.testing.assert_allclose(np.reshape(twice, np.shape(hyper)), hyper, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_reverse_matches_forward(name):
    rule = RULES[name]
    point = np.array([min(max(0.37 + 0.1 * i, lo + 0.05), hi - 0.05) for i, (lo, hi) in enumerate(rule.domain)])
    numpy_entry = rule.ufunc if rule.ufunc is not None else rule.value

    def f(v):
        return numpy_entry(*(v[i] for i in range(rule.arity)))

    np.testing.assert_allclose(dualad.grad(f, mode="reverse")(point), dualad.grad(f, mode="forward")(point),
                               rtol=1e-15)


def test_vjp_shapes_and_several_primals():
    a, b = np.arange(6.0).reshape(2, 3) / 7.0, np.array([0.5, -1.0, 2.0])
    out, vjp_fn = dualad.vjp(lambda a, b: np.tanh(a @ b) * 2.0, a, b)
    assert out.shape == (2,)
    ca, cb = vjp_fn(np.array([1.0, -2.0]))
    assert ca.shape == a.shape and cb.shape == b.shape
    jac_a = dualad.jacobian(lambda a: np.tanh(a @ b) * 2.0, mode="forward")(a)
    np.testing.assert_allclose(ca, np.tensordot([1.0, -2.0], jac_a, axes=1), rtol=1e-14)
    value, (c,) = dualad.vjp(lambda t: t ** 3, 2.0)[0], dualad.vjp(lambda t: t ** 3, 2.0)[1](1.0)
    assert value == 8.0 and c == 12.0 and np.shape(c) == ()


def test_vjp_cotangent_errors_name_expected_and_got():
    _, vjp_fn = dualad.vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(3,\), got shape \(2,\)"):
        vjp_fn(np.ones(2))
    with pytest.raises(TypeError, match="floats, got dtype <U1"):
        vjp_fn(np.array(["a", "b", "c"]))


def test_grad_and_jacobian_modes():
    x = np.array([-1.2, 1.0, 0.7, 0.3, 1.1])
    expected = dualad.grad(rosen, mode="forward")(x)
    for mode in ("reverse", "auto"):
        np.testing.assert_allclose(dualad.grad(rosen_loop, mode=mode)(x), expected, rtol=1e-14)
    value, g = dualad.value_and_grad(rosen, mode="reverse")(x)
    assert value == rosen(x)
    np.testing.assert_allclose(g, expected, rtol=1e-14)
    ga, gb = dualad.grad(lambda a, b: np.sum(a * b ** 2), argnums=(0, 1), mode="reverse")(x, 2 * x)
    np.testing.assert_allclose(ga, 4 * x ** 2)
    np.testing.assert_allclose(gb, 4 * x * x)
    ja, jb = dualad.jacrev(lambda a, b: a * b, argnums=(0, 1))(x, 2 * x)
    np.testing.assert_allclose(ja, np.diag(2 * x))
    with pytest.raises(ValueError, match="mode="):
        dualad.grad(rosen, mode="backward")
    with pytest.raises(TypeError, match="scalar"):
        dualad.grad(np.sin, mode="reverse")(x)


def test_reverse_mode_of_a_numba_function_on_the_python_path():
    numba = pytest.importorskip("numba")
    x = np.array([0.3, 0.4, 0.5])
    np.testing.assert_allclose(dualad.grad(numba.njit(rosen_loop), mode="reverse", jit=False)(x),
                               dualad.grad(rosen_loop)(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.jacrev(numba.njit(rosen_loop), jit=False)(x),
                               dualad.grad(rosen_loop)(x), rtol=1e-14)


# ---- mutation and views follow NumPy ----------------------------------------------------------------------
def writes_through_views(x):
    y = np.zeros_like(x)
    y[0] = x[0] ** 2
    tail = y[1:]                      # a view of y
    tail[0] = x[1] * x[2]             # writes y[1]
    y[2] = np.sin(x[3])               # tail[1] sees this
    block = y.reshape(2, 2)           # another view
    block[1, 1] = block[0, 0] * x[0]  # writes y[3]
    y[0] = 3.0 * y[0]                 # overwrites: x[0]**2 reaches the output only through y[3]
    return np.stack([np.sum(tail * x[1:]), np.sum(y), block[1, 0] * block[0, 1]])


def test_mutation_and_views_match_numpy_and_forward():
    x = np.array([0.3, -0.7, 1.1, 0.4])
    expected_value = writes_through_views(x)  # NumPy itself
    value, _ = dualad.vjp(writes_through_views, x)
    np.testing.assert_allclose(value, expected_value, rtol=1e-15)
    np.testing.assert_allclose(dualad.jacobian(writes_through_views, mode="reverse")(x),
                               dualad.jacobian(writes_through_views, mode="forward")(x), rtol=1e-14)


def test_nesting_never_confuses_perturbations():
    # d/dx [x · d/dy (x + y)] at y = 1 is 1, in every combination of modes
    for inner in ("forward", "reverse"):
        for outer in ("forward", "reverse"):
            def g(x, inner=inner):
                return x * dualad.grad(lambda y: x + y, mode=inner)(1.0)
            assert dualad.grad(g, mode=outer)(2.0) == 1.0
    f = lambda t: np.sin(t) * t ** 3  # noqa: E731
    rr = dualad.grad(dualad.grad(f, mode="reverse"), mode="reverse")(0.7)
    assert rr == pytest.approx(dualad.second_derivative(f)(0.7), rel=1e-14)


# ---- the cost model (unit level: no timings) -------------------------------------------------------------
@pytest.mark.parametrize("n_in, n_out, expected", [(1000, 1, "reverse"), (1, 1000, "forward"),
                                                    (1000, 10, "reverse"), (10, 1000, "forward")])
def test_choose_mode_from_shapes(n_in, n_out, expected):
    decision = dualad.choose_mode(n_in=n_in, n_out=n_out)
    assert decision.mode == expected
    assert decision.costs[expected] == min(decision.costs.values())
    assert f"N={n_in}" in decision.reason and f"M={n_out}" in decision.reason


def test_choose_mode_records_the_function():
    w = np.linspace(-1.0, 1.0, 4000).reshape(2, 2000)
    decision = dualad.choose_mode(lambda x: np.tanh(w @ x), np.ones(2000))
    assert (decision.n_in, decision.n_out) == (2000, 2)
    assert decision.ops >= 3 and decision.tape_floats >= 2000
    assert decision.mode == "reverse"
    wide = dualad.choose_mode(lambda x: np.tanh(w.T * x[0]), np.ones(1))
    assert wide.mode == "forward" and str(wide) == wide.reason


def test_choose_hessian_mode():
    assert choose_hessian_mode(rosen, np.ones(4)).mode == "forward"
    assert choose_hessian_mode(rosen, np.ones(2000)).mode == "forward-over-reverse"


def test_square_shortcut_keeps_a_dual_exponents_derivative():
    """x ** 2 skips computing x ** 1, but not when the exponent is a dual whose value is 2."""
    v = np.array([1.7, 2.0])
    mixed = 1.7 * (1 + 2 * np.log(1.7))  # ∂²(x^z)/∂x∂z at z = 2
    for mode in ("forward", "forward-over-reverse"):
        assert dualad.hessian(lambda u: u[0] ** u[1], mode=mode)(v)[0, 1] == pytest.approx(mixed, rel=1e-14)
