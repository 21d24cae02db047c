"""scipy.special on dual numbers (dualad/scipy_special.py's rules, dualad/scipy/special.py's
stand-ins), called as users write them inside the differentiated function.

Per ufunc, at random points inside its domain: first and second partials against mpmath
(mpmath.diff at 30 digits of the mathematical function, sharing nothing with the rules),
forward = reverse, the Hessian three ways (HyperDual, forward over reverse, jacfwd of
jacrev), the value SciPy's own, and JAX's derivatives where jax.scipy.special has the
function. Conventions at special points are tested one by one.
"""

import re

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sp

import dualad
from helpers import richardson_jacobian
from dualad.scipy_special import ARGUMENTS, SCIPY_RULES

mp.mp.dps = 30


def _regularised_gamma(a, x):
    return mp.gammainc(a, 0, x, regularized=True)


def _regularised_beta(a, b, x):
    return mp.betainc(a, b, 0, x, regularized=True)


def _student_cdf(df, t):
    return 0.5 + t * mp.gamma((df + 1) / 2) * mp.hyp2f1(0.5, (df + 1) / 2, 1.5, -t * t / df) / (
        mp.sqrt(mp.pi * df) * mp.gamma(df / 2))


def _ndtr(x):
    return mp.ncdf(x)


def _huber(d, r):
    return r * r / 2 if abs(r) <= d else d * (abs(r) - d / 2)


# rule name -> (mpmath function of all the arguments, ranges to draw each argument from).
# An inverse F⁻¹(shapes, q) names its F: the reference is x' = 1/F'(x), x'' = -F''(x)/F'(x)³
# at x = F⁻¹(q), F differentiated by mpmath.
REFERENCE = {
    "_zeta": (mp.zeta, [(2.0, 5.0), (0.3, 4.0)]),
    "psi": (mp.digamma, [(0.2, 6.0)]),
    "gammaln": (mp.loggamma, [(0.2, 8.0)]),
    "loggamma": (mp.loggamma, [(0.2, 8.0)]),
    "gamma": (mp.gamma, [(0.2, 5.0)]),
    "betaln": (lambda a, b: mp.log(mp.beta(a, b)), [(0.3, 5.0), (0.3, 5.0)]),
    "beta": (mp.beta, [(0.3, 4.0), (0.3, 4.0)]),
    "erf": (mp.erf, [(-2.5, 2.5)]),
    "erfc": (mp.erfc, [(-2.5, 2.5)]),
    "erfcx": (lambda x: mp.exp(x * x) * mp.erfc(x), [(-2.0, 5.0)]),
    "ndtr": (_ndtr, [(-4.0, 4.0)]),
    "log_ndtr": (lambda x: mp.log(mp.ncdf(x)), [(-12.0, 5.0)]),
    "erfinv": ("erf", [(-0.95, 0.95)]),
    "erfcinv": ("erfc", [(0.05, 1.95)]),
    "ndtri": ("ndtr", [(0.02, 0.98)]),
    "gammainc": (_regularised_gamma, [(0.5, 4.0), (0.2, 6.0)]),
    "gammaincc": (lambda a, x: 1 - _regularised_gamma(a, x), [(0.5, 4.0), (0.2, 6.0)]),
    "gammaincinv": ("gammainc", [(0.5, 4.0), (0.05, 0.95)]),
    "gammainccinv": ("gammaincc", [(0.5, 4.0), (0.05, 0.95)]),
    "betainc": (_regularised_beta, [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)]),
    "betaincc": (lambda a, b, x: 1 - _regularised_beta(a, b, x), [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)]),
    "betaincinv": ("betainc", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)]),
    "betainccinv": ("betaincc", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)]),
    "stdtr": (_student_cdf, [(1.0, 12.0), (-4.0, 4.0)]),
    "stdtrit": ("stdtr", [(1.0, 12.0), (0.05, 0.95)]),
    "expit": (lambda x: 1 / (1 + mp.exp(-x)), [(-6.0, 6.0)]),
    "logit": (lambda x: mp.log(x / (1 - x)), [(0.03, 0.97)]),
    "log_expit": (lambda x: -mp.log(1 + mp.exp(-x)), [(-8.0, 8.0)]),
    "exprel": (lambda x: mp.expm1(x) / x, [(-3.0, 3.0)]),
    "xlogy": (lambda x, y: x * mp.log(y), [(-3.0, 3.0), (0.1, 5.0)]),
    "xlog1py": (lambda x, y: x * mp.log1p(y), [(-3.0, 3.0), (-0.9, 5.0)]),
    "entr": (lambda x: -x * mp.log(x), [(0.05, 4.0)]),
    "rel_entr": (lambda x, y: x * mp.log(x / y), [(0.1, 4.0), (0.1, 4.0)]),
    "kl_div": (lambda x, y: x * mp.log(x / y) - x + y, [(0.1, 4.0), (0.1, 4.0)]),
    "huber": (_huber, [(0.5, 2.0), (-4.0, 4.0)]),
    "pseudo_huber": (lambda d, r: d * d * (mp.sqrt(1 + (r / d) ** 2) - 1), [(0.3, 3.0), (-4.0, 4.0)]),
    "iv": (mp.besseli, [(0.2, 3.0), (0.3, 6.0)]),
    "ive": (lambda v, x: mp.besseli(v, x) * mp.exp(-abs(x)), [(0.2, 3.0), (0.3, 6.0)]),
    "kv": (mp.besselk, [(0.2, 3.0), (0.3, 6.0)]),
    "kve": (lambda v, x: mp.besselk(v, x) * mp.exp(x), [(0.2, 3.0), (0.3, 6.0)]),
    "jv": (mp.besselj, [(0.2, 3.0), (0.3, 9.0)]),
    "yv": (mp.bessely, [(0.2, 3.0), (0.3, 9.0)]),
    "i0": (lambda x: mp.besseli(0, x), [(-4.0, 4.0)]),
    "i1": (lambda x: mp.besseli(1, x), [(-4.0, 4.0)]),
    "i0e": (lambda x: mp.besseli(0, x) * mp.exp(-abs(x)), [(0.1, 6.0)]),
    "i1e": (lambda x: mp.besseli(1, x) * mp.exp(-abs(x)), [(-6.0, -0.1)]),
    "k0": (lambda x: mp.besselk(0, x), [(0.2, 6.0)]),
    "k1": (lambda x: mp.besselk(1, x), [(0.2, 6.0)]),
    "k0e": (lambda x: mp.besselk(0, x) * mp.exp(x), [(0.2, 6.0)]),
    "k1e": (lambda x: mp.besselk(1, x) * mp.exp(x), [(0.2, 6.0)]),
    "j0": (lambda x: mp.besselj(0, x), [(-9.0, 9.0)]),
    "j1": (lambda x: mp.besselj(1, x), [(-9.0, 9.0)]),
    "y0": (lambda x: mp.bessely(0, x), [(0.3, 9.0)]),
    "y1": (lambda x: mp.bessely(1, x), [(0.3, 9.0)]),
}
# every partial of _riemann_zeta is an error (tested below)
TESTED = sorted(REFERENCE)
N_POINTS = 3


