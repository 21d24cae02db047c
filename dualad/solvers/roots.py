"""Roots and fixed points: SciPy's solvers on floats, the derivative by the implicit function
theorem.

At a regular root x_f of F(x, p) = 0, x(p) is a differentiable function of the parameters p
(whatever carries a derivative: args=, the function's closure). The stand-ins solve on floats
with SciPy, then return

    x* = x_f + δ,   δ ← δ − J⁻¹ (F(x_f + δ, p) − F(x_f, primal p)),   δ₀ = 0,

with J = ∂F/∂x at (x_f, primal p) a constant float matrix (dualad.jacobian of F). The
iteration runs on the numbers of the layers: each step makes one more order of the
derivative exact (the error is multiplied by J⁻¹ (∂F/∂x(x*, p) − J), which has zero primal),
so it takes as many steps as the layers have orders (one for Dual or the reverse tape, two
for HyperDual or forward-over-reverse), and the primal of x* is SciPy's x_f to the last bit.
The step is written with dualad-differentiable NumPy (np.linalg.solve of a float matrix and
a number of a layer), so reverse mode gets the adjoint solve Jᵀ λ = x̄ from the tape. The
derivative is that of the exact root of the equations at SciPy's x_f, not of SciPy's
iterations (which would change with the tolerance). A singular J is an error that says so.
Where SciPy reports no convergence, x_f is no root and the derivative is that of the level set
F(x, p) = F(x_f, primal p) through it: check SciPy's success flag as without dualad.

The starting point x0 (and a bracket) carry no derivative into a root: the root does not
depend on them. ``newton`` (scalar) and ``root_scalar``'s Newton, secant and Halley methods
are pure Python in SciPy, so a transform's first plain run of f takes SciPy's iterations on
dual numbers (the view, and with it this stand-in, is not consulted unless that run fails);
call ``dualad.solvers.roots.newton`` itself to get the implicit-function derivative there.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.optimize as _optimize

from ..number import primal
from ..transforms import derivative, jacobian, jvp
from .common import (Floats, SingularJacobianError, as_args, as_array, bind, call, first, floats, has_layer,
                     layer_depth, layered_result, strip, with_value)

__all__ = ["root", "fsolve", "root_scalar", "brentq", "brenth", "bisect", "ridder", "toms748", "newton",
           "fixed_point", "implicit_solution"]


# ---- the implicit function theorem ---------------------------------------------------------------
def _singular_check(J, x, name):
    J = np.atleast_2d(J)
    if not np.all(np.isfinite(J)):
        raise SingularJacobianError(f"{name}: the Jacobian ∂F/∂x at the solution x = {x} is not finite, "
                                    "so the solution has no derivative there")
    s = np.linalg.svd(J, compute_uv=False)
    tol = s.max(initial=0.0) * max(J.shape) * np.finfo(float).eps
    rank = int(np.sum(s > tol))
    if rank < min(J.shape):
        raise SingularJacobianError(
            f"{name}: the Jacobian ∂F/∂x of the equations is singular at the solution x = {x} "
            f"(rank {rank} of {J.shape[0]}): the solution is not isolated there (a double root, a "
            "redundant equation, a flat minimum), and the implicit function theorem gives no "
            "derivative of it with respect to the parameters")


def implicit_solution(F, x_f, jacobian_at, name, diagonal=False):
    """x* (numbers of the layers F carries) with primal x_f: the solution of
    F(x) = primal(F(x_f)) near x_f, by chord steps with the float Jacobian J =
    jacobian_at() (asked for only where F(x_f) carries a layer; else x_f itself is the
    answer). F takes and returns flat vectors (or scalars); diagonal: J is the diagonal of
    an elementwise F."""
    r = as_array(F(x_f))
    if not has_layer(r):
        return x_f
    J = jacobian_at()
    _check_J(J, x_f, name, diagonal)
    r0 = primal(r)
    order = max(layer_depth(r), 1)
    delta = None
    for step in range(order):
        residual = r - r0
        correction = residual / J if diagonal or np.ndim(J) == 0 else np.linalg.solve(J, residual)
        delta = -correction if delta is None else delta - correction
        if step < order - 1:
            r = as_array(F(x_f + delta))
    return with_value(x_f + delta, x_f)


def _check_J(J, x, name, diagonal):
    if diagonal or np.ndim(J) == 0:
        bad = ~np.isfinite(J) | (np.asarray(J) == 0)
        if np.any(bad):
            where = "" if np.ndim(J) == 0 else f" at entries {np.flatnonzero(bad).tolist()}"
            raise SingularJacobianError(
                f"{name}: the derivative ∂F/∂x of the equation is zero (or not finite){where} at the "
                f"root x = {x}: a multiple root, which has no derivative with respect to the "
                "parameters (the implicit function theorem needs ∂F/∂x ≠ 0)")
    else:
        _singular_check(J, x, name)


def _jacobian_at(F, x):
    """∂F/∂x at x (a float matrix; the parameters' layers dropped)."""
    return np.asarray(primal(jacobian(F, mode="forward")(x)), dtype=float)


def _vector_root(residual, x_f, args, fargs, name):
    """The root x_f (any shape) of residual(x, *args) = 0 as a function of the layers."""
    x_f = np.asarray(x_f, dtype=float)
    shape = x_f.shape

    def flat(a):
        def F(x):
            return np.ravel(as_array(residual(np.reshape(x, shape), *a)))
        return F
    def jacobian_at():
        J = _jacobian_at(flat(fargs), x_f.ravel())
        if J.shape[0] != x_f.size:
            raise SingularJacobianError(
                f"{name}: {J.shape[0]} equations in {x_f.size} unknowns; the derivative of a root needs "
                "as many equations as unknowns (least_squares differentiates an overdetermined fit)")
        return J
    x = implicit_solution(flat(args), x_f.ravel(), jacobian_at, name)
    return np.reshape(x, shape)


def _scalar_root(residual, x_f, args, fargs, name):
    x_f = float(x_f)
    return implicit_solution(lambda x: residual(x, *args), x_f,
                             lambda: float(primal(derivative(lambda x: residual(x, *fargs))(x_f))), name)


# ---- vector roots --------------------------------------------------------------------------------
def root(*args, **kwargs):
    """scipy.optimize.root: SciPy's solution, its ``.x`` differentiable with respect to the
    parameters (args= or the function's closure) by the implicit function theorem. Every
    method (hybr, lm, broyden1, broyden2, anderson, linearmixing, diagbroyden,
    excitingmixing, krylov, df-sane) solves on floats; jac= may be given as for SciPy."""
    p = bind(_optimize.root, args, kwargs)
    fun, jac, fargs = p["fun"], p["jac"], as_args(p["args"])
    wrapped, wrapped_jac = Floats(fun), floats(jac)
    p.update(fun=wrapped, jac=wrapped_jac, x0=strip(p["x0"]), args=strip(fargs))
    res = call(_optimize.root, p)
    if not (layered_result(wrapped, wrapped_jac) or has_layer(fargs)):
        return res
    residual = (lambda x, *a: first(fun(x, *a))) if jac is True else fun
    out = copy.copy(res)
    out.x = _vector_root(residual, res.x, fargs, strip(fargs), "scipy.optimize.root")
    return out


def fsolve(*args, **kwargs):
    """scipy.optimize.fsolve: SciPy's root, differentiable with respect to the parameters."""
    p = bind(_optimize.fsolve, args, kwargs)
    func, fargs = p["func"], as_args(p["args"])
    wrapped, wrapped_prime = Floats(func), floats(p["fprime"])
    p.update(func=wrapped, fprime=wrapped_prime, x0=strip(p["x0"]), args=strip(fargs))
    res = call(_optimize.fsolve, p)
    if not (layered_result(wrapped, wrapped_prime) or has_layer(fargs)):
        return res
    x_f = res[0] if p["full_output"] else res
    x = _vector_root(func, x_f, fargs, strip(fargs), "scipy.optimize.fsolve")
    return (x,) + tuple(res[1:]) if p["full_output"] else x


def fixed_point(*args, **kwargs):
    """scipy.optimize.fixed_point: x = g(x, p), differentiable with respect to p (the root of
    g(x) − x)."""
    p = bind(_optimize.fixed_point, args, kwargs)
    func, fargs = p["func"], as_args(p["args"])
    wrapped = Floats(func)
    p.update(func=wrapped, x0=strip(p["x0"]), args=strip(fargs))
    x_f = call(_optimize.fixed_point, p)
    if not (wrapped.layered or has_layer(fargs)):
        return x_f

    def residual(x, *a):
        return as_array(func(x, *a)) - x
    if np.ndim(x_f) == 0:
        return _scalar_root(residual, x_f, fargs, strip(fargs), "scipy.optimize.fixed_point")
    return _vector_root(residual, x_f, fargs, strip(fargs), "scipy.optimize.fixed_point")


# ---- scalar roots --------------------------------------------------------------------------------
def _bracketing(scipy_function):
    name = f"scipy.optimize.{scipy_function.__name__}"

    def stand_in(*args, **kwargs):
        p = bind(scipy_function, args, kwargs)
        f, fargs = p["f"], as_args(p["args"])
        wrapped = Floats(f)
        p.update(f=wrapped, a=strip(p["a"]), b=strip(p["b"]), args=strip(fargs))
        res = call(scipy_function, p)
        if not (wrapped.layered or has_layer(fargs)):
            return res
        x_f, info = (res[0], res[1]) if p["full_output"] else (res, None)
        x = _scalar_root(f, x_f, fargs, strip(fargs), name)
        if info is None:
            return x
        info = copy.copy(info)
        info.root = x
        return x, info
    stand_in.__name__ = stand_in.__qualname__ = scipy_function.__name__
    stand_in.__doc__ = (f"{name}: SciPy's root in the bracket, differentiable with respect to the "
                        "parameters (args= or the function's closure) by the implicit function theorem; "
                        "the bracket carries no derivative into the root.")
    return stand_in


brentq = _bracketing(_optimize.brentq)
brenth = _bracketing(_optimize.brenth)
bisect = _bracketing(_optimize.bisect)
ridder = _bracketing(_optimize.ridder)
toms748 = _bracketing(_optimize.toms748)


def root_scalar(*args, **kwargs):
    """scipy.optimize.root_scalar: ``.root`` differentiable with respect to the parameters,
    whatever the method (fprime=True / fprime2=True functions returning derivatives too)."""
    p = bind(_optimize.root_scalar, args, kwargs)
    f, fargs = p["f"], as_args(p["args"])
    wrapped, wrapped_prime, wrapped_prime2 = Floats(f), floats(p["fprime"]), floats(p["fprime2"])
    p.update(f=wrapped, fprime=wrapped_prime, fprime2=wrapped_prime2, args=strip(fargs),
             bracket=strip(p["bracket"]), x0=strip(p["x0"]), x1=strip(p["x1"]))
    res = call(_optimize.root_scalar, p)
    if not (layered_result(wrapped, wrapped_prime, wrapped_prime2) or has_layer(fargs)):
        return res
    returns_tuple = p["fprime"] is True or p["fprime2"] is True
    residual = (lambda x, *a: first(f(x, *a))) if returns_tuple else f
    out = copy.copy(res)
    out.root = _scalar_root(residual, res.root, fargs, strip(fargs), "scipy.optimize.root_scalar")
    return out


def newton(*args, **kwargs):
    """scipy.optimize.newton: the root (scalar x0) or roots (array x0, an elementwise
    function), differentiable with respect to the parameters by the implicit function
    theorem; fprime and fprime2 serve SciPy's iterations only."""
    p = bind(_optimize.newton, args, kwargs)
    func, fargs = p["func"], as_args(p["args"])
    wrapped, wrapped_prime, wrapped_prime2 = Floats(func), floats(p["fprime"]), floats(p["fprime2"])
    p.update(func=wrapped, fprime=wrapped_prime, fprime2=wrapped_prime2, args=strip(fargs),
             x0=strip(p["x0"]), x1=strip(p["x1"]))
    res = call(_optimize.newton, p)
    if not (layered_result(wrapped, wrapped_prime, wrapped_prime2) or has_layer(fargs)):
        return res
    name = "scipy.optimize.newton"
    vectorised = np.size(p["x0"]) > 1
    x_f = res[0] if p["full_output"] else res
    fargs_f = strip(fargs)
    if not vectorised:
        x = _scalar_root(func, x_f, fargs, fargs_f, name)
    else:
        x_f = np.asarray(x_f, dtype=float)

        def diagonal():  # of the elementwise function's Jacobian
            return np.asarray(primal(jvp(lambda x: as_array(func(x, *fargs_f)), (x_f,),
                                         (np.ones_like(x_f),))[1]), dtype=float)
        x = implicit_solution(lambda x: as_array(func(x, *fargs)), x_f, diagonal, name, diagonal=True)
    if not p["full_output"]:
        return x
    if vectorised:
        return type(res)(x, *res[1:])
    info = copy.copy(res[1])
    info.root = x
    return x, info
