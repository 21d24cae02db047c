"""The steady state of a reaction network with scipy.optimize.root, and its sensitivity to the
rate constants by dualad (the implicit function theorem, dualad/solvers/roots.py).

An open reactor fed with A at rate k0:

    ∅ → A (k0),   A ⇌ B (k1, k2),   2B → C (k3),   C → ∅ (k4),   A → ∅ (k5)

    A' = k0 − k1 A + k2 B − k5 A
    B' = k1 A − k2 B − 2 k3 B²
    C' = k3 B² − k4 C

The steady state x*(k) solves F(x, k) = 0; dualad.jacobian of the function that calls root
gives ∂x*/∂k from the float solve plus one chord step on dual numbers (no finite-difference
step, no re-solving per parameter), here against central differences of root run at a tight
tolerance. Run: python examples/steady_state.py
"""

import time

import numpy as np
from scipy.optimize import root

import dualad

NAMES = ("k0 feed", "k1 A→B", "k2 B→A", "k3 2B→C", "k4 C out", "k5 A out")
K = np.array([1.0, 2.0, 0.5, 0.8, 0.3, 0.1])


def rates(x, k):
    A, B, C = x[0], x[1], x[2]
    return np.stack([k[0] - k[1] * A + k[2] * B - k[5] * A,
                     k[1] * A - k[2] * B - 2.0 * k[3] * B ** 2,
                     k[3] * B ** 2 - k[4] * C])


def steady_state(k, tol=1e-12):
    sol = root(rates, np.ones(3), args=(k,), tol=tol)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.x


def run(k=K, h=1e-6):
    """{'steady state', 'dualad', 'reverse', 'central differences', 'residual', 'seconds'}:
    the Jacobians ∂x*/∂k (3 × 6) and their times."""
    x = steady_state(k)
    start = time.perf_counter()
    forward = dualad.jacobian(steady_state, mode="forward")(k)
    t_forward = time.perf_counter() - start
    start = time.perf_counter()
    reverse = dualad.jacobian(steady_state, mode="reverse")(k)
    t_reverse = time.perf_counter() - start
    start = time.perf_counter()
    central = np.stack([(steady_state(k + h * e) - steady_state(k - h * e)) / (2 * h)
                        for e in np.eye(k.size)], axis=1)
    t_central = time.perf_counter() - start
    return {"steady state": x, "dualad": forward, "reverse": reverse, "central differences": central,
            "residual": float(np.max(np.abs(rates(x, k)))),
            "seconds": {"dualad forward": t_forward, "dualad reverse": t_reverse,
                        "central differences (12 solves)": t_central}}


def main():
    out = run()
    print("steady state (A, B, C):", np.array2string(out["steady state"], precision=6))
    print("\nrelative sensitivities ∂ln x*/∂ln k (dualad):")
    rel = out["dualad"] * K[None, :] / out["steady state"][:, None]
    print(f"{'':10}" + "".join(f"{n:>11}" for n in NAMES))
    for species, row in zip("ABC", rel):
        print(f"{species:10}" + "".join(f"{v:11.4f}" for v in row))
    error = np.max(np.abs(out["dualad"] - out["central differences"]))
    print(f"\nmax |dualad − central differences| = {error:.2e}; forward vs reverse "
          f"{np.max(np.abs(out['dualad'] - out['reverse'])):.1e}")
    for label, seconds in out["seconds"].items():
        print(f"{label:34} {seconds * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
