"""Sparse Jacobians and Hessians: detection, colouring, compressed passes (Python and compiled).

Problems: the 2-D Brusselator's Jacobian (examples/brusselator.py; N × N periodic grid, 2N²
states, 12N² nonzeros) and two sparse Hessians at n = 10⁴: the vectorised Rosenbrock function
(tridiagonal) and a 2-D Laplacian energy ½Σ|∇u|² + ¼Σ(u² − 1)² on a 100 × 100 grid (5-point).

Columns: colours of dualad's colouring (column colouring for Jacobians, star colouring for
Hessians) against scipy's group_columns (the colouring solve_ivp's jac_sparsity and
approx_derivative use); the detection (one run on tracers) and colouring times, paid at the
first call; the compressed evaluation per call; f itself; dense dualad; scipy's finite
differences given the pattern (approx_derivative with sparsity=, the groups precomputed as
solve_ivp does); hand-written derivatives where they are short. Times are medians of 5
batches ± half their range. The compiled path (a numba right-hand side, compiled detection
and kernels) is its own table and file (results/sparse_compiled.md; --compiled-only runs it
alone), as multiples of one compiled right-hand side. JAX + sparsejac are compared only
where installed.
"""

import argparse
import importlib.metadata
import importlib.util
import time
from pathlib import Path

import numba
import numpy as np
import scipy.sparse
from scipy.optimize._numdiff import approx_derivative, group_columns

import dualad
from dualad.sparsity.coloring import column_coloring, n_colors, row_coloring, star_coloring
from common import fmt_time, pyplot, save, save_plot, table
from common import per_call_spread as timed
from python_path import rosen, rosen_grad

ROOT = Path(__file__).resolve().parent.parent


def _example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def once(fn, *args, repeats=3):
    """(median, half the range) of seconds of single calls, nothing cached between them."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        samples.append(time.perf_counter() - start)
    return float(np.median(samples)), (max(samples) - min(samples)) / 2


def show(t):
    median, spread = t
    return f"{fmt_time(median)} ± {fmt_time(spread)}"


# ---- Brusselator Jacobian ---------------------------------------------------------------------
def brusselator_rows(sizes, min_time, dense_up_to):
    make = _example("brusselator").brusselator
    rows, series, rng = [], {}, np.random.default_rng(0)
    for n in sizes:
        rhs, y0 = make(n)
        y = y0 + 0.1 * rng.random(y0.size)

        def f(state):
            return rhs(2.0, state)  # the forcing switched on
        pattern = dualad.jacobian_sparsity(f)(y)
        detect = once(dualad.jacobian_sparsity(f), y)
        colour = once(column_coloring, pattern)
        groups = group_columns(pattern)
        sparse = dualad.jacobian(f, sparsity=True)
        result = sparse(y)
        fd = approx_derivative(f, y, sparsity=(pattern, groups))
        np.testing.assert_allclose(result.toarray(), fd.toarray(), rtol=1e-4, atol=1e-3 * abs(fd).max())
        t_f = timed(f, y, min_time=min_time)
        t_sparse = timed(sparse, y, min_time=min_time)
        t_reverse = timed(dualad.jacobian(f, sparsity=True, mode="reverse"), y, min_time=min_time)
        t_fd = timed(lambda s: approx_derivative(f, s, sparsity=(pattern, groups)), y, min_time=min_time)
        if n <= dense_up_to:
            dense = dualad.jacobian(f, mode="forward")
            np.testing.assert_allclose(result.toarray(), dense(y), rtol=1e-12, atol=1e-9)
            t_dense = once(dense, y, repeats=3 if n <= 32 else 1)
            dense_text = f"{show(t_dense)} ({t_dense[0] / t_sparse[0]:.0f}× sparse)"
        else:
            dense_text = "—"
        for label, t in (("dualad Python path, sparse (forward)", t_sparse),
                         ("dualad Python path, sparse (reverse)", t_reverse),
                         ("scipy finite differences with the pattern", t_fd)) + (
                            (("dualad Python path, dense (forward)", t_dense),) if n <= dense_up_to else ()):
            series.setdefault(label, []).append((y.size, t[0]))
        rows.append([n, y.size, pattern.nnz,
                     f"{n_colors(column_coloring(pattern))} / {n_colors(row_coloring(pattern))}",
                     int(groups.max()) + 1, show(detect), show(colour), show(t_f),
                     f"{show(t_sparse)} ({t_sparse[0] / t_f[0]:.1f}× f)", show(t_reverse),
                     dense_text, f"{show(t_fd)} ({t_fd[0] / t_f[0]:.1f}× f)"])
    header = ["N", "states", "nonzeros", "colours: columns / rows", "group_columns",
              "detection", "colouring", "f", "dualad sparse (forward)", "dualad sparse (reverse)",
              "dualad dense (forward)", "scipy FD with sparsity"]
    return table(header, rows), series


# ---- Brusselator Jacobian, compiled ------------------------------------------------------------
@numba.njit
def _repeat(fn, args, reps):
    """fn(*args) reps times inside numba: per-call times without Python's call overhead."""
    total = 0.0
    for _ in range(reps):
        total += fn(*args)[0]
    return total


