"""The on-disk cache of derivative kernels, keyed by the user's function.

numba caches a function under its own file and qualname, with its bytecode and closure in
the index key. A derivative kernel is a closure inside dualad (``value_and_grad.<locals>.
kernel``) over the user's function, so numba's own key would file the kernels of every
user function under one dualad name and tell them apart only by pickling closure cells,
which returned one function's gradient for another's. Here instead a kernel is filed:

* where the user's function is cached (numba's locator for the user's file: its
  ``__pycache__`` or NUMBA_CACHE_DIR), never inside the installed package;
* under the user's file's source stamp, so editing that file invalidates it, as numba does;
* with a key made of the identity of everything the kernel closes over: the user function
  (module, qualname, bytecode, constants and names, recursively into nested code objects and
  closures), dualad's own kernels (their keys), options such as the chunk, plus a
  fingerprint of dualad's source and the NumPy version.

A kernel whose closure holds something without a process-independent identity is not
cached.

dualad's own compiled functions (the overload implementations generated from the rule
table, the rules' compiled partials, register_jitable helpers) are cached too: ``overload``,
``register_jitable`` and ``njit`` here are numba's with a cache attached. Each is filed where
numba files a cached function of dualad's file (its ``__pycache__``; NUMBA_CACHE_DIR, or the
user-wide cache when the package is read-only), one index per generated closure, stamped by
dualad's source fingerprint and keyed by the closure's identity (what it closes over,
recursively) and its jit options. numba's own key would not do: it pickles closure cells,
where a dispatcher pickles with a random id (never a hit), and its stamp is the defining
file's (a closure made in overloads.py from rules.py). Only closures made of dualad's, NumPy's
and numba's functions are cached (a user's primitive has no fingerprint here), and no code
with process-specific globals (numba's check, without its warning).

Every function of dualad's that numba compiles gets a qualname that holds across processes
(named): its key's hash, or a token of the process where it has no key. numba's symbol names
are qualname plus a counter of the process, and a library loaded from disk would otherwise
bind another process's closure of the same name (a wrong derivative, seen).

Reading a cache that is broken, foreign or unreadable, and writing into a read-only
directory, fall back to compiling, silently (the cache is an optimisation only).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import types as pytypes

import numpy as np
from numba import jit as numba_jit
from numba.core import types as nbtypes
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile
from numba.core.extending import _Intrinsic, _overload_default_jit_options, infer
from numba.core.registry import CPUDispatcher
from numba.core.runtime.nrt import rtsys
from numba.core.typing.templates import (infer_getattr, infer_global, make_overload_attribute_template,
                                         make_overload_method_template, make_overload_template)

__all__ = ["identity", "attach", "set_key", "named", "overload", "overload_attribute",
           "overload_method", "register_jitable", "njit"]


class _Uncacheable(Exception):
    """Something a kernel closes over has no identity that holds across processes."""


_UNCACHEABLE = ("uncacheable",)


@functools.lru_cache(maxsize=None)
def _dualad_fingerprint():
    """A hash of dualad's own source files and the NumPy version: a kernel compiled by one
    version of dualad is never loaded by another."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256(np.__version__.encode())
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as source:
                    digest.update(name.encode() + b"\0" + source.read())
    return digest.hexdigest()


def _code_identity(code):
    """Bytecode, constants and names of a code object, recursively (no addresses)."""
    consts = tuple(_code_identity(c) if isinstance(c, pytypes.CodeType) else
                   repr(sorted(map(repr, c))) if isinstance(c, frozenset) else repr(c)
                   for c in code.co_consts)
    return (code.co_qualname if hasattr(code, "co_qualname") else code.co_name,
            hashlib.sha256(code.co_code).hexdigest(), consts, code.co_names)


