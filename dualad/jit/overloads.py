"""numba overloads for dual numbers, generated from the rule table.

For every rule, each of its entry points (the NumPy ufunc, its math-module spellings, the
Python operator and in-place operator) gets two overloads:
  * every compiled scalar kind (Dual, HyperDual and the tape's Active), in any mix with
    plain numbers: the rule's value and partials, compiled;
  * arrays of duals (mixed with 1-D float arrays, duals and numbers): a loop that calls the
    same entry point on each element.
Also here: comparisons by value, indexing and assignment of dual arrays, len/shape,
zeros_like & co., sum, dot/matmul. No derivative formula appears in this file.
"""

import math
import operator
import types as pytypes

import numba
import numpy as np
from numba import literal_unroll
from numba.core import types
from numba.core.errors import NumbaError, TypingError
from numba.core.extending import overload, overload_attribute, register_jitable

from .. import math as dual_math
from .. import rules
from ..primitives import subscribe
from ..rules import RULES
from .active import constant, one_operand, two_operands
from .types import (ARRAYS, NUMBER, ActiveType, DualArrayType, DualType, HyperDualType,
                    HyperSeedArrayType, SeedArrayType, element_of, load_element, make_dual, make_dual_array,
                    make_hyper, make_hyper_seed_array, make_hyper_sym, make_seed_array,
                    store_element, tuple_axpy, tuple_zero, tuple_outer_axpy, tuple_scale, unit_tuple,
                    zero_element)

SCALARS = (DualType, HyperDualType, ActiveType)
DUALS = SCALARS + ARRAYS
def _by_value(t):
    """Scalars that compare by value, refuse float() and take max/min, math.log and isnan:
    the dual types and the compiled tape's actives."""
    return isinstance(t, SCALARS)

# ---- helpers the rules call, given their scalar meaning ---------------------------------------
# Rule code (partials, helpers, the scalar overloads) compiles with NumPy's error model, set
# explicitly: numba's default ('python') raises ZeroDivisionError on a float division by zero
# (and on 0.0 ** -1), where the Python path, under np.errstate, gives NumPy's inf or nan. Left
# unset, the option is inherited from whichever function compiles the rule first. The user's
# own code keeps its own error model: only dualad's generated functions set this.
RULE_JIT = {"error_model": "numpy"}


@overload(rules.select, jit_options=RULE_JIT)
def _select(condition, if_true, if_false):
    if isinstance(condition, types.Boolean):
        return lambda condition, if_true, if_false: if_true if condition else if_false
    return None


for _helper in rules.HELPERS:
    register_jitable(**RULE_JIT)(_helper)


def _on_floats(fn):
    def choose(x):
        if isinstance(x, NUMBER):
            return lambda x: fn(x)
        return None
    return choose


@overload(rules.is_number, jit_options=RULE_JIT)
def _is_number(z):
    # compiled partials see the primal values only: plain numbers
    if isinstance(z, NUMBER):
        return lambda z: True
    return None


# A rule whose value is a Python-level function (erf, erfc) means its compiled value on
# plain numbers inside @njit code.
for _rule in RULES.values():
    if _rule.ufunc is None and _rule.compiled_value is not None:
        overload(_rule.value, jit_options=RULE_JIT)(_on_floats(_rule.compiled_value))


def compiled_partial(partial, arity):
    """A rule's partial compiled for scalars; identically zero when the rule says None."""
    if partial is None:
        return numba.njit(lambda x, y: 0.0) if arity == 1 else numba.njit(lambda x, z, y: 0.0)
    return numba.njit(partial, **RULE_JIT)


@overload(rules.power_of, jit_options=RULE_JIT)
def _power_of(x, n):
    # np.power(float, int) is a C pow() call (~12 ns); x ** n with n >= 0 is repeated
    # squaring (~1.5 ns). n < 0 keeps np.power: numba's x ** n raises at 0.0 for an integer n
    # < 0 (whatever the error model), where NumPy gives inf.
    if not (isinstance(x, NUMBER) and isinstance(n, NUMBER)):
        return None
    if isinstance(n, types.Integer):
        return lambda x, n: x ** n if n >= 0 else np.power(x, n)
    return lambda x, n: np.power(x, n)


