"""The scalar protocol and the array surface of the compiled dual types.

Scalars (Dual, HyperDual, Active) compare by value, refuse float(), take math.log (with a
base) and isnan/isinf/isfinite of their value. Every 1-D array kind of duals has len,
.shape, .size, indexing by integers and slices (an element is a scalar dual), assignment
into DualArrays, and as_dual_array (a seed or a list materialised).
"""

import math
import operator

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .. import math as dual_math
from .cache import overload, overload_attribute, register_jitable
from .overloads import (ARRAYS, DUALS, SCALARS, by_value, element_or_whole, is_operand,
                        length_of, new_array, no_length, snapshot)
from .types import (NUMBER, DualArrayType, DualMatrixType, HyperSeedArrayType, SeedArrayType, element_of,
                    load_element, make_dual, make_dual_array, make_hyper, make_hyper_seed_array,
                    make_hyper_sym, make_seed_array, store_element, writable)
from .intrinsics import unit_tuple
from .layout import keep_order, strides_of


def _log_with_base(numbers_too):
    """math.log(x[, base]); dualad.math.log also takes plain numbers (numba knows math's)."""
    def choose(x, base=None):
        if not (by_value(x) or (numbers_too and isinstance(x, NUMBER))):
            return None
        if base is None or isinstance(base, types.NoneType):
            return lambda x, base=None: np.log(x)
        return lambda x, base=None: np.log(x) / np.log(base)
    return choose


overload(math.log)(_log_with_base(numbers_too=False))
overload(dual_math.log)(_log_with_base(numbers_too=True))


def _value_test(test):
    """isnan/isinf/isfinite of a dual: of its value."""
    def choose(x):
        if by_value(x):
            return lambda x: test(x.value)
        if isinstance(x, NUMBER):
            return lambda x: test(x)
        return None
    return choose


def _value_test_of_scalars(test):
    """np.isnan & co. of a by-value scalar (rule helpers call them on the Dual partials of
    the forward-over-reverse tape); numba's own for numbers and arrays."""
    def choose(x):
        if by_value(x):
            return lambda x: test(x.value)
        return None
    return choose


for _test in ("isnan", "isinf", "isfinite"):
    overload(getattr(dual_math, _test))(_value_test(getattr(np, _test)))
    overload(getattr(math, _test))(_value_test(getattr(np, _test)))
    overload(getattr(np, _test))(_value_test_of_scalars(getattr(np, _test)))


# ---- comparisons by value ----------------------------------------------------------------------------
_primal = register_jitable(lambda a: a.value)
_itself = register_jitable(lambda a: a)


def scalar_pair(a, b):
    """Whether a and b are a by-value scalar (dual, hyper-dual, active) and such a scalar or a
    plain number: the operands comparisons and max/min take."""
    return ((by_value(a) or by_value(b)) and
            all(by_value(t) or isinstance(t, NUMBER) for t in (a, b)))


def _comparison(op):
    def choose(a, b):
        if not scalar_pair(a, b):
            return None
        pa = _primal if by_value(a) else _itself
        pb = _primal if by_value(b) else _itself
        return lambda a, b: op(pa(a), pb(b))
    return choose


_values = register_jitable(lambda a: a.values)


def _array_comparison(op):
    """Arrays of duals (1-D and 2-D) compare by value, elementwise, giving a boolean array
    (like NumPy); so do float arrays with scalar duals."""
    stored = ARRAYS + (DualMatrixType,)

    def choose(a, b):
        if not (isinstance(a, stored) or isinstance(b, stored) or
                any(isinstance(t, types.Array) for t in (a, b)) and any(by_value(t) for t in (a, b))):
            return None
        va = _values if isinstance(a, stored) else (_primal if isinstance(a, SCALARS) else _itself)
        vb = _values if isinstance(b, stored) else (_primal if isinstance(b, SCALARS) else _itself)
        if not any(isinstance(t, DualMatrixType) for t in (a, b)):
            return lambda a, b: op(va(a), vb(b))

        def matrices(a, b):
            # numba's own result is C-ordered; NumPy's is laid out as the operands (z.T > 0 is
            # F-ordered, and np.where then follows it: jit/layout.py)
            result = op(va(a), vb(b))
            order = keep_order(result.shape, (strides_of(a, 2), strides_of(b, 2)))
            if order[0] == 1:
                return result
            laid_out = np.empty((result.shape[1], result.shape[0]), np.bool_).T
            laid_out[:, :] = result
            return laid_out
        return matrices
    return choose


