"""dualad against the other AD tools, in one process, on the same inputs.

Tools: dualad (compiled forward and reverse kernels of a numba function; the Python path in
forward, reverse and auto mode), JAX (jit of grad/jacfwd/jacrev/hessian, float64),
torch.func, autograd, num-dual and finite differences (scipy.optimize.approx_fprime). The
limit is a hand-written analytic derivative compiled with numba; every cell shows the
median time per call from Python and its ratio to the limit. A peer that is not installed
(pip install -e ".[peers]") is skipped with a note; a tool that takes longer than the
budget at some size is not run at larger sizes.

Sections (--section; results/peers.md keeps one part per section, so each re-runs alone):
  first-order  Rosenbrock gradient (n = 2 … 10^4), Jacobian of tanh(W x + b) on the mode
               benchmark's (N, M) shapes, the second derivative of log x + x³ sin x, and the
               cold start (first call, compilation included) per tool; peers.png.
  hessian      Rosenbrock Hessian (n = 2 … 1000) and Hessian-vector product (n = 100 … 10^6):
               dualad compiled and Python path in every mode, JAX (device arrays and NumPy
               in/out, default threads or one), torch.func, autograd, num-dual; median ± half
               the interquartile range of several rounds, each result checked first; the
               compiled kernels also inside a compiled loop.
"""

import argparse
import contextlib
import importlib
import math
import os
import signal
import time

import numba
import numpy as np

import dualad
from common import fmt_time, per_call, per_call_spread, pyplot, save_part, save_plot, table
from compiled import rosen as rosen_loop  # the scalar loop, and the limit's derivatives of it
from compiled import rosen_grad_hand, rosen_hess_hand, rosen_hvp_hand
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

    def tanh_jac(self, w, b):
        return None

    def scalar_second(self):
        return None


class Hand(Tool):
    name = "hand-written, numba (the limit)"

    def rosen_grad(self):
        return rosen_grad_hand

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

    def tanh_jac(self, w, b):
        return dualad.jacobian(lambda x: np.tanh(w @ x + b), mode=self.mode)

    def scalar_second(self):
        return dualad.second_derivative(scalar_numpy) if self.mode != "reverse" else None


class Jax(Tool):
    """JAX with NumPy in / NumPy out: the array goes to the device and the result comes back
    as an ndarray in every call, as a NumPy caller (scipy.optimize) has it."""
    name = "JAX (jit, float64), NumPy in / NumPy out"
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

    def tanh_jac(self, w, b):
        jax, jnp = self._setup()
        layer = (lambda x: jnp.tanh(jnp.asarray(w) @ x + jnp.asarray(b)))
        transform = jax.jacfwd if w.shape[1] <= w.shape[0] else jax.jacrev  # the faster mode
        return self._wrap(jax.jit(transform(layer)))

    def scalar_second(self):
        jax, jnp = self._setup()
        second = jax.jit(jax.grad(jax.grad(lambda t: scalar_numpy(t, np=jnp))))
        if isinstance(self, JaxOnDevice):
            return lambda t: second(t).block_until_ready()
        return lambda t: float(second(t))


class JaxOnDevice(Jax):
    """JAX at its best: the input is a device array made once, the result is waited for
    (block_until_ready) and left on the device."""
    name = "JAX (jit, float64), device arrays, block_until_ready"

    def _wrap(self, fn):
        jax, jnp = self._setup()
        on_device = {}

        def call(x):
            held = on_device.get(id(x))
            if held is None or held[0] is not x:
                held = on_device[id(x)] = (x, jax.device_put(x))
            return fn(held[1]).block_until_ready()
        return call


class TorchFunc(Tool):
    name = "torch.func (float64)"
    module = "torch"

    def _wrap(self, fn):
        import torch
        return lambda x: fn(torch.as_tensor(x, dtype=torch.float64)).numpy()

    def rosen_grad(self):
        import torch.func
        return self._wrap(torch.func.grad(rosen_numpy_torch))

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
         DualadPython("reverse"), DualadPython("auto"), JaxOnDevice(), Jax(), TorchFunc(), Autograd(),
         NumDual(),
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


