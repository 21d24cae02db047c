"""Statistics, the elementwise functions outside the rule table, linspace, gradient and interp
(dualad/functions/statistics.py, elementwise.py): values are NumPy's bit for bit; forward =
reverse = central differences; the exact Hessian = forward over reverse; and the conventions at
special points (ties, nan, sinc at 0, interp at its sample points)."""

import numpy as np
import pytest

import dualad

RNG = np.random.default_rng(20240613)
X34 = RNG.normal(size=(3, 4))
X35 = RNG.normal(size=(3, 5))
X2 = RNG.normal(size=(2, 6))
POS = RNG.uniform(0.5, 2.0, size=(2, 5))
XP = np.array([-1.0, -0.2, 0.4, 1.1, 2.0])

CASES = [
    ("var", lambda a: np.var(a), X34),
    ("var-axis-ddof", lambda a: np.var(a, axis=1, ddof=1), X34),
    ("var-keepdims-tuple", lambda a: np.var(a, axis=(0, 1), keepdims=True), X34),
    ("var-mean", lambda a: np.var(a, axis=0, mean=np.mean(a, axis=0, keepdims=True) + 0.1), X34),
    ("std", lambda a: np.std(a, axis=0, keepdims=True), X34),
    ("std-correction", lambda a: np.std(a, axis=1, correction=1), X34),
    ("average", lambda a: np.average(a), X34),
    ("average-weights-axis", lambda a: np.average(a, axis=1, weights=np.arange(1.0, 5.0)), X34),
    ("average-dual-weights", lambda a: np.average(a[0], weights=a[1] ** 2), X2),
    ("average-returned", lambda a: np.stack(np.average(a, axis=0, weights=a ** 2 + 1.0,
                                                       returned=True)), X34),
    ("average-keepdims", lambda a: np.average(a, axis=0, keepdims=True), X34),
    ("nanmean", lambda a: np.nanmean(a, axis=0), X34),
    ("nansum", lambda a: np.nansum(a, axis=1, keepdims=True), X34),
    ("median", lambda a: np.median(a), X34),
    ("median-axis", lambda a: np.median(a, axis=0), X34),
    ("median-tuple-keepdims", lambda a: np.median(a, axis=(0, 1), keepdims=True), X34),
    ("quantile", lambda a: np.quantile(a, [0.1, 0.5, 0.93], axis=1), X34),
    ("quantile-scalar-q", lambda a: np.quantile(a, 0.3), X34),
    ("quantile-keepdims", lambda a: np.quantile(a, [0.25, 0.8], axis=0, keepdims=True), X34),
    ("quantile-hazen", lambda a: np.quantile(a, [0.2, 0.7], axis=1, method="hazen"), X34),
    ("quantile-lower", lambda a: np.quantile(a, 0.4, axis=1, method="lower"), X34),
    ("quantile-midpoint", lambda a: np.quantile(a, 0.4, axis=1, method="midpoint"), X34),
    ("percentile", lambda a: np.percentile(a, [30, 75], axis=(0, 1), keepdims=True), X34),
    ("cov", lambda a: np.cov(a), X35),
    ("cov-rowvar-bias", lambda a: np.cov(a, rowvar=False, bias=True), X35),
    ("cov-y", lambda a: np.cov(a[0], a[1]), X35),
    ("cov-weights", lambda a: np.cov(a, fweights=[1, 2, 1, 3, 1],
                                     aweights=[0.5, 1.0, 2.0, 1.5, 0.7]), X35),
    ("cov-dual-aweights", lambda a: np.cov(a[:2], aweights=a[2] ** 2, ddof=1), X35),
    ("corrcoef", lambda a: np.corrcoef(a), X35),
    ("corrcoef-rowvar", lambda a: np.corrcoef(a, rowvar=False), X35),
    ("logaddexp", lambda a: np.logaddexp(a[0], a[1]), X2),
    ("logaddexp-scaled", lambda a: np.logaddexp(30 * a[0], 30 * a[1]), X2),
    ("logaddexp2", lambda a: np.logaddexp2(a[0], 3 * a[1]), X2),
    ("fabs", np.fabs, X34),
    ("fmax", lambda a: np.fmax(a[0], a[1]), X2),
    ("fmin", lambda a: np.fmin(a[0], 0.1), X2),
    ("sinc", lambda a: np.sinc(a), X34),
    ("sinc-near-0", lambda a: np.sinc(a / np.pi), X34),  # both sides of the series' edge
    ("degrees", np.degrees, X34),
    ("radians", np.radians, X34),
    ("nan_to_num", np.nan_to_num, X34),
    ("heaviside", lambda a: np.heaviside(a[0], a[1]) + a[0], X2),
    ("conj", lambda a: np.conj(a) * np.conjugate(a[0]), X34),
    ("linspace", lambda a: np.linspace(a[0, 0], a[1, 1], 7), X2),
    ("linspace-arrays", lambda a: np.linspace(a[0], a[1], 5, axis=1, endpoint=False), X2),
    ("linspace-retstep", lambda a: np.linspace(a[0, 0], 3.0, 4, retstep=True)[1] * a[1, 1], X2),
    ("gradient", lambda a: np.gradient(a, axis=1), X34),
    ("gradient-spacing", lambda a: np.stack(np.gradient(a, 0.3, edge_order=2)), X34),
    ("gradient-coordinates", lambda a: np.gradient(a, np.array([0.0, 0.5, 1.7]),
                                                    np.array([0.0, 1.0, 2.0, 3.0]),
                                                    edge_order=2)[0], X34),
    ("gradient-dual-coordinates", lambda a: np.gradient(a[0], np.cumsum(a[1]), edge_order=2),
     POS),
    ("gradient-dual-spacing", lambda a: np.gradient(a[0], a[1, 0]), POS),
    ("interp", lambda a: np.interp(a[0, :4], XP, a[1, :5]), X2),
    ("interp-left-right", lambda a: np.interp(3 * a[0], XP, a[1, :5], left=a[1, 5],
                                              right=-a[1, 5]), X2),
    ("interp-period", lambda a: np.interp(3 * a[0], [0.0, 1.0, 2.5, 3.0, 4.5], a[1, :5],
                                          period=2.0), X2),
    ("interp-constant-fp", lambda a: np.interp(a[0], XP, np.sin(XP)), X2),
]
IDS = [name for name, _, _ in CASES]


