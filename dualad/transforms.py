"""The transforms, with JAX's names, signatures and output shapes: the public API.

    jvp(f, primals, tangents)        -> (f(*primals), J·tangents)
    vjp(f, *primals)                 -> (f(*primals), vjp_fn)
    derivative(f)(x)                 -> f'(x)                      x scalar; shape f(x).shape
    second_derivative(f)(x)          -> f''(x)                     one HyperDual pass
    grad(f, argnums)(*args)          -> ∇f                         shape x.shape
    value_and_grad(f, argnums)       -> (f, ∇f)
    jacfwd(f, argnums), jacrev(f, argnums)(*args) -> J             shape f.shape + x.shape
    jacobian(f, argnums, mode)       -> J                          mode "forward" | "reverse" | "auto"
    hessian(f, argnums, mode)(*args) -> H                          shape x.shape + x.shape
    hvp(f)(x, v)                     -> H(x)·v                     shape x.shape

Arguments and outputs may be trees (tuples, lists, dicts, NamedTuples, dataclasses; see
tree.py): results mirror them, as JAX's do. argnums is an int or a tuple of ints (then
results are tuples). has_aux=True: f returns (output, aux) and aux comes back as it is,
without derivative.

This module decides the path and the mode and does nothing else: forward mode is
forward.py, reverse mode recording.py, the mode choice modes.py (cached per shapes here),
and a numba function's compiled kernel comes from the table in dispatch.py.
"""

from __future__ import annotations

import functools

import numpy as np

from . import dispatch
from .arguments import name_of, shape_key, strip_newer
from .forward import (check_scalar, derivative_forward, hessian_forward, hvp_forward,
                      jacobian_forward, jvp_forward, second_derivative_forward)
from .modes import PYTHON_HVP_FORWARD_UP_TO, default_chunk, default_hessian_chunk
from .number import new_tag
from .recording import jacobian_reverse, vjp_recording
from .sparsity import detect
from .sparsity.compiled import CompiledSparseHessian, CompiledSparseJacobian, pattern_from, python_kernel
from .sparsity.compressed import SparseHessian, SparseJacobian, check_sparsity_arguments
from .tree import flatten, is_node
from .allocation import OnDemand
from .twin import is_dispatcher, python_twin

__all__ = ["jvp", "derivative", "second_derivative", "grad", "value_and_grad", "jacfwd",
           "jacobian", "hessian", "hvp", "default_chunk", "default_hessian_chunk", "vjp",
           "jacrev", "jacobian_sparsity", "hessian_sparsity"]


def _check_chunk(chunk):
    if chunk is not None and (not isinstance(chunk, (int, np.integer)) or chunk < 1):
        raise ValueError(f"chunk must be a positive int; got {chunk!r}")


def _check_mode(mode, allowed):
    if mode not in ("auto",) + tuple(allowed):
        raise ValueError(f"mode={mode!r}; choose one of {('auto',) + tuple(allowed)}")


def _no_compiled_aux(has_aux):
    if has_aux:
        raise NotImplementedError("has_aux=True has no compiled kernel: pass jit=False to run "
                                  "it on the Python path (a numba function runs as its "
                                  "pure-Python twin)")


def _compiled(f, jit, has_aux=False):
    """Whether this transform of f returns a compiled kernel (see dispatch.runs_compiled)."""
    if not dispatch.runs_compiled(f, jit):
        return False
    _no_compiled_aux(has_aux)
    return True


def _kernel_or(python, transform, mode, f, jit, argnums, chunk=None, has_aux=False):
    """The compiled kernel of `transform` where f runs compiled, else python (the same
    transform on the Python path, which the kernel takes as its meaning)."""
    if _compiled(f, jit, has_aux):
        return dispatch.kernel(transform, mode, f, argnums, python, chunk)
    return python


def _sparse_path(f, jit, sparsity, check):
    """Where a transform computes sparse results (sparsity=): None (it does not), "python"
    or "compiled" (a numba function: detection and passes inside numba)."""
    if not check_sparsity_arguments(sparsity, check):
        return None
    return "compiled" if dispatch.runs_compiled(f, jit) else "python"


