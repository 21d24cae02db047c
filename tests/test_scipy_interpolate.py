"""scipy.interpolate on dual numbers (dualad/scipy/interpolate.py), called as users write it:
the interpolator constructed inside the differentiated function.

Per case: the Jacobian forward = reverse and against central differences of SciPy's own
object, the value SciPy's own, and second derivatives (HyperDual, forward over reverse)
against differences of the gradient; derivatives w.r.t. the data y, the evaluation points t,
both at once, boundary values, fill values. Then the conventions: the derivative in t at a
knot is the piece SciPy evaluates there, periodic data share the derivative of y[0] = y[-1],
out-of-range points with extrapolate=False have SciPy's nan and derivative 0; and the errors:
knots that carry derivatives, methods dualad does not differentiate.
"""

import itertools

import numpy as np
import pytest
import scipy.interpolate
from scipy.interpolate import CubicSpline

import dualad
from helpers import assert_second_order_three_ways, richardson_jacobian
from dualad import allocation
from dualad.scipy import interpolate as stand_ins
from dualad.scipy.values import NotDifferentiated


def test_the_view_sees_scipys_classes():
    """dualad/__init__.py's hook gives dualad.scipy.stand_in SciPy's classes too (a class's
    type is `type`, whose module is builtins: it is named by its own module)."""
    assert allocation._stand_in(scipy.interpolate.CubicSpline) is stand_ins.CubicSpline


XK = np.array([0.0, 0.7, 1.5, 2.1, 3.0, 4.2])
Y = np.sin(XK) + 0.3 * XK
Y2 = np.stack([Y, np.cos(XK)])  # two series along axis 1
T = np.array([-0.4, 0.25, 1.15, 1.85, 2.65, 3.7, 4.5])  # off the knots (and midpoints), two outside
TIN = T[1:-1]
NOT_MONOTONE = np.array([0.0, 1.0, 0.5, 0.6, 2.0, 1.2])  # PCHIP's branches: sign changes
GRID = (np.array([0.0, 1.0, 2.5, 3.0]), np.array([-1.0, 0.0, 0.5]))
VALUES = np.add.outer(np.sin(GRID[0]), GRID[1] ** 2) + np.outer(GRID[0], GRID[1])
XI = np.array([[0.3, -0.6], [1.7, 0.2], [2.9, 0.45], [0.5, 0.1]])
BS_T = np.r_[[0.0] * 3, 0.5, 1.3, 2.0, 2.2, 3.1, [4.0] * 3]  # k=2 knots: 9 coefficients
BS_C = np.cos(np.arange(9.0))


def test_a_spline_made_outside_f_is_evaluated_at_points_with_derivatives():
    spline = scipy.interpolate.CubicSpline(XK, Y)
    t = np.array([0.25, 1.15, 2.65])
    np.testing.assert_allclose(dualad.grad(lambda u: np.sum(spline(u)), mode="reverse")(t),
                               spline(t, 1), rtol=1e-12)
    np.testing.assert_allclose(dualad.jacfwd(lambda u: spline(u))(t), np.diag(spline(t, 1)), rtol=1e-12)



def _differences(f, x, h=1e-5):
    return richardson_jacobian(f, x, h)


def _periodic(z):
    return np.concatenate([z, z[:1]])