def identity(obj, _seen=None, _own=False):
    """A process-independent description of obj, for cache keys; _Uncacheable if none.
    With _own, only dualad's functions may appear in it (their source is in the
    fingerprint; another package's function may change under the same bytecode's key)."""
    seen = set() if _seen is None else _seen
    key = getattr(obj, "__dualad_key__", None)
    if key is _UNCACHEABLE:
        raise _Uncacheable(repr(obj))
    if key is not None:
        if _own and not getattr(obj, "__dualad_own_key__", False):
            # a kernel's key names the user's function by its code only, not by what that
            # code calls: dualad's own cache (no user's stamp to invalidate it) never holds it
            raise _Uncacheable(f"{obj!r} holds a user's function")
        return key
    if obj is None or isinstance(obj, (bool, int, float, str, bytes, np.number)):
        return (type(obj).__name__, repr(obj))
    if isinstance(obj, tuple):
        return ("tuple",) + tuple(identity(o, seen, _own) for o in obj)
    if isinstance(obj, (np.ufunc, pytypes.BuiltinFunctionType)):  # np.sin, math.sin, abs
        return (type(obj).__name__, _checked(getattr(obj, "__module__", None) or "numpy", _own),
                obj.__name__)
    if isinstance(obj, type):
        return ("class", _checked(obj.__module__, _own), obj.__qualname__)
    if isinstance(obj, nbtypes.Type):  # a numba type's name spells its key
        return ("numba type", _checked(type(obj).__module__, _own), type(obj).__qualname__,
                str(obj))
    if isinstance(obj, _Intrinsic):
        return ("intrinsic", identity(obj._defn, seen, _own))
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.shape, hashlib.sha256(obj.tobytes()).hexdigest())
    if isinstance(obj, pytypes.ModuleType):
        return ("module", obj.__name__)
    if isinstance(obj, CPUDispatcher):
        return ("dispatcher", identity(obj.py_func, seen, _own),
                repr(sorted(obj.targetoptions.items())))
    if isinstance(obj, pytypes.FunctionType):
        _checked(obj.__module__, _own, ("dualad", "numpy"))  # by code, not by version
        if id(obj) in seen:  # a recursive closure: its identity is already being described
            return ("recursive", _base_qualname(obj))
        seen.add(id(obj))
        parts = getattr(obj, "__dualad_parts__", None)
        if parts is not None:  # a dualad.primitive: its value and partials, each a function
            return ("primitive",) + tuple(identity(p, seen, _own) for p in parts)
        cells = tuple(identity(c.cell_contents, seen, _own) for c in obj.__closure__ or ())
        return ("function", _module_name(obj.__module__), _code_identity(obj.__code__), cells,
                () if _own or _is_library(obj.__module__) else _globals_identity(obj, seen))
    raise _Uncacheable(type(obj).__name__)


def _is_library(module):
    """Whether functions of this module are dualad's, NumPy's, numba's or the standard
    library's (their code is covered by the fingerprint and the versions in every key)."""
    top = (module or "").split(".")[0]
    return top in _OWN_MODULES or top in sys.stdlib_module_names


def _names(code):
    """The global and attribute names a code object and the functions defined in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _names(const)
    return names


def _globals_identity(fn, seen):
    """The identity of what a user's function reads from its globals, transitively: numba
    compiles those callees (other @njit functions, dualad.primitives, constants) into the
    kernel, so editing one in another module must change the kernel's key. A module it reads
    from counts with the attributes of it that the code names (helpers.f); a package's module
    counts by its version."""
    names = _names(fn.__code__)
    out = []
    for name in sorted(names):
        if name not in fn.__globals__:
            continue  # a builtin, an attribute name, or a global not defined yet
        value = fn.__globals__[name]
        if isinstance(value, pytypes.ModuleType):
            out.append((name, _module_identity(value, names, seen)))
        else:
            out.append((name, identity(value, seen)))
    return tuple(out)


def _module_identity(module, names, seen):
    if _is_library(module.__name__):
        return ("module", module.__name__)
    path = getattr(module, "__file__", None) or ""
    if "site-packages" in path or "dist-packages" in path:
        top = sys.modules.get(module.__name__.split(".")[0], module)
        return ("module", module.__name__, str(getattr(top, "__version__", None)))
    read = tuple((a, identity(getattr(module, a), seen)) for a in sorted(names)
                 if a in vars(module) and not a.startswith("__"))
    return ("module", module.__name__) + read


_OWN_MODULES = ("dualad", "numpy", "numba", "math", "cmath", "operator", "_operator", "builtins")


def _checked(module, own, allowed=_OWN_MODULES):
    """module, when an own key may mention it: dualad's (in the fingerprint), NumPy's (its
    version is in the fingerprint), numba's (the index holds its version), the standard
    library's builtins."""
    if own and (module is None or module.split(".")[0] not in allowed):  # None: made by exec
        raise _Uncacheable(f"{module} is not dualad's")
    return module


