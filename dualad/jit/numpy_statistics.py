"""Statistics and sampling on 1-D arrays of compiled duals: mean, var, std, average, cumsum,
cumprod, diff, sort, median, quantile, percentile, np.linalg.norm of a vector, linspace
with dual endpoints, interp, and the nan-ignoring reductions (nansum, nanmean, nanvar, ...).

Each follows its Python entry (dualad/functions/statistics.py, reductions.py, linalg.py)
step by step on compiled scalars, with its conventions: ties share an order statistic's
derivative evenly; sort keeps each entry's derivative, tied entries in input order (a
stable sort, on both paths); the value of median, quantile, percentile and interp is
numba's NumPy value (the derivative the formula's). `axis` may be None, 0 or -1.
"""

import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .cache import overload, register_jitable
from .numpy_overloads import dualad_templates_first, is_none, primal, weighted, whole, with_value
from .protocol import as_dual_array
from .overloads import ARRAYS, DUALS, SCALARS, by_value, new_array
from .types import NUMBER, compiled_only, store_element, zero_element

# ---- moments -----------------------------------------------------------------------------------
@overload(np.mean)
def _mean(a, axis=None):
    if isinstance(a, ARRAYS):
        def mean(a, axis=None):
            whole(axis)
            return np.sum(a) / len(a)
        return mean
    return None


@register_jitable
def variance(a, ddof):
    """Σ (a - ā)² / (n - ddof), statistics.var's steps."""
    n = len(a)
    centre = np.sum(a) / n
    return np.sum(np.square(a - centre)) / max(n - ddof, 0)


_itself = register_jitable(lambda v: v)


def _spread(variance_of, root, entries=None):
    """np.var (root: itself) or np.std (np.sqrt: a nan derivative where the variance of
    several entries is 0, as on the Python path) from variance_of(a, ddof). With entries
    (the count of the sample): the constant 0 where it is one entry (statistics.std)."""
    def choose(a, axis=None, ddof=0):
        if not isinstance(a, ARRAYS):
            return None
        if entries is None:
            def spread(a, axis=None, ddof=0):
                whole(axis)
                return root(variance_of(a, ddof))
            return spread

        def spread_or_zero(a, axis=None, ddof=0):
            whole(axis)
            if entries(a) == 1 and 1 - ddof > 0:
                return zero_element(a)
            return root(variance_of(a, ddof))
        return spread_or_zero
    return choose


@overload(np.average)
def _average(a, axis=None, weights=None):
    """mean, or Σ a·w / Σ w (weights may carry derivatives)."""
    if not (isinstance(a, ARRAYS) or (isinstance(weights, ARRAYS) and isinstance(a, types.Array))):
        return None
    if is_none(weights):
        return lambda a, axis=None, weights=None: np.mean(a, axis)

    def weighted(a, axis=None, weights=None):
        whole(axis)
        if len(weights) != len(a):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        scale = np.sum(weights)
        if primal(scale) == 0.0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return np.sum(a * weights) / scale
    return weighted


# ---- running sums and products, differences ------------------------------------------------------
@overload(np.cumsum)
def _cumsum(a, axis=None):
    if isinstance(a, ARRAYS):
        def cumsum(a, axis=None):
            whole(axis)
            out = new_array(a, len(a))
            total = zero_element(a)
            for i in range(len(a)):
                total = total + a[i]
                store_element(out, i, total)
            return out
        return cumsum
    return None


@overload(np.cumprod)
def _cumprod(a, axis=None):
    """reductions.cumprod's prefix products by doubling (entries from `shift` on times the
    entry `shift` before them, log₂ n rounds), so that inf and 0 meet in the same order as
    on the Python path: exact with zeros; NumPy's values."""
    if isinstance(a, ARRAYS):
        def cumprod(a, axis=None):
            whole(axis)
            n = len(a)
            scan = as_dual_array(a)
            shift = 1
            while shift < n:
                step = new_array(a, n)
                for k in range(shift):
                    store_element(step, k, scan[k])
                for k in range(shift, n):
                    store_element(step, k, scan[k] * scan[k - shift])
                scan, shift = step, 2 * shift
            out = new_array(a, n)
            running = 1.0
            for i in range(n):
                running *= a.values[i]
                store_element(out, i, with_value(scan[i], running))
            return out
        return cumprod
    return None


