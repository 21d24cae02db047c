"""NumPy functions that make or take 2-D arrays of duals (matrix.py's DualMatrix):

    np.dot / np.matmul / @    matrix-vector, vector-matrix, matrix-matrix (dual or float)
    np.outer, np.kron         products of vectors (kron also of two matrices)
    np.diag, np.diagflat, np.diagonal, np.trace, np.tril, np.triu, np.where (2-D condition)
    np.flipud, np.fliplr, np.flip, np.rot90, np.swapaxes (matrices), np.atleast_2d,
    np.expand_dims, np.broadcast_to (vectors to matrices)
    np.vstack, np.column_stack, np.stack and np.array of a tuple or list of 1-D arrays
    np.sum (whole or along an axis), np.mean, np.prod, np.max, np.min (whole)
    np.reshape of a 1-D array to (m, k), and of a matrix to 1-D
    np.cov, np.corrcoef (rows are variables; or two 1-D samples)

Each follows its registry entry (dualad/functions) step by step: tril/triu and diag write
constant zeros (np.where's convention: no derivative from the entries they drop), trace of an
empty diagonal is a constant 0, cov is NumPy's X Xᵀ / (samples − ddof) after centring.
"""

import operator

import numpy as np
from numba import literal_unroll
from numpy.lib.stride_tricks import as_strided
from numba.core import types
from numba.core.errors import TypingError

from .cache import overload, overload_method, register_jitable
from .layout import keep_order, matrix_order, new_matrix_in, strides_of, view_strides, vote
from .matrix import access, flat, is_float_matrix, new_matrix
from .tensor import tensor_flat, to_tensor
from .protocol import as_dual_array
from .numpy_overloads import cannot, dualad_templates_first, is_none, is_vector, stacked
from .overloads import ARRAYS, DUALS, SCALARS, first_of, new_array, one_element_type, second_of
from .types import (NUMBER, DualMatrixType, DualTensorType, compiled_only, element_of, has_dual,
                    load_entry, make_dual_matrix, make_dual_tensor, store_element, store_entry, writable,
                    zero_element)

MATRICES = (DualMatrixType,)


def _is_matrix(t):
    return isinstance(t, DualMatrixType) or is_float_matrix(t)


def _is_1d(t):
    return isinstance(t, ARRAYS) or is_vector(t)


def _duals_among(*arg_types):
    return any(isinstance(t, DUALS + MATRICES) for t in arg_types)


def _like(a, b):
    """The accessor of the dual operand of two (its element type makes the result)."""
    return first_of if isinstance(a, DUALS + MATRICES) else second_of


# ---- products ----------------------------------------------------------------------------------------
@overload(np.dot)
@overload(np.matmul)
@overload(operator.matmul)
def _matrix_product(a, b):
    """Products with a matrix on either side, one of the operands dual. (A float matrix times
    a dual vector is numpy_overloads' own.)"""
    if not (_duals_among(a, b) and (isinstance(a, MATRICES) or isinstance(b, MATRICES) or
                                    (_is_matrix(b) and _is_1d(a)) or (_is_matrix(a) and _is_matrix(b)))):
        return None
    one_element_type([element_of(t) for t in (a, b) if isinstance(t, DUALS + MATRICES)], "matmul")
    like = _like(a, b)
    if _is_matrix(a) and _is_1d(b):
        def matvec(a, b):
            rows, cols = a.shape
            if cols != len(b):
                raise ValueError("matmul: shapes not aligned")
            out = new_array(like(a, b), rows)
            for i in range(rows):
                total = zero_element(like(a, b))
                for j in range(cols):
                    total = total + a[i, j] * b[j]
                store_element(out, i, total)
            return out
        return matvec
    if _is_1d(a) and _is_matrix(b):
        return lambda a, b: np.dot(b.T, a)  # vᵀB = (Bᵀv)ᵀ, the same sums in the same order
    if _is_matrix(a) and _is_matrix(b):
        def matmat(a, b):
            rows, inner = a.shape
            if b.shape[0] != inner:
                raise ValueError("matmul: shapes not aligned")
            cols = b.shape[1]
            out = new_matrix(like(a, b), rows, cols)
            for i in range(rows):
                for j in range(cols):
                    total = zero_element(like(a, b))
                    for k in range(inner):
                        total = total + a[i, k] * b[k, j]
                    store_entry(out, i, j, total)
            return out
        return matmat
    raise TypingError(f"matmul of {a} and {b}: 2-D arrays of duals multiply vectors and matrices")


overload_method(DualMatrixType, "dot")(lambda a, b: lambda a, b: np.dot(a, b))