def test_every_rule_has_a_reference():
    assert set(SCIPY_RULES) - set(REFERENCE) == {"_riemann_zeta"}


def _points(name):
    """N_POINTS argument tuples inside the rule's domain (a fixed seed per rule)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    ranges = REFERENCE[name][1]
    points = rng.uniform([lo for lo, _ in ranges], [hi for _, hi in ranges], (N_POINTS, len(ranges)))
    if name == "huber":  # away from the kinks |r| = δ
        points = points[np.abs(np.abs(points[:, 1]) - points[:, 0]) > 0.05]
    return points


def _differentiable(name):
    rule = SCIPY_RULES[name]
    return [i for i, partial in enumerate(rule.first) if not getattr(partial, "missing", False)]


def _ufunc(name):
    return getattr(sp, name.lstrip("_")) if name != "_zeta" else sp.zeta


def _function(name, points):
    """v (shape (k, m): the k differentiable arguments at m points) -> Σ ufunc(arguments)."""
    ufunc, columns = _ufunc(name), _differentiable(name)

    def f(v):
        args = [v[columns.index(i)] if i in columns else points[:, i] for i in range(points.shape[1])]
        return np.sum(ufunc(*args))
    return f, points[:, columns].T.copy()


def _mp_partials(name, point, columns):
    """(first partials (k,), second partials (k, k)) of the rule at one point, by mpmath."""
    fn = REFERENCE[name][0]
    if isinstance(fn, str):  # an inverse: x = F⁻¹(q) and F's derivatives at x
        forward = REFERENCE[fn][0]
        x = mp.mpf(float(_ufunc(name)(*point)))
        shapes = [mp.mpf(float(p)) for p in point[:-1]]
        d1 = mp.diff(lambda t: forward(*shapes, t), x, 1)
        d2 = mp.diff(lambda t: forward(*shapes, t), x, 2)
        return np.array([float(1 / d1)]), np.array([[float(-d2 / d1 ** 3)]])
    args = [mp.mpf(float(p)) for p in point]
    k = len(columns)
    first, second = np.zeros(k), np.zeros((k, k))
    for a, i in enumerate(columns):
        order = [0] * len(args)
        order[i] = 1
        first[a] = float(mp.diff(fn, args, tuple(order)))
        for b, j in enumerate(columns):
            order = [0] * len(args)
            order[i] += 1
            order[j] += 1
            second[a, b] = float(mp.diff(fn, args, tuple(order)))
    return first, second


def _block_hessian(h, k, m):
    """(k, m, k, m) Hessian of a sum over m points -> (m, k, k) blocks; the rest must be 0."""
    blocks = np.stack([h[:, p, :, p] for p in range(m)])
    off = h.copy()
    for p in range(m):
        off[:, p, :, p] = 0.0
    assert np.all(off == 0.0)
    return blocks


@pytest.mark.parametrize("name", TESTED)
def test_partials_against_mpmath_in_every_mode(name):
    points = _points(name)
    columns = _differentiable(name)
    f, v = _function(name, points)
    k, m = v.shape
    forward = dualad.grad(f, mode="forward")(v)
    reverse = dualad.grad(f, mode="reverse")(v)
    np.testing.assert_allclose(forward, reverse, rtol=1e-14, atol=1e-300)
    hessians = [dualad.hessian(f, mode="forward")(v), dualad.hessian(f, mode="forward-over-reverse")(v),
                dualad.jacfwd(dualad.jacrev(f))(v)]
    for h in hessians[1:]:
        np.testing.assert_allclose(h, hessians[0], rtol=1e-12, atol=1e-13)
    blocks = _block_hessian(hessians[0], k, m)
    for p in range(m):
        first, second = _mp_partials(name, points[p], columns)
        np.testing.assert_allclose(forward[:, p], first, rtol=1e-9, atol=1e-12, err_msg=f"{name} at {points[p]}")
        np.testing.assert_allclose(blocks[p], second, rtol=1e-8, atol=1e-11, err_msg=f"{name} at {points[p]}")


@pytest.mark.parametrize("name", TESTED)
def test_the_value_is_scipys(name):
    points = _points(name)
    f, v = _function(name, points)
    value, _ = dualad.value_and_grad(f)(v)
    assert value == f(v)


# ---- JAX --------------------------------------------------------------------------------------------
JAX_NAMES = {"_zeta": "zeta", "psi": "digamma", "gammaln": "gammaln", "loggamma": "loggamma",
             "gamma": "gamma", "betaln": "betaln", "beta": "beta", "erf": "erf", "erfc": "erfc",
             "erfcx": "erfcx", "erfinv": "erfinv", "ndtr": "ndtr", "log_ndtr": "log_ndtr",
             "ndtri": "ndtri", "gammainc": "gammainc", "gammaincc": "gammaincc", "betainc": "betainc",
             "expit": "expit", "logit": "logit", "xlogy": "xlogy", "xlog1py": "xlog1py",
             "entr": "entr", "rel_entr": "rel_entr", "kl_div": "kl_div", "i0": "i0", "i0e": "i0e",
             "i1": "i1", "i1e": "i1e"}


# second derivatives compared with JAX's where its implementation compiles quickly (the
# gamma family's lgamma and digamma graphs take XLA seconds; mpmath checks them above)
JAX_SECOND = {"erf", "erfc", "erfinv", "ndtr", "log_ndtr", "ndtri", "expit", "logit", "xlogy",
              "xlog1py", "entr", "rel_entr", "kl_div", "i0", "i0e", "i1", "i1e"}


@pytest.fixture(scope="module")
def jax():
    """JAX in double precision, or the test skipped (CI may not have JAX)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.special  # noqa: F401
    return jax


