"""scipy.stats on dual numbers (dualad/scipy/stats.py), called as users write it inside the
differentiated function: scipy.stats.norm.logpdf(x, mu, sigma), norm(loc, scale).cdf(x),
poisson.logpmf(k, mu), multivariate_normal.logpdf(x, mean, cov).

Per distribution and method, at random points inside the support: first derivatives in x,
loc, scale and the shapes against central differences of SciPy's own method (Richardson
extrapolated), forward = reverse, second derivatives three ways (HyperDual, forward over
reverse, jacfwd of jacrev) and against second differences of SciPy's method, the value
SciPy's own, and JAX's derivatives where jax.scipy.stats has the method. Then: the errors
for partials without a closed form, values outside the support, frozen distributions held
in globals, and a hierarchical model's log-density.
"""

import re

import numpy as np
import pytest
import scipy.stats
from scipy.stats import norm

import dualad
from dualad.scipy.distributions import CONTINUOUS

# name -> (ranges of the shapes, range of z = (x - loc)/scale)
FAMILIES = {
    "norm": ([], (-2.5, 2.5)),
    "t": ([(1.5, 10.0)], (-3.0, 3.0)),
    "gamma": ([(0.8, 4.0)], (0.2, 5.0)),
    "beta": ([(0.8, 4.0), (0.8, 4.0)], (0.05, 0.95)),
    "lognorm": ([(0.3, 1.5)], (0.2, 4.0)),
    "expon": ([], (0.1, 4.0)),
    "cauchy": ([], (-4.0, 4.0)),
    "logistic": ([], (-4.0, 4.0)),
    "laplace": ([], (0.1, 3.0)),
    "uniform": ([], (0.05, 0.95)),
    "chi2": ([(1.5, 8.0)], (0.3, 8.0)),
    "weibull_min": ([(0.7, 3.0)], (0.2, 3.0)),
    "invgamma": ([(1.0, 5.0)], (0.2, 3.0)),
}
METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
# the three Hessians for these; the other methods' Hessian by one mode against differences
THREE_WAYS = ("logpdf", "cdf", "ppf")
CASES = [(name, method) for name in FAMILIES for method in METHODS]
N_POINTS = 2


def test_every_family_is_tested():
    assert set(FAMILIES) == set(CONTINUOUS)


def _theta(name, method):
    """(x or q at N_POINTS, loc, scale, shapes) drawn with a seed per case, flattened."""
    rng = np.random.default_rng(sum(map(ord, name + method)))
    shape_ranges, (lo, hi) = FAMILIES[name]
    loc, scale = rng.uniform(-1.0, 1.0), rng.uniform(0.5, 2.0)
    if method in ("ppf", "isf"):
        x = rng.uniform(0.05, 0.95, N_POINTS)
    else:
        x = loc + scale * rng.uniform(lo, hi, N_POINTS)
    shapes = [rng.uniform(a, b) for a, b in shape_ranges]
    return np.array([*x, loc, scale, *shapes])


def _constant_shapes(name, method):
    return method in CONTINUOUS[name].constant_shapes


def _call(name, method, form, shapes_given=None):
    """f(θ) = Σ scipy.stats.<name>.<method>(x, ...) in one of the ways users write it; the
    shapes are constants (shapes_given) where the method has no derivative in them."""
    def f(theta):
        x, loc, scale = theta[:N_POINTS], theta[N_POINTS], theta[N_POINTS + 1]
        shapes = list(theta[N_POINTS + 2:]) if shapes_given is None else shapes_given
        if form == "positional":
            out = getattr(getattr(scipy.stats, name), method)(x, *shapes, loc, scale)
        elif form == "keywords":
            out = getattr(getattr(scipy.stats, name), method)(x, *shapes, loc=loc, scale=scale)
        else:  # frozen
            out = getattr(getattr(scipy.stats, name)(*shapes, loc=loc, scale=scale), method)(x)
        return np.sum(out)
    return f


def _case(name, method, form="positional"):
    theta = _theta(name, method)
    if _constant_shapes(name, method):
        shapes = list(theta[N_POINTS + 2:])
        return _call(name, method, form, shapes), theta[:N_POINTS + 2]
    return _call(name, method, form), theta


