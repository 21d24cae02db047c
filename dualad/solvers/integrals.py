"""Integrals: quad by differentiation under the integral sign and Leibniz's rule; the
sample-based rules (trapezoid, simpson, cumulative_trapezoid, romb) by their own formulas.

quad: with the parameters made explicit (P: every number of a layer that args= and the
integrand's closure hold), the stand-in integrates, with quad itself and the same options
(epsabs, epsrel, limit, points, weight, ...), the integrand and each of its first (and, when
a second derivative flows, second) partials ∂f/∂Pᵢ, ∂²f/∂Pᵢ∂Pⱼ, all from one Dual (HyperDual)
evaluation per point (shared between the integrals where quad's nodes coincide), and returns

    I = I_f + g·δP + ½ δPᵀ H δP + ∫_b_f^b f − ∫_a_f^a f,   δP = P − primal P,

on the layers themselves; a limit that carries a derivative contributes by Leibniz's rule
(δb f(b) + ½ δb² ∂f/∂x(b), with f at the parameters as they are, so the mixed derivatives
∂²I/∂b∂p = ∂f/∂p(b) come with it). Infinite limits carry no derivative. The derivatives are
those of the exact integral, to quad's tolerance. An oscillatory or algebraic weight= is
differentiated with respect to the parameters; its limits and wvar are not (an error when a
derivative flows there).

trapezoid, simpson, cumulative_trapezoid and romb are fixed formulas of the samples: their
derivative with respect to y (the integrand's values, carrying its parameters), x and dx
(the sample points and limits: the discrete Leibniz rule) is the formula's, computed here in
dualad-differentiable NumPy (SciPy's own code converts arrays of duals to objects), the value
being SciPy's float result.
"""

from __future__ import annotations

import numpy as np
import scipy.integrate as _integrate

from ..dual import Dual
from ..hyperdual import HyperDual
from ..number import is_layer, new_tag, primal
from ..transforms import derivative
from .common import (Floats, MovingBranch, NotDifferentiable, Parameters, as_array, bind, call, has_layer, hidden_layers,
                     layer_depth, strip, with_value)

__all__ = ["quad", "trapezoid", "simpson", "cumulative_trapezoid", "romb"]


def _weight_at(weight, wvar, x):
    if weight is None:
        return 1.0
    if weight == "cos":
        return np.cos(wvar * x)
    if weight == "sin":
        return np.sin(wvar * x)
    if weight == "cauchy":
        return 1.0 / (x - wvar)
    return None  # 'alg*': the weight itself depends on the limits


