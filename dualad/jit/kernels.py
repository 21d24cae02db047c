"""Compiled forward-mode transforms: each returns a numba dispatcher.

The kernel seeds duals inside compiled code, calls the user's @njit function (numba
re-specialises it, and every @njit function it calls, for dual arguments) and reads the
partials back. The result takes and returns plain float64 scalars and arrays, so it is
callable from Python and from other @njit code (Newton's method written entirely in numba).

    derivative(f)(x, *args)       x scalar               -> f'(x)        scalar or (m,)
    jvp(f)(x, v, *args)           x scalar or (n,)       -> (f(x), J·v)
    second_derivative(f)(x, *args) x scalar              -> f''(x)       scalar (HyperDual)
    hvp(f)(x, v, *args)           x (n,), f scalar       -> H·v          (n,)   (HyperDual, ε2 = v)
    hessian(f)(x, *args)          x (n,), f scalar       -> H            (n, n) (HyperDual blocks)
    value_and_grad(f)(x, *args)   x (n,) or scalar        -> (f, ∇f)
    grad(f)(x, *args)                                     -> ∇f           like x
    jacfwd(f)(x, *args)           x (n,), f(x) (m,) or () -> J            (m, n) or (n,)

The chunk (partials per pass) is a compile-time constant of each kernel.

A kernel pickles as the call that made it (pickled_as, reference): the process that unpickles
it makes it again there, from the user's function found by its module and name.
"""

import importlib
import inspect
import pickle
import re
import sys

import numba
import numpy as np
from numba import _dispatcher
from numba.core import types
from numba.core.errors import NumbaError, TypingError

from . import numpy_overloads, overloads, protocol  # noqa: F401  (register the dual overloads)
from .cache import attach, overload, register_jitable, set_key
from .intrinsics import unit_tuple
from .overloads import ARRAYS, DUALS
from .promote import promoting
from .protocol import as_dual_array
from .tuples import as_input, flat_input, hessian_like_input, input_size, shaped_like_input
from .types import (READ_ONLY_INPUT, DualArrayType, DualMatrixType, DualTensorType, DualType,
                    HyperDualType, SeedArrayType, compiled_only, make_dual, make_dual_array, make_hyper,
                    make_hyper_seed_array, make_hyper_sym, make_seed_array)

# Partials per forward pass. Inside njit code a kernel's width is fixed when it compiles
# (numba compiles every branch a kernel could take at run time): DEFAULT_CHUNK. Called from
# Python a kernel picks per N (dualad.dispatch) and compiles that width on first use: all N
# partials in one pass up to ONE_PASS inputs, in the narrowest of a few WIDTHS that holds N
# (N = 10: one pass of 12, not two of 8; a few widths, so that calls at many N compile a few
# kernels), passes of DEFAULT_CHUNK beyond (wider passes spill registers and are slower:
# docs/decisions/0005-measured-constants-in-code.md).
DEFAULT_CHUNK = 8
WIDTHS = (1, 2, 4, 8, 12)
ONE_PASS = WIDTHS[-1]


def chunk_for(n_in):
    """The forward width for n_in inputs, called from Python."""
    return next((w for w in WIDTHS if w >= n_in), DEFAULT_CHUNK)

_MARK = "dualad: cannot compile this derivative kernel"  # in every message _with_hint explains


# ---- functions used inside kernels, given their meaning per type by the overloads below --------------
seed = compiled_only("kernels", "seed")            # seed(x, lo, chunk): x as duals seeded on lo..lo+chunk
out_value = compiled_only("kernels", "out_value")  # the primal of f's output
out_partial = compiled_only("kernels", "out_partial")  # partial k of f's output: float or (m,) array
jacobian_for = compiled_only("kernels", "jacobian_for")  # (out, n): a Jacobian shaped f's output + (n,)
store_partials = compiled_only("kernels", "store_partials")  # jac[..., lo + j] = partial j of f's output, j < count
components_of = compiled_only("kernels", "components_of")  # an array of duals' components (..., width)
store_block = compiled_only("kernels", "store_block")  # write a hyper-dual output's ε1ε2 block into H
seed_direction = compiled_only("kernels", "seed_direction")  # x as duals with the one tangent v
seed_hvp = compiled_only("kernels", "seed_hvp")  # x as hyper-duals: ε1 = unit chunk, ε2 = v
out_eps12 = compiled_only("kernels", "out_eps12")  # entry k of a scalar hyper-dual output's ε1ε2 block
check_arity = compiled_only("kernels", "check_arity")  # (args, needed): argnums within the arguments
scalar_input = compiled_only("kernels", "scalar_input")  # (x, transform name): x must be a scalar
checked_input = compiled_only("kernels", "checked_input")  # (x): a typing error naming why x cannot be seeded


