"""Raw addresses and the state a compiled kernel keeps between calls (its tape's buffer
pool): the only code of the compiled path that handles pointers and reference counts.

    address_of(array)            an array's data address, as an integer
    int_pointer, float_pointer   an integer address as a pointer, for numba.carray
    pool_address(slots)          int64 slots living as long as the compiled code (a module-
                                 private LLVM global: zero whenever numba's cache loads it)
    try_lock / unlock            an atomic lock in such a slot
    keep / drop                  a reference to an array's memory held by integer
"""

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic

__all__ = ["address_of", "int_pointer", "float_pointer", "pool_address", "try_lock", "unlock",
           "keep", "drop"]


@intrinsic
def address_of(typingctx, array):
    """The address of an array's first element, as an integer."""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, value=args[0]).data
        return builder.ptrtoint(data, context.get_value_type(types.intp))
    return types.intp(array), codegen


def _pointer_from(dtype):
    @intrinsic
    def pointer(typingctx, address):
        """An integer address as a pointer, for numba.carray."""
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(types.CPointer(dtype)))
        return types.CPointer(dtype)(types.intp), codegen
    return pointer


int_pointer = _pointer_from(types.int64)
float_pointer = _pointer_from(types.float64)


# ---- state kept between calls of a compiled kernel --------------------------------------------------
_I64 = ir.IntType(64)


@intrinsic
def pool_address(typingctx, slots):
    """The address of `slots` int64, zero at load, that live as long as the compiled code:
    a global of its LLVM module (so each copy of the code, and each process that loads it
    from numba's cache, has its own). One per call site."""
    if not isinstance(slots, types.IntegerLiteral):
        raise TypingError("pool_address needs its number of slots as a constant")
    array_type = ir.ArrayType(_I64, slots.literal_value)

    def codegen(context, builder, signature, args):
        pool = ir.GlobalVariable(builder.module, array_type, builder.module.get_unique_name("dualad_pool"))
        pool.linkage = "internal"
        pool.initializer = ir.Constant(array_type, None)
        return builder.ptrtoint(pool, context.get_value_type(types.intp))
    return types.intp(slots), codegen


@intrinsic
def try_lock(typingctx, address):
    """Atomically set the int64 at address from 0 to 1; whether this call did (a lock that
    concurrent and re-entrant calls cannot both take)."""
    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], _I64.as_pointer())
        result = builder.cmpxchg(pointer, _I64(0), _I64(1), "acq_rel", "monotonic")
        return builder.extract_value(result, 1)
    return types.boolean(types.intp), codegen


@intrinsic
def unlock(typingctx, address):
    def codegen(context, builder, signature, args):
        builder.store_atomic(_I64(0), builder.inttoptr(args[0], _I64.as_pointer()), "release", 8)
        return context.get_dummy_value()
    return types.none(types.intp), codegen


@intrinsic
def keep(typingctx, array):
    """Take one more reference to array's memory and return its owner (meminfo) as an
    integer: the memory outlives the array until drop(owner)."""
    def codegen(context, builder, signature, args):
        context.nrt.incref(builder, signature.args[0], args[0])
        meminfo = context.make_array(signature.args[0])(context, builder, value=args[0]).meminfo
        return builder.ptrtoint(meminfo, context.get_value_type(types.intp))
    return types.intp(array), codegen


@intrinsic
def drop(typingctx, owner):
    """Give back a reference taken by keep (nothing for 0)."""
    def codegen(context, builder, signature, args):
        decref = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t]), "NRT_decref")
        with builder.if_then(builder.icmp_signed("!=", args[0], args[0].type(0))):
            builder.call(decref, [builder.inttoptr(args[0], cgutils.voidptr_t)])
        return context.get_dummy_value()
    return types.none(types.intp), codegen
