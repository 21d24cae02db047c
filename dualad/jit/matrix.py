"""2-D arrays of duals (DualMatrix): their surface and every rule elementwise on them.

    M = np.zeros((m, k)); M[i, j] = dual     # promote.py makes M a DualMatrix
    M[i, j]                                  # a scalar dual
    M[i], M[i, a:b], M[a:b, j], M[a:b, c:d]  # views (rows and columns are 1-D arrays of duals)
    M[i, j] = dual or number; M[i] = row; M[i, :] = row; M[:, j] = column
    len(M), M.shape, M.size, M.ndim, M.dtype, M.T, np.transpose(M), M.copy(), np.copy(M)
    flat(M), c_order(M, contiguous)          # C order as a 1-D array of duals (a view if it can be)
    M op N, M op v, M op c, f(M)             # every rule; v (length k) broadcast over rows

A 2-D float array meets duals here too (A * dual, A + dual vector). Functions of whole
matrices (dot, outer, diag, linalg, ...) are numpy_linalg.py's.
"""

import operator

import numpy as np
from numba.core import types
from numpy.lib.stride_tricks import as_strided
from numba.core.errors import TypingError

from ..primitives import subscribe
from ..rules import RULES
from .cache import overload, overload_attribute, overload_method, register_jitable
from .overloads import (ARRAYS, DUALS, IN_PLACE, RULE_JIT, entry_points, first_of, in_place_target,
                        one_element_type, second_of, snapshot)
from .layout import copy_in_order, keep_order, new_matrix_in, strides_of
from .protocol import checked_index
from .types import (NUMBER, DualMatrixType, DualTensorType, compiled_only, element_of, load_entry,
                    make_dual_array, make_dual_matrix, store_entry)

__all__ = ["MATRIX", "new_matrix", "flat", "c_order", "is_float_matrix", "matrix_elementwise", "access", "broadcast_axis", "register_elementwise"]

MATRIX = DualMatrixType


def is_float_matrix(t):
    """A 2-D array of plain numbers."""
    return isinstance(t, types.Array) and t.ndim == 2 and isinstance(t.dtype, NUMBER)


new_matrix = compiled_only("matrix", "new_matrix")  # (like, m, k): an uninitialised m × k DualMatrix


@overload(new_matrix)
def _new_matrix(like, m, k):
    if isinstance(like, DUALS + (DualMatrixType, DualTensorType, types.BaseTuple, types.List)):
        width = DualMatrixType(element_of(like)).width
        return lambda like, m, k: make_dual_matrix(np.empty((m, k)), np.empty((m, k, width)), like)
    return None


@register_jitable
def _one_stride(shape, strides):
    """(whether the entries of an array with this shape and these strides lie in C order at
    one common step, the step); axes of length 1 do not count (NumPy's rule)."""
    step, span, found = 0, 1, False
    for k in range(len(shape) - 1, -1, -1):
        if shape[k] == 1:
            continue
        if not found:
            step, found = strides[k], True
        elif strides[k] != step * span:
            return False, 0
        span *= shape[k]
    return True, step


@register_jitable
def c_order(a, contiguous):
    """The entries of a 2-D or 3-D array of duals in C order, 1-D: a view where they lie at one
    step (NumPy's reshape(-1); with `contiguous`, only where that step is one entry, as
    NumPy's ravel, which copies a view with gaps or negative steps), else a copy."""
    values, components = a.values, a.components
    size = values.size
    fits, step = _one_stride(values.shape, values.strides)
    fits_c, step_c = _one_stride(components.shape[:-1], components.strides[:-1])
    if fits and fits_c and (not contiguous or step == values.itemsize or step == 0):
        return make_dual_array(as_strided(values, shape=(size,), strides=(step,)),
                               as_strided(components, shape=(size, components.shape[-1]),
                                          strides=(step_c, components.strides[-1])), a)
    return make_dual_array(values.copy().reshape(size), components.copy().reshape((size, components.shape[-1])), a)


flat = compiled_only("matrix", "flat")  # (M): M's entries in C order, a 1-D array of duals


@overload(flat)
def _flat(a):
    """A view where M's entries lie at one step (as NumPy's reshape: a write through it reaches
    M), else a copy; np.ravel and M.ravel() view only a C-contiguous M (c_order)."""
    if isinstance(a, DualMatrixType):
        return lambda a: c_order(a, False)
    return None


# ---- structure ----------------------------------------------------------------------------------------
@overload(len)
def _len(a):
    if isinstance(a, DualMatrixType):
        return lambda a: a.values.shape[0]
    return None


overload_attribute(DualMatrixType, "shape")(lambda a: lambda a: a.values.shape)
overload_attribute(DualMatrixType, "size")(lambda a: lambda a: a.values.size)
overload_attribute(DualMatrixType, "ndim")(lambda a: lambda a: 2)
overload_attribute(DualMatrixType, "dtype")(lambda a: lambda a: a.values.dtype)


@register_jitable
def transposed(a):
    return make_dual_matrix(a.values.T, np.transpose(a.components, (1, 0, 2)), a)


