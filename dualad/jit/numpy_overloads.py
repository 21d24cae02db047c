"""NumPy functions on arrays of compiled duals: np.zeros_like, np.empty_like, np.ones_like,
np.full_like, np.full with a dual fill, np.array/np.asarray of dual scalars, sums and products,
np.max/np.min and builtin max and min (ties as the Python path: the derivative splits evenly),
np.where, np.roll, np.dot, np.matmul and @, np.concatenate, np.stack, and every binary rule
between a 1-D float array and a scalar dual (broadcast, in either order).

These are the 1-D forms; what makes or takes a 2-D array of duals is matrix.py's and
numpy_matrix.py's. `x op= dual` into a float array x raises `cannot`'s error, which names
the rewrite.
"""

import operator

import numpy as np
from numba import literal_unroll
from numba.core import event, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import TypingError

from ..primitives import subscribe
from ..rules import RULES
from . import tracer
from .active import one_operand, primal_of
from .cache import overload, register_jitable
from .intrinsics import tuple_scale
from .overloads import (ARRAYS, DUALS, RULE_JIT, SCALARS, element_or_whole, entry_points, eps2_of,
                        first_of, new_array, one_element_type, rebuild, second_of)
from .protocol import as_dual_array, scalar_pair, sequence_of
from .types import (NUMBER, ActiveType, DualArrayType, DualMatrixType, DualType, HyperDualType, TracerType,
                    compiled_only, element_of, make_active, make_dual, make_dual_array, make_tracer,
                    store_element, zero_element)


def cannot(message):
    """A form that cannot work in compiled code: a NotImplementedError naming the form and its
    rewrite. Not a TypingError, after which numba would try its own templates of the
    function, whose errors come later in its report and bury this one (kernels._explained
    shows this message first)."""
    raise NotImplementedError(message)


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
    if isinstance(fill_value, SCALARS) and (isinstance(a, ARRAYS) or is_vector(a)):
        return lambda a, fill_value, dtype=None: np.full(len(a), fill_value)
    if isinstance(a, ARRAYS):
        if not isinstance(fill_value, NUMBER):
            raise TypingError("np.full_like of an array of duals takes a number or a scalar dual "
                              "as fill_value")
        width = DualArrayType(a.element).width
        return lambda a, fill_value, dtype=None: make_dual_array(
            np.full(len(a.values), float(fill_value)), np.zeros((len(a.values), width)), a)
    return None


@overload(np.full)
def _full(shape, fill_value, dtype=None):
    """np.full(m, dual): m copies of the dual."""
    if not isinstance(fill_value, SCALARS):
        return None
    if isinstance(shape, types.BaseTuple) and len(shape) == 1:
        return lambda shape, fill_value, dtype=None: np.full(shape[0], fill_value)
    if not isinstance(shape, types.Integer):
        cannot(f"np.full(shape, dual) with shape {shape}: arrays of duals are 1-D in compiled "
               "code; allocate np.full(m * k, dual) and index [i * k + j], or pass jit=False")
    if not _float_dtype(dtype):
        raise TypingError(f"np.full with a dual fill makes float64 duals, not dtype={dtype}")

    def fill(shape, fill_value, dtype=None):
        out = new_array(fill_value, shape)
        for i in range(shape):
            store_element(out, i, fill_value)
        return out
    return fill


def is_vector(t):
    """A 1-D array of plain numbers."""
    return isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, NUMBER)


def is_none(t):
    """An argument left out or given as None."""
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


overload(np.zeros_like)(_like(0.0))
overload(np.empty_like)(_like(0.0))
overload(np.ones_like)(_like(1.0))


@overload(np.sum)
def _sum(a):
    if isinstance(a, ARRAYS):
        def total_of(a):
            total = zero_element(a) + 0.0
            for i in range(len(a.values)):
                total = total + a[i]
            return total
        return total_of
    return None


