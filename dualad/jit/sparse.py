"""Compiled sparsity: pattern detection on tracers and compressed Jacobian passes.

Detection records f once on sparsity tracers (tracer.py), on the compiled tape's recording
and buffer pool (tape._taped), then one pass over the recording reads the pattern:

    Jacobian   row i: the inputs reachable from output i's node (a depth-first walk back
               over parent ids, each node visited once per row)
    Hessian    the union, over the nodes the output reaches, of each node's interactions:
               S(a)×S(a), S(a)×S(b) and its mirror, S(b)×S(b) by its flags, S(p) being the
               inputs below parent p (H = Σ_v ȳ_v Σ ∂²φ_v/∂p∂q ∇p ∇qᵀ, so nothing else can
               be nonzero)

Compressed kernels take the plan as their last four arguments, after f's own arguments
(four arrays rather than one tuple: numba types a tuple of arrays in Python on every call
from Python, an array in C; docs/decisions/0007-sparsity-representation.md):

    plan = indptr, indices, colors, seeds   int64, int64, int64, float64 arrays
    jacobian_pattern(f)(x, *args)       -> (indptr, indices, n_in)   boolean CSR of J
    hessian_pattern(f)(x, *args)        -> (indptr, indices, n_in)   symmetric CSR of H
    jacfwd(f)(x, *args, *plan)          -> J's nonzeros in plan's CSR order: one Dual pass
                                           per chunk of column colours; input j is seeded
                                           with seeds[j] in slot colors[j]
    jacrev(f)(x, *args, *plan)          -> the same by one recording on the tape and one
                                           sweep per row colour (colors, seeds per row)

Seeds are ones for a colouring; a one-colour plan with a direction v as seeds and one
entry per row gives J·v (check=True). Both kernels are njit functions, callable from
other @njit code.

    detecting_hessian(f)(x, *args)      -> the dense H, by the plan made at x inside the kernel
                                           (budgeted pattern pass, distance-2 colouring in
                                           coloring.py, kept while f's recording on tracers
                                           stays the same), or the dense passes: the default
                                           compiled Hessian's forward-over-reverse (auto.py)
"""

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from .cache import named, overload, register_jitable

from . import dual_tape
from .active import NODE_SLOTS
from .coloring import distance2_colors
from .intrinsics import tuple_scale, unit_tuple
from .kernels import _chunk_or_default, _input_problem, compile_kernel, seeded_input
from .protocol import as_dual_array
from .runtime import address_of, float_pointer, int_pointer, pool_address, try_lock, unlock
from .tape import _adopt, _taped, output_nodes, propagate, recorder
from .tuples import flat_input, hessian_like_input, input_size
from .tracer import CROSS, OTHER, SELF
from .types import (TRACER, ActiveType, DualArrayType, DualMatrixType, DualTensorType, DualType,
                    compiled_only, make_active, make_dual, make_dual_active_array, make_dual_array,
                    make_tracer, store_element)

__all__ = ["jacobian_pattern", "hessian_pattern", "jacfwd", "jacrev", "hessian", "detecting_hessian"]

trace_seed = compiled_only("sparse", "trace_seed")  # x as tracers on nodes 0..n-1
colour_seed = compiled_only("sparse", "colour_seed")  # x as Duals seeded by a colouring
tangents_of = compiled_only("sparse", "tangents_of")  # (rows, width) partials of f's output
output_node = compiled_only("sparse", "output_node")  # the node of f's scalar output
check_plan = compiled_only("sparse", "check_plan")  # a ValueError unless the plan fits f's output
hessian_seed = compiled_only("sparse", "hessian_seed")  # x's actives, tangents seeded by colours

_PLAN_ROWS = ("the sparsity pattern must have one row per output entry of f (the plan's indptr "
              "has len(output) + 1 entries)")
_PLAN_COLUMNS = ("the sparsity plan must have one colour and one seed per input entry (forward) "
                 "or per output entry (reverse)")


@overload(trace_seed)
def _trace_seed(x, header):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, header: make_tracer(float(x), 0, header)
    if isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64:
        width = DualArrayType(TRACER).width

        def array(x, header):
            out = make_dual_array(x.copy(), np.empty((x.size, width)), make_tracer(0.0, -1, 0))
            for i in range(x.size):
                store_element(out, i, make_tracer(x[i], i, header))
            return out
        return array
    raise TypingError(f"compiled sparsity detection takes a float, a 1-D float64 array or a tuple "
                      f"of them, not {x}; the Python path (jit=False) takes any shape")


