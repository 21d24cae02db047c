"""Sparsity patterns by one run of f on tracers (tracer.py).

    jacobian_sparsity(f, argnums=0)(*args) -> boolean csr_array (M, N)
    hessian_sparsity(f, argnums=0)(*args)  -> boolean csr_array (N, N), symmetric

N counts the entries of the differentiated arguments (every float leaf of args[argnums],
raveled and concatenated in order, as the Jacobian's columns); M the entries of f's output
leaves, likewise. The pattern is the one at these arguments: f's branches (if, while,
comparisons, where, sort, indexing by argmax) are taken at x.
"""

from __future__ import annotations

import functools

import numpy as np

from ..allocation import OnDemand
from ..arguments import Inputs, name_of, read_output
from ..forward import check_scalar
from ..number import from_objects, scoped_tag
from ..tree import flatten
from ..twin import python_twin
from .tracer import Context, SparsityTracer

__all__ = ["jacobian_sparsity", "hessian_sparsity", "jacobian_pattern", "hessian_pattern",
           "traced_jacobian_pattern", "traced_hessian_pattern"]


def _trace(f, args, argnums, hessian):
    """f run once on tracers: (inputs, [(value, g ids, h ids) per output leaf], context)."""
    inputs = Inputs(f, args, argnums)
    with scoped_tag() as tag:
        ctx = Context(tag, inputs.n, hessian)
        singletons = ctx.g.singletons(inputs.n)

        def make(j, x):
            o, size, shape = inputs.offsets[j], inputs.sizes[j], inputs.shapes[j]
            return SparsityTracer(x, singletons[o:o + size].reshape(shape),
                                  np.zeros(shape, dtype=np.int64) if hessian else None, ctx)

        out = inputs.call(make)
        leaves, _ = flatten(out)
        read = []
        for leaf in leaves:
            if leaf is None:
                continue
            leaf = from_objects(leaf)  # np.array([...]) of tracers
            if isinstance(leaf, SparsityTracer) and leaf.ctx is ctx:
                read.append((leaf.value, leaf.g, leaf.h))
            else:  # a constant output (checked as the transforms check outputs)
                read.append((read_output(leaf, tag, f)[0], None, None))
    return inputs, read, ctx


def boolean_csr(indptr, indices, shape):
    """The boolean csr_array with these rows (a pattern)."""
    import scipy.sparse  # noqa: PLC0415 - lazy: import dualad stays fast
    return scipy.sparse.csr_array((np.ones(len(indices), dtype=bool), indices, indptr), shape=shape)


def jacobian_pattern(f, args, argnums):
    """The boolean (M, N) Jacobian pattern of f at args (one traced run)."""
    return traced_jacobian_pattern(f, args, argnums)[0]


def traced_jacobian_pattern(f, args, argnums):
    """(the Jacobian pattern of f at args, whether f read its tracers' values: a pattern that
    may hold at these values only)."""
    inputs, read, ctx = _trace(f, args, argnums, hessian=False)
    ids = [np.zeros(np.size(v), dtype=np.int64) if g is None else np.reshape(g, -1)
           for v, g, _ in read]
    flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    indptr, keys = ctx.g.rows(flat)
    return boolean_csr(indptr, keys, (len(flat), inputs.n)), ctx.read_values


def hessian_pattern(f, args, argnums):
    """The boolean, symmetric (N, N) Hessian pattern of scalar f at args (one traced run)."""
    return traced_hessian_pattern(f, args, argnums)[0]


def traced_hessian_pattern(f, args, argnums):
    """(the Hessian pattern of scalar f at args, whether f read its tracers' values)."""
    inputs, read, ctx = _trace(f, args, argnums, hessian=True)
    if len(read) != 1:
        raise TypeError(f"hessian_sparsity needs {name_of(f)} to return a scalar; it returned "
                        f"{len(read)} arrays")
    value, _, h = read[0]
    check_scalar(value, f, "hessian_sparsity")
    n = inputs.n
    keys = np.zeros(0, dtype=np.int64) if h is None else ctx.h.rows(np.reshape(h, -1))[1]
    i, j = np.divmod(keys, max(n, 1))
    both = np.unique(np.concatenate([i * n + j, j * n + i]))
    rows, cols = np.divmod(both, max(n, 1))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return boolean_csr(indptr, cols, (n, n)), ctx.read_values


def _pattern_function(f, argnums, pattern, what):
    twin = OnDemand(python_twin(f))

    @functools.wraps(twin.f)
    def pattern_fn(*args, **kwargs):
        return twin.run(lambda g: pattern(functools.partial(g, **kwargs) if kwargs else g,
                                          args, argnums))

    pattern_fn.__doc__ = f"The {what} sparsity pattern of {name_of(f)} at the given arguments."
    return pattern_fn


def jacobian_sparsity(f, argnums=0):
    """The Jacobian's sparsity pattern, by one run of f on tracers: a boolean
    scipy.sparse.csr_array of shape (M, N), True where ∂f_i/∂x_j may be nonzero.

    Columns: the entries of args[argnums] (every float leaf, raveled and concatenated);
    rows: the entries of f's output leaves, likewise. A partial that the rule table marks
    None is no dependence. The pattern is the one at these arguments: f's branches are taken
    at x (if/while, comparisons, where, sort). Where f branches on x, take the union over
    several points (P1 + P2) or give your own pattern to the transforms (sparsity=P). Some
    operations count as dependence whatever the values: maximum/minimum/abs/max/min/clip
    and order statistics on all their candidates, linear algebra (det, inv, solve, eigh, ...)
    on every entry of its operands, and a partial that is zero at x (x * 0.0) on its operand.
    An unsupported NumPy function raises a TypeError that names it."""
    return _pattern_function(f, argnums, jacobian_pattern, "Jacobian")


def hessian_sparsity(f, argnums=0):
    """The Hessian's sparsity pattern of scalar f, by one run of f on tracers carrying
    first-order sets and interacting pairs (SparseConnectivityTracer's propagation): a
    boolean, symmetric scipy.sparse.csr_array (N, N), True where ∂²f/∂x_i∂x_j may be
    nonzero. A second partial that the rule table marks None is no interaction (x + y, x·y
    has no x² term). The pattern is the one at these arguments (f's branches taken at x);
    see jacobian_sparsity for what counts conservatively."""
    return _pattern_function(f, argnums, hessian_pattern, "Hessian")
