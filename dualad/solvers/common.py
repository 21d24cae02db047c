"""What every solver stand-in shares: finding numbers of layers in arguments and results,
solving on floats, SciPy's signatures, and (for the integrating stand-ins, odes.py and
integrals.py) the parameters a user's function closes over, made explicit.

Layers are dualad's numbers of any transform (Dual, HyperDual, the reverse tape's Traced,
nested). A stand-in solves with SciPy on floats (``primal``) through a function that strips
the layers of the user's results (``Floats``: it returns the user's own object whenever that
holds none, so SciPy sees exactly what it would see without dualad), then attaches the
derivative with dualad's transforms and number types.
"""

from __future__ import annotations

import copy
import functools
import inspect
import sys
import types

import numpy as np

from ..allocation import StandInError
from ..dual import Dual
from ..hyperdual import HyperDual, layer_depth
from ..number import BRANCH_LOGS, ForwardNumber, from_objects, is_layer, primal

__all__ = ["MovingBranch", "has_layer", "strip", "layer_depth", "as_array", "with_value", "Floats", "bind", "call",
           "Parameters", "SolverDerivativeError", "SingularJacobianError", "NotDifferentiable"]


class SolverDerivativeError(ValueError, StandInError):
    """A SciPy solver's result has no derivative where dualad was asked for one."""


class SingularJacobianError(SolverDerivativeError, np.linalg.LinAlgError):
    """The Jacobian of the equations is singular at the solution: the implicit function
    theorem gives no derivative of the solution."""


class NotDifferentiable(SolverDerivativeError, NotImplementedError):
    """A solver option through which dualad gives no derivative (said by name)."""


class MovingBranch:
    """Watches the calls of an integrand (or right-hand side) on differentiated values: if
    a branch on those values (x < p, np.where, floor, heaviside) comes out differently at
    different points, the function jumps where the branch flips, and that place moves with
    the parameters. Differentiating under the integral misses the jump's term, so the
    solver raises `error` (which says how to split the integral at the jump)."""

    def __init__(self, error):
        self.error, self.outcomes = error, None

    def __call__(self, fn, *args):
        log = []
        BRANCH_LOGS.append(log)
        try:
            out = fn(*args)
        finally:
            BRANCH_LOGS.pop()
        outcomes = [(o.shape, o.tobytes()) for o in log]
        if self.outcomes is None:
            self.outcomes = outcomes
        elif outcomes != self.outcomes:
            raise SolverDerivativeError(self.error)
        return out


# ---- layers in structures ----------------------------------------------------------------------
def has_layer(x):
    """Whether x (a number, array, or tuples, lists, dicts and object arrays of them) holds a
    number of some layer."""
    if is_layer(x):
        return True
    if isinstance(x, (tuple, list)):
        return any(has_layer(item) for item in x)
    if isinstance(x, dict):
        return any(has_layer(item) for item in x.values())
    if isinstance(x, np.ndarray) and x.dtype == object:
        return any(is_layer(item) or isinstance(item, (tuple, list)) and has_layer(item) for item in x.flat)
    return False


def strip(x):
    """x with every layer removed (primal), the same object where it holds none."""
    if not has_layer(x):
        return x
    if is_layer(x):  # a copy: SciPy may work in its argument, which is the number's own value
        value = primal(x)
        return value.copy() if isinstance(value, np.ndarray) else value
    if isinstance(x, np.ndarray):  # an object array (a Buffer) holding numbers of layers
        return np.array(primal(from_objects(x.view(np.ndarray))), dtype=float)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(strip(item) for item in x))
    if isinstance(x, (tuple, list)):
        return type(x)(strip(item) for item in x)
    out = copy.copy(x)  # a dict (or OptimizeResult)
    for key, item in x.items():
        out[key] = strip(item)
    return out


