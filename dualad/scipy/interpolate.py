"""Stand-ins of scipy.interpolate: CubicSpline, PchipInterpolator (and pchip_interpolate),
CubicHermiteSpline, PPoly, BSpline, make_interp_spline, interp1d, RegularGridInterpolator
and interpn. Each constructs SciPy's own object on the plain values (so its checks, errors
and values are SciPy's) and returns a stand-in object: on plain numbers its methods are
SciPy's object's; where the data or the evaluation points carry derivatives (any layer:
Dual, HyperDual, the reverse tape, nested), SciPy's value (values.scipy_valued) with the
derivatives of the interpolant written with NumPy operations that every layer differentiates.

How (the design choice):

* Evaluation points t. Every 1-D interpolant here is a piecewise polynomial: on the interval
  SciPy evaluates t in (its own interval search: [x[i], x[i+1]) with the last interval closed,
  the first and last extended for extrapolation), sum_m c[m, i] (t - x[i])^(k-m) in Horner's
  form, so d/dt s(t) = s'(t) exactly, and every higher order. At a breakpoint the derivative in
  t is that of the interval SciPy evaluates there (the right one; the left one at the last
  breakpoint), which is the one-sided derivative SciPy's own `nu=1` returns. A B-spline is
  evaluated the same way on its base interval t[k] .. t[n], its local power-basis
  coefficients obtained from SciPy's own derivatives of its basis functions at the knots.
* Data y. A spline with linear boundary conditions (CubicSpline, make_interp_spline, BSpline
  in c, interp1d's kinds) is linear in its data: its tangent along dy is the spline SciPy
  builds from dy. Rather than taking the tangent components out of each layer, the stand-in
  builds SciPy's map once, from identity data (CubicSpline(x, I): the slopes at the knots,
  n x n; make_interp_spline(x, I): the B-spline coefficients, n_coef x n), which by
  linearity is SciPy's construction applied to every tangent, and lets each layer
  differentiate one matrix product with it: forward, reverse and nested alike, second
  derivative in y zero, mixed y-and-t derivative s'(t) built from dy, with no layer-specific
  code. The cost is an n x n float matrix (8 n^2 bytes: 8 MB for 1000 knots) and one SciPy
  construction with n right-hand sides, paid only when the data carry derivatives; it is
  independent of the number of evaluation points (the cubic's coefficients follow from the
  slopes by CubicHermiteSpline's local formula, and evaluation gathers the coefficients of
  each point's interval). Boundary derivative values ((1, v), natural, clamped, ...) enter
  affinely: their responses are SciPy's spline of zero data with a unit boundary value.
* Periodic splines read y[0] and y[-1] as one value (SciPy refuses data where they differ,
  so no derivative along either alone exists): the derivative in the shared value is split
  equally between them, the gradient projected onto periodic data; a y[-1] that is y[0], or
  a tangent that moves both alike, gets the exact derivative.
* PCHIP is not linear in y (its slopes are weighted harmonic means of the secants): its
  slope formula (SciPy's _find_derivatives and _edge_case) is written here with NumPy
  operations on the layers, its branches (a secant 0 or changing sign, the end slopes'
  clamping) taken where SciPy's value takes them; at a switch point, where the slope is not
  differentiable, that is the derivative of the branch SciPy's value takes.
* Knots and abscissae (x, t, points) that carry derivatives: an error naming the argument.
  Other methods (roots, solve, extend, ...) are SciPy's on plain numbers and an error naming
  them when the object or the arguments carry derivatives.
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import scipy.interpolate

from ..functions.registry import stack_lists
from .values import NotDifferentiated, has_layer, not_differentiated, on_values, scipy_valued

__all__ = ["CubicSpline", "PchipInterpolator", "pchip_interpolate", "CubicHermiteSpline", "PPoly",
           "BSpline", "make_interp_spline", "interp1d", "RegularGridInterpolator", "interpn",
           "stand_in_of", "STAND_INS"]

_WHERE = "scipy.interpolate"


def _refuse(where, **arguments):
    """An error naming the first argument that carries derivatives dualad does not give."""
    for name, value in arguments.items():
        if has_layer(value):
            raise NotDifferentiated(f"{_WHERE}.{where}: dualad has no derivative with respect to {name} "
                                    "(the knots / abscissae); keep it a constant")


def _plain(x):
    return np.asarray(on_values(x), dtype=np.float64)


# ---- SciPy's linear maps, from identity data -----------------------------------------------------
_MAPS: collections.OrderedDict = collections.OrderedDict()  # a few recent maps (a transform reruns f)


def _cached(key, build):
    if key is None:
        return build()
    found = _MAPS.get(key)
    if found is None:
        found = build()
        found.setflags(write=False)
        _MAPS[key] = found
        while len(_MAPS) > 16:
            _MAPS.popitem(last=False)
    else:
        _MAPS.move_to_end(key)
    return found


def _apply(matrix, y):
    """matrix (*r, n) applied along y's first axis (n, *rest): (*r, *rest), on any layer."""
    n, rest = matrix.shape[-1], np.shape(y)[1:]
    out = np.reshape(matrix, (-1, n)) @ np.reshape(y, (n, -1))
    return np.reshape(out, matrix.shape[:-1] + tuple(rest))


