"""vmap of a compiled kernel: a numba dispatcher (parallel=True) that runs the kernel for
every element of a batch on numba's threads (prange), callable from Python and from @njit
code.

    vmap(kernel, in_axes, out_axes, python)(*args)
        args[k] is cut along in_axes[k] (an int; None: given whole to every call; an int
        in_axes: every argument along it; a tuple argument: each leaf along it)
        -> the kernel's outputs stacked along out_axes (each leaf of a tuple output)

Element 0 runs first, alone: its result gives the outputs' shapes and dtypes, and a kernel
that learns on its first call (the compiled auto Jacobian picks its mode per input size
then) has learnt. Then every element, element 0 again, runs in the parallel loop, so each
result is what the kernel returns for that element in that state: a serial loop's result,
bit for bit.

numba drops an exception raised inside prange and leaves that element unwritten, which
would be a silently wrong result: each element runs under a guard that marks it failed,
and after the loop the first failed element runs again outside the loop, where its
exception reaches the caller as a serial loop's would.

Threads: numba's (numba.set_num_threads, NUMBA_NUM_THREADS). They take chunks of elements on
demand (an atomic counter), not numba's equal shares fixed in advance: on cores shared with
other work, or with elements of uneven cost, no thread waits on a slow one's share.
Reverse-mode kernels may run
on several threads at once: their tape's buffer pool is taken by an atomic try-lock, and a
call that finds it taken records onto buffers of its own (tape.py), so one thread at a time
reuses the pool and the others allocate.
"""

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic

from .cache import attach, overload, set_key
from .kernels import _COMPILE_ERRORS, _MARK, _explained
from .types import compiled_only

__all__ = ["vmap"]

_at = compiled_only("vmap", "at")  # (x, i, axis): x's element i along axis; axis None: x
_size = compiled_only("vmap", "size")  # (x, axis, n): the batch size x agrees on (n < 0: none yet)
_allocate = compiled_only("vmap", "allocate")  # (out, n): room for n outputs like out
_store = compiled_only("vmap", "store")  # (results, i, out): results[i] = out, leaf by leaf
_moved = compiled_only("vmap", "moved")  # (results, axis): the batch axis moved to axis
_at_from = compiled_only("vmap", "at_from")  # (x, i, axis, k): (_at(x[k], ...), _at(x[k+1], ...), ...)
_size_from = compiled_only("vmap", "size_from")  # (x, axis, n, k)
_allocate_from = compiled_only("vmap", "allocate_from")  # (out, n, k)
_store_from = compiled_only("vmap", "store_from")  # (results, i, out, k)
_moved_from = compiled_only("vmap", "moved_from")  # (results, axis, k)
_flat = compiled_only("vmap", "flat")  # (x): the leaves of nested tuples, as one flat tuple
_flat_from = compiled_only("vmap", "flat_from")  # (x, k): those of x[k], x[k+1], ...
_store_flat = compiled_only("vmap", "store_flat")  # (flat results, i, out): out's leaves stored
_store_pairs = compiled_only("vmap", "store_pairs")  # (flat results, i, leaves, k)


def _literal(t):
    return t.literal_value if isinstance(t, types.IntegerLiteral) else None


def _normalised(axis, ndim, what):
    """axis counted from 0 (JAX's negative axes count from the end) for an ndim array."""
    if not -ndim <= axis < ndim:
        raise TypingError(f"vmap: {what} has {ndim} dimension(s): axis {axis} is out of range")
    return axis % ndim


def _mappable(x):
    if isinstance(x, types.Array):
        if x.ndim == 0:
            raise TypingError("vmap cannot map a 0-d array: pass in_axes=None for it")
        return True
    if isinstance(x, types.BaseTuple):
        return False
    raise TypingError(f"vmap maps arrays (and tuples of arrays) along their axis, not {x}: pass "
                      f"in_axes=None for an argument that every call takes whole")


def _walk(target, over):
    """Overload target(x, ..., k), which applies `over` to x[k], x[k+1], ... and gathers the
    results in a tuple (k literal, numba retries with it)."""
    def choose(*arg_types):
        x, k = arg_types[0], _literal(arg_types[-1])
        if k is None:
            return None
        return over(x, k)
    overload(target, strict=False)(choose)


