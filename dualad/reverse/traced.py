"""Traced: a float or array of f's computation under reverse mode, recorded on a tape.

A traced value is its ``value`` (a float, an ndarray, or a number of an older layer) and the
id of the tape node that made it. Operations make new nodes:

  * elementwise rules: the node keeps the rule's first partials, evaluated in this run,
    and its VJP is  cotangent(x_k) = Σ_broadcast ∂y/∂x_k · cotangent(y);
  * selections (indexing, reshape, transpose, roll, stack, concatenate, where, item
    assignment, ...): each output entry is one input entry or a constant. Running the same
    operation on integer position arrays tells which, once, and the VJP adds the output's
    cotangent back onto those positions (`selection`);
  * the rest (sums, einsum and friends, linear algebra) in ``functions.py``.

Mutation follows NumPy. ``y[i] = v`` records a new node for y (the old entries at i get no
cotangent from later uses). A basic-indexing result that NumPy would make a view (``y[1:]``,
``y.T``, ``y.reshape(...)``) remembers where its entries live in its base array: writing
through it writes the base, and reading it after the base changed reads the new entries.
"""

from __future__ import annotations

import math

import numpy as np

from ..number import (ArrayLike, ForwardNumber, assign, constant_positions, from_objects, is_layer,
                      leader_of, positions, primal)
from .tape import Scattered, scatter_add, set_entries, unbroadcast

__all__ = ["Traced", "leaf", "value_and_node", "record", "selection", "FUNCTIONS"]

# NumPy function -> implementation on traced arrays; filled by functions.py.
FUNCTIONS: dict = {}