def _identity_response(build, n, n_values, periodic):
    """SciPy's response to each datum: (*r, n). Periodic data have y[0] = y[-1]: the response
    to that shared value, split equally between the two."""
    if not periodic:
        return build(np.eye(n), [np.zeros(n)] * n_values)
    data = np.eye(n)[:, :-1]
    data[-1, 0] = 1.0
    response = build(data, [np.zeros(n - 1)] * n_values)
    shared = response[..., :1] / 2
    return np.concatenate([shared, response[..., 1:], shared], axis=-1)


def _affine(build, y, values, periodic=False, key=None):
    """build(data, boundary values) -> SciPy's array, linear in both jointly (data (n, *rest),
    each value of shape rest), at y and values that may carry derivatives: the plain part as
    SciPy builds it, plus SciPy's map from identity data applied to y (a matrix product every
    layer differentiates), plus SciPy's response to each unit boundary value times that value."""
    n, rest = np.shape(y)[0], tuple(np.shape(y)[1:])
    dual_y, dual_values = has_layer(y), [has_layer(v) for v in values]
    plain_values = [np.zeros(rest) if d else _plain(v) for v, d in zip(values, dual_values)]
    result = None
    if not dual_y or any(np.any(v != 0) for v in plain_values):
        result = build(np.zeros((n,) + rest) if dual_y else _plain(y), plain_values)
    if dual_y:
        part = _apply(_cached(key, lambda: _identity_response(build, n, len(values), periodic)), y)
        result = part if result is None else result + part
    for i, v in enumerate(values):
        if dual_values[i]:
            unit = build(np.zeros(n), [1.0 if j == i else 0.0 for j in range(len(values))])
            part = np.reshape(unit, np.shape(unit) + (1,) * len(rest)) * v
            result = part if result is None else result + part
    return result


def _bc_values(bc_type, pairs_lists):
    """(values, template): the boundary derivative values in bc_type and template(values), the
    bc_type with them. CubicSpline's ends are (order, value) pairs; make_interp_spline's
    (pairs_lists) are lists of them."""
    if bc_type is None or isinstance(bc_type, str):
        return [], lambda values: bc_type
    ends = list(bc_type)
    values = []
    for end in ends:
        if end is None or isinstance(end, str):
            continue
        for order, value in (end if pairs_lists else [end]):
            values.append(stack_lists(value))

    def template(new):
        it = iter(new)
        out = []
        for end in ends:
            if end is None or isinstance(end, str):
                out.append(end)
            elif pairs_lists:
                out.append([(order, next(it)) for order, _ in end])
            else:
                out.append((end[0], next(it)))
        return tuple(out)
    return values, template


def _key(*parts):
    """A hashable key of arrays and reprs (for the maps' cache)."""
    return tuple((p.shape, p.tobytes()) if isinstance(p, np.ndarray) else repr(p) for p in parts)


# ---- piecewise polynomials on the layers -------------------------------------------------------
class _Pieces:
    """A piecewise polynomial on ascending breakpoints x: c[m, i] the coefficient of
    (t - x[i])^(k-m) on [x[i], x[i+1]] (SciPy's PPoly layout, c of shape (k+1, intervals,
    *rest)), c plain or of a layer. `bad` marks intervals that must not be evaluated."""

    def __init__(self, x, c, bad=None):
        self.x, self.c, self.bad = np.asarray(x, dtype=np.float64), c, bad

    def evaluate(self, t, nu=0, extrapolate=True):
        """The nu-th derivative at the points t (1-D), shape (len(t), *rest), on SciPy's intervals."""
        x, c = self.x, self.c
        tv = _plain(t)
        if extrapolate == "periodic":
            mapped = x[0] + (tv - x[0]) % (x[-1] - x[0])
            t, tv = t + (mapped - tv), mapped  # a constant shift: derivative 1
        i = np.clip(np.searchsorted(x, tv, side="right") - 1, 0, len(x) - 2)
        if self.bad is not None and np.any(self.bad[i] & ~np.isnan(tv)):
            raise NotDifferentiated(f"{_WHERE}: a point lies on a zero-length interval of the knots, "
                                    "where the spline has no derivative dualad can give")
        k, rest = np.shape(c)[0] - 1, tuple(np.shape(c)[2:])
        if nu > k:
            return np.zeros(tv.shape + rest)
        dt = np.reshape(t - x[i], tv.shape + (1,) * len(rest))
        s = None
        for m in range(k - nu + 1):
            term = c[m, i] * float(math.perm(k - m, nu))
            s = term if s is None else s * dt + term
        return s

    def derivative(self, nu=1):
        k, rest = np.shape(self.c)[0] - 1, tuple(np.shape(self.c)[2:])
        if nu > k:
            return _Pieces(self.x, np.zeros((1,) + tuple(np.shape(self.c)[1:])), self.bad)
        factors = np.array([math.perm(k - m, nu) for m in range(k - nu + 1)], dtype=np.float64)
        return _Pieces(self.x, self.c[:k - nu + 1] * np.reshape(factors, (-1, 1) + (1,) * len(rest)), self.bad)

    def antiderivative(self):
        """The antiderivative that is 0 at x[0] and continuous (SciPy's fix_continuity)."""
        c = self.c
        k, rest = np.shape(c)[0] - 1, tuple(np.shape(c)[2:])
        powers = np.arange(k + 1, 0, -1, dtype=np.float64)
        new = c / np.reshape(powers, (-1, 1) + (1,) * len(rest))
        h = np.reshape(np.diff(self.x), (-1,) + (1,) * len(rest))
        s = new[0]
        for m in range(1, k + 1):
            s = s * h + new[m]
        whole = s * h  # each interval's integral
        constants = np.concatenate([np.zeros((1,) + rest), np.cumsum(whole[:-1], axis=0)], axis=0)
        return _Pieces(self.x, np.concatenate([new, constants[None]], axis=0), self.bad)