@overload(_at)
def _at_impl(x, i, axis):
    if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
        return lambda x, i, axis: x
    a = _literal(axis)
    if a is None:
        return None
    if not _mappable(x):
        return lambda x, i, axis: _at_from(x, i, axis, 0)
    a = _normalised(a, x.ndim, "a mapped argument")
    if a == 0:
        return lambda x, i, axis: x[i]
    order = (a,) + tuple(d for d in range(x.ndim) if d != a)
    return lambda x, i, axis: np.transpose(x, order)[i]


def _at_over(x, k):
    if k == len(x):
        return lambda x, i, axis, k: ()
    at, after = k, k + 1
    return lambda x, i, axis, k: (_at(x[at], i, axis),) + _at_from(x, i, axis, after)


_walk(_at_from, _at_over)


@overload(_size)
def _size_impl(x, axis, n):
    if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
        return lambda x, axis, n: n
    a = _literal(axis)
    if a is None:
        return None
    if not _mappable(x):
        return lambda x, axis, n: _size_from(x, axis, n, 0)
    a = _normalised(a, x.ndim, "a mapped argument")

    def size(x, axis, n):
        if n >= 0 and x.shape[a] != n:
            raise ValueError("vmap: the mapped arguments have different sizes along their in_axes")
        return x.shape[a]
    return size


def _size_over(x, k):
    if k == len(x):
        return lambda x, axis, n, k: n
    at, after = k, k + 1
    return lambda x, axis, n, k: _size_from(x, axis, _size(x[at], axis, n), after)


_walk(_size_from, _size_over)


@overload(_allocate)
def _allocate_impl(out, n):
    if isinstance(out, (types.Float, types.Integer, types.Boolean)):
        dtype = numba.np.numpy_support.as_dtype(out)
        return lambda out, n: np.empty(n, dtype)
    if isinstance(out, types.Array):
        return lambda out, n: np.empty((n,) + out.shape, out.dtype)
    if isinstance(out, types.BaseTuple):
        return lambda out, n: _allocate_from(out, n, 0)
    raise TypingError(f"vmap stacks floats, arrays and tuples of them; the function returned {out}")


def _allocate_over(out, k):
    if k == len(out):
        return lambda out, n, k: ()
    at, after = k, k + 1
    return lambda out, n, k: (_allocate(out[at], n),) + _allocate_from(out, n, after)


_walk(_allocate_from, _allocate_over)


@overload(_store)
def _store_impl(results, i, out):
    if isinstance(results, types.BaseTuple):
        return lambda results, i, out: _store_from(results, i, out, 0)
    if results.ndim == 1:
        def scalar(results, i, out):
            results[i] = out
        return scalar

    def array(results, i, out):
        if results.shape[1:] != out.shape:
            raise ValueError("vmap: the function returned arrays of different shapes for "
                             "different elements of the batch")
        results[i] = out
    return array


def _store_over(results, k):
    if k == len(results):
        return lambda results, i, out, k: None
    at, after = k, k + 1

    def store(results, i, out, k):
        _store(results[at], i, out[at])
        _store_from(results, i, out, after)
    return store


_walk(_store_from, _store_over)


@overload(_moved)
def _moved_impl(results, axis):
    a = _literal(axis)
    if a is None:
        return None
    if isinstance(results, types.BaseTuple):
        return lambda results, axis: _moved_from(results, axis, 0)
    a = _normalised(a, results.ndim, "the stacked output (out_axes)")
    if a == 0:
        return lambda results, axis: results
    order = tuple(range(1, a + 1)) + (0,) + tuple(range(a + 1, results.ndim))
    return lambda results, axis: np.ascontiguousarray(np.transpose(results, order))


def _moved_over(results, k):
    if k == len(results):
        return lambda results, axis, k: ()
    at, after = k, k + 1
    return lambda results, axis, k: (_moved(results[at], axis),) + _moved_from(results, axis, after)


_walk(_moved_from, _moved_over)


