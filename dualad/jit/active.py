"""Recording onto the compiled tape: what one rule application on actives does.

An active scalar is value + scale · (perturbation of one node). An operation with one
active operand only updates value and scale (scale *= the rule's partial); an operation on
two active operands appends a node: both operand nodes and their partials times their
scales. The overloads of every rule (overloads.py) call one_operand / two_operands; the
tape, its sweeps and its kernels are tape.py.

The tape is a header of HEADER_SLOTS int64 (size and capacity in nodes, the address of the
nodes) and the nodes, NODE_SLOTS 8-byte words each: the two operand ids (int64), then their
weights, partial · scale (float64). That is all the sweep reads.
"""

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic

from .cache import overload, register_jitable
from .intrinsics import is_negative_zero, tuple_scale_nonzero, tuple_with_first
from .types import DualType, make_active, make_dual

__all__ = ["push", "one_operand", "two_operands", "constant", "passes_nothing", "primal_of",
           "float_like", "float_like_words", "times", "node_slots", "HEADER_SLOTS", "NODE_SLOTS"]

HEADER_SLOTS = 3
NODE_SLOTS = 4
_I64 = ir.IntType(64)


def _alias_scopes(module):
    """(the header's scope list, the nodes' scope list): LLVM scoped no-alias metadata saying
    that a push's header accesses and its node stores never touch the same memory (they are
    separate buffers). Without it LLVM reloads the size after every node's stores, and the
    recording's longest dependency chain runs through memory
    (docs/decisions/0002-compiled-representation.md).
    String-named nodes, so that they merge across numba's modules."""
    domain = module.add_metadata([ir.MetaDataString(module, "dualad.tape")])
    header = module.add_metadata([ir.MetaDataString(module, "dualad.tape.header"), domain])
    nodes = module.add_metadata([ir.MetaDataString(module, "dualad.tape.nodes"), domain])
    return module.add_metadata([header]), module.add_metadata([nodes])


def node_slots(width):
    """8-byte words of one node: two operand ids and two weights of 1 + width floats each
    (width: tangents per weight; 0 on the reverse tape, NODE_SLOTS words)."""
    return 2 + 2 * (1 + width)


def _words(context, builder, number, weight):
    """A weight (a float, or a Dual's value and partials) as int64 words."""
    if not isinstance(number, DualType):
        return [builder.bitcast(weight, _I64)]
    dual = cgutils.create_struct_proxy(number)(context, builder, value=weight)
    return [builder.bitcast(dual.value, _I64)] + [
        builder.bitcast(builder.extract_value(dual.partials, k), _I64) for k in range(number.n)]


@intrinsic
def push(typingctx, header, parent0, weight0, parent1, weight1):
    """Append a node; its id. Past the capacity only the size grows (the kernel re-runs).
    Weights are floats, or Duals (forward-over-reverse: each weight's tangents follow it)."""
    number = weight0 if isinstance(weight0, DualType) else types.float64
    width = number.n if isinstance(number, DualType) else 0
    sig = types.intp(types.intp, types.intp, number, types.intp, number)

    def codegen(context, builder, signature, args):
        address, p0, w0, p1, w1 = args
        in_header, in_nodes = _alias_scopes(builder.module)

        def scoped(instruction, scope, other):
            instruction.set_metadata("alias.scope", scope)
            instruction.set_metadata("noalias", other)
            return instruction

        head = builder.inttoptr(address, _I64.as_pointer())
        size, capacity, nodes = (builder.gep(head, [_I64(k)], inbounds=True) for k in range(HEADER_SLOTS))
        node = scoped(builder.load(size), in_header, in_nodes)
        room = builder.icmp_signed("<", node, scoped(builder.load(capacity), in_header, in_nodes))
        with builder.if_then(room, likely=True):
            base = builder.inttoptr(scoped(builder.load(nodes), in_header, in_nodes), _I64.as_pointer())
            at = builder.gep(base, [builder.mul(node, _I64(node_slots(width)))], inbounds=True)
            words = [p0, p1] + _words(context, builder, number, w0) + _words(context, builder, number, w1)
            for k, word in enumerate(words):
                scoped(builder.store(word, builder.gep(at, [_I64(k)], inbounds=True)), in_nodes, in_header)
        scoped(builder.store(builder.add(node, _I64(1)), size), in_header, in_nodes)
        return node

    return sig, codegen


