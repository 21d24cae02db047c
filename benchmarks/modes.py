"""Forward vs reverse mode by shape: does mode="auto" pick the faster one?

For f(x) = tanh(W x + b) with W of shape (M, N), times the Python path's Jacobian in
forward and in reverse mode, asks dualad.choose_mode, and marks the pick right when its
time is within 10% of the faster mode's. Also sweeps N/M at N·M = 10^4 for the crossover
plot (benchmarks/results/modes.png, when matplotlib is installed).

--calibrate measures the cost model's constants (seconds per operation and per float) on
this machine and prints them, ready to paste into dualad/modes.py. --python-hessians fits
the Python path's Hessian constants alone and prints the table of that model's estimates
against measured Hessians (also part of the full run).
"""

import argparse
import math

import numba
import numpy as np

import dualad
import dualad.jit
from common import fmt_time, per_call, pyplot, save, save_plot, table
from dualad.modes import _measure, hyper_terms, over_terms

SHAPES = [(1, 1000), (10, 1000), (100, 100), (1000, 10), (1000, 1)]


def layer(n_in, n_out, seed=0):
    """(W, b, x) of the benchmark's tanh(W x + b): W of shape (M, N), scaled by 1/sqrt(N)."""
    rng = np.random.default_rng(seed)
    w, b = rng.normal(size=(n_out, n_in)) / math.sqrt(n_in), rng.normal(size=n_out)
    return w, b, rng.normal(size=n_in)


def problem(n_in, n_out, seed=0):
    w, b, x = layer(n_in, n_out, seed)
    return (lambda x: np.tanh(w @ x + b)), x


def measure(n_in, n_out, min_time):
    f, x = problem(n_in, n_out)
    forward = per_call(dualad.jacobian(f, mode="forward"), x, min_time=min_time, repeats=3)
    reverse = per_call(dualad.jacobian(f, mode="reverse"), x, min_time=min_time, repeats=3)
    return forward, reverse, dualad.choose_mode(f, x)


def run(min_time):
    rows = []
    for n_in, n_out in SHAPES:
        forward, reverse, decision = measure(n_in, n_out, min_time)
        picked = forward if decision.mode == "forward" else reverse
        right = picked <= 1.1 * min(forward, reverse)
        rows.append([f"{n_in} × {n_out}", fmt_time(forward), fmt_time(reverse), decision.mode,
                     "yes" if right else "**no**", decision.reason])
    header = ["N inputs × M outputs", "forward", "reverse", "auto picks", "right?", "reason"]
    return "### Mode selection: Jacobian of tanh(W x + b), Python path\n\n" + table(header, rows)


COMPILED_SIZES = [2, 4, 8, 12, 16, 24, 32, 64, 256, 1000, 10000]


