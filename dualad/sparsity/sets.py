"""Index sets stored once, named by integer ids: what the sparsity tracer carries.

A tracer array holds, per entry, an *id* (an int64 array of the value's shape) into a
``Table``: an append-only CSR store of sorted index sets. Id 0 is the empty set (a
constant). First-order sets hold input indices k (0 ≤ k < n); second-order sets hold pairs
i ≤ j as the key i·n + j.

Why ids: NumPy runs a selection (indexing, reshape, transpose, concatenate, where, item
assignment) on the id array exactly as on the values, so views stay views and writes
through them reach the base, at the cost of NumPy's own call; an elementwise operation
with one traced operand keeps its ids. Only operations that merge sets (a + b of two traced
arrays, sums, products of matrices) make new rows, each a vectorised sort of the merged
(row, index) keys. Memory is the sum of the set sizes made, never entries × n.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Table", "Builder", "union", "cross"]

_EMPTY = np.zeros(0, dtype=np.int64)


def _exclusive_cumsum(counts):
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _grown(a, needed):
    out = np.empty(max(needed, 2 * len(a)), dtype=a.dtype)
    out[:len(a)] = a
    return out


class Table:
    """Sorted index sets in CSR form, row 0 empty; ``width`` bounds the keys (n or n²)."""

    def __init__(self, width):
        self.width = int(width)
        self._indptr = np.zeros(1024, dtype=np.int64)
        self._keys = np.zeros(4096, dtype=np.int64)
        self.n_rows = 1  # row 0: the empty set
        self.n_keys = 0

    def append(self, counts, keys):
        """New rows with the given counts (keys grouped by row, each row sorted and unique):
        the id of the first; the rest follow."""
        counts = np.asarray(counts, dtype=np.int64)
        first, k = self.n_rows, len(counts)
        if self.n_rows + k + 1 > len(self._indptr):  # grow geometrically: appends stay O(1) each
            self._indptr = _grown(self._indptr, self.n_rows + k + 1)
        if self.n_keys + len(keys) > len(self._keys):
            self._keys = _grown(self._keys, self.n_keys + len(keys))
        self._indptr[first + 1:first + k + 1] = self.n_keys + np.cumsum(counts)
        self._keys[self.n_keys:self.n_keys + len(keys)] = keys
        self.n_rows += k
        self.n_keys += len(keys)
        return first

    def singletons(self, n):
        """Rows {0}, {1}, ..., {n-1} (the inputs): their ids."""
        first = self.append(np.ones(n, dtype=np.int64), np.arange(n, dtype=np.int64))
        return first + np.arange(n, dtype=np.int64)

    def gather(self, ids):
        """(counts, keys): the sets of a flat id array, concatenated in order."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        starts = self._indptr[ids]
        counts = self._indptr[ids + 1] - starts
        total = int(counts.sum())
        if total == 0:
            return counts, _EMPTY
        offsets = np.repeat(starts - _exclusive_cumsum(counts)[:-1], counts)
        return counts, self._keys[offsets + np.arange(total, dtype=np.int64)]

    def rows(self, ids):
        """(indptr, keys) of the sets of a flat id array: a CSR matrix's arrays."""
        counts, keys = self.gather(ids)
        return _exclusive_cumsum(counts), keys


class Builder:
    """New sets for n_rows output rows, collected as (row label, key) pieces and merged
    once: set(row) = the union of every piece's keys labelled with it."""

    def __init__(self, table, n_rows):
        self.table, self.n_rows = table, int(n_rows)
        self.labels, self.keys = [], []

    def add(self, labels, keys):
        if len(keys):
            self.labels.append(np.asarray(labels, dtype=np.int64))
            self.keys.append(np.asarray(keys, dtype=np.int64))

    def add_rows(self, labels, ids):
        """Each output row labels[i] receives the set ids[i]."""
        counts, keys = self.table.gather(ids)
        self.add(np.repeat(np.asarray(labels, dtype=np.int64).reshape(-1), counts), keys)

    def ids(self):
        """The ids of the merged rows (0 where a row is empty), shape (n_rows,)."""
        out = np.zeros(self.n_rows, dtype=np.int64)
        if not self.keys:
            return out
        labels = np.concatenate(self.labels) if len(self.labels) > 1 else self.labels[0]
        keys = np.concatenate(self.keys) if len(self.keys) > 1 else self.keys[0]
        width = self.table.width
        if self.n_rows * width < 2 ** 62:
            merged = np.sort(labels * width + keys)  # np.unique's hash table is slower here
            if len(merged) > 1:
                merged = merged[np.concatenate([[True], merged[1:] != merged[:-1]])]
            labels, keys = np.divmod(merged, width)
        else:  # keys too wide for one int64: sort by (label, key) pairs
            order = np.lexsort((keys, labels))
            labels, keys = labels[order], keys[order]
            keep = np.ones(len(keys), dtype=bool)
            keep[1:] = (labels[1:] != labels[:-1]) | (keys[1:] != keys[:-1])
            labels, keys = labels[keep], keys[keep]
        counts = np.bincount(labels, minlength=self.n_rows)
        filled = counts > 0
        first = self.table.append(counts[filled], keys)
        out[filled] = first + np.arange(int(filled.sum()), dtype=np.int64)
        return out


def union(table, id_arrays, shape):
    """The entrywise union of id arrays broadcast to `shape` (None: a constant operand): a new
    id array of its own (never a view of an operand's), or None when every operand is
    constant. Entries where one set is empty or both ids agree reuse an id."""
    arrays = [np.broadcast_to(a, shape) for a in id_arrays if a is not None]
    if not arrays:
        return None
    out = np.array(arrays[0], dtype=np.int64, order="C")  # a copy: reshape(-1) is a view
    for other in arrays[1:]:
        merge = (out != other) & (out != 0) & (other != 0)
        np.copyto(out, other, where=out == 0)
        if merge.any():
            where = np.flatnonzero(merge)
            builder = Builder(table, len(where))
            labels = np.arange(len(where), dtype=np.int64)
            builder.add_rows(labels, out.reshape(-1)[where])
            builder.add_rows(labels, np.asarray(other).reshape(-1)[where])
            out.reshape(-1)[where] = builder.ids()
    return out


def cross(table_g, ids_a, ids_b, labels, builder, n):
    """Into builder (a second-order table's): for each i, the pairs set(ids_a[i]) × set(ids_b[i])
    (as keys min·n + max) under row labels[i]."""
    counts_a, keys_a = table_g.gather(ids_a)
    counts_b, keys_b = table_g.gather(ids_b)
    sizes = counts_a * counts_b
    total = int(sizes.sum())
    if total == 0:
        return
    entry = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    local = np.arange(total, dtype=np.int64) - np.repeat(_exclusive_cumsum(sizes)[:-1], sizes)
    ia, ib = np.divmod(local, counts_b[entry])
    a = keys_a[_exclusive_cumsum(counts_a)[entry] + ia]
    b = keys_b[_exclusive_cumsum(counts_b)[entry] + ib]
    builder.add(np.asarray(labels, dtype=np.int64).reshape(-1)[entry],
                np.minimum(a, b) * n + np.maximum(a, b))