@overload(np.diff)
def _diff(a, n=1, axis=-1):
    if isinstance(a, ARRAYS):
        def diff(a, n=1, axis=-1):
            whole(axis)
            if n < 0:
                raise ValueError("order must be non-negative but got a negative n")
            out = as_dual_array(a)
            for _ in range(n):
                m = max(len(out) - 1, 0)
                step = new_array(a, m)
                for i in range(m):
                    store_element(step, i, out[i + 1] - out[i])
                out = step
            return out
        return diff
    return None


# ---- order: sort, median, quantile, percentile ---------------------------------------------------
@register_jitable
def order(values):
    """Positions in sorted order; tied entries keep their input order (stable)."""
    return np.argsort(values, kind="mergesort")


@overload(np.sort)
def _sort(a, axis=-1):
    if isinstance(a, ARRAYS):
        def sort(a, axis=-1):
            whole(axis)
            positions = order(a.values)
            out = new_array(a, len(a))
            for i in range(len(a)):
                store_element(out, i, a[positions[i]])
            return out
        return sort
    return None


@overload(np.partition)
def _partition(a, kth):
    """numba's partition of the values, the entries placed as functions/structure.partition:
    the r-th smallest position (ties by position) takes the r-th smallest entry (ties by
    input order)."""
    if not isinstance(a, ARRAYS):
        return None

    def partition(a, kth):
        positions = order(np.partition(a.values, kth))
        entries = order(a.values)
        out = new_array(a, len(a))
        for r in range(len(a)):
            store_element(out, positions[r], a[entries[r]])
        return out
    return partition


@register_jitable
def order_statistic(a, p, value):
    """The order statistic at fractional position p (0 … n-1) of a, as
    statistics._order_weights: 1 - (p - ⌊p⌋) of order statistic ⌊p⌋ and p - ⌊p⌋ of the
    next, each shared evenly among the entries equal to it (every entry takes its weight,
    zero ones too, as the Python path's weighted sum); nan weights where a holds nan. The
    value is `value` (NumPy's)."""
    values = a.values
    n = len(values)
    total = zero_element(a)
    if n == 0:
        return total + value
    ordered = np.sort(values)
    low = min(max(int(np.floor(p)), 0), n - 1)
    high = min(low + 1, n - 1)
    frac = min(max(p - low, 0.0), 1.0)
    low_value, high_value = ordered[low], ordered[high]
    low_count, high_count, has_nan = 0, 0, False
    for i in range(n):
        low_count += values[i] == low_value
        high_count += values[i] == high_value
        has_nan = has_nan or np.isnan(values[i])
    for i in range(n):
        if has_nan:
            weight = np.nan
        else:
            weight = ((1.0 - frac) * (values[i] == low_value) / max(low_count, 1) +
                      frac * (values[i] == high_value) / max(high_count, 1))
        total = total + weighted(weight, a[i])
    return with_value(total, value)


@overload(np.median)
def _median(a, axis=None):
    if isinstance(a, ARRAYS):
        def median(a, axis=None):
            whole(axis)
            return order_statistic(a, (len(a) - 1) / 2, np.median(a.values))
        return median
    return None


def _quantile_like(fraction):
    """np.quantile or np.percentile (fraction(values, q): the function on floats) with
    method 'linear' (the only one numba has), q a constant number or 1-D array. Each
    position is that function of 0 … n-1, as on the Python path."""
    def choose(a, q, axis=None):
        if not isinstance(a, ARRAYS):
            return None
        if isinstance(q, DUALS):
            raise TypingError("np.quantile/np.percentile: a q that carries a derivative is not "
                              "supported (derivatives are taken with respect to the data)")
        if isinstance(q, NUMBER):
            def one(a, q, axis=None):
                whole(axis)
                ranks = np.arange(len(a)) * 1.0
                return order_statistic(a, fraction(ranks, q), fraction(a.values, q))
            return one
        if isinstance(q, types.Array) and q.ndim == 1:
            def each(a, q, axis=None):
                whole(axis)
                ranks = np.arange(len(a)) * 1.0
                out = new_array(a, len(q))
                for k in range(len(q)):
                    store_element(out, k, order_statistic(a, fraction(ranks, q[k]),
                                                          fraction(a.values, q[k])))
                return out
            return each
        raise TypingError(f"np.quantile/np.percentile of duals in compiled code take a number or a "
                          f"1-D array as q, not {q}")
    return choose


overload(np.quantile)(_quantile_like(register_jitable(lambda v, q: np.quantile(v, q))))
overload(np.percentile)(_quantile_like(register_jitable(lambda v, q: np.percentile(v, q))))


