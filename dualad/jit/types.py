"""numba types for dual numbers: the only hand-written low-level code of the compiled path.

    DualType(n)          struct {value: float64, partials: UniTuple(float64, n)}
    DualArrayType(e)     struct {values: float64[:], components: float64[:, :]}: an array of
                         scalars of type e (Dual, HyperDual or Active); row i holds element
                         i's tuples side by side (an Active's index, scale and tape header)
    DualMatrixType(e)    struct {values: float64[:, :], components: float64[:, :, :]}: the
                         2-D array of duals, entry (i, j)'s tuples in components[i, j]
    DualTensorType(e)    the 3-D array of duals, values (a, b, c), components (a, b, c, w)
    SeedArrayType(n)     struct {values: float64[:], first: intp, stride: intp}
                         a differentiated input (or a slice of one): element i has partial 1
                         in slot i·stride − first, 0 elsewhere, made in registers on indexing
                         (no n × chunk seed matrix is stored)
    HyperDualType(n1, n2, symmetric)   value, eps1, eps2 (not stored when symmetric), eps12
    HyperSeedArrayType(e)  a differentiated input of a compiled Hessian, seeded like SeedArray
    ActiveType           struct {value, index, scale, header}: a scalar on the compiled tape
    ActiveArrayType      struct {values, first, stride, header}: a differentiated input on it
    TracerType           an Active on a sparsity recording (jit/tracer.py): same struct, its
                         scale unused; arrays of tracers are DualArrays of Tracer elements

A scalar dual lives in registers: its partials are a fixed-length tuple, and the tuple
arithmetic below is emitted element by element at the LLVM level, so no operation on a dual
allocates (intrinsics.py). An array of duals is two float arrays, and indexing it yields a scalar dual;
`load_element`/`store_element` read and write one element in place for any element type,
so every array operation is written once for duals and hyper-duals. Raw pointers and the
kernels' buffer pool are runtime.py. Everything else (operators, math/np functions, array
operations) is generated in ``overloads.py`` from the rule table.
"""

from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import (intrinsic, lower_builtin, lower_cast, make_attribute_wrapper,
                                  models, register_model)
from numba.core.imputils import RefType, impl_ret_new_ref, iternext_impl

from .cache import named
from .intrinsics import packed_size

__all__ = ["DualType", "DualArrayType", "make_dual", "make_dual_array", "DualMatrixType", "DualTensorType",
           "make_dual_matrix", "load_entry", "store_entry", "make_dual_tensor", "load_cell", "store_cell",
           "SeedArrayType",
           "make_seed_array", "NUMBER", "HyperDualType", "make_hyper", "make_hyper_sym",
           "HyperSeedArrayType", "make_hyper_seed_array", "ARRAYS", "compiled_only", "READ_ONLY_INPUT", "SEEDS", "writable",
           "tuple_fields", "element_of", "element_width", "load_element", "store_element",
           "zero_element", "ACTIVE", "ActiveType", "make_active", "ACTIVE_ARRAY",
           "ActiveArrayType", "make_active_array", "make_dual_active_array", "TracerType", "TRACER",
           "make_tracer"]

NUMBER = (types.Float, types.Integer, types.Boolean)

# What assigning into a seed (SeedArray, HyperSeedArray, ActiveArray) says at typing time;
# kernels.seeded_input recognises it and gives f a materialised copy instead.
READ_ONLY_INPUT = ("the differentiated input is read-only inside a compiled transform; copy it "
                   "first (y = np.zeros_like(x); y[i] = x[i] ...)")


def compiled_only(module, name):
    """A function that means something inside compiled code only (numba resolves it through
    its @overload); called from Python it says so."""
    def fn(*args):
        raise TypeError(f"dualad.jit.{module}.{name} runs inside compiled kernels only")
    fn.__name__ = name
    return fn


