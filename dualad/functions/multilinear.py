"""Multilinear functions in einsum form (einsum, matmul, dot, inner, tensordot, vdot) and
compositions of them (outer, kron, cross)."""

from __future__ import annotations

import functools
import math
import string

import numpy as np

from ..number import is_layer
from .registry import composition, multilinear, reject_options, stack_lists

# Plain operands of more entries than this (all together) are contracted pair by pair
# through BLAS (np.einsum's optimize): one loop over every index of a three-operand product
# (V⁻¹ dA V over N tangents) costs n⁴ N where the pairwise products cost n³ N.
BLAS_SIZE = 4096


def contract(subscripts, *operands, pairwise=True):
    """np.einsum(subscripts, *operands): two plain operands as one batched matrix product
    (BLAS; np.einsum loops over every index of a pair that its C loops do not map to BLAS,
    c·Bᵀ at 64 × 24 is 10 µs there and 1 µs here); more, optimized once they are plain and
    large (numbers of a layer go to their layer's einsum, which contracts its own parts so).
    pairwise=False keeps np.einsum's own result (its layout: np.einsum's value as NumPy lays
    it out)."""
    plain = not any(is_layer(a) for a in operands)
    if pairwise and plain and len(operands) >= 2:
        shapes = tuple(np.shape(a) for a in operands)
        product = _pair_product(subscripts, *shapes) if len(operands) == 2 and "..." not in subscripts \
            else _chain_product(subscripts, shapes)
        if product is not None:
            return product(*operands)
    big = plain and sum(np.size(a) for a in operands) > BLAS_SIZE
    return np.einsum(subscripts, *operands, optimize=big)


@functools.lru_cache(maxsize=4096)
def _chain_product(subscripts, shapes):
    """einsum of three or more operands as matmuls pair by pair, left to right (the rules'
    products are matrix · stack of tangents · matrix, which this order contracts in n³ per
    tangent), keeping at each step the axes that later operands or the output name; None
    where a step is not a matmul (see _pair_product)."""
    if any(0 in shape for shape in shapes):
        return None  # explicit_terms sizes letters at least 1: np.einsum takes empty axes
    terms, output, sizes = explicit_terms(subscripts, list(shapes))
    steps, current = [], terms[0]
    for k in range(1, len(terms)):
        later = set(output).union(*terms[k + 1:])
        kept = output if k == len(terms) - 1 else \
            "".join(c for c in dict.fromkeys(current + terms[k]) if c in later)
        step = _pair_product(f"{current},{terms[k]}->{kept}", tuple(sizes[c] for c in current),
                             tuple(sizes[c] for c in terms[k]))
        if step is None:
            return None
        steps.append(step)
        current = kept

    def product(*operands):
        result = operands[0]
        for step, operand in zip(steps, operands[1:]):
            result = step(result, operand)
        return result
    return product


@functools.lru_cache(maxsize=4096)
def _pair_product(subscripts, shape_a, shape_b):
    """einsum of two operands of these shapes as a matmul, or None where it is not one
    (a letter twice in a term, broadcasting lengths, an output letter in neither operand).

    A letter of one operand alone and not in the output is summed first; the rest are
    batch (both and the output), contracted (both, not the output) or free (one and the
    output): A → (batch, free_a, contracted), B → (batch, contracted, free_b), one matmul,
    then the output's axes in its order."""
    if "..." in subscripts or "->" not in subscripts:
        return None
    inputs, output = subscripts.replace(" ", "").split("->")
    terms = inputs.split(",")
    if len(terms) != 2 or any(len(t) != len(set(t)) for t in terms + [output]):
        return None
    (ta, tb), shapes = terms, (shape_a, shape_b)
    if len(ta) != len(shape_a) or len(tb) != len(shape_b) or not set(output) <= set(ta + tb):
        return None
    sizes = {}
    for term, shape in zip(terms, shapes):
        for letter, n in zip(term, shape):
            if sizes.setdefault(letter, n) != n:
                return None
    alone = [tuple(i for i, c in enumerate(t) if c not in u and c not in output)
             for t, u in ((ta, tb), (tb, ta))]
    ta, tb = ("".join(c for i, c in enumerate(t) if i not in gone) for t, gone in zip(terms, alone))
    batch = [c for c in output if c in ta and c in tb]
    contracted = [c for c in ta if c in tb and c not in output]
    free_a = [c for c in ta if c not in tb]
    free_b = [c for c in tb if c not in ta]
    order_a = [ta.index(c) for c in batch + free_a + contracted]
    order_b = [tb.index(c) for c in batch + contracted + free_b]
    n = [math.prod(sizes[c] for c in group) for group in (batch, free_a, contracted, free_b)]
    grouped = batch + free_a + free_b
    unsplit = tuple(sizes[c] for c in grouped)
    to_output = [grouped.index(c) for c in output]

    def product(a, b):
        if alone[0]:
            a = np.sum(a, axis=alone[0])
        if alone[1]:
            b = np.sum(b, axis=alone[1])
        a = np.transpose(a, order_a).reshape(n[0], n[1], n[2])
        b = np.transpose(b, order_b).reshape(n[0], n[2], n[3])
        return np.transpose(np.matmul(a, b).reshape(unsplit), to_output)[()]
    return product


