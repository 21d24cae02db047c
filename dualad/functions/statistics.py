"""Statistics: var, std, average, nanmean, nansum, cov, corrcoef (compositions of NumPy's own
steps, so values are NumPy's bit for bit), median, quantile and percentile (linear in the
data with weights fixed by the values: ties share the derivative evenly, as np.max does),
and the sampling functions linspace, gradient and interp.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from ..number import assign, is_layer, primal, unwrapped
from .registry import axes_of, composition, linear, reject_options, stack_lists, with_values


def _keep(keepdims):
    return keepdims is True


def _float_dtype(dtype, name):
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise TypeError(f"numpy.{name} on dual numbers computes in float64; dtype={dtype!r} "
                        "is not supported")


def _no_where(where, name):
    if where is not np._NoValue and where is not True:
        raise TypeError(f"numpy.{name} on dual numbers does not support the `where` argument")


# ---- moments ---------------------------------------------------------------------------
@composition(np.var, compiled=True)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
        where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    """Σ (a - ā)² / (n - ddof) over the axes, NumPy's steps in NumPy's order; `mean` (shaped
    as with keepdims=True) replaces ā and may carry a derivative."""
    reject_options(dict(out=out), "var")
    _float_dtype(dtype, "var")
    _no_where(where, "var")
    if correction is not np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = stack_lists(a)
    axes = axes_of(axis, np.ndim(a))
    n = math.prod(np.shape(a)[i] for i in axes)
    if ddof >= n:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    centre = np.sum(a, axis=axes, keepdims=True) / n if mean is np._NoValue else mean
    squares = np.sum(np.square(a - centre), axis=axes, keepdims=_keep(keepdims))
    return squares / max(n - ddof, 0)


@composition(np.std, compiled=True)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
        where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    """sqrt(var). Over a single entry (an axis of length 1) the deviation a - ā is 0 for
    every a, so std is the constant 0 and its derivative exactly 0 (autograd's and JAX's
    answer is the same); where the variance of several entries is 0 (equal entries) std is
    not differentiable and the derivative is nan, as sqrt'(0)·0 in the chain rule."""
    a = stack_lists(a)
    result = np.sqrt(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                         where=where, mean=mean, correction=correction))
    if _single_entry(a, axis, mean, ddof if correction is np._NoValue else correction):
        return np.zeros(np.shape(result))
    return result


def _single_entry(a, axis, mean, ddof):
    """Whether each lane of the reduction holds one entry, centred on its own mean with a
    positive divisor: the variance is then identically 0 (not only at this point)."""
    n = math.prod(np.shape(a)[i] for i in axes_of(axis, np.ndim(a)))
    return n == 1 and mean is np._NoValue and 1 - ddof > 0