def register_struct(type_class, members):
    """Give type_class a StructModel whose members are members(instance), a list of
    (name, numba type), and a read-only attribute for each member."""
    class Model(models.StructModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, members(fe_type))

    Model.__name__ = f"{type_class.__name__}Model"
    register_model(type_class)(Model)
    return Model


def wrap_attributes(type_class, names):
    for name in names:
        make_attribute_wrapper(type_class, name, name)


def cast_from_numbers(type_class, constants=()):
    """Numbers convert to type_class (float accumulators unify with it): the value, every
    other member zero except `constants`, (member, numba type, value) triples."""
    def cast(context, builder, fromty, toty, val):
        zero = cgutils.get_null_value(context.get_value_type(toty))
        out = cgutils.create_struct_proxy(toty)(context, builder, value=zero)
        value_type = context.data_model_manager[toty].get_member_fe_type("value")
        out.value = context.cast(builder, val, fromty, value_type)  # a float or a Dual
        for name, member_type, constant in constants:
            setattr(out, name, context.get_constant(member_type, constant))
        return out._getvalue()

    for number in NUMBER:
        lower_cast(number, type_class)(cast)


def struct_codegen(struct_type, names):
    """Codegen of an intrinsic that builds struct_type from its arguments, in the order of
    `names`; array members get a reference (the struct holds them)."""
    def codegen(context, builder, signature, args):
        out = cgutils.create_struct_proxy(struct_type)(context, builder)
        for name, arg, arg_type in zip(names, args, signature.args):
            setattr(out, name, arg)
            if isinstance(arg_type, types.Array):
                context.nrt.incref(builder, arg_type, arg)
        return out._getvalue()
    return codegen


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


class DualArrayType(types.IterableType):
    """A 1-D array of duals of one element type (Dual or HyperDual): values (m,) and
    components (m, w), the element's tuples side by side (see `tuple_fields`)."""

    mutable = True  # numba lowers x op= y on mutable types with the in-place operator
    def __init__(self, element):
        self.element = element
        self.width = element_width(element)
        self.values_type = types.Array(types.float64, 1, "A")
        self.components_type = types.Array(types.float64, 2, "A")
        super().__init__(name=f"DualArray({element})")

    @property
    def iterator_type(self):
        return DualArrayIteratorType(self)


class DualMatrixType(types.Type):
    """A 2-D array of duals of one element type: values (m, k) and components (m, k, w).

    A type of its own, not a DualArray with ndim: every 1-D operation (written over ARRAYS)
    then refuses a matrix at typing time instead of indexing it as a vector. Row i is the
    DualArray view (values[i], components[i])."""

    mutable = True

    def __init__(self, element):
        self.element = element
        self.width = element_width(element)
        self.values_type = types.Array(types.float64, 2, "A")
        self.components_type = types.Array(types.float64, 3, "A")
        self.row_type = DualArrayType(element)
        super().__init__(name=f"DualMatrix({element})")


class DualTensorType(types.Type):
    """A 3-D array of duals: values (a, b, c) and components (a, b, c, w); its own type for
    the reason DualMatrixType is one. The slice T[p] is the DualMatrix view (values[p],
    components[p])."""

    mutable = True

    def __init__(self, element):
        self.element = element
        self.width = element_width(element)
        self.values_type = types.Array(types.float64, 3, "A")
        self.components_type = types.Array(types.float64, 4, "A")
        super().__init__(name=f"DualTensor({element})")


class SeedArrayType(types.IterableType):
    """The input of a compiled transform: values with implicit unit partials."""

    def __init__(self, n):
        self.n = n
        self.element = DualType(n)
        self.values_type = types.Array(types.float64, 1, "A")
        super().__init__(name=f"SeedArray({n})")

    @property
    def iterator_type(self):
        return DualArrayIteratorType(self)


register_struct(SeedArrayType, lambda t: [("values", t.values_type), ("first", types.intp),
                                          ("stride", types.intp)])
wrap_attributes(SeedArrayType, ("values", "first", "stride"))


