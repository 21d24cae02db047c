"""NumPy functions on traced arrays (``__array_function__``), each with its VJP.

Five kinds, each handled once:
  * selections (reshape, transpose, stacking, roll, take, where, ...): `traced.select`;
  * reductions: sum (cotangent broadcast back), cumsum (reversed cumsum), max/min (ties
    share the cotangent evenly, as in the forward path and JAX);
  * multilinear (einsum, matmul, dot, inner): the cotangent of operand k is an einsum of the
    output's cotangent with the other operands (reverse by transposition);
  * linear algebra (det, inv, solve): the VJP is the transpose of the JVP in rules.py,
    found by running that JVP on a traced tangent and sweeping it back, so no formula is
    written again; a solve with a constant matrix is the one linear map transposed by hand
    (solve(A, ·)ᵀ = solve(Aᵀ, ·));
  * compositions of primitives shared with the forward path (clip, outer, prod, diff, norm,
    mean, trace), value-only functions, and constant buffers (zeros_like, ...).
"""

from __future__ import annotations

import math
import string

import numpy as np

from .. import rules
from ..numpy_functions import (COMPOSITIONS, VALUE_ONLY, axes_of, dot_subscripts,
                               inner_subscripts, matmul_subscripts, parse_subscripts, registrar,
                               reject_options, stack_lists)
from ..number import is_layer, primal
from .tape import Tape, unbroadcast
from .traced import FUNCTIONS, Traced, leading_tape, leaf, record, selection, value_and_node

__all__ = ["FUNCTIONS"]


implements = registrar(FUNCTIONS)


def _tape(*args):
    tape = leading_tape(args)
    if tape is None:  # pragma: no cover - __array_function__ checks the leader first
        raise AssertionError("no traced operand leads")
    return tape


# ---- selections ---------------------------------------------------------------------------
def _select_one(func):
    def impl(a, *args, **kwargs):
        return selection(lambda arrays: func(arrays[0], *args, **kwargs), [a], _tape(a), may_view=True)
    return impl


for _func in (np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze,
              np.expand_dims, np.broadcast_to, np.copy, np.roll, np.flip, np.take,
              np.take_along_axis, np.diagonal):
    FUNCTIONS[_func] = _select_one(_func)


def _select_many(func):
    def impl(arrays, *args, **kwargs):
        operands = [stack_lists(x) for x in arrays]
        if leading_tape((operands,)) is None:  # a newer forward layer was hidden in a nested list
            return func(operands, *args, **kwargs)
        return selection(lambda values: func(values, *args, **kwargs), operands, _tape(operands))
    return impl


for _func in (np.concatenate, np.stack, np.hstack, np.vstack):
    FUNCTIONS[_func] = _select_many(_func)


@implements(np.atleast_1d)
def atleast_1d(*arrays):
    out = [np.reshape(a, (1,)) if np.ndim(a) == 0 else a for a in arrays]
    return out[0] if len(out) == 1 else out


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None):
    if axis is None:
        a, axis = np.ravel(a), 0
    return np.take_along_axis(a, np.argsort(primal(a), axis=axis, kind=kind), axis)


@implements(np.where)
def where(condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(primal(condition))
    cond = np.asarray(primal(condition), dtype=bool)
    x, y = stack_lists(x), stack_lists(y)
    tape = leading_tape((condition, x, y))
    if tape is None or leading_tape((x, y)) is not tape:
        # only the condition is on this tape (x, y are floats or numbers of older layers), or
        # a newer layer was hidden in a list: the layer leading x and y takes the call
        return np.where(cond, x, y)
    return selection(lambda values: np.where(cond, values[0], values[1]), [x, y], tape)


def _constant_buffer(make):
    def like(a, *args, dtype=None, shape=None, **kwargs):
        value = make(a.value, *args, shape=shape, **kwargs)
        if dtype is not None and np.dtype(dtype).kind != "f":
            return np.asarray(primal(value)).astype(dtype)
        return leaf(value, a.tape)  # a buffer whose writes the tape records
    return like


FUNCTIONS[np.zeros_like] = _constant_buffer(lambda v, shape=None, **kw: np.zeros_like(v, shape=shape))
FUNCTIONS[np.empty_like] = FUNCTIONS[np.zeros_like]
FUNCTIONS[np.ones_like] = _constant_buffer(lambda v, shape=None, **kw: np.ones_like(v, shape=shape))


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, shape=None, **kwargs):
    if is_layer(fill_value):
        filled = np.broadcast_to(fill_value, np.shape(a) if shape is None else shape).copy()
        # a fill value of an older layer is a constant here: a buffer on a's tape holding it
        return filled if not is_layer(a) or fill_value.tag >= a.tag else a.constant(filled)
    return _constant_buffer(lambda v, shape=None: np.full_like(v, fill_value, shape=shape))(
        a, dtype=dtype, shape=shape)


# ---- reductions ---------------------------------------------------------------------------
def _expand_back(c, axes, keepdims, shape):
    """A reduced cotangent broadcast back over the reduced axes of an operand of `shape`."""
    if not keepdims:
        c = np.expand_dims(c, axes) if axes else c
    return np.broadcast_to(c, shape)


