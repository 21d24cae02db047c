"""Derivatives of scientific code as it is written, against the code's own hand-written
derivative, JAX and central finite differences, in one run.

Library functions are called unchanged, as installed (scipy.optimize.rosen; statsmodels'
Logit and Poisson log-likelihoods, whose own analytic score is the hand-written gradient).
The other cases are written here in the form of widely copied public code (sources named
in each case: the workplace keeps third-party source out of this repository, so these are
our spellings of the same idioms, ndarray.dot included). Each case:

    dualad      the Python path, mode="auto" (the default), and the compiled path for
                numba functions, called from Python
    by hand     the analytic derivative (the library's own, or the form's own)
    FD          central differences, 2N evaluations of f (timed, or estimated as 2N times
                one call of f where that would take minutes: marked "est.")
    JAX         jit, float64, device arrays and block_until_ready; and NumPy in / NumPy out

Every result is checked against the hand-written derivative (and JAX's) before timing;
`object arrays` counts the arrays of duals dualad turned into object arrays per call
(0: none). Ratios are to the hand-written derivative; medians of 5 rounds ± half their
interquartile range. `--quick` runs smaller sizes; `--case NAME` one case.
"""

import argparse
import time
import warnings

import numba
import numpy as np
import scipy.optimize

import dualad
from dualad import number
from common import fmt_time, per_call_spread, save, table


# ---- the cases -----------------------------------------------------------------------------------------
class Case:
    """f, x, its hand-written derivative, optionally a numba twin of f and JAX's f (written with
    jax.numpy), and which derivative ("grad", "jacobian" or "sparse jacobian")."""

    def __init__(self, name, source, f, x, hand, derivative="grad", compiled=None, jax_f=None):
        self.name, self.source, self.f, self.x, self.hand = name, source, f, x, hand
        self.derivative, self.compiled, self.jax_f = derivative, compiled, jax_f


def rosen_scipy(n):
    x = np.linspace(-1.2, 1.2, n)
    return Case(f"scipy.optimize.rosen, n = {n}", "scipy 1.17, scipy/optimize/_optimize.py (called)",
                scipy.optimize.rosen, x, scipy.optimize.rosen_der,
                jax_f=lambda jnp: (lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0
                                                     + (1 - x[:-1]) ** 2.0)))


def rosen_vectorised(n):
    """The same sum on the Python path's reverse mode at large n (the issue's target: within
    3x of the hand-written NumPy gradient)."""
    def rosen(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)
    x = np.linspace(-1.2, 1.2, n)
    return Case(f"vectorised Rosenbrock, n = {n:.0e}", "scipy's formula, written out",
                rosen, x, scipy.optimize.rosen_der,
                jax_f=lambda jnp: (lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0
                                                     + (1 - x[:-1]) ** 2.0)))


def two_layer_net():
    """The numpy warm-up network (the form of jcjohnson/pytorch-examples'
    warmup numpy two-layer net): ndarray.dot forward, squared error, its hand-written
    backprop. 24 inputs, 10 hidden ReLU units, 3 outputs: 270 weights."""
    rng = np.random.default_rng(0)
    n, d_in, hidden, d_out = 64, 24, 10, 3
    x, y = rng.normal(size=(n, d_in)), rng.normal(size=(n, d_out))

    def loss(w):
        w1, w2 = w[:d_in * hidden].reshape(d_in, hidden), w[d_in * hidden:].reshape(hidden, d_out)
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        return np.square(y_pred - y).sum()

    def by_hand(w):
        w1, w2 = w[:d_in * hidden].reshape(d_in, hidden), w[d_in * hidden:].reshape(hidden, d_out)
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h_relu = grad_y_pred.dot(w2.T)
        grad_h = grad_h_relu.copy()
        grad_h[h < 0] = 0
        grad_w1 = x.T.dot(grad_h)
        return np.concatenate([grad_w1.ravel(), grad_w2.ravel()])

    def jax_loss(jnp):
        def f(w):
            w1, w2 = w[:d_in * hidden].reshape(d_in, hidden), w[d_in * hidden:].reshape(hidden, d_out)
            return jnp.square(jnp.maximum(x @ w1, 0) @ w2 - y).sum()
        return f
    return Case("two-layer net with ndarray.dot, 270 weights", "jcjohnson/pytorch-examples warm-up's form",
                loss, rng.normal(size=d_in * hidden + hidden * d_out) * 0.3, by_hand, jax_f=jax_loss)


