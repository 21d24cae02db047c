"""3-D arrays of duals (DualTensor): their surface and every rule elementwise on them.

    T = np.zeros((a, b, c)); T[i, j, k] = dual   # promote.py makes T a DualTensor
    T[i, j, k]                                  # a scalar dual
    T[i], T[:, :, k], T[i, j], T[1:, ::2] ...   # views: DualMatrix, DualArray or DualTensor
    T[...] = dual, number or an array broadcast to the view
    len(T), T.shape, T.size, T.ndim, T.dtype, T.T, np.transpose(T), T.copy(), flat(T), ravel
    T op U, T op M, T op v, T op c, f(T)         # every rule, NumPy's broadcasting
    to_tensor(v, (a, b, c))                      # a 1-D array's view as 3-D (reshape)

The slice T[p] is a DualMatrix view, so each 3-D operation is the 2-D one (matrix.py) on
the slices: one implementation of every rule, indexing and broadcasting. NumPy's functions
of 3-D arrays (atleast_3d, dstack, dsplit, stack of matrices, sums) are numpy_tensor.py's.
"""

import operator

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numpy.lib.stride_tricks import as_strided

from .cache import overload, overload_attribute, overload_method, register_jitable
from .layout import copy_in_order, keep_order, new_tensor_in, strides_of
from .matrix import broadcast_axis, c_order, register_elementwise
from .overloads import DUALS, IN_PLACE, first_of, in_place_target, one_element_type, second_of, snapshot
from .protocol import as_dual_array, checked_index
from .types import (NUMBER, DualMatrixType, DualTensorType, compiled_only, element_of, load_cell,
                    make_dual_array, make_dual_matrix, make_dual_tensor, store_cell)

__all__ = ["TENSOR", "new_tensor", "tensor_flat", "is_float_tensor", "to_tensor", "depth", "slice_of"]

TENSOR = DualTensorType


def is_float_tensor(t):
    """A 3-D array of plain numbers."""
    return isinstance(t, types.Array) and t.ndim == 3 and isinstance(t.dtype, NUMBER)


new_tensor = compiled_only("tensor", "new_tensor")  # (like, a, b, c): an uninitialised DualTensor


@overload(new_tensor)
def _new_tensor(like, a, b, c):
    if isinstance(like, DUALS + (DualMatrixType, DualTensorType, types.BaseTuple, types.List)):
        width = DualTensorType(element_of(like)).width
        return lambda like, a, b, c: make_dual_tensor(np.empty((a, b, c)), np.empty((a, b, c, width)), like)
    return None


tensor_flat = compiled_only("tensor", "tensor_flat")  # (T): T's entries in C order, 1-D


@overload(tensor_flat)
def _tensor_flat(t):
    """A view where T's entries lie at one step (NumPy's reshape(-1)), else a copy
    (matrix.c_order; np.ravel views only a C-contiguous T)."""
    if isinstance(t, DualTensorType):
        return lambda t: c_order(t, False)
    return None


