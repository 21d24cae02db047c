"""numba types for dual numbers: the only hand-written low-level code of the compiled path.

    DualType(n)          struct {value: float64, partials: UniTuple(float64, n)}
    DualArrayType(n)     struct {values: float64[:], partials: float64[:, :]}   (rows = elements)

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
           "tuple_axpy", "NUMBER"]

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
