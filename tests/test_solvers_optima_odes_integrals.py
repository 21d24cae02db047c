"""Optima, ODE solutions and integrals through SciPy (dualad/solvers/optima.py, odes.py,
integrals.py), in forward and reverse mode, against closed forms: a quadratic's minimiser,
a straight-line fit, exponential decay, Gaussian integrals; and the errors where the
derivative the stand-in computes would be wrong (an active bound, a jump that moves with the
parameter)."""

import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import dualad
from dualad.solvers.common import SolverDerivativeError

MODES = ["forward", "reverse"]


# ---- optima ------------------------------------------------------------------------------------
def quadratic(x, p):
    """(x - p)ᵀ A (x - p) / 2 + c·x: minimiser p - A⁻¹ c, so ∂x*/∂p = I."""
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    d = x - p
    return 0.5 * d @ (a @ d) + 0.3 * x[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["BFGS", "Nelder-Mead", "L-BFGS-B"])
def test_minimize_differentiates_the_minimiser(method, mode):
    options = {"xatol": 1e-12, "fatol": 1e-14} if method == "Nelder-Mead" else {"gtol": 1e-12}
    solve = lambda p: so.minimize(quadratic, np.zeros(2), args=(p,), method=method, options=options).x  # noqa: E731
    np.testing.assert_allclose(dualad.jacobian(solve, mode=mode)(np.array([0.4, -0.2])), np.eye(2),
                               atol=1e-7)


def scalar_objective(x, p):
    return (x - p) ** 2 + 0.1 * x ** 4


def scalar_truth(p):
    """x*(p) solves 2(x - p) + 0.4 x³ = 0: x*' = 2 / (2 + 1.2 x*²)."""
    x = so.brentq(lambda x: 2.0 * (x - p) + 0.4 * x ** 3, -5.0, 5.0, xtol=1e-15)
    return 2.0 / (2.0 + 1.2 * x * x)


