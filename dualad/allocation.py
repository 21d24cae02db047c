"""Buffers that hold numbers of a layer, for the allocations of the differentiated function.

``out = np.zeros(n); out[i] = ...; return out`` is how much NumPy code fills its outputs,
and a float array cannot hold a dual number. NumPy's allocation functions take no override
(np.zeros has no array argument to dispatch on), and dualad does not patch NumPy. Instead,
when f stores a dual into a float array it allocated (`OnDemand`: the transform runs f as
it is first), the transform runs f again over a view of its globals (`with_buffers`) in
which NumPy's allocation functions make a `Buffer`: an object-dtype ndarray of floats, so
an entry may become a number of any layer. NumPy's structural functions (views, copies,
in-place writes: transpose, reshape, fill_diagonal, copyto, ufunc.at, ...) work on a Buffer
as on any object array, with NumPy's semantics; every other NumPy function or ufunc sees it
as what it holds: a float array, or one number of the layer leading its entries
(number.from_objects). f's output is read the same way.

f and the user's own functions it calls (through globals or closure cells, bound methods
and functools.partial included) run so. Functions of other packages that f calls through
its globals (scipy.optimize.rosen, a module's function, recursively) run over a view too,
with NumPy's array makers alone (np.asarray(x) of an array of duals is x itself, as NumPy's
of an ndarray, instead of an object array of scalar duals): their allocations stay
NumPy's. NumPy's, the standard library's and dualad's functions keep their globals. Only a
function that assigns into something sees the Buffer allocations; a function that writes
global variables runs untouched (a view of its globals could not write them). The view is
live: every other name is looked up in the module's globals at the time of use. Where a
library function fails over its view, the run without it stands.
"""

from __future__ import annotations

import dis
import functools
import linecache
import sys
import types
import warnings
import weakref

import numpy as np

from .rewrite import DOT, dispatching_code
from .number import (ARRAY_CONVERSIONS, CONVERSION_SITES, RERUN_AT_CONVERSION, ConversionRerun,
                     LostDerivative, SlowPathWarning, from_objects, is_layer)

__all__ = ["Buffer", "OnDemand", "with_buffers"]

ALLOCATIONS = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like",
               "full_like")


class Buffer(np.ndarray):
    """An allocation of the differentiated function: floats, and numbers of layers once
    assigned ones (object dtype). NumPy's structural functions act on it as an object
    array; the others see it as what it holds."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at":  # in place: NumPy's object loop adds entry by entry
            return getattr(ufunc, method)(*_raw(inputs), **kwargs)
        out = kwargs.pop("out", None)
        result = getattr(ufunc, method)(*_held(inputs), **_held(kwargs))
        return result if out is None else _into(out, result)

    def __array_function__(self, func, types_, args, kwargs):
        if func in STRUCTURAL:
            return _as_buffers(func(*_raw(args), **_raw(kwargs)))
        out = kwargs.pop("out", None)
        result = func(*_held(args), **_held(kwargs))
        return result if out is None else _into(out, result)

    def astype(self, dtype, *args, **kwargs):
        return _held(self).astype(dtype, *args, **kwargs)

    def __setitem__(self, index, item):
        # (a Python frame, so that a conversion of item into objects is told from others)
        super().__setitem__(index, item)


def _method(name):
    function = getattr(np, name)

    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)
    method.__name__ = name
    return method


# ndarray's numeric methods call NumPy's internals on the object array directly: through
# the NumPy functions, a Buffer is seen as what it holds
for _name in ("sum", "mean", "std", "var", "prod", "max", "min", "cumsum", "cumprod", "clip",
              "all", "any", "dot", "round", "argmax", "argmin", "argsort", "ptp", "trace"):
    setattr(Buffer, _name, _method(_name))


def _into(out, result):
    """NumPy's out= for a Buffer (or a tuple holding one): the result written into it."""
    target = out[0] if isinstance(out, tuple) else out
    target[...] = result
    return target


def _raw(x):
    """x with every Buffer in it seen as the plain object array it is."""
    if isinstance(x, Buffer):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_raw(item) for item in x)
    if isinstance(x, dict):
        return {key: _raw(item) for key, item in x.items()}
    return x