def value_fn(rule):
    """What compiled code calls for the rule's value: the rule's compiled value where it has
    one (power's fast integer powers; erf's math.erf), else its ufunc or value function."""
    if rule.compiled_value is not None and rule.ufunc is not None:
        return rule.compiled_value
    return rule.ufunc if rule.ufunc is not None else rule.value


# ---- hyper-dual helpers: one chain rule for the general and the symmetric layout -------------
def eps2_of(x):
    raise TypeError("eps2_of runs inside compiled code only")


def rebuild(like, value, eps1, eps2, eps12):
    raise TypeError("rebuild runs inside compiled code only")


@overload(eps2_of)
def _eps2_of(x):
    if isinstance(x, HyperDualType):
        return (lambda x: x.eps1) if x.symmetric else (lambda x: x.eps2_stored)
    return None


@overload(rebuild)
def _rebuild(like, value, eps1, eps2, eps12):
    if isinstance(like, HyperDualType) and like.symmetric:
        return lambda like, value, eps1, eps2, eps12: make_hyper_sym(value, eps1, eps12)
    if isinstance(like, HyperDualType):
        return lambda like, value, eps1, eps2, eps12: make_hyper(value, eps1, eps2, eps12)
    return None


def _compiled_second(rule, key):
    """(has, fn): whether the rule's second partial is nonzero, and it compiled."""
    second = rule.second[key]
    if second is None:
        zero = (lambda x, y, d: 0.0) if rule.arity == 1 else (lambda x, z, y: 0.0)
        return False, numba.njit(zero)
    return True, numba.njit(second, **RULE_JIT)


# ---- scalar duals and hyper-duals ------------------------------------------------------------------
def _unary_scalar(rule):
    value, d = value_fn(rule), compiled_partial(rule.first[0], 1)
    has2, d2 = _compiled_second(rule, (0, 0))

    def dual(x):
        y = float(value(x.value))
        return make_dual(y, tuple_scale(d(x.value, y), x.partials))

    def hyper(x):
        y = float(value(x.value))
        slope = d(x.value, y)
        eps12 = tuple_scale(slope, x.eps12)
        if has2:  # a constant: numba prunes the branch for rules with f'' = 0
            eps12 = tuple_outer_axpy(eps12, d2(x.value, y, slope), x.eps1, eps2_of(x))
        return rebuild(x, y, tuple_scale(slope, x.eps1), tuple_scale(slope, eps2_of(x)), eps12)

    def active(x):
        y = float(value(x.value))
        return one_operand(y, x, d(x.value, y))

    def choose(x):
        if isinstance(x, DualType):
            return dual
        if isinstance(x, HyperDualType):
            return hyper
        if isinstance(x, ActiveType):
            return active
        return None

    return choose


