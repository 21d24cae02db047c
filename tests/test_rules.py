"""Every rule against mpmath, first and second partials, through Dual and HyperDual.

mpmath differentiates the mathematical function numerically at 30 digits, so the reference
shares nothing with our formulas. Special points follow JAX and are tested one by one.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dualad
from dualad import Dual, HyperDual
from dualad.number import new_tag
from dualad.rules import RULES

mp.mp.dps = 30

# name -> (mpmath function, extra condition on the arguments away from kinks and poles)
REFERENCE = {
    "add": (lambda x, z: x + z, None),
    "subtract": (lambda x, z: x - z, None),
    "multiply": (lambda x, z: x * z, None),
    "divide": (lambda x, z: x / z, lambda x, z: abs(z) > 1e-2),
    "power": (mp.power, None),
    "maximum": (max, lambda x, z: abs(x - z) > 1e-6),
    "minimum": (min, lambda x, z: abs(x - z) > 1e-6),
    "remainder": (lambda x, z: x - z * mp.floor(x / z),
                  lambda x, z: abs(z) > 1e-2 and 1e-6 < (x / z) % 1 < 1 - 1e-6),
    # not mp.fmod, which takes the sign of z as Python's %
    "fmod": (lambda x, z: x - z * (mp.floor(x / z) if x / z >= 0 else mp.ceil(x / z)),
             lambda x, z: abs(z) > 1e-2 and 1e-6 < abs(x / z) % 1 < 1 - 1e-6),
    "floor_divide": (lambda x, z: mp.floor(x / z), lambda x, z: abs(z) > 1e-2),
    # away from the origin and from the branch cut (y = 0, x < 0), where mpmath's
    # numerical derivative would straddle the jump from π to -π
    "arctan2": (mp.atan2, lambda y, x: y * y + x * x > 1e-4 and (x > 0 or abs(y) > 1e-6)),
    "hypot": (mp.hypot, lambda x, z: x * x + z * z > 1e-4),
    "negative": (lambda x: -x, None),
    "positive": (lambda x: x, None),
    "absolute": (abs, lambda x: abs(x) > 1e-6),
    "sqrt": (mp.sqrt, None),
    "cbrt": (lambda x: mp.sign(x) * mp.cbrt(abs(x)), lambda x: abs(x) > 1e-3),  # real root
    "square": (lambda x: x * x, None),
    "reciprocal": (lambda x: 1 / x, lambda x: abs(x) > 1e-2),
    "exp": (mp.exp, None),
    "exp2": (lambda x: mp.power(2, x), None),
    "expm1": (mp.expm1, None),
    "log": (mp.log, None),
    "log2": (lambda x: mp.log(x, 2), None),
    "log10": (mp.log10, None),
    "log1p": (mp.log1p, None),
    "sin": (mp.sin, None),
    "cos": (mp.cos, None),
    "tan": (mp.tan, lambda x: abs(math.cos(x)) > 1e-2),
    "arcsin": (mp.asin, None),
    "arccos": (mp.acos, None),
    "arctan": (mp.atan, None),
    "sinh": (mp.sinh, None),
    "cosh": (mp.cosh, None),
    "tanh": (mp.tanh, None),
    "arcsinh": (mp.asinh, None),
    "arccosh": (mp.acosh, None),
    "arctanh": (mp.atanh, None),
    "erf": (mp.erf, None),
    "erfc": (mp.erfc, None),
    "deg2rad": (lambda x: x * mp.pi / 180, None),
    "rad2deg": (lambda x: x * 180 / mp.pi, None),
    "sign": (mp.sign, None),
    "floor": (mp.floor, None),
    "ceil": (mp.ceil, None),
    "rint": (mp.nint, None),
    "trunc": (lambda x: mp.floor(x) if x >= 0 else mp.ceil(x), None),
    "round": (mp.nint, None),
}


def test_every_rule_has_a_reference():
    assert set(REFERENCE) == set(RULES)


def _box(lo, hi):
    # Stay inside the open domain and a range where float64 values stay finite.
    lo, hi = max(lo, -30.0), min(hi, 30.0)
    margin = 1e-3 * (hi - lo) if math.isfinite(hi - lo) and hi - lo < 10 else 1e-3
    return st.floats(lo + margin, hi - margin)


def _public(rule):
    """The function a user calls: the NumPy ufunc, or the rule's own (erf, round)."""
    return rule.ufunc if rule.ufunc is not None else rule.value


def _close(got, ref, what):
    ref = float(ref)
    if got == ref:
        return
    tol = 1e-11 * abs(ref) + 1e-13
    assert abs(got - ref) <= tol, f"{what}: got {got!r}, mpmath {ref!r}"


def _partial(fn, point, orders):
    if sum(orders) == 0:
        return fn(*point)
    if len(point) == 1:
        return mp.diff(fn, point[0], orders[0])
    return mp.diff(fn, tuple(point), tuple(orders))