def _differences(f, theta, h=1e-3, second=True):
    """Gradient and Hessian (None unless `second`) of f by central differences, Richardson
    extrapolated."""
    n = theta.size
    step = h * np.maximum(1.0, np.abs(theta))

    def at(*moves):
        t = theta.copy()
        for i, s in moves:
            t[i] += s
        return f(t)

    def gradient(scale):
        return np.array([(at((i, scale * step[i])) - at((i, -scale * step[i]))) / (2 * scale * step[i])
                         for i in range(n)])

    def hessian(scale):
        out = np.empty((n, n))
        for i in range(n):
            for j in range(i, n):
                a, b = scale * step[i], scale * step[j]
                out[i, j] = out[j, i] = (at((i, a), (j, b)) - at((i, a), (j, -b)) - at((i, -a), (j, b))
                                         + at((i, -a), (j, -b))) / (4 * a * b)
        return out
    return ((4 * gradient(0.5) - gradient(1.0)) / 3,
            (4 * hessian(0.5) - hessian(1.0)) / 3 if second else None)


@pytest.mark.parametrize("name, method", CASES)
def test_derivatives_against_scipys_differences_in_every_mode(name, method):
    f, theta = _case(name, method)
    forward = dualad.grad(f, mode="forward")(theta)
    np.testing.assert_allclose(dualad.grad(f, mode="reverse")(theta), forward, rtol=1e-13, atol=1e-15)
    hessian = dualad.hessian(f, mode="forward")(theta)
    if method in THREE_WAYS:
        np.testing.assert_allclose(dualad.hessian(f, mode="forward-over-reverse")(theta), hessian,
                                   rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(f))(theta), hessian, rtol=1e-11, atol=1e-13)
    gradient, second = _differences(f, theta)
    np.testing.assert_allclose(forward, gradient, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(hessian, second, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["keywords", "frozen"])
@pytest.mark.parametrize("name, method", [(name, m) for name in FAMILIES for m in ("logpdf", "cdf", "ppf")])
def test_every_way_of_calling_gives_the_same_derivatives(name, method, form):
    f, theta = _case(name, method)
    g, _ = _case(name, method, form)
    np.testing.assert_array_equal(dualad.grad(g)(theta), dualad.grad(f)(theta))


@pytest.mark.parametrize("name, method", CASES)
def test_the_value_is_scipys(name, method):
    f, theta = _case(name, method)
    value, _ = dualad.value_and_grad(f, mode="reverse")(theta)
    assert value == f(theta)


# ---- discrete distributions ------------------------------------------------------------------------
DISCRETE = {  # name -> (count shapes (constants), continuous shapes, their ranges)
    "poisson": ([], [(0.5, 6.0)]),
    "binom": ([8.0], [(0.1, 0.9)]),
    "nbinom": ([], [(0.7, 5.0), (0.1, 0.9)]),
}
K = np.array([0.0, 1.0, 3.0, 5.0])


@pytest.mark.parametrize("method", ["logpmf", "pmf"])
@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_distributions_in_their_continuous_parameters(name, method):
    counts, ranges = DISCRETE[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    theta = np.array([rng.uniform(a, b) for a, b in ranges])

    def f(theta):
        return np.sum(getattr(getattr(scipy.stats, name), method)(K, *counts, *theta))

    def frozen(theta):
        return np.sum(getattr(getattr(scipy.stats, name)(*counts, *theta), method)(K))
    forward = dualad.grad(f)(theta)
    np.testing.assert_allclose(dualad.grad(f, mode="reverse")(theta), forward, rtol=1e-13)
    np.testing.assert_array_equal(dualad.grad(frozen)(theta), forward)
    hessian = dualad.hessian(f)(theta)
    np.testing.assert_allclose(dualad.hessian(f, mode="forward-over-reverse")(theta), hessian, rtol=1e-12)
    np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(f))(theta), hessian, rtol=1e-12)
    gradient, second = _differences(f, theta)
    np.testing.assert_allclose(forward, gradient, rtol=1e-7)
    np.testing.assert_allclose(hessian, second, rtol=1e-5, atol=1e-7)
    assert dualad.value_and_grad(f)(theta)[0] == f(theta)


