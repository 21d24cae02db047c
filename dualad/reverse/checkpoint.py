"""Checkpointing: trade recomputation for tape memory in reverse mode.

    checkpoint(fn)(*args)                     one tape node for the whole call of fn; the
                                              backward sweep re-runs fn on its saved inputs
    checkpointed_loop(step, state0, n, snapshots=k)
                                              state = step(state) n times; the backward sweep
                                              keeps at most k states alive

Without checkpoints a loop of n steps puts every operation of every step on the tape:
memory O(n). checkpointed_loop runs the steps forward on plain values (nothing taped) and
records one node. Its VJP reverses the steps by binomial (revolve) recursion: to reverse
steps [a, b) holding the state at a and s free snapshots, advance to a split point m, keep
that state as a snapshot, reverse [m, b) with s − 1 snapshots, then [a, m) with s. The split
follows Griewank's binomial rule: with r the least number of sweeps such that C(s + r, s) ≥
b − a, the right part gets C(s − 1 + r, s − 1) steps, so each step is recomputed about r
times and at most k states (plus one step's tape) are alive at once.

A step must take and return one array (or float); values it closes over are constants.
Parameters to differentiate belong in the state.
"""

from __future__ import annotations

import math

import numpy as np

from .tape import Tape
from .traced import Traced, leading_tape, leaf, record, value_and_node

__all__ = ["checkpoint", "checkpointed_loop"]


def _run_plain(fn, values, what):
    out = fn(*values)
    if isinstance(out, Traced):
        raise TypeError(f"{what} closes over a value being differentiated in reverse mode; pass "
                        "it in as an argument (for checkpointed_loop: make it part of the state)")
    return out


def _pullback(fn, values, c, what):
    """Cotangents of fn's arguments at values, by taping one call of fn and sweeping back."""
    tape = Tape()
    inputs = [leaf(v, tape) for v in values]
    out = fn(*inputs)
    if not (isinstance(out, Traced) and out.tape is tape):
        return [None] * len(values)
    if np.shape(out.value) != np.shape(c):
        raise ValueError(f"{what}: a step must return the shape it takes "
                         f"({np.shape(values[0])}), got {np.shape(out.value)}")
    return tape.backward(out.node, c, [x.node for x in inputs])


def checkpoint(fn):
    """fn with its inner operations kept off the tape: the sweep re-runs it (JAX's checkpoint)."""
    def checkpointed(*args):
        tape = leading_tape(args)
        if tape is None:  # not under reverse mode (or a newer forward layer leads)
            return fn(*args)
        pairs = [value_and_node(a, tape) for a in args]
        values = [v for v, _ in pairs]
        traced = [k for k, (_, node) in enumerate(pairs) if node is not None]
        out = _run_plain(fn, values, "a checkpointed function")

        def vjp(c):
            found = _pullback(fn, values, c, "checkpoint")
            return tuple(found[k] for k in traced)

        return record(tape, out, [pairs[k][1] for k in traced], vjp)

    checkpointed.__wrapped__ = fn
    return checkpointed


def _binomial_split(n_steps, free):
    """Steps of the right part when reversing n_steps with `free` snapshots (revolve)."""
    sweeps = 0
    while math.comb(free + sweeps, free) < n_steps:
        sweeps += 1
    return min(n_steps - 1, math.comb(free - 1 + sweeps, free - 1))


def checkpointed_loop(step, state0, n_steps, snapshots=10, info=None):
    """state = step(state), n_steps times; returns the final state.

    Under reverse mode the loop is one tape node, and its backward sweep keeps at most
    `snapshots` states (binomial placement). `info`, a dict if given, receives after each
    backward sweep: steps, snapshots, recomputed_steps (step calls made by the sweep) and
    peak_states (states alive at once).
    """
    if snapshots < 1:
        raise ValueError("checkpointed_loop needs snapshots >= 1")
    tape = leading_tape((state0,))
    if tape is None:
        state = state0
        for _ in range(n_steps):
            state = step(state)
        return state
    start, node = value_and_node(state0, tape)
    state = start
    for _ in range(n_steps):
        state = _run_plain(step, (state,), "the step of checkpointed_loop")

    def vjp(c):
        counts = {"recomputed_steps": 0, "peak_states": 1}

        def advance(s, steps):
            for _ in range(steps):
                s = step(s)
            counts["recomputed_steps"] += steps
            return s

        def reverse_segment(s_start, n, c_end):
            """Cotangent at the start of n steps with no snapshot to spare: each step is
            recomputed from s_start (n == 1: just the step's own pullback)."""
            c = c_end
            for i in reversed(range(n)):
                s = advance(s_start, i) if i else s_start
                counts["recomputed_steps"] += 1
                c = _pullback(step, [s], c, "checkpointed_loop")[0]
            return c

        def reverse(s_start, n, free, c_end):
            """Cotangent at the start of n steps beginning at state s_start.

            Revolve's recursion, unrolled with a stack of the left parts still to reverse (a
            deep recursion would hit Python's limit for large `snapshots`): split off the
            right part at a new snapshot until a segment has one step or no snapshot left,
            reverse that segment, then resume the innermost pending left part."""
            pending = []  # (start state, steps, free snapshots) of left parts, innermost last
            c = c_end
            while True:
                while n > 1 and free > 0:
                    right = _binomial_split(n, free)
                    pending.append((s_start, n - right, free))
                    s_start, n, free = advance(s_start, n - right), right, free - 1
                    counts["peak_states"] = max(counts["peak_states"], 1 + len(pending))
                c = reverse_segment(s_start, n, c)  # the snapshot s_start is dropped here
                if not pending:
                    return c
                s_start, n, free = pending.pop()

        c0 = c if n_steps == 0 else reverse(start, n_steps, snapshots - 1, c)
        if info is not None:
            info.update(steps=n_steps, snapshots=snapshots, recomputed_steps=counts["recomputed_steps"],
                        peak_states=counts["peak_states"])
        return (c0,)

    return record(tape, state, (node,), vjp)