def _input_problem(x):
    """Why x (a flat input's numba type) cannot be seeded, or None when it can."""
    if isinstance(x, (types.Float, types.Integer)):
        return None
    if isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64:
        return None
    if isinstance(x, types.Array) and isinstance(x.dtype, types.Integer):
        return "integer arrays are not differentiable: pass x.astype(np.float64)"
    if isinstance(x, DUALS):
        return ("a compiled transform of a compiled transform (nested duals) is not supported: "
                "pass jit=False to the outer transform")
    return (f"compiled transforms differentiate a float, a 1-D float64 array or a tuple of "
            f"them, not {x} (called from Python, an n-D float64 array is differentiated as its "
            f"flat view; inside njit code pass x.ravel() and reshape it in f); the Python path "
            f"(jit=False) takes any shape and dtype")


@overload(checked_input)
def _checked_input(x):
    problem = _input_problem(x)
    if problem:
        raise TypingError(problem)
    return lambda x: None


@overload(seed)
def _seed(x, lo, chunk):
    if not isinstance(chunk, types.IntegerLiteral):
        return None  # numba retries with the literal chunk
    width = chunk.literal_value
    problem = _input_problem(x)
    if problem:
        raise TypingError(problem)
    if isinstance(x, types.Array):
        return lambda x, lo, chunk: make_seed_array(x, lo, 1, width)
    return lambda x, lo, chunk: make_dual(x, unit_tuple(-lo, width))


@overload(seed_direction)
def _seed_direction(x, v):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, v: make_dual(float(x), (float(v),))
    if isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64:
        def array(x, v):
            if v.shape != x.shape:
                raise ValueError("jvp: the tangent's shape differs from the primal's")
            tangent = np.ascontiguousarray(v).astype(np.float64).reshape((x.size, 1))
            # a copy: f may assign into its argument, which must not change the caller's x
            return make_dual_array(x.copy(), tangent, make_dual(0.0, (0.0,)))
        return array
    raise TypingError(f"compiled jvp takes a float or a 1-D float64 array, not {x}")


@overload(seed_hvp)
def _seed_hvp(x, v, lo, chunk):
    if not isinstance(chunk, types.IntegerLiteral):
        return None
    width = chunk.literal_value
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, v, lo, chunk: make_hyper(float(x), (1.0,), (float(v),), (0.0,))
    if isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64:
        def array(x, v, lo, chunk):
            like = make_hyper(0.0, unit_tuple(-1, width), (0.0,), unit_tuple(-1, width))
            # components per element: ε1 (width) | ε2 = v_i (1) | ε1ε2 (width × 1)
            m = x.size
            components = np.zeros((m, 2 * width + 1))
            for i in range(lo, min(lo + width, m)):
                components[i, i - lo] = 1.0
            components[:, width] = v
            return make_dual_array(x.copy(), components, like)  # a copy, as in seed_direction
        return array
    raise TypingError(f"compiled hvp takes a float or a 1-D float64 array, not {x}")


def _check_arity(args, needed, error=ValueError):
    """An error unless the kernel got at least `needed` arguments (argnums in range)."""
    if len(args) < needed:
        raise error(f"argnums asks for argument {needed - 1}, but the kernel was called with "
                    f"{len(args)} argument(s)")


def seeded_input(f):
    """prepare(x, seeded, args) -> what f receives, as_input(x, seeded), where an f that
    assigns into its (array) argument gets the seeded duals materialised into an array of its
    own (NumPy semantics: f works on its own copy). Seeds are lazy and read-only, which is
    fastest for every other f; numba decides per argument types, when it types the call.

    Kernels call f(prepare(x, seeded, args), *args) themselves. A function between a kernel
    and f would be a dispatcher of its own, and numba links each callee's code into its
    caller's module and optimises the whole again: f's code once more per level (for a large
    f, a seeded call between them is about a third of its first Jacobian's LLVM time:
    docs/decisions/0001-where-cold-time-goes.md)."""
    def prepare(x, seeded, args):
        raise TypeError("dualad.jit.kernels.seeded_input's function runs inside compiled kernels only")

    def typing(x, seeded, args):
        if isinstance(x, types.Array) or isinstance(seeded, ARRAYS):
            if getattr(f, _WRITES_INPUT, False):
                return materialised
            try:
                f.get_call_template((_input_type(x, seeded),) + tuple(args.types), {})
            except (NumbaError, NotImplementedError) as err:
                if READ_ONLY_INPUT in str(err):
                    _remember_writes_input(f)
                    return materialised
        return lambda x, seeded, args: as_input(x, seeded)

    # f's own copy of the seeded duals (a tuple input's leaves become views of that copy)
    materialised = lambda x, seeded, args: as_input(x, as_dual_array(seeded))  # noqa: E731

    overload(prepare, strict=False)(typing)
    return set_key(prepare, f)  # the overload is its meaning