@overload(np.outer)
def _outer(a, b):
    """a[i] b[j] (NumPy ravels 2-D operands first)."""
    if not _duals_among(a, b):
        return None
    if not all(_is_1d(t) or isinstance(t, MATRICES) for t in (a, b)):
        raise TypingError(f"np.outer of duals takes 1-D or 2-D arrays, not {a} and {b}")
    one_element_type([element_of(t) for t in (a, b) if isinstance(t, DUALS + MATRICES)], "np.outer")
    like = _like(a, b)

    def outer(a, b):
        u, v = _flat(a), _flat(b)
        out = new_matrix(like(a, b), len(u), len(v))
        zero = zero_element(like(a, b))
        for i in range(len(u)):
            for j in range(len(v)):
                store_entry(out, i, j, zero + u[i] * v[j])
        return out
    return outer


_flat = register_jitable(lambda a: np.ravel(a))


@overload(np.kron)
def _kron(a, b):
    """kron(a, b)[i·m + k] = a[i] b[k] for vectors; [i·m + k, j·n + l] = a[i, j] b[k, l]."""
    if not _duals_among(a, b):
        return None
    one_element_type([element_of(t) for t in (a, b) if isinstance(t, DUALS + MATRICES)], "np.kron")
    like = _like(a, b)
    if _is_1d(a) and _is_1d(b):
        def vectors(a, b):
            m = len(b)
            out = new_array(like(a, b), len(a) * m)
            zero = zero_element(like(a, b))
            for i in range(len(a)):
                for k in range(m):
                    store_element(out, i * m + k, zero + a[i] * b[k])
            return out
        return vectors
    if _is_matrix(a) and _is_matrix(b):
        def matrices(a, b):
            (ra, ca), (rb, cb) = a.shape, b.shape
            out = new_matrix(like(a, b), ra * rb, ca * cb)
            zero = zero_element(like(a, b))
            for i in range(ra):
                for j in range(ca):
                    for k in range(rb):
                        for l in range(cb):  # noqa: E741  (NumPy's index names)
                            store_entry(out, i * rb + k, j * cb + l, zero + a[i, j] * b[k, l])
            return out
        return matrices
    cannot(f"np.kron of {a} and {b}: compiled code takes two vectors or two matrices; reshape the "
           "vector to (1, k) first, or pass jit=False")


# ---- diagonals and triangles ---------------------------------------------------------------------
@register_jitable
def _diagonal_start(rows, cols, offset):
    """(first row, first column, length) of the diagonal at offset."""
    i0, j0 = (0, offset) if offset >= 0 else (-offset, 0)
    return i0, j0, max(0, min(rows - i0, cols - j0))


@overload(np.diagonal)
def _diagonal(a, offset=0):
    if isinstance(a, MATRICES):
        def diagonal(a, offset=0):
            i0, j0, count = _diagonal_start(a.shape[0], a.shape[1], offset)
            out = new_array(a, count)
            for k in range(count):
                store_element(out, k, load_entry(a, i0 + k, j0 + k))
            return out
        return diagonal
    return None


@overload(np.diag)
def _diag(v, k=0):
    if isinstance(v, MATRICES):
        return lambda v, k=0: np.diagonal(v, k)
    if isinstance(v, ARRAYS):
        def diagflat(v, k=0):
            m = len(v)
            n = m + abs(k)
            out = new_matrix(v, n, n)
            out.values[:, :] = 0.0
            out.components[:, :, :] = 0.0
            i0, j0, _ = _diagonal_start(n, n, k)
            for i in range(m):
                store_entry(out, i0 + i, j0 + i, v[i])
            return out
        return diagflat
    return None


@overload(np.trace)
def _trace(a, offset=0):
    """structure.trace: the sum of the diagonal (an empty one: the constant 0)."""
    if isinstance(a, MATRICES):
        return lambda a, offset=0: np.sum(np.diagonal(a, offset))
    return None


def _triangle(lower):
    def choose(m, k=0):
        if not isinstance(m, MATRICES):
            return None

        def triangle(m, k=0):
            rows, cols = m.shape
            out = new_matrix(m, rows, cols)
            zero = zero_element(m)
            for i in range(rows):
                for j in range(cols):
                    keep = j - i <= k if lower else j - i >= k
                    store_entry(out, i, j, load_entry(m, i, j) if keep else zero)
            return out
        return triangle
    return choose


overload(np.tril)(_triangle(lower=True))
overload(np.triu)(_triangle(lower=False))


