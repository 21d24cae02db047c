"""A colouring in compiled code, for the Hessian that detects its pattern on every call
(sparse.detecting_hessian): no Python between the pattern pass and the compressed passes.

    distance2_colors(indptr, indices, n, limit) -> (colours (n,), count), count -1 where
                                        more than `limit` colours would be needed

Greedy distance-2 colouring of the symmetric pattern's graph in input order: two inputs
that share a row (H[i, j] and H[i, k] structurally nonzero) or are neighbours get different
colours, so every nonzero H[i, j] is entry (i, colour j) of H·S, read off directly (direct
recovery). dualad.sparsity.coloring's star colouring needs fewer colours on some patterns
(an arrowhead: 2 to distance-2's n) but is made in Python, once per plan.
"""

import numpy as np

from .cache import register_jitable

__all__ = ["distance2_colors"]


@register_jitable
def distance2_colors(indptr, indices, n, limit):
    """(colours, count) of a greedy distance-2 colouring of the symmetric CSR pattern
    (indptr, indices) of n vertices; count -1 as soon as a vertex would need colour `limit`
    (the caller then has no use for the colouring)."""
    colors = np.full(n, -1, np.int64)
    forbidden = np.full(max(limit, 1), -1, np.int64)  # colour -> the last vertex it is forbidden to
    count = 0
    for v in range(n):
        for p in range(indptr[v], indptr[v + 1]):
            w = indices[p]
            if colors[w] >= 0:
                forbidden[colors[w]] = v
            for q in range(indptr[w], indptr[w + 1]):
                u = indices[q]
                if colors[u] >= 0:
                    forbidden[colors[u]] = v
        c = 0
        while c < limit and forbidden[c] == v:
            c += 1
        if c >= limit:
            return colors, -1
        colors[v] = c
        count = max(count, c + 1)
    return colors, count
