"""Tuple arguments of compiled kernels: a tuple of floats and 1-D float arrays is one flat
vector to seed, and the results are cut back into the tuple's structure (JAX's pytree
convention, as on the Python path).

    flat_input(x)            x itself (a scalar: a vector of one), or its leaves concatenated
                             into one float64 vector
    input_size(x)            the number of entries flat_input(x) has
    total_size(r)            the number of entries of an array, or of a tuple of results
    as_input(x, seeded)      seeded itself, or the tuple rebuilt from slices of it (zero-copy
                             views of the seeded vector: leaf k sees its own partials)
    shaped_like_input(r, x)  r (..., n) as JAX shapes it: the trailing axis dropped for a
                             scalar x, or cut into one piece per leaf of a tuple x
    hessian_like_input(H, x) H (n, n) (a scalar x: H[0, 0]), or for a tuple the tuple of
                             tuples of blocks

Each walks the tuple by a recursive overload on a literal leaf position, so every leaf keeps
its own numba type (a tuple may mix floats and arrays).
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .cache import overload
from .types import ARRAYS, compiled_only

__all__ = ["flat_input", "input_size", "total_size", "as_input", "shaped_like_input", "hessian_like_input", "is_leaf_tuple"]


flat_input = compiled_only("tuples", "flat_input")
input_size = compiled_only("tuples", "input_size")
total_size = compiled_only("tuples", "total_size")
as_input = compiled_only("tuples", "as_input")
shaped_like_input = compiled_only("tuples", "shaped_like_input")
hessian_like_input = compiled_only("tuples", "hessian_like_input")
_size_from = compiled_only("tuples", "_size_from")  # (x, k): total size of leaves k, k+1, ...
_copy_from = compiled_only("tuples", "_copy_from")  # (x, out, offset, k): leaves k... into out[offset:]
_views_from = compiled_only("tuples", "_views_from")  # (x, seeded, offset, k): views of leaves k...
_pieces_from = compiled_only("tuples", "_pieces_from")  # (x, r, offset, k): r's trailing-axis pieces
_rows_from = compiled_only("tuples", "_rows_from")  # (x, H, offset, k): H's row blocks, each cut


def _is_scalar(t):
    return isinstance(t, types.Float)  # an int leaf is passed through on the Python path: refused here


def _is_vector(t):
    return isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, types.Float)


def is_leaf_tuple(t):
    """Whether t is a non-empty tuple of floats and 1-D float arrays."""
    return (isinstance(t, types.BaseTuple) and len(t) > 0
            and all(_is_scalar(leaf) or _is_vector(leaf) for leaf in t))


def _check_tuple(x):
    if isinstance(x, types.BaseTuple) and not is_leaf_tuple(x):
        raise TypingError(f"compiled transforms differentiate a tuple of floats and 1-D float "
                          f"arrays, not {x}; the Python path (jit=False) takes any structure")


def _leafwise(target, end):
    """Overload target(x, ..., k), a walk over the leaves of tuple x from the literal leaf
    position k: `end` is the implementation past the last leaf, and the decorated
    step(leaf type, position, after, *other arg types) gives the one for leaf `position`
    (which recurses with `after`)."""
    def register(step):
        def choose(*arg_types):
            x, k = arg_types[0], arg_types[-1]
            if not isinstance(k, types.IntegerLiteral):
                return None  # numba retries with the literal
            if k.literal_value == len(x):
                return end
            return step(x[k.literal_value], k.literal_value, k.literal_value + 1, *arg_types[1:-1])

        # not strict: one typing function serves implementations with their own argument names
        overload(target, strict=False)(choose)
        return step
    return register


@_leafwise(_size_from, lambda x, k: 0)
def _size_step(leaf, position, after):
    return lambda x, k: size_of(x[position]) + _size_from(x, after)


@_leafwise(_copy_from, lambda x, out, offset, k: None)
def _copy_step(leaf, position, after, out, offset):
    if _is_scalar(leaf):
        def scalar(x, out, offset, k):
            out[offset] = x[position]
            _copy_from(x, out, offset + 1, after)
        return scalar

    def vector(x, out, offset, k):
        n = x[position].size
        out[offset:offset + n] = x[position]
        _copy_from(x, out, offset + n, after)
    return vector


@overload(input_size)
def _input_size(x):
    _check_tuple(x)
    if isinstance(x, types.BaseTuple):
        return lambda x: _size_from(x, 0)
    return lambda x: size_of(x)


@overload(total_size)
def _total_size(r):
    if isinstance(r, types.BaseTuple):
        return lambda r: _size_from(r, 0)
    return lambda r: size_of(r)


def _without_asarray(numpy_function, of_array, of_number):
    """numpy_function(a) (np.size, np.shape) in compiled code, an array's or a number's without
    numba's implementation: it calls np.asarray, which lives in numba.np.arraymath, whose
    import (scipy.linalg's, for numba's BLAS check: 0.3 s) a kernel loaded from disk would
    otherwise pay when its environments are rebuilt. Duals keep dualad's numpy_function."""
    def function(a):
        raise TypeError(f"{numpy_function.__name__} of tuples.py runs inside compiled code only")

    @overload(function)
    def choose(a):
        if isinstance(a, types.Array):
            return of_array
        if isinstance(a, types.Number):
            return of_number
        return lambda a: numpy_function(a)
    return function


