"""NumPy functions on arrays of compiled duals: np.zeros_like, np.empty_like, np.ones_like,
np.full_like, sums and products, np.where, np.roll, np.dot and @, np.concatenate, np.stack,
max and min (ties as the Python path: the derivative splits evenly).
"""

import operator

import numpy as np
from numba import literal_unroll
from numba.core import types
from numba.core.errors import TypingError
from numba.core.extending import overload

from .overloads import (ARRAYS, DUALS, SCALARS, element_or_whole, first_of, new_array,
                        one_element_type, second_of)
from .protocol import as_dual_array, scalar_pair, sequence_of
from .types import NUMBER, DualArrayType, make_dual_array, store_element, zero_element


def _like(fill):
    def choose(a, dtype=None):
        if isinstance(a, ARRAYS):
            width = DualArrayType(a.element).width
            return lambda a, dtype=None: make_dual_array(np.full(len(a.values), fill),
                                                         np.zeros((len(a.values), width)), a)
        return None
    return choose


@overload(np.full_like)
def _full_like(a, fill_value, dtype=None):
    if isinstance(a, ARRAYS):
        if not isinstance(fill_value, NUMBER):
            raise TypingError("np.full_like of an array of duals takes a number as fill_value")
        width = DualArrayType(a.element).width
        return lambda a, fill_value, dtype=None: make_dual_array(
            np.full(len(a.values), float(fill_value)), np.zeros((len(a.values), width)), a)
    return None


overload(np.zeros_like)(_like(0.0))
overload(np.empty_like)(_like(0.0))
overload(np.ones_like)(_like(1.0))


def _reduction(start, op):
    def choose(a):
        if isinstance(a, ARRAYS):
            def impl(a):
                total = zero_element(a) + start
                for i in range(len(a.values)):
                    total = op(total, a[i])
                return total
            return impl
        return None
    return choose


overload(np.sum)(_reduction(0.0, operator.add))
overload(np.prod)(_reduction(1.0, operator.mul))


@overload(np.where)
def _where(condition, x, y):
    """Elementwise choice: the derivative of the branch taken (JAX's convention)."""
    if not any(isinstance(t, DUALS) for t in (x, y)):
        return None
    if not (isinstance(condition, types.Array) and isinstance(condition.dtype, types.Boolean)):
        raise TypingError("np.where on duals takes a boolean array as condition")
    one_element_type((x, y), "np.where")
    pick_like = first_of if isinstance(x, DUALS) else second_of
    get_x = element_or_whole[isinstance(x, (types.Array,) + ARRAYS)]
    get_y = element_or_whole[isinstance(y, (types.Array,) + ARRAYS)]

    def impl(condition, x, y):
        m = len(condition)
        like = pick_like(x, y)
        out = new_array(like, m)
        zero = zero_element(like)
        for i in range(m):
            # the untaken branch is not evaluated: a plain number becomes a dual with zero partials
            store_element(out, i, zero + (get_x(x, i) if condition[i] else get_y(y, i)))
        return out
    return impl


@overload(np.roll)
def _roll(a, shift):
    if isinstance(a, ARRAYS):
        def impl(a, shift):
            m = len(a)
            out = new_array(a, m)
            for i in range(m):
                store_element(out, i, a[(i - shift) % m])
            return out
        return impl
    return None


@overload(np.dot)
@overload(operator.matmul)
def _dot(a, b):
    if isinstance(a, types.Array) and a.ndim == 2 and isinstance(b, ARRAYS):
        def matvec(a, b):
            # Loops, not a @ b: numba's @ on float matrices needs scipy's BLAS, and the
            # runtime dependencies are numpy and numba only.
            rows, cols = a.shape
            if cols != len(b):
                raise ValueError("matmul: shapes not aligned")
            out = new_array(b, rows)
            for i in range(rows):
                total = zero_element(b)
                for j in range(cols):
                    total = total + a[i, j] * b[j]
                store_element(out, i, total)
            return out
        return matvec
    if isinstance(a, ARRAYS) and isinstance(b, ARRAYS + (types.Array,)):
        def inner(a, b):
            if len(a) != len(b):
                raise ValueError("dot: shapes not aligned")
            total = zero_element(a)
            for i in range(len(a)):
                total = total + a[i] * b[i]
            return total
        return inner
    if isinstance(a, types.Array) and a.ndim == 1 and isinstance(b, ARRAYS):
        return lambda a, b: np.dot(b, a)
    return None