# ---- vector norms ----------------------------------------------------------------------------------
@overload(np.linalg.norm)
def _norm(x, ord=None):
    """linalg.norm on a vector: 2-norm sqrt(x·x) (nan derivative at 0, as JAX), 1 and ±inf
    (ties share), 0 (a count: derivative 0), any other p: (Σ|x|^p)^(1/p)."""
    if not isinstance(x, ARRAYS):
        return None
    if is_none(ord):
        return lambda x, ord=None: np.sqrt(np.dot(x, x))
    if not isinstance(ord, NUMBER):
        raise TypingError(f"np.linalg.norm of a vector of duals takes a number as ord, not {ord} "
                          "(arrays of duals are 1-D in compiled code)")

    def by_order(x, ord=None):
        if ord == 2:
            return np.sqrt(np.dot(x, x))
        if ord == np.inf:
            return np.max(np.abs(x))
        if ord == -np.inf:
            return np.min(np.abs(x))
        if ord == 0:
            return zero_element(x) + float(np.count_nonzero(x.values))
        if ord == 1:
            return np.sum(np.abs(x))
        return np.sum(np.abs(x) ** ord) ** np.reciprocal(float(ord))
    return by_order


# ---- sampling: linspace, interp ---------------------------------------------------------------------
@overload(np.linspace)
def _linspace(start, stop, num=50, endpoint=True):
    """statistics.linspace: entry i is start + i·step, the last one stop itself."""
    if not (any(by_value(t) for t in (start, stop)) and
            all(by_value(t) or isinstance(t, NUMBER) for t in (start, stop))):
        return None
    like_stop = isinstance(stop, SCALARS)

    def linspace(start, stop, num=50, endpoint=True):
        if num < 0:
            raise ValueError("Number of samples must be non-negative.")
        div = (num - 1) if endpoint else num
        delta = stop - start
        out = new_array(stop if like_stop else start, num)
        step = delta / div if div > 0 else delta
        tiny = div > 0 and primal(step) == 0
        for i in range(num):
            if div > 0 and tiny:
                out[i] = (i / div) * delta + start
            elif div > 0:
                out[i] = i * step + start
            else:
                out[i] = i * delta + start
        if endpoint and num > 1:
            out[num - 1] = stop
        return out
    return linspace


@register_jitable
def increasing(xp, fp):
    if len(xp) != len(fp):
        raise ValueError("fp and xp are not of the same length.")
    if len(xp) == 0:
        raise ValueError("array of sample points is empty")
    for j in range(len(xp) - 1):
        if xp[j + 1] < xp[j]:
            raise ValueError("numpy.interp of dual numbers needs increasing xp (NumPy does not "
                             "check it, and its values are meaningless otherwise)")


or_default = compiled_only("numpy_statistics", "or_default")  # (given, default): default when given is None


@overload(or_default)
def _or_default(given, default):
    return (lambda given, default: default) if is_none(given) else (lambda given, default: given)


@register_jitable
def interp_one(x, xp, fp, fp_values, left, right):
    """statistics.interp at one point: slope·(x - xp[j]) + fp[j] on the segment holding x
    (the one to the right of a sample point, the left one at xp[-1]); left/right (default
    fp[0]/fp[-1]) outside, x itself where x is nan (fp[0] for one sample, as NumPy). The
    value numba's np.interp."""
    xv = primal(x)
    n = len(xp)
    if xv < xp[0]:
        return or_default(left, fp[0])
    if xv > xp[n - 1]:
        return or_default(right, fp[n - 1])
    if n == 1:
        return fp[0]  # NumPy's, a nan x included
    if np.isnan(xv):
        return x
    j = min(max(np.searchsorted(xp, xv, side="right") - 1, 0), n - 2)
    h = xp[j + 1] - xp[j]
    if h == 0 or not (np.isfinite(fp_values[j]) and np.isfinite(fp_values[j + 1])):
        raise ValueError("numpy.interp of dual numbers: some x lies on a segment whose slope is "
                         "not finite (fp is inf or nan there, or xp ends with a repeated point: "
                         "a jump), where no derivative exists")
    slope = (fp[j + 1] - fp[j]) / h
    anchor = j + 1 if xv == xp[n - 1] else j
    return with_value(slope * (x - xp[anchor]) + fp[anchor], np.interp(xv, xp, fp_values))