# Set on a user's function that assigns into its argument (or views it writably): every
# other kernel of it (another dual type, the tape) gives it a materialised input without
# typing it on a seed first, a typing that fails late, after compiling the seed's overloads
# that are never used. Materialising is correct for any f; the seed is only faster.
_WRITES_INPUT = "__dualad_writes_input__"


def _remember_writes_input(f):
    try:
        setattr(f, _WRITES_INPUT, True)
    except (AttributeError, TypeError):  # f takes no attributes: every kernel asks again
        pass


def _input_type(x, seeded):
    """The numba type of as_input(x, seeded): what f receives."""
    from numba.core.registry import cpu_target

    context = cpu_target.typing_context
    return context.resolve_function_type(context.resolve_value_type(as_input), (x, seeded), {}).return_type


@overload(check_arity)
def _check_arity_compiled(args, needed):
    if not isinstance(needed, types.IntegerLiteral):
        return None  # numba retries with the literal
    _check_arity(args, needed.literal_value, TypingError)
    return lambda args, needed: None


@overload(scalar_input)
def _scalar_input(x, what):
    if isinstance(x, (types.Float, types.Integer, DualType, HyperDualType)):
        return lambda x, what: None  # a dual scalar: seed says that nesting is not compiled
    name = getattr(what, "literal_value", "this transform")
    raise TypingError(f"{name} takes a scalar input; got {x}. Use jacfwd, grad or jvp for array "
                      "inputs")


@overload(out_eps12)
def _out_eps12(out, k):
    if isinstance(out, HyperDualType):
        return lambda out, k: out.eps12[k]
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out, k: 0.0  # f does not depend on x
    raise TypingError(f"hvp needs the function to return a scalar, not {out}")


@overload(out_value)
def _out_value(out):
    if isinstance(out, DualType):
        return lambda out: out.value
    if isinstance(out, ARRAYS + (DualMatrixType, DualTensorType)):
        return lambda out: out.values.copy()
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out: float(out)
    if isinstance(out, types.Array) and isinstance(out.dtype, (types.Float, types.Integer)):
        return lambda out: out.astype(np.float64)
    raise TypingError(f"the differentiated function returned {out}: dualad differentiates "
                      "functions that return a float or a 1-D, 2-D or 3-D array of floats")


@overload(out_partial)
def _out_partial(out, k):
    if isinstance(out, DualType):
        return lambda out, k: out.partials[k]
    if isinstance(out, (DualArrayType, SeedArrayType)) and isinstance(out.element, DualType):
        return lambda out, k: as_dual_array(out).components[:, k].copy()
    if isinstance(out, DualMatrixType) and isinstance(out.element, DualType):
        return lambda out, k: out.components[:, :, k].copy()
    if isinstance(out, DualTensorType) and isinstance(out.element, DualType):
        return lambda out, k: out.components[:, :, :, k].copy()
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out, k: 0.0
    if isinstance(out, types.Array):
        return lambda out, k: np.zeros(out.shape)
    return None


def compile_kernel(kernel, f, python_equivalent):
    """njit the kernel, cached on disk when the user's function is, with the jit=False hint.

    python_equivalent (the same transform on the Python path) is what the kernel means when
    user code that calls it runs on the Python path (see dualad.twin).
    """
    compiled = _with_hint(_njit_like(kernel, f))
    compiled.__dualad_python__ = python_equivalent
    return compiled


def _njit_like(fn, f):
    """numba.njit(fn), cached on disk, keyed by the user's function f, when f is (cache.py)."""
    return attach(numba.njit(fn), f)


@overload(store_block)
def _store_block(out, hess, lo1, lo2):
    """H[lo1 + i, lo2 + j] = H[lo2 + j, lo1 + i] = ε1ε2 block of the scalar output."""
    if isinstance(out, HyperDualType) and out.symmetric:
        width = out.n1

        def symmetric(out, hess, lo1, lo2):
            n, k = hess.shape[0], 0
            for i in range(width):
                for j in range(i, width):
                    if lo1 + j < n:
                        hess[lo1 + i, lo1 + j] = hess[lo1 + j, lo1 + i] = out.eps12[k]
                    k += 1
        return symmetric
    if isinstance(out, HyperDualType):
        width1, width2 = out.n1, out.n2

        def general(out, hess, lo1, lo2):
            n = hess.shape[0]
            for i in range(min(width1, n - lo1)):
                for j in range(min(width2, n - lo2)):
                    hess[lo1 + i, lo2 + j] = hess[lo2 + j, lo1 + i] = out.eps12[i * width2 + j]
        return general
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out, hess, lo1, lo2: None  # f does not depend on x here: H stays 0
    raise TypingError(f"hessian needs the function to return a scalar, not {out}")