def _as_buffers(x):
    """Object arrays in a structural function's result as Buffers (views stay views)."""
    if isinstance(x, np.ndarray) and x.dtype == object and not isinstance(x, Buffer):
        return x.view(Buffer)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_as_buffers(item) for item in x)
    return x


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


def _buffer(shape, fill, order="C"):
    out = np.empty(shape, dtype=object, order="F" if order == "F" else "C").view(Buffer)
    out.fill(fill)
    return out


# Each allocation's parameters after the shape (or template), as NumPy orders them.
_PARAMETERS = {"zeros": ("dtype", "order"), "empty": ("dtype", "order"), "ones": ("dtype", "order"),
               "full": ("fill_value", "dtype", "order"),
               "zeros_like": ("dtype", "order", "subok", "shape"),
               "empty_like": ("dtype", "order", "subok", "shape"),
               "ones_like": ("dtype", "order", "subok", "shape"),
               "full_like": ("fill_value", "dtype", "order", "subok", "shape")}
_FILL = {"zeros": 0.0, "empty": 0.0, "ones": 1.0, "zeros_like": 0.0, "empty_like": 0.0,
         "ones_like": 1.0}


def _allocation(name):
    """numpy.<name> for f's view: a Buffer where NumPy would make a C-ordered float array;
    NumPy's own result for any other dtype, order or template (a layer number's *_like is
    already a buffer of its layer)."""
    numpy_function = getattr(np, name)
    like = name.endswith("_like")

    def allocate(first, *args, **kwargs):
        given = dict(zip(_PARAMETERS[name], args), **kwargs)
        if like and is_layer(first):
            return numpy_function(first, *args, **kwargs)
        dtype = given.get("dtype")
        if dtype is None and like and not isinstance(first, Buffer):
            dtype = np.asarray(first).dtype
        plain = (not _float_dtype(dtype) or given.get("order") not in (None, "C", "F", "K", "A")
                 or given.get("like") is not None or given.get("subok") is False)
        if plain:
            return numpy_function(first, *args, **kwargs)
        shape = (np.shape(first) if given.get("shape") is None else given["shape"]) if like else first
        order = given.get("order")
        if like and order in (None, "K", "A") and isinstance(first, np.ndarray) and not first.flags.c_contiguous \
                and first.flags.f_contiguous:
            order = "F"  # *_like of an F-ordered array is laid out so, as NumPy's
        return _buffer(shape, given["fill_value"] if "fill_value" in given else _FILL[name], order)
    allocate.__name__ = name
    return allocate


BUFFER_ALLOCATIONS = {name: _allocation(name) for name in ALLOCATIONS}


def _array_maker(name):
    """numpy.<name> (array, asarray, asanyarray, ascontiguousarray, asfortranarray) for f's
    view. An array of a layer: asarray and asanyarray give it back itself, ascontiguousarray
    (asfortranarray) too where its entries lie in C (F) order, else a copy in that order,
    array a copy (np.copy, order 'K'), as NumPy's do for an ndarray (an object array would
    be a copy every time). Anything else: NumPy's result, a Buffer when it is an object
    array holding numbers of a layer (np.array([[d0, d1], [d1, d2]])), so that every NumPy
    function sees it as one number of that layer (np.linalg.eigvalsh takes it)."""
    numpy_function = getattr(np, name)

    def make(a, *args, **kwargs):
        if is_layer(a) and not args and _keeps_float64(kwargs.get("dtype")) and \
                set(kwargs) <= {"dtype", "copy", "order", "subok"}:
            return _as_array(name, a, kwargs.get("copy", True if name == "array" else None), kwargs.get("order"))
        out = numpy_function(a, *args, **kwargs)
        if type(out) is np.ndarray and out.dtype == object and any(is_layer(item) for item in out.flat):
            return out.view(Buffer)
        return out
    make.__name__ = name
    return make


