"""Real code as it is written (issue 40) on the Python path: library functions that convert
their input with np.asarray, function-local imports, `type(x)(c)`, and the warning that
names a line where an array of duals still becomes an object array of scalar duals."""

import warnings

import numpy as np
import pytest
import scipy.optimize

import dualad
from dualad import number

MODES = ("forward", "reverse", "auto")


def object_arrays_made(call):
    """How many arrays of duals call() turned into object arrays (number.__array__ counts)."""
    before = number.ARRAY_CONVERSIONS[0]
    call()
    return number.ARRAY_CONVERSIONS[0] - before


def users_rosen(x):
    return scipy.optimize.rosen(x) * 2.0


@pytest.mark.parametrize("f, scale", [(scipy.optimize.rosen, 1.0), (users_rosen, 2.0)])
def test_a_library_function_converting_with_asarray_keeps_an_array_of_duals(f, scale):
    """scipy.optimize.rosen starts with scipy's own asarray helpers: over dualad's view of
    its globals they keep the dual array, so no object array of scalar duals is made after
    the first call's stop."""
    x = np.linspace(-1.0, 1.0, 300)
    for mode in MODES:
        gradient = dualad.grad(f, mode=mode)
        np.testing.assert_allclose(gradient(x), scale * scipy.optimize.rosen_der(x), rtol=1e-12, atol=1e-9)
        assert object_arrays_made(lambda: gradient(x)) == 0
    assert dualad.choose_mode(f, x).mode == "reverse"


def test_a_library_function_that_fails_over_the_view_runs_as_numpy_runs_it():
    """A function of another package that cannot take an array of duals where NumPy gives
    it an object array still gives the right derivative, slowly and with a warning."""
    x = np.array([0.3, 0.7, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dualad.SlowPathWarning)
        got = dualad.grad(lambda x: scipy.optimize.rosen(list(x)))(x)
    np.testing.assert_allclose(got, scipy.optimize.rosen_der(x), rtol=1e-12)


DATA = np.arange(12.0).reshape(6, 2) / 10.0


def two_layers(p):
    """The numpy warm-up network's forward pass, written with ndarray.dot."""
    w1, w2 = p[:6].reshape(2, 3), p[6:].reshape(3, 1)
    h = DATA.dot(w1)
    return np.square(np.maximum(h, 0).dot(w2)).sum()


def two_layers_by_hand(p):
    w1, w2 = p[:6].reshape(2, 3), p[6:].reshape(3, 1)
    h = DATA.dot(w1)
    relu = np.maximum(h, 0)
    grad_y = 2.0 * relu.dot(w2)
    grad_h = grad_y.dot(w2.T) * (h > 0)
    return np.concatenate([DATA.T.dot(grad_h).ravel(), relu.T.dot(grad_y).ravel()])


def test_a_float_array_dot_a_dual_array_in_the_users_code_dispatches():
    """ndarray.dot does not hand the call to dualad; the user's own function is rerun with
    its a.dot(b) spelt np.dot (rewrite.py): no object array of scalar duals."""
    p = np.linspace(-0.45, 1.05, 9)  # no hidden unit at its kink
    for mode in MODES:
        gradient = dualad.grad(two_layers, mode=mode)
        np.testing.assert_allclose(gradient(p), two_layers_by_hand(p), rtol=1e-12)
        assert object_arrays_made(lambda: gradient(p)) == 0


def test_a_dot_that_cannot_be_rewritten_warns_at_its_line_with_the_rewrite():
    layer = lambda w: np.sum(np.tanh(DATA.dot(w)))  # noqa: E731 - a lambda has no source block of its own
    with pytest.warns(dualad.SlowPathWarning, match=r"DATA\.dot\(w\).*`a @ b`") as caught:
        gradient = dualad.grad(layer)(np.array([0.1, -0.2]))
    assert caught[0].filename == __file__
    np.testing.assert_allclose(gradient, dualad.grad(lambda w: np.sum(np.tanh(DATA @ w)))(np.array([0.1, -0.2])))


def test_a_function_local_import_of_numpy_sees_the_buffers():
    def robertson(y):
        import numpy as np
        from numpy import zeros
        out = np.zeros(3)
        out[0] = -0.04 * y[0] + 1e4 * y[1] * y[2]
        out[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2
        other = zeros(1)
        other[0] = 3e7 * y[1] ** 2
        out[2] = other[0]
        return out
    y = np.array([1.0, 2e-5, 0.1])
    expected = [[-0.04, 1e3, 0.2], [0.04, -1e3 - 6e7 * 2e-5, -0.2], [0.0, 6e7 * 2e-5, 0.0]]
    for mode in MODES:
        np.testing.assert_allclose(dualad.jacobian(robertson, mode=mode)(y), expected, rtol=1e-12)


def test_type_of_a_dual_makes_a_constant():
    """numba-stats writes constants as type(x)(c): c itself on every layer."""
    def f(x):
        return type(x[0])(2.0) * x[0] + type(x)(3.0) * x[1] + np.sum(type(x)([1.0, 2.0]) * x)
    x = np.array([1.0, 2.0])
    for mode in MODES:
        np.testing.assert_array_equal(dualad.grad(f, mode=mode)(x), [3.0, 5.0])
    np.testing.assert_array_equal(dualad.hessian(lambda x: type(x[0])(2.0) * x[0] ** 2)(x[:1]), [[4.0]])
    np.testing.assert_array_equal(dualad.jacobian_sparsity(lambda x: type(x)(2.0) * x)(x).toarray(), np.eye(2, dtype=bool))


LIBRARY = '''
import numpy as np


class Model:
    """A statsmodels-like model: loglike calls a method that converts with np.asarray."""

    def __init__(self, exog, endog):
        self.exog, self.endog = exog, endog

    def cdf(self, X):
        X = np.asarray(X)
        return 1 / (1 + np.exp(-X))

    def loglike(self, params):
        q = 2 * self.endog - 1
        return np.sum(np.log(self.cdf(q * np.dot(self.exog, params))))

    def score(self, params):
        y, X = self.endog, self.exog
        return np.dot(y - self.cdf(np.dot(X, params)), X)
'''


@pytest.fixture(scope="module")
def library_model(tmp_path_factory):
    """A Model of a package installed in site-packages (not the user's own code)."""
    import importlib
    import sys
    folder = tmp_path_factory.mktemp("lib") / "site-packages"
    folder.mkdir()
    (folder / "dualad_fake_library.py").write_text(LIBRARY)
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("dualad_fake_library")
    finally:
        sys.path.remove(str(folder))
    rng = np.random.default_rng(5)
    exog = rng.normal(size=(40, 6))
    return module.Model(exog, (rng.random(40) < 0.5).astype(float))


def test_a_library_objects_methods_run_over_the_view(library_model):
    """model.loglike, a lambda over model and a closure over it: self.cdf's np.asarray keeps
    the dual array in each (the model's methods run over a view of its module)."""
    def closing_over(model):
        return lambda b: model.loglike(b)
    p = np.linspace(-0.3, 0.4, 6)
    for f in (library_model.loglike, lambda b: library_model.loglike(b), closing_over(library_model)):
        for mode in MODES:
            gradient = dualad.grad(f, mode=mode)
            np.testing.assert_allclose(gradient(p), library_model.score(p), rtol=1e-12)
            assert object_arrays_made(lambda: gradient(p)) == 0
    assert library_model.__dict__.keys() == {"exog", "endog"}  # the view shares, never adds