def _binary_scalar(rule):
    value = value_fn(rule)
    dx, dz = compiled_partial(rule.first[0], 2), compiled_partial(rule.first[1], 2)
    (hxx, sxx), (hxz, sxz), (hzz, szz) = (_compiled_second(rule, key) for key in ((0, 0), (0, 1), (1, 1)))

    def both(a, b):
        y = float(value(a.value, b.value))
        return make_dual(y, tuple_axpy(dx(a.value, b.value, y), a.partials,
                                       dz(a.value, b.value, y), b.partials))

    def left(a, b):
        y = float(value(a.value, b))
        return make_dual(y, tuple_scale(dx(a.value, b, y), a.partials))

    def right(a, b):
        y = float(value(a, b.value))
        return make_dual(y, tuple_scale(dz(a, b.value, y), b.partials))

    def hyper_both(a, b):
        av, bv = a.value, b.value
        y = float(value(av, bv))
        sa, sb = dx(av, bv, y), dz(av, bv, y)
        a2, b2 = eps2_of(a), eps2_of(b)
        eps12 = tuple_axpy(sa, a.eps12, sb, b.eps12)
        if hxx:
            eps12 = tuple_outer_axpy(eps12, sxx(av, bv, y), a.eps1, a2)
        if hxz:
            cross = sxz(av, bv, y)
            eps12 = tuple_outer_axpy(tuple_outer_axpy(eps12, cross, a.eps1, b2), cross, b.eps1, a2)
        if hzz:
            eps12 = tuple_outer_axpy(eps12, szz(av, bv, y), b.eps1, b2)
        return rebuild(a, y, tuple_axpy(sa, a.eps1, sb, b.eps1), tuple_axpy(sa, a2, sb, b2), eps12)

    def hyper_left(a, b):
        y = float(value(a.value, b))
        sa = dx(a.value, b, y)
        eps12 = tuple_scale(sa, a.eps12)
        if hxx:
            eps12 = tuple_outer_axpy(eps12, sxx(a.value, b, y), a.eps1, eps2_of(a))
        return rebuild(a, y, tuple_scale(sa, a.eps1), tuple_scale(sa, eps2_of(a)), eps12)

    def hyper_right(a, b):
        y = float(value(a, b.value))
        sb = dz(a, b.value, y)
        eps12 = tuple_scale(sb, b.eps12)
        if hzz:
            eps12 = tuple_outer_axpy(eps12, szz(a, b.value, y), b.eps1, eps2_of(b))
        return rebuild(b, y, tuple_scale(sb, b.eps1), tuple_scale(sb, eps2_of(b)), eps12)

    def active_both(a, b):
        y = float(value(a.value, b.value))
        return two_operands(y, a, dx(a.value, b.value, y), b, dz(a.value, b.value, y))

    def active_left(a, b):
        y = float(value(a.value, b))
        return one_operand(y, a, dx(a.value, b, y))

    def active_right(a, b):
        y = float(value(a, b.value))
        return one_operand(y, b, dz(a, b.value, y))

    return binary_chooser(rule.name, [(DualType, both, left, right),
                                       (HyperDualType, hyper_both, hyper_left, hyper_right),
                                       (ActiveType, active_both, active_left, active_right)])


def binary_chooser(name, cases):
    """The overload choice of a binary rule: cases are (scalar kind, impl for two of that
    kind, impl for kind ⊕ number, impl for number ⊕ kind)."""
    def choose(a, b):
        for kind, pair, one, other in cases:
            if isinstance(a, kind) and isinstance(b, kind):
                if a != b:
                    raise TypingError(f"{name}: {a} and {b} meet (different partials)")
                return pair
            if isinstance(a, kind) and isinstance(b, NUMBER):
                return one
            if isinstance(a, NUMBER) and isinstance(b, kind):
                return other
        return None

    return choose


# ---- arrays of duals, elementwise -----------------------------------------------------------------
_element = register_jitable(lambda a, i: a[i])
_whole = register_jitable(lambda a, i: a)
_length = register_jitable(lambda a: len(a))
_no_length = register_jitable(lambda a: -1)
_element_or_whole = {True: _element, False: _whole}


def new_array(like, m):
    """An uninitialised array of m duals of like's element type."""
    raise TypeError("new_array runs inside compiled code only")


@overload(new_array)
def _new_array(like, m):
    if isinstance(like, DUALS + (types.BaseTuple, types.List)):
        width = DualArrayType(element_of(like)).width
        return lambda like, m: make_dual_array(np.empty(m), np.empty((m, width)), like)
    return None


def _is_operand(t):
    return (isinstance(t, NUMBER + DUALS) or
            (isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, NUMBER)))


