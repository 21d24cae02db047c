"""dualad against the other AD tools, in one process, on the same inputs.

Tools: dualad (compiled forward and reverse kernels of a numba function; the Python path in
forward, reverse and auto mode), JAX (jit of grad/jacfwd/jacrev/hessian, float64),
torch.func, autograd, num-dual and finite differences (scipy.optimize.approx_fprime). The
limit is a hand-written analytic derivative compiled with numba; every cell shows the
median time per call from Python and its ratio to the limit. A peer that is not installed
(pip install -e ".[peers]") is skipped with a note; a tool that takes longer than the
budget at some size is not run at larger sizes.

Problems: Rosenbrock gradient (n = 2 … 10^4), Rosenbrock Hessian (n = 10, 100), Jacobian
of tanh(W x + b) on the mode benchmark's (N, M) shapes, the second derivative of
log x + x³ sin x; plus the cold start (first call, compilation included) per tool.
Results: benchmarks/results/peers.md and peers.png (gradient time against n, per tool).
"""

import argparse
import importlib
import math
import time

import numba
import numpy as np

import dualad
from common import fmt_time, per_call, pyplot, save, save_plot, table
from compiled import rosen as rosen_loop  # the scalar loop, and the limit's derivatives of it
from compiled import rosen_grad_hand, rosen_hess_hand
from modes import SHAPES, layer


# ---- the problems, written once per array language -----------------------------------------------------
def rosen_numpy(x, np=np):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_scalars(x):
    """For num-dual, whose numbers are scalars: a Python loop over a list."""
    return sum(100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2 for i in range(len(x) - 1))


def scalar_numpy(t, np=np):
    return np.log(t) + t ** 3 * np.sin(t)


# ---- the limit: hand-written derivatives, compiled (Rosenbrock's: compiled.py) ----------------------------
@numba.njit(cache=True)
def tanh_jac_hand(w, b, x):
    y = np.tanh(w @ x + b)
    return (1.0 - y * y).reshape(-1, 1) * w


@numba.njit(cache=True)
def scalar_second_hand(t):
    s, c = math.sin(t), math.cos(t)
    return -1.0 / (t * t) + 6.0 * t * s + 6.0 * t * t * c - t ** 3 * s


# ---- tools: each builds a callable per problem, or None where it has no such transform ------------------
class Tool:
    name = ""
    module = None  # the peer's import name: skipped with a note when missing
    tolerance = 0.0  # how far from the limit's result its results may be (relative), beyond rtol;
    # None: not checked

    def available(self):
        if self.module is None:
            return True
        try:
            importlib.import_module(self.module)
            return True
        except ImportError:
            return False

    def rosen_grad(self):
        return None

    def rosen_hess(self):
        return None

    def tanh_jac(self, w, b):
        return None

    def scalar_second(self):
        return None


class Hand(Tool):
    name = "hand-written, numba (the limit)"

    def rosen_grad(self):
        return rosen_grad_hand

    def rosen_hess(self):
        return rosen_hess_hand

    def tanh_jac(self, w, b):
        return lambda x: tanh_jac_hand(w, b, x)

    def scalar_second(self):
        return scalar_second_hand


class DualadCompiled(Tool):
    def __init__(self, mode):
        self.mode = mode
        self.name = f"dualad, compiled {mode}"

    def rosen_grad(self):
        return dualad.grad(rosen_loop, mode=self.mode)

    def rosen_hess(self):  # HyperDuals (there is no compiled forward-over-reverse yet)
        return dualad.hessian(rosen_loop) if self.mode != "reverse" else None

    def tanh_jac(self, w, b):
        kernel = dualad.jacobian(_tanh_layer, mode=self.mode)
        return lambda x: kernel(x, w, b)

    def scalar_second(self):
        return dualad.second_derivative(_scalar_compiled) if self.mode != "reverse" else None


