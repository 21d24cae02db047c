"""Forward-mode transforms with JAX's names, signatures and output shapes.

    jvp(f, primals, tangents)        -> (f(*primals), J·tangents)
    derivative(f)(x)                 -> f'(x)                      x scalar; shape f(x).shape
    second_derivative(f)(x)          -> f''(x)                     one HyperDual pass
    grad(f, argnums)(*args)          -> ∇f                         shape x.shape
    value_and_grad(f, argnums)       -> (f, ∇f)
    jacfwd(f, argnums)(*args)        -> J                          shape f.shape + x.shape
    jacobian(f, argnums, mode)       -> J                          mode "forward" | "auto"
    hessian(f, argnums)(*args)       -> H                          shape x.shape + x.shape
    hvp(f)(x, v)                     -> H(x)·v                     shape x.shape

argnums is an int or a tuple of ints (then results are tuples, JAX's convention). Forward
mode seeds `chunk` input directions per pass (ceil(N / chunk) passes); hessian evaluates
HyperDual blocks (ε1 chunk) × (ε2 chunk) on and above the block diagonal and mirrors the
rest. Every call draws a fresh tag, so nested transforms never confuse perturbations.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .dual import Dual
from .hyperdual import HyperDual
from .number import assign, is_layer, new_tag
from .twin import is_dispatcher, python_twin

__all__ = ["jvp", "derivative", "second_derivative", "grad", "value_and_grad", "jacfwd",
           "jacobian", "hessian", "hvp", "default_chunk", "default_hessian_chunk"]

# One pass of the Python path costs (number of operations) × (interpreter overhead) plus
# (elements of intermediates) × (chunk width) of NumPy work. Go as wide as this many tangent
# elements per input allow, so that few passes pay the overhead.
_TANGENT_BUDGET = 2 ** 20


def default_chunk(n_in):
    """Partials per pass for an N-input Jacobian on the Python path."""
    return max(1, min(n_in, _TANGENT_BUDGET // max(n_in, 1)))


def default_hessian_chunk(n_in):
    """Block width of a HyperDual Hessian: the ε1ε2 block costs n_in × chunk² per value."""
    return max(1, min(n_in, math.isqrt(_TANGENT_BUDGET // max(n_in, 1))))


def _path(f, jit, argnums):
    """(kernels, f): kernels is dualad.jit.kernels when f runs compiled, else None.

    jit=None compiles iff f is a numba dispatcher, jit=True compiles a plain function with
    numba, jit=False runs the Python path (a dispatcher's pure-Python twin, see twin.py).
    """
    use_jit = is_dispatcher(f) if jit is None else bool(jit)
    if not use_jit:
        return None, python_twin(f)
    if not isinstance(argnums, (int, np.integer)) or argnums < 0:
        raise ValueError(f"compiled transforms differentiate one argument, counted from 0 (got "
                         f"argnums={argnums!r}); pass jit=False for several or negative argnums")
    import numba

    from . import jit as compiled_path  # lazy: numba's types and overloads

    return compiled_path.kernels, (f if is_dispatcher(f) else numba.njit(f))


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def _check_input(x, position, f):
    """A differentiable input as float64; int scalars are promoted, anything else is a TypeError."""
    if is_layer(x):  # a number of an enclosing transform (nesting)
        return x
    try:
        arr = np.asarray(x)
    except TypeError as err:
        raise TypeError(f"argument {position} of {_name(f)}: {err}") from None
    kind = arr.dtype.kind
    if kind in "iu" and arr.ndim > 0:
        raise TypeError(
            f"argument {position} of {_name(f)} is an integer array (dtype {arr.dtype}), which "
            "cannot be differentiated (JAX's rule too); pass x.astype(float) if you mean to")
    if kind not in "fiu":
        what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes",
                "O": "Python objects"}.get(kind, f"dtype {arr.dtype}")
        raise TypeError(
            f"argument {position} of {_name(f)} holds {what} ({type(x).__name__} {x!r:.60}), "
            "which cannot be differentiated; pass real floats or ints, or leave this "
            "argument out of argnums")
    arr = arr.astype(np.float64, copy=False)  # float64 input is used as is, never written
    return arr[()] if arr.ndim == 0 else arr


def _plain(x):
    """A 0-d ndarray as a NumPy scalar (arr[..., 0] is always an array); anything else as is."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _read_output(out, tag, f):
    """(value, components) of f's output for this tag; components None where constant."""
    if is_layer(out):
        if out.tag == tag:
            return out.value, out.components
        if out.tag > tag:
            raise RuntimeError(f"{_name(f)} returned a dual number of an inner transform that "
                               "is still alive: a perturbation escaped its transform")
        return out, None
    if isinstance(out, (float, int, np.floating, np.integer)) and not isinstance(out, (bool, np.bool_)):
        return np.float64(out), None
    if isinstance(out, np.ndarray) and out.dtype.kind in "fiu":
        return out.astype(np.float64), None
    if isinstance(out, np.ndarray) and out.dtype == object:
        raise TypeError(f"{_name(f)} returned an object array (np.array([...]) of dual numbers); "
                        "build it with np.stack([...]) so it stays differentiable")
    raise TypeError(f"{_name(f)} returned {type(out).__name__} ({out!r:.60}); dualad "
                    "differentiates functions that return a float or an array of floats")


def _argnums(argnums, args, f):
    several = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if several else (argnums,)
    for i in nums:
        if not isinstance(i, (int, np.integer)) or not -len(args) <= i < len(args):
            raise ValueError(f"argnums={argnums!r} does not name a positional argument of "
                             f"{_name(f)} (called with {len(args)})")
    return tuple(int(i) % len(args) for i in nums), several


def _check_chunk(chunk):
    if chunk is not None and (not isinstance(chunk, (int, np.integer)) or chunk < 1):
        raise ValueError(f"chunk must be a positive int; got {chunk!r}")


class _Inputs:
    """The differentiated arguments seen as one flat vector of n entries."""

    def __init__(self, f, args, argnums):
        self.f = f
        self.args = list(args)
        self.nums, self.several = _argnums(argnums, args, f)
        self.xs = [_check_input(args[i], i, f) for i in self.nums]
        self.shapes = [x.shape if is_layer(x) else tuple(np.shape(x)) for x in self.xs]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.offsets = [sum(self.sizes[:i]) for i in range(len(self.sizes))]
        self.n = sum(self.sizes)

    def seed(self, k, lo, hi):
        """Identity columns lo..hi-1 of the flat input, restricted to argument k."""
        size, offset = self.sizes[k], self.offsets[k]
        seed = np.zeros((size, hi - lo))
        a, b = max(lo, offset), min(hi, offset + size)
        if a < b:
            seed[np.arange(a, b) - offset, np.arange(a, b) - lo] = 1.0
        return seed.reshape(self.shapes[k] + (hi - lo,))

    def call(self, make):
        """f(*args) with argument k replaced by make(k, x_k)."""
        args = list(self.args)
        for k, (i, x) in enumerate(zip(self.nums, self.xs)):
            args[i] = make(k, x)
        return self.f(*args)

    def split(self, flat, out_shape):
        """Cut the trailing flat axis of `flat` into one piece per argument."""
        pieces = [_plain(np.reshape(flat[..., o:o + s], out_shape + sh))
                  for o, s, sh in zip(self.offsets, self.sizes, self.shapes)]
        return tuple(pieces) if self.several else pieces[0]


def _jacobian_forward(f, args, argnums, chunk):
    """(f(*args), Jacobian pieces) by chunked Dual passes."""
    _check_chunk(chunk)
    inputs = _Inputs(f, args, argnums)
    width = chunk or default_chunk(inputs.n)
    tag = new_tag()
    blocks, value = [], None
    for lo in range(0, max(inputs.n, 1), width):
        hi = min(lo + width, inputs.n)
        out = inputs.call(lambda k, x: Dual._make(x, (inputs.seed(k, lo, hi),), tag))
        value, comps = _read_output(out, tag, f)
        blocks.append(np.zeros(np.shape(value) + (hi - lo,)) if comps is None else comps[0])
    flat = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=-1)
    return value, inputs.split(flat, tuple(np.shape(value)))


