"""The transforms, with JAX's names, signatures and output shapes.

    jvp(f, primals, tangents)        -> (f(*primals), J·tangents)
    derivative(f)(x)                 -> f'(x)                      x scalar; shape f(x).shape
    second_derivative(f)(x)          -> f''(x)                     one HyperDual pass
    grad(f, argnums)(*args)          -> ∇f                         shape x.shape
    value_and_grad(f, argnums)       -> (f, ∇f)
    jacfwd(f, argnums)(*args)        -> J                          shape f.shape + x.shape
    jacobian(f, argnums, mode)       -> J                          mode "forward" | "auto"
    hessian(f, argnums)(*args)       -> H                          shape x.shape + x.shape
    hvp(f)(x, v)                     -> H(x)·v                     shape x.shape

Arguments and outputs may be trees (tuples, lists, dicts, NamedTuples, dataclasses; see
tree.py): results mirror them, as JAX's do. argnums is an int or a tuple of ints (then
results are tuples). has_aux=True: f returns (output, aux) and aux comes back as it is,
without derivative. Forward
mode seeds `chunk` input directions per pass (ceil(N / chunk) passes); hessian evaluates
HyperDual blocks (ε1 chunk) × (ε2 chunk) on and above the block diagonal and mirrors the
rest. Every call draws a fresh tag, so nested transforms never confuse perturbations.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from .arguments import (Inputs, argnums_of, check_input, name_of, plain, read_output,
                        read_outputs, shape_key, strip_newer)
from .dual import Dual
from .hyperdual import HyperDual
from .number import assign, finish, is_layer, new_tag
from .tree import flatten, is_node
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


def _path(f, jit, argnums, has_aux=False):
    """(kernels, f): kernels is dualad.jit.kernels when f runs compiled, else None.

    jit=None compiles iff f is a numba dispatcher, jit=True compiles a plain function with
    numba, jit=False runs the Python path (a dispatcher's pure-Python twin, see twin.py).
    """
    if not _runs_compiled(f, jit):
        return None, python_twin(f)
    _no_compiled_aux(has_aux)
    nums = argnums if isinstance(argnums, (tuple, list)) else (argnums,)
    if not nums or not all(isinstance(i, (int, np.integer)) and i >= 0 for i in nums):
        raise ValueError(f"compiled transforms take argnums as an int or a tuple of ints counted "
                         f"from 0 (got argnums={argnums!r}); pass jit=False for negative argnums")
    import numba

    from . import jit as compiled_path  # lazy: numba's types and overloads

    return compiled_path.kernels, (f if is_dispatcher(f) else numba.njit(f))


def _compiled_argnums(argnums):
    """argnums as the compiled path takes it: an int, or a tuple of ints."""
    return tuple(int(i) for i in argnums) if isinstance(argnums, (tuple, list)) else int(argnums)


@contextlib.contextmanager
def _transform_tag():
    """A fresh tag for one transform call, finished when the call returns: its numbers
    that escape (a global, a list, a closure) raise when used later."""
    tag = new_tag()
    try:
        yield tag
    finally:
        finish(tag)


def _check_chunk(chunk):
    if chunk is not None and (not isinstance(chunk, (int, np.integer)) or chunk < 1):
        raise ValueError(f"chunk must be a positive int; got {chunk!r}")


# ---- forward mode ---------------------------------------------------------------------------------
def _output_jacobian(inputs, treedef, values, blocks):
    """The Jacobian tree: f's output structure, each output leaf replaced by the input
    structure of blocks (out_leaf.shape + in_leaf.shape). blocks[l] lists leaf l's
    tangent blocks per pass (None where the leaf was constant or None)."""
    pieces = []
    for value, leaf_blocks in zip(values, blocks):
        if value is None:
            pieces.append(None)
            continue
        shape = tuple(np.shape(value))
        if inputs.n == 0:
            pieces.append(inputs.split(np.zeros(shape + (0,)), shape))
            continue
        full = [np.zeros(shape + (hi - lo,)) if b is None else b for (lo, hi), b in leaf_blocks]
        flat = full[0] if len(full) == 1 else np.concatenate(full, axis=-1)
        pieces.append(inputs.split(flat, shape))
    return treedef.unflatten(pieces)


def _jacobian_forward(f, args, argnums, chunk):
    """(f(*args), Jacobian tree) by chunked Dual passes."""
    _check_chunk(chunk)
    inputs = Inputs(f, args, argnums)
    width = chunk or default_chunk(inputs.n)
    with _transform_tag() as tag:
        return _forward_passes(f, inputs, width, tag)


def _forward_passes(f, inputs, width, tag):
    """(value tree, Jacobian tree) from ceil(n / width) Dual passes under one tag."""
    blocks, values, treedef = None, None, None
    for lo in range(0, max(inputs.n, 1), width):
        hi = min(lo + width, inputs.n)
        out = inputs.call(lambda j, x: Dual._make(x, (inputs.seed(j, lo, hi),), tag))
        treedef, read = read_outputs(out, tag, f)
        values = [v for v, _ in read]
        if blocks is None:
            blocks = [[] for _ in read]
        for leaf_blocks, (_, comps) in zip(blocks, read):
            leaf_blocks.append(((lo, hi), None if comps is None else comps[0]))
    return treedef.unflatten(values), _output_jacobian(inputs, treedef, values, blocks)


def _check_scalar(value, f, what):
    if is_node(value):
        raise TypeError(f"{what} needs {name_of(f)} to return a scalar; it returned a "
                        f"{type(value).__name__}. If the rest is auxiliary data, pass "
                        "has_aux=True and return (scalar, aux)")
    if np.shape(value) != ():
        raise TypeError(f"{what} needs {name_of(f)} to return a scalar; it returned shape "
                        f"{np.shape(value)}. Use jacobian (or jacfwd) for array outputs")


def _scalar_output(out, tag, f, what):
    """The tangent components of f's scalar output (None where constant); a clear error for
    any other output."""
    if is_node(out):
        _check_scalar(out, f, what)
    value, comps = read_output(out, tag, f)
    _check_scalar(value, f, what)
    return comps


class _WithAux:
    """f returning (output, aux) seen as a function of its output: the transforms
    differentiate the output, and aux (kept from the first call) comes back without the
    derivatives of this call's transform (JAX's has_aux)."""

    def __init__(self, f):
        self.f, self.aux, self.called = f, None, False
        self.tag = new_tag()  # every number of this call's transform is newer
        functools.update_wrapper(self, f)

    def __call__(self, *args):
        result = self.f(*args)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"has_aux=True needs {name_of(self.f)} to return a pair (output, aux); "
                            f"it returned {type(result).__name__}")
        if not self.called:
            self.aux, self.called = result[1], True
        return result[0]

    def take_aux(self):
        return strip_newer(self.aux, self.tag)


def _aux_call(f, has_aux, args, run):
    """run(f', args) where f' is f or, with has_aux, f without its aux: (result, aux or None)."""
    if not has_aux:
        return run(f, args), None
    wrapped = _WithAux(f)
    result = run(wrapped, args)
    return result, wrapped.take_aux()


def jacfwd(f, argnums=0, has_aux=False, *, chunk=None, jit=None):
    """Jacobian by forward mode: jacfwd(f)(x).shape == f(x).shape + x.shape; for trees, f's
    output structure with each leaf replaced by the input structure of blocks.

    Given a numba dispatcher (or jit=True) it returns a compiled kernel (scalar or 1-D input).
    """
    kernels, f = _path(f, jit, argnums, has_aux)
    if kernels:
        return kernels.at_argnum(kernels.jacfwd, f, _compiled_argnums(argnums), chunk)

    @functools.wraps(f)
    def jacobian_fn(*args):
        jac, aux = _aux_call(f, has_aux, args, lambda g, a: _jacobian_forward(g, a, argnums, chunk)[1])
        return (jac, aux) if has_aux else jac

    return jacobian_fn


def jacobian(f, argnums=0, has_aux=False, *, mode="auto", chunk=None, jit=None):
    """Jacobian of f with respect to args[argnums]; shape f(x).shape + x.shape.

    mode: "forward" (Dual passes, N/chunk of them), "reverse" (a tape and one sweep per
    output entry) or "auto" (dualad.choose_mode decides from N, M and the tape; compiled,
    dualad.jit.auto decides per input size from N, M and calibrated costs).
    """
    compiled = _compiled_mode(f, jit, mode, ("forward", "reverse"), has_aux, auto="auto")
    if compiled == "reverse":
        return jacrev(f, argnums=argnums, jit=jit)
    if compiled == "auto" and chunk is None:
        kernels, f = _path(f, jit, argnums)
        from .jit import auto

        return kernels.at_argnum(auto.jacobian, f, _compiled_argnums(argnums))
    if compiled:
        return jacfwd(f, argnums=argnums, chunk=chunk, jit=jit)
    f = python_twin(f)
    decisions = {}
    forward = jacfwd(f, argnums, has_aux, chunk=chunk, jit=False)
    reverse = jacrev(f, argnums, has_aux, jit=False)

    @functools.wraps(f)
    def jacobian_fn(*args):
        def choose():
            return _jacobian_mode(_without_aux(f, has_aux), args, argnums, chunk)
        return (reverse if _chosen(mode, args, decisions, choose) == "reverse" else forward)(*args)

    return jacobian_fn


def _without_aux(f, has_aux):
    return (lambda *args: f(*args)[0]) if has_aux else f


def value_and_grad(f, argnums=0, has_aux=False, *, chunk=None, jit=None, mode="auto"):
    """(f(*args), ∇f) for scalar-valued f; the gradient has the structure of args[argnums].
    With has_aux: ((value, aux), ∇f).

    mode: "forward", "reverse" (one sweep of a tape) or "auto" (dualad.choose_mode).
    Given a numba dispatcher (or jit=True) it returns a compiled kernel: forward mode, a
    tape compiled into the kernel (mode="reverse"), or with "auto" the tape from
    dualad.modes.COMPILED_REVERSE_FROM inputs on where f compiles onto it, else forward mode.
    """
    compiled = _compiled_mode(f, jit, mode, ("forward", "reverse"), has_aux, auto="auto")
    if compiled:
        return _compiled_gradient("value_and_grad", compiled, f, jit, argnums, chunk)
    f = python_twin(f)
    decisions = {}

    def run(g, args):
        def choose():
            return _jacobian_mode(g, args, argnums, chunk, 1)
        if _chosen(mode, args, decisions, choose) == "reverse":
            value, pullback = _vjp(g, args, argnums, "grad")
            _check_scalar(value, f, "grad")
            return value, pullback(np.float64(1.0))
        value, pieces = _jacobian_forward(g, args, argnums, chunk)
        _check_scalar(value, f, "grad")
        return value, pieces

    @functools.wraps(f)
    def value_and_grad_fn(*args):
        (value, gradient), aux = _aux_call(f, has_aux, args, run)
        return ((value, aux), gradient) if has_aux else (value, gradient)

    return value_and_grad_fn


def grad(f, argnums=0, has_aux=False, *, chunk=None, jit=None, mode="auto"):
    """Gradient of scalar-valued f, shaped like args[argnums] (a tuple for tuple argnums;
    the argument's structure for trees). With has_aux: (∇f, aux).

    mode: "forward", "reverse" or "auto". Given a numba dispatcher (or jit=True) it returns
    a compiled kernel in that mode (as value_and_grad's).
    """
    compiled = _compiled_mode(f, jit, mode, ("forward", "reverse"), has_aux, auto="auto")
    if compiled:
        return _compiled_gradient("grad", compiled, f, jit, argnums, chunk)
    f = python_twin(f)
    vg = value_and_grad(f, argnums, has_aux, chunk=chunk, jit=False, mode=mode)

    @functools.wraps(f)
    def grad_fn(*args):
        (_, aux), gradient = vg(*args) if has_aux else ((None, None), vg(*args)[1])
        return (gradient, aux) if has_aux else gradient

    return grad_fn


# ---- reverse mode -----------------------------------------------------------------------------------
class _Recording:
    """f recorded once on a tape. Its output tree is seen as one flat vector (the leaves
    raveled and concatenated), so one backward sweep serves any output structure."""

    def __init__(self, f, args, argnums):
        from .reverse import Tape, Traced, leaf  # the reverse layer, loaded on first use

        self.f = f
        self.inputs = Inputs(f, args, argnums)
        self.tape = tape = Tape()
        self.input_nodes = []  # taken when made: f may assign into its input, giving it a new node

        def make(j, x):
            traced = leaf(x, tape)
            self.input_nodes.append(traced.node)
            return traced

        try:
            self._read(self.inputs.call(make), Traced)
        finally:
            finish(tape.tag)  # recorded: traced values that escape f raise when used later

    def _read(self, out, Traced):
        """The output tree's values, shapes and its one node (None when constant)."""
        f, tape = self.f, self.tape
        outs, self.treedef = flatten(out)
        ours = [isinstance(o, Traced) and o.tape is tape for o in outs]
        self.values = [o.value if mine else read_output(o, tape.tag, f)[0] for o, mine in zip(outs, ours)]
        self.shapes = [tuple(np.shape(v)) for v in self.values]
        self.sizes = [math.prod(s) for s in self.shapes]
        if not any(ours):
            self.node = None
        elif len(outs) == 1:
            self.node = outs[0].node
        else:  # one node for the whole tree, so that a single sweep takes every leaf's cotangent
            self.node = np.concatenate([np.ravel(o) for o in outs]).node

    @property
    def value(self):
        return self.treedef.unflatten(self.values)

    @property
    def n_out(self):
        return sum(self.sizes)

    def pull_flat(self, cotangent):
        """Cotangents of the differentiated leaves (a list) for the flat output cotangent."""
        if self.node is None:
            return [np.zeros(sh) for sh in self.inputs.shapes]
        found = self.tape.backward(self.node, cotangent, self.input_nodes)
        return [plain(np.zeros(sh) if c is None else np.reshape(c, sh))
                for c, sh in zip(found, self.inputs.shapes)]

    def flat_cotangent(self, cotangent, what):
        """The cotangent tree checked against the output's structure, shapes and dtype, flat."""
        leaves, treedef = flatten(cotangent)
        if treedef != self.treedef:
            raise ValueError(f"{what}: the cotangent must have the structure of {name_of(self.f)}'s "
                             f"output, {self.treedef.describe()}; got {treedef.describe()}")
        checked = []
        for k, (c, shape) in enumerate(zip(leaves, self.shapes)):
            where = "the cotangent" if len(leaves) == 1 else f"cotangent leaf {k}"
            if not is_layer(c):
                c = np.asarray(c)
                if c.dtype.kind not in "fiu":
                    raise TypeError(f"{what}: {where} must hold floats, got dtype {c.dtype}")
            if tuple(np.shape(c)) != shape:
                raise ValueError(f"{what}: {where} must have the output's shape {shape}, "
                                 f"got shape {tuple(np.shape(c))}")
            checked.append(c)
        if len(checked) == 1:
            return checked[0]
        return np.concatenate([np.ravel(c) for c in checked])


def _vjp(f, args, argnums, what):
    """Record f on a tape: (f's value, pullback: cotangent tree -> cotangents of args[argnums])."""
    recording = _Recording(f, args, argnums)

    def pullback(cotangent):
        flat = recording.flat_cotangent(cotangent, what)
        return recording.inputs.structure(recording.pull_flat(flat))

    return recording.value, pullback


def vjp(f, *primals, has_aux=False):
    """JAX's vjp: (f(*primals), vjp_fn) where vjp_fn(cotangent) is a tuple with one cotangent
    per primal, each with its structure. The cotangent must have the structure and shapes of
    f's output. With has_aux: (f's output, vjp_fn, aux). For a numba function of one float,
    1-D array or tuple of them, vjp_fn runs the compiled kernel dualad.jit.tape.vjp(f),
    (x, cotangent, *args) -> (f, cotangent · J), which numba code can call directly."""
    if is_dispatcher(f) and len(primals) == 1 and not has_aux and (
            not is_node(primals[0]) or type(primals[0]) is tuple):
        return _compiled_vjp_of(f, primals[0])
    f = python_twin(f)  # several primals, structures or has_aux: the Python path
    (value, pullback), aux = _aux_call(
        f, has_aux, primals, lambda g, a: _vjp(g, a, tuple(range(len(a))), "vjp_fn"))
    return (value, pullback, aux) if has_aux else (value, pullback)


def _compiled_vjp_of(f, x):
    """vjp of a numba function of one argument: f(x) compiled on floats, and a vjp_fn whose
    every call records f on the compiled tape and sweeps once (dualad.jit.tape.vjp)."""
    from numba.core.errors import NumbaError

    kernel = _compiled_vjp(f)
    own = x.copy() if isinstance(x, np.ndarray) else x  # f may assign into its argument
    try:
        value = f(own)
    except NumbaError:  # numba compiles some functions for duals only: run its twin
        value = python_twin(f)(x.copy() if isinstance(x, np.ndarray) else x)

    def vjp_fn(cotangent):
        # checked here too, before the kernel: an exception raised inside compiled code
        # leaves numba holding what its callers allocated
        if np.size(cotangent) != np.size(value):
            raise ValueError(f"vjp: the cotangent must have one entry per output entry of f "
                             f"({np.size(value)}); got {np.size(cotangent)}")
        return (kernel(x, cotangent)[1],)

    return value, vjp_fn


def jacrev(f, argnums=0, has_aux=False, *, jit=None):
    """Jacobian by reverse mode: one tape, one backward sweep per output entry;
    shape f(x).shape + x.shape (trees as jacfwd). Given a numba dispatcher (or jit=True) it
    returns a compiled kernel: f records onto the compiled tape (scalar and 1-D outputs)."""
    kernels, compiled_f = _path(f, jit, argnums, has_aux)
    if kernels:
        from .jit import tape  # lazy: the compiled tape

        return kernels.at_argnum(tape.jacrev, compiled_f, _compiled_argnums(argnums))
    f = compiled_f

    def run(g, args):
        recording = _Recording(g, args, argnums)
        inputs, n_out = recording.inputs, recording.n_out
        rows = []
        for k in range(n_out):
            unit = np.zeros(n_out)
            unit[k] = 1.0
            rows.append(recording.pull_flat(unit if len(recording.sizes) > 1
                                            else unit.reshape(recording.shapes[0])))
        pieces, start = [], 0
        for shape, size in zip(recording.shapes, recording.sizes):
            leaf_rows = rows[start:start + size]
            start += size
            pieces.append(inputs.structure([_stack_rows([row[j] for row in leaf_rows], shape, in_shape)
                                            for j, in_shape in enumerate(inputs.shapes)]))
        return recording.treedef.unflatten(pieces)

    @functools.wraps(f)
    def jacobian_fn(*args):
        jac, aux = _aux_call(f, has_aux, args, run)
        return (jac, aux) if has_aux else jac

    return jacobian_fn


def _stack_rows(rows, out_shape, in_shape):
    """Cotangents of one input leaf per output entry, as its Jacobian block (out + in shape)."""
    if not rows:
        return plain(np.zeros(out_shape + in_shape))
    stacked = np.stack([np.asarray(r) if not is_layer(r) else r for r in rows])
    return plain(np.reshape(stacked, out_shape + in_shape))


# ---- choosing a mode ----------------------------------------------------------------------------------
_MODES = ("auto", "forward", "reverse", "forward-over-reverse")
_NO_COMPILED_REVERSE = (
    "this mode has no compiled kernel: pass jit=False to run it on the Python path (a numba "
    "function is differentiated through its pure-Python twin), or mode='forward' for a "
    "compiled forward-mode kernel")


def _compiled_gradient(name, compiled_mode, f, jit, argnums, chunk):
    """The compiled `name` kernel ("grad" or "value_and_grad") of f in compiled_mode: forward
    (dualad.jit.kernels, chunked), reverse (dualad.jit.tape) or auto (dualad.jit.auto: the
    tape from a calibrated N on, where f compiles onto it, else forward; an explicit chunk
    means forward mode)."""
    kernels, f = _path(f, jit, argnums)
    if compiled_mode == "reverse":
        from .jit import tape  # lazy: the compiled tape

        return kernels.at_argnum(getattr(tape, name), f, _compiled_argnums(argnums))
    if compiled_mode == "auto" and chunk is None:
        from .jit import auto

        return kernels.at_argnum(getattr(auto, name), f, _compiled_argnums(argnums))
    return kernels.at_argnum(getattr(kernels, name), f, _compiled_argnums(argnums), chunk)


def _runs_compiled(f, jit):
    return is_dispatcher(f) if jit is None else bool(jit)


def _compiled_mode(f, jit, mode, allowed, has_aux=False, auto="forward"):
    """The compiled kernel's mode ("forward", "reverse" or, where the transform has an auto
    kernel, "auto"), or None on the Python path.

    "auto" is forward mode for the transforms without an auto kernel (hessian, jacfwd, ...);
    gradients and Jacobians have one, which decides per call (dualad.jit.auto)."""
    if mode not in ("auto",) + tuple(allowed):
        raise ValueError(f"mode={mode!r}; choose one of {('auto',) + tuple(allowed)}")
    if not _runs_compiled(f, jit):
        return None
    _no_compiled_aux(has_aux)
    if mode == "auto":
        return auto
    if mode == "forward":
        return "forward"
    if mode == "reverse":
        return "reverse"
    raise NotImplementedError(_NO_COMPILED_REVERSE)


def _no_compiled_aux(has_aux):
    if has_aux:
        raise NotImplementedError("has_aux=True has no compiled kernel: pass jit=False to run "
                                  "it on the Python path (a numba function runs as its "
                                  "pure-Python twin)")


def _chosen(mode, args, decisions, choose):
    """The mode to run: mode itself, or for "auto" choose()'s pick, which depends on f and
    the shapes only: each transform keeps its picks in `decisions`, keyed by the arguments'
    structures and leaf shapes, so f is recorded for a decision once."""
    if mode != "auto":
        return mode
    key = shape_key(args)
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
    """(f(*primals), J·tangents) in one Dual pass: JAX's jvp. tangents has the structure of
    primals (tangents at passed-through leaves, ints, None, static, are ignored); the output
    tangent has the structure of f's output."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes tuples: jvp(f, (x, ...), (v, ...))")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents")
    if is_dispatcher(f) and len(primals) == 1 and (not is_node(primals[0]) or type(primals[0]) is tuple):
        return _compiled_jvp(f)(primals[0], tangents[0])
    f = python_twin(f)  # several primals: the Python path runs numba functions exactly
    inputs = Inputs(f, primals, tuple(range(len(primals))))
    tans = _tangents_like(inputs, tuple(primals), tuple(tangents), f, lambda name: (
        ("the tangents", "the primals") if name is None else (f"tangent {name}", f"primal {name}")))
    with _transform_tag() as tag:
        out = inputs.call(lambda j, x: Dual._make(x, (tans[j][..., None],), tag))
        treedef, read = read_outputs(out, tag, f)
    return (treedef.unflatten(v for v, _ in read),
            treedef.unflatten(None if v is None else plain(np.zeros(np.shape(v)) if c is None else c[0][..., 0])
                              for v, c in read))


def _tangents_like(inputs, primals, tangents, f, names):
    """The tangent of each differentiated leaf, checked against the primals' structure/shapes.
    names(leaf name) gives the tangent's and the primal's names for messages (names(None):
    the whole trees')."""
    primal_leaves, primal_def = flatten(primals)
    tangent_leaves, tangent_def = flatten(tangents)
    if tangent_def != primal_def:
        tangent_word, primal_word = names(None)
        raise ValueError(f"{tangent_word} must have the structure of {primal_word}, "
                         f"{primal_def.describe()}; got {tangent_def.describe()}")
    slots = [j for slots in inputs.slots for j, _ in slots]
    tans = [None] * len(inputs.xs)
    for j, t in zip(slots, tangent_leaves):
        if j is None:
            continue
        tangent_name, primal_name = names(inputs.names[j])
        t = check_input(t, tangent_name, f)
        if np.shape(t) != inputs.shapes[j]:
            raise ValueError(f"{tangent_name} has shape {np.shape(t)} but {primal_name} has shape "
                             f"{inputs.shapes[j]}")
        tans[j] = t
    return tans


@functools.lru_cache(maxsize=None)
def _compiled_vjp(f):
    """One compiled vjp kernel per numba function."""
    from .jit import tape

    return tape.vjp(f)


@functools.lru_cache(maxsize=None)
def _compiled_jvp(f):
    """One compiled jvp kernel per numba function (jvp takes values, so it is kept here)."""
    from . import jit as compiled_path

    return compiled_path.kernels.jvp(f)


def _scalar_input(f, x, what):
    if np.ndim(x) != 0 or isinstance(x, (tuple, list, dict)):
        raise TypeError(f"{what} takes a scalar input; got shape {np.shape(x)}. Use jacfwd, "
                        "grad or jvp for array inputs")


def _single_argnum(argnums, what):
    if isinstance(argnums, (tuple, list)):
        raise ValueError(f"{what} differentiates one scalar argument (argnums={argnums!r}); "
                         "use grad or jacobian for several")


def derivative(f, argnums=0, jit=None):
    """f'(x) for scalar x; the result has the structure and shapes of f(x)."""
    _single_argnum(argnums, "derivative")
    kernels, f = _path(f, jit, argnums)
    if kernels:
        return kernels.at_argnum(kernels.derivative, f, argnums)

    @functools.wraps(f)
    def derivative_fn(*args):
        (i,), _ = argnums_of(argnums, args, f)
        _scalar_input(f, args[i], "derivative")
        return _jacobian_forward(f, args, i, 1)[1]

    return derivative_fn


def second_derivative(f, argnums=0, jit=None):
    """f''(x) for scalar x, exactly, in one HyperDual pass; structure and shapes of f(x).

    Given a numba dispatcher (or jit=True) it returns a compiled kernel (scalar outputs).
    """
    _single_argnum(argnums, "second_derivative")
    kernels, f = _path(f, jit, argnums)
    if kernels:
        return kernels.at_argnum(kernels.second_derivative, f, argnums)

    @functools.wraps(f)
    def second_derivative_fn(*args):
        inputs = Inputs(f, args, argnums)
        _scalar_input(f, args[inputs.nums[0]], "second_derivative")
        one = np.ones((1,))
        with _transform_tag() as tag:
            out = inputs.call(lambda j, x: HyperDual._make(x, (one, one, np.zeros((1, 1))), tag))
            treedef, read = read_outputs(out, tag, f)
        return treedef.unflatten(plain(np.zeros(np.shape(v)) if c is None else c[2][..., 0, 0])
                                 for v, c in read)

    return second_derivative_fn


def hessian(f, argnums=0, has_aux=False, *, chunk=None, jit=None, mode="auto"):
    """Exact Hessian of scalar f; shape x.shape + x.shape. For trees (and tuple argnums) the
    input structure with each leaf replaced by the input structure of blocks: H[a][b] =
    ∂²f/∂a∂b, as in JAX. With has_aux: (H, aux).

    mode "forward": HyperDual blocks (ε1 chunk × ε2 chunk), O(N²) work per value;
    "forward-over-reverse": jacfwd of the reverse-mode gradient (Duals through the tape),
    N/chunk passes, for large N; "auto" picks by dualad.modes' cost model.
    Given a numba dispatcher (or jit=True) it returns a compiled kernel (1-D input):
    diagonal blocks use symmetric hyper-duals, which store half of the ε1ε2 block.
    """
    _check_chunk(chunk)
    if _compiled_mode(f, jit, mode, ("forward", "forward-over-reverse"), has_aux):
        kernels, f = _path(f, jit, argnums)
        return kernels.at_argnum(kernels.hessian, f, _compiled_argnums(argnums), chunk)
    f = python_twin(f)
    decisions = {}

    def run(g, args):
        chosen = _chosen(mode, args, decisions, lambda: _hessian_mode(g, args, argnums))
        if chosen == "forward-over-reverse":
            if isinstance(argnums, (tuple, list)):
                raise ValueError("hessian(mode='forward-over-reverse') takes a single argnums; "
                                 "use mode='forward' for a tuple")
            return jacfwd(grad(g, argnums, jit=False, mode="reverse"), argnums, chunk=chunk,
                          jit=False)(*args)
        return _hessian_forward(g, args, argnums, chunk)

    @functools.wraps(f)
    def hessian_fn(*args):
        hess, aux = _aux_call(f, has_aux, args, run)
        return (hess, aux) if has_aux else hess

    return hessian_fn


def _hessian_forward(f, args, argnums, chunk):
    """The Hessian tree by HyperDual blocks on and above the block diagonal, mirrored."""
    inputs = Inputs(f, args, argnums)
    n = inputs.n
    width = chunk or default_hessian_chunk(n)
    with _transform_tag() as tag:
        hess = _hessian_blocks(f, inputs, width, tag)
    return inputs.structure([
        inputs.structure([plain(np.reshape(hess[o1:o1 + s1, o2:o2 + s2], sh1 + sh2))
                          for o2, s2, sh2 in zip(inputs.offsets, inputs.sizes, inputs.shapes)])
        for o1, s1, sh1 in zip(inputs.offsets, inputs.sizes, inputs.shapes)])


def _hessian_blocks(f, inputs, width, tag):
    """The flat (n, n) Hessian from HyperDual blocks on and above the diagonal, mirrored."""
    n = inputs.n
    hess = np.zeros((n, n))
    starts = list(range(0, n, width))
    for b, lo1 in enumerate(starts):
        hi1 = min(lo1 + width, n)
        for lo2 in starts[b:]:
            hi2 = min(lo2 + width, n)
            out = inputs.call(lambda j, x: HyperDual._make(
                x, (inputs.seed(j, lo1, hi1), inputs.seed(j, lo2, hi2),
                    np.zeros(inputs.shapes[j] + (hi1 - lo1, hi2 - lo2))), tag))
            comps = _scalar_output(out, tag, f, "hessian")
            if comps is None:
                continue
            hess = assign(hess, (slice(lo1, hi1), slice(lo2, hi2)), comps[2])
            if lo2 != lo1:
                hess = assign(hess, (slice(lo2, hi2), slice(lo1, hi1)), comps[2].T)
    return hess


def hvp(f, chunk=None, jit=None):
    """Hessian-vector product: hvp(f)(x, v, *args) = ∇²f(x, *args) · v, structured as x.

    ε2 carries v and ε1 the identity (chunked), so the ε1ε2 part is H·v; no Hessian is formed.
    Given a numba dispatcher (or jit=True) it returns a compiled kernel (scalar or 1-D x).
    """
    _check_chunk(chunk)
    kernels, f = _path(f, jit, 0)
    if kernels:
        return kernels.hvp(f, chunk)

    @functools.wraps(f)
    def hvp_fn(x, v, *args):
        inputs = Inputs(f, (x,) + args, 0)
        directions = _tangents_like(inputs, (x,), (v,), f, lambda name: (
            ("v", "x") if name is None else ("v" + name[1:], "x" + name[1:])))
        n, width = inputs.n, chunk or default_chunk(inputs.n)
        pieces = []
        with _transform_tag() as tag:
            for lo in range(0, max(n, 1), width):
                hi = min(lo + width, n)
                out = inputs.call(lambda j, x_: HyperDual._make(
                    x_, (inputs.seed(j, lo, hi), directions[j][..., None],
                         np.zeros(inputs.shapes[j] + (hi - lo, 1))), tag))
                comps = _scalar_output(out, tag, f, "hvp")
                pieces.append(np.zeros(hi - lo) if comps is None else comps[2][..., 0])
        flat = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        return inputs.split(flat, ())

    return hvp_fn
