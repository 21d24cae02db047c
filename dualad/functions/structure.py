"""Array manipulation: selections (each output entry is an operand entry), the compositions
built on them, constant buffers and value-only functions."""

from __future__ import annotations

import numpy as np

from ..number import assign, is_layer, primal, unwrapped
from .registry import (axes_of, reject_options, composition, selection, single, stack_lists,
                       value_only)

# ---- one operand: NumPy's own call on the values and on the position arrays ----------------
for _func in (np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.rollaxis,
              np.squeeze, np.expand_dims, np.broadcast_to, np.copy, np.roll, np.flip, np.fliplr,
              np.flipud, np.rot90, np.take, np.diagonal, np.repeat, np.tile, np.delete,
              np.real):
    selection(_func, compiled=_func in (np.roll, np.reshape, np.ravel, np.copy, np.flip, np.take,
                                             np.repeat, np.tile, np.real, np.delete, np.transpose,
                                             np.diagonal, np.fliplr, np.flipud, np.rot90,
                                             np.swapaxes, np.expand_dims, np.broadcast_to,
                                             np.moveaxis))(single(_func))


@selection(np.take_along_axis, compiled=True)
def _take_along_axis(arr, indices, axis=-1):
    indices = np.asarray(primal(indices))
    return [arr], lambda arrays: np.take_along_axis(arrays[0], indices, axis)


@selection(np.pad)
def _pad(array, pad_width, mode="constant", **kwargs):
    if mode == "constant":
        # the padding is new constant entries, not entries of an operand: a buffer filled
        # with the constant, the array assigned into its middle
        values = kwargs.pop("constant_values", 0)
        if is_layer(values):
            raise TypeError("numpy.pad: a constant_values that carries a derivative is not "
                            "supported; pad with 0 and add the constant times a mask")
        if kwargs or np.ndim(values) > 0 and np.size(values) > 1:
            raise TypeError("numpy.pad of dual numbers in mode 'constant' takes one scalar "
                            "constant_values")
        return [array], lambda arrays: _pad_constant(arrays[0], pad_width, values)
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise TypeError(f"numpy.pad of dual numbers supports the modes constant, edge, reflect, "
                        f"symmetric and wrap, not {mode!r}")
    return [array], lambda arrays: np.pad(arrays[0], pad_width, mode=mode, **kwargs)


def _pad_constant(a, pad_width, value):
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (np.ndim(a), 2))
    shape = tuple(int(n + lo + hi) for n, (lo, hi) in zip(np.shape(a), widths))
    flags = np.asarray(unwrapped(a)).flags  # NumPy pads an F-ordered (not C-ordered) array in F order
    order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    if isinstance(a, np.ndarray) and a.dtype.kind in "iu":
        out = np.full(shape, -1, dtype=a.dtype, order=order)  # positions: padding reads no operand
    elif isinstance(a, np.ndarray) and a.dtype.kind == "V":
        out = np.zeros(shape, dtype=a.dtype, order=order)  # tangent blocks: the padding is a constant
    else:
        out = np.full(shape, float(primal(value)), order=order)
    middle = tuple(slice(int(lo), int(lo) + n) for n, (lo, _) in zip(np.shape(a), widths))
    return assign(out, middle, a)


# ---- several operands ---------------------------------------------------------------------
def _operand_list(arrays):
    return [stack_lists(x) for x in arrays]


def _joining(func):
    def operands(arrays, *args, **kwargs):
        for key in ("out", "dtype", "casting"):
            if kwargs.get(key) not in (None, "same_kind"):
                raise TypeError(f"numpy.{func.__name__} on dual numbers does not support `{key}`")
        kwargs = {k: v for k, v in kwargs.items() if k not in ("out", "dtype", "casting")}
        ops = _operand_list(arrays)
        return ops, lambda values: func(values, *args, **kwargs)
    return operands


for _func in (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack):
    selection(_func, compiled=True)(_joining(_func))


@selection(np.append, compiled=True)
def _append(arr, values, axis=None):
    ops = _operand_list([arr, values])
    return ops, lambda v: np.append(v[0], v[1], axis=axis)


@selection(np.insert, compiled=True)
def _insert(arr, obj, values, axis=None):
    ops = _operand_list([arr, values])
    return ops, lambda v: np.insert(v[0], obj, v[1], axis=axis)