@overload(np.diagflat)
def _diagflat(v, k=0):
    if isinstance(v, ARRAYS):
        return lambda v, k=0: np.diag(v, k)
    if isinstance(v, MATRICES):
        return lambda v, k=0: np.diag(flat(v), k)
    return None


@overload(np.where)
def _where(condition, x, y):
    """np.where with a 2-D boolean condition: the branch taken, entry by entry (matrices,
    rows broadcast, scalars); the untaken branch's derivative is not read."""
    if not (isinstance(condition, types.Array) and condition.ndim == 2 and
            isinstance(condition.dtype, types.Boolean) and _duals_among(x, y)):
        return None
    one_element_type([element_of(t) for t in (x, y) if isinstance(t, DUALS + MATRICES)], "np.where")
    like = _like(x, y)
    (get_x, shape_x), (get_y, shape_y) = access(x), access(y)

    def where(condition, x, y):
        rows, cols = condition.shape
        for shape in (shape_x(x), shape_y(y)):
            if (shape[0] != -1 and shape[0] != rows) or (shape[1] != -1 and shape[1] != cols):
                raise ValueError("operands could not be broadcast together")
        order = keep_order((rows, cols), (strides_of(condition, 2), strides_of(x, 2), strides_of(y, 2)))
        out = new_matrix_in(like(x, y), rows, cols, order)  # NumPy's layout
        zero = zero_element(like(x, y))
        for i in range(rows):
            for j in range(cols):
                store_entry(out, i, j, zero + (get_x(x, i, j) if condition[i, j] else get_y(y, i, j)))
        return out
    return where


# ---- constant matrices shaped and laid out as another ---------------------------------------------------
def _constant_like(a, dtype, what):
    if not isinstance(a, MATRICES):
        return False
    if not (is_none(dtype) or (isinstance(dtype, (types.NumberClass, types.DType)) and dtype.dtype == types.float64)):
        raise TypingError(f"{what} of a 2-D array of duals makes float64 duals, not dtype={dtype}")
    return True


@register_jitable
def _filled_like(a, fill):
    """Constants (zero tangents) of a's shape, laid out as a is (NumPy's order 'K')."""
    rows, cols = a.shape
    out = new_matrix_in(a, rows, cols, keep_order(a.shape, (strides_of(a, 2),)))
    out.values[:, :] = fill
    out.components[:, :, :] = 0.0
    return out


def _matrix_like(fill, what):
    def choose(a, dtype=None):
        if _constant_like(a, dtype, what):
            return lambda a, dtype=None: _filled_like(a, fill)
        return None
    return choose


overload(np.zeros_like)(_matrix_like(0.0, "np.zeros_like"))
overload(np.empty_like)(_matrix_like(0.0, "np.empty_like"))
overload(np.ones_like)(_matrix_like(1.0, "np.ones_like"))


@overload(np.full_like)
def _full_like(a, fill_value, dtype=None):
    if _constant_like(a, dtype, "np.full_like"):
        if not isinstance(fill_value, NUMBER):
            raise TypingError("np.full_like of a 2-D array of duals takes a number as fill_value "
                              "(a dual fill: np.zeros_like(m) + dual)")
        return lambda a, fill_value, dtype=None: _filled_like(a, float(fill_value))
    return None


# ---- flips, rotations, added axes: views and copies of the entries ----------------------------------
# views, as NumPy's: a write through them reaches m
overload(np.flipud)(lambda m: (lambda m: m[::-1]) if isinstance(m, MATRICES) else None)
overload(np.fliplr)(lambda m: (lambda m: m[:, ::-1]) if isinstance(m, MATRICES) else None)
overload(np.flip)(lambda m: (lambda m: m[::-1, ::-1]) if isinstance(m, MATRICES) else None)


@overload(np.rot90)
def _rot90(m, k=1):
    """Counter-clockwise by 90° k times: NumPy's flips and transposes (a view)."""
    if not isinstance(m, MATRICES):
        return None

    def rot90(m, k=1):
        turns = k % 4
        if turns == 0:
            return m[:, :]
        if turns == 1:
            return m[:, ::-1].T
        if turns == 2:
            return m[::-1, ::-1]
        return m.T[:, ::-1]
    return rot90