def _module_name(name):
    """A function's module for cache keys: a script's functions are in __main__, and in the
    processes multiprocessing spawns (concurrent.futures, Dask workers, where pickled kernels
    are rebuilt) the same script is imported as __mp_main__: one key, so that those processes
    load the kernels the script compiled."""
    return "__main__" if name == "__mp_main__" else name


class _Forgiving(FunctionCache):
    """A cache that is an optimisation only: an entry that cannot be loaded (broken, foreign,
    unreadable) is compiled instead, and one that cannot be written stays in memory."""

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception:  # a broken, foreign or unreadable cache entry: compile instead
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except Exception:  # a read-only or vanished directory: the kernel stays in memory
            pass


class _KeyedCacheFile(IndexDataCacheFile):
    """numba's index and data files, each data file holding its key too. numba numbers data
    files: two processes saving different entries at once can both write entry n and leave
    an index pointing at the other's code; here such an entry is a miss, never a load."""

    def save(self, key, data):
        super().save(key, (key, data))

    def load(self, key):
        stored = super().load(key)
        if stored is None or stored[0] != key:
            return None
        return stored[1]

    def _load_index(self):
        try:
            return super()._load_index()
        except Exception:  # a broken index holds nothing (the next save replaces it)
            return {}


class _KernelCache(_Forgiving):
    """numba's function cache, filed beside the user's function and keyed as the module says."""

    def __init__(self, kernel_fn, user_cache, key):
        # FunctionCache.__init__ would locate kernel_fn's own file (dualad's): set up by hand.
        user_impl = user_cache._impl
        self._name = f"dualad kernel {_base_qualname(kernel_fn)}"
        self._py_func = kernel_fn
        self._impl = impl = CompileResultCacheImpl.__new__(CompileResultCacheImpl)
        impl._locator, impl._lineno = user_impl.locator, user_impl._lineno
        kernel_name = _base_qualname(kernel_fn).replace("<locals>.", "").replace("<", "").replace(">", "")
        impl._filename_base = f"{user_impl.filename_base}.dualad.{kernel_name}"
        self._cache_path = user_cache.cache_path
        self._cache_file = _KeyedCacheFile(cache_path=self._cache_path,
                                           filename_base=impl._filename_base,
                                           source_stamp=user_impl.locator.get_source_stamp())
        self._key = hashlib.sha256(repr(key).encode()).hexdigest()
        self.enable()

    def _index_key(self, sig, codegen):
        return (sig, codegen.magic_tuple(), self._key)

    def load_overload(self, sig, target_context):
        """numba's load, after only what running loaded code needs of the target context.
        numba refreshes the whole context before every load: it imports numba's lowering
        modules (scipy.linalg with them, for its BLAS check) and installs every typing
        template, 0.2 s of a warm first call that compiles nothing. Running needs the NRT's
        symbols and the hash secrets numba.cpython.hashing puts in LLVM's symbol table on
        import (the other symbols numba adds, its C helpers and C maths, are added when the
        context is made); parfors' threads start from the library's reload_init. A compile
        still refreshes in full (numba's compiler does)."""
        try:
            import numba.cpython.hashing  # noqa: F401  (its import adds the symbols)
            rtsys.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:  # as _Forgiving: compile instead
            return None


class _GuardedCache(_Forgiving):
    """numba's cache of the user's own function, which also holds the function's dual-number
    specialisations once dualad has compiled them. Every entry is keyed by the function's
    callees too (_callees), the dual ones by dualad's source (they contain dualad's rules:
    another version of dualad must not load them); an entry
    that cannot be loaded (written by a run that imported the file under another module
    name, or broken) is recompiled instead of failing the call, and an unwritable directory
    is not an error (_Forgiving)."""

    def _index_key(self, sig, codegen):
        key = super()._index_key(sig, codegen) + (self._callees(),)
        if any(_mentions_dualad(t) for t in sig):
            key = key + (_dualad_fingerprint(),)
        return key

    def _callees(self):
        """A hash of what the function reads from its globals, transitively (identity): a
        specialisation compiled with a callee of another module is not loaded once that
        callee has changed (numba stamps the function's own file only), so that f's value and
        its derivatives follow the same code. A function whose callees have no identity gets
        this process's token: never loaded by another."""
        found = getattr(self, "_callees_key", None)
        if found is None:
            try:
                found = hashlib.sha256(repr(identity(self._py_func)).encode()).hexdigest()
            except _Uncacheable:
                found = _PROCESS
            self._callees_key = found
        return found