def statsmodels_model(kind):
    import statsmodels.api as sm
    rng = np.random.default_rng(1)
    exog = sm.add_constant(rng.normal(size=(1000, 24)) * 0.5)
    beta = rng.normal(size=25) * 0.2
    if kind == "Logit":
        endog = (rng.random(1000) < 1 / (1 + np.exp(-exog @ beta))).astype(float)
        model = sm.Logit(endog, exog)

        def jax_f(jnp):
            q = 2 * endog - 1
            return lambda b: jnp.sum(jnp.log(1 / (1 + jnp.exp(-q * (exog @ b)))))
    else:
        endog = rng.poisson(np.exp(exog @ beta)).astype(float)
        model = sm.Poisson(endog, exog)

        def jax_f(jnp):
            from scipy.special import gammaln
            constant = gammaln(endog + 1)
            return lambda b: jnp.sum(-jnp.exp(exog @ b) + endog * (exog @ b) - constant)
    return Case(f"statsmodels {kind}.loglike, 25 parameters", "statsmodels 0.15 (called); score = its own",
                model.loglike, beta * 0.9, model.score, jax_f=jax_f)


def gp_likelihood():
    """The GP negative log-likelihood in its textbook naive form (det and inv of the kernel
    matrix, as krasserm/bayesian-machine-learning's Gaussian-process notebook writes it) of
    the kernel's length scale and signal variance, 60 points."""
    rng = np.random.default_rng(2)
    x_train = rng.uniform(-5, 5, size=(60, 1))
    y_train = np.sin(x_train).ravel() + 0.2 * rng.normal(size=60)
    noise = 0.2

    def kernel(X1, X2, l=1.0, sigma_f=1.0):
        sqdist = np.sum(X1**2, 1).reshape(-1, 1) + np.sum(X2**2, 1) - 2 * np.dot(X1, X2.T)
        return sigma_f**2 * np.exp(-0.5 / l**2 * sqdist)

    def nll(theta):
        K = kernel(x_train, x_train, l=theta[0], sigma_f=theta[1]) + noise**2 * np.eye(len(x_train))
        return (0.5 * np.log(np.linalg.det(K)) + 0.5 * y_train.dot(np.linalg.inv(K).dot(y_train))
                + 0.5 * len(x_train) * np.log(2 * np.pi))

    def by_hand(theta):
        l, sigma_f = theta
        sqdist = np.sum(x_train**2, 1).reshape(-1, 1) + np.sum(x_train**2, 1) - 2 * x_train @ x_train.T
        k = sigma_f**2 * np.exp(-0.5 / l**2 * sqdist)
        kinv = np.linalg.inv(k + noise**2 * np.eye(60))
        alpha = kinv @ y_train
        out = []
        for dk in (k * sqdist / l**3, 2.0 * k / sigma_f):
            out.append(0.5 * np.sum(kinv * dk) - 0.5 * alpha @ dk @ alpha)
        return np.array(out)

    def jax_f(jnp):
        def f(theta):
            sqdist = np.sum(x_train**2, 1).reshape(-1, 1) + np.sum(x_train**2, 1) - 2 * x_train @ x_train.T
            K = theta[1]**2 * jnp.exp(-0.5 / theta[0]**2 * sqdist) + noise**2 * jnp.eye(60)
            return (0.5 * jnp.log(jnp.linalg.det(K)) + 0.5 * y_train @ jnp.linalg.inv(K) @ y_train
                    + 0.5 * 60 * np.log(2 * np.pi))
        return f
    return Case("GP negative log-likelihood (det, inv), 60 points", "krasserm/bayesian-machine-learning's form",
                nll, np.array([1.2, 0.9]), by_hand, jax_f=jax_f)


