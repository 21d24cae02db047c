"""The ways people build arrays (issue 13, item 3), on the Python path: np.array/np.asarray of
dual numbers and of lists holding them, allocations filled by item assignment, lists of
duals passed to NumPy functions, a library function that converts its input first."""

import numpy as np
import pytest
import scipy.optimize

import dualad
from dualad.allocation import Buffer
from numpy import array as imported_array
from numpy import zeros as imported_zeros

MODES = ("forward", "reverse")
y0 = np.array([1.0, 2e-3, 3e-2])


def robertson_array(y, k1=0.04, k2=3e7, k3=1e4):
    """The ODE tutorial's right-hand side: np.array of three dual scalars."""
    dy0 = -k1 * y[0] + k3 * y[1] * y[2]
    dy1 = k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2
    dy2 = k2 * y[1] ** 2
    return np.array([dy0, dy1, dy2])


def robertson_buffer(y, k1=0.04, k2=3e7, k3=1e4):
    """The same, into a np.zeros buffer by item assignment."""
    out = np.zeros(3)
    out[0] = -k1 * y[0] + k3 * y[1] * y[2]
    out[1] = k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2
    out[2] = k2 * y[1] ** 2
    return out


def robertson_jacobian(y, k1=0.04, k2=3e7, k3=1e4):
    return np.array([[-k1, k3 * y[2], k3 * y[1]],
                     [k1, -k3 * y[2] - 2 * k2 * y[1], -k3 * y[1]],
                     [0.0, 2 * k2 * y[1], 0.0]])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rhs", [robertson_array, robertson_buffer])
def test_ode_right_hand_sides(rhs, mode):
    np.testing.assert_allclose(dualad.jacobian(rhs, mode=mode)(y0), robertson_jacobian(y0),
                               rtol=1e-14)
    value = dualad.jvp(rhs, (y0,), (np.ones(3),))[0]
    assert isinstance(value, np.ndarray) and value.dtype == np.float64
    np.testing.assert_array_equal(value, robertson_array(y0))


def test_second_order_through_buffers_and_object_arrays():
    for rhs in (robertson_array, robertson_buffer):
        h = dualad.hessian(lambda y: rhs(y)[1])(y0)
        np.testing.assert_allclose(h, [[0, 0, 0], [0, -6e7, -1e4], [0, -1e4, 0]], rtol=1e-14)
        np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(lambda y: rhs(y)[1]))(y0), h,
                                   rtol=1e-14)


