"""NumPy's functions of 3-D arrays of duals (tensor.py's DualTensor):

    np.atleast_3d(v or M)            (n,) -> (1, n, 1), (m, k) -> (m, k, 1): views, as NumPy's
    np.dstack((a, b, ...))           1-D, 2-D and 3-D arrays (duals or floats), third axis
    np.dsplit(T, sections/indices)   views along the third axis
    np.stack / np.array of matrices  (axis 0, 1 or 2 for np.stack)
    np.sum(T[, axis]), np.mean/prod/max/min of all and the methods; reshape to and from 1-D
"""

import numpy as np
from numba import literal_unroll
from numba.core import types
from numba.core.errors import TypingError
from numpy.lib.stride_tricks import as_strided

from .cache import overload, overload_method, register_jitable
from .matrix import is_float_matrix, new_matrix
from .numpy_overloads import dualad_templates_first
from .numpy_structure import split_bounds
from .overloads import ARRAYS, DUALS, one_element_type
from .tensor import new_tensor, tensor_flat
from .types import (NUMBER, DualMatrixType, DualTensorType, compiled_only, element_of, make_dual_tensor,
                    writable)


# ---- making, joining and splitting --------------------------------------------------------------------
@register_jitable
def _vector_3d(v):
    """(n,) as (1, n, 1): a view, as NumPy's atleast_3d."""
    return make_dual_tensor(as_strided(v.values, shape=(1, len(v), 1), strides=(0, v.values.strides[0], 0)),
                            as_strided(v.components, shape=(1, len(v), 1, v.components.shape[1]),
                                       strides=(0, v.components.strides[0], 0, v.components.strides[1])), v)


@register_jitable
def _matrix_3d(m):
    """(m, k) as (m, k, 1): a view."""
    rows, cols = m.values.shape
    (s0, s1), (c0, c1, c2) = m.values.strides, m.components.strides
    return make_dual_tensor(as_strided(m.values, shape=(rows, cols, 1), strides=(s0, s1, 0)),
                            as_strided(m.components, shape=(rows, cols, 1, m.components.shape[2]),
                                       strides=(c0, c1, 0, c2)), m)


@overload(np.atleast_3d)
def _atleast_3d(arys):
    """NumPy's atleast_3d of one array: (n,) -> (1, n, 1), (m, k) -> (m, k, 1), views."""
    if isinstance(arys, ARRAYS):
        writable(arys)  # a view, as NumPy's: of f's own copy of an input
        return lambda arys: _vector_3d(arys)
    if isinstance(arys, DualMatrixType):
        return lambda arys: _matrix_3d(arys)
    if isinstance(arys, DualTensorType):
        return lambda arys: arys
    return None


_as_3d = compiled_only("numpy_tensor", "_as_3d")  # (x): np.atleast_3d of a dual or float array


@overload(_as_3d)
def _as_3d_impl(x):
    if isinstance(x, types.Array) and x.ndim == 1:
        return lambda x: x.reshape((1, x.size, 1))
    if isinstance(x, types.Array) and x.ndim == 2:
        return lambda x: np.ascontiguousarray(x).reshape((x.shape[0], x.shape[1], 1))
    return lambda x: np.atleast_3d(x)


def _joins_tensors(tup):
    return isinstance(tup, types.BaseTuple) and len(tup) > 0 and any(
        isinstance(t, DUALS + (DualMatrixType, DualTensorType)) for t in tup)


@overload(np.dstack)
def _dstack(tup):
    """np.dstack: each array as np.atleast_3d, joined along the third axis."""
    if not _joins_tensors(tup):
        return None
    for t in tup:
        if not (isinstance(t, ARRAYS + (DualMatrixType, DualTensorType)) or
                (isinstance(t, types.Array) and 1 <= t.ndim <= 3 and isinstance(t.dtype, NUMBER))):
            raise TypingError(f"np.dstack of duals joins 1-D, 2-D and 3-D arrays, got {tup}")
    one_element_type([element_of(t) for t in tup if isinstance(t, DUALS + (DualMatrixType, DualTensorType))],
                     "np.dstack")
    like = next(k for k, t in enumerate(tup) if isinstance(t, DUALS + (DualMatrixType, DualTensorType)))

    def dstack(tup):
        first = _as_3d(tup[like])
        rows, cols = first.shape[0], first.shape[1]
        depth = 0
        for item in literal_unroll(tup):
            part = _as_3d(item)
            if part.shape[0] != rows or part.shape[1] != cols:
                raise ValueError("all the input array dimensions except for the concatenation axis "
                                 "must match exactly")
            depth += part.shape[2]
        out = new_tensor(tup[like], rows, cols, depth)
        start = 0
        for item in literal_unroll(tup):
            part = _as_3d(item)
            out[:, :, start:start + part.shape[2]] = part
            start += part.shape[2]
        return out
    return dstack


@register_jitable
def _depth_pieces(ary, bounds):
    """[ary[:, :, bounds[0]:bounds[1]], ...] (appended: numba's list comprehension would
    allocate an array)."""
    pieces = [ary[:, :, bounds[0]:bounds[1]]]
    for i in range(1, len(bounds) - 1):
        pieces.append(ary[:, :, bounds[i]:bounds[i + 1]])
    return pieces


