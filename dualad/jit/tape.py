"""Compiled reverse mode: a tape inside numba, written to by the user's @njit code.

An active scalar is value + scale · (perturbation of one node). An operation with one
active operand only updates value and scale (scale *= the rule's partial); an operation on
two active operands appends a node: both operand nodes and their partials times their
scales (the rule table's first partials, compiled). Nodes 0..n-1 are the inputs. The sweep
walks the nodes back once:

    adjoint[operand] += partial · adjoint[node]            cost O(nodes), memory O(nodes)

The tape is one flat array of nodes (both operand ids and both weights, 32 bytes a node:
what the sweep reads, active.py) and a header of three int64: size, capacity and the nodes'
address. Actives carry the header's address, so recording touches no reference counts. The
kernel keeps the nodes, the sweep's adjoints and the header between calls in a pool private
to its compiled code, so that a large tape does not pay the OS's page faults anew each call.
When f records more nodes than the capacity, the overflowing pushes only count, and the
kernel runs f once more with exactly the room it needs.

    value_and_grad(f)(x, *args)   x float, (n,) or a tuple, f scalar  -> (f, ∇f)
    grad(f)(x, *args)                                          -> ∇f, shaped like x
    jacrev(f)(x, *args)           f scalar or (m,)             -> J, f.shape + x.shape
    vjp(f)(x, cotangent, *args)                                -> (f, cotangent · J)

Covers scalar code (loops over x[i], branches, while, the rule table through math.*, np.*
and operators, float accumulators, nested @njit calls) and array code: an array of actives
is a DualArray of Active elements (types.py), so np.zeros_like(x) buffers, y[i] = ...,
np.sin(x), W @ x, slices, np.sum and the other array operations of overloads.py record
element by element, and f may return a 1-D array (jacrev).
"""

import operator

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from . import overloads
from .matrix import flat
from .tensor import tensor_flat
from .active import HEADER_SLOTS, NODE_SLOTS, node_slots
from .cache import COMPILED_CALLERS_ONLY, named, overload, register_jitable
from .protocol import checked_index
from .kernels import compile_kernel, gradient_of, seeded_input
from .tuples import flat_input, shaped_like_input
from .runtime import (address_of, drop, float_pointer, int_pointer, keep, pool_address,
                      try_lock, unlock)
from .types import (ActiveArrayType, ActiveType, DualMatrixType, DualTensorType,
                    compiled_only, make_active, make_active_array, make_dual_active_array, writable)

__all__ = ["value_and_grad", "grad", "jacrev", "vjp"]

_INITIAL_NODES_PER_INPUT = 16


# ---- the differentiated input (len, .shape, .size: overloads.py, as for every array kind) ---------
@overload(operator.getitem)
def _getitem(a, index):
    if not isinstance(a, ActiveArrayType):
        return None
    if isinstance(index, types.Integer) and a.source is None:
        def element(a, index):
            i = checked_index(index, len(a.values))
            return make_active(a.values[i], a.first + i * a.stride, 1.0, a.header)
        return element
    if isinstance(index, types.Integer):  # forward-over-reverse: the value is a Dual
        def dual_element(a, index):
            i = checked_index(index, len(a.values))
            return make_active(a.source[i], a.first + i * a.stride, 1.0, a.header)
        return dual_element
    if isinstance(index, types.SliceType) and a.source is None:
        def part(a, index):
            start, stop, step = index.indices(len(a.values))
            return make_active_array(a.values[index], a.first + start * a.stride, a.stride * step, a.header)
        return part
    if isinstance(index, types.SliceType):
        def dual_part(a, index):
            start, stop, step = index.indices(len(a.values))
            return make_dual_active_array(a.source[index], a.first + start * a.stride,
                                          a.stride * step, a.header)
        return dual_part
    raise TypingError(f"the input of a compiled reverse-mode kernel takes an integer or a slice "
                      f"as index, not {index}")


@overload(operator.setitem)
def _setitem(a, index, item):
    writable(a)
    return None