def _sparse_kernels(f, argnums, chunk=None):
    """kernel(which): f's compiled sparsity kernels (dispatch.sparse_kernels)."""
    twin = python_twin(f)
    return dispatch.sparse_kernels(dispatch.compiled_function(f), argnums, chunk,
                                   lambda which: python_kernel(twin, argnums, which))


def _sparse_jacobian(f, jit, argnums, has_aux, mode, chunk, sparsity, check):
    """The transform's sparse Jacobian function (sparsity=), compiled or on the Python path;
    None without sparsity=."""
    path = _sparse_path(f, jit, sparsity, check)
    if path == "compiled":
        return _compiled_sparse_jacobian(f, argnums, has_aux, mode, chunk, sparsity, check)
    if path == "python":
        return _python_jacobian(f, argnums, has_aux, mode, chunk, sparsity, check)
    return None


def _compiled_sparse_jacobian(f, argnums, has_aux, mode, chunk, sparsity, check):
    """A numba function's sparse Jacobian: pattern and passes compiled (_compiled_sparse;
    the plan: indptr, indices, colours, seeds)."""
    return _compiled_sparse(f, argnums, has_aux, lambda compiled: CompiledSparseJacobian(
        sparsity, mode, chunk, check, _sparse_kernels(f, argnums, chunk),
        lambda args: np.size(compiled(*args))))


def _compiled_sparse_hessian(f, argnums, has_aux, chunk, sparsity, check):
    """A numba function's sparse Hessian: pattern and forward-over-reverse passes compiled
    (_compiled_sparse; the plan: star colours, seeds, sources)."""
    return _compiled_sparse(f, argnums, has_aux, lambda compiled: CompiledSparseHessian(
        sparsity, check, _sparse_kernels(f, argnums, chunk)))


def _compiled_sparse(f, argnums, has_aux, make):
    """The transform of numba function f that make(f's dispatcher) computes sparse, the
    csr_array made here. .sparsity_plan(*args) as on the Python path; .kernel(*args) gives
    (kernel, plan): kernel(*args, *plan) returns the nonzeros in the pattern's CSR order and
    is callable from @njit code."""
    _no_compiled_aux(has_aux)
    compiled = dispatch.compiled_function(f)
    sparse = make(compiled)

    @functools.wraps(compiled.py_func)
    def sparse_fn(*args):
        return sparse(compiled, args, argnums)

    sparse_fn.sparsity_plan = lambda *args: sparse.plan(compiled, args, argnums)
    sparse_fn.kernel = lambda *args: sparse.prepared(compiled, args, argnums)[:2]
    return sparse_fn


def jacobian_sparsity(f, argnums=0, *, jit=None):
    if not dispatch.runs_compiled(f, jit):
        return detect.jacobian_sparsity(f, argnums)
    return _compiled_pattern(f, argnums, "jacobian pattern")


def hessian_sparsity(f, argnums=0, *, jit=None):
    if not dispatch.runs_compiled(f, jit):
        return detect.hessian_sparsity(f, argnums)
    return _compiled_pattern(f, argnums, "hessian pattern")


jacobian_sparsity.__doc__ = detect.jacobian_sparsity.__doc__ + (
    " A numba function (or jit=True) is traced inside numba (dualad.jit.sparse).")
hessian_sparsity.__doc__ = detect.hessian_sparsity.__doc__ + (
    " A numba function (or jit=True) is traced inside numba (dualad.jit.sparse).")


def _compiled_pattern(f, argnums, which):
    kernel = _sparse_kernels(f, argnums)(which)

    @functools.wraps(dispatch.compiled_function(f).py_func)
    def pattern_fn(*args):
        return pattern_from(kernel(*args))

    pattern_fn.kernel = kernel
    return pattern_fn


def _with_plan(fn, f, sparse, argnums, has_aux):
    """fn with .sparsity_plan(*args): the pattern and colourings it uses for these arguments."""
    def sparsity_plan(*args, **kwargs):
        return f.run(lambda g: _aux_call(_bound(g, kwargs), has_aux, args,
                                         lambda h, a: sparse.plan(h, a, argnums))[0])
    fn.sparsity_plan = sparsity_plan
    return fn