@overload(np.prod)
def _prod(a):
    """reductions.prod's tree of multiplications (pairs, an odd last entry carried), so that
    inf and 0 meet in the same order as on the Python path; NumPy's value."""
    if isinstance(a, ARRAYS):
        def prod(a):
            m = len(a)
            if m == 0:
                return zero_element(a) + 1.0
            level = as_dual_array(a)
            while m > 1:
                half = m // 2
                pairs = new_array(a, half + m % 2)
                for k in range(half):
                    store_element(pairs, k, level[2 * k] * level[2 * k + 1])
                if m % 2:
                    store_element(pairs, half, level[m - 1])
                level, m = pairs, half + m % 2
            return with_value(level[0], np.prod(a.values))
        return prod
    return None


def _array_extreme(better):
    """np.max/np.min of an array of duals, as the Python path (dualad/functions/reductions.py):
    the chosen value exactly, the derivative the mean of the tied entries' derivatives.
    Sparsity tracers depend on every entry (the Python path's tracer counts all candidates)."""
    def choose(a):
        if isinstance(a, ARRAYS) and isinstance(element_of(a), TracerType):
            def candidates(a):
                values = a.values
                if len(values) == 0:
                    raise ValueError("zero-size array to reduction operation which has no identity")
                best, total = values[0], zero_element(a)
                for i in range(len(values)):
                    if better(values[i], best):
                        best = values[i]
                    total = total + a[i]  # no second partial: the union, no interaction
                return tracer.linear(best, total)
            return candidates
        if isinstance(a, ARRAYS):
            def impl(a):
                values = a.values
                if len(values) == 0:
                    raise ValueError("zero-size array to reduction operation which has no identity")
                best, count, has_nan = values[0], 0, False
                for i in range(1, len(values)):
                    if better(values[i], best):
                        best = values[i]
                for i in range(len(values)):
                    count += values[i] == best
                    has_nan = has_nan or np.isnan(values[i])
                # every entry with its weight, zeros too, as the Python path's Σ weights · t
                # (0 · an infinite partial is nan there); nan weights where a holds nan
                # (NumPy's value is nan then)
                share = np.nan if has_nan else 1.0 / count
                total, plain = zero_element(a), 0.0
                for i in range(len(values)):
                    weight = share if has_nan or values[i] == best else 0.0
                    total = total + weighted(weight, a[i])
                    plain += weight * values[i] if weight != 0.0 else 0.0
                if np.isfinite(best) and not has_nan:
                    # the same float arithmetic on the values, off from best by a few ulp at
                    # most: the difference is exact, and removing it leaves best exactly
                    total = total - (plain - best)
                return total
            return impl
        return None
    return choose


for _fn in (np.max, np.amax):
    overload(_fn)(_array_extreme(operator.gt))
for _fn in (np.min, np.amin):
    overload(_fn)(_array_extreme(operator.lt))


@overload(np.where)
def _where(condition, x, y):
    """Elementwise choice: the derivative of the branch taken (JAX's convention)."""
    if not any(isinstance(t, DUALS) for t in (x, y)):
        return None
    if not (isinstance(condition, types.Array) and isinstance(condition.dtype, types.Boolean)):
        raise TypingError("np.where on duals takes a boolean array as condition")
    if condition.ndim != 1:
        return None  # a 2-D condition: numpy_matrix.py's
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
@overload(np.matmul)
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
    if isinstance(a, ARRAYS) and (isinstance(b, ARRAYS) or is_vector(b)):
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


primal = compiled_only("numpy_overloads", "primal")  # (x): the float values of duals; a number or float array itself


@overload(primal)
def _primal(x):
    if isinstance(x, ARRAYS):
        return lambda x: x.values
    if isinstance(x, SCALARS):
        # on the forward-over-reverse tape an active's value is a Dual: its float value
        return lambda x: primal_of(x.value)
    return lambda x: x


@register_jitable
def with_value(out, value):
    """out moved onto `value` (NumPy's), its derivatives kept: registry.with_values."""
    v = primal(out)
    if v == value or (np.isnan(v) and np.isnan(value)) or not (np.isfinite(v) and np.isfinite(value)):
        return out
    return out - (v - value)


nan_derivative = compiled_only("numpy_overloads", "nan_derivative")  # (x, value): see below