def _one_element_type(arg_types, what):
    """The dual element type shared by the dual operands (a TypingError if they differ)."""
    elements = {element_of(t) for t in arg_types if isinstance(t, DUALS)}
    if len(elements) != 1:
        raise TypingError(f"{what}: duals of different kinds meet ({sorted(map(str, elements))}); "
                          "a compiled transform seeds one kind per pass")
    return elements.pop()


def _elementwise(entry, arity):
    """Overload `entry` for arrays of duals: call it on every element (1-D, equal lengths or
    scalars broadcast)."""
    name = getattr(entry, "__name__", entry)

    def choose(*arg_types):
        if not any(isinstance(t, ARRAYS) for t in arg_types):
            return None
        if not all(_is_operand(t) for t in arg_types):
            raise TypingError(f"{name}: arrays of duals combine "
                              f"with 1-D float arrays, duals and numbers; got {arg_types}")
        _one_element_type(arg_types, name)
        like = arg_types.index(next(t for t in arg_types if isinstance(t, DUALS)))
        get = [_element if isinstance(t, (types.Array,) + ARRAYS) else _whole for t in arg_types]
        size = [_length if isinstance(t, (types.Array,) + ARRAYS) else _no_length for t in arg_types]
        if arity == 1:
            get_a = get[0]

            def unary(a):
                m = len(a)
                out = new_array(a, m)
                for i in range(m):
                    store_element(out, i, entry(get_a(a, i)))
                return out
            return unary
        (get_a, get_b), (size_a, size_b) = get, size
        pick_like = _first if like == 0 else _second

        def binary(a, b):
            la, lb = size_a(a), size_b(b)
            if la != -1 and lb != -1 and la != lb:
                raise ValueError("operands could not be broadcast together (different lengths)")
            m = max(la, lb)
            out = new_array(pick_like(a, b), m)
            for i in range(m):
                store_element(out, i, entry(get_a(a, i), get_b(b, i)))
            return out
        return binary

    if arity == 1:
        return lambda a: choose(a)
    return lambda a, b: choose(a, b)


_first = register_jitable(lambda a, b: a)
_second = register_jitable(lambda a, b: b)


# ---- registration: one loop over the table -----------------------------------------------------------
def _operators(rule):
    """The operator entry points of a rule: operator.add and operator.iadd for "add"; neg,
    pos and the builtin abs for the unary ones."""
    if rule.operator is None:
        return []
    if rule.operator == "abs":
        return [abs]
    if rule.arity == 1:
        return [getattr(operator, rule.operator)]
    return [getattr(operator, rule.operator), getattr(operator, "i" + rule.operator)]


def _constant_scalar(rule):
    """A piecewise-constant rule (every first partial None: floor, sign, //, ...): its result
    has zero tangents, exactly as on the Python path, which skips the terms (0 · tangent
    would be nan where the operand's tangent is infinite, e.g. floor(3 / x) at x = 0)."""
    value = value_fn(rule)

    @register_jitable
    def dual_of(y, x):
        return make_dual(y, tuple_zero(x.partials))

    @register_jitable
    def hyper_of(y, x):
        return rebuild(x, y, tuple_zero(x.eps1), tuple_zero(eps2_of(x)), tuple_zero(x.eps12))

    if rule.arity == 1:
        def choose(x):
            if isinstance(x, DualType):
                return lambda x: dual_of(float(value(x.value)), x)
            if isinstance(x, HyperDualType):
                return lambda x: hyper_of(float(value(x.value)), x)
            if isinstance(x, ActiveType):
                return lambda x: constant(float(value(x.value)))
            return None
        return choose
    def case(kind, make):
        return (kind, lambda a, b: make(float(value(a.value, b.value)), a),
                lambda a, b: make(float(value(a.value, b)), a),
                lambda a, b: make(float(value(a, b.value)), b))

    return binary_chooser(rule.name, [
        case(DualType, dual_of), case(HyperDualType, hyper_of),
        (ActiveType, lambda a, b: constant(float(value(a.value, b.value))),
         lambda a, b: constant(float(value(a.value, b))), lambda a, b: constant(float(value(a, b.value))))])


