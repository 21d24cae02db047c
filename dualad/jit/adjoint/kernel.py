"""The generated adjoint as a numba dispatcher, made for each argument type it is called with.

    kernel(x, *args)  ->  adjoint(x, args)      njit; adjoint is a stub whose numba overload
                                               generates, for the arguments' types: the
                                               primal, typed by numba (inference.py), then the
                                               adjoint's source, compiled

The program (lower.py, ssa.py) is made once per function, when the kernel is made: a
construct outside the subset raises Unsupported then. What depends on types (which names
are floats, what a loop saves) is settled per signature, when numba types the call, from
Python or from other @njit code alike. The generated code uses NumPy's error model (inf at
a division by zero), as the tape's rules do.
"""

from __future__ import annotations

import linecache

import numba
from numba.core import types
from numba.core.errors import TypingError
from numba.core.extending import overload

from ..cache import attach, named, set_key
from .activity import active_names
from .generate import kernel_source, primal_source
from .inference import types_of
from .lower import lower
from .program import Unsupported
from .ssa import to_ssa

__all__ = ["program_of", "covers", "make_kernel", "JIT_OPTIONS"]

JIT_OPTIONS = {"error_model": "numpy", "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
_PROGRAMS = {}


def program_of(f):
    """The SSA program of f (a dispatcher or its Python function), made once."""
    py_func = getattr(f, "py_func", f)
    if py_func not in _PROGRAMS:
        _PROGRAMS[py_func] = to_ssa(lower(py_func))
    return _PROGRAMS[py_func]


def covers(f):
    """(True, "") where the generator handles f, else (False, the construct it does not)."""
    try:
        active_names(program_of(f).body)
    except Unsupported as err:
        return False, str(err)
    return True, ""


def _compiled(source, namespace, name, title):
    filename = f"<dualad adjoint: {title}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    # its compiled name is its source's hash: a kernel loaded from disk binds the same code
    return named(namespace[name], ("dualad adjoint", source))


def _specialised(program, x_type, arg_types, value):
    """The adjoint's Python function for these argument types, and its source."""
    if not (isinstance(x_type, types.Array) and x_type.ndim == 1 and x_type.dtype == types.float64):
        raise TypingError(f"the generated adjoint of {program.name} differentiates a 1-D float64 "
                          f"array, not {x_type}")
    defaults = [numba.typeof(program.defaults[p]) for p in program.params[len(arg_types):]
                if p in program.defaults]
    source, namespace = primal_source(program)
    primal = _compiled(source, namespace, "primal", f"{program.name} primal")
    typemap = types_of(primal, (x_type,) + tuple(arg_types) + tuple(defaults))
    source, namespace = kernel_source(program, typemap, len(arg_types), value)
    return _compiled(source, namespace, "kernel", f"{program.name} adjoint"), source


def make_kernel(f, value):
    """njit kernel(x, *args) -> (f(x, *args), ∇f) (value=True) or ∇f."""
    program = program_of(f)
    active_names(program.body)  # constructs no rule covers raise here, not at the first call

    def adjoint(x, args):
        raise TypeError("the generated adjoint runs inside compiled code only")

    sources = {}

    @overload(adjoint, jit_options=JIT_OPTIONS)
    def _adjoint(x, args):
        try:
            impl, source = _specialised(program, x, args.types, value)
        except Unsupported as err:
            raise TypingError(f"dualad adjoint: {err}") from err
        sources[(x,) + tuple(args.types)] = source
        return impl

    if value:
        def kernel(x, *args):
            return adjoint(x, args)
    else:
        def kernel(x, *args):
            return adjoint(x, args)

    set_key(adjoint, f, value)  # what the stub's overload generates: f's adjoint
    dispatcher = attach(numba.njit(kernel), f)  # on disk beside f's cache, keyed by f and its callees
    dispatcher.adjoint_sources = sources  # the generated source, per signature (for reading)
    return dispatcher