@pytest.fixture(scope="module")
def jax_partials(jax):
    """(name, argument index) -> (∂, ∂² or None) along that argument at _points(name), by
    JAX: every function in one jitted call (one XLA compilation; JAX is slow to compile)."""
    jnp = jax.numpy

    def partials(points):
        out = {}
        for name, jax_name in JAX_NAMES.items():
            function, p = getattr(jax.scipy.special, jax_name), points[name]
            for i in _differentiable(name):
                def along(t, i=i, function=function, p=p):
                    return function(*[p[:, k] + t if k == i else p[:, k] for k in range(p.shape[1])])

                def first(t, along=along):
                    return jax.jvp(along, (t,), (jnp.ones_like(t),))[1]
                zero = jnp.zeros(p.shape[0])
                out[(name, i)] = (first(zero), jax.jvp(first, (zero,), (jnp.ones_like(zero),))[1]
                                  if name in JAX_SECOND else None)
        return out
    # XLA's optimisations cost most of the compilation and matter nothing here: off for it
    jax.config.update("jax_disable_most_optimizations", True)
    try:
        computed = jax.jit(partials)({name: jnp.asarray(_points(name)) for name in JAX_NAMES})
    finally:
        jax.config.update("jax_disable_most_optimizations", False)
    return {key: tuple(None if d is None else np.asarray(d) for d in ds) for key, ds in computed.items()}