# What numba raises when it cannot compile code: typing errors, numba's own unsupported
# features (NotImplementedError), and np.linalg without scipy (ImportError).
_COMPILE_ERRORS = (NumbaError, NotImplementedError, ImportError)


def _with_hint(kernel):
    """Make numba's compile error on the first call from Python name its cause first and say
    whether the Python path works (it is tried on the same arguments: jit=False is only
    suggested when it computes the derivative)."""
    compile_for_args = kernel._compile_for_args

    def compile_with_hint(*args, **kwargs):
        try:
            return compile_for_args(*args, **kwargs)
        except _COMPILE_ERRORS as err:
            if _MARK in str(err):  # raised by a nested kernel, explained already
                raise
            if kernel.py_func.__code__.co_flags & inspect.CO_VARARGS:  # numba packs *args
                args = args[:-1] + tuple(args[-1])
            message = _explained(str(err), getattr(kernel, "__dualad_python__", None), args)
            if isinstance(err, NumbaError):
                err.patch_message(message)
                raise
            raise type(err)(message) from err
        except AttributeError as err:
            call = _failed_call(err)
            if call is None:
                raise
            if kernel.py_func.__code__.co_flags & inspect.CO_VARARGS:
                args = args[:-1] + tuple(args[-1])
            report = f"{call}: numba's own implementation does not take arrays of duals ({err})"
            raise TypingError(_explained(report, getattr(kernel, "__dualad_python__", None), args)) from err

    kernel._compile_for_args = compile_with_hint
    return kernel


def _failed_call(err):
    """The call numba was typing when err escaped from one of its own templates (numba's
    np.convolve reads .dtype of its arguments, which arrays of duals lack, and numba passes
    the AttributeError on), as "name(argument types)": the outermost NumPy function among
    the calls being typed, else the innermost call; None when it did not come from typing."""
    calls, tb = [], err.__traceback__
    while tb is not None:
        names = tb.tb_frame.f_locals
        if "fnty" in names and "pos_args" in names:  # numba's TypeInferer.resolve_call
            key = getattr(names["fnty"], "typing_key", names["fnty"])
            text = f"{getattr(key, '__name__', key)}({', '.join(map(str, names['pos_args']))})"
            calls.append((getattr(key, "__module__", None) or "", text))
        tb = tb.tb_next
    numpy_calls = [text for module, text in calls if module.split(".")[0] == "numpy"]
    return numpy_calls[0] if numpy_calls else (calls[-1][1] if calls else None)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NOISE = ("During:", "File ", "raised from", "<source elided>", "There are ", "- Of which",
          "Overload ", "With argument", "Rejected as", "No implementation of function Function(<function")


_DUAL_KINDS = ("Dual(", "DualArray(", "DualMatrix(", "SeedArray(", "HyperDual(", "HyperSeedArray(", "Active",
               "Tracer")


def _cause(report):
    """The innermost error of numba's nested report: the lines after the last "Failed in
    nopython mode pipeline", preferring a specific error an overload raised."""
    lines = [line.strip() for line in _ANSI.sub("", report).splitlines()]
    starts = [i for i, line in enumerate(lines) if line.startswith("Failed in nopython")]
    block = []
    for line in lines[starts[-1] + 1 if starts else 0:]:
        if line.startswith("During:") and block:
            break
        if line and not line.startswith(_NOISE):
            block.append(line)
    specific = [line.split("Error: ", 1)[1] for line in block if "Error: " in line]
    cause = specific[-1] if specific else " ".join(block[:4])
    # the call on duals that failed, as numba typed it (np.partition's own "The first
    # argument must be an array-like" does not say which function it is)
    calls = [line[4:] for line in block if line.startswith(">>> ")]
    if (specific and calls and calls[-1].split("(", 1)[0] not in cause and
            any(kind in calls[-1] for kind in _DUAL_KINDS)):
        cause = f"{calls[-1]}: {cause}"
    if "Known signatures" in " ".join(block):
        cause += (" (that numba function was compiled with explicit signatures, for floats only, "
                  "so numba cannot re-specialise it for dual numbers)")
    return cause or lines[0]


_WORKS = ("The Python path computes this derivative (tried): pass jit=False, which runs a "
          "numba function as its pure-Python twin.")