def as_array(x):
    """A user function's result as one array: a number of a layer, or a float array (a list
    of numbers is stacked, an object array read as the number of the layer it holds)."""
    if is_layer(x):
        return x
    if isinstance(x, np.ndarray) and x.dtype == object:
        return from_objects(x.view(np.ndarray))
    if isinstance(x, (list, tuple)) and has_layer(x):
        return np.stack([as_array(item) for item in x])
    return np.asarray(x, dtype=float)


def with_value(x, value):
    """x (a number of layers) with its primal replaced by value (SciPy's own float result), so
    that the value a stand-in returns is SciPy's to the last bit."""
    if not is_layer(x):
        return value
    current = primal(x)
    if np.array_equal(current, value):
        return x
    return x - current + value


def first(out):
    """The residual of a function that returns (value, derivative), as jac=True asks."""
    return out[0]


class Floats:
    """fun for SciPy: the user's function, its results without layers (the user's own object
    where it holds none). ``layered`` tells whether any result held a layer."""

    def __init__(self, fun):
        self.fun, self.layered = fun, False
        functools.update_wrapper(self, fun)  # inspect.signature (curve_fit) follows __wrapped__

    def __call__(self, *args, **kwargs):
        out = self.fun(*args, **kwargs)
        if has_layer(out):
            self.layered = True
            return strip(out)
        return out


def floats(fun):
    """Floats(fun) for a callable, fun itself otherwise (jac='2-point', jac=True, None)."""
    return Floats(fun) if callable(fun) else fun


def layered_result(*wrappers):
    return any(isinstance(w, Floats) and w.layered for w in wrappers)


# ---- SciPy's signatures --------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _signature(fn):
    return inspect.signature(fn)


def bind(fn, args, kwargs):
    """The arguments of a call of SciPy's fn by parameter name, SciPy's defaults filled in
    (a **options parameter is a dict under its name)."""
    bound = _signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def call(fn, params):
    """fn called with params (as bind made them, possibly changed)."""
    positional, keywords = [], {}
    for name, parameter in _signature(fn).parameters.items():
        if name not in params:
            continue
        value = params[name]
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(value)
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional.append(value)
        else:
            keywords[name] = value
    return fn(*positional, **keywords)


def as_args(args):
    """SciPy's reading of args=: a tuple (a single value becomes a 1-tuple, None none)."""
    if args is None:
        return ()
    return args if isinstance(args, tuple) else (args,)


# ---- the parameters a function closes over -------------------------------------------------------
_SKIPPED_MODULES = {"numpy", "scipy", "dualad", "numba", "builtins"} | set(sys.stdlib_module_names)
_MAX_VISITS = 20000


def _library_object(obj):
    module = getattr(type(obj), "__module__", "") or ""
    return module.partition(".")[0] in _SKIPPED_MODULES


def _children(obj):
    """(kind, parts) of the containers through which a function reaches its parameters, or
    None for a leaf that is searched no further."""
    if isinstance(obj, (tuple, list)):
        return list(obj)
    if isinstance(obj, dict):
        if "__builtins__" in obj or "__name__" in obj:  # a module's globals
            return None
        return list(obj.values())
    if isinstance(obj, np.ndarray):
        return list(obj.flat) if obj.dtype == object else None
    if isinstance(obj, types.CellType):
        try:
            return [obj.cell_contents]
        except ValueError:
            return []
    if isinstance(obj, types.FunctionType):
        if (obj.__module__ or "").partition(".")[0] in _SKIPPED_MODULES - {"dualad"} and \
                not getattr(obj, "__dualad_buffers__", False):
            return None
        return list(obj.__closure__ or ()) + list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if isinstance(obj, types.MethodType):
        return [obj.__func__, obj.__self__]
    if isinstance(obj, (type, types.ModuleType, types.BuiltinFunctionType, str, bytes, int, float, complex)):
        return None
    if _library_object(obj) or not hasattr(obj, "__dict__"):
        return None
    return list(vars(obj).values())


