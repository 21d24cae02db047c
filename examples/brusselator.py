"""The 2-D Brusselator, a stiff reaction–diffusion system, integrated with scipy's BDF and a
sparse Jacobian that dualad detects, colours and computes by itself.

On an N × N periodic grid of [0, 1]² (the sparse-AD benchmark of SparseDiffTools.jl and
SparseConnectivityTracer.jl), two species u and v:

    u' = 1 + u²v − 4.4 u + α ∇²u + f(x, y, t)
    v' = 3.4 u − u²v + α ∇²v                  α = 10 / Δx², ∇² the 5-point stencil

f is 5 in a disc of radius 0.1 around (0.3, 0.6) from t = 1.1 on. The state has 2N² entries
and the Jacobian 12N² nonzeros (each row: a 5-point stencil and the other species).

    dualad, sparse         jac = dualad.jacobian(rhs, argnums=1, sparsity=True): the pattern
                           found by one run on tracers, a column colouring (8 colours), then
                           one Dual pass of 8 partials per Jacobian
    finite differences     scipy's own, given jac_sparsity (it colours with group_columns)
    dualad, dense          jac = dualad.jacobian(rhs, argnums=1): 2N² partials
    dualad, compiled sparse  (--compiled) the same pattern and passes inside numba, on
                           rhs_compiled, the right-hand side as a numba loop

Run: python examples/brusselator.py [N] [--quick] [--compiled]  (--quick: N = 8, a short interval)
"""

import argparse
import time

import numba
import numpy as np
from scipy.integrate import solve_ivp

import dualad

A, B = 3.4, 1.0


def brusselator(n):
    """(rhs(t, y), y0): the right-hand side on the flat state y (n·n·2: u and v interleaved
    per grid point) and the initial condition u = 22 (y(1−y))^1.5, v = 27 (x(1−x))^1.5."""
    grid = np.linspace(0.0, 1.0, n)
    alpha = 10.0 / (grid[1] - grid[0]) ** 2
    x, y = np.meshgrid(grid, grid, indexing="ij")
    disc = ((x - 0.3) ** 2 + (y - 0.6) ** 2) <= 0.1 ** 2

    def laplacian(w):  # periodic 5-point stencil
        return (np.roll(w, 1, 0) + np.roll(w, -1, 0) + np.roll(w, 1, 1) + np.roll(w, -1, 1)
                - 4.0 * w)

    def rhs(t, state):
        s = state.reshape(n, n, 2)
        u, v = s[:, :, 0], s[:, :, 1]
        forcing = 5.0 * disc if t >= 1.1 else 0.0
        du = alpha * laplacian(u) + B + u * u * v - (A + 1.0) * u + forcing
        dv = alpha * laplacian(v) + A * u - u * u * v
        return np.stack([du, dv], axis=-1).reshape(-1)

    y0 = np.empty((n, n, 2))
    y0[:, :, 0] = 22.0 * (y * (1.0 - y)) ** 1.5
    y0[:, :, 1] = 27.0 * (x * (1.0 - x)) ** 1.5
    return rhs, y0.reshape(-1)


@numba.njit
def rhs_compiled(state, n, alpha, forcing):
    """The same right-hand side as a loop that numba compiles (forcing: the (n, n) source
    term, 5 in the disc once it is on): what dualad's compiled sparse Jacobian takes."""
    out = np.zeros(state.size)
    for i in range(n):
        for j in range(n):
            k = 2 * (i * n + j)
            up, down = 2 * (((i - 1) % n) * n + j), 2 * (((i + 1) % n) * n + j)
            left, right = 2 * (i * n + (j - 1) % n), 2 * (i * n + (j + 1) % n)
            u, v = state[k], state[k + 1]
            lap_u = state[up] + state[down] + state[left] + state[right] - 4.0 * u
            lap_v = state[up + 1] + state[down + 1] + state[left + 1] + state[right + 1] - 4.0 * v
            out[k] = alpha * lap_u + B + u * u * v - (A + 1.0) * u + forcing[i, j]
            out[k + 1] = alpha * lap_v + A * u - u * u * v
    return out