@register_jitable
def _doubled(buffer):
    bigger = np.empty(2 * buffer.size, buffer.dtype)
    bigger[:buffer.size] = buffer
    return bigger


@register_jitable(forceinline=True)  # inlined: a call's array references cost ~60 ns (NRT)
def _inputs_below(nodes, start, n_in, seen, mark, stack, found, inputs=True, limit=-1):
    """The inputs that node `start` depends on (inputs=False: the other nodes it reaches,
    itself included), into found[:count], unsorted: (count, the nodes visited); count -1
    once the walk has visited more than `limit` nodes (limit < 0: no limit). seen holds
    the last mark that visited each node."""
    count, depth, visited = 0, 0, 0
    if start >= 0:
        seen[start], stack[0], depth = mark, start, 1
    while depth:
        depth -= 1
        visited += 1
        if visited > limit >= 0:
            return -1, visited
        node = stack[depth]
        if (node < n_in) == inputs:
            found[count] = node
            count += 1
        if node < n_in:
            continue
        at = NODE_SLOTS * node
        for parent in (nodes[at], nodes[at + 1]):
            if parent >= 0 and seen[parent] != mark:
                seen[parent] = mark
                stack[depth] = parent
                depth += 1
    return count, visited


@register_jitable
def _sorted_into(out, start, found, count):
    """found[:count] sorted into out[start:]: insertion sort for the short rows of sparse
    patterns, np.sort for long ones (np.sort per row is many times slower on the short rows
    of a sparse pattern: docs/decisions/0007-sparsity-representation.md)."""
    if count > 32:
        out[start:start + count] = np.sort(found[:count])
        return
    for i in range(count):
        item, j = found[i], start + i
        while j > start and out[j - 1] > item:
            out[j] = out[j - 1]
            j -= 1
        out[j] = item


@register_jitable
def jacobian_rows(nodes, size, outputs, n_in):
    """(indptr, indices): row k holds the inputs output node outputs[k] depends on, sorted."""
    m, length = outputs.size, max(size, n_in)
    seen, stack, found = np.full(length, -1, np.int64), np.empty(length, np.int64), np.empty(max(n_in, 1), np.int64)
    indptr = np.zeros(m + 1, np.int64)
    indices = np.empty(max(16, 4 * m), np.int64)
    for k in range(m):
        count = _inputs_below(nodes, outputs[k], n_in, seen, k, stack, found)[0]
        start = indptr[k]
        while indices.size < start + count:
            indices = _doubled(indices)
        _sorted_into(indices, start, found, count)
        indptr[k + 1] = start + count
    return indptr, indices[:indptr[m]].copy()


@register_jitable
def hessian_rows(nodes, size, top, n_in, budget=-1):
    """(indptr, indices) of the symmetric Hessian pattern of the output at node top; with a
    budget >= 0, (an empty indptr, indices) once the walks have visited and the interactions
    listed more than `budget` nodes and pairs (the pass can grow as the nodes times the
    inputs each reaches, squared; the detecting Hessian then takes the dense passes)."""
    flags = numba.carray(float_pointer(address_of(nodes)), nodes.size)  # the weight words
    length = max(size, n_in)
    seen, stack = np.full(length, -1, np.int64), np.empty(length, np.int64)
    ancestors = np.empty(length, np.int64)
    n_ancestors, left = 0, budget
    if top >= n_in:  # the nodes the output reaches (inputs have no interactions)
        n_ancestors = _inputs_below(nodes, top, n_in, seen, 0, stack, ancestors, False)[0]
        left -= n_ancestors
    first, second = np.empty(max(n_in, 1), np.int64), np.empty(max(n_in, 1), np.int64)
    rows, cols, count, mark = np.empty(64, np.int64), np.empty(64, np.int64), 0, 1
    none = np.empty(0, np.int64)
    for k in range(n_ancestors):
        at = NODE_SLOTS * ancestors[k]
        flag = int(flags[at + 2])  # SELF | CROSS | OTHER: 1, 2, 4
        if flag == 0:
            continue
        n_a, visited_a = _inputs_below(nodes, nodes[at], n_in, seen, mark, stack, first, True, left)
        n_b, visited_b = _inputs_below(nodes, nodes[at + 1], n_in, seen, mark + 1, stack, second,
                                       True, left)
        mark += 2
        if budget >= 0:  # the pairs listed below count too
            left -= visited_a + visited_b + 2 * (n_a + n_b) ** 2
            if n_a < 0 or n_b < 0 or left < 0:
                return none, none
        # grown here, not by a function that returns the arrays: returning them is most of
        # the pass at n = 10⁴ (docs/decisions/0005-measured-constants-in-code.md)
        while rows.size < count + 2 * (n_a + n_b) ** 2:
            rows, cols = _doubled(rows), _doubled(cols)
        if flag & int(SELF):
            count = _add_pairs(rows, cols, count, first, n_a, first, n_a)
        if flag & int(CROSS):
            count = _add_pairs(rows, cols, count, first, n_a, second, n_b)
        if flag & int(OTHER):
            count = _add_pairs(rows, cols, count, second, n_b, second, n_b)
    return _csr_of_pairs(rows, cols, count, n_in)