@overload(nan_derivative)
def _nan_derivative(x, value):
    """`value` with a nan derivative in every direction x has one (x a scalar dual): the
    registry's convention for a quantity that has no derivative there (lstsq's repeated
    singular values), y = g(x) with g(x) = value and g'(x) = nan."""
    if isinstance(x, DualType):
        return lambda x, value: make_dual(float(value), tuple_scale(np.nan, x.partials))
    if isinstance(x, HyperDualType):
        return lambda x, value: rebuild(x, float(value), tuple_scale(np.nan, x.eps1),
                                        tuple_scale(np.nan, eps2_of(x)), tuple_scale(np.nan, x.eps12))
    if isinstance(x, TracerType):
        return lambda x, value: tracer.linear(float(value), x)
    if isinstance(x, ActiveType) and x.width:
        return lambda x, value: one_operand(nan_derivative(x.value, value), x, np.nan)
    if isinstance(x, ActiveType):
        return lambda x, value: one_operand(float(value), x, np.nan)
    return None


derivatives_only = compiled_only("numpy_overloads", "derivatives_only")  # (x): see below


@overload(derivatives_only)
def _derivatives_only(x):
    """x's derivatives on the value 0: a dual's partials; an active's node and scale (its
    value a Dual's tangents, forward-over-reverse); a tracer's dependence."""
    if isinstance(x, DualType):
        return lambda x: make_dual(0.0, x.partials)
    if isinstance(x, HyperDualType):
        return lambda x: rebuild(x, 0.0, x.eps1, eps2_of(x), x.eps12)
    if isinstance(x, TracerType):  # (before ActiveType: a Tracer is one)
        return lambda x: make_tracer(0.0, x.index, x.header)
    if isinstance(x, ActiveType):
        return lambda x: make_active(derivatives_only(x.value), x.index, x.scale, x.header)
    return lambda x: 0.0  # a number: no derivatives


@register_jitable
def weighted(weight, x):
    """weight · x for a weighted sum of entries whose value is set afterwards (np.max/np.min,
    order statistics): a zero weight meets only x's derivatives, as the Python path weights
    only the tangents (otherwise 0 · an infinite value makes a forward dual's value nan, and
    every derivative after it)."""
    return 0.0 * derivatives_only(x) if weight == 0.0 else weight * x


whole = compiled_only("numpy_overloads", "whole")  # (axis): a ValueError unless None, 0 or -1


@overload(whole)
def _whole(axis):
    """The axis argument of a NumPy function on a 1-D array of duals: None, 0 or -1."""
    if is_none(axis):
        return lambda axis: None
    if not isinstance(axis, types.Integer):
        raise TypingError(f"arrays of duals are 1-D in compiled code: axis is None, 0 or -1, not {axis}")

    def check(axis):
        if axis != 0 and axis != -1:
            raise ValueError("axis out of bounds: arrays of duals are 1-D in compiled code")
    return check


@overload(np.concatenate)
def _concatenate(arrays, axis=0):
    """Dual arrays (with float arrays) joined end to end; one element type throughout."""
    if isinstance(arrays, types.BaseTuple) and any(isinstance(t, ARRAYS) for t in arrays):
        if not all(isinstance(t, ARRAYS) or (isinstance(t, types.Array) and t.ndim == 1)
                   for t in arrays):
            raise TypingError(f"np.concatenate of duals joins 1-D arrays, got {arrays}")
        one_element_type(tuple(arrays), "np.concatenate")

        def join_tuple(arrays, axis=0):
            whole(axis)
            total = 0
            for part in literal_unroll(arrays):
                total += len(part)
            out = new_array(arrays, total)
            zero, start = zero_element(arrays), 0
            for piece in literal_unroll(arrays):  # a second name: literal_unroll's loops need their own
                for i in range(len(piece)):
                    store_element(out, start + i, zero + piece[i])
                start += len(piece)
            return out
        return join_tuple
    if sequence_of(arrays, ARRAYS):
        def join_list(arrays, axis=0):
            whole(axis)
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


