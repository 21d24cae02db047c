"""3-D arrays of duals in compiled code (jit/tensor.py, numpy_tensor.py): allocation and
assignment, views and NumPy's write semantics, every rule through the 2-D slices with
broadcasting, a 3-D output (Jacobian, sparse Jacobian, vjp) and second order."""

import numba
import numpy as np
import pytest

import dualad

POINTS = [np.array([0.7, -0.4, 1.3]), np.array([0.5, 0.5, 0.0])]


@numba.njit
def grid(x):
    """A buffer filled by entries, lines, planes and numbers; in-place operators on
    overlapping views; writes through views; joins, splits, sums; a 3-D result."""
    t = np.zeros((2, 3, 2))
    for i in range(2):
        for j in range(3):
            t[i, j, 0] = x[j] * (i + 1.0)
            t[i, j, 1] = x[j] ** 2 - i
    t[1, 0] = x[:2]                   # a line
    t[0, :, 1] = x * 3.0              # a line along the second axis
    t[:, 2] = np.outer(x[:2], x[1:])  # a matrix into a plane
    t[1, 1, 1] = 0.25                 # a number
    t += x[0]                         # in place
    t[1:] *= t[:1]                    # in place from an overlapping view: read first
    u = t.copy()
    u[0] = t[1]
    v = t[:, ::-1, :]
    v[0, 0, 0] = x[2] * 7.0           # a write through a view reaches t (t[0, 2, 0])
    w = np.transpose(t) * 1.0
    joined = np.dstack((x, x * x, np.ones(3)))  # (1, 3, 3)
    pieces = np.dsplit(joined, np.array([1]))
    s = np.sin(np.atleast_3d(np.outer(x, x))) * x[1] + np.outer(x, x)[:, :1]  # broadcast
    out = np.zeros((2, 3, 2))
    out[0] = t[0] + u[1] * w[1] - np.sum(t, axis=1)[1]
    out[1] = np.stack((pieces[1][0, :, 0], pieces[0][0, :, 0] * np.sum(s), np.sum(s, axis=0)[:, 0]),
                      axis=1)[:, :2] + x.reshape(3, 1, 1)[:, :, 0] * np.max(t) * t.mean()
    return out


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_3d_program_matches_the_python_path(mode):
    for x in POINTS:
        jac = dualad.jacobian(grid, mode=mode)(x)
        assert jac.shape == (2, 3, 2, 3)
        np.testing.assert_allclose(jac, dualad.jacobian(grid, mode=mode, jit=False)(x), rtol=1e-13, atol=1e-14)
        sparse = dualad.jacobian(grid, mode=mode, sparsity=True)(x)  # rows: the entries in C order
        np.testing.assert_allclose(sparse.toarray(), jac.reshape(12, 3), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(grid(x), grid.py_func(x), rtol=1e-15)  # NumPy's write semantics
    cotangent = np.arange(12.0).reshape(2, 3, 2)
    np.testing.assert_allclose(dualad.vjp(grid, x)[1](cotangent)[0], np.einsum("ijk,ijkl->l", cotangent, jac),
                               rtol=1e-13)


@numba.njit
def energy(x):
    t = np.dstack((x, x * x, np.sin(x)))
    return np.sum(t * t) + np.sum(np.cos(t[0]) * x[0]) + np.sum(np.sum(t, axis=2) ** 2) + t.prod()


def test_second_order_through_3d_arrays():
    x, v = POINTS[0], np.array([0.2, -1.0, 0.5])
    expected = dualad.hessian(energy, jit=False)(x)
    np.testing.assert_allclose(dualad.hessian(energy)(x), expected, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(dualad.hvp(energy)(x, v), expected @ v, rtol=1e-13, atol=1e-14)


@numba.njit
def mismatched(x):
    return np.dstack((x, x[:2])).ravel()


def test_shapes_that_do_not_fit_raise_as_numpy():
    with pytest.raises(ValueError, match="dimensions except for the concatenation axis must match"):
        dualad.jacobian(mismatched)(POINTS[0])


@numba.njit
def aliasing(x):
    """In-place operators whose operand is a lower-dimensional view of the target, and ravel's
    copy-or-view rule (a view only of a C-contiguous array) in 1-D, 2-D and 3-D."""
    t = x.reshape(2, 2, 2) * 1.0
    t += t[0]                         # NumPy reads t[0] before writing slice 0
    t -= t[:, 1, :][0]
    r = t[::-1, ::-1, ::-1].ravel()   # negative steps: a copy
    r[0] = 100.0 * x[0]
    m = x.reshape(2, 4) * 1.0
    q = m[::-1, ::-1].ravel()         # a copy
    q[1] = 3.0 * x[1]
    c = m[:, :1].ravel()              # gaps: a copy
    c[0] = 4.0 * x[2]
    w = x * 1.0
    p = w[::2].ravel()                # gaps: a copy
    p[0] = 9.0 * x[3]
    v = x[:4] * 1.0
    a = np.atleast_3d(v).ravel()      # contiguous: a view, the write reaches v
    a[1] = 50.0 * x[5]
    return np.concatenate((t.ravel(), r, m.ravel(), q, c, w, p, v))


F_ORDERED = np.asfortranarray(np.arange(6.0).reshape(3, 2) * 0.1)


@numba.njit
def layouts(x):
    """Writes through views of the argument (reshape, atleast_2d, expand_dims, atleast_3d reach
    x), and through ravel of results NumPy lays out in F order (np.sin(m.T), np.copy(m.T),
    joins, np.where, cumsum, zeros_like and astype of F-ordered operands: a copy) or C order
    (column_stack of vectors, m.T + a C-ordered matrix: a view)."""
    x = x * 1.0
    x.reshape(2, 4)[1, 0] *= 3.0
    x[2:6].reshape((2, 2))[0, 1] += x[0]
    np.atleast_2d(x)[0, 6] = x[1] * x[7]
    np.expand_dims(x, 1)[3, 0] -= x[5] ** 2
    np.atleast_3d(x)[0, 2, 0] = np.sin(x[4])
    m = np.outer(x[:2], x[2:5])
    a = np.sin(m.T)
    a.ravel()[1] = 10.0 * x[0]        # F-ordered: a copy, a unchanged
    b = np.copy(m.T)
    b.ravel()[2] = 20.0 * x[1]        # F-ordered: a copy
    c = m.T + np.ones((3, 2))
    c.ravel()[1] = 30.0 * x[2]        # C-ordered (C wins the conflict): a view
    d = np.column_stack((x[:3], x[3:6]))
    d.ravel()[4] = 40.0 * x[3]        # C-ordered: a view
    e = np.exp(a) * b                 # both F-ordered: F
    e.ravel()[3] = 50.0 * x[4]        # a copy
    t = np.atleast_3d(a) + 1.0        # F-ordered (3, 2, 1)
    t.ravel()[2] = 60.0 * x[6]        # a copy
    g = np.vstack((m.T, np.cos(m.T), F_ORDERED))  # every block F: F
    g.ravel()[2] = 70.0 * x[5]        # a copy
    k = np.where(m.T > 0.0, m.T, 2.0 * m.T)  # F, its condition too
    k.ravel()[1] = 80.0 * x[6]
    q = np.cumsum(m.T, axis=0)        # F
    q.ravel()[1] = 90.0 * x[7]
    z = np.zeros_like(m.T)            # F
    z[:, :] = m.T
    z.ravel()[1] = 11.0 * x[0]
    s = m.T.astype(np.float64)        # F (order 'K')
    s.ravel()[1] = 12.0 * x[1]
    return np.concatenate((x, a.ravel(), b.ravel(), c.ravel(), d.ravel(), e.ravel(), t.ravel(), g.ravel(),
                           k.ravel(), q.ravel(), z.ravel(), s.ravel()))


@numba.njit
def squares_of_layouts(x):
    return np.sum(layouts(x) ** 2)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_writes_follow_numpys_layouts(mode):
    x = np.array([0.7, -0.4, 1.3, 0.5, 2.0, -1.1, 0.9, 0.3])
    # the compiled duals' values are NumPy's (numba's floats are not: their cumsum(m.T, axis=0)
    # is C-ordered)
    np.testing.assert_allclose(dualad.jvp(layouts, (x,), (np.ones(8),))[0], layouts.py_func(x), rtol=1e-15)
    expected = dualad.jacobian(layouts, mode="forward", jit=False)(x)
    h = 1e-6
    central = np.stack([(layouts.py_func(x + h * e) - layouts.py_func(x - h * e)) / (2 * h)
                        for e in np.eye(8)], axis=1)
    np.testing.assert_allclose(expected, central, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dualad.jacobian(layouts, mode=mode)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(dualad.jacobian(layouts, mode=mode, jit=False)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(dualad.hvp(squares_of_layouts)(x, np.ones(8)),
                               dualad.hessian(squares_of_layouts, jit=False)(x) @ np.ones(8), rtol=1e-12)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_writes_follow_numpys_views_and_copies(mode):
    x = np.array([0.7, -0.4, 1.3, 0.5, 2.0, -1.1, 0.9, 0.3])
    expected = dualad.jacobian(aliasing, mode="forward", jit=False)(x)
    np.testing.assert_allclose(dualad.jacobian(aliasing, mode=mode)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(dualad.jacobian(aliasing, mode=mode, jit=False)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(dualad.jvp(aliasing, (x,), (np.ones(8),))[0], aliasing.py_func(x), rtol=1e-15)
