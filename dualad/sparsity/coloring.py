"""Greedy colourings of sparsity patterns (Gebremedhin, Manne and Pothen, "What color is
your Jacobian?", SIAM Review 2005; SparseMatrixColorings.jl).

    column_coloring(P) -> colours (N,)  columns of one colour share no row: J·S, S the colour
                                        indicator matrix, holds every entry of J once
                                        (distance-2 colouring of the columns in the
                                        bipartite row/column graph): forward mode
    row_coloring(P)    -> colours (M,)  rows of one colour share no column: Sᵀ·J, reverse mode
    star_coloring(P)   -> colours (N,)  symmetric P: a distance-1 colouring in which every
                                        path on 4 vertices uses at least 3 colours, so every
                                        nonzero of H is read off H·S directly (GTMP 2007,
                                        Algorithm 4.1)

Each is greedy (a vertex takes the smallest colour its constraints allow), run in two
vertex orders, largest-first and smallest-last degree; the one with fewer colours is kept.
Colours are 0 … n_colors - 1; a column (row) with no nonzero gets colour 0.
"""

from __future__ import annotations


import numpy as np

__all__ = ["column_coloring", "row_coloring", "star_coloring", "n_colors",
           "is_column_coloring", "is_star_coloring"]


def n_colors(colors):
    return int(colors.max()) + 1 if len(colors) else 0


def _boolean(pattern):
    import scipy.sparse  # noqa: PLC0415 - lazy: import dualad stays fast
    p = scipy.sparse.csr_array(pattern)
    p = scipy.sparse.csr_array((np.ones(p.nnz, dtype=np.int32), p.indices, p.indptr), shape=p.shape)
    p.sum_duplicates()
    return p


def _graph(adjacency):
    """(neighbour lists) of a symmetric sparse adjacency matrix, without self loops."""
    import scipy.sparse  # noqa: PLC0415 - lazy: import dualad stays fast
    a = scipy.sparse.coo_array(adjacency)
    off = a.row != a.col
    a = scipy.sparse.csr_array((np.ones(int(off.sum()), dtype=np.int8), (a.row[off], a.col[off])),
                               shape=a.shape)
    a.sum_duplicates()
    a.sort_indices()
    indptr, indices = a.indptr.tolist(), a.indices.tolist()
    return [indices[indptr[v]:indptr[v + 1]] for v in range(a.shape[0])]


def _largest_first(neighbours):
    degree = np.array([len(w) for w in neighbours])
    return np.argsort(-degree, kind="stable").tolist()


def _smallest_last(neighbours):
    """Repeatedly remove a vertex of least remaining degree (Matula and Beck's buckets);
    colour in reverse removal order."""
    degree = [len(w) for w in neighbours]
    buckets = [set() for _ in range(max(degree, default=0) + 1)]
    for v, d in enumerate(degree):
        buckets[d].add(v)
    removed = [False] * len(neighbours)
    order, d = [], 0
    for _ in range(len(neighbours)):
        d = max(d - 1, 0)  # one removal lowers the least degree by at most one
        while not buckets[d]:
            d += 1
        v = buckets[d].pop()
        removed[v] = True
        order.append(v)
        for w in neighbours[v]:
            if not removed[w]:
                buckets[degree[w]].discard(w)
                degree[w] -= 1
                buckets[degree[w]].add(w)
    return order[::-1]


def _greedy(neighbours, order):
    """Distance-1 greedy colouring of a graph given by neighbour lists."""
    color = [-1] * len(neighbours)
    forbidden = [-1] * (len(neighbours) + 1)
    for v in order:
        for w in neighbours[v]:
            c = color[w]
            if c >= 0:
                forbidden[c] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        color[v] = c
    return np.array(color, dtype=np.int64)


def _best(colorings):
    return min(colorings, key=n_colors)


def column_coloring(pattern):
    """Colours of the columns of an (M, N) pattern such that two columns sharing a row
    differ: greedy on the column intersection graph PᵀP."""
    p = _boolean(pattern)
    if p.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    neighbours = _graph(p.T @ p)
    return _best([_greedy(neighbours, order) for order in
                  (_largest_first(neighbours), _smallest_last(neighbours))])


def row_coloring(pattern):
    """Colours of the rows of an (M, N) pattern such that two rows sharing a column differ."""
    import scipy.sparse  # noqa: PLC0415 - lazy: import dualad stays fast
    return column_coloring(scipy.sparse.csr_array(pattern).T)


