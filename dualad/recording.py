"""Reverse mode on the Python path: f recorded once on a tape (reverse/), then swept.

    Recording(f, args, argnums)            the tape of one run of f; its output tree seen as
                                           one flat vector, so one sweep serves any structure
    vjp_recording(f, args, argnums, what)  -> (value tree, pullback: cotangent tree -> cotangents)
    jacobian_reverse(f, args, argnums)     -> Jacobian tree, one sweep per output entry
"""

from __future__ import annotations

import math

import numpy as np

from .arguments import Inputs, name_of, plain, read_output
from .number import finish, from_objects, is_layer
from .reverse import Tape, Traced, leaf
from .tree import flatten

__all__ = ["Recording", "vjp_recording", "jacobian_reverse"]


class Recording:
    """f recorded once on a tape. Its output tree is seen as one flat vector (the leaves
    raveled and concatenated), so one backward sweep serves any output structure."""

    def __init__(self, f, args, argnums):
        self.f = f
        self.inputs = Inputs(f, args, argnums)
        self.tape = tape = Tape()
        self.input_nodes = []  # taken when made: f may assign into its input, giving it a new node

        def make(j, x):
            traced = leaf(x, tape)
            self.input_nodes.append(traced.node)
            return traced

        try:
            self._read(self.inputs.call(make))
        finally:
            finish(tape.tag)  # recorded: traced values that escape f raise when used later

    def _read(self, out):
        """The output tree's values, shapes and its one node (None when constant)."""
        f, tape = self.f, self.tape
        outs, self.treedef = flatten(out)
        outs = [from_objects(o) for o in outs]  # np.array([...]) of traced values
        ours = [isinstance(o, Traced) and o.tape is tape for o in outs]
        self.values = [o.value if mine else read_output(o, tape.tag, f)[0] for o, mine in zip(outs, ours)]
        self.shapes = [tuple(np.shape(v)) for v in self.values]
        self.sizes = [math.prod(s) for s in self.shapes]
        if not any(ours):
            self.node = None
        elif len(outs) == 1:
            self.node = outs[0].node
        else:  # one node for the whole tree, so that a single sweep takes every leaf's cotangent
            self.node = np.concatenate([np.ravel(o) for o in outs]).node

    @property
    def value(self):
        return self.treedef.unflatten(self.values)

    @property
    def n_out(self):
        return sum(self.sizes)

    def pull_flat(self, cotangent):
        """Cotangents of the differentiated leaves (a list) for the flat output cotangent."""
        if self.node is None:
            return [np.zeros(sh) for sh in self.inputs.shapes]
        found = self.tape.backward(self.node, cotangent, self.input_nodes)
        return [plain(np.zeros(sh) if c is None else np.reshape(c, sh))
                for c, sh in zip(found, self.inputs.shapes)]

    def flat_cotangent(self, cotangent, what):
        """The cotangent tree checked against the output's structure, shapes and dtype, flat."""
        leaves, treedef = flatten(cotangent)
        if treedef != self.treedef:
            raise ValueError(f"{what}: the cotangent must have the structure of {name_of(self.f)}'s "
                             f"output, {self.treedef.describe()}; got {treedef.describe()}")
        checked = []
        for k, (c, shape) in enumerate(zip(leaves, self.shapes)):
            where = "the cotangent" if len(leaves) == 1 else f"cotangent leaf {k}"
            if not is_layer(c):
                c = np.asarray(c)
                if c.dtype.kind not in "fiu":
                    raise TypeError(f"{what}: {where} must hold floats, got dtype {c.dtype}")
            if tuple(np.shape(c)) != shape:
                raise ValueError(f"{what}: {where} must have the output's shape {shape}, "
                                 f"got shape {tuple(np.shape(c))}")
            checked.append(c)
        if len(checked) == 1:
            return checked[0]
        return np.concatenate([np.ravel(c) for c in checked])


def vjp_recording(f, args, argnums, what):
    """Record f on a tape: (f's value, pullback: cotangent tree -> cotangents of args[argnums])."""
    recording = Recording(f, args, argnums)

    def pullback(cotangent):
        flat = recording.flat_cotangent(cotangent, what)
        return recording.inputs.structure(recording.pull_flat(flat))

    return recording.value, pullback


def jacobian_reverse(f, args, argnums):
    """The Jacobian tree of f at args by one recording and one sweep per output entry."""
    recording = Recording(f, args, argnums)
    inputs, n_out = recording.inputs, recording.n_out
    rows = []
    for k in range(n_out):
        unit = np.zeros(n_out)
        unit[k] = 1.0
        rows.append(recording.pull_flat(unit if len(recording.sizes) > 1
                                        else unit.reshape(recording.shapes[0])))
    pieces, start = [], 0
    for shape, size in zip(recording.shapes, recording.sizes):
        leaf_rows = rows[start:start + size]
        start += size
        pieces.append(inputs.structure([_stack_rows([row[j] for row in leaf_rows], shape, in_shape)
                                        for j, in_shape in enumerate(inputs.shapes)]))
    return recording.treedef.unflatten(pieces)


def _stack_rows(rows, out_shape, in_shape):
    """Cotangents of one input leaf per output entry, as its Jacobian block (out + in shape)."""
    if not rows:
        return plain(np.zeros(out_shape + in_shape))
    stacked = np.stack([np.asarray(r) if not is_layer(r) else r for r in rows])
    return plain(np.reshape(stacked, out_shape + in_shape))