@implements(np.sum)
def sum_(a, axis=None, dtype=None, out=None, keepdims=False):
    value, node = value_and_node(a, a.tape)
    shape = np.shape(value)
    axes = axes_of(axis, len(shape))
    keep = keepdims is True
    return record(a.tape, np.sum(value, axis=axes, keepdims=keep), (node,),
                  lambda c: (_expand_back(c, axes, keep, shape),))


@implements(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    count = math.prod(np.shape(a)[i] for i in axes_of(axis, np.ndim(a)))
    return np.sum(a, axis=axis, keepdims=keepdims) / count


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return np.sum(np.diagonal(a, offset, axis1, axis2), axis=-1)


@implements(np.cumsum)
def cumsum(a, axis=None, dtype=None, out=None):
    if axis is None:
        a, axis = np.ravel(a), 0
    value, node = value_and_node(a, a.tape)
    ax = axes_of(axis, np.ndim(value))[0]
    return record(a.tape, np.cumsum(value, axis=ax), (node,),
                  lambda c: (np.flip(np.cumsum(np.flip(c, ax), axis=ax), ax),))


def _chooser(choose):
    def reduce(a, axis=None, out=None, keepdims=False):
        value, node = value_and_node(a, a.tape)
        axes = axes_of(axis, np.ndim(value))
        best = choose(value, axis=axes, keepdims=True)
        mask = np.asarray(primal(value) == primal(best), dtype=np.float64)
        weights = mask / np.sum(mask, axis=axes, keepdims=True)
        keep = keepdims is True
        result = best if keep else np.squeeze(best, axis=axes)
        return record(a.tape, result, (node,),
                      lambda c: (weights * _expand_back(c, axes, keep, np.shape(value)),))
    return reduce


FUNCTIONS[np.max] = FUNCTIONS[np.amax] = _chooser(np.max)
FUNCTIONS[np.min] = FUNCTIONS[np.amin] = _chooser(np.min)


# ---- multilinear: einsum transposed ----------------------------------------------------------
def _fresh_letters(used, subscripts):
    """A function giving, call by call, letters not in `used` (which it extends)."""
    def fresh():
        letter = next((c for c in string.ascii_letters if c not in used), None)
        if letter is None:
            raise ValueError(f"einsum '{subscripts}': too many axes for reverse mode to name "
                             "each by a letter (52 at most); split the einsum in two")
        used.add(letter)
        return letter
    return fresh


def _explicit_terms(subscripts, shapes):
    """The einsum with every axis named by its own letter: (input terms, output term, sizes).

    '...' becomes letters of the broadcast ellipsis axes (right-aligned, so an operand whose
    '...' is shorter or empty gets only the last ones), and an operand axis of length 1 that
    broadcasts against a longer axis of the same letter gets a letter of its own. Then every
    letter has one length in all operands, and the transposed einsums need no broadcasting.
    """
    inputs, output = parse_subscripts(subscripts)
    fresh = _fresh_letters(set(subscripts), subscripts)
    lengths = [len(shape) - len(t.replace("...", ""))
               for t, shape in zip(inputs, shapes) if "..." in t]
    ellipsis = [fresh() for _ in range(max(lengths, default=0))]
    terms = []
    for term, shape in zip(inputs, shapes):
        if "..." in term:
            head, tail = term.split("...")
            n = len(shape) - len(head) - len(tail)
            term = head + "".join(ellipsis[len(ellipsis) - n:]) + tail
        terms.append(list(term))
    output = output.replace("...", "".join(ellipsis))
    sizes = {}
    for term, shape in zip(terms, shapes):
        for letter, n in zip(term, shape):
            sizes[letter] = max(sizes.get(letter, 1), n)
    for term, shape in zip(terms, shapes):
        for axis, (letter, n) in enumerate(zip(term, shape)):
            if n == 1 and sizes[letter] > 1:
                term[axis] = fresh()
                sizes[term[axis]] = 1
    return ["".join(t) for t in terms], output, sizes


def _einsum_vjp(terms, output, sizes, values, k, c):
    """Cotangent of operand k of einsum(terms -> output): c contracted with the other operands
    onto k's axes. A letter of k found nowhere else was summed inside k alone: a ones vector
    broadcasts c back along it. A letter repeated in k (a diagonal, 'ii->i') is written once
    and copied onto the other occurrences by an identity matrix: ∂/∂A_ij = δ_ij ∂/∂A_ii."""
    own = terms[k]
    fresh = _fresh_letters(set(sizes), ",".join(terms) + "->" + output)
    others = [t for j, t in enumerate(terms) if j != k]
    elsewhere = set(output).union(*others)
    target, eyes = [], []
    for letter in own:
        if letter in target:
            target.append(fresh())
            eyes.append((letter + target[-1], np.eye(sizes[letter])))
        else:
            target.append(letter)
    ones = [(x, np.ones(sizes[x])) for x in dict.fromkeys(own)
            if x not in elsewhere and own.count(x) == 1]
    extra = ones + eyes
    subs = ",".join([output] + others + [t for t, _ in extra]) + "->" + "".join(target)
    operands = [c] + [v for j, v in enumerate(values) if j != k] + [a for _, a in extra]
    big = not any(is_layer(a) for a in operands) and sum(np.size(a) for a in operands) > 4096
    return np.einsum(subs, *operands, optimize=big)


def _einsum(subscripts, *operands):
    if leading_tape(operands) is None:  # a newer forward layer was hidden in a list operand
        return np.einsum(subscripts, *operands)
    tape = _tape(*operands)
    split_operands = [value_and_node(op, tape) for op in operands]
    values = [v for v, _ in split_operands]
    value = np.einsum(subscripts, *values)
    terms, output, sizes = _explicit_terms(subscripts, [np.shape(v) for v in values])
    traced = [k for k, (_, node) in enumerate(split_operands) if node is not None]
    return record(tape, value, [split_operands[k][1] for k in traced],
                  lambda c: tuple(_einsum_vjp(terms, output, sizes, values, k, c)
                                  for k in traced))


@implements(np.einsum)
def einsum(subscripts, *operands, out=None, optimize=False, **kwargs):
    reject_options(dict(out=out, **kwargs), "einsum")
    if not isinstance(subscripts, str):
        raise TypeError("einsum of traced values takes the subscripts as a string "
                        "(np.einsum('ij,jk->ik', a, b)), not the interleaved list form")
    return _einsum(subscripts, *[stack_lists(op) for op in operands])


@implements(np.matmul)
def matmul(a, b):
    a, b = stack_lists(a), stack_lists(b)
    return _einsum(matmul_subscripts(np.ndim(a), np.ndim(b)), a, b)


@implements(np.dot)
def dot(a, b, out=None):
    reject_options(dict(out=out), "dot")
    a, b = stack_lists(a), stack_lists(b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    return _einsum(dot_subscripts(np.ndim(a), np.ndim(b)), a, b)


@implements(np.inner)
def inner(a, b):
    a, b = stack_lists(a), stack_lists(b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    return _einsum(inner_subscripts(np.ndim(a), np.ndim(b)), a, b)


# ---- linear algebra: VJP = the JVP transposed -----------------------------------------------------
def _transposed_jvp(jvp, values, k, c):
    """Jᵀc for operand k of jvp(*values, *tangents): jvp is linear in tangent k, so run it on
    a traced tangent (one direction) and sweep the cotangent back through it."""
    inner_tape = Tape()
    tangents = [None] * len(values)
    tangent = Traced(np.zeros(np.shape(values[k]) + (1,)), inner_tape, inner_tape.record((), None))
    tangents[k] = tangent
    _, out_tangent = jvp(*values, *tangents)
    (grad,) = inner_tape.backward(out_tangent.node, np.expand_dims(c, -1), [tangent.node])
    return grad[..., 0]


def _linear_algebra(func, jvp, n_operands):
    def impl(*operands):
        operands = operands[:n_operands]
        tape = _tape(*operands)
        split_operands = [value_and_node(op, tape) for op in operands]
        values = [v for v, _ in split_operands]
        value = func(*values)
        traced = [k for k, (_, node) in enumerate(split_operands) if node is not None]
        return record(tape, value, [split_operands[k][1] for k in traced],
                      lambda c: tuple(_transposed_jvp(jvp, values, k, c) for k in traced))
    return impl


FUNCTIONS[np.linalg.det] = _linear_algebra(np.linalg.det, rules.det_jvp, 1)
FUNCTIONS[np.linalg.inv] = _linear_algebra(np.linalg.inv, rules.inv_jvp, 1)
_solve = _linear_algebra(np.linalg.solve, rules.solve_jvp, 2)


@implements(np.linalg.solve)
def solve(a, b):
    tape = _tape(a, b)
    a_value, a_node = value_and_node(a, tape)
    if a_node is not None:
        return _solve(a, b)
    # x = A⁻¹ b with A constant is linear in b, with transpose c ↦ A⁻ᵀ c, summed over the
    # stack axes along which b was broadcast. This is the base case the transposed JVPs above
    # reduce to. A 1-d b is one vector for every matrix of the stack: c is solved as columns.
    b_value, b_node = value_and_node(b, tape)
    a_transposed = np.swapaxes(a_value, -1, -2)

    def vjp(c):
        if np.ndim(b_value) == 1:
            return (unbroadcast(np.linalg.solve(a_transposed, np.expand_dims(c, -1))[..., 0],
                                np.shape(b_value)),)
        return (unbroadcast(np.linalg.solve(a_transposed, c), np.shape(b_value)),)

    return record(tape, np.linalg.solve(a_value, b_value), (b_node,), vjp)


# ---- compositions shared with the forward path, value-only functions ------------------------
FUNCTIONS.update(COMPOSITIONS)
for _func in VALUE_ONLY:
    FUNCTIONS[_func] = (lambda func: lambda *args, **kwargs: func(
        *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()}))(_func)


@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    return np.round(a.value, decimals)  # piecewise constant: no cotangent flows back