@numba.njit(cache=True)
def _tanh_layer(x, w, b):
    return np.tanh(w @ x + b)


@numba.njit(cache=True)
def _scalar_compiled(t):
    return math.log(t) + t ** 3 * math.sin(t)


class DualadPython(Tool):
    def __init__(self, mode):
        self.mode = mode
        self.name = f"dualad, Python {mode}"

    def rosen_grad(self):
        return dualad.grad(rosen_numpy, mode=self.mode)

    def rosen_hess(self):
        mode = {"reverse": "forward-over-reverse"}.get(self.mode, self.mode)
        return dualad.hessian(rosen_numpy, mode=mode)

    def tanh_jac(self, w, b):
        return dualad.jacobian(lambda x: np.tanh(w @ x + b), mode=self.mode)

    def scalar_second(self):
        return dualad.second_derivative(scalar_numpy) if self.mode != "reverse" else None


class Jax(Tool):
    name = "JAX (jit, float64)"
    module = "jax"

    def _setup(self):
        import jax
        jax.config.update("jax_enable_x64", True)
        return jax, jax.numpy

    def _wrap(self, fn):
        jax, jnp = self._setup()
        return lambda x: np.asarray(fn(jnp.asarray(x)))

    def rosen_grad(self):
        jax, jnp = self._setup()
        return self._wrap(jax.jit(jax.grad(lambda x: rosen_numpy(x, np=jnp))))

    def rosen_hess(self):
        jax, jnp = self._setup()
        return self._wrap(jax.jit(jax.hessian(lambda x: rosen_numpy(x, np=jnp))))

    def tanh_jac(self, w, b):
        jax, jnp = self._setup()
        layer = (lambda x: jnp.tanh(jnp.asarray(w) @ x + jnp.asarray(b)))
        transform = jax.jacfwd if w.shape[1] <= w.shape[0] else jax.jacrev  # the faster mode
        return self._wrap(jax.jit(transform(layer)))

    def scalar_second(self):
        jax, jnp = self._setup()
        second = jax.jit(jax.grad(jax.grad(lambda t: scalar_numpy(t, np=jnp))))
        return lambda t: float(second(t))


class TorchFunc(Tool):
    name = "torch.func (float64)"
    module = "torch"

    def _wrap(self, fn):
        import torch
        return lambda x: fn(torch.as_tensor(x, dtype=torch.float64)).numpy()

    def rosen_grad(self):
        import torch.func
        return self._wrap(torch.func.grad(rosen_numpy_torch))

    def rosen_hess(self):
        import torch.func
        return self._wrap(torch.func.hessian(rosen_numpy_torch))

    def tanh_jac(self, w, b):
        import torch
        import torch.func
        wt, bt = torch.as_tensor(w), torch.as_tensor(b)
        transform = torch.func.jacfwd if w.shape[1] <= w.shape[0] else torch.func.jacrev
        return self._wrap(transform(lambda x: torch.tanh(wt @ x + bt)))

    def scalar_second(self):
        import torch
        import torch.func
        second = torch.func.grad(torch.func.grad(lambda t: torch.log(t) + t ** 3 * torch.sin(t)))
        return lambda t: float(second(torch.tensor(t, dtype=torch.float64)))


def rosen_numpy_torch(x):
    import torch
    return torch.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


class Autograd(Tool):
    name = "autograd"
    module = "autograd"

    def rosen_grad(self):
        import autograd
        import autograd.numpy as anp
        return autograd.grad(lambda x: rosen_numpy(x, np=anp))

    def rosen_hess(self):
        import autograd
        import autograd.numpy as anp
        return autograd.hessian(lambda x: rosen_numpy(x, np=anp))

    def tanh_jac(self, w, b):
        import autograd
        import autograd.numpy as anp
        return autograd.jacobian(lambda x: anp.tanh(anp.dot(w, x) + b))

    def scalar_second(self):
        import autograd
        import autograd.numpy as anp
        return autograd.grad(autograd.grad(lambda t: scalar_numpy(t, np=anp)))