def _check_scalar(value, f, what):
    if np.shape(value) != ():
        raise TypeError(f"{what} needs {_name(f)} to return a scalar; it returned shape "
                        f"{np.shape(value)}. Use jacobian (or jacfwd) for array outputs")


def jacfwd(f, argnums=0, chunk=None, jit=None):
    """Jacobian by forward mode: jacfwd(f)(x).shape == f(x).shape + x.shape.

    Given a numba dispatcher (or jit=True) it returns a compiled kernel (scalar or 1-D input).
    """
    kernels, f = _path(f, jit, argnums)
    if kernels:
        return kernels.at_argnum(kernels.jacfwd, f, argnums, chunk)

    @functools.wraps(f)
    def jacobian_fn(*args):
        return _jacobian_forward(f, args, argnums, chunk)[1]

    return jacobian_fn


def jacobian(f, argnums=0, mode="auto", chunk=None, jit=None):
    """Jacobian of f with respect to args[argnums]; shape f(x).shape + x.shape.

    mode: "forward" (Dual passes, N/chunk of them), "reverse" (a tape and one sweep per
    output entry) or "auto" (dualad.choose_mode decides from N, M and the tape).
    """
    compiled = _compiled_mode(f, jit, mode, ("forward", "reverse"))
    if compiled == "reverse":
        return grad(f, argnums=argnums, jit=jit, mode="reverse")  # scalar outputs: J = ∇f
    if compiled:
        return jacfwd(f, argnums=argnums, chunk=chunk, jit=jit)
    f = python_twin(f)
    decisions = {}

    @functools.wraps(f)
    def jacobian_fn(*args):
        if _chosen(mode, args, decisions, lambda: _jacobian_mode(f, args, argnums, chunk)) == "reverse":
            return jacrev(f, argnums=argnums, jit=False)(*args)
        return jacfwd(f, argnums=argnums, chunk=chunk, jit=False)(*args)

    return jacobian_fn


