"""NumPy functions on forward numbers (``__array_function__``): Dual and HyperDual build
each function of the registry (dualad/functions) from its kind, once per kind:

  * selection: the call runs on the values and on position arrays; each component is
    gathered along the positions (an entry of a constant operand gets a zero tangent);
  * linear: the entry's linear map on each component;
  * multilinear: the product rule, each term one einsum;
  * jvp: the entry's JVP on the first-order tangent (HyperDual: on its Dual-of-Dual view,
    so the same JVP gives exact second derivatives);
  * composition: the entry's NumPy code itself; value_only: NumPy on the values.
"""

from __future__ import annotations

import math
import string

import numpy as np

from .dual import fit
from .functions.multilinear import contract
from .functions.registry import build
from .number import (HANDLED_FUNCTIONS, ForwardNumber, constant_positions, in_layout, leader_of,
                     positions, primal, unwrapped)

__all__ = ["select"]


def _as_blocks(c, shape):
    """c (shape + t) as an array of `shape` whose entries are c's trailing blocks (a view,
    dtype void), or None when it cannot be seen so (a number of an older layer, a trailing
    block that is not contiguous)."""
    if type(c) is not np.ndarray or c.dtype != np.float64:
        return None
    width = math.prod(c.shape[len(shape):])
    try:
        rows = c.reshape(tuple(shape) + (width,), copy=False)
        return rows.view(np.dtype((np.void, 8 * width)))[..., 0]
    except (ValueError, TypeError):
        return None


def _from_blocks(blocks, t):
    return blocks[..., None].view(np.float64).reshape(blocks.shape + t)


def select(leader, call, operands):
    """call(list of arrays), each output entry an operand entry: the same call on the values
    and on each component seen as an array of its trailing blocks, so a result NumPy makes a
    view (reshape, transpose, slicing) is a view of the tangents too and writes through it
    reach the operand, as in NumPy. A component that cannot be seen as blocks (nested
    layers) is gathered along the call's positions instead, and the value copied, so value
    and tangents stay consistent."""
    split = [leader.split(op) for op in operands]
    if all(comps is None for _, comps in split):
        return call([v for v, _ in split])
    value = call([v for v, _ in split])
    shapes = [np.shape(v) for v, _ in split]
    out, gather = [], None
    for i, t in enumerate(leader.trailing_shapes()):
        blocks = []
        for (v, comps), shape in zip(split, shapes):
            dtype = np.dtype((np.void, 8 * math.prod(t)))
            if comps is None:  # a constant's zero tangents, laid out as its value (order 'K')
                blocks.append(np.zeros_like(v, dtype) if type(v) is np.ndarray else np.zeros(shape, dtype))
            else:
                blocks.append(_as_blocks(comps[i], shape))
        if any(b is None for b in blocks):
            gather = gather or _positions(call, split, shapes)
            out.append(gather(i, t))
        else:
            out.append(_from_blocks(np.asarray(call(blocks)), t))
    if gather is not None and any(np.may_share_memory(unwrapped(value), unwrapped(v)) for v, _ in split):
        value = np.copy(value)  # no view without views of every component
    return leader._new(value, tuple(out))


def _positions(call, split, shapes):
    """gather(i, t): component i of the result, read along the positions the call takes."""
    ids, parts, total = [], [], 0
    for (v, comps), shape in zip(split, shapes):
        if comps is None:
            ids.append(constant_positions(shape, v))
            parts.append(None)
            continue
        size = math.prod(shape)
        ids.append(positions(shape, v, total))  # laid out as v: read in the values' order
        parts.append((comps, size))
        total += size
    index = np.asarray(call(ids))
    flat = index.reshape(-1)
    constant = flat < 0
    if constant.any():  # entries of constant operands read a zero row past the end
        flat = np.where(constant, total, flat)

    def gather(i, t):
        rows = [np.reshape(p[0][i], (p[1],) + t) for p in parts if p is not None]
        if constant.any():
            rows.append(np.zeros((1,) + t))
        table = rows[0] if len(rows) == 1 else np.concatenate(rows)
        return np.reshape(table[flat], index.shape + t)
    return gather


def _selection(entry):
    def impl(*args, **kwargs):
        operands, call = entry.impl(*args, **kwargs)
        leader = leader_of((operands,))
        if not isinstance(leader, ForwardNumber):
            # no operand is a forward number (only where's condition is), or a newer layer
            # was hidden in a list: NumPy's call dispatches to whichever layer leads
            return call(operands)
        return select(leader, call, operands)
    return impl


def _linear(entry):
    def impl(*args, **kwargs):
        operand, value, apply, _ = entry.impl(*args, **kwargs)
        if not isinstance(operand, ForwardNumber):
            return value(operand)  # a newer layer was stacked from a list: it takes the call
        result = value(operand.value)
        return operand._new(result, tuple(in_layout(apply(c, k), result)
                                          for c, k in zip(operand.components, operand.trailing)))
    return impl


def _multilinear_value(value_fn, subscripts, operands):
    """Dual product rule: ∂(A·B·…) = Σ_i (A·…·∂X_i·…), each term one einsum."""
    leader = leader_of((operands,))
    if not isinstance(leader, ForwardNumber):  # a newer layer was hidden in a list operand
        return value_fn(*operands)
    split = [leader.split(op) for op in operands]
    values = [v for v, _ in split]
    value = value_fn(*values)
    inputs, output = subscripts.replace(" ", "").split("->")
    inputs = inputs.split(",")
    z = next(c for c in string.ascii_letters if c not in subscripts)
    partials = None
    for i, (_, comps) in enumerate(split):
        if comps is None:
            continue
        subs = ",".join(s + z if j == i else s for j, s in enumerate(inputs)) + "->" + output + z
        term = contract(subs, *values[:i], comps[0], *values[i + 1:])
        partials = term if partials is None else partials + term
    return leader._new(value, (fit(partials, value, leader.trailing_shapes()[0]),))


def _explicit_output(subscripts):
    from .functions.multilinear import parse_subscripts
    inputs, output = parse_subscripts(subscripts)
    return ",".join(inputs) + "->" + output


def _multilinear(entry):
    def dual_impl(*args, **kwargs):
        operands, value_fn, subscripts = entry.impl(*args, **kwargs)
        return _multilinear_value(value_fn, _explicit_output(subscripts), operands)
    return _dual_level(entry.func, dual_impl)


def _from_jvp(jvp, operands):
    leader = leader_of((operands,))
    split = [leader.split(op) for op in operands]
    tangents = [None if c is None else c[0] for _, c in split]
    value, tangent = jvp(*[v for v, _ in split], *tangents)
    t = leader.trailing_shapes()[0]
    if not isinstance(value, tuple):
        return leader._new(value, (fit(tangent, value, t),))
    items = [v if dv is None else leader._new(v, (fit(dv, v, t),))
             for v, dv in zip(value, tangent)]
    return type(value)(*items) if hasattr(value, "_fields") else tuple(items)


def _jvp(entry):
    def dual_impl(*args, **kwargs):
        operands, jvp = entry.impl(*args, **kwargs)
        return _from_jvp(jvp, operands)
    return _dual_level(entry.func, dual_impl)


def _dual_level(func, impl):
    """Dual runs impl; HyperDual runs func on its Dual-of-Dual view."""
    def dispatch(*args, **kwargs):
        return leader_of(args)._dual_level(func, args, kwargs, impl)
    return dispatch


build(HANDLED_FUNCTIONS, _selection, _linear, _multilinear, _jvp)