@register_jitable(forceinline=True)  # inlined: a call's array references cost ~60 ns (NRT)
def _add_pairs(rows, cols, count, left, n_left, right, n_right):
    """Append every (left[i], right[j]) and its mirror (the room is there): the new count."""
    for i in range(n_left):
        for j in range(n_right):
            rows[count], cols[count] = left[i], right[j]
            rows[count + 1], cols[count + 1] = right[j], left[i]
            count += 2
    return count


@register_jitable
def _csr_of_pairs(rows, cols, count, n):
    """(indptr, indices) of the pairs (rows[k], cols[k]), k < count, without repeats: bucketed
    by row, each row sorted (np.unique of the pairs is most of the Hessian pass at large n:
    docs/decisions/0007-sparsity-representation.md)."""
    starts = np.zeros(n + 1, np.int64)
    for k in range(count):
        starts[rows[k] + 1] += 1
    starts = np.cumsum(starts)
    bucket, fill = np.empty(max(count, 1), np.int64), starts[:n].copy()
    for k in range(count):
        bucket[fill[rows[k]]] = cols[k]
        fill[rows[k]] += 1
    indptr, indices = np.zeros(n + 1, np.int64), np.empty(max(count, 1), np.int64)
    in_row, distinct = np.full(max(n, 1), -1, np.int64), np.empty(max(n, 1), np.int64)
    for r in range(n):
        found = 0
        for p in range(starts[r], starts[r + 1]):  # repeats dropped first: rows stay short
            if in_row[bucket[p]] != r:
                in_row[bucket[p]] = r
                distinct[found] = bucket[p]
                found += 1
        _sorted_into(indices, indptr[r], distinct, found)
        indptr[r + 1] = indptr[r] + found
    return indptr, indices[:indptr[n]].copy()


@overload(output_node)
def _output_node(out):
    if isinstance(out, ActiveType):
        return lambda out: out.index
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out: -1
    raise TypingError(f"hessian_sparsity needs f to return a scalar, not {out}")


@register_jitable
def _jacobian_pattern(nodes, size, out, n_in, scratch, x, extra):
    indptr, indices = jacobian_rows(nodes, size, output_nodes(out)[0], n_in)
    return indptr, indices, n_in


@register_jitable
def _hessian_pattern(nodes, size, out, n_in, scratch, x, extra):
    indptr, indices = hessian_rows(nodes, size, output_node(out), n_in)
    return indptr, indices, n_in


@register_jitable
def _seed_tracers(flat, extra, header):
    return trace_seed(flat, header)


def jacobian_pattern(f, python):
    """Kernel (x, *args) -> (indptr, indices, n_in): the boolean Jacobian pattern at x."""
    return _taped(f, _jacobian_pattern, python, seeder=_seed_tracers)


def hessian_pattern(f, python):
    """Kernel (x, *args) -> (indptr, indices, n_in): the symmetric Hessian pattern at x."""
    return _taped(f, _hessian_pattern, python, seeder=_seed_tracers)


# ---- compressed Jacobians ---------------------------------------------------------------------------
@overload(colour_seed)
def _colour_seed(flat, colors, seeds, lo, width):
    if not isinstance(width, types.IntegerLiteral):
        return None  # numba retries with the literal
    w = width.literal_value
    problem = _input_problem(flat)
    if problem:
        raise TypingError(problem)
    if isinstance(flat, (types.Float, types.Integer)):
        return lambda flat, colors, seeds, lo, width: make_dual(
            float(flat), tuple_scale(seeds[0], unit_tuple(colors[0] - lo, w)))

    def array(flat, colors, seeds, lo, width):
        n = flat.size
        components = np.zeros((n, w))
        for j in range(n):
            slot = colors[j] - lo
            if 0 <= slot < w:
                components[j, slot] = seeds[j]
        # the values copied: f may assign into its argument (its own copy, as NumPy's)
        return make_dual_array(flat.copy(), components, make_dual(0.0, unit_tuple(-1, w)))
    return array


