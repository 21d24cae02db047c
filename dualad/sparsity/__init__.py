"""Sparse Jacobians and Hessians: detect the pattern, colour it, compute in a few passes.

    detect.py      jacobian_sparsity, hessian_sparsity: one run of f on tracers
    tracer.py      the tracer layer (index sets per entry) built from the rule table and registry
    sets.py        the index sets, stored once and named by ids
    coloring.py    column / row (distance-2) and star colourings, greedy
    compressed.py  compressed evaluation: colour-seeded Dual passes, reverse sweeps, hvps
"""

from .detect import hessian_sparsity, jacobian_sparsity

__all__ = ["jacobian_sparsity", "hessian_sparsity"]
