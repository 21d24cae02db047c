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
(four arrays rather than one tuple: numba types a tuple of arrays in Python, 40-120 µs a
call from Python, an array in C):

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
"""

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from .cache import overload, register_jitable

from . import dual_tape
from .active import NODE_SLOTS
from .intrinsics import tuple_scale, unit_tuple
from .kernels import _chunk_or_default, compile_kernel, seeded_caller
from .protocol import as_dual_array
from .runtime import address_of, float_pointer
from .tape import _taped, output_nodes, propagate
from .tuples import flat_input
from .tracer import CROSS, OTHER, SELF
from .types import (TRACER, ActiveType, DualArrayType, DualMatrixType, DualTensorType, DualType,
                    compiled_only, make_active, make_dual, make_dual_active_array, make_dual_array,
                    make_tracer, store_element)

__all__ = ["jacobian_pattern", "hessian_pattern", "jacfwd", "jacrev", "hessian"]

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


@register_jitable
def _inputs_below(nodes, start, n_in, seen, mark, stack, found, inputs=True):
    """The inputs that node `start` depends on (inputs=False: the other nodes it reaches,
    itself included), into found[:count], unsorted: count. seen holds the last mark that
    visited each node."""
    count, depth = 0, 0
    if start >= 0:
        seen[start], stack[0], depth = mark, start, 1
    while depth:
        depth -= 1
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
    return count


@register_jitable
def _sorted_into(out, start, found, count):
    """found[:count] sorted into out[start:]: insertion sort for the short rows of sparse
    patterns, np.sort for long ones (np.sort per row took 1.9 ms of the Brusselator's rows
    pass at N = 32, 4096 rows; insertion sort 0.12 ms)."""
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
        count = _inputs_below(nodes, outputs[k], n_in, seen, k, stack, found)
        start = indptr[k]
        while indices.size < start + count:
            indices = _doubled(indices)
        _sorted_into(indices, start, found, count)
        indptr[k + 1] = start + count
    return indptr, indices[:indptr[m]].copy()


@register_jitable
def hessian_rows(nodes, size, top, n_in):
    """(indptr, indices) of the symmetric Hessian pattern of the output at node top."""
    flags = numba.carray(float_pointer(address_of(nodes)), nodes.size)  # the weight words
    length = max(size, n_in)
    seen, stack = np.full(length, -1, np.int64), np.empty(length, np.int64)
    ancestors = np.empty(length, np.int64)
    n_ancestors = 0
    if top >= n_in:  # the nodes the output reaches (inputs have no interactions)
        n_ancestors = _inputs_below(nodes, top, n_in, seen, 0, stack, ancestors, False)
    first, second = np.empty(max(n_in, 1), np.int64), np.empty(max(n_in, 1), np.int64)
    rows, cols, count, mark = np.empty(64, np.int64), np.empty(64, np.int64), 0, 1
    for k in range(n_ancestors):
        at = NODE_SLOTS * ancestors[k]
        flag = int(flags[at + 2])  # SELF | CROSS | OTHER: 1, 2, 4
        if flag == 0:
            continue
        n_a = _inputs_below(nodes, nodes[at], n_in, seen, mark, stack, first)
        n_b = _inputs_below(nodes, nodes[at + 1], n_in, seen, mark + 1, stack, second)
        mark += 2
        while rows.size < count + 2 * (n_a + n_b) ** 2:  # grown here: a helper returning
            rows, cols = _doubled(rows), _doubled(cols)  # the arrays cost 8 of 9 ms at n = 10⁴
        if flag & int(SELF):
            count = _add_pairs(rows, cols, count, first, n_a, first, n_a)
        if flag & int(CROSS):
            count = _add_pairs(rows, cols, count, first, n_a, second, n_b)
        if flag & int(OTHER):
            count = _add_pairs(rows, cols, count, second, n_b, second, n_b)
    return _csr_of_pairs(rows, cols, count, n_in)


@register_jitable
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
    by row, each row sorted (np.unique of the pairs took 230 ms for Rosenbrock's 10⁴ rows,
    most of the Hessian pass)."""
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
    call = seeded_caller(f)

    def kernel(x, *rest):
        plan, args = rest[-4:], rest[:-4]
        indptr, indices, colors, seeds = plan
        flat = flat_input(x)
        n = np.size(flat)
        if colors.size != n or seeds.size != n:
            raise ValueError(_PLAN_COLUMNS)
        n_colors = colors.max() + 1 if n > 0 else 0
        values = np.zeros(indices.size)
        m = indptr.size - 1
        for lo in range(0, max(n_colors, 1), width):
            out = call(x, colour_seed(flat, colors, seeds, lo, width), args)
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
        n = np.size(flat_input(x))
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