class NumDual(Tool):
    name = "num-dual"
    module = "num_dual"

    def rosen_grad(self):
        import num_dual
        return lambda x: np.asarray(num_dual.gradient(rosen_scalars, list(x))[1])

    def rosen_hess(self):
        import num_dual
        return lambda x: np.asarray(num_dual.hessian(rosen_scalars, list(x))[2])

    def tanh_jac(self, w, b):
        import num_dual

        def layer(x):
            return [(sum(w[i, j] * x[j] for j in range(len(x))) + b[i]).tanh() for i in range(w.shape[0])]
        return lambda x: np.asarray(num_dual.jacobian(layer, list(x))[1])

    def scalar_second(self):
        import num_dual
        return lambda t: num_dual.second_derivative(lambda s: s.log() + s ** 3 * s.sin(), t)[2]


class FiniteDifferences(Tool):
    name = "finite differences (scipy approx_fprime)"
    module = "scipy"
    tolerance = None  # timed, not checked: its error (truncation and round-off) is accuracy.py's subject

    def rosen_grad(self):
        from scipy.optimize import approx_fprime
        return lambda x: approx_fprime(x, rosen_numpy)

    def tanh_jac(self, w, b):
        from scipy.optimize import approx_fprime
        return lambda x: approx_fprime(x, lambda z: np.tanh(w @ z + b))


TOOLS = [Hand(), DualadCompiled("forward"), DualadCompiled("reverse"), DualadCompiled("auto"),
         DualadPython("forward"),
         DualadPython("reverse"), DualadPython("auto"), Jax(), TorchFunc(), Autograd(), NumDual(),
         FiniteDifferences()]


# ---- measuring -----------------------------------------------------------------------------------------------
def _timed(make, arg, min_time, budget, expected, rtol):
    """(seconds per call, cold seconds) of make()(arg), or a short reason it was not timed.
    The result must match the limit's (expected) to rtol."""
    start = time.perf_counter()
    fn = make()
    if fn is None:
        return "—"
    result = fn(arg)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    fn(arg)
    if time.perf_counter() - start > budget:  # a warm call: compilation is not the budget's
        return f"over {budget:g} s"
    if expected is not None:
        # squeezed: approx_fprime drops the axis of a single input
        np.testing.assert_allclose(np.squeeze(np.asarray(result, float)), np.squeeze(expected),
                                   rtol=rtol, atol=rtol)
    return per_call(fn, arg, min_time=min_time, repeats=3), cold


def _too_slow_for_more(measured, budget):
    """Whether a tool should skip the larger cases of a row: its last case was over budget,
    or took over a twentieth of it per call (the next size costs at least as much more)."""
    return isinstance(measured, str) and measured.startswith("over") or (
        isinstance(measured, tuple) and measured[0] > budget / 20)


def _cell(measured, limit):
    if isinstance(measured, str):
        return measured
    seconds = measured[0]
    return f"{fmt_time(seconds)} ({seconds / limit:.3g}×)" if limit else fmt_time(seconds)


def _problem_table(title, columns, cases, tools, min_time, budget, timings):
    """One Markdown table: a row per tool, a column per case (label, argument, maker, rtol)."""
    rows, limits = [], {}
    too_slow = set()
    for tool in tools:
        row = [tool.name]
        for label, arg, maker, rtol in cases:
            if tool.name in too_slow:
                row.append("not run (slow)")
                continue
            expected = limits.get(label, (None, None))[1]
            measured = _timed(lambda: maker(tool), arg, min_time, budget,
                              None if tool.tolerance is None else expected,
                              None if tool.tolerance is None else max(rtol, tool.tolerance))
            if isinstance(tool, Hand) and not isinstance(measured, str):
                limits[label] = (measured[0], np.asarray(maker(tool)(arg), float))
            if _too_slow_for_more(measured, budget):
                too_slow.add(tool.name)
            timings.setdefault(title, {}).setdefault(tool.name, {})[label] = measured
            row.append(_cell(measured, limits.get(label, (None,))[0]))
        rows.append(row)
    return f"### {title}\n\n" + table(["tool"] + columns, rows)