def _scalar_items(items, what):
    """Whether items is a tuple of scalar duals and numbers or a list of scalar duals, from
    which `stacked` makes a 1-D array (tuples and lists of arrays make a 2-D one:
    numpy_matrix.py's)."""
    if isinstance(items, types.BaseTuple) and any(isinstance(t, DUALS) for t in items):
        if all(isinstance(t, SCALARS + NUMBER) for t in items):
            one_element_type(tuple(items), what)
            return True
        return False
    return sequence_of(items, SCALARS)


stacked = compiled_only("numpy_overloads", "stacked")  # (items): a 1-D array of duals from _scalar_items


@overload(stacked)
def _stacked(items):
    if sequence_of(items, SCALARS):
        return lambda items: as_dual_array(items)
    count = len(items)

    def from_tuple(items):
        out = new_array(items, count)
        zero, k = zero_element(items), 0
        for item in literal_unroll(items):
            store_element(out, k, zero + item)  # a number becomes a dual with zero partials
            k += 1
        return out
    return from_tuple


@overload(np.stack)
def _stack(arrays, axis=0):
    """A 1-D array of duals from a tuple or list of scalar duals (and numbers)."""
    if _scalar_items(arrays, "np.stack"):
        return lambda arrays, axis=0: stacked(arrays)
    return None


def _float_dtype(dtype):
    return dtype is None or isinstance(dtype, types.NoneType) or (
        isinstance(dtype, (types.NumberClass, types.DType)) and dtype.dtype == types.float64)


@register_jitable
def copied(a):
    a = as_dual_array(a)
    return make_dual_array(a.values.copy(), a.components.copy(), a)


def _array_of(copy):
    """np.array (a copy) and np.asarray, np.asanyarray of duals: arrays of duals as they are,
    tuples and lists of scalar duals (and numbers) stacked."""
    def choose(a, dtype=None):
        if not (isinstance(a, DUALS) or _scalar_items(a, "np.array")):
            return None
        if not _float_dtype(dtype):
            raise TypingError(f"np.array of duals makes float64 duals, not dtype={dtype}")
        if isinstance(a, SCALARS):
            cannot("np.array of one scalar dual would be 0-D: use the scalar itself, or "
                   "np.array((x,)) for a 1-D array of one dual")
        if isinstance(a, ARRAYS):
            return (lambda a, dtype=None: copied(a)) if copy else (lambda a, dtype=None: a)
        return lambda a, dtype=None: stacked(a)
    return choose


for _fn, _copies in ((np.array, True), (np.asarray, False), (np.asanyarray, False)):
    overload(_fn)(_array_of(_copies))


# ---- binary rules between a 1-D float array and a scalar dual -------------------------------------


def _array_with_scalar(entry, rule):
    """entry(a, b) for a 1-D float array and a scalar dual in either order: the rule's float ⊕
    dual case on each element, as the Python path broadcasts (a derivative only where the
    dual is, so an infinite partial never meets the float operand's zero tangent)."""
    name = getattr(entry, "__name__", str(entry))
    in_place = name == f"i{rule.operator}"  # `x op= dual` into a float x: _into_float_array

    def choose(a, b):
        first = isinstance(a, types.Array) and isinstance(b, SCALARS)
        if not (first or (isinstance(b, types.Array) and isinstance(a, SCALARS))) or (first and in_place):
            return None
        array, scalar = (a, b) if first else (b, a)
        if array.ndim in (2, 3) and isinstance(array.dtype, NUMBER):
            return None  # matrix.py's and tensor.py's
        if not (array.ndim == 1 and isinstance(array.dtype, NUMBER)):
            cannot(f"{name}: a {array.ndim}-D array of {array.dtype} meets a dual ({scalar}), and "
                   "arrays of duals have 1 to 3 dimensions in compiled code: work on a flat copy "
                   "(x.ravel()) or slice by slice, or pass jit=False")
        get_a, get_b = element_or_whole[first], element_or_whole[not first]
        pick_array, pick_scalar = (first_of, second_of) if first else (second_of, first_of)

        def broadcast(a, b):
            m = len(pick_array(a, b))
            out = new_array(pick_scalar(a, b), m)
            for i in range(m):
                store_element(out, i, entry(get_a(a, i), get_b(b, i)))
            return out
        return broadcast

    return lambda a, b: choose(a, b)