def run(sizes, min_time, budget):
    tools = [tool for tool in TOOLS if tool.available()]
    missing = [tool.name for tool in TOOLS if not tool.available()]
    timings = {}
    sections = []
    grad_cases = [(f"n = {n}", np.linspace(-1.2, 1.2, n), lambda tool: tool.rosen_grad(), 1e-6)
                  for n in sizes]
    sections.append(_problem_table("Rosenbrock gradient", [c[0] for c in grad_cases], grad_cases,
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


# ---- Rosenbrock Hessian and Hessian-vector product (--section hessian) ------------------------------------
HESSIAN_SIZES = (2, 10, 100, 1000)
HVP_SIZES = (100, 10 ** 4, 10 ** 6)
IN_LOOP_SIZES = (10, 100)
MAX_SECONDS = 2.0  # per call: a size predicted (or measured) over it is skipped
TOLERANCE = 1e-10  # max |result - hand-written| / max |hand-written| before anything is timed
JAX_ONE_THREAD = {"XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


class Entry:
    """A row of the Hessian/hvp tables: make(problem) is the callable (hessian: fn(x), hvp:
    fn(x, v)) or None where the tool has no such transform; it may raise NotImplementedError
    (reported "not available"). bind(fn, args) is the zero-argument call that is timed, with the
    tool's own input/output conversions in it. compiled: numba code, which cannot be stopped
    once over budget; cost[problem], the worst-case exponent p of time ~ n^p, predicts its
    larger sizes. threads: a function giving (label, set) settings to try; the fastest is
    reported."""

    def __init__(self, name, make, cost, module=None, bind=None, threads=None, compiled=False):
        self.name, self._make, self.cost, self.module = name, make, cost, module
        self.bind = bind or (lambda fn, args: lambda: fn(*args))
        self.threads, self.compiled = threads, compiled
        self._made = {}

    def available(self):
        return Tool.available(self)

    def make(self, problem):
        """make(problem), once per problem (the in-loop table reuses the kernels), or the
        string "not available" where it raises NotImplementedError."""
        if problem not in self._made:
            try:
                self._made[problem] = self._make(problem)
            except NotImplementedError:
                self._made[problem] = "not available"
        return self._made[problem]


HAND = Entry("hand-written, numba (the baseline)",
             lambda p: rosen_hess_hand if p == "hessian" else rosen_hvp_hand,
             {"hessian": 2, "hvp": 1}, compiled=True)


def _dualad(problem, mode, jit):
    """dualad's hessian/hvp of Rosenbrock in `mode`: compiled (the scalar-loop @njit rosen) or
    the Python path (its NumPy form). A compiled mode missing from dualad.dispatch's table
    raises NotImplementedError here ("not available"): compiled hvp otherwise runs forward mode
    whatever mode is asked for (dualad 0.1), which would be timed under the wrong name."""
    from dualad import dispatch
    if jit and mode != "auto" and (problem, mode) not in dispatch.COMPILED:
        raise NotImplementedError(f"no compiled {problem} kernel in mode {mode!r}")
    transform = dualad.hessian if problem == "hessian" else dualad.hvp
    return transform(rosen_loop, mode=mode) if jit else transform(rosen_numpy, mode=mode, jit=False)


def _jax(problem):
    import jax
    jax.config.update("jax_enable_x64", True)
    f = (lambda x: rosen_numpy(x, np=jax.numpy))
    if problem == "hessian":
        return jax.jit(jax.hessian(f))
    return jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])


def _jax_on_device(fn, args):
    import jax.numpy as jnp
    on_device = [jnp.asarray(a) for a in args]
    return lambda: fn(*on_device).block_until_ready()


def _torch(problem):
    import torch.func
    if problem == "hessian":
        return torch.func.hessian(rosen_numpy_torch)
    return lambda x, v: torch.func.jvp(torch.func.grad(rosen_numpy_torch), (x,), (v,))[1]


def _torch_numpy(fn, args):
    import torch
    return lambda: fn(*[torch.from_numpy(a) for a in args]).numpy()


def _torch_threads():
    import torch
    default = torch.get_num_threads()
    return [(f"{t} thread{'s' if t > 1 else ''}", lambda t=t: torch.set_num_threads(t))
            for t in sorted({1, default})]


def _autograd(problem):
    import autograd
    import autograd.numpy as anp
    f = (lambda x: rosen_numpy(x, np=anp))
    return autograd.hessian(f) if problem == "hessian" else autograd.hessian_vector_product(f)


def _num_dual(problem):
    if problem != "hessian":
        return None  # num-dual has no Hessian-vector product
    import num_dual
    return lambda x: np.asarray(num_dual.hessian(rosen_scalars, list(x))[2])


def hessian_entries():
    """Every row, hand-written first (the baseline every ratio divides by)."""
    # worst-case exponents, for predicting compiled rows (_skip_reason measures the actual
    # growth): HyperDual blocks are (n/chunk)² passes of O(n chunk²), forward hvp n/chunk passes
    # of O(n chunk); forward-over-reverse n/chunk sweeps (Hessian) or one (hvp); "auto" its
    # dearest pick
    costs = {"auto": {"hessian": 3, "hvp": 2}, "forward": {"hessian": 3, "hvp": 2},
             "forward-over-reverse": {"hessian": 2, "hvp": 1}}
    entries = [HAND]
    for jit, path in ((True, "compiled"), (False, "Python path")):
        for mode in ("auto", "forward", "forward-over-reverse"):
            entries.append(Entry(f"dualad, {path}, mode={mode}",
                                 lambda p, mode=mode, jit=jit: _dualad(p, mode, jit), costs[mode],
                                 compiled=jit))
    entries += [
        Entry("JAX (jit, float64), device arrays, block_until_ready", _jax,
              {"hessian": 2, "hvp": 1}, "jax", _jax_on_device),
        Entry("JAX (jit, float64), NumPy in / NumPy out", _jax, {"hessian": 2, "hvp": 1}, "jax",
              lambda fn, args: lambda: np.asarray(fn(*args))),
        Entry("torch.func (float64)", _torch, {"hessian": 2, "hvp": 1}, "torch", _torch_numpy,
              threads=_torch_threads),
        Entry("autograd", _autograd, {"hessian": 2, "hvp": 1}, "autograd"),
        Entry("num-dual (num_dual.hessian)", _num_dual, {"hessian": 3}, "num_dual"),
    ]
    return entries


def _rounds(run, rounds, min_time):
    """(median, half the interquartile range) of seconds per run() over `rounds` batches; 3
    rounds of one call where a call takes over 0.05 s."""
    return per_call_spread(run, min_time=min_time, repeats=rounds, slow=0.05)


def _inputs(problem, n):
    """Rosenbrock's arguments: (x,) for the Hessian, (x, v) for the hvp."""
    x, v = np.linspace(-1.2, 1.2, n), np.linspace(-1.0, 1.0, n)
    return (x,) if problem == "hessian" else (x, v)


def _relative_error(result, expected):
    result = np.asarray(result, dtype=float)
    if result.shape != expected.shape:
        return math.inf
    return float(np.max(np.abs(result - expected)) / max(np.max(np.abs(expected)), 1e-300))


def _predicted(entry, problem, history, n):
    """Seconds per call at n extrapolated from the row's timings [(n, seconds), ...]: the slope
    of the last two on a log-log scale, between 1 and the row's exponent cost[problem] (that
    exponent alone from a single timing)."""
    exponent = entry.cost[problem]
    (n_last, t_last) = history[-1]
    if len(history) > 1:
        n_before, t_before = history[-2]
        slope = math.log(t_last / t_before) / math.log(n_last / n_before)
        exponent = min(max(slope, 1.0), exponent)
    return t_last * (n / n_last) ** exponent, exponent


def _skip_reason(entry, problem, n, history, probe):
    """Why size n is not run, or None. Where the time predicted from the row's timings is over
    MAX_SECONDS, probe(m) times a size between the last and n (unreported) to measure the
    slope, so that a mode="auto" which changes method is not judged by its dearest one."""
    if not history:
        return None
    predicted, exponent = _predicted(entry, problem, history, n)
    while predicted > MAX_SECONDS and history[-1][0] * 4 <= n:
        between = int(math.sqrt(history[-1][0] * n))
        if _predicted(entry, problem, history, between)[0] > MAX_SECONDS / 4:
            break
        history.append((between, probe(between)))
        predicted, exponent = _predicted(entry, problem, history, n)
    if predicted > MAX_SECONDS:
        return f"skipped: ~{predicted:.2g} s per call predicted (O(n^{exponent:.2g}))"
    return None


class _OverBudget(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds):
    """Interrupt Python code running longer than `seconds` with _OverBudget (SIGALRM; numba's
    compiled code cannot be interrupted: seconds=None, and _skip_reason predicts instead)."""
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum, frame):
        raise _OverBudget

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _measure(entry, fn, args, expected, rounds, min_time):
    """(median, spread, setting) per call after checking the result, or why it was not timed;
    with several thread settings, the fastest. Python code is stopped after 2 MAX_SECONDS on
    its first call (tracing and compiling included) and MAX_SECONDS on its second."""
    best = None
    for label, apply in (entry.threads() if entry.threads else [("", None)]):
        if apply is not None:
            apply()
        run = entry.bind(fn, args)
        try:
            with _time_limit(None if entry.compiled else 2 * MAX_SECONDS):
                error = _relative_error(run(), expected)  # the first call: compiles, traces, warms
            if error > TOLERANCE:
                return f"wrong: relative error {error:.1e} (not timed)"
            start = time.perf_counter()
            with _time_limit(None if entry.compiled else MAX_SECONDS):
                run()
            seconds = time.perf_counter() - start
            if seconds > MAX_SECONDS:
                return f"over {MAX_SECONDS:g} s per call ({seconds:.2g} s once, not timed further)"
        except NotImplementedError:
            return "not available"
        except _OverBudget:
            return f"over {MAX_SECONDS:g} s per call (stopped)"
        measured = _rounds(run, rounds, min_time) + (label,)
        best = measured if best is None or measured[0] < best[0] else best
    return best