def _explained(report, python_equivalent, args, works=_WORKS):
    """numba's report with its cause first and what works instead (`works`, when the Python
    equivalent runs on the same arguments)."""
    advice = ""
    if python_equivalent is not None:
        try:
            python_equivalent(*args)
            advice = works
        except Exception as python_error:  # noqa: BLE001 - reported, not swallowed
            first = (str(python_error).splitlines() or [""])[0][:300]
            advice = (f"The Python path (jit=False) fails on it too: {type(python_error).__name__}: "
                      f"{first}")
    return (f"{_MARK}: {_cause(report)}\n{advice}\n\n"
            f"numba's report:\n{report}")


def at_argnum(factory, f, argnum, python, *options):
    """factory(f, python, *options)'s kernel differentiating argument `argnum` of f instead
    of 0, or for a tuple of argnums the tuple of those arguments (results come back as
    tuples, JAX's convention). python is the same transform on the Python path, taking the
    caller's arguments.

    Kernels seed argument 0; f's arguments move to the front for them and back for the
    caller (static tuple slices, so numba sees fixed argument types). Every kernel calls
    f's promoting copy (promote.py): f's allocations that receive duals hold duals."""
    f = promoting(f)
    if isinstance(argnum, tuple):
        return _at_argnums(factory, f, argnum, python, *options)
    if argnum == 0:
        return factory(f, python, *options)
    after = argnum + 1
    needed = after

    def first_differentiated(x, *rest):
        return f(*rest[:argnum], x, *rest[argnum:])

    def python_first(x, *rest):
        return python(*rest[:argnum], x, *rest[argnum:])

    kernel = factory(_njit_like(first_differentiated, f), python_first, *options)

    def in_callers_order(*args):
        check_arity(args, needed)
        return kernel(*args[argnum:after], *args[:argnum], *args[after:])

    inner = kernel.__dualad_python__  # the kernel's meaning (a gradient factory's python is
                                      # value_and_grad's; the kernel's is the gradient's)

    def python_equivalent(*args):
        _check_arity(args, needed)
        return inner(*args[argnum:after], *args[:argnum], *args[after:])

    return compile_kernel(in_callers_order, f, python_equivalent)


def _at_argnums(factory, f, argnums, python, *options):
    """The kernel of the tuple (args[argnums[0]], args[argnums[1]], ...)."""
    if len(set(argnums)) != len(argnums):
        raise ValueError(f"argnums={argnums!r} names an argument twice: compiled kernels take "
                         "each argument once (jit=False gives a repeated argument's derivative "
                         "once per mention, as JAX does)")
    ascending = sorted(range(len(argnums)), key=lambda k: argnums[k])
    merge = _njit_like(lambda packed, rest: rest, f)  # packed's entries put back in place
    for k in ascending:  # in ascending position, so each position is final when inserted
        merge = _inserting(merge, argnums[k], k, f)
    rest_of = _njit_like(lambda args: args, f)  # the arguments not differentiated
    for position in sorted(argnums, reverse=True):
        rest_of = _removing(rest_of, position, f)
    pack = _njit_like(lambda args: (), f)
    for position in argnums:
        pack = _appending(pack, position, f)

    def packed_first(packed, *rest):
        return f(*merge(packed, rest))

    def python_packed_first(packed, *rest):
        args, rest = [], list(rest)
        for i in range(len(rest) + len(argnums)):
            args.append(packed[argnums.index(i)] if i in argnums else rest.pop(0))
        return python(*args)

    kernel = factory(_njit_like(packed_first, f), python_packed_first, *options)
    needed = max(argnums) + 1

    def in_callers_order(*args):
        check_arity(args, needed)
        return kernel(pack(args), *rest_of(args))

    inner = kernel.__dualad_python__

    def python_equivalent(*args):
        _check_arity(args, needed)
        rest = [a for i, a in enumerate(args) if i not in argnums]
        return inner(tuple(args[i] for i in argnums), *rest)

    return compile_kernel(in_callers_order, f, python_equivalent)


def _inserting(merge, position, k, f):
    def inserted(packed, rest):
        args = merge(packed, rest)
        return args[:position] + (packed[k],) + args[position:]
    return _njit_like(inserted, f)


def _removing(rest_of, position, f):
    after = position + 1

    def removed(args):
        rest = rest_of(args)
        return rest[:position] + rest[after:]
    return _njit_like(removed, f)


def _appending(pack, position, f):
    def appended(args):
        return pack(args) + (args[position],)
    return _njit_like(appended, f)


def _chunk_or_default(chunk):
    chunk = DEFAULT_CHUNK if chunk is None else chunk
    if not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive int; got {chunk!r}")
    return chunk


