"""Buffers that hold numbers of a layer, for the allocations of the differentiated function.

``out = np.zeros(n); out[i] = ...; return out`` is how much NumPy code fills its outputs,
and a float array cannot hold a dual number. NumPy's allocation functions take no override
(np.zeros has no array argument to dispatch on), and dualad does not patch NumPy. Instead a
transform runs f over a view of its own globals (`with_buffers`) in which NumPy's
allocation functions make a `Buffer` of floats: an object-dtype ndarray, so an entry may
become a number of any layer. Every NumPy function and ufunc that meets a Buffer sees it as
what it holds: a float array, or one number of the layer leading its entries
(number.from_objects). f's output is read the same way.

f and the user's own functions it calls (through globals or closure cells) run so; NumPy's,
libraries' and dualad's functions keep their globals (a float buffer made there that
receives a dual raises, naming np.zeros_like). Only a function that assigns into something
sees the Buffer allocations, so float work arrays of other functions stay fast; a function
that writes global variables runs untouched (a view of its globals could not write them).
The view is live: every other name is looked up in the module's globals at the time of use.
"""

from __future__ import annotations

import dis
import functools
import sys
import types
import weakref

import numpy as np

from .number import from_objects, is_layer

__all__ = ["Buffer", "with_buffers"]

ALLOCATIONS = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like",
               "full_like")


class Buffer(np.ndarray):
    """An allocation of the differentiated function: floats, and numbers of layers once
    assigned ones (object dtype). NumPy functions and ufuncs see it as what it holds."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        result = getattr(ufunc, method)(*_held(inputs), **kwargs)
        if out is None:
            return result
        # in place (buffer += x): the result goes back into the buffer, entry by entry
        (target,) = out
        target[...] = result
        return target

    def __array_function__(self, func, types_, args, kwargs):
        return func(*_held(args), **_held(kwargs))


def _held(x):
    """x with every Buffer in it (through lists, tuples, dicts) replaced by what it holds."""
    if isinstance(x, Buffer):
        return from_objects(x.view(np.ndarray))
    if isinstance(x, (list, tuple)):
        return type(x)(_held(item) for item in x)
    if isinstance(x, dict):
        return {key: _held(item) for key, item in x.items()}
    return x


def _float_dtype(dtype):
    return dtype is None or np.dtype(dtype).kind == "f"


def _buffer(shape, fill):
    out = np.empty(shape, dtype=object).view(Buffer)
    out.fill(fill)
    return out


def _allocation(name):
    """numpy.<name> for f's view: a Buffer where NumPy would make a float array."""
    numpy_function = getattr(np, name)

    if name.endswith("_like"):
        def like(a, *args, dtype=None, shape=None, **kwargs):
            if is_layer(a) or kwargs:
                return numpy_function(a, *args, dtype=dtype, shape=shape, **kwargs)
            kind = ("f" if isinstance(a, Buffer) else np.asarray(a).dtype.kind) \
                if dtype is None else np.dtype(dtype).kind
            if kind != "f":
                return numpy_function(a, *args, dtype=dtype, shape=shape)
            fill = args[0] if name == "full_like" else 1.0 if name == "ones_like" else 0.0
            return _buffer(np.shape(a) if shape is None else shape, fill)
        return like

    def allocate(shape, *args, dtype=None, **kwargs):
        if not _float_dtype(dtype) or kwargs.get("order") not in (None, "C") or kwargs.get("like") is not None:
            return numpy_function(shape, *args, dtype=dtype, **kwargs)
        if name == "full":
            return _buffer(shape, args[0] if args else kwargs["fill_value"])
        return _buffer(shape, 1.0 if name == "ones" else 0.0)
    return allocate


BUFFER_ALLOCATIONS = {name: _allocation(name) for name in ALLOCATIONS}


class _NumpyWithBuffers(types.ModuleType):
    """numpy, except that its allocation functions make Buffers."""

    def __getattr__(self, name):
        if name in BUFFER_ALLOCATIONS:
            return BUFFER_ALLOCATIONS[name]
        return getattr(np, name)