def passes_nothing(later, earlier):
    """Whether the product later · earlier of two factors of a chain (a partial and the scale
    before it; an adjoint and a node's weight) passes nothing on. Floats: later == 0 (a zero
    partial or adjoint passes nothing, even against an infinite factor, as the Python tape,
    where a zero cotangent contributes zero). Duals, as the Python tape on Duals: a zero value
    whose tangents are zero too (a zero value with tangents meeting a non-finite value passes
    those on: tangents_through), where earlier's value is not finite (the Python tape masks
    0 · inf there) or its tangents are all finite. A zero against a finite value whose tangent
    is not (arctan's partial at inf: 0 + nan·ε) is a product there, whose tangent is nan:
    otherwise the hvp of arctan(a)·b at (inf, 0) along (1, 0) is 0 compiled, nan in
    Python."""
    raise TypeError("dualad.jit.active.passes_nothing runs inside compiled code only")


@overload(passes_nothing, inline="always")
def _passes_nothing(later, earlier):
    if isinstance(later, DualType):
        def dual(later, earlier):
            if later.value != 0.0:
                return False
            for t in later.partials:
                if t != 0.0:
                    return False
            return not np.isfinite(primal_of(earlier)) or tangents_finite(earlier)
        return dual
    return lambda later, earlier: later == 0.0


def tangents_finite(x):
    """Whether every tangent of x is finite (a float has none)."""
    raise TypeError("dualad.jit.active.tangents_finite runs inside compiled code only")


@overload(tangents_finite, inline="always")
def _tangents_finite(x):
    if isinstance(x, DualType):
        def dual(x):
            for t in x.partials:
                if not np.isfinite(t):
                    return False
            return True
        return dual
    return lambda x: True


def meets_non_finite(later, earlier):
    """Whether later · earlier is a Dual of value 0 (with tangents) against a non-finite value,
    which passes only its tangents on (tangents_through)."""
    raise TypeError("dualad.jit.active.meets_non_finite runs inside compiled code only")


@overload(meets_non_finite, inline="always")
def _meets_non_finite(later, earlier):
    if isinstance(later, DualType):
        return lambda later, earlier: later.value == 0.0 and not np.isfinite(primal_of(earlier))
    return lambda later, earlier: False


def tangents_through(later, earlier):
    """(0 + l̇·ε) · earlier where earlier's value e is not finite: value 0 and tangents l̇·e,
    a zero lane passing nothing, as the Python tape's (0 + ċ·ε) · p (reverse/traced._times):
    the value and 0 · ė are 0 by the convention that a zero passes nothing, the tangents
    are not dropped (dropped, they make the forward-over-reverse Hessian of norm(x)**2 at
    x = 0 zero on both tapes, where it is 2·I and only nan can be given)."""
    raise TypeError("dualad.jit.active.tangents_through runs inside compiled code only")


@overload(tangents_through, inline="always")
def _tangents_through(later, earlier):
    if isinstance(later, DualType):
        return lambda later, earlier: make_dual(
            0.0, tuple_scale_nonzero(primal_of(earlier), later.partials))
    # a float has no tangents (meets_non_finite is False): typed only, as the product
    return lambda later, earlier: scaled(later, earlier)


def primal_of(x):
    """A float's itself, a Dual's value."""
    raise TypeError("dualad.jit.active.primal_of runs inside compiled code only")


@overload(primal_of, inline="always")
def _primal_of(x):
    if isinstance(x, DualType):
        return lambda x: x.value
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x: x
    return None


def scaled(partial, scale):
    """partial · scale, the scale (a product of partials, or the inputs' 1) multiplying as a
    float where it is one on the Python tape (float_like): its chains start from a float
    cotangent 1.0, so that 1 · (a partial whose tangent is inf) keeps the inf instead of
    adding inf · 0. A Dual scale whose tangents are zero (cos(x) where x's tangent is 0) is
    a Dual there, and inf · 0 is nan as on the Python tape (taken for a float where its
    tangents are 0, the hvp of sin(x1)·exp(x0) at x0 = 800 along v = (1, 0) is inf compiled,
    nan in Python)."""
    raise TypeError("dualad.jit.active.scaled runs inside compiled code only")