def _as_array(name, a, copy, order):
    """NumPy's choice for an ndarray a, on an array of a layer: a copy laid out by `order`
    (None: 'K'), or a itself where no copy is asked for and its layout already fits. (A float
    dtype asked for goes to NumPy, whose conversion raises LostDerivative.)"""
    if name == "ascontiguousarray":
        order = "C"
    elif name == "asfortranarray":
        order = "F"
    if copy:
        return np.copy(a, order=order or "K")
    value = a
    while is_layer(value):
        value = value.value
    flags = value.flags if isinstance(value, np.ndarray) else None
    if flags is None or order in (None, "K", "A") or (order == "C" and flags.c_contiguous) or \
            (order == "F" and flags.f_contiguous):
        return a
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    return np.copy(a, order=order)


def _keeps_float64(dtype):
    """Whether asking for this dtype leaves a float64 array as it is (None, float64)."""
    return dtype is None or np.dtype(dtype) == np.float64


ARRAY_MAKERS = {name: _array_maker(name) for name in ("array", "asarray", "asanyarray",
                                                      "ascontiguousarray", "asfortranarray")}


def _dispatching_also(name, parameters):
    """numpy.<name> for f's view, where NumPy's dispatcher does not look at these parameters
    (name -> position; np.interp's left and right): when one of them carries a derivative,
    the call goes to that layer's implementation, as NumPy would send it were it dispatched."""
    numpy_function = getattr(np, name)

    def call(*args, **kwargs):
        given = [args[i] if i < len(args) else kwargs.get(k) for k, i in parameters.items()]
        layers = [x for x in given if is_layer(x)]
        if layers:
            leader = max(layers, key=lambda x: x.tag)
            return leader.__array_function__(numpy_function, (type(leader),), args, kwargs)
        return numpy_function(*args, **kwargs)
    call.__name__ = name
    return call


UNDISPATCHED = {name: _dispatching_also(name, parameters)
                for name, parameters in (("interp", {"left": 3, "right": 4}),)}

# NumPy functions that move or write entries without arithmetic: on a Buffer, NumPy's own
# object-array code (views stay views of the buffer, in-place writes land in it)
STRUCTURAL = frozenset(
    getattr(np, name) for name in (
        "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze",
        "expand_dims", "broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
        "flip", "fliplr", "flipud", "rot90", "roll", "take", "take_along_axis", "repeat",
        "tile", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "split",
        "array_split", "hsplit", "vsplit", "dsplit", "copy", "copyto", "fill_diagonal", "put",
        "putmask", "place", "put_along_axis", "shape", "ndim", "size", "insert", "delete",
        "append", "pad", "where", "select", "tril", "triu", "diag", "diagflat", "sort",
        "partition"))


class _NumpyWithBuffers(types.ModuleType):
    """numpy, except that its allocation functions (those in `replaced`) make Buffers."""

    def __init__(self, name, replaced):
        super().__init__(name)
        self._replaced = replaced

    def __getattr__(self, name):
        if name in self._replaced:
            return self._replaced[name]
        return getattr(np, name)


# for a function that assigns into something: allocations and array makers; for any other,
# the array makers alone
NUMPY_WITH_BUFFERS = _NumpyWithBuffers("numpy", {**UNDISPATCHED, **BUFFER_ALLOCATIONS, **ARRAY_MAKERS})
NUMPY_WITH_ARRAYS = _NumpyWithBuffers("numpy", {**UNDISPATCHED, **ARRAY_MAKERS})
_BY_FUNCTION = {id(getattr(np, name)): name
                for name in ALLOCATIONS + tuple(ARRAY_MAKERS) + tuple(UNDISPATCHED)}