@selection(np.where, compiled=True, note="np.where(c) alone is value-only (np.nonzero)")
def _where(condition, x=None, y=None):
    if x is None and y is None:
        return [], lambda v: np.nonzero(primal(condition))
    cond = np.asarray(primal(condition), dtype=bool)
    return [stack_lists(x), stack_lists(y)], lambda v: np.where(cond, v[0], v[1])


# ---- compositions of selections and where ------------------------------------------------
@composition(np.atleast_1d, compiled=True)
def atleast_1d(*arrays):
    out = [np.reshape(a, (1,)) if np.ndim(a) == 0 else a for a in arrays]
    return out[0] if len(out) == 1 else out


@composition(np.atleast_2d, compiled=True)
def atleast_2d(*arrays):
    out = [np.reshape(a, (1,) * (2 - np.ndim(a)) + np.shape(a)) if np.ndim(a) < 2 else a
           for a in arrays]
    return out[0] if len(out) == 1 else out


@composition(np.atleast_3d, compiled=True)
def atleast_3d(*arrays):
    def three(a):
        shape = np.shape(a)
        if len(shape) == 0:
            return np.reshape(a, (1, 1, 1))
        if len(shape) == 1:
            return np.reshape(a, (1, shape[0], 1))
        if len(shape) == 2:
            return np.reshape(a, shape + (1,))
        return a
    out = [three(a) for a in arrays]
    return out[0] if len(out) == 1 else out


@composition(np.sort, compiled=True,
             note="ties: each entry keeps its own derivative, tied entries in input order")
def sort(a, axis=-1, kind=None, order=None, stable=None):
    """The entries in a stable sort's order, whatever `kind` (the values are the same for
    every kind; the derivatives of tied entries follow input order, as in compiled code)."""
    if axis is None:
        a, axis = np.ravel(a), 0
    return _laid_out_as(a, np.take_along_axis(a, np.argsort(primal(a), axis=axis, kind="stable"), axis))


def _laid_out_as(a, result):
    """result in a's layout: NumPy's sort and partition work on a.copy(order='K')."""
    if np.ndim(result) < 2 or np.asarray(unwrapped(a)).flags.c_contiguous:
        return result
    out = np.copy(a, order="K")
    out[...] = result
    return out


