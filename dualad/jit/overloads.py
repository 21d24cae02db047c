"""numba overloads for dual numbers, generated from the rule table.

For every rule, each of its entry points (the NumPy ufunc, its math-module spellings, the
Python operator and in-place operator) gets two overloads:
  * every compiled scalar kind (Dual, HyperDual, the tape's Active and the sparsity
    Tracer), in any mix with plain numbers: the rule's value and partials, compiled (for a
    Tracer, which partials and second partials are None: tracer.py);
  * arrays of duals (mixed with 1-D float arrays, duals and numbers): a loop that calls the
    same entry point on each element.
The scalar protocol and the array surface (comparisons by value, float(), math.log and
isnan, len, indexing, assignment) are protocol.py; NumPy functions on arrays of duals
(zeros_like & co., sums, where, roll, dot/matmul, stack, concatenate, max/min) are
numpy_overloads.py. No derivative formula appears in any of them.
"""

import math
import operator
import types as pytypes

import numba
import numpy as np
from numba.core import types
from numba.core.errors import NumbaError, TypingError

from .. import rules
from ..primitives import subscribe
from ..rules import RULES
from . import cache, lowered, tracer
from .active import constant, one_operand, two_operands
from .cache import overload, register_jitable
from .types import (ARRAYS, NUMBER, ActiveType, DualArrayType, DualMatrixType, DualTensorType, DualType,
                    HyperDualType, TracerType, element_of, make_dual, make_dual_array, make_dual_matrix,
                    make_hyper, make_hyper_sym, store_element, writable)
from .intrinsics import tuple_zero

SCALARS = (DualType, HyperDualType, ActiveType)
DUALS = SCALARS + ARRAYS


def by_value(t):
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
# The scalar rules are force-inlined (LLVM's alwaysinline): on wide duals they exceed LLVM's
# own inlining threshold, and a call passes its structs through the stack (not inlined, a
# recording on Active(Dual(8)) is several times slower than on Dual(4);
# docs/decisions/0002-compiled-representation.md).
SCALAR_JIT = dict(RULE_JIT, forceinline=True)


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
    # compiled partials see plain numbers, and Duals on the forward-over-reverse tape (where
    # the partials are differentiated along the recording's tangents)
    if isinstance(z, NUMBER):
        return lambda z: True
    if isinstance(z, DualType):
        return lambda z: False
    return None


def as_value(y):
    """A rule's value as an active's value: float() of a number, a Dual as it is (the
    forward-over-reverse tape's values are Duals)."""
    raise TypeError("as_value runs inside compiled code only")


@overload(as_value, inline="always")
def _as_value(y):
    if isinstance(y, DualType):
        return lambda y: y
    return lambda y: float(y)


# A rule whose value is a Python-level function (erf, erfc) means its compiled value on
# plain numbers inside @njit code.
for _rule in RULES.values():
    if _rule.ufunc is None and _rule.compiled_value is not None:
        overload(_rule.value, jit_options=RULE_JIT)(_on_floats(_rule.compiled_value))


def _compiled(fn, **options):
    """fn for the rules' overloads, its only callers, inlined into them as numba IR before
    typing (inline="always" on a jit function, unlike on an overload, compiles nothing of
    its own): no dispatcher, library or machine code per partial."""
    return cache.njit(fn, inline="always", **cache.COMPILED_CALLERS_ONLY, **options)


def compiled_partial(partial, arity):
    """A rule's partial compiled for scalars; identically zero when the rule says None."""
    if partial is None:
        return _compiled(lambda x, y: 0.0) if arity == 1 else _compiled(lambda x, z, y: 0.0)
    return _compiled(partial, **RULE_JIT)


@overload(rules.power_of, jit_options=RULE_JIT)
def _power_of(x, n):
    # np.power(float, int) is a C pow() call (~12 ns); x ** n with n >= 0 is repeated
    # squaring (~1.5 ns). n < 0 keeps np.power: numba's x ** n raises at 0.0 for an integer n
    # < 0 (whatever the error model), where NumPy gives inf.
    if isinstance(x, DualType) or isinstance(n, DualType):  # forward-over-reverse partials
        return lambda x, n: np.power(x, n)
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
        return False, _compiled(zero)
    return True, _compiled(second, **RULE_JIT)


# ---- scalar duals and hyper-duals ------------------------------------------------------------------
def _unary_scalar(rule, first):
    """The unary rule's overload on the forward-over-reverse tape's actives and on tracers
    (Dual, HyperDual and the reverse tape's actives: lowered.py); first: its compiled partial."""
    value, (d,) = value_fn(rule), first

    # the forward-over-reverse tape evaluates the partial on Duals (divide's -y / z calls
    # divide's rule on Duals)
    def dual_active(x):
        y = as_value(value(x.value))
        return one_operand(y, x, d(x.value, y))

    use = tracer.use_of(rule, 0)

    def traced(x):
        return use(float(value(x.value)), x)

    def choose(x):
        if isinstance(x, TracerType):  # before ActiveType, its base
            return traced
        if isinstance(x, DualActive):
            return dual_active
        return None

    return choose