def derivative(f, python):
    def kernel(x, *args):
        scalar_input(x, "derivative")
        return out_partial(f(seed(x, 0, 1), *args), 0)

    return compile_kernel(kernel, f, python)


def jvp(f, python):
    """Kernel (x, v, *args) -> (f(x), J·v) in one Dual pass."""
    def kernel(x, v, *args):
        out = f(as_input(x, seed_direction(flat_input(x), flat_input(v))), *args)
        return out_value(out), out_partial(out, 0)

    return compile_kernel(kernel, f, python)


def second_derivative(f, python):
    def kernel(x, *args):
        scalar_input(x, "second_derivative")
        out = f(make_hyper_sym(float(x), (1.0,), (0.0,)), *args)
        hess = np.zeros((1, 1))
        store_block(out, hess, 0, 0)
        return hess[0, 0]

    return compile_kernel(kernel, f, python)


@register_jitable
def _prepared_hessian(x):
    """x's flat inputs, checked, and a zero n × n Hessian."""
    flat = flat_input(x)
    checked_input(flat)
    return flat, np.zeros((flat.size, flat.size))


@register_jitable
def compiled_takes_one_pass(n_in):
    """Whether a default Hessian kernel inside njit code takes its ONE_PASS-wide block for
    n_in inputs (n = 10: one HyperDual pass, not three blocks of 8); else its blocks of
    DEFAULT_CHUNK, which up to DEFAULT_CHUNK inputs are one symmetric block, narrower and
    faster (docs/decisions/0004-hessians-and-mode-costs.md)."""
    return DEFAULT_CHUNK < n_in <= ONE_PASS


def hessian(f, python, chunk=None, one_block=False):
    """Kernel (x, *args) -> H in HyperDual blocks of `chunk`: a symmetric diagonal block per
    chunk and a general block per pair of chunks. one_block: H is a single symmetric block
    (at most `chunk` inputs), so the general blocks' wider type is never compiled."""
    if chunk is None and not one_block:
        # inside njit code, where no width can be picked per call (Python's calls pick,
        # dualad.dispatch): both kernels compile, and each n takes the narrower that holds it
        # in one symmetric block (compiled_takes_one_pass)
        small = hessian(f, python, ONE_PASS, one_block=True)
        blocks = hessian(f, python, DEFAULT_CHUNK)

        def by_size(x, *args):
            if compiled_takes_one_pass(input_size(x)):  # (flat_input would copy a tuple's leaves)
                return small(x, *args)
            return blocks(x, *args)
        return compile_kernel(by_size, f, python)
    chunk = _chunk_or_default(chunk)
    prepare = seeded_input(f)

    if one_block:
        def kernel(x, *args):
            flat, hess = _prepared_hessian(x)
            if flat.size > chunk:
                raise ValueError("a one-block Hessian kernel got more inputs than its width")
            if flat.size > 0:  # diagonal_block inline: a dispatcher of its own costs a compile
                store_block(f(prepare(x, make_hyper_seed_array(flat, 0, 0, 1, chunk, 0), args), *args), hess, 0, 0)
            return hessian_like_input(hess, x)
    else:
        def diagonal_block(x, flat, hess, lo, args):
            # symmetric hyper-duals: half the ε1ε2 work
            store_block(f(prepare(x, make_hyper_seed_array(flat, lo, lo, 1, chunk, 0), args), *args), hess, lo, lo)

        diagonal_block = _njit_like(diagonal_block, f)

        def kernel(x, *args):
            flat, hess = _prepared_hessian(x)
            n = flat.size
            for lo1 in range(0, n, chunk):
                diagonal_block(x, flat, hess, lo1, args)
                for lo2 in range(lo1 + chunk, n, chunk):
                    out = f(prepare(x, make_hyper_seed_array(flat, lo1, lo2, 1, chunk, chunk), args), *args)
                    store_block(out, hess, lo1, lo2)
            return hessian_like_input(hess, x)

    return compile_kernel(kernel, f, python)


def hvp(f, python, chunk=None):
    """Kernel (x, v, *args) -> H(x)·v: ε1 seeds a chunk of unit directions, ε2 carries v, so
    the ε1ε2 block is a chunk of H·v (ceil(n / chunk) passes; H is never formed)."""
    chunk = _chunk_or_default(chunk)

    def kernel(x, v, *args):
        flat, direction = flat_input(x), flat_input(v)
        if direction.shape != flat.shape:
            raise ValueError("hvp: v and x have different shapes")
        n = flat.size
        product = np.zeros(n)
        for lo in range(0, n, chunk):
            out = f(as_input(x, seed_hvp(flat, direction, lo, chunk)), *args)
            for j in range(min(chunk, n - lo)):
                product[lo + j] = out_eps12(out, j)
        return shaped_like_input(product, x)

    return compile_kernel(kernel, f, python)