@overload(_flat)
def _flat_impl(x):
    if isinstance(x, types.BaseTuple):
        return lambda x: _flat_from(x, 0)
    return lambda x: (x,)


def _flat_over(x, k):
    if k == len(x):
        return lambda x, k: ()
    at, after = k, k + 1
    return lambda x, k: _flat(x[at]) + _flat_from(x, after)


_walk(_flat_from, _flat_over)


@overload(_store_flat)
def _store_flat_impl(flat, i, out):
    return lambda flat, i, out: _store_pairs(flat, i, _flat(out), 0)


def _store_pairs_over(flat, k):
    if k == len(flat):
        return lambda flat, i, leaves, k: None
    at, after = k, k + 1

    def store(flat, i, leaves, k):
        _store(flat[at], i, leaves[at])
        _store_pairs(flat, i, leaves, after)
    return store


_walk(_store_pairs, _store_pairs_over)


def _axes(in_axes, n_args):
    """One axis (int or None) per positional argument."""
    if in_axes is None or isinstance(in_axes, int):
        axes = (in_axes,) * n_args
    elif len(in_axes) != n_args:
        raise TypingError(f"vmap: in_axes has {len(in_axes)} entries, one per positional "
                          f"argument, but the function was called with {n_args}")
    else:
        axes = tuple(in_axes)
    if all(a is None for a in axes):
        raise TypingError("vmap: in_axes maps no argument (all None): nothing to map over")
    return axes