def value_and_grad(f, argnums=0, chunk=None, jit=None, mode="auto"):
    """(f(*args), ∇f) for scalar-valued f; the gradient has the shape of args[argnums].

    mode: "forward", "reverse" (one sweep of a tape) or "auto" (dualad.choose_mode).
    Given a numba dispatcher (or jit=True) it returns a compiled kernel: forward mode, or with
    mode="reverse" a tape compiled into the kernel (scalar code).
    """
    compiled = _compiled_mode(f, jit, mode, ("forward", "reverse"))
    if compiled:
        return _compiled_gradient("value_and_grad", compiled, f, jit, argnums, chunk)
    f = python_twin(f)
    decisions = {}

    @functools.wraps(f)
    def value_and_grad_fn(*args):
        if _chosen(mode, args, decisions, lambda: _jacobian_mode(f, args, argnums, chunk, 1)) == "reverse":
            value, pullback = _vjp(f, args, argnums, "grad")
            _check_scalar(value, f, "grad")
            return value, pullback(np.float64(1.0))
        value, pieces = _jacobian_forward(f, args, argnums, chunk)
        _check_scalar(value, f, "grad")
        return value, pieces

    return value_and_grad_fn


def grad(f, argnums=0, chunk=None, jit=None, mode="auto"):
    """Gradient of scalar-valued f, shaped like args[argnums] (a tuple for tuple argnums).

    mode: "forward", "reverse" or "auto". Given a numba dispatcher (or jit=True) it returns
    a compiled kernel: forward mode, or with mode="reverse" a compiled tape (scalar code).
    """
    compiled = _compiled_mode(f, jit, mode, ("forward", "reverse"))
    if compiled:
        return _compiled_gradient("grad", compiled, f, jit, argnums, chunk)
    f = python_twin(f)
    vg = value_and_grad(f, argnums=argnums, chunk=chunk, jit=False, mode=mode)

    @functools.wraps(f)
    def grad_fn(*args):
        return vg(*args)[1]

    return grad_fn


# ---- reverse mode -----------------------------------------------------------------------------------
def _vjp(f, args, argnums, what):
    """Record f on a tape: (f's value, pullback: cotangent -> cotangents of args[argnums])."""
    from .reverse import Tape, Traced, leaf  # the reverse layer, loaded on first use

    inputs = _Inputs(f, args, argnums)
    tape = Tape()
    leaves = []

    def make(k, x):
        leaves.append(leaf(x, tape))
        return leaves[-1]

    out = inputs.call(make)
    if isinstance(out, Traced) and out.tape is tape:
        value, node = out.value, out.node
    else:
        value, node = _read_output(out, tape.tag, f)[0], None
    shape = tuple(np.shape(value))

    def pullback(cotangent):
        if not is_layer(cotangent):
            cotangent = np.asarray(cotangent)
            if cotangent.dtype.kind not in "fiu":
                raise TypeError(f"{what}: the cotangent must hold floats, got dtype {cotangent.dtype}")
        if tuple(np.shape(cotangent)) != shape:
            raise ValueError(f"{what}: the cotangent must have the output's shape {shape}, "
                             f"got shape {tuple(np.shape(cotangent))}")
        found = ([None] * len(leaves) if node is None
                 else tape.backward(node, cotangent, [x.node for x in leaves]))
        pieces = [_plain(np.zeros(sh) if c is None else np.reshape(c, sh))
                  for c, sh in zip(found, inputs.shapes)]
        return tuple(pieces) if inputs.several else pieces[0]

    return value, pullback