class Traced(ArrayLike):
    """A value on a reverse-mode tape."""

    __slots__ = ("_value", "_node", "tape", "_version", "_base", "_positions", "_position_fn",
                 "_base_version")
    __array_priority__ = 100  # ndarray ⊕ traced defers to the traced operand
    _functions = FUNCTIONS

    def __init__(self, value, tape, node):
        self._value, self._node, self.tape = value, node, tape
        self._version = 0  # bumped on every write, so views of this array can resync
        # a view: the root array it reads, since which root version, and where its entries
        # sit in the root (flat positions, computed on first need by _position_fn)
        self._base = self._positions = self._position_fn = self._base_version = None

    @classmethod
    def _leads(cls, leader):
        return isinstance(leader, Traced)

    @property
    def tag(self):
        return self.tape.tag

    def constant(self, x):
        """x (an array of older layers or floats) on this tape, as a constant buffer that
        item assignment can fill with traced values."""
        return leaf(np.array(x, dtype=float) if not is_layer(x) else x.copy(), self.tape)

    @property
    def value(self):
        self._sync()
        return self._value

    @property
    def node(self):
        self._sync()
        return self._node

    def __repr__(self):
        return f"Traced(value={self.value!r}, node={self.node})"

    def _apply_rule(self, rule, args):
        return apply_rule(rule, args)

    # ---- indexing, views and mutation --------------------------------------------------
    def __getitem__(self, index):
        if isinstance(index, ArrayLike) or (isinstance(index, tuple) and any(isinstance(i, ArrayLike) for i in index)):
            raise TypeError("a traced value cannot be used as an index: indices are not "
                            "differentiable; use int(dualad.primal(i)) if you mean its value")
        if not _is_basic(index):
            return selection(lambda arrays: arrays[0][index], [self], self.tape)
        # basic indexing: the cotangent goes back as a Scattered piece, which the sweep adds
        # in place (no zeros of the whole array, no position arrays); the result is a view,
        # as in NumPy
        value, node = self.value, self.node
        shape = np.shape(value)
        result = record(self.tape, value[index], (node,), lambda c: (Scattered(shape, index, c),))
        if np.ndim(result._value) > 0:
            _make_view(result, self, lambda positions: positions[index])
        return result

    def __setitem__(self, index, item):
        if self._base is not None:
            # a view: the entries live in the base array
            root = self._base
            root._write(np.unravel_index(self._root_positions()[index], root.shape), item)
            self._sync()
            return
        self._write(index, item)

    def _root_positions(self):
        """Flat positions of this array's entries in its root array (itself when not a view),
        laid out in memory as the root's values are (NumPy's order='K' results, np.sin(m.T),
        are F-ordered), so that probing a call on them finds NumPy's view-or-copy choice."""
        if self._base is None:
            return positions(np.shape(self._value), self._value)
        if self._positions is None:
            self._positions, self._position_fn = np.asarray(self._position_fn()), None
        return self._positions

    def _write(self, index, item):
        leader = leader_of((self, item))
        if leader is not None and leader.tag > self.tag:
            raise TypeError(
                "cannot store a value of an inner transform into an array made outside it; "
                "allocate the buffer inside the differentiated function, e.g. np.zeros_like(x)")
        if np.ndim(self._value) == 0:
            raise TypeError("cannot assign into an element of a scalar")
        item_value, item_node = value_and_node(item, self.tape)
        value = self._value.copy(order="K")  # an ndarray or a forward layer's number: its layout kept
        shape = np.shape(value)
        value = assign(value, index, item_value)
        item_shape = np.shape(item_value)
        basic = _is_basic(index)

        def vjp(c):
            kept = set_entries(c, index, 0.0)  # overwritten entries no longer reach the output
            if item_node is None:
                return (kept,)
            if basic:  # each target entry once: c[index] is the item's (broadcast) cotangent
                return kept, unbroadcast(c[index], item_shape)
            return kept, _written_cotangent(c, shape, index, item_shape)

        nodes = (self._node,) if item_node is None else (self._node, item_node)
        self._value, self._node = value, self.tape.record(nodes, vjp)
        self._version += 1

    def _sync(self):
        base = self._base
        if base is not None and base._version != self._base_version:
            where = self._root_positions()  # laid out as NumPy lays out this view

            # the entries read again from the root, by one index array laid out as the view
            # is: NumPy lays out the result as the index (y.T of a C array is F-ordered; a C
            # copy would make NumPy's later view-or-copy choices on it, (y.T * 1.0).reshape(-1),
            # another than NumPy's), and so do the layers' selections, tangents included
            fresh = selection(lambda arrays: arrays[0].reshape(-1)[where], [base], base.tape)
            self._value, self._node = fresh._value, fresh._node
            self._base_version = base._version

    def copy(self, order="C"):
        return selection(lambda arrays: arrays[0].copy(order=order), [self], self.tape)

    def fresh(self):
        """The same value and node in a new object (number.fresh): writes into it record a
        new node for it alone. Entries are never written in place (see _write)."""
        return Traced(self.value, self.tape, self.node)


def _written_cotangent(c, shape, index, item_shape):
    """The cotangent of the item of y[index] = item for an integer or boolean index: NumPy
    writes entry by entry, so where the index repeats a position the last write wins (y[[1,
    1]] = v stores v[1]) and only the item entries that survive in y receive its cotangent;
    an item entry broadcast to several positions receives their sum."""
    size = math.prod(item_shape)
    landed = np.full(shape, -1, dtype=np.intp)
    landed[index] = np.arange(size, dtype=np.intp).reshape(item_shape)  # NumPy's own writes
    landed = landed.reshape(-1)
    targets = np.flatnonzero(landed >= 0)
    return np.reshape(scatter_add(size, landed[targets], np.reshape(c, (-1,))[targets]), item_shape)


def leaf(value, tape):
    """A new input (or constant buffer) on the tape: a node with nothing behind it."""
    return Traced(value, tape, tape.record((), None, int(np.size(value))))


def value_and_node(x, tape):
    """(value, node) of x on this tape; node None when x is a constant for it."""
    if isinstance(x, Traced) and x.tape is tape:
        return x.value, x.node
    if isinstance(x, np.ndarray) and x.dtype == object:
        return value_and_node(from_objects(x), tape)
    if isinstance(x, (list, tuple)):  # an operand given as a list, as NumPy takes it
        return value_and_node(from_objects(np.array(x, dtype=object)), tape)
    return x, None


