"""LLVM-level tuple arithmetic for the compiled dual types' partials: a tuple is taken as an
LLVM vector for each operation (SIMD instructions, each lane the same IEEE operation as
element by element), and no operation on a scalar dual allocates.

    unit_tuple(slot, n)          (0, ..., 1 at slot, ..., 0)
    tuple_scale(s, a)            s · a
    tuple_scale_nonzero(s, a)    s · a lane by lane, 0 where a's lane is 0 (even if s is inf)
    tuple_zero(a)                zeros like a (not 0 · a, nan where a holds inf)
    tuple_axpy(s, a, t, b)       s · a + t · b
    tuple_outer_axpy(acc, s, b, c)  acc + s · (b ⊗ c), full or packed upper triangle
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic

_I32 = ir.IntType(32)

__all__ = ["unit_tuple", "tuple_scale", "tuple_scale_nonzero", "tuple_zero", "tuple_axpy",
           "tuple_outer_axpy", "packed_size"]


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
        width = n.literal_value
        if width == 0:
            return cgutils.get_null_value(context.get_value_type(tuple_type))
        slots = ir.VectorType(ir.IntType(64), width)
        at_slot = builder.icmp_signed("==", _splat(builder, args[0], width, slots),
                                      ir.Constant(slots, list(range(width))))
        lanes = ir.VectorType(ir.DoubleType(), width)
        return _from_vector(signature.return_type, builder, context, builder.select(
            at_slot, ir.Constant(lanes, [1.0] * width), ir.Constant(lanes, [0.0] * width)))

    return sig, codegen


def _tuple_map(tuple_type, builder, context, element):
    """A new UniTuple of tuple_type whose element i is element(i)."""
    out = cgutils.get_null_value(context.get_value_type(tuple_type))
    for i in range(tuple_type.count):
        out = builder.insert_value(out, element(i), i)
    return out


def _vector(builder, tuple_value, n):
    """A UniTuple of n floats as an LLVM <n x double>. Written on vectors, the arithmetic
    becomes SIMD instructions without numba's SLP vectoriser, which numba leaves off
    (numba PR #8852: miscompilations) for every function of the process."""
    vector = ir.Constant(ir.VectorType(ir.DoubleType(), n), ir.Undefined)
    for i in range(n):
        vector = builder.insert_element(vector, builder.extract_value(tuple_value, i), _I32(i))
    return vector


def _from_vector(tuple_type, builder, context, vector):
    """The UniTuple of tuple_type holding the lanes of vector."""
    return _tuple_map(tuple_type, builder, context, lambda i: builder.extract_element(vector, _I32(i)))


def _splat(builder, s, n, vector_type=None):
    """<n x double> (or vector_type) with s in every lane."""
    vector_type = ir.VectorType(ir.DoubleType(), n) if vector_type is None else vector_type
    vector = builder.insert_element(ir.Constant(vector_type, ir.Undefined), s, _I32(0))
    return _gather(builder, vector, [0] * n)


def _gather(builder, vector, lanes):
    """A vector of len(lanes) lanes whose lane k is vector's lane lanes[k]."""
    return builder.shuffle_vector(vector, ir.Constant(vector.type, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), len(lanes)), lanes))


@intrinsic
def tuple_scale(typingctx, s, a):
    """s · a for a float s and a UniTuple a."""
    sig = a(types.float64, a)

    def codegen(context, builder, signature, args):
        return scale(context, builder, signature.return_type, *args)

    return sig, codegen


def scale(context, builder, tuple_type, s, a):
    """The code of tuple_scale: s · a, a of tuple_type."""
    n = tuple_type.count
    if n == 0:
        return a
    return _from_vector(tuple_type, builder, context,
                        builder.fmul(_splat(builder, s, n), _vector(builder, a, n)))


@intrinsic
def tuple_scale_nonzero(typingctx, s, a):
    """s · a where a's lane is not 0 (nan included), 0 where it is: a zero passes nothing
    through an infinite s (the tapes' convention for a cotangent's tangents)."""
    sig = a(types.float64, a)

    def codegen(context, builder, signature, args):
        s, a = args
        n = signature.return_type.count
        if n == 0:
            return a
        lanes = _vector(builder, a, n)
        zero = ir.Constant(lanes.type, None)
        return _from_vector(signature.return_type, builder, context, builder.select(
            builder.fcmp_unordered("!=", lanes, zero),
            builder.fmul(_splat(builder, s, n), lanes), zero))

    return sig, codegen


@intrinsic
def tuple_zero(typingctx, a):
    """A UniTuple of zeros like a (not 0 · a, which is nan where a holds inf or nan)."""
    sig = a(a)

    def codegen(context, builder, signature, args):
        zero = context.get_constant(types.float64, 0.0)
        return _tuple_map(signature.return_type, builder, context, lambda i: zero)

    return sig, codegen


@intrinsic
def is_negative_zero(typingctx, x):
    """Whether the float x is -0.0, bit for bit (one integer compare, where math.copysign
    costs several times as much of an hvp:
    docs/decisions/0006-special-points-on-the-tapes.md)."""
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
        return axpy(context, builder, signature.return_type, *args)

    return sig, codegen


def axpy(context, builder, tuple_type, s, a, t, b):
    """The code of tuple_axpy: s · a + t · b, a and b of tuple_type."""
    n = tuple_type.count
    if n == 0:
        return a
    return _from_vector(tuple_type, builder, context, builder.fadd(
        builder.fmul(_splat(builder, s, n), _vector(builder, a, n)),
        builder.fmul(_splat(builder, t, n), _vector(builder, b, n))))



@intrinsic
def tuple_outer_axpy(typingctx, acc, s, b, c):
    """acc + s · (b ⊗ c), with acc full (n1·n2, row-major) or packed upper (n(n+1)/2).

    The layout follows from the lengths (they coincide only for n = 1, where both agree).
    """
    outer_pairs(acc, b, c)  # a TypingError where the lengths fit no layout
    sig = acc(acc, types.float64, b, c)

    def codegen(context, builder, signature, args):
        acc_type, _, b_type, c_type = signature.args
        return outer_axpy(context, builder, acc_type, b_type, c_type, *args)

    return sig, codegen


def outer_pairs(acc_type, b_type, c_type):
    """The (i, j) of each entry of acc: all of b ⊗ c row-major, or its packed upper triangle."""
    n1, n2 = b_type.count, c_type.count
    if acc_type.count == n1 * n2:
        return [(i, j) for i in range(n1) for j in range(n2)]
    if n1 == n2 and acc_type.count == packed_size(n1):
        return [(i, j) for i in range(n1) for j in range(i, n1)]
    raise TypingError(f"tuple_outer_axpy: {acc_type.count} entries fit neither {n1}×{n2} nor packed")


def outer_axpy(context, builder, acc_type, b_type, c_type, acc, s, b, c):
    """The code of tuple_outer_axpy: acc + s · (b ⊗ c)."""
    pairs = outer_pairs(acc_type, b_type, c_type)
    if not pairs:
        return acc
    # (s·b_i)·c_j: n1 products for s·b, then one product per entry instead of two
    scaled = builder.fmul(_splat(builder, s, b_type.count), _vector(builder, b, b_type.count))
    products = builder.fmul(_gather(builder, scaled, [i for i, _ in pairs]),
                            _gather(builder, _vector(builder, c, c_type.count), [j for _, j in pairs]))
    return _from_vector(acc_type, builder, context,
                        builder.fadd(_vector(builder, acc, len(pairs)), products))
