"""ODEs: solve_ivp and odeint, the derivatives of the solution by forward sensitivities.

The derivatives are those of the exact ODE solution, computed to the solver's tolerance
(not the derivatives of the solver's steps): for y' = f(t, y, p), y(t0) = y0, the stand-in
makes the parameters explicit (every number of a layer that args= and f's closure hold, and
the initial state when y0 or t0 carries a derivative: a vector P of M entries) and
integrates, with the same method, tolerances (atol tiled over the new components) and
options, the augmented system

    y' = f(t, y, P),    S' = ∂f/∂y S + ∂f/∂P,    S(t0) = ∂y0/∂P      (S = ∂y/∂P, n × M)

and, when a second derivative flows (HyperDual, forward-over-reverse, nested transforms),
the second-order sensitivities T = ∂²y/∂P² (n × M × M) too. One evaluation of f on dualad's
Dual (HyperDual) numbers, with the state's partials S (and T) and unit seeds on P, gives the
whole right-hand side. Implicit methods (Radau, BDF, LSODA) get the exact Jacobian of the
augmented system from dualad.jacobian (its blocks ∂S'/∂y carry f's second derivatives; the
Newton iterations would stall on the block-diagonal approximation). The solution is then

    y = y_f + S δP + ½ T[δP, δP],    δP = P − primal P,

written with the numbers of the layers themselves, so every layer (Dual, HyperDual, the
reverse tape, nested) sees y as a differentiable function of its inputs, and reverse mode
gets Sᵀ ȳ from the tape. An output time that carries a derivative (t_span's end when t_eval
is None, entries of t_eval, t_span's start) adds the flow's Taylor terms
δt f(t, y) + ½ δt² (∂f/∂t + ∂f/∂y f). Events are not differentiated (an error when a
derivative flows), nor are third and higher derivatives.
"""

from __future__ import annotations

import copy
import inspect

import numpy as np
import scipy.integrate as _integrate

from ..dual import Dual
from ..hyperdual import HyperDual
from ..number import is_layer, new_tag, primal
from ..transforms import jacobian
from .common import (Floats, MovingBranch, NotDifferentiable, Parameters, as_array, bind, call, components, floats, has_layer,
                     hidden_layers, layer_depth, strip, with_value)

__all__ = ["solve_ivp", "odeint"]

_IMPLICIT = ("Radau", "BDF", "LSODA")
_DENSE_LIMIT = 200  # augmented systems larger than this get a sparse Jacobian (BDF, Radau)


def _flow_taylor(fun, args, t, y, delta, direction=1.0):
    """y(t + direction·delta) from y(t) by the flow's Taylor series in delta (nilpotent:
    only as many terms as delta has orders): y + s f + ½ s² (∂f/∂t + ∂f/∂y f), s = ±delta."""
    step = delta if direction > 0 else -delta
    f = as_array(fun(t, y, *args))
    out = y + step * f
    if layer_depth(delta) >= 2:
        J_t, J_y = jacobian(lambda tt, yy: as_array(fun(tt, yy, *args)), argnums=(0, 1), mode="forward")(t, y)
        out = out + 0.5 * step * step * (J_t + J_y @ f)
    return out