@overload(tangents_of)
def _tangents_of(out, width):
    w = width.literal_value if isinstance(width, types.IntegerLiteral) else None
    if w is None:
        return None
    if isinstance(out, DualType):
        return lambda out, width: np.array(out.partials).reshape((1, w))
    if isinstance(out, DualArrayType) and isinstance(out.element, DualType):
        return lambda out, width: as_dual_array(out).components
    if isinstance(out, (DualMatrixType, DualTensorType)) and isinstance(out.element, DualType):  # C order
        return lambda out, width: np.ascontiguousarray(out.components).reshape((out.size, w))
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out, width: np.zeros((1, w))
    if isinstance(out, types.Array) and out.ndim <= 3:
        return lambda out, width: np.zeros((out.size, w))
    raise TypingError(f"a compiled sparse Jacobian needs f to return a float or an array of 1 to "
                      f"3 dimensions, not {out}")


@register_jitable
def _plan_fits(m, plan, n):
    indptr, indices, colors, seeds = plan
    if indptr.size != m + 1:
        raise ValueError(_PLAN_ROWS)
    if colors.size != n or seeds.size != n:
        raise ValueError(_PLAN_COLUMNS)


def jacfwd(f, python, chunk=None):
    """Kernel (x, *args, indptr, indices, colors, seeds) -> J's nonzeros in the plan's CSR
    order, by one Dual pass of `chunk` partials per chunk of column colours."""
    width = _chunk_or_default(chunk)
    prepare = seeded_input(f)

    def kernel(x, *rest):
        plan, args = rest[-4:], rest[:-4]
        indptr, indices, colors, seeds = plan
        flat = flat_input(x)
        n = flat.size
        if colors.size != n or seeds.size != n:
            raise ValueError(_PLAN_COLUMNS)
        n_colors = colors.max() + 1 if n > 0 else 0
        values = np.zeros(indices.size)
        m = indptr.size - 1
        for lo in range(0, max(n_colors, 1), width):
            out = f(prepare(x, colour_seed(flat, colors, seeds, lo, width), args), *args)
            partials = tangents_of(out, width)
            _plan_fits(partials.shape[0], plan, n)
            for i in range(m):
                for p in range(indptr[i], indptr[i + 1]):
                    slot = colors[indices[p]] - lo
                    if 0 <= slot < width:
                        values[p] = partials[i, slot]
        return values

    return compile_kernel(kernel, f, python)


@overload(check_plan, inline="always")
def _check_plan(out, plan):
    def check(out, plan):
        m = output_nodes(out)[0].size
        _plan_fits(m, plan, m)
    return check


@register_jitable
def _row_sweeps(nodes, size, out, n_in, adjoint, x, plan):
    """One sweep per row colour: the adjoints of the outputs of colour k seeded with their
    seeds; J[i, j] is input j's adjoint in the sweep of row i's colour."""
    indptr, indices, colors, seeds = plan
    outputs, scales = output_nodes(out)
    m = outputs.size
    n_colors = colors.max() + 1 if m > 0 else 0
    values = np.zeros(indices.size)
    for k in range(n_colors):
        adjoint[:max(size, n_in)] = 0.0
        top = -1
        for i in range(m):
            if colors[i] == k and outputs[i] >= 0:
                adjoint[outputs[i]] += seeds[i] * scales[i]
                top = max(top, outputs[i])
        propagate(nodes, top, n_in, adjoint)
        for i in range(m):
            if colors[i] == k:
                for p in range(indptr[i], indptr[i + 1]):
                    values[p] = adjoint[indices[p]]
    return values


def jacrev(f, python):
    """Kernel (x, *args, indptr, indices, colors, seeds) -> J's nonzeros in the plan's CSR
    order, by one recording on the compiled tape and one sweep per row colour."""
    swept = _taped(f, _row_sweeps, lambda x, plan, *args: python(x, *args, *plan),
                   takes_cotangent=True, checked=check_plan)

    def kernel(x, *rest):
        return swept(x, rest[-4:], *rest[:-4])

    return compile_kernel(kernel, f, python)