register_struct(DualType, lambda t: [("value", types.float64), ("partials", t.partials_type)])
register_struct(DualArrayType, lambda t: [("values", t.values_type), ("components", t.components_type)])
wrap_attributes(DualType, ("value", "partials"))
wrap_attributes(DualArrayType, ("values", "components"))
register_struct(DualMatrixType, lambda t: [("values", t.values_type), ("components", t.components_type)])
wrap_attributes(DualMatrixType, ("values", "components"))
register_struct(DualTensorType, lambda t: [("values", t.values_type), ("components", t.components_type)])
wrap_attributes(DualTensorType, ("values", "components"))


@intrinsic
def make_dual(typingctx, value, partials):
    """Dual(value, partials) from a number and a UniTuple of floats."""
    if not isinstance(partials, types.UniTuple) or not isinstance(partials.dtype, types.Float):
        raise TypingError(f"make_dual needs a tuple of floats as partials, got {partials}")
    dual = DualType(partials.count)
    sig = dual(types.float64, dual.partials_type)

    return sig, struct_codegen(dual, ("value", "partials"))


@intrinsic
def make_dual_array(typingctx, values, components, like):
    """DualArray from values (m,) and components (m, w), of the element type of `like` (a
    dual scalar or array: only its type is used)."""
    array = DualArrayType(element_of(like))
    sig = array(array.values_type, array.components_type, like)

    return sig, struct_codegen(array, ("values", "components"))


@intrinsic
def make_dual_matrix(typingctx, values, components, like):
    """DualMatrix from values (m, k) and components (m, k, w), of the element type of `like`."""
    matrix = DualMatrixType(element_of(like))
    sig = matrix(matrix.values_type, matrix.components_type, like)

    return sig, struct_codegen(matrix, ("values", "components"))


@intrinsic
def make_dual_tensor(typingctx, values, components, like):
    """DualTensor from values (a, b, c) and components (a, b, c, w), of the element type of `like`."""
    tensor = DualTensorType(element_of(like))
    sig = tensor(tensor.values_type, tensor.components_type, like)

    return sig, struct_codegen(tensor, ("values", "components"))


@intrinsic
def make_seed_array(typingctx, values, first, stride, n):
    """SeedArray over values whose element i is seeded in slot i·stride − first; n constant."""
    if not isinstance(n, types.IntegerLiteral):
        raise TypingError("make_seed_array needs the number of partials as a constant")
    array = SeedArrayType(n.literal_value)
    sig = array(array.values_type, types.intp, types.intp, n)

    return sig, struct_codegen(array, ("values", "first", "stride"))


cast_from_numbers(DualType)


# ---- hyper-duals ------------------------------------------------------------------------------
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


register_struct(HyperDualType, lambda t: [("value", types.float64)] + [
    (name, types.UniTuple(types.float64, length)) for name, length in tuple_fields(t)])
wrap_attributes(HyperDualType, ("value", "eps1", "eps2_stored", "eps12"))


@intrinsic
def make_hyper(typingctx, value, eps1, eps2, eps12):
    """A general hyper-dual from value and UniTuples eps1 (n1), eps2 (n2), eps12 (n1·n2)."""
    hyper = HyperDualType(eps1.count, eps2.count)
    if eps12.count != hyper.eps12_size:
        raise TypingError(f"eps12 needs {hyper.eps12_size} entries, got {eps12.count}")
    sig = hyper(types.float64, eps1, eps2, eps12)
    return sig, struct_codegen(hyper, ("value", "eps1", "eps2_stored", "eps12"))


@intrinsic
def make_hyper_sym(typingctx, value, eps1, eps12):
    """A symmetric hyper-dual: eps2 = eps1, eps12 the packed upper triangle."""
    hyper = HyperDualType(eps1.count, eps1.count, symmetric=True)
    if eps12.count != hyper.eps12_size:
        raise TypingError(f"packed eps12 needs {hyper.eps12_size} entries, got {eps12.count}")
    sig = hyper(types.float64, eps1, eps12)
    return sig, struct_codegen(hyper, ("value", "eps1", "eps12"))


