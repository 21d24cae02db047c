"""Choosing forward or reverse mode from the shapes: a small, calibrated cost model.

For f: R^N -> R^M, recorded once on a tape with `ops` operations whose results hold `E`
floats in all (so E/ops is the typical array size):

    forward   passes × (PASS + ops · OP_FORWARD + E · width · FLOAT_FORWARD)
                                                                  passes = ceil(N / width)
    reverse   ops · OP_RECORD + E · FLOAT_RECORD
              + M × (SWEEP + ops · OP_SWEEP + E · FLOAT_SWEEP)    one sweep per output

width is the chunk (partials carried per pass). A Hessian has its own passes, each costlier
per operation than a Jacobian's (a HyperDual op makes four arrays, a Dual recording keeps
Dual partials and sweeps Dual adjoints):

    HyperDual blocks       Σ over the blocks on and above the diagonal, widths w1, w2:
                           HYPER_PASS + ops · OP_HYPER + E · (w1 + w2 + w1·w2) · FLOAT_HYPER
    forward-over-reverse   Σ over the passes of w tangents (a Dual recording and sweep each):
                           OVER_PASS + ops · OP_OVER + E · (1 + w) · FLOAT_OVER

The constants are seconds per operation
and per float on the Python path (PASS and SWEEP: the fixed cost of one pass and of one
sweep in the transforms), measured on this project's 2-core machine by
`python benchmarks/modes.py --calibrate`, which prints new values for them; rerun it on a
different machine and paste its output here (the figures behind the values, their dates and
conditions: docs/decisions/0005-measured-constants-in-code.md). The tape of the recording
run is also the memory reverse mode needs (E floats plus the partials it keeps, reported as
`tape_floats`).

On the compiled path (dualad.jit.auto) auto is forward mode where f does not compile onto
the compiled tape. Otherwise a gradient takes the tape from COMPILED_REVERSE_FROM inputs on,
and a Jacobian compares ceil(N / chunk) · COMPILED_PASS with COMPILED_RECORD + M ·
COMPILED_SWEEP (in evaluations of f). A compiled auto Hessian compares b(b + 1)/2 HyperDual
block passes (COMPILED_HYPER_PASS each, b = ceil(N / chunk)) with ceil(N / dual chunk)
forward-over-reverse recordings and sweeps (COMPILED_DUAL_PASS each); a compiled auto hvp is forward while one chunk
holds the input, else forward-over-reverse. The other compiled transforms are forward mode.
The same --calibrate run measures these constants.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .number import primal

__all__ = ["choose_mode", "choose_hessian_mode", "ModeDecision"]

# Seconds, Python path (`benchmarks/modes.py --calibrate`; see the module docstring).
PASS = 1.71e-05
SWEEP = 5.60e-06
OP_FORWARD = 5.09e-06
FLOAT_FORWARD = 8.93e-10
OP_RECORD = 5.29e-06
FLOAT_RECORD = 3.79e-09
OP_SWEEP = 1.76e-06
FLOAT_SWEEP = 2.52e-10
# Python-path Hessian passes (`benchmarks/modes.py --python-hessians`), constants of their
# own: a HyperDual op or a Dual recording and sweep costs several times a Jacobian's Dual op,
# so the Jacobian's constants estimate a Hessian several times too low
# (docs/decisions/0004-hessians-and-mode-costs.md, 0005-measured-constants-in-code.md).
HYPER_PASS = 1.12e-04
OP_HYPER = 3.70e-05
FLOAT_HYPER = 3.45e-09
OVER_PASS = 1.96e-04
OP_OVER = 1.19e-04
FLOAT_OVER = 5.88e-09
# Compiled path: the smallest N from which the compiled tape beats forward mode's gradient;
# for Jacobians, costs in evaluations of f: a forward pass (default chunk) COMPILED_PASS, the
# tape COMPILED_RECORD to record and COMPILED_SWEEP per output (dualad.jit.auto).
# Measured on the tanh(W x + b) shapes and the scalar-loop Rosenbrock (`benchmarks/modes.py
# --calibrate`), the Hessian costs on Rosenbrock and a transcendental chain (`--hessians`);
# what each run measured: docs/decisions/0005-measured-constants-in-code.md.
COMPILED_REVERSE_FROM = 12
COMPILED_PASS = 4.3
COMPILED_RECORD = 82.0
COMPILED_SWEEP = 0.29
# Compiled Hessians, in evaluations of f: one HyperDual block pass (jit.kernels.DEFAULT_CHUNK
# wide), and one forward-over-reverse recording + sweep in Duals of jit.dual_tape.DEFAULT_CHUNK
# tangents (dualad.jit.auto.pick_hessian).
COMPILED_HYPER_PASS = 10.0
COMPILED_DUAL_PASS = 9.0


# One pass of the Python path costs (number of operations) × (interpreter overhead) plus
# (elements of intermediates) × (chunk width) of NumPy work. Go as wide as this many tangent
# elements per input allow, so that few passes pay the overhead.
TANGENT_BUDGET = 2 ** 20


# The Python path's auto hvp: forward (one pass of HyperDuals, its ε1ε2 part n wide, O(n²)
# elements per operation) up to this many inputs, forward-over-reverse (one recording and
# one sweep in Duals, O(n)) beyond: on vectorised Rosenbrock the two cross between 100 and
# 200 inputs, and forward's O(n²) pass is far slower past them
# (docs/decisions/0005-measured-constants-in-code.md).
PYTHON_HVP_FORWARD_UP_TO = 128


def default_chunk(n_in):
    """Partials per pass for an N-input Jacobian on the Python path."""
    return max(1, min(n_in, TANGENT_BUDGET // max(n_in, 1)))


def default_hessian_chunk(n_in):
    """Block width of a HyperDual Hessian: the ε1ε2 block costs n_in × chunk² per value."""
    return max(1, min(n_in, math.isqrt(TANGENT_BUDGET // max(n_in, 1))))


def compiled_costs():
    """The compiled auto mode's constants, as dualad.jit.auto.pick takes them."""
    return (COMPILED_REVERSE_FROM, COMPILED_PASS, COMPILED_RECORD, COMPILED_SWEEP)