# ---- compressed Hessians: forward-over-reverse (dual_tape.py) per chunk of star colours ---------------
@overload(hessian_seed)
def _hessian_seed(flat, colours, header, width):
    if not isinstance(width, types.IntegerLiteral):
        return None  # numba retries with the literal
    if isinstance(flat, (types.Float, types.Integer)):
        return lambda flat, colours, header, width: make_active(
            colour_seed(flat, colours[0], colours[1], colours[2], width), 0, 1.0, header)
    return lambda flat, colours, header, width: make_dual_active_array(
        colour_seed(flat, colours[0], colours[1], colours[2], width), 0, 1, header)


def hessian(f, python, chunk=None):
    """Kernel (x, *args, colors, seeds, sources) -> H's nonzeros in the plan's CSR order: one
    forward-over-reverse recording and sweep per chunk of `chunk` star colours gives the
    compressed H·S (n, colours), S[j, colors[j]] = seeds[j]; nonzero p is its entry
    sources[p] (row-major), as the Python path's Plan.sources("star") reads it."""
    width = _chunk_or_default(dual_tape.DEFAULT_CHUNK if chunk is None else chunk)

    @register_jitable
    def seed(flat, colours, header):
        return hessian_seed(flat, colours, header, width)

    record = dual_tape.block_recorder(f, seed, width)

    def kernel(x, *rest):
        colors, seeds, sources, args = rest[-3], rest[-2], rest[-1], rest[:-3]
        n = flat_input(x).size
        if colors.size != n or seeds.size != n:
            raise ValueError(_PLAN_COLUMNS)
        n_colors = colors.max() + 1 if n > 0 else 0
        compressed = np.zeros((n, max(n_colors, 1)))
        for lo in range(0, n_colors, width):
            block = record(x, (colors, seeds, lo), None, args)
            for k in range(min(width, n_colors - lo)):
                compressed[:, lo + k] = block[:, k]
        entries = compressed.ravel()
        values = np.empty(sources.size)
        for p in range(sources.size):
            values[p] = entries[sources[p]]
        return values

    return compile_kernel(kernel, f, python)


# ---- the dense Hessian through the pattern detected at x, on every call -------------------------
# The pattern pass may visit and list at most PATTERN_BUDGET pairs and nodes per node recorded
# (Rosenbrock lists about 4 per node; a dense Hessian's grows with n, and is given up early).
PATTERN_BUDGET = 16

# What a detecting Hessian keeps between calls: the last sparsity recording and its plan (a
# lock, then the owner, address and length of one int64 buffer: n_in, size, top, colours,
# nonzeros, the recording's node words, indptr, indices, colours). The plan is a function of
# the recording alone, so an identical recording reuses it exactly (the pattern pass and
# colouring are about half a call at Rosenbrock n = 100:
# docs/decisions/0004-hessians-and-mode-costs.md).
_PLAN_LOCK, _PLAN_OWNER, _PLAN_LENGTH = 0, 1, 3
_PLAN_SLOTS = 4
_PLAN_HEAD = 5


@register_jitable
def _same_recording(kept, n_in, size, top, words):
    if kept.size < _PLAN_HEAD + words.size or kept[0] != n_in or kept[1] != size or kept[2] != top:
        return False
    for k in range(words.size):
        if kept[_PLAN_HEAD + k] != words[k]:
            return False
    return True


@register_jitable
def _new_plan(nodes, size, top, n_in, limit):
    """(indptr, indices, colours, count) of the budgeted pattern and its distance-2
    colouring; count -1 where the budget ran out or more than `limit` colours are needed."""
    indptr, indices = hessian_rows(nodes, size, top, n_in, PATTERN_BUDGET * (size + n_in))
    if indptr.size == 0:
        return indptr, indices, indices, -1
    colors, count = distance2_colors(indptr, indices, n_in, limit)
    return indptr, indices, colors, count


