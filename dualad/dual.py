"""Dual numbers a + b·ε (ε² = 0) carrying N partials at once.

    value     shape S         (float, ndarray, or a Dual/HyperDual of an older tag)
    partials  shape S + (N,)  ∂value/∂(seed direction k) on the trailing axis

The chain rule for a rule y = f(x_1, ..., x_m):  ∂y = Σ_i f_i'(x) · ∂x_i.
"""

from __future__ import annotations

import numpy as np

from .number import ForwardNumber, in_layout, new_tag, times

__all__ = ["Dual"]


def _as_float(x):
    if isinstance(x, ForwardNumber):
        return x
    arr = np.asarray(x, dtype=np.float64)
    return arr[()] if arr.ndim == 0 else arr


def fit(component, value, trailing_shape, shape=None):
    """A summed tangent as the component of a new value: broadcast to value's shape (a
    constant can widen it), its entries laid out in memory as value's are (see in_layout).
    shape: value's, when the caller has it (np.shape costs on every scalar operation)."""
    shape = np.shape(value) if shape is None else shape
    target = tuple(shape) + tuple(trailing_shape)
    if component.shape != target:
        component = np.broadcast_to(component, target).copy()
    return in_layout(component, value)


class Dual(ForwardNumber):
    """Dual number: ``Dual(value, partials)`` with partials on a trailing axis."""

    __slots__ = ("value", "partials", "tag")
    trailing = (1,)

    def __init__(self, value, partials, tag=None):
        value = _as_float(value)
        partials = _as_float(partials)
        shape = np.shape(value) if not isinstance(value, ForwardNumber) else value.shape
        if partials.shape[:-1] != shape or partials.ndim < 1:
            raise ValueError(
                f"partials must have shape value.shape + (N,) = {shape} + (N,); got {partials.shape}"
            )
        self.value, self.partials, self.tag = value, partials, tag or new_tag()

    @classmethod
    def _make(cls, value, components, tag):
        obj = object.__new__(cls)
        obj.value, obj.partials, obj.tag = value, components[0], tag
        return obj

    @property
    def components(self):
        return (self.partials,)

    def _set_components(self, components):
        (self.partials,) = components

    @classmethod
    def _chain(cls, rule, operands, tag):
        xs = [v for v, _ in operands]
        y = rule.value(*xs)
        partials = None
        n_partials = None
        with np.errstate(all="ignore"):
            for i, (_, comps) in enumerate(operands):
                if comps is None:
                    continue
                n_partials = comps[0].shape[-1:]
                if rule.first[i] is None:
                    continue
                term = times(rule.first[i](*xs, y), comps[0], 1)
                partials = term if partials is None else partials + term
        shape = y.shape if hasattr(y, "shape") else ()
        if partials is None:
            partials = np.zeros(shape + n_partials)
        return cls._make(y, (fit(partials, y, n_partials, shape),), tag)

    def _dual_level(self, func, args, kwargs, impl):
        return impl(*args, **kwargs)

    def __repr__(self):
        return f"Dual(value={self.value!r}, partials={self.partials!r})"
