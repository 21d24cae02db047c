"""NumPy functions on traced arrays (``__array_function__``): the reverse tape builds each
function of the registry (dualad/functions) from its kind, once per kind:

  * selection: `traced.selection` (the cotangent goes back along the positions);
  * linear: the entry's transpose carries the cotangent back;
  * multilinear: the cotangent of operand k is an einsum of the output's cotangent with the
    other operands (reverse by transposition);
  * jvp: the VJP is the transpose of the entry's JVP, found by running that JVP once on
    traced tangents and sweeping them back, so no formula is written again; a solve with a constant
    matrix is the one linear map transposed by hand (solve(A, ·)ᵀ = solve(Aᵀ, ·)), the base
    case the others reduce to;
  * composition: the entry's NumPy code itself; value_only: NumPy on the values.
"""

from __future__ import annotations

import functools

import numpy as np

from ..functions.registry import build
from ..functions.multilinear import contract, explicit_terms, fresh_letters
from .tape import Tape, unbroadcast
from .traced import FUNCTIONS, Traced, leading_tape, record, selection, value_and_node

__all__ = ["FUNCTIONS"]


def _selection(entry):
    def impl(*args, **kwargs):
        operands, call = entry.impl(*args, **kwargs)
        tape = leading_tape((operands,))
        if tape is None:
            # no operand is on this tape (only where's condition is), or a newer forward
            # layer was hidden in a list: NumPy's call dispatches to whichever layer leads
            return call(operands)
        return selection(call, operands, tape, may_view=len(operands) == 1)
    return impl


def _linear(entry):
    def impl(*args, **kwargs):
        operand, value_fn, _, transpose = entry.impl(*args, **kwargs)
        if not isinstance(operand, Traced):
            return value_fn(operand)  # a newer forward layer was stacked from a list
        value, node = value_and_node(operand, operand.tape)
        return record(operand.tape, value_fn(value), (node,), lambda c: (transpose(c),))
    return impl


# ---- multilinear: einsum transposed ----------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _einsum_vjps(subscripts, shapes):
    """Per operand k of einsum(subscripts) on operands of these shapes: (the einsum that
    contracts the output's cotangent c with the other operands onto k's axes, the constant
    operands it adds). A letter of k found nowhere else was summed inside k alone: a ones
    vector broadcasts c back along it. A letter repeated in k (a diagonal, 'ii->i') is
    written once and copied onto the other occurrences by an identity matrix:
    ∂/∂A_ij = δ_ij ∂/∂A_ii. Cached: a call site's einsum has the same shapes call after call."""
    terms, output, sizes = explicit_terms(subscripts, list(shapes))
    plans = []
    for k, own in enumerate(terms):
        fresh = fresh_letters(set(sizes), ",".join(terms) + "->" + output)
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
        for _, a in extra:
            a.setflags(write=False)  # shared by every call of the plan
        subs = ",".join([output] + others + [t for t, _ in extra]) + "->" + "".join(target)
        plans.append((subs, tuple(a for _, a in extra)))
    return plans


def _einsum_vjp(plan, values, k, c):
    """Cotangent of operand k: c contracted with the other operands (see _einsum_vjps)."""
    subs, extra = plan
    return contract(subs, c, *(v for j, v in enumerate(values) if j != k), *extra)


def _multilinear(entry):
    def impl(*args, **kwargs):
        operands, value_fn, subscripts = entry.impl(*args, **kwargs)
        tape = leading_tape((operands,))
        if tape is None:  # a newer forward layer was hidden in a list operand
            return value_fn(*operands)
        split_operands = [value_and_node(op, tape) for op in operands]
        values = [v for v, _ in split_operands]
        value = value_fn(*values)
        plans = _einsum_vjps(subscripts, tuple(np.shape(v) for v in values))
        traced = [k for k, (_, node) in enumerate(split_operands) if node is not None]
        return record(tape, value, [split_operands[k][1] for k in traced],
                      lambda c: tuple(_einsum_vjp(plans[k], values, k, c) for k in traced))
    return impl


# ---- linear algebra: VJP = the JVP transposed -----------------------------------------------------
def _linearized(jvp, values, traced):
    """jvp run once on the values, with the tangents of the operands in `traced` traced on a
    tape of their own (one direction each): (value, output tangents, tangent leaves). The
    JVP is linear in the tangents, so sweeping that tape back is its transpose; the
    decomposition inside it runs once, however many sweeps follow."""
    inner_tape = Tape()
    tangents = [None] * len(values)
    for k in traced:
        tangents[k] = Traced(np.zeros(np.shape(values[k]) + (1,)), inner_tape,
                             inner_tape.record((), None))
    value, out_tangent = jvp(*values, *tangents)
    return value, out_tangent, [tangents[k] for k in traced]


def _transposed(out_tangent, leaves):
    """The VJP of one output of a linearized JVP: its cotangent swept back to the leaves."""
    def vjp(c):
        grads = out_tangent.tape.backward(out_tangent.node, np.expand_dims(c, -1),
                                          [leaf.node for leaf in leaves])
        # a leaf the sweep never reached (zero cotangents are skipped) has cotangent 0
        return tuple(np.zeros(np.shape(leaf.value)[:-1]) if g is None else g[..., 0]
                     for g, leaf in zip(grads, leaves))
    return vjp


def _jvp(entry):
    def impl(*args, **kwargs):
        operands, jvp = entry.impl(*args, **kwargs)
        tape = leading_tape((operands,))
        split_operands = [value_and_node(op, tape) for op in operands]
        values = [v for v, _ in split_operands]
        if entry.func is np.linalg.solve and split_operands[0][1] is None:
            return _solve_constant_matrix(tape, *split_operands)
        traced = [k for k, (_, node) in enumerate(split_operands) if node is not None]
        nodes = [split_operands[k][1] for k in traced]
        value, out_tangent, leaves = _linearized(jvp, values, traced)

        def output(v, t):
            # an output whose tangent is not traced (slogdet's sign, a constant) has no node
            return record(tape, v, nodes, _transposed(t, leaves)) if isinstance(t, Traced) else v

        if not isinstance(value, tuple):
            return output(value, out_tangent)
        items = [output(v, t) for v, t in zip(value, out_tangent)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return impl


def _solve_constant_matrix(tape, a, b):
    # x = A⁻¹ b with A constant is linear in b, with transpose c ↦ A⁻ᵀ c, summed over the
    # stack axes along which b was broadcast. This is the base case the transposed JVPs above
    # reduce to. A 1-d b is one vector for every matrix of the stack: c is solved as columns.
    (a_value, _), (b_value, b_node) = a, b
    a_transposed = np.swapaxes(a_value, -1, -2)

    def vjp(c):
        if np.ndim(b_value) == 1:
            return (unbroadcast(np.linalg.solve(a_transposed, np.expand_dims(c, -1))[..., 0],
                                np.shape(b_value)),)
        return (unbroadcast(np.linalg.solve(a_transposed, c), np.shape(b_value)),)

    return record(tape, np.linalg.solve(a_value, b_value), (b_node,), vjp)


build(FUNCTIONS, _selection, _linear, _multilinear, _jvp)