# ---- has_aux ------------------------------------------------------------------------------------
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


def _bound(f, kwargs):
    """f with keyword arguments given to a transform's function: they go to f as they are,
    undifferentiated (as in JAX)."""
    return functools.partial(f, **kwargs) if kwargs else f


# ---- auto mode on the Python path ---------------------------------------------------------------
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


def _jacobian_mode(f, args, argnums, chunk, n_out=None):
    """choose_mode's pick; forward when a chunk is given (the chunk is forward mode's)."""
    if chunk is not None:
        return "forward"
    from .modes import choose_mode

    return choose_mode(f, *args, argnums=argnums, n_out=n_out, compiled=False).mode


def _hessian_mode(f, args, argnums):
    """choose_hessian_mode's pick; HyperDual blocks for a tuple of argnums (the only mode
    that gives the tuple of blocks)."""
    if isinstance(argnums, (tuple, list)):
        return "forward"
    from .modes import choose_hessian_mode

    return choose_hessian_mode(f, *args, argnums=argnums, compiled=False).mode


# ---- first derivatives ---------------------------------------------------------------------------
def jvp(f, primals, tangents):
    """(f(*primals), J·tangents) in one Dual pass: JAX's jvp. tangents has the structure of
    primals (tangents at passed-through leaves, ints, None, static, are ignored); the output
    tangent has the structure of f's output. A numba function of one float, 1-D array or
    tuple of them runs its compiled kernel (dispatch.jvp_kernel)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes tuples: jvp(f, (x, ...), (v, ...))")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents")
    if _one_compiled_primal(f, primals):
        return dispatch.jvp_kernel(f)(primals[0], tangents[0])
    return OnDemand(python_twin(f)).run(lambda g: jvp_forward(g, primals, tangents))


def _one_compiled_primal(f, primals):
    """jvp and vjp have no jit= (JAX's signatures): a numba function of one float, 1-D array
    or tuple of them runs compiled; several primals or other structures, its Python twin."""
    return is_dispatcher(f) and len(primals) == 1 and (
        not is_node(primals[0]) or type(primals[0]) is tuple)


def vjp(f, *primals, has_aux=False):
    """JAX's vjp: (f(*primals), vjp_fn) where vjp_fn(cotangent) is a tuple with one cotangent
    per primal, each with its structure. The cotangent must have the structure and shapes of
    f's output. With has_aux: (f's output, vjp_fn, aux). For a numba function of one float,
    1-D array or tuple of them, vjp_fn runs the compiled kernel (dispatch.vjp_kernel),
    (x, cotangent, *args) -> (f, cotangent · J), which numba code can call directly."""
    if _one_compiled_primal(f, primals) and not has_aux:
        return _compiled_vjp(f, primals[0])
    f = OnDemand(python_twin(f))  # several primals, structures or has_aux: the Python path
    (value, pullback), aux = f.run(lambda g: _aux_call(
        g, has_aux, primals, lambda h, a: vjp_recording(h, a, tuple(range(len(a))), "vjp_fn")))
    return (value, pullback, aux) if has_aux else (value, pullback)


def _compiled_vjp(f, x):
    """vjp of a numba function of one argument: f(x) compiled on floats, and a vjp_fn whose
    every call records f on the compiled tape and sweeps once."""
    from numba.core.errors import NumbaError

    kernel = dispatch.vjp_kernel(f)
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


def _single_argnum(argnums, what):
    if isinstance(argnums, (tuple, list)):
        raise ValueError(f"{what} differentiates one scalar argument (argnums={argnums!r}); "
                         "use grad or jacobian for several")


def derivative(f, argnums=0, jit=None):
    """f'(x) for scalar x; the result has the structure and shapes of f(x)."""
    _single_argnum(argnums, "derivative")
    return _kernel_or(_python_derivative(f, argnums), "derivative", "forward", f, jit, argnums)


def _python_derivative(f, argnums):
    f = OnDemand(python_twin(f))

    @functools.wraps(f.f)
    def derivative_fn(*args, **kwargs):
        return f.run(lambda g: derivative_forward(_bound(g, kwargs), args, argnums))

    return derivative_fn


