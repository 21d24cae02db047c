"""numba types for dual numbers: the only hand-written low-level code of the compiled path.

    DualType(n)          struct {value: float64, partials: UniTuple(float64, n)}
    DualArrayType(n)     struct {values: float64[:], partials: float64[:, :]}   (rows = elements)
    SeedArrayType(n)     struct {values: float64[:], first: intp, stride: intp}
                         a differentiated input (or a slice of one): element i has partial 1
                         in slot i·stride − first, 0 elsewhere, made in registers on indexing
                         (no n × chunk seed matrix is stored)

A scalar dual lives in registers: its partials are a fixed-length tuple, and the tuple
arithmetic below is emitted element by element at the LLVM level, so no operation on a dual
allocates. An array of duals is two float arrays, and indexing it yields a scalar dual.
Everything else (operators, math/np functions, array operations) is generated in
``overloads.py`` from the rule table.
"""

from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import (intrinsic, lower_cast, make_attribute_wrapper, models,
                                  register_model)

__all__ = ["DualType", "DualArrayType", "make_dual", "make_dual_array", "tuple_scale",
           "tuple_axpy", "load_row", "SeedArrayType", "make_seed_array", "unit_tuple", "NUMBER",
           "HyperDualType", "make_hyper", "make_hyper_sym", "tuple_outer_axpy", "packed_size",
           "HyperSeedArrayType", "make_hyper_seed_array"]

NUMBER = (types.Float, types.Integer, types.Boolean)


class DualType(types.Type):
    """A scalar dual number with n partials."""

    def __init__(self, n):
        self.n = n
        self.partials_type = types.UniTuple(types.float64, n)
        super().__init__(name=f"Dual({n})")

    def unify(self, typingctx, other):
        # `s = 0.0; s += dual` : the float accumulator becomes a dual.
        if isinstance(other, NUMBER):
            return self
        return None


class DualArrayType(types.Type):
    """A 1-D array of duals with n partials each: values (m,) and partials (m, n)."""

    def __init__(self, n):
        self.n = n
        self.values_type = types.Array(types.float64, 1, "A")
        self.partials_type = types.Array(types.float64, 2, "A")
        super().__init__(name=f"DualArray({n})")


class SeedArrayType(types.Type):
    """The input of a compiled transform: values with implicit unit partials."""

    def __init__(self, n):
        self.n = n
        self.values_type = types.Array(types.float64, 1, "A")
        super().__init__(name=f"SeedArray({n})")


@register_model(SeedArrayType)
class SeedArrayModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("values", fe_type.values_type), ("first", types.intp),
                                        ("stride", types.intp)])


make_attribute_wrapper(SeedArrayType, "values", "values")
make_attribute_wrapper(SeedArrayType, "first", "first")
make_attribute_wrapper(SeedArrayType, "stride", "stride")


@register_model(DualType)
class DualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("value", types.float64), ("partials", fe_type.partials_type)])


@register_model(DualArrayType)
class DualArrayModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("values", fe_type.values_type),
                                        ("partials", fe_type.partials_type)])


make_attribute_wrapper(DualType, "value", "value")
make_attribute_wrapper(DualType, "partials", "partials")
make_attribute_wrapper(DualArrayType, "values", "values")
make_attribute_wrapper(DualArrayType, "partials", "partials")


@intrinsic
def make_dual(typingctx, value, partials):
    """Dual(value, partials) from a number and a UniTuple of floats."""
    if not isinstance(partials, types.UniTuple) or not isinstance(partials.dtype, types.Float):
        raise TypingError(f"make_dual needs a tuple of floats as partials, got {partials}")
    dual = DualType(partials.count)
    sig = dual(types.float64, dual.partials_type)

    def codegen(context, builder, signature, args):
        out = cgutils.create_struct_proxy(dual)(context, builder)
        out.value, out.partials = args
        return out._getvalue()

    return sig, codegen