# name -> (f as a user writes it, the point)
CASES = {
    # CubicSpline: data, boundary conditions, points, both, methods
    "cubic y": (lambda y: scipy.interpolate.CubicSpline(XK, y)(T), Y),
    "cubic y natural": (lambda y: CubicSpline(XK, y, bc_type="natural")(T), Y),
    "cubic y clamped": (lambda y: CubicSpline(XK, y, bc_type="clamped")(T, 1), Y),
    "cubic y mixed bc": (lambda y: CubicSpline(XK, y, bc_type=((1, 0.4), (2, -0.2)))(T, 2), Y),
    "cubic y periodic": (lambda z: CubicSpline(XK, _periodic(z), bc_type="periodic")(T + 3.0), Y[:-1]),
    "cubic y 2-D axis 1": (lambda y: CubicSpline(XK, y, axis=1)(TIN[:4].reshape(2, 2)), Y2),
    "cubic bc values": (lambda v: CubicSpline(XK, Y, bc_type=((1, v[0]), (2, v[1])))(T), np.array([0.3, -0.5])),
    "cubic t": (lambda t: CubicSpline(XK, Y)(t), T),
    "cubic t nu=1": (lambda t: CubicSpline(XK, Y, bc_type="natural")(t, nu=1), T),
    "cubic t periodic": (lambda t: CubicSpline(XK, _periodic(Y[:-1]), bc_type="periodic")(t), T + 5.0),
    "cubic y and t": (lambda p: CubicSpline(XK, p[:6])(p[6:]), np.r_[Y, TIN]),
    "cubic derivative": (lambda y: CubicSpline(XK, y).derivative()(T), Y),
    "cubic antiderivative": (lambda y: CubicSpline(XK, y).antiderivative()(T), Y),
    "cubic integrate y": (lambda y: CubicSpline(XK, y).integrate(0.3, 3.9), Y),
    "cubic integrate limits": (lambda ab: CubicSpline(XK, Y).integrate(ab[0], ab[1]), np.array([3.9, 0.3])),
    "cubic integrate periodic": (lambda p: CubicSpline(XK, _periodic(p[:5]), bc_type="periodic").integrate(p[5], p[6]),
                                 np.r_[Y[:-1], -1.1, 9.3]),
    "cubic local import": (lambda y: _local_import(y), Y),
    # PCHIP (not linear in y), Hermite
    "pchip y": (lambda y: scipy.interpolate.PchipInterpolator(XK, y)(T), Y),
    "pchip y branches": (lambda y: scipy.interpolate.PchipInterpolator(XK, y)(T), NOT_MONOTONE),
    "pchip y 2-D": (lambda y: scipy.interpolate.PchipInterpolator(XK, y, axis=1)(TIN), Y2),
    "pchip t": (lambda t: scipy.interpolate.PchipInterpolator(XK, NOT_MONOTONE)(t), T),
    "pchip_interpolate": (lambda y: scipy.interpolate.pchip_interpolate(XK, y, TIN, der=1), Y),
    "hermite y dydx": (lambda p: scipy.interpolate.CubicHermiteSpline(XK, p[:6], p[6:])(T), np.r_[Y, np.cos(XK)]),
    # B-splines
    "bspline c": (lambda c: scipy.interpolate.BSpline(BS_T, c, 2)(T), BS_C),
    "bspline t": (lambda t: scipy.interpolate.BSpline(BS_T, BS_C, 2)(t), T),
    "bspline c and t": (lambda p: scipy.interpolate.BSpline(BS_T, p[:9], 2)(p[9:], nu=1), np.r_[BS_C, TIN]),
    "bspline c 2-D axis 1": (lambda c: scipy.interpolate.BSpline(BS_T, c, 2, axis=1)(TIN[:4].reshape(2, 2)),
                             np.stack([BS_C, BS_C ** 2])),
    "bspline integrate no extrapolation": (lambda p: scipy.interpolate.BSpline(BS_T, p[:9], 2, extrapolate=False)
                                           .integrate(p[9], p[10]), np.r_[BS_C, 0.2, 4.6]),
    "make_interp_spline given knots": (lambda p: scipy.interpolate.make_interp_spline(
        XK, p[:6], k=3, t=np.r_[[0.0] * 4, 1.2, 2.5, [4.2] * 4])(p[6:]), np.r_[Y, TIN]),
    "ppoly c": (lambda c: scipy.interpolate.PPoly(c, XK)(T, nu=1), CubicSpline(XK, Y).c),
    "bspline derivative": (lambda c: scipy.interpolate.BSpline(BS_T, c, 2).derivative()(TIN), BS_C),
    "bspline integrate": (lambda p: scipy.interpolate.BSpline(BS_T, p[:9], 2).integrate(p[9], p[10]),
                          np.r_[BS_C, 0.2, 4.6]),
    **{f"make_interp_spline k={k} y": ((lambda k: lambda y: scipy.interpolate.make_interp_spline(XK, y, k=k)(T))(k), Y)
       for k in (1, 2, 3, 4, 5)},
    **{f"make_interp_spline k={k} t": ((lambda k: lambda t: scipy.interpolate.make_interp_spline(XK, Y, k=k)(t))(k), T)
       for k in (1, 2, 3, 4, 5)},
    "make_interp_spline natural": (lambda y: scipy.interpolate.make_interp_spline(XK, y, bc_type="natural")(T), Y),
    "make_interp_spline bc values": (lambda v: scipy.interpolate.make_interp_spline(
        XK, Y, bc_type=([(1, v[0])], [(2, v[1])]))(T), np.array([0.2, 0.7])),
    "make_interp_spline periodic": (lambda z: scipy.interpolate.make_interp_spline(
        XK, _periodic(z), bc_type="periodic")(T), Y[:-1]),
    # interp1d
    "interp1d linear y": (lambda y: scipy.interpolate.interp1d(XK, y)(TIN), Y),
    "interp1d linear t": (lambda t: scipy.interpolate.interp1d(XK, Y)(t), TIN),
    "interp1d linear 2-D extrapolate": (lambda p: scipy.interpolate.interp1d(
        XK, p[:12].reshape(2, 6), fill_value="extrapolate")(p[12:]), np.r_[Y2.ravel(), T]),
    "interp1d linear 2-D axis 0": (lambda y: scipy.interpolate.interp1d(XK, y, axis=0)(TIN), Y2.T),
    "interp1d cubic": (lambda p: scipy.interpolate.interp1d(XK, p[:6], kind="cubic")(p[6:]), np.r_[Y, TIN]),
    "interp1d quadratic unsorted": (lambda y: scipy.interpolate.interp1d(XK[::-1], y, kind="quadratic")(TIN), Y),
    "interp1d fill values": (lambda p: scipy.interpolate.interp1d(XK, Y, bounds_error=False, fill_value=(p[0], p[1]))(T),
                             np.array([-2.0, 3.0])),
    "interp1d nearest": (lambda y: scipy.interpolate.interp1d(XK, y, kind="nearest")(TIN), Y),
    "interp1d previous extrapolate": (lambda y: scipy.interpolate.interp1d(
        XK, y, kind="previous", fill_value="extrapolate")(T[1:]), Y),
    # grids
    "grid values": (lambda v: scipy.interpolate.RegularGridInterpolator(GRID, v)(XI), VALUES),
    "grid xi": (lambda xi: scipy.interpolate.RegularGridInterpolator(GRID, VALUES)(xi), XI),
    "grid xi fill": (lambda xi: scipy.interpolate.RegularGridInterpolator(GRID, VALUES, bounds_error=False,
                                                                          fill_value=None)(xi), XI * 1.2),
    "grid xi tuple": (lambda p: scipy.interpolate.RegularGridInterpolator(GRID, VALUES)((p[:3], p[3])),
                      np.array([0.3, 1.7, 2.9, 0.2])),
    "grid values trailing axis": (lambda v: scipy.interpolate.RegularGridInterpolator(GRID, v)(XI),
                                  np.stack([VALUES, VALUES ** 2], axis=-1)),
    "grid descending": (lambda v: scipy.interpolate.RegularGridInterpolator(
        (GRID[0][::-1], GRID[1]), v)(XI), VALUES[::-1]),
    "grid nearest": (lambda v: scipy.interpolate.RegularGridInterpolator(GRID, v, method="nearest")(XI), VALUES),
    "interpn": (lambda xi: scipy.interpolate.interpn(GRID, VALUES, xi), XI),
}