# ---- kernels ------------------------------------------------------------------------------------------------
seed = compiled_only("tape", "seed")        # x as actives on nodes 0..n-1 of the tape at `header`
read_out = compiled_only("tape", "read_out")  # (value, node) of f's output
output_nodes = compiled_only("tape", "output_nodes")  # (nodes, scales) of each entry of f's output
shaped_jacobian = compiled_only("tape", "shaped_jacobian")  # J (m, n) shaped for f's output and x
output_value = compiled_only("tape", "output_value")  # f's output without its derivative
as_vector = compiled_only("tape", "as_vector")  # a cotangent as a 1-D array


@overload(seed)
def _seed(x, header):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, header: make_active(float(x), 0, 1.0, header)
    if isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64:
        return lambda x, header: make_active_array(x, 0, 1, header)
    raise TypingError(f"compiled reverse mode differentiates a float, a 1-D float64 array or a "
                      f"tuple of them, not {x}; the Python path (jit=False) takes any shape")


@overload(read_out)
def _read_out(out):
    """(value, node, scale) of f's output."""
    if isinstance(out, ActiveType):
        return lambda out: (out.value, out.index, out.scale)
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out: (float(out), -1, 0.0)
    raise TypingError(f"a compiled reverse-mode gradient needs f to return a float, not {out}; "
                      "use jacrev (or jacobian) for 1-D array outputs, or jit=False")


@overload(output_nodes)
def _output_nodes(out):
    """Node and scale of each entry of f's output, a scalar or a 1-D array (-1: a constant)."""
    if isinstance(out, ActiveType):
        return lambda out: (np.array([out.index]), np.array([out.scale]))
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out: (np.array([-1]), np.array([0.0]))
    if isinstance(out, overloads.ARRAYS) and isinstance(out.element, ActiveType) or (
            isinstance(out, types.List) and isinstance(out.dtype, ActiveType)):  # a list as a vector
        def entries(out):
            m = len(out)
            nodes, scales = np.empty(m, np.int64), np.empty(m)
            for k in range(m):
                entry = out[k]
                nodes[k], scales[k] = entry.index, entry.scale
            return nodes, scales
        return entries
    if isinstance(out, DualMatrixType):
        return lambda out: output_nodes(flat(out))  # C order, as J's rows
    if isinstance(out, DualTensorType):
        return lambda out: output_nodes(tensor_flat(out))
    if isinstance(out, types.Array) and out.ndim in (1, 2, 3):
        return lambda out: (np.full(out.size, -1), np.zeros(out.size))
    raise TypingError(f"compiled reverse mode differentiates functions that return a float, a "
                      f"1-D, 2-D or 3-D array or a list of floats, not {out}; jit=False runs any "
                      "output on the Python path")


@overload(output_value)
def _output_value(out):
    if isinstance(out, ActiveType):
        return lambda out: out.value
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out: float(out)
    if isinstance(out, overloads.ARRAYS + (DualMatrixType, DualTensorType)):
        return lambda out: out.values.copy()
    if isinstance(out, types.List) and isinstance(out.dtype, ActiveType):
        def values(out):
            found = np.empty(len(out))
            for k in range(len(out)):
                found[k] = out[k].value
            return found
        return values
    return lambda out: out.astype(np.float64)


@overload(as_vector)
def _as_vector(c):
    if isinstance(c, (types.Float, types.Integer)):
        return lambda c: np.array([float(c)])
    if isinstance(c, types.Array) and c.ndim == 1:
        return lambda c: c
    if isinstance(c, types.Array) and c.ndim == 0:  # a scalar output's cotangent as NumPy has it
        return lambda c: np.array([float(c[()])])
    if isinstance(c, types.Array) and c.ndim in (2, 3):  # a matrix output's, in C order as its nodes
        return lambda c: np.ascontiguousarray(c).ravel()
    raise TypingError(f"vjp: the cotangent is a float or an array shaped like f's output, not {c}")