@overload(np.dsplit)
def _dsplit(ary, indices_or_sections):
    """The pieces along the third axis, as views (numpy_structure.split_bounds)."""
    if isinstance(ary, ARRAYS + (DualMatrixType,)):
        raise TypingError("dsplit only works on arrays of 3 or more dimensions")
    if not isinstance(ary, DualTensorType):
        return None
    return lambda ary, indices_or_sections: _depth_pieces(
        ary, split_bounds(ary.shape[2], indices_or_sections, True))


def _stacks_matrices(arrays):
    """Whether arrays is a tuple or list of 2-D arrays with duals among them (np.stack and
    np.array of them make a 3-D array)."""
    if isinstance(arrays, types.BaseTuple) and any(isinstance(t, DualMatrixType) for t in arrays):
        if not all(isinstance(t, DualMatrixType) or is_float_matrix(t) for t in arrays):
            raise TypingError(f"np.stack of 2-D arrays of duals takes 2-D arrays only, got {arrays}")
        one_element_type([element_of(t) for t in arrays if isinstance(t, DualMatrixType)], "np.stack")
        return True
    return isinstance(arrays, types.List) and isinstance(arrays.dtype, DualMatrixType)


@register_jitable
def _put(out, p, axis, item):
    """out's p-th slice along axis (0, 1 or 2) = item."""
    if axis == 0:
        out[p] = item
    elif axis == 1:
        out[:, p] = item
    else:
        out[:, :, p] = item


stacked_matrices = compiled_only("numpy_tensor", "stacked_matrices")  # (arrays, axis): np.stack of matrices


@overload(stacked_matrices)
def _stacked_matrices(arrays, axis):
    if isinstance(arrays, types.List):
        def from_list(arrays, axis):
            rows, cols = arrays[0].shape
            out = _stack_of(arrays[0], len(arrays), rows, cols, axis)
            for p in range(len(arrays)):
                if arrays[p].shape != (rows, cols):
                    raise ValueError("all input arrays must have the same shape")
                _put(out, p, axis + 3 if axis < 0 else axis, arrays[p])
            return out
        return from_list
    count = len(arrays)
    like = next(k for k, t in enumerate(arrays) if isinstance(t, DualMatrixType))

    def from_tuple(arrays, axis):
        rows, cols = arrays[like].shape
        out = _stack_of(arrays[like], count, rows, cols, axis)
        p = 0
        for item in literal_unroll(arrays):
            if item.shape != (rows, cols):
                raise ValueError("all input arrays must have the same shape")
            _put(out, p, axis + 3 if axis < 0 else axis, item)
            p += 1
        return out
    return from_tuple


@register_jitable
def _stack_of(like, count, rows, cols, axis):
    which = axis + 3 if axis < 0 else axis
    if which == 0:
        return new_tensor(like, count, rows, cols)
    if which == 1:
        return new_tensor(like, rows, count, cols)
    if which == 2:
        return new_tensor(like, rows, cols, count)
    raise ValueError("axis out of bounds for a stack of 2-D arrays")


@overload(np.stack)
def _stack(arrays, axis=0):
    if not _stacks_matrices(arrays):
        return None
    return lambda arrays, axis=0: stacked_matrices(arrays, axis)


def _array_of_matrices(copy):
    def choose(obj, dtype=None):
        if isinstance(obj, DualTensorType):
            return (lambda obj, dtype=None: np.copy(obj)) if copy else (lambda obj, dtype=None: obj)
        if not _stacks_matrices(obj):
            return None
        return lambda obj, dtype=None: stacked_matrices(obj, 0)
    return choose


overload(np.array)(_array_of_matrices(True))
overload(np.asarray)(_array_of_matrices(False))


# ---- reductions ------------------------------------------------------------------------------------------
@overload(np.sum)
def _sum(a, axis=None):
    """The sum of all entries, or along one axis (a 2-D array of duals)."""
    if not isinstance(a, DualTensorType):
        return None
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        return lambda a, axis=None: np.sum(tensor_flat(a))
    if not isinstance(axis, types.Integer):
        raise TypingError(f"np.sum of a 3-D array of duals takes axis None or an integer, not {axis}")

    def along(a, axis=None):
        d, rows, cols = a.shape
        which = axis + 3 if axis < 0 else axis
        if which == 0:
            out = new_matrix(a, rows, cols)
            out[:, :] = 0.0
            for p in range(d):
                out += a[p]
            return out
        if which != 1 and which != 2:
            raise ValueError("axis out of bounds for a 3-D array")
        out = new_matrix(a, d, cols if which == 1 else rows)
        for p in range(d):
            out[p] = np.sum(a[p], axis=which - 1)
        return out
    return along


def _of_all(func):
    return lambda a: (lambda a: func(tensor_flat(a))) if isinstance(a, DualTensorType) else None


def _method_of_all(func):
    return lambda a: lambda a: func(tensor_flat(a))


for _func in (np.mean, np.prod, np.max, np.min, np.amax, np.amin):
    overload(_func)(_of_all(_func))
for _name in ("mean", "prod", "max", "min"):
    overload_method(DualTensorType, _name)(_method_of_all(getattr(np, _name)))
# t.sum(axis=k), as numba's method on float arrays (np.sum's overload above)
overload_method(DualTensorType, "sum")(lambda a, axis=None: lambda a, axis=None: np.sum(a, axis))


dualad_templates_first((np.atleast_3d, np.dstack, np.dsplit, np.stack, np.array, np.asarray, np.sum, np.mean,
                        np.prod, np.max, np.min, np.amax, np.amin))
