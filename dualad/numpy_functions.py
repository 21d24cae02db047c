"""NumPy functions on dual numbers (``__array_function__``), for Dual and HyperDual alike.

Four kinds, each handled once:
  * linear structure (reshape, indexing-like, sums, stacking, where, ...): the same
    operation on the value and on every tangent component;
  * compositions of rule-table primitives (clip, outer, prod, norm, diff, mean): no formula
    of their own;
  * multilinear (einsum, matmul, dot, inner) and linear algebra (det, inv, solve): a Dual
    implementation (product rule / the JVPs in rules.py); HyperDual evaluates the same
    code on its Dual-of-Dual view;
  * value-only functions (argmax, shape, ...): computed on the primal.
"""

from __future__ import annotations

import dataclasses
import string

import numpy as np

from . import rules
from .dual import fit
from .number import HANDLED_FUNCTIONS, ForwardNumber, is_layer, leader_of, primal

__all__ = ["VALUE_ONLY", "COMPOSITIONS", "matmul_subscripts", "dot_subscripts",
           "inner_subscripts", "registrar", "axes_of", "parse_subscripts", "reject_options",
           "stack_lists"]


def registrar(table):
    """A decorator factory: @implements(np.f, ...) puts the function in `table` for each."""
    def implements(*funcs):
        def register(impl):
            for func in funcs:
                table[func] = impl
            return impl
        return register
    return implements


implements = registrar(HANDLED_FUNCTIONS)


def axes_of(axis, ndim):
    """Normalise an axis argument (None, int or tuple) to a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for ax in axes:
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(ax, ndim)
        out.append(ax % ndim)
    return tuple(out)


def _axis(axis, ndim):
    return axes_of(axis, ndim)[0]


def reject_options(kwargs, name):
    """Refuse NumPy options (out=, dtype=, where=, ...) that dual numbers cannot honour."""
    for key, val in kwargs.items():
        if val is not None and val is not np._NoValue:
            raise TypeError(f"numpy.{name} on dual numbers does not support the `{key}` argument")


def stack_lists(x):
    """A (nested) list or tuple holding numbers of any layer, stacked by np.stack (so by the
    layer that leads it, which may be newer than the one handling the call); anything else
    unchanged. NumPy's dispatch does not look into lists, nor does np.asarray keep layers."""
    if not isinstance(x, (list, tuple)):
        return x
    items = [stack_lists(item) for item in x]
    return np.stack(items) if any(is_layer(item) for item in items) else x


def _const(x):
    """An operand of a stacking function: numbers of every layer stay (a reverse-mode value or
    an older dual is a constant of this transform whose value must keep its own derivative),
    a list holding any of them is stacked, the rest is floats."""
    x = stack_lists(x)
    return x if is_layer(x) else np.asarray(x, dtype=np.float64)


# ---- linear structure -------------------------------------------------------------------
@implements(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    shape = newshape if shape is None else shape
    if order != "C":
        raise TypeError("reshape of dual numbers supports order='C' only")
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        shape = tuple(a.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape)) != a.size:
        raise ValueError(f"cannot reshape dual array of size {a.size} into shape {shape}")
    return a.map_linear(lambda arr, k: np.reshape(arr, shape + arr.shape[arr.ndim - k:]))


@implements(np.ravel)
def ravel(a, order="C"):
    return reshape(a, -1, order=order)


@implements(np.transpose)
def transpose(a, axes=None):
    nd = a.ndim
    axes = tuple(reversed(range(nd))) if axes is None else axes_of(tuple(axes), nd)
    return a.map_linear(lambda arr, k: np.transpose(arr, axes + tuple(range(nd, nd + k))))


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    perm = list(range(a.ndim))
    i, j = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    src, dst = axes_of(source, a.ndim), axes_of(destination, a.ndim)
    return a.map_linear(lambda arr, k: np.moveaxis(arr, src, dst))


@implements(np.squeeze)
def squeeze(a, axis=None):
    axes = tuple(i for i, s in enumerate(a.shape) if s == 1) if axis is None else axes_of(axis, a.ndim)
    return a.map_linear(lambda arr, k: np.squeeze(arr, axis=axes))