def _integral(pieces, a, b, extrapolate, clip):
    """∫_a^b of the pieces as SciPy integrates (PPoly.integrate, BSpline.integrate with clip:
    the spline 0 outside its base interval when it does not extrapolate)."""
    F = pieces.antiderivative()
    xs, xe = pieces.x[0], pieces.x[-1]

    def at(p):
        return F.evaluate(np.reshape(p, (1,)), 0, True)[0]

    av, bv = float(_plain(a)), float(_plain(b))
    sign = 1.0
    if bv < av:
        a, b, av, bv, sign = b, a, bv, av, -1.0
    if extrapolate == "periodic":
        period = xe - xs
        n_periods, left_v = divmod(bv - av, period)
        left = (b - a) - n_periods * period
        total = n_periods * (at(xe) - at(xs)) if n_periods > 0 else 0.0
        mapped = xs + (av - xs) % period
        a = a + (mapped - av)
        if mapped + left_v <= xe:
            total = total + at(a + left) - at(a)
        else:
            total = total + at(xe) - at(a) + at(xs + left + a - xe) - at(xs)
        return sign * total
    if clip and not extrapolate:
        a = xs if av < xs else a
        b = xe if bv > xe else b
        if _plain(a) >= _plain(b):
            return sign * (at(xs) - at(xs))
    return sign * (at(b) - at(a))


def _placed(expr, x_shape, axis):
    """expr of shape (m, *rest) as SciPy lays out a call's result: x's shape at `axis`."""
    rest = tuple(np.shape(expr)[1:])
    out = np.reshape(expr, tuple(x_shape) + rest)
    if axis:
        x_ndim = len(x_shape)
        order = list(range(len(x_shape) + len(rest)))
        order = order[x_ndim:x_ndim + axis] + order[:x_ndim] + order[x_ndim + axis:]
        out = np.transpose(out, order)
    return out


def _flat(x):
    x = stack_lists(x)
    return (np.reshape(x, (-1,)) if has_layer(x) else np.ravel(np.asarray(x, dtype=np.float64))), np.shape(x)


class _StandInType(type):
    """The stand-in class's own attributes, else SciPy's class's (refused on dual numbers);
    isinstance of SciPy's objects holds as it does for SciPy's class."""

    def __getattr__(cls, name):
        if name.startswith("__") or "_scipy_class" not in cls.__dict__:
            raise AttributeError(name)
        return not_differentiated(getattr(cls._scipy_class, name), f"{_WHERE}.{cls.__name__}.{name}")

    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or (
            "_scipy_class" in cls.__dict__ and isinstance(obj, cls._scipy_class))


class _OnSciPyObject(metaclass=_StandInType):
    """A stand-in object holding SciPy's own object on the values (_scipy), whose public
    attributes it shows where it has none of its own."""

    def __repr__(self):
        return f"<dualad stand-in of {_WHERE}.{type(self).__name__}>"

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._scipy, name)


class _Interpolant(_OnSciPyObject):
    """Shared by the 1-D piecewise-polynomial stand-ins: SciPy's object on the values
    (_scipy) and the coefficients that carry derivatives (_coefficients, or None)."""

    _clip_integral = False

    @classmethod
    def _from(cls, scipy_object, coefficients=None):
        self = object.__new__(cls)
        self._scipy, self._coefficients, self._pieces_cache = scipy_object, coefficients, None
        return self

    @property
    def _layered(self):
        return self._coefficients is not None and has_layer(self._coefficients)

    def _pieces(self):
        if self._pieces_cache is None:
            self._pieces_cache = self._make_pieces()
        return self._pieces_cache

    def _make_pieces(self):
        c = self._scipy.c if self._coefficients is None else self._coefficients
        return _Pieces(self._scipy.x, c)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._scipy, name)
        if callable(value) and self._layered:
            def refuse(*args, **kwargs):
                raise NotDifferentiated(f"{_WHERE}.{type(self).__name__}.{name} of data that carry "
                                        "derivatives is not differentiated by dualad (evaluation, "
                                        "derivative, antiderivative and integrate are)")
            return refuse
        return not_differentiated(value, f"{_WHERE}.{type(self).__name__}.{name}")

    @property
    def c(self):
        """The coefficients, SciPy's values with the data's derivatives."""
        if not self._layered:
            return self._scipy.c
        return scipy_valued(self._coefficients, self._scipy.c)

    def __call__(self, x, nu=0, extrapolate=None):
        if not self._layered and not has_layer(x):
            return self._scipy(x, nu, extrapolate)
        flat, shape = _flat(x)
        value = self._scipy(_plain(flat).reshape(shape), nu, extrapolate)
        extrapolate = self._scipy.extrapolate if extrapolate is None else extrapolate
        expr = self._pieces().evaluate(flat, nu, extrapolate)
        return scipy_valued(_placed(expr, shape, self._scipy.axis), value)

    def _derived(self, scipy_object, pieces):
        new = type(self)._from(scipy_object, pieces.c if self._layered else None)
        if self._layered:
            new._pieces_cache = pieces
        return new

    def derivative(self, nu=1):
        if nu < 0:
            return self.antiderivative(-nu)
        if not self._layered:
            return type(self)._from(self._scipy.derivative(nu))
        return self._derived(self._scipy.derivative(nu), self._pieces().derivative(nu))

    def antiderivative(self, nu=1):
        if nu <= 0:
            return self.derivative(-nu)
        if not self._layered:
            return type(self)._from(self._scipy.antiderivative(nu))
        pieces = self._pieces()
        for _ in range(nu):
            pieces = pieces.antiderivative()
        return self._derived(self._scipy.antiderivative(nu), pieces)

    def integrate(self, a, b, extrapolate=None):
        """∫_a^b, differentiable in the data and in a and b."""
        if not self._layered and not has_layer(a, b):
            return self._scipy.integrate(a, b, extrapolate)
        value = self._scipy.integrate(_plain(a), _plain(b), extrapolate)
        extrapolate = self._scipy.extrapolate if extrapolate is None else extrapolate
        return scipy_valued(_integral(self._pieces(), a, b, extrapolate, self._clip_integral), value)