@numba.njit(cache=True)
def robertson_numba(y):
    out = np.zeros(3)
    out[0] = -0.04 * y[0] + 1e4 * y[1] * y[2]
    out[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2
    out[2] = 3e7 * y[1] ** 2
    return out


def robertson():
    """Robertson's stiff chemical kinetics, the right-hand side as scipy's solve_ivp
    examples and ODE test sets write it (a buffer filled entry by entry)."""
    def by_hand(y):
        return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                         [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                         [0.0, 6e7 * y[1], 0.0]])

    def jax_f(jnp):
        return lambda y: jnp.stack([-0.04 * y[0] + 1e4 * y[1] * y[2],
                                    0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2])
    return Case("Robertson's ODE, 3 x 3 Jacobian", "the ODE test sets' form",
                robertson_numba.py_func, np.array([1.0, 2e-5, 0.1]), by_hand, "jacobian",
                compiled=robertson_numba, jax_f=jax_f)


def reaction_diffusion(n):
    """Fisher-KPP u_t = D u_xx + r u (1 - u) by the method of lines (second differences,
    zero-flux ends), vectorised as in scipy's solve_ivp method-of-lines examples: its sparse
    Jacobian (tridiagonal) for BDF."""
    dx, diffusion, rate = 1.0 / n, 1e-3, 2.0

    def rhs(u):
        padded = np.concatenate([u[1:2], u, u[-2:-1]])
        return diffusion * (padded[2:] - 2 * padded[1:-1] + padded[:-2]) / dx**2 + rate * u * (1 - u)

    def by_hand(u):
        import scipy.sparse
        main = -2 * diffusion / dx**2 + rate * (1 - 2 * u)
        upper = np.full(n - 1, diffusion / dx**2)
        lower = upper.copy()
        upper[0] *= 2
        lower[-1] *= 2
        return scipy.sparse.diags([lower, main, upper], [-1, 0, 1], format="csr")

    def jax_f(jnp):
        def f(u):
            padded = jnp.concatenate([u[1:2], u, u[-2:-1]])
            return diffusion * (padded[2:] - 2 * padded[1:-1] + padded[:-2]) / dx**2 + rate * u * (1 - u)
        return f
    u = 0.5 + 0.4 * np.sin(np.linspace(0, 3, n))
    return Case(f"Fisher-KPP method of lines, n = {n}, sparse Jacobian", "scipy's method-of-lines examples' form",
                rhs, u, by_hand, "sparse jacobian", jax_f=jax_f)


@numba.njit(cache=True)
def kepler_eccentric_anomaly(mean_anomaly, e):
    E = mean_anomaly
    for _ in range(50):
        f = E - e * np.sin(E) - mean_anomaly
        E = E - f / (1.0 - e * np.cos(E))
        if abs(f) < 1e-15:
            break
    return E


MEAN_ANOMALIES = np.linspace(0.1, 6.0, 100)


@numba.njit(cache=True)
def kepler_total(e):
    s = 0.0
    for i in range(len(e)):
        s += kepler_eccentric_anomaly(MEAN_ANOMALIES[i], e[i])
    return s


@numba.njit(cache=True)
def kepler_by_hand(e):
    out = np.empty(len(e))
    for i in range(len(e)):
        E = kepler_eccentric_anomaly(MEAN_ANOMALIES[i], e[i])
        out[i] = np.sin(E) / (1.0 - e[i] * np.cos(E))
    return out


def kepler():
    """Kepler's equation E - e sin E = M by Newton's iterations (loop code, as orbital
    mechanics codes solve it), summed over 100 orbits, differentiated w.r.t. eccentricities."""
    return Case("Kepler's equation by Newton (numba loop), 100 orbits", "orbital mechanics codes' form",
                kepler_total.py_func, np.linspace(0.05, 0.6, 100), kepler_by_hand, compiled=kepler_total)


@numba.njit(cache=True)
def lennard_jones(positions):
    n = len(positions) // 3
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = positions[3 * i] - positions[3 * j]
            dy = positions[3 * i + 1] - positions[3 * j + 1]
            dz = positions[3 * i + 2] - positions[3 * j + 2]
            r2 = dx * dx + dy * dy + dz * dz
            inv6 = 1.0 / (r2 * r2 * r2)
            energy += 4.0 * (inv6 * inv6 - inv6)
    return energy