@overload(np.concatenate)
def _concatenate(arrays):
    """Dual arrays (with float arrays) joined end to end; one element type throughout."""
    if isinstance(arrays, types.BaseTuple) and any(isinstance(t, ARRAYS) for t in arrays):
        if not all(isinstance(t, ARRAYS) or (isinstance(t, types.Array) and t.ndim == 1)
                   for t in arrays):
            raise TypingError(f"np.concatenate of duals joins 1-D arrays, got {arrays}")
        one_element_type(tuple(arrays), "np.concatenate")

        def join_tuple(arrays):
            total = 0
            for part in literal_unroll(arrays):
                total += len(part)
            out = new_array(arrays, total)
            zero, start = zero_element(arrays), 0
            for part in literal_unroll(arrays):
                for i in range(len(part)):
                    store_element(out, start + i, zero + part[i])
                start += len(part)
            return out
        return join_tuple
    if sequence_of(arrays, ARRAYS):
        def join_list(arrays):
            total = 0
            for part in arrays:
                total += len(part)
            out = new_array(arrays, total)
            start = 0
            for part in arrays:
                for i in range(len(part)):
                    store_element(out, start + i, part[i])
                start += len(part)
            return out
        return join_list
    return None


@overload(np.stack)
def _stack(items):
    """A 1-D array of duals from a tuple or list of scalar duals (and numbers)."""
    if isinstance(items, types.BaseTuple) and any(isinstance(t, SCALARS) for t in items):
        if not all(isinstance(t, SCALARS + NUMBER) for t in items):
            raise TypingError(f"np.stack of duals takes scalar duals and numbers, got {items}")
        one_element_type(tuple(items), "np.stack")
        count = len(items)

        def stack_tuple(items):
            out = new_array(items, count)
            zero, k = zero_element(items), 0
            for item in literal_unroll(items):
                store_element(out, k, zero + item)
                k += 1
            return out
        return stack_tuple
    if sequence_of(items, SCALARS):
        return lambda items: as_dual_array(items)
    return None


def _extreme(pick_second):
    """Python's max/min of two numbers, one a dual: the first of equal arguments wins."""
    def choose(a, b):
        if not scalar_pair(a, b):
            return None
        # the two branches unify: a number argument becomes a dual (or active) constant
        return lambda a, b: b if pick_second(b, a) else a
    return choose


overload(max)(_extreme(operator.gt))  # max(a, b) is b only if b > a
overload(min)(_extreme(operator.lt))


def _dualad_templates_first(functions):
    """Put dualad's typing templates of these functions before numba's own.

    numba's generic np.zeros_like & co. accept any type as a dtype and would type
    np.zeros_like(dual array) as a 0-d array of dual arrays. Where numba already typed one of
    these functions before dualad.jit was imported (the user called f on floats first), its
    template list was made then, and ours were appended behind the generic one: reorder it.
    """
    from numba.core.registry import cpu_target

    context = cpu_target.typing_context
    context.refresh()  # installs this module's overloads (augmenting existing entries)
    for fn in functions:
        existing = context._lookup_global(fn)
        if not isinstance(existing, types.Function):
            continue
        ours = [t for t in existing.templates
                if getattr(getattr(t, "_overload_func", None), "__module__", "").startswith("dualad")]
        if ours and existing.templates[:len(ours)] != tuple(ours):
            rest = [t for t in existing.templates if t not in ours]
            context._remove_global(fn)
            context._insert_global(fn, types.Function(tuple(ours + rest)))


_dualad_templates_first((np.zeros_like, np.empty_like, np.ones_like, np.full_like))
