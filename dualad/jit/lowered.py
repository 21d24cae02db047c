"""The rules on scalar Dual and HyperDual numbers and on the reverse tape's actives, lowered
into the code that calls them.

numba compiles an @overload's implementation as a function of its own for every type it
meets: typing, lowering, an LLVM module, machine code and a cache entry each. Here a rule on
a Dual, a HyperDual or a float Active (alone, with another of its type, or with a plain
number) is a typing template and one lowering for every such type, which writes the rule
into its caller:

  * the rule's value and partials on plain numbers (the rule table's, the same compiled
    partials the forward-over-reverse tape's overloads inline) are one small function per
    rule, order and operand types, compiled with NumPy's error model (inf, not
    ZeroDivisionError, at a division by zero), cached on disk as dualad's own and
    force-inlined into the caller, whatever the dual's width;
  * the chain rule on the tuples of partials is vector code emitted in the caller
    (intrinsics.scale, axpy, outer_axpy: the tuple intrinsics' own code), each term formed
    in the order the Python path's HyperDual forms it, so both paths round alike; on an
    Active the partials go to active.one_operand / two_operands (the tape's node), one
    compiled function per Active type whatever the rule.

For y = φ(x):           y.partials = φ'(x) · x.partials
HyperDual:              y.eps12 = φ' · x.eps12 + φ'' · (x.eps1 ⊗ x.eps2)
For y = φ(a, b):        y.partials = φ_a · a.partials + φ_b · b.partials
HyperDual:              y.eps12 = φ_a a.eps12 + φ_b b.eps12 + φ_aa a1⊗a2 + φ_ab (a1⊗b2 + b1⊗a2) + φ_bb b1⊗b2
"""

from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import infer
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global, signature

from . import cache, intrinsics
from .active import one_operand, two_operands
from .types import NUMBER, ActiveType, DualType, HyperDualType, TracerType

__all__ = ["register", "is_operand", "result_type"]


def is_operand(t):
    """A Dual, a HyperDual or an Active of the reverse tape (not the forward-over-reverse
    tape's, whose values are Duals, nor a sparsity Tracer: their overloads are overloads.py's)."""
    if isinstance(t, ActiveType):
        return not isinstance(t, TracerType) and t.width == 0
    return isinstance(t, (DualType, HyperDualType))


class _RuleCall:
    """The lowering key of one rule's calls on duals (its entry points share it)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<dualad rule {self.name!r} on duals>"


def result_type(arg_types, name):
    """The type a rule's call returns, or None when the call is not one for this module: one
    Dual, HyperDual or float Active type, alone or with plain numbers (two of one kind but of
    different widths: a TypingError)."""
    kinds = [t for t in arg_types if is_operand(t)]
    if not kinds or not all(is_operand(t) or isinstance(t, NUMBER) for t in arg_types):
        return None
    if any(type(t) is not type(kinds[0]) for t in kinds):
        return None  # a Dual meets a HyperDual: no rule (numba's typing error names the call)
    if any(t != kinds[0] for t in kinds):
        raise TypingError(f"{name}: {kinds[0]} and {kinds[1]} meet (different partials)")
    return kinds[0]


# ---- the rule on plain numbers: value and partials, one function per order and operands ----
# (y, partials...) as a tuple; each factory's closure is one rule's compiled functions, so the
# code is the same for every rule and dualad's own cache tells them apart by what they close
# over (cache.identity).
def _unary_first(value, d):
    def rule_first_order(x):
        y = float(value(x))
        return y, d(x, y)
    return rule_first_order


def _unary_second(value, d, d2):
    def rule_second_order(x):
        y = float(value(x))
        slope = d(x, y)
        return y, slope, d2(x, y, slope)
    return rule_second_order


def _binary_first(value, dx, dz):
    def rule_first_order(a, b):
        y = float(value(a, b))
        return y, dx(a, b, y), dz(a, b, y)
    return rule_first_order


def _binary_second(value, dx, dz, sxx, sxz, szz):
    def rule_second_order(a, b):
        y = float(value(a, b))
        return y, dx(a, b, y), dz(a, b, y), sxx(a, b, y), sxz(a, b, y), szz(a, b, y)
    return rule_second_order


def _one_operand_first(value, d):  # a binary rule with one dual operand: its partial
    def rule_first_order(a, b):
        y = float(value(a, b))
        return y, d(a, b, y)
    return rule_first_order


def _one_operand_second(value, d, second):
    def rule_second_order(a, b):
        y = float(value(a, b))
        return y, d(a, b, y), second(a, b, y)
    return rule_second_order


_DISPATCHERS = {}


def _on_numbers(context, builder, fn, arg_types, args, n_results):
    """Call fn (a rule on plain numbers), compiled with NumPy's error model and cached on disk
    as dualad's own (made at its first call, not at import); its n_results floats."""
    dispatcher = _DISPATCHERS.get(fn)
    if dispatcher is None:
        # forceinline: LLVM's alwaysinline, as the scalar overloads have (their code is the
        # caller's, whatever LLVM's size threshold says of erf's or a HyperDual's)
        dispatcher = _DISPATCHERS[fn] = cache.njit(fn, error_model="numpy", forceinline=True,
                                                   **cache.COMPILED_CALLERS_ONLY)
    # compiled for this return type: numba converts each partial to a float as it returns
    # (a bool's partial of x * flag is a bool, which numba's float() refuses)
    sig = signature(types.UniTuple(types.float64, n_results), *arg_types)
    if sig.args not in dispatcher.overloads:
        dispatcher.compile(sig)
    cres = dispatcher.overloads[sig.args]
    context.active_code_library.add_linking_library(cres.library)
    result = context.call_internal(builder, cres.fndesc, cres.signature, args)
    return [builder.extract_value(result, i) for i in range(n_results)]


