"""First use: how long a new user waits, each step in a fresh process.

    import dualad                          (numba is imported lazily)
    first grad / hessian / jacobian, in three situations:
      first use ever      every cache empty: the user's function's, its kernels' and dualad's
                          own (overload implementations, compiled partials), NUMBA_CACHE_DIR
                          pointing at a fresh folder
      new function        dualad's own cache warm (any earlier run of any script), the user's
                          function new: a script in another folder, so its caches are empty
      warm cache          the same script again in a new process: everything from disk
    JAX's cold jit of the same gradient    when JAX is installed

The function is a 10-line @njit Rosenbrock (a tanh layer for the Jacobian) declared
cache=True; the 2-D Jacobian's is a reaction-diffusion right-hand side written with 2-D arrays
(8 x 8 grid, two species: 128 inputs and outputs, forward passes of 8). Reported: the median
and the spread of `--rounds` fresh processes per row. dualad's Python bytecode is compiled
first, as `pip install` leaves it.
Results: results/first_use.md.
"""

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from common import save, table

SCRIPT = '''
import json, sys, time
start = time.perf_counter()
import numpy as np
import dualad
imported = time.perf_counter() - start
import numba

@numba.njit(cache=True)
def rosen(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s

W = np.linspace(-1.0, 1.0, 30).reshape(3, 10)

@numba.njit(cache=True)
def layer(x):
    return np.tanh(W @ x)

N = 8  # a 2-D reaction-diffusion right-hand side (the Brusselator's reactions) on an N x N grid
ALPHA = 10.0 * (N - 1) ** 2

@numba.njit(cache=True)
def laplacian(w):  # periodic 5-point stencil
    return (np.vstack((w[-1:], w[:-1])) + np.vstack((w[1:], w[:1])) + np.hstack((w[:, -1:], w[:, :-1]))
            + np.hstack((w[:, 1:], w[:, :1])) - 4.0 * w)

@numba.njit(cache=True)
def reaction_diffusion(state):
    u, v = state[:N * N].reshape(N, N), state[N * N:].reshape(N, N)
    du = ALPHA * laplacian(u) + 1.0 + u * u * v - 4.4 * u
    dv = ALPHA * laplacian(v) + 3.4 * u - u * u * v
    return np.concatenate((du.ravel(), dv.ravel()))

x = np.linspace(0.1, 1.0, 10)
what = sys.argv[1]
start = time.perf_counter()
if what == "grad":
    dualad.grad(rosen)(x)
elif what == "hessian":
    dualad.hessian(rosen)(x)
elif what == "jacobian":
    dualad.jacobian(layer)(x)
elif what == "2-D jacobian":
    dualad.jacobian(reaction_diffusion)(np.linspace(0.1, 1.0, 2 * N * N))
elapsed = time.perf_counter() - start
print(json.dumps({"import": imported, "first_call": elapsed}))
'''

JAX_SCRIPT = '''
import json, time
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

x = jnp.linspace(0.1, 1.0, 10)
start = time.perf_counter()
jax.jit(jax.grad(rosen))(x).block_until_ready()
print(json.dumps({"first_call": time.perf_counter() - start}))
'''


def _run(script, folder, *args, cache_dir=None):
    path = Path(folder) / "script.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    # Python's bytecode of the packages read from disk, as an installed package has it (pip
    # compiles it at install time): without it each process compiles dualad's modules from
    # source first (0.2-0.3 s)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    done = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                          cwd=folder, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _summary(values):
    median = statistics.median(values)
    spread = (max(values) - min(values)) / 2 if len(values) > 1 else 0.0
    return f"{median:.2f} s ± {spread:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one round per row")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    import dualad
    compileall.compile_dir(os.path.dirname(dualad.__file__), quiet=1)  # as pip install does
    rows, imports = [], []
    for what in ("grad", "hessian", "jacobian", "2-D jacobian"):
        times = {"ever": [], "new": [], "warm": []}
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as first, \
                    tempfile.TemporaryDirectory() as other:
                runs = {"ever": _run(SCRIPT, first, what, cache_dir=cache),
                        "new": _run(SCRIPT, other, what, cache_dir=cache),  # dualad's cache warm
                        "warm": _run(SCRIPT, other, what, cache_dir=cache)}  # all warm
            for row, run in runs.items():
                times[row].append(run["first_call"])
                imports.append(run["import"])
        rows.append([f"first {what}"] + [_summary(times[row]) for row in ("ever", "new", "warm")])
    rows.insert(0, ["import dualad"] + [_summary(imports)] * 3)
    try:
        import jax  # noqa: F401
        jax_times = []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as folder:
                jax_times.append(_run(JAX_SCRIPT, folder)["first_call"])
        rows.append(["JAX: jit(grad) first call", _summary(jax_times), "—", "—"])
    except ImportError:
        rows.append(["JAX: jit(grad) first call", "not installed", "—", "—"])
    text = ("First use, each in a fresh process (median ± half the range of "
            f"{rounds} round{'s' * (rounds != 1)}): Rosenbrock n = 10 (@njit, cache=True) for grad "
            "and hessian, tanh(W x) 3×10 for jacobian, a 2-D reaction-diffusion right-hand side "
            "(array code, 8×8 grid, 128 inputs) for the 2-D jacobian. First use ever: every cache empty, "
            "dualad's own included; new function: dualad's own cache warm, the user's function "
            "and its kernels compiled (the usual first call after any earlier run); warm cache: "
            "a second process over the same caches.\n\n"
            + table(["step", "first use ever", "new function", "warm cache"], rows))
    print(text)
    save("first_use", text)


if __name__ == "__main__":
    main()
