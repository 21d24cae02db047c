"""ForwardNumber: the array structure Dual and HyperDual share.

A forward number is a primal ``value`` (float, ndarray, or a forward number of an older
tag) plus tangent ``components``, each of shape ``value.shape + trailing``:

    Dual        partials  S + (N,)
    HyperDual   eps1      S + (N1,)
                eps2      S + (N2,)
                eps12     S + (N1, N2)

Structural operations (indexing, reshape, sums, ...) are linear, so they act on the value
and on every component alike; this module implements them once for both types. What
differs between the types is only the chain rule (``_chain``) and how multilinear and
linear-algebra operations are evaluated (``_dual_level``), which subclasses supply.

Tags stop perturbation confusion (ForwardDiff's tags, JAX's trace levels): every transform
call draws a fresh, larger tag. When numbers of different tags meet, the newest one is the
outer layer and the others are constants inside its value.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import operator
import sys

import numpy as np

from .rules import BY_UFUNC, RULES

__all__ = ["ArrayLike", "ForwardNumber", "fresh", "new_tag", "scoped_tag", "finish", "check_live",
           "EscapedPerturbation", "LostDerivative", "primal", "HANDLED_FUNCTIONS", "leader_of", "is_layer", "from_objects",
           "PRIMAL_ONLY_UFUNCS", "BRANCH_LOGS", "branched", "REDUCERS", "in_layout", "positions", "constant_positions", "unwrapped",
           "SlowPathWarning", "CONVERSION_SITES", "strided_as"]

_tag_counter = itertools.count(1)


class Tag(tuple):
    """(number, 0): compares as the tuple, newer tags larger. A transform marks its tag
    ``finished`` when it returns; a number of a finished tag that is used again escaped its
    transform (stored in a global, a closure or a list) and raises EscapedPerturbation."""

    finished = False


def new_tag():
    """A tag newer than every tag drawn before it."""
    return Tag((next(_tag_counter), 0))


class LostDerivative(TypeError):
    """A number of a layer was converted to a float (float(), a float array, math.sin):
    its derivative would be lost."""


class EscapedPerturbation(RuntimeError):
    """A dual or traced number was used after its transform returned (JAX's
    UnexpectedTracerError): its derivative would be silently wrong."""


def finish(tag):
    """Mark tag's transform as returned: its numbers may no longer take part in computations."""
    tag.finished = True


@contextlib.contextmanager
def scoped_tag():
    """A fresh tag for one transform call, finished when the call returns: its numbers that
    escape (a global, a list, a closure) raise when used later."""
    tag = new_tag()
    try:
        yield tag
    finally:
        finish(tag)


def check_live(x):
    """Raise EscapedPerturbation if x is a number of a transform that has returned."""
    if getattr(x.tag, "finished", False):
        raise EscapedPerturbation(
            f"a dualad.{type(x).__name__} of a transform that has already returned was used "
            "(it escaped its transform, e.g. stored in a global, a list or a closure, or "
            "returned as auxiliary data of an outer function). Its derivative would be wrong: "
            "return the values you need from the differentiated function instead, or take "
            "dualad.primal(x) before storing it")


# NumPy function -> implementation on forward numbers; built by dualad.numpy_functions from
# the registry (dualad.functions).
HANDLED_FUNCTIONS: dict = {}

_LOST_DERIVATIVE = (
    "{what} of a dualad.{cls} would drop its derivative. Keep the computation in NumPy "
    "(np.sin, np.exp, ... or dualad.math.sin, ...), not Python's math module, which converts "
    "to float; store it in a buffer made by np.zeros_like(x) (or any allocation in the "
    "differentiated function itself), np.array([...]) or np.stack, not a float array made "
    "elsewhere; call dualad.primal(x) if you really want the value without its derivative."
)

_COMPARISONS = {np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal}
# Ufuncs whose result does not depend differentiably on the input: computed on the primal.
PRIMAL_ONLY_UFUNCS = _COMPARISONS | {
    np.isnan, np.isinf, np.isfinite, np.signbit,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
}


# Branches on a layer number's value (comparisons, piecewise-constant functions, int()),
# recorded while someone watches (dualad/solvers: an integrand or a right-hand side whose
# branch on a differentiated value moves a discontinuity, which differentiating under the
# integral misses). Each log is a list of the outcomes, in order.
BRANCH_LOGS: list = []


def branched(outcome):
    """outcome (of a branch on a layer number's value), recorded in the innermost log."""
    if BRANCH_LOGS:
        BRANCH_LOGS[-1].append(np.array(outcome))
    return outcome