cast_from_numbers(HyperDualType)


class HyperSeedArrayType(types.IterableType):
    """The input of a compiled Hessian: element i has ε1 seed slot i·stride − first1 and
    ε2 seed slot i·stride − first2 (one slot for a symmetric element type)."""

    def __init__(self, element):
        self.element = element
        self.values_type = types.Array(types.float64, 1, "A")
        super().__init__(name=f"HyperSeedArray({element})")

    @property
    def iterator_type(self):
        return DualArrayIteratorType(self)


register_struct(HyperSeedArrayType, lambda t: [("values", t.values_type), ("first1", types.intp),
                                               ("first2", types.intp), ("stride", types.intp)])
wrap_attributes(HyperSeedArrayType, ("values", "first1", "first2", "stride"))


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

    return sig, struct_codegen(array, ("values", "first1", "first2", "stride"))


# ---- the element of an array of duals, read and written in place ---------------------------------
_FORWARD_ARRAYS = (DualArrayType, SeedArrayType, HyperSeedArrayType)  # ActiveArrayType: below


def element_width(element):
    """Columns one element takes in a DualArray's components matrix."""
    if isinstance(element, ActiveType):
        return _active_width(element)
    return sum(length for _, length in tuple_fields(element))


def tuple_fields(element):
    """(member, length) of each tuple of a scalar dual type, in storage order."""
    if isinstance(element, DualType):
        return [("partials", element.n)]
    fields = [("eps1", element.n1)]
    if not element.symmetric:
        fields.append(("eps2_stored", element.n2))
    return fields + [("eps12", element.eps12_size)]


def element_of(t):
    """The scalar dual type of a dual scalar or array type, of the first dual in a tuple or
    list of them, or of a reference to a scalar dual type."""
    if isinstance(t, _FORWARD_ARRAYS + (ActiveArrayType, DualMatrixType, DualTensorType)):
        return t.element
    if isinstance(t, (DualType, HyperDualType, ActiveType)):
        return t
    if isinstance(t, types.List):
        return element_of(t.dtype)
    if isinstance(t, types.TypeRef):  # the scalar dual type itself, as a value (promote.py)
        return element_of(t.instance_type)
    if isinstance(t, types.BaseTuple):
        for member in t:
            if has_dual(member):  # (nested: the rows of np.array([[a, b], [c, d]]))
                return element_of(member)
    raise TypingError(f"{t} is not a dual number or an array of them")


def has_dual(t):
    """Whether t is a dual (scalar or array) or a tuple or list holding one, at any depth."""
    if isinstance(t, _FORWARD_ARRAYS + (ActiveArrayType, DualMatrixType, DualTensorType, DualType,
                                        HyperDualType, ActiveType)):
        return True
    if isinstance(t, types.BaseTuple):
        return any(has_dual(member) for member in t)
    return isinstance(t, types.List) and has_dual(t.dtype)


def _component_pointers(context, builder, array_type, array_value, indices):
    """(pointer to values[indices], [pointer to components[indices + (c,)] for each column c])."""
    array = cgutils.create_struct_proxy(array_type)(context, builder, value=array_value)
    values = context.make_array(array_type.values_type)(context, builder, value=array.values)
    components = context.make_array(array_type.components_type)(context, builder, value=array.components)
    value_ptr = cgutils.get_item_pointer(context, builder, array_type.values_type, values, indices)
    column_ptrs = [cgutils.get_item_pointer(context, builder, array_type.components_type, components,
                                            list(indices) + [context.get_constant(types.intp, c)])
                   for c in range(array_type.width)]
    return value_ptr, column_ptrs


