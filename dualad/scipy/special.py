"""Stand-ins of scipy.special's Python-level functions that do not dispatch to dual
numbers (they convert their input with array_namespace/asarray): logsumexp, softmax,
log_softmax. Each is SciPy's own function on plain values, and on dual numbers of any
layer SciPy's value with the derivatives of the shifted closed form

    logsumexp(a, b) = m + log |Σ b e^(a - m)|,   m = max a (a constant: the shift cancels),

written with NumPy calls that dispatch to dualad. (scipy.special's ufuncs need no stand-in:
their rules are dualad/scipy_special.py's.)
"""

from __future__ import annotations

import numpy as np
import scipy.special

from ..functions.registry import stack_lists
from ..number import primal
from .values import has_layer, on_values, scipy_valued

__all__ = ["logsumexp", "softmax", "log_softmax", "STAND_INS"]


def _axes(axis, ndim):
    return tuple(range(ndim)) if axis is None else tuple(np.atleast_1d(axis) % max(ndim, 1))


def _shift(a, axis):
    """max a over axis (kept), as a constant: 0 where it is not finite (all -inf: the sum
    is 0 and the log -inf, as SciPy's)."""
    m = np.max(primal(a), axis=axis, keepdims=True)
    return np.where(np.isfinite(m), m, 0.0)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """scipy.special.logsumexp: log Σ b·e^a over axis; with return_sign, (log |Σ|, sign Σ)."""
    if not has_layer(a, b):
        return scipy.special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    value = scipy.special.logsumexp(on_values(a), axis=axis, b=on_values(b), keepdims=True,
                                    return_sign=return_sign)
    a, b = stack_lists(a), stack_lists(b)  # (a list of duals: one array of them)
    if np.ndim(a) == 0:
        a = np.reshape(a, (1,))  # as SciPy's atleast_1d
    axes = _axes(axis, np.ndim(a))
    zero_weight = False if b is None else primal(b) == 0
    if b is not None:
        # an entry of weight 0 adds nothing whatever a is there (SciPy's convention): an
        # infinite or nan a is taken as -inf, so that 0·e^a is 0
        a = np.where(zero_weight & ~np.isfinite(primal(a)), -np.inf, a)
    m = _shift(np.where(zero_weight, -np.inf, primal(a)), axes)
    with np.errstate(all="ignore"):
        terms = np.exp(a - m) if b is None else b * np.exp(a - m)
        out = scipy_valued(np.log(np.abs(np.sum(terms, axis=axes, keepdims=True))) + m,
                           value[0] if return_sign else value)
    sign = value[1] if return_sign else None
    if not keepdims:
        out = np.squeeze(out, axis=axes)
        sign = None if sign is None else np.squeeze(sign, axis=axes)[()]
    return (out, sign) if return_sign else out


def log_softmax(x, axis=None):
    """scipy.special.log_softmax: x - logsumexp(x) over axis."""
    if not has_layer(x):
        return scipy.special.log_softmax(x, axis=axis)
    x = stack_lists(x)
    axes = _axes(axis, np.ndim(x))
    shifted = x - _shift(x, axes)
    with np.errstate(all="ignore"):
        expr = shifted - np.log(np.sum(np.exp(shifted), axis=axes, keepdims=True))
    return scipy_valued(expr, scipy.special.log_softmax(on_values(x), axis=axis))


def softmax(x, axis=None):
    """scipy.special.softmax: e^x / Σ e^x over axis."""
    if not has_layer(x):
        return scipy.special.softmax(x, axis=axis)
    x = stack_lists(x)
    axes = _axes(axis, np.ndim(x))
    exp = np.exp(x - _shift(x, axes))
    return scipy_valued(exp / np.sum(exp, axis=axes, keepdims=True),
                        scipy.special.softmax(on_values(x), axis=axis))


# SciPy's object -> the stand-in f's view sees (dualad/scipy/__init__.py looks them up)
STAND_INS = {scipy.special.logsumexp: logsumexp, scipy.special.softmax: softmax,
             scipy.special.log_softmax: log_softmax}