@overload(scaled, inline="always")
def _scaled(partial, scale):
    if isinstance(scale, DualType):
        def dual(partial, scale):
            if float_like(scale):
                return make_dual(0.0, scale.partials) + partial * scale.value
            return partial * scale
        return dual
    return lambda partial, scale: partial * scale


def float_like(scale):
    """Whether a Dual scale multiplies as a float: the mark is a first tangent of -0.0 (all
    of them are -0.0 then), which make_active gives the scale 1.0 of an input or a node and
    times keeps while only float-typed partials (np.maximum's 1 or 0, say) multiply it. A
    weight so marked is a float on the Python tape, whose sweep adds p · (cotangent's
    tangent) and not also 0 · (cotangent's value): inf or nan there (f = max(x, 0.5)**2 at
    x = inf) would make the Hessian's row nan. Arithmetic can give a -0.0 too (0 · a
    negative number): times adds +0.0 to the first tangent of every weight it does not
    mark, which clears the mark and changes nothing else."""
    raise TypeError("dualad.jit.active.float_like runs inside compiled code only")


@overload(float_like, inline="always")
def _float_like(scale):
    if isinstance(scale, DualType):
        return lambda scale: is_negative_zero(scale.partials[0])
    return lambda scale: True


@register_jitable(forceinline=True)
def float_like_words(words, at):
    """float_like of a weight stored on the tape, its first tangent words[at]."""
    return is_negative_zero(words[at])


def times(partial, scale):
    """partial · scale, or 0 where it passes nothing on (passes_nothing); marked float_like
    where the partial is a float and the scale is float_like, and never marked otherwise."""
    raise TypeError("dualad.jit.active.times runs inside compiled code only")


# LLVM inlines it (forceinline), as the _times it replaced: numba-level inlining of this
# overload's conditional expressions raised NumbaIRAssumptionWarning ("variable ... is not
# in scope") at every compile, which test_cache's warning-free check caught
@overload(times, jit_options={"forceinline": True})
def _times(partial, scale):
    if not isinstance(scale, DualType):
        return lambda partial, scale: 0.0 if passes_nothing(partial, scale) else (
            tangents_through(partial, scale) if meets_non_finite(partial, scale) else scaled(partial, scale))
    marks = not isinstance(partial, DualType)  # known here: a float partial keeps a mark

    def dual(partial, scale):
        weight = 0.0 if passes_nothing(partial, scale) else (
            tangents_through(partial, scale) if meets_non_finite(partial, scale) else scaled(partial, scale))
        # a select, not a branch (a branch here is a large share of an hvp:
        # docs/decisions/0005-measured-constants-in-code.md): a marked
        # scale has zero tangents, and so has the weight; + 0.0 clears a -0.0 made by arithmetic
        first = -0.0 if marks and float_like(scale) else weight.partials[0] + 0.0
        return make_dual(weight.value, tuple_with_first(weight.partials, first))
    return dual


@register_jitable(forceinline=True)
def constant(y):
    """An active with no node: a value that does not depend on the inputs."""
    return make_active(y, -1, 0.0, 0)


@register_jitable(forceinline=True)
def one_operand(y, x, partial):
    """y = g(x) with x = value + scale·(its node): y = g + g'·scale·(the same node), no new
    node; a constant x stays one (its index is -1; a constant's scale and header are never
    read). A partial that passes nothing on gives scale 0 on the same node, not a constant:
    an infinite partial later (sqrt at 0 after a square at 0: std of a constant sample)
    meets it as inf · 0 = nan, as on the Python tape, whose cotangent inf meets the
    partial 0."""
    return make_active(y, x.index, times(partial, x.scale), x.header)


@register_jitable(forceinline=True)
def two_operands(y, a, partial_a, b, partial_b):
    if a.index < 0:
        return one_operand(y, b, partial_b)
    if b.index < 0:
        return one_operand(y, a, partial_a)
    node = push(a.header, a.index, times(partial_a, a.scale), b.index, times(partial_b, b.scale))
    return make_active(y, node, 1.0, a.header)