@pytest.mark.parametrize("name", sorted(JAX_NAMES))
def test_derivatives_are_jaxs(name, jax_partials):
    f, v = _function(name, _points(name))
    gradient, hessian = dualad.grad(f)(v), dualad.hessian(f)(v)
    k, m = v.shape
    blocks = _block_hessian(hessian, k, m)
    for a, i in enumerate(_differentiable(name)):
        first, second = jax_partials[(name, i)]
        np.testing.assert_allclose(gradient[a], first, rtol=1e-8)
        if second is not None:
            np.testing.assert_allclose(blocks[:, a, a], second, rtol=1e-7, atol=1e-12)


# ---- partials scipy has no closed form for ----------------------------------------------------------
@pytest.mark.parametrize("call, function, argument", [
    (lambda x: sp.gammainc(x, 2.0), "gammainc", "a"),
    (lambda x: sp.gammaincc(x, 2.0), "gammaincc", "a"),
    (lambda x: sp.betainc(2.0, x, 0.3), "betainc", "b"),
    (lambda x: sp.iv(x, 2.0), "iv", "the order v"),
    (lambda x: sp.kv(x, 2.0), "kv", "the order v"),
    (lambda x: sp.jv(x, 2.0), "jv", "the order v"),
    (lambda x: sp.yv(x, 2.0), "yv", "the order v"),
    (lambda x: sp.zeta(x, 2.0), "zeta", "the exponent x"),
    (lambda x: sp.zeta(x), "zeta", "the exponent x"),
    (lambda x: sp.stdtr(x, 0.5), "stdtr", "df"),
    (lambda x: sp.gammaincinv(x, 0.5), "gammaincinv", "a"),
])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_partial_without_a_closed_form_is_an_error_naming_it(call, function, argument, mode):
    with pytest.raises(TypeError, match=re.escape(f"scipy.special.{function}: dualad has no derivative "
                                                  f"with respect to {argument} ")):
        dualad.grad(call, mode=mode)(1.5)


def test_the_other_argument_still_differentiates_beside_a_constant_shape():
    x = np.array([0.5, 2.0])
    got = dualad.grad(lambda x: np.sum(sp.gammainc(2.5, x)))(x)
    np.testing.assert_allclose(got, np.exp(-x) * x ** 1.5 / sp.gamma(2.5), rtol=1e-13)


# ---- conventions at special points -------------------------------------------------------------------
def _d(fn, x, order=1):
    d = dualad.derivative if order == 1 else dualad.second_derivative
    return float(d(fn)(x))