def entry_points(rule):
    numpy_entry = rule.ufunc if rule.ufunc is not None else rule.value
    math_funcs = [getattr(math, alias) for alias in rule.math_names if hasattr(math, alias)]
    return _operators(rule) + math_funcs + [numpy_entry]


def register_rule(rule, entries):
    """Overload each entry point for scalar duals and for arrays of duals."""
    if all(partial is None for partial in rule.first):
        scalar = _constant_scalar(rule)
    else:
        scalar = _unary_scalar(rule) if rule.arity == 1 else _binary_scalar(rule)
    for entry in entries:
        overload(entry, jit_options=RULE_JIT)(scalar)
        overload(entry, jit_options=RULE_JIT)(_elementwise(entry, rule.arity))


for _rule in RULES.values():
    register_rule(_rule, entry_points(_rule))


def _register_primitive(entry, rule, value):
    """A dualad.primitive in compiled code: its value function on plain numbers (compiled
    with numba; a TypingError names the primitive when numba cannot), its rule on duals.
    A partial past the registered ones (rule None) fails to compile with its message."""
    if rule is None:
        def missing(*arg_types):
            raise TypingError(entry.message)
        overload(entry)((lambda x: missing(x)) if entry.arity == 1 else (lambda x, z: missing(x, z)))
        return
    compiled = value if isinstance(value, numba.core.registry.CPUDispatcher) else numba.njit(
        value if isinstance(value, pytypes.FunctionType) else (lambda *args: value(*args)))

    def on_numbers(*arg_types):
        if not all(isinstance(t, NUMBER) for t in arg_types):
            return None
        try:
            compiled.get_call_template(arg_types, {})
        except NumbaError as err:
            raise TypingError(
                f"dualad.primitive {entry.__name__!r}: numba cannot compile {value!r} for "
                f"{arg_types} ({str(err).splitlines()[0]}). Register numba-compilable functions "
                "(math.*, np.* on scalars, @njit functions) to use it in compiled code, or run "
                "on the Python path with jit=False") from None
        return (lambda x: compiled(x)) if rule.arity == 1 else (lambda x, z: compiled(x, z))

    overload(entry)((lambda x: on_numbers(x)) if rule.arity == 1 else (lambda x, z: on_numbers(x, z)))
    register_rule(rule, [entry])


subscribe(_register_primitive)


def _log_with_base(numbers_too):
    """math.log(x[, base]); dualad.math.log also takes plain numbers (numba knows math's)."""
    def choose(x, base=None):
        if not (_by_value(x) or (numbers_too and isinstance(x, NUMBER))):
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
        if _by_value(x):
            return lambda x: test(x.value)
        if isinstance(x, NUMBER):
            return lambda x: test(x)
        return None
    return choose


for _test in ("isnan", "isinf", "isfinite"):
    overload(getattr(dual_math, _test))(_value_test(getattr(np, _test)))
    overload(getattr(math, _test))(_value_test(getattr(np, _test)))


# ---- comparisons by value ----------------------------------------------------------------------------
_primal = register_jitable(lambda a: a.value)
_itself = register_jitable(lambda a: a)


def _scalar_pair(a, b):
    """Whether a and b are a by-value scalar (dual, hyper-dual, active) and such a scalar or a
    plain number: the operands comparisons and max/min take."""
    return ((_by_value(a) or _by_value(b)) and
            all(_by_value(t) or isinstance(t, NUMBER) for t in (a, b)))


def _comparison(op):
    def choose(a, b):
        if not _scalar_pair(a, b):
            return None
        pa = _primal if _by_value(a) else _itself
        pb = _primal if _by_value(b) else _itself
        return lambda a, b: op(pa(a), pb(b))
    return choose


_values = register_jitable(lambda a: a.values)