for _op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
    overload(_op)(_comparison(_op))
    overload(_op)(_array_comparison(_op))


@overload(float)
def _float_of_dual(x):
    if by_value(x):
        raise TypingError("float() of a dual would drop its derivative: keep the value a dual "
                          "(arithmetic, math.* and np.* functions work on duals), or call "
                          "dualad's transform with jit=False to use the Python path")
    return None


# type(x)(c): code written for floats makes a constant of x's type so (numba-stats does in
# most distributions); a dual's class is float's, so the constant is the float c, as on the
# Python path (number.ArrayLike.__new__)
for _scalar in SCALARS:
    overload_attribute(_scalar, "__class__")(lambda x: lambda x: np.float64)


# ---- arrays of duals: structure -----------------------------------------------------------------------
# Every 1-D array kind of the compiled path keeps its primals in .values.


@overload(len)
def _len(a):
    if isinstance(a, ARRAYS):
        return lambda a: len(a.values)
    return None


for _array_type in ARRAYS:
    overload_attribute(_array_type, "shape")(lambda a: lambda a: a.values.shape)
    overload_attribute(_array_type, "size")(lambda a: lambda a: a.values.size)
    overload_attribute(_array_type, "ndim")(lambda a: lambda a: 1)
    # float64, the values' dtype: np.zeros(m, dtype=x.dtype) is a float buffer, which
    # holds duals once f stores one in it (promote.py)
    overload_attribute(_array_type, "dtype")(lambda a: lambda a: a.values.dtype)


@register_jitable
def _wrap(index, length):
    return index + length if index < 0 else index


@register_jitable
def _wrap_and_check(index, length):
    index = _wrap(index, length)
    if index < 0 or index >= length:
        raise IndexError("index out of bounds for an array of duals")
    return index


# Like numba's own arrays: negative indices always wrap (a seed slot computed from an
# unwrapped index would be a wrong derivative); out-of-bounds indices are checked only
# under NUMBA_BOUNDSCHECK=1, because a raise path in the hot loop costs 2-3x here.
checked_index = _wrap_and_check if numba.core.config.BOUNDSCHECK else _wrap


def as_dual_array(a):
    """An array of duals with its components stored (a seed array or a list of scalar
    duals materialised)."""
    raise TypeError("as_dual_array runs inside compiled code only")


@overload(as_dual_array)
def _as_dual_array(a):
    if isinstance(a, DualArrayType):
        return lambda a: a
    if isinstance(a, ARRAYS) or sequence_of(a, SCALARS):
        def materialise(a):
            out = new_array(a, len(a))
            for i in range(len(a)):
                store_element(out, i, a[i])
            return out
        return materialise
    return None