def _load_codegen(array, n_indices):
    """Codegen reading the element of `array` at args[1:1 + n_indices] as a scalar dual."""
    def codegen(context, builder, signature, args):
        value_ptr, column_ptrs = _component_pointers(context, builder, array, args[0],
                                                     args[1:1 + n_indices])
        out = cgutils.create_struct_proxy(array.element)(context, builder)
        if isinstance(array.element, ActiveType):
            _load_active(context, builder, out, builder.load(value_ptr), column_ptrs, array.element)
            return out._getvalue()
        out.value = builder.load(value_ptr)
        column = 0
        for name, length in tuple_fields(array.element):
            tup = cgutils.get_null_value(context.get_value_type(types.UniTuple(types.float64, length)))
            for k in range(length):
                tup = builder.insert_value(tup, builder.load(column_ptrs[column]), k)
                column += 1
            setattr(out, name, tup)
        return out._getvalue()

    return codegen


def _store_codegen(array, n_indices):
    """Codegen writing the scalar dual args[1 + n_indices] into `array` at args[1:1 + n_indices]."""
    def codegen(context, builder, signature, args):
        value_ptr, column_ptrs = _component_pointers(context, builder, array, args[0],
                                                     args[1:1 + n_indices])
        element = cgutils.create_struct_proxy(array.element)(context, builder, value=args[1 + n_indices])
        if isinstance(array.element, ActiveType):
            builder.store(_store_active(context, builder, element, column_ptrs, array.element), value_ptr)
            return context.get_dummy_value()
        builder.store(element.value, value_ptr)
        column = 0
        for name, length in tuple_fields(array.element):
            tup = getattr(element, name)
            for k in range(length):
                builder.store(builder.extract_value(tup, k), column_ptrs[column])
                column += 1
        return context.get_dummy_value()

    return codegen


@intrinsic
def load_element(typingctx, array, index):
    """array[index] as a scalar dual, read in place (index already wrapped)."""
    if not isinstance(array, DualArrayType):
        raise TypingError(f"load_element reads a DualArray, not {array}")
    return array.element(array, types.intp), _load_codegen(array, 1)


@intrinsic
def store_element(typingctx, array, index, item):
    """array[index] = item for a scalar dual of the array's element type."""
    if not isinstance(array, DualArrayType) or item != array.element:
        raise TypingError(f"cannot store {item} in {array}")
    return types.void(array, types.intp, item), _store_codegen(array, 1)


@intrinsic
def load_entry(typingctx, matrix, i, j):
    """matrix[i, j] as a scalar dual, read in place (indices already wrapped)."""
    if not isinstance(matrix, DualMatrixType):
        raise TypingError(f"load_entry reads a DualMatrix, not {matrix}")
    return matrix.element(matrix, types.intp, types.intp), _load_codegen(matrix, 2)


@intrinsic
def store_entry(typingctx, matrix, i, j, item):
    """matrix[i, j] = item for a scalar dual of the matrix's element type."""
    if not isinstance(matrix, DualMatrixType) or item != matrix.element:
        raise TypingError(f"cannot store {item} in {matrix}")
    return types.void(matrix, types.intp, types.intp, item), _store_codegen(matrix, 2)


@intrinsic
def load_cell(typingctx, tensor, i, j, k):
    """tensor[i, j, k] as a scalar dual, read in place (indices already wrapped)."""
    if not isinstance(tensor, DualTensorType):
        raise TypingError(f"load_cell reads a DualTensor, not {tensor}")
    return tensor.element(tensor, types.intp, types.intp, types.intp), _load_codegen(tensor, 3)


@intrinsic
def store_cell(typingctx, tensor, i, j, k, item):
    """tensor[i, j, k] = item for a scalar dual of the tensor's element type."""
    if not isinstance(tensor, DualTensorType) or item != tensor.element:
        raise TypingError(f"cannot store {item} in {tensor}")
    return types.void(tensor, types.intp, types.intp, types.intp, item), _store_codegen(tensor, 3)


