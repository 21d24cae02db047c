"""The pure-Python twin of a numba function, for the Python path (jit=False).

A dispatcher's ``py_func`` still calls the other @njit functions it names, and those cannot
take Python duals. The twin is py_func rebuilt over a copy of its globals and closure cells in
which every numba dispatcher is replaced by its own twin (recursively), so the whole call tree
runs in Python on dual numbers. numba freezes globals at compile time, so a copy of the
globals means the same program. Compiled dualad kernels name their Python-path equivalent
in ``__dualad_python__``.

numba code calls Python's ``math`` module, which the compiled duals support; in the twin of
a numba function, ``math`` (and names imported from it) means ``dualad.math``, which keeps
derivatives where Python's math would convert to float.
"""

import math
import types

__all__ = ["is_dispatcher", "python_twin"]


def is_dispatcher(f):
    """Whether f is a numba dispatcher (dualad's kernels subclass numba's, jit/kernels.py)."""
    return hasattr(f, "py_func") and any(c.__module__.startswith("numba") for c in type(f).__mro__)


def python_twin(f):
    """The function to run on the Python path: a dispatcher's pure-Python twin; a plain
    function that names dispatchers, rebuilt over twins of them; anything else unchanged."""
    return _twin(f, {})


def _twin(f, made):
    if id(f) in made:
        return made[id(f)]
    if is_dispatcher(f):
        substitute = getattr(f, "__dualad_python__", None)
        if substitute is not None:
            made[id(f)] = substitute
            return substitute
        return _rebuild(f, f.py_func, made, numba_code=True)
    if isinstance(f, types.FunctionType) and _names_dispatchers(f):
        return _rebuild(f, f, made, numba_code=False)
    return f


def _dual_math(value):
    """dualad.math for Python's math module or one of its functions; None otherwise."""
    from . import math as dual_math  # a sibling module: import here, not at load (layering)

    if value is math:
        return dual_math
    if isinstance(value, types.BuiltinFunctionType) and getattr(math, value.__name__, None) is value:
        return getattr(dual_math, value.__name__, None)
    return None


def _names_dispatchers(py):
    return (any(is_dispatcher(py.__globals__.get(name)) for name in py.__code__.co_names) or
            any(is_dispatcher(cell.cell_contents) for cell in py.__closure__ or ()))


def _rebuild(key, py, made, numba_code):
    namespace = dict(py.__globals__)
    if numba_code:
        for name in py.__code__.co_names:
            substitute = _dual_math(namespace.get(name))
            if substitute is not None:
                namespace[name] = substitute
    twin = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__, py.__closure__)
    made[id(key)] = twin  # before recursing: mutual recursion reaches this twin
    for name in py.__code__.co_names:
        if is_dispatcher(namespace.get(name)):
            namespace[name] = _twin(namespace[name], made)
    if py.__closure__:
        twin = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__,
                                  _cells(py.__closure__, made))
        made[id(key)] = twin
    twin.__kwdefaults__ = py.__kwdefaults__
    twin.__doc__, twin.__qualname__ = py.__doc__, py.__qualname__
    return twin


def _cells(closure, made):
    if not closure:
        return closure
    return tuple(types.CellType(_twin(cell.cell_contents, made))
                 if is_dispatcher(cell.cell_contents) else cell for cell in closure)