def vjp(f, *primals):
    """JAX's vjp: (f(*primals), vjp_fn) where vjp_fn(cotangent) is a tuple with one cotangent
    per primal, each shaped like it. The cotangent must have f's output shape."""
    f = python_twin(f)
    value, pullback = _vjp(f, primals, tuple(range(len(primals))), "vjp_fn")
    return value, pullback


def jacrev(f, argnums=0, jit=None):
    """Jacobian by reverse mode: one tape, one backward sweep per output entry;
    shape f(x).shape + x.shape, as jacfwd. A numba function runs on the Python path (its
    twin); for a compiled reverse-mode kernel of scalar code use grad(f, mode="reverse")."""
    if jit:
        raise NotImplementedError(_NO_COMPILED_REVERSE)
    f = python_twin(f)

    @functools.wraps(f)
    def jacobian_fn(*args):
        value, pullback = _vjp(f, args, argnums, "jacrev")
        shape = tuple(np.shape(value))
        rows = []
        for index in np.ndindex(shape):
            unit = np.zeros(shape)
            unit[index] = 1.0
            rows.append(pullback(unit))
        nums, several = _argnums(argnums, args, f)
        if not several:
            return _stack_rows(rows, shape)
        return tuple(_stack_rows([row[k] for row in rows], shape) for k in range(len(nums)))

    return jacobian_fn


def _stack_rows(rows, out_shape):
    """Cotangents of one input per output entry, as the Jacobian (out_shape + input shape)."""
    stacked = np.stack([np.asarray(r) if not is_layer(r) else r for r in rows])
    return _plain(np.reshape(stacked, out_shape + np.shape(rows[0])))


# ---- choosing a mode ----------------------------------------------------------------------------------
_MODES = ("auto", "forward", "reverse", "forward-over-reverse")
_NO_COMPILED_REVERSE = (
    "this mode has no compiled kernel: pass jit=False to run it on the Python path (a numba "
    "function is differentiated through its pure-Python twin), or mode='forward' for a "
    "compiled forward-mode kernel")


def _compiled_gradient(name, compiled_mode, f, jit, argnums, chunk):
    """The compiled `name` kernel ("grad" or "value_and_grad") of f in compiled_mode: forward
    (dualad.jit.kernels, chunked) or reverse (dualad.jit.tape)."""
    kernels, f = _path(f, jit, argnums)
    if compiled_mode == "reverse":
        return kernels.at_argnum(getattr(_compiled_tape(), name), f, argnums)
    return kernels.at_argnum(getattr(kernels, name), f, argnums, chunk)


def _compiled_tape():
    from .jit import tape  # lazy: numba's types and the compiled tape

    return tape


def _runs_compiled(f, jit):
    return is_dispatcher(f) if jit is None else bool(jit)


def _compiled_mode(f, jit, mode, allowed):
    """The compiled kernel's mode ("forward" or "reverse"), or None on the Python path.

    On the compiled path "auto" means forward: compiled reverse mode records scalar code
    only, and forward mode compiles array code too."""
    if mode not in ("auto",) + tuple(allowed):
        raise ValueError(f"mode={mode!r}; choose one of {('auto',) + tuple(allowed)}")
    if not _runs_compiled(f, jit):
        return None
    if mode in ("auto", "forward"):
        return "forward"
    if mode == "reverse":
        return "reverse"
    raise NotImplementedError(_NO_COMPILED_REVERSE)