size_of = _without_asarray(np.size, lambda a: a.size, lambda a: 1)
shape_of = _without_asarray(np.shape, lambda a: a.shape, lambda a: ())


@overload(flat_input)
def _flat_input(x):
    _check_tuple(x)
    if isinstance(x, types.Number):  # a vector of one: every kernel seeds a vector
        return lambda x: np.full(1, x, dtype=np.float64)
    if not isinstance(x, types.BaseTuple):
        return lambda x: x

    def flat(x):
        out = np.empty(_size_from(x, 0))
        _copy_from(x, out, 0, 0)
        return out
    return flat


@_leafwise(_views_from, lambda x, seeded, offset, k: ())
def _views_step(leaf, position, after, seeded, offset):
    if _is_scalar(leaf):
        return lambda x, seeded, offset, k: (seeded[offset],) + _views_from(x, seeded, offset + 1, after)

    def vector(x, seeded, offset, k):
        n = x[position].size
        return (seeded[offset:offset + n],) + _views_from(x, seeded, offset + n, after)
    return vector


@overload(as_input)
def _as_input(x, seeded):
    if isinstance(x, types.Number) and isinstance(seeded, ARRAYS):
        return lambda x, seeded: seeded[0]  # a scalar input is the one seeded element
    if not isinstance(x, types.BaseTuple):
        return lambda x, seeded: seeded
    return lambda x, seeded: _views_from(x, seeded, 0, 0)


@_leafwise(_pieces_from, lambda x, r, offset, k: ())
def _pieces_step(leaf, position, after, r, offset):
    scalar = _is_scalar(leaf)
    if r.ndim == 1 and scalar:
        return lambda x, r, offset, k: (r[offset],) + _pieces_from(x, r, offset + 1, after)
    if r.ndim == 1:
        def vector(x, r, offset, k):
            n = x[position].size
            return (r[offset:offset + n].copy(),) + _pieces_from(x, r, offset + n, after)
        return vector
    if scalar:
        return lambda x, r, offset, k: (r[:, offset].copy(),) + _pieces_from(x, r, offset + 1, after)

    def block(x, r, offset, k):
        n = x[position].size
        return (r[:, offset:offset + n].copy(),) + _pieces_from(x, r, offset + n, after)
    return block


@overload(shaped_like_input)
def _shaped_like_input(result, x):
    if isinstance(x, types.BaseTuple):
        return lambda result, x: _pieces_from(x, result, 0, 0)
    if isinstance(x, types.Array):
        return lambda result, x: result
    if result.ndim == 1:
        return lambda result, x: result[0]
    return lambda result, x: result[:, 0].copy()


@_leafwise(_rows_from, lambda x, hess, offset, k: ())
def _rows_step(leaf, position, after, hess, offset):
    if _is_scalar(leaf):
        return lambda x, hess, offset, k: ((_pieces_from(x, hess[offset], 0, 0),)
                                           + _rows_from(x, hess, offset + 1, after))

    def rows(x, hess, offset, k):
        n = x[position].size
        return ((_pieces_from(x, hess[offset:offset + n], 0, 0),)
                + _rows_from(x, hess, offset + n, after))
    return rows


@overload(hessian_like_input)
def _hessian_like_input(hess, x):
    if isinstance(x, types.BaseTuple):
        return lambda hess, x: _rows_from(x, hess, 0, 0)
    if isinstance(x, types.Number):  # a scalar's Hessian is a scalar, as on the Python path
        return lambda hess, x: hess[0, 0]
    return lambda hess, x: hess