NUMPY_WITH_BUFFERS = _NumpyWithBuffers("numpy")
_BY_FUNCTION = {id(getattr(np, name)): name for name in ALLOCATIONS}


class _Globals(dict):
    """A function's globals, looked up live, with numpy (and its allocation functions
    imported by name) seen as making Buffers when the function assigns into something, and
    the user's own functions it calls run the same way."""

    def __init__(self, module_globals, allocates):
        super().__init__(__builtins__=module_globals.get("__builtins__", __builtins__))
        self.module_globals, self.allocates = module_globals, allocates

    def __missing__(self, name):
        value = self.module_globals[name]  # KeyError: Python looks in the builtins next
        if self.allocates:
            if value is np:
                return NUMPY_WITH_BUFFERS
            if id(value) in _BY_FUNCTION and value is getattr(np, _BY_FUNCTION[id(value)]):
                return BUFFER_ALLOCATIONS[_BY_FUNCTION[id(value)]]
        return with_buffers(value) if isinstance(value, types.FunctionType) else value


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


@functools.lru_cache(maxsize=4096)
def _reads(code):
    """(writes globals, assigns into subscripts, free variables it assigns) of a code object
    and the functions defined in it."""
    writes, stores, nonlocal_writes = False, False, set()
    for inner in _codes(code):
        for instruction in dis.get_instructions(inner):
            if instruction.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                writes = True
            elif instruction.opname == "STORE_SUBSCR":
                stores = True
            elif instruction.opname in ("STORE_DEREF", "DELETE_DEREF"):
                nonlocal_writes.add(instruction.argval)
    return writes, stores, frozenset(nonlocal_writes)


def _users_own(f):
    """Whether f is the user's code (not NumPy's, a library's or dualad's own)."""
    module = sys.modules.get(getattr(f, "__module__", None) or "")
    path = getattr(module, "__file__", None) or ""
    top = (f.__module__ or "").partition(".")[0]
    return not (top in sys.stdlib_module_names or top == "dualad" or
                "site-packages" in path or "dist-packages" in path)


_MADE = weakref.WeakKeyDictionary()


def with_buffers(f):
    """f, run over a view of its globals in which NumPy's allocations make Buffers (see the
    module docstring); f itself when it is not a plain Python function of the user's, or
    writes global variables."""
    if not isinstance(f, types.FunctionType) or hasattr(f, "__dualad_buffers__") or not _users_own(f):
        return f
    made = _MADE.get(f)
    if made is not None:
        return made
    writes, stores, nonlocal_writes = _reads(f.__code__)
    if writes:
        return f
    namespace = _Globals(f.__globals__, stores)
    closure = f.__closure__
    replaced = [i for i, (name, cell) in enumerate(zip(f.__code__.co_freevars, closure or ()))
                if name not in nonlocal_writes and _holds_function(cell)]

    if not replaced:
        g = _rebuilt(f, namespace, closure)
    else:
        # a closure cell holding one of the user's functions: read at each call (the
        # enclosing scope may rebind it), as a new cell holding its buffered version
        def g(*args, **kwargs):
            cells = list(closure)
            for i in replaced:
                cells[i] = types.CellType(with_buffers(closure[i].cell_contents))
            return _rebuilt(f, namespace, tuple(cells))(*args, **kwargs)
        functools.update_wrapper(g, f)
    g.__wrapped__, g.__dualad_buffers__ = f, True
    _MADE[f] = g
    return g


def _holds_function(cell):
    try:
        return isinstance(cell.cell_contents, types.FunctionType)
    except ValueError:  # an empty cell
        return False


def _rebuilt(f, namespace, closure):
    g = types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__, closure)
    g.__kwdefaults__, g.__doc__, g.__qualname__ = f.__kwdefaults__, f.__doc__, f.__qualname__
    g.__dict__.update(f.__dict__)
    g.__dualad_buffers__ = True
    return g