def parse_subscripts(subscripts):
    """'ij,jk->ik' -> (['ij', 'jk'], 'ik'); an implicit output as NumPy forms it."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
    else:
        inputs = subscripts
        letters = inputs.replace(",", "").replace(".", "")
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return inputs.split(","), output


def fresh_letters(used, subscripts):
    """A function giving, call by call, letters not in `used` (which it extends)."""
    def fresh():
        letter = next((c for c in string.ascii_letters if c not in used), None)
        if letter is None:
            raise ValueError(f"einsum '{subscripts}': too many axes for reverse mode to name "
                             "each by a letter (52 at most); split the einsum in two")
        used.add(letter)
        return letter
    return fresh


def explicit_terms(subscripts, shapes):
    """The einsum with every axis named by its own letter: (input terms, output term, sizes).

    '...' becomes letters of the broadcast ellipsis axes (right-aligned, so an operand whose
    '...' is shorter or empty gets only the last ones), and an operand axis of length 1 that
    broadcasts against a longer axis of the same letter gets a letter of its own. Then every
    letter has one length in all operands, and the transposed einsums need no broadcasting.
    """
    inputs, output = parse_subscripts(subscripts)
    fresh = fresh_letters(set(subscripts), subscripts)
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


def _sublist_form(args):
    """np.einsum(A, [0, 1], B, [1, 2], [0, 2]) -> ('ab,bc->ac', [A, B])."""
    letters = string.ascii_letters

    def term(sub):
        return "".join("..." if s is Ellipsis else letters[int(s)] for s in sub)
    operands, terms = list(args[0:-1:2]), [term(s) for s in args[1::2]]
    if len(args) % 2 == 1:
        return ",".join(terms) + "->" + term(args[-1]), operands
    return ",".join(terms), operands


@multilinear(np.einsum)
def _einsum(*args, out=None, optimize=False, **kwargs):
    reject_options(dict(out=out, **kwargs), "einsum")
    if isinstance(args[0], str):
        subscripts, operands = args[0], list(args[1:])
    else:
        subscripts, operands = _sublist_form(args)
    operands = [stack_lists(op) for op in operands]
    return operands, lambda *v: contract(subscripts, *v, pairwise=False), subscripts


@functools.lru_cache(maxsize=None)
def matmul_subscripts(na, nb):
    if na == 0 or nb == 0:
        raise ValueError("matmul: an operand is a scalar; use * for scalar multiplication")
    a = "...ij" if na >= 2 else "j"
    b = "...jk" if nb >= 2 else "j"
    if na == 1 and nb >= 2:
        out = "...k"
    else:
        out = ("...i" if na >= 2 else "") + ("k" if nb >= 2 else "")
    return f"{a},{b}->{out}"


@multilinear(np.matmul, compiled=True)
def _matmul(a, b, **kwargs):
    reject_options(kwargs, "matmul")
    a, b = stack_lists(a), stack_lists(b)
    return [a, b], np.matmul, matmul_subscripts(np.ndim(a), np.ndim(b))


@functools.lru_cache(maxsize=None)
def dot_subscripts(na, nb):
    letters = iter(string.ascii_lowercase)
    a = [next(letters) for _ in range(na)]
    b = [next(letters) for _ in range(nb)]
    b[-2 if nb >= 2 else -1] = a[-1]
    out = a[:-1] + [c for c in b if c != a[-1]]
    return f"{''.join(a)},{''.join(b)}->{''.join(out)}"


@multilinear(np.dot, compiled=True)
def _dot(a, b, out=None):
    reject_options(dict(out=out), "dot")
    a, b = stack_lists(a), stack_lists(b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return [a, b], np.multiply, _scalar_times(a, b)
    return [a, b], np.dot, dot_subscripts(np.ndim(a), np.ndim(b))


def _scalar_times(a, b):
    letters = string.ascii_lowercase[:max(np.ndim(a), np.ndim(b))]
    return f"{letters if np.ndim(a) else ''},{letters if np.ndim(b) else ''}->{letters}"


@functools.lru_cache(maxsize=None)
def inner_subscripts(na, nb):
    letters = iter(string.ascii_lowercase)
    sa = [next(letters) for _ in range(na - 1)]
    sb = [next(letters) for _ in range(nb - 1)]
    return f"{''.join(sa)}Z,{''.join(sb)}Z->{''.join(sa + sb)}"


@multilinear(np.inner, compiled=True)
def _inner(a, b):
    a, b = stack_lists(a), stack_lists(b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return [a, b], np.multiply, _scalar_times(a, b)
    return [a, b], np.inner, inner_subscripts(np.ndim(a), np.ndim(b))


@multilinear(np.vdot, compiled=True)
def _vdot(a, b):
    a, b = np.ravel(stack_lists(a)), np.ravel(stack_lists(b))
    return [a, b], np.vdot, "i,i->"


def tensordot_subscripts(na, nb, axes):
    if np.ndim(axes) == 0:
        n = int(axes)
        axes_a, axes_b = list(range(na - n, na)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
        axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
    axes_a = [int(x) % na for x in axes_a]
    axes_b = [int(x) % nb for x in axes_b]
    letters = iter(string.ascii_letters)
    a = [next(letters) for _ in range(na)]
    b = [next(letters) for _ in range(nb)]
    for i, j in zip(axes_a, axes_b):
        b[j] = a[i]
    out = [c for i, c in enumerate(a) if i not in axes_a] + \
          [c for j, c in enumerate(b) if j not in axes_b]
    return f"{''.join(a)},{''.join(b)}->{''.join(out)}"


@multilinear(np.tensordot)
def _tensordot(a, b, axes=2):
    a, b = stack_lists(a), stack_lists(b)
    return ([a, b], lambda x, y: np.tensordot(x, y, axes),
            tensordot_subscripts(np.ndim(a), np.ndim(b), axes))


# ---- compositions ---------------------------------------------------------------------------
@composition(np.outer, compiled=True)
def outer(a, b, out=None):
    reject_options(dict(out=out), "outer")
    return np.multiply(np.reshape(stack_lists(a), (-1, 1)), np.reshape(stack_lists(b), (1, -1)))


@composition(np.kron, compiled=True)
def kron(a, b):
    """kron(a, b)[i·m + k, j·n + l] = a[i, j] b[k, l]: an outer product, axes interleaved."""
    a, b = stack_lists(a), stack_lists(b)
    nd = max(np.ndim(a), np.ndim(b))
    a = np.reshape(a, (1,) * (nd - np.ndim(a)) + np.shape(a))
    b = np.reshape(b, (1,) * (nd - np.ndim(b)) + np.shape(b))
    letters = string.ascii_lowercase
    sa, sb = letters[:nd], letters[nd:2 * nd]
    interleaved = "".join(x + y for x, y in zip(sa, sb))
    product = np.einsum(f"{sa},{sb}->{interleaved}", a, b)
    return np.reshape(product, tuple(m * n for m, n in zip(np.shape(a), np.shape(b))))


@composition(np.cross, compiled=True)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or the scalar one of 2-vectors), component by component."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = np.moveaxis(stack_lists(a), axisa, -1)
    b = np.moveaxis(stack_lists(b), axisb, -1)
    na, nb = np.shape(a)[-1], np.shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3)")
    a0, a1, a2 = a[..., 0], a[..., 1], (a[..., 2] if na == 3 else 0.0)
    b0, b1, b2 = b[..., 0], b[..., 1], (b[..., 2] if nb == 3 else 0.0)
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    c = np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return np.moveaxis(c, -1, axisc)
