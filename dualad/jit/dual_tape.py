"""Compiled forward-over-reverse: the tape recorded and swept in dual numbers.

f runs on actives whose value and scale are Duals of `width` tangents (the directions: v
for hvp, a chunk of unit vectors for a Hessian). A rule's partial is its first partial
evaluated on those Duals (overloads.py), so each node weight is a Dual: partial · scale and
its derivative along the directions; no second-partial formula is written. The sweep runs
Dual adjoints back, the adjoint's value being ∇f and its tangents H · (directions):

    adjoint[operand] += weight · adjoint[node]        (value: w·a; tangent k: ẇ_k·a + w·ȧ_k)

    hvp(f)(x, v, *args)              -> H·v, shaped like x: one recording, one sweep, O(nodes)
    hessian(f, chunk)(x, *args)      -> H: ceil(n / chunk) recordings and sweeps, each
                                        giving `chunk` columns

As on the Python path's tape of Duals, a zero adjoint passes nothing on, an adjoint
whose value is 0 passes only its tangents through a non-finite weight, each lane that is not
0 (active.tangents_through), and a
weight that is a float there (active.float_like) adds no ẇ · a, which would be 0 · inf = nan
where the adjoint is not finite.
"""

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from .cache import overload, register_jitable

from .intrinsics import unit_tuple
from .kernels import _chunk_or_default, _input_problem, compile_kernel
from .runtime import address_of, float_pointer
from .tape import read_out, recorder
from .tuples import flat_input, hessian_like_input, shaped_like_input
from .types import DualType, compiled_only, make_active, make_dual, make_dual_array, make_dual_active_array, make_seed_array
from .active import float_like, float_like_words, node_slots

__all__ = ["hvp", "hessian", "block_recorder", "DEFAULT_CHUNK"]

# Tangents per recording of a Hessian, 8: on Rosenbrock's Hessians inside a compiled loop 4
# and 6 are slower and 10 is within a few per cent. That holds with the scalar rules
# force-inlined (overloads.SCALAR_JIT); without it a recording of 8 tangents is several times
# slower than of 4, and 4 is the best width. Figures:
# docs/decisions/0005-measured-constants-in-code.md.
DEFAULT_CHUNK = 8

seed_direction = compiled_only("dual_tape", "seed_direction")  # x's actives, tangent v
seed_units = compiled_only("dual_tape", "seed_units")  # x's actives, unit tangents lo..lo+width
store_adjoint = compiled_only("dual_tape", "store_adjoint")  # adjoint[at:] = a Dual's value, tangents


def _checked(x):
    problem = _input_problem(x)
    if problem:
        raise TypingError(problem)


@overload(seed_direction)
def _seed_direction(flat, v, header):
    _checked(flat)
    if isinstance(flat, (types.Float, types.Integer)):
        return lambda flat, v, header: make_active(make_dual(float(flat), (float(v),)), 0, 1.0, header)

    def array(flat, v, header):
        tangent = np.ascontiguousarray(v).astype(np.float64).reshape((flat.size, 1))
        duals = make_dual_array(flat, tangent, make_dual(0.0, (0.0,)))
        return make_dual_active_array(duals, 0, 1, header)
    return array


@overload(seed_units)
def _seed_units(flat, lo, header, width):
    if not isinstance(width, types.IntegerLiteral):
        return None  # numba retries with the literal
    n = width.literal_value
    _checked(flat)
    if isinstance(flat, (types.Float, types.Integer)):
        return lambda flat, lo, header, width: make_active(make_dual(float(flat), unit_tuple(-lo, n)),
                                                           0, 1.0, header)
    return lambda flat, lo, header, width: make_dual_active_array(make_seed_array(flat, lo, 1, n),
                                                                  0, 1, header)


@overload(store_adjoint)
def _store_adjoint(adjoint, at, scale):
    if isinstance(scale, DualType):
        def dual(adjoint, at, scale):
            adjoint[at] = scale.value
            for j in range(len(scale.partials)):
                adjoint[at + 1 + j] = scale.partials[j]
        return dual
    return lambda adjoint, at, scale: None  # f's output is a constant: every adjoint stays 0


_PROPAGATORS = {}