class _Globals(dict):
    """A function's globals, looked up live, with numpy (and its allocation functions
    imported by name) seen as making Buffers when the function assigns into something, and
    the user's own functions it calls (with libraries, other packages' functions and
    modules too) run over views the same way."""

    def __init__(self, module_globals, allocates, libraries):
        super().__init__(__builtins__=_builtins_importing_the_view(
            module_globals.get("__builtins__", __builtins__), allocates), **{DOT: _dot})
        self.module_globals, self.allocates, self.libraries = module_globals, allocates, libraries
        self._seen = {}  # name -> (the module's value, its view) at the last look-up

    def __missing__(self, name):
        value = self.module_globals[name]  # KeyError: Python looks in the builtins next
        seen = self._seen.get(name)
        if seen is not None and seen[0] is value:  # live: the view of the value it has now
            return seen[1]
        view = self._view(value)
        self._seen[name] = (value, view)
        return view

    def _view(self, value):
        replaced = NUMPY_WITH_BUFFERS if self.allocates else NUMPY_WITH_ARRAYS
        if value is np:
            return replaced
        if id(value) in _BY_FUNCTION and value is getattr(np, _BY_FUNCTION[id(value)]):
            return getattr(replaced, _BY_FUNCTION[id(value)])
        return _view_of(value, self.libraries)


class StandInError(Exception):
    """An error a stand-in raises on purpose (a derivative it cannot give): it stands for
    every view, since one without the stand-in would differentiate the library's own
    iterations instead."""


# Hooks (value -> its stand-in, or None) installed by upper layers: dualad.scipy gives the
# functions and objects of SciPy that dualad differentiates (scipy.stats.norm, logsumexp,
# scipy.linalg.solve_triangular, ...) a stand-in that f's view sees instead; this layer
# never imports them.
STAND_INS: list = []


def _stand_in(value):
    for hook in STAND_INS:
        found = hook(value)
        if found is not None:
            return found
    return None


def _view_of(value, libraries):
    """value (a global or closure cell of a function over a view) as the view sees it: a
    stand-in of dualad.scipy's; the user's functions over views; with libraries, other
    packages' functions, modules, bound methods and objects (whose methods f calls:
    model.loglike) too."""
    stand_in = _stand_in(value)
    if stand_in is not None:
        return stand_in
    if isinstance(value, types.FunctionType):
        return with_buffers(value, libraries)
    if isinstance(value, types.ModuleType):
        # (without libraries, a module's stand-ins alone: so.brentq is the stand-in in
        # every view, never SciPy's iterations on duals)
        return _module_view(value, libraries) if _viewed_package(value.__name__) else value
    if not libraries:
        return value
    if isinstance(value, types.MethodType):
        return with_buffers(value, True)
    if isinstance(value, (type, types.BuiltinFunctionType)):
        return value
    view = object_view(value)
    return value if view is None else view


def object_view(obj):
    """obj as f's view sees it (self of a method that f calls, a statsmodels model): an
    instance of a subclass of its class made for it, sharing its attributes (__dict__), whose
    methods run over views too (self.cdf(...) inside Logit.loglike calls np.asarray). None
    for an object that cannot be seen so (no __dict__, slots, its own __getattribute__, a
    class of the standard library's or NumPy's)."""
    cls = type(obj)
    if not _viewed_package(cls.__module__) or getattr(cls, "__dualad_view_of__", None) is not None:
        return obj if getattr(cls, "__dualad_view_of__", None) is not None else None
    if cls.__getattribute__ is not object.__getattribute__ or "__dict__" not in dir(obj) or \
            hasattr(cls, "__slots__") or cls.__setattr__ is not object.__setattr__:
        return None
    view_class = _VIEW_CLASSES.get(cls)
    if view_class is None:
        try:
            view_class = type(cls.__name__, (cls,), {"__getattribute__": _viewed_attribute,
                                                     "__dualad_view_of__": cls, "__module__": cls.__module__})
        except TypeError:  # a class that cannot be subclassed
            return None
        _VIEW_CLASSES[cls] = view_class
    view = object.__new__(view_class)
    object.__setattr__(view, "__dict__", obj.__dict__)
    return view


_VIEW_CLASSES = weakref.WeakKeyDictionary()


def _viewed_attribute(self, name):
    value = object.__getattribute__(self, name)
    if isinstance(value, types.MethodType) and value.__self__ is self:
        inner = with_buffers(value.__func__, True)
        if inner is not value.__func__:
            return types.MethodType(inner, self)
    return value


