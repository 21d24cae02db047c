"""SciPy's value with a closed form's derivatives: what every stand-in returns.

A stand-in computes SciPy's own result on the plain values (so that f's numbers, its
branches included, are SciPy's to the last bit) and a closed form written with
dualad-differentiable NumPy and scipy.special calls (so that every layer differentiates
it, to any order). The result carries the closed form's derivatives and SciPy's value:
    expr - (v - value)      (functions.registry.with_values: exact where v ≈ value)
"""

from __future__ import annotations

import numpy as np

from ..functions.registry import with_values
from ..number import ConversionRerun, is_layer, primal, unwrapped

__all__ = ["has_layer", "on_values", "scipy_valued", "not_differentiated", "NotDifferentiated"]


class NotDifferentiated(TypeError, ConversionRerun):
    """A stand-in's refusal: a derivative without a closed form, or a SciPy function dualad
    does not differentiate, named. It is final. Stand-ins run only in f's views, and
    allocation.OnDemand passes a ConversionRerun raised there straight through, where any
    other error of the views gives way to f's first one (SciPy's own error on dual numbers,
    which would hide this one)."""


def has_layer(*args):
    """Whether any argument (looking into lists, tuples and dicts) is a number of a layer."""
    for a in args:
        if isinstance(a, (list, tuple)):
            if has_layer(*a):
                return True
        elif isinstance(a, dict):
            if has_layer(*a.values()):
                return True
        elif is_layer(a) or (isinstance(a, np.ndarray) and a.dtype == object and
                             any(is_layer(item) for item in a.flat)):
            return True
    return False


def on_values(x):
    """x with every layer removed (through lists, tuples and dicts): what SciPy is given."""
    if isinstance(x, (list, tuple)):
        return type(x)(on_values(item) for item in x)
    if isinstance(x, dict):
        return {key: on_values(item) for key, item in x.items()}
    if isinstance(x, np.ndarray) and x.dtype == object:
        return np.array([primal(item) for item in x.flat], dtype=float).reshape(x.shape)
    return primal(x)


def scipy_valued(expr, value, smooth=True):
    """SciPy's value with expr's derivatives. Where the value is finite and `smooth` (a
    mask of where expr's formula holds: inside the support, valid parameters) is true:
    expr - (v - value). Where expr overflows but SciPy's value is finite (a far tail):
    expr itself, its value and derivatives, rather than a derivative made up. Elsewhere
    (SciPy's value inf or nan, outside the support): SciPy's value, derivative 0."""
    value = np.asarray(value, dtype=np.float64)
    with np.errstate(all="ignore"):
        v = np.asarray(unwrapped(expr), dtype=np.float64)
        finite = np.isfinite(value)
        keep = finite & np.isfinite(v) & smooth
        if keep.all():
            return with_values(expr, value)
        overflowed = finite & ~np.isfinite(v) & smooth
        kept = with_values(np.where(keep, expr, 0.0), np.where(keep, value, 0.0))
        result = np.where(keep, kept, np.where(overflowed, expr, value))
    return result if is_layer(result) or np.ndim(result) else result[()]


def not_differentiated(function, name):
    """SciPy's function, refused (by name) when it meets dual numbers."""
    if not callable(function):
        return function

    def call(*args, **kwargs):
        if has_layer(args, kwargs):
            raise NotDifferentiated(f"{name} is not differentiated by dualad (docs/scipy.md lists the "
                            "SciPy functions and methods it differentiates); call it on plain numbers")
        return function(*args, **kwargs)
    call.__name__ = getattr(function, "__name__", name)
    return call