@implements(np.expand_dims)
def expand_dims(a, axis):
    n_new = len(axis) if isinstance(axis, tuple) else 1
    axes = axes_of(axis, a.ndim + n_new)
    return a.map_linear(lambda arr, k: np.expand_dims(arr, axes))


@implements(np.atleast_1d)
def atleast_1d(*arrays):
    out = [reshape(a, (1,)) if isinstance(a, ForwardNumber) and a.ndim == 0
           else (a if isinstance(a, ForwardNumber) else np.atleast_1d(a)) for a in arrays]
    return out[0] if len(out) == 1 else out


@implements(np.broadcast_to)
def broadcast_to(array, shape, subok=False):
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return array.map_linear(lambda arr, k: np.broadcast_to(arr, shape + arr.shape[arr.ndim - k:]))


@implements(np.copy)
def copy(a, order="K", subok=False):
    return a.copy()


@implements(np.sum)
def sum_(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    reject_options(dict(dtype=dtype, out=out, **kwargs), "sum")
    axes = axes_of(axis, a.ndim)
    keep = keepdims is True
    return a.map_linear(lambda arr, k: np.sum(arr, axis=axes, keepdims=keep))


@implements(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    reject_options(dict(dtype=dtype, out=out, **kwargs), "mean")
    count = int(np.prod([a.shape[i] for i in axes_of(axis, a.ndim)]))
    return sum_(a, axis=axis, keepdims=keepdims) / count


@implements(np.cumsum)
def cumsum(a, axis=None, dtype=None, out=None):
    reject_options(dict(dtype=dtype, out=out), "cumsum")
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axis(axis, a.ndim)
    return a.map_linear(lambda arr, k: np.cumsum(arr, axis=ax))


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    reject_options(dict(dtype=dtype, out=out), "trace")
    ax1, ax2 = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    return a.map_linear(lambda arr, k: np.trace(arr, offset, ax1, ax2))


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    ax1, ax2 = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    # np.diagonal appends the diagonal as the last axis; keep the tangent axes last instead.
    position = a.ndim - 2
    return a.map_linear(lambda arr, k: np.moveaxis(np.diagonal(arr, offset, ax1, ax2), -1, position))


@implements(np.concatenate)
def concatenate(arrays, axis=0, out=None, dtype=None, casting=None):
    reject_options(dict(out=out, dtype=dtype, casting=casting), "concatenate")
    arrays = [_const(x) for x in arrays]
    leader = leader_of((arrays,))
    if not isinstance(leader, ForwardNumber):  # a newer layer was hidden in a nested list
        return np.concatenate(arrays, axis=axis)
    if axis is None:
        arrays, axis = [np.ravel(x) for x in arrays], 0
    ax = _axis(axis, np.ndim(arrays[0]))
    return leader.combine_linear(arrays, lambda parts, k: np.concatenate(parts, axis=ax))


@implements(np.stack)
def stack(arrays, axis=0, out=None, dtype=None, casting=None):
    reject_options(dict(out=out, dtype=dtype, casting=casting), "stack")
    arrays = [_const(x) for x in arrays]
    leader = leader_of((arrays,))
    if not isinstance(leader, ForwardNumber):  # a newer layer was hidden in a nested list
        return np.stack(arrays, axis=axis)
    ax = _axis(axis, np.ndim(arrays[0]) + 1)
    return leader.combine_linear(arrays, lambda parts, k: np.stack(parts, axis=ax))


@implements(np.hstack)
def hstack(tup, dtype=None, casting=None):
    arrays = [atleast_1d(_const(x)) for x in tup]
    return concatenate(arrays, axis=0 if np.ndim(arrays[0]) == 1 else 1)


@implements(np.vstack)
def vstack(tup, dtype=None, casting=None):
    arrays = [_const(x) for x in tup]
    arrays = [np.reshape(x, (1, -1)) if np.ndim(x) <= 1 else x for x in arrays]
    return concatenate(arrays, axis=0)


@implements(np.roll)
def roll(a, shift, axis=None):
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = axes_of(axis, a.ndim)
    return a.map_linear(lambda arr, k: np.roll(arr, shift, axis=axes))


@implements(np.flip)
def flip(m, axis=None):
    axes = axes_of(axis, m.ndim)
    return m.map_linear(lambda arr, k: np.flip(arr, axis=axes))


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    reject_options(dict(out=out), "take")
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axis(axis, a.ndim)
    return a.map_linear(lambda arr, k: np.take(arr, indices, axis=ax, mode=mode))


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis):
    if axis is None:
        arr, axis = ravel(arr), 0
    ax = _axis(axis, arr.ndim)
    indices = np.asarray(indices)
    return arr.map_linear(
        lambda a, k: np.take_along_axis(a, indices[(Ellipsis,) + (None,) * k], axis=ax))


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, **kwargs):
    if axis is None:
        a, axis = ravel(a), 0
    return take_along_axis(a, np.argsort(primal(a), axis=axis, kind=kind), axis)