@pytest.mark.parametrize("mode", MODES)
def test_scipy_rosen_converts_its_input_first(mode):
    # scipy.optimize.rosen begins with np.asarray(x)
    x = np.array([1.2, 0.8, 1.5, 2.0])
    np.testing.assert_allclose(dualad.grad(scipy.optimize.rosen, mode=mode)(x),
                               scipy.optimize.rosen_der(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.hessian(scipy.optimize.rosen)(x),
                               scipy.optimize.rosen_hess(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_lists_of_duals_into_numpy_functions(mode):
    def f(x):
        return (np.mean([x[0], x[1] ** 2]) + np.linalg.norm([x[0], x[1]])
                + np.sum(np.append([x[0]], x[1:] * 2)) + np.max([x[0], 3 * x[1]]))

    x = np.array([1.2, 0.8, 1.5])
    r = np.hypot(x[0], x[1])
    expected = [0.5 + x[0] / r + 1, x[1] + x[1] / r + 2 + 3, 2]
    np.testing.assert_allclose(dualad.grad(f, mode=mode)(x), expected, rtol=1e-14)


def test_asarray_keeps_the_derivative_and_float_conversion_refuses():
    def f(x):
        a = np.asarray(x)
        b = np.asanyarray(x)
        return np.sum(np.sin(a) * b)

    x = np.array([0.3, -1.1, 2.0])
    for mode in MODES:
        np.testing.assert_allclose(dualad.grad(f, mode=mode)(x), np.sin(x) + x * np.cos(x),
                                   rtol=1e-14)
    # asarray of a float64 array with dtype=float is the array itself, in NumPy and here
    np.testing.assert_array_equal(dualad.grad(lambda x: np.sum(np.asarray(x, dtype=float)))(x), [1.0] * 3)
    with pytest.raises(TypeError, match="would drop its derivative"):
        dualad.grad(lambda x: np.sum(np.asarray(x, dtype=np.float32)))(x)


def _fill_2d(x):
    a = np.empty((2, 2))
    a[0, :] = x[:2]
    a[1] = x[1:] ** 2
    a += 1.0
    return np.linalg.det(a)


def _fill_full_ones(x):
    a = np.full(3, 2.0)
    b = np.ones((3,))
    a[1] = x[0] * x[1]
    b[2:] = np.exp(x[2:])
    c = imported_zeros(2)  # imported by name
    c[0] = x[2]
    return np.sum(a * b) + c[0] * c[1] + np.sum(c)


def _fill_zeros_like_of_floats(x):
    out = np.zeros_like(np.arange(3.0))
    out[:] = x * 2
    tail = out[1:]           # a view of the buffer: writes go through
    tail[0] = x[0] ** 3
    return np.sum(out ** 2)


@pytest.mark.parametrize("f", [_fill_2d, _fill_full_ones, _fill_zeros_like_of_floats])
def test_allocations_filled_by_assignment(f):
    x = np.array([0.7, -1.3, 0.4])
    expected = _central_gradient(f, x)
    for mode in MODES:
        np.testing.assert_allclose(dualad.grad(f, mode=mode)(x), expected, rtol=1e-7)
    h = dualad.hessian(f)(x)
    np.testing.assert_allclose(h, dualad.jacfwd(dualad.jacrev(f))(x), rtol=1e-12, atol=1e-12)


def test_buffers_in_functions_the_user_calls_lambdas_and_closures():
    def inner(z):
        b = np.ones(2)
        b[1] = z[0] * z[1]
        return b

    x = np.array([2.0, 3.0])
    assert np.allclose(dualad.grad(lambda z: np.sum(inner(z) ** 2))(x), [2 * 6 * 3, 2 * 6 * 2])
    assert np.allclose(dualad.grad(lambda z: robertson_buffer(z)[2] + 0 * z[0])(y0),
                       [0, 2 * 3e7 * y0[1], 0])


def test_float_work_arrays_and_the_users_function_stay_untouched():
    a_float = []

    def f(x):
        work = np.zeros((2, 2))        # floats only: solve gets a float matrix
        work[0, 0], work[1, 1] = 2.0, 4.0
        a_float.append(type(np.linalg.solve(work, np.ones(2))))
        return np.sum(np.linalg.solve(work, x))

    np.testing.assert_allclose(dualad.grad(f)(np.ones(2)), [0.5, 0.25])
    assert a_float[-1] is np.ndarray
    assert f.__globals__["np"] is np  # the user's function and module are not modified
    assert isinstance(robertson_buffer.__globals__["np"].zeros(2), np.ndarray)
    assert not isinstance(robertson_buffer(y0), Buffer)


COUNTER = 0


def _writes_a_global(x):
    global COUNTER
    COUNTER += 1
    out = np.zeros(2)
    out[0] = x[0]
    return out


def test_a_function_writing_globals_runs_untouched_and_says_what_to_do():
    with pytest.raises((TypeError, ValueError)) as err:
        dualad.jacobian(_writes_a_global)(np.ones(2))
    assert "np.zeros_like" in str(err.value) + str(err.value.__cause__)
    assert COUNTER >= 1  # its global write went to its module


def test_a_float_array_made_outside_the_transform_refuses_duals():
    outside = np.zeros(2)

    def f(x):
        outside[0] = x[0]
        return outside

    with pytest.raises((TypeError, ValueError)) as err:
        dualad.jacobian(f)(np.ones(2))
    assert "np.zeros_like" in str(err.value) + str(err.value.__cause__)


def _central_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def _in_place_numpy_writers(x):
    m = np.zeros((2, 2))
    view = np.transpose(m)          # a view of the buffer, taken before any write
    np.fill_diagonal(m, 2.0)
    np.copyto(m[1:], 3.0)
    np.add.at(m, (0, 0), x[0] ** 2)
    m[0, 1] = x[1]
    return np.concatenate([view.ravel(), m.ravel()])


def test_numpy_writers_and_views_on_a_buffer_follow_numpy():
    x = np.array([0.5, 1.5])
    expected_value = np.array([2.25, 3.0, 1.5, 3.0, 2.25, 1.5, 3.0, 3.0])
    for mode in MODES:
        jac = dualad.jacobian(_in_place_numpy_writers, mode=mode)(x)
        np.testing.assert_array_equal(jac[:, 0], [1.0, 0, 0, 0, 1.0, 0, 0, 0])
        np.testing.assert_array_equal(jac[:, 1], [0, 0, 1.0, 0, 0, 1.0, 0, 0])
    value = dualad.jvp(_in_place_numpy_writers, (x,), (np.ones(2),))[0]
    np.testing.assert_array_equal(value, expected_value)


def test_methods_of_a_buffer_holding_duals():
    def f(x):
        out = np.zeros(2)
        out[:] = x * x
        return (out.sum() + out.mean() + out.std() + out.max() + out.cumsum()[-1]
                + out.clip(0, 1).sum() + out.astype(float).sum())

    x = np.array([0.5, 1.5])
    for mode in MODES:
        np.testing.assert_allclose(dualad.grad(f, mode=mode)(x), [4.0, 15.0], rtol=1e-14)


class _Model:
    def __init__(self, k):
        self.k = k

    def rhs(self, y):
        out = np.zeros(2)
        out[0] = self.k * y[0] * y[1]
        out[1] = y[0]
        return out


def _rhs(y, k):
    out = np.zeros(2)
    out[0] = k * y[0] * y[1]
    out[1] = y[0]
    return out


def test_bound_methods_and_partials_get_buffers():
    import functools

    y = np.array([0.5, 1.5])
    expected = [[3.0 * 1.5, 3.0 * 0.5], [1.0, 0.0]]
    np.testing.assert_array_equal(dualad.jacobian(_Model(3.0).rhs)(y), expected)
    np.testing.assert_array_equal(dualad.jacobian(functools.partial(_rhs, k=3.0))(y), expected)
    np.testing.assert_array_equal(dualad.jacobian(_rhs)(y, k=3.0), expected)


def test_allocations_of_other_dtypes_stay_numpy_arrays():
    def f(x):
        index = np.zeros(2, int)          # a positional dtype: an integer array, as NumPy
        index[1] = 2
        out = np.zeros(3)
        out[index[1]] = x[0] ** 2
        assert index.dtype.kind == "i" and not isinstance(index, Buffer)
        return out

    np.testing.assert_array_equal(dualad.jacobian(f)(np.array([3.0])), [[0.0], [0.0], [6.0]])


# ---- NumPy's view-or-copy semantics on arrays of dual numbers (issue 8's silent kind) -------
def _scalar_is_a_copy(x):
    v = x * 1.0
    m = np.outer(x[:2], x[1:])
    s, t = v[0], m[1, 0]        # NumPy: scalars, copies
    v[0] = 5.0 * x[1]           # must not change s
    m[1, 0] = x[2] ** 2         # nor t
    return np.array([s * t, v[0], m[1, 0]])


def _in_place_operators_write_through(x):
    m = np.outer(x[:2], x[1:])
    w, alias = m[0], m          # a view and an alias
    m *= 2.0
    m += x[0]
    alias -= x[1] * x[2]
    m /= 1.5 + x[2] ** 2
    m **= 2
    s = x[0] * 1.0
    kept = s
    s += 1.0                    # a scalar is immutable: the name is rebound, kept unchanged
    return np.concatenate([w, alias.ravel(), np.array([kept, s])])


def _central_difference(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))], axis=1)


