"""The tape: what reverse mode records while f runs, and the backward sweep.

Every operation on a traced array appends one node: the ids of its traced operands and
its vector-Jacobian product, a closure over the local partials it needs (for an
elementwise rule, the rule's first partials evaluated in the forward run; for a
selection such as indexing, only positions). The sweep walks the nodes once from the
output back to the inputs, handing each node its output's cotangent and adding what it
returns onto its operands' cotangents:

    cotangent(operand) += vjp(cotangent(node))          cost O(cost of f), memory O(nodes)

Cotangents are ndarrays, or forward numbers when a forward transform runs outside this
one (forward-over-reverse Hessians); the helpers below work on both.
"""

from __future__ import annotations

import numpy as np

from ..number import ForwardNumber, assign, is_layer, new_tag

__all__ = ["Tape", "Scattered", "unbroadcast", "scatter_add", "zeros_like_cotangent", "set_entries"]


class Tape:
    """Nodes in the order they were recorded; node i's operands all have ids < i."""

    def __init__(self):
        self.tag = new_tag()  # newer than every tape and forward transform before it
        self.operands: list = []   # node id -> tuple of operand node ids
        self.vjps: list = []       # node id -> cotangent -> tuple of operand cotangents (None = 0)
        self.floats = 0            # floats held by the recorded values (the tape's memory)

    def record(self, operands, vjp, floats=0):
        self.floats += floats
        self.operands.append(tuple(operands))
        self.vjps.append(vjp)
        return len(self.operands) - 1

    def __len__(self):
        return len(self.operands)

    def backward(self, output, cotangent, wanted):
        """Cotangents of the nodes in `wanted` (a list of ids) given output's cotangent.

        Nodes after `output` cannot influence it and are skipped; a node's cotangent is
        dropped once it has been passed on, so memory holds only the live frontier."""
        pending = {output: cotangent}
        owned = set()  # nodes whose pending cotangent is an array this sweep made: writable in place
        wanted_set = set(wanted)
        found = {}
        for node in range(output, -1, -1):
            c = pending.pop(node, None)
            owned.discard(node)
            if c is None or (not is_layer(c) and not (c.any() if isinstance(c, (np.ndarray, np.generic)) else np.any(c))):
                # nothing, or all zeros, flows back from here: skipped, as the compiled tape
                # skips a zero adjoint (0 · an infinite partial would be nan)
                if c is not None and node in wanted_set:
                    found[node] = c
                continue
            if node in wanted_set:
                found[node] = c
            vjp = self.vjps[node]
            if vjp is None:  # an input: nothing further back
                continue
            for operand, oc in zip(self.operands[node], vjp(c)):
                if oc is None:
                    continue
                previous = pending.get(operand)
                if isinstance(oc, Scattered):
                    # a slice's cotangent: add it in place into an array we own
                    if previous is None:
                        previous = zeros_like_cotangent(oc.shape, oc.values)
                    elif operand not in owned:
                        previous = previous.copy() if is_layer(previous) else np.array(previous)
                    pending[operand] = oc.add_into(previous)
                    owned.add(operand)
                elif previous is None:
                    pending[operand] = oc  # may be shared with another node: not owned
                else:
                    pending[operand] = previous + oc
                    owned.add(operand)
        return [found.get(node) for node in wanted]


class Scattered:
    """A cotangent that is zero except at a basic index of an array of `shape` (the VJP of
    indexing): the sweep adds it into the operand's cotangent without building the zeros."""

    __slots__ = ("shape", "index", "values")

    def __init__(self, shape, index, values):
        self.shape, self.index, self.values = shape, index, values

    def add_into(self, target):
        if is_layer(target) or is_layer(self.values):
            return assign(target, self.index, target[self.index] + self.values)
        if not isinstance(target, np.ndarray):  # a 0-d sum came back as a NumPy scalar
            target = np.array(target)
        target[self.index] += self.values  # basic indexing: no entry twice
        return target


def unbroadcast(g, shape):
    """Sum g over the axes along which an operand of `shape` was broadcast to g's shape. An
    operand with more leading axes of length 1 than g (an item assigned into a slice:
    y[0:2] = v.reshape(1, 2), which NumPy takes) gets them back."""
    shape = tuple(shape)
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    if len(shape) > len(g_shape):
        g_shape = (1,) * (len(shape) - len(g_shape)) + tuple(g_shape)
        g = np.reshape(g, g_shape)
    lead = len(g_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
    g = np.sum(g, axis=axes, keepdims=True) if axes else g
    return np.reshape(g, shape)


def zeros_like_cotangent(shape, c):
    """Zeros of `shape` that can receive the entries of cotangent c: an ndarray, or for a
    cotangent of an enclosing transform (nesting) a buffer of that transform."""
    return np.zeros_like(c, shape=shape) if is_layer(c) else np.zeros(shape)


def scatter_add(size, positions, c):
    """out (size,) with out[positions[k]] += c[k] for every k (positions may repeat)."""
    positions = np.ravel(positions)
    if isinstance(c, ForwardNumber) and not any(is_layer(a) for a in (c.value,) + c.components):
        flat = np.reshape(c, (-1,))
        return flat.map_linear(lambda a, k: _scatter(size, positions, a, k))
    if is_layer(c):
        # a traced cotangent (reverse over reverse), or nested forward numbers (their
        # entries are numbers of older layers): differentiable operations only
        return _scatter_by_sorting(size, positions, np.reshape(c, (-1,)))
    return _scatter(size, positions, np.ravel(c), 0)


def _scatter_by_sorting(size, positions, c):
    """scatter_add from gathers, cumsum and assignment, which every layer differentiates:
    sort by position, and each position's total is a difference of the running sum."""
    if positions.size == 0:  # nothing to add (np.repeat(x, 0)): zeros, of c's layer
        return zeros_like_cotangent((size,), c)
    order = np.argsort(positions, kind="stable")
    sorted_positions = positions[order]
    running = np.cumsum(c[order])
    last = np.flatnonzero(np.append(sorted_positions[1:] != sorted_positions[:-1], True))
    before = np.concatenate([np.zeros(1), running[last[:-1]]])
    out = zeros_like_cotangent((size,), c)
    out[sorted_positions[last]] = running[last] - before
    return out


def _scatter(size, positions, values, n_trailing):
    out = np.zeros((size,) + values.shape[values.ndim - n_trailing:] if n_trailing else size)
    np.add.at(out, positions, values)
    return out


def set_entries(c, index, item):
    """A copy of c with c[index] = item (a cotangent being zeroed where values were overwritten)."""
    if is_layer(c):
        c = c.copy()
    else:
        c = np.array(c, dtype=np.float64, copy=True)
    return assign(c, index, item)