def _binary_scalar(rule, first):
    """The binary rule's overload on the forward-over-reverse tape's actives and on tracers
    (Dual, HyperDual and the reverse tape's actives: lowered.py); first: its compiled partials."""
    value, (dx, dz) = value_fn(rule), first

    # the partials on Duals: see _unary_scalar
    def active_both(a, b):
        y = as_value(value(a.value, b.value))
        return two_operands(y, a, dx(a.value, b.value, y), b, dz(a.value, b.value, y))

    def active_left(a, b):
        y = as_value(value(a.value, b))
        return one_operand(y, a, dx(a.value, b, y))

    def active_right(a, b):
        y = as_value(value(a, b.value))
        return one_operand(y, b, dz(a, b.value, y))

    return binary_chooser(rule.name, [_tracer_case(rule), (DualActive, active_both, active_left, active_right)])


class _DualActiveKind(type):
    def __instancecheck__(cls, t):
        return isinstance(t, ActiveType) and bool(t.width)


class DualActive(metaclass=_DualActiveKind):
    """isinstance(t, DualActive): an Active type of the forward-over-reverse tape (its values
    and scales are Duals; binary_chooser's kind)."""


def _tracer_case(rule):
    """The binary rule on tracers (before ActiveType, its base): a node with the rule's
    interaction flags when both operands depend, else a single operand's use."""
    value = value_fn(rule)
    use_a, use_b, flags = tracer.use_of(rule, 0), tracer.use_of(rule, 1), tracer.flags_of(rule)
    if rule.first[0] is None:
        def both(a, b):
            return use_b(float(value(a.value, b.value)), b)
    elif rule.first[1] is None:
        def both(a, b):
            return use_a(float(value(a.value, b.value)), a)
    else:
        def both(a, b):
            return tracer.joined(float(value(a.value, b.value)), a, b, flags)
    return (TracerType, both, lambda a, b: use_a(float(value(a.value, b)), a),
            lambda a, b: use_b(float(value(a, b.value)), b))


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
length_of = register_jitable(lambda a: len(a))
no_length = register_jitable(lambda a: -1)
element_or_whole = {True: _element, False: _whole}


def new_array(like, m):
    """An uninitialised array of m duals of like's element type."""
    raise TypeError("new_array runs inside compiled code only")


@overload(new_array)
def _new_array(like, m):
    if isinstance(like, DUALS + (DualMatrixType, DualTensorType, types.BaseTuple, types.List)):
        width = DualArrayType(element_of(like)).width
        return lambda like, m: make_dual_array(np.empty(m), np.empty((m, width)), like)
    return None


def is_operand(t):
    return (isinstance(t, NUMBER + DUALS) or
            (isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, NUMBER)))


def one_element_type(arg_types, what):
    """The dual element type shared by the dual operands (a TypingError if they differ)."""
    elements = {element_of(t) for t in arg_types if isinstance(t, DUALS)}
    if len(elements) != 1:
        raise TypingError(f"{what}: duals of different kinds meet ({sorted(map(str, elements))}); "
                          "a compiled transform seeds one kind per pass")
    return elements.pop()


IN_PLACE = {getattr(operator, "i" + rule.operator) for rule in RULES.values()
            if rule.arity == 2 and rule.operator and hasattr(operator, "i" + rule.operator)}


def snapshot(b):
    """b itself, or a copy where b is an array of duals (a view of the array an in-place
    operation writes into, as in `y += y[::-1]`: NumPy reads the operand before writing)."""
    raise TypeError("snapshot runs inside compiled code only")


@overload(snapshot)
def _snapshot(b):
    if isinstance(b, DualArrayType):
        return lambda b: make_dual_array(b.values.copy(), b.components.copy(), b)
    if isinstance(b, DualMatrixType):
        return lambda b: make_dual_matrix(b.values.copy(), b.components.copy(), b)
    return lambda b: b


def in_place_target(entry, target):
    """Whether `entry` is an in-place operator (x += y) writing into target, an array of
    duals; a TypingError for a differentiated input (kernels.seeded_input then gives f a
    copy of it, as for item assignment)."""
    if entry not in IN_PLACE:
        return False
    writable(target)
    return isinstance(target, (DualArrayType, DualMatrixType, DualTensorType))