def record(tape, value, nodes, vjp):
    """A traced result: value, made from the given nodes; vjp(c) gives one cotangent per node."""
    size = value.size if type(value) is np.ndarray else int(np.size(value))
    return Traced(value, tape, tape.record(nodes, vjp, size))


def _all_finite(partial):
    """Whether every entry of partial is finite: its sum is (a sum that is finite has no inf
    or nan in it; one that overflows only takes _times's masked product, which is right
    anyway), one pass and no boolean array."""
    total = np.add.reduce(primal(partial), axis=None)
    try:
        return math.isfinite(total)
    except TypeError:  # complex
        return bool(np.isfinite(total))


def leading_tape(args):
    """The tape of the newest layer among args, or None when a forward layer is newer."""
    leader = leader_of(args)
    return leader.tape if isinstance(leader, Traced) else None


def apply_rule(rule, args):
    """An elementwise rule on traced operands: the node keeps the rule's first partials."""
    tape = leading_tape(args)
    if tape is None:
        return NotImplemented
    operands = [value_and_node(a, tape) for a in args]
    xs = [v for v, _ in operands]
    y = rule.value(*xs)
    nodes, partials, shapes, finite = [], [], [], []
    with np.errstate(all="ignore"):
        for k, (x, node) in enumerate(operands):
            if node is None or rule.first[k] is None:
                continue
            nodes.append(node)
            partials.append(rule.first[k](*xs, y))
            shapes.append(np.shape(x))
            finite.append(_all_finite(partials[-1]))
    if not nodes:
        return y  # piecewise constant (floor, sign, ...) or all operands constant here

    def vjp(c):
        return tuple(unbroadcast(_times(p, c, ok), shape) for p, shape, ok in zip(partials, shapes, finite))

    return record(tape, y, nodes, vjp)


def _times(partial, c, finite=True):
    """partial · c, where an entry of c that is 0 contributes 0 against an infinite or nan
    partial (as the compiled tape, which skips a zero adjoint there: a Jacobian row's zero
    cotangent must not turn another row's inf into nan). Only there: a cotangent of value 0
    whose tangents are not (forward-over-reverse) meets every finite partial as a product,
    as it does in a scalar program (a mask over every entry of an array with one non-finite
    partial drops the nan tangents that log(Σ exp(x)) at x0 = inf carries into the finite
    entries)."""
    # add and subtract have partials ±1: skip a multiplication over the whole array
    if type(partial) is float and partial in (1.0, -1.0):
        return c if partial == 1.0 else -c
    if finite:
        return partial * c
    with np.errstate(invalid="ignore"):
        zero = (c == 0) & ~np.isfinite(primal(partial))
        product = partial * c
        if _first_order_dual(c) and _first_order_dual(product) and product.tag == c.tag:
            # a cotangent 0 + ċ·ε (forward-over-reverse) still passes its tangents: (ċ·p)·ε,
            # lane by lane, a zero lane passing nothing. Dropping them with the value makes the
            # Hessian of norm(x)**2 at x = 0 zero, where it is 2·I and each mode can only give
            # nan (sqrt's inf partial meets the nan tangent of 2·norm). The value and ṗ·c are
            # 0 by the convention above.
            p = np.asarray(primal(partial))[..., None]
            lanes = np.where(c.components[0] == 0, 0.0, c.components[0] * p)
            zero = np.broadcast_to(zero, product.value.shape)
            partials, = product.components
            return type(product)._make(
                np.where(zero, 0.0, product.value),
                (np.where(zero[..., None], np.broadcast_to(lanes, partials.shape), partials),),
                product.tag)
        return np.where(zero, 0.0, product)


def _first_order_dual(x):
    """Whether x is a Dual (a forward number of one component, its partials) whose value is
    plain floats."""
    return isinstance(x, ForwardNumber) and len(x.components) == 1 and not is_layer(x.value)


