"""Test functions shared by the test modules: each exercises part of the NumPy surface.

Every entry is (name, f, x). Forward (Dual), hyper-dual and finite differences must agree on
each; later modes (reverse, compiled) are checked against the same list.
"""

import numpy as np

import dualad.math as dmath

rng = np.random.default_rng(42)
M3 = rng.normal(size=(3, 3))
B3 = rng.normal(size=(3, 2))
W = rng.normal(size=(4, 6))
b4 = rng.normal(size=4)


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def textbook(x):
    return np.log(x[0]) + x[0] * x[1] - np.sin(x[1])


def mlp(x):
    return np.tanh(W @ x + b4)


def matrices(x):
    a = x.reshape(2, 3)
    return np.concatenate([(a @ a.T).ravel(), np.transpose(a).ravel() * 2.0, a.T[1]])


def linalg(x):
    a = x.reshape(3, 3) + 4.0 * np.eye(3)
    return np.concatenate([np.atleast_1d(np.linalg.det(a)), np.linalg.inv(a).ravel(),
                           np.linalg.solve(a, x[:3]), np.linalg.solve(a, B3).ravel(),
                           np.linalg.solve(M3 + 4.0 * np.eye(3), x[3:6])])


def reductions(x):
    return np.stack([np.prod(x), np.mean(x), np.max(x), np.min(x), np.linalg.norm(x),
                     np.linalg.norm(x, 1), np.linalg.norm(x, np.inf), x.sum(), x.prod(),
                     np.sum(x.reshape(2, 3), axis=0)[1], np.mean(x.reshape(2, 3), axis=-1)[0],
                     np.max(x.reshape(2, 3), axis=1)[1]])


def products(x):
    a, b = x[:3], x[3:]
    return np.concatenate([np.outer(a, b).ravel(), [np.trace(np.outer(a, b)), np.dot(a, b),
                           a @ b, np.inner(a, b), np.einsum("i,i->", a, b)],
                           np.dot(M3, a), M3 @ b, a @ M3, np.einsum("ij,j->i", M3, a * b)])


def structure(x):
    a = x.reshape(2, 3)
    return np.concatenate([
        np.roll(x, 2), np.roll(a, 1, axis=1).ravel(), np.where(x > 0.2, x ** 2, -x),
        np.stack([a[0], a[1] * 2.0], axis=1).ravel(), np.flip(x), np.cumsum(x), np.diff(x),
        np.sort(x), np.clip(x, -0.5, 0.5), np.hstack([x[:2], x[4:]]), np.vstack([x[:3], x[3:]]).ravel(),
        np.take(x, [0, 3, 3]), np.squeeze(np.expand_dims(x, 0)), np.moveaxis(a, 0, 1).ravel(),
        np.swapaxes(a, 0, 1)[2], np.broadcast_to(x[:1], (3,)), np.diagonal(np.outer(x, x)),
        np.take_along_axis(x, np.argsort(np.asarray([3, 1, 2, 0, 5, 4])), axis=0), x[::-1][::2],
        x[[True, False, True, False, True, False]], a[:, [0, 2]].ravel(), a[..., 1], a[None, 1, :][0],
    ])


def assignment(x):
    y = np.zeros_like(x)
    y[0] = x[0] ** 2
    for i in range(1, len(x)):
        y[i] = y[i - 1] * x[i] + 1.0
    z = np.ones_like(x)
    z[1:3] = x[4:]
    e = np.empty_like(x)
    e[:] = 2.0
    e[5] = x[5]
    f = np.full_like(x, 3.0)
    return np.concatenate([y, z * x, e, f * x])


def control_flow(x):
    total = 0.0
    for xi in x:  # iteration
        if xi > 0.2:  # comparisons by value
            total = total + xi * xi
        else:
            total = total - xi
    v = x[0]
    while v < 10.0:  # while on a dual
        v = v * 2.0 + x[1] ** 2

    def power(base, n):  # recursion
        return 1.0 if n == 0 else base * power(base, n - 1)

    return np.stack([total, v, power(x[2], 4), max(x[3], x[4]), min(x[0], 0.25) + abs(x[5])])


def mixing(x):
    n = np.arange(1.0, 7.0)
    return np.concatenate([2 + x, x + 2, n * x, x * n, 1 / (x + 2), x / 3, 3 ** x, x ** 3,
                           np.float64(2.0) * x, x - n, n - x, [x[0] ** x[1] if x[0] > 0 else x[0]],
                           x % 0.7, [np.int64(3) * x[2]], -x, +x])