@intrinsic
def zero_element(typingctx, like):
    """The dual 0 (value and every component 0) of the element type of `like`."""
    element = element_of(like)
    sig = element(like)

    def codegen(context, builder, signature, args):
        zero = cgutils.get_null_value(context.get_value_type(element))
        if isinstance(element, ActiveType):  # a constant: no node
            zero = builder.insert_value(zero, context.get_constant(types.intp, -1), _ACTIVE_INDEX)
        return zero

    return sig, codegen


# ---- iteration: `for xi in x` yields x[0], x[1], ... -------------------------------------------
class DualArrayIteratorType(types.SimpleIteratorType):
    def __init__(self, array_type):
        self.array_type = array_type
        super().__init__(f"iter({array_type})", array_type.element)


@register_model(DualArrayIteratorType)
class DualArrayIteratorModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("index", types.EphemeralPointer(types.intp)),
                                        ("array", fe_type.array_type)])


@lower_builtin("getiter", DualArrayType)
@lower_builtin("getiter", SeedArrayType)
@lower_builtin("getiter", HyperSeedArrayType)
def _getiter(context, builder, sig, args):
    iterator = context.make_helper(builder, sig.return_type)
    iterator.index = cgutils.alloca_once_value(builder, context.get_constant(types.intp, 0))
    iterator.array = args[0]
    context.nrt.incref(builder, sig.args[0], args[0])
    return impl_ret_new_ref(context, builder, sig.return_type, iterator._getvalue())


# compiled into the kernels that iterate, with names of this process's (cache.named)
_length = named(lambda a: len(a.values))
_item = named(lambda a, i: a[i])


@lower_builtin("iternext", DualArrayIteratorType)
@iternext_impl(RefType.BORROWED)
def _iternext(context, builder, sig, args, result):
    iterator_type = sig.args[0]
    array_type = iterator_type.array_type
    iterator = context.make_helper(builder, iterator_type, value=args[0])
    index = builder.load(iterator.index)
    length = context.compile_internal(builder, _length,
                                      types.intp(array_type), [iterator.array])
    is_valid = builder.icmp_signed("<", index, length)
    result.set_valid(is_valid)
    with builder.if_then(is_valid):
        # getitem of the array type (overloads.py) builds the element, seeded or stored
        item = context.compile_internal(builder, _item,
                                        iterator_type.yield_type(array_type, types.intp),
                                        [iterator.array, index])
        result.yield_(item)
        builder.store(builder.add(index, context.get_constant(types.intp, 1)), iterator.index)


# ---- reverse mode: values on the compiled tape ------------------------------------------------------
# The tape is a header of three int64 (size, capacity, address of the nodes; active.py) that
# the kernel owns for the whole call of f; a traced scalar carries the header's address as a
# plain integer, so recording an operation touches no reference counts. A constant (index -1)
# may carry any scale and header: nothing reads them.
class ActiveType(types.Type):
    """A scalar on the compiled tape: value, node (-1: a constant), scale and the tape.

    It stands for value + scale · (perturbation of its node): an operation with a single
    active operand only rescales, so just two active operands make a node. `number` is the
    type of value and scale: float64 (the reverse tape), or Dual(n) for forward-over-reverse
    (dual_tape.py), where the node weights are Duals too."""

    def __init__(self, number=types.float64):
        self.number = number
        self.width = number.n if isinstance(number, DualType) else 0  # tangents carried
        super().__init__(name="Active" if self.width == 0 else f"Active({number})")

    def unify(self, typingctx, other):
        if isinstance(other, NUMBER):  # `s = 0.0; s += active`
            return self
        return None


ACTIVE = ActiveType()


register_struct(ActiveType, lambda t: [("value", t.number), ("index", types.intp),
                                       ("scale", t.number), ("header", types.intp)])
wrap_attributes(ActiveType, ("value", "index", "scale", "header"))