def _check_rule(rule, xs):
    mp_fn, away = REFERENCE[rule.name]
    assume(away is None or away(*xs))
    point = [mp.mpf(x) for x in xs]
    fn = _public(rule)
    smooth = all(f is None for f in rule.first)
    m, tag_d, tag_h = rule.arity, new_tag(), new_tag()
    eye = np.eye(m)
    duals = [Dual(x, eye[i], tag=tag_d) for i, x in enumerate(xs)]
    hypers = [HyperDual(x, eye[i], eye[i], tag=tag_h) for i, x in enumerate(xs)]
    yd, yh = fn(*duals), fn(*hypers)
    value = float(mp_fn(*point))
    assert yd.value == yh.value
    _close(float(yd.value), value, f"{rule.name} value")
    for i in range(m):
        orders = [0] * m
        orders[i] = 1
        ref = 0.0 if smooth else _partial(mp_fn, point, orders)
        _close(float(yd.partials[i]), ref, f"{rule.name} ∂{i} (Dual)")
        _close(float(yh.eps1[i]), ref, f"{rule.name} ∂{i} (HyperDual ε1)")
        _close(float(yh.eps2[i]), ref, f"{rule.name} ∂{i} (HyperDual ε2)")
        for j in range(m):
            orders = [0] * m
            orders[i] += 1
            orders[j] += 1
            ref2 = 0.0 if smooth else _partial(mp_fn, point, orders)
            _close(float(yh.eps12[i, j]), ref2, f"{rule.name} ∂{i}∂{j} (HyperDual ε1ε2)")
    # A constant operand takes the None-tangent path: same partial for the varying one.
    for i in range(m):
        args = [xs[j] if j != i else Dual(xs[i], [1.0]) for j in range(m)]
        assert float(fn(*args).partials[0]) == float(yd.partials[i])


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_matches_mpmath(name):
    rule = RULES[name]
    boxes = [_box(lo, hi) for lo, hi in rule.domain]

    @settings(max_examples=25, deadline=None)
    @given(st.tuples(*boxes))
    def check(xs):
        _check_rule(rule, xs)

    check()


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_vectorises(name):
    """An array of duals gives the same numbers as each scalar dual on its own."""
    rule = RULES[name]
    rng = np.random.default_rng(0)
    pts = [np.clip(rng.uniform(-2, 2, 5), lo + 0.1, min(hi, 2.0) - 0.1) if hi - lo < 10 else
           np.clip(rng.uniform(-2, 2, 5), lo + 0.1, 2.0) for lo, hi in rule.domain]
    fn = _public(rule)
    tag = new_tag()
    arrays = [Dual(p, np.eye(rule.arity)[i] * np.ones((5, 1)), tag=tag) for i, p in enumerate(pts)]
    out = fn(*arrays)
    for k in range(5):
        tag_k = new_tag()
        scal = fn(*[Dual(p[k], np.eye(rule.arity)[i], tag=tag_k) for i, p in enumerate(pts)])
        # NumPy's SIMD loops for arrays may differ from its scalar path in the last bit.
        np.testing.assert_allclose(out.value[k], scal.value, rtol=1e-14)
        np.testing.assert_allclose(out.partials[k], scal.partials, rtol=1e-14)


# ---- special points: JAX's conventions ------------------------------------------------------
def d(f, x):
    return dualad.derivative(f)(x)


def d2(f, x):
    return dualad.second_derivative(f)(x)


_SAMPLES = [0.3, 0.7, 1.5, 2.5, -0.4, -2.5, -5.0, 3.0, -3.0]