def in_numba(fn, args, min_time, reps):
    median, spread = timed(lambda: _repeat(fn, args, reps), min_time=min_time)
    return median / reps, spread / reps


@numba.njit
def brusselator_jacobian_hand(state, n, alpha, indptr, indices):
    """The Brusselator's Jacobian written by hand, its nonzeros in the pattern's CSR order."""
    a, values = 3.4, np.empty(indices.size)
    for row in range(indptr.size - 1):
        k = row - row % 2  # the grid point's u
        u, v = state[k], state[k + 1]
        for p in range(indptr[row], indptr[row + 1]):
            col = indices[p]
            if row % 2 == 0:  # u' = α∇²u + 1 + u²v − (a + 1)u + f
                values[p] = (-4.0 * alpha + 2.0 * u * v - (a + 1.0) if col == k else
                             u * u if col == k + 1 else alpha)
            else:  # v' = α∇²v + a u − u²v
                values[p] = (a - 2.0 * u * v if col == k else
                             -4.0 * alpha - u * u if col == k + 1 else alpha)
    return values


def brusselator_compiled_rows(sizes, min_time):
    """The compiled path on examples/brusselator.py's rhs_compiled: detection, the compressed
    kernel inside numba, the csr_array from Python, as multiples of one compiled rhs."""
    example = _example("brusselator")
    rhs = example.rhs_compiled
    rows, rng = [], np.random.default_rng(0)
    series = {"dualad compiled, csr_array from Python": [], "dualad compiled kernel, in numba": []}
    for n in sizes:
        _, y0 = example.brusselator(n)
        alpha, forcing = example.compiled_arguments(n)
        y = y0 + 0.1 * rng.random(y0.size)
        args = (y, n, alpha, forcing)
        detect = dualad.jacobian_sparsity(rhs)
        pattern = detect(*args)
        forward = dualad.jacobian(rhs, sparsity=True, mode="forward")
        reverse = dualad.jacobian(rhs, sparsity=True, mode="reverse")
        kernel, plan = forward.kernel(*args)
        hand = brusselator_jacobian_hand(y, n, alpha, plan[0], plan[1])
        np.testing.assert_allclose(forward(*args).data, hand, rtol=1e-13, atol=1e-9)
        np.testing.assert_allclose(reverse(*args).toarray(), forward(*args).toarray(), rtol=1e-12, atol=1e-9)
        reps = max(1, 20000 // y.size)
        t_f = in_numba(rhs, args, min_time, 10 * reps)
        t_kernel = in_numba(kernel, args + plan, min_time, reps)
        t_hand = in_numba(brusselator_jacobian_hand, (y, n, alpha, plan[0], plan[1]), min_time, 10 * reps)
        t_detect = timed(detect, *args, min_time=min_time)
        t_forward = timed(forward, *args, min_time=min_time)
        t_reverse = timed(reverse, *args, min_time=min_time)
        sparse_plan = forward.sparsity_plan(*args)
        series["dualad compiled, csr_array from Python"].append((y.size, t_forward[0]))
        series["dualad compiled kernel, in numba"].append((y.size, t_kernel[0]))

        def ratio(t):
            return f"{show(t)} ({t[0] / t_f[0]:.1f}× f)"
        rows.append([n, y.size, pattern.nnz,
                     f"{sparse_plan.n_colors('columns')} / {sparse_plan.n_colors('rows')}",
                     show(t_f), ratio(t_detect), ratio(t_kernel), ratio(t_forward), ratio(t_reverse),
                     f"{show(t_hand)} ({t_kernel[0] / t_hand[0]:.1f}×)"])
    header = ["N", "states", "nonzeros", "colours: columns / rows", "f (compiled rhs)",
              "detection", "sparse kernel, forward (in numba)", "jacobian(sparsity=True) → csr_array",
              "same, mode='reverse'", "hand-written Jacobian (kernel's ratio)"]
    return table(header, rows), series


# ---- sparse Hessians --------------------------------------------------------------------------
@numba.njit
def rosen_diagonals(x):
    n = x.size
    diag = np.zeros(n)
    off = np.empty(n - 1)
    for i in range(n - 1):
        diag[i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        diag[i + 1] += 200.0
        off[i] = -400.0 * x[i]
    return diag, off


@numba.njit
def rosen_loop(x):
    """The Rosenbrock function as a numba loop: what the compiled sparse Hessian differentiates."""
    s = 0.0
    for i in range(x.size - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosen_hess_hand(x):
    """Hand-written: the three diagonals in numba, then the csr_array."""
    diag, off = rosen_diagonals(x)
    return scipy.sparse.csr_array(scipy.sparse.diags([off, diag, off], offsets=[-1, 0, 1]))


def laplacian_energy(k):
    """(E, its hand-written gradient, its hand-written Hessian) on a k × k grid."""
    def energy(x):
        u = x.reshape(k, k)
        return (0.5 * np.sum(np.diff(u, axis=0) ** 2) + 0.5 * np.sum(np.diff(u, axis=1) ** 2)
                + 0.25 * np.sum((u * u - 1.0) ** 2))

    d = scipy.sparse.diags([-np.ones(k - 1), np.ones(k - 1)], offsets=[0, 1], shape=(k - 1, k))
    one = scipy.sparse.identity(k)
    lap = (scipy.sparse.kron(d.T @ d, one) + scipy.sparse.kron(one, d.T @ d)).tocsr()

    def gradient(x):
        return lap @ x + x * (x * x - 1.0)

    def hessian(x):
        return scipy.sparse.csr_array(lap + scipy.sparse.diags(3.0 * x * x - 1.0))

    return energy, gradient, hessian


def hessian_rows(quick, min_time):
    rng = np.random.default_rng(1)
    n = 1000 if quick else 10 ** 4
    k = int(round(np.sqrt(n)))
    energy, energy_grad, energy_hess = laplacian_energy(k)
    problems = [("Rosenbrock", rosen, rosen_grad, rosen_hess_hand, rng.standard_normal(n), rosen_loop),
                (f"Laplacian energy {k}×{k}", energy, energy_grad, energy_hess, rng.standard_normal(k * k),
                 None)]  # its 2-D reshape and np.diff(axis=) are not compiled for duals
    rows = []
    for name, f, grad_hand, hess_hand, x, compiled_f in problems:
        pattern = dualad.hessian_sparsity(f)(x)
        detect = once(dualad.hessian_sparsity(f), x)
        colour = once(star_coloring, pattern)
        groups = group_columns(pattern)
        sparse = dualad.hessian(f, sparsity=True)
        result = sparse(x)
        np.testing.assert_allclose(result.toarray(), hess_hand(x).toarray(), rtol=1e-12, atol=1e-9)
        t_f = timed(f, x, min_time=min_time)
        t_sparse = timed(sparse, x, min_time=min_time)
        t_hand = timed(hess_hand, x, min_time=min_time)
        t_fd = timed(lambda s: approx_derivative(grad_hand, s, sparsity=(pattern, groups)), x,
                     min_time=min_time)
        small = x[:100] if name == "Rosenbrock" else None
        dense = "—"
        if small is not None:  # a dense Hessian at n = 10⁴ is 800 MB: measured at n = 100
            t_small = timed(dualad.hessian(f, mode="forward-over-reverse"), small, min_time=min_time)
            t_small_sparse = timed(dualad.hessian(f, sparsity=True), small, min_time=min_time)
            dense = f"n = 100: {show(t_small)} (sparse {show(t_small_sparse)})"
        compiled = "—"
        if compiled_f is not None:  # detection and the coloured passes inside numba
            compiled_sparse = dualad.hessian(compiled_f, sparsity=True)
            np.testing.assert_allclose(compiled_sparse(x).toarray(), hess_hand(x).toarray(),
                                       rtol=1e-12, atol=1e-9)
            t_compiled = timed(compiled_sparse, x, min_time=min_time)
            compiled = (f"{show(t_compiled)} ({t_compiled[0] / t_hand[0]:.1f}×; detection "
                        f"{show(once(dualad.hessian_sparsity(compiled_f), x))})")
        rows.append([name, x.size, pattern.nnz, n_colors(star_coloring(pattern)),
                     n_colors(column_coloring(pattern)), int(groups.max()) + 1, show(detect),
                     show(colour), show(t_f), f"{show(t_sparse)} ({t_sparse[0] / t_f[0]:.1f}× f)",
                     f"{show(t_hand)} ({t_sparse[0] / t_hand[0]:.1f}×)", compiled, dense,
                     f"{show(t_fd)} (of the hand gradient)"])
    header = ["problem", "n", "nonzeros", "colours: star", "columns", "group_columns",
              "detection", "colouring", "f", "dualad sparse Hessian",
              "hand-written (dualad's ratio)", "dualad compiled sparse Hessian (ratio to hand-written)",
              "dualad dense", "scipy FD with sparsity"]
    return table(header, rows)


def jax_brusselator(n, t=2.0):
    """examples/brusselator.py's rhs(t, ·) written with jax.numpy (same grid, α, forcing disc)."""
    import jax.numpy as jnp
    example = _example("brusselator")
    grid = np.linspace(0.0, 1.0, n)
    alpha = 10.0 / (grid[1] - grid[0]) ** 2
    x, y = np.meshgrid(grid, grid, indexing="ij")
    forcing = 5.0 * (((x - 0.3) ** 2 + (y - 0.6) ** 2) <= 0.1 ** 2) if t >= 1.1 else np.zeros((n, n))
    a, b = example.A, example.B

    def laplacian(w):
        return (jnp.roll(w, 1, 0) + jnp.roll(w, -1, 0) + jnp.roll(w, 1, 1) + jnp.roll(w, -1, 1)
                - 4.0 * w)

    def rhs(state):
        s = state.reshape(n, n, 2)
        u, v = s[:, :, 0], s[:, :, 1]
        du = alpha * laplacian(u) + b + u * u * v - (a + 1.0) * u + forcing
        dv = alpha * laplacian(v) + a * u - u * u * v
        return jnp.stack([du, dv], axis=-1).reshape(-1)

    return rhs


def peers_rows(sizes, min_time):
    """JAX + sparsejac on the Brusselator Jacobian: sparsejac.jacfwd under jax.jit (x64), its
    pattern dualad's detected one (BCOO, CSR order), beside dualad's sparse forward Jacobian."""
    import jax
    import sparsejac
    from jax.experimental import sparse as jsparse
    jax.config.update("jax_enable_x64", True)
    make = _example("brusselator").brusselator
    rows, rng = [], np.random.default_rng(0)
    series = {"JAX + sparsejac, jit, device arrays": [], "JAX + sparsejac, NumPy → csr_array": []}
    for n in sizes:
        rhs, y0 = make(n)
        y = y0 + 0.1 * rng.random(y0.size)  # the same y as brusselator_rows

        def f(state):
            return rhs(2.0, state)
        f_jax = jax.jit(jax_brusselator(n, 2.0))
        np.testing.assert_allclose(np.asarray(f_jax(y)), f(y), rtol=1e-13, atol=1e-12 * abs(f(y)).max())
        pattern = scipy.sparse.csr_array(dualad.jacobian_sparsity(f)(y))
        pattern.sort_indices()
        rows_of = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
        bcoo = jsparse.BCOO((jax.numpy.ones(pattern.nnz),
                             jax.numpy.asarray(np.stack([rows_of, pattern.indices], axis=1))),
                            shape=pattern.shape)
        jac = jax.jit(sparsejac.jacfwd(jax_brusselator(n, 2.0), sparsity=bcoo))
        y_device = jax.device_put(y)
        jac(y_device).data.block_until_ready()  # compile (warm-up)
        jac(y).data.block_until_ready()

        def jac_numpy(state):  # NumPy in, csr_array out (what dualad returns)
            return scipy.sparse.csr_array((np.asarray(jac(state).data), pattern.indices,
                                           pattern.indptr), shape=pattern.shape)
        sparse = dualad.jacobian(f, sparsity=True)
        reference = scipy.sparse.csr_array(sparse(y))
        for result in (jac_numpy(y), scipy.sparse.csr_array(
                scipy.sparse.coo_array((np.asarray(jac(y_device).data),
                                        (rows_of, pattern.indices)), shape=pattern.shape))):
            error = abs(result - reference).max() / abs(reference).max()
            assert error <= 1e-10, f"sparsejac vs dualad at N = {n}: relative error {error:.2e}"
        t_f_jax = timed(lambda: f_jax(y_device).block_until_ready(), min_time=min_time)
        t_sparse = timed(sparse, y, min_time=min_time)
        t_device = timed(lambda: jac(y_device).data.block_until_ready(), min_time=min_time)
        t_numpy = timed(jac_numpy, y, min_time=min_time)
        series["JAX + sparsejac, jit, device arrays"].append((y.size, t_device[0]))
        series["JAX + sparsejac, NumPy → csr_array"].append((y.size, t_numpy[0]))
        rows.append([n, y.size, pattern.nnz, show(t_sparse), show(t_f_jax),
                     f"{show(t_device)} (dualad ÷ this: {t_sparse[0] / t_device[0]:.2g})",
                     f"{show(t_numpy)} (dualad ÷ this: {t_sparse[0] / t_numpy[0]:.2g})"])
    header = ["N", "states", "nonzeros", "dualad sparse (forward) → csr_array",
              "f (JAX, jit, device)", "sparsejac.jacfwd, jit, device arrays",
              "sparsejac, NumPy in → csr_array out"]
    return table(header, rows), series


def peers_note(sizes=None, min_time=0.1):
    """The JAX + sparsejac section and its plot series ({} when not installed)."""
    try:
        import jax  # noqa: F401
        import sparsejac  # noqa: F401
    except ImportError:
        return ("JAX + sparsejac: not installed here, not compared "
                "(pip install jax sparsejac to add them)."), {}
    if sizes is None:
        return "JAX + sparsejac are installed, but this script does not time them yet.", {}
    peers_table, series = peers_rows(sizes, min_time)
    return ("### Brusselator Jacobian: dualad against JAX + sparsejac\n\n"
            f"jax {jax.__version__}, sparsejac {importlib.metadata.version('sparsejac')}, x64 "
            "enabled, CPU. sparsejac.jacfwd(f, sparsity=BCOO) under jax.jit, the pattern "
            "dualad's detected one (same nonzeros), f the same right-hand side in jax.numpy "
            "(checked against examples/brusselator.py's). Warmed up (compiled) before timing; "
            "device arrays timed with block_until_ready(), and NumPy in → csr_array out. Each "
            "Jacobian checked against dualad's (relative error ≤ 1e-10) first. Medians of 5 "
            "batches ± half their range; ratios are dualad's time over sparsejac's.\n\n"
            + peers_table), series


def plot(series):
    """Seconds per Jacobian against the number of states (log-log): benchmarks/results/sparse.png."""
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in series.items():
        states, seconds = zip(*points)
        ax.loglog(states, seconds, marker="o", label=label)
    ax.set_xlabel("states (2-D Brusselator, 2 N²)")
    ax.set_ylabel("seconds per Jacobian")
    ax.set_title("2-D Brusselator Jacobian (lower is faster)")
    ax.legend(fontsize="small")
    save_plot(fig, "sparse")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--compiled-only", action="store_true",
                        help="only the compiled table (results/sparse_compiled.md)")
    args = parser.parse_args(argv)
    sizes = [8, 16] if args.quick else [16, 32, 64]
    min_time = 0.01 if args.quick else 0.1
    compiled_table, compiled_series = brusselator_compiled_rows(sizes, min_time)
    compiled = ("## Sparse Jacobians, compiled path: the 2-D Brusselator\n\n"
                "examples/brusselator.py's rhs_compiled (a numba loop). Medians of 5 batches ± "
                "half their range. f, the sparse kernel and the hand-written Jacobian are timed "
                "inside a numba loop; detection and the transforms from Python (the csr_array "
                "built there). Ratios: to one compiled right-hand side (× f), and the kernel's "
                "to a hand-written numba Jacobian that writes the same nonzeros.\n\n"
                + compiled_table)
    print(compiled)
    save("sparse_compiled", compiled)
    if args.compiled_only:
        return
    brusselator_table, series = brusselator_rows(sizes, min_time, 64)
    peers_text, peers_series = peers_note(sizes, min_time)
    text = ("## Sparse Jacobians and Hessians (Python path)\n\n"
            "Medians of 5 batches ± half their range; detection, colouring and dense Jacobians "
            "are single calls (median of 3). Colours: dualad's greedy colourings (column "
            "colouring for forward mode / row colouring for reverse mode; star colouring for "
            "Hessians) against scipy's group_columns.\n\n"
            "### 2-D Brusselator Jacobian\n\n" + brusselator_table
            + "\n\n### Sparse Hessians\n\n" + hessian_rows(args.quick, min_time)
            + "\n\n" + peers_text)
    print(text)
    save("sparse", text)
    plot({**series, **compiled_series, **peers_series})


if __name__ == "__main__":
    main()