@numba.njit(cache=True)
def lennard_jones_forces(positions):
    n = len(positions) // 3
    grad = np.zeros(len(positions))
    for i in range(n):
        for j in range(i + 1, n):
            r2 = 0.0
            for k in range(3):
                d = positions[3 * i + k] - positions[3 * j + k]
                r2 += d * d
            inv6 = 1.0 / (r2 * r2 * r2)
            g = 4.0 * (-12.0 * inv6 * inv6 + 6.0 * inv6) / r2
            for k in range(3):
                d = positions[3 * i + k] - positions[3 * j + k]
                grad[3 * i + k] += g * d
                grad[3 * j + k] -= g * d
    return grad


def lennard_jones_case():
    """The Lennard-Jones energy of 27 atoms on a perturbed cubic lattice, the pair loop as
    molecular dynamics codes write it in numba (flat positions, 81 inputs)."""
    rng = np.random.default_rng(3)
    grid = np.stack(np.meshgrid(*[np.arange(3.0)] * 3, indexing="ij"), -1).reshape(-1, 3) * 1.12
    positions = (grid + 0.05 * rng.normal(size=grid.shape)).ravel()

    def jax_f(jnp):
        def f(p):
            r = p.reshape(-1, 3)
            d = r[:, None, :] - r[None, :, :]
            r2 = jnp.sum(d * d, -1) + jnp.eye(len(r))
            inv6 = 1.0 / r2**3
            return jnp.sum(jnp.triu(4.0 * (inv6 * inv6 - inv6), 1))
        return f
    return Case("Lennard-Jones energy (numba pair loop), 27 atoms", "molecular dynamics codes' form",
                lennard_jones.py_func, positions, lennard_jones_forces, compiled=lennard_jones, jax_f=jax_f)


@numba.njit(cache=True)
def lennard_jones_3d(positions):
    n = positions.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = positions[i, 0] - positions[j, 0]
            dy = positions[i, 1] - positions[j, 1]
            dz = positions[i, 2] - positions[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            inv6 = 1.0 / (r2 * r2 * r2)
            energy += 4.0 * (inv6 * inv6 - inv6)
    return energy


@numba.njit(cache=True)
def lennard_jones_3d_forces(positions):
    n = positions.shape[0]
    grad = np.zeros_like(positions)
    for i in range(n):
        for j in range(i + 1, n):
            d = positions[i] - positions[j]
            r2 = np.sum(d * d)
            inv6 = 1.0 / (r2 * r2 * r2)
            g = 4.0 * (-12.0 * inv6 * inv6 + 6.0 * inv6) / r2
            grad[i] += g * d
            grad[j] -= g * d
    return grad


def lennard_jones_3d_case():
    """The same energy as most molecular dynamics codes hold positions: an (N, 3) array,
    indexed positions[i, 0] (the compiled kernel differentiates its flat view and returns
    an (N, 3) gradient)."""
    positions = lennard_jones_case().x.reshape(-1, 3)

    def jax_f(jnp):
        def f(r):
            d = r[:, None, :] - r[None, :, :]
            r2 = jnp.sum(d * d, -1) + jnp.eye(len(r))
            inv6 = 1.0 / r2**3
            return jnp.sum(jnp.triu(4.0 * (inv6 * inv6 - inv6), 1))
        return f
    return Case("Lennard-Jones energy, (N, 3) positions (numba pair loop), 27 atoms",
                "molecular dynamics codes' form", lennard_jones_3d.py_func, positions,
                lennard_jones_3d_forces, compiled=lennard_jones_3d, jax_f=jax_f)


def cases(quick):
    made = [rosen_scipy(1000), two_layer_net(), gp_likelihood(), robertson(),
            reaction_diffusion(400 if quick else 2000), kepler(), lennard_jones_case(), lennard_jones_3d_case(),
            rosen_vectorised(10**5 if quick else 10**6)]
    try:
        made[2:2] = [statsmodels_model("Logit"), statsmodels_model("Poisson")]
    except ImportError:
        print("statsmodels is not installed: its cases are skipped")
    return made


# ---- the tools -----------------------------------------------------------------------------------------
def dualad_transform(case, f):
    if case.derivative == "grad":
        return dualad.grad(f)
    if case.derivative == "jacobian":
        return dualad.jacobian(f)
    return dualad.jacobian(f, sparsity=True)


def central_differences(case, h=1e-6):
    f, n = case.f, case.x.size

    def fd(x):
        flat, out = x.reshape(-1), []
        for k in range(n):
            step = np.zeros(n)
            step[k] = h * max(1.0, abs(flat[k]))
            shaped = step.reshape(x.shape)
            out.append((np.asarray(f(x + shaped)) - np.asarray(f(x - shaped))) / (2 * step[k]))
        result = np.stack(out, axis=-1)
        return result.reshape(result.shape[:-1] + x.shape)
    return fd


def jax_tools(case):
    """(device, NumPy in/out) callables of JAX's derivative, or (None, None)."""
    if case.jax_f is None:
        return None, None
    try:
        import jax
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)
    f = case.jax_f(jax.numpy)
    derivative = jax.jit(jax.grad(f) if case.derivative == "grad" else
                         (jax.jacrev(f) if case.x.size > 40 else jax.jacfwd(f)))
    x_device = jax.device_put(case.x)
    return ((lambda x: derivative(x_device).block_until_ready()),
            (lambda x: np.asarray(derivative(x))))