def find_layers(roots):
    """The numbers of layers that roots (functions, argument tuples) hold and close over,
    each once, in the order met: closure cells, defaults, partial arguments, bound methods'
    objects, and the tuples, lists, dicts and object arrays inside them."""
    found, seen, stack, visits = {}, set(), list(reversed(roots)), 0
    while stack and visits < _MAX_VISITS:
        obj = stack.pop()
        if is_layer(obj):
            found.setdefault(id(obj), obj)
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        visits += 1
        parts = _children(obj)
        if parts:
            stack.extend(reversed(parts))
    return list(found.values())


def substitute(obj, mapping, memo=None):
    """obj with each number whose id is in mapping replaced by mapping's value: functions are
    rebuilt over new closure cells (the user's cells are never written), and the tuples,
    lists, dicts, partials, bound methods and objects on the way are copies."""
    if memo is None:
        memo = {}
    key = id(obj)
    if key in mapping:
        return mapping[key]
    if key in memo:
        return memo[key]
    if is_layer(obj):
        return obj
    if isinstance(obj, types.FunctionType):
        if _children(obj) is None or not (obj.__closure__ or obj.__defaults__ or obj.__kwdefaults__):
            return obj
        cells = tuple(types.CellType() for _ in obj.__closure__ or ())
        new = types.FunctionType(obj.__code__, obj.__globals__, obj.__name__, None, cells or None)
        memo[key] = new  # (a function that reaches itself through a cell)
        changed = False
        for old_cell, cell in zip(obj.__closure__ or (), cells):
            try:
                content = old_cell.cell_contents
            except ValueError:
                continue
            cell.cell_contents = substitute(content, mapping, memo)
            changed |= cell.cell_contents is not content
        defaults = tuple(substitute(d, mapping, memo) for d in obj.__defaults__ or ()) or None
        kwdefaults = {k: substitute(v, mapping, memo) for k, v in (obj.__kwdefaults__ or {}).items()} or None
        changed |= any(a is not b for a, b in zip(defaults or (), obj.__defaults__ or ()))
        changed |= any(v is not obj.__kwdefaults__[k] for k, v in (kwdefaults or {}).items())
        if not changed:
            memo[key] = obj
            return obj
        new.__defaults__, new.__kwdefaults__ = defaults, kwdefaults
        new.__dict__.update(obj.__dict__)
        new.__qualname__, new.__doc__, new.__module__ = obj.__qualname__, obj.__doc__, obj.__module__
        return new
    if isinstance(obj, types.CellType):
        try:
            content = obj.cell_contents
        except ValueError:
            return obj
        new_content = substitute(content, mapping, memo)
        return obj if new_content is content else types.CellType(new_content)
    if isinstance(obj, (tuple, list)):
        items = [substitute(item, mapping, memo) for item in obj]
        if all(a is b for a, b in zip(items, obj)):
            return obj
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return type(obj)(*items)
        return type(obj)(items)
    if isinstance(obj, dict):
        if _children(obj) is None:
            return obj
        items = {k: substitute(v, mapping, memo) for k, v in obj.items()}
        if all(items[k] is v for k, v in obj.items()):
            return obj
        out = copy.copy(obj)
        out.update(items)
        return out
    if isinstance(obj, np.ndarray):
        if obj.dtype != object:
            return obj
        items = [substitute(item, mapping, memo) for item in obj.flat]
        if all(a is b for a, b in zip(items, obj.flat)):
            return obj
        out = np.empty(obj.shape, dtype=object)
        for index, item in zip(np.ndindex(obj.shape), items):
            out[index] = item
        return out
    if isinstance(obj, functools.partial):
        func = substitute(obj.func, mapping, memo)
        args = tuple(substitute(a, mapping, memo) for a in obj.args)
        keywords = {k: substitute(v, mapping, memo) for k, v in obj.keywords.items()}
        if func is obj.func and all(a is b for a, b in zip(args, obj.args)) and \
                all(keywords[k] is v for k, v in obj.keywords.items()):
            return obj
        return functools.partial(func, *args, **keywords)
    if isinstance(obj, types.MethodType):
        func, owner = substitute(obj.__func__, mapping, memo), substitute(obj.__self__, mapping, memo)
        return obj if func is obj.__func__ and owner is obj.__self__ else types.MethodType(func, owner)
    parts = _children(obj)
    if not parts:
        return obj
    attributes = {k: substitute(v, mapping, memo) for k, v in vars(obj).items()}
    if all(attributes[k] is v for k, v in vars(obj).items()):
        return obj
    out = copy.copy(obj)
    vars(out).update(attributes)
    return out