def quad(*args, **kwargs):
    """scipy.integrate.quad: the integral differentiable with respect to the integrand's
    parameters (args= or its closure) and the finite limits (see the module docstring);
    the error estimate and full_output's extras are SciPy's floats of the float integral."""
    p = bind(_integrate.quad, args, kwargs)
    func, a, b, fargs = p["func"], p["a"], p["b"], p["args"]
    fargs = fargs if isinstance(fargs, tuple) else (fargs,)
    name = "scipy.integrate.quad"
    params = Parameters([func, fargs])
    if has_layer(p["wvar"]) or has_layer(p["wopts"]):
        raise NotDifferentiable(f"{name}: the weight's variables (wvar=) are not differentiated by dualad")
    if not (params or is_layer(a) or is_layer(b)):
        wrapped = Floats(func)
        p.update(func=wrapped, points=strip(p["points"]))
        res = call(_integrate.quad, p)
        if wrapped.layered:
            raise hidden_layers(name)
        return res
    if p["complex_func"]:
        raise NotDifferentiable(f"{name}: complex integrands (complex_func=True) are not differentiated by dualad")
    a_f, b_f = float(primal(a)), float(primal(b))
    func_f, fargs_f = params.floated([func, fargs])
    probe_x = a_f if np.isfinite(a_f) else (b_f if np.isfinite(b_f) else 0.0)
    if has_layer(func_f(probe_x, *fargs_f)):
        raise hidden_layers(name)
    p.update(func=func_f, a=a_f, b=b_f, args=fargs_f, points=strip(p["points"]))
    res = call(_integrate.quad, p)
    total = res[0]
    if params:
        delta = params.delta()
        order = max(layer_depth(delta), 1)
        if order > 2:
            raise NotDifferentiable(f"{name}: derivatives of third and higher order of the integral are not "
                                    "computed by dualad (first and second are)")
        m = params.m
        tag = new_tag()
        func_s, fargs_s = params.seeded([func, fargs], tag, order, m)
        cache = {}
        watch = MovingBranch(
            f"{name}: the integrand branches on a differentiated parameter differently at different "
            "points (a comparison such as x < p, np.where, heaviside or floor of it): it jumps where "
            "the branch flips, and that jump moves with the parameter, which differentiating under "
            "the integral misses. Split the integral at the jump (quad(f, a, p) + quad(f, p, b)): "
            "dualad differentiates the limits by Leibniz's rule")

        def seeded(x):
            parts = cache.get(x)
            if parts is None:
                out = as_array(watch(func_s, x, *fargs_s))
                if isinstance(out, (Dual, HyperDual)) and out.tag is tag:
                    first = np.reshape(out.partials if order == 1 else out.eps1, (m,))
                    second = None if order == 1 else np.reshape(out.eps12, (m, m))
                else:  # independent of the parameters
                    first, second = np.zeros(m), np.zeros((m, m))
                parts = cache[x] = (first, second)
                if len(cache) > 100_000:
                    cache.clear()
            return parts
        p.update(full_output=0)
        g = np.array([call(_integrate.quad, {**p, "func": lambda x, *_, i=i: seeded(x)[0][i], "args": ()})[0]
                      for i in range(m)])
        total = total + g @ delta
        if order == 2:
            H = np.zeros((m, m))
            for i in range(m):
                for j in range(i, m):
                    H[i, j] = H[j, i] = call(_integrate.quad, {**p, "func": lambda x, *_, i=i, j=j: seeded(x)[1][i, j],
                                                               "args": ()})[0]
            total = total + 0.5 * (delta @ H @ delta)
    for limit, limit_f, sign in ((b, b_f, 1.0), (a, a_f, -1.0)):
        if not is_layer(limit) or not np.isfinite(limit_f):
            continue
        w = _weight_at(p["weight"], p["wvar"], limit_f)
        if w is None:
            raise NotDifferentiable(f"{name}: with weight={p['weight']!r} the limits carry no derivative in dualad")
        step = limit - limit_f
        total = total + sign * step * (w * as_array(func(limit_f, *fargs)))
        if layer_depth(step) >= 2:
            slope = derivative(lambda x: _weight_at(p["weight"], p["wvar"], x) * as_array(func(x, *fargs)))(limit_f)
            total = total + sign * 0.5 * step * step * slope
    return (with_value(total, res[0]),) + tuple(res[1:])


# ---- sample-based rules ------------------------------------------------------------------------
def _samples(y, x, dx, axis):
    """y with the integration axis last (a number of a layer or a float array), x likewise
    (or None), dx."""
    y = as_array(y)
    shape = np.shape(primal(y))
    y = np.moveaxis(y, axis, -1)
    if x is not None:
        x = as_array(x)
        if np.ndim(primal(x)) != 1:  # an n-D x: broadcast against y (SciPy's reading)
            x = np.moveaxis(x if np.shape(primal(x)) == shape else np.broadcast_to(x, shape), axis, -1)
    return y, x, dx


def _safe_divide(num, den):
    """num / den where den ≠ 0, else 0 (SciPy's true_divide(out=zeros, where=den != 0))."""
    den_f = primal(den)
    safe = np.where(den_f != 0, den, 1.0)
    return np.where(den_f != 0, num / safe, 0.0)


def _trapezoid(y, x, dx):
    d = dx if x is None else (x[..., 1:] - x[..., :-1])
    return np.sum(d * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)


def _basic_simpson(y, stop, x, dx):
    y0, y1, y2 = y[..., 0:stop:2], y[..., 1:stop + 1:2], y[..., 2:stop + 2:2]
    if x is None:
        return np.sum(y0 + 4.0 * y1 + y2, axis=-1) * (dx / 3.0)
    h = x[..., 1:] - x[..., :-1]
    h0, h1 = h[..., 0:stop:2], h[..., 1:stop + 1:2]
    hsum, hprod = h0 + h1, h0 * h1
    h0divh1 = _safe_divide(h0, h1)
    tmp = hsum / 6.0 * (y0 * (2.0 - _safe_divide(1.0, h0divh1)) + y1 * (hsum * _safe_divide(hsum, hprod))
                        + y2 * (2.0 - h0divh1))
    return np.sum(tmp, axis=-1)