def _chosen(mode, args, decisions, choose):
    """The mode to run: mode itself, or for "auto" choose()'s pick, which depends on f and
    the shapes only: each transform keeps its picks in `decisions`, keyed by the argument
    shapes, so f is recorded for a decision once."""
    if mode != "auto":
        return mode
    key = tuple(("layer", a.shape) if is_layer(a) else np.shape(a) for a in args)
    if key not in decisions:
        decisions[key] = choose()
    return decisions[key]


def _hessian_mode(f, args, argnums):
    """choose_hessian_mode's pick; HyperDual blocks for a tuple of argnums (the only mode
    that gives the tuple of blocks)."""
    if isinstance(argnums, (tuple, list)):
        return "forward"
    from .modes import choose_hessian_mode

    return choose_hessian_mode(f, *args, argnums=argnums).mode


def _jacobian_mode(f, args, argnums, chunk, n_out=None):
    """choose_mode's pick; forward when a chunk is given (the chunk is forward mode's)."""
    if chunk is not None:
        return "forward"
    from .modes import choose_mode

    return choose_mode(f, *args, argnums=argnums, n_out=n_out).mode


def jvp(f, primals, tangents):
    """(f(*primals), J·tangents) in one Dual pass: JAX's jvp."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes tuples: jvp(f, (x, ...), (v, ...))")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents")
    if is_dispatcher(f) and len(primals) == 1:
        return _compiled_jvp(f)(primals[0], tangents[0])
    f = python_twin(f)  # several primals: the Python path runs numba functions exactly
    inputs = _Inputs(f, primals, tuple(range(len(primals))))
    tans = []
    for k, (t, shape) in enumerate(zip(tangents, inputs.shapes)):
        t = _check_input(t, k, f)
        if np.shape(t) != shape:
            raise ValueError(f"tangent {k} has shape {np.shape(t)} but primal {k} has shape {shape}")
        tans.append(t)
    tag = new_tag()
    out = inputs.call(lambda k, x: Dual._make(x, (tans[k][..., None],), tag))
    value, comps = _read_output(out, tag, f)
    return value, _plain(np.zeros(np.shape(value)) if comps is None else comps[0][..., 0])


@functools.lru_cache(maxsize=None)
def _compiled_jvp(f):
    """One compiled jvp kernel per numba function (jvp takes values, so it is kept here)."""
    from . import jit as compiled_path

    return compiled_path.kernels.jvp(f)


def _scalar_input(f, x, what):
    if np.ndim(x) != 0:
        raise TypeError(f"{what} takes a scalar input; got shape {np.shape(x)}. Use jacfwd, "
                        "grad or jvp for array inputs")


def derivative(f, argnums=0, jit=None):
    """f'(x) for scalar x; the result has the shape of f(x)."""
    kernels, f = _path(f, jit, argnums)
    if kernels:
        return kernels.at_argnum(kernels.derivative, f, argnums)

    @functools.wraps(f)
    def derivative_fn(*args):
        (i,), _ = _argnums(argnums, args, f)
        _scalar_input(f, args[i], "derivative")
        return _jacobian_forward(f, args, i, 1)[1]

    return derivative_fn


def second_derivative(f, argnums=0, jit=None):
    """f''(x) for scalar x, exactly, in one HyperDual pass; shape of f(x).

    Given a numba dispatcher (or jit=True) it returns a compiled kernel (scalar outputs).
    """
    kernels, f = _path(f, jit, argnums)
    if kernels:
        return kernels.at_argnum(kernels.second_derivative, f, argnums)

    @functools.wraps(f)
    def second_derivative_fn(*args):
        inputs = _Inputs(f, args, argnums)
        if inputs.several:
            raise TypeError("second_derivative takes a single argnums; use hessian for several")
        _scalar_input(f, inputs.xs[0], "second_derivative")
        tag = new_tag()
        one = np.ones((1,))
        out = inputs.call(lambda k, x: HyperDual._make(x, (one, one, np.zeros((1, 1))), tag))
        value, comps = _read_output(out, tag, f)
        return _plain(np.zeros(np.shape(value)) if comps is None else comps[2][..., 0, 0])

    return second_derivative_fn