def is_layer(x):
    """Whether x is a number of some transform: forward (Dual, HyperDual) or reverse (traced).

    Every layer has a ``tag`` (from new_tag) and a ``value``; when layers meet, the newest
    tag is the outer one, whichever mode it belongs to."""
    return getattr(type(x), "_dualad_layer", False)


def primal(x):
    """The value of x with every layer of derivative removed (a float or ndarray). A layer
    that watches which values f reads (the sparsity tracer: a pattern that depends on
    them holds at this x only) is told of the read."""
    while is_layer(x):
        note = getattr(type(x), "_note_read", None)
        if note is not None:
            note(x)
        x = x.value
    return x


def unwrapped(x):
    """primal(x) for its shape and memory layout only: no layer is told of a read."""
    while is_layer(x):
        x = x.value
    return x


def from_objects(x):
    """An object array (what np.array([...]) and np.asarray make of numbers of a layer) as
    one number of the layer leading its entries; an object array of plain numbers as a
    float array; anything else unchanged."""
    if not (isinstance(x, np.ndarray) and x.dtype == object):
        return x
    # the entries in x's memory order (slowest axis first), stacked, and the axes put back:
    # the number is laid out as x is (an F-ordered object array gives an F-ordered number),
    # so NumPy's later view-or-copy choices on it are those it makes on x
    order = memory_order(x) if x.ndim >= 2 else list(range(x.ndim))
    in_memory = np.transpose(x, order)
    items = in_memory.ravel().tolist()
    if not any(is_layer(item) for item in items):
        return np.asarray(x, dtype=np.float64)
    stacked = np.reshape(np.stack(items), in_memory.shape)
    return stacked if order == sorted(order) else np.transpose(stacked, np.argsort(order))


def leader_of(args):
    """The layer with the newest tag among args (looking one level into lists and object
    arrays)."""
    leader = None
    for a in args:
        if isinstance(a, (list, tuple)):
            items = a
        elif isinstance(a, np.ndarray) and a.dtype == object:
            items = a.ravel().tolist()
        else:
            items = (a,)
        for item in items:
            if is_layer(item):
                check_live(item)
                if leader is None or item.tag > leader.tag:
                    leader = item
    return leader


def _shape(x):
    return x.shape if hasattr(x, "shape") else ()


def _ndim(x):
    return x.ndim if hasattr(x, "ndim") else 0


def trailing_index(index, n_trailing):
    """The index that selects `index` of the value from an array with n_trailing more axes."""
    if n_trailing and any(i is Ellipsis for i in index):
        return index + (slice(None),) * n_trailing
    return index


def memory_order(a):
    """a's axes, slowest first, as NumPy lays out a new array like a (order='K'): read off
    NumPy's own empty_like, whose rules for broadcast (stride 0), flipped and size-1 axes
    are NumPy's (a stride-0 axis keeps its C place: ravel('K') of broadcast_to(x, (2, 3))
    is x, x)."""
    strides = np.empty_like(a, dtype=np.int8).strides
    return sorted(range(a.ndim), key=lambda k: -strides[k])


def in_layout(component, value):
    """component (value.shape + trailing) with its leading axes in value's memory order.

    NumPy lays out a new array as its operands are (order='K': np.sin(m.T) is F-ordered,
    m.T + c is C-ordered), and whether ravel or reshape later makes a view depends on it.
    The value and the components take the same call (numpy_functions.select), so they must
    be laid out alike, or a write through a view would reach one and not the other."""
    if type(value) is not np.ndarray or value.ndim < 2 or value.size == 0:
        return component  # 0-D and 1-D values are contiguous; an older layer keeps its own
    if value.flags.c_contiguous and component.flags.c_contiguous:
        return component  # the common case, checked first (this runs on every 2-D result)
    nd = value.ndim
    width = component.size // value.size
    if component[(0,) * nd].flags.c_contiguous and all(
            n == 1 or s == v * width for n, s, v in zip(value.shape, component.strides, value.strides)):
        return component
    order = memory_order(value) + list(range(nd, component.ndim))
    out = np.empty([component.shape[k] for k in order], dtype=component.dtype).transpose(np.argsort(order))
    out[...] = component
    return out