@overload(shaped_jacobian)
def _shaped_jacobian(jac, out, x):
    if isinstance(out, (ActiveType, types.Float, types.Integer)):
        return lambda jac, out, x: shaped_like_input(jac[0].copy(), x)  # a scalar output: ∇f
    if isinstance(out, (DualMatrixType, DualTensorType)) or (
            isinstance(out, types.Array) and out.ndim in (2, 3)):
        def matrix_output(jac, out, x):  # rows of J in C order: (m·k, ...) -> (m, k, ...)
            shaped = shaped_like_input(jac, x)
            return shaped.reshape(out.shape + shaped.shape[1:])
        return matrix_output
    return lambda jac, out, x: shaped_like_input(jac, x)


@register_jitable
def sweep(nodes, size, output, scale, n_in, adjoint):
    """Adjoints of the n_in inputs given f = value + scale·(node `output`), one pass back;
    adjoint is scratch space for max(size, n_in) entries."""
    adjoint[:max(size, n_in)] = 0.0
    if output >= 0:
        adjoint[output] = scale
        propagate(nodes, output, n_in, adjoint)
    return adjoint[:n_in].copy()


@register_jitable
def propagate(nodes, top, n_in, adjoint):
    """adjoint[operand] += weight · adjoint[node] for nodes top, top − 1, ..., n_in (nodes
    after top cannot reach the outputs seeded at or below it). A zero adjoint passes nothing
    on (0 · an infinite weight would be nan)."""
    weights = numba.carray(float_pointer(address_of(nodes)), nodes.size)  # the same words
    # Unsigned indices: operand ids are never negative (only two actives make a node), and
    # numba then emits no wraparound for negative indices. The loop's time is set by chains
    # of dependent nodes (an accumulator's: load, multiply, add, store, load again through
    # memory, ~16 cycles a link), not by its instruction count.
    for node in range(top, n_in - 1, -1):
        a = adjoint[np.uint64(node)]
        if a != 0.0:
            at = np.uint64(NODE_SLOTS * node)
            adjoint[np.uint64(nodes[at])] += weights[at + np.uint64(2)] * a
            adjoint[np.uint64(nodes[at + np.uint64(1)])] += weights[at + np.uint64(3)] * a


# The buffers a kernel keeps between calls (fresh large buffers cost a page fault per page
# touched, about twice the tape's own work at n = 10^4:
# docs/decisions/0002-compiled-representation.md): a lock, then the capacity (in nodes),
# owner and data address of the nodes, the length, owner and address of the sweep's
# adjoints, and the tape's header (no allocation per call). A call that finds the lock
# taken (recursion, threads, or a call whose f raised while holding it) uses new buffers,
# so results never depend on the pool.
_LOCK, _CAPACITY, _NODES, _ADJOINT_LENGTH, _ADJOINT, _HEADER = 0, 1, 2, 4, 5, 7
_POOL_SLOTS = _HEADER + HEADER_SLOTS


@register_jitable
def _adopt(pool, owner_slot, array):
    """Make the pool keep `array` in place of what it kept in owner_slot (and the next slot,
    the data address)."""
    drop(pool[owner_slot])
    pool[owner_slot], pool[owner_slot + 1] = keep(array), address_of(array)


@register_jitable
def _pooled_nodes(pool, capacity, slots):
    """The nodes of a tape of at least `capacity` nodes of `slots` words, kept by the pool."""
    if pool[_CAPACITY] < capacity:
        _adopt(pool, _NODES, np.empty(slots * capacity, np.int64))
        pool[_CAPACITY] = capacity
    return numba.carray(int_pointer(pool[_NODES + 1]), slots * pool[_CAPACITY])


@register_jitable
def _pooled_adjoint(pool, length):
    if pool[_ADJOINT_LENGTH] < length:
        _adopt(pool, _ADJOINT, np.empty(length))
        pool[_ADJOINT_LENGTH] = length
    return numba.carray(float_pointer(pool[_ADJOINT + 1]), pool[_ADJOINT_LENGTH])


