"""Optima: SciPy's minimisers on floats, the derivative of the minimiser by the stationarity
condition ∇ₓf(x, p) = 0.

At a minimiser x_f with a nonsingular Hessian, x(p) solves G(x, p) = ∇ₓf(x, p) = 0, and
roots.implicit_solution takes its chord steps with the float Hessian H = dualad.hessian(f) at
(x_f, primal p), G evaluated by dualad.grad on the numbers of the layers: the derivative of the
exact stationary point at SciPy's x_f (to the optimiser's tolerance on ∇f; a looser gtol
moves the point the derivative is taken at, not the formula). The optimal value (``.fun``) is
f(x*, p), whose first derivative is ∂f/∂p (the envelope theorem).

Bounds are allowed where they are inactive at the solution; an active bound is an error that
names it (the derivative there is that of a constrained problem, which dualad does not give),
as are constraints= when a derivative flows. least_squares minimises
½ Σ f_scale² ρ((rᵢ/f_scale)²) (its loss, the robust ones included) and curve_fit the
weighted sum of squares ½ ‖(f(xdata, θ) − ydata)/σ‖² (or with the Cholesky factor of a 2-D
σ), popt differentiable w.r.t. ydata, xdata, σ and the model's own parameters; curve_fit's
pcov is SciPy's float matrix, without derivative.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.optimize as _optimize

from ..number import primal
from ..transforms import grad, hessian
from .common import (Floats, NotDifferentiable, SolverDerivativeError, as_args, as_array, bind, call, first,
                     floats, has_layer, layered_result, strip, with_value)
from .roots import implicit_solution

__all__ = ["minimize", "minimize_scalar", "golden", "brent", "fminbound", "least_squares", "curve_fit",
           "stationary_point"]


def stationary_point(objective, x_f, name):
    """x* (numbers of the layers objective carries), primal x_f: the stationary point of
    objective(x, layered) near SciPy's minimiser x_f. objective(x, layered) is the scalar
    objective with the parameters as they are (layered=True) or as floats (False)."""
    x_f = np.asarray(x_f, dtype=float)
    shape = x_f.shape

    def scalar(z, layered):  # (SciPy takes an objective of shape (1,) as a scalar)
        out = objective(np.reshape(z, shape), layered)
        return np.reshape(out, ()) if np.size(out) == 1 else out

    def gradient(layered):
        def G(x):
            return np.ravel(grad(lambda z: scalar(z, layered))(x))
        return G

    def hessian_at():
        return np.asarray(primal(hessian(lambda z: scalar(z, False))(x_f.ravel())),
                          dtype=float).reshape(x_f.size, x_f.size)
    x = implicit_solution(gradient(True), x_f.ravel(), hessian_at, name)
    return np.reshape(x, shape)


def _minimize_bounds(bounds, n):
    """(lower, upper) float arrays of minimize's bounds= (a Bounds object or (lo, hi) pairs,
    None meaning unbounded), or None."""
    if bounds is None:
        return None
    if isinstance(bounds, _optimize.Bounds):
        return bounds.lb, bounds.ub
    pairs = list(bounds)
    return ([-np.inf if lo is None else lo for lo, _ in pairs], [np.inf if hi is None else hi for _, hi in pairs])


def _check_bounds(x, lower_upper, name, label="x"):
    """An active bound at the solution is an error naming it."""
    if lower_upper is None:
        return
    x = np.ravel(np.asarray(x, dtype=float))
    lb, ub = (np.broadcast_to(np.asarray(strip(b), dtype=float), x.shape) for b in lower_upper)
    for i, (xi, lo, hi) in enumerate(zip(x, lb, ub)):
        for bound, sign in ((lo, ">="), (hi, "<=")):
            if np.isfinite(bound) and abs(xi - bound) <= np.sqrt(np.finfo(float).eps) * max(1.0, abs(bound)):
                raise SolverDerivativeError(
                    f"{name}: the bound {label}[{i}] {sign} {bound:g} is active at the solution "
                    f"({label}[{i}] = {xi:g}): the derivative of the solution there is that of a constrained "
                    "problem, which dualad does not give (it differentiates the stationarity condition "
                    "∇f = 0 of an interior optimum); loosen the bound or drop it")


def minimize(*args, **kwargs):
    """scipy.optimize.minimize: ``.x`` differentiable with respect to the parameters (args=
    or the objective's closure) by the stationarity condition, ``.fun`` too; every method
    minimises on floats (jac=, hess=, hessp= serve SciPy's iterations). Bounds must be
    inactive at the solution; constraints= give no derivative (an error when one flows)."""
    p = bind(_optimize.minimize, args, kwargs)
    fun, jac, fargs = p["fun"], p["jac"], as_args(p["args"])
    wrapped, wrapped_jac = Floats(fun), floats(jac)
    wrapped_hess, wrapped_hessp = floats(p["hess"]), floats(p["hessp"])
    p.update(fun=wrapped, jac=wrapped_jac, hess=wrapped_hess, hessp=wrapped_hessp, x0=strip(p["x0"]),
             args=strip(fargs), bounds=strip(p["bounds"]))
    res = call(_optimize.minimize, p)
    if not (layered_result(wrapped, wrapped_jac, wrapped_hess, wrapped_hessp) or has_layer(fargs)):
        return res
    name = "scipy.optimize.minimize"
    constraints = p["constraints"]
    if constraints is not None and not (isinstance(constraints, (tuple, list)) and len(constraints) == 0):
        raise NotDifferentiable(f"{name}: constraints= give no derivative of the minimiser in dualad (only "
                                "unconstrained problems and inactive bounds are differentiated)")
    _check_bounds(res.x, _minimize_bounds(p["bounds"], np.size(res.x)), name)
    fargs_f = strip(fargs)

    def objective(x, layered):
        out = fun(x, *(fargs if layered else fargs_f))
        return as_array(first(out) if jac is True else out)
    out = copy.copy(res)
    out.x = stationary_point(objective, res.x, name)
    if out.x is not res.x:
        out.fun = with_value(np.reshape(objective(out.x, True), np.shape(res.fun)), res.fun)
    return out


# ---- scalar minimisers ---------------------------------------------------------------------------
def _scalar_minimiser(scipy_function, x_of, with_x, function_name, bounds_of=None):
    """The stand-in of a scalar minimiser: SciPy's search on floats, then x* by the
    stationarity condition f'(x, p) = 0 (x' = -f_xp / f_xx), f(x*) by the envelope theorem.
    x_of(result) is SciPy's minimiser, with_x(result, x, fx) the result with x* and f(x*);
    bounds_of(params) the (lower, upper) an active one of which is an error."""
    name = f"scipy.optimize.{scipy_function.__name__}"

    def stand_in(*args, **kwargs):
        p = bind(scipy_function, args, kwargs)
        fun, fargs = p[function_name], as_args(p["args"])
        wrapped = Floats(fun)
        p.update({function_name: wrapped, "args": strip(fargs)})
        for option in ("bracket", "brack", "bounds", "x1", "x2"):
            if option in p:
                p[option] = strip(p[option])
        res = call(scipy_function, p)
        if not (layered_result(wrapped) or has_layer(fargs)):
            return res
        x_f = float(x_of(res))
        bounds = None if bounds_of is None else bounds_of(p)
        if bounds is not None:
            (lower,), (upper,), xtol = bounds
            # the bounded search stops within its xtol of a bound it presses against
            for bound, sign in ((float(strip(lower)), ">="), (float(strip(upper)), "<=")):
                if abs(x_f - bound) <= 3.0 * xtol + np.sqrt(np.finfo(float).eps) * max(1.0, abs(bound)):
                    raise SolverDerivativeError(
                        f"{name}: the bound x {sign} {bound:g} is active at the solution (x = {x_f:g}, "
                        f"within 3 xtol = {3.0 * xtol:g} of it): the derivative of the solution there "
                        "is that of a constrained problem, which dualad does not give (it "
                        "differentiates f'(x) = 0 at an interior minimum); widen the bounds")
        fargs_f = strip(fargs)

        def objective(x, layered):
            return as_array(fun(x, *(fargs if layered else fargs_f)))
        x = stationary_point(objective, np.asarray(x_f), name)
        return with_x(res, x, with_value(objective(x, True), objective(x_f, False)))
    stand_in.__name__ = stand_in.__qualname__ = scipy_function.__name__
    stand_in.__doc__ = (f"{name}: the minimiser differentiable with respect to the parameters "
                        "(args= or the objective's closure) by the stationarity condition.")
    return stand_in


def _with_result_x(res, x, fx):
    out = copy.copy(res)
    out.x, out.fun = x, fx
    return out


def _with_tuple_x(res, x, fx):
    return (x, fx) + tuple(res[2:]) if isinstance(res, tuple) else x


def _scalar_bounds(p):
    """(lower, upper, xtol) of minimize_scalar's bounded method, None for the others."""
    method = p.get("method")
    if (method.lower() if isinstance(method, str) else method) == "bounded" or (
            method is None and p.get("bounds") is not None):
        lo, hi = p["bounds"]
        return [lo], [hi], float((p.get("options") or {}).get("xatol", 1e-5))
    return None


minimize_scalar = _scalar_minimiser(_optimize.minimize_scalar, lambda r: r.x, _with_result_x, "fun",
                                    _scalar_bounds)
golden = _scalar_minimiser(_optimize.golden, lambda r: r[0] if isinstance(r, tuple) else r,
                           _with_tuple_x, "func")
brent = _scalar_minimiser(_optimize.brent, lambda r: r[0] if isinstance(r, tuple) else r,
                          _with_tuple_x, "func")
fminbound = _scalar_minimiser(_optimize.fminbound, lambda r: r[0] if isinstance(r, tuple) else r,
                              _with_tuple_x, "func", lambda p: ([p["x1"]], [p["x2"]], float(p["xtol"])))


# ---- least squares -------------------------------------------------------------------------------
def _rho(loss, z):
    """least_squares' loss ρ(z) of z = (r / f_scale)², in dualad-differentiable NumPy."""
    if loss == "linear":
        return z
    if loss == "soft_l1":
        return 2.0 * (np.sqrt(1.0 + z) - 1.0)
    if loss == "huber":
        return np.where(primal(z) <= 1.0, z, 2.0 * np.sqrt(np.maximum(z, 1.0)) - 1.0)
    if loss == "cauchy":
        return np.log1p(z)
    if loss == "arctan":
        return np.arctan(z)
    if callable(loss):
        return as_array(loss(z))[0]
    raise ValueError(f"unknown loss {loss!r}")


def least_squares(*args, **kwargs):
    """scipy.optimize.least_squares: ``.x`` differentiable with respect to the parameters
    (args=, kwargs= or the residual function's closure) by the stationarity of the cost
    ½ Σ f_scale² ρ((rᵢ/f_scale)²); ``.fun`` and ``.cost`` at x* too. Bounds must be
    inactive at the solution (an active one, SciPy's active_mask, is an error naming it)."""
    p = bind(_optimize.least_squares, args, kwargs)
    fun, fargs, fkwargs, scale = p["fun"], as_args(p["args"]), p["kwargs"] or {}, p["f_scale"]
    wrapped, wrapped_jac = Floats(fun), floats(p["jac"])
    p.update(fun=wrapped, jac=wrapped_jac, x0=strip(p["x0"]), args=strip(fargs), kwargs=strip(fkwargs),
             bounds=strip(p["bounds"]), f_scale=strip(p["f_scale"]))
    res = call(_optimize.least_squares, p)
    if not (layered_result(wrapped, wrapped_jac) or has_layer(fargs) or has_layer(fkwargs) or has_layer(scale)):
        return res
    name = "scipy.optimize.least_squares"
    active = np.flatnonzero(getattr(res, "active_mask", np.zeros(0)))
    if active.size:
        i = int(active[0])
        side = ">=" if res.active_mask[i] < 0 else "<="
        raise SolverDerivativeError(
            f"{name}: the bound x[{i}] {side} {res.x[i]:g} is active at the solution: the derivative of the "
            "solution there is that of a constrained problem, which dualad does not give (it "
            "differentiates the stationarity of the cost at an interior optimum); loosen the bound or drop it")
    fargs_f, fkwargs_f = strip(fargs), strip(fkwargs)
    loss = p["loss"]

    def residuals(x, layered):
        if layered:
            return np.ravel(as_array(fun(x, *fargs, **fkwargs)))
        return np.ravel(as_array(fun(x, *fargs_f, **fkwargs_f)))

    def cost(r, layered):
        s = scale if layered else primal(scale)
        if loss == "linear":
            return 0.5 * np.sum(r * r)
        return 0.5 * s ** 2 * np.sum(_rho(loss, (r / s) ** 2))

    out = copy.copy(res)
    out.x = stationary_point(lambda x, layered: cost(residuals(x, layered), layered), res.x, name)
    if out.x is not res.x:
        r = residuals(out.x, True)
        out.fun = with_value(r, res.fun)
        out.cost = with_value(cost(r, True), res.cost)
    return out


# ---- curve fitting -------------------------------------------------------------------------------
def curve_fit(*args, **kwargs):
    """scipy.optimize.curve_fit: popt differentiable with respect to ydata, xdata, sigma and
    the model's parameters (its closure) by the stationarity of the weighted sum of squares;
    pcov (and full_output's extras) are SciPy's floats. Bounds must be inactive at popt."""
    p = bind(_optimize.curve_fit, args, kwargs)
    f = p["f"]
    xdata, ydata, sigma = p["xdata"], p["ydata"], p["sigma"]
    wrapped, wrapped_jac = Floats(f), floats(p["jac"])
    p.update(f=wrapped, jac=wrapped_jac, xdata=strip(xdata), ydata=strip(ydata), sigma=strip(sigma),
             p0=strip(p["p0"]), bounds=strip(p["bounds"]))
    res = call(_optimize.curve_fit, p)
    if not (layered_result(wrapped, wrapped_jac) or has_layer(xdata) or has_layer(ydata) or has_layer(sigma)):
        return res
    name = "scipy.optimize.curve_fit"
    popt_f = res[0]
    _check_bounds(popt_f, tuple(p["bounds"]), name, label="popt")
    if has_layer(xdata):
        x_l = as_array(xdata)
    elif isinstance(xdata, (list, tuple, np.ndarray)):
        x_l = np.asarray(xdata, dtype=float)
    else:
        x_l = xdata  # any object the model takes (SciPy passes it on unchanged)
    y_l, s_l = as_array(ydata), None if sigma is None else as_array(sigma)
    y_f = np.asarray(primal(y_l), dtype=float)
    keep = None
    if p["nan_policy"] == "omit":
        keep = ~np.isnan(y_f)
        x_f = np.asarray(strip(xdata), dtype=float)
        if x_f.ndim and x_f.shape[-1] == y_f.shape[-1]:
            keep &= ~np.isnan(x_f).reshape(-1, x_f.shape[-1]).any(axis=0)

    def objective(theta, layered):
        x = x_l if layered else strip(x_l)
        y = y_l if layered else y_f
        s = s_l if layered else (None if s_l is None else primal(s_l))
        if keep is not None:
            x = x[..., keep] if np.ndim(primal(x)) else x
            y = y[keep]
            s = None if s is None else (s[keep] if np.ndim(primal(s)) == 1 else s[np.ix_(keep, keep)])
        model = as_array(f(x, *[theta[i] for i in range(np.size(popt_f))]))
        r = np.ravel(model - y)
        if s is not None:
            if np.ndim(primal(s)) == 2:
                r = np.linalg.solve(np.linalg.cholesky(s), r)
            else:
                r = r / np.ravel(s)
        return 0.5 * np.sum(r * r)
    popt = stationary_point(objective, popt_f, name)
    return (popt,) + tuple(res[1:])