def test_multivariate_normal_logpdf_in_x_mean_and_cov():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 3))
    cov0, mean0, x0 = a @ a.T + 3 * np.eye(3), rng.normal(size=3), rng.normal(size=(4, 3))

    def f(t):
        x, mean, c = t[:12].reshape(4, 3), t[12:15], t[15:].reshape(3, 3)
        return np.sum(scipy.stats.multivariate_normal.logpdf(x, mean, c @ c.T))

    def frozen(t):
        x, mean, c = t[:12].reshape(4, 3), t[12:15], t[15:].reshape(3, 3)
        return np.sum(scipy.stats.multivariate_normal(mean, c @ c.T).pdf(x))
    theta = np.concatenate([x0.ravel(), mean0, np.linalg.cholesky(cov0).ravel()])
    for g in (f, frozen):
        forward = dualad.grad(g)(theta)
        np.testing.assert_allclose(dualad.grad(g, mode="reverse")(theta), forward, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(forward, _differences(g, theta, second=False)[0], rtol=1e-7, atol=1e-10)
        assert dualad.value_and_grad(g)(theta)[0] == g(theta)
    hessian = dualad.hessian(f)(theta)
    np.testing.assert_allclose(dualad.hessian(f, mode="forward-over-reverse")(theta), hessian, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(f))(theta), hessian, rtol=1e-10, atol=1e-12)
    # one point, a diagonal (vector) covariance and a scalar one, as SciPy reads them
    x1 = rng.normal(size=3)
    for cov in (np.array([1.0, 2.0, 3.0]), 2.5):
        g = dualad.grad(lambda m: scipy.stats.multivariate_normal.logpdf(x1, m, cov))(mean0)
        np.testing.assert_allclose(g, (x1 - mean0) / cov, rtol=1e-13)