def positions(shape, value, start=0):
    """Integer ids start, start + 1, ... of the entries of an array of `shape` in C order,
    with the strides of value (its primal's). A NumPy call run on them and on the values
    reads both in the same order (ravel(order='K') of an F-ordered or broadcast array) and
    makes a view of both or of neither, so the positions it returns are those the values
    took."""
    return strided_as(np.arange(start, start + math.prod(shape), dtype=np.intp).reshape(shape),
                       unwrapped(value))


def constant_positions(shape, value):
    """-1 (a constant: no operand entry) at every entry, with the strides of value."""
    return strided_as(np.full(shape, -1, dtype=np.intp), unwrapped(value))


def strided_as(ids, value):
    """ids (C-ordered, value's shape) as an array with value's strides, one entry per memory
    place of value: where value's entries share memory (a broadcast axis, stride 0) the
    place holds the id of one of them (positions: the cotangents of aliases meet there
    anyway; index sets: aliases have equal ones)."""
    if type(value) is not np.ndarray or value.ndim < 2 or value.flags.c_contiguous or value.size == 0:
        return ids
    steps = [s // value.itemsize for s in value.strides]
    low = sum(min(0, step * (n - 1)) for step, n in zip(steps, value.shape))
    high = sum(max(0, step * (n - 1)) for step, n in zip(steps, value.shape))
    offsets = -low + sum(np.arange(n).reshape((-1,) + (1,) * (value.ndim - 1 - k)) * step
                         for k, (step, n) in enumerate(zip(steps, value.shape)))
    memory = np.full(high - low + 1, -1, dtype=np.intp)
    memory[np.broadcast_to(offsets, value.shape).reshape(-1)] = ids.reshape(-1)
    return np.lib.stride_tricks.as_strided(memory[-low:], value.shape,
                                           [step * memory.itemsize for step in steps])


def times(d, component, n_trailing):
    """d (shape S, or scalar) times a component of shape S + trailing: d broadcasts over it."""
    if _ndim(d) == 0:
        return d * component
    return d[(Ellipsis,) + (None,) * n_trailing] * component


def _as_index(index):
    index = index if isinstance(index, tuple) else (index,)
    for i in index:
        if isinstance(i, ForwardNumber):
            raise TypeError(
                "a dual number cannot be used as an index: indices are not differentiable; "
                "use int(dualad.primal(i)) if you mean its value"
            )
    return index


def _as_float(c):
    """c as float64: a NumPy scalar or an array."""
    arr = np.asarray(c, dtype=np.float64)
    return arr[()] if arr.ndim == 0 else arr


def _float64_keeping_layers(x=0.0):
    return x if is_layer(x) else np.float64(x)


class LayerDtype:
    """The dtype of a layer number: NumPy's float64 in every respect but one, ``.type`` keeps
    numbers of layers. NumPy's mean, var and std of an object array (np.mean([d0, d1]))
    finish with ret.dtype.type(ret / n) on their result, which float64 would convert."""

    __slots__ = ()
    dtype = np.dtype(np.float64)  # what np.dtype(x.dtype) and np.issubdtype see
    type = staticmethod(_float64_keeping_layers)

    def __getattr__(self, name):
        return getattr(np.dtype(np.float64), name)

    def __eq__(self, other):
        return np.dtype(np.float64) == (np.dtype(np.float64) if isinstance(other, LayerDtype) else other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(np.dtype(np.float64))

    def __repr__(self):
        return "dtype('float64')"


FLOAT64 = LayerDtype()

# How many arrays of a layer became object arrays (np.asarray(x), np.ascontiguousarray(x):
# NumPy has no override for them, and an object array is a copy). A transform that sees f do
# it runs f again over NumPy's array makers that keep x itself (allocation.OnDemand), so that
# a write through the result reaches x, as NumPy's would.
ARRAY_CONVERSIONS = [0]
# Where each conversion happened: (file, line, function, shape), for the transform to warn
# about those that its rerun could not avoid (allocation.OnDemand).
CONVERSION_SITES: list = []
# While a transform's first run of f is to be rerun over views at the first conversion (the
# object array's arithmetic would cost far more than the rerun), the innermost such run is
# True here and a conversion raises ConversionRerun.
RERUN_AT_CONVERSION = [False]


class ConversionRerun(Exception):
    """An array of duals was about to become an object array in a run that the transform
    reruns over views (allocation.OnDemand), where it stays an array of duals."""


class SlowPathWarning(UserWarning):
    """An array of dual numbers became an object array of scalar duals (np.asarray inside
    library code, ndarray.dot of a float array): every NumPy operation on it then runs entry
    by entry in Python. The message names the line and the fast rewrite."""


def _conversion_site():
    """(file, line, function, into a buffer) of the Python code that asked NumPy for the
    object array: the first frame outside NumPy and dualad; into a buffer where the array
    was assigned into an allocation of f's that holds Python objects (allocation.Buffer)."""
    frame, into_buffer = sys._getframe(2), False
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.split(".")[0] not in ("numpy", "dualad"):
            return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, into_buffer
        into_buffer = into_buffer or frame.f_code.co_qualname == "Buffer.__setitem__"
        frame = frame.f_back
    return "<unknown>", 0, "<unknown>", into_buffer


def _scipy_rule(ufunc):
    """The rule of a scipy.special ufunc (dualad/scipy_special.py, whose table loads when one
    is first met: scipy stays out of import dualad), or None."""
    ufuncs = sys.modules.get("scipy.special._ufuncs")  # every ufunc of scipy.special's
    if ufuncs is None or getattr(ufuncs, ufunc.__name__, None) is not ufunc:
        return None
    from . import scipy_special  # noqa: PLC0415 - the table of scipy's ufuncs, on first need
    return scipy_special.BY_UFUNC.get(ufunc)


class ArrayLike:
    """The ndarray-like surface shared by every layer (forward numbers, reverse traced arrays):
    shape, methods that call NumPy functions (which dispatch back to the layer), comparisons
    by value, Python operators from the rule table, and errors for conversions that would
    drop the derivative. A layer supplies ``value``, ``_apply_rule``, indexing and the NumPy
    protocol."""

    __slots__ = ()
    _dualad_layer = True
    _note_read = None  # a layer's hook: primal(x) read x's values (SparsityTracer)

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            # type(x)(c): code written for floats makes a constant of x's type so
            # (numba-stats does in most distributions); a constant of every layer is c
            # itself, and a number of some layer stays that number
            c = args[0]
            return c if is_layer(c) else _as_float(c)
        return object.__new__(cls)

    # ---- ndarray-like surface ---------------------------------------------------------
    @property
    def shape(self):
        return _shape(self.value)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def dtype(self):
        return FLOAT64

    @property
    def T(self):
        return self.transpose()

    def __len__(self):
        if self.ndim == 0:
            raise TypeError(f"len() of a scalar dualad.{type(self).__name__}")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return np.reshape(self, shape, order=order)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return np.transpose(self, axes or None)

    def flatten(self, order="C"):
        return np.ravel(self, order=order).copy()

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """In place, as ndarray.sort: the entries reordered (their derivatives with them)."""
        self[...] = np.sort(self, axis=axis, kind=kind, order=order, stable=stable)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """A float dtype keeps the derivative (a copy); an integer or bool one is piecewise
        constant: the values converted, no derivative."""
        if np.dtype(dtype).kind == "f":
            if np.dtype(dtype) != np.float64:
                raise TypeError(f"dualad numbers are float64; .astype({np.dtype(dtype)}) would "
                                "round the derivative: use float or np.float64")
            return np.copy(self, order=order) if copy else self  # order 'K': laid out as self
        if np.dtype(dtype).kind == "c":
            raise TypeError("dualad differentiates real numbers: .astype(complex) is not supported")
        return np.asarray(primal(self)).astype(dtype)

    @property
    def real(self):
        return self  # real numbers

    @property
    def imag(self):
        return np.zeros(self.shape)

    def ptp(self, axis=None):
        return np.max(self, axis=axis) - np.min(self, axis=axis)

    def fill(self, value):
        self[...] = value

    def tolist(self):
        """Nested lists of numbers of this layer (entries, not floats)."""
        if self.ndim == 0:
            return self
        return [item.tolist() for item in self]

    def clip(self, a_min=None, a_max=None, *, min=None, max=None):
        return np.clip(self, a_min if min is None else min, a_max if max is None else max)

    # ---- conversions that would lose the derivative -----------------------------------
    def __float__(self):
        raise LostDerivative(_LOST_DERIVATIVE.format(what="float()", cls=type(self).__name__))

    def __complex__(self):
        raise LostDerivative(_LOST_DERIVATIVE.format(what="complex()", cls=type(self).__name__))

    def __array__(self, dtype=None, copy=None):
        """np.asarray(x), np.array([x, ...]): an object array holding x's entries as numbers
        of x's layer. NumPy keeps Python objects in it (operators and ufuncs run entry by
        entry, by the entries' own methods), and every dualad operation or transform output
        that meets it takes it back as one number of its layer (from_objects). A float
        dtype would drop the derivative: that is an error."""
        if dtype is not None and np.dtype(dtype) != np.dtype(object):
            raise LostDerivative(_LOST_DERIVATIVE.format(what=f"Converting to a {np.dtype(dtype)} array",
                                                    cls=type(self).__name__))
        if copy is False:
            raise ValueError("a dualad number becomes a NumPy array only by a copy")
        if _ndim(self.value):
            ARRAY_CONVERSIONS[0] += 1
            if len(CONVERSION_SITES) < 10_000:  # read and cleared by each transform's run
                CONVERSION_SITES.append(_conversion_site() + (self.shape,))
            if RERUN_AT_CONVERSION[-1]:
                raise ConversionRerun
        out = np.empty(self.shape, dtype=object)
        for index in np.ndindex(self.shape):
            out[index] = self[index]
        return out

    def item(self, *args):
        raise LostDerivative(_LOST_DERIVATIVE.format(what=".item()", cls=type(self).__name__))

    # math.floor & co. (NumPy's object loops for floor, ceil, trunc call them): the same
    # piecewise-constant rules as np.floor
    def __floor__(self):
        return np.floor(self)

    def __ceil__(self):
        return np.ceil(self)

    def __trunc__(self):
        return np.trunc(self)

    def __round__(self, ndigits=None):
        return np.round(self, ndigits or 0)

    def __int__(self):
        # Truncation is piecewise constant: its derivative is zero, so nothing is lost.
        return branched(int(primal(self)))

    def __bool__(self):
        return bool(primal(self))

    __hash__ = None

    # ---- comparisons are by value (so if/while/max/recursion work) --------------------
    def __lt__(self, other):
        return branched(primal(self) < primal(other))

    def __le__(self, other):
        return branched(primal(self) <= primal(other))

    def __gt__(self, other):
        return branched(primal(self) > primal(other))

    def __ge__(self, other):
        return branched(primal(self) >= primal(other))

    def __eq__(self, other):
        return branched(primal(self) == primal(other))

    def __ne__(self, other):
        return branched(primal(self) != primal(other))

    # ---- arithmetic: the rule table ---------------------------------------------------
    # -x, +x, abs(x) and the binary operators are generated from the rules (end of module)

    def __matmul__(self, other):
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        return np.matmul(other, self)

    @property
    def _numba_type_(self):
        # numba's typeof asks for this when a dual is passed to an @njit function from Python.
        raise TypeError(
            f"a dualad {type(self).__name__} was passed to a numba-compiled function from Python, "
            "which cannot take Python dual numbers. Differentiate the numba function itself "
            "(dualad.grad(f) returns a compiled kernel), or name it in your function's globals "
            "or closure (not as a module attribute) so that the Python path runs its pure-Python "
            "twin")

    # ---- NumPy's protocol: the layer's rules and function table ---------------------------
    # A layer supplies _functions (NumPy function -> implementation) and _leads(leader): whether
    # the newest layer among an operation's arguments is of its kind (else NumPy is told
    # NotImplemented and asks the newer layer).
    _functions: dict = {}

    @classmethod
    def _leads(cls, leader):  # pragma: no cover - abstract
        raise NotImplementedError

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at" and isinstance(inputs[0], np.ndarray) and inputs[0].dtype == object:
            # into an object array (a buffer of the differentiated function): entry by entry
            return ufunc.at(*(x.__array__() if is_layer(x) else x for x in inputs), **kwargs)
        if kwargs.get("out") is not None or (method == "at" and not is_layer(inputs[0])):
            # a float array receiving a dual (a += dual, np.add.at(a, i, dual)): the
            # derivative would be lost (a transform then retries f with its allocations
            # holding duals: dualad.allocation)
            raise LostDerivative(
                f"numpy.{ufunc.__name__} cannot write dual numbers into a float array (this is "
                "what `a += dual` does when `a` is a float ndarray made outside the "
                "differentiated function): write `a = a + dual`, or allocate `a` inside it "
                "(np.zeros_like(x))")
        if method == "__call__":
            if kwargs:
                raise TypeError(f"numpy.{ufunc.__name__} on dual numbers takes no keyword "
                                f"arguments (got {sorted(kwargs)})")
            rule = BY_UFUNC.get(ufunc) or _scipy_rule(ufunc)
            if rule is not None:
                return self._apply_rule(rule, inputs)
            if ufunc in PRIMAL_ONLY_UFUNCS:
                outcome = ufunc(*(primal(x) for x in inputs))
                return branched(outcome) if ufunc in _COMPARISONS else outcome
            if ufunc is np.matmul:
                return self.__array_function__(np.matmul, (), inputs, {})
            impl = self._functions.get(ufunc)
            if impl is not None:  # a ufunc outside the rule table, composed from it (registry)
                return impl(*inputs)
        elif method == "reduce" and ufunc in REDUCERS:
            return REDUCERS[ufunc](*inputs, **kwargs)
        elif method == "accumulate" and ufunc in ACCUMULATORS:
            return ACCUMULATORS[ufunc](*inputs, **kwargs)
        if getattr(np, ufunc.__name__, None) is ufunc:
            raise TypeError(f"numpy.{ufunc.__name__} ({method}) is not differentiable by dualad; "
                            "see dualad.rules.RULES for the supported elementwise functions")
        raise TypeError(f"the ufunc {ufunc.__name__} is not NumPy's and not differentiable by "
                        "dualad (docs/scipy.md lists the scipy.special functions it "
                        "differentiates); register it with dualad.primitive")

    def __array_function__(self, func, types, args, kwargs):
        leader = leader_of(tuple(args) + tuple(kwargs.values()))
        if not self._leads(leader):
            if type(leader) not in types:
                # the newest layer sits inside a list (or a fill value), where NumPy does not
                # look for overrides: it would never be asked, so hand the call to it here
                return leader.__array_function__(func, types, args, kwargs)
            return NotImplemented
        impl = self._functions.get(func)
        if impl is None:
            module = "numpy.linalg" if "linalg" in (getattr(func, "__module__", "") or "") else "numpy"
            raise TypeError(
                f"{module}.{getattr(func, '__name__', func)} is not supported on dualad numbers "
                f"({type(self).__name__}); docs/numpy.md lists the supported functions"
            )
        return impl(*args, **kwargs)


class ForwardNumber(ArrayLike):
    """Base of Dual and HyperDual: tags, NumPy protocol, structural (linear) operations."""

    __slots__ = ()
    _functions = HANDLED_FUNCTIONS

    @classmethod
    def _leads(cls, leader):
        return isinstance(leader, ForwardNumber)

    # Number of trailing axes of each component (class attribute of each subclass).
    trailing: tuple = ()

    # ---- what a subclass provides -----------------------------------------------------
    @property
    def components(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _set_components(self, components):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def _make(cls, value, components, tag):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def _chain(cls, rule, operands, tag):  # pragma: no cover - abstract
        """Apply an elementwise rule; operands are (value, components or None) pairs."""
        raise NotImplementedError

    def _dual_level(self, func, args, kwargs, impl):  # pragma: no cover - abstract
        """Evaluate a multilinear or linear-algebra function given its Dual implementation."""
        raise NotImplementedError

    # ---- splitting operands -----------------------------------------------------------
    def split(self, x):
        """(value, components) of x seen from this number's tag; components None if constant."""
        if isinstance(x, ForwardNumber) and x.tag == self.tag:
            if type(x) is not type(self):
                raise TypeError(f"tag clash between {type(self).__name__} and {type(x).__name__}")
            return x.value, x.components
        if isinstance(x, ForwardNumber) and x.tag > self.tag:
            raise AssertionError("leader must hold the newest tag")
        if isinstance(x, np.ndarray) and x.dtype == object:
            return self.split(from_objects(x))
        if isinstance(x, (list, tuple)):  # an operand given as a list, as NumPy takes it
            return self.split(from_objects(np.array(x, dtype=object)))
        return x, None

    def trailing_shapes(self):
        return tuple(c.shape[c.ndim - k:] for c, k in zip(self.components, self.trailing))

    def zero_components(self, shape):
        return tuple(np.zeros(tuple(shape) + t) for t in self.trailing_shapes())

    def constant(self, x):
        """x as a number of this type and tag with zero tangents (laid out as x is)."""
        return self._make(x, tuple(in_layout(c, x) for c in self.zero_components(_shape(x))), self.tag)

    def _new(self, value, components):
        return self._make(value, components, self.tag)

    def map_linear(self, fn):
        """Apply a linear structural operation fn(array, n_trailing) to value and components."""
        return self._new(fn(self.value, 0), tuple(fn(c, k) for c, k in zip(self.components, self.trailing)))

    def combine_linear(self, operands, fn):
        """fn(list_of_arrays, n_trailing) over several operands; constants get zero tangents."""
        split = [self.split(x) for x in operands]
        value = fn([v for v, _ in split], 0)
        comps = []
        for i, k in enumerate(self.trailing):
            parts = []
            for v, c in split:
                if c is None:
                    parts.append(np.zeros(_shape(v) + self.trailing_shapes()[i]))
                else:
                    parts.append(c[i])
            comps.append(fn(parts, k))
        return self._new(value, tuple(comps))

    def _apply_rule(self, rule, args):
        leader = leader_of(args)
        if not self._leads(leader):
            return NotImplemented  # a newer reverse-mode layer leads: it takes the operation
        y = leader._chain(rule, [leader.split(a) for a in args], leader.tag)
        if BRANCH_LOGS and all(partial is None for partial in rule.first):
            branched(primal(y))  # piecewise constant (floor, sign): a branch on the value
        return y

    def __getitem__(self, index):
        index = _as_index(index)
        item = self.map_linear(lambda a, k: a[trailing_index(index, k)])
        value = item.value
        if type(value) is np.float64 or (type(value) is not np.ndarray and _ndim(value) == 0):
            # NumPy gives a scalar, a copy: its tangents must not stay a view of this
            # array's, which a later write (v[0] = ...) would change under it
            item._set_components(tuple(c.copy() for c in item.components))
        return item

    def __setitem__(self, index, item):
        index = _as_index(index)
        leader = leader_of((self, item))
        if not isinstance(leader, ForwardNumber):
            raise TypeError("cannot store a reverse-mode value into an array of dual numbers made "
                            "outside that transform; allocate the buffer inside the function, "
                            "e.g. np.zeros_like(x) of its differentiated input")
        if leader.tag > self.tag:
            self._promote(leader)
        value, comps = self.split(item)
        self.value = assign(self.value, index, value)
        new = []
        for i, (c, k) in enumerate(zip(self.components, self.trailing)):
            new.append(assign(c, trailing_index(index, k), 0.0 if comps is None else comps[i]))
        self._set_components(tuple(new))

    def _promote(self, leader):
        """Become a number of leader's newer tag in place, with the old self as its value."""
        if type(leader) is not type(self):
            raise TypeError(
                f"cannot store a {type(leader).__name__} into a {type(self).__name__} array made "
                "outside this transform; allocate the buffer from the differentiated input, "
                "e.g. np.zeros_like(x)"
            )
        inner = self._make(self.value, self.components, self.tag)
        self.value = inner
        self.tag = leader.tag
        self._set_components(leader.zero_components(inner.shape))

    def copy(self, order="C"):
        """ndarray.copy: C order by default; 'K' (as np.copy) keeps the layout."""
        if order != "C":
            return np.copy(self, order=order)
        return self.map_linear(lambda a, k: a.copy())

def fresh(x):
    """x as a new object that f may assign into without changing x: a copy of an array's
    entries, and for a number of a layer a new number (its value fresh, recursively). The
    copy is not an operation of any layer, so it records nothing."""
    if isinstance(x, np.ndarray):
        return x.copy(order="K")  # laid out as x: an F-ordered argument stays F-ordered
    if isinstance(x, ForwardNumber):
        return x._make(fresh(x.value), tuple(c.copy(order="K") for c in x.components), x.tag)
    if is_layer(x):
        return x.fresh()  # a traced value: its own way to be a new, unshared object
    return x


def assign(target, index, item):
    """target[index] = item for arrays and forward numbers; returns the (maybe promoted) target.

    A plain array that receives a number of some layer (forward or reverse) becomes a
    constant of that layer first; so does a reverse-mode array receiving a newer forward
    number. Nested transforms can thus fill buffers made from older inputs.
    """
    if is_layer(item) and not is_layer(target):
        target = item.constant(target)  # a buffer of plain floats becomes item's layer
    elif isinstance(item, ForwardNumber) and not isinstance(target, ForwardNumber) and item.tag > target.tag:
        target = item.constant(target)
    if is_layer(target):  # a forward number, or a traced array of reverse mode
        target[index] = item
        return target
    if not isinstance(target, np.ndarray) or target.ndim == 0:
        if np.ndim(target) == 0 and _selects_all_of_a_scalar(index) and np.size(item) == 1:
            # a 0-d value (a NumPy scalar, which has no memory to write) is replaced whole
            item = np.reshape(item, ())
            return item if is_layer(item) else np.float64(item)
        raise TypeError("cannot assign into an element of a scalar dual number")
    if not target.flags.writeable:
        target = target.copy()
    target[index] = item
    return target


def _selects_all_of_a_scalar(index):
    """Whether index is (), ... or new axes (..., None): a 0-d array's one entry."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is Ellipsis or i is None for i in items)


def _operator_method(rule, reflected=False):
    if rule.arity == 1:
        def method(self):
            return self._apply_rule(rule, (self,))
    elif reflected:
        def method(self, other):
            return self._apply_rule(rule, (other, self))
    else:
        def method(self, other):
            return self._apply_rule(rule, (self, other))
    return method


def _in_place_method(operator):
    """a op= b as NumPy does it: an array is written in place, so its views and aliases see
    the new entries; a scalar is immutable and the name is rebound."""
    def method(self, other):
        result = operator(self, other)
        if self.ndim == 0:
            return result
        if _shape(result) != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't "
                             f"match the broadcast shape {_shape(result)}")
        self[...] = result
        return self
    return method


def _forwarded(function, of_values=False):
    """ndarray.<name> as NumPy's function of the same meaning, every argument passed on (so
    every option ndarray's method takes reaches the registry, which supports or names it);
    of_values: the function's result does not depend differentiably on the array."""
    if of_values:
        def method(self, *args, **kwargs):
            return function(primal(self), *args, **kwargs)
    else:
        def method(self, *args, **kwargs):
            return function(self, *args, **kwargs)
    method.__name__ = function.__name__
    method.__doc__ = f"numpy.{function.__name__}(self, ...)"
    return method


# ndarray methods whose arguments are NumPy function's after the array, in the same order
for _name, _function in (("ravel", np.ravel), ("conj", np.conjugate), ("sum", np.sum),
                         ("mean", np.mean), ("var", np.var), ("std", np.std),
                         ("cumsum", np.cumsum), ("cumprod", np.cumprod), ("round", np.round),
                         ("trace", np.trace), ("diagonal", np.diagonal), ("repeat", np.repeat),
                         ("swapaxes", np.swapaxes), ("take", np.take), ("prod", np.prod),
                         ("max", np.max), ("min", np.min), ("dot", np.dot), ("squeeze", np.squeeze)):
    setattr(ArrayLike, _name, _forwarded(_function))
for _function in (np.argmax, np.argmin, np.argsort, np.nonzero, np.any, np.all):
    setattr(ArrayLike, _function.__name__, _forwarded(_function, of_values=True))

# Python operators generated from the rule table (each rule names its operator).
for _rule in RULES.values():
    if _rule.operator:
        setattr(ArrayLike, f"__{_rule.operator}__", _operator_method(_rule))
        if _rule.arity == 2:
            setattr(ArrayLike, f"__r{_rule.operator}__", _operator_method(_rule, reflected=True))
            setattr(ArrayLike, f"__i{_rule.operator}__", _in_place_method(getattr(operator, _rule.operator)))
ArrayLike.__imatmul__ = _in_place_method(operator.matmul)

ACCUMULATORS = {
    np.add: lambda x, axis=0, **kw: np.cumsum(x, axis=axis, **kw),
    np.multiply: lambda x, axis=0, **kw: np.cumprod(x, axis=axis, **kw),
}

REDUCERS = {
    np.add: lambda x, axis=0, **kw: np.sum(x, axis=axis, **kw),
    np.multiply: lambda x, axis=0, **kw: np.prod(x, axis=axis, **kw),
    np.maximum: lambda x, axis=0, **kw: np.max(x, axis=axis, **kw),
    np.minimum: lambda x, axis=0, **kw: np.min(x, axis=axis, **kw),
}


def _ufunc_method(ufunc):
    def method(self, *others):
        return ufunc(self, *others)
    method.__name__ = ufunc.__name__
    return method


# NumPy runs a ufunc on an object array (np.array([...]) of numbers) entry by entry, calling
# each entry's method of the ufunc's name (np.sin(objects) calls entry.sin()): give every
# layer number those methods, so object arrays work wherever the ufunc does.
# (np's own namespace, not dir(np): getattr of every name there imports NumPy's lazily loaded
# submodules, testing, ma, random, f2py..., some 80 ms of import dualad)
for _name, _ufunc in list(vars(np).items()):
    if isinstance(_ufunc, np.ufunc) and _name == _ufunc.__name__ and not hasattr(ArrayLike, _name):
        setattr(ArrayLike, _name, _ufunc_method(_ufunc))