# numba compiles its own implementations of np.empty, min and max in every process that
# types a call to them (they have no disk cache); kernels, compiled for each user function,
# call them through these helpers, which load from dualad's cache with numba's code inside,
# so a new function's first grad or jacobian compiles none of them
# (docs/decisions/0005-measured-constants-in-code.md). Sizes are the arrays' own .size
# (tuples.size_of says why not np.size).
_empty = register_jitable(lambda shape: np.empty(shape))
_smaller = register_jitable(lambda a, b: min(a, b))
_larger = register_jitable(lambda a, b: max(a, b))


@overload(jacobian_for)
def _jacobian_for(out, n):
    if isinstance(out, DualType):
        return lambda out, n: _empty(n)
    if isinstance(out, ARRAYS + (DualMatrixType, DualTensorType)) and isinstance(out.element, DualType):
        return lambda out, n: np.empty(out.values.shape + (n,))
    if isinstance(out, (types.Float, types.Integer)):
        return lambda out, n: np.zeros(n)  # f does not depend on x: no partials to store
    if isinstance(out, types.Array):
        return lambda out, n: np.zeros(out.shape + (n,))
    if isinstance(out, types.List) and isinstance(out.dtype, DualType):
        return lambda out, n: np.empty((len(out), n))  # a right-hand side's list, as a vector
    raise TypingError(f"the differentiated function returned {out}: a compiled Jacobian takes "
                      "functions that return a float, a 1-D, 2-D or 3-D array of floats or a "
                      "list of floats")


@overload(components_of)
def _components_of(out):
    if isinstance(out, (DualMatrixType, DualTensorType)):
        return lambda out: out.components
    return lambda out: as_dual_array(out).components  # a seed array's materialised


@overload(store_partials)
def _store_partials(out, jac, lo, count):
    """Copied off the output's components, entry by entry: a copy of each partial's column
    and numba's broadcasting store `jac[..., k] = column` cost more than the forward pass
    itself in a small Jacobian (docs/decisions/0004-hessians-and-mode-costs.md)."""
    if isinstance(out, DualType):
        def scalar(out, jac, lo, count):
            for j in range(count):
                jac[lo + j] = out.partials[j]
        return scalar
    if isinstance(out, ARRAYS + (DualMatrixType, DualTensorType)) and isinstance(out.element, DualType):
        def array(out, jac, lo, count):
            components = components_of(out)  # (..., width): any strides (f may return a view)
            rows = jac.reshape((-1, jac.shape[-1]))  # jac is new, so C-contiguous
            for row, index in enumerate(np.ndindex(components.shape[:-1])):
                for j in range(count):
                    rows[row, lo + j] = components[index + (j,)]
        return array
    if isinstance(out, types.List) and isinstance(out.dtype, DualType):
        def entries(out, jac, lo, count):
            for row in range(len(out)):
                for j in range(count):
                    jac[row, lo + j] = out[row].partials[j]
        return entries
    if isinstance(out, (types.Float, types.Integer, types.Array)):
        return lambda out, jac, lo, count: None  # a constant: jacobian_for made zeros
    return None


_value_and_gradient = register_jitable(lambda value, gradient: (value, gradient))
_gradient_only = register_jitable(lambda value, gradient: gradient)


def value_and_grad(f, python, chunk=None):
    return _forward_gradient(f, python, chunk, _value_and_gradient)


def grad(f, python, chunk=None):
    """python: the Python path's value_and_grad, as for every gradient factory. One kernel of
    its own, not gradient_of(value_and_grad): a second dispatcher costs a compile, and its
    LLVM optimisation runs over the whole inner kernel again."""
    return _forward_gradient(f, lambda *args: python(*args)[1], chunk, _gradient_only)


def _forward_gradient(f, python, chunk, finish):
    """The forward gradient kernel (x, *args) -> finish(f, ∇f)."""
    chunk = _chunk_or_default(chunk)
    prepare = seeded_input(f)

    def kernel(x, *args):
        flat = flat_input(x)
        n = flat.size
        # the first pass runs before grad exists: numba frees nothing that the caller of a
        # raising function holds, so an exception in f leaks what is allocated before it
        out = f(prepare(x, seed(flat, 0, chunk), args), *args)
        value = out_value(out)
        grad = _empty(n)
        for lo in range(0, _larger(n, 1), chunk):  # one pass even for no inputs: f's value
            if lo > 0:
                out = f(prepare(x, seed(flat, lo, chunk), args), *args)
            for j in range(_smaller(chunk, n - lo)):
                grad[lo + j] = out_partial(out, j)
        return finish(value, shaped_like_input(grad, x))

    return compile_kernel(kernel, f, python)