# ---- JAX --------------------------------------------------------------------------------------------
JAX_METHODS = {"norm": METHODS, "t": ("logpdf", "pdf"),
               "gamma": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
               "beta": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
               "expon": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"),
               "cauchy": METHODS, "logistic": ("logpdf", "pdf", "cdf", "sf", "ppf", "isf"),
               "laplace": ("logpdf", "pdf", "cdf"), "uniform": ("logpdf", "pdf", "cdf", "ppf"),
               "chi2": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")}
JAX_CASES = [(name, method) for name, methods in JAX_METHODS.items() for method in methods]


@pytest.fixture(scope="module")
def jax_gradients():
    """(name, method) -> JAX's gradient of the same f at the same θ (the discrete and the
    multivariate normal under their names), all in one jitted call (JAX compiles slowly)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.stats as jstats
    jnp = jax.numpy

    def gradients(thetas):
        out = {}
        for (name, method), theta in thetas.items():
            if name in DISCRETE:
                counts = DISCRETE[name][0]
                out[(name, method)] = jax.grad(
                    lambda t, name=name, method=method, counts=counts: jnp.sum(
                        getattr(getattr(jstats, name), method)(jnp.asarray(K), *counts, *t)))(theta)
                continue
            shapes = None
            if _constant_shapes(name, method):
                shapes = list(_theta(name, method)[N_POINTS + 2:])

            def f(t, name=name, method=method, shapes=shapes):
                x, loc, scale = t[:N_POINTS], t[N_POINTS], t[N_POINTS + 1]
                s = [t[i] for i in range(N_POINTS + 2, t.shape[0])] if shapes is None else shapes
                return jnp.sum(getattr(getattr(jstats, name), method)(x, *s, loc, scale))
            out[(name, method)] = jax.grad(f)(theta)
        return out
    thetas = {case: jnp.asarray(_case(*case)[1]) for case in JAX_CASES}
    thetas.update({(name, method): jnp.asarray(_discrete_theta(name)) for name in DISCRETE
                   for method in ("logpmf", "pmf")})
    # XLA's optimisations cost most of the compilation and matter nothing here: off for it
    jax.config.update("jax_disable_most_optimizations", True)
    try:
        return {key: np.asarray(g) for key, g in jax.jit(gradients)(thetas).items()}
    finally:
        jax.config.update("jax_disable_most_optimizations", False)


def _discrete_theta(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    return np.array([rng.uniform(a, b) for a, b in DISCRETE[name][1]])


@pytest.mark.parametrize("name, method", JAX_CASES + [(n, m) for n in DISCRETE for m in ("logpmf", "pmf")])
def test_derivatives_are_jaxs(name, method, jax_gradients):
    if name in DISCRETE:
        counts = DISCRETE[name][0]
        theta = _discrete_theta(name)
        f = lambda t: np.sum(getattr(getattr(scipy.stats, name), method)(K, *counts, *t))  # noqa: E731
    else:
        f, theta = _case(name, method)
    np.testing.assert_allclose(dualad.grad(f)(theta), jax_gradients[(name, method)], rtol=1e-8, atol=1e-12)


# ---- what has no derivative, and where SciPy's value is a constant ---------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda a: scipy.stats.gamma.cdf(1.5, a), "scipy.stats.gamma.cdf: dualad has no derivative with respect to the shape a"),
    (lambda a: scipy.stats.t.ppf(0.3, a), "scipy.stats.t.ppf: dualad has no derivative with respect to the shape df"),
    (lambda a: scipy.stats.beta(2.0, a).sf(0.3), "scipy.stats.beta.sf: dualad has no derivative with respect to the shape b"),
    (lambda k: scipy.stats.poisson.logpmf(k, 2.0), "scipy.stats.poisson.logpmf: dualad has no derivative with respect to k"),
    (lambda n: scipy.stats.binom.pmf(2.0, n, 0.3), "scipy.stats.binom.pmf: dualad has no derivative with respect to n"),
    (lambda x: scipy.stats.gumbel_r.logpdf(x), "scipy.stats.gumbel_r.logpdf is not differentiated by dualad"),
    (lambda x: scipy.stats.norm.entropy(0.0, x), "scipy.stats.norm.entropy is not differentiated by dualad"),
    (lambda x: norm(x, 1.0).mean(), "scipy.stats.norm(...).mean with dual parameters is not differentiated"),
])
@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_a_derivative_without_a_closed_form_is_an_error_naming_it(call, message, mode):
    """auto too: the cost model's recording runs f over the view it is given, where the
    refusal must pass through (it had come back as None, a TypeError about unpacking)."""
    with pytest.raises(TypeError, match=re.escape(message)):
        dualad.grad(call, mode=mode)(3.0)
    with pytest.raises(TypeError, match=re.escape(message)):
        dualad.grad(lambda x: np.sum(call(x)), mode=mode)(np.array([3.0, 4.0]))


def test_outside_the_support_the_value_is_scipys_and_constant():
    def f(x):
        return np.stack([scipy.stats.gamma.logpdf(x, 2.0), scipy.stats.expon.cdf(x),
                         scipy.stats.uniform.pdf(x), scipy.stats.beta.logpdf(x, 2.0, 3.0),
                         scipy.stats.norm.ppf(x + 2.0), scipy.stats.norm.logpdf(x, 0.0, -1.0)])
    for mode in ("forward", "reverse"):
        jacobian = dualad.jacobian(f, mode=mode)(-1.0)
        np.testing.assert_array_equal(jacobian, np.zeros(6))
    np.testing.assert_array_equal(dualad.jacfwd(dualad.jacrev(f))(-1.0), np.zeros(6))
    np.testing.assert_array_equal(dualad.jacobian(dualad.jacobian(f))(-1.0), np.zeros(6))
    value, _ = dualad.value_and_grad(lambda x: f(x)[0])(-1.0)
    assert value == -np.inf


# the ends of the support where the density is finite: the one-sided derivative (guards: nan
# from xlogy's ∂y at (0, 0)); the discrete ones at the ends of their parameter's range
ENDS = [
    (lambda x: scipy.stats.gamma.logpdf(x, 1.0), 0.0, -1.0),
    (lambda s: scipy.stats.gamma.logpdf(0.0, 1.0, scale=s), 2.0, -0.5),
    (lambda x: scipy.stats.weibull_min.logpdf(x, 1.0), 0.0, -1.0),
    (lambda x: scipy.stats.weibull_min.pdf(x, 1.0), 0.0, -1.0),
    (lambda x: scipy.stats.chi2.logpdf(x, 2.0), 0.0, -0.5),
    (lambda x: scipy.stats.beta.logpdf(x, 1.0, 3.0), 0.0, -2.0),
    (lambda x: scipy.stats.beta.logpdf(x, 3.0, 1.0), 1.0, 2.0),
    (lambda m: scipy.stats.poisson.logpmf(0, m), 0.0, -1.0),
    (lambda m: scipy.stats.poisson.pmf(0, m), 0.0, -1.0),
    (lambda p: scipy.stats.binom.logpmf(0, 5, p), 0.0, -5.0),
    (lambda p: scipy.stats.binom.logpmf(5, 5, p), 1.0, 5.0),
    (lambda p: scipy.stats.nbinom.logpmf(0, 2.5, p), 1.0, 2.5),
]


@pytest.mark.parametrize("mode", ["forward", "reverse"])
@pytest.mark.parametrize("k", range(len(ENDS)))
def test_at_the_ends_of_the_support_the_one_sided_derivative(k, mode):
    f, x, expected = ENDS[k]
    assert dualad.grad(f, mode=mode, jit=False)(x) == expected


def test_plain_numbers_inside_f_are_scipys():
    quantile = norm.ppf(0.975)
    got = dualad.grad(lambda x: np.sum(x * norm.ppf(0.975) + scipy.stats.t.logpdf(1.0, 3.0)))(np.ones(2))
    np.testing.assert_array_equal(got, [quantile, quantile])


PRIOR = scipy.stats.norm(0.0, 5.0)  # a frozen distribution held in a global
LOGPDF = scipy.stats.cauchy.logpdf  # a bound method held in a global


def test_frozen_distributions_and_methods_held_in_globals():
    def f(x):
        return PRIOR.logpdf(x) + LOGPDF(x, 1.0, 2.0)
    expected = -0.04 * 3.0 - 2.0 * (3.0 - 1.0) / (4.0 + (3.0 - 1.0) ** 2)
    assert float(dualad.grad(f)(3.0)) == pytest.approx(expected, rel=1e-14)
    assert float(dualad.grad(f, mode="reverse")(3.0)) == pytest.approx(expected, rel=1e-14)


# ---- end to end: a hierarchical model's log-density ---------------------------------------------------
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
COUNTS = np.array([3.0, 0.0, 5.0, 2.0, 1.0, 4.0, 2.0, 6.0])


def log_density(theta):
    """Eight schools (non-centred) with a Poisson-gamma layer: θ = (μ, log τ, log λ, η₁..₈)."""
    mu, log_tau, log_rate, eta = theta[0], theta[1], theta[2], theta[3:]
    tau, rate = np.exp(log_tau), np.exp(log_rate)
    prior = (scipy.stats.norm.logpdf(mu, 0.0, 5.0) + scipy.stats.cauchy.logpdf(tau, 0.0, 5.0) + log_tau
             + scipy.stats.gamma.logpdf(rate, 2.0, scale=1.5) + log_rate
             + np.sum(scipy.stats.norm.logpdf(eta)))
    likelihood = (np.sum(scipy.stats.norm(mu + tau * eta, SIGMA).logpdf(Y))
                  + np.sum(scipy.stats.poisson.logpmf(COUNTS, rate * (1.0 + 0.1 * eta ** 2))))
    return prior + likelihood


def _log_density_by_hand(theta):
    mu, log_tau, log_rate, eta = theta[0], theta[1], theta[2], theta[3:]
    tau, rate = np.exp(log_tau), np.exp(log_rate)
    lam = rate * (1.0 + 0.1 * eta ** 2)
    r = (Y - mu - tau * eta) / SIGMA
    return (-mu ** 2 / 50.0 - np.log1p((tau / 5.0) ** 2) + log_tau + log_rate + np.log(rate) - rate / 1.5
            - 0.5 * np.sum(eta ** 2) - 0.5 * np.sum(r ** 2) + np.sum(COUNTS * np.log(lam) - lam))


def test_a_hierarchical_models_log_density():
    theta = np.concatenate([[4.0, 1.2, 0.5], np.linspace(-1.0, 1.0, 8)])
    reference = dualad.grad(_log_density_by_hand)(theta)
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(dualad.grad(log_density, mode=mode)(theta), reference, rtol=1e-12, atol=1e-14)
    hessian = dualad.hessian(log_density, mode="forward-over-reverse")(theta)
    np.testing.assert_allclose(hessian, dualad.hessian(_log_density_by_hand)(theta), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(dualad.hessian(log_density)(theta), hessian, rtol=1e-12, atol=1e-13)