overload_attribute(DualMatrixType, "T")(lambda a: lambda a: transposed(a))
overload_method(DualMatrixType, "transpose")(lambda a: lambda a: transposed(a))
overload(np.transpose)(lambda a: (lambda a: transposed(a)) if isinstance(a, DualMatrixType) else None)


@register_jitable
def _copied(a):
    """M.copy(): C order."""
    return make_dual_matrix(a.values.copy(), a.components.copy(), a)


overload(np.copy)(lambda a: (lambda a: copy_in_order(a)) if isinstance(a, DualMatrixType) else None)
overload_method(DualMatrixType, "copy")(lambda a: lambda a: _copied(a))
overload(np.ravel)(lambda a: (lambda a: c_order(a, True)) if isinstance(a, DualMatrixType) else None)
overload_method(DualMatrixType, "ravel")(lambda a: lambda a: c_order(a, True))
overload_method(DualMatrixType, "flatten")(lambda a: lambda a: np.copy(flat(a)))  # always a copy


def _is_int(t):
    return isinstance(t, types.Integer)


@overload(operator.getitem)
def _getitem(a, index):
    if not isinstance(a, DualMatrixType):
        return None
    if _is_int(index):
        def row(a, index):
            i = checked_index(index, a.values.shape[0])
            return make_dual_array(a.values[i], a.components[i], a)
        return row
    if isinstance(index, types.SliceType):
        return lambda a, index: make_dual_matrix(a.values[index], a.components[index], a)
    if isinstance(index, types.BaseTuple) and len(index) == 2:
        first, second = index
        if _is_int(first) and _is_int(second):
            def entry(a, index):
                return load_entry(a, checked_index(index[0], a.values.shape[0]),
                                  checked_index(index[1], a.values.shape[1]))
            return entry
        if _is_int(first) and isinstance(second, types.SliceType):
            def part_of_row(a, index):
                i = checked_index(index[0], a.values.shape[0])
                return make_dual_array(a.values[i, index[1]], a.components[i, index[1]], a)
            return part_of_row
        if isinstance(first, types.SliceType) and _is_int(second):
            def part_of_column(a, index):
                j = checked_index(index[1], a.values.shape[1])
                return make_dual_array(a.values[index[0], j], a.components[index[0], j], a)
            return part_of_column
        if isinstance(first, types.SliceType) and isinstance(second, types.SliceType):
            return lambda a, index: make_dual_matrix(a.values[index[0], index[1]],
                                                     a.components[index[0], index[1]], a)
    raise TypingError(f"a 2-D array of duals takes integers and slices as indices, not {index}")


@register_jitable
def _set_number(a, i, j, item):
    a.values[i, j] = item
    a.components[i, j, :] = 0.0


@overload(operator.setitem)
def _setitem(a, index, item):
    if not isinstance(a, DualMatrixType):
        return None
    if isinstance(item, DUALS + (DualMatrixType,)) and element_of(item) != a.element:
        raise TypingError(f"cannot store {item} in a 2-D array of duals of {a.element}")
    if isinstance(index, types.BaseTuple) and len(index) == 2 and all(map(_is_int, index)):
        if item == a.element:
            def store(a, index, item):
                store_entry(a, checked_index(index[0], a.values.shape[0]),
                            checked_index(index[1], a.values.shape[1]), item)
            return store
        if isinstance(item, NUMBER):
            def store_number(a, index, item):
                _set_number(a, checked_index(index[0], a.values.shape[0]),
                            checked_index(index[1], a.values.shape[1]), item)
            return store_number
        raise TypingError(f"cannot store {item} in an entry of a 2-D array of duals")
    block = isinstance(index, types.SliceType) or (
        isinstance(index, types.BaseTuple) and len(index) == 2 and
        all(isinstance(t, types.SliceType) for t in index))
    if block:
        def into_block(a, index, item):
            _fill(a[index], item)
        return into_block
    if _is_int(index) or isinstance(index, types.BaseTuple):
        # a row or a column: the 1-D view's own assignment checks the item
        def through_view(a, index, item):
            view = a[index]
            view[:] = item
        return through_view
    raise TypingError(f"assignment into a 2-D array of duals takes integers and slices, not {index}")


_fill = compiled_only("matrix", "_fill")  # (block, item): block[i, j] = item broadcast


@overload(_fill)
def _fill_block(block, item):
    get, shape = access(item)

    def fill(block, item):
        rows, cols = block.values.shape
        if _broadcast(shape(item), (rows, cols)) != (rows, cols):
            raise ValueError("could not broadcast the assigned array into the block")
        source = snapshot(item)  # it may overlap the block (m[1:] = m[:-1]): read it first
        for i in range(rows):
            for j in range(cols):
                block[i, j] = get(source, i, j)
    return fill