class _ModuleView(types.ModuleType):
    """A module of another package as f's view sees it: its stand-ins, and with libraries
    its functions over views too."""

    def __init__(self, module, libraries):
        super().__init__(module.__name__)
        self._module, self._libraries = module, libraries

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if self._libraries:
            return _view_of(value, libraries=True)
        if isinstance(value, types.ModuleType):
            return _module_view(value, False) if _viewed_package(value.__name__) else value
        stand_in = _stand_in(value)
        return value if stand_in is None else stand_in


_MODULE_VIEWS: dict = {}


def _module_view(module, libraries=True):
    key = (module.__name__, libraries)
    view = _MODULE_VIEWS.get(key)
    if view is None or view._module is not module:
        view = _MODULE_VIEWS[key] = _ModuleView(module, libraries)
    return view


def _viewed_package(module_name):
    """Whether functions of this module run over a view when f calls them: the user's and
    other packages', not NumPy's (which dispatch to dualad themselves), the standard
    library's or dualad's."""
    top = (module_name or "").partition(".")[0]
    return not (top in sys.stdlib_module_names or top in ("dualad", "numpy", "numba"))


def _dot(a, b, *out):
    """a.dot(b) as the user's code spells it (rewrite.py): np.dot where a is an ndarray and
    b a number of some layer, which ndarray's method would turn into an object array."""
    if type(a) is np.ndarray and is_layer(b) and not out:
        return np.dot(a, b)
    return a.dot(b, *out)


def _builtins_importing_the_view(builtins, allocates):
    """The builtins with an __import__ that gives `import numpy as np` inside the function
    (a function-local import, common in published code) the same view of numpy as its
    globals have, and other packages' modules with their stand-ins."""
    names = dict(vars(builtins) if isinstance(builtins, types.ModuleType) else builtins)
    original = names["__import__"]
    replaced = NUMPY_WITH_BUFFERS if allocates else NUMPY_WITH_ARRAYS

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        module = original(name, globals, locals, fromlist, level)
        if module is np:
            return replaced
        # another package's module: its stand-ins (a local `from scipy.special import
        # logsumexp` gets dualad's, as a global import does)
        return _module_view(module, False) if isinstance(module, types.ModuleType) and \
            _viewed_package(module.__name__) and STAND_INS else module
    names["__import__"] = import_
    return names


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
    return _viewed_package(f.__module__) and not ("site-packages" in path or "dist-packages" in path)


_MADE = {True: weakref.WeakKeyDictionary(), False: weakref.WeakKeyDictionary()}  # by libraries


class OnDemand:
    """f for a transform: run as it is until it stores a dual number into a float array it
    allocated, and from then on (that call included, from its start) with_buffers(f)."""

    def __init__(self, f):
        self.f, self.buffered = f, None
        self.views_fail_as_f = False  # an error of f's own was rerun over views in vain

    def run(self, attempt):
        """attempt(f), or attempt over a view of f's globals when f needs one: it stored a
        dual in a float array it allocated, gave NumPy an object array of them, or made one
        of an array of a layer (np.asarray(x): a copy, where NumPy's would be x itself). The
        first run stops at the first such conversion when there is a view to rerun over (the
        object array's arithmetic would cost far more than the rerun). The view reaches
        other packages' functions too; where one of them fails over it, the view of the
        user's own functions alone runs (its conversions slow, and said so)."""
        if self.buffered is not None:
            return _warning_of_object_arrays(attempt, self.buffered)
        views = list(dict.fromkeys(with_buffers(self.f, libraries) for libraries in (True, False)))
        views = [v for v in views if v is not self.f]
        if views and STAND_INS and _names_a_stand_in(self.f):
            # f calls SciPy where only a stand-in differentiates (scipy.optimize.root): its
            # first run would fail inside SciPy, whose C code may print the error
            return self._over(views, attempt, None)
        conversions, start = ARRAY_CONVERSIONS[0], len(CONVERSION_SITES)
        RERUN_AT_CONVERSION.append(bool(views))
        first_error = None
        try:
            result = attempt(self.f)
        except ConversionRerun:
            if not views:  # not a rerun of ours (f is a view already): a stand-in's final
                raise      # refusal, or an enclosing transform's rerun
        except Exception as error:  # noqa: BLE001 - a library call that only its view (or a
            if not views or self.views_fail_as_f:  # stand-in, scipy.stats') differentiates
                raise                              # fails here
            if not (isinstance(error, (TypeError, ValueError)) and _lost_in_an_array(error)):
                first_error = error  # f's own error, unless a view runs where f did not
        else:
            if ARRAY_CONVERSIONS[0] == conversions or not views:
                self.buffered = self.f if ARRAY_CONVERSIONS[0] != conversions else None
                _warn_of_object_arrays(CONVERSION_SITES[start:])
                return result  # (not the user's function: NumPy's own conversions stand)
        finally:
            RERUN_AT_CONVERSION.pop()
            del CONVERSION_SITES[start:]
        return self._over(views, attempt, first_error)

    def _over(self, views, attempt, first_error):
        """attempt over the first view that runs (kept for the calls after this one)."""
        for k, view in enumerate(views):
            try:
                result = _warning_of_object_arrays(attempt, view)
            except (ConversionRerun, StandInError):  # an enclosing transform's first run
                raise                                # reruns; a stand-in's error stands
            except Exception:
                if k < len(views) - 1:
                    continue  # another package's function failed over its view
                if first_error is not None:
                    self.views_fail_as_f = True
                    raise first_error from None
                raise
            self.buffered = view
            return result