def _probe(entry, fn, problem, n):
    """Seconds for one warm call at n (not checked, not reported: a probe for _skip_reason)."""
    run = entry.bind(fn, _inputs(problem, n))
    run()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _hessian_problem_rows(problem, sizes, entries, rounds, min_time):
    """results[entry name][n] = (median, spread, setting) or a reason, for every entry."""
    results, expected = {}, {}
    for entry in entries:
        cells = results.setdefault(entry.name, {})
        fn = entry.make(problem)
        history = []  # [(n, seconds per call)] measured so far, or "over" once n was over budget
        for n in sizes:
            args = _inputs(problem, n)
            if fn is None or isinstance(fn, str):
                cells[n] = fn or "—"
                continue
            if n not in expected:
                expected[n] = np.asarray(HAND.make(problem)(*args), float)
            if history == "over":
                cells[n] = "skipped: a smaller n was over budget"
                continue
            try:
                # compiled code is not interrupted when over budget: predicted, not tried
                cell = _skip_reason(entry, problem, n, history,
                                    lambda m: _probe(entry, fn, problem, m)) if entry.compiled else None
                cell = cell or _measure(entry, fn, args, expected[n], rounds, min_time)
            except Exception as error:  # reported in its cell; the other rows still run
                cell = f"error: {type(error).__name__}: {str(error)[:80]}"
            cells[n] = cell
            if isinstance(cell, tuple):
                history.append((n, cell[0]))
            elif cell.startswith(("over", "skipped")):
                history = "over"
    return results