def compiled_hessian_costs():
    """The compiled auto Hessian's constants, as dualad.jit.auto.pick_hessian takes them."""
    return (COMPILED_HYPER_PASS, COMPILED_DUAL_PASS)


@dataclasses.dataclass(frozen=True)
class ModeDecision:
    """What choose_mode picked, the estimated seconds of each mode, and why."""

    mode: str
    costs: dict
    reason: str
    n_in: int
    n_out: int
    chunk: int
    ops: int
    tape_floats: int

    def __str__(self):
        return self.reason


def _forward_cost(n_in, ops, floats, width):
    passes = math.ceil(max(n_in, 1) / width)
    return passes * (PASS + ops * OP_FORWARD + floats * width * FLOAT_FORWARD), passes


def _reverse_cost(n_out, ops, floats):
    return ops * OP_RECORD + floats * FLOAT_RECORD + n_out * (SWEEP + ops * OP_SWEEP + floats * FLOAT_SWEEP)


def choose_mode(f=None, *args, argnums=0, n_in=None, n_out=None, chunk=None, ops=None,
                floats=None, compiled=None):
    """Decide between forward and reverse mode for the Jacobian of f at args.

        choose_mode(f, x)                     records f once to count N, M and its tape
        choose_mode(n_in=1000, n_out=1)       from the shapes alone (f taken as one op)

    Returns a ModeDecision: .mode ("forward" or "reverse"), .costs (estimated seconds per
    mode), .reason (one line). compiled=True (default: f is a numba function) means the
    compiled path: there auto is what dualad.jit.auto does (the compiled tape for scalar-code
    gradients from COMPILED_REVERSE_FROM inputs on, forward mode otherwise).
    """
    from .twin import is_dispatcher

    compiled = is_dispatcher(f) if compiled is None else compiled
    if f is not None:
        n_in, n_out_seen, ops, floats = _measure(f, args, argnums)
        n_out = n_out_seen if n_out is None else n_out
    if n_in is None or n_out is None:
        raise TypeError("choose_mode needs f and its arguments, or n_in= and n_out=")
    ops = 1 if ops is None else max(ops, 1)
    floats = (n_in + n_out) if floats is None else floats
    width = chunk or default_chunk(n_in)
    forward, passes = _forward_cost(n_in, ops, floats, width)
    reverse = _reverse_cost(n_out, ops, floats)
    costs = {"forward": forward, "reverse": reverse}
    shape = f"N={n_in} input{'s' * (n_in != 1)}, M={n_out} output{'s' * (n_out != 1)}"
    if compiled:
        from .jit.kernels import chunk_for

        return _compiled_decision(f, args, argnums, shape, n_in, n_out, chunk or chunk_for(n_in),
                                  ops, floats)
    mode = "reverse" if reverse < forward else "forward"
    sweeps = f"{n_out} sweep{'s' * (n_out != 1)}"
    chunks = f"{passes} forward pass{'es' * (passes != 1)} of {width} partials"
    verdict = (f"reverse needs {sweeps} vs {chunks}" if mode == "reverse"
               else f"forward needs {chunks} vs {sweeps} of a {ops}-op tape")
    reason = (f"{shape}: {verdict} (estimated {_fmt(costs[mode])} vs "
              f"{_fmt(costs['forward' if mode == 'reverse' else 'reverse'])})")
    return ModeDecision(mode, costs, reason, n_in, n_out, width, ops, floats)