def _mentions_dualad(numba_type):
    """Whether a numba type is one of dualad's, or holds one (tuples, arrays' elements)."""
    if type(numba_type).__module__.startswith("dualad."):
        return True
    inner = tuple(getattr(numba_type, "types", ())) + (getattr(numba_type, "dtype", None),)
    return any(t is not None and t is not numba_type and _mentions_dualad(t) for t in inner)


def _guard(user_function):
    cache = getattr(user_function, "_cache", None)
    if type(cache) is FunctionCache:
        cache.__class__ = _GuardedCache


# A token of this process, for the names of functions that have no key (named below); a
# forked child draws its own (it continues the parent's numba counter: two children would
# otherwise name different closures alike).
_PROCESS = os.urandom(6).hex()


def _new_process_token():
    global _PROCESS
    _PROCESS = os.urandom(6).hex()


os.register_at_fork(after_in_child=_new_process_token)


def _base_qualname(fn):
    return getattr(fn, "__dualad_qualname__", fn.__qualname__)


def named(fn, key=None):
    """fn (a generated function about to be compiled), given a qualname that holds across
    processes: its key's hash, or without a key a token of this process. Returns fn.

    numba names a compiled function's symbol by module, qualname, argument types and a
    counter of the process (FunctionIdentity.unique_id), and links a callee into each caller's
    library once per symbol (linkonce_odr: equal names are assumed to be equal code). A
    library loaded from disk carries the names of the process that compiled it. dualad's
    generated closures share qualnames (one ``impl`` per rule), so without a name of its own
    a loaded tanh ``impl`` #57 and this process's power ``impl`` #57 are one symbol, and a
    kernel binds the wrong one: a wrong second derivative with two processes over one cache.
    With the key's hash in the name, equal names mean equal code; with the process token, no
    name meets another process's."""
    base = _base_qualname(fn)
    fn.__dualad_qualname__ = base
    tag = hashlib.sha256(repr(key).encode()).hexdigest()[:16] if key is not None else _PROCESS
    fn.__qualname__ = f"{base}.{'k' if key is not None else 'p'}{tag}"
    return fn


def set_key(fn, *parts):
    """Give fn (a function numba resolves by an overload, whose meaning its closure does not
    show) the identity of the given parts, or mark it uncacheable where they have none."""
    base = _base_qualname(fn)
    try:  # made of dualad's own functions only: dualad's own cache may file it
        fn.__dualad_key__ = ("keyed", base) + tuple(identity(p, _own=True) for p in parts)
        fn.__dualad_own_key__ = True
    except _Uncacheable:
        try:  # it holds a user's kernel: only that user's kernel cache may file it
            fn.__dualad_key__ = ("keyed", base) + tuple(identity(p) for p in parts)
        except _Uncacheable:
            fn.__dualad_key__ = _UNCACHEABLE
    return fn


def attach(dispatcher, user_function):
    """Give a kernel dispatcher its key (``__dualad_key__``) and, when the user's function
    is cached on disk (``@njit(cache=True)``), a disk cache keyed by that function."""
    _guard(user_function)
    kernel_fn = dispatcher.py_func
    try:
        key = ("dualad", _dualad_fingerprint(), identity(kernel_fn), identity(user_function))
    except _Uncacheable:
        named(kernel_fn)
        return dispatcher
    dispatcher.__dualad_key__ = key
    user_cache = getattr(user_function, "_cache", None)
    if isinstance(user_cache, FunctionCache):
        try:
            dispatcher._cache = _KernelCache(kernel_fn, user_cache, key)
        except Exception:  # no usable cache location: compile every time
            pass
    named(kernel_fn, key)
    return dispatcher