@register_jitable
def _seed_actives(flat, extra, header):
    return seed(flat, header)


@register_jitable
def keep_alive(array):
    """Nothing: a use of `array` that numba's reference counting sees, so that the array is
    not freed before this point (its address may be held as a plain integer)."""
    return array.size


def recorder(f, finish, seeder=_seed_actives, width=0, checked=None):
    """An njit function (x, extra, cotangent, args) that records f(x, *args) on the tape,
    then returns finish(nodes, size, f's output, n_in, adjoint scratch, x, cotangent).
    seeder(flat x, extra, header) makes f's input (sparse.py seeds sparsity tracers); width:
    the tangents each node weight carries (0: the reverse tape; forward-over-reverse records
    Duals, dual_tape.py), the adjoint scratch then holds (1 + width) floats per node;
    checked(out, cotangent) raises before any sweep (default: the cotangent's size,
    _check_cotangent; sparse.py passes its plan as the cotangent)."""
    checked = _check_cotangent if checked is None else checked
    prepare = seeded_input(f)
    slots, per_node = node_slots(width), 1 + width

    def record(x, extra, cotangent, args):
        flat = flat_input(x)
        n_in = flat.size
        pool_at = pool_address(_POOL_SLOTS)
        pool = numba.carray(int_pointer(pool_at), _POOL_SLOTS)
        pooled = try_lock(pool_at)
        if pooled:
            header = numba.carray(int_pointer(pool_at + 8 * _HEADER), HEADER_SLOTS)
        else:
            header = np.empty(HEADER_SLOTS, np.int64)
        capacity = _INITIAL_NODES_PER_INPUT * n_in + 256
        while True:
            if pooled:
                nodes = _pooled_nodes(pool, capacity, slots)
                capacity = pool[_CAPACITY]
            else:
                nodes = np.empty(slots * capacity, np.int64)
            header[0], header[1], header[2] = n_in, capacity, address_of(nodes)
            failed = False
            try:
                # f itself, not a function that calls f: each level of calls compiles f's code
                # into its own module once more (kernels.seeded_input). (f(seeded, *args) here
                # is bytecode numba cannot read inside a try: LIST_EXTEND starting a block)
                out = f(*((prepare(x, seeder(flat, extra, address_of(header)), args),) + args))
            except Exception:  # noqa: B902 - numba catches only Exception, and binds nothing
                failed = True
            if failed:
                # f raised: give the pool back, then run f once more outside the try, so that
                # its exception reaches the caller as it is. That run records nothing (capacity
                # 0), and what this frame holds is dropped first: numba frees nothing that the
                # callers of a raising function hold
                if pooled:
                    header = np.empty(HEADER_SLOTS, np.int64)  # the pool's is given back too
                    unlock(pool_at)
                else:
                    nodes = np.empty(0, np.int64)
                header[0], header[1] = n_in, 0
                out = f(*((prepare(x, seeder(flat, extra, address_of(header)), args),) + args))
                # header must outlive f's run: numba frees an array after its last use in this
                # function, and f's actives hold its address as a plain integer. Without this
                # use, the header of this run is freed before f runs, and f's nodes go to
                # wherever the freed words point (a segfault in np.linalg.inv's recording
                # when f raises after it)
                keep_alive(header)
                raise RuntimeError("the differentiated function raised an exception on one run and "
                                   "not on the next with the same arguments: compiled reverse "
                                   "mode needs a deterministic function")
            if header[0] <= capacity:
                break
            capacity = header[0]  # the exact size: the second run fits
        length = per_node * max(header[0], n_in)
        adjoint = _pooled_adjoint(pool, length) if pooled else np.empty(length)
        failed = False
        try:
            checked(out, cotangent)
        except Exception:  # noqa: B902 - numba binds nothing
            failed = True
        if failed:  # give the pool back, then raise the same error outside the try
            if pooled:
                unlock(pool_at)
            checked(out, cotangent)
        result = finish(nodes, header[0], out, n_in, adjoint, x, cotangent)
        if pooled:
            unlock(pool_at)
        return result

    return numba.njit(named(record), **COMPILED_CALLERS_ONLY)  # kernels call it