def propagator(width, floats=False):
    """propagate(nodes, top, n_in, adjoint, duals): the Dual sweep of a tape whose weights
    carry `width` tangents, adjoint (rows · (1 + width),) flat, row r = (value, tangents) of
    node r, from node top down to n_in (one per width, so that the tangent loops have
    constant length; flat unsigned indices, as tape.propagate, where row views cost 3x).

    The Python tape's cotangents and partials are floats or Duals, and a float has no
    tangent to multiply: a Dual weight meeting a float cotangent adds ẇ·a, a float weight
    (active.float_like) meeting a Dual one adds w·ȧ, two floats add no tangent. The plain
    sweep (floats=False) takes an adjoint without tangent for a float and every weight for a
    Dual, which is the same wherever weights and adjoints are finite. floats=True follows
    the Python tape's types exactly: duals[r] != 0 where row r's cotangent is a Dual there
    (the finisher seeds the output's). The finisher sweeps so only where the plain sweep left
    an input's adjoint not finite (a non-finite weight or adjoint passes a non-finite value
    on whatever it meets, down to an input), which keeps the tests, a measurable share of an
    hvp, off the common sweep (docs/decisions/0005-measured-constants-in-code.md)."""
    if (width, floats) in _PROPAGATORS:
        return _PROPAGATORS[width, floats]
    slots, row = node_slots(width), width + 1

    @register_jitable
    def propagate(nodes, top, n_in, adjoint, duals):
        weights = numba.carray(float_pointer(address_of(nodes)), nodes.size)  # the same words
        for node in range(top, n_in - 1, -1):
            at_a = np.uint64(row * node)
            a = adjoint[at_a]
            tangent = False
            for k in range(1, row):
                tangent = tangent or adjoint[at_a + np.uint64(k)] != 0.0
            if a == 0.0 and not tangent and not _finite_meets_nan(weights, np.uint64(slots * node), row):
                continue  # a zero adjoint passes nothing on
            dual = duals[node] != 0.0 if floats else tangent  # the cotangent is a Dual
            at = np.uint64(slots * node)
            for side in range(2):
                operand = np.uint64(nodes[at + np.uint64(side)])
                w = at + np.uint64(2 + side * row)
                weight = weights[w]
                target = operand * np.uint64(row)
                if a == 0.0 and not np.isfinite(weight):
                    # as the Python tape: a zero cotangent against an infinite partial passes
                    # nothing but its tangents, lane by lane (weight · ȧ where ȧ is not 0)
                    if tangent:
                        if floats and dual:
                            duals[operand] = 1.0
                        for k in range(1, row):
                            t = adjoint[at_a + np.uint64(k)]
                            if t != 0.0:
                                adjoint[target + np.uint64(k)] += weight * t
                    continue
                adjoint[target] += weight * a
                float_weight = floats and float_like_words(weights, w + np.uint64(1))
                if floats and (dual or not float_weight):
                    duals[operand] = 1.0
                if float_weight:
                    if dual:  # w · ȧ only
                        for k in range(1, row):
                            adjoint[target + np.uint64(k)] += weight * adjoint[at_a + np.uint64(k)]
                elif dual:
                    for k in range(1, row):
                        adjoint[target + np.uint64(k)] += (weights[w + np.uint64(k)] * a
                                                          + weight * adjoint[at_a + np.uint64(k)])
                else:  # ẇ · a only
                    for k in range(1, row):
                        adjoint[target + np.uint64(k)] += weights[w + np.uint64(k)] * a

    _PROPAGATORS[width, floats] = propagate
    return propagate


@register_jitable(forceinline=True)
def _finite_meets_nan(weights, at, row):
    """Whether a weight of the node at `at` has a finite value and a tangent that is not: a
    zero adjoint meets it as a product on the Python tape (0 · ẇ = nan there), not as
    nothing (active.passes_nothing, the same rule at recording)."""
    for side in range(2):
        w = at + np.uint64(2 + side * row)
        if np.isfinite(weights[w]) and _not_finite(weights, w + np.uint64(1), w + np.uint64(row)):
            return True
    return False


