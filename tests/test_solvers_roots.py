"""Roots and fixed points through SciPy (dualad/solvers/roots.py): the implicit function
theorem's derivatives of scipy.optimize.root, fsolve, root_scalar, brentq & co., newton and
fixed_point, in forward and reverse mode, at first and second order, against closed forms and
central differences of the solver run with tight tolerances."""

import numpy as np
import pytest
import scipy.optimize as so
from scipy.optimize import root

import dualad
from dualad.solvers import COVERED, common, roots, stand_in
from helpers import load_example

P = np.array([2.0, 0.7])


# ---- a system with a closed form: x0 = √p0, x1 = p1 √p0 ------------------------------------------
def residual(x, p0, p1):
    return np.stack([x[0] ** 2 - p0, x[1] - p1 * x[0]])


def exact(p):
    return np.stack([np.sqrt(p[0]), p[1] * np.sqrt(p[0])])


EXACT_J = dualad.jacobian(exact)(P)
EXACT_H0 = dualad.hessian(lambda p: exact(p)[0] + 3.0 * exact(p)[1])(P)


@pytest.mark.parametrize("method", ["hybr", "lm", "krylov", "broyden1", "df-sane"])
def test_root_methods_give_the_implicit_function_derivative(method):
    def solve(p):
        options = {"fatol": 1e-13} if method in ("krylov", "broyden1", "df-sane") else None
        return so.root(residual, np.array([1.0, 1.0]), args=(p[0], p[1]), method=method, options=options).x
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(dualad.jacobian(solve, mode=mode)(P), EXACT_J, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["forward", "forward-over-reverse"])
def test_second_derivatives_of_a_root_on_every_layer(mode):
    def objective(p):  # the parameters in the closure, not args=
        sol = so.root(lambda x: residual(x, p[0], p[1]), np.array([1.0, 1.0]), tol=1e-14)
        return sol.x[0] + 3.0 * sol.x[1]
    np.testing.assert_allclose(dualad.hessian(objective, mode=mode)(P), EXACT_H0, rtol=1e-9, atol=1e-12)


def test_nested_transforms_third_derivative():
    # derivative(derivative(derivative(.))): three layers, three chord steps
    d = dualad.derivative
    x = d(d(d(lambda p: so.brentq(lambda x: x ** 3 - p, 0.0, 5.0, xtol=1e-15))))(2.0)
    np.testing.assert_allclose(x, (1 / 3) * (-2 / 3) * (-5 / 3) * 2.0 ** (-8 / 3), rtol=1e-8)