def compiled_arguments(n, forced=True):
    """(alpha, forcing) for rhs_compiled on an n × n grid (the forcing on, or off)."""
    grid = np.linspace(0.0, 1.0, n)
    x, y = np.meshgrid(grid, grid, indexing="ij")
    disc = ((x - 0.3) ** 2 + (y - 0.6) ** 2) <= 0.1 ** 2
    return 10.0 / (grid[1] - grid[0]) ** 2, 5.0 * disc if forced else np.zeros((n, n))


def run(n=32, t_end=11.5, methods=("dualad, sparse", "finite differences, jac_sparsity",
                                    "dualad, dense")):
    """{method: (y(t_end), rhs evaluations, Jacobian evaluations, seconds)}. rhs evaluations
    count every call, finite differences' included; seconds include dualad's detection and
    colouring at its first Jacobian (not numba's compilation of the compiled kernels)."""
    rhs, y0 = brusselator(n)
    results = {}
    for method in methods:
        calls = [0]

        def counted(t, y):
            calls[0] += 1
            return rhs(t, y)

        options = {}
        if method == "dualad, sparse":
            options["jac"] = dualad.jacobian(rhs, argnums=1, sparsity=True)
        elif method == "dualad, dense":
            options["jac"] = dualad.jacobian(rhs, argnums=1)
        elif method == "dualad, compiled sparse":  # rhs_compiled's Jacobian, inside numba
            alpha, forcing_on = compiled_arguments(n)
            forcing_off = np.zeros((n, n))
            compiled = dualad.jacobian(rhs_compiled, sparsity=True)
            # numba compiles the kernels at their first call (shared by every transform of
            # rhs_compiled): done here, untimed; the timed transform still detects its pattern
            dualad.jacobian(rhs_compiled, sparsity=True)(y0, n, alpha, forcing_off)
            options["jac"] = lambda t, y: compiled(y, n, alpha, forcing_on if t >= 1.1 else forcing_off)
        elif method == "finite differences, jac_sparsity":
            options["jac_sparsity"] = dualad.jacobian_sparsity(rhs, argnums=1)(0.0, y0)
        else:
            raise ValueError(f"unknown method {method!r}")
        start = time.perf_counter()
        sol = solve_ivp(counted, (0.0, t_end), y0, method="BDF", rtol=1e-6, atol=1e-8, **options)
        seconds = time.perf_counter() - start
        if not sol.success:
            raise RuntimeError(f"{method}: {sol.message}")
        results[method] = (sol.y[:, -1], calls[0], sol.njev, seconds)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=32, help="grid points per side")
    parser.add_argument("--quick", action="store_true", help="N = 8 on [0, 2]: a few seconds")
    parser.add_argument("--compiled", action="store_true",
                        help="also the Jacobian of rhs_compiled (numba), computed inside numba")
    parser.add_argument("--dense", action="store_true",
                        help="also the dense Jacobian for N > 16 (BDF's dense LU takes minutes)")
    args = parser.parse_args(argv)
    n, t_end = (8, 2.0) if args.quick else (args.n, 11.5)
    methods = ["dualad, sparse", "finite differences, jac_sparsity"]
    if args.compiled:
        methods.append("dualad, compiled sparse")
    if n <= 16 or args.dense:
        methods.append("dualad, dense")
    rhs, y0 = brusselator(n)
    jac = dualad.jacobian(rhs, argnums=1, sparsity=True)
    plan = jac.sparsity_plan(0.0, y0)
    print(f"2-D Brusselator, N = {n}: {y0.size} states, {plan.pattern.nnz} Jacobian nonzeros, "
          f"{plan.n_colors('columns')} colours (BDF on [0, {t_end:g}], rtol 1e-6)\n")
    print(f"{'Jacobian':34} {'rhs evals':>10} {'J evals':>8} {'time':>9}")
    results = run(n, t_end, methods)
    reference = results["dualad, sparse"][0]
    for method, (y_end, nfev, njev, seconds) in results.items():
        gap = np.max(np.abs(y_end - reference)) / np.max(np.abs(reference))
        print(f"{method:34} {nfev:>10} {njev:>8} {seconds:>8.2f}s   |y - y_sparse| / |y| = {gap:.1e}")
    if "dualad, dense" not in results:
        print("(dense Jacobian skipped for N > 16: pass --dense)")


if __name__ == "__main__":
    main()