# ---- the chain rule on the partials' tuples ------------------------------------------------
class _Operand:
    """A dual operand's LLVM members by name, and their numba types."""

    def __init__(self, context, builder, dual_type, value):
        self.type, self.llvm = dual_type, value
        self._struct = cgutils.create_struct_proxy(dual_type)(context, builder, value=value)
        self._model = context.data_model_manager[dual_type]
        self.value = self._struct.value

    def member(self, name):
        name = _stored_as(self.type, name)
        return getattr(self._struct, name), self._model.get_member_fe_type(name)


def _stored_as(dual_type, name):
    """The struct member holding a dual's `name`: a HyperDual's eps2 is eps2_stored, or in a
    symmetric block eps1 (its ε2 seeds are its ε1 seeds, not stored)."""
    if name != "eps2":
        return name
    return "eps1" if dual_type.symmetric else "eps2_stored"


def _made(context, builder, dual_type, members):
    out = cgutils.create_struct_proxy(dual_type)(context, builder)
    for name, value in members.items():
        setattr(out, _stored_as(dual_type, name), value)
    return out._getvalue()


def _dual(context, builder, dual_type, y, terms):
    """Dual(y, Σ s · partials) for terms [(s, operand)]."""
    partials_type = dual_type.partials_type
    if len(terms) == 1:
        (s, a), = terms
        partials = intrinsics.scale(context, builder, partials_type, s, a.member("partials")[0])
    else:
        (s, a), (t, b) = terms
        partials = intrinsics.axpy(context, builder, partials_type, s, a.member("partials")[0],
                                   t, b.member("partials")[0])
    return _made(context, builder, dual_type, {"value": y, "partials": partials})


def _recorded(context, builder, active_type, y, terms):
    """The active y = φ(operands) on the tape, for terms [(partial, operand)]:
    active.one_operand (one active operand rescales) or two_operands (a node)."""
    if len(terms) == 1:
        (s, x), = terms
        return _jit_call(context, builder, one_operand, (types.float64, active_type, types.float64),
                         [y, x.llvm, s])
    (sa, a), (sb, b) = terms
    return _jit_call(context, builder, two_operands,
                     (types.float64, active_type, types.float64, active_type, types.float64),
                     [y, a.llvm, sa, b.llvm, sb])


def _jit_call(context, builder, fn, arg_types, args):
    """A call of fn (one of dualad's jit functions) written by a lowering, as numba writes one."""
    fnty = context.typing_context.resolve_value_type(fn)
    sig = fnty.get_call_type(context.typing_context, tuple(arg_types), {})
    return context.get_function(fnty, sig)(builder, args)


def _first_order(context, builder, out_type, y, terms):
    """y with first-order terms [(partial, operand)]: a Dual, or an Active on the tape."""
    if isinstance(out_type, ActiveType):
        return _recorded(context, builder, out_type, y, terms)
    return _dual(context, builder, out_type, y, terms)