@register_jitable
def _plan_of_recording(nodes, size, out, n_in, scratch, x, state_address):
    """finish(...) of the sparsity recording: the plan (_new_plan), the kept one where this
    recording is the kept one's word for word."""
    top = output_node(out)
    words = nodes[NODE_SLOTS * n_in:NODE_SLOTS * size]  # the inputs' words are never written
    limit = (-(-n_in // dual_tape.DEFAULT_CHUNK) - 1) * dual_tape.DEFAULT_CHUNK
    if not try_lock(state_address):  # another call holds the kept plan: one of its own
        return _new_plan(nodes, size, top, n_in, limit)
    state = numba.carray(int_pointer(state_address), _PLAN_SLOTS)
    kept = numba.carray(int_pointer(state[_PLAN_OWNER + 1]), state[_PLAN_LENGTH])
    if state[_PLAN_OWNER] != 0 and _same_recording(kept, n_in, size, top, words):
        at, count, nnz = _PLAN_HEAD + words.size, kept[3], kept[4]
        indptr = kept[at:at + n_in + 1].copy()  # copies: the kept buffer is replaced later
        indices = kept[at + n_in + 1:at + n_in + 1 + nnz].copy()
        colors = kept[at + n_in + 1 + nnz:at + 2 * n_in + 1 + nnz].copy()
    else:
        indptr, indices, colors, count = _new_plan(nodes, size, top, n_in, limit)
        nnz = indices.size
        buffer = np.zeros(_PLAN_HEAD + words.size + 2 * n_in + 1 + nnz, np.int64)
        buffer[0], buffer[1], buffer[2], buffer[3], buffer[4] = n_in, size, top, count, nnz
        at = _PLAN_HEAD + words.size
        buffer[_PLAN_HEAD:at] = words
        if count >= 0:
            buffer[at:at + n_in + 1] = indptr
            buffer[at + n_in + 1:at + n_in + 1 + nnz] = indices
            buffer[at + n_in + 1 + nnz:] = colors
        _adopt(state, _PLAN_OWNER, buffer)
        state[_PLAN_LENGTH] = buffer.size
    unlock(state_address)
    return indptr, indices, colors, count


def detecting_hessian(f, python):
    """Kernel (x, *args) -> H, forward-over-reverse through the sparsity of H at x: f recorded
    on tracers, the pattern read off that recording (a budgeted pass) and coloured greedily
    at distance 2 (coloring.py), then one recording and sweep per DEFAULT_CHUNK colours and
    the nonzeros read off into a dense H. The plan is kept for the next call whose recording
    is the same. Where it saves no pass (the budget ran out, the colours need as many passes
    as the n inputs) or a weight recorded or an adjoint swept is not finite (the dense passes
    give nan where they would), the dense passes instead: H is dual_tape.hessian's up to
    rounding at every point."""
    width = dual_tape.DEFAULT_CHUNK
    plan_of = recorder(f, _plan_of_recording, _seed_tracers, checked=dual_tape._unchecked)

    @register_jitable
    def seed(flat, colours, header):
        return hessian_seed(flat, colours, header, width)

    record = dual_tape.block_recorder(f, seed, width, finite=True)

    def dense(x, n, args):
        """H (n, n) by ceil(n / width) passes, input j seeded in slot j - lo (the same
        recording as the compressed passes': f compiles once on these Duals)."""
        colors, seeds = np.arange(n), np.ones(n)
        hess = np.zeros((n, n))
        for lo in range(0, n, width):
            block = record(x, (colors, seeds, lo), False, args)
            for j in range(min(width, n - lo)):
                hess[:, lo + j] = block[:, j]
        return hess

    dense = numba.njit(named(dense), inline="always")

    def compressed(x, n, args, state_address):
        """H (n, n) by the pattern at x, or an array of no rows where that saves nothing."""
        nothing = np.zeros((0, 0))
        if n <= width:  # one dense pass: nothing to save
            return nothing
        indptr, indices, colors, n_colors = plan_of(x, None, state_address, args)
        if n_colors < 0:
            return nothing
        seeds = np.ones(n)
        hess = np.zeros((n, n))
        for lo in range(0, n_colors, width):
            block = record(x, (colors, seeds, lo), True, args)
            if block.shape[0] != n:
                return nothing
            for i in range(n):
                for p in range(indptr[i], indptr[i + 1]):
                    slot = colors[indices[p]] - lo
                    if 0 <= slot < width:
                        hess[i, indices[p]] = block[i, slot]
        return hess

    # both inlined into the kernel: as dispatchers of their own, their libraries link and
    # optimise the recordings under them once more, and a first Hessian compiles longer
    # (docs/decisions/0004-hessians-and-mode-costs.md)
    compressed = numba.njit(named(compressed), inline="always")

    def kernel(x, *args):
        n = input_size(x)
        hess = compressed(x, n, args, pool_address(_PLAN_SLOTS))
        if hess.shape[0] != n:
            hess = dense(x, n, args)
        return hessian_like_input(hess, x)

    return compile_kernel(kernel, f, python)