def elementwise(x):
    p = np.abs(x) + 0.5
    return np.concatenate([np.sin(x), np.cos(x), np.tan(x), np.exp(x), np.log(p), np.sqrt(p),
                           np.arctan2(x, p), np.hypot(x, p), dmath.erf(x), dmath.erfc(x),
                           np.tanh(x), np.arcsinh(x), np.log1p(p), np.expm1(x), np.cbrt(p),
                           np.maximum(x, 0.1), np.minimum(x, 0.1), dmath.sin(x) * dmath.exp(x),
                           [dmath.log(p[0], 2.0)], np.square(x), np.reciprocal(p)])


def matrix_input(a):
    return np.tanh(a @ a.T)


X6 = np.array([0.3, -0.4, 0.5, 0.8, -0.9, 0.45])

FUNCTIONS = [
    ("rosen", rosen, np.array([-1.2, 1.0, 0.7, 0.3, 1.1])),
    ("rosen_loop", rosen_loop, np.array([-1.2, 1.0, 0.7, 0.3, 1.1])),
    ("textbook", textbook, np.array([2.0, 5.0])),
    ("mlp", mlp, rng.normal(size=6)),
    ("matrices", matrices, X6),
    ("linalg", linalg, np.array([0.3, -0.4, 0.5, 0.8, -0.9, 0.45, 0.1, 0.2, -0.3])),
    ("reductions", reductions, X6),
    ("products", products, X6),
    ("structure", structure, X6),
    ("assignment", assignment, X6),
    ("control_flow", control_flow, X6),
    ("mixing", mixing, X6),
    ("elementwise", elementwise, X6),
    ("matrix_input", matrix_input, rng.normal(size=(2, 3))),
]


def finite_difference_jacobian(f, x, h=1e-5):
    """Central differences with one Richardson step: error O(h⁴), about 1e-10 here."""
    x = np.asarray(x, dtype=float)
    f0 = np.asarray(f(x), dtype=float)
    jac = np.zeros(f0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        def at(step):
            xp, xm = x.copy(), x.copy()
            xp[idx] += step
            xm[idx] -= step
            return (np.asarray(f(xp), float) - np.asarray(f(xm), float)) / (2 * step)
        jac[(Ellipsis,) + idx] = (4 * at(h / 2) - at(h)) / 3
    return jac


# ---- functions that write into their argument ---------------------------------------------------
# NumPy semantics: f(x) would change the caller's x, but a transform must not: f sees its own
# copy (of duals), the caller's array stays bit-identical, and the derivative is that of f
# evaluated on the caller's values. Each entry is (name, f, x, gradient, hessian), with the
# gradient and Hessian written out by hand.

def mutate_item(x):
    """x[0] ← 2·x[0]: f = 4·x0² + Σ_{i≥1} x_i²."""
    x[0] = 2.0 * x[0]
    return np.sum(x ** 2)


def mutate_item_gradient(x):
    return np.concatenate([[8.0 * x[0]], 2.0 * x[1:]])


def mutate_item_hessian(x):
    return np.diag(np.concatenate([[8.0], np.full(len(x) - 1, 2.0)]))


def mutate_slice(x):
    """x[1:] ← 3·x[1:]: f = 9·x0·Σ_{i≥1} x_i² + x0 + 3·Σ_{i≥1} x_i."""
    x[1:] = x[1:] * 3.0
    return x[0] * np.sum(x[1:] ** 2) + np.sum(x)


def mutate_slice_gradient(x):
    return np.concatenate([[9.0 * np.sum(x[1:] ** 2) + 1.0], 18.0 * x[0] * x[1:] + 3.0])


def mutate_slice_hessian(x):
    h = np.diag(np.concatenate([[0.0], np.full(len(x) - 1, 18.0 * x[0])]))
    h[0, 1:] = h[1:, 0] = 18.0 * x[1:]
    return h


MUTATING = [
    ("mutate_item", mutate_item, np.array([0.7, -1.3, 0.4]), mutate_item_gradient, mutate_item_hessian),
    ("mutate_slice", mutate_slice, np.array([0.6, -0.8, 1.1, 0.25]), mutate_slice_gradient,
     mutate_slice_hessian),
]