def _into_float_array(symbol):
    """`x op= dual` for a float array x: refused, as on the Python path (x cannot hold duals,
    and rebinding x to a new array would leave its other names with the old values). It
    types, and raises when it runs: an x that f allocates and stores a dual into elsewhere
    is promoted to an array of duals when the typing fails there (promote.py), and then the
    in-place operator writes into it; a typing error here would stop f's typing before that
    (numba's own in-place template, tried after a TypingError, fails on a dual with an
    AttributeError of its own)."""
    def choose(a, b):
        if isinstance(a, types.Array) and isinstance(b, DUALS + (DualMatrixType,)):
            message = (f"x {symbol}= dual with x a float array ({a}) would write duals into x in "
                       f"place, and a float array cannot hold them: write x = x {symbol} dual (a "
                       "new array of duals), or allocate x in f and store a dual into it")

            def refuse(a, b):
                if a.size >= 0:  # always; numba would drop a return after a bare raise
                    raise ValueError(message)
                return a  # the type of x op= y
            return refuse
        return None
    return choose


def register_broadcast(entry_list, rule):
    """Operators and NumPy ufuncs only: math.* functions take no arrays (as in Python)."""
    for entry in entry_list:
        if rule.arity == 2 and getattr(entry, "__module__", None) != "math":
            overload(entry, jit_options=RULE_JIT)(_array_with_scalar(entry, rule))


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "pow": "**", "mod": "%",
            "floordiv": "//"}
_IN_PLACE = [(getattr(operator, "i" + rule.operator), _SYMBOLS.get(rule.operator, rule.operator))
             for rule in RULES.values() if rule.arity == 2 and rule.operator]
for _rule in RULES.values():
    register_broadcast(entry_points(_rule), _rule)
subscribe(lambda entry, rule, value: rule is not None and register_broadcast([entry], rule))
for _entry, _symbol in _IN_PLACE:
    overload(_entry)(_into_float_array(_symbol))


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


def dualad_templates_first(functions):
    """Put dualad's typing templates of these functions before numba's own, at numba's next
    compile (_put_ours_first).

    numba's generic np.zeros_like & co. accept any type as a dtype and would type
    np.zeros_like(dual array) as a 0-d array of dual arrays; numba's in-place operators on a
    float array fail on a dual with an AttributeError instead of a typing error. Where numba already typed one of
    these functions before dualad.jit was imported (the user called f on floats first), its
    template list was made then, and ours were appended behind the generic one: reorder it.
    Not at import: reordering needs the typing context refreshed, which instantiates every
    attribute template, each refreshing numba's target context (its lowering modules,
    scipy.linalg): 0.4 s that a process only loading cached kernels never needs.
    """
    _ORDER_PENDING.extend(functions)
    if global_compiler_lock.is_locked():  # imported from inside a compile: it types next
        _put_ours_first()


_ORDER_PENDING = []  # functions whose templates go first at the next compile


class _FirstCompile(event.Listener):
    """At the start of any compile (under numba's compiler lock), the pending reorders."""

    def on_start(self, event_):
        if _ORDER_PENDING:
            _put_ours_first()

    def on_end(self, event_):
        pass


event.register("numba:compile", _FirstCompile())


def _put_ours_first():
    """dualad's templates of the pending functions before numba's (dualad_templates_first)."""
    from numba.core.registry import cpu_target

    context = cpu_target.typing_context
    context.refresh()  # installs dualad's overloads (augmenting existing entries)
    pending, _ORDER_PENDING[:] = list(_ORDER_PENDING), []
    for fn in pending:
        existing = context._lookup_global(fn)
        if not isinstance(existing, types.Function):
            continue
        ours = [t for t in existing.templates
                if (getattr(getattr(t, "_overload_func", None), "__module__", None) or "").startswith("dualad")]
        if ours and existing.templates[:len(ours)] != tuple(ours):
            rest = [t for t in existing.templates if t not in ours]
            context._remove_global(fn)
            context._insert_global(fn, types.Function(tuple(ours + rest)))


dualad_templates_first((np.zeros_like, np.empty_like, np.ones_like, np.full_like) +
                        tuple(entry for entry, _ in _IN_PLACE))