def _compiled_decision(f, args, argnums, shape, n_in, n_out, width, ops, floats):
    """What compiled auto mode does (dualad.jit.auto): forward mode where f does not record
    onto the compiled tape; else for a gradient the tape from COMPILED_REVERSE_FROM inputs
    on, and for a Jacobian the cheaper by the COMPILED_* costs (width: the compiled chunk)."""
    def decision(mode, why):
        return ModeDecision(mode, {}, f"{shape}: compiled auto is {mode} mode: {why}",
                            n_in, n_out, width, ops, floats)

    from .jit.auto import pick  # lazy: numba; the one function compiled auto runs

    if f is not None and not _records_on_tape(f, args, argnums):
        return decision("forward", "f does not compile onto the compiled tape")
    costs = compiled_costs()
    reverse_from, pass_cost, record_cost, sweep_cost = costs
    tape = pick(n_out == 1, n_in, n_out, width, costs)
    mode = "reverse" if tape else "forward"
    if n_out == 1:
        if not tape:
            return decision(mode, f"a gradient below N = {reverse_from}, where the "
                                  "compiled tape starts to win")
        return decision(mode, f"a gradient of N >= {reverse_from} inputs: {_reverse_gradient(f)}")
    passes = math.ceil(n_in / width)
    return decision(mode, f"{passes} forward pass{'es' * (passes != 1)} cost about "
                          f"{passes * pass_cost:g} evaluations of f, recording and {n_out} sweeps "
                          f"{record_cost + n_out * sweep_cost:g}")


def _reverse_gradient(f):
    """Which compiled reverse mode a gradient of f runs, and why: the adjoint code generated
    from f's source (dualad.jit.adjoint) where it covers f, else the tape."""
    from .jit import adjoint

    covered, why = adjoint.covers(f) if f is not None else (False, "no function given")
    if covered:
        return "the adjoint code generated from f's source (a forward and a reverse sweep)"
    return ("one recording on the compiled tape and one sweep (the adjoint generator does "
            f"not cover f: {why})")


def _records_on_tape(f, args, argnums):
    """Whether f's code compiles onto the compiled tape for these arguments (numba is asked
    to type the tape kernel, as compiled auto mode does)."""
    import numba

    from .jit import kernels, tape
    from .jit.auto import records_onto_tape

    argnums = tuple(argnums) if isinstance(argnums, (tuple, list)) else argnums
    reverse = kernels.at_argnum(tape.jacrev, f, argnums, None)
    return records_onto_tape(reverse, [numba.typeof(a) for a in args])


def choose_hessian_mode(f=None, *args, argnums=0, n_in=None, ops=None, floats=None,
                        compiled=None):
    """Decide how to compute a Hessian: "forward" (HyperDual blocks: b(b+1)/2 passes for
    b = N/width blocks, each value carrying 2·width + width² parts) or "forward-over-reverse"
    (N/width Dual passes through a tape: record and one sweep, every op on Duals).
    compiled=True (default: f is a numba function) explains what the compiled auto Hessian
    does (dualad.jit.auto.pick_hessian, by the COMPILED_HYPER_PASS and COMPILED_DUAL_PASS
    costs)."""
    from .twin import is_dispatcher

    compiled = is_dispatcher(f) if compiled is None else compiled
    if f is not None:
        n_in, _, ops, floats = _measure(f, args, argnums)
    if compiled:
        return _compiled_hessian_decision(f, args, argnums, n_in, ops, floats)
    ops = 1 if ops is None else max(ops, 1)
    floats = 2 * n_in if floats is None else floats
    width = default_hessian_chunk(n_in)
    hyper = float(np.dot(hyper_terms(n_in, width, ops, floats), (HYPER_PASS, OP_HYPER, FLOAT_HYPER)))
    over = float(np.dot(over_terms(n_in, default_chunk(n_in), ops, floats), (OVER_PASS, OP_OVER, FLOAT_OVER)))
    costs = {"forward": hyper, "forward-over-reverse": over}
    mode = min(costs, key=costs.get)
    reason = (f"Hessian of N={n_in} inputs: {mode} (estimated {_fmt(costs[mode])}; HyperDual "
              f"blocks {_fmt(hyper)}, forward-over-reverse {_fmt(over)})")
    return ModeDecision(mode, costs, reason, n_in, 1, width, ops, floats)