def value_and_grad(f, argnums=0, has_aux=False, *, chunk=None, jit=None, mode="auto"):
    """(f(*args), ∇f) for scalar-valued f; the gradient has the structure of args[argnums].
    With has_aux: ((value, aux), ∇f).

    mode: "forward", "reverse" (one sweep of a tape) or "auto" (dualad.choose_mode).
    Given a numba dispatcher (or jit=True) it returns a compiled kernel: forward mode, a
    tape compiled into the kernel (mode="reverse"), or with "auto" the tape from
    dualad.modes.COMPILED_REVERSE_FROM inputs on where f compiles onto it, else forward mode.
    """
    _check_mode(mode, ("forward", "reverse"))
    _check_chunk(chunk)
    return _kernel_or(_python_value_and_grad(f, argnums, has_aux, chunk, mode), "value_and_grad",
                      mode, f, jit, argnums, chunk, has_aux)


def _python_value_and_grad(f, argnums, has_aux, chunk, mode):
    f = OnDemand(python_twin(f))
    decisions = {}

    def run(g, args):
        def choose():
            return _jacobian_mode(g, args, argnums, chunk, 1)
        if _chosen(mode, args, decisions, choose) == "reverse":
            value, pullback = vjp_recording(g, args, argnums, "grad")
            check_scalar(value, f.f, "grad")
            return value, pullback(np.float64(1.0))
        value, pieces = jacobian_forward(g, args, argnums, chunk)
        check_scalar(value, f.f, "grad")
        return value, pieces

    @functools.wraps(f.f)
    def value_and_grad_fn(*args, **kwargs):
        (value, gradient), aux = f.run(lambda g: _aux_call(_bound(g, kwargs), has_aux, args, run))
        return ((value, aux), gradient) if has_aux else (value, gradient)

    return value_and_grad_fn


def grad(f, argnums=0, has_aux=False, *, chunk=None, jit=None, mode="auto"):
    """Gradient of scalar-valued f, shaped like args[argnums] (a tuple for tuple argnums;
    the argument's structure for trees). With has_aux: (∇f, aux).

    mode: "forward", "reverse" or "auto". Given a numba dispatcher (or jit=True) it returns
    a compiled kernel in that mode (as value_and_grad's).
    """
    _check_mode(mode, ("forward", "reverse"))
    _check_chunk(chunk)
    value_and_grad_fn = _python_value_and_grad(f, argnums, has_aux, chunk, mode)
    if _compiled(f, jit, has_aux):  # gradient kernels take the Python value_and_grad
        return dispatch.kernel("grad", mode, f, argnums, value_and_grad_fn, chunk)

    @functools.wraps(value_and_grad_fn)
    def grad_fn(*args, **kwargs):
        (_, aux), gradient = (value_and_grad_fn(*args, **kwargs) if has_aux
                              else ((None, None), value_and_grad_fn(*args, **kwargs)[1]))
        return (gradient, aux) if has_aux else gradient

    return grad_fn


def jacfwd(f, argnums=0, has_aux=False, *, chunk=None, jit=None, sparsity=None, check=None):
    """Jacobian by forward mode: jacfwd(f)(x).shape == f(x).shape + x.shape; for trees, f's
    output structure with each leaf replaced by the input structure of blocks.

    sparsity=True (detect the pattern; kept per input shapes and integer, boolean and
    string arguments) or a pattern (anything scipy.sparse reads, or a boolean array): a
    scipy.sparse.csr_array (M, N) by Dual passes seeded with a column colouring
    (dualad.sparsity). check: None (a detected pattern reused where it may not hold, f
    having read the values it was detected at or other float arguments, is verified on a
    random direction and detected again where it fails), True (verify every result; a given
    pattern that fails raises), False (never). Given a numba dispatcher (or jit=True) it
    returns a compiled kernel (scalar or 1-D input).
    """
    _check_chunk(chunk)
    sparse = _sparse_jacobian(f, jit, argnums, has_aux, "forward", chunk, sparsity, check)
    if sparse is not None:
        return sparse
    return _kernel_or(_python_jacobian(f, argnums, has_aux, "forward", chunk), "jacfwd", "forward",
                      f, jit, argnums, chunk, has_aux)