def _taped(f, finish, python_equivalent, takes_cotangent=False, seeder=_seed_actives, checked=None):
    """A kernel (x, *args), or (x, cotangent, *args), that records f(x, *args) on the tape,
    then returns finish(nodes, size, f's output, n_in, adjoint scratch, x, cotangent or None);
    seeder and checked as recorder takes them."""
    record = recorder(f, finish, seeder, checked=checked)
    if takes_cotangent:
        def kernel(x, cotangent, *args):
            return record(x, None, cotangent, args)
    else:
        def kernel(x, *args):
            return record(x, None, None, args)
    return compile_kernel(kernel, f, python_equivalent)


def _check_cotangent(out, cotangent):
    """A ValueError unless the cotangent (None for kernels that take none) has one entry per
    output entry of f. Checked before any sweep, so that nothing raises while the pool is used;
    inlined, so that the raise is the recording frame's own, which numba cleans up."""
    raise TypeError("dualad.jit.tape._check_cotangent runs inside compiled kernels only")


@overload(_check_cotangent, inline="always")
def _check_cotangent_compiled(out, cotangent):
    if isinstance(cotangent, types.NoneType):
        return lambda out, cotangent: None

    def check(out, cotangent):
        if as_vector(cotangent).size != output_nodes(out)[0].size:
            raise ValueError("vjp: the cotangent must have one entry per output entry of f")
    return check


@register_jitable
def _value_and_gradient(nodes, size, out, n_in, adjoint, x, cotangent):
    value, output, scale = read_out(out)
    return value, shaped_like_input(sweep(nodes, size, output, scale, n_in, adjoint), x)


@register_jitable
def _jacobian(nodes, size, out, n_in, adjoint, x, cotangent):
    """One sweep per output entry: row k of J is the adjoint of output k."""
    outputs, scales = output_nodes(out)
    jac = np.empty((outputs.size, n_in))
    for k in range(outputs.size):
        jac[k] = sweep(nodes, size, outputs[k], scales[k], n_in, adjoint)
    return shaped_jacobian(jac, out, x)


@register_jitable
def _pullback(nodes, size, out, n_in, adjoint, x, cotangent):
    """(f's value, cotangent · J) in one sweep seeded at every output entry."""
    outputs, scales = output_nodes(out)
    weights_out = as_vector(cotangent)  # its size is checked before (_check_cotangent)
    adjoint[:max(size, n_in)] = 0.0
    top = -1
    for k in range(outputs.size):
        if outputs[k] >= 0:
            adjoint[outputs[k]] += weights_out[k] * scales[k]
            top = max(top, outputs[k])
    propagate(nodes, top, n_in, adjoint)
    return output_value(out), shaped_like_input(adjoint[:n_in].copy(), x)


# Every factory takes `python`, the same transform on the Python path (what the kernel
# means where user code runs on the Python path; dualad.dispatch passes it in).
def value_and_grad(f, python):
    return _taped(f, _value_and_gradient, python)


def jacrev(f, python):
    """Kernel (x, *args) -> J, shape f(x).shape + x.shape (x a float, a 1-D array or a tuple)."""
    return _taped(f, _jacobian, python)


def grad(f, python):
    """python: the Python path's value_and_grad, as for every gradient factory."""
    return gradient_of(value_and_grad(f, python), f)


def vjp(f, python):
    """Kernel (x, cotangent, *args) -> (f(x, *args), cotangent · J), the second shaped like x:
    one recording and one sweep per call (x a float, a 1-D array or a tuple; the cotangent a
    float or a 1-D array like f's output). python takes the same arguments."""
    return _taped(f, _pullback, python, takes_cotangent=True)