class _Sensitivity:
    """The forward sensitivity problem of y' = fun(t, y, *args), y(t0) = y0, for the layers
    fun, args, y0 and t0 carry."""

    def __init__(self, name, fun, args, t0, y0):
        self.name, self.fun, self.args = name, fun, args
        self.params = Parameters([fun, args])
        y0_l = as_array(y0)
        if np.iscomplexobj(primal(y0_l)):
            raise NotDifferentiable(f"{name}: complex ODEs are not differentiated by dualad")
        self.y0_f = np.array(primal(y0_l), dtype=float).ravel()
        self.n = n = self.y0_f.size
        self.t0_f = float(primal(t0))
        fun_f, args_f = self.params.floated([fun, args])
        self.fun_f, self.args_f = fun_f, args_f
        if has_layer(fun_f(self.t0_f, self.y0_f.copy(), *args_f)):
            raise hidden_layers(name)
        # the initial state at the float t0: y0 moved back along the flow by δt0
        y_start = np.reshape(y0_l, (n,)) if is_layer(y0_l) else self.y0_f
        if is_layer(t0):
            y_start = _flow_taylor(fun, args, t0, y_start, t0 - self.t0_f, direction=-1.0)
        self.q = has_layer(y_start)
        pieces = [self.params.delta()] if self.params else []
        if self.q:
            pieces.append(y_start - self.y0_f)
        self.delta = pieces[0] if len(pieces) == 1 else (np.concatenate(pieces) if pieces else np.zeros(0))
        self.M = M = self.params.m + (n if self.q else 0)
        self.order = layer_depth(self.delta) if M else 0
        if self.order > 2:
            raise NotDifferentiable(f"{name}: derivatives of third and higher order through the ODE solution "
                                    "are not computed by dualad (first and second are)")
        if M:
            self.tag = new_tag()
            self.fun_s, self.args_s = self.params.seeded([fun, args], self.tag, self.order, M)
        self.watch = MovingBranch(
            f"{name}: the right-hand side branches on a differentiated value (the state or a "
            "parameter: a comparison such as t < p, np.where, heaviside or floor of it) "
            "differently along the solution: it switches where the branch flips, and that "
            "switch moves with the parameters, which the sensitivity equations miss. Solve in "
            "pieces split at the switch (solve_ivp up to it, then from it with the state "
            "reached): dualad differentiates the ends of t_span")
        self.size = n * (1 + M + (M * M if self.order == 2 else 0))

    # ---- the augmented system ----------------------------------------------------------------
    def z0(self):
        n, M = self.n, self.M
        S0 = np.zeros((n, M))
        if self.q:
            S0[:, self.params.m:] = np.eye(n)
        parts = [self.y0_f, S0.ravel()]
        if self.order == 2:
            parts.append(np.zeros(n * M * M))
        return np.concatenate(parts)

    def _unpack(self, z):
        n, M = self.n, self.M
        y = np.array(z[:n], dtype=float)
        S = np.reshape(z[n:n + n * M], (n, M))
        T = np.reshape(z[n + n * M:], (n, M, M)) if self.order == 2 else None
        return y, S, T

    def rhs(self, t, z):
        y, S, T = self._unpack(z)
        if self.order == 1:
            Y = Dual(y, S.copy(), self.tag)
        else:
            Y = HyperDual(y, S.copy(), S.copy(), T.copy(), self.tag)
        value, first, second = components(self.watch(self.fun_s, t, Y, *self.args_s), self.order,
                                          self.n, self.M)
        parts = [value, first.ravel()]
        if second is not None:
            parts.append(second.ravel())
        return np.concatenate(parts)

    def jac(self, t, z):
        """The exact Jacobian of rhs at (t, z): dualad.jacobian with respect to y (and S at
        second order), the blocks of the top order (∂S'/∂S, ∂T'/∂T) being I ⊗ ∂f/∂y."""
        n, M, order = self.n, self.M, self.order
        y, S, T = self._unpack(z)

        def parts(w):
            tag = new_tag()  # newer than the jacobian's own: the seeds are the outer layer
            fun_s, args_s = self.params.seeded([self.fun, self.args], tag, order, M)
            if order == 1:
                Y = Dual(w, S.copy(), tag)
            else:
                SS = np.reshape(w[n:], (n, M))
                Y = HyperDual(w[:n], SS, SS, T.copy(), tag)
            out = as_array(fun_s(t, Y, *args_s))
            if not isinstance(out, (Dual, HyperDual)) or out.tag is not tag:
                value, pieces = np.reshape(out, (n,)), [np.zeros(n * M)] + ([np.zeros(n * M * M)] if order == 2 else [])
            elif order == 1:
                value, pieces = np.reshape(out.value, (n,)), [np.reshape(out.partials, (n * M,))]
            else:
                value, pieces = np.reshape(out.value, (n,)), [np.reshape(out.eps1, (n * M,)),
                                                              np.reshape(out.eps12, (n * M * M,))]
            return np.concatenate([value] + pieces)
        w0 = y if order == 1 else np.concatenate([y, S.ravel()])
        Jw = np.asarray(primal(jacobian(parts, mode="forward")(w0)), dtype=float)
        A = Jw[:n, :n]
        top = n * M if order == 1 else n * M * M
        J = np.zeros((self.size, self.size))
        J[:, :w0.size] = Jw
        J[self.size - top:, self.size - top:] = np.kron(A, np.eye(top // n))
        return J

    # ---- the solution on the layers ------------------------------------------------------------
    def combine(self, Z, times):
        """y on the layers from the augmented solution Z (size × K) at K output times; times
        maps a column to its output time where that carries a derivative."""
        n, M = self.n, self.M
        Z = np.asarray(Z, dtype=float)
        K = Z.shape[1]
        Y = Z[:n]
        if M:
            S = np.reshape(Z[n:n + n * M], (n, M, K))
            Y = Y + np.transpose(np.moveaxis(S, 2, 0) @ self.delta)
            if self.order == 2:
                T = np.reshape(Z[n + n * M:], (n, M, M, K))
                Y = Y + 0.5 * np.transpose((np.moveaxis(T, 3, 0) @ self.delta) @ self.delta)
            Y = with_value(Y, Z[:n])
        if not times:
            return Y
        columns = [Y[:, j] for j in range(K)]
        for j, t in times.items():
            t_f = float(primal(t))
            columns[j] = _flow_taylor(self.fun, self.args, t_f, columns[j], t - t_f)
        return np.stack(columns, axis=1)


def _tiled(tolerance, n, size):
    """An absolute tolerance of n entries, repeated over the augmented system's blocks."""
    if tolerance is None or np.ndim(tolerance) == 0:
        return tolerance
    return np.tile(np.asarray(tolerance, dtype=float).ravel(), size // n)


def _implicit(method):
    if isinstance(method, str):
        return method in _IMPLICIT
    try:
        return "jac" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _layered_times(times):
    """{column: time} for the entries of a sequence (or array) of times that carry a
    derivative."""
    if times is None:
        return {}
    if is_layer(times):
        return {j: times[j] for j in range(np.size(primal(times)))} if np.ndim(primal(times)) else {0: times}
    if isinstance(times, np.ndarray) and times.dtype == object or isinstance(times, (list, tuple)):
        return {j: t for j, t in enumerate(times) if is_layer(t)}
    return {}


def _float_times(times):
    return None if times is None else np.asarray(strip(as_array(times) if has_layer(times) else times), dtype=float)


class SensitivityDenseOutput:
    """sol.sol of a solve_ivp stand-in's result: the augmented solution's interpolant, read
    as y on the layers at float (or layered) times."""

    def __init__(self, sensitivity, dense):
        self.sensitivity, self.dense = sensitivity, dense
        self.t_min, self.t_max = dense.t_min, dense.t_max

    def __call__(self, t):
        t_f = _float_times(t)
        Z = self.dense(t_f)
        if np.ndim(t_f) == 0:
            times = {0: t} if is_layer(t) else {}
            return self.sensitivity.combine(Z[:, None], times)[:, 0]
        return self.sensitivity.combine(Z, _layered_times(t))


def solve_ivp(*args, **kwargs):
    """scipy.integrate.solve_ivp: ``sol.y`` differentiable with respect to y0, the
    parameters (args= or fun's closure), t_span's ends and t_eval's entries: the derivatives
    of the exact ODE solution, computed to the solver's tolerance by forward sensitivity
    equations integrated with the same method (RK45, RK23, DOP853, Radau, BDF, LSODA) and
    tolerances (see the module docstring). Events are not differentiated."""
    p = bind(_integrate.solve_ivp, args, kwargs)
    fun, t_span, y0, t_eval, fargs, options = p["fun"], p["t_span"], p["y0"], p["t_eval"], p["args"], p["options"]
    name = "scipy.integrate.solve_ivp"
    fargs_t = () if fargs is None else tuple(fargs) if isinstance(fargs, (tuple, list)) else fargs
    params_layered = bool(Parameters([fun, fargs_t]).leaves) if isinstance(fargs_t, tuple) else False
    inputs_layered = has_layer(t_span) or has_layer(y0) or has_layer(t_eval)
    if not (params_layered or inputs_layered):
        wrapped = Floats(fun)
        events = p["events"]
        if events is not None:
            events = [Floats(e) for e in events] if isinstance(events, (list, tuple)) else Floats(events)
        p.update(fun=wrapped, events=events, options={**options, **({"jac": floats(options["jac"])}
                                                                  if "jac" in options else {})})
        sol = call(_integrate.solve_ivp, p)
        if wrapped.layered:
            raise hidden_layers(name)
        return sol
    if p["events"] is not None:
        raise NotDifferentiable(f"{name}: events are not differentiated by dualad (the event times' "
                                "derivatives are not computed); solve without events, or stop at a fixed t_span")
    t0, t1 = t_span
    sensitivity = _Sensitivity(name, fun, fargs_t, t0, y0)
    t_span_f = (float(primal(t0)), float(primal(t1)))
    t_eval_f = _float_times(t_eval)
    method = p["method"]
    if sensitivity.M == 0:  # only output times carry derivatives
        p.update(fun=Floats(sensitivity.fun_f), args=sensitivity.args_f or None, t_span=t_span_f,
                 y0=sensitivity.y0_f, t_eval=t_eval_f)
        sol = call(_integrate.solve_ivp, p)
    else:
        opts = {k: v for k, v in options.items() if k not in ("jac", "jac_sparsity", "lband", "uband")}
        if "atol" in opts:
            opts["atol"] = _tiled(opts["atol"], sensitivity.n, sensitivity.size)
        if _implicit(method):
            opts["jac"] = sensitivity.jac
        sol = _integrate.solve_ivp(sensitivity.rhs, t_span_f, sensitivity.z0(), method=method, t_eval=t_eval_f,
                                   dense_output=p["dense_output"], events=None, vectorized=False, **opts)
    out = copy.copy(sol)
    if t_eval is None:
        times = {sol.t.size - 1: t1} if is_layer(t1) and sol.status == 0 else {}
    else:
        times = _layered_times(t_eval)
    if sensitivity.M == 0:
        out.y = sensitivity.combine(sol.y, times) if times else sol.y
    else:
        out.y = sensitivity.combine(sol.y, times)
    if times:
        t_out = [sol.t[j] for j in range(sol.t.size)]
        for j, t in times.items():
            t_out[j] = t
        out.t = np.stack(t_out)
    if p["dense_output"] and sol.sol is not None and sensitivity.M:
        out.sol = SensitivityDenseOutput(sensitivity, sol.sol)
    return out


def odeint(*args, **kwargs):
    """scipy.integrate.odeint: the solution at t differentiable with respect to y0, the
    parameters (args= or func's closure) and the entries of t: the derivatives of the exact
    ODE solution, to the solver's tolerance, by forward sensitivity equations integrated
    with LSODA at the same tolerances (Dfun: the augmented system's exact Jacobian)."""
    p = bind(_integrate.odeint, args, kwargs)
    func, y0, t, fargs, tfirst = p["func"], p["y0"], p["t"], p["args"], p["tfirst"]
    name = "scipy.integrate.odeint"
    fargs = fargs if isinstance(fargs, tuple) else (fargs,)
    if not (Parameters([func, fargs]) or has_layer(y0) or has_layer(t)):
        wrapped = Floats(func)
        p.update(func=wrapped, Dfun=floats(p["Dfun"]))
        out = call(_integrate.odeint, p)
        if wrapped.layered:
            raise hidden_layers(name)
        return out
    if tfirst:
        def fun(tt, yy, *a):
            return func(tt, yy, *a)
    else:
        def fun(tt, yy, *a):
            return func(yy, tt, *a)
    t_list = list(t) if not is_layer(t) else [t[j] for j in range(np.size(primal(t)))]
    sensitivity = _Sensitivity(name, fun, fargs, t_list[0], y0)
    t_f = _float_times(t)
    size, n = sensitivity.size, sensitivity.n
    if sensitivity.M == 0:
        # only the output times carry derivatives: the float solution (Dfun, which takes
        # SciPy's argument order, is left to LSODA's differences here)
        p.update(func=Floats(sensitivity.fun_f), y0=sensitivity.y0_f, t=t_f, args=sensitivity.args_f,
                 Dfun=None, tfirst=True)
        res = call(_integrate.odeint, p)
    else:
        p.update(func=sensitivity.rhs, y0=sensitivity.z0(), t=t_f, args=(), Dfun=sensitivity.jac, col_deriv=0,
                 ml=None, mu=None, tfirst=True, atol=_tiled(p["atol"], n, size), rtol=_tiled(p["rtol"], n, size))
        res = call(_integrate.odeint, p)
    Z = res[0] if p["full_output"] else res
    Y = np.transpose(sensitivity.combine(np.transpose(Z[:, :size]), _layered_times(t_list)))
    return (Y,) + tuple(res[1:]) if p["full_output"] else Y