def _array_comparison(op):
    """Arrays of duals compare by value, elementwise, giving a boolean array (like NumPy)."""
    def choose(a, b):
        if not (isinstance(a, ARRAYS) or isinstance(b, ARRAYS)):
            return None
        va = _values if isinstance(a, ARRAYS) else (_primal if isinstance(a, SCALARS) else _itself)
        vb = _values if isinstance(b, ARRAYS) else (_primal if isinstance(b, SCALARS) else _itself)
        return lambda a, b: op(va(a), vb(b))
    return choose


for _op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
    overload(_op)(_comparison(_op))
    overload(_op)(_array_comparison(_op))


@overload(float)
def _float_of_dual(x):
    if _by_value(x):
        raise TypingError("float() of a dual would drop its derivative: keep the value a dual "
                          "(arithmetic, math.* and np.* functions work on duals), or call "
                          "dualad's transform with jit=False to use the Python path")
    return None


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
    if isinstance(a, ARRAYS) or _sequence_of(a, SCALARS):
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
    if isinstance(a, (SeedArrayType, HyperSeedArrayType)):
        raise TypingError("the differentiated input is read-only inside a compiled transform; "
                          "copy it first (y = np.zeros_like(x); y[i] = x[i] ...)")
    if isinstance(a, types.Array) and isinstance(item, SCALARS):
        raise TypingError(f"a float array cannot hold a dual ({item}): make the buffer with "
                          "np.zeros_like(x) or np.empty_like(x) of a dual array x, so it holds duals")
    if not isinstance(a, DualArrayType):
        return None
    if isinstance(index, types.SliceType):
        if not (_is_operand(item) and (not isinstance(item, DUALS) or element_of(item) == a.element)):
            raise TypingError(f"cannot assign {item} to a slice of an array of duals of {a.element}")
        get = _element_or_whole[isinstance(item, (types.Array,) + ARRAYS)]
        check = _length if isinstance(item, (types.Array,) + ARRAYS) else _no_length

        def store_slice(a, index, item):
            start, stop, step = index.indices(len(a.values))
            count = len(range(start, stop, step))
            if check(item) != -1 and check(item) != count:
                raise ValueError("could not broadcast the assigned array into the slice")
            for k in range(count):
                a[start + k * step] = get(item, k)
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
    _one_element_type((x, y), "np.where")
    pick_like = _first if isinstance(x, DUALS) else _second
    get_x = _element_or_whole[isinstance(x, (types.Array,) + ARRAYS)]
    get_y = _element_or_whole[isinstance(y, (types.Array,) + ARRAYS)]

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


def _sequence_of(seq, kinds):
    """Whether seq is a homogeneous tuple or list whose items are of the given kinds."""
    return (isinstance(seq, (types.UniTuple, types.List)) and isinstance(seq.dtype, kinds))


@overload(np.concatenate)
def _concatenate(arrays):
    """Dual arrays (with float arrays) joined end to end; one element type throughout."""
    if isinstance(arrays, types.BaseTuple) and any(isinstance(t, ARRAYS) for t in arrays):
        if not all(isinstance(t, ARRAYS) or (isinstance(t, types.Array) and t.ndim == 1)
                   for t in arrays):
            raise TypingError(f"np.concatenate of duals joins 1-D arrays, got {arrays}")
        _one_element_type(tuple(arrays), "np.concatenate")

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
    if _sequence_of(arrays, ARRAYS):
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
        _one_element_type(tuple(items), "np.stack")
        count = len(items)

        def stack_tuple(items):
            out = new_array(items, count)
            zero, k = zero_element(items), 0
            for item in literal_unroll(items):
                store_element(out, k, zero + item)
                k += 1
            return out
        return stack_tuple
    if _sequence_of(items, SCALARS):
        return lambda items: as_dual_array(items)
    return None


def _extreme(pick_second):
    """Python's max/min of two numbers, one a dual: the first of equal arguments wins."""
    def choose(a, b):
        if not _scalar_pair(a, b):
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
