"""Sparse Jacobians and Hessians of numba functions: plans made here, passes run by compiled kernels.

The kernels are dualad.jit.sparse's (transforms.py makes them through dispatch.py and
passes them in; this layer never imports the compiled path):

    kernel("jacobian pattern")(*args)   -> (indptr, indices, n_in)  detection on tracers
    kernel("forward" | "reverse")(*args, *plan) -> the nonzeros in the plan's CSR order
    kernel("hessian pattern")(*args)    -> (indptr, indices, n_in)
    kernel("hessian")(*args, colours, seeds, sources) -> H's nonzeros in the plan's CSR order,
                                        forward-over-reverse per chunk of star colours

A Plan (compressed.py: pattern, colourings) is made once per input structure and shapes,
with the kernels' plan arrays: (indptr, indices, colours, seeds) for Jacobians, (colours,
seeds, sources) for Hessians, seeds ones. The wrapper builds the csr_array. check=True runs
the kernel once more on a one-colour plan whose seeds are a random direction v (J·v or H·v,
one entry per row) and compares.
"""

from __future__ import annotations

import numpy as np

from ..arguments import Inputs
from .compressed import (SparseJacobian, _colour_matrix, _dual_passes, _gradient_function,
                         _gradient_leaves, _shape_error, _Sparse)
from .detect import boolean_csr, hessian_pattern, jacobian_pattern

__all__ = ["CompiledSparseJacobian", "CompiledSparseHessian", "pattern_from", "python_kernel"]


def pattern_from(found):
    """The boolean csr_array of a detection kernel's (indptr, indices, n_in)."""
    indptr, indices, n_in = found
    return boolean_csr(indptr, indices, (len(indptr) - 1, int(n_in)))


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

    if which == "hessian":
        def hessian_values(*rest):
            args, (colors, seeds, sources) = rest[:-3], rest[-3:]
            gradient = _gradient_function(twin, argnums)
            inputs = Inputs(gradient, args, argnums)
            directions = _colour_matrix(colors) * np.asarray(seeds)[:, None]
            compressed, _ = _dual_passes(gradient, inputs, directions, "Hessian",
                                         _gradient_leaves(gradient))
            return compressed.reshape(-1)[sources]
        return hessian_values

    def values(*rest):
        args, (indptr, indices, _, _) = rest[:-4], rest[-4:]
        given = pattern_from((indptr, indices, Inputs(twin, args, argnums).n))
        jac = SparseJacobian(given, which, None, False)(twin, args, argnums)
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        return np.asarray(jac[rows, indices], dtype=np.float64).reshape(-1)
    return values


class _CompiledSparse(_Sparse):
    """What compiled sparse Jacobians and Hessians share: kernel(which) gives the compiled
    kernels; a plan's arrays are made once (plan_arrays, kept on the plan), the csr_array
    here, and a check runs a kernel on a random direction v (direction). The compiled tracers
    do not note which values f reads, so a detected plan counts as depending on them: it is
    checked at each new point (compressed._Sparse)."""

    detector = None  # the name of the pattern kernel

    def __init__(self, sparsity, check, kernel):
        super().__init__(sparsity, check)
        self.kernel = kernel

    def detect(self, f, args, argnums):
        return pattern_from(self.kernel(self.detector)(*args)), True

    def prepared(self, f, args, argnums):
        """(kernel, plan arrays, Plan) for these arguments."""
        plan = self.plan(f, args, argnums)
        return self._compiled(plan, f, args, argnums) + (plan,)

    def _compiled(self, plan, f, args, argnums):
        """(kernel, its plan arrays), made once per plan and checked against f's arguments."""
        if getattr(plan, "compiled", None) is None:
            which, arrays = self.plan_arrays(plan, f, args, argnums)
            plan.compiled = (self.kernel(which, plan.shape[1]), arrays)
        return plan.compiled

    def evaluate(self, f, args, argnums, plan):
        import scipy.sparse  # noqa: PLC0415 - lazy: import dualad stays fast
        kernel, arrays = self._compiled(plan, f, args, argnums)
        values = kernel(*args, *arrays)
        # the index arrays copied (astype): scipy changes them in place (eliminate_zeros, ...)
        return scipy.sparse.csr_array((values, plan.pattern.indices.astype(np.int64),
                                       plan.pattern.indptr.astype(np.int64)),
                                      shape=plan.shape, copy=False)

    def directional(self, f, args, argnums, plan, v):
        which, direction = self.direction(plan, v)
        return self.kernel(which, plan.shape[1])(*args, *direction)


class CompiledSparseJacobian(_CompiledSparse):
    """Compressed Jacobians of a numba function f (mode forward, reverse or auto);
    output_size(args) gives the entries of f's output."""

    what = "Jacobian"
    symmetric = False
    detector = "jacobian pattern"

    def __init__(self, sparsity, mode, chunk, check, kernel, output_size):
        super().__init__(sparsity, check, kernel)
        self.mode = "forward" if mode == "auto" and chunk is not None else mode  # as SparseJacobian
        self.output_size = output_size

    def plan_arrays(self, plan, f, args, argnums):
        """(kernel, its plan arrays: indptr, indices, colours, seeds), the pattern checked."""
        n_in = Inputs(f, args, argnums).n
        if n_in != plan.shape[1]:
            raise _shape_error("Jacobian", f, plan.shape, None, n_in)
        if self.given is not None:
            n_out = self.output_size(args)
            if n_out != plan.shape[0]:
                raise _shape_error("Jacobian", f, plan.shape, n_out, n_in)
        mode = plan.mode(self.mode)
        colors = plan.colors("columns" if mode == "forward" else "rows").astype(np.int64)
        return mode, (np.asarray(plan.pattern.indptr, np.int64), np.asarray(plan.pattern.indices, np.int64),
                      colors, np.ones(len(colors)))  # int64 always: one compiled signature

    def direction(self, plan, v):
        """J·v by the forward kernel: one colour, seeds v, one entry per row."""
        m, n = plan.shape
        return "forward", (np.arange(m + 1, dtype=np.int64), np.zeros(m, dtype=np.int64),
                           np.zeros(n, dtype=np.int64), v)


class CompiledSparseHessian(_CompiledSparse):
    """Compressed Hessians of a numba function f: the star-coloured forward-over-reverse
    passes run in kernel("hessian")."""

    what = "Hessian"
    symmetric = True
    detector = "hessian pattern"

    def plan_arrays(self, plan, f, args, argnums):
        """(kernel, its plan arrays: star colours, seeds, sources), the pattern checked."""
        n_in = Inputs(f, args, argnums).n
        if plan.shape != (n_in, n_in):
            raise _shape_error("Hessian", f, plan.shape, n_in, n_in)
        colors = plan.colors("star").astype(np.int64)  # int64 always: one compiled signature
        return "hessian", (colors, np.ones(len(colors)), np.asarray(plan.sources("star"), np.int64))

    def direction(self, plan, v):
        """H·v by the same kernel: one colour, seeds v, each row's entry its own source."""
        n = plan.shape[1]
        return "hessian", (np.zeros(n, dtype=np.int64), v, np.arange(n, dtype=np.int64))