# ---- dualad's own compiled functions -----------------------------------------------------------
class _OwnCache(_Forgiving):
    """numba's cache of one of dualad's functions (an overload implementation, a compiled
    partial), located as numba locates dualad's file, one index per closure identity."""

    def __init__(self, py_func, key):
        renamed, py_func.__qualname__ = py_func.__qualname__, _base_qualname(py_func)
        try:  # filed under the function's own qualname, whatever named gave it
            super().__init__(py_func)
        finally:
            py_func.__qualname__ = renamed
        self._key = hashlib.sha256(repr(key).encode()).hexdigest()
        # stamped by dualad's fingerprint, not the defining file's: an index written by
        # another version of dualad is dropped whole, and its data files are reused
        self._cache_file = _KeyedCacheFile(
            cache_path=self._cache_path, source_stamp=("dualad", _dualad_fingerprint()),
            filename_base=f"{self._impl.filename_base}.{self._key[:16]}")

    def _index_key(self, sig, codegen):
        return (sig, codegen.magic_tuple(), self._key, _dualad_fingerprint())

    def save_overload(self, sig, data):
        if data.library.has_dynamic_globals or data.lifted:
            return  # process-specific (numba would warn and not cache it): stays in memory
        super().save_overload(sig, data)


# dualad's own functions are cached on disk. Two processes compiling at once over an empty
# shared cache once got a wrong second derivative (test_rules_compiled run twice in parallel:
# power's; under pytest-xdist tanh's): generated closures shared compiled names (see named).
# Guard: tests/test_cache.py, processes compiling at once get exact derivatives.
OWN_CACHE = True


def own_cache(dispatcher):
    """Give one of dualad's dispatchers a disk cache keyed by dualad's fingerprint and its
    closure's identity (while OWN_CACHE), and a compiled name of that key (named); left
    uncached, with a name of this process, when its closure holds anything not dualad's own."""
    try:
        key = ("dualad own", identity(dispatcher.py_func, _own=True),
               repr(sorted(dispatcher.targetoptions.items())))
    except _Uncacheable:
        named(dispatcher.py_func)
        return dispatcher
    if OWN_CACHE:
        try:
            dispatcher._cache = _OwnCache(dispatcher.py_func, key)
        except Exception:  # no usable cache location (numba's RuntimeError): compile
            pass
    named(dispatcher.py_func, key)
    return dispatcher


def _cached_jit(**options):
    """numba's jit decorator, the dispatcher cached (own_cache)."""
    return lambda fn: own_cache(numba_jit(**options)(fn))


def njit(fn, **options):
    """numba.njit(fn, **options), cached on disk where fn is dualad's own (own_cache)."""
    return _cached_jit(nopython=True, **options)(fn)


# jit options of a function only compiled code calls: numba would otherwise build a Python and
# a C (cfunc) wrapper for it, each a module it optimises and emits machine code for (C
# wrappers of overload implementations are about a sixth of a first grad with every cache
# empty: docs/decisions/0001-where-cold-time-goes.md)
COMPILED_CALLERS_ONLY = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False, **kwargs):
    """numba's @overload whose implementations are cached on disk (own_cache): numba compiles
    each implementation as a dispatcher of its own, through the template's jit decorator,
    which is the one thing this template changes."""
    options = dict(_overload_default_jit_options, **COMPILED_CALLERS_ONLY, **(jit_options or {}))

    def decorate(overload_func):
        template = make_overload_template(func, overload_func, options, strict, inline,
                                          prefer_literal, **kwargs)
        cached = type(template.__name__, (template,),
                      {"_get_jit_decorator": lambda template: _cached_jit})
        infer(cached)
        if callable(func):
            infer_global(func, nbtypes.Function(cached))
        return overload_func
    return decorate


def overload_attribute(typ, attr, **kwargs):
    """numba's @overload_attribute, the implementation compiled through overload here (so
    cached and named like every other of dualad's functions)."""
    def decorate(overload_func):
        infer_getattr(make_overload_attribute_template(typ, attr, overload_func, **kwargs))
        overload(overload_func, **kwargs)(overload_func)
        return overload_func
    return decorate


def overload_method(typ, attr, **kwargs):
    """numba's @overload_method, the implementation compiled through overload here (as
    overload_attribute)."""
    def decorate(overload_func):
        infer_getattr(make_overload_method_template(typ, attr, overload_func, inline="never",
                                                    prefer_literal=False))
        overload(overload_func, **kwargs)(overload_func)
        return overload_func
    return decorate


def register_jitable(*args, **options):
    """numba's register_jitable, its implementation cached on disk (own_cache)."""
    def wrap(fn):
        inline = options.pop("inline", "never")
        overload(fn, jit_options=options, inline=inline, strict=False)(lambda *a, **k: fn)
        return fn
    return wrap if options or not args else wrap(*args)
