"""Reductions and cumulative functions: sum and cumsum (linear), max and min (ties share the
derivative evenly, as in JAX), and compositions of them (mean, prod, diff, clip, ...)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import rules
from ..number import primal, unwrapped
from .registry import axes_of, composition, linear, reject_options, stack_lists, with_values


def _trailing(w, k):
    return w[(Ellipsis,) + (None,) * k]


def _expand_back(c, axes, keepdims, shape):
    """A reduced cotangent broadcast back over the reduced axes of an operand of `shape`."""
    if not keepdims and axes and np.ndim(c):  # a 0-d c broadcasts as it is
        c = np.expand_dims(c, axes)
    return np.broadcast_to(c, shape)


@linear(np.sum, compiled=True)
def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    reject_options(dict(dtype=dtype, out=out, **kwargs), "sum")
    a = stack_lists(a)
    shape = np.shape(a)
    axes, keep = axes_of(axis, len(shape)), keepdims is True

    def apply(x, k=0):
        return np.sum(x, axis=axes, keepdims=keep)

    return a, apply, apply, lambda c: _expand_back(c, axes, keep, shape)


@linear(np.cumsum, compiled=True)
def _cumsum(a, axis=None, dtype=None, out=None):
    reject_options(dict(dtype=dtype, out=out), "cumsum")
    a = stack_lists(a)
    if axis is None:
        a, axis = np.ravel(a), 0
    ax = axes_of(axis, np.ndim(a))[0]

    def apply(x, k=0):
        return np.cumsum(x, axis=ax)

    return a, apply, apply, lambda c: np.flip(np.cumsum(np.flip(c, ax), axis=ax), ax)


def _chooser(choose):
    """max/min: the value chosen, the derivative the mean of the tied entries' derivatives."""
    def operands(a, axis=None, out=None, keepdims=False, **kwargs):
        reject_options(dict(out=out, **kwargs), choose.__name__)
        a = stack_lists(a)
        shape = np.shape(a)
        axes, keep = axes_of(axis, len(shape)), keepdims is True
        values = np.asarray(unwrapped(a))  # the weights' (a tracer counts every entry of a lane)
        if values.size == 0:
            raise ValueError(f"zero-size array to reduction operation {choose.__name__} "
                             "which has no identity")
        mask = np.asarray(values == choose(values, axis=axes, keepdims=True), dtype=np.float64)
        weights = mask / np.sum(mask, axis=axes, keepdims=True)

        def value(x):
            return choose(x, axis=axes, keepdims=keep)

        def apply(t, k=0):
            return np.sum(_trailing(weights, k) * t, axis=axes, keepdims=keep)

        return a, value, apply, lambda c: weights * _expand_back(c, axes, keep, shape)
    return operands


linear(np.max, np.amax, compiled=True, note="ties share the derivative evenly")(_chooser(np.max))
linear(np.min, np.amin, compiled=True, note="ties share the derivative evenly")(_chooser(np.min))


@composition(np.mean, compiled=True)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    reject_options(dict(dtype=dtype, out=out, **kwargs), "mean")
    a = stack_lists(a)
    count = math.prod(np.shape(a)[i] for i in axes_of(axis, np.ndim(a)))
    return np.sum(a, axis=axis, keepdims=keepdims) / count


@composition(np.clip, compiled=True)
def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """clip = minimum(maximum(a, lo), hi), as jnp.clip: at a boundary the derivative is 0.5."""
    kwargs.pop("min", None), kwargs.pop("max", None)
    reject_options(dict(out=out, **kwargs), "clip")
    if a_min is not None:
        a = np.maximum(a, a_min)
    if a_max is not None:
        a = np.minimum(a, a_max)
    return a


@composition(np.prod, compiled=True)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Product by a tree of multiplications: exact with zeros, no formula of its own."""
    reject_options(dict(dtype=dtype, out=out, **kwargs), "prod")
    a = stack_lists(a)
    axes = axes_of(axis, np.ndim(a))
    x = np.moveaxis(a, axes, tuple(range(len(axes))))
    x = np.reshape(x, (-1,) + np.shape(x)[len(axes):])
    while np.shape(x)[0] > 1:
        odd = x[-1:] if np.shape(x)[0] % 2 else None
        x = x[0:-1:2] * x[1::2] if odd is not None else x[0::2] * x[1::2]
        if odd is not None:
            x = np.concatenate([x, odd], axis=0)
    result = x[0] if np.shape(x)[0] else np.ones(np.shape(x)[1:])  # the empty product is 1
    if keepdims is True:
        result = np.expand_dims(result, axes)
    # the tree multiplies in another order than NumPy's reduction: NumPy's values
    return with_values(result, np.prod(unwrapped(a), axis=axes, keepdims=keepdims is True))


@composition(np.cumprod, compiled=True)
def cumprod(a, axis=None, dtype=None, out=None):
    """Prefix products by doubling (log₂ n rounds of multiplications): exact with zeros."""
    reject_options(dict(dtype=dtype, out=out), "cumprod")
    a = stack_lists(a)
    if axis is None:
        a, axis = np.ravel(a), 0
    ax = axes_of(axis, np.ndim(a))[0]
    head = (slice(None),) * ax
    n, shift, scan = np.shape(a)[ax], 1, a
    while shift < n:
        # entries from `shift` on take the product with the entry `shift` before them
        scan = np.concatenate([scan[head + (slice(0, shift),)],
                               scan[head + (slice(shift, None),)] * scan[head + (slice(0, n - shift),)]],
                              axis=ax)
        shift *= 2
    # the scan multiplies in another order than NumPy's running product: keep its
    # derivatives, and NumPy's values
    return with_values(scan, np.cumprod(unwrapped(a), axis=ax))


@composition(np.diff, compiled=True)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    a = stack_lists(a)
    if n == 0:
        return a  # NumPy's: no difference, prepend and append unused
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    ax = axes_of(axis, np.ndim(a))[0]
    pieces = [p for p in (prepend, a, append) if p is not np._NoValue]
    if len(pieces) > 1:
        shape = list(np.shape(a))
        shape[ax] = 1
        pieces = [p if p is a or np.ndim(p) else np.broadcast_to(p, shape) for p in pieces]
        a = np.concatenate(pieces, axis=ax)
    head = (slice(None),) * ax
    for _ in range(n):
        a = a[head + (slice(1, None),)] - a[head + (slice(None, -1),)]
    return a


@composition(np.round, np.around, compiled=True)
def round_(a, decimals=0, out=None):
    reject_options(dict(out=out), "round")
    rule = rules.RULES["round"]
    if decimals:
        rule = dataclasses.replace(rule, value=lambda x: np.round(x, decimals))
    return a._apply_rule(rule, (a,))