@implements(np.where)
def where(condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(primal(condition))
    cond = np.asarray(primal(condition), dtype=bool)
    x, y = stack_lists(x), stack_lists(y)
    leader = leader_of((x, y))
    if not isinstance(leader, ForwardNumber):
        return np.where(cond, x, y)  # only the condition is a dual, or a reverse layer leads
    (vx, cx), (vy, cy) = leader.split(x), leader.split(y)
    value = np.where(cond, vx, vy)
    shape = np.shape(value)
    comps = []
    for i, (k, t) in enumerate(zip(leader.trailing, leader.trailing_shapes())):
        c = np.where(cond[(Ellipsis,) + (None,) * k],
                     0.0 if cx is None else cx[i], 0.0 if cy is None else cy[i])
        comps.append(fit(c, shape, t))
    return leader._new(value, tuple(comps))


def _like(fill):
    def like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        shape = a.shape if shape is None else ((shape,) if np.ndim(shape) == 0 else tuple(shape))
        value = fill(shape, kwargs)
        if dtype is not None and np.dtype(dtype).kind != "f":
            return value.astype(dtype)
        if isinstance(value, ForwardNumber):
            return value
        return a.constant(value)

    return like


HANDLED_FUNCTIONS[np.zeros_like] = _like(lambda shape, kw: np.zeros(shape))
HANDLED_FUNCTIONS[np.empty_like] = _like(lambda shape, kw: np.zeros(shape))
HANDLED_FUNCTIONS[np.ones_like] = _like(lambda shape, kw: np.ones(shape))


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    shape = a.shape if shape is None else ((shape,) if np.ndim(shape) == 0 else tuple(shape))
    if is_layer(fill_value):
        filled = np.broadcast_to(fill_value, shape).copy()
        # a fill value of an older layer is a constant here, whose value keeps its derivative
        return filled if not is_layer(a) or fill_value.tag >= a.tag else a.constant(filled)
    if dtype is not None and np.dtype(dtype).kind != "f":
        return np.full(shape, fill_value, dtype=dtype)
    return a.constant(np.full(shape, float(fill_value)))


# ---- reductions with a choice: max/min split ties evenly (JAX) --------------------------
def _chooser(choose):
    def reduce(a, axis=None, out=None, keepdims=False, **kwargs):
        reject_options(dict(out=out, **kwargs), choose.__name__)
        axes = axes_of(axis, a.ndim)
        value = choose(a.value, axis=axes, keepdims=True)
        mask = np.asarray(a.value == value, dtype=np.float64)
        weights = mask / np.sum(mask, axis=axes, keepdims=True)
        keep = keepdims is True
        comps = tuple(np.sum(times_trailing(weights, c, k), axis=axes, keepdims=keep)
                      for c, k in zip(a.components, a.trailing))
        return a._new(value if keep else np.squeeze(value, axis=axes), comps)

    return reduce


def times_trailing(w, c, k):
    return w[(Ellipsis,) + (None,) * k] * c


HANDLED_FUNCTIONS[np.max] = HANDLED_FUNCTIONS[np.amax] = _chooser(np.max)
HANDLED_FUNCTIONS[np.min] = HANDLED_FUNCTIONS[np.amin] = _chooser(np.min)


# ---- compositions of rule-table primitives ----------------------------------------------
@implements(np.clip)
def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """clip = minimum(maximum(a, lo), hi), as jnp.clip: at a boundary the derivative is 0.5."""
    reject_options(dict(out=out, **kwargs), "clip")
    if a_min is not None:
        a = np.maximum(a, a_min)
    if a_max is not None:
        a = np.minimum(a, a_max)
    return a


@implements(np.outer)
def outer(a, b, out=None):
    return np.multiply(np.reshape(a, (-1, 1)), np.reshape(b, (1, -1)))


@implements(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Product by a tree of multiplications: exact with zeros, no formula of its own."""
    reject_options(dict(dtype=dtype, out=out, **kwargs), "prod")
    # NumPy calls throughout (not this module's functions): reverse mode runs this code too.
    axes = axes_of(axis, a.ndim)
    x = np.moveaxis(a, axes, tuple(range(len(axes))))
    x = np.reshape(x, (-1,) + x.shape[len(axes):])
    while x.shape[0] > 1:
        odd = x[-1:] if x.shape[0] % 2 else None
        x = x[0:-1:2] * x[1::2] if odd is not None else x[0::2] * x[1::2]
        if odd is not None:
            x = np.concatenate([x, odd], axis=0)
    result = x[0] if x.shape[0] else np.ones(x.shape[1:])  # the empty product is a constant
    if keepdims is True:
        result = np.expand_dims(result, axes)
    return result


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    reject_options(dict(prepend=prepend, append=append), "diff")
    ax = _axis(axis, a.ndim)
    head = (slice(None),) * ax
    for _ in range(n):
        a = a[head + (slice(1, None),)] - a[head + (slice(None, -1),)]
    return a


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    """Vector p-norms and the Frobenius norm, composed from primitives (2-norm at 0: nan)."""
    matrix = (axis is None and x.ndim == 2 and ord is not None) or (isinstance(axis, tuple) and len(axis) == 2)
    if matrix and ord not in (None, "fro"):
        raise TypeError(f"numpy.linalg.norm with ord={ord!r} on a matrix is not differentiable "
                        "by dualad (only 'fro'); use a vector norm or compose it")
    if ord in (None, 2, "fro"):
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return np.max(np.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(np.abs(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return np.sum(np.abs(x), axis=axis, keepdims=keepdims)
    return np.sum(np.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


# ---- multilinear: product rule over einsum ----------------------------------------------
def parse_subscripts(subscripts):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
    else:
        inputs = subscripts
        letters = inputs.replace(",", "").replace(".", "")
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return inputs.split(","), output


def _multilinear(value_fn, subscripts, operands):
    """Dual product rule: ∂(A·B·…) = Σ_i (A·…·∂X_i·…), each term one einsum."""
    leader = leader_of(operands)
    if not isinstance(leader, ForwardNumber):  # a newer layer was hidden in a list operand
        return value_fn(*operands)
    inputs, output = parse_subscripts(subscripts)
    split = [leader.split(op) for op in operands]
    values = [v for v, _ in split]
    value = value_fn(*values)
    z = next(c for c in string.ascii_letters if c not in subscripts)
    big = sum(np.size(primal(v)) for v in values) > 4096
    partials = None
    for i, (_, comps) in enumerate(split):
        if comps is None:
            continue
        subs = ",".join(s + z if j == i else s for j, s in enumerate(inputs)) + "->" + output + z
        term = np.einsum(subs, *values[:i], comps[0], *values[i + 1:], optimize=big)
        partials = term if partials is None else partials + term
    return leader._new(value, (fit(partials, np.shape(value), leader.trailing_shapes()[0]),))


def _dual_level(func, impl):
    """Register func: Dual runs impl, HyperDual runs func on its Dual-of-Dual view."""
    def dispatch(*args, **kwargs):
        leader = leader_of(args)
        return leader._dual_level(func, args, kwargs, impl)

    HANDLED_FUNCTIONS[func] = dispatch
    return impl


def _einsum_impl(subscripts, *operands, out=None, optimize=False, **kwargs):
    reject_options(dict(out=out, **kwargs), "einsum")
    if not isinstance(subscripts, str):
        raise TypeError("einsum of dual numbers takes the subscripts as a string "
                        "(np.einsum('ij,jk->ik', a, b)), not the interleaved list form")
    operands = [stack_lists(op) for op in operands]
    return _multilinear(lambda *v: np.einsum(subscripts, *v), subscripts, operands)


def matmul_subscripts(na, nb):
    if na == 0 or nb == 0:
        raise ValueError("matmul: an operand is a scalar; use * for scalar multiplication")
    a = "...ij" if na >= 2 else "j"
    b = "...jk" if nb >= 2 else "j"
    out = ("...i" if na >= 2 else "...") + ("k" if nb >= 2 else "")
    if na == 1 and nb == 1:
        out = ""
    return f"{a},{b}->{out}"


def _matmul_impl(a, b, **kwargs):
    reject_options(kwargs, "matmul")
    a, b = stack_lists(a), stack_lists(b)
    subs = matmul_subscripts(np.ndim(a), np.ndim(b))
    return _multilinear(np.matmul, subs, (a, b))


def dot_subscripts(na, nb):
    letters = iter(string.ascii_lowercase)
    a = [next(letters) for _ in range(na)]
    b = [next(letters) for _ in range(nb)]
    b[-2 if nb >= 2 else -1] = a[-1]
    out = a[:-1] + [c for c in b if c != a[-1]]
    return f"{''.join(a)},{''.join(b)}->{''.join(out)}"


def _dot_impl(a, b, out=None):
    reject_options(dict(out=out), "dot")
    a, b = stack_lists(a), stack_lists(b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    return _multilinear(np.dot, dot_subscripts(np.ndim(a), np.ndim(b)), (a, b))


def inner_subscripts(na, nb):
    letters = iter(string.ascii_lowercase)
    sa = [next(letters) for _ in range(na - 1)]
    sb = [next(letters) for _ in range(nb - 1)]
    return f"{''.join(sa)}Z,{''.join(sb)}Z->{''.join(sa + sb)}"


def _inner_impl(a, b):
    a, b = stack_lists(a), stack_lists(b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    return _multilinear(np.inner, inner_subscripts(np.ndim(a), np.ndim(b)), (a, b))


_dual_level(np.einsum, _einsum_impl)
_dual_level(np.matmul, _matmul_impl)
_dual_level(np.dot, _dot_impl)
_dual_level(np.inner, _inner_impl)


# ---- linear algebra: JVPs from rules.det_jvp, inv_jvp, solve_jvp ----------------------------------------
def _from_jvp(jvp, *operands):
    leader = leader_of(operands)
    split = [leader.split(op) for op in operands]
    tangents = [None if c is None else c[0] for _, c in split]
    value, tangent = jvp(*[v for v, _ in split], *tangents)
    return leader._new(value, (fit(tangent, np.shape(value), leader.trailing_shapes()[0]),))


_dual_level(np.linalg.det, lambda a: _from_jvp(rules.det_jvp, a))
_dual_level(np.linalg.inv, lambda a: _from_jvp(rules.inv_jvp, a))
_dual_level(np.linalg.solve, lambda a, b: _from_jvp(rules.solve_jvp, a, b))


# ---- value-only ---------------------------------------------------------------------------
def _on_primal(func):
    def impl(*args, **kwargs):
        return func(*(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})

    HANDLED_FUNCTIONS[func] = impl


# Functions whose result does not depend differentiably on the input (shared with reverse mode).
VALUE_ONLY = (np.shape, np.ndim, np.size, np.argmax, np.argmin, np.argsort, np.nonzero,
              np.count_nonzero, np.isclose, np.allclose, np.array_equal, np.searchsorted,
              np.result_type)
for _func in VALUE_ONLY:
    _on_primal(_func)


@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    reject_options(dict(out=out), "round")
    rule = rules.RULES["round"]
    if decimals:
        rule = dataclasses.replace(rule, value=lambda x: np.round(x, decimals))
    return a._apply_rule(rule, (a,))


# Compositions of rule-table primitives and NumPy calls: reverse mode registers these same
# functions for its traced arrays.
COMPOSITIONS = {func: HANDLED_FUNCTIONS[func] for func in (np.clip, np.outer, np.prod, np.diff,
                                                           np.linalg.norm)}