@composition(np.average, compiled=True)
def average(a, axis=None, weights=None, returned=False, *, keepdims=np._NoValue):
    """mean, or Σ a·w / Σ w over the axes (weights may carry derivatives); with returned,
    also Σ w (or the count) broadcast to the average's shape, as NumPy."""
    a, weights = stack_lists(a), stack_lists(weights)
    if axis is not None:
        axis = axes_of(axis, np.ndim(a))
    keep = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = np.mean(a, axis, **keep)
        scale = np.float64(np.size(unwrapped(a)) / np.size(unwrapped(avg)))
    else:
        shape = np.shape(a)
        if np.shape(weights) != shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if np.shape(weights) != tuple(shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            weights = np.reshape(np.transpose(weights, np.argsort(axis)),
                                 tuple(s if ax in axis else 1 for ax, s in enumerate(shape)))
        scale = np.sum(weights, axis=axis, **keep)
        if np.any(primal(scale) == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = np.sum(a * weights, axis=axis, **keep) / scale
    if not returned:
        return avg
    if np.shape(scale) != np.shape(avg):
        scale = np.copy(np.broadcast_to(scale, np.shape(avg)))
    return avg, scale


@composition(np.nansum, compiled=True)
def nansum(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
           where=np._NoValue):
    """sum with nan entries taken as 0 (derivative 0 there)."""
    reject_options(dict(out=out, initial=initial), "nansum")
    _float_dtype(dtype, "nansum")
    _no_where(where, "nansum")
    a = stack_lists(a)
    return np.sum(np.where(np.isnan(primal(a)), 0.0, a), axis=axis, keepdims=_keep(keepdims))


@composition(np.nanmean, compiled=True)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *, where=np._NoValue):
    """mean of the entries that are not nan (derivative 0 at nan entries); nan where all are."""
    reject_options(dict(out=out), "nanmean")
    _float_dtype(dtype, "nanmean")
    _no_where(where, "nanmean")
    a = stack_lists(a)
    nan = np.isnan(primal(a))
    keep = _keep(keepdims)
    count = np.sum(~nan, axis=axis, dtype=np.intp, keepdims=keep)
    if np.any(count == 0):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(np.where(nan, 0.0, a), axis=axis, keepdims=keep) / count


def _nan_filled(a, fill):
    """(a with its nan entries replaced by the constant fill, where they were)."""
    nan = np.isnan(primal(a))
    return np.where(nan, fill, a), nan


def _all_nan_is_nan(result, nan, axis, keep, name):
    """NumPy's nan result (and warning) for a slice of nan entries only."""
    empty = np.all(nan, axis=axis, keepdims=keep)
    if not np.any(empty):
        return result
    warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
    return np.where(empty, np.nan, result)


def _nan_chooser(choose, fill, name):
    def reduce(a, axis=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
               where=np._NoValue):
        """max/min of the entries that are not nan (ties share the derivative, as np.max);
        nan, with NumPy's warning, where a slice holds nan only."""
        reject_options(dict(out=out, initial=initial), name)
        _no_where(where, name)
        filled, nan = _nan_filled(stack_lists(a), fill)
        keep = _keep(keepdims)
        return _all_nan_is_nan(choose(filled, axis=axis, keepdims=keep), nan, axis, keep, name)
    return reduce


composition(np.nanmax, compiled=True)(_nan_chooser(np.max, -np.inf, "nanmax"))
composition(np.nanmin, compiled=True)(_nan_chooser(np.min, np.inf, "nanmin"))


@composition(np.nanprod, compiled=True)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
            where=np._NoValue):
    """prod with nan entries taken as 1 (derivative 0 there)."""
    reject_options(dict(out=out, initial=initial), "nanprod")
    _float_dtype(dtype, "nanprod")
    _no_where(where, "nanprod")
    return np.prod(_nan_filled(stack_lists(a), 1.0)[0], axis=axis, keepdims=_keep(keepdims))


@composition(np.nancumsum, compiled=True)
def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum with nan entries taken as 0."""
    reject_options(dict(out=out), "nancumsum")
    _float_dtype(dtype, "nancumsum")
    return np.cumsum(_nan_filled(stack_lists(a), 0.0)[0], axis=axis)


@composition(np.nancumprod, compiled=True)
def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod with nan entries taken as 1."""
    reject_options(dict(out=out), "nancumprod")
    _float_dtype(dtype, "nancumprod")
    return np.cumprod(_nan_filled(stack_lists(a), 1.0)[0], axis=axis)


@composition(np.nanvar, compiled=True)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
           where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    """var of the entries that are not nan: Σ (a - nanmean)² / (count - ddof) over them."""
    reject_options(dict(out=out, mean=mean), "nanvar")
    _float_dtype(dtype, "nanvar")
    _no_where(where, "nanvar")
    if correction is not np._NoValue:
        ddof = correction
    a = stack_lists(a)
    filled, nan = _nan_filled(a, 0.0)
    keep = _keep(keepdims)
    count = np.sum(~nan, axis=axis, dtype=np.intp, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        centred = np.where(nan, 0.0, filled - np.sum(filled, axis=axis, keepdims=True) / count)
        result = np.sum(centred * centred, axis=axis, keepdims=keep) / np.maximum(
            np.sum(~nan, axis=axis, dtype=np.intp, keepdims=keep) - ddof, 0)
    return _all_nan_is_nan(result, nan, axis, keep, "nanvar")


@composition(np.nanstd, compiled=True)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
           where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    """sqrt(nanvar), as std: the constant 0 where a lane holds one entry that is not nan
    (derivative 0), derivative nan where the variance of several is 0."""
    a = stack_lists(a)
    result = np.sqrt(nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                            where=where, mean=mean, correction=correction))
    ddof = ddof if correction is np._NoValue else correction
    count = np.sum(~np.isnan(primal(a)), axis=axis, keepdims=_keep(keepdims))
    single = (count == 1) & (1 - ddof > 0)
    return np.where(single, 0.0, result) if np.any(single) else result