@register_jitable
def to_tensor(v, shape):
    """A 1-D array of duals as an (a, b, c) tensor (one of them may be -1), C order: a view of
    v's memory, as NumPy's reshape of a vector."""
    a, b, c = shape
    size = len(v)
    known = max(a, 1) * max(b, 1) * max(c, 1)
    if (a == -1) + (b == -1) + (c == -1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if a == -1:
        a = size // known
    elif b == -1:
        b = size // known
    elif c == -1:
        c = size // known
    if a * b * c != size or a < 0 or b < 0 or c < 0:
        raise ValueError("cannot reshape an array of duals into this shape")
    v = as_dual_array(v)  # a DualArray: overloads refuse seeds (types.writable)
    step = v.values.strides[0]
    row, column = v.components.strides
    values = as_strided(v.values, shape=(a, b, c), strides=(b * c * step, c * step, step))
    components = as_strided(v.components, shape=(a, b, c, v.components.shape[1]),
                            strides=(b * c * row, c * row, row, column))
    return make_dual_tensor(values, components, v)


# ---- structure ----------------------------------------------------------------------------------------
overload(len)(lambda a: (lambda a: a.values.shape[0]) if isinstance(a, DualTensorType) else None)
overload_attribute(DualTensorType, "shape")(lambda a: lambda a: a.values.shape)
overload_attribute(DualTensorType, "size")(lambda a: lambda a: a.values.size)
overload_attribute(DualTensorType, "ndim")(lambda a: lambda a: 3)
overload_attribute(DualTensorType, "dtype")(lambda a: lambda a: a.values.dtype)


@register_jitable
def _transposed(t):
    return make_dual_tensor(np.transpose(t.values), np.transpose(t.components, (2, 1, 0, 3)), t)


@register_jitable
def _copied(t):
    return make_dual_tensor(t.values.copy(), t.components.copy(), t)


overload_attribute(DualTensorType, "T")(lambda a: lambda a: _transposed(a))
overload_method(DualTensorType, "transpose")(lambda a: lambda a: _transposed(a))
overload(np.transpose)(lambda a: (lambda a: _transposed(a)) if isinstance(a, DualTensorType) else None)
overload(np.copy)(lambda a: (lambda a: copy_in_order(a)) if isinstance(a, DualTensorType) else None)
overload_method(DualTensorType, "copy")(lambda a: lambda a: _copied(a))
overload(np.ravel)(lambda a: (lambda a: c_order(a, True)) if isinstance(a, DualTensorType) else None)
overload_method(DualTensorType, "ravel")(lambda a: lambda a: c_order(a, True))
overload_method(DualTensorType, "flatten")(lambda a: lambda a: np.copy(tensor_flat(a)))


# ---- indexing: integers and slices on up to three axes ------------------------------------------------
def _is_int(t):
    return isinstance(t, types.Integer)


_one = register_jitable(lambda index: (index, slice(None, None), slice(None, None)))
_first = register_jitable(lambda index: (index[0], slice(None, None), slice(None, None)))
_two = register_jitable(lambda index: (index[0], index[1], slice(None, None)))
_three = register_jitable(lambda index: index)


def _axes(index):
    """(the index as three per-axis indices, their types) for integers and slices."""
    if _is_int(index) or isinstance(index, types.SliceType):
        return _one, [index]
    if isinstance(index, types.BaseTuple) and 1 <= len(index) <= 3 and all(
            _is_int(t) or isinstance(t, types.SliceType) for t in index):
        return (_first, _two, _three)[len(index) - 1], list(index)
    raise TypingError(f"a 3-D array of duals takes up to three integers and slices as indices, "
                      f"not {index}")


@register_jitable
def _cell(t, i, j, k):
    a, b, c = t.values.shape
    return load_cell(t, checked_index(i, a), checked_index(j, b), checked_index(k, c))


_line = register_jitable(lambda t, i, j, k: make_dual_array(t.values[i, j, k], t.components[i, j, k], t))
_plane = register_jitable(lambda t, i, j, k: make_dual_matrix(t.values[i, j, k], t.components[i, j, k], t))
_block = register_jitable(lambda t, i, j, k: make_dual_tensor(t.values[i, j, k], t.components[i, j, k], t))
_VIEWS = (_block, _plane, _line, _cell)  # by the number of integer indices


@overload(operator.getitem)
def _getitem(t, index):
    if not isinstance(t, DualTensorType):
        return None
    full, parts = _axes(index)
    view = _VIEWS[sum(map(_is_int, parts))]

    def getitem(t, index):
        i, j, k = full(index)
        return view(t, i, j, k)
    return getitem


@overload(operator.setitem)
def _setitem(t, index, item):
    if not isinstance(t, DualTensorType):
        return None
    if isinstance(item, DUALS + (DualMatrixType, DualTensorType)) and element_of(item) != t.element:
        raise TypingError(f"cannot store {item} in a 3-D array of duals of {t.element}")
    full, parts = _axes(index)
    n_ints = sum(map(_is_int, parts))
    if n_ints == 3:
        if item == t.element:
            def store(t, index, item):
                i, j, k = full(index)
                a, b, c = t.values.shape
                store_cell(t, checked_index(i, a), checked_index(j, b), checked_index(k, c), item)
            return store
        if isinstance(item, NUMBER):
            def store_number(t, index, item):
                i, j, k = full(index)
                t.values[i, j, k] = item
                t.components[i, j, k, :] = 0.0
            return store_number
        raise TypingError(f"cannot store {item} in an entry of a 3-D array of duals")
    if n_ints == 2:
        def into_line(t, index, item):
            view = t[index]
            view[:] = item
        return into_line
    if n_ints == 1:
        def into_matrix(t, index, item):
            view = t[index]
            view[:, :] = item
        return into_matrix

    def into_block(t, index, item):
        _fill(t[index], item)
    return into_block


slice_of = compiled_only("tensor", "slice_of")  # (x, p): x's 2-D slice p, broadcast (x itself below 3-D)


@overload(slice_of)
def slice_of_impl(x, p):
    if isinstance(x, DualTensorType) or is_float_tensor(x):
        return lambda x, p: x[p if x.shape[0] != 1 else 0]
    return lambda x, p: x


depth = compiled_only("tensor", "depth")  # (x): the length of x's first of three axes, -1 below 3-D


@overload(depth)
def depth_impl(x):
    if isinstance(x, DualTensorType) or is_float_tensor(x):
        return lambda x: x.shape[0]
    return lambda x: -1


_snapshot = compiled_only("tensor", "_snapshot")  # (x): a copy of an array of duals, else x


@overload(_snapshot)
def _snapshot_impl(x):
    """Every array of duals is copied: a 2-D or 1-D view of the array written into (t += t[0])
    must be read before its first slice is written, as NumPy does."""
    if isinstance(x, DualTensorType):
        return lambda x: _copied(x)
    return lambda x: snapshot(x)


_fill = compiled_only("tensor", "_fill")  # (block, item): block[...] = item broadcast


@overload(_fill)
def _fill_block(block, item):
    def fill(block, item):
        planes = depth(item)
        if planes != -1 and planes != 1 and planes != len(block):
            raise ValueError("could not broadcast the assigned array into the block")
        source = _snapshot(item)  # it may overlap the block: read it first
        for p in range(len(block)):
            view = block[p]
            view[:, :] = slice_of(source, p)
    return fill


# ---- elementwise: every rule, through the 2-D slices --------------------------------------------------
def _meets_tensor(arg_types):
    return (any(isinstance(t, DualTensorType) for t in arg_types) or
            (any(is_float_tensor(t) for t in arg_types) and
             any(isinstance(t, DUALS + (DualMatrixType,)) for t in arg_types)))


def tensor_elementwise(entry, arity):
    """Overload `entry` on 3-D arrays of duals (and 3-D float arrays meeting duals): the 2-D
    operation on each slice, the first axis broadcast as NumPy's."""
    name = getattr(entry, "__name__", entry)

    def choose(*arg_types):
        if not _meets_tensor(arg_types):
            return None
        if entry in IN_PLACE and isinstance(arg_types[0], types.Array):
            return None  # x op= duals into a float x: numpy_overloads' error
        if entry in IN_PLACE and not isinstance(arg_types[0], DualTensorType):
            raise TypingError(f"{name}: non-broadcastable output operand (a 3-D result in place "
                              "of a lower-dimensional array)")
        for t in arg_types:
            if not (isinstance(t, NUMBER + DUALS + (DualMatrixType, DualTensorType)) or
                    (isinstance(t, types.Array) and t.ndim <= 3 and isinstance(t.dtype, NUMBER))):
                raise TypingError(f"{name}: 3-D arrays of duals combine with arrays of up to 3 "
                                  f"dimensions, duals and numbers; got {arg_types}")
        one_element_type([element_of(t) if isinstance(t, (DualMatrixType, DualTensorType)) else t
                          for t in arg_types], name)
        if arity == 1:
            def unary(a):
                d, rows, cols = a.shape
                out = new_tensor_in(a, d, rows, cols, keep_order(a.shape, (strides_of(a, 3),)))
                for p in range(d):
                    view = out[p]
                    view[:, :] = entry(a[p])
                return out
            return unary
        if in_place_target(entry, arg_types[0]):
            def into_first(a, b):
                if broadcast_axis(len(a), depth(b)) != len(a):
                    raise ValueError("non-broadcastable output operand")
                source = _snapshot(b)
                for p in range(len(a)):
                    view = a[p]
                    entry(view, slice_of(source, p))  # writes into the view
                return a
            return into_first
        like_position = next(k for k, t in enumerate(arg_types)
                             if isinstance(t, DUALS + (DualMatrixType, DualTensorType)))
        pick_like = first_of if like_position == 0 else second_of

        def binary(a, b):
            lead = broadcast_axis(depth(a), depth(b))
            if lead == 0:
                raise ValueError("3-D arrays of duals with no entries along the first axis are not "
                                 "compiled")
            first = entry(slice_of(a, 0), slice_of(b, 0))
            rows, cols = first.shape
            order = keep_order((lead, rows, cols), (strides_of(a, 3), strides_of(b, 3)))  # NumPy's layout
            out = new_tensor_in(pick_like(a, b), lead, rows, cols, order)
            for p in range(lead):
                view = out[p]
                view[:, :] = first if p == 0 else entry(slice_of(a, p), slice_of(b, p))
            return out
        return binary

    if arity == 1:
        return lambda a: choose(a)
    return lambda a, b: choose(a, b)


register_elementwise(tensor_elementwise)