@intrinsic
def make_active(typingctx, value, index, scale, header):
    """An active whose value and scale have value's type (a float: the reverse tape; a Dual:
    forward-over-reverse). A float scale given to a Dual active becomes a Dual whose tangents
    are all -0.0: the mark of a scale that multiplies as a float (active.float_like)."""
    number = value if isinstance(value, DualType) else types.float64
    active = ActiveType(number)
    if not isinstance(number, DualType) or isinstance(scale, DualType):
        sig = active(number, types.intp, number, types.intp)
        return sig, struct_codegen(active, ("value", "index", "scale", "header"))
    sig = active(number, types.intp, types.float64, types.intp)
    build = struct_codegen(active, ("value", "index", "scale", "header"))

    def codegen(context, builder, signature, args):
        dual = cgutils.create_struct_proxy(number)(context, builder)
        dual.value = args[2]
        dual.partials = context.get_constant_generic(builder, number.partials_type, (-0.0,) * number.n)
        return build(context, builder, active(number, types.intp, number, types.intp),
                     (args[0], args[1], dual._getvalue(), args[3]))

    return sig, codegen


cast_from_numbers(ActiveType, [("index", types.intp, -1)])  # a constant: no node


class ActiveArrayType(types.IterableType):
    """A differentiated input on the tape: element i is node first + i·stride, its value
    values[i] (the reverse tape) or, forward-over-reverse, the Dual source[i] (a SeedArray
    or a DualArray of Duals: the tangents the recording carries)."""

    def __init__(self, source=None):
        self.source = source
        self.element = ACTIVE if source is None else ActiveType(source.element)
        self.values_type = types.Array(types.float64, 1, "A")
        super().__init__(name="ActiveArray" if source is None else f"ActiveArray({source})")

    @property
    def iterator_type(self):
        return DualArrayIteratorType(self)


ACTIVE_ARRAY = ActiveArrayType()


register_struct(ActiveArrayType, lambda t: [("values", t.values_type)] + (
    [] if t.source is None else [("source", t.source)]) + [
    ("first", types.intp), ("stride", types.intp), ("header", types.intp)])
wrap_attributes(ActiveArrayType, ("values", "source", "first", "stride", "header"))


@intrinsic
def make_active_array(typingctx, values, first, stride, header):
    sig = ACTIVE_ARRAY(ACTIVE_ARRAY.values_type, types.intp, types.intp, types.intp)
    return sig, struct_codegen(ACTIVE_ARRAY, ("values", "first", "stride", "header"))