def gradient_of(value_and_grad_kernel, f):
    """The kernel (x, *args) -> ∇f from a (value, gradient) kernel of either mode."""
    def kernel(x, *args):
        return value_and_grad_kernel(x, *args)[1]

    python = value_and_grad_kernel.__dualad_python__
    return compile_kernel(kernel, f, lambda *args: python(*args)[1])


def jacfwd(f, python, chunk=None):
    chunk = _chunk_or_default(chunk)
    prepare = seeded_input(f)

    def kernel(x, *args):
        flat = flat_input(x)
        n = flat.size
        out = f(prepare(x, seed(flat, 0, chunk), args), *args)
        jac = jacobian_for(out, n)
        for lo in range(0, n, chunk):
            if lo > 0:
                out = f(prepare(x, seed(flat, lo, chunk), args), *args)
            store_partials(out, jac, lo, _smaller(chunk, n - lo))
        return shaped_like_input(jac, x)

    return compile_kernel(kernel, f, python)


# ---- calls from Python: a kernel may run another compiled kernel there ---------------------------------
def call_compiled(kernel, args):
    """kernel's compiled code called from Python, past any choice called_from_python gave it."""
    return _dispatcher.Dispatcher.__call__(kernel, *args)


def called_from_python(kernel, call):
    """kernel as it is inside njit code, and call(*args, **kwargs) when Python calls it. What
    a kernel does inside njit code is compiled whole, every branch it may take at run time;
    from Python, call can pick, per call, the one compiled kernel the arguments need, and
    only that one is compiled (dualad.dispatch's picks of a mode and a width). The kernel
    becomes an instance of a subclass of its dispatcher class of its own, whose __call__ is
    call itself (no frame in between: a call from Python costs what call costs)."""
    base = type(kernel)
    kernel.__class__ = type(f"{base.__name__}CalledFromPython", (base,), {
        "__call__": staticmethod(call), "__module__": __name__,
        "__doc__": "A dispatcher whose calls from Python run dualad's pick; numba types and "
                   "compiles calls from njit code against its own function, as for any dispatcher."})
    return kernel


# ---- pickling: a kernel travels as the call that made it ---------------------------------------------
def pickled_as(kernel, rebuild, arguments):
    """Make kernel pickle as rebuild(*arguments()): the unpickling process makes the kernel
    again from what made it (compiling it, or loading it from the disk cache). numba's own
    pickling would send the kernel's Python function, whose typing needs overloads that
    dualad registered in this process only, so it failed to compile anywhere else. pickle
    looks __reduce_ex__ up on the object, so the instance's own is used; arguments() runs
    when the kernel is pickled and may refuse (reference)."""
    kernel.__reduce_ex__ = lambda proto: (rebuild, arguments())
    return kernel


def reference(f):
    """What to pickle for f so that another process gets the same function: f itself when it
    is a kernel that pickles as its call (pickled_as), else a reference to f by module and
    qualified name. A PicklingError naming the fix where f has no such name (a closure, a
    lambda, a function its name no longer refers to)."""
    if "__reduce_ex__" in getattr(f, "__dict__", {}):
        return f
    return _Named(*named(f))


def named(f):
    """(module, qualified name) by which another process finds f, a function or a numba
    dispatcher; a PicklingError naming the fix where there is none."""
    py = getattr(f, "py_func", f)
    module, qualname = getattr(py, "__module__", None), getattr(py, "__qualname__", repr(py))
    found = sys.modules.get(module) if module else None
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not f:
        what = ("a closure or a lambda" if "<" in qualname
                else f"not what {module}.{qualname} refers to")
        raise pickle.PicklingError(
            f"cannot pickle a dualad kernel of {qualname!r}: it is {what}, so another process "
            f"cannot find it by name. Define the function at module level (in an importable "
            f"module, or at the top level of your script) and apply the transform to it: its "
            f"kernel then pickles by the function's name and is compiled again, or loaded from "
            f"numba's cache, where it is unpickled.")
    return module, qualname


def resolve(module, qualname):
    """The object that module.qualname names, importing the module."""
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


class _Named:
    """A function pickled by module and qualified name (numba pickles a dispatcher's Python
    function by value, which gives the other process a copy, not the module's dispatcher)."""

    __slots__ = ("module", "qualname")

    def __init__(self, module, qualname):
        self.module, self.qualname = module, qualname

    def __reduce__(self):
        return resolve, (self.module, self.qualname)