# ---- covariance ------------------------------------------------------------------------------
@composition(np.cov, compiled=True)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """NumPy's cov step by step: X - mean (weighted with fweights·aweights), X·Xᵀ / fact.
    fweights are integer counts (constants); aweights may carry derivatives."""
    _float_dtype(dtype, "cov")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m, y = stack_lists(m), stack_lists(y)
    if np.ndim(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None and np.ndim(y) > 2:
        raise ValueError("y has more than 2 dimensions")
    x = np.atleast_2d(m if is_layer(m) else np.asarray(m, dtype=np.float64))
    if not rowvar and np.ndim(m) != 1:
        x = np.transpose(x)
    if np.shape(x)[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        y = np.atleast_2d(y if is_layer(y) else np.asarray(y, dtype=np.float64))
        if not rowvar and np.shape(y)[0] != 1:
            y = np.transpose(y)
        x = np.concatenate((x, y), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    samples = np.shape(x)[1]

    w = None
    if fweights is not None:
        if is_layer(fweights):
            raise TypeError("numpy.cov: fweights are integer counts and cannot carry a "
                            "derivative; pass weights that vary smoothly as aweights")
        fweights = np.asarray(fweights, dtype=float)
        if not np.all(fweights == np.around(fweights)):
            raise TypeError("fweights must be integer")
        if fweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fweights.shape[0] != samples:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if np.any(fweights < 0):
            raise ValueError("fweights cannot be negative")
        w = fweights
    if aweights is not None:
        aweights = stack_lists(aweights)
        if not is_layer(aweights):
            aweights = np.asarray(aweights, dtype=float)
        if np.ndim(aweights) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if np.shape(aweights)[0] != samples:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if np.any(primal(aweights) < 0):
            raise ValueError("aweights cannot be negative")
        w = aweights if w is None else w * aweights

    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = samples - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        # NumPy sums w·aweights with Python's sum (left to right): the same sum here
        fact = w_sum - ddof * sum(w * aweights) / w_sum
    if primal(fact) <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        fact = 0.0
    x = x - avg[:, None]
    xt = np.transpose(x) if w is None else np.transpose(x * w)
    return np.squeeze(np.dot(x, xt) * np.true_divide(1, fact))


@composition(np.corrcoef, compiled=True)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """cov / (σᵢσⱼ), clipped to [-1, 1] as NumPy (np.clip: a bound reached gives derivative
    0.5 of the composed one, which is 0 there up to rounding, as ±1 is an extremum)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if np.ndim(c) != 2:
        return c / c  # a scalar covariance: nan if it is not finite and non-zero, 1 otherwise
    stddev = np.sqrt(np.diagonal(c))
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    return np.clip(c, -1, 1)


# ---- order statistics: median, quantile, percentile ------------------------------------------
def _order_weights(values, axes, positions):
    """Weights W (positions.shape + values.shape) with result = Σ_axes W · values for the
    order statistics at fractional `positions` (0 … n-1) of each lane along `axes`: position
    p takes 1 - (p - ⌊p⌋) of order statistic ⌊p⌋ and p - ⌊p⌋ of the next. An order
    statistic shared by tied entries shares its weight evenly among them (np.max's
    convention: the derivative at a tie is the mean of the tied entries'). A lane holding nan
    has nan weights, as its value is nan."""
    values = np.asarray(values, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    ndim, k = values.ndim, len(axes)
    moved = np.moveaxis(values, axes, tuple(range(ndim - k, ndim)))
    rest = moved.shape[:ndim - k]
    n = math.prod(moved.shape[ndim - k:])
    lanes = moved.reshape(rest + (n,))
    p = positions.reshape(-1)
    if n == 0:
        return np.zeros(positions.shape + values.shape)
    low = np.clip(np.floor(p), 0, n - 1).astype(np.intp)
    high = np.minimum(low + 1, n - 1)
    frac = np.clip(p - low, 0.0, 1.0)
    ordered = np.sort(lanes, axis=-1)

    def share(index):
        # (rest, P, n): 1/count on the entries equal to the order statistic `index`
        equal = lanes[..., None, :] == ordered[..., index][..., None]
        with np.errstate(invalid="ignore"):  # 0/0 in a lane with nan: nan weights below
            return equal / np.sum(equal, axis=-1, keepdims=True)

    weights = (1.0 - frac)[:, None] * share(low) + frac[:, None] * share(high)
    weights = np.where(np.isnan(lanes).any(axis=-1)[..., None, None], np.nan, weights)
    weights = np.moveaxis(weights, -2, 0).reshape((p.size,) + moved.shape)
    weights = np.moveaxis(weights, tuple(range(1 + ndim - k, 1 + ndim)),
                          tuple(1 + ax for ax in axes))
    return weights.reshape(positions.shape + values.shape)


def _order_statistic(a, axis, keepdims, weights, value):
    """The linear entry: a's derivative mapped by weights (q.shape + a.shape), reduced over
    the axes; the value NumPy's own."""
    shape = np.shape(a)
    axes = axes_of(axis, len(shape))
    lead = weights.ndim - len(shape)  # the axes of q
    summed = tuple(lead + ax for ax in axes)

    def apply(t, k=0):
        return np.sum(weights[(Ellipsis,) + (None,) * k] * t, axis=summed, keepdims=keepdims)

    def transpose(c):
        if not keepdims and axes:
            c = np.expand_dims(c, summed)
        return np.sum(weights * c, axis=tuple(range(lead)))

    return a, value, apply, transpose


def _constant_q(q, name):
    if is_layer(q):
        raise TypeError(f"numpy.{name}: a q that carries a derivative is not supported "
                        "(derivatives are taken with respect to the data); sort the data "
                        "with np.sort and interpolate between its entries instead")
    return np.asarray(q, dtype=np.float64)


def _quantile_like(func, name, a, q, axis, out, method, keepdims, weights, interpolation):
    reject_options(dict(out=out, weights=weights), name)
    if interpolation is not None:
        raise TypeError(f"numpy.{name}: `interpolation` is deprecated; use `method`")
    q = _constant_q(q, name)
    a = stack_lists(a)
    values = np.asarray(unwrapped(a))  # the weights' (a tracer counts every entry of a lane)
    axes = axes_of(axis, values.ndim)
    n = math.prod(values.shape[i] for i in axes)
    # each method's fractional position in the sorted lane, read off NumPy itself: its
    # quantile of 0, 1, …, n-1 (every method interpolates between two neighbours)
    positions = func(np.arange(n, dtype=np.float64), q, method=method) if n else q
    keep = keepdims is True
    return _order_statistic(
        a, axis, keep, _order_weights(values, axes, positions),
        lambda x: func(x, q, axis=axis, method=method, keepdims=keep))


@linear(np.quantile, compiled=True, note="ties share the derivative evenly; q constant")
def _quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
              keepdims=False, *, weights=None, interpolation=None):
    return _quantile_like(np.quantile, "quantile", a, q, axis, out, method, keepdims, weights,
                          interpolation)


@linear(np.percentile, compiled=True, note="ties share the derivative evenly; q constant")
def _percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    return _quantile_like(np.percentile, "percentile", a, q, axis, out, method, keepdims,
                          weights, interpolation)


@linear(np.median, compiled=True, note="ties share the derivative evenly")
def _median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    reject_options(dict(out=out), "median")
    a = stack_lists(a)
    values = np.asarray(unwrapped(a))  # the weights' (a tracer counts every entry of a lane)
    axes = axes_of(axis, values.ndim)
    n = math.prod(values.shape[i] for i in axes)
    keep = keepdims is True
    return _order_statistic(
        a, axis, keep, _order_weights(values, axes, (n - 1) / 2),
        lambda x: np.median(x, axis=axis, keepdims=keep))


# ---- sampling: linspace, gradient, interp ----------------------------------------------------
@composition(np.linspace, compiled=True)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """NumPy's linspace step by step on endpoints that may carry derivatives: entry i is
    start + i·step (the last one stop itself when endpoint); step = (stop - start)/div."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if dtype is not None and np.dtype(dtype).kind in "iub":
        # integer samples are piecewise constant in the endpoints: derivative 0
        return np.linspace(primal(start), primal(stop), num, endpoint, retstep, dtype, axis)
    _float_dtype(dtype, "linspace")
    start, stop = stack_lists(start), stack_lists(stop)
    start = start if is_layer(start) else np.asarray(start, dtype=np.float64)
    stop = stop if is_layer(stop) else np.asarray(stop, dtype=np.float64)
    div = (num - 1) if endpoint else num
    delta = stop - start
    y = np.arange(0, num, dtype=np.float64).reshape((-1,) + (1,) * np.ndim(delta))
    if div > 0:
        step = delta / div
        if np.any(primal(step) == 0):  # NumPy's care for denormal steps (gh-5437)
            y = (y / div) * delta
        else:
            y = y * step
    else:
        step = np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y = assign(y, (-1, Ellipsis), stop)
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    return (y, step) if retstep else y


def _spacings(f, varargs, axes):
    """Per axis: a scalar spacing or the 1-d differences of coordinates, as NumPy reads
    them. Constant coordinates with uniform differences become a scalar, as in NumPy;
    coordinates that carry derivatives keep their differences (each one's derivative
    matters), and `uniform` records where NumPy's value is then needed (flags per axis)."""
    if not varargs:
        return [1.0] * len(axes), [False] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return list(varargs) * len(axes), [False] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    out, uniform = [], []
    for ax, distances in zip(axes, varargs):
        distances = stack_lists(distances)
        if np.ndim(distances) == 0:
            out.append(distances), uniform.append(False)
            continue
        if np.ndim(distances) != 1:
            raise ValueError("distances must be either scalars or 1d")
        if np.shape(distances)[0] != np.shape(f)[ax]:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        if not is_layer(distances):
            distances = np.asarray(distances, dtype=np.float64)
        diffx = np.diff(distances)
        same = bool(np.all(primal(diffx) == primal(diffx)[0]))
        if same and not is_layer(diffx):
            out.append(diffx[0]), uniform.append(False)
        else:
            out.append(diffx), uniform.append(same)
    return out, uniform


@composition(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """NumPy's finite differences (second order inside; first or second order at the
    edges), linear in f with coefficients from the spacing, which may carry derivatives."""
    f = stack_lists(f)
    if not is_layer(f):
        f = np.asarray(f, dtype=np.float64)
    ndim = np.ndim(f)
    axes = tuple(range(ndim)) if axis is None else axes_of(axis, ndim)
    spacings, uniform = _spacings(f, varargs, axes)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    outs = []
    for ax, dx in zip(axes, spacings):
        if np.shape(f)[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        outs.append(_gradient_along(f, ax, dx, edge_order))
    if any(uniform):
        # NumPy took the uniform formula where coordinates with derivatives are evenly
        # spaced: its value there, the derivatives of the coordinates' formula
        plain = [np.asarray(primal(stack_lists(v))) for v in varargs]
        reference = np.gradient(primal(f), *plain, axis=axes, edge_order=edge_order)
        reference = reference if isinstance(reference, tuple) else (reference,)
        outs = [with_values(out, ref) if fix else out
                for out, ref, fix in zip(outs, reference, uniform)]
    return outs[0] if len(axes) == 1 else tuple(outs)


def _gradient_along(f, ax, dx, edge_order):
    def at(s):
        index = [slice(None)] * np.ndim(f)
        index[ax] = s
        return f[tuple(index)]

    def shaped(c):
        shape = [1] * np.ndim(f)
        shape[ax] = -1
        return np.reshape(c, shape)

    if np.ndim(dx) == 0:
        inner = (at(slice(2, None)) - at(slice(None, -2))) / (2. * dx)
    else:
        dx1, dx2 = dx[0:-1], dx[1:]
        a = shaped(-(dx2) / (dx1 * (dx1 + dx2)))
        b = shaped((dx2 - dx1) / (dx1 * dx2))
        c = shaped(dx1 / (dx2 * (dx1 + dx2)))
        inner = a * at(slice(None, -2)) + b * at(slice(1, -1)) + c * at(slice(2, None))
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / (dx if np.ndim(dx) == 0 else dx[0])
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / (dx if np.ndim(dx) == 0 else dx[-1])
    else:
        if np.ndim(dx) == 0:
            a, b, c = -1.5 / dx, 2. / dx, -0.5 / dx
        else:
            dx1, dx2 = dx[0], dx[1]
            a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = - dx1 / (dx2 * (dx1 + dx2))
        first = a * at(slice(0, 1)) + b * at(slice(1, 2)) + c * at(slice(2, 3))
        if np.ndim(dx) == 0:
            a, b, c = 0.5 / dx, -2. / dx, 1.5 / dx
        else:
            dx1, dx2 = dx[-2], dx[-1]
            a = (dx2) / (dx1 * (dx1 + dx2))
            b = - (dx2 + dx1) / (dx1 * dx2)
            c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * at(slice(-3, -2)) + b * at(slice(-2, -1)) + c * at(slice(-1, None))
    return np.concatenate([first, inner, last], axis=ax)


@composition(np.interp, compiled=True, note="at a sample point the derivative in x is the right one (the left "
                             "one at xp[-1])")
def interp(x, xp, fp, left=None, right=None, period=None):
    """NumPy's interpolation formula, slope·(x - xp[j]) + fp[j] on the segment [xp[j],
    xp[j+1]] holding x, on x, fp, left and right, which may carry derivatives (xp and period
    are constants). The segment of a sample point x = xp[j] is the one to its right, except
    for the last one, xp[-1], which takes the segment to its left (written from that end,
    slope·(x - xp[-1]) + fp[-1]): so the derivative in x at a sample point is the right
    derivative, at xp[-1] the left one (the derivative from inside the samples, as
    jax.numpy.interp), and the value NumPy's, fp[j]. Outside the samples the value is
    left/right (default fp[0]/fp[-1]), derivative 0 in x."""
    x, fp = stack_lists(x), stack_lists(fp)
    if is_layer(xp) or is_layer(period):
        raise TypeError("numpy.interp: derivatives with respect to the sample positions xp "
                        "(or the period) are not supported; only x, fp, left and right may "
                        "carry derivatives")
    xp = np.asarray(xp, dtype=np.float64)
    x = x if is_layer(x) else np.asarray(x, dtype=np.float64)
    fp = fp if is_layer(fp) else np.asarray(fp, dtype=np.float64)
    if np.ndim(xp) != 1 or np.ndim(fp) != 1:
        raise ValueError("Data points must be 1-D sequences")
    if np.shape(xp)[0] != np.shape(fp)[0]:
        raise ValueError("fp and xp are not of the same length.")
    if np.shape(xp)[0] == 0:
        raise ValueError("array of sample points is empty")
    reference = np.interp(primal(x), xp, primal(fp), primal(left), primal(right), period)
    if period is not None:
        # NumPy's periodic extension: samples sorted modulo the period, one more each side
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period, left, right = abs(period), None, None
        x = x % period
        xp = xp % period
        order = np.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = np.concatenate((xp[-1:] - period, xp, xp[0:1] + period))
        fp = np.concatenate((fp[-1:], fp, fp[0:1]))
    elif np.any(np.diff(xp) < 0):
        raise ValueError("numpy.interp of dual numbers needs increasing xp (NumPy does not "
                         "check it, and its values are meaningless otherwise)")
    xv = np.asarray(primal(x), dtype=np.float64)
    n = np.shape(xp)[0]
    if n == 1:
        inside = fp[np.zeros(xv.shape, dtype=np.intp)]  # x == xp[0]: fp[0]
    else:
        j = np.clip(np.searchsorted(xp, xv, side="right") - 1, 0, n - 2)
        h = xp[j + 1] - xp[j]
        fv = np.asarray(primal(fp))
        used = (xv >= xp[0]) & (xv <= xp[-1])
        if np.any(used & ((h == 0) | ~np.isfinite(fv[j]) | ~np.isfinite(fv[j + 1]))):
            raise ValueError("numpy.interp of dual numbers: some x lies on a segment whose "
                             "slope is not finite (fp is inf or nan there, or xp ends with a "
                             "repeated point: a jump), where no derivative exists")
        slope = (fp[j + 1] - fp[j]) / np.where(h == 0, 1.0, h)
        anchor = np.where(xv == xp[-1], j + 1, j)
        inside = slope * (x - xp[anchor]) + fp[anchor]
    out = np.where(xv < xp[0], fp[0] if left is None else left,
                   np.where(xv > xp[-1], fp[-1] if right is None else right, inside))
    if n > 1 and np.isnan(xv).any():  # one sample: NumPy gives fp[0] for a nan x too
        out = np.where(np.isnan(xv), x, out)
    # NumPy's value where its C compiler rounds the formula differently (a fused multiply-add)
    return with_values(out, reference)
