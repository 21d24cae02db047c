"""Differentiable physics with checkpointing: the sensitivity of an orbit's final position to
its initial conditions over 10^5 steps, without a tape of every step.

A planet around a star, integrated with symplectic Euler (dt = 1e-3). The reverse-mode
gradient of the final x position with respect to the initial state (q, p) through
dualad.checkpointed_loop keeps only `snapshots` states alive and re-runs the rest during
the backward sweep; forward mode (4 inputs, 4 partials per pass) checks it. Peak memory is
measured with tracemalloc. Run: python examples/checkpointed_physics.py [n_steps]
"""

import sys
import time
import tracemalloc

import numpy as np

import dualad

DT = 1e-3


def step(state):
    q, p = state[:2], state[2:]
    r3 = np.sum(q * q) ** 1.5
    p = p - DT * q / r3
    q = q + DT * p
    return np.concatenate([q, p])


def final_x(state0, n_steps, snapshots, info=None):
    return dualad.checkpointed_loop(step, state0, n_steps, snapshots=snapshots, info=info)[0]


def plain_final_x(state0, n_steps):
    state = state0
    for _ in range(n_steps):
        state = step(state)
    return state[0]


def measured(fn, memory=True):
    """(result, seconds, peak MiB of Python allocations or None) of fn(); tracemalloc slows
    allocation-heavy code down several times, so the times are with it on where memory is."""
    if memory:
        tracemalloc.start()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    peak = None
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
    return result, seconds, peak


def run(n_steps=100_000, snapshots=100, traced_steps=None):
    """Gradients by checkpointed reverse mode and by forward mode over n_steps (timed), and
    the peak memory of checkpointed and plain-tape reverse mode over traced_steps (tracemalloc
    slows allocation-heavy code several times, so memory is measured on a shorter run)."""
    state0 = np.array([1.0, 0.0, 0.0, 1.1])  # an eccentric orbit
    info = {}
    reverse, t_reverse, _ = measured(lambda: dualad.grad(
        lambda s: final_x(s, n_steps, snapshots, info), mode="reverse")(state0), memory=False)
    forward, t_forward, _ = measured(lambda: dualad.grad(
        lambda s: plain_final_x(s, n_steps), mode="forward")(state0), memory=False)
    traced_steps = traced_steps or max(n_steps // 20, 1)
    _, _, m_checkpointed = measured(lambda: dualad.grad(
        lambda s: final_x(s, traced_steps, snapshots), mode="reverse")(state0))
    _, _, m_plain = measured(lambda: dualad.grad(
        lambda s: plain_final_x(s, traced_steps), mode="reverse")(state0))
    return dict(reverse=reverse, forward=forward, info=info, n_steps=n_steps, snapshots=snapshots,
                seconds={"reverse, checkpointed_loop": t_reverse, "forward mode": t_forward},
                traced_steps=traced_steps, peak_mib={"checkpointed_loop": m_checkpointed,
                                                     "plain tape": m_plain})


def main(n_steps=100_000):
    out = run(n_steps)
    print(f"orbit, symplectic Euler, {n_steps} steps: ∂x_final/∂(q0, p0)")
    print("  checkpointed reverse:", np.array2string(out["reverse"], precision=10))
    print("  forward mode:        ", np.array2string(out["forward"], precision=10))
    rel = np.max(np.abs(out["reverse"] - out["forward"]) / np.abs(out["forward"]))
    print(f"  largest relative difference {rel:.1e}")
    print(f"  checkpointed_loop (k = {out['snapshots']}): {out['seconds']['reverse, checkpointed_loop']:.1f} s, "
          f"{out['info']['recomputed_steps']} steps re-run, at most {out['info']['peak_states']} states alive")
    print(f"  forward mode (4 partials per pass): {out['seconds']['forward mode']:.1f} s")
    print(f"\npeak memory of the reverse-mode gradient over {out['traced_steps']} steps (tracemalloc):")
    for label, mib in out["peak_mib"].items():
        print(f"  {label:18} {mib:9.2f} MiB")
    print("  (the plain tape grows with the steps, checkpointed_loop stays at k states)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