def jacrev(f, argnums=0, has_aux=False, *, jit=None, sparsity=None, check=None):
    """Jacobian by reverse mode: one tape, one backward sweep per output entry;
    shape f(x).shape + x.shape (trees as jacfwd). sparsity=: a csr_array by one sweep per
    row colour (as jacfwd's). Given a numba dispatcher (or jit=True) it returns a compiled
    kernel: f records onto the compiled tape (scalar and 1-D outputs)."""
    sparse = _sparse_jacobian(f, jit, argnums, has_aux, "reverse", None, sparsity, check)
    if sparse is not None:
        return sparse
    return _kernel_or(_python_jacobian(f, argnums, has_aux, "reverse", None), "jacrev", "reverse",
                      f, jit, argnums, None, has_aux)


def jacobian(f, argnums=0, has_aux=False, *, mode="auto", chunk=None, jit=None, sparsity=None,
             check=None):
    """Jacobian of f with respect to args[argnums]; shape f(x).shape + x.shape.

    mode: "forward" (Dual passes, N/chunk of them), "reverse" (a tape and one sweep per
    output entry) or "auto" (dualad.choose_mode decides from N, M and the tape; compiled,
    dualad.jit.auto decides per input size from N, M and calibrated costs).
    sparsity=True or a pattern: a scipy.sparse.csr_array (M, N), float64, in one Dual pass
    per chunk of column colours or one sweep per row colour ("auto": the fewer colours);
    see jacfwd and dualad.jacobian_sparsity. The returned function's .sparsity_plan(*args)
    gives the pattern and colourings it uses (plan.n_colors("columns"), ...).
    """
    _check_mode(mode, ("forward", "reverse"))
    _check_chunk(chunk)
    sparse = _sparse_jacobian(f, jit, argnums, has_aux, mode, chunk, sparsity, check)
    if sparse is not None:
        return sparse
    return _kernel_or(_python_jacobian(f, argnums, has_aux, mode, chunk), "jacobian", mode, f, jit,
                      argnums, chunk, has_aux)


def _python_jacobian(f, argnums, has_aux, mode, chunk, sparsity=None, check=None):
    f = OnDemand(python_twin(f))
    decisions = {}
    sparse = SparseJacobian(sparsity, mode, chunk, check) if sparsity is not None else None

    def run(g, args):
        if sparse is not None:
            return sparse(g, args, argnums)

        def choose():
            return _jacobian_mode(g, args, argnums, chunk)
        if _chosen(mode, args, decisions, choose) == "reverse":
            return jacobian_reverse(g, args, argnums)
        return jacobian_forward(g, args, argnums, chunk)[1]

    @functools.wraps(f.f)
    def jacobian_fn(*args, **kwargs):
        jac, aux = f.run(lambda g: _aux_call(_bound(g, kwargs), has_aux, args, run))
        return (jac, aux) if has_aux else jac

    return jacobian_fn if sparse is None else _with_plan(jacobian_fn, f, sparse, argnums, has_aux)


# ---- second derivatives --------------------------------------------------------------------------
def second_derivative(f, argnums=0, jit=None):
    """f''(x) for scalar x, exactly, in one HyperDual pass; structure and shapes of f(x).

    Given a numba dispatcher (or jit=True) it returns a compiled kernel (scalar outputs).
    """
    _single_argnum(argnums, "second_derivative")
    twin = OnDemand(python_twin(f))

    @functools.wraps(twin.f)
    def second_derivative_fn(*args, **kwargs):
        return twin.run(lambda g: second_derivative_forward(_bound(g, kwargs), args, argnums))

    return _kernel_or(second_derivative_fn, "second_derivative", "forward", f, jit, argnums)