def _hermite(x, y, slopes):
    """CubicHermiteSpline's coefficients (4, n-1, *rest) from values and slopes at the knots."""
    rest = tuple(np.shape(y)[1:])
    dx = np.reshape(np.diff(x), (-1,) + (1,) * len(rest))
    slope = (y[1:] - y[:-1]) / dx
    t = (slopes[:-1] + slopes[1:] - 2 * slope) / dx
    return np.stack([t / dx, (slope - slopes[:-1]) / dx - t, slopes[:-1], y[:-1]])


def _moved(y, axis):
    """y with its interpolation axis first (as SciPy holds it)."""
    y = stack_lists(y)
    if not has_layer(y):
        return y
    return np.moveaxis(y, axis % np.ndim(y), 0) if np.ndim(y) > 1 else y


# ---- CubicSpline, CubicHermiteSpline, PchipInterpolator, PPoly ----------------------------------------
class PPoly(_Interpolant):
    """PPoly(c, x, extrapolate, axis) on ascending breakpoints: differentiable in c and the
    evaluation points."""

    _scipy_class = scipy.interpolate.PPoly

    def __new__(cls, c, x, extrapolate=None, axis=0):
        _refuse("PPoly", x=x)
        c = stack_lists(c)
        poly = scipy.interpolate.PPoly(on_values(c), x, extrapolate, axis)
        if len(poly.x) > 1 and poly.x[-1] < poly.x[0]:
            return _Descending._from(poly, c if has_layer(c) else None)
        if not has_layer(c):
            return cls._from(poly)
        if axis:
            c = np.moveaxis(np.moveaxis(c, axis + 1, 0), axis + 1, 0)
        return cls._from(poly, c)

    @classmethod
    def construct_fast(cls, c, x, extrapolate=None, axis=0):
        """SciPy's construct_fast (no checks), the coefficients keeping their derivatives."""
        c = stack_lists(c)
        poly = cls._scipy_class.construct_fast(on_values(c), x, extrapolate, axis)
        if not has_layer(c):
            return cls._from(poly)
        return cls._from(poly, np.moveaxis(np.moveaxis(c, axis + 1, 0), axis + 1, 0) if axis else c)


class _Descending(PPoly):
    """A PPoly on descending breakpoints: SciPy's, refused when differentiated."""

    def _make_pieces(self):
        raise NotDifferentiated(f"{_WHERE}.PPoly with descending breakpoints is not differentiated "
                                "by dualad; give them in ascending order")

    def __call__(self, x, nu=0, extrapolate=None):
        if not self._layered and not has_layer(x):
            return self._scipy(x, nu, extrapolate)
        return self._make_pieces()


class CubicHermiteSpline(PPoly):
    """CubicHermiteSpline(x, y, dydx, axis, extrapolate): differentiable in y, dydx and the
    evaluation points (its coefficients are linear in y and dydx)."""

    _scipy_class = scipy.interpolate.CubicHermiteSpline

    def __new__(cls, x, y, dydx, axis=0, extrapolate=None):
        _refuse("CubicHermiteSpline", x=x)
        y, dydx = stack_lists(y), stack_lists(dydx)
        spline = scipy.interpolate.CubicHermiteSpline(x, on_values(y), on_values(dydx), axis, extrapolate)
        if not has_layer(y, dydx):
            return cls._from(spline)
        ax = spline.axis
        y = _moved(y, ax) if has_layer(y) else np.moveaxis(_plain(y), ax, 0)
        dydx = _moved(dydx, ax) if has_layer(dydx) else np.moveaxis(_plain(dydx), ax, 0)
        return cls._from(spline, _hermite(spline.x, y, dydx))