def _simpson(y, x, dx):
    N = np.shape(primal(y))[-1]
    if N % 2:
        return _basic_simpson(y, N - 2, x, dx)
    if N == 2:
        last = dx if x is None else x[..., -1] - x[..., -2]
        return 0.5 * last * (y[..., -1] + y[..., -2])
    result = _basic_simpson(y, N - 3, x, dx)
    h0, h1 = (dx, dx) if x is None else (x[..., -2] - x[..., -3], x[..., -1] - x[..., -2])
    alpha = _safe_divide(2 * h1 ** 2 + 3 * h0 * h1, 6 * (h1 + h0))
    beta = _safe_divide(h1 ** 2 + 3.0 * h0 * h1, 6 * h0)
    eta = _safe_divide(1 * h1 ** 3, 6 * h0 * (h0 + h1))
    return result + alpha * y[..., -1] + beta * y[..., -2] - eta * y[..., -3]


def _cumulative_trapezoid(y, x, dx, initial):
    d = dx if x is None else (x[..., 1:] - x[..., :-1])
    res = np.cumsum(d * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        res = np.concatenate([np.zeros(np.shape(primal(res))[:-1] + (1,)) + initial, res], axis=-1)
    return res


def _romb(y, dx):
    n_intervals = np.shape(primal(y))[-1] - 1
    k = int(round(np.log2(n_intervals))) if n_intervals > 0 else 0
    h = n_intervals * dx
    R = {(0, 0): (y[..., 0] + y[..., -1]) / 2.0 * h}
    start = stop = step = n_intervals
    for i in range(1, k + 1):
        start >>= 1
        pick = y[..., start:stop:step]
        step >>= 1
        R[(i, 0)] = 0.5 * (R[(i - 1, 0)] + h * np.sum(pick, axis=-1))
        for j in range(1, i + 1):
            prev = R[(i, j - 1)]
            R[(i, j)] = prev + (prev - R[(i - 1, j - 1)]) / ((1 << (2 * j)) - 1)
        h = h / 2.0
    return R[(k, k)]


def _rule(scipy_function, formula, layered_names):
    """A stand-in that delegates where no argument carries a derivative, and otherwise gives
    the formula's result on the layers with SciPy's value."""
    name = f"scipy.integrate.{scipy_function.__name__}"

    def stand_in(*args, **kwargs):
        p = bind(scipy_function, args, kwargs)
        if not any(has_layer(p.get(k)) for k in layered_names):
            return call(scipy_function, p)
        value = call(scipy_function, {k: (strip(v) if k in layered_names else v) for k, v in p.items()})
        return with_value(formula(p), value)
    stand_in.__name__ = stand_in.__qualname__ = scipy_function.__name__
    stand_in.__doc__ = (f"{name}: SciPy's value; where y, x or dx carry derivatives, the rule's own "
                        "derivative with respect to them (see the module docstring).")
    return stand_in


def _trapezoid_formula(p):
    y, x, dx = _samples(p["y"], p["x"], p["dx"], p["axis"])
    return _trapezoid(y, x, dx)


def _simpson_formula(p):
    y, x, dx = _samples(p["y"], p["x"], p["dx"], p["axis"])
    return _simpson(y, x, dx)


def _cumulative_formula(p):
    y, x, dx = _samples(p["y"], p["x"], p["dx"], p["axis"])
    return np.moveaxis(_cumulative_trapezoid(y, x, dx, p["initial"]), -1, p["axis"])


def _romb_formula(p):
    y, _, dx = _samples(p["y"], None, p["dx"], p["axis"])
    return _romb(y, dx)


trapezoid = _rule(_integrate.trapezoid, _trapezoid_formula, ("y", "x", "dx"))
simpson = _rule(_integrate.simpson, _simpson_formula, ("y", "x", "dx"))
cumulative_trapezoid = _rule(_integrate.cumulative_trapezoid, _cumulative_formula, ("y", "x", "dx"))
romb = _rule(_integrate.romb, _romb_formula, ("y", "dx"))