@overload(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    if not isinstance(a, MATRICES):
        return None

    def swapaxes(a, axis1, axis2):
        if not (-2 <= axis1 < 2 and -2 <= axis2 < 2):
            raise ValueError("axis out of bounds for a 2-D array")
        return a if axis1 % 2 == axis2 % 2 else a.T
    return swapaxes


@overload(np.moveaxis)
def _moveaxis(a, source, destination):
    if isinstance(a, ARRAYS):
        def vector(a, source, destination):
            if not (source in (0, -1) and destination in (0, -1)):
                raise ValueError("axis out of bounds for a 1-D array")
            return a
        return vector
    if isinstance(a, MATRICES):
        return lambda a, source, destination: np.swapaxes(a, source, destination)
    return None


@overload(np.atleast_2d)
def _atleast_2d(a):
    if isinstance(a, MATRICES):
        return lambda a: a
    if isinstance(a, ARRAYS):
        writable(a)  # a view, as NumPy's: of f's own copy of an input
        return lambda a: _to_matrix(a, (1, len(a)))
    return None


@overload(np.expand_dims)
def _expand_dims(a, axis):
    if not isinstance(a, ARRAYS):
        return None
    writable(a)  # a view, as NumPy's: of f's own copy of an input

    def expand_dims(a, axis):
        if axis == 0 or axis == -2:
            return _to_matrix(a, (1, len(a)))
        if axis == 1 or axis == -1:
            return _to_matrix(a, (len(a), 1))
        raise ValueError("axis out of bounds for expanding a 1-D array")
    return expand_dims


@overload(np.broadcast_to)
def _broadcast_to(array, shape):
    """A vector repeated as the rows of an (m, len) matrix (a copy: NumPy's is a read-only view)."""
    if not isinstance(array, ARRAYS):
        return None
    if not (isinstance(shape, types.BaseTuple) and len(shape) == 2):
        if isinstance(shape, types.Integer) or (isinstance(shape, types.BaseTuple) and len(shape) == 1):
            return lambda array, shape: _same_length(array, shape)
        cannot(f"np.broadcast_to of a 1-D array of duals to {shape}: compiled code makes 1-D or "
               "2-D arrays of duals; pass jit=False")

    def to_rows(array, shape):
        m, k = shape
        if k != len(array):
            raise ValueError("operands could not be broadcast together with the requested shape")
        out = new_matrix(array, m, k)
        for i in range(m):
            for j in range(k):
                store_entry(out, i, j, array[j])
        return out
    return to_rows


@register_jitable
def _same_length(array, shape):
    if np.prod(np.asarray(shape)) != len(array):
        raise ValueError("operands could not be broadcast together with the requested shape")
    return array


# ---- joining vectors into a matrix ------------------------------------------------------------------
def _scalar_row(t):
    """A tuple or list of numbers and scalar duals: one row of np.array([[a, b], [c, d]])."""
    return (isinstance(t, types.BaseTuple) and len(t) > 0 and all(isinstance(m, SCALARS + NUMBER) for m in t)) or (
        isinstance(t, types.List) and isinstance(t.dtype, SCALARS + NUMBER))


def _rows_of(arrays, what):
    """Whether arrays is a tuple or list of rows, 1-D arrays or tuples/lists of scalars, with
    duals among them (the rows of a matrix); a TypingError for tuples mixing duals with
    anything else."""
    if isinstance(arrays, types.BaseTuple) and any(isinstance(t, MATRICES) for t in arrays):
        return False  # a 3-D array (numpy_tensor.py's), or blocks joined (_join_blocks)
    if isinstance(arrays, types.List) and isinstance(arrays.dtype, MATRICES):
        if what in ("np.stack", "np.array", "np.asarray"):
            return False  # a 3-D array: numpy_tensor.py's
        cannot(f"{what} of 2-D arrays of duals is not compiled (it joins 1-D arrays into a "
               "matrix): allocate the result, np.zeros((m, k)), and assign the blocks "
               "(out[:m1] = a), or pass jit=False")
    if isinstance(arrays, types.BaseTuple) and any(isinstance(t, ARRAYS) or (_scalar_row(t) and has_dual(t))
                                                   for t in arrays):
        if not all(_is_1d(t) or _scalar_row(t) for t in arrays):
            raise TypingError(f"{what} of duals joins 1-D arrays (or tuples of scalars) in compiled "
                              f"code, got {arrays}")
        one_element_type([element_of(t) for t in arrays if has_dual(t)], what)
        return True
    return isinstance(arrays, types.List) and (isinstance(arrays.dtype, ARRAYS) or (
        _scalar_row(arrays.dtype) and has_dual(arrays.dtype)))


as_row = compiled_only("numpy_matrix", "as_row")  # (row): a 1-D array of a row of _rows_of


@overload(as_row)
def _as_row(row):
    if not isinstance(row, types.BaseTuple):
        return lambda row: row  # an array, or a list (indexable as it is)
    if has_dual(row):
        return lambda row: stacked(row)
    count = len(row)

    def floats(row):
        out = np.empty(count)
        k = 0
        for item in literal_unroll(row):
            out[k] = item
            k += 1
        return out
    return floats


rows_matrix = compiled_only("numpy_matrix", "rows_matrix")  # (arrays): the matrix of these rows


@overload(rows_matrix)
def _rows_matrix(arrays):
    """The matrix whose rows are `arrays` (a tuple or list of 1-D arrays)."""
    if isinstance(arrays, types.List):
        def from_list(arrays):
            cols = len(as_row(arrays[0]))
            out = new_matrix(arrays, len(arrays), cols)
            for i in range(len(arrays)):
                row = as_row(arrays[i])
                if len(row) != cols:
                    raise ValueError("all the input arrays must have the same length")
                for j in range(cols):
                    store_entry(out, i, j, row[j])
            return out
        return from_list
    count = len(arrays)

    def from_tuple(arrays):
        cols = len(as_row(arrays[0]))
        out = new_matrix(arrays, count, cols)
        zero, i = zero_element(arrays), 0
        for item in literal_unroll(arrays):
            row = as_row(item)
            if len(row) != cols:
                raise ValueError("all the input arrays must have the same length")
            for j in range(cols):
                store_entry(out, i, j, zero + row[j])  # a float row: constants
            i += 1
        return out
    return from_tuple


# ---- joining blocks (matrices, and vectors as rows or columns) into a matrix --------------------------
joined = compiled_only("numpy_matrix", "joined")  # (tup, axis, vector): blocks joined along axis 0 or 1
block_shape = compiled_only("numpy_matrix", "block_shape")  # (block, vector): its (rows, cols)
block_entry = compiled_only("numpy_matrix", "block_entry")  # (block, i, j): entry (i, j)


@overload(block_shape)
def _block_shape(block, vector):
    """A matrix's shape; a 1-D array's as a row (vector 0: vstack) or a column (1: column_stack)."""
    if _is_matrix(block):
        return lambda block, vector: block.shape
    return lambda block, vector: (1, len(block)) if vector == 0 else (len(block), 1)


@overload(block_entry)
def _block_entry(block, i, j):
    if isinstance(block, MATRICES):
        return lambda block, i, j: load_entry(block, i, j)
    if is_float_matrix(block):
        return lambda block, i, j: block[i, j]
    return lambda block, i, j: block[i + j]  # a row or a column: one of i, j is 0


def _blocks(tup, what, vectors):
    """Whether tup is a tuple of blocks with a 2-D array of duals among them; a TypingError
    for anything else in it (a 1-D array, where `vectors` is False: NumPy's ndim error)."""
    if not (isinstance(tup, types.BaseTuple) and any(isinstance(t, MATRICES) for t in tup)):
        return False
    for t in tup:
        if not (_is_matrix(t) or (vectors and _is_1d(t))):
            cannot(f"{what} joins arrays of the same number of dimensions (2-D arrays of duals "
                   f"with 2-D float arrays{' or 1-D arrays' if vectors else ''}), got {tup}")
    one_element_type([element_of(t) if isinstance(t, DUALS + MATRICES) else t for t in tup], what)
    return True


@overload(joined)
def _joined(tup, axis, vector):
    """NumPy's concatenate of 2-D blocks along axis 0 or 1 (negative axes counted from the
    end): a new matrix laid out as NumPy's, float blocks as constants."""
    def join(tup, axis, vector):
        along = axis + 2 if axis < 0 else axis
        if along != 0 and along != 1:
            raise ValueError("axis out of bounds for joining 2-D arrays")
        rows = cols = -1
        fortran = contradicted = False  # NumPy's layout: F where a block says F and none C
        for block in literal_unroll(tup):
            said = vote(strides_of(block, 2))
            fortran, contradicted = fortran or said == 1, contradicted or said == -1
            r, c = block_shape(block, vector)
            if along == 0:
                rows, cols = (r if rows < 0 else rows + r), (c if cols < 0 else cols)
                if c != cols:
                    raise ValueError("all the input array dimensions except for the concatenation "
                                     "axis must match exactly")
            else:
                rows, cols = (r if rows < 0 else rows), (c if cols < 0 else cols + c)
                if r != rows:
                    raise ValueError("all the input array dimensions except for the concatenation "
                                     "axis must match exactly")
        out = new_matrix_in(tup, rows, cols, matrix_order(fortran and not contradicted))
        zero, start = zero_element(tup), 0
        for piece in literal_unroll(tup):  # a second name: literal_unroll's loops need their own
            r, c = block_shape(piece, vector)
            for i in range(r):
                for j in range(c):
                    entry = zero + block_entry(piece, i, j)
                    if along == 0:
                        store_entry(out, start + i, j, entry)
                    else:
                        store_entry(out, i, start + j, entry)
            start += r if along == 0 else c
        return out
    return join


@overload(np.vstack)
def _vstack(tup):
    if _blocks(tup, "np.vstack", vectors=True):
        return lambda tup: joined(tup, 0, 0)
    if _rows_of(tup, "np.vstack"):
        return lambda tup: rows_matrix(tup)
    return None


@overload(np.hstack)
def _hstack(tup):
    if _blocks(tup, "np.hstack", vectors=False):
        return lambda tup: joined(tup, 1, 0)
    return None


@overload(np.concatenate)
def _concatenate_blocks(arrays, axis=0):
    if _blocks(arrays, "np.concatenate", vectors=False):
        return lambda arrays, axis=0: joined(arrays, axis, 0)
    return None


@overload(np.column_stack)
def _column_stack(tup):
    if _blocks(tup, "np.column_stack", vectors=True):
        return lambda tup: joined(tup, 1, 1)
    if _rows_of(tup, "np.column_stack"):
        return lambda tup: rows_matrix(tup).T.copy()  # C order, as NumPy's
    return None


@overload(np.stack)
def _stack(arrays, axis=0):
    if not _rows_of(arrays, "np.stack"):
        return None

    def stack(arrays, axis=0):
        if axis == 0 or axis == -2:
            return rows_matrix(arrays)
        if axis == 1 or axis == -1:
            return rows_matrix(arrays).T.copy()  # C order, as NumPy's
        raise ValueError("axis out of bounds for a stack of 1-D arrays")
    return stack


def _array_of_rows(copy):
    def choose(obj, dtype=None):
        if isinstance(obj, MATRICES):
            return (lambda obj, dtype=None: np.copy(obj)) if copy else (lambda obj, dtype=None: obj)
        if not _rows_of(obj, "np.array"):
            return None
        return lambda obj, dtype=None: rows_matrix(obj)
    return choose


overload(np.array)(_array_of_rows(True))
overload(np.asarray)(_array_of_rows(False))


# ---- reductions of a whole matrix and along an axis --------------------------------------------------
def _whole_matrix(func, method):
    def choose(a):
        if isinstance(a, MATRICES):
            return lambda a: func(flat(a))
        return None
    overload(func)(choose)
    overload_method(DualMatrixType, method)(lambda a: lambda a: func(flat(a)))


for _func, _method in ((np.mean, "mean"), (np.prod, "prod"), (np.max, "max"), (np.min, "min")):
    _whole_matrix(_func, _method)


@overload(np.sum)
def _sum(a, axis=None):
    if not isinstance(a, MATRICES):
        return None
    if is_none(axis):
        return lambda a, axis=None: np.sum(flat(a))
    if not isinstance(axis, types.Integer):
        raise TypingError(f"np.sum of a 2-D array of duals takes axis None, 0, 1, -1 or -2, not {axis}")

    def along(a, axis=None):
        t = a.T if axis == 0 or axis == -2 else a
        if not (axis in (0, 1, -1, -2)):
            raise ValueError("axis out of bounds for a 2-D array")
        rows, cols = t.shape
        out = new_array(a, rows)
        for i in range(rows):
            total = zero_element(a) + 0.0
            for j in range(cols):
                total = total + load_entry(t, i, j)
            store_element(out, i, total)
        return out
    return along


overload_method(DualMatrixType, "sum")(lambda a, axis=None: lambda a, axis=None: np.sum(a, axis))


@overload(np.cumsum)
def _cumsum(a, axis=None):
    """Running sums along an axis (a new matrix, laid out as a), or of the entries in C order (1-D)."""
    if not isinstance(a, MATRICES):
        return None
    if is_none(axis):
        return lambda a, axis=None: np.cumsum(flat(a))
    if not isinstance(axis, types.Integer):
        raise TypingError(f"np.cumsum of a 2-D array of duals takes axis None, 0, 1, -1 or -2, not {axis}")

    def along(a, axis=None):
        if not (axis in (0, 1, -1, -2)):
            raise ValueError("axis out of bounds for a 2-D array")
        rows, cols = a.shape
        out = new_matrix_in(a, rows, cols, keep_order(a.shape, (strides_of(a, 2),)))  # NumPy's layout
        down = axis == 0 or axis == -2
        for i in range(rows):
            for j in range(cols):
                entry = load_entry(a, i, j)
                if down and i > 0:
                    entry = load_entry(out, i - 1, j) + entry
                elif not down and j > 0:
                    entry = load_entry(out, i, j - 1) + entry
                store_entry(out, i, j, entry)
        return out
    return along


overload_method(DualMatrixType, "cumsum")(lambda a, axis=None: lambda a, axis=None: np.cumsum(a, axis))


# ---- reshape between 1-D and 2-D -----------------------------------------------------------------------
def reshape_dual(a, shape):
    """np.reshape / a.reshape with a matrix or a 3-D array on one side (numpy_structure.reshaped
    calls it): through the entries in C order, a view where they lie at one stride."""
    dims = len(shape) if isinstance(shape, types.BaseTuple) else 1
    if isinstance(a, MATRICES + (DualTensorType,)):
        entries = flat if isinstance(a, MATRICES) else tensor_flat
        if dims == 1:
            return lambda a, shape: np.reshape(entries(a), shape)
        if dims == 2:
            return lambda a, shape: _matrix_view(a, shape) if _views(a, shape) else _to_matrix(entries(a), shape)
        if dims == 3:
            return lambda a, shape: _tensor_view(a, shape) if _views(a, shape) else to_tensor(entries(a), shape)
    elif dims in (2, 3):
        writable(a)  # NumPy's reshape is a view: of f's own copy of an input
        return (lambda a, shape: _to_matrix(a, shape)) if dims == 2 else (lambda a, shape: to_tensor(a, shape))
    return None


@register_jitable
def _known(shape, size):
    """shape with its one -1 (if any) worked out from size, as an int array."""
    out = np.empty(len(shape), np.intp)
    known = 1
    for k in range(len(shape)):
        out[k] = shape[k]
        if shape[k] != -1:
            known *= shape[k]
    for k in range(len(shape)):
        if out[k] == -1 and known > 0:
            out[k] = size // known
    return out


@register_jitable
def _views(a, shape):
    """Whether NumPy's reshape of the matrix or 3-D array a to shape is a view (layout.
    view_strides of its values and of its components' leading axes): F-ordered
    m.reshape(m.shape) is one, and a write through it reaches m."""
    size = a.values.size
    new = _known(shape, size)
    total = 1
    for k in range(len(new)):
        total *= new[k]
    if total != size or size == 0:
        return False
    fits, _ = view_strides(a.values.shape, a.values.strides, new)
    fits_c, _ = view_strides(a.components.shape[:-1], a.components.strides[:-1], new)
    return fits and fits_c


@register_jitable
def _matrix_view(a, shape):
    """The view _views found, as an (m, k) matrix of duals."""
    new = _known(shape, a.values.size)
    _, steps = view_strides(a.values.shape, a.values.strides, new)
    _, steps_c = view_strides(a.components.shape[:-1], a.components.strides[:-1], new)
    m, k, w = new[0], new[1], a.components.shape[-1]
    values = as_strided(a.values, shape=(m, k), strides=(steps[0], steps[1]))
    components = as_strided(a.components, shape=(m, k, w),
                            strides=(steps_c[0], steps_c[1], a.components.strides[-1]))
    return make_dual_matrix(values, components, a)


@register_jitable
def _tensor_view(a, shape):
    """The view _views found, as an (p, q, r) array of duals."""
    new = _known(shape, a.values.size)
    _, steps = view_strides(a.values.shape, a.values.strides, new)
    _, steps_c = view_strides(a.components.shape[:-1], a.components.strides[:-1], new)
    p, q, r, w = new[0], new[1], new[2], a.components.shape[-1]
    values = as_strided(a.values, shape=(p, q, r), strides=(steps[0], steps[1], steps[2]))
    components = as_strided(a.components, shape=(p, q, r, w),
                            strides=(steps_c[0], steps_c[1], steps_c[2], a.components.strides[-1]))
    return make_dual_tensor(values, components, a)


@register_jitable
def _to_matrix(v, shape):
    """A 1-D array of duals as an m × k matrix (one of them may be -1), C order: a view of
    v's memory (any 1-D stride views as (m, k)), as NumPy's reshape of a vector."""
    m, k = shape
    size = len(v)
    if m == -1 and k > 0:
        m = size // k
    elif k == -1 and m > 0:
        k = size // m
    if m * k != size or m < 0 or k < 0:
        raise ValueError("cannot reshape an array of duals into this shape")
    a = as_dual_array(v)  # a DualArray: overloads refuse seeds (types.writable)
    step = a.values.strides[0]
    row, column = a.components.strides
    values = as_strided(a.values, shape=(m, k), strides=(k * step, step))
    components = as_strided(a.components, shape=(m, k, a.components.shape[1]),
                            strides=(k * row, row, column))
    return make_dual_matrix(values, components, a)


# ---- covariance and correlation ---------------------------------------------------------------------
@register_jitable
def _centred(x):
    """x − each row's mean (statistics.average without weights: the sum / samples)."""
    rows, samples = x.shape
    out = new_matrix(x, rows, samples)
    for i in range(rows):
        total = zero_element(x) + 0.0
        for j in range(samples):
            total = total + load_entry(x, i, j)
        mean = total / samples
        for j in range(samples):
            store_entry(out, i, j, load_entry(x, i, j) - mean)
    return out


@register_jitable
def _covariance(x, ddof):
    samples = x.shape[1]
    fact = float(samples - ddof)
    if fact <= 0:
        fact = 0.0
    c = _centred(x)
    scale = np.true_divide(1, fact)
    return np.dot(c, c.T) * scale


def _cov_input(m, y, rowvar, bias, ddof):
    """The variables as the rows of a DualMatrix; a TypingError for forms compiled code lacks."""
    if not (isinstance(m, MATRICES) or isinstance(m, ARRAYS) or (is_vector(m) and isinstance(y, ARRAYS))):
        return None
    if not (is_none(y) or _is_1d(y)):
        raise TypingError("np.cov/np.corrcoef of duals in compiled code take y as a 1-D array")
    if isinstance(m, MATRICES) and not is_none(y):
        raise TypingError("np.cov/np.corrcoef of duals in compiled code: y with a 2-D m is not "
                          "compiled; pass jit=False")
    return True


_ddof_of = register_jitable(lambda bias, ddof: (1 if bias == 0 else 0) if ddof is None else ddof)


def _cov_impl(m, y, rowvar, bias, ddof):
    if isinstance(m, MATRICES):
        def matrix(m, y=None, rowvar=True, bias=False, ddof=None):
            x = m if rowvar else m.T
            if x.shape[0] == 1:  # NumPy's result would be 0-d: numba's own cov refuses it too
                raise ValueError("np.cov/np.corrcoef of a 2-D array with a single variable in "
                                 "compiled code: NumPy's result is 0-d, which a 2-D result type "
                                 "cannot be; pass the variable as a 1-D array (m[0])")
            return _covariance(x, _ddof_of(bias, ddof))
        return matrix, False
    if is_none(y):
        def one(m, y=None, rowvar=True, bias=False, ddof=None):
            return _covariance(np.vstack((m,)), _ddof_of(bias, ddof))[0, 0]
        return one, True
    def two(m, y=None, rowvar=True, bias=False, ddof=None):
        return _covariance(np.vstack((m, y)), _ddof_of(bias, ddof))

    return two, False


@overload(np.cov)
def _cov(m, y=None, rowvar=True, bias=False, ddof=None):
    if _cov_input(m, y, rowvar, bias, ddof) is None:
        return None
    impl, _ = _cov_impl(m, y, rowvar, bias, ddof)
    return impl


@overload(np.corrcoef)
def _corrcoef(x, y=None, rowvar=True):
    """cov / (σᵢσⱼ) clipped to [-1, 1] (statistics.corrcoef); one variable: c / c."""
    if _cov_input(x, y, rowvar, False, None) is None:
        return None
    if _cov_impl(x, y, rowvar, False, None)[1]:  # one variable: a scalar covariance
        def one(x, y=None, rowvar=True):
            c = np.cov(x, y, rowvar)
            return c / c
        return one

    def correlation(x, y=None, rowvar=True):
        c = np.cov(x, y, rowvar)
        n = c.shape[0]
        stddev = np.sqrt(np.diagonal(c))
        out = new_matrix(c, n, n)
        for i in range(n):
            for j in range(n):
                store_entry(out, i, j, np.clip(load_entry(c, i, j) / stddev[i] / stddev[j], -1.0, 1.0))
        return out
    return correlation


dualad_templates_first((np.where, np.diagflat, np.flipud, np.fliplr, np.flip, np.rot90, np.swapaxes, np.moveaxis, np.atleast_2d,
                        np.expand_dims, np.broadcast_to))
dualad_templates_first((np.dot, np.matmul, np.outer, np.kron, np.diagonal, np.diag, np.trace, np.tril,
                        np.triu, np.vstack, np.column_stack, np.stack, np.array, np.asarray, np.sum,
                        np.mean, np.prod, np.max, np.min, np.cov, np.corrcoef, np.transpose, np.hstack,
                        np.concatenate, np.cumsum, np.zeros_like, np.empty_like, np.ones_like, np.full_like))