class CubicSpline(CubicHermiteSpline):
    """CubicSpline(x, y, axis, bc_type, extrapolate): any bc_type (not-a-knot, natural,
    clamped, periodic, (order, value) pairs); differentiable in y (SciPy's slopes map from
    identity data), the boundary values and the evaluation points; evaluation (nu, extrapolate),
    derivative, antiderivative, integrate."""

    _scipy_class = scipy.interpolate.CubicSpline

    def __new__(cls, x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
        _refuse("CubicSpline", x=x)
        y = stack_lists(y)
        values, template = _bc_values(bc_type, pairs_lists=False)
        spline = scipy.interpolate.CubicSpline(x, _plain(y) if has_layer(y) else y, axis,
                                               on_values(bc_type), extrapolate)
        if not has_layer(y, values):
            return cls._from(spline)
        knots = spline.x
        y = _moved(y, spline.axis) if has_layer(y) else np.moveaxis(_plain(y), spline.axis, 0)

        def build(data, bc):
            return scipy.interpolate.CubicSpline(knots, data, 0, template(bc))(knots, 1)
        periodic = isinstance(bc_type, str) and bc_type == "periodic"
        if periodic and has_layer(y):  # y[0] and y[-1] as the one value SciPy reads them as
            shared = (y[0] + y[-1]) / 2
            y = np.concatenate([shared[None], y[1:-1], shared[None]], axis=0)
        orders = bc_type if isinstance(bc_type, str) else [e if isinstance(e, str) else e[0] for e in bc_type]
        slopes = _affine(build, y, values, periodic, _key("CubicSpline", knots, orders))
        return cls._from(spline, _hermite(knots, y, slopes))


def _edge_case(h0, h1, m0, m1):
    """PchipInterpolator._edge_case on the layers: the one-sided three-point slope, set to 0
    or clamped to 3·m0 where SciPy's value is."""
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    dv, m0v, m1v = _plain(d), _plain(m0), _plain(m1)
    mask = np.sign(dv) != np.sign(m0v)
    mmm = ~mask & (np.sign(m0v) != np.sign(m1v)) & (np.abs(dv) > 3.0 * np.abs(m0v))
    return np.where(mask, 0.0, np.where(mmm, 3.0 * m0, d))


def _pchip_slopes(x, y):
    """PchipInterpolator._find_derivatives on the layers, y of shape (n, *rest)."""
    rest = tuple(np.shape(y)[1:])
    hk = np.reshape(np.diff(x), (-1,) + (1,) * len(rest))
    mk = (y[1:] - y[:-1]) / hk
    if np.shape(y)[0] == 2:
        return np.stack([mk[0], mk[0]])
    mv = _plain(mk)
    smk = np.sign(mv)
    condition = (smk[1:] != smk[:-1]) | (mv[1:] == 0) | (mv[:-1] == 0)
    w1 = 2 * hk[1:] + hk[:-1]
    w2 = hk[1:] + 2 * hk[:-1]
    m0, m1 = np.where(condition, 1.0, mk[:-1]), np.where(condition, 1.0, mk[1:])
    whmean = (w1 / m0 + w2 / m1) / (w1 + w2)
    inner = np.where(condition, 0.0, 1.0 / whmean)
    first = _edge_case(hk[0], hk[1], mk[0], mk[1])
    last = _edge_case(hk[-1], hk[-2], mk[-1], mk[-2])
    return np.concatenate([first[None], inner, last[None]], axis=0)


class PchipInterpolator(CubicHermiteSpline):
    """PchipInterpolator(x, y, axis, extrapolate): differentiable in y (SciPy's slope formula,
    weighted harmonic means of the secants, written on the layers: not linear in y) and the
    evaluation points."""

    _scipy_class = scipy.interpolate.PchipInterpolator

    def __new__(cls, x, y, axis=0, extrapolate=None):
        _refuse("PchipInterpolator", x=x)
        y = stack_lists(y)
        spline = scipy.interpolate.PchipInterpolator(x, on_values(y), axis, extrapolate)
        if not has_layer(y):
            return cls._from(spline)
        y = _moved(y, spline.axis)
        return cls._from(spline, _hermite(spline.x, y, _pchip_slopes(spline.x, y)))


def pchip_interpolate(xi, yi, x, der=0, axis=0):
    """pchip_interpolate(xi, yi, x, der, axis): PchipInterpolator's, differentiable in yi and x."""
    if not has_layer(xi, yi, x):
        return scipy.interpolate.pchip_interpolate(xi, yi, x, der, axis)
    p = PchipInterpolator(xi, yi, axis=axis)
    if der == 0:
        return p(x)
    if np.isscalar(der):
        return p.derivative(der)(x)
    return [p.derivative(nu)(x) for nu in der]


# ---- B-splines ---------------------------------------------------------------------------------------
def _bspline_map(t, k):
    """The base interval's breakpoints tb = t[k..n], each interval's basis functions (window:
    interval j holds B_j .. B_{j+k}), and L with c_pp[k-p, j] = Σ_r L[k-p, j, r]·c[j+r]: the
    power-basis coefficients from SciPy's own p-th derivatives of the basis functions at the
    interval's left knot (one evaluation per order, the basis functions grouped by their index
    mod k+1, whose supports in a window are disjoint). Also the zero-length intervals."""
    n = len(t) - k - 1
    tb = t[k:n + 1]
    window = np.arange(n - k)[:, None] + np.arange(k + 1)[None, :]
    residues = (np.arange(n)[:, None] % (k + 1) == np.arange(k + 1)[None, :]).astype(np.float64)
    basis = scipy.interpolate.BSpline(t, residues, k)
    local = np.empty((k + 1, n - k, k + 1))
    for p in range(k + 1):
        derivative = basis(tb[:-1], nu=p)
        local[k - p] = np.take_along_axis(derivative, window % (k + 1), axis=1) / math.factorial(p)
    return tb, window, local, np.diff(tb) == 0


class BSpline(_Interpolant):
    """BSpline(t, c, k, extrapolate, axis): any degree; differentiable in c (linear) and the
    evaluation points; evaluation (nu, extrapolate), derivative and antiderivative (SciPy's maps
    of c, from identity coefficients), integrate."""

    _scipy_class = scipy.interpolate.BSpline
    _clip_integral = True

    def __new__(cls, t, c, k, extrapolate=True, axis=0):
        _refuse("BSpline", t=t)
        c = stack_lists(c)
        spline = scipy.interpolate.BSpline(t, on_values(c), k, extrapolate, axis)
        if not has_layer(c):
            return cls._from(spline)
        return cls._from(spline, np.moveaxis(c, spline.axis, 0) if spline.axis else c)

    @classmethod
    def construct_fast(cls, t, c, k, extrapolate=True, axis=0):
        """SciPy's construct_fast (no checks), the coefficients keeping their derivatives."""
        c = stack_lists(c)
        spline = cls._scipy_class.construct_fast(t, on_values(c), k, extrapolate, axis)
        if not has_layer(c):
            return cls._from(spline)
        return cls._from(spline, np.moveaxis(c, axis, 0) if axis else c)

    def _make_pieces(self):
        t, k = self._scipy.t, self._scipy.k
        c = self._scipy.c if self._coefficients is None else self._coefficients
        n = len(t) - k - 1
        tb, window, local, bad = _bspline_map(t, k)
        rest = tuple(np.shape(c)[1:])
        gathered = c[:n][window]  # (n-k, k+1, *rest)
        pp = np.sum(np.reshape(local, local.shape + (1,) * len(rest)) * gathered[None], axis=2)
        return _Pieces(tb, pp, bad)

    def _mapped(self, method, nu):
        """SciPy's derivative/antiderivative spline, its coefficients SciPy's map of c."""
        result = getattr(self._scipy, method)(nu)
        if not self._layered:
            return type(self)._from(result)
        m = np.shape(self._coefficients)[0]
        spline = getattr(scipy.interpolate.BSpline(self._scipy.t, np.eye(m), self._scipy.k), method)(nu)
        return type(self)._from(result, _apply(np.asarray(spline.c), self._coefficients))

    def derivative(self, nu=1):
        return self._mapped("derivative", nu) if nu >= 0 else self.antiderivative(-nu)

    def antiderivative(self, nu=1):
        return self._mapped("antiderivative", nu) if nu >= 0 else self.derivative(-nu)


def make_interp_spline(x, y, k=3, t=None, bc_type=None, axis=0, check_finite=True):
    """make_interp_spline(x, y, k, t, bc_type, axis): a BSpline stand-in, differentiable in y
    and boundary derivative values (SciPy's map from identity data) and the evaluation points."""
    _refuse("make_interp_spline", x=x, t=t)
    y = stack_lists(y)
    values, template = _bc_values(bc_type, pairs_lists=True)
    spline = scipy.interpolate.make_interp_spline(x, on_values(y), k, t, on_values(bc_type), axis,
                                                  check_finite)
    if not has_layer(y, values):
        return BSpline._from(spline)
    y = _moved(y, spline.axis)
    if k <= 1 and t is None:  # SciPy's coefficients are the data themselves
        return BSpline._from(spline, y)
    xs = np.asarray(x, dtype=np.float64)

    def build(data, bc):
        return scipy.interpolate.make_interp_spline(xs, data, k, t, template(bc), 0, False).c
    periodic = isinstance(bc_type, str) and bc_type == "periodic"
    orders = bc_type if bc_type is None or isinstance(bc_type, str) else \
        [e if e is None or isinstance(e, str) else [o for o, _ in e] for e in bc_type]
    key = _key("make_interp_spline", xs, k, np.asarray(t, dtype=np.float64) if t is not None else None, orders)
    return BSpline._from(spline, _affine(build, y, values, periodic, key))


# ---- interp1d -----------------------------------------------------------------------------------------
_SPLINE_KINDS = {"zero": 0, "slinear": 1, "quadratic": 2, "cubic": 3}


def _extrapolates(fill_value):
    return isinstance(fill_value, str) and fill_value == "extrapolate"


class interp1d(_OnSciPyObject):  # noqa: N801 - SciPy's name
    """interp1d(x, y, kind, axis, bounds_error, fill_value, assume_sorted): every kind
    (linear, nearest, nearest-up, previous, next, zero, slinear, quadratic, cubic, an integer
    order), differentiable in y, fill_value and the points; fill_value and bounds_error as
    SciPy. Linear at a sample point: the segment SciPy evaluates there (np.interp's, the right
    one, for 1-D y without extrapolation; otherwise SciPy's searchsorted, the left one)."""

    _scipy_class = scipy.interpolate.interp1d

    def __init__(self, x, y, kind="linear", axis=-1, copy=True, bounds_error=None,
                 fill_value=np.nan, assume_sorted=False):
        _refuse("interp1d", x=x)
        y = stack_lists(y)
        if isinstance(fill_value, tuple):
            fill_value = tuple(stack_lists(f) for f in fill_value)
        elif not isinstance(fill_value, str):
            fill_value = stack_lists(fill_value)
        self._scipy = scipy.interpolate.interp1d(x, on_values(y), kind, axis, copy, bounds_error,
                                                 on_values(fill_value), assume_sorted)
        self._kind, self._fill = kind, fill_value
        self._layered = has_layer(y, fill_value)
        ax = self._scipy.axis
        if has_layer(y):  # sorted as SciPy sorts x, the interpolation axis first
            y = np.moveaxis(y, ax, 0) if np.ndim(y) > 1 else y
            if not assume_sorted:
                y = y[np.argsort(np.asarray(x), kind="mergesort")]
            self._y = y
        else:
            self._y = np.moveaxis(self._scipy.y, ax, 0)
        self._order = kind if isinstance(kind, int) else _SPLINE_KINDS.get(kind)
        self._spline = None

    @property
    def y(self):
        if not has_layer(self._y):
            return self._scipy.y
        y = np.moveaxis(self._y, 0, self._scipy.axis) if np.ndim(self._y) > 1 else self._y
        return scipy_valued(y, self._scipy.y)

    def _inside(self, t, tv):
        """The interpolant at the points (m, *rest), before the fill values."""
        xs, y, kind = self._scipy.x, self._y, self._kind
        rest, n = tuple(np.shape(y)[1:]), len(xs)
        if self._order is not None:
            if self._order > 1 and (np.isnan(xs).any() or np.isnan(_plain(y)).any()):
                return np.full(tv.shape + rest, np.nan)  # SciPy's all-nan result: a constant
            if self._spline is None:
                self._spline = make_interp_spline(xs, y, k=self._order, check_finite=False)
            return self._spline._pieces().evaluate(t, 0, True)
        if kind == "linear":
            if np.ndim(self._scipy.y) == 1 and not _extrapolates(self._fill):  # np.interp's segment
                lo = np.clip(np.searchsorted(xs, tv, side="right") - 1, 0, n - 2)
            else:  # SciPy's _call_linear: searchsorted on the left
                lo = np.clip(np.searchsorted(xs, tv), 1, n - 1) - 1
            h = xs[lo + 1] - xs[lo]
            if np.any(h == 0):
                raise NotDifferentiated(f"{_WHERE}.interp1d: x has repeated points (a jump), where "
                                        "the linear interpolant has no derivative")
            shape = tv.shape + (1,) * len(rest)
            slope = (y[lo + 1] - y[lo]) / np.reshape(h, shape)
            return slope * np.reshape(t - xs[lo], shape) + y[lo]
        # nearest, nearest-up, previous, next: SciPy's own choice, read off index data
        index = scipy.interpolate.interp1d(xs, np.arange(n, dtype=np.float64), kind, bounds_error=False,
                                           fill_value="extrapolate", assume_sorted=True)(tv)
        return y[np.where(np.isnan(index), 0, index).astype(np.intp)]

    def __call__(self, x_new):
        if not self._layered and not has_layer(x_new):
            return self._scipy(x_new)
        t, shape = _flat(x_new)
        tv = _plain(t)
        value = self._scipy(tv.reshape(shape))  # SciPy's checks (bounds_error) and value
        expr = self._inside(t, tv)
        fill, kind = self._fill, self._kind
        if _extrapolates(fill) and kind in ("previous", "next"):  # SciPy's fill for these
            fill = (np.nan, self._y[-1]) if kind == "previous" else (self._y[0], np.nan)
        if not _extrapolates(fill):
            below, above = fill if isinstance(fill, tuple) and len(fill) == 2 else (fill, fill)
            mask_shape = tv.shape + (1,) * (np.ndim(expr) - 1)
            expr = np.where(np.reshape(tv < self._scipy.x[0], mask_shape), below,
                            np.where(np.reshape(tv > self._scipy.x[-1], mask_shape), above, expr))
        return scipy_valued(_placed(expr, shape, self._scipy.axis), value)


# ---- RegularGridInterpolator, interpn -------------------------------------------------------------------
def _grid_points(xi, ndim):
    """SciPy's _ndim_coords_from_arrays on the layers: the points as (..., ndim)."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        items = [stack_lists(p) for p in xi]
        shape = np.broadcast_shapes(*(np.shape(p) for p in items))
        return np.stack([p + np.zeros(shape) for p in items], axis=-1)
    xi = stack_lists(xi)
    if not has_layer(xi):
        xi = np.asarray(xi, dtype=np.float64)
    if np.ndim(xi) == 1:
        xi = np.reshape(xi, (-1, ndim))
    return xi


class RegularGridInterpolator(_OnSciPyObject):
    """RegularGridInterpolator(points, values, method, bounds_error, fill_value): methods linear
    and nearest differentiable in values, fill_value and the points xi (SciPy's cell of each
    point: the one to its right at a grid point, the last one at the grid's end); the spline
    methods are SciPy's on plain numbers and an error on dual numbers."""

    _scipy_class = scipy.interpolate.RegularGridInterpolator

    def __init__(self, points, values, method="linear", bounds_error=True, fill_value=np.nan, *,
                 solver=None, solver_args=None):
        _refuse("RegularGridInterpolator", points=points)
        values, fill_value = stack_lists(values), stack_lists(fill_value)
        self._scipy = scipy.interpolate.RegularGridInterpolator(
            points, on_values(values), method, bounds_error, on_values(fill_value), solver=solver,
            solver_args=solver_args)
        self._fill = fill_value
        self._layered = has_layer(values, fill_value)
        if has_layer(values):
            flip = tuple(slice(None, None, -1) if i in self._scipy._descending_dimensions else slice(None)
                         for i in range(len(self._scipy.grid)))
            values = values[flip]
        self._values = values

    @property
    def values(self):
        if not has_layer(self._values):
            return self._scipy.values
        return scipy_valued(self._values, self._scipy._values)

    def __call__(self, xi, method=None, *, nu=None):
        if not self._layered and not has_layer(xi):
            return self._scipy(xi, method, nu=nu)
        method = self._scipy.method if method is None else method
        if method not in ("linear", "nearest"):
            raise NotDifferentiated(f"{_WHERE}.RegularGridInterpolator with method={method!r} is not "
                                    "differentiated by dualad (linear and nearest are)")
        grid = self._scipy.grid
        ndim = len(grid)
        xi = _grid_points(xi, ndim)
        points = np.reshape(xi, (-1, ndim))
        pv = _plain(points)
        value = self._scipy(pv.reshape(np.shape(xi)), method)  # SciPy's checks and value
        values = self._values if has_layer(self._values) else self._scipy._values
        if any(len(g) < 2 for g in grid):
            raise NotDifferentiated(f"{_WHERE}.RegularGridInterpolator: a dimension with one point")
        indices, distances = [], []
        for d, g in enumerate(grid):
            i = np.clip(np.searchsorted(g, pv[:, d], side="right") - 1, 0, len(g) - 2)
            i = np.where(np.isnan(pv[:, d]), 0, i)
            indices.append(i)
            distances.append((points[:, d] - g[i]) / (g[i + 1] - g[i]))
        rest = tuple(np.shape(values)[ndim:])
        shape = (len(pv),) + (1,) * len(rest)
        if method == "nearest":
            chosen = tuple(np.where(_plain(w) <= 0.5, i, i + 1) for i, w in zip(indices, distances))
            result = values[chosen]
        else:
            result = None
            for corner in itertools.product((0, 1), repeat=ndim):
                weight = None
                for d, side in enumerate(corner):
                    w = distances[d] if side else 1 - distances[d]
                    weight = w if weight is None else weight * w
                term = values[tuple(i + side for i, side in zip(indices, corner))] * np.reshape(weight, shape)
                result = term if result is None else result + term
        if not self._scipy.bounds_error and self._scipy.fill_value is not None:
            outside = np.zeros(len(pv), dtype=bool)
            for d, g in enumerate(grid):
                outside |= (pv[:, d] < g[0]) | (pv[:, d] > g[-1])
            result = np.where(np.reshape(outside, shape), self._fill, result)
        result = np.reshape(result, tuple(np.shape(xi)[:-1]) + rest)
        return scipy_valued(result, value)


def interpn(points, values, xi, method="linear", bounds_error=True, fill_value=np.nan):
    """interpn(points, values, xi, method, bounds_error, fill_value): methods linear and
    nearest, through RegularGridInterpolator's stand-in; differentiable in values, fill_value and xi."""
    if not has_layer(values, xi, fill_value):
        return scipy.interpolate.interpn(points, values, xi, method, bounds_error, fill_value)
    _refuse("interpn", points=points)
    value = scipy.interpolate.interpn(points, on_values(stack_lists(values)), on_values(xi), method,
                                      bounds_error, on_values(fill_value))
    if method not in ("linear", "nearest"):
        raise NotDifferentiated(f"{_WHERE}.interpn with method={method!r} is not differentiated by "
                                "dualad (linear and nearest are)")
    interpolator = RegularGridInterpolator(points, values, method, bounds_error=False, fill_value=fill_value)
    return scipy_valued(interpolator(xi), value)


# ---- SciPy's objects made outside f ------------------------------------------------------------------
def stand_in_of(value):
    """The stand-in of a SciPy spline made outside f (a global one f evaluates at points that
    carry derivatives): a PPoly (CubicSpline, PCHIP, ...) or BSpline object seen through its
    stand-in; None for anything else. A fallback for dualad.scipy.stand_in, as
    stats.stand_in_of is for frozen distributions."""
    for scipy_class, stand_in in ((scipy.interpolate.BSpline, BSpline),
                                  (scipy.interpolate.CubicSpline, CubicSpline),
                                  (scipy.interpolate.PchipInterpolator, PchipInterpolator),
                                  (scipy.interpolate.CubicHermiteSpline, CubicHermiteSpline)):
        if isinstance(value, scipy_class):
            return stand_in._from(value)
    if isinstance(value, scipy.interpolate.PPoly):
        ascending = len(value.x) < 2 or value.x[-1] >= value.x[0]
        return (PPoly if ascending else _Descending)._from(value)
    return None


STAND_INS = {scipy.interpolate.CubicSpline: CubicSpline,
             scipy.interpolate.CubicHermiteSpline: CubicHermiteSpline,
             scipy.interpolate.PchipInterpolator: PchipInterpolator,
             scipy.interpolate.pchip_interpolate: pchip_interpolate,
             scipy.interpolate.PPoly: PPoly,
             scipy.interpolate.BSpline: BSpline,
             scipy.interpolate.make_interp_spline: make_interp_spline,
             scipy.interpolate.interp1d: interp1d,
             scipy.interpolate.RegularGridInterpolator: RegularGridInterpolator,
             scipy.interpolate.interpn: interpn}