def _finisher(width, columns, finite=False):
    """finish(...) for recorder: seeds f's output's adjoint with its scale, sweeps in Duals,
    and returns columns(adjoints of the inputs (n_in, 1 + width), x). finite: the recorder's
    cotangent is a bool, True asking for columns of no rows where a weight on the tape or
    the output's scale is not finite (without a sweep), or an adjoint after the sweep."""
    propagate, with_floats = propagator(width), propagator(width, floats=True)
    slots, row = node_slots(width), width + 1

    @register_jitable
    def finish(nodes, size, out, n_in, adjoint, x, cotangent):
        _, output, scale = read_out(out)
        flat = adjoint[:(width + 1) * max(size, n_in)]
        flat[:] = 0.0
        if output >= 0:
            store_adjoint(flat, output * (width + 1), scale)
            if finite and cotangent and not _all_finite(nodes, size, n_in, slots, flat[output * (width + 1):
                                                                         (output + 1) * (width + 1)]):
                return columns(flat[:0].reshape((0, width + 1)), x)
            propagate(nodes, output, n_in, flat, flat)
            if _not_finite_values(flat, n_in, row):  # again, floats and Duals as in Python
                flat[:row * output] = 0.0  # the sweep writes only below the output's row
                duals = np.zeros(output + 1)
                duals[output] = 0.0 if float_like(scale) else 1.0
                with_floats(nodes, output, n_in, flat, duals)
            # an adjoint that overflows in the sweep meets zero tangents as nan in the dense
            # passes, also where the compressed ones read no entry;
            # a non-finite adjoint passes non-finite values on to every operand, down to the
            # inputs, so their rows tell
            if finite and cotangent and _not_finite(flat, 0, (width + 1) * n_in):
                return columns(flat[:0].reshape((0, width + 1)), x)
        return columns(flat[:(width + 1) * n_in].reshape((n_in, width + 1)), x)

    return finish


@register_jitable
def _all_finite(nodes, size, n_in, slots, scale):
    """Whether every weight of nodes n_in..size - 1 (values and tangents) and the output's
    scale are finite."""
    weights = numba.carray(float_pointer(address_of(nodes)), nodes.size)  # the same words
    bad = _not_finite(scale, 0, scale.size)
    for node in range(n_in, size):
        bad |= _not_finite(weights, slots * node + 2, slots * (node + 1))
    return not bad


@register_jitable(forceinline=True)
def _not_finite_values(adjoint, n_in, row):
    """Whether the value of any of the first n_in rows of adjoint is inf or nan."""
    bad = False
    for k in range(np.uint64(0), np.uint64(n_in * row), np.uint64(row)):
        bad |= adjoint[k] - adjoint[k] != 0.0
    return bad


@register_jitable(forceinline=True)
def _not_finite(words, start, stop):
    """Whether any of words[start:stop] is inf or nan (v - v is 0 for every finite v; an
    or-reduction without early exit, which LLVM vectorises)."""
    bad = False
    for k in range(np.uint64(start), np.uint64(stop)):  # unsigned: 3.7x faster (no wraparound)
        bad |= words[k] - words[k] != 0.0
    return bad


@register_jitable
def _product(adjoints, x):
    return shaped_like_input(adjoints[:, 1].copy(), x)


@register_jitable
def _block(adjoints, x):
    return adjoints[:, 1:].copy()


@register_jitable
def _seed_v(flat, v, header):
    return seed_direction(flat, v, header)


def block_recorder(f, seeder, width, finite=False):
    """record(x, extra, None, args) -> the (n_in, width) block H · (the `width` directions
    seeder(flat, extra, header) puts in the inputs' tangents): one recording and one sweep.
    finite: record(x, extra, check, args), check True giving a block of no rows where
    anything the sweep would read is not finite."""
    if finite:
        return recorder(f, _finisher(width, _block, True), seeder, width, checked=_unchecked)
    return recorder(f, _finisher(width, _block), seeder, width)


@register_jitable
def _unchecked(out, check):
    pass


def hvp(f, python):
    """Kernel (x, v, *args) -> H(x)·v, shaped like x: one recording and one sweep in Duals
    of one tangent (v). python: the same transform on the Python path."""
    record = recorder(f, _finisher(1, _product), _seed_v, 1)

    def kernel(x, v, *args):
        direction = flat_input(v)
        if direction.shape != flat_input(x).shape:
            raise ValueError("hvp: v and x have different shapes")
        return record(x, direction, None, args)

    return compile_kernel(kernel, f, python)


def hessian(f, python, chunk=None):
    """Kernel (x, *args) -> H: for each chunk of `chunk` unit directions, one recording and
    one sweep in Duals give those columns of H (ceil(n / chunk) of each)."""
    width = _chunk_or_default(DEFAULT_CHUNK if chunk is None else chunk)

    @register_jitable
    def seed(flat, lo, header):
        return seed_units(flat, lo, header, width)

    record = block_recorder(f, seed, width)

    def kernel(x, *args):
        n = flat_input(x).size
        hess = np.zeros((n, n))
        for lo in range(0, n, width):
            block = record(x, lo, None, args)
            for j in range(min(width, n - lo)):
                hess[:, lo + j] = block[:, j]
        return hessian_like_input(hess, x)

    return compile_kernel(kernel, f, python)