@composition(np.partition, compiled=True,
             note="NumPy's values; tied entries in input order (compiled: numba's partition's values)")
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's partition of the values, the entries placed as: the r-th smallest position
    (positions ordered by value, ties by position) takes the r-th smallest entry (ties by
    input order), so that tied entries keep input order, as in compiled code."""
    if axis is None:
        a, axis = np.ravel(a), 0
    values = np.asarray(primal(a))
    positions = np.argsort(np.partition(values, kth, axis=axis), axis=axis, kind="stable")
    taken = np.empty_like(positions)
    np.put_along_axis(taken, positions, np.argsort(values, axis=axis, kind="stable"), axis)
    return _laid_out_as(a, np.take_along_axis(a, taken, axis))


def _split(a, indices_or_sections, axis=0, equal=False):
    axis = axes_of(axis, np.ndim(a))[0]
    n = np.shape(a)[axis]
    if equal and np.ndim(indices_or_sections) == 0 and n % int(indices_or_sections):
        raise ValueError("array split does not result in an equal division")
    # the pieces' bounds, from NumPy's own split of the positions along the axis
    bounds = np.array_split(np.arange(n), indices_or_sections)
    head = (slice(None),) * axis
    return [a[head + (slice(int(b[0]), int(b[-1]) + 1) if len(b) else slice(0, 0),)] for b in bounds]


@composition(np.split, compiled=True)
def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, equal=True)


@composition(np.array_split, compiled=True)
def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis)


@composition(np.hsplit, compiled=True)
def hsplit(ary, indices_or_sections):
    return _split(ary, indices_or_sections, 1 if np.ndim(ary) > 1 else 0, equal=True)


@composition(np.vsplit, compiled=True)
def vsplit(ary, indices_or_sections):
    if np.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0, equal=True)


@composition(np.dsplit, compiled=True)
def dsplit(ary, indices_or_sections):
    if np.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, equal=True)


def _triangle(m, k, lower):
    shape = np.shape(m)
    rows, cols = np.indices(shape[-2:])
    keep = cols - rows <= k if lower else cols - rows >= k
    return np.where(keep, m, 0.0)


@composition(np.tril, compiled=True)
def tril(m, k=0):
    return _triangle(m, k, lower=True)


@composition(np.triu, compiled=True)
def triu(m, k=0):
    return _triangle(m, k, lower=False)


@composition(np.diag, compiled=True)
def diag(v, k=0):
    if np.ndim(v) == 2:
        return np.diagonal(v, k)
    if np.ndim(v) != 1:
        raise ValueError("numpy.diag takes a 1-d or 2-d input")
    return diagflat(v, k)


@composition(np.diagflat, compiled=True)
def diagflat(v, k=0):
    v = np.ravel(v)
    n = np.shape(v)[0] + abs(k)
    rows, cols = np.indices((n, n))
    on = cols - rows == k
    # entry (i, i + k) holds v[min(i, i + k)]: gather v along the diagonal, zero elsewhere
    index = np.clip(np.minimum(rows, cols), 0, max(np.shape(v)[0] - 1, 0))
    return np.where(on, v[index], 0.0) if np.shape(v)[0] else np.zeros((n, n))


@composition(np.trace, compiled=True)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    reject_options(dict(dtype=dtype, out=out), "trace")
    if np.shape(np.diagonal(unwrapped(a), offset, axis1, axis2))[-1] == 0:
        return np.zeros(np.shape(np.trace(unwrapped(a), offset, axis1, axis2)))
    return np.sum(np.diagonal(a, offset, axis1, axis2), axis=-1)


@composition(np.select, compiled=True)
def select(condlist, choicelist, default=0):
    result = default
    for cond, choice in zip(reversed(list(condlist)), reversed(list(choicelist))):
        result = np.where(np.asarray(primal(cond), dtype=bool), choice, result)
    result = np.broadcast_to(result, np.broadcast_shapes(*[np.shape(c) for c in condlist],
                                                        *[np.shape(c) for c in choicelist]))
    # NumPy's select fills a new C-ordered array
    return result if np.asarray(unwrapped(result)).flags.c_contiguous else np.copy(result, order="C")


@composition(np.imag, compiled=True)
def imag(val):
    return np.zeros(np.shape(val))  # real input: the imaginary part is the constant 0


@composition(np.angle, compiled=True)
def angle(z, deg=False):
    # real input: the angle is 0 or π, piecewise constant
    return np.where(primal(z) < 0, 180.0 if deg else np.pi, 0.0) + np.zeros(np.shape(z))


# ---- constant buffers and value-only functions ---------------------------------------------
def _filled(a, fill_value, dtype, order, shape):
    """NumPy's full_like on a's values: a's shape laid out as a is (order 'K'), or `shape`."""
    return np.full_like(np.asarray(unwrapped(a)), fill_value, dtype=dtype or float, order=order, shape=shape)


def _buffer(fill_value):
    """zeros_like & co.: a constant of a's layer (a buffer that item assignment fills)."""
    def like(a, dtype=None, order="K", subok=True, shape=None):
        if dtype is not None and np.dtype(dtype).kind != "f":
            return _filled(a, fill_value, dtype, order, shape)
        filled = _filled(a, fill_value, None, order, shape)
        return a.constant(filled) if is_layer(a) else filled
    return like


composition(np.zeros_like, np.empty_like, compiled=True)(_buffer(0.0))
composition(np.ones_like, compiled=True)(_buffer(1.0))


@composition(np.full_like, compiled=True)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    shape = np.shape(a) if shape is None else shape
    if is_layer(fill_value):
        filled = np.broadcast_to(fill_value, shape).copy()
        # a fill value of an older layer is a constant of a's layer, whose value keeps its
        # own derivative
        return filled if not is_layer(a) or fill_value.tag >= a.tag else a.constant(filled)
    if dtype is not None and np.dtype(dtype).kind != "f":
        return _filled(a, fill_value, dtype, order, shape)
    filled = _filled(a, float(fill_value), None, order, shape)
    return a.constant(filled) if is_layer(a) else filled


value_only(np.argmax, np.argmin, np.argsort, np.nonzero, np.flatnonzero, np.count_nonzero,
           np.searchsorted, np.any, np.all, np.shape, np.size, np.isclose, np.allclose,
           np.array_equal, np.iscomplexobj, np.isrealobj, np.isreal, np.iscomplex, compiled=True)
value_only(np.argpartition, compiled=True, note="compiled: numba's order of the entries")
value_only(np.ndim, np.result_type)