class Parameters:
    """The numbers of layers a function and its arguments hold, as one flat vector P.

    ``P0``: their primal values, concatenated (m entries). ``seeded(roots, tag, order, M)``
    gives copies of roots in which each number is a Dual (order 1) or HyperDual (order 2) of
    tag ``tag`` with value its piece of P0 and unit partials on its columns of M (the first m);
    ``floated(roots)`` copies holding the primal values. ``delta()`` is P − P0 on the layers
    themselves: the perturbation the result's Taylor expansion is applied to."""

    def __init__(self, roots):
        self.leaves = find_layers(roots)
        self.shapes = [np.shape(primal(leaf)) for leaf in self.leaves]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.m = int(self.offsets[-1])
        self.P0 = np.concatenate([np.ravel(primal(leaf)).astype(float) for leaf in self.leaves]) \
            if self.leaves else np.zeros(0)

    def __bool__(self):
        return bool(self.leaves)

    def _pieces(self, make):
        return {id(leaf): make(self.P0[self.offsets[i]:self.offsets[i + 1]].reshape(shape),
                               slice(self.offsets[i], self.offsets[i + 1]), shape)
                for i, (leaf, shape) in enumerate(zip(self.leaves, self.shapes))}

    def floated(self, roots):
        mapping = self._pieces(lambda value, where, shape: value[()] if shape == () else value)
        memo = {}
        return [substitute(root, mapping, memo) for root in roots]

    def seeded(self, roots, tag, order, M):
        E = np.eye(self.m, M)

        def make(value, where, shape):
            partials = E[where].reshape(shape + (M,))
            if order == 1:
                return Dual(value, partials, tag)
            return HyperDual(value, partials, partials, np.zeros(shape + (M, M)), tag)
        mapping = self._pieces(make)
        memo = {}
        return [substitute(root, mapping, memo) for root in roots]

    def delta(self):
        """P − P0 as numbers of the layers (zero primal), an empty float array without any."""
        if not self.leaves:
            return np.zeros(0)
        pieces = [np.ravel(leaf) - self.P0[self.offsets[i]:self.offsets[i + 1]]
                  for i, leaf in enumerate(self.leaves)]
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def depth(self):
        return max((layer_depth(leaf) for leaf in self.leaves), default=0)


def components(out, order, n, M):
    """(value, first, second) of a stand-in's own Dual/HyperDual result of shape (n,): the
    value, partials (n, M) and, at order 2, the ε1ε2 part (n, M, M); a constant (f that
    depends on neither state nor parameters) has zero derivatives."""
    out = as_array(out)
    if not isinstance(out, (Dual, HyperDual)):
        value = np.broadcast_to(np.asarray(out, dtype=float), (n,))
        return value, np.zeros((n, M)), (np.zeros((n, M, M)) if order == 2 else None)
    value = np.broadcast_to(np.asarray(out.value, dtype=float), (n,))
    if order == 1:
        return value, np.broadcast_to(out.partials, (n, M)), None
    return value, np.broadcast_to(out.eps1, (n, M)), np.broadcast_to(out.eps12, (n, M, M))


def hidden_layers(name):
    return SolverDerivativeError(
        f"{name}: the function carries derivatives (dual or traced numbers) from somewhere "
        "dualad cannot replace them (a global variable, an object it cannot copy); pass the "
        "differentiated parameters through args= or hold them in the function's closure")