@pytest.mark.parametrize("f", [_scalar_is_a_copy, _in_place_operators_write_through])
@pytest.mark.parametrize("mode", MODES)
def test_views_copies_and_in_place_operators_follow_numpy(f, mode):
    x = np.array([0.5, -1.0, 0.25])
    np.testing.assert_allclose(dualad.jacobian(f, mode=mode)(x), _central_difference(f, x),
                               rtol=1e-7, atol=1e-8)
    second = lambda y: np.sum(f(y) ** 2)
    expected = _central_difference(lambda y: dualad.grad(second, mode="reverse")(y), x)
    np.testing.assert_allclose(dualad.hessian(second, mode="forward")(x), expected, rtol=1e-6, atol=1e-7)
    pattern = dualad.jacobian_sparsity(f)(x).toarray()
    assert np.all(pattern[dualad.jacobian(f, mode=mode)(x) != 0])  # no nonzero outside it


def test_an_in_place_operator_that_would_change_the_shape_is_numpys_error():
    def f(x):
        v = x[:2] * 1.0
        v += np.outer(x[:2], x[:2])
        return v

    for mode in MODES:
        with pytest.raises(ValueError, match="non-broadcastable output operand"):
            dualad.jacobian(f, mode=mode)(np.array([0.5, 1.5]))


def _eigenvalues_of_scalars(x):
    a = np.array([[x[0], x[1]], [x[1], x[2]]])   # an object array of dual scalars
    return np.linalg.eigvalsh(a)


def _adjugate_row(x):
    a = imported_array([[x[0], x[1]], [x[1], x[2]]])
    return np.linalg.det(a) * np.linalg.inv(a)[0]