def _local_import(y):
    from scipy.interpolate import CubicSpline  # noqa: PLC0415 - a user's local import
    return CubicSpline(XK, y, bc_type="natural")(T)


# cases whose second derivative is checked (each a few forward and reverse passes)
SECOND = {"cubic y", "cubic y periodic", "cubic t", "cubic t nu=1", "cubic y and t", "cubic bc values",
          "cubic integrate limits", "pchip y", "pchip y branches", "pchip t", "bspline c and t",
          "make_interp_spline k=4 t", "make_interp_spline k=5 t", "interp1d cubic",
          "interp1d linear 2-D extrapolate", "grid xi", "grid values", "bspline integrate",
          "ppoly c", "make_interp_spline given knots", "bspline integrate no extrapolation"}


@pytest.mark.parametrize("name", list(CASES))
def test_jacobian_value_and_second_order(name):
    f, x = CASES[name]
    forward = dualad.jacfwd(f)(x)
    np.testing.assert_allclose(dualad.jacrev(f)(x), forward, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(forward, _differences(f, x), rtol=1e-7, atol=1e-8)
    value, _ = dualad.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(value, f(x))
    if name not in SECOND:
        return
    assert_second_order_three_ways(f, x, 1e-11, _differences)


def test_linear_in_the_data():
    """A spline is linear in y: its Hessian in y is 0 and its tangent along dy is the spline of dy."""
    def f(y):
        return CubicSpline(XK, y, bc_type="not-a-knot")(T).sum()
    np.testing.assert_array_equal(dualad.hessian(f)(Y), np.zeros((6, 6)))
    dy = np.cos(3 * XK)
    _, tangent = dualad.jvp(lambda y: CubicSpline(XK, y)(T), (Y,), (dy,))
    np.testing.assert_allclose(tangent, scipy.interpolate.CubicSpline(XK, dy)(T), rtol=1e-13, atol=1e-14)
    # mixed: d/dt along dy is the derivative of the spline of dy
    mixed = dualad.jacfwd(dualad.jacfwd(lambda p: CubicSpline(XK, p[:6])(p[6:])))(np.r_[Y, TIN])
    expected = np.diag(scipy.interpolate.CubicSpline(XK, dy)(TIN, 1))
    np.testing.assert_allclose(np.einsum("itj,j->it", mixed[:, 6:, :6], dy), expected, rtol=1e-12, atol=1e-13)


def test_derivative_in_t_is_scipys_derivative_at_knots():
    """At a knot (and at the ends) d/dt s(t) = s'(t) as SciPy evaluates it (the interval to the
    right, the last one at the end), and d²/dt² = s''(t)."""
    for build in (lambda: CubicSpline(XK, Y), lambda: scipy.interpolate.make_interp_spline(XK, Y, k=4),
                  lambda: scipy.interpolate.PchipInterpolator(XK, NOT_MONOTONE)):
        spline = build()
        first = np.diag(dualad.jacfwd(lambda t: build()(t))(XK))
        np.testing.assert_allclose(first, spline(XK, 1), rtol=1e-12, atol=1e-12)
        second = np.array([dualad.second_derivative(lambda t: build()(t))(x) for x in XK])
        np.testing.assert_allclose(second, spline(XK, 2), rtol=1e-11, atol=1e-11)


def test_linear_interp1d_at_sample_points():
    """The segment SciPy evaluates at a sample point: np.interp's (the right one, the last at the
    end) for 1-D y without extrapolation; SciPy's searchsorted (the left one, the first at the
    start) otherwise."""
    slopes = np.diff(Y) / np.diff(XK)
    right = np.diag(dualad.jacfwd(lambda t: scipy.interpolate.interp1d(XK, Y)(t))(XK))
    np.testing.assert_allclose(right, np.r_[slopes, slopes[-1]], rtol=1e-13)
    left = np.diag(dualad.jacfwd(lambda t: scipy.interpolate.interp1d(XK, Y, fill_value="extrapolate")(t))(XK))
    np.testing.assert_allclose(left, np.r_[slopes[0], slopes], rtol=1e-13)


def test_periodic_data_share_their_derivative():
    """y[0] and y[-1] of periodic data are one value: its derivative split equally."""
    y = _periodic(Y[:-1])
    for f in (lambda y: CubicSpline(XK, y, bc_type="periodic")(T).sum(),
              lambda y: scipy.interpolate.make_interp_spline(XK, y, bc_type="periodic")(T).sum()):
        g = dualad.grad(f)(y)
        shared = dualad.grad(lambda z: f(_periodic(z)))(Y[:-1])
        np.testing.assert_allclose(g[0], g[-1], rtol=1e-14)
        np.testing.assert_allclose(np.r_[g[0] + g[-1], g[1:-1]], shared, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(dualad.jacrev(f)(y), g, rtol=1e-12, atol=1e-13)


def test_no_extrapolation_and_fill():
    """Out of range with extrapolate=False: SciPy's nan, derivative 0; bounds_error as SciPy."""
    f = lambda t: CubicSpline(XK, Y, extrapolate=False)(t)  # noqa: E731
    value, tangent = dualad.jvp(f, (T,), (np.ones_like(T),))
    np.testing.assert_array_equal(value, scipy.interpolate.CubicSpline(XK, Y, extrapolate=False)(T))
    assert np.isnan(value[[0, -1]]).all() and np.all(tangent[[0, -1]] == 0)
    with pytest.raises(ValueError, match="below the interpolation range"):
        dualad.grad(lambda t: scipy.interpolate.interp1d(XK, Y)(t).sum())(T)
    with pytest.raises(ValueError, match="out of bounds"):
        dualad.grad(lambda v: scipy.interpolate.RegularGridInterpolator(GRID, v)(XI * 2).sum())(VALUES)


def test_dual_knots_are_an_error():
    cases = {
        "CubicSpline": lambda x: CubicSpline(x, Y)(T).sum(),
        "PchipInterpolator": lambda x: scipy.interpolate.PchipInterpolator(x, Y)(T).sum(),
        "make_interp_spline": lambda x: scipy.interpolate.make_interp_spline(x, Y)(T).sum(),
        "interp1d": lambda x: scipy.interpolate.interp1d(x, Y)(TIN).sum(),
    }
    for (name, f), transform in zip(cases.items(), itertools.cycle((dualad.jacfwd, dualad.jacrev))):
        with pytest.raises(NotDifferentiated, match=f"{name}.*with respect to x"):
            transform(f)(XK)
    with pytest.raises(NotDifferentiated, match="BSpline.*with respect to t"):
        dualad.jacfwd(lambda t: scipy.interpolate.BSpline(t, BS_C, 2)(TIN).sum())(BS_T)
    with pytest.raises(NotDifferentiated, match="RegularGridInterpolator.*with respect to points"):
        dualad.jacrev(lambda g: scipy.interpolate.RegularGridInterpolator((g, GRID[1]), VALUES)(XI).sum())(GRID[0])


def test_other_methods_are_an_error_on_dual_numbers_and_scipys_on_plain_ones():
    with pytest.raises(NotDifferentiated, match="CubicSpline.roots"):
        dualad.jacfwd(lambda y: CubicSpline(XK, y).roots()[0])(Y)
    with pytest.raises(NotDifferentiated, match="method='slinear'"):
        dualad.jacrev(lambda v: scipy.interpolate.RegularGridInterpolator(GRID, v, method="slinear")(XI).sum())(VALUES)
    spline = stand_ins.CubicSpline(XK, Y)  # on plain numbers: SciPy's own object's answers
    np.testing.assert_array_equal(spline.roots(), scipy.interpolate.CubicSpline(XK, Y).roots())
    np.testing.assert_array_equal(spline(T, 2), scipy.interpolate.CubicSpline(XK, Y)(T, 2))
    assert isinstance(scipy.interpolate.CubicSpline(XK, Y), stand_ins.CubicSpline)
    assert isinstance(spline, stand_ins.CubicHermiteSpline) and isinstance(spline, stand_ins.PPoly)
    with pytest.raises(NotDifferentiated, match="descending breakpoints"):
        dualad.jacfwd(lambda c: scipy.interpolate.PPoly(c, XK[::-1])(T))(CubicSpline(XK, Y).c)


def test_construct_fast():
    """SciPy's construct_fast: no checks, the coefficients keeping their derivatives."""
    def f(c):
        return scipy.interpolate.BSpline.construct_fast(BS_T, c, 2)(TIN)
    np.testing.assert_allclose(dualad.jacfwd(f)(BS_C), _differences(f, BS_C), rtol=1e-7, atol=1e-8)

    def g(c):
        return scipy.interpolate.PPoly.construct_fast(c, XK)(T)
    c = CubicSpline(XK, Y).c
    np.testing.assert_allclose(dualad.jacrev(g)(c), _differences(g, c), rtol=1e-7, atol=1e-8)


def test_attributes_carry_derivatives():
    """.c of a spline of dual data: SciPy's coefficients with the data's derivatives."""
    c = dualad.jacfwd(lambda y: CubicSpline(XK, y).c)(Y)
    np.testing.assert_allclose(c, _differences(lambda y: scipy.interpolate.CubicSpline(XK, y).c, Y), rtol=1e-7, atol=1e-8)
    value, _ = dualad.jvp(lambda c: scipy.interpolate.BSpline(BS_T, c, 2).derivative().c, (BS_C,), (BS_C,))
    np.testing.assert_array_equal(value, scipy.interpolate.BSpline(BS_T, BS_C, 2).derivative().c)


def test_a_spline_made_outside_f():
    """A SciPy spline made outside f, seen through its stand-in (stand_in_of)."""
    spline = scipy.interpolate.CubicSpline(XK, Y)
    seen = stand_ins.stand_in_of(spline)
    np.testing.assert_allclose(dualad.jacfwd(lambda t: seen(t))(TIN), np.diag(spline(TIN, 1)), rtol=1e-12)
    assert stand_ins.stand_in_of(np.zeros(3)) is None