def _names_a_stand_in(f, depth=3):
    """Whether f's code (or that of the user's functions it names, `depth` deep) names a
    value that has a stand-in: a global or closure cell, or an attribute of a module it
    names, two modules deep (so.root, scipy.optimize.root, st.norm.logpdf)."""
    f = getattr(f, "func", f)  # a functools.partial
    f = getattr(f, "__func__", f)  # a bound method
    code = getattr(f, "__code__", None)
    if code is None or depth == 0:
        return False
    names = {n for inner in _codes(code) for n in inner.co_names}
    cells = [cell.cell_contents for cell in (f.__closure__ or ()) if _filled(cell)]
    values = [f.__globals__[n] for n in names if n in f.__globals__] + cells
    for value in values:
        if _stand_in(value) is not None:
            return True
        if isinstance(value, types.ModuleType):
            for n in names:
                inner = _attribute(value, n)
                if inner is not None and (_stand_in(inner) is not None or (
                        isinstance(inner, types.ModuleType) and any(
                            _stand_in(_attribute(inner, m)) is not None for m in names))):
                    return True
        elif isinstance(value, types.FunctionType) and value is not f and _users_own(value) \
                and _names_a_stand_in(value, depth - 1):
            return True
    return False


def _attribute(module, name):
    """module.name or None, without the warnings a module's __getattr__ gives for names it
    deprecates (f's code names `object` in dtype=object: numpy.object warns)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(module, name, None)


def _filled(cell):
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _warning_of_object_arrays(attempt, f):
    """attempt(f), warning (once per line) where it made object arrays of an array of duals."""
    start = len(CONVERSION_SITES)
    try:
        return attempt(f)
    finally:
        sites = CONVERSION_SITES[start:]
        del CONVERSION_SITES[start:]
        _warn_of_object_arrays(sites)


_WARNED: dict = {}  # warnings.warn_explicit's registry: each line is named once


def _warn_of_object_arrays(sites):
    """A SlowPathWarning for each line that made an object array of an array of duals,
    pointing at that line, with the rewrite that keeps the dual array."""
    for filename, line, function, into_buffer, shape in dict.fromkeys(sites):
        text = linecache.getline(filename, line).strip()
        if into_buffer:
            fix = (f"the array {function} allocated (np.zeros, np.empty, ...) holds Python objects once it "
                   "receives duals; allocate it with np.zeros_like(x) of the differentiated "
                   "input (or build the result with np.stack/np.concatenate), which keeps an "
                   "array of duals")
        elif ".dot(" in text:
            fix = ("ndarray.dot of a float array does not hand the call to dualad; write "
                   "`a @ b` or `np.dot(a, b)`, which do")
        elif with_buffers_reaches(filename):
            fix = ("write the conversion as np.asarray(x) (dualad keeps the dual array there) "
                   "or keep x as it is")
        else:
            fix = ("this is not your own code, which dualad reruns with np.asarray keeping the "
                   "dual array; call your own NumPy code instead of this function, or "
                   "differentiate it in compiled code")
        warnings.warn_explicit(
            f"`{text or '...'}` in {function} made an object array of scalar duals from a dual "
            f"array of shape {shape}: NumPy then runs every operation on it entry by entry in "
            f"Python, far slower than on the dual array. {fix[0].upper()}{fix[1:]}.",
            SlowPathWarning, filename, line, registry=_WARNED)


def with_buffers_reaches(filename):
    """Whether functions of this file are the user's own (with_buffers reruns them)."""
    return not ("site-packages" in filename or "dist-packages" in filename or
                filename.startswith(sys.prefix) or filename.startswith("<"))