@overload(np.interp)
def _interp(x, xp, fp, left=None, right=None):
    """With respect to x, fp, left and right (xp constant, increasing; no period)."""
    if not any(isinstance(t, DUALS) for t in (x, fp, left, right)):
        return None
    if isinstance(xp, DUALS):
        raise TypingError("numpy.interp: derivatives with respect to the sample positions xp are "
                          "not supported; only x, fp, left and right may carry derivatives")
    if not (isinstance(xp, types.Array) and xp.ndim == 1):
        raise TypingError(f"numpy.interp in compiled code takes a 1-D float array as xp, not {xp}")
    if isinstance(x, SCALARS + NUMBER):
        def one(x, xp, fp, left=None, right=None):
            increasing(xp, fp)
            return interp_one(x, xp, fp, primal(fp), left, right)
        return one
    if not (isinstance(x, ARRAYS) or isinstance(fp, ARRAYS)):
        raise TypingError("numpy.interp of an array x in compiled code: x or fp must be an array "
                          "of duals")
    like_x = isinstance(x, ARRAYS)

    def each(x, xp, fp, left=None, right=None):
        increasing(xp, fp)
        fp_values = primal(fp)
        out = new_array(x if like_x else fp, len(x))
        for i in range(len(x)):
            out[i] = interp_one(x[i], xp, fp, fp_values, left, right)
        return out
    return each


# ---- nan-ignoring reductions: the entries that are not nan (statistics.nan*) ---------------------
@register_jitable
def nan_filled(a, fill):
    """a with its nan entries replaced by the constant fill (derivative 0 there)."""
    out = new_array(a, len(a))
    for i in range(len(a)):
        if np.isnan(a.values[i]):
            out[i] = fill
        else:
            store_element(out, i, a[i])
    return out


@register_jitable
def count_numbers(a):
    count = 0
    for i in range(len(a)):
        count += not np.isnan(a.values[i])
    return count


def _nan_reduction(func, fill):
    """func of a with nan entries taken as fill (nansum, nanprod, nancumsum, nancumprod)."""
    def choose(a, axis=None):
        if isinstance(a, ARRAYS):
            def reduce(a, axis=None):
                whole(axis)
                return func(nan_filled(a, fill))
            return reduce
        return None
    return choose


for _func, _on, _fill in ((np.nansum, np.sum, 0.0), (np.nanprod, np.prod, 1.0),
                          (np.nancumsum, np.cumsum, 0.0), (np.nancumprod, np.cumprod, 1.0)):
    overload(_func)(_nan_reduction(_on, _fill))


def _nan_extreme(func, fill):
    """nanmax/nanmin: func of the entries that are not nan (ties share); a constant nan where
    every entry is nan."""
    def choose(a, axis=None):
        if isinstance(a, ARRAYS):
            def extreme(a, axis=None):
                whole(axis)
                if count_numbers(a) == 0:
                    return zero_element(a) + np.nan
                return func(nan_filled(a, fill))
            return extreme
        return None
    return choose


overload(np.nanmax)(_nan_extreme(np.max, -np.inf))
overload(np.nanmin)(_nan_extreme(np.min, np.inf))


@overload(np.nanmean)
def _nanmean(a, axis=None):
    if isinstance(a, ARRAYS):
        def nanmean(a, axis=None):
            whole(axis)
            return np.sum(nan_filled(a, 0.0)) / count_numbers(a)
        return nanmean
    return None


@register_jitable
def nan_variance(a, ddof):
    """statistics.nanvar: Σ (a - nanmean)² / (count - ddof) over the entries that are not
    nan; a constant nan where every entry is nan."""
    count = count_numbers(a)
    if count == 0:
        return zero_element(a) + np.nan
    filled = nan_filled(a, 0.0)
    centre = np.sum(filled) / count
    total = zero_element(a)
    for i in range(len(a)):
        if not np.isnan(a.values[i]):
            centred = filled[i] - centre
            total = total + centred * centred
    return total / max(count - ddof, 0)


for _func, _variance_of, _root, _entries in ((np.var, variance, _itself, None),
                                             (np.std, variance, np.sqrt, len),
                                             (np.nanvar, nan_variance, _itself, None),
                                             (np.nanstd, nan_variance, np.sqrt, count_numbers)):
    overload(_func)(_spread(_variance_of, _root, _entries))


# numba's own templates of these functions, tried first, would call np.asarray on a scalar dual
# (np.interp) and stop at its `cannot` error before reaching ours
dualad_templates_first((np.mean, np.var, np.std, np.average, np.cumsum, np.cumprod, np.diff,
                        np.sort, np.partition, np.median, np.quantile, np.percentile, np.linalg.norm,
                        np.linspace, np.interp, np.nansum, np.nanprod, np.nancumsum,
                        np.nancumprod, np.nanmax, np.nanmin, np.nanmean, np.nanvar, np.nanstd))