@pytest.mark.parametrize("alias", sorted(dualad.rules.MATH_NAMES))
def test_a_math_spelling_computes_what_pythons_math_does(alias):
    """A math-module name mapped to a rule (dualad.math, math.* in compiled code) must be the
    same function as Python's: math.fmod once ran NumPy's remainder, whose sign follows z, and
    so gave fmod(-5, 3) = 1 and ∂/∂z = 2 instead of -2 and 1, without an error."""
    assert hasattr(math, alias), f"Python's math module has no {alias}: a misspelt alias"
    rule = RULES[dualad.rules.MATH_NAMES[alias]]
    points = ([(x,) for x in _SAMPLES] if rule.arity == 1
              else [(x, z) for x in _SAMPLES for z in _SAMPLES])
    compared = 0
    for args in points:
        try:
            expected = getattr(math, alias)(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            continue  # outside math's domain: NumPy's nan/inf conventions apply instead
        with np.errstate(all="ignore"):
            got = float(rule.value(*map(np.float64, args)))
        assert got == pytest.approx(expected, rel=1e-13, abs=1e-300), (alias, args, got, expected)
        compared += 1
    assert compared > 0


def test_abs_at_zero_is_one():
    assert d(np.abs, 0.0) == 1.0
    assert d(abs, 0.0) == 1.0
    assert d(np.abs, -0.0) == 1.0
    assert d(np.abs, -2.0) == -1.0


def test_sqrt_and_cbrt_at_zero_are_infinite():
    assert d(np.sqrt, 0.0) == math.inf
    assert d(np.cbrt, 0.0) == math.inf
    assert math.isnan(d(np.sqrt, -1.0))


def test_power_conventions():
    assert d(lambda x: x ** 0.0, 0.0) == 0.0
    assert d(lambda x: x ** 0, 0.0) == 0.0
    assert d2(lambda x: x ** 0.0, 0.0) == 0.0
    assert d2(lambda x: x ** 1.0, 0.0) == 0.0
    assert d(lambda x: x ** 2, 0.0) == 0.0
    assert d2(lambda x: x ** 2, 0.0) == 2.0
    assert d(lambda x: x ** 0.5, 0.0) == math.inf
    # ∂/∂z of 0**z is 0 (log(0) replaced by log(1)), at z = 2 where 0**z is smooth in z.
    assert d(lambda z: 0.0 ** z, 2.0) == 0.0
    assert d2(lambda z: 0.0 ** z, 2.0) == 0.0
    assert d(lambda z: 2.0 ** z, 3.0) == pytest.approx(8 * math.log(2), rel=1e-15)
    # integer exponents of negative bases are fine
    assert d(lambda x: x ** 3, -2.0) == 12.0


def test_log_at_zero():
    tag = new_tag()
    y = np.log(Dual(0.0, [1.0], tag=tag))
    assert y.value == -math.inf and y.partials[0] == math.inf


def test_maximum_minimum_ties_split_evenly():
    tag = new_tag()
    a, b = Dual(1.0, [1.0, 0.0], tag=tag), Dual(1.0, [0.0, 1.0], tag=tag)
    np.testing.assert_array_equal(np.maximum(a, b).partials, [0.5, 0.5])
    np.testing.assert_array_equal(np.minimum(a, b).partials, [0.5, 0.5])
    np.testing.assert_array_equal(np.maximum(a, 0.0).partials, [1.0, 0.0])
    np.testing.assert_array_equal(np.minimum(a, 0.0).partials, [0.0, 0.0])


def test_clip_boundaries_follow_jnp_clip():
    assert d(lambda x: np.clip(x, 0.0, 1.0), 0.5) == 1.0
    assert d(lambda x: np.clip(x, 0.0, 1.0), 2.0) == 0.0
    assert d(lambda x: np.clip(x, 0.0, 1.0), 0.0) == 0.5
    assert d(lambda x: np.clip(x, 0.0, 1.0), 1.0) == 0.5


@pytest.mark.parametrize("fn", [np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc,
                                lambda x: np.round(x, 2), lambda x: x // 1.0])
@pytest.mark.parametrize("x", [-1.5, 0.0, 0.5, 2.0, 2.37])
def test_piecewise_constant_has_zero_derivative(fn, x):
    assert d(fn, x) == 0.0
    assert d2(fn, x) == 0.0


def test_where_takes_the_selected_branch():
    f = lambda x: np.where(x > 0, x ** 2, -3.0 * x)  # noqa: E731
    assert d(f, 2.0) == 4.0
    assert d(f, -2.0) == -3.0
    np.testing.assert_array_equal(dualad.jacobian(f)(np.array([-1.0, 1.0])), [[-3.0, 0.0], [0.0, 2.0]])


@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 0.0])
def test_nan_and_inf_propagate_and_never_raise(name, bad):
    """Derivatives at nan, ±inf and 0 never raise, even under np.errstate(all="raise"),
    and the value is NumPy's own."""
    rule = RULES[name]
    fn = _public(rule)
    consts = [1.5] * (rule.arity - 1)
    with np.errstate(all="ignore"):
        expected = fn(bad, *consts)
        expected_h = fn(*consts, bad)
    with np.errstate(all="raise"):
        try:
            out, out_h = fn(Dual(bad, [1.0]), *consts), fn(*consts, HyperDual(bad, [1.0], [1.0]))
        except FloatingPointError:
            # Only the value may raise, as plain NumPy does under errstate("raise"):
            with pytest.raises(FloatingPointError):
                fn(bad, *consts)
                fn(*consts, bad)
            return
    np.testing.assert_array_equal(out.value, expected)
    np.testing.assert_array_equal(out_h.value, expected_h)


@pytest.mark.parametrize("ufunc", [np.remainder, np.fmod])
@pytest.mark.parametrize("x, z", [(1.0, 0.1), (7.0, 0.7), (-1.0, 0.1), (1.0, 0.3), (2.5, -0.1),
                                  (5.0, 0.5), (1e3, 0.01)])
def test_remainder_derivative_follows_the_branch_of_the_computed_value(ufunc, x, z):
    """d/dz (x mod z) = -k for the k of the value NumPy computed, y = x - k·z: x/z can round
    to the next integer where the exact quotient is just below it (1 / 0.1 is 10.0, while
    1 % 0.1 is 0.0999…, the k = 9 branch), and -floor(x/z) is -10 there against the slope
    -9 of every point beside it on that branch."""
    f = lambda t: ufunc(x, t)  # noqa: E731
    got = dualad.derivative(f)(z)
    h = 1e-12 * abs(z)
    sides = [(f(z + h) - f(z)) / h, (f(z) - f(z - h)) / h]  # the branch continues on one side
    assert any(abs(got - s) <= 1e-2 * max(1.0, abs(got)) for s in sides), (got, sides)
    assert dualad.grad(lambda v: ufunc(x, v[0]), mode="reverse")(np.array([z]))[0] == got
