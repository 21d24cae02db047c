"""Checkpointing: peak memory and time of a reverse-mode gradient through a long simulation.

Two differentiable simulations (defined in tests/test_checkpoint.py), gradient of a final
quantity with respect to the initial state: a damped nonlinear oscillator, explicit Euler,
10^5 steps (final energy), and a 1-D heat equation with a cubic source, 100 points, 10^4
steps (sum of squares). Each is run
with a plain tape (every operation of every step recorded) and with checkpointed_loop at
k = 10 and 100 snapshots. Peak memory is tracemalloc's (a separate run from the timing,
which tracemalloc would slow down). Gradients are checked against the plain tape.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import dualad
from common import save, table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_checkpoint import final, heat_step, oscillator_step, peak_bytes  # noqa: E402


def simulation(step, n, snapshots, info=None):
    return dualad.grad(final(step, n, snapshots, info), mode="reverse")


def run(scale):
    cases = [("oscillator, explicit Euler", oscillator_step, np.array([1.0, 0.0]), 10 ** 5 // scale),
             ("heat equation, 100 points", heat_step, np.sin(np.linspace(0, np.pi, 100)) * 0.8,
              10 ** 4 // scale)]
    rows = []
    for name, step, s0, n in cases:
        reference = None
        for snapshots in (None, 10, 100):
            info = {}
            grad = simulation(step, n, snapshots, info)
            start = time.perf_counter()
            g = grad(s0)
            seconds = time.perf_counter() - start
            if reference is None:
                reference = g
            np.testing.assert_allclose(g, reference, rtol=1e-10, atol=1e-14)
            peak = peak_bytes(simulation(step, n, snapshots), s0)
            rows.append([f"{name}, {n} steps", "plain tape" if snapshots is None else f"k = {snapshots}",
                         f"{peak / 2 ** 20:.2f} MiB", f"{seconds:.2f} s",
                         info.get("recomputed_steps", "—"), info.get("peak_states", "—")])
    header = ["simulation", "checkpointing", "peak memory", "time", "steps run in the sweep",
              "states alive at once"]
    return "### Checkpointing: reverse-mode gradient through a long simulation\n\n" + table(header, rows)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a hundredth of the steps")
    args = parser.parse_args(argv)
    text = run(100 if args.quick else 1)
    print(text)
    save("checkpoint", text)


if __name__ == "__main__":
    main()