def _passes(n_in, width):
    """(passes, Σ of their widths squared) of `width` covering n_in inputs, the last one
    narrower where width does not divide n_in (one pass for no inputs)."""
    full, rest = divmod(n_in, width)
    return max(1, full + (rest > 0)), full * width ** 2 + rest ** 2


def hyper_terms(n_in, width, ops, floats):
    """(passes, passes · ops, Σ floats · (w1 + w2 + w1·w2)) of the Python path's HyperDual
    blocks on and above the diagonal (forward.hessian_forward), whose cost is the dot product
    with (HYPER_PASS, OP_HYPER, FLOAT_HYPER). For B blocks of widths w_i summing to N:
    Σ_{i≤j} (w_i + w_j) = (B + 1)·N and Σ_{i≤j} w_i·w_j = (N² + Σ w_i²) / 2."""
    blocks, squares = _passes(n_in, width)
    pairs = blocks * (blocks + 1) // 2
    return pairs, pairs * ops, floats * ((blocks + 1) * n_in + (n_in ** 2 + squares) / 2)


def over_terms(n_in, width, ops, floats):
    """(passes, passes · ops, Σ floats · (1 + w)) of the Python path's forward-over-reverse
    Hessian (jacfwd of the reverse gradient, passes of `width` tangents), whose cost is the
    dot product with (OVER_PASS, OP_OVER, FLOAT_OVER)."""
    passes, _ = _passes(n_in, width)
    return passes, passes * ops, floats * (passes + n_in)


def _compiled_hessian_decision(f, args, argnums, n_in, ops, floats):
    """What the compiled auto Hessian does (dualad.jit.auto.hessian, and its calls from
    Python): one HyperDual block up to ONE_PASS inputs; beyond, HyperDual blocks where f does
    not record onto the compiled tape, else pick_hessian's choice."""
    from .jit import dual_tape, kernels
    from .jit.auto import pick_hessian  # lazy: numba; the one function compiled auto runs

    width, dual_width = kernels.DEFAULT_CHUNK, dual_tape.DEFAULT_CHUNK
    blocks, recordings = math.ceil(n_in / width), math.ceil(n_in / dual_width)
    hyper = blocks * (blocks + 1) / 2 * COMPILED_HYPER_PASS
    over = recordings * COMPILED_DUAL_PASS
    costs = {"forward": hyper, "forward-over-reverse": over}
    if n_in <= kernels.ONE_PASS:
        inside = kernels.ONE_PASS if kernels.compiled_takes_one_pass(n_in) else width
        mode, why = "forward", (f"one symmetric HyperDual block holds all N inputs (of "
                                f"{kernels.chunk_for(n_in)} from Python, of {inside} inside njit code)")
    elif f is not None and not _records_on_tape(f, args, argnums):
        mode, why = "forward", "f does not compile onto the compiled tape"
    else:
        over_reverse = pick_hessian(n_in, width, dual_width, compiled_hessian_costs())
        mode = "forward-over-reverse" if over_reverse else "forward"
        why = (f"{blocks * (blocks + 1) // 2} HyperDual block passes cost about {hyper:g} "
               f"evaluations of f, {recordings} forward-over-reverse recordings and sweeps {over:g}")
        if over_reverse:
            why += (f"; at each x it detects H's sparsity and, where a colouring needs fewer than "
                    f"the {recordings} passes (and everything recorded is finite), takes those")
    reason = f"Hessian of N={n_in} inputs: compiled auto is {mode}: {why}"
    return ModeDecision(mode, costs, reason, n_in, 1, width, 1 if ops is None else ops,
                        2 * n_in if floats is None else floats)


def _measure(f, args, argnums):
    """(N, M, ops, floats): f recorded once on a tape, as the transforms run it (over a view
    of its globals where it needs one: allocation.OnDemand), so that the tape holds what
    they would record, not an object array's entries one by one."""
    from .allocation import OnDemand
    from .reverse import Tape, Traced, leaf
    from .arguments import Inputs
    from .tree import flatten
    from .twin import python_twin

    def record(g):
        inputs = Inputs(g, args, argnums)
        tape = Tape()
        out = inputs.call(lambda k, x: leaf(x, tape))
        n_out = sum(int(np.size(o.value if isinstance(o, Traced) else primal(o))) for o in flatten(out)[0])
        return inputs.n, n_out, len(tape), tape.floats
    return OnDemand(python_twin(f)).run(record)


def _fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