def central_differences(f, x, h=1e-6):
    jac = np.zeros(np.shape(f(x)) + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        jac[(Ellipsis,) + i] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return jac


@pytest.mark.parametrize("name,f,x", CASES, ids=IDS)
def test_value_is_numpys_and_first_derivatives_agree(name, f, x):
    reference = np.asarray(f(x))
    forward_value = dualad.jvp(f, (x,), (np.ones_like(x),))[0]
    reverse_value = dualad.vjp(f, x)[0]
    for value in (forward_value, reverse_value):
        assert np.array_equal(np.asarray(value), reference, equal_nan=True)
    forward = dualad.jacobian(f, mode="forward")(x)
    reverse = dualad.jacobian(f, mode="reverse")(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(forward, central_differences(f, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,f,x", CASES, ids=IDS)
def test_exact_hessian_is_forward_over_reverse(name, f, x):
    c = np.cos(np.arange(np.size(f(x))).reshape(np.shape(f(x))))

    def g(a):
        return np.sum(np.sin(f(a)) * c)

    hessian = dualad.hessian(g)(x)
    np.testing.assert_allclose(hessian, dualad.jacfwd(dualad.jacrev(g))(x), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(hessian, dualad.hessian(g, mode="forward-over-reverse")(x),
                               rtol=1e-9, atol=1e-10)


def test_values_are_numpys_on_larger_inputs():
    a = RNG.normal(size=(7, 300)) * 10
    fs = [lambda a: np.var(a, axis=1), lambda a: np.std(a), lambda a: np.median(a, axis=0),
          lambda a: np.quantile(a, [0.05, 0.5, 0.99], axis=1), lambda a: np.cov(a),
          lambda a: np.corrcoef(a), lambda a: np.logaddexp(a[0], a[1]),
          lambda a: np.logaddexp2(a[2], a[3]), lambda a: np.sinc(a * 1e-3),
          lambda a: np.average(a, axis=1, weights=np.abs(a[0]))]
    for f in fs:
        assert np.array_equal(dualad.jvp(f, (a,), (a,))[0], f(a))


# ---- special points -------------------------------------------------------------------------
def test_median_ties_share_the_derivative_as_max_does():
    a = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
    for mode in ("forward", "reverse"):
        np.testing.assert_array_equal(dualad.grad(np.median, mode=mode)(a), [0, 0, 0.5, 0.5, 0])
        # an even count whose two middle entries lie in a tie of three: 1/3 each
        b = np.array([1.0, 2.0, 2.0, 4.0, 2.0, 3.0])
        np.testing.assert_allclose(dualad.grad(np.median, mode=mode)(b),
                                   [0, 1 / 3, 1 / 3, 0, 1 / 3, 0], rtol=1e-15)
        # np.max's convention on the same tie
        c = np.array([1.0, 5.0, 5.0])
        np.testing.assert_array_equal(dualad.grad(np.max, mode=mode)(c),
                                      dualad.grad(lambda v: np.quantile(v, 1.0), mode=mode)(c))


def test_median_of_a_lane_with_nan_is_nan_with_nan_derivative():
    a = np.array([[1.0, np.nan, 2.0], [1.0, 3.0, 2.0]])
    jac = dualad.jacobian(lambda v: np.median(v, axis=1))(a)
    assert np.isnan(jac[0]).all() and np.array_equal(jac[1], [[0, 0, 0], [0, 0, 1]])


def test_fmax_fmin_nan_and_ties():
    a = np.array([[1.0, np.nan, 2.0, 3.0, 0.0], [np.nan, 1.0, 2.0, 1.0, -0.0]])
    for func, other in ((np.fmax, np.maximum), (np.fmin, np.minimum)):
        for mode in ("forward", "reverse"):
            jac = dualad.jacobian(lambda v: func(v[0], v[1]), mode=mode)(a)
            d1, d2 = np.diagonal(jac[:, 0]), np.diagonal(jac[:, 1])
            np.testing.assert_array_equal(d1, [1, 0, 0.5, 1 if func is np.fmax else 0, 0.5])
            np.testing.assert_array_equal(d2, [0, 1, 0.5, 0 if func is np.fmax else 1, 0.5])
            # ties as the rule table's maximum/minimum
            tie = dualad.jacobian(lambda v: other(v[0], v[1]), mode=mode)(a[:, 2:3])
            np.testing.assert_array_equal(jac[2:3, :, 2:3], tie)
        value = dualad.jvp(lambda v: func(v[0], v[1]), (a,), (a,))[0]
        assert np.array_equal(value, func(a[0], a[1]), equal_nan=True)
        assert np.array_equal(np.signbit(value), np.signbit(func(a[0], a[1])))


def test_sinc_at_and_near_zero():
    d = dualad.derivative
    assert dualad.derivative(np.sinc)(0.0) == 0.0
    assert dualad.second_derivative(np.sinc)(0.0) == pytest.approx(-np.pi ** 2 / 3, rel=1e-15)
    assert d(d(d(np.sinc)))(0.0) == 0.0
    assert d(d(d(d(np.sinc))))(0.0) == pytest.approx(np.pi ** 4 / 5, rel=1e-13)
    assert dualad.grad(np.sinc, mode="reverse")(0.0) == 0.0
    # closed forms for y = πx: sinc' = π(y cos y - sin y)/y², both sides of |y| = 1 and tiny x
    x = np.array([1e-12, -1e-7, 0.3 / np.pi, 0.999 / np.pi, 1.001 / np.pi, -2.5, 7.2])
    y = np.pi * x
    first = np.where(np.abs(y) < 1e-3, -np.pi * y / 3,
                     np.pi * (y * np.cos(y) - np.sin(y)) / y ** 2)
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(np.diagonal(dualad.jacobian(np.sinc, mode=mode)(x)), first,
                                   rtol=1e-12, atol=1e-300)
    values = dualad.jvp(np.sinc, (x,), (np.ones_like(x),))[0]
    assert np.array_equal(values, np.sinc(x))
    h = np.diagonal(dualad.hessian(lambda v: np.sum(np.sinc(v)))(x[:2]))
    np.testing.assert_allclose(h, -np.pi ** 2 / 3, rtol=1e-9)
    assert not np.isnan(dualad.hessian(lambda v: np.sum(np.sinc(v)))(np.zeros(2))).any()


def test_interp_at_sample_points_right_sided_and_last_left_sided():
    xp, fp = np.array([0.0, 1.0, 3.0, 4.0]), np.array([2.0, -1.0, 3.0, 5.0])
    slopes = np.diff(fp) / np.diff(xp)
    for mode in ("forward", "reverse"):
        dx = dualad.jacobian(lambda x: np.interp(x, xp, fp), mode=mode)(xp)
        np.testing.assert_array_equal(np.diagonal(dx), [slopes[0], slopes[1], slopes[2],
                                                        slopes[2]])
        dfp = dualad.jacobian(lambda f: np.interp(xp, xp, f), mode=mode)(fp)
        np.testing.assert_array_equal(dfp, np.eye(4))
        # outside: left/right (which carry derivatives here), derivative 0 in x
        def outside(v):
            return np.interp(np.array([-1.0, 5.0]) * v[0], xp, fp, left=v[1], right=2 * v[1])
        np.testing.assert_array_equal(dualad.jacobian(outside, mode=mode)(np.array([1.0, 7.0])),
                                      [[0, 1], [0, 2]])
    value = dualad.jvp(lambda f: np.interp(xp, xp, f), (fp,), (fp,))[0]
    assert np.array_equal(value, fp)
    x = np.array([0.3, 3.999999999999, 4.0, 1.0])
    assert np.array_equal(dualad.jvp(lambda f: np.interp(x, xp, f), (fp,), (fp,))[0],
                          np.interp(x, xp, fp))


def test_logaddexp_ties_and_infinities():
    for func, scale in ((np.logaddexp, 1.0), (np.logaddexp2, np.log(2.0))):
        h = dualad.hessian(lambda v: func(v[0], v[1]))(np.array([0.7, 0.7]))
        np.testing.assert_allclose(h, 0.25 * scale * np.array([[1, -1], [-1, 1]]), rtol=1e-14)
        for point, grad in (([-np.inf, -np.inf], [0.5, 0.5]), ([np.inf, 1.0], [1.0, 0.0]),
                            ([-np.inf, 2.0], [0.0, 1.0]), ([0.7, 0.7], [0.5, 0.5])):
            point = np.array(point)
            for mode in ("forward", "reverse"):
                g = dualad.grad(lambda v: func(v[0], v[1]), mode=mode)(point)
                np.testing.assert_array_equal(g, grad)
            value = dualad.jvp(lambda v: func(v[0], v[1]), (point,), (np.ones(2),))[0]
            assert value == func(point[0], point[1])


def test_nan_to_num_and_heaviside_derivatives():
    a = np.array([1.5, np.nan, np.inf, -np.inf, -2.0])
    for mode in ("forward", "reverse"):
        jac = dualad.jacobian(np.nan_to_num, mode=mode)(a)
        np.testing.assert_array_equal(jac, np.diag([1.0, 0, 0, 0, 1]))
        # replacement numbers that carry derivatives (NumPy dispatches on x alone: x is dual)
        jac = dualad.jacobian(lambda v: np.nan_to_num(a * v[2], nan=v[0], posinf=v[1],
                                                      neginf=-v[1]),
                              mode=mode)(np.array([0.0, 9.0, 1.0]))
        np.testing.assert_array_equal(jac, [[0, 0, 1.5], [1, 0, 0], [0, 1, 0], [0, -1, 0],
                                            [0, 0, -2]])
        jac = dualad.jacobian(lambda v: np.heaviside(v[:3], v[3]), mode=mode)(
            np.array([-1.0, 0.0, 2.0, 0.5]))
        np.testing.assert_array_equal(jac, [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]])
    assert np.isnan(a).sum() == 1  # the input is not modified


def test_linspace_derivatives_and_exact_endpoint():
    def f(v):
        return np.linspace(v[0], v[1], 5)
    v = np.array([0.1, 0.7])
    for mode in ("forward", "reverse"):
        t = np.arange(5) / 4
        np.testing.assert_array_equal(dualad.jacobian(f, mode=mode)(v),
                                      np.stack([1 - t, t], axis=1))
    value = dualad.jvp(f, (v,), (v,))[0]
    assert np.array_equal(value, np.linspace(0.1, 0.7, 5)) and value[-1] == 0.7
    assert dualad.jvp(lambda v: np.linspace(v[0], v[1], 1), (v,), (v,))[0].tolist() == [0.1]
    ints = dualad.jvp(lambda v: np.linspace(v[0], 9 * v[1], 4, dtype=int), (v,), (v,))[0]
    assert np.array_equal(ints, np.linspace(0.1, 6.3, 4, dtype=int))


def test_gradient_is_numpys_linear_map():
    # np.gradient is linear in f: its Jacobian's columns are NumPy's gradient of unit vectors
    coords = np.array([0.0, 0.4, 1.5, 1.9, 3.0])
    for edge_order in (1, 2):
        f = lambda v: np.gradient(v, coords, edge_order=edge_order)  # noqa: E731
        jac = dualad.jacobian(f, mode="reverse")(np.ones(5))
        np.testing.assert_array_equal(jac, np.stack([f(e) for e in np.eye(5)], axis=1))


def test_uniform_dual_coordinates_give_numpys_value():
    f = RNG.normal(size=6)
    x = np.linspace(0.0, 1.0, 6)
    value = dualad.jvp(lambda c: np.gradient(f, c), (x,), (np.ones(6),))[0]
    assert np.array_equal(value, np.gradient(f, x))
    jac = dualad.jacobian(lambda c: np.gradient(f, c))(x)
    np.testing.assert_allclose(jac, central_differences(lambda c: np.gradient(f, c), x),
                               rtol=1e-6, atol=1e-6)


def test_errors_name_the_problem():
    a = X34
    with pytest.raises(TypeError, match="q that carries a derivative"):
        dualad.grad(lambda q: np.quantile(a, q))(0.5)
    with pytest.raises(ValueError, match="not a valid method"):
        dualad.grad(lambda v: np.quantile(v, 0.5, method="nope"))(a)
    with pytest.raises(TypeError, match="weights"):
        dualad.grad(lambda v: np.quantile(v, 0.5, method="inverted_cdf", weights=v ** 2))(a)
    with pytest.raises(TypeError, match="sample positions xp"):
        dualad.grad(lambda v: np.interp(0.5, v, np.ones(4)))(np.arange(4.0))
    with pytest.raises(ValueError, match="increasing xp"):
        dualad.grad(lambda v: np.interp(0.5, [0.0, 2.0, 1.0], v))(np.ones(3))
    with pytest.raises(TypeError, match="fweights"):
        dualad.jacobian(lambda v: np.cov(X35, fweights=v))(np.ones(5))
    with pytest.raises(TypeError, match="out"):
        dualad.grad(lambda v: np.median(v, out=np.empty(())))(a)
    with pytest.raises(TypeError, match="where"):
        dualad.grad(lambda v: np.var(v, where=v > 0))(a)
    with pytest.raises(ValueError, match="ddof and correction"):
        dualad.grad(lambda v: np.std(v, ddof=1, correction=1))(a)


def test_nan_to_num_copy_false_writes_into_its_argument():
    def f(v):
        w = v * 2.0
        r = np.nan_to_num(w, copy=False)
        return np.stack([r, w])  # w itself was replaced, as in NumPy
    a = np.array([1.5, np.nan, np.inf, -2.0])
    expected = np.zeros((2, 4, 4))
    expected[:, 0, 0] = expected[:, 3, 3] = 2.0
    for mode in ("forward", "reverse"):
        np.testing.assert_array_equal(dualad.jacobian(f, mode=mode)(a), expected)
    assert np.isnan(a[1]) and np.isinf(a[2])


THIRD_ORDER = [
    lambda t: np.std(np.array([1.0, 2.0, 4.0]) * t + np.array([0.0, 1.0, 1.0]) * t * t),
    lambda t: np.logaddexp(t, 2 * t * t),
    lambda t: np.sinc(t),
    lambda t: np.interp(0.7 * t, [0.0, 1.0, 2.0], np.array([1.0, 0.0, 3.0]) + np.eye(3)[1] * t * t),
    lambda t: np.corrcoef(np.array([[1.0, 0.0, 3.0, 0.0], [2.0, 1.0, 0.0, 0.5]])
                          + np.array([[0, 1, 0, 0], [0, 0, 0.3, 0]]) * t * t)[0, 1],
    lambda t: np.quantile(np.array([1.0, 3.0, 2.0]) * np.exp(t), 0.3),
]


@pytest.mark.parametrize("g", THIRD_ORDER)
def test_third_order_by_nesting(g):
    d, t, h = dualad.derivative, 0.8, 1e-4
    third = d(d(d(g)))(t)
    second = dualad.second_derivative(g)
    differences = (second(t + h) - second(t - h)) / (2 * h)
    assert third == pytest.approx(differences, rel=1e-6)


@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nanprod", "nancumsum", "nancumprod",
                                  "nanvar", "nanstd", "nansum", "nanmean"])
def test_nan_functions_pass_over_nan_entries(name):
    fn = getattr(np, name)
    x = np.array([0.3, np.nan, 1.1, 0.9, 2.3, 1.7])
    f = lambda x: fn(np.reshape(x, (2, 3)), axis=1)  # noqa: E731
    for mode in ("forward", "reverse"):
        jac = dualad.jacobian(f, mode=mode)(x)
        assert np.all(jac[..., 1] == 0.0)  # the nan entry: no derivative
        # the other entries: as the same function of the nan-free values
        clean = np.where(np.isnan(x), 0.0, x)
        h = 1e-6
        for j in (0, 2, 3, 4, 5):
            e = np.zeros(6)
            e[j] = h
            fd = (fn(np.reshape(np.where(np.isnan(x), np.nan, clean + e), (2, 3)), axis=1)
                  - fn(np.reshape(np.where(np.isnan(x), np.nan, clean - e), (2, 3)), axis=1)) / (2 * h)
            np.testing.assert_allclose(jac[..., j], fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(dualad.jvp(f, (x,), (np.ones(6),))[0], f(x))
