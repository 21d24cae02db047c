"""Array structure on 1-D arrays of compiled duals, and the ndarray methods.

Structure: copy, ravel, reshape and atleast_1d (to 1-D), flip, take, take_along_axis,
repeat, tile, append, insert, delete, split, array_split, hsplit and vsplit (lists of views,
of matrices too), select, hstack, cross (3-vectors), inner and vdot (np.dot of vectors):
each output entry is an operand entry, or the product rule; round (derivative 0).
Value-only functions (argmax, argsort, searchsorted, isclose, isreal, shape, ...) run on
the values.

Methods: ``x.sum()`` and the rest are the NumPy functions (METHODS), so a method is never a
second implementation.
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .cache import overload, overload_attribute, overload_method, register_jitable
from .numpy_overloads import cannot, copied, dualad_templates_first, is_none, is_vector, primal, whole
from .overloads import (ARRAYS, DUALS, SCALARS, element_or_whole, first_of, length_of, new_array,
                        one_element_type, second_of)
from .layout import matrix_copy_in, matrix_order
from .numpy_matrix import reshape_dual
from .types import (NUMBER, DualArrayType, DualMatrixType, DualTensorType, compiled_only, store_element, writable,
                    zero_element)


def _vector(t):
    return isinstance(t, ARRAYS) or is_vector(t)


@overload(np.copy)
def _copy(a):
    if isinstance(a, ARRAYS):
        return lambda a: copied(a)
    return None


def _itself(func):
    def choose(a):
        if isinstance(a, ARRAYS):
            return lambda a: a
        return None
    overload(func)(choose)


_itself(np.atleast_1d)


@overload(np.ravel)
def _ravel(a):
    """a itself where its entries are contiguous, else a copy (NumPy's ravel copies a view with
    gaps or a negative step; reshape(-1) keeps any step)."""
    if isinstance(a, DualArrayType):
        return lambda a: a if len(a) <= 1 or a.values.strides[0] == a.values.itemsize else copied(a)
    if isinstance(a, ARRAYS):
        return lambda a: a
    return None


reshaped = compiled_only("numpy_structure", "reshaped")  # (a, shape): np.reshape and a.reshape


@overload(reshaped)
def _reshaped(a, shape):
    """To 1-D (n, (n,) or -1) or, with a matrix on either side, numpy_matrix.reshape_dual's.
    (numba's own np.reshape calls a.reshape, so both spell this one function.)"""
    between_1d_and_2d = reshape_dual(a, shape)
    if between_1d_and_2d is not None:
        return between_1d_and_2d
    if isinstance(shape, types.Integer):
        def flat(a, shape):
            if shape != -1 and shape != len(a):
                raise ValueError("cannot reshape an array of duals into another length")
            return a
        return flat
    if isinstance(shape, types.BaseTuple) and len(shape) == 1:
        return lambda a, shape: reshaped(a, shape[0])
    cannot(f"np.reshape of an array of duals to {shape}: arrays of duals have 1 to 3 dimensions "
           "in compiled code; index a flat array ([((i * k + j) * p + q) * r + s] for [i, j, q, s])")


overload(np.reshape)(lambda a, shape: (lambda a, shape: reshaped(a, shape))
                     if isinstance(a, ARRAYS + (DualMatrixType, DualTensorType)) else None)


def _reshape_method(a, shape, second=None, third=None):
    """a.reshape(shape) and, as NumPy's method, a.reshape(m, k[, p]): the shape as separate
    ints (arrays of duals have at most 3 dimensions in compiled code)."""
    if is_none(second):
        return lambda a, shape, second=None, third=None: reshaped(a, shape)
    if is_none(third):
        return lambda a, shape, second=None, third=None: reshaped(a, (shape, second))
    return lambda a, shape, second=None, third=None: reshaped(a, (shape, second, third))


for _array_type in ARRAYS + (DualMatrixType, DualTensorType):
    overload_method(_array_type, "reshape")(_reshape_method)


@overload(np.flip)
def _flip(m):
    """A view, as NumPy's (a write through it reaches m)."""
    if isinstance(m, ARRAYS):
        return lambda m: m[::-1]
    return None


@register_jitable
def position(index, n):
    """index wrapped (negative from the end) and checked, as np.take does: indexing an
    array of duals checks bounds only under NUMBA_BOUNDSCHECK."""
    i = index + n if index < 0 else index
    if i < 0 or i >= n:
        raise IndexError("index out of bounds for an array of duals")
    return i


@overload(np.take)
def _take(a, indices):
    if not isinstance(a, ARRAYS):
        return None
    if isinstance(indices, types.Integer):
        return lambda a, indices: a[position(indices, len(a))]
    if isinstance(indices, types.Array) and indices.ndim == 1 and isinstance(indices.dtype, types.Integer):
        def gather(a, indices):
            out = new_array(a, len(indices))
            for k in range(len(indices)):
                store_element(out, k, a[position(indices[k], len(a))])
            return out
        return gather
    raise TypingError(f"np.take of an array of duals takes an integer or a 1-D integer array, not {indices}")


@overload(np.repeat)
def _repeat(a, repeats):
    if not isinstance(a, ARRAYS):
        return None
    if isinstance(repeats, types.Integer):
        def each(a, repeats):
            if repeats < 0:
                raise ValueError("negative dimensions are not allowed")
            out = new_array(a, len(a) * repeats)
            for i in range(len(a)):
                for k in range(repeats):
                    store_element(out, i * repeats + k, a[i])
            return out
        return each
    if isinstance(repeats, types.Array) and repeats.ndim == 1 and isinstance(repeats.dtype, types.Integer):
        def counted(a, repeats):
            if len(repeats) != len(a):
                raise ValueError("operands could not be broadcast together (repeats)")
            total = 0
            for i in range(len(a)):
                if repeats[i] < 0:
                    raise ValueError("repeats may not contain negative values.")
                total += repeats[i]
            out = new_array(a, total)
            k = 0
            for i in range(len(a)):
                for _ in range(repeats[i]):
                    store_element(out, k, a[i])
                    k += 1
            return out
        return counted
    raise TypingError(f"np.repeat of an array of duals takes an integer or a 1-D integer array, not {repeats}")


@overload(np.tile)
def _tile(A, reps):
    if not isinstance(A, ARRAYS):
        return None
    if not isinstance(reps, types.Integer):
        cannot(f"np.tile of an array of duals with reps {reps} would make a 2-D array; arrays of "
               "duals are 1-D in compiled code: tile with an integer, or pass jit=False")

    def tile(A, reps):
        n = len(A)
        out = new_array(A, n * max(reps, 0))
        for r in range(max(reps, 0)):
            for i in range(n):
                store_element(out, r * n + i, A[i])
        return out
    return tile


_one = register_jitable(lambda a: 1)


@overload(np.append)
def _append(arr, values):
    """Flattened, end to end (axis=None): numbers and arrays of numbers or duals."""
    if not any(isinstance(t, DUALS) for t in (arr, values)):
        return None
    if not all(_vector(t) or isinstance(t, NUMBER + DUALS) for t in (arr, values)):
        raise TypingError(f"np.append of duals joins 1-D arrays and scalars, got {arr}, {values}")
    one_element_type((arr, values), "np.append")
    get_a, get_b = (element_or_whole[_vector(t)] for t in (arr, values))
    size_a, size_b = (length_of if _vector(t) else _one for t in (arr, values))
    pick_like = first_of if isinstance(arr, DUALS) else second_of

    def join(arr, values):
        m, k = size_a(arr), size_b(values)
        like = pick_like(arr, values)
        out = new_array(like, m + k)
        zero = zero_element(like)
        for i in range(m):
            store_element(out, i, zero + get_a(arr, i))
        for i in range(k):
            store_element(out, m + i, zero + get_b(values, i))
        return out
    return join


@overload(np.hstack)
def _hstack(tup):
    if isinstance(tup, types.BaseTuple) and any(isinstance(t, ARRAYS) for t in tup):
        return lambda tup: np.concatenate(tup)
    return None


@overload(np.cross)
def _cross(a, b):
    """3-vectors, component by component (multilinear.cross)."""
    if not (any(isinstance(t, ARRAYS) for t in (a, b)) and all(_vector(t) for t in (a, b))):
        return None
    one_element_type((a, b), "np.cross")
    like_first = isinstance(a, ARRAYS)

    def cross(a, b):
        if len(a) != 3 or len(b) != 3:
            raise ValueError("np.cross of arrays of duals in compiled code takes 3-vectors (for "
                             "2-vectors write a[0] * b[1] - a[1] * b[0])")
        out = new_array(a if like_first else b, 3)
        zero = zero_element(a if like_first else b)
        out[0] = zero + (a[1] * b[2] - a[2] * b[1])
        out[1] = zero + (a[2] * b[0] - a[0] * b[2])
        out[2] = zero + (a[0] * b[1] - a[1] * b[0])
        return out
    return cross


def _dot_of_vectors(func):
    def choose(a, b):
        if any(isinstance(t, ARRAYS) for t in (a, b)) and all(_vector(t) for t in (a, b)):
            return lambda a, b: np.dot(a, b)
        return None
    overload(func)(choose)


_dot_of_vectors(np.inner)
_dot_of_vectors(np.vdot)


@overload(np.delete)
def _delete(arr, obj):
    """arr without the entries at obj (an integer or a 1-D integer array; negative ones wrap)."""
    if not isinstance(arr, ARRAYS):
        return None
    if isinstance(obj, types.Integer):
        return lambda arr, obj: np.delete(arr, np.array([obj]))
    if not (isinstance(obj, types.Array) and obj.ndim == 1 and isinstance(obj.dtype, types.Integer)):
        raise TypingError(f"np.delete of an array of duals takes an integer or a 1-D integer array, not {obj}")

    def delete(arr, obj):
        n = len(arr)
        keep = np.ones(n, dtype=np.bool_)
        for k in range(len(obj)):
            keep[position(obj[k], n)] = False
        out = new_array(arr, np.count_nonzero(keep))
        j = 0
        for i in range(n):
            if keep[i]:
                store_element(out, j, arr[i])
                j += 1
        return out
    return delete


@overload(np.insert)
def _insert(arr, obj, values):
    """arr with values inserted before the entries at obj (axis=None: arr flat, as 1-D here):
    an integer obj takes all of values there; an integer array obj one value per index
    (NumPy's order: indices sorted stably, each shifted by the insertions before it)."""
    if not any(isinstance(t, DUALS) for t in (arr, values)):
        return None
    if not (_vector(arr) and (_vector(values) or isinstance(values, NUMBER + DUALS))):
        raise TypingError(f"np.insert of duals takes a 1-D array and a scalar or 1-D values, got {arr}, {values}")
    one_element_type((arr, values), "np.insert")
    get = element_or_whole[_vector(values)]
    size = length_of if _vector(values) else _one
    pick_like = first_of if isinstance(arr, DUALS) else second_of
    if isinstance(obj, types.Integer):
        def at_one_index(arr, obj, values):
            n, k = len(arr), size(values)
            at = obj + n if obj < 0 else obj
            if at < 0 or at > n:
                raise IndexError("index out of bounds for np.insert")
            out = new_array(pick_like(arr, values), n + k)
            zero = zero_element(out)
            for i in range(at):
                store_element(out, i, zero + arr[i])
            for i in range(k):
                store_element(out, at + i, zero + get(values, i))
            for i in range(at, n):
                store_element(out, i + k, zero + arr[i])
            return out
        return at_one_index
    if not (isinstance(obj, types.Array) and obj.ndim == 1 and isinstance(obj.dtype, types.Integer)):
        raise TypingError(f"np.insert of duals takes an integer or a 1-D integer array as obj, not {obj}")

    def at_many(arr, obj, values):
        if len(obj) == 1:  # NumPy: one index takes all of values there
            return np.insert(arr, obj[0], values)
        n, k = len(arr), len(obj)
        if size(values) != 1 and size(values) != k:
            raise ValueError("np.insert: values must be one value or one per index")
        at = np.empty(k, dtype=np.int64)
        for i in range(k):
            at[i] = obj[i] + n if obj[i] < 0 else obj[i]
            if at[i] < 0 or at[i] > n:
                raise IndexError("index out of bounds for np.insert")
        order = np.argsort(at, kind="mergesort")
        target = np.empty(k, dtype=np.int64)
        for rank in range(k):
            target[order[rank]] = at[order[rank]] + rank
        out = new_array(pick_like(arr, values), n + k)
        zero = zero_element(out)
        taken = np.zeros(n + k, dtype=np.bool_)
        for i in range(k):
            store_element(out, target[i], zero + get(values, i if size(values) == k else 0))
            taken[target[i]] = True
        j = 0
        for i in range(n + k):
            if not taken[i]:
                store_element(out, i, zero + arr[j])
                j += 1
        return out
    return at_many


split_bounds = compiled_only("numpy_structure", "split_bounds")  # (n, indices_or_sections, equal)


@overload(split_bounds)
def _split_bounds(n, indices_or_sections, equal):
    """The pieces' bounds along an axis of length n, as NumPy's own split of the positions:
    a number of sections (the first n % count one longer; equal: a ValueError unless they
    divide n) or the split indices."""
    if isinstance(indices_or_sections, types.Integer):
        def sections(n, indices_or_sections, equal):
            count = indices_or_sections
            if count <= 0:
                raise ValueError("number sections must be larger than 0")
            if equal and n % count:
                raise ValueError("array split does not result in an equal division")
            each, extra = divmod(n, count)
            bounds = np.empty(count + 1, dtype=np.int64)
            bounds[0] = 0
            for i in range(count):
                bounds[i + 1] = bounds[i] + each + (1 if i < extra else 0)
            return bounds
        return sections

    def at_indices(n, indices_or_sections, equal):
        bounds = np.empty(len(indices_or_sections) + 2, dtype=np.int64)
        bounds[0], bounds[-1] = 0, n
        for i in range(len(indices_or_sections)):
            index = indices_or_sections[i]
            bounds[i + 1] = min(max(index + (n if index < 0 else 0), 0), n)
        return bounds  # decreasing ones make empty pieces, as NumPy's slices
    return at_indices


@register_jitable
def _pieces(ary, bounds):
    """[ary[bounds[0]:bounds[1]], ary[bounds[1]:bounds[2]], ...] (appended: numba's list
    comprehension would allocate an array)."""
    pieces = [ary[bounds[0]:bounds[1]]]
    for i in range(1, len(bounds) - 1):
        pieces.append(ary[bounds[i]:bounds[i + 1]])
    return pieces


@register_jitable
def _column_pieces(ary, bounds):
    pieces = [ary[:, bounds[0]:bounds[1]]]
    for i in range(1, len(bounds) - 1):
        pieces.append(ary[:, bounds[i]:bounds[i + 1]])
    return pieces


def _splitting(equal, matrix_columns=False, matrices_only=False):
    """np.split/np.array_split (along the first axis), np.hsplit (a matrix's columns) and
    np.vsplit (a matrix's rows): the pieces as views."""
    def choose(ary, indices_or_sections):
        if matrices_only and isinstance(ary, ARRAYS):
            raise TypingError("vsplit only works on arrays of 2 or more dimensions")
        if not isinstance(ary, ARRAYS + (DualMatrixType,)):
            return None
        if matrix_columns and isinstance(ary, DualMatrixType):
            return lambda ary, indices_or_sections: _column_pieces(
                ary, split_bounds(ary.shape[1], indices_or_sections, equal))
        return lambda ary, indices_or_sections: _pieces(ary, split_bounds(len(ary), indices_or_sections, equal))
    return choose


overload(np.split)(_splitting(equal=True))
overload(np.array_split)(_splitting(equal=False))
overload(np.hsplit)(_splitting(equal=True, matrix_columns=True))
overload(np.vsplit)(_splitting(equal=True, matrices_only=True))


@overload(np.select)
def _select(condlist, choicelist, default=0):
    """structure.select: the choice of the first true condition, else default (np.where's
    convention: the derivative of the entry chosen)."""
    if not (isinstance(choicelist, (types.List, types.UniTuple)) and isinstance(choicelist.dtype, ARRAYS)):
        return None
    get_default = element_or_whole[_vector(default)]

    def select(condlist, choicelist, default=0):
        if len(condlist) != len(choicelist):
            raise ValueError("list of cases must be same length as list of conditions")
        m = len(choicelist[0])
        out = new_array(choicelist[0], m)
        zero = zero_element(out)
        for i in range(m):
            value = zero + get_default(default, i)
            for k in range(len(condlist) - 1, -1, -1):  # the first true condition is written last
                if condlist[k][i]:
                    value = zero + choicelist[k][i]
            store_element(out, i, value)
        return out
    return select


@overload(np.take_along_axis)
def _take_along_axis(arr, indices, axis):
    """1-D: arr[indices] (axis 0, -1 or None)."""
    if not isinstance(arr, ARRAYS):
        return None

    def along(arr, indices, axis):
        whole(axis)
        return np.take(arr, indices)
    return along


@overload(np.round)
@overload(np.around)
def _round(a, decimals=0):
    """Piecewise constant (the rule table's round): NumPy's rounded values, derivative 0."""
    if isinstance(a, SCALARS):
        return lambda a, decimals=0: zero_element(a) + np.round(primal(a), decimals)
    if isinstance(a, ARRAYS):
        def rounded(a, decimals=0):
            out = new_array(a, len(a))
            zero = zero_element(a)
            for i in range(len(a)):
                store_element(out, i, zero + np.round(a.values[i], decimals))
            return out
        return rounded
    return None


# ---- value-only: on the values -------------------------------------------------------------------
def _on_values(func, arity):
    """func of the values of arrays (and scalars) of duals: arity 1, or 2 where either or
    both arguments may carry duals."""
    if arity == 1:
        overload(func)(lambda a: (lambda a: func(a.values)) if isinstance(a, ARRAYS) else None)
        return
    overload(func)(lambda a, b: (lambda a, b: func(primal(a), primal(b)))
                   if isinstance(a, DUALS) or isinstance(b, DUALS) else None)


VALUE_ONLY = {np.argmax: 1, np.argmin: 1, np.argsort: 1, np.argpartition: 2, np.count_nonzero: 1, np.nonzero: 1,
              np.flatnonzero: 1, np.any: 1, np.all: 1, np.shape: 1, np.size: 1,
              np.searchsorted: 2, np.isclose: 2, np.allclose: 2, np.array_equal: 2,
              np.iscomplexobj: 1, np.isrealobj: 1}
for _func, _arity in VALUE_ONLY.items():
    _on_values(_func, _arity)
# numba's isreal/iscomplex allocate their result like the input, which they cannot for the
# values' layout 'A': the values as a contiguous array
def _on_contiguous_values(func):
    overload(func)(lambda a: (lambda a: func(np.ascontiguousarray(a.values))) if isinstance(a, ARRAYS) else None)


for _func in (np.isreal, np.iscomplex):
    _on_contiguous_values(_func)
    VALUE_ONLY[_func] = 1


# ---- ndarray methods: the NumPy functions -----------------------------------------------------------
# method name -> (NumPy function, number of arguments after self)
METHODS = {"sum": (np.sum, 0), "prod": (np.prod, 0), "mean": (np.mean, 0), "max": (np.max, 0),
           "min": (np.min, 0), "cumsum": (np.cumsum, 0), "cumprod": (np.cumprod, 0),
           "copy": (np.copy, 0), "flatten": (np.copy, 0), "ravel": (np.ravel, 0),
           "argmax": (np.argmax, 0), "argmin": (np.argmin, 0), "argsort": (np.argsort, 0),
           "any": (np.any, 0), "all": (np.all, 0),
           "dot": (np.dot, 1), "take": (np.take, 1), "repeat": (np.repeat, 1),
           "clip": (np.clip, 2)}


def _method(func, arity):
    if arity == 0:
        return lambda a: lambda a: func(a)
    if arity == 1:
        return lambda a, b: lambda a, b: func(a, b)
    return lambda a, b, c: lambda a, b, c: func(a, b, c)


def _astype(a, dtype):
    """float64 (float, np.float64): a copy of the duals, as NumPy's astype; another dtype
    would drop the derivative."""
    if isinstance(dtype, (types.NumberClass, types.DType)) and dtype.dtype == types.float64:
        return lambda a, dtype: np.copy(a)
    if isinstance(dtype, types.Function) and dtype.typing_key is float:
        return lambda a, dtype: np.copy(a)
    raise TypingError(f"astype({dtype}) of an array of duals would drop its derivative: keep "
                      "float64 (astype(float))")


for _array_type in ARRAYS + (DualMatrixType, DualTensorType):
    overload_method(_array_type, "astype")(lambda a, dtype: _astype(a, dtype))


@overload(np.ascontiguousarray)
def _ascontiguousarray(a):
    """a itself when its entries lie in C order one after another (a write through the result
    reaches a, as NumPy's), else a C-ordered copy."""
    if not isinstance(a, ARRAYS + (DualMatrixType, DualTensorType)):
        return None
    writable(a)  # a differentiated input: f's own copy, which the result may be

    def contiguous(a):
        if a.values.flags.c_contiguous and a.components.flags.c_contiguous:
            return a
        return a.copy()
    return contiguous


@overload(np.asfortranarray)
def _asfortranarray(a):
    """a itself when it is F-ordered (a 1-D array: contiguous), else an F-ordered copy."""
    if isinstance(a, ARRAYS):
        return lambda a: np.ascontiguousarray(a)
    if not isinstance(a, DualMatrixType):
        return None
    writable(a)

    def fortran(a):
        if a.values.flags.f_contiguous:
            return a
        return matrix_copy_in(a, matrix_order(True))
    return fortran


for _array_type in ARRAYS:
    for _name, (_func, _arity) in METHODS.items():
        overload_method(_array_type, _name)(_method(_func, _arity))
    overload_method(_array_type, "var")(lambda a, ddof=0: lambda a, ddof=0: np.var(a, None, ddof))
    overload_method(_array_type, "std")(lambda a, ddof=0: lambda a, ddof=0: np.std(a, None, ddof))
    overload_attribute(_array_type, "T")(lambda a: lambda a: a)


dualad_templates_first((np.insert, np.split, np.array_split, np.hsplit, np.vsplit, np.select, np.ascontiguousarray,
                        np.asfortranarray))
dualad_templates_first((np.copy, np.ravel, np.atleast_1d, np.reshape, np.flip, np.take, np.repeat,
                        np.tile, np.append, np.hstack, np.cross, np.inner, np.vdot, np.delete,
                        np.take_along_axis, np.round, np.around) +
                       tuple(VALUE_ONLY))