def hessian(f, argnums=0, has_aux=False, *, chunk=None, jit=None, mode="auto", sparsity=None,
            check=None):
    """Exact Hessian of scalar f; shape x.shape + x.shape. For trees (and tuple argnums) the
    input structure with each leaf replaced by the input structure of blocks: H[a][b] =
    ∂²f/∂a∂b, as in JAX. With has_aux: (H, aux).

    mode "forward": HyperDual blocks (ε1 chunk × ε2 chunk), O(N²) work per value;
    "forward-over-reverse": jacfwd of the reverse-mode gradient (Duals through the tape),
    N/chunk passes, for large N; "auto" picks by dualad.modes' cost model.
    sparsity=True or a pattern: a symmetric scipy.sparse.csr_array (N, N), float64, by one
    forward-over-reverse pass per chunk of star colours (mode "auto" or
    "forward-over-reverse"); check as jacfwd's.
    Given a numba dispatcher (or jit=True) it returns a compiled kernel (1-D input):
    diagonal blocks use symmetric hyper-duals, which store half of the ε1ε2 block.
    """
    _check_chunk(chunk)
    _check_mode(mode, ("forward", "forward-over-reverse"))
    twin = OnDemand(python_twin(f))
    decisions = {}
    sparse = None
    path = _sparse_path(f, jit, sparsity, check)
    if path:
        if mode == "forward":
            raise ValueError("a sparse Hessian is computed forward-over-reverse (one pass per "
                             "chunk of star colours): use mode='auto' or 'forward-over-reverse' "
                             "with sparsity=")
        if path == "compiled":
            return _compiled_sparse_hessian(f, argnums, has_aux, chunk, sparsity, check)
        sparse = SparseHessian(sparsity, chunk, check)

    def run(g, args):
        if sparse is not None:
            return sparse(g, args, argnums)
        chosen = _chosen(mode, args, decisions, lambda: _hessian_mode(g, args, argnums))
        if chosen == "forward-over-reverse":
            if isinstance(argnums, (tuple, list)):
                raise ValueError("hessian(mode='forward-over-reverse') takes a single argnums; "
                                 "use mode='forward' for a tuple")
            return jacfwd(grad(g, argnums, jit=False, mode="reverse"), argnums, chunk=chunk,
                          jit=False)(*args)
        return hessian_forward(g, args, argnums, chunk)

    @functools.wraps(twin.f)
    def hessian_fn(*args, **kwargs):
        hess, aux = twin.run(lambda g: _aux_call(_bound(g, kwargs), has_aux, args, run))
        return (hess, aux) if has_aux else hess

    if sparse is not None:
        return _with_plan(hessian_fn, twin, sparse, argnums, has_aux)
    return _kernel_or(hessian_fn, "hessian", mode, f, jit, argnums, chunk, has_aux)


def hvp(f, chunk=None, jit=None, mode="auto"):
    """Hessian-vector product: hvp(f)(x, v, *args) = ∇²f(x, *args) · v, structured as x.

    mode "forward-over-reverse": the reverse-mode gradient run on Duals of one partial
    carrying v (one recording and one sweep, O(n), a small constant times a gradient);
    "forward": ε2 carries v and ε1 the identity in chunks of HyperDuals, so the ε1ε2 part
    is H·v (n/chunk passes, O(n²)); "auto": forward up to PYTHON_HVP_FORWARD_UP_TO inputs
    (modes.py, measured), else forward-over-reverse. No Hessian is formed. Given a numba dispatcher (or
    jit=True) it returns a compiled kernel (scalar or 1-D x).
    """
    _check_chunk(chunk)
    _check_mode(mode, ("forward", "forward-over-reverse"))
    twin = OnDemand(python_twin(f))

    @functools.wraps(twin.f)
    def hvp_fn(x, v, *args, **kwargs):
        return twin.run(lambda g: _hvp(_bound(g, kwargs), x, v, args))

    def _hvp(g, x, v, args):
        chosen = mode
        if mode == "auto":
            n = sum(np.size(leaf) for leaf in flatten(x)[0])
            chosen = ("forward" if chunk is not None or n <= PYTHON_HVP_FORWARD_UP_TO
                      else "forward-over-reverse")
        if chosen == "forward":
            return hvp_forward(g, x, v, args, chunk)
        gradient = grad(lambda x_: g(x_, *args), jit=False, mode="reverse")
        return jvp_forward(gradient, (x,), (v,))[1]

    return _kernel_or(hvp_fn, "hvp", mode, f, jit, 0, chunk)
