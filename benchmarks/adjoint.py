"""Compiled reverse mode by source transformation (dualad.jit.adjoint, issue 43 phase 1)
against the hand-written numba gradient and the compiled tape (mode="reverse").

Rosenbrock written as a scalar loop (benchmarks/compiled.py's rosen), n = 100 and 10^4:
each kernel called inside a compiled loop (as an optimiser would) and from Python, in
interleaved rounds; every ratio is to the hand-written gradient of the same round (median ±
half the interquartile range of the rounds). Then the first call's compile time of each
kernel, each in a fresh process (numba's own first-use costs paid before by an unrelated
function), against numba's compile of f itself on floats.

    python benchmarks/adjoint.py [--quick] [--rounds 5]
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np

import dualad
from dualad.jit import adjoint
from common import fmt_time, per_call_spread, save, table
from compiled import _repeat_array, rosen, rosen_grad_hand

HERE = Path(__file__).resolve().parent


@numba.njit
def _repeat_pair(fn, x, reps):
    total = 0.0
    for _ in range(reps):
        x[0] += 1e-15  # perturb the input so that no work can be hoisted out of the loop
        value, gradient = fn(x)
        total += value + gradient[0]
    return total


def _kernels():
    """(name, kernel, repeat, returns a pair) of every entry, the hand-written one first."""
    return [("hand-written numba gradient", rosen_grad_hand, _repeat_array, False),
            ("generated adjoint, grad", adjoint.grad(rosen), _repeat_array, False),
            ("generated adjoint, value_and_grad", adjoint.value_and_grad(rosen), _repeat_pair, True),
            ('tape, dualad.grad(f, mode="reverse")', dualad.grad(rosen, mode="reverse"), _repeat_array, False)]


def _spread(values, ratio=False):
    low, median, high = np.percentile(values, [25, 50, 75])
    if ratio:
        return f"{median:.2f}× ± {(high - low) / 2:.2f}"
    return f"{fmt_time(median)} ± {fmt_time((high - low) / 2)}"


def speed(sizes, rounds, min_time):
    kernels = _kernels()
    rows = []
    for n in sizes:
        x = np.linspace(-1.2, 1.2, n)
        expected = rosen_grad_hand(x)
        for name, kernel, _, pair in kernels:
            got = kernel(x)[1] if pair else kernel(x)
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-10 * np.max(np.abs(expected)),
                                       err_msg=name)
        reps = max(300_000 // n, 20)
        # times[round, kernel, (inside a compiled loop, from Python)]
        times = np.empty((rounds, len(kernels), 2))
        for r in range(rounds):
            for k, (name, kernel, repeat, _) in enumerate(kernels):
                times[r, k, 0] = per_call_spread(lambda: repeat(kernel, x.copy(), reps), min_time=min_time,
                                                 repeats=1)[0] / reps
                times[r, k, 1] = per_call_spread(kernel, x, min_time=min_time, repeats=1)[0]
        for k, (name, *_) in enumerate(kernels):
            rows.append([f"n = {n}", name, _spread(times[:, k, 0]), _spread(times[:, k, 0] / times[:, 0, 0], True),
                         _spread(times[:, k, 1]), _spread(times[:, k, 1] / times[:, 0, 1], True)])
    header = ["Rosenbrock", "gradient", "inside a compiled loop", "ratio", "from Python", "ratio"]
    return (f"### Rosenbrock gradient: generated adjoint, tape and hand-written ({rounds} interleaved "
            "rounds, ratios to the hand-written gradient of the same round)\n\n" + table(header, rows))


# ---- first-call compile time, each in a fresh process -----------------------------------------------
_COMPILES = {
    "f": "numba's compile of f on floats (rosen(x))",
    "hand": "hand-written numba gradient (rosen_grad_hand(x))",
    "grad": "generated adjoint, grad(f)(x)",
    "value_and_grad": "generated adjoint, value_and_grad(f)(x)",
    "tape": 'tape, dualad.grad(f, mode="reverse")(x)',
}


def _compile_once(which):
    """Seconds to the first result of `which` on a fresh copy of f (numba's own first-use costs
    paid before, by an unrelated function)."""
    numba.njit(lambda a: a[0] * 2.0 + 1.0)(np.ones(3))
    x = np.linspace(-1.2, 1.2, 100)
    f = numba.njit(rosen.py_func)  # not the module's (compiled there already, or cached)
    start = time.perf_counter()
    if which == "f":
        f(x)
    elif which == "hand":
        numba.njit(rosen_grad_hand.py_func)(x)
    elif which == "grad":
        adjoint.grad(f)(x)
    elif which == "value_and_grad":
        adjoint.value_and_grad(f)(x)
    else:
        dualad.grad(f, mode="reverse")(x)
    return time.perf_counter() - start


def compile_times(processes):
    rows, times = [], {}
    for which in _COMPILES:
        runs = []
        for _ in range(processes):
            out = subprocess.run([sys.executable, str(HERE / "adjoint.py"), "--compile-one", which],
                                 capture_output=True, text=True, check=True, cwd=HERE)
            runs.append(float(out.stdout.strip().splitlines()[-1]))
        times[which] = np.median(runs)
        rows.append([_COMPILES[which], f"{times[which]:.2f} s", f"{times[which] / times['f']:.1f}×",
                     ", ".join(f"{t:.2f}" for t in runs)])
    header = ["first call", "median", "to f's own compile", "each process (s)"]
    return (f"### First call: compile time, each in a fresh process ({processes} processes each)\n\n"
            + table(header, rows))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compile-one", choices=list(_COMPILES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compile_one:
        print(_compile_once(args.compile_one))
        return
    text = (speed([100, 10 ** 4], 3 if args.quick else args.rounds, 0.01 if args.quick else 0.05) + "\n\n"
            + compile_times(1 if args.quick else 3))
    print(text)
    save("adjoint", text)


if __name__ == "__main__":
    main()