def _lost_in_an_array(error):
    """Whether a dual number was converted to a float (NumPy storing it in a float array
    raises ValueError with the conversion's LostDerivative as its cause), or an object array
    of them reached a NumPy routine that takes floats only (np.linalg.det(np.array([[d, ...]]))
    raises NumPy's casting error from dtype('O'))."""
    return (isinstance(error, LostDerivative) or isinstance(error.__cause__, LostDerivative) or
            (isinstance(error, TypeError) and "from dtype('O')" in str(error)))


def with_buffers(f, libraries=False):
    """f, run over a view of its globals in which NumPy's allocations make Buffers and its
    array makers keep arrays of duals (see the module docstring); with libraries, another
    package's function too (its allocations NumPy's), and the functions and modules of
    other packages that the view's functions call. f itself when it is not such a Python
    function (or a bound method or functools.partial of one), or writes global variables."""
    if isinstance(f, functools.partial):
        inner = with_buffers(f.func, libraries)
        return f if inner is f.func else functools.partial(inner, *f.args, **f.keywords)
    if isinstance(f, types.MethodType):
        inner = with_buffers(f.__func__, libraries)
        if inner is f.__func__:
            return f
        owner = object_view(f.__self__) if libraries else f.__self__
        return types.MethodType(inner, f.__self__ if owner is None else owner)
    if not isinstance(f, types.FunctionType) or hasattr(f, "__dualad_buffers__") or \
            not _viewed_package(f.__module__):
        return f
    own = _users_own(f)
    if not (own or libraries):
        return f
    made = _MADE[libraries].get(f)
    if made is not None:
        return made
    writes, stores, nonlocal_writes = _reads(f.__code__)
    if writes:
        return f
    namespace = _Globals(f.__globals__, stores and own, libraries)
    closure = f.__closure__
    replaced = [i for i, (name, cell) in enumerate(zip(f.__code__.co_freevars, closure or ()))
                if name not in nonlocal_writes and _holds_viewed(cell, libraries)]

    if own:  # the user's own code: its a.dot(b) calls dispatch (rewrite.py)
        code, closure = dispatching_code(f, closure)
        replaced = [code.co_freevars.index(f.__code__.co_freevars[i]) for i in replaced]
    else:
        code = f.__code__
    if not replaced:
        g = _rebuilt(f, code, namespace, closure)
    else:
        # a closure cell holding one of the user's functions (with libraries, a function,
        # method or object of another package's): read at each call (the enclosing scope
        # may rebind it), as a new cell holding its view
        def g(*args, **kwargs):
            cells = list(closure)
            for i in replaced:
                cells[i] = types.CellType(_view_of(closure[i].cell_contents, libraries))
            return _rebuilt(f, code, namespace, tuple(cells))(*args, **kwargs)
        functools.update_wrapper(g, f)
    g.__wrapped__, g.__dualad_buffers__ = f, True
    _MADE[libraries][f] = g
    return g


def _holds_viewed(cell, libraries):
    try:
        value = cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return _view_of(value, libraries) is not value


def _rebuilt(f, code, namespace, closure):
    g = types.FunctionType(code, namespace, f.__name__, f.__defaults__, closure)
    g.__kwdefaults__, g.__doc__, g.__qualname__ = f.__kwdefaults__, f.__doc__, f.__qualname__
    g.__dict__.update(f.__dict__)
    g.__dualad_buffers__ = True
    return g