def _hyper(context, builder, dual_type, y, terms, seconds):
    """HyperDual(y, ...) for first terms [(s, operand)] and second terms [(s2, p, q)]:
    eps1 = Σ s · p.eps1, eps2 likewise, eps12 = Σ s · p.eps12 + Σ s2 · (p.eps1 ⊗ q.eps2)."""
    def combined(name):
        member_type = terms[0][1].member(name)[1]
        parts = [(s, a.member(name)[0]) for s, a in terms]
        if len(parts) == 1:
            return intrinsics.scale(context, builder, member_type, *parts[0])
        return intrinsics.axpy(context, builder, member_type, *parts[0], *parts[1])

    eps12 = combined("eps12")
    eps12_type = terms[0][1].member("eps12")[1]
    for s2, p, q in seconds:
        (p1, p1_type), (q2, q2_type) = p.member("eps1"), q.member("eps2")
        eps12 = intrinsics.outer_axpy(context, builder, eps12_type, p1_type, q2_type, eps12, s2, p1, q2)
    members = {"value": y, "eps1": combined("eps1"), "eps12": eps12}
    if not dual_type.symmetric:
        members["eps2"] = combined("eps2")
    return _made(context, builder, dual_type, members)


# ---- registration -------------------------------------------------------------------------------
def register(rule, entries, value, first, second):
    """Type and lower rule's calls on Dual, HyperDual and float Active operands at each entry
    point.

    value: the rule's value on numbers; first: its compiled first partials (one per operand);
    second: {(i, j): (nonzero, compiled second partial)}."""
    key = _RuleCall(rule.name)
    if rule.arity == 1:
        (d,), (has2, d2) = first, second[(0, 0)]
        order1, order2 = _unary_first(value, d), _unary_second(value, d, d2)

        def lower(context, builder, sig, args):
            x = _Operand(context, builder, sig.args[0], args[0])
            if not isinstance(x.type, HyperDualType):
                y, s = _on_numbers(context, builder, order1, (types.float64,), [x.value], 2)
                return _first_order(context, builder, x.type, y, [(s, x)])
            y, s, s2 = _on_numbers(context, builder, order2, (types.float64,), [x.value], 3)
            return _hyper(context, builder, x.type, y, [(s, x)], [(s2, x, x)] if has2 else [])
    else:
        dx, dz = first
        (hxx, sxx), (hxz, sxz), (hzz, szz) = (second[k] for k in ((0, 0), (0, 1), (1, 1)))
        both1, both2 = _binary_first(value, dx, dz), _binary_second(value, dx, dz, sxx, sxz, szz)
        left1, left2 = _one_operand_first(value, dx), _one_operand_second(value, dx, sxx)
        right1, right2 = _one_operand_first(value, dz), _one_operand_second(value, dz, szz)

        def lower(context, builder, sig, args):
            kinds = [is_operand(t) for t in sig.args]
            duals = [_Operand(context, builder, t, v) if dual else None
                     for t, v, dual in zip(sig.args, args, kinds)]
            numbers = [d.value if d is not None else v for d, v in zip(duals, args)]
            arg_types = [types.float64 if dual else t for t, dual in zip(sig.args, kinds)]
            a, b = duals
            out_type = sig.return_type
            if not isinstance(out_type, HyperDualType):
                if all(kinds):
                    y, sa, sb = _on_numbers(context, builder, both1, arg_types, numbers, 3)
                    return _first_order(context, builder, out_type, y, [(sa, a), (sb, b)])
                fn, operand = (left1, a) if kinds[0] else (right1, b)
                y, s = _on_numbers(context, builder, fn, arg_types, numbers, 2)
                return _first_order(context, builder, out_type, y, [(s, operand)])
            if all(kinds):
                y, sa, sb, saa, sab, sbb = _on_numbers(context, builder, both2, arg_types, numbers, 6)
                seconds = ([(saa, a, a)] if hxx else []) + ([(sab, a, b), (sab, b, a)] if hxz else []) + (
                    [(sbb, b, b)] if hzz else [])
                return _hyper(context, builder, out_type, y, [(sa, a), (sb, b)], seconds)
            fn, operand, has = (left2, a, hxx) if kinds[0] else (right2, b, hzz)
            y, s, s2 = _on_numbers(context, builder, fn, arg_types, numbers, 3)
            return _hyper(context, builder, out_type, y, [(s, operand)], [(s2, operand, operand)] if has else [])

    lower_builtin(key, types.VarArg(types.Any))(lower)

    class RuleOnDuals(AbstractTemplate):
        def generic(self, args, kws):
            if kws or len(args) != rule.arity:
                return None
            out = result_type(args, rule.name)
            return None if out is None else signature(out, *args)

        def get_impl_key(self, sig):
            return key

    for entry in entries:
        template = type(f"RuleOnDuals_{rule.name}", (RuleOnDuals,), {"key": entry})
        infer(template)
        infer_global(entry, types.Function(template))