def test_conventions_at_special_points():
    assert _d(sp.exprel, 0.0) == 0.5 and _d(sp.exprel, 0.0, 2) == pytest.approx(1 / 3, rel=1e-15)
    assert _d(sp.entr, 0.0) == np.inf and _d(sp.entr, -1.0) == 0.0
    assert _d(lambda y: sp.xlogy(0.0, y), 2.0) == 0.0
    assert _d(lambda x: sp.xlogy(x, 0.0), 0.0) == -np.inf  # JAX's: log y
    assert _d(lambda y: sp.xlogy(0.0, y), 0.0) == 0.0  # the constant 0 (JAX's: nan)
    assert _d(lambda y: sp.xlog1py(0.0, y), -1.0) == 0.0
    assert _d(lambda y: sp.xlogy(0.0, y), 0.0, 2) == 0.0
    assert _d(lambda x: sp.rel_entr(x, 2.0), 0.0) == 0.0  # JAX's: 0 outside x, y > 0
    assert _d(lambda x: sp.kl_div(x, 2.0), 0.0) == -1.0
    assert _d(lambda x: sp.gammainc(1.0, x), 0.0) == 1.0
    assert _d(lambda x: sp.gammainc(0.5, x), 0.0) == np.inf
    assert _d(lambda x: sp.gammainc(2.0, x), 0.0) == 0.0
    assert _d(sp.i0e, 0.0) == 0.0 and _d(sp.i1e, 0.0) == 0.5 and _d(sp.i1, 0.0) == 0.5
    assert _d(sp.logit, 0.0) == np.inf and _d(sp.ndtri, 1.0) == np.inf
    assert _d(lambda r: sp.huber(1.0, r), 1.0) == 1.0  # the quadratic's side at |r| = δ
    assert _d(lambda r: sp.huber(1.0, r), -3.0) == -1.0
    assert _d(lambda r: sp.huber(-1.0, r), 2.0) == 0.0  # δ < 0: the constant inf
    assert _d(lambda d: sp.pseudo_huber(d, 2.0), 0.0) == 2.0  # the limit from δ > 0: |r|
    assert _d(lambda r: sp.pseudo_huber(0.0, r), 2.0) == 0.0


def test_exprel_is_smooth_where_its_series_meets_its_closed_form():
    x = np.array([-0.5000001, -0.4999999, 0.4999999, 0.5000001, 1e-9, -1e-300])
    exact = [float(mp.diff(lambda t: mp.expm1(t) / t if t != 0 else mp.mpf(1), mp.mpf(float(t)))) for t in x]
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(sp.exprel(x)))(x), exact, rtol=1e-14)


# ---- scipy.special's Python functions on duals: polygamma, zeta, softplus -----------------------------
def test_polygamma_zeta_and_softplus_differentiate_to_any_order():
    x = np.array([0.7, 2.5])
    np.testing.assert_allclose(dualad.grad(lambda x: np.sum(sp.polygamma(2, x)))(x), sp.polygamma(3, x),
                               rtol=1e-13)
    np.testing.assert_allclose(dualad.hessian(lambda x: np.sum(sp.polygamma(0, x)))(x),
                               np.diag(sp.polygamma(2, x)), rtol=1e-13)
    np.testing.assert_allclose(dualad.grad(lambda q: np.sum(sp.zeta(3.0, q)), mode="reverse")(x),
                               -3.0 * sp.zeta(4.0, x), rtol=1e-13)
    d = dualad.derivative
    assert float(d(d(d(sp.gammaln)))(2.5)) == pytest.approx(float(sp.polygamma(2, 2.5)), rel=1e-13)
    if hasattr(sp, "softplus"):
        np.testing.assert_allclose(dualad.grad(lambda x: np.sum(sp.softplus(x)))(x), sp.expit(x), rtol=1e-14)
        np.testing.assert_allclose(dualad.hessian(lambda x: np.sum(sp.softplus(x)), mode="forward-over-reverse")(x),
                                   np.diag(sp.expit(x) * sp.expit(-x)), rtol=1e-13)


def test_argument_names_cover_each_rule():
    for name, rule in SCIPY_RULES.items():
        assert len(ARGUMENTS[name]) == rule.arity


# ---- logsumexp, softmax, log_softmax: stand-ins -------------------------------------------------------
A = np.array([[0.3, -1.2, 2.0], [1.5, 0.1, -0.4]])
W = np.array([[1.0, 0.5, 2.0], [0.7, 0.0, 1.3]])  # a zero weight: SciPy leaves that entry out
SIGNED = np.array([[1.0, -0.5, 2.0], [-3.0, 1.0, 0.2]])
REDUCTIONS = {
    "logsumexp": lambda a: sp.logsumexp(a),
    "logsumexp axis": lambda a: sp.logsumexp(a, axis=1),
    "logsumexp keepdims": lambda a: sp.logsumexp(a, axis=0, keepdims=True),
    "logsumexp b": lambda a: sp.logsumexp(a, axis=-1, b=W),
    "logsumexp b differentiated": lambda a: sp.logsumexp(A, b=np.exp(a)),
    "logsumexp return_sign": lambda a: sp.logsumexp(a, axis=1, b=SIGNED, return_sign=True)[0],
    "softmax": lambda a: sp.softmax(a),
    "softmax axis": lambda a: sp.softmax(a, axis=0),
    "log_softmax axis": lambda a: sp.log_softmax(a, axis=1),
}