# ---- elementwise: every rule, NumPy's broadcasting of (m, k) with (k,) and scalars ----------------------
# an axis of length 1 broadcasts (NumPy's rule): its index is 0
_entry = register_jitable(lambda a, i, j: a[i if a.shape[0] != 1 else 0, j if a.shape[1] != 1 else 0])
_in_row = register_jitable(lambda a, i, j: a[j])
_scalar = register_jitable(lambda a, i, j: a)
_shape_2 = register_jitable(lambda a: a.shape)
_shape_1 = register_jitable(lambda a: (-1, len(a)))
_shape_0 = register_jitable(lambda a: (-1, -1))


def access(t):
    """(read entry (i, j), shape with -1 for a broadcast axis) of one operand."""
    if isinstance(t, DualMatrixType) or is_float_matrix(t):
        return _entry, _shape_2
    if isinstance(t, ARRAYS) or (isinstance(t, types.Array) and t.ndim == 1):
        return _in_row, _shape_1
    return _scalar, _shape_0


@register_jitable
def broadcast_axis(a, b):
    """The broadcast length of one axis, -1 where an operand has none (NumPy's rule: equal
    lengths, or 1)."""
    if a == -1 or a == b or (a == 1 and b != -1):
        return b if b != -1 else a
    if b == -1 or b == 1:
        return a
    raise ValueError("operands could not be broadcast together")


@register_jitable
def _broadcast(sa, sb):
    return broadcast_axis(sa[0], sb[0]), broadcast_axis(sa[1], sb[1])


def _meets_matrix(arg_types):
    """Whether an elementwise call involves a 2-D array of duals, or a 2-D float array with a dual."""
    return (any(isinstance(t, DualMatrixType) for t in arg_types) or
            (any(is_float_matrix(t) for t in arg_types) and any(isinstance(t, DUALS) for t in arg_types)))


def matrix_elementwise(entry, arity):
    """Overload `entry` on 2-D arrays of duals (and 2-D float arrays meeting duals)."""
    name = getattr(entry, "__name__", entry)

    def choose(*arg_types):
        if not _meets_matrix(arg_types):
            return None
        if entry in IN_PLACE and isinstance(arg_types[0], types.Array):
            return None  # x op= duals into a float x: numpy_overloads' error
        if entry in IN_PLACE and isinstance(arg_types[0], ARRAYS):
            raise TypingError(f"{name}: non-broadcastable output operand (a 1-D array cannot "
                              "take a 2-D result in place)")
        for t in arg_types:
            if not (isinstance(t, NUMBER + DUALS + (DualMatrixType,)) or
                    (isinstance(t, types.Array) and t.ndim in (1, 2) and isinstance(t.dtype, NUMBER))):
                raise TypingError(f"{name}: 2-D arrays of duals combine with 1-D and 2-D float "
                                  f"arrays, duals and numbers; got {arg_types}")
        one_element_type([t for t in arg_types if not isinstance(t, DualMatrixType)] +
                         [element_of(t) for t in arg_types if isinstance(t, DualMatrixType)], name)
        like_position = next(k for k, t in enumerate(arg_types) if isinstance(t, DUALS + (DualMatrixType,)))
        if arity == 1:
            def unary(a):
                rows, cols = a.shape
                out = new_matrix_in(a, rows, cols, keep_order(a.shape, (strides_of(a, 2),)))
                for i in range(rows):
                    for j in range(cols):
                        store_entry(out, i, j, entry(load_entry(a, i, j)))
                return out
            return unary
        (get_a, shape_a), (get_b, shape_b) = access(arg_types[0]), access(arg_types[1])
        pick_like = first_of if like_position == 0 else second_of
        if in_place_target(entry, arg_types[0]):
            def into_first(a, b):
                rows, cols = a.shape
                if _broadcast(a.shape, shape_b(b)) != (rows, cols):
                    raise ValueError("non-broadcastable output operand")
                source = snapshot(b)
                for i in range(rows):
                    for j in range(cols):
                        store_entry(a, i, j, entry(load_entry(a, i, j), get_b(source, i, j)))
                return a
            return into_first

        def binary(a, b):
            rows, cols = _broadcast(shape_a(a), shape_b(b))
            order = keep_order((rows, cols), (strides_of(a, 2), strides_of(b, 2)))  # NumPy's layout
            out = new_matrix_in(pick_like(a, b), rows, cols, order)
            for i in range(rows):
                for j in range(cols):
                    store_entry(out, i, j, entry(get_a(a, i, j), get_b(b, i, j)))
            return out
        return binary

    if arity == 1:
        return lambda a: choose(a)
    return lambda a, b: choose(a, b)


def register_elementwise(make):
    """Overload every rule's entry points (not math.*, which take no arrays) with
    make(entry, arity), for the rules registered later (dualad.primitive) too."""
    def register(entries, rule):
        for entry in entries:
            if getattr(entry, "__module__", None) != "math":
                overload(entry, jit_options=RULE_JIT)(make(entry, rule.arity))

    for rule in RULES.values():
        register(entry_points(rule), rule)
    subscribe(lambda entry, rule, value: rule is not None and register([entry], rule))


register_elementwise(matrix_elementwise)