def compiled_gradients(min_time, sizes=COMPILED_SIZES):
    """Per n: the compiled Rosenbrock gradient (scalar code) in forward, reverse and auto mode,
    each called from a compiled loop: [(n, forward, reverse, auto, auto's mode)]."""
    from compiled import _repeat_array, in_loop, rosen
    from dualad.modes import COMPILED_REVERSE_FROM

    kernels = {mode: dualad.grad(rosen, mode=mode) for mode in ("forward", "reverse", "auto")}
    points = []
    for n in sizes:
        x = np.linspace(-1.2, 1.2, n)
        reps = max(10, 100000 // n)
        times = {mode: in_loop(_repeat_array, kernel, x, reps, min_time) for mode, kernel in kernels.items()}
        points.append((n, times["forward"], times["reverse"], times["auto"],
                       "reverse" if n >= COMPILED_REVERSE_FROM else "forward"))
    return points


@numba.njit(cache=True)
def tanh_layer(x, w, b):
    return np.tanh(w @ x + b)


def compiled_jacobians(min_time, shapes=SHAPES):
    """Per (N, M): the compiled Jacobian of tanh(W x + b) in forward, reverse and auto mode,
    called from Python, and f's own time: [(N, M, f, forward, reverse, auto, decision)]."""
    kernels = {mode: dualad.jacobian(tanh_layer, mode=mode) for mode in ("forward", "reverse", "auto")}
    rows = []
    for n_in, n_out in shapes:
        w, b, x = layer(n_in, n_out)
        times = {mode: per_call(kernel, x, w, b, min_time=min_time, repeats=3) for mode, kernel in kernels.items()}
        rows.append((n_in, n_out, per_call(tanh_layer, x, w, b, min_time=min_time, repeats=3), times["forward"],
                     times["reverse"], times["auto"], dualad.choose_mode(tanh_layer, x, w, b)))
    return rows


HESSIAN_SIZES = [2, 4, 8, 16, 24, 32, 48, 64, 128]


@numba.njit(cache=True)
def chained(x):
    """A scalar-code function with transcendental work per input (Rosenbrock is all
    products and sums): the compiled Hessian's other calibration point."""
    s = 0.0
    for i in range(len(x) - 1):
        s += math.exp(0.1 * x[i]) * math.sin(x[i + 1]) + math.log1p(x[i] * x[i])
    return s


def compiled_hessians(min_time, sizes=HESSIAN_SIZES):
    """Per (function, n): the compiled Hessian in HyperDual blocks, forward-over-reverse and
    auto, called from Python, and f's own time: [(name, n, f, forward, over, auto, decision)]."""
    from compiled import rosen

    rows = []
    for name, f in (("rosen", rosen), ("chained", chained)):
        kernels = {mode: dualad.hessian(f, mode=mode) for mode in ("forward", "forward-over-reverse", "auto")}
        for n in sizes:
            x = np.linspace(-1.2, 1.2, n)
            times = {mode: per_call(kernel, x, min_time=min_time, repeats=3) for mode, kernel in kernels.items()}
            rows.append((name, n, per_call(f, x, min_time=min_time, repeats=3), times["forward"],
                         times["forward-over-reverse"], times["auto"], dualad.choose_hessian_mode(f, x)))
    return rows


def hessian_costs(rows):
    """(COMPILED_HYPER_PASS, COMPILED_DUAL_PASS) in evaluations of f: the median time of one
    HyperDual block pass and of one forward-over-reverse recording + sweep, over rows."""
    width, dual_width = dualad.jit.kernels.DEFAULT_CHUNK, dualad.jit.dual_tape.DEFAULT_CHUNK
    hyper, dual = [], []
    for _, n, f_time, forward, over, *_ in rows:
        blocks = math.ceil(n / width)
        hyper.append(forward / f_time / (blocks * (blocks + 1) / 2))
        dual.append(over / f_time / math.ceil(n / dual_width))
    return float(np.median(hyper)), float(np.median(dual))


def compiled_hessian_table(rows):
    lines = []
    for name, n, f_time, forward, over, auto, decision in rows:
        right = auto <= 1.1 * min(forward, over)
        # the model's costs are in evaluations of f: times f's own time, in seconds
        cells = [f"{fmt_time(t)} (est. {fmt_time(decision.costs[mode] * f_time)})"
                 for t, mode in ((forward, "forward"), (over, "forward-over-reverse"))]
        lines.append([name, n] + cells + [fmt_time(auto), decision.mode, "yes" if right else "**no**"])
    return ("### Mode selection, compiled path: Hessians\n\n"
            "Compiled kernels called from Python: HyperDual blocks (forward), forward-over-reverse "
            "(the tape in Duals) and auto (dualad.jit.auto.pick_hessian, by the COMPILED_HYPER_PASS "
            "and COMPILED_DUAL_PASS costs, in evaluations of f: the estimates in brackets are them "
            "times f's measured time; from Python a call also pays a fixed cost the model leaves "
            "out, as it compares the two modes only).\n\n"
            + table(["f", "n", "HyperDual blocks", "forward-over-reverse", "auto", "auto picks", "right?"], lines))


def compiled_jacobian_table(rows):
    lines = []
    for n_in, n_out, _, forward, reverse, auto, decision in rows:
        right = auto <= 1.1 * min(forward, reverse)
        lines.append([f"{n_in} × {n_out}", fmt_time(forward), fmt_time(reverse), fmt_time(auto),
                      decision.mode, "yes" if right else "**no**"])
    return ("### Mode selection, compiled path: Jacobian of tanh(W x + b)\n\n"
            "A numba function's compiled kernels, called from Python: forward (Dual passes), "
            "reverse (the compiled tape) and auto (dualad.jit.auto, which decides once per N).\n\n"
            + table(["N inputs × M outputs", "forward", "reverse", "auto", "auto picks", "right?"], lines))


def compiled_table(points):
    rows = []
    for n, forward, reverse, auto, picked in points:
        right = auto <= 1.1 * min(forward, reverse)
        rows.append([n, fmt_time(forward), fmt_time(reverse), f"{fmt_time(auto)} ({picked})",
                     "yes" if right else "**no**"])
    return ("### Mode selection, compiled path: gradient of the scalar-loop Rosenbrock\n\n"
            "Kernels called from a compiled loop. Compiled auto takes the compiled tape from "
            "dualad.modes.COMPILED_REVERSE_FROM inputs on (where f compiles onto it), forward "
            "mode below; the choice itself costs about 30 ns a call, which shows at small n.\n\n"
            + table(["n", "forward", "reverse (compiled tape)", "auto", "within 10% of the faster?"], rows))


def sweep(min_time):
    points = []
    for n_in in (1, 3, 10, 30, 100, 300, 1000, 3000, 10000):
        n_out = max(1, 10000 // n_in)
        forward, reverse, decision = measure(n_in, n_out, min_time)
        points.append((n_in, n_out, forward, reverse, decision.costs["forward"], decision.costs["reverse"]))
    return points


def plot(points):
    plt = pyplot()
    if plt is None:
        return
    ratio = [n / m for n, m, *_ in points]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(ratio, [p[2] for p in points], "o-", label="forward (measured)")
    ax.loglog(ratio, [p[3] for p in points], "s-", label="reverse (measured)")
    ax.loglog(ratio, [p[4] for p in points], ":", color="C0", label="forward (cost model)")
    ax.loglog(ratio, [p[5] for p in points], ":", color="C1", label="reverse (cost model)")
    ax.set_xlabel("N / M  (N·M = 10⁴)")
    ax.set_ylabel("seconds per Jacobian")
    ax.set_title("tanh(W x + b): forward vs reverse, Python path")
    ax.legend()
    save_plot(fig, "modes")


def _sin_chain(depth):
    def f(x):
        for _ in range(depth):
            x = np.sin(x) * 1.01
        return np.sum(x)
    return f


def _python_hessian(f, x, mode, width, min_time):
    """Seconds per call of the Python path's Hessian of f at x in `mode`, passes of `width`."""
    return per_call(dualad.hessian(f, mode=mode, chunk=width, jit=False), x, min_time=min_time, repeats=3)


def _fit(rows, times):
    # relative least squares: each measurement weighs the same whatever its size
    a = np.array(rows, float) / np.array(times)[:, None]
    coef, *_ = np.linalg.lstsq(a, np.ones(len(times)), rcond=None)
    return np.maximum(coef, 1e-12)


def calibrate_python_hessians(min_time):
    """(HYPER_PASS, OP_HYPER, FLOAT_HYPER), (OVER_PASS, OP_OVER, FLOAT_OVER): least squares
    over chains of elementwise operations of several sizes, depths and pass widths, each
    Hessian timed whole against the sum of its passes' terms (dualad.modes.hyper_terms and
    over_terms)."""
    hyper_rows, hyper_t, over_rows, over_t = [], [], [], []
    for size in (2, 10, 40, 150):
        for depth in (5, 20):
            f, x = _sin_chain(depth), np.linspace(0.1, 0.9, size)
            _, _, ops, floats = _measure(f, (x,), 0)
            for width in sorted({dualad.default_hessian_chunk(size), max(1, size // 4)}):
                hyper_rows.append(hyper_terms(size, width, ops, floats))
                hyper_t.append(_python_hessian(f, x, "forward", width, min_time))
            for width in sorted({dualad.default_chunk(size), max(1, size // 4)}):
                over_rows.append(over_terms(size, width, ops, floats))
                over_t.append(_python_hessian(f, x, "forward-over-reverse", width, min_time))
    return _fit(hyper_rows, hyper_t), _fit(over_rows, over_t)


def _hessian_constants(hyper, over):
    """The fitted Python-path Hessian constants as lines of dualad/modes.py."""
    names = ("HYPER_PASS", "OP_HYPER", "FLOAT_HYPER", "OVER_PASS", "OP_OVER", "FLOAT_OVER")
    return "".join(f"{name} = {value:.2e}\n" for name, value in zip(names, tuple(hyper) + tuple(over)))


PYTHON_HESSIAN_SIZES = [2, 10, 30, 100, 300, 1000]


def python_hessian_table(min_time, sizes=PYTHON_HESSIAN_SIZES, longest=3.0):
    """The Python path's Hessian cost model against measurement, on functions it was not
    fitted on: choose_hessian_mode's estimate and the measured time of each mode (a mode
    whose estimate exceeds `longest` seconds is not run), and whether auto's pick was the
    faster."""
    from python_path import rosen

    def tanh_sum(n):
        w, b, _ = layer(n, n)
        return lambda x: np.sum(np.tanh(w @ x + b) ** 2)

    lines = []
    for name, make in (("vectorised Rosenbrock", lambda n: rosen), ("Σ tanh(W x + b)², W n × n", tanh_sum)):
        for n in sizes:
            f, x = make(n), np.linspace(-1.2, 1.2, n)
            decision = dualad.choose_hessian_mode(f, x, compiled=False)
            cells, measured = [], {}
            for mode in ("forward", "forward-over-reverse"):
                estimate = decision.costs[mode]
                if estimate > longest:
                    cells.append(f"{fmt_time(estimate)} / not run")
                    continue
                measured[mode] = _python_hessian(f, x, mode, None, min_time)
                cells.append(f"{fmt_time(estimate)} / {fmt_time(measured[mode])} "
                             f"({measured[mode] / estimate:.2f}×)")
            picked = measured.get(decision.mode)
            right = picked is not None and picked <= 1.1 * min(measured.values())
            lines.append([name, n] + cells + [decision.mode, "yes" if right else "**no**"])
    return ("### Mode selection, Python path: Hessians, the cost model against measurement\n\n"
            "Estimated / measured seconds per Hessian (measured over estimated in brackets), by "
            "the constants `--calibrate` fits on chains of sines (dualad.modes: HYPER_*, *_HYPER, "
            "OVER_*, *_OVER); the functions here are not among them.\n\n"
            + table(["f", "n", "HyperDual blocks", "forward-over-reverse", "auto picks", "right?"], lines))


def calibrate(min_time):
    """Least-squares fit of the cost model's constants on chains of elementwise operations
    and matrix products of several sizes (ops and floats counted from the tape)."""
    forward_rows, forward_t, record_rows, record_t, sweep_rows, sweep_t = [], [], [], [], [], []
    for size in (1, 10, 100, 1000, 10000):
        for depth in (5, 20):
            def f(x, depth=depth):
                for _ in range(depth):
                    x = np.sin(x) * 1.01
                return np.sum(x)
            x = np.linspace(0.1, 0.9, size)
            _, _, ops, floats = _measure(f, (x,), 0)
            for width in sorted({1, min(size, 8), min(size, 64)}):
                seed = np.zeros((size, width))
                seed[np.arange(min(size, width)), np.arange(min(size, width))] = 1.0
                one_pass = per_call(lambda: f(dualad.Dual(x, seed)), min_time=min_time, repeats=3)
                forward_rows.append([ops, floats * width])
                forward_t.append(one_pass)
            value, pullback = dualad.vjp(f, x)
            record = per_call(lambda: dualad.vjp(f, x), min_time=min_time, repeats=3)
            sweep = per_call(pullback, 1.0, min_time=min_time, repeats=3)
            record_rows.append([ops, floats])
            record_t.append(record)
            sweep_rows.append([ops, floats])
            sweep_t.append(sweep)

    (op_f, float_f), (op_r, float_r), (op_s, float_s) = (_fit(forward_rows, forward_t),
                                                         _fit(record_rows, record_t),
                                                         _fit(sweep_rows, sweep_t))
    hyper, over = calibrate_python_hessians(min_time)
    # the transforms' fixed costs: a one-op function, one pass (N = 1) and 1000 sweeps (M = 1000)
    x = np.linspace(0.1, 0.9, 1000)
    one_pass = per_call(dualad.jacobian(lambda t: t * 2.0, mode="forward"), x[:1], min_time=min_time)
    sweeps = per_call(dualad.jacobian(lambda t: t * 2.0, mode="reverse"), x, min_time=min_time)
    pass_fixed = max(one_pass - op_f - 2 * float_f, 0.0)
    sweep_fixed = max(sweeps / 1000 - op_s - 2000 * float_s / 1000, 0.0)
    points = compiled_gradients(min_time, sizes=range(2, 41, 2))
    faster = [n for n, forward, reverse, *_ in points if reverse < forward]
    crossover = next(n for n in faster if all(m in faster for m in range(n, 41, 2)))
    # compiled Jacobians in units of one evaluation of f: a forward pass, and recording + M sweeps
    rows = compiled_jacobians(min_time, shapes=SHAPES + [(30, 30), (300, 3), (3, 300)])
    width = dualad.jit.kernels.DEFAULT_CHUNK
    per_pass = np.median([fwd / f_time / math.ceil(n / width) for n, m, f_time, fwd, *_ in rows])
    a = np.array([[1.0, m] for n, m, *_ in rows])
    record, per_sweep = np.maximum(np.linalg.lstsq(a, np.array([rev / f_time for n, m, f_time, _, rev, *_ in rows]),
                                                   rcond=None)[0], 0.1)
    hyper_pass, dual_pass = hessian_costs(compiled_hessians(min_time))
    return (f"PASS = {pass_fixed:.2e}\nSWEEP = {sweep_fixed:.2e}\nOP_FORWARD = {op_f:.2e}\nFLOAT_FORWARD = {float_f:.2e}\nOP_RECORD = {op_r:.2e}\n"
            f"FLOAT_RECORD = {float_r:.2e}\nOP_SWEEP = {op_s:.2e}\nFLOAT_SWEEP = {float_s:.2e}\n"
            + _hessian_constants(hyper, over)
            + f"COMPILED_REVERSE_FROM = {crossover}\nCOMPILED_PASS = {per_pass:.2g}\n"
            f"COMPILED_RECORD = {record:.2g}\nCOMPILED_SWEEP = {per_sweep:.2g}\n"
            f"COMPILED_HYPER_PASS = {hyper_pass:.2g}\nCOMPILED_DUAL_PASS = {dual_pass:.2g}")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--hessians", action="store_true",
                        help="only the compiled Hessians' table and their two cost constants")
    parser.add_argument("--python-hessians", action="store_true",
                        help="only the Python path's Hessian constants, fitted, and its table of "
                             "the model (as in dualad.modes) against measurement")
    args = parser.parse_args(argv)
    min_time = 0.01 if args.quick else 0.05
    if args.python_hessians:
        hyper, over = calibrate_python_hessians(min_time)
        print(_hessian_constants(hyper, over))
        print(python_hessian_table(min_time))
        return
    if args.hessians:
        rows = compiled_hessians(min_time)
        hyper_pass, dual_pass = hessian_costs(rows)
        print(compiled_hessian_table(rows))
        print(f"COMPILED_HYPER_PASS = {hyper_pass:.2g}\nCOMPILED_DUAL_PASS = {dual_pass:.2g}")
        return
    if args.calibrate:
        print(calibrate(min_time))
        return
    text = (run(min_time) + "\n\n" + compiled_jacobian_table(compiled_jacobians(min_time)) + "\n\n"
            + compiled_table(compiled_gradients(min_time)) + "\n\n"
            + compiled_hessian_table(compiled_hessians(min_time)) + "\n\n"
            + python_hessian_table(min_time))
    print(text)
    save("modes", text)
    if not args.quick:
        plot(sweep(min_time))


if __name__ == "__main__":
    main()