def _in_loop_rows(sizes, entries, rounds):
    """Per call inside a compiled loop (compiled.py's repeat loops, the input perturbed each
    time) for the compiled entries, keyed (problem, n), each checked first."""
    from compiled import _repeat_matrix, _repeat_with_direction
    results = {}
    for entry in [e for e in entries if e.compiled]:
        cells = results.setdefault(entry.name, {})
        for problem, repeat in (("hessian", _repeat_matrix), ("hvp", _repeat_with_direction)):
            fn = entry.make(problem)
            for n in sizes:
                if fn is None or isinstance(fn, str):
                    cells[problem, n] = fn or "—"
                    continue
                args = _inputs(problem, n)  # the repeat loop's v is linspace(-1, 1, n) too
                error = _relative_error(fn(*args), np.asarray(HAND.make(problem)(*args), float))
                if error > TOLERANCE:
                    cells[problem, n] = f"wrong: relative error {error:.1e} (not timed)"
                    continue
                reps = max(20_000 // n, 10)
                median, spread = _rounds(lambda: repeat(fn, args[0].copy(), reps), rounds, 0.02)
                cells[problem, n] = (median / reps, spread / reps, "")
    return results


def _hessian_cell(measured, baseline, brief=False):
    """median ± spread (ratio) [thread setting]; brief: median (ratio), reasons in a word."""
    if not isinstance(measured, tuple):
        if brief and measured.startswith(("skipped", "over")):
            return f"> {MAX_SECONDS:g} s"
        return measured.split(":")[0] if brief else measured
    median, spread, setting = measured
    ratio = f" ({median / baseline[0]:.3g}×)" if isinstance(baseline, tuple) else ""
    if brief:
        return fmt_time(median) + ratio
    return f"{fmt_time(median)} ± {fmt_time(spread)}{ratio}" + (f" [{setting}]" if setting else "")


def _hessian_table(title, results, columns, labels, brief=False):
    baseline = results.get(HAND.name, {})
    rows = [[name] + [_hessian_cell(cells.get(c, "—"), baseline.get(c), brief) for c in columns]
            for name, cells in results.items()]
    return f"### {title}\n\n" + table(["tool"] + labels, rows)


SUMMARY_ROWS = (HAND.name, "dualad, compiled, mode=auto", "dualad, compiled, mode=forward-over-reverse",
                "dualad, Python path, mode=auto", "JAX (jit, float64), device arrays, block_until_ready",
                "JAX (jit, float64), NumPy in / NumPy out", "torch.func (float64)",
                "num-dual (num_dual.hessian)")


def _summary(title, problem, results, in_loop, sizes, in_loop_sizes):
    """The README's table for one problem: median (ratio) from Python, and inside a compiled
    loop, for the default modes and the peers at their best."""
    rows = {}
    for name in SUMMARY_ROWS:
        if name in results:
            row = {**{n: results[name][n] for n in sizes},
                   **{("loop", n): in_loop.get(name, {}).get((problem, n), "—") for n in in_loop_sizes}}
            if any(cell != "—" for cell in row.values()):  # not a tool without this transform
                rows[name] = row
    return _hessian_table(title, rows, list(sizes) + [("loop", n) for n in in_loop_sizes],
                          [f"n = {n}" for n in sizes]
                          + [f"n = {n}, in a compiled loop" for n in in_loop_sizes], brief=True)


def _jax_one_thread(hessian_sizes, hvp_sizes, rounds, min_time):
    """The JAX rows measured in a subprocess with XLA on one thread: {problem: {row: {n: cell}}},
    or None when that run fails (its error is printed)."""
    import json
    import subprocess
    import sys
    command = [sys.executable, __file__, "--section", "hessian", "--jax-one-thread-worker",
               "--rounds", str(rounds), "--min-time", str(min_time),
               "--hessian-sizes", *map(str, hessian_sizes), "--hvp-sizes", *map(str, hvp_sizes)]
    done = subprocess.run(command, env={**os.environ, **JAX_ONE_THREAD}, capture_output=True,
                          text=True)
    if done.returncode != 0:
        print("JAX on one thread failed:\n" + done.stderr[-2000:])
        return None
    cells = json.loads(done.stdout.strip().splitlines()[-1])
    return {problem: {row: {int(n): tuple(c) if isinstance(c, list) else c for n, c in by_n.items()}
                      for row, by_n in rows.items()} for problem, rows in cells.items()}


def _jax_worker(hessian_sizes, hvp_sizes, rounds, min_time):
    import json
    entries = [e for e in hessian_entries() if e.module == "jax"]
    out = {}
    for problem, sizes in (("hessian", hessian_sizes), ("hvp", hvp_sizes)):
        out[problem] = _hessian_problem_rows(problem, sizes, entries, rounds, min_time)
    print(json.dumps(out))


def _faster_of(default, one_thread):
    """Per cell, the faster of JAX's default threads and one thread (marked)."""
    if one_thread is None:
        return default
    merged = {}
    for n, cell in default.items():
        other = one_thread.get(n)
        if isinstance(other, tuple) and (not isinstance(cell, tuple) or other[0] < cell[0]):
            cell = other[:2] + ("1 thread",)
        merged[n] = cell
    return merged


def hessian_section(entries=None, hessian_sizes=HESSIAN_SIZES, hvp_sizes=HVP_SIZES,
                    in_loop_sizes=IN_LOOP_SIZES, rounds=7, min_time=0.02, jax_one_thread=True):
    """The Hessian and hvp tables (Markdown) and their cells {table: {row: {case: cell}}}."""
    started, load = time.perf_counter(), os.getloadavg()[0]
    entries = hessian_entries() if entries is None else [HAND] + [e for e in entries if e is not HAND]
    missing = [e.name for e in entries if not e.available()]
    entries = [e for e in entries if e.available()]
    results = {problem: _hessian_problem_rows(problem, sizes, entries, rounds, min_time)
               for problem, sizes in (("hessian", hessian_sizes), ("hvp", hvp_sizes))}
    one_thread = None
    if jax_one_thread and any(e.module == "jax" for e in entries):
        one_thread = _jax_one_thread(hessian_sizes, hvp_sizes, rounds, min_time)
        for problem, rows in results.items():
            for name in rows:
                if name.startswith("JAX"):
                    rows[name] = _faster_of(rows[name], one_thread and one_thread[problem].get(name))
    in_loop = _in_loop_rows(in_loop_sizes, entries, rounds) if in_loop_sizes else {}
    tables = [
        _summary("Summary: Rosenbrock Hessian", "hessian", results["hessian"], in_loop,
                 hessian_sizes, in_loop_sizes),
        _summary("Summary: Rosenbrock Hessian-vector product", "hvp", results["hvp"], in_loop,
                 hvp_sizes, in_loop_sizes),
        _hessian_table("Rosenbrock Hessian (dense n × n), called from Python", results["hessian"],
                       hessian_sizes, [f"n = {n}" for n in hessian_sizes]),
        _hessian_table("Rosenbrock Hessian-vector product, called from Python", results["hvp"],
                       hvp_sizes, [f"n = {n}" for n in hvp_sizes])]
    if in_loop:
        columns = [(p, n) for p in ("hessian", "hvp") for n in in_loop_sizes]
        tables.append(_hessian_table("Inside a compiled loop (as Newton's method would call them)",
                                     in_loop, columns, [f"{'Hessian' if p == 'hessian' else 'hvp'} "
                                                        f"n = {n}" for p, n in columns]))
    notes = [
        f"Median time per call ± half the interquartile range of {rounds} rounds (3 rounds of one "
        f"call where a call takes over 0.05 s), ratio to the hand-written numba result in the same "
        f"run. Every result is checked against the hand-written one (relative error ≤ "
        f"{TOLERANCE:g}) before it is timed. Python code over {MAX_SECONDS:g} s per call is stopped, "
        f"and sizes of compiled code predicted over it (from the row's measured growth) are "
        f"skipped. Rosenbrock at x = linspace(-1.2, 1.2, n), v = linspace(-1, 1, n); "
        f"dualad compiled differentiates the scalar-loop @njit rosen, the others its NumPy form.",
        "JAX: jax_enable_x64, jit of jax.hessian and of jax.jvp(jax.grad(f)) (forward-over-reverse), "
        "warmed up; each cell is the faster of the default thread pool and a subprocess with "
        f"XLA_FLAGS={JAX_ONE_THREAD['XLA_FLAGS']!r} (marked [1 thread])"
        + ("" if one_thread is not None or not jax_one_thread else " (that subprocess failed)")
        + ". torch.func: float64, the faster of torch.set_num_threads settings (marked). "
        "num-dual has no Hessian-vector product. \"not available\": the mode raises "
        "NotImplementedError (no such compiled kernel in this dualad).",
        f"Machine: {os.cpu_count()} cores, load average {load:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end"
        + (" (shared with other processes while this ran: times are inflated and noisy)"
           if max(load, os.getloadavg()[0]) > os.cpu_count() / 2 else "")
        + f"; the section took {time.perf_counter() - started:.0f} s."]
    if missing:
        notes.append("Not installed here (pip install -e \".[peers]\"): " + ", ".join(missing) + ".")
    text = "## Rosenbrock Hessian and Hessian-vector product\n\n" + "\n\n".join(notes + tables)
    return text, {"hessian": results["hessian"], "hvp": results["hvp"], "in loop": in_loop}


SECTIONS = ("first-order", "hessian")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--section", choices=("all",) + SECTIONS, default="all",
                        help="which part of results/peers.md to run and rewrite (the rest is kept)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds per Hessian/hvp cell")
    parser.add_argument("--min-time", type=float, default=0.02, help="seconds per round, at least")
    parser.add_argument("--hessian-sizes", type=int, nargs="+")
    parser.add_argument("--hvp-sizes", type=int, nargs="+")
    parser.add_argument("--jax-one-thread-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    hessian_sizes = args.hessian_sizes or ([2, 10, 100] if args.quick else list(HESSIAN_SIZES))
    hvp_sizes = args.hvp_sizes or ([100, 10 ** 4] if args.quick else list(HVP_SIZES))
    if args.jax_one_thread_worker:
        _jax_worker(hessian_sizes, hvp_sizes, args.rounds, args.min_time)
        return
    if args.section in ("all", "first-order"):
        sizes = [2, 100, 1000] if args.quick else [2, 10, 100, 1000, 10000]
        text, timings = run(sizes, min_time=0.01 if args.quick else 0.1,
                            budget=2.0 if args.quick else 10.0)
        print(text)
        save_part("peers", "first-order", text)
        plot(timings, sizes)
    if args.section in ("all", "hessian"):
        text, _ = hessian_section(hessian_sizes=hessian_sizes, hvp_sizes=hvp_sizes,
                                  rounds=3 if args.quick else args.rounds, min_time=args.min_time)
        print(text)
        save_part("peers", "hessian", text)


if __name__ == "__main__":
    main()