@pytest.mark.parametrize("mode", MODES)
def test_numpy_routines_take_an_array_built_from_dual_scalars(mode):
    """np.array of dual scalars is an object array, which NumPy's compiled routines
    (np.linalg) cannot take; f's view of NumPy makes it a Buffer, seen as one dual array."""
    x = np.array([1.0, 0.5, 2.0])
    s = np.sqrt(2.0) / 2
    np.testing.assert_allclose(dualad.jacobian(_eigenvalues_of_scalars, mode=mode)(x),
                               [[0.5 + s / 2, -s, 0.5 - s / 2], [0.5 - s / 2, s, 0.5 + s / 2]], rtol=1e-14)
    np.testing.assert_allclose(dualad.jacobian(_adjugate_row, mode=mode)(x), [[0, 0, 1.0], [0, -1.0, 0]],
                               atol=1e-15)
    np.testing.assert_allclose(dualad.hessian(lambda y: np.sum(_eigenvalues_of_scalars(y) ** 2))(x),
                               np.diag([2.0, 4.0, 2.0]), atol=1e-14)


def _conversions_keep_numpys_aliasing(x):
    y = x * 1.0
    np.asarray(y)[0] = x[1] ** 2              # y itself: reaches y
    np.ascontiguousarray(y)[1] += x[2]        # y itself
    z = np.ascontiguousarray(y[::2])          # a copy
    z[0] = 5.0 * x[0]
    w = np.array(y)                           # a copy
    w[2] = 7.0 * x[1]
    return np.concatenate([y, z, w])


@pytest.mark.parametrize("mode", MODES)
def test_asarray_of_a_dual_array_is_the_array_itself(mode):
    x = np.array([0.5, -1.0, 0.25, 2.0])
    np.testing.assert_allclose(dualad.jacobian(_conversions_keep_numpys_aliasing, mode=mode)(x),
                               _central_difference(_conversions_keep_numpys_aliasing, x), rtol=1e-7, atol=1e-8)


_F_CONSTANT = np.asfortranarray(np.arange(6.0).reshape(3, 2) * 0.1)


def _layouts_of_new_arrays(x):
    """Writes through ravel reach an array exactly where NumPy's ravel is a view: new arrays
    are laid out as NumPy lays them out (order 'K'), tangents as their values."""
    m = np.sin(x).reshape(2, 3)
    outs = []
    for make in (lambda: m.T.astype(np.float64), lambda: np.vstack((m.T, _F_CONSTANT)),
                 lambda: np.column_stack((m.T, _F_CONSTANT)), lambda: np.array(m.T, copy=True),
                 lambda: m.T + np.ones((3, 2)), lambda: np.exp(m.T) * m.T, lambda: m.T.copy(),
                 lambda: m.T.copy(order="K"), lambda: np.asarray(m.T)):
        a = make()
        a.ravel()[1] = x[2] * x[3]      # reaches a where a is C-ordered
        outs.append(a.ravel())
    z = np.zeros_like(m.T)
    z[:, :] = m.T
    z.ravel()[1] = x[0] * x[4]
    f = np.full_like(m.T, 0.5)
    f[...] = m.T
    f.ravel()[2] = x[1] * x[5]
    return np.concatenate(outs + [z.ravel(), f.ravel(), m.ravel()])


@pytest.mark.parametrize("mode", MODES)
def test_new_arrays_are_laid_out_as_numpys(mode):
    x = np.array([0.3, -0.7, 1.1, 0.5, -0.2, 0.9])
    expected = _central_difference(_layouts_of_new_arrays, x)
    np.testing.assert_allclose(dualad.jacobian(_layouts_of_new_arrays, mode=mode)(x), expected,
                               rtol=1e-7, atol=1e-8)
    pattern = dualad.jacobian_sparsity(_layouts_of_new_arrays)(x).toarray()
    assert np.all(pattern[np.abs(expected) > 1e-6])  # no nonzero outside it


def _written_then_raveled(x):
    m = np.outer(x[:2], x[2:5])
    a = np.sin(m.T)                 # F-ordered
    a[0, 0] = x[0] ** 2             # a write keeps a F-ordered (on the tape too)
    a.ravel()[1] = 10.0 * x[1]      # so ravel is a copy: a unchanged
    return np.sum(a.ravel() ** 2)


def test_a_write_keeps_the_layout_under_forward_over_reverse():
    x = np.array([0.5, -1.0, 0.25, 2.0, 1.5])
    expected = _central_difference(dualad.grad(_written_then_raveled, mode="reverse"), x, h=1e-5)
    for mode in ("forward-over-reverse", "forward"):
        np.testing.assert_allclose(dualad.hessian(_written_then_raveled, mode=mode)(x), expected,
                                   rtol=1e-6, atol=1e-6)
