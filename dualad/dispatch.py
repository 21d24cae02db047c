"""The compiled path's routing: which kernel factory of dualad.jit a transform of a numba
function uses in each mode. This table is the one place that pairs a (transform, mode) with
a kernel; transforms.py asks it and passes in the Python path's equivalent of the kernel
(what the kernel means where user code runs on the Python path, and what its compile errors
try before they advise jit=False).

    kernel(transform, mode, f, argnums, python, chunk)   a numba dispatcher
    jvp_kernel(f), vjp_kernel(f)                         one kernel per numba function

A kernel pickles as the call that made it (`rebuilt`): the unpickling process finds the
user's function by module and name and calls the same transform there, which compiles the
kernel or loads it from the disk cache. The public transforms reach this layer through
TRANSFORMS, which dualad/__init__.py fills (this module never imports transforms.py).

dualad.jit is imported on first use (numba costs about half a second to import).
"""

from __future__ import annotations

import functools
import inspect
import pickle
import weakref

import numpy as np

from .arguments import narrow_float
from .forward import jvp_forward
from .modes import compiled_costs, compiled_hessian_costs
from .recording import vjp_recording
from .twin import is_dispatcher, python_twin

__all__ = ["runs_compiled", "compiled_function", "kernel", "sparse_kernels", "jvp_kernel", "vjp_kernel",
           "NO_COMPILED_MODE", "TRANSFORMS", "rebuilt"]

# (transform, mode) -> (module of dualad.jit, factory, what the factory takes after python)
COMPILED = {
    ("value_and_grad", "forward"): ("kernels", "value_and_grad", "chunk"),
    ("value_and_grad", "reverse"): ("adjoint", "value_and_grad_or_tape", None),
    ("value_and_grad", "auto"): ("auto", "value_and_grad", "costs"),
    ("grad", "forward"): ("kernels", "grad", "chunk"),
    ("grad", "reverse"): ("adjoint", "grad_or_tape", None),
    ("grad", "auto"): ("auto", "grad", "costs"),
    ("jacobian", "forward"): ("kernels", "jacfwd", "chunk"),
    ("jacobian", "reverse"): ("tape", "jacrev", None),
    ("jacobian", "auto"): ("auto", "jacobian", "costs"),
    ("jacfwd", "forward"): ("kernels", "jacfwd", "chunk"),
    ("jacrev", "reverse"): ("tape", "jacrev", None),
    ("hessian", "forward"): ("kernels", "hessian", "chunk"),
    ("hessian", "forward-over-reverse"): ("dual_tape", "hessian", "chunk"),
    ("hessian", "auto"): ("auto", "hessian", "hessian_costs"),
    ("hvp", "forward"): ("kernels", "hvp", "chunk"),
    ("hvp", "forward-over-reverse"): ("dual_tape", "hvp", None),
    ("hvp", "auto"): ("auto", "hvp", "chunk"),
    ("derivative", "forward"): ("kernels", "derivative", None),
    ("second_derivative", "forward"): ("kernels", "second_derivative", None),
    ("jvp", "forward"): ("kernels", "jvp", None),
    ("vjp", "reverse"): ("tape", "vjp", None),
    ("jacobian_sparsity", "forward"): ("sparse", "jacobian_pattern", None),
    ("hessian_sparsity", "forward"): ("sparse", "hessian_pattern", None),
    ("sparse_jacobian", "forward"): ("sparse", "jacfwd", "chunk"),
    ("sparse_jacobian", "reverse"): ("sparse", "jacrev", None),
    ("sparse_hessian", "forward-over-reverse"): ("sparse", "hessian", "chunk"),
}

# The kernels of a numba function's sparsity (dualad.jit.sparse), by what sparsity/ asks for.
_SPARSE = {"jacobian pattern": ("jacobian_sparsity", "forward"),
           "hessian pattern": ("hessian_sparsity", "forward"),
           "forward": ("sparse_jacobian", "forward"), "reverse": ("sparse_jacobian", "reverse"),
           "hessian": ("sparse_hessian", "forward-over-reverse")}

NO_COMPILED_MODE = (
    "this mode has no compiled kernel: pass jit=False to run it on the Python path (a numba "
    "function is differentiated through its pure-Python twin), or mode='forward' for a "
    "compiled forward-mode kernel")


def runs_compiled(f, jit):
    """jit=None compiles iff f is a numba dispatcher; jit=True compiles a plain function with
    numba; jit=False runs the Python path (a dispatcher's pure-Python twin, see twin.py)."""
    return is_dispatcher(f) if jit is None else bool(jit)