def run(sizes, hessian_sizes, min_time, budget):
    tools = [tool for tool in TOOLS if tool.available()]
    missing = [tool.name for tool in TOOLS if not tool.available()]
    timings = {}
    sections = []
    grad_cases = [(f"n = {n}", np.linspace(-1.2, 1.2, n), lambda tool: tool.rosen_grad(), 1e-6)
                  for n in sizes]
    sections.append(_problem_table("Rosenbrock gradient", [c[0] for c in grad_cases], grad_cases,
                                   tools, min_time, budget, timings))
    hess_cases = [(f"n = {n}", np.linspace(-1.2, 1.2, n), lambda tool: tool.rosen_hess(), 1e-9)
                  for n in hessian_sizes]
    sections.append(_problem_table("Rosenbrock Hessian", [c[0] for c in hess_cases], hess_cases,
                                   tools, min_time, budget, timings))
    jac_cases = []
    for n_in, n_out in SHAPES:
        w, b, x = layer(n_in, n_out)
        jac_cases.append((f"{n_in} × {n_out}", x, lambda tool, w=w, b=b: tool.tanh_jac(w, b), 1e-6))
    sections.append(_problem_table("Jacobian of tanh(W x + b), N inputs × M outputs",
                                   [c[0] for c in jac_cases], jac_cases, tools, min_time, budget, timings))
    second_case = [("t = 1.5", 1.5, lambda tool: tool.scalar_second(), 1e-9)]
    sections.append(_problem_table("Second derivative of log t + t³ sin t", ["t = 1.5"], second_case,
                                   tools, min_time, budget, timings))
    sections.append(_cold_table(timings, f"n = {sizes[-1] if sizes[-1] <= 1000 else 1000}"))
    note = ("Peers not installed here (pip install -e \".[peers]\"): " + ", ".join(missing)
            if missing else "All peers installed.")
    return ("## dualad and its peers\n\nMedian time per call from Python (ratio to the hand-written "
            "numba derivative). " + note + "\n\n" + "\n\n".join(sections)), timings


def _cold_table(timings, label):
    """The first call of each tool's Rosenbrock gradient, compilation and tracing included."""
    rows = []
    for tool, cells in timings["Rosenbrock gradient"].items():
        for case in ("n = 2", label):
            measured = cells.get(case)
            if isinstance(measured, tuple):
                rows.append([tool, case, f"{measured[1]:.3g} s"])
    return ("### Cold start: the first Rosenbrock gradient (tracing and compiling included)\n\n"
            + table(["tool", "size", "first call"], rows))


def plot(timings, sizes):
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for tool, cells in timings["Rosenbrock gradient"].items():
        points = [(n, cells[f"n = {n}"][0]) for n in sizes if isinstance(cells.get(f"n = {n}"), tuple)]
        if points:
            style = "-" if tool.startswith("dualad") else ("k--" if tool.startswith("hand") else ":")
            ax.loglog(*zip(*points), style, marker="o", markersize=3, label=tool)
    ax.set_xlabel("n")
    ax.set_ylabel("seconds per gradient, called from Python")
    ax.set_title("Rosenbrock gradient")
    ax.legend(fontsize=7)
    save_plot(fig, "peers")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = [2, 100, 1000] if args.quick else [2, 10, 100, 1000, 10000]
    text, timings = run(sizes, [10] if args.quick else [10, 100], min_time=0.01 if args.quick else 0.1,
                        budget=2.0 if args.quick else 10.0)
    print(text)
    save("peers", text)
    plot(timings, sizes)


if __name__ == "__main__":
    main()