@overload(operator.getitem)
def _hyper_getitem(a, index):
    if not isinstance(a, HyperSeedArrayType):
        return None
    element = a.element
    n1, n2, size12 = element.n1, element.n2, element.eps12_size
    if isinstance(index, types.Integer) and element.symmetric:
        def symmetric_element(a, index):
            i = checked_index(index, len(a.values))
            return make_hyper_sym(a.values[i], unit_tuple(i * a.stride - a.first1, n1),
                                  unit_tuple(-1, size12))
        return symmetric_element
    if isinstance(index, types.Integer):
        def general_element(a, index):
            i = checked_index(index, len(a.values))
            return make_hyper(a.values[i], unit_tuple(i * a.stride - a.first1, n1),
                              unit_tuple(i * a.stride - a.first2, n2), unit_tuple(-1, size12))
        return general_element
    if isinstance(index, types.SliceType):
        width2 = 0 if element.symmetric else n2

        def seeded_slice(a, index):
            start, stop, step = index.indices(len(a.values))
            return make_hyper_seed_array(a.values[index], a.first1 - start * a.stride,
                                         a.first2 - start * a.stride, a.stride * step, n1, width2)
        return seeded_slice
    raise TypingError(f"the input of a compiled Hessian takes an integer or a slice as index, not {index}")


@overload(operator.getitem)
def _getitem(a, index):
    if isinstance(a, SeedArrayType):
        n = a.n
        if isinstance(index, types.Integer):
            def seeded_element(a, index):
                i = checked_index(index, len(a.values))
                return make_dual(a.values[i], unit_tuple(i * a.stride - a.first, n))
            return seeded_element
        if isinstance(index, types.SliceType):
            def seeded_slice(a, index):
                start, stop, step = index.indices(len(a.values))
                return make_seed_array(a.values[index], a.first - start * a.stride, a.stride * step, n)
            return seeded_slice
    elif isinstance(a, DualArrayType):
        if isinstance(index, types.Integer):
            return lambda a, index: load_element(a, checked_index(index, len(a.values)))
        if isinstance(index, types.SliceType):
            return lambda a, index: make_dual_array(a.values[index], a.components[index], a)
    else:
        return None
    raise TypingError(f"arrays of duals take an integer or a slice as index, not {index}")


@overload(operator.setitem)
def _setitem(a, index, item):
    writable(a)
    if isinstance(a, types.Array) and isinstance(item, DUALS):
        raise TypingError(
            f"a float array cannot hold a dual ({item}). An array that f allocates itself "
            "(np.zeros/empty/ones/full(m), their _like forms, np.copy, np.array) holds duals "
            "once f stores one in it; this one is f's argument, a global, a view, or allocated "
            "in another function: allocate the buffer where the duals are stored (or with "
            "np.zeros_like(x) of a dual array x), or pass jit=False")
    if not isinstance(a, DualArrayType):
        return None
    if isinstance(index, types.SliceType):
        if not (is_operand(item) and (not isinstance(item, DUALS) or element_of(item) == a.element)):
            raise TypingError(f"cannot assign {item} to a slice of an array of duals of {a.element}")
        get = element_or_whole[isinstance(item, (types.Array,) + ARRAYS)]
        check = length_of if isinstance(item, (types.Array,) + ARRAYS) else no_length

        def store_slice(a, index, item):
            start, stop, step = index.indices(len(a.values))
            count = len(range(start, stop, step))
            if check(item) != -1 and check(item) != count:
                raise ValueError("could not broadcast the assigned array into the slice")
            source = snapshot(item)  # it may overlap the slice (y[1:] = y[:-1]): read it first
            for k in range(count):
                a[start + k * step] = get(source, k)
        return store_slice
    if not isinstance(index, types.Integer):
        raise TypingError(f"assignment into an array of duals takes an integer or a slice, not {index}")
    if item == a.element:
        return lambda a, index, item: store_element(a, checked_index(index, len(a.values)), item)
    if isinstance(item, NUMBER):
        def store_number(a, index, item):
            i = checked_index(index, len(a.values))
            a.values[i] = item
            a.components[i, :] = 0.0
        return store_number
    raise TypingError(f"cannot store {item} in an array of duals of {a.element}")


def sequence_of(seq, kinds):
    """Whether seq is a homogeneous tuple or list whose items are of the given kinds."""
    return (isinstance(seq, (types.UniTuple, types.List)) and isinstance(seq.dtype, kinds))
