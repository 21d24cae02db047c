"""SparsityTracer: a layer whose numbers carry, per entry, the input indices they depend on.

A tracer is its ``value`` (f runs on it: branches are taken at x) and, per entry, the id of
a first-order set (``g``: the inputs k with ∂y/∂x_k possibly nonzero) and, when Hessian
patterns are traced, of a second-order set (``h``: the pairs i ≤ j with ∂²y/∂x_i∂x_j
possibly nonzero) in its context's tables (sets.py). For y = φ(a, b) by a rule of the rule
table (SparseConnectivityTracer's global propagation):

    g(y) = ∪_{k: ∂φ/∂k not None} g(k)
    h(y) = ∪_{k: ∂φ/∂k not None} h(k)  ∪  ∪_{i ≤ j: ∂²φ/∂i∂j not None} g(i) × g(j)

A partial that is None in rules.py is identically zero: no dependence, no interaction.
Every other partial counts as nonzero whatever its value at x, so maximum, minimum, abs,
clip, max and min (and median/quantile) depend on all of their candidates: such a pattern
holds wherever f takes the same Python branches. Selections (indexing, where, sort) move
the sets along the positions NumPy's call reads at x.

NumPy functions are built from the registry by kind (dualad/functions/registry.py):

  selection    NumPy's call on the values and on the id arrays (views stay views);
  linear       sum and cumsum: the union along the reduced axis (a prefix union for
               cumsum); the others (max, min, median, quantile, percentile) run their
               linear map on the tracer (weights · t summed), so every entry of a reduced
               lane counts (conservative at ties and order statistics);
  multilinear  output entry o depends on operand entry e when some index assignment of the
               einsum joins them with every constant operand nonzero there (a traced
               operand counts as nonzero); second order: the pairs of two operands' sets
               that meet in one assignment;
  jvp          (linear algebra) every output entry depends on every entry of every traced
               operand, and, except for solve with a constant matrix (linear in b), every
               pair of them interacts: conservative;
  composition  the entry's code on tracers; value_only: NumPy on the values, no sets.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ..functions.registry import axes_of, build
from ..number import (ArrayLike, assign, fresh, from_objects, is_layer, leader_of, primal, strided_as,
                      unwrapped)
from ..functions.multilinear import explicit_terms
from .sets import Builder, Table, cross, union

__all__ = ["SparsityTracer", "Context", "FUNCTIONS"]

# NumPy function -> implementation on tracers, built from the registry at the end.
FUNCTIONS: dict = {}


class Context:
    """One detection: its tag, the number n of inputs, the set tables (h only for Hessian
    patterns), and whether f read the values of its tracers (read_values: a comparison, a
    branch, int(), argmax, sort, ... through number.primal), so that the pattern it found
    may hold at this x only."""

    def __init__(self, tag, n, hessian):
        self.tag, self.n = tag, int(n)
        self.read_values = False
        self.g = Table(max(self.n, 1))
        self.h = Table(max(self.n, 1) ** 2) if hessian else None


def _zeros(shape):
    return np.zeros(shape, dtype=np.int64)


class SparsityTracer(ArrayLike):
    """A value with, per entry, the ids of its first-order (and second-order) index sets."""

    __slots__ = ("value", "g", "h", "ctx")
    __array_priority__ = 100  # ndarray ⊕ tracer defers to the tracer
    _functions = FUNCTIONS

    def __init__(self, value, g, h, ctx):
        # ids that a maker of sets built in C order given the value's strides (ids that a
        # selection made have them already): NumPy's calls then read both in one order and
        # view both or neither
        layout = unwrapped(value)
        self.value, self.ctx = value, ctx
        self.g = g if g is None or not g.flags.c_contiguous else strided_as(g, layout)
        self.h = h if h is None or not h.flags.c_contiguous else strided_as(h, layout)

    @property
    def tag(self):
        return self.ctx.tag

    def _note_read(self):
        self.ctx.read_values = True

    @classmethod
    def _leads(cls, leader):
        return isinstance(leader, SparsityTracer)

    def __repr__(self):
        return f"SparsityTracer(value={self.value!r}, inputs={self.ctx.n})"

    # ---- operands ------------------------------------------------------------------------
    def split(self, x):
        """(value, g ids, h ids) of x for this detection; ids None for a constant."""
        if isinstance(x, SparsityTracer):
            if x.ctx is self.ctx:
                return x.value, x.g, x.h
            if x.tag > self.tag:
                raise AssertionError("leader must hold the newest tag")
        if isinstance(x, np.ndarray) and x.dtype == object:
            return self.split(from_objects(x))
        return x, None, None

    def _new(self, value, g, h=None):
        """A tracer of this detection; the value itself when g is None (a constant)."""
        if g is None:
            return value
        shape = np.shape(value)
        g = np.asarray(g, dtype=np.int64)
        if self.ctx.h is not None:
            h = _zeros(shape) if h is None else np.asarray(h, dtype=np.int64)
        return SparsityTracer(value, g, h if self.ctx.h is not None else None, self.ctx)

    def constant(self, x):
        """x as a buffer of this detection with empty sets (item assignment fills it)."""
        value = np.array(x, dtype=float) if not is_layer(x) else x.copy()
        # the ids laid out as the value (NumPy's view-or-copy choices must agree on both)
        ids = (lambda: np.zeros_like(value, dtype=np.int64)) if type(value) is np.ndarray else \
            (lambda: _zeros(np.shape(value)))
        return SparsityTracer(value, ids(), ids() if self.ctx.h is not None else None, self.ctx)

    def fresh(self):
        """A new object f may assign into without changing this one (number.fresh)."""
        return SparsityTracer(fresh(self.value), self.g.copy(),
                              None if self.h is None else self.h.copy(), self.ctx)

    def copy(self, order="C"):
        return np.copy(self, order=order)

    # ---- elementwise rules -----------------------------------------------------------------
    def _apply_rule(self, rule, args):
        leader = leader_of(args)
        if not isinstance(leader, SparsityTracer):
            return NotImplemented  # a newer layer leads: it takes the operation
        return leader._chain(rule, args)

    def _chain(self, rule, args):
        ctx = self.ctx
        split = [self.split(a) for a in args]
        y = rule.value(*[v for v, _, _ in split])  # NumPy's value, warnings included
        shape = np.shape(y)
        depends = [k for k, (_, g, _) in enumerate(split) if g is not None and rule.first[k] is not None]
        g = union(ctx.g, [split[k][1] for k in depends], shape)
        if g is None:
            if any(g_k is not None for _, g_k, _ in split):
                # piecewise constant (floor, sign, //) of a traced value: no dependence, but
                # a value of x that f may branch or index on, as a comparison's
                ctx.read_values = True
            return y
        if ctx.h is None:
            return SparsityTracer(y, g, None, ctx)
        traced = [k for k, (_, g_k, _) in enumerate(split) if g_k is not None]
        products = [(i, j) for i in traced for j in traced
                    if i <= j and rule.second.get((i, j), "unknown") is not None]
        if not products:  # second order moves as the first: no new interaction
            return SparsityTracer(y, g, union(ctx.h, [split[k][2] for k in depends], shape), ctx)
        size = math.prod(shape)
        rows = np.arange(size, dtype=np.int64)
        builder = Builder(ctx.h, size)
        for k in depends:
            builder.add_rows(rows, np.broadcast_to(split[k][2], shape).reshape(-1))
        for i, j in products:
            cross(ctx.g, np.broadcast_to(split[i][1], shape).reshape(-1),
                  np.broadcast_to(split[j][1], shape).reshape(-1), rows, builder, ctx.n)
        return SparsityTracer(y, g, builder.ids().reshape(shape), ctx)

    # ---- indexing and assignment: NumPy's own, on values and ids alike ------------------------
    def __getitem__(self, index):
        items = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, ArrayLike) for i in items):
            raise TypeError("a sparsity tracer cannot be used as an index: indices are not "
                            "differentiable; use int(dualad.primal(i)) if you mean its value")
        return SparsityTracer(self.value[index], np.asarray(self.g[index]),
                              None if self.h is None else np.asarray(self.h[index]), self.ctx)

    def __setitem__(self, index, item):
        leader = leader_of((self, item))
        if leader is not None and leader.tag > self.tag:
            raise TypeError(
                "cannot store a value of an inner transform into an array made outside it; "
                "allocate the buffer inside the differentiated function, e.g. np.zeros_like(x)")
        value, g, h = self.split(item)
        old = self.value
        self.value = assign(old, index, value)
        if self.value is not old or not self.g.flags.writeable:
            # the value had to be copied (read-only): the ids follow, so they stay one array
            self.g = self.g.copy()
            self.h = None if self.h is None else self.h.copy()
        self.g[index] = 0 if g is None else g
        if self.h is not None:
            self.h[index] = 0 if h is None else h


# ---- NumPy functions by kind ------------------------------------------------------------------
def _ids_of(split, which):
    """The id arrays of split operands (which: 1 for g, 2 for h), zeros for constants (laid
    out as their values)."""
    return [strided_as(_zeros(np.shape(s[0])), unwrapped(s[0])) if s[which] is None else s[which]
            for s in split]


def _call_on_ids(call, ids):
    out = np.asarray(call(ids))
    if out.size and out.min() < 0:  # new constant entries (np.pad's constant) are -1
        out = np.where(out < 0, 0, out)
    return out


def _selection(entry):
    def impl(*args, **kwargs):
        operands, call = entry.impl(*args, **kwargs)
        leader = leader_of((operands,))
        if not isinstance(leader, SparsityTracer):
            return call(operands)  # only where's condition is a tracer, or a newer layer leads
        split = [leader.split(op) for op in operands]
        values = [v for v, _, _ in split]
        value = call(values)
        if all(g is None for _, g, _ in split):
            return value
        g = _call_on_ids(call, _ids_of(split, 1))
        h = None if leader.ctx.h is None else _call_on_ids(call, _ids_of(split, 2))
        if any(is_layer(v) for v in values) and any(
                s[1] is not None and np.may_share_memory(g, s[1]) for s in split):
            # an older layer's value is not a view of its operand: neither are the ids
            g, h = g.copy(), None if h is None else h.copy()
        return leader._new(value, g, h)
    return impl


def _bound(entry, args, kwargs):
    return inspect.signature(entry.impl).bind(*args, **kwargs).arguments


def _relabel(ctx, which, ids, labels, n_rows):
    """Sets of n_rows new rows, row labels[i] receiving ids[i] (flat arrays)."""
    table = ctx.g if which == 1 else ctx.h
    builder = Builder(table, n_rows)
    builder.add_rows(labels, ids)
    return builder.ids()


def _sum_sets(t, axes, keepdims):
    """The sets of np.sum(t, axes): each output entry, the union over its reduced lane."""
    shape = t.shape
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    out_shape = kept if keepdims else tuple(n for i, n in enumerate(shape) if i not in axes)
    n_out = math.prod(kept)
    if n_out == math.prod(shape):  # nothing is merged (the reduced axes have length 1)
        return [None if ids is None else ids.reshape(out_shape).copy() for ids in (t.g, t.h)]
    labels = np.broadcast_to(np.arange(n_out, dtype=np.int64).reshape(kept), shape).reshape(-1)
    return [None if ids is None else _relabel(t.ctx, k, ids.reshape(-1), labels, n_out).reshape(out_shape)
            for k, ids in ((1, t.g), (2, t.h))]


def _cumsum_sets(t, axis):
    """The sets of np.cumsum(t, axis): entry k of a lane, the union of entries 0..k."""
    moved_shape = tuple(n for i, n in enumerate(t.shape) if i != axis) + (t.shape[axis],)
    length, lanes = t.shape[axis], math.prod(moved_shape[:-1])
    later, earlier = np.tril_indices(length)  # out position ≥ in position
    lane = np.repeat(np.arange(lanes, dtype=np.int64), len(later))
    labels = lane * length + np.tile(later, lanes)
    sources = lane * length + np.tile(earlier, lanes)
    out = []
    for k, ids in ((1, t.g), (2, t.h)):
        if ids is None:
            out.append(None)
            continue
        flat = np.moveaxis(ids, axis, -1).reshape(-1)
        merged = _relabel(t.ctx, k, flat[sources], labels, lanes * length)
        out.append(np.moveaxis(merged.reshape(moved_shape), -1, axis))
    return out


def _linear(entry):
    def impl(*args, **kwargs):
        operand, value_fn, apply, _ = entry.impl(*args, **kwargs)
        if not isinstance(operand, SparsityTracer):
            return value_fn(operand)  # a newer layer was stacked from a list: it takes the call
        value = value_fn(operand.value)
        if entry.func is np.sum:
            bound = _bound(entry, args, kwargs)
            g, h = _sum_sets(operand, axes_of(bound.get("axis"), operand.ndim),
                             bound.get("keepdims", False) is True)
        elif entry.func is np.cumsum:
            axis = _bound(entry, args, kwargs).get("axis")
            g, h = _cumsum_sets(operand, 0 if axis is None else axes_of(axis, operand.ndim)[0])
        else:
            # the entry's linear map run on the tracer itself: weights · t summed over the
            # reduced axes (a weight is a partial that counts whatever its value)
            mapped = apply(operand, 0)
            if not isinstance(mapped, SparsityTracer):
                return value
            g, h = mapped.g, mapped.h
        return operand._new(value, g, h)
    return impl


# ---- multilinear: the einsum's index assignments --------------------------------------------
def _assignments(letters, terms, masks, sizes):
    """Coordinates (letter -> index array) of the assignments of `letters` at which every
    constant operand (mask not None) is nonzero for some value of its other letters."""
    shape = tuple(sizes[c] for c in letters)
    constant = [j for j, m in enumerate(masks) if m is not None]
    if not letters:
        # 0-d operands only (np.dot(x[0], x[1])): one assignment, reached where every constant
        # is nonzero; the key "" (never a letter) carries how many there are to _flat_index
        reached = all(bool(masks[j]) for j in constant)
        return {"": np.zeros(1 if reached else 0, dtype=np.intp)}
    if constant:
        present = [c for c in letters if any(c in terms[j] for j in constant)]
        reached = np.einsum(",".join(terms[j] for j in constant) + "->" + "".join(present),
                            *[masks[j] for j in constant]) > 0
        reached = reached.reshape([sizes[c] if c in present else 1 for c in letters])
        coords = np.nonzero(np.broadcast_to(reached, shape))
    else:
        coords = tuple(np.indices(shape).reshape(len(shape), -1))
    return dict(zip(letters, coords))


def _flat_index(coords, term, shape):
    if not term:
        return np.zeros(len(next(iter(coords.values()), ())), dtype=np.int64)
    return np.ravel_multi_index(tuple(coords[c] for c in term), shape).astype(np.int64)


def _multilinear(entry):
    def impl(*args, **kwargs):
        operands, value_fn, subscripts = entry.impl(*args, **kwargs)
        leader = leader_of((operands,))
        if not isinstance(leader, SparsityTracer):
            return value_fn(*operands)  # a newer layer was hidden in a list operand
        ctx = leader.ctx
        split = [leader.split(op) for op in operands]
        values = [v for v, _, _ in split]
        value = value_fn(*values)
        traced = [k for k, (_, g, _) in enumerate(split) if g is not None]
        shapes = [np.shape(v) for v in values]
        terms, output, sizes = explicit_terms(subscripts, shapes)
        out_shape = np.shape(value)
        if not traced or 0 in sizes.values():
            return value  # no traced operand, or an empty sum: no dependence
        masks = [None if g is not None else (np.asarray(primal(v)) != 0).astype(np.float64)
                 for v, g, _ in split]
        n_out = math.prod(out_shape)
        g_rows = Builder(ctx.g, n_out)
        h_rows = None if ctx.h is None else Builder(ctx.h, n_out)
        for k in traced:
            coords = _assignments(list(dict.fromkeys(output + terms[k])), terms, masks, sizes)
            o = _flat_index(coords, output, out_shape)
            e = _flat_index(coords, terms[k], shapes[k])
            g_rows.add_rows(o, split[k][1].reshape(-1)[e])
            if h_rows is not None:
                h_rows.add_rows(o, split[k][2].reshape(-1)[e])
        if h_rows is not None:  # products of two traced operands' entries met in one term
            for a in traced:
                for b in traced:
                    if a < b:
                        coords = _assignments(list(dict.fromkeys(output + terms[a] + terms[b])),
                                              terms, masks, sizes)
                        cross(ctx.g, split[a][1].reshape(-1)[_flat_index(coords, terms[a], shapes[a])],
                              split[b][1].reshape(-1)[_flat_index(coords, terms[b], shapes[b])],
                              _flat_index(coords, output, out_shape), h_rows, ctx.n)
        return leader._new(value, g_rows.ids().reshape(out_shape),
                           None if h_rows is None else h_rows.ids().reshape(out_shape))
    return impl


# ---- linear algebra: every output entry on every input entry -----------------------------------
def _jvp(entry):
    def impl(*args, **kwargs):
        operands, jvp = entry.impl(*args, **kwargs)
        leader = leader_of((operands,))
        if leader is None:
            return entry.func(*args, **kwargs)
        if not isinstance(leader, SparsityTracer):  # a newer layer was hidden in a list
            return leader.__array_function__(entry.func, (type(leader),), args, kwargs)
        ctx = leader.ctx
        split = [leader.split(op) for op in operands]
        values = [v for v, _, _ in split]
        traced = [k for k, (_, g, _) in enumerate(split) if g is not None]
        # which outputs carry a tangent (slogdet's sign does not): the entry's JVP on zero
        # tangents (warnings of the tangent arithmetic are the JVP's, not f's)
        tangents = [np.zeros(np.shape(v) + (1,)) if k in traced else None for k, v in enumerate(values)]
        with np.errstate(all="ignore"):
            value, tangent = jvp(*values, *tangents)
        g_rows = Builder(ctx.g, 1)
        for k in traced:
            g_rows.add_rows(np.zeros(np.size(values[k]), dtype=np.int64), split[k][1].reshape(-1))
        g_all = g_rows.ids()
        h_all = None
        if ctx.h is not None:
            h_rows = Builder(ctx.h, 1)
            for k in traced:
                h_rows.add_rows(np.zeros(np.size(values[k]), dtype=np.int64), split[k][2].reshape(-1))
            if not (entry.func is np.linalg.solve and traced == [1]):  # x = A⁻¹b is linear in b
                cross(ctx.g, g_all, g_all, np.zeros(1, dtype=np.int64), h_rows, ctx.n)
            h_all = h_rows.ids()

        def output(v, t):
            if t is None:
                return v
            shape = np.shape(v)
            return leader._new(v, np.full(shape, g_all[0]),
                               None if h_all is None else np.full(shape, h_all[0]))

        if not isinstance(value, tuple):
            return output(value, tangent)
        items = [output(v, t) for v, t in zip(value, tangent)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return impl


build(FUNCTIONS, _selection, _linear, _multilinear, _jvp)
