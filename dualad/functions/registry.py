"""The registry of NumPy functions: each function classified once, by what it is.

Every layer (Dual and HyperDual in numpy_functions.py, the reverse tape in
reverse/functions.py; the compiled path where an entry says so) builds its implementation
of a function from its entry's kind, so a function is written once and a convention
(max/min ties, where, mean) lives in one place:

  selection    every output entry is one entry of an operand (constants included).
               ``operands(*args, **kwargs) -> (operands, call)``; a layer runs call on the
               values and on integer position arrays, and moves tangents (forward) or
               cotangents (reverse) along the positions it reads off.
  linear       one operand whose derivative is a linear map fixed by the values: sum and
               cumsum (the map itself), max and min (the weights that share the derivative
               among ties). ``operands(*args, **kwargs) -> (operand, value, apply,
               transpose)``: value(x) is the result, apply(tangent, k) the derivative on a
               tangent with k trailing axes, transpose(cotangent) its adjoint.
  multilinear  einsum-like: ``operands(*args, **kwargs) -> (operands, value, subscripts)``;
               forward is the product rule, reverse the einsum transposed.
  jvp          linear algebra: ``operands(*args, **kwargs) -> (operands, jvp)`` with
               jvp(*values, *tangents) -> (value, tangent) linear in the tangents (None for a
               constant operand); reverse runs it on a traced tangent and sweeps it back.
               A tuple of outputs (eigh, svd, ...) has a tuple of tangents, None for an
               output without one.
  composition  NumPy calls on registered functions and rule-table primitives: the same
               code runs on every layer.
  value_only   the result does not depend differentiably on the input: run on the values.

``compiled`` says whether @njit code may call the function on arrays of duals (the
compiled path has its own numba overloads; tests/compiled checks each "yes").
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ..number import from_objects, is_layer, primal, unwrapped

__all__ = ["Entry", "REGISTRY", "KINDS", "selection", "linear", "multilinear", "jvp",
           "composition", "value_only", "build", "single", "with_values", "axes_of", "reject_options", "stack_lists",
           "qualified_name"]

KINDS = ("selection", "linear", "multilinear", "jvp", "composition", "value_only")


@dataclasses.dataclass(frozen=True)
class Entry:
    """How dualad differentiates one NumPy function (see the module docstring)."""
    func: Callable
    kind: str
    impl: Callable | None
    compiled: bool = False
    note: str = ""

    @property
    def name(self):
        return qualified_name(self.func)


# NumPy function -> Entry, filled by the modules of this package.
REGISTRY: dict = {}


def qualified_name(func):
    """numpy.linalg.svd, numpy.sum: the name a user writes."""
    module = getattr(func, "__module__", "numpy") or "numpy"
    module = "numpy.linalg" if "linalg" in module else "numpy"
    return f"{module}.{getattr(func, '__name__', func)}"


def _register(kind, funcs, impl, compiled, note):
    for func in funcs:
        if func in REGISTRY:
            raise AssertionError(f"{qualified_name(func)} is registered twice")
        REGISTRY[func] = Entry(func, kind, impl, compiled, note)
    return impl


def _decorator(kind):
    def register(*funcs, compiled=False, note=""):
        def put(impl):
            return _register(kind, funcs, impl, compiled, note)
        return put
    register.__name__ = kind
    register.__doc__ = f"Decorator: register impl as the {kind} entry of each NumPy function."
    return register


selection = _decorator("selection")
linear = _decorator("linear")
multilinear = _decorator("multilinear")
jvp = _decorator("jvp")
composition = _decorator("composition")


def value_only(*funcs, compiled=False, note=""):
    """Register functions whose result does not depend differentiably on their input."""
    _register("value_only", funcs, None, compiled, note)


def build(table, selection, linear, multilinear, jvp):
    """Fill a layer's table (NumPy function -> implementation) from the registry: the layer
    gives one builder (entry -> implementation) per kind that depends on it; a composition
    is its own code and a value-only function runs on the values, on every layer."""
    builders = {"selection": selection, "linear": linear, "multilinear": multilinear,
                "jvp": jvp, "composition": lambda entry: entry.impl, "value_only": _on_values}
    for func, entry in REGISTRY.items():
        table[func] = builders[entry.kind](entry)


def _on_values(entry):
    func = entry.func

    def impl(*args, **kwargs):
        return func(*(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
    return impl


def single(func):
    """The selection operands of func(a, *args, **kwargs): a alone."""
    def operands(a, *args, **kwargs):
        return [a], lambda arrays: func(arrays[0], *args, **kwargs)
    return operands


# ---- argument helpers shared by the entries --------------------------------------------------
def axes_of(axis, ndim):
    """Normalise an axis argument (None, int or tuple) to a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for ax in axes:
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(ax, ndim)
        out.append(ax % ndim)
    return tuple(out)


def reject_options(kwargs, name):
    """Refuse NumPy options (out=, dtype=, where=, ...) that dual numbers cannot honour."""
    for key, val in kwargs.items():
        if key == "where" and val is True:
            continue  # NumPy's methods pass where=True: every entry, the default
        if key == "dtype" and val is not None and np.dtype(val) == np.float64:
            continue  # the dtype dual numbers have
        if val is not None and val is not np._NoValue:
            raise TypeError(f"numpy.{name} on dual numbers does not support the `{key}` argument")


def stack_lists(x):
    """A (nested) list or tuple holding numbers of any layer, stacked by np.stack (so by the
    layer that leads it, which may be newer than the one handling the call), an object array
    of them as one number (number.from_objects); anything else unchanged. NumPy's dispatch
    does not look into lists or object arrays."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        return from_objects(x)
    if not isinstance(x, (list, tuple)):
        return x
    items = [stack_lists(item) for item in x]
    return np.stack(items) if any(is_layer(item) for item in items) else x


def with_values(expr, value):
    """expr with the value `value` (NumPy's own, when a composition computes it in another
    order: equal to expr's up to rounding) and expr's derivatives of every layer:
    expr - (v - value), v expr's value. Where v and value are close, v - value is exact
    (Sterbenz) and so is the result; otherwise a second round is. Where either is not
    finite they must agree already (each caller builds its non-finite cases as NumPy)."""
    value = np.asarray(value, dtype=np.float64)
    for _ in range(3):
        v = np.asarray(unwrapped(expr), dtype=np.float64)  # NumPy's rounding, not a branch
        same = (v == value) | (np.isnan(v) & np.isnan(value))
        if same.all():
            return expr
        if not np.all(same | (np.isfinite(v) & np.isfinite(value))):
            break
        expr = expr - np.where(same, 0.0, v - value)
    raise AssertionError("dualad: a composition's value is not NumPy's where it is not "
                         "finite; please report this")
