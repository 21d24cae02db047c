"""Sparse Jacobians of numba functions: plans made here, passes run by compiled kernels.

The kernels are dualad.jit.sparse's (transforms.py makes them through dispatch.py and
passes them in; this layer never imports the compiled path):

    kernel("jacobian pattern")(*args)   -> (indptr, indices, n_in)  detection on tracers
    kernel("forward" | "reverse")(*args, *plan) -> the nonzeros in the plan's CSR order

A Plan (compressed.py: pattern, colourings) is made once per input structure and shapes,
with the kernels' plan arrays: (indptr, indices, colours, seeds), seeds ones. The wrapper
builds the csr_array. check=True runs the forward kernel once more on a one-colour plan
whose seeds are a random direction v (J·v, one entry per row) and compares.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from ..arguments import Inputs, shape_key
from .compressed import _RANDOM, SparseJacobian, _Sparse, _shape_error
from .detect import hessian_pattern, jacobian_pattern

__all__ = ["CompiledSparseJacobian", "pattern_from", "python_kernel"]


def pattern_from(found):
    """The boolean csr_array of a detection kernel's (indptr, indices, n_in)."""
    indptr, indices, n_in = found
    return scipy.sparse.csr_array((np.ones(len(indices), dtype=bool), indices, indptr),
                                  shape=(len(indptr) - 1, int(n_in)))


def python_kernel(twin, argnums, which):
    """What kernel(which) computes, on the Python path (twin: f's pure-Python twin): the
    meaning of the compiled kernel where user code runs on the Python path, and what its
    compile errors try."""
    if which in ("jacobian pattern", "hessian pattern"):
        detect = jacobian_pattern if which == "jacobian pattern" else hessian_pattern

        def pattern(*args):
            found = detect(twin, args, argnums)
            return found.indptr.astype(np.int64), found.indices.astype(np.int64), found.shape[1]
        return pattern

    def values(*rest):
        args, (indptr, indices, _, _) = rest[:-4], rest[-4:]
        n_in = Inputs(twin, args, argnums).n
        given = scipy.sparse.csr_array((np.ones(len(indices), dtype=bool), indices, indptr),
                                       shape=(len(indptr) - 1, n_in))
        jac = SparseJacobian(given, which, None, False)(twin, args, argnums)
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        return np.asarray(jac[rows, indices], dtype=np.float64).reshape(-1)
    return values


class CompiledSparseJacobian(_Sparse):
    """Compressed Jacobians of a numba function f (mode forward, reverse or auto);
    kernel(which) gives the compiled kernels, output_size(args) the entries of f's output."""

    what = "Jacobian"
    symmetric = False

    def __init__(self, sparsity, mode, chunk, check, kernel, output_size):
        super().__init__(sparsity, check)
        self.mode = "forward" if mode == "auto" and chunk is not None else mode  # as SparseJacobian
        self.kernel, self.output_size = kernel, output_size
        self.arrays = {}

    def detect(self, f, args, argnums):
        return pattern_from(self.kernel("jacobian pattern")(*args))

    def prepared(self, f, args, argnums):
        """(kernel, plan arrays, Plan) for these arguments: checked and made once per shapes."""
        key = shape_key(args)
        found = self.arrays.get(key)
        if found is None:
            plan = self.plan(f, args, argnums)
            n_in = Inputs(f, args, argnums).n
            if n_in != plan.shape[1]:
                raise _shape_error("Jacobian", f, plan.shape, None, n_in)
            if self.given is not None:
                n_out = self.output_size(args)
                if n_out != plan.shape[0]:
                    raise _shape_error("Jacobian", f, plan.shape, n_out, n_in)
            mode = plan.mode(self.mode)
            colors = plan.colors("columns" if mode == "forward" else "rows").astype(np.int64)
            arrays = (np.asarray(plan.pattern.indptr, np.int64), np.asarray(plan.pattern.indices, np.int64),
                      colors, np.ones(len(colors)))  # int64 always: one compiled signature
            found = self.arrays[key] = (self.kernel(mode), arrays, plan)
        return found

    def __call__(self, f, args, argnums):
        kernel, arrays, plan = self.prepared(f, args, argnums)
        values = kernel(*args, *arrays)
        # the index arrays copied: scipy changes them in place (eliminate_zeros, ...)
        result = scipy.sparse.csr_array((values, arrays[1].copy(), arrays[0].copy()),
                                        shape=plan.shape, copy=False)
        if self.check:
            m, n = plan.shape
            v = _RANDOM.standard_normal(n)
            direction = (np.arange(m + 1, dtype=np.int64), np.zeros(m, dtype=np.int64),
                         np.zeros(n, dtype=np.int64), v)
            self._verify(f, result, self.kernel("forward")(*args, *direction), v, plan)
        return result