def hessian(f, argnums=0, chunk=None, jit=None, mode="auto"):
    """Exact Hessian of scalar f; shape x.shape + x.shape.

    mode "forward": HyperDual blocks (ε1 chunk × ε2 chunk), O(N²) work per value;
    "forward-over-reverse": jacfwd of the reverse-mode gradient (Duals through the tape),
    N/chunk passes, for large N; "auto" picks by dualad.modes' cost model.
    With tuple argnums (forward mode) the result is a tuple of tuples (H[i][j] =
    ∂²f/∂x_i∂x_j), as in JAX. Given a numba dispatcher (or jit=True) it returns a compiled
    kernel (1-D input): diagonal blocks use symmetric hyper-duals, which store half of the
    ε1ε2 block.
    """
    _check_chunk(chunk)
    if _compiled_mode(f, jit, mode, ("forward", "forward-over-reverse")):
        kernels, f = _path(f, jit, argnums)
        return kernels.at_argnum(kernels.hessian, f, argnums, chunk)
    f = python_twin(f)
    forward_over_reverse = jacfwd(grad(f, argnums=argnums, jit=False, mode="reverse"),
                                  argnums=argnums, chunk=chunk, jit=False)
    decisions = {}

    @functools.wraps(f)
    def hessian_fn(*args):
        chosen = _chosen(mode, args, decisions, lambda: _hessian_mode(f, args, argnums))
        if chosen == "forward-over-reverse":
            if isinstance(argnums, (tuple, list)):
                raise ValueError("hessian(mode='forward-over-reverse') takes a single argnums; "
                                 "use mode='forward' for a tuple")
            return forward_over_reverse(*args)
        inputs = _Inputs(f, args, argnums)
        n = inputs.n
        width = chunk or default_hessian_chunk(n)
        tag = new_tag()
        hess = np.zeros((n, n))
        starts = list(range(0, n, width))
        for b, lo1 in enumerate(starts):
            hi1 = min(lo1 + width, n)
            for lo2 in starts[b:]:
                hi2 = min(lo2 + width, n)
                out = inputs.call(lambda k, x: HyperDual._make(
                    x, (inputs.seed(k, lo1, hi1), inputs.seed(k, lo2, hi2),
                        np.zeros(inputs.shapes[k] + (hi1 - lo1, hi2 - lo2))), tag))
                value, comps = _read_output(out, tag, f)
                _check_scalar(value, f, "hessian")
                if comps is None:
                    continue
                hess = assign(hess, (slice(lo1, hi1), slice(lo2, hi2)), comps[2])
                if lo2 != lo1:
                    hess = assign(hess, (slice(lo2, hi2), slice(lo1, hi1)), comps[2].T)
        if not inputs.several:
            return _plain(np.reshape(hess, inputs.shapes[0] * 2))
        return tuple(
            tuple(np.reshape(hess[o1:o1 + s1, o2:o2 + s2], sh1 + sh2)
                  for o2, s2, sh2 in zip(inputs.offsets, inputs.sizes, inputs.shapes))
            for o1, s1, sh1 in zip(inputs.offsets, inputs.sizes, inputs.shapes))

    return hessian_fn


def hvp(f, chunk=None, jit=None):
    """Hessian-vector product: hvp(f)(x, v, *args) = ∇²f(x, *args) · v, shape x.shape.

    ε2 carries v and ε1 the identity (chunked), so the ε1ε2 part is H·v; no Hessian is formed.
    Given a numba dispatcher (or jit=True) it returns a compiled kernel (scalar or 1-D x).
    """
    _check_chunk(chunk)
    kernels, f = _path(f, jit, 0)
    if kernels:
        return kernels.hvp(f, chunk)

    @functools.wraps(f)
    def hvp_fn(x, v, *args):
        inputs = _Inputs(f, (x,) + args, 0)
        direction = _check_input(v, "v", f)
        if np.shape(direction) != inputs.shapes[0]:
            raise ValueError(f"hvp: v has shape {np.shape(direction)} but x has shape {inputs.shapes[0]}")
        n, width, tag = inputs.n, chunk or default_chunk(inputs.n), new_tag()
        pieces = []
        for lo in range(0, max(n, 1), width):
            hi = min(lo + width, n)
            out = inputs.call(lambda k, x_: HyperDual._make(
                x_, (inputs.seed(k, lo, hi), direction[..., None],
                     np.zeros(inputs.shapes[k] + (hi - lo, 1))), tag))
            value, comps = _read_output(out, tag, f)
            _check_scalar(value, f, "hvp")
            pieces.append(np.zeros(hi - lo) if comps is None else comps[2][..., 0])
        flat = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        return _plain(np.reshape(flat, inputs.shapes[0]))

    return hvp_fn