@intrinsic
def _fetch_add(typingctx, counter, amount):
    """counter[0] += amount, atomically; the value before."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        raise TypingError("_fetch_add takes an int64 array")

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, value=args[0]).data
        amount = context.cast(builder, args[1], signature.args[1], types.int64)
        return builder.atomic_rmw("add", data, amount, "monotonic")
    return types.int64(counter, amount), codegen


# The parallel loop, written out per structure of the arguments. numba's parfors pass a
# tuple that the loop uses as its items, one level deep only (a tuple argument inside the
# arguments' tuple fails to lower), so the loop takes the arguments' leaves one by one and
# the results as one flat tuple of arrays; the tuples are rebuilt outside the loop.
_SOURCE = """
def make(kernel, batch_size, args_at, element, out_axes, jit, jit_parallel):
    def guarded({leaves}, i, flat, failed):
        try:
            element({nested}, i, flat)
        except Exception:  # numba catches only Exception, and binds nothing
            failed[i] = True

    guarded = jit(guarded)

    def parallel({leaves}):
        args = {nested}
        n = batch_size(args)
        if n == 0:
            raise ValueError("vmap: the mapped axis has size 0, so the outputs' shapes are unknown")
        results = _allocate(kernel(*args_at(args, 0)), n)
        flat = _flat(results)
        failed = np.zeros(n, np.bool_)
        # chunks taken on demand: every iteration takes chunks until none is left, so the
        # first one on each thread does the work, however fast each thread turns out to be
        chunk = max(1, n // 256)
        taken = np.zeros(1, np.int64)
        for _ in numba.prange((n + chunk - 1) // chunk):
            start = _fetch_add(taken, chunk)
            while start < n:
                for i in range(start, min(start + chunk, n)):
                    guarded({leaves}, i, flat, failed)
                start = _fetch_add(taken, chunk)
        for i in range(n):
            if failed[i]:
                element(args, i, flat)  # raises what the parallel loop caught
                raise RuntimeError("vmap: the function raised an exception for an element on "
                                   "one run and not on the next: it must be deterministic")
        return _moved(results, out_axes)

    parallel = jit_parallel(parallel)

    def call(args):
        return parallel({access})
    return call
"""


def _leaf_paths(t, path=()):
    """The index paths of the leaves of a (nested) tuple type."""
    if not isinstance(t, types.BaseTuple):
        return [path]
    return [leaf for k, child in enumerate(t) for leaf in _leaf_paths(child, path + (k,))]


def _nested_source(t, names):
    """Source that rebuilds a value of tuple type t from its leaves, named by names in order."""
    if not isinstance(t, types.BaseTuple):
        return next(names)
    inner = [_nested_source(child, names) for child in t]
    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


def vmap(kernel, in_axes, out_axes, python, tried):
    """The compiled kernel (*args) -> kernel mapped over the batch axis of its arguments
    (module docstring). python is the same on the Python path (its meaning there), tried
    its call at the first element of the batch (what a compile error tries). in_axes is an
    int, None or a tuple of them; out_axes an int."""
    args_at = compiled_only("vmap", "args_at")  # (args, i): the kernel's arguments for element i
    args_from = compiled_only("vmap", "args_from")  # (args, i, k): those of arguments k, k+1, ...
    batch_size = compiled_only("vmap", "batch_size")  # (args): the batch size, checked
    sizes_from = compiled_only("vmap", "sizes_from")  # (args, n, k): checked against n
    run = compiled_only("vmap", "run")  # (args): the parallel loop for args' structure

    def _args_over(args, k):
        if k == len(args):
            return lambda args, i, k: ()
        at, axis, after = k, _axes(in_axes, len(args))[k], k + 1
        return lambda args, i, k: (_at(args[at], i, axis),) + args_from(args, i, after)

    _walk(args_from, _args_over)

    @overload(args_at)
    def _args_at(args, i):
        _axes(in_axes, len(args))
        return lambda args, i: args_from(args, i, 0)

    def _sizes_over(args, k):
        if k == len(args):
            return lambda args, n, k: n
        at, axis, after = k, _axes(in_axes, len(args))[k], k + 1
        return lambda args, n, k: sizes_from(args, _size(args[at], axis, n), after)

    _walk(sizes_from, _sizes_over)

    @overload(batch_size)
    def _batch_size(args):
        _axes(in_axes, len(args))
        return lambda args: sizes_from(args, -1, 0)

    for fn in (args_at, batch_size, args_from, sizes_from):
        set_key(fn, kernel, in_axes)  # their overloads are their meaning

    def element(args, i, flat):
        _store_flat(flat, i, kernel(*args_at(args, i)))

    element = attach(numba.njit(element), kernel)
    loops = {}  # source -> the loop's caller, per structure of the arguments

    @overload(run)
    def _run(args):
        _axes(in_axes, len(args))
        paths = _leaf_paths(args)
        names = [f"leaf{k}" for k in range(len(paths))]
        source = _SOURCE.format(
            leaves=", ".join(names), nested=_nested_source(args, iter(names)),
            access=", ".join("args" + "".join(f"[{k}]" for k in path) for path in paths))
        if source not in loops:
            namespace = dict(globals())
            exec(compile(source, f"<dualad.jit.vmap loop over {len(paths)} leaves>", "exec"), namespace)
            loops[source] = namespace["make"](
                kernel, batch_size, args_at, element, out_axes,
                lambda fn: attach(numba.njit(fn), kernel),
                lambda fn: attach(numba.njit(parallel=True)(fn), kernel))
        return loops[source]

    set_key(run, kernel, in_axes, out_axes)

    def mapped(*args):
        return run(args)

    compiled = _with_hint(attach(numba.njit(mapped), kernel), tried)
    compiled.__dualad_python__ = python
    compiled.strategy = "prange"
    return compiled


def _with_hint(mapped, tried):
    """numba's compile error on the first call from Python, with its cause first and whether
    the Python path works at the batch's first element (tried: the whole batch could take
    long there), as kernels._with_hint does for kernels."""
    compile_for_args = mapped._compile_for_args

    def compile_with_hint(*args, **kwargs):
        try:
            return compile_for_args(*args, **kwargs)
        except _COMPILE_ERRORS as err:
            if _MARK in str(err):  # explained already
                raise
            args = tuple(args[-1]) if args else ()  # mapped(*args): numba packs them
            message = _explained(str(err), tried, args, works=(
                "The Python path computes it at the batch's first element (tried): vmap the "
                "transform made with jit=False (a loop in Python)."))
            if isinstance(err, numba.core.errors.NumbaError):
                err.patch_message(message)
                raise
            raise type(err)(message) from err

    mapped._compile_for_args = compile_with_hint
    return mapped