def dense(result):
    return result.toarray() if hasattr(result, "toarray") else np.asarray(result)


def checked(what, got, expected, case):
    got, expected = dense(got), dense(expected)
    scale = max(1.0, float(np.max(np.abs(expected))))
    if not np.allclose(got, expected, rtol=1e-7, atol=1e-7 * scale):
        raise AssertionError(f"{case.name}: {what} differs from the hand-written derivative by "
                             f"{np.max(np.abs(got - expected)):.3g}")


def objects_per_call(fn, x):
    before = number.ARRAY_CONVERSIONS[0]
    fn(x)
    return number.ARRAY_CONVERSIONS[0] - before


def run_case(case, min_time):
    x = case.x
    hand = case.hand(x)
    tools = {"dualad (Python path, auto)": dualad_transform(case, case.f)}
    if case.compiled is not None:
        tools["dualad (compiled kernel)"] = dualad_transform(case, case.compiled)
    fd = central_differences(case)
    f_time, _ = per_call_spread(case.f, x, min_time=min_time)
    estimate_fd = 2 * x.size * f_time > 20.0
    if not estimate_fd:
        tools["central differences"] = fd
    device, numpy_io = jax_tools(case)
    if device is not None:
        tools["JAX jit, device arrays"] = device
        tools["JAX jit, NumPy in/out"] = numpy_io
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dualad.SlowPathWarning)
        results = {name: tool(x) for name, tool in tools.items()}
        for name, result in results.items():
            if name != "central differences":
                checked(name, result, hand, case)
        objects = objects_per_call(tools["dualad (Python path, auto)"], x)
        hand_time, hand_spread = per_call_spread(case.hand, x, min_time=min_time)
        row = {"by hand": (hand_time, hand_spread)}
        for name, tool in tools.items():
            row[name] = per_call_spread(tool, x, min_time=min_time, slow=1.0)
    if estimate_fd:
        row["central differences"] = (2 * x.size * f_time, None)
    return hand_time, row, objects


COLUMNS = ["dualad (Python path, auto)", "dualad (compiled kernel)", "central differences",
           "JAX jit, device arrays", "JAX jit, NumPy in/out"]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--case", default=None, help="run the cases whose name contains this")
    args = parser.parse_args(argv)
    rows = []
    for case in cases(args.quick):
        if args.case and args.case not in case.name:
            continue
        start = time.perf_counter()
        hand_time, row, objects = run_case(case, min_time=0.02 if args.quick else 0.1)
        cells = [case.name, case.source, case.x.size, fmt_time(hand_time)]
        for column in COLUMNS:
            if column not in row:
                cells.append("—")
                continue
            median, spread = row[column]
            ratio = f"{median / hand_time:.3g}×" + ("" if spread is None else f" ± {spread / hand_time:.2g}")
            cells.append(f"{fmt_time(median)} ({ratio}{' est.' if spread is None else ''})")
        cells.append(objects)
        rows.append(cells)
        print(f"{case.name}: {time.perf_counter() - start:.1f} s", flush=True)
    header = ["case", "form of", "N", "by hand"] + [f"{c} (× hand)" for c in COLUMNS] + ["object arrays"]
    text = ("### Real code as it is written: time per derivative, and its ratio to the hand-written one\n\n"
            + table(header, rows))
    print(text)
    if not args.case:
        save("real_code", text)


if __name__ == "__main__":
    main()