def compiled_function(f):
    """f as a numba dispatcher (jit=True on a plain function compiles it)."""
    if is_dispatcher(f):
        return f
    import numba

    return numba.njit(f)


def _checked_argnums(argnums):
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    if not nums or not all(isinstance(i, (int, np.integer)) and i >= 0 for i in nums):
        raise ValueError(f"compiled transforms take argnums as an int or a tuple of ints counted "
                         f"from 0 (got argnums={argnums!r}); pass jit=False for negative argnums")
    return tuple(int(i) for i in nums) if isinstance(argnums, (tuple, list)) else int(argnums)


def kernel(transform, mode, f, argnums, python, chunk=None):
    """The compiled kernel of `transform` in `mode` for f (a function or dispatcher) at
    argnums; python is the same transform on the Python path. An explicit chunk means
    forward mode (the chunk is forward mode's)."""
    from . import jit as compiled_path

    requested = mode
    if mode == "auto" and chunk is not None:
        mode = "forward"
    entry = COMPILED.get((transform, mode))
    if entry is None:
        raise NotImplementedError(NO_COMPILED_MODE)
    module, name, takes = entry
    options = {"chunk": (chunk,), "costs": (compiled_costs(),),
               "hessian_costs": (compiled_hessian_costs(),), None: ()}[takes]
    argnums = _checked_argnums(argnums)
    key = (transform, f, argnums, requested, chunk, options)
    try:
        return _KERNELS[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable f (a callable object): made anew each time
        key = None
    made = _Variants(f, argnums, python)
    called = made(module, name, *options)
    pick = _PICKS.get((module, name)) if takes != "chunk" or chunk is None else None
    between = 1 if transform == "hvp" else 0  # hvp's kernel takes (x, v, *f's other arguments)
    # (hvp's kernel puts v after f's first argument: its flat view takes argnums=0 only)
    flat = _FlatView(transform, requested, f, argnums, python, chunk, between) \
        if transform in _SHAPED_BACK and isinstance(argnums, int) and not (between and argnums) else None
    compiled_path.kernels.called_from_python(called, _python_call(called, f, argnums, made, pick,
                                                                  between, flat))
    result = _picklable(called, transform, f, (("argnums", argnums), ("mode", requested), ("chunk", chunk)))
    if key is not None:
        _KERNELS[key] = result
    return result


# Kernels made in this process, by what made them (transform, f, argnums, mode, chunk and
# the cost model's figures): the same transform of the same f again (`dualad.grad(f)(x)`
# inside a loop) is the kernel made before, as jax.jit keeps one per function, instead of a
# new one that compiles again (seconds and megabytes each time, so a loop of fresh
# transforms runs at compile speed and its memory grows without bound:
# docs/decisions/0003-kernel-cache-and-identity.md). They live as long as the process, as
# numba's dispatchers do.
_KERNELS = {}


class _Variants:
    """The kernels of one transform of f at argnums: variants(module, name, *options) is
    dualad.jit's module.name factory's kernel, made once per options (what a pick from
    Python chooses among), and the pick the auto Jacobian learns per N (jacobian_tape)."""

    def __init__(self, f, argnums, python):
        self.f, self.argnums, self.python = compiled_function(f), argnums, python
        self.kernels, self.jacobian_tape = {}, {}

    def __call__(self, module, name, *options):
        key = (module, name, options)
        if key not in self.kernels:
            from . import jit as compiled_path

            factory = getattr(getattr(compiled_path, module), name)
            self.kernels[key] = compiled_path.kernels.at_argnum(
                factory, self.f, self.argnums, self.python, *options)
        return self.kernels[key]


# ---- calls from Python: only the kernel these arguments need is compiled -------------------------
# Inside njit code a kernel compiles every branch it can take: auto mode both modes, forward
# mode one width for every N. Called from Python, a kernel instead runs the one kernel its
# arguments need, chosen by input size N (the flat size of the differentiated arguments) and
# compiled on first use: auto mode's pick (dualad.jit.auto.pick, as inside numba), and the
# forward width jit.kernels.chunk_for(N). Picks take the kernel module (numba) as `jit`.

def _forward(name):
    def pick(made, jit, n, args):
        return made("kernels", name, jit.kernels.chunk_for(n))
    return pick


def _hessian_blocks(jit, n):
    """The forward Hessian kernel's options for n inputs: one symmetric block up to ONE_PASS
    (the general blocks' type is not compiled), blocks of DEFAULT_CHUNK beyond."""
    if n <= jit.kernels.ONE_PASS:
        return ("kernels", "hessian", jit.kernels.chunk_for(n), True)
    return ("kernels", "hessian", jit.kernels.DEFAULT_CHUNK)


def _hessian(made, jit, n, args):
    return made(*_hessian_blocks(jit, n))


def _on_tape(made, jit, reverse, forward, args, *fallbacks):
    """reverse where f records onto its tape for these arguments' types, else the first of
    fallbacks where f does, else forward (asked when the pick for an N is made; the pick is
    then kept for that N)."""
    for candidate in (reverse,) + fallbacks:
        kernel = made(*candidate)
        if jit.auto.records_onto_tape(kernel, [kernel.typeof_pyval(a) for a in args], from_python=True):
            return kernel
    return made(*forward)


def _gradient(name):
    def pick(made, jit, n, args):
        width = jit.kernels.chunk_for(n)
        forward = ("kernels", name, width)
        if not jit.auto.pick(True, n, 1, width, compiled_costs()):
            return made(*forward)
        # reverse mode as inside njit code (jit.auto.value_and_grad): the generated adjoint
        # where it covers f, the tape otherwise
        return _on_tape(made, jit, ("adjoint", f"{name}_or_tape"), forward, args, ("tape", name))
    return pick


def _jacobian(made, jit, n, args):
    """Forward mode on the first call for an N, whose result tells M; after that the pick for
    (N, M), kept per N (as the compiled auto Jacobian keeps it)."""
    width = jit.kernels.chunk_for(n)
    forward = ("kernels", "jacfwd", width)
    picked = made.jacobian_tape
    if n not in picked:
        return _Learning(made(*forward), lambda jac: picked.setdefault(n, jit.auto.pick(
            False, n, _entries(jac) // max(n, 1), width, compiled_costs())))
    return _on_tape(made, jit, ("tape", "jacrev"), forward, args) if picked[n] else made(*forward)


def _entries(result):
    """The number of floats in a kernel's result: an array, or a tuple of them (argnums)."""
    if isinstance(result, tuple):
        return sum(_entries(r) for r in result)
    return np.size(result)


class _Learning:
    """A kernel whose result, the first time, is shown to learn(result) (the auto Jacobian's
    M comes from its first forward-mode result)."""

    def __init__(self, kernel, learn):
        self.kernel, self.learn = kernel, learn

    def run(self, args):
        result = self.kernel(*args)
        self.learn(result)
        return result


def _auto_hessian(made, jit, n, args):
    """One HyperDual block up to ONE_PASS inputs; beyond, jit.auto.pick_hessian's choice
    between HyperDual blocks and forward-over-reverse (where f records onto the tape), as
    inside njit code (jit.auto.hessian). Up to ONE_PASS inputs forward-over-reverse is a
    little faster inside a compiled loop and as fast from Python, but a new function's first
    Hessian through the tape in Duals compiles about four times as long as the block
    (docs/decisions/0001-where-cold-time-goes.md). Forward-over-reverse goes
    through the sparsity detected at x (jit.sparse.detecting_hessian), or where f does not
    record on sparsity tracers, the dense passes."""
    if n <= jit.kernels.ONE_PASS or not jit.auto.pick_hessian(
            n, jit.kernels.DEFAULT_CHUNK, jit.dual_tape.DEFAULT_CHUNK, compiled_hessian_costs()):
        return _hessian(made, jit, n, args)
    dense = ("dual_tape", "hessian", None)
    return _on_tape(made, jit, ("sparse", "detecting_hessian"),  # where f records on tracers
                    _hessian_blocks(jit, n), args, dense)


def _auto_hvp(made, jit, n, args):
    """Forward mode while one pass holds the input, else forward-over-reverse (on the tape)."""
    forward = ("kernels", "hvp", jit.kernels.chunk_for(n))
    if not jit.auto.pick_hvp(n, jit.kernels.ONE_PASS):
        return made(*forward)
    return _on_tape(made, jit, ("dual_tape", "hvp"), forward, args)


_PICKS = {("kernels", "value_and_grad"): _forward("value_and_grad"),
          ("kernels", "grad"): _forward("grad"),
          ("kernels", "jacfwd"): _forward("jacfwd"),
          ("kernels", "hvp"): _forward("hvp"),
          ("kernels", "hessian"): _hessian,
          ("auto", "value_and_grad"): _gradient("value_and_grad"),
          ("auto", "grad"): _gradient("grad"),
          ("auto", "jacobian"): _jacobian,
          ("auto", "hessian"): _auto_hessian,
          ("auto", "hvp"): _auto_hvp}


def _python_call(kernel, f, argnums, made, pick, between=0, flat=None):
    """What a kernel does when Python calls it: keyword arguments bound to f's parameters
    (numba kernels take positions; `between` kernel arguments that are not f's follow f's
    first, as hvp's v), an n-D float64 input differentiated as its flat view (`flat`), then
    the kernel that pick chooses for this input size N (kept per N, so that a call costs a
    look-up), or the kernel itself where there is nothing to pick or N cannot be read off
    (the kernel then gives its own error)."""
    from . import jit
    from .jit.kernels import call_compiled

    signature = _signature(f, between)
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    chosen_for = {}

    def call(*args, **kwargs):
        if kwargs:
            args = _positional(signature, args, kwargs, argnums)
        first = args[positions[0]] if len(args) > positions[0] else None
        # the common call, one float64 vector, goes straight to the pick
        vector = len(positions) == 1 and type(first) is np.ndarray and first.dtype == np.float64
        if not vector or first.ndim != 1:
            narrow = _narrow_inputs(args, positions)
            if narrow is not None:  # float32 (float16) inputs: computed in float64, returned so
                args = tuple(np.asarray(a, np.float64)[()] if i in positions and narrow_float(a) else a
                             for i, a in enumerate(args))
                return _as_dtype(call(*args), narrow)
            if flat is not None and vector and first.ndim >= 2:
                return flat(args)
        if pick is None:
            return call_compiled(kernel, args)
        n = first.size if vector else _input_size(args, positions)
        chosen = chosen_for.get(n)
        if chosen is None:
            if n is None:
                return call_compiled(kernel, args)
            chosen = pick(made, jit, n, args)
            if isinstance(chosen, _Learning):  # not kept: the pick changes once it has learnt
                return chosen.run(args)
            chosen_for[n] = chosen
        return chosen(*args)  # a kernel of its own (never this one): numba's call

    return call


# Transforms whose kernels take an n-D input from Python as its flat view: the result's
# input axes (flat, N) shaped back as the input, in C order.
# Each entry: (the kernel's result shaped as the input of `shape`, the Python path's result
# for an input of k dimensions and n entries flattened).
_SHAPED_BACK = {
    "grad": (lambda r, shape: r.reshape(shape), lambda r, n, k: np.reshape(r, (n,))),
    "value_and_grad": (lambda r, shape: (r[0], r[1].reshape(shape)),
                       lambda r, n, k: (r[0], np.reshape(r[1], (n,)))),
    "jacobian": (lambda r, shape: r.reshape(r.shape[:-1] + shape),
                 lambda r, n, k: np.reshape(r, np.shape(r)[:np.ndim(r) - k] + (n,))),
    "hessian": (lambda r, shape: r.reshape(shape + shape), lambda r, n, k: np.reshape(r, (n, n))),
    "hvp": (lambda r, shape: r.reshape(shape), lambda r, n, k: np.reshape(r, (n,))),
}
_SHAPED_BACK["jacfwd"] = _SHAPED_BACK["jacrev"] = _SHAPED_BACK["jacobian"]


class _FlatView:
    """An n-D float64 input from Python (positions as an (N, 3) array), differentiated as its
    flat view: the kernel of `transform` for flat_view(..., x_flat, ..., shape) =
    f(..., x_flat.reshape(shape), ...), a function of the 1-D input that compiled kernels
    take, with its results' input axes shaped back (C order, as NumPy's reshape). One
    kernel per number of dimensions and of arguments; the shape is an argument."""

    def __init__(self, transform, mode, f, argnums, python, chunk, between):
        self.transform, self.mode, self.f, self.argnums = transform, mode, f, argnums
        self.python, self.chunk, self.between = python, chunk, between
        self.kernels = {}

    def __call__(self, args):
        x = args[self.argnums]
        shape, n = x.shape, x.size
        flat = list(args)
        flat[self.argnums] = x.reshape(-1)
        if self.between and len(flat) > 1:  # hvp's v, shaped as x
            v = np.asarray(flat[1], np.float64)
            if v.shape != shape:
                raise ValueError(f"hvp: v has shape {v.shape}, x has shape {shape}: give v the shape of x")
            flat[1] = v.reshape(-1)
        key = (x.ndim, len(args))
        if key not in self.kernels:
            self.kernels[key] = self._kernel(x.ndim, len(args) - self.between)
        shape_back, _ = _SHAPED_BACK[self.transform]
        return shape_back(self.kernels[key](*flat, shape), shape)

    def _kernel(self, ndim, n_args):
        import numba

        names = [f"a{i}" for i in range(n_args)]
        passed = [f"{a}.reshape(shape)" if i == self.argnums else a for i, a in enumerate(names)]
        source = (f"def flat_view({', '.join(names)}, shape):\n"
                  f"    return f({', '.join(passed)})\n")
        namespace = {"f": compiled_function(self.f)}
        exec(compile(source, f"<dualad flat view of {getattr(self.f, '__name__', 'f')}>", "exec"),  # noqa: S102
             namespace)
        view = namespace["flat_view"]
        view.__qualname__ = view.__name__ = f"{getattr(self.f, '__name__', 'f')}_flat_view_{ndim}d"
        return kernel(self.transform, self.mode, numba.njit(view), self.argnums,
                      self._python(ndim), self.chunk)

    def _python(self, ndim):
        """The flat kernel's meaning on the Python path: self.python on the shaped input,
        its input axes flattened."""
        python, argnums, between, transform = self.python, self.argnums, self.between, self.transform
        # a gradient kernel's Python equivalent is value_and_grad (as for every gradient factory)
        _, flatten = _SHAPED_BACK["value_and_grad" if transform == "grad" else transform]

        def flat_python(*args):
            args, shape = list(args[:-1]), args[-1]
            n = int(np.prod(shape))
            args[argnums] = np.reshape(args[argnums], shape)
            if between:
                args[1] = np.reshape(args[1], shape)
            return flatten(python(*args), n, ndim)
        return flat_python


def _narrow_inputs(args, positions):
    """The dtype of the differentiated arguments where one is float32 or float16 (float16 if
    both), else None: compiled kernels take float64, and the Python path returns such an
    input's derivatives in its dtype (arguments.narrow_float)."""
    found = [narrow_float(args[i]) for i in positions if i < len(args)]
    found = [d for d in found if d is not None]
    return min(found, key=lambda d: d.itemsize) if found else None


def _as_dtype(result, dtype):
    """result with its float64 arrays (through tuples) in dtype."""
    if isinstance(result, tuple):
        return type(result)(*(_as_dtype(r, dtype) for r in result)) if hasattr(result, "_fields") \
            else tuple(_as_dtype(r, dtype) for r in result)
    if isinstance(result, np.ndarray) and result.dtype == np.float64:
        return result.astype(dtype)
    return result


def _signature(f, between):
    """The kernel's arguments as a signature: f's, with `between` more after the first."""
    try:
        signature = inspect.signature(getattr(f, "py_func", f))
        parameters = list(signature.parameters.values())
        extra = [inspect.Parameter("v" if k == 0 else f"v{k}", inspect.Parameter.POSITIONAL_ONLY)
                 for k in range(between)]
        if between and parameters and parameters[0].kind != inspect.Parameter.POSITIONAL_ONLY:
            parameters[0] = parameters[0].replace(kind=inspect.Parameter.POSITIONAL_ONLY)
        return signature.replace(parameters=parameters[:1] + extra + parameters[1:])
    except (TypeError, ValueError):  # no readable signature, or f names a parameter v
        return None


def _positional(signature, args, kwargs, argnums):
    """args and kwargs as the kernel's positional arguments (f's defaults filled in); the
    differentiated arguments must come by position, as on the Python path (and in JAX)."""
    if signature is None:
        raise TypeError("compiled kernels take keyword arguments only for functions whose "
                        "signature Python can read; pass them by position")
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    if max(positions) >= len(args):
        raise ValueError(f"argnums={argnums!r} does not name a positional argument (called with "
                         f"{len(args)}): pass the differentiated arguments by position")
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"compiled kernels pass arguments to f by position; f takes "
                        f"{sorted(bound.kwargs)} as keyword-only (**kwargs): pass jit=False")
    return bound.args


def _input_size(args, positions):
    """The flat size of the differentiated arguments, or None where they are not floats,
    float arrays or tuples of them (the kernel says why)."""
    n = 0
    for position in positions:
        if position >= len(args):
            return None
        size = _leaf_size(args[position])
        if size is None:
            return None
        n += size
    return n


def _leaf_size(arg):
    if isinstance(arg, np.ndarray):
        return arg.size
    if isinstance(arg, (float, int, np.floating, np.integer)) and not isinstance(arg, bool):
        return 1
    if isinstance(arg, tuple):
        sizes = [_leaf_size(a) for a in arg]
        return None if None in sizes else sum(sizes)
    return None


def sparse_kernels(f, argnums, chunk, python):
    """kernel(which, n_in=None): the compiled sparsity kernel `which` ("jacobian pattern",
    "hessian pattern", "forward", "reverse", "hessian") of f at argnums, made on first need, one
    per f, argnums and chunk in the process (every sparse transform of f shares them: a plan is
    an argument; where no chunk is given, the forward one's is the dense forward kernel's for
    n_in inputs);
    python(which) is its Python path equivalent (sparsity/compiled.py says what each computes)."""
    def kernel_of(which, n_in=None):
        width = chunk
        if which == "forward" and chunk is None and n_in is not None:
            # the dense forward Jacobian's width for n_in inputs (at least the colours): f
            # compiled on those duals serves both, where passes of DEFAULT_CHUNK compiled f on
            # a second dual type
            width = _kernels().chunk_for(n_in)
        key = (f, argnums if not isinstance(argnums, list) else tuple(argnums),
               width if which in ("forward", "hessian") else None, which)
        if key not in _SPARSE_MADE:
            transform, mode = _SPARSE[which]
            _SPARSE_MADE[key] = kernel(transform, mode, f, argnums, python(which), key[2])
        return _SPARSE_MADE[key]
    return kernel_of


_SPARSE_MADE = {}


@functools.lru_cache(maxsize=None)
def jvp_kernel(f):
    """One compiled jvp kernel per numba function: (x, v, *args) -> (f(x), J·v)."""
    twin = python_twin(f)
    return kernel("jvp", "forward", f, 0, lambda x, v, *args: jvp_forward(
        lambda y: twin(y, *args), (x,), (v,)))


@functools.lru_cache(maxsize=None)
def vjp_kernel(f):
    """One compiled vjp kernel per numba function: (x, cotangent, *args) -> (f(x), cotangent·J)."""
    twin = python_twin(f)

    def python(x, cotangent, *args):
        value, pullback = vjp_recording(lambda y: twin(y, *args), (x,), (0,), "vjp_fn")
        return value, pullback(cotangent)[0]

    return kernel("vjp", "reverse", f, 0, python)


# ---- pickling: a kernel travels as the call that made it --------------------------------------------
# The public transforms by name (grad, jacobian, ...), filled by dualad/__init__.py; the jvp
# and vjp kernels are this module's own (jvp_kernel, vjp_kernel).
TRANSFORMS = {}

# Kernels alive in this process by what made them: unpickling here gives back the kernel
# itself (as numba does for dispatchers), and a process that unpickles a kernel many times
# (a Dask worker, once per task) makes it once.
_MADE = weakref.WeakValueDictionary()


def _picklable(made, transform, f, options):
    try:
        _MADE[(transform, f, options)] = made
    except TypeError:  # an unhashable f (a callable object) cannot be named in another process either
        pass
    return _kernels().pickled_as(made, rebuilt, lambda: _pickled_call(transform, f, options))


def _pickled_call(transform, f, options):
    if transform in {name for name, _ in _SPARSE.values()}:
        raise pickle.PicklingError(
            "a compiled sparsity kernel does not pickle yet (another process could not rebuild "
            "its plan): pickle the function itself, and call dualad.jacobian(f, sparsity=...) or "
            "dualad.jacobian_sparsity(f) in the other process")
    return (transform, *_kernels().named(f), options)


def _kernels():
    from .jit import kernels

    return kernels


def rebuilt(transform, module, qualname, options):
    """The kernel that transform(f, **options) makes, f being module.qualname: the kernel
    alive in this process, else a new one (compiled, or loaded from the disk cache)."""
    f = _kernels().resolve(module, qualname)
    made = _MADE.get((transform, f, options))
    if made is not None:
        return made
    if transform in ("jvp", "vjp"):  # the kernels of jvp's and vjp's compiled path, one per f
        return {"jvp": jvp_kernel, "vjp": vjp_kernel}[transform](f)
    public = TRANSFORMS[transform]
    takes = inspect.signature(public).parameters
    return public(f, jit=True, **{name: value for name, value in options if name in takes})