def elementwise(entry, arity):
    """Overload `entry` for arrays of duals: call it on every element (1-D, equal lengths or
    scalars broadcast). An in-place operator writes into its first operand, as NumPy's."""
    name = getattr(entry, "__name__", entry)

    def choose(*arg_types):
        if not any(isinstance(t, ARRAYS) for t in arg_types):
            return None
        if entry in IN_PLACE and isinstance(arg_types[0], types.Array):
            return None  # x op= duals into a float x: numpy_overloads' error
        if not all(is_operand(t) for t in arg_types):
            raise TypingError(f"{name}: arrays of duals combine "
                              f"with 1-D float arrays, duals and numbers; got {arg_types}")
        one_element_type(arg_types, name)
        like = arg_types.index(next(t for t in arg_types if isinstance(t, DUALS)))
        get = [_element if isinstance(t, (types.Array,) + ARRAYS) else _whole for t in arg_types]
        size = [length_of if isinstance(t, (types.Array,) + ARRAYS) else no_length for t in arg_types]
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
        pick_like = first_of if like == 0 else second_of
        if in_place_target(entry, arg_types[0]):
            def into_first(a, b):
                m, lb = len(a), size_b(b)
                if lb != -1 and lb != m and lb != 1:
                    raise ValueError("operands could not be broadcast together (different lengths)")
                step_b = 0 if lb == 1 else 1  # a length-1 operand broadcasts, as in NumPy
                source = snapshot(b)
                for i in range(m):
                    store_element(a, i, entry(a[i], get_b(source, i * step_b)))
                return a
            return into_first

        def binary(a, b):
            m = broadcast_length(size_a(a), size_b(b))
            step_a = 0 if size_a(a) == 1 else 1  # a length-1 operand repeats
            step_b = 0 if size_b(b) == 1 else 1
            out = new_array(pick_like(a, b), m)
            for i in range(m):
                store_element(out, i, entry(get_a(a, i * step_a), get_b(b, i * step_b)))
            return out
        return binary

    if arity == 1:
        return lambda a: choose(a)
    return lambda a, b: choose(a, b)


@register_jitable
def broadcast_length(la, lb):
    """NumPy's broadcast length of two 1-D operands (-1: a scalar): equal lengths, or one of
    them 1 (x[:1] * x), which repeats."""
    if la == -1 or la == 1 and lb != -1:
        m = lb
    elif lb == -1 or lb == 1:
        m = la
    elif la == lb:
        m = la
    else:
        raise ValueError("operands could not be broadcast together (different lengths)")
    return m


first_of = register_jitable(lambda a, b: a)
second_of = register_jitable(lambda a, b: b)


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
            if isinstance(x, TracerType):
                return lambda x: tracer.constant(float(value(x.value)))
            if isinstance(x, ActiveType):
                return lambda x: constant(as_value(value(x.value)))
            return None
        return choose
    def case(kind, make):
        return (kind, lambda a, b: make(float(value(a.value, b.value)), a),
                lambda a, b: make(float(value(a.value, b)), a),
                lambda a, b: make(float(value(a, b.value)), b))

    def no_node(kind, make):  # tracers and actives: a constant, whatever the operands
        return (kind, lambda a, b: make(float(value(a.value, b.value))),
                lambda a, b: make(float(value(a.value, b))), lambda a, b: make(float(value(a, b.value))))

    return binary_chooser(rule.name, [
        case(DualType, dual_of), case(HyperDualType, hyper_of),
        no_node(TracerType, tracer.constant),
        (ActiveType, lambda a, b: constant(as_value(value(a.value, b.value))),
         lambda a, b: constant(as_value(value(a.value, b))), lambda a, b: constant(as_value(value(a, b.value))))])


def entry_points(rule):
    numpy_entry = rule.ufunc if rule.ufunc is not None else rule.value
    math_funcs = [getattr(math, alias) for alias in rule.math_names if hasattr(math, alias)]
    return _operators(rule) + math_funcs + [numpy_entry]


def register_rule(rule, entries):
    """Overload each entry point for scalar duals and for arrays of duals."""
    if all(partial is None for partial in rule.first):
        scalar = _constant_scalar(rule)
    else:
        first = [compiled_partial(p, rule.arity) for p in rule.first]
        scalar = (_unary_scalar if rule.arity == 1 else _binary_scalar)(rule, first)
        keys = [(0, 0)] if rule.arity == 1 else [(0, 0), (0, 1), (1, 1)]
        lowered.register(rule, entries, value_fn(rule), first, {k: _compiled_second(rule, k) for k in keys})
    for entry in entries:
        overload(entry, jit_options=SCALAR_JIT)(scalar)
        overload(entry, jit_options=RULE_JIT)(elementwise(entry, rule.arity))


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
        value if isinstance(value, pytypes.FunctionType) else cache.named(lambda *args: value(*args)))

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