@intrinsic
def make_dual_array(typingctx, values, partials, n):
    """DualArray from values (m,) and partials (m, n); n is a compile-time constant."""
    if not isinstance(n, types.IntegerLiteral):
        raise TypingError("make_dual_array needs the number of partials as a constant")
    array = DualArrayType(n.literal_value)
    sig = array(array.values_type, array.partials_type, n)

    def codegen(context, builder, signature, args):
        out = cgutils.create_struct_proxy(array)(context, builder)
        out.values, out.partials = args[0], args[1]
        context.nrt.incref(builder, array.values_type, args[0])
        context.nrt.incref(builder, array.partials_type, args[1])
        return out._getvalue()

    return sig, codegen


@intrinsic
def make_seed_array(typingctx, values, first, stride, n):
    """SeedArray over values whose element i is seeded in slot i·stride − first; n constant."""
    if not isinstance(n, types.IntegerLiteral):
        raise TypingError("make_seed_array needs the number of partials as a constant")
    array = SeedArrayType(n.literal_value)
    sig = array(array.values_type, types.intp, types.intp, n)

    def codegen(context, builder, signature, args):
        out = cgutils.create_struct_proxy(array)(context, builder)
        out.values, out.first, out.stride = args[0], args[1], args[2]
        context.nrt.incref(builder, array.values_type, args[0])
        return out._getvalue()

    return sig, codegen


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


@lower_cast(types.Float, DualType)
@lower_cast(types.Integer, DualType)
@lower_cast(types.Boolean, DualType)
def _number_to_dual(context, builder, fromty, toty, val):
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.cast(builder, val, fromty, types.float64)
    out.partials = cgutils.get_null_value(context.get_value_type(toty.partials_type))
    return out._getvalue()


@intrinsic
def load_row(typingctx, matrix, row, n):
    """Row `row` of a 2-D float64 array as a UniTuple of n floats, read in place (no view)."""
    if not isinstance(n, types.IntegerLiteral):
        raise TypingError("load_row needs the row length as a constant")
    count = n.literal_value
    tuple_type = types.UniTuple(types.float64, count)
    sig = tuple_type(matrix, row, n)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, value=args[0])
        row_index = context.cast(builder, args[1], signature.args[1], types.intp)
        out = cgutils.get_null_value(context.get_value_type(tuple_type))
        for k in range(count):
            ptr = cgutils.get_item_pointer(context, builder, signature.args[0], array,
                                           [row_index, context.get_constant(types.intp, k)])
            out = builder.insert_value(out, builder.load(ptr), k)
        return out

    return sig, codegen


# ---- hyper-duals ------------------------------------------------------------------------------
def packed_size(n):
    """Entries of the upper triangle (diagonal included) of an n × n symmetric block."""
    return n * (n + 1) // 2


class HyperDualType(types.Type):
    """value + eps1 (n1) + eps2 (n2) + eps12 (n1 × n2, row-major).

    symmetric=True (a diagonal Hessian block, ε2 seeds = ε1 seeds): eps2 is not stored (it
    equals eps1) and eps12 holds the packed upper triangle, n(n+1)/2 entries, so each
    operation does about half the work of the general block.
    """

    def __init__(self, n1, n2, symmetric=False):
        if symmetric and n1 != n2:
            raise ValueError("a symmetric hyper-dual has n1 == n2")
        self.n1, self.n2, self.symmetric = n1, n2, symmetric
        self.eps12_size = packed_size(n1) if symmetric else n1 * n2
        kind = "sym" if symmetric else "full"
        super().__init__(name=f"HyperDual({n1}, {n2}, {kind})")

    def unify(self, typingctx, other):
        if isinstance(other, NUMBER):
            return self
        return None


@register_model(HyperDualType)
class HyperDualModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("value", types.float64), ("eps1", types.UniTuple(types.float64, fe_type.n1))]
        if not fe_type.symmetric:
            members.append(("eps2_stored", types.UniTuple(types.float64, fe_type.n2)))
        members.append(("eps12", types.UniTuple(types.float64, fe_type.eps12_size)))
        super().__init__(dmm, fe_type, members)