@intrinsic
def make_dual_active_array(typingctx, source, first, stride, header):
    """The input of a forward-over-reverse recording: element i is the active on node
    first + i·stride whose value is the Dual source[i] (values shared with source)."""
    if not isinstance(source, (SeedArrayType, DualArrayType)) or not isinstance(source.element, DualType):
        raise TypingError(f"make_dual_active_array takes an array of Duals, not {source}")
    array = ActiveArrayType(source)
    sig = array(source, types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        out = cgutils.create_struct_proxy(array)(context, builder)
        source_struct = cgutils.create_struct_proxy(source)(context, builder, value=args[0])
        out.values = source_struct.values
        context.nrt.incref(builder, array.values_type, out.values)
        out.source = args[0]
        context.nrt.incref(builder, source, args[0])
        out.first, out.stride, out.header = args[1], args[2], args[3]
        return out._getvalue()

    return sig, codegen


lower_builtin("getiter", ActiveArrayType)(_getiter)
# Every compiled array of duals; arrays of actives take the DualArray operations too.
ARRAYS = _FORWARD_ARRAYS + (ActiveArrayType,)
# The differentiated input as f receives it: lazy and read-only (no stored components).
SEEDS = (SeedArrayType, HyperSeedArrayType, ActiveArrayType)


def writable(a):
    """A TypingError (READ_ONLY_INPUT) when a is a differentiated input's seed, for overloads
    that write into a or return a view of it (reshape, atleast_2d). kernels.seeded_input
    then gives f its own materialised copy, so that writes reach x through every view, as
    NumPy's do (a view built on a copy of the seed would silently drop them)."""
    if isinstance(a, SEEDS):
        raise TypingError(READ_ONLY_INPUT)

# An active stored in a DualArray: columns index + 1, scale, header, as floats (exact below
# 2^53, which holds node counts and user-space addresses), so that a zero-filled buffer
# (np.zeros_like) holds constants: index -1. A Dual-valued active (width w) has the value's
# w partials first and the scale's w partials after its scale.
_ACTIVE_COLUMNS = ("index", "scale", "header")
_ACTIVE_INDEX = 1  # the position of `index` in the Active struct


def _active_width(element):
    return len(_ACTIVE_COLUMNS) + 2 * element.width


def _load_active(context, builder, out, value, column_ptrs, element):
    intp = context.get_value_type(types.intp)
    one = context.get_constant(types.intp, 1)
    w = element.width
    out.value = _dual_from(context, builder, element.number, value, column_ptrs[:w]) if w else value
    out.index = builder.sub(builder.fptosi(builder.load(column_ptrs[w]), intp), one)
    scale = builder.load(column_ptrs[w + 1])
    out.scale = _dual_from(context, builder, element.number, scale, column_ptrs[w + 2:2 * w + 2]) if w else scale
    out.header = builder.fptosi(builder.load(column_ptrs[2 * w + 2]), intp)


def _dual_from(context, builder, dual_type, value, partial_ptrs):
    """A Dual of dual_type from a float value and pointers to its partials."""
    dual = cgutils.create_struct_proxy(dual_type)(context, builder)
    dual.value = value
    tup = cgutils.get_null_value(context.get_value_type(dual_type.partials_type))
    for k, ptr in enumerate(partial_ptrs):
        tup = builder.insert_value(tup, builder.load(ptr), k)
    dual.partials = tup
    return dual._getvalue()


def _store_partials(context, builder, dual_type, dual_value, partial_ptrs):
    """Store a Dual's partials; its value (a float)."""
    dual = cgutils.create_struct_proxy(dual_type)(context, builder, value=dual_value)
    for k, ptr in enumerate(partial_ptrs):
        builder.store(builder.extract_value(dual.partials, k), ptr)
    return dual.value


def _store_active(context, builder, element, column_ptrs, element_type):
    """Store an active's columns; its value (a float, for the values array)."""
    double = context.get_value_type(types.float64)
    one = context.get_constant(types.intp, 1)
    w = element_type.width
    value, scale = element.value, element.scale
    if w:
        value = _store_partials(context, builder, element_type.number, value, column_ptrs[:w])
        scale = _store_partials(context, builder, element_type.number, scale, column_ptrs[w + 2:2 * w + 2])
    builder.store(builder.sitofp(builder.add(element.index, one), double), column_ptrs[w])
    builder.store(scale, column_ptrs[w + 1])
    builder.store(builder.sitofp(element.header, double), column_ptrs[2 * w + 2])
    return value


# ---- sparsity tracers: actives whose recording keeps every dependence (jit/tracer.py) ---------------
# A subclass of ActiveType with the same struct, so that arrays of tracers, their element
# load/store, zero elements and the scalar protocol are the actives' own; the rule overloads
# test for TracerType first and record structure instead of partials.
class TracerType(ActiveType):
    """A scalar on a sparsity recording: value, node (-1: no dependence on the inputs), the
    recording's header (the scale member is unused, 0)."""

    def __init__(self):
        self.number, self.width = types.float64, 0  # as the reverse tape's actives
        types.Type.__init__(self, name="Tracer")


TRACER = TracerType()
register_struct(TracerType, lambda t: [("value", types.float64), ("index", types.intp),
                                       ("scale", types.float64), ("header", types.intp)])
wrap_attributes(TracerType, ("value", "index", "scale", "header"))
cast_from_numbers(TracerType, [("index", types.intp, -1)])


@intrinsic
def make_tracer(typingctx, value, index, header):
    sig = TRACER(types.float64, types.intp, types.intp)
    return sig, struct_codegen(TRACER, ("value", "index", "header"))