def _central(f, x, h=1e-4):
    return richardson_jacobian(f, x, h)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_logsumexp_and_softmax_as_users_call_them(name):
    f = REDUCTIONS[name]
    forward = dualad.jacobian(f, mode="forward")(A)
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(A), forward, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(forward, _central(f, A), rtol=1e-8, atol=1e-10)
    value, _ = dualad.jvp(f, (A,), (np.ones_like(A),))
    np.testing.assert_array_equal(value, f(A))
    weights = np.linspace(0.5, 1.5, np.size(f(A))).reshape(np.shape(f(A)))

    def g(a):
        return np.sum(weights * f(a))
    hessian = dualad.hessian(g)(A)
    np.testing.assert_allclose(dualad.hessian(g, mode="forward-over-reverse")(A), hessian, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(g))(A), hessian, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hessian, _central(dualad.grad(g), A), rtol=1e-7, atol=1e-9)


def test_logsumexp_signs_and_infinities_are_scipys():
    def f(a):
        out, sign = sp.logsumexp(a, b=np.array([1.0, -1.0]), return_sign=True)
        return out * sign
    got = dualad.grad(f)(np.array([1.0, 2.0]))  # Σ = e - e² < 0: sign -1
    total = np.exp(1.0) - np.exp(2.0)
    np.testing.assert_allclose(got, -np.array([np.exp(1.0), -np.exp(2.0)]) / total, rtol=1e-14)
    # a negative sum without return_sign is nan (SciPy's), its derivative 0; all -inf is -inf
    value, g = dualad.value_and_grad(lambda a: sp.logsumexp(a, b=np.array([1.0, -1.0])))(np.array([1.0, 2.0]))
    assert np.isnan(value) and np.all(g == 0.0)
    value, g = dualad.value_and_grad(lambda a: sp.logsumexp(a - np.inf))(np.array([1.0, 2.0]))
    assert value == -np.inf and np.all(g == 0.0)


JAX_REDUCTIONS = {"logsumexp": "logsumexp", "logsumexp axis": "logsumexp", "logsumexp b": "logsumexp",
                  "softmax axis": "softmax", "log_softmax axis": "log_softmax"}


@pytest.mark.parametrize("name", sorted(JAX_REDUCTIONS))
def test_logsumexp_and_softmax_are_jaxs(name, jax):
    jsp = jax.scipy.special
    keywords = {"logsumexp": {}, "logsumexp axis": {"axis": 1}, "logsumexp b": {"axis": -1, "b": W},
                "softmax axis": {"axis": 0}, "log_softmax axis": {"axis": 1}}[name]
    reference = jax.jacfwd(lambda a: getattr(jsp, JAX_REDUCTIONS[name])(a, **keywords))(jax.numpy.asarray(A))
    np.testing.assert_allclose(dualad.jacobian(REDUCTIONS[name])(A), np.asarray(reference), rtol=1e-12, atol=1e-15)


# ---- the hook, the page -------------------------------------------------------------------------------
def test_the_hook_passes_over_what_is_not_scipys_without_loading_it():
    import subprocess
    import sys
    code = ("import sys, types, numpy as np, dualad; hook = dualad.allocation.STAND_INS[-1]; "
            "assert all(hook(v) is None for v in (np.sin, np.sum, lambda x: x, types, 1.0, object(), "
            "dualad.grad, np.linalg)); print(sorted(m for m in sys.modules if m.startswith('dualad.scipy') "
            "or m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_docs_scipy_md_is_generated_from_the_tables():
    from pathlib import Path

    from dualad.solvers.table import markdown
    page = Path(__file__).resolve().parent.parent / "docs" / "scipy.md"
    assert page.read_text() == markdown(), "regenerate: python -m dualad.solvers.table > docs/scipy.md"
