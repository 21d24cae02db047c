"""Compiled path: derivative kernels against hand-written analytic derivatives in numba.

Each kernel is called many times from inside a compiled loop (as Newton's method or an
optimiser would), in the same process as the hand-written code it is compared with; the
ratio is dualad's time over the hand-written one. Also: per-call latency from Python and
the cold compile time of each kernel (numba's on-disk cache off for the kernel).
"""

import argparse
import math
import time

import numba
import numpy as np

import dualad
import dualad.jit
from common import fmt_time, per_call, save, table


@numba.njit
def rosen(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


@numba.njit
def rosen_grad_hand(x):
    g = np.zeros_like(x)
    for i in range(len(x) - 1):
        t = x[i + 1] - x[i] ** 2
        g[i] += -400.0 * x[i] * t - 2.0 * (1.0 - x[i])
        g[i + 1] += 200.0 * t
    return g


@numba.njit
def rosen_hess_hand(x):
    n = len(x)
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        h[i + 1, i + 1] += 200.0
        h[i, i + 1] = h[i + 1, i] = -400.0 * x[i]
    return h


@numba.njit
def rosen_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@numba.njit
def rosen_hvp_hand(x, v):
    """Row i of the tridiagonal Hessian times v, each entry written once (4× faster at n = 10⁶
    than accumulating both neighbours' terms into a zeroed array)."""
    n = len(x)
    hv = np.empty_like(x)
    for i in range(n):
        s = 0.0
        if i < n - 1:
            s += (1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0) * v[i] - 400.0 * x[i] * v[i + 1]
        if i > 0:
            s += 200.0 * v[i] - 400.0 * x[i - 1] * v[i - 1]
        hv[i] = s
    return hv


@numba.njit
def textbook(x):
    return math.log(x[0]) + x[0] * x[1] - math.sin(x[1])


@numba.njit
def textbook_grad_hand(x):
    g = np.empty(2)
    g[0] = 1.0 / x[0] + x[1]
    g[1] = x[0] - math.cos(x[1])
    return g


@numba.njit
def oscillator(p):
    """Final energy of a damped, sinusoidally forced oscillator: 1000 explicit Euler steps."""
    k, c, amplitude, omega = p[0], p[1], p[2], p[3]
    x, v, dt = 1.0, 0.0, 0.01
    for step in range(1000):
        a = -k * x - c * v + amplitude * math.sin(omega * step * dt)
        x, v = x + dt * v, v + dt * a
    return 0.5 * v * v + 0.5 * k * x * x


@numba.njit
def robertson(y):
    """Robertson's stiff chemical kinetics, the right-hand side of y' = f(y) (3 species)."""
    out = np.empty(3)
    out[0] = -0.04 * y[0] + 1e4 * y[1] * y[2]
    out[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2
    out[2] = 3e7 * y[1] ** 2
    return out


@numba.njit
def robertson_jac_hand(y):
    jac = np.empty((3, 3))
    jac[0, 0], jac[0, 1], jac[0, 2] = -0.04, 1e4 * y[2], 1e4 * y[1]
    jac[1, 0], jac[1, 1], jac[1, 2] = 0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]
    jac[2, 0], jac[2, 1], jac[2, 2] = 0.0, 6e7 * y[1], 0.0
    return jac


@numba.njit
def _repeat_matrix_sum(fn, x, reps):
    total = 0.0
    for _ in range(reps):
        x[0] += 1e-15
        total += np.sum(fn(x))  # every entry used: none of the reference's work is dead code
    return total


@numba.njit
def _repeat_array(fn, x, reps):
    total = 0.0
    for _ in range(reps):
        x[0] += 1e-15  # perturb the input so that no work can be hoisted out of the loop
        total += fn(x)[0]
    return total


@numba.njit
def _repeat_matrix(fn, x, reps):
    total = 0.0
    for _ in range(reps):
        x[0] += 1e-15
        total += fn(x)[0, 0]
    return total


@numba.njit
def _repeat_scalar(fn, x, reps):
    total = 0.0
    for _ in range(reps):
        x[0] += 1e-15
        total += fn(x)
    return total


@numba.njit
def _repeat_with_direction(fn, x, reps):
    v = np.linspace(-1.0, 1.0, len(x))
    total = 0.0
    for _ in range(reps):
        x[0] += 1e-15
        total += fn(x, v)[0]
    return total


def in_loop(repeat, fn, x, reps, min_time):
    """Seconds per call of fn(x) inside a compiled loop of `reps` calls."""
    return per_call(lambda: repeat(fn, x.copy(), reps), min_time=min_time) / reps


def _row(name, make_kernel, reference, x, repeat, reps, min_time, extra=(), expected=None,
         reference_repeat=None):
    """One table row: kernel vs reference inside a compiled loop, from Python, cold compile.

    The kernel's result must equal `expected` (default: the reference's result)."""
    start = time.perf_counter()
    kernel = make_kernel()
    kernel(x, *extra)
    cold = time.perf_counter() - start
    expected = reference(x, *extra) if expected is None else expected
    np.testing.assert_allclose(kernel(x, *extra), expected, rtol=1e-12, atol=1e-12)
    t_reference = in_loop(reference_repeat or repeat, reference, x, reps, min_time)
    t_kernel = in_loop(repeat, kernel, x, reps, min_time)
    return [name, fmt_time(t_reference), fmt_time(t_kernel), f"{t_kernel / t_reference:.2f}×",
            fmt_time(per_call(kernel, x, *extra, min_time=min_time)), f"{cold:.2f} s"]


def run(sizes, min_time, reps):
    rows = []
    default = dualad.jit.kernels.DEFAULT_CHUNK
    cases = [(f"Rosenbrock gradient, n = {n}", rosen, rosen_grad_hand, np.linspace(-1.2, 1.2, n))
             for n in sizes]
    cases.append(("textbook ln x1 + x1·x2 − sin x2, gradient", textbook, textbook_grad_hand,
                  np.array([2.0, 5.0])))
    cases += [(f"vectorised Rosenbrock (arrays of duals), gradient, n = {n}", rosen_vec,
               rosen_grad_hand, np.linspace(-1.2, 1.2, n)) for n in sizes if n <= 100]
    for name, f, hand, x in cases:
        # the default chunk, and chunk = n where n is small enough for one pass
        for chunk in [None] + ([x.size] if x.size <= 12 and x.size != default else []):
            rows.append(_row(f"{name}, forward (chunk {chunk or default})",
                             lambda: dualad.grad(f, chunk=chunk, mode="forward"),
                             hand, x, _repeat_array, reps, min_time))
    for n in [n for n in sizes if n >= 100] + [10 ** 4]:
        for mode in ("reverse", "auto"):
            rows.append(_row(f"Rosenbrock gradient, n = {n}, {mode} mode"
                             + (" (compiled tape)" if mode == "reverse" else ""),
                             lambda: dualad.grad(rosen, mode=mode), rosen_grad_hand,
                             np.linspace(-1.2, 1.2, n), _repeat_array, max(reps // 10, 1), min_time))
    for f, kind in ((rosen, "HyperDual"), (rosen_vec, "arrays of HyperDuals")):
        for chunk in (10, None):
            rows.append(_row(f"Rosenbrock Hessian ({kind}), n = 10 (chunk {chunk or default})",
                             lambda: dualad.hessian(f, chunk=chunk), rosen_hess_hand,
                             np.linspace(-1.2, 1.2, 10), _repeat_matrix, reps, min_time))
    for n in (10, 100):
        x = np.linspace(-1.2, 1.2, n)
        rows.append(_row(f"Rosenbrock Hessian-vector product, n = {n} (chunk {default})",
                         lambda: dualad.hvp(rosen), rosen_hvp_hand, x, _repeat_with_direction,
                         reps, min_time, extra=(np.linspace(-1.0, 1.0, n),)))
    p = np.array([4.0, 0.3, 0.5, 1.7])
    rows.append(_row("oscillator, 1000 Euler steps, 4 parameters: gradient vs f itself",
                     lambda: dualad.grad(oscillator, chunk=4), oscillator, p, _repeat_array,
                     max(reps // 100, 1), min_time, expected=dualad.grad(oscillator, jit=False)(p),
                     reference_repeat=_repeat_scalar))
    y = np.array([1.0, 2e-5, 1e-2])
    for chunk in (None, 3):
        rows.append(_row(f"Robertson stiff ODE, 3 × 3 Jacobian of the right-hand side, forward (chunk {chunk or default})",
                         lambda: dualad.jacobian(robertson, mode="forward", chunk=chunk), robertson_jac_hand,
                         y, _repeat_matrix_sum, reps, min_time))
    header = ["problem", "hand-written (numba)", "dualad kernel", "ratio", "dualad, called from Python",
              "cold compile"]
    return "### Compiled path: derivative kernels called from a compiled loop\n\n" + table(header, rows)


# ---- where the compiled tape's time goes (issue 16 item 4) ----------------------------------------
def _tape_phases():
    """Kernels that stop the tape gradient of rosen after each phase: the recording alone (the
    kernel returns f's value), and the recording plus the sweep's scratch (the adjoints zeroed,
    the gradient copied out) without the sweep itself. Internal API: dualad.jit.tape._taped
    with other finishing steps than the gradient's."""
    from numba.core.extending import register_jitable
    from dualad.jit import tape

    @register_jitable
    def recorded(nodes, size, out, n_in, adjoint, x, cotangent):
        return tape.read_out(out)[0]

    @register_jitable
    def scratch(nodes, size, out, n_in, adjoint, x, cotangent):
        adjoint[:max(size, n_in)] = 0.0
        return tape.read_out(out)[0] + adjoint[:n_in].copy()[n_in - 1]

    return tape._taped(rosen, recorded, None), tape._taped(rosen, scratch, None)


def tape_breakdown(sizes, rounds):
    """Per call inside a compiled loop, for the Rosenbrock gradient: hand-written, f on floats,
    recording alone, recording + the sweep's scratch, the whole compiled tape gradient; median
    ± half the interquartile range of `rounds` interleaved rounds, and the tape's ratio to
    hand-written measured in each round."""
    record, scratch = _tape_phases()
    gradient = dualad.grad(rosen, mode="reverse")
    rows = []
    for n in sizes:
        x = np.linspace(-1.2, 1.2, n)
        np.testing.assert_allclose(gradient(x), rosen_grad_hand(x), rtol=1e-12, atol=1e-12)
        reps = max(300_000 // n, 20)
        times = np.array([[in_loop(_repeat_array, rosen_grad_hand, x, reps, 0.0),
                           in_loop(_repeat_scalar, rosen, x, reps, 0.0),
                           in_loop(_repeat_scalar, record, x, reps, 0.0),
                           in_loop(_repeat_scalar, scratch, x, reps, 0.0),
                           in_loop(_repeat_array, gradient, x, reps, 0.0)] for _ in range(rounds)])
        # spread: half the interquartile range (a round preempted by another process on this
        # shared machine would make half the full range meaningless)
        low, median, high = np.percentile(times, [25, 50, 75], axis=0)
        ratios = np.percentile(times[:, 4] / times[:, 0], [25, 50, 75])
        cells = [f"{fmt_time(m)} ± {fmt_time((h - lo) / 2)}" for lo, m, h in zip(low, median, high)]
        rows.append([f"n = {n}"] + cells + [fmt_time(median[4] - median[3]),
                     f"{ratios[1]:.2f}× ± {(ratios[2] - ratios[0]) / 2:.2f}"])
    header = ["Rosenbrock gradient", "hand-written", "f on floats", "recording", "+ zeroing/copy",
              "tape gradient", "sweep (difference)", "tape / hand-written"]
    return "### Compiled tape: where the time goes\n\n" + table(header, rows)


# ---- second order: forward-over-reverse against HyperDuals and hand-written (issue 16) ------------
def _spread(times):
    """median ± half the interquartile range (a round preempted on the shared machine would
    make half the full range meaningless)."""
    low, median, high = np.percentile(times, [25, 50, 75])
    return median, (high - low) / 2


def _cell(times, ratio=False):
    median, half = _spread(times)
    return f"{median:.2f}× ± {half:.2f}" if ratio else f"{fmt_time(median)} ± {fmt_time(half)}"


def second_order(rounds, min_time=0.02):
    """Rosenbrock hvp and Hessian, each kernel against the hand-written analytic one in the
    same round: hvp n = 100 inside a compiled loop, hvp n = 10^4 and Hessians n = 10, 100
    from Python; `rounds` interleaved rounds, median ± half the interquartile range."""
    cases = []
    for n in (100,):
        x, v = np.linspace(-1.2, 1.2, n), np.linspace(-1.0, 1.0, n)
        reps = 2000
        for mode in ("auto", "forward-over-reverse", "forward"):
            kernel = dualad.hvp(rosen, mode=mode)
            cases.append((f"hvp, n = {n}, inside compiled code, mode {mode}", kernel(x, v), rosen_hvp_hand(x, v),
                          lambda k=kernel, x=x, reps=reps: in_loop(_repeat_with_direction, k, x, reps, 0.0),
                          lambda x=x, reps=reps: in_loop(_repeat_with_direction, rosen_hvp_hand, x, reps, 0.0)))
    n = 10 ** 4
    x, v = np.linspace(-1.2, 1.2, n), np.linspace(-1.0, 1.0, n)
    for mode in ("auto", "forward-over-reverse"):
        kernel = dualad.hvp(rosen, mode=mode)
        cases.append((f"hvp, n = {n}, from Python, mode {mode}", kernel(x, v), rosen_hvp_hand(x, v),
                      lambda k=kernel, x=x, v=v: per_call(k, x, v, min_time=min_time, repeats=1),
                      lambda x=x, v=v: per_call(rosen_hvp_hand, x, v, min_time=min_time, repeats=1)))
    for n in (10, 100):
        x = np.linspace(-1.2, 1.2, n)
        for mode in ("auto", "forward-over-reverse", "forward"):
            kernel = dualad.hessian(rosen, mode=mode)
            cases.append((f"Hessian, n = {n}, from Python, mode {mode}", kernel(x), rosen_hess_hand(x),
                          lambda k=kernel, x=x: per_call(k, x, min_time=min_time, repeats=1),
                          lambda x=x: per_call(rosen_hess_hand, x, min_time=min_time, repeats=1)))
    for name, got, expected, *_ in cases:
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-10, err_msg=name)
    times = np.array([[(measure(), hand()) for _, _, _, measure, hand in cases] for _ in range(rounds)])
    rows = [[name, _cell(times[:, k, 1]), _cell(times[:, k, 0]), _cell(times[:, k, 0] / times[:, k, 1], True)]
            for k, (name, *_) in enumerate(cases)]
    return (f"### Compiled second order: Rosenbrock hvp and Hessian ({rounds} interleaved rounds)\n\n"
            + table(["problem", "hand-written (numba)", "dualad kernel", "ratio"], rows))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tape", action="store_true",
                        help="only the compiled tape's breakdown (printed, not saved)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--second-order", action="store_true",
                        help="only the hvp and Hessian rounds (printed, not saved)")
    args = parser.parse_args(argv)
    if args.second_order:
        print(second_order(args.rounds))
        return
    if args.tape:
        print(tape_breakdown([100, 1000, 10 ** 4], args.rounds))
        return
    sizes = [2, 10, 100] if args.quick else [2, 10, 100, 1000]
    text = (run(sizes, min_time=0.01 if args.quick else 0.1, reps=1000) + "\n\n"
            + second_order(3 if args.quick else args.rounds))
    print(text)
    save("compiled", text)


if __name__ == "__main__":
    main()
