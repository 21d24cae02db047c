"""LLVM-level tuple arithmetic for the compiled dual types' partials: every operation is
emitted element by element, so no operation on a scalar dual allocates.

    unit_tuple(slot, n)          (0, ..., 1 at slot, ..., 0)
    tuple_scale(s, a)            s · a
    tuple_zero(a)                zeros like a (not 0 · a, nan where a holds inf)
    tuple_axpy(s, a, t, b)       s · a + t · b
    tuple_outer_axpy(acc, s, b, c)  acc + s · (b ⊗ c), full or packed upper triangle
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic

__all__ = ["unit_tuple", "tuple_scale", "tuple_zero", "tuple_axpy", "tuple_outer_axpy",
           "packed_size"]


def packed_size(n):
    """Entries of the upper triangle (diagonal included) of an n × n symmetric block."""
    return n * (n + 1) // 2


@intrinsic
def unit_tuple(typingctx, slot, n):
    """A UniTuple of n floats: 1.0 at `slot` (if 0 <= slot < n), 0.0 elsewhere."""
    if not isinstance(n, types.IntegerLiteral):
        raise TypingError("unit_tuple needs its length as a constant")
    tuple_type = types.UniTuple(types.float64, n.literal_value)
    sig = tuple_type(types.intp, n)

    def codegen(context, builder, signature, args):
        one, zero = context.get_constant(types.float64, 1.0), context.get_constant(types.float64, 0.0)
        return _tuple_map(signature, builder, context, lambda i: builder.select(
            builder.icmp_signed("==", args[0], context.get_constant(types.intp, i)), one, zero))

    return sig, codegen


def _tuple_map(signature, builder, context, element):
    """A new UniTuple whose element i is element(i)."""
    out = cgutils.get_null_value(context.get_value_type(signature.return_type))
    for i in range(signature.return_type.count):
        out = builder.insert_value(out, element(i), i)
    return out


@intrinsic
def tuple_scale(typingctx, s, a):
    """s · a for a float s and a UniTuple a."""
    sig = a(types.float64, a)

    def codegen(context, builder, signature, args):
        s, a = args
        return _tuple_map(signature, builder, context,
                          lambda i: builder.fmul(s, builder.extract_value(a, i)))

    return sig, codegen


@intrinsic
def tuple_zero(typingctx, a):
    """A UniTuple of zeros like a (not 0 · a, which is nan where a holds inf or nan)."""
    sig = a(a)

    def codegen(context, builder, signature, args):
        zero = context.get_constant(types.float64, 0.0)
        return _tuple_map(signature, builder, context, lambda i: zero)

    return sig, codegen


@intrinsic
def is_negative_zero(typingctx, x):
    """Whether the float x is -0.0, bit for bit (one integer compare; math.copysign cost 30 %
    of an hvp at n = 100, 2026-11-26)."""
    sig = types.boolean(types.float64)

    def codegen(context, builder, signature, args):
        bits = builder.bitcast(args[0], ir.IntType(64))
        return builder.icmp_unsigned("==", bits, ir.Constant(ir.IntType(64), 1 << 63))

    return sig, codegen


@intrinsic
def tuple_with_first(typingctx, a, first):
    """a with `first` in place of a[0]."""
    sig = a(a, types.float64)

    def codegen(context, builder, signature, args):
        return builder.insert_value(args[0], args[1], 0)

    return sig, codegen


@intrinsic
def tuple_axpy(typingctx, s, a, t, b):
    """s · a + t · b for floats s, t and UniTuples a, b of one length."""
    if a != b:
        raise TypingError(f"duals with different numbers of partials meet: {a} and {b}")
    sig = a(types.float64, a, types.float64, b)

    def codegen(context, builder, signature, args):
        s, a, t, b = args
        return _tuple_map(signature, builder, context, lambda i: builder.fadd(
            builder.fmul(s, builder.extract_value(a, i)), builder.fmul(t, builder.extract_value(b, i))))

    return sig, codegen



@intrinsic
def tuple_outer_axpy(typingctx, acc, s, b, c):
    """acc + s · (b ⊗ c), with acc full (n1·n2, row-major) or packed upper (n(n+1)/2).

    The layout follows from the lengths (they coincide only for n = 1, where both agree).
    """
    n1, n2 = b.count, c.count
    if acc.count == n1 * n2:
        pairs = [(i, j) for i in range(n1) for j in range(n2)]
    elif n1 == n2 and acc.count == packed_size(n1):
        pairs = [(i, j) for i in range(n1) for j in range(i, n1)]
    else:
        raise TypingError(f"tuple_outer_axpy: {acc.count} entries fit neither {n1}×{n2} nor packed")
    sig = acc(acc, types.float64, b, c)

    def codegen(context, builder, signature, args):
        acc, s, b, c = args
        # (s·b_i)·c_j: n1 products for s·b, then one product per entry instead of two
        scaled = [builder.fmul(s, builder.extract_value(b, i)) for i in range(n1)]
        return _tuple_map(signature, builder, context, lambda k: builder.fadd(
            builder.extract_value(acc, k),
            builder.fmul(scaled[pairs[k][0]], builder.extract_value(c, pairs[k][1]))))

    return sig, codegen