def is_column_coloring(pattern, colors):
    """Whether no two columns of one colour share a row."""
    p = _boolean(pattern).tocoo()
    colors = np.asarray(colors)
    keys = p.row.astype(np.int64) * (n_colors(colors) + 1) + colors[p.col]
    return len(np.unique(keys)) == len(keys)


# ---- star colouring ---------------------------------------------------------------------------
def _edge_indices(neighbours):
    """For each vertex, the index of each of its edges (one index per undirected edge)."""
    degree = np.array([len(w) for w in neighbours], dtype=np.int64)
    n = len(neighbours)
    rows = np.repeat(np.arange(n, dtype=np.int64), degree)
    cols = np.array([w for ws in neighbours for w in ws], dtype=np.int64)
    _, index = np.unique(np.minimum(rows, cols) * n + np.maximum(rows, cols), return_inverse=True)
    index = index.tolist()
    starts = np.concatenate([[0], np.cumsum(degree)]).tolist()
    return [index[starts[v]:starts[v + 1]] for v in range(n)], (max(index) + 1 if index else 0)


def _star(neighbours, edges, n_edges, order):
    """GTMP 2007 Algorithm 4.1 (as SparseMatrixColorings.star_coloring): greedy, keeping the
    2-coloured stars (their hubs) so that each new vertex forbids just the colours that
    would make a path on 4 vertices 2-coloured."""
    nv = len(neighbours)
    color = [-1] * nv
    forbidden = [-1] * (nv + 1)
    first_neighbor = [(-1, -1, -1)] * (nv + 1)  # colour -> (v, w, edge vw) last seen at v
    treated = [-1] * nv
    star = [-1] * n_edges  # edge -> star index
    hub = []  # star index -> hub vertex (negative: a star of one edge, hub undecided)

    def treat(v, w):  # forbid the colours of w's neighbours
        for x in neighbours[w]:
            if color[x] >= 0:
                forbidden[color[x]] = v
        treated[w] = v

    for v in order:
        for w, vw in zip(neighbours[v], edges[v]):
            cw = color[w]
            if cw < 0:
                continue
            forbidden[cw] = v
            p, q, _ = first_neighbor[cw]
            if p == v:  # v has two neighbours of colour cw: their neighbours' colours are out
                if treated[q] != v:
                    treat(v, q)
                treat(v, w)
            else:
                first_neighbor[cw] = (v, w, vw)
                for x, wx in zip(neighbours[w], edges[w]):
                    if x == v or color[x] < 0:
                        continue
                    if x == hub[star[wx]]:  # w is a leaf of a star with hub x
                        forbidden[color[x]] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        color[v] = c
        # grow the 2-coloured stars that v joins
        for w, vw in zip(neighbours[v], edges[v]):
            if color[w] < 0:
                continue
            joined = False
            for x, wx in zip(neighbours[w], edges[w]):
                if x != v and color[x] == color[v]:
                    s = star[wx]
                    hub[s] = w
                    star[vw] = s
                    joined = True
                    break
            if not joined:
                p, q, pq = first_neighbor[color[w]]
                if p == v and q != w:
                    s = star[pq]
                    hub[s] = v
                    star[vw] = s
                else:
                    hub.append(-1 - max(v, w))
                    star[vw] = len(hub) - 1
    return np.array(color, dtype=np.int64)


def star_coloring(pattern):
    """A star colouring of the columns of a symmetric (N, N) pattern (its diagonal is
    ignored): every nonzero of H is one entry of H·S (decompression reads it off)."""
    p = _boolean(pattern)
    if p.shape[0] != p.shape[1]:
        raise ValueError(f"a star colouring needs a square (symmetric) pattern; got shape {p.shape}")
    p = p + p.T
    neighbours = _graph(p)
    edges, n_edges = _edge_indices(neighbours)
    return _best([_star(neighbours, edges, n_edges, order) for order in
                  (_largest_first(neighbours), _smallest_last(neighbours))])


def is_star_coloring(pattern, colors):
    """Whether colors is a distance-1 colouring of the graph of the symmetric pattern in which
    every path on 4 vertices uses at least 3 colours (checked by brute force on the graph)."""
    neighbours = _graph(_boolean(pattern) + _boolean(pattern).T)
    colors = np.asarray(colors)
    for v, ws in enumerate(neighbours):
        if any(colors[w] == colors[v] for w in ws):
            return False
    for a, ws in enumerate(neighbours):  # path a - b - c - d with colours x y x y
        for b in ws:
            for c in neighbours[b]:
                if c == a or colors[c] != colors[a]:
                    continue
                for d in neighbours[c]:
                    if d != b and d != a and colors[d] == colors[b]:
                        return False
    return True
