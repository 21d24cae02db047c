"""Each numpy.linalg rule of the registry against its primal: one forward application on a
Dual carrying a block of `chunk` tangents, and one reverse application (recording and one
sweep, dualad.vjp), each divided by the time of the NumPy call itself, in the same run.

A rule at BLAS speed costs a small constant times its primal per tangent block: the JVPs are
matrix products and solves with the factorisation's results. Medians of 5 rounds ± half
their interquartile range; `--quick` runs n = 10 and 60 only.
"""

import argparse

import numpy as np

import dualad
from common import fmt_time, per_call_spread, save, table

CHUNK = 8


def spd(rng, n):
    b = rng.normal(size=(n, n))
    return b @ b.T + n * np.eye(n)


def real_spectrum(rng, n):
    s = rng.normal(size=(n, n)) + n * np.eye(n)
    return s @ (np.linspace(1.0, 2.0 * n, n)[:, None] * np.linalg.inv(s))


def cases(rng, n):
    """name -> (function of one matrix, the matrix)."""
    a = rng.normal(size=(n, n)) + n * np.eye(n)
    tall = rng.normal(size=(n + n // 2, n))
    b = rng.normal(size=(n, 3))
    return {
        "det": (np.linalg.det, a),
        "slogdet": (lambda m: np.linalg.slogdet(m)[1], a),
        "inv": (np.linalg.inv, a),
        "solve (3 columns)": (lambda m: np.linalg.solve(m, b), a),
        "cholesky": (np.linalg.cholesky, spd(rng, n)),
        "eigh": (lambda m: np.linalg.eigh(m)[1], spd(rng, n)),
        "eigvalsh": (np.linalg.eigvalsh, spd(rng, n)),
        "eig": (lambda m: np.linalg.eig(m)[1], real_spectrum(rng, n)),
        "svd": (lambda m: np.linalg.svd(m, full_matrices=False)[0], tall),
        "qr": (lambda m: np.linalg.qr(m)[1], tall),
        "pinv": (np.linalg.pinv, tall),
        "lstsq": (lambda m: np.linalg.lstsq(m, np.ones(len(m)))[0], tall),
        "matrix_power 3": (lambda m: np.linalg.matrix_power(m, 3), a),
        "norm 2": (lambda m: np.linalg.norm(m, 2), tall),
    }


def forward_on_block(f, m, rng):
    """f on a Dual carrying CHUNK random tangents (one forward pass of a Jacobian)."""
    tangents = rng.normal(size=m.shape + (CHUNK,))

    def run():
        return f(dualad.Dual(m, tangents))
    return run


def reverse_once(f, m, rng):
    """dualad.vjp of f and one pullback (a recording and one sweep)."""
    out = f(m)
    cotangent = rng.normal(size=np.shape(out))

    def run():
        _, pullback = dualad.vjp(f, m)
        return pullback(cotangent)
    return run


def run(sizes, min_time):
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        for name, (f, m) in cases(rng, n).items():
            primal, _ = per_call_spread(f, m, min_time=min_time)
            row = [name, n, fmt_time(primal)]
            for make in (forward_on_block, reverse_once):
                median, spread = per_call_spread(make(f, m, rng), min_time=min_time, slow=0.5)
                row.append(f"{median / primal:.1f}× ± {spread / primal:.1f}")
            rows.append(row)
    header = ["rule", "n", "NumPy (primal)", f"forward, {CHUNK} tangents / primal",
              "reverse (record + sweep) / primal"]
    return ("### numpy.linalg rules against their primal (Python path)\n\n"
            + table(header, rows))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = [10, 60] if args.quick else [10, 100, 300]
    text = run(sizes, min_time=0.01 if args.quick else 0.1)
    print(text)
    save("linalg_rules", text)


if __name__ == "__main__":
    main()