def test_fsolve_and_a_nonlinear_system_against_central_differences():
    def F(x, a):
        return np.stack([x[0] ** 2 + x[1] ** 2 + np.sin(x[1]) - a[0], x[0] - a[1] * x[1] ** 3 - a[2]])

    def solve(a):
        return so.fsolve(F, np.array([0.5, 0.5]), args=(a,), xtol=1e-12)
    a = np.array([1.1, 1.5, 0.3])
    J = dualad.jacobian(solve, mode="forward")(a)
    np.testing.assert_allclose(dualad.jacobian(solve, mode="reverse")(a), J, rtol=1e-10)
    h = 1e-6
    central = np.stack([(so.fsolve(F, np.array([0.5, 0.5]), args=(a + h * e,), xtol=1e-12)
                         - so.fsolve(F, np.array([0.5, 0.5]), args=(a - h * e,), xtol=1e-12)) / (2 * h)
                        for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(J, central, rtol=1e-6, atol=1e-8)
    full = dualad.jacobian(lambda a: so.fsolve(F, np.array([0.5, 0.5]), args=(a,), xtol=1e-12, full_output=True)[0])(a)
    np.testing.assert_allclose(full, J, rtol=1e-12)


def test_a_linear_system_root_is_its_solution():
    A = np.array([[3.0, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 1.0, 5.0]])

    def solve(b):
        return so.root(lambda x: A @ x - b ** 2, np.zeros(3)).x
    b = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(dualad.jacobian(solve)(b), np.linalg.solve(A, np.diag(2 * b)), rtol=1e-12)
    np.testing.assert_allclose(dualad.jacobian(solve, mode="reverse")(b), np.linalg.solve(A, np.diag(2 * b)),
                               rtol=1e-12)


# ---- scalar roots: x² = p ---------------------------------------------------------------------
SCALAR = {
    "brentq": lambda p: so.brentq(lambda x: x * x - p, 0.0, 5.0),
    "brenth": lambda p: so.brenth(lambda x, q: x * x - q, 0.0, 5.0, args=(p,)),
    "bisect": lambda p: so.bisect(lambda x: x * x - p, 0.0, 5.0, xtol=1e-14),
    "ridder": lambda p: so.ridder(lambda x: x * x - p, 0.0, 5.0),
    "toms748": lambda p: so.toms748(lambda x: x * x - p, 0.0, 5.0),
    "brentq full_output": lambda p: so.brentq(lambda x: x * x - p, 0.0, 5.0, full_output=True)[1].root,
    "root_scalar bracket": lambda p: so.root_scalar(lambda x: x * x - p, bracket=(0.0, 5.0)).root,
    "root_scalar newton, fprime=True": lambda p: so.root_scalar(lambda x: (x * x - p, 2 * x), x0=1.0,
                                                                fprime=True, method="newton").root,
    "newton, vectorised": lambda p: so.newton(lambda x: x * x - p * np.array([1.0, 4.0]), np.array([1.0, 1.0]))[1] / 2,
    "dualad.solvers.roots.newton": lambda p: roots.newton(lambda x: x * x - p, 1.0),
    "dualad.solvers.roots.newton, secant": lambda p: roots.newton(lambda x: x * x - p, 1.0, x1=1.5),
}


@pytest.mark.parametrize("name", list(SCALAR))
def test_scalar_roots(name):
    f = SCALAR[name]
    p = 2.0
    np.testing.assert_allclose(dualad.derivative(f)(p), 0.5 / np.sqrt(p), rtol=1e-10)
    np.testing.assert_allclose(dualad.grad(f, mode="reverse")(p), 0.5 / np.sqrt(p), rtol=1e-10)
    np.testing.assert_allclose(dualad.hessian(f, mode="forward-over-reverse")(np.array(p)), -0.25 * p ** -1.5,
                               rtol=1e-8)
    np.testing.assert_allclose(dualad.second_derivative(f)(p), -0.25 * p ** -1.5, rtol=1e-8)


def test_fixed_points_scalar_and_vector():
    # x = p cos x: dx/dp = cos x / (1 + p sin x)
    def scalar(p):
        return so.fixed_point(lambda x: p * np.cos(x), 0.5, xtol=1e-13)
    p = 0.8
    x = so.fixed_point(lambda x: p * np.cos(x), 0.5, xtol=1e-13)
    np.testing.assert_allclose(dualad.derivative(scalar)(p), np.cos(x) / (1 + p * np.sin(x)), rtol=1e-9)
    M = np.array([[0.2, 0.1], [0.0, 0.3]])

    def vector(b):  # x = M x + b: x = (I - M)⁻¹ b
        return so.fixed_point(lambda x, c: M @ x + c, np.zeros(2), args=(b,), xtol=1e-13)
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(dualad.jacobian(vector, mode=mode)(np.array([1.0, 2.0])),
                                   np.linalg.inv(np.eye(2) - M), rtol=1e-9)


def test_the_starting_point_and_bracket_carry_no_derivative():
    g = dualad.grad(lambda x0: so.root(lambda x: x ** 3 - 8.0, np.array([x0])).x[0])(1.5)
    assert g == 0.0
    g = dualad.grad(lambda a: so.brentq(lambda x: x * x - 2.0, a, 5.0) + a)(0.1)
    assert g == 1.0


def test_inputs_are_never_modified():
    x0, p = np.array([1.0, 1.0]), np.array([2.0, 0.7])
    keep = (x0.copy(), p.copy())
    for mode in ("forward", "reverse"):
        dualad.jacobian(lambda q: so.root(lambda x: residual(x, q[0], q[1]), x0).x, mode=mode)(p)
    np.testing.assert_array_equal(x0, keep[0])
    np.testing.assert_array_equal(p, keep[1])


# ---- errors --------------------------------------------------------------------------------------
def test_a_singular_jacobian_is_an_error_that_says_so():
    A = np.array([[1.0, 1.0], [2.0, 2.0]])  # a line of roots: no isolated solution
    with pytest.raises(common.SingularJacobianError, match="singular at the solution"):
        dualad.grad(lambda p: roots.root(lambda x: A @ x - np.stack([p, 2 * p]), np.zeros(2)).x[0])(1.0)
    with pytest.raises(common.SingularJacobianError, match="multiple root"):  # x³ = p - 1 at p = 1
        dualad.grad(lambda p: roots.bisect(lambda x: x ** 3 - (p - 1.0), -1.0, 1.0))(1.0)
    with pytest.raises(np.linalg.LinAlgError):  # it is a LinAlgError too
        dualad.grad(lambda p: roots.root(lambda x: A @ x - np.stack([p, 2 * p]), np.zeros(2)).x[0],
                    mode="reverse")(1.0)


def test_a_non_square_system_is_an_error():
    with pytest.raises(common.SolverDerivativeError, match="3 equations in 2 unknowns"):
        dualad.grad(lambda p: roots.root(lambda x: np.stack([x[0] - p, x[1] - 1.0, x[0] + x[1] - p - 1.0]),
                                         np.zeros(2), method="lm").x[0])(1.0)


# ---- delegation and the hook ---------------------------------------------------------------------
def test_without_derivatives_the_stand_ins_are_scipys_functions():
    args = (P[0], P[1])
    mine, scipys = roots.root(residual, np.ones(2), args=args), so.root(residual, np.ones(2), args=args)
    assert mine.keys() == scipys.keys()
    np.testing.assert_array_equal(mine.x, scipys.x)
    assert mine.nfev == scipys.nfev
    assert roots.brentq(lambda x: x * x - 2, 0, 5, full_output=True)[1].iterations == \
        so.brentq(lambda x: x * x - 2, 0, 5, full_output=True)[1].iterations
    np.testing.assert_array_equal(roots.fsolve(residual, np.ones(2), args=args),
                                  so.fsolve(residual, np.ones(2), args=args))


def test_the_hook_knows_exactly_the_covered_functions():
    import scipy.integrate as si
    assert stand_in(np.sin) is None and stand_in(3.0) is None and stand_in(so.rosen) is None
    assert stand_in(root) is roots.root and stand_in(so.newton) is roots.newton
    for module, names in COVERED.items():
        scipy_module = so if module == "scipy.optimize" else si
        for name in names:
            found = stand_in(getattr(scipy_module, name))
            assert found is not None and found.__name__ == name


def test_a_solver_named_in_globals_is_the_stand_in():
    # `from scipy.optimize import root` (this module's global) and `so.root` alike
    f = lambda p: root(lambda x: x ** 2 - p, np.array([1.0])).x[0]  # noqa: E731
    np.testing.assert_allclose(dualad.grad(f)(4.0), 0.25, rtol=1e-10)


def test_example_steady_state():
    out = load_example("steady_state").run()
    np.testing.assert_allclose(out["dualad"], out["central differences"], rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(out["reverse"], out["dualad"], rtol=1e-10, atol=1e-14)
    assert out["residual"] < 1e-10
