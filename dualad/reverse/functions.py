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

import numpy as np

from .. import rules
from ..numpy_functions import (COMPOSITIONS, VALUE_ONLY, axes_of, dot_subscripts,
                               inner_subscripts, matmul_subscripts, parse_subscripts, registrar)
from ..number import is_layer, primal
from .tape import Tape, unbroadcast
from .traced import FUNCTIONS, Traced, leading_tape, leaf, record, select, split

__all__ = ["FUNCTIONS"]


implements = registrar(FUNCTIONS)


def _tape(*args):
    tape = leading_tape(args)
    if tape is None:  # pragma: no cover - __array_function__ checks the leader first
        raise AssertionError("no traced operand leads")
    return tape


def _stacked(x):
    """An operand of a stacking function: a list holding traced values is stacked first."""
    if isinstance(x, (list, tuple)) and any(is_layer(item) for item in x):
        return np.stack(list(x))
    return x


# ---- selections ---------------------------------------------------------------------------
def _select_one(func):
    def impl(a, *args, **kwargs):
        return select(lambda arrays: func(arrays[0], *args, **kwargs), [a], _tape(a), may_view=True)
    return impl


for _func in (np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze,
              np.expand_dims, np.broadcast_to, np.copy, np.roll, np.flip, np.take,
              np.take_along_axis, np.diagonal):
    FUNCTIONS[_func] = _select_one(_func)


def _select_many(func):
    def impl(arrays, *args, **kwargs):
        operands = [_stacked(x) for x in arrays]
        return select(lambda values: func(values, *args, **kwargs), operands, _tape(operands))
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
    return select(lambda values: np.where(cond, values[0], values[1]), [x, y], _tape(x, y))


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
        return np.broadcast_to(fill_value, np.shape(a) if shape is None else shape).copy()
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
    value, node = split(a, a.tape)
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
    value, node = split(a, a.tape)
    ax = axes_of(axis, np.ndim(value))[0]
    return record(a.tape, np.cumsum(value, axis=ax), (node,),
                  lambda c: (np.flip(np.cumsum(np.flip(c, ax), axis=ax), ax),))


def _chooser(choose):
    def reduce(a, axis=None, out=None, keepdims=False):
        value, node = split(a, a.tape)
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
def _letters(term):
    return [c for c in term.replace("...", "") if c.isalpha()]


def _sizes(term, shape):
    """Index letter -> axis length of an operand with this term and shape."""
    if "..." in term:
        head, tail = term.split("...")
        return dict(zip(head + tail, shape[:len(head)] + shape[len(shape) - len(tail):]))
    return dict(zip(term, shape))


def _einsum(subscripts, *operands):
    tape = _tape(*operands)
    inputs, output = parse_subscripts(subscripts)
    split_operands = [split(op, tape) for op in operands]
    values = [v for v, _ in split_operands]
    value = np.einsum(subscripts, *values)
    traced = [k for k, (_, node) in enumerate(split_operands) if node is not None]
    for k in traced:
        letters = _letters(inputs[k])
        if len(set(letters)) != len(letters):
            raise TypeError(f"einsum '{subscripts}': reverse mode does not transpose an operand "
                            "with a repeated index (a diagonal); use np.diagonal first")

    def cotangent(k, c):
        # ∂out/∂operand k: contract c with the other operands onto k's indices. An index of
        # k that appears nowhere else was summed inside k alone: a ones array over it
        # broadcasts the cotangent back along it.
        own = inputs[k]
        others = [t for j, t in enumerate(inputs) if j != k]
        elsewhere = set(_letters(output)).union(*(_letters(t) for t in others))
        only_here = "".join(x for x in _letters(own) if x not in elsewhere)
        extra = [np.ones([_sizes(own, np.shape(values[k]))[x] for x in only_here])] if only_here else []
        subs = ",".join([output] + others + ([only_here] if only_here else [])) + "->" + own
        grad = np.einsum(subs, c, *[v for j, v in enumerate(values) if j != k], *extra)
        return unbroadcast(grad, np.shape(values[k]))

    return record(tape, value, [split_operands[k][1] for k in traced],
                  lambda c: tuple(cotangent(k, c) for k in traced))


@implements(np.einsum)
def einsum(subscripts, *operands, out=None, optimize=False):
    return _einsum(subscripts, *operands)


@implements(np.matmul)
def matmul(a, b):
    return _einsum(matmul_subscripts(np.ndim(a), np.ndim(b)), a, b)


@implements(np.dot)
def dot(a, b, out=None):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    return _einsum(dot_subscripts(np.ndim(a), np.ndim(b)), a, b)


@implements(np.inner)
def inner(a, b):
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
        split_operands = [split(op, tape) for op in operands]
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
    a_value, a_node = split(a, tape)
    if a_node is not None:
        return _solve(a, b)
    # x = A⁻¹ b with A constant is linear in b, with transpose c ↦ A⁻ᵀ c. This is the base
    # case the transposed JVPs above reduce to.
    b_value, b_node = split(b, tape)
    return record(tape, np.linalg.solve(a_value, b_value), (b_node,),
                  lambda c: (np.linalg.solve(np.swapaxes(a_value, -1, -2), c),))


# ---- compositions shared with the forward path, value-only functions ------------------------
FUNCTIONS.update(COMPOSITIONS)
for _func in VALUE_ONLY:
    FUNCTIONS[_func] = (lambda func: lambda *args, **kwargs: func(
        *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()}))(_func)


@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    return np.round(a.value, decimals)  # piecewise constant: no cotangent flows back