SCALAR = {
    "minimize_scalar": lambda p: so.minimize_scalar(scalar_objective, args=(p,)).x,
    "minimize_scalar golden": lambda p: so.minimize_scalar(lambda x: scalar_objective(x, p), method="golden").x,
    "minimize_scalar bounded": lambda p: so.minimize_scalar(scalar_objective, args=(p,), bounds=(-1.0, 3.0),
                                                            method="bounded").x,
    "golden": lambda p: so.golden(lambda x: scalar_objective(x, p)),
    "brent": lambda p: so.brent(scalar_objective, args=(p,)),
    "fminbound": lambda p: so.fminbound(scalar_objective, -3.0, 3.0, args=(p,)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SCALAR)
def test_scalar_minimisers_differentiate_the_minimiser(name, mode):
    """(guards: golden's iterations differentiated, derivative 0, and brent's wrong at 0)"""
    for p in (0.7, 0.0):
        assert dualad.grad(SCALAR[name], mode=mode, jit=False)(p) == pytest.approx(scalar_truth(p), rel=1e-6)


def test_the_optimal_value_by_the_envelope_theorem():
    value = lambda p: so.minimize_scalar(scalar_objective, args=(p,)).fun  # noqa: E731
    p = 0.7
    x = so.minimize_scalar(scalar_objective, args=(p,), options={"xtol": 1e-12}).x
    assert dualad.grad(value)(p) == pytest.approx(-2.0 * (x - p), rel=1e-6)


@pytest.mark.parametrize("call", [
    lambda p: so.fminbound(scalar_objective, 1.0, 3.0, args=(p,)),
    lambda p: so.minimize_scalar(scalar_objective, args=(p,), bounds=(1.0, 3.0)).x,
])
def test_an_active_bound_of_a_scalar_minimiser_is_an_error(call):
    with pytest.raises(SolverDerivativeError, match="bound x >= 1 is active"):
        dualad.grad(call)(0.7)


def test_curve_fit_popt_with_respect_to_the_data_is_the_least_squares_map():
    t = np.linspace(0.0, 2.0, 7)
    design = np.stack([np.ones_like(t), t], axis=1)
    fit = lambda y: so.curve_fit(lambda t, a, b: a + b * t, t, y, p0=[0.0, 0.0])[0]  # noqa: E731
    expected = np.linalg.pinv(design)
    for mode in MODES:
        np.testing.assert_allclose(dualad.jacobian(fit, mode=mode)(1.0 + 0.5 * t + 0.1 * np.sin(7 * t)),
                                   expected, atol=1e-8)


def test_least_squares_solution_of_a_linear_residual():
    a = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    solve = lambda y: so.least_squares(lambda x: a @ x - y, np.zeros(2), xtol=1e-15, ftol=1e-15).x  # noqa: E731
    for mode in MODES:
        np.testing.assert_allclose(dualad.jacobian(solve, mode=mode)(np.array([1.0, 2.5, 2.9])),
                                   np.linalg.pinv(a), atol=1e-8)


# ---- ODE solutions: y' = -k y, y(t0) = y0 ----------------------------------------------------------
def decay(theta, method="RK45"):
    """y(t1) for y' = -k y from y0; theta = (k, y0, t1)."""
    k, y0, t1 = theta[0], theta[1], theta[2]
    sol = si.solve_ivp(lambda t, y, k: -k * y, (0.0, t1), np.stack([y0]), args=(k,), method=method,
                       rtol=1e-11, atol=1e-13)
    return sol.y[0, -1]


def decay_gradient(theta):
    k, y0, t1 = theta
    y = y0 * np.exp(-k * t1)
    return np.array([-t1 * y, y / y0, -k * y])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_solve_ivp_sensitivities_are_the_exact_solutions(method, mode):
    theta = np.array([0.8, 1.5, 2.0])
    np.testing.assert_allclose(dualad.grad(lambda th: decay(th, method), mode=mode)(theta),
                               decay_gradient(theta), rtol=1e-6)


def test_odeint_at_its_output_times():
    t = np.linspace(0.0, 2.0, 5)
    solve = lambda k: si.odeint(lambda y, t, k: -k * y, 1.0, t, args=(k,), rtol=1e-12, atol=1e-13)[:, 0]  # noqa: E731
    np.testing.assert_allclose(dualad.jacobian(solve)(0.8), -t * np.exp(-0.8 * t), rtol=1e-6, atol=1e-12)


def test_a_switch_that_moves_with_the_parameter_is_an_error():
    """(guards: derivative 0 where the truth is e^(p - 3))"""
    def switched(p):
        return si.solve_ivp(lambda t, y: -y + np.where(t < p, 1.0, 0.0), (0.0, 3.0), [0.0],
                            max_step=0.05).y[0, -1]
    for mode in MODES:
        with pytest.raises(SolverDerivativeError, match="switch moves with the parameters"):
            dualad.grad(switched, mode=mode)(1.2)

    def split(p):  # the fix the error names: solve in pieces split at the switch
        first = si.solve_ivp(lambda t, y: 1.0 - y, (0.0, p), [0.0], rtol=1e-11, atol=1e-13)
        return si.solve_ivp(lambda t, y: -y, (p, 3.0), first.y[:, -1], rtol=1e-11, atol=1e-13).y[0, -1]
    assert dualad.grad(split)(1.2) == pytest.approx(np.exp(1.2 - 3.0), rel=1e-6)


# ---- integrals ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_quad_under_the_integral_and_at_the_limits(mode):
    """∫₀^b e^(-a x²) dx: ∂a = -∫ x² e^(-a x²), ∂b = e^(-a b²); over (-∞, ∞): √(π/a)."""
    def integral(theta):
        return si.quad(lambda x, a: np.exp(-a * x * x), 0.0, theta[1], args=(theta[0],), epsabs=1e-13)[0]
    theta = np.array([0.7, 1.3])
    d_a = -si.quad(lambda x: x * x * np.exp(-0.7 * x * x), 0.0, 1.3, epsabs=1e-14)[0]
    np.testing.assert_allclose(dualad.grad(integral, mode=mode)(theta), [d_a, np.exp(-0.7 * 1.3 ** 2)],
                               rtol=1e-9)
    whole = lambda a: si.quad(lambda x: np.exp(-a * x * x), -np.inf, np.inf, epsabs=1e-13)[0]  # noqa: E731
    assert dualad.grad(whole, mode=mode)(0.7) == pytest.approx(-0.5 * np.sqrt(np.pi) * 0.7 ** -1.5, rel=1e-8)


@pytest.mark.parametrize("integrand", [
    lambda x, p: np.where(x < p, x, 0.0),
    lambda x, p: np.heaviside(p - x, 0.5) * np.exp(-x),
    lambda x, p: x if x < p else 0.0,
    lambda x, p: np.floor(x + p),
])
def test_a_jump_that_moves_with_the_parameter_is_an_error(integrand):
    """(guards: derivative 0 for the first two, where the truth is p and e^-p)"""
    for mode in MODES:
        with pytest.raises(SolverDerivativeError, match="Split the integral at the jump"):
            dualad.grad(lambda p: si.quad(integrand, 0.0, 3.0, args=(p,))[0], mode=mode)(0.7)


def test_branches_that_move_no_jump_are_differentiated():
    kink = lambda p: si.quad(lambda x: np.minimum(x, p), 0.0, 3.0)[0]  # noqa: E731  (continuous)
    assert dualad.grad(kink)(0.7) == pytest.approx(2.3, rel=1e-10)
    fixed = lambda p: si.quad(lambda x: p * x if p > 0 else -x, 0.0, 3.0)[0]  # noqa: E731  (the same branch everywhere)
    assert dualad.grad(fixed)(0.7) == pytest.approx(4.5, rel=1e-10)
    split = lambda p: si.quad(lambda x: x, 0.0, p)[0] + si.quad(lambda x: 0.0 * x, p, 3.0)[0]  # noqa: E731
    assert dualad.grad(split)(0.7) == pytest.approx(0.7, rel=1e-12)


@pytest.mark.parametrize("rule", [si.trapezoid, si.simpson])
def test_sample_rules_with_respect_to_the_samples(rule):
    x = np.linspace(0.0, 1.0, 9)
    weights = dualad.grad(lambda y: rule(y, x=x))(np.sin(x))
    np.testing.assert_allclose(weights, [rule(e, x=x) for e in np.eye(x.size)], rtol=1e-12, atol=1e-15)