def selection(fn, operands, tape, may_view=False):
    """fn(list of arrays) where every output entry is one operand entry or a constant.

    fn runs on the values, then on integer position arrays (constants at -1: the entries of
    constant operands, and fn may make new ones at -1 too) to learn where
    each output entry comes from; the VJP adds cotangents back to those positions. With
    may_view, a result that NumPy makes a view of a single operand stays one (see module doc).
    """
    split_operands = [value_and_node(op, tape) for op in operands]
    value = fn([v for v, _ in split_operands])
    if len(operands) == 1 and isinstance(operands[0], Traced) and split_operands[0][1] is not None \
            and _same_entries(split_operands[0][0], value):
        # reshape, ravel, squeeze, expand_dims of a C-contiguous array: entry i of the
        # result is entry i of the operand, and the cotangent goes back as a reshape
        (v, node), = split_operands
        shape = np.shape(v)
        result = record(tape, value, (node,), lambda c: (np.reshape(c, shape),))
        # the operand's value as NumPy laid it out (a root, or a view not yet re-read after
        # its root was written, which shares the root's memory): the result shares its
        # memory, so NumPy made a view; else its layout is probed
        root = operands[0]._base
        as_laid_out = root is None or np.may_share_memory(operands[0]._value, root._value)
        if may_view and (as_laid_out or _views(fn, operands[0])):
            _make_view(result, operands[0], lambda positions: fn([positions]))
        return result
    ids, pieces, total = [], [], 0
    for v, node in split_operands:
        # laid out as the values: NumPy reads both in the same order (ravel(order='K'))
        shape = np.shape(v)
        if node is None:
            ids.append(constant_positions(shape, v))
            continue
        size = math.prod(shape)
        ids.append(positions(shape, v, total))
        pieces.append((node, total, size, shape))
        total += size
    if not pieces:
        return value
    out_positions = np.asarray(fn(ids))
    is_view = may_view and len(operands) == 1 and _views(fn, operands[0], ids[0])
    kept = out_positions.reshape(-1)
    # entries at -1 are constants: of a constant operand, or new ones (np.pad's constant)
    mask = kept >= 0
    if mask.all():
        mask = None
    else:
        kept = kept[mask]

    def vjp(c):
        flat = np.reshape(c, (-1,))
        gathered = scatter_add(total, kept, flat if mask is None else flat[mask])
        return tuple(np.reshape(gathered[o:o + size], shape) for _, o, size, shape in pieces)

    result = record(tape, value, [node for node, _, _, _ in pieces], vjp)
    if is_view:
        _make_view(result, operands[0], lambda positions: fn([positions]))
    return result


def _same_entries(operand, result):
    """Whether result is operand's memory read in the same C order: both C-contiguous
    ndarrays of one size starting at one address (then entry i is entry i)."""
    return (type(operand) is np.ndarray and type(result) is np.ndarray
            and operand.size == result.size and operand.flags.c_contiguous
            and result.flags.c_contiguous
            and operand.__array_interface__["data"][0] == result.__array_interface__["data"][0])


def _views(fn, operand, ids=None):
    """Whether NumPy makes fn's result a view of the operand. The choice depends on the
    operand's layout: a view of a root array is probed on its positions in the root
    (np.ravel copies a view with gaps), whose layout its value may not have kept."""
    layout = operand._root_positions() if isinstance(operand, Traced) else ids
    return layout is not None and np.shares_memory(np.asarray(fn([layout])), layout)


def _make_view(result, base, of_positions):
    """Make result a view of base's root: of_positions maps base's root positions to result's."""
    root = base._base if base._base is not None else base
    result._base, result._base_version = root, root._version
    result._position_fn = lambda: of_positions(base._root_positions())


def _is_basic(index):
    """Whether NumPy indexes with this by basic indexing (a view; no entry taken twice)."""
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, np.integer, slice)) or i is None or i is Ellipsis
               for i in items) and not any(isinstance(i, (bool, np.bool_)) for i in items)