make_attribute_wrapper(HyperDualType, "value", "value")
make_attribute_wrapper(HyperDualType, "eps1", "eps1")
make_attribute_wrapper(HyperDualType, "eps2_stored", "eps2_stored")
make_attribute_wrapper(HyperDualType, "eps12", "eps12")


def _make_hyper_codegen(hyper, names):
    def codegen(context, builder, signature, args):
        out = cgutils.create_struct_proxy(hyper)(context, builder)
        for name, arg in zip(names, args):
            setattr(out, name, arg)
        return out._getvalue()
    return codegen


@intrinsic
def make_hyper(typingctx, value, eps1, eps2, eps12):
    """A general hyper-dual from value and UniTuples eps1 (n1), eps2 (n2), eps12 (n1·n2)."""
    hyper = HyperDualType(eps1.count, eps2.count)
    if eps12.count != hyper.eps12_size:
        raise TypingError(f"eps12 needs {hyper.eps12_size} entries, got {eps12.count}")
    sig = hyper(types.float64, eps1, eps2, eps12)
    return sig, _make_hyper_codegen(hyper, ("value", "eps1", "eps2_stored", "eps12"))


@intrinsic
def make_hyper_sym(typingctx, value, eps1, eps12):
    """A symmetric hyper-dual: eps2 = eps1, eps12 the packed upper triangle."""
    hyper = HyperDualType(eps1.count, eps1.count, symmetric=True)
    if eps12.count != hyper.eps12_size:
        raise TypingError(f"packed eps12 needs {hyper.eps12_size} entries, got {eps12.count}")
    sig = hyper(types.float64, eps1, eps12)
    return sig, _make_hyper_codegen(hyper, ("value", "eps1", "eps12"))


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


@lower_cast(types.Float, HyperDualType)
@lower_cast(types.Integer, HyperDualType)
@lower_cast(types.Boolean, HyperDualType)
def _number_to_hyper(context, builder, fromty, toty, val):
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.cast(builder, val, fromty, types.float64)
    out.eps1 = cgutils.get_null_value(context.get_value_type(types.UniTuple(types.float64, toty.n1)))
    if not toty.symmetric:
        out.eps2_stored = cgutils.get_null_value(
            context.get_value_type(types.UniTuple(types.float64, toty.n2)))
    out.eps12 = cgutils.get_null_value(
        context.get_value_type(types.UniTuple(types.float64, toty.eps12_size)))
    return out._getvalue()


class HyperSeedArrayType(types.Type):
    """The input of a compiled Hessian: element i has ε1 seed slot i·stride − first1 and
    ε2 seed slot i·stride − first2 (one slot for a symmetric element type)."""

    def __init__(self, element):
        self.element = element
        self.values_type = types.Array(types.float64, 1, "A")
        super().__init__(name=f"HyperSeedArray({element})")


@register_model(HyperSeedArrayType)
class HyperSeedArrayModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("values", fe_type.values_type), ("first1", types.intp),
                                        ("first2", types.intp), ("stride", types.intp)])


for _field in ("values", "first1", "first2", "stride"):
    make_attribute_wrapper(HyperSeedArrayType, _field, _field)


@intrinsic
def make_hyper_seed_array(typingctx, values, first1, first2, stride, n1, n2):
    """Seed array of hyper-duals (block widths n1, n2); n2 = 0 declares a symmetric
    diagonal block (ε2 seeds = ε1 seeds)."""
    if not (isinstance(n1, types.IntegerLiteral) and isinstance(n2, types.IntegerLiteral)):
        raise TypingError("make_hyper_seed_array needs its block widths as constants")
    symmetric = n2.literal_value == 0
    width2 = n1.literal_value if symmetric else n2.literal_value
    array = HyperSeedArrayType(HyperDualType(n1.literal_value, width2, symmetric))
    sig = array(array.values_type, types.intp, types.intp, types.intp, n1, n2)

    def codegen(context, builder, signature, args):
        out = cgutils.create_struct_proxy(array)(context, builder)
        out.values, out.first1, out.first2, out.stride = args[0], args[1], args[2], args[3]
        context.nrt.incref(builder, array.values_type, args[0])
        return out._getvalue()

    return sig, codegen
