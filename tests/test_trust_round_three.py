"""Regression tests for the silent wrong results and crashes of issue 39 (round three), one
or more per item, on the Python path; each fails on the code before its fix. The guards of
each kind are elsewhere: tests/test_fuzz_layouts.py (repeated-index writes, memory orders,
the sparsity tracer), tests/test_sparsity_plans.py (reused plans), tests/test_cache.py
(callees in other modules), tests/compiled/test_trust_round_three_compiled.py (the
compiled items). The cases of autograd's own test suite that dualad failed are mirrored here
(item 6: std over an axis of length 1, float32 gradients; item 11: eig, pinv of a low-rank
matrix, as autograd's test_linalg builds it from its factors)."""

import numpy as np
import pytest

import dualad

MODES = ("forward", "reverse")


def dense(f, x, *args, **kwargs):
    return dualad.jacobian(f, mode="forward")(x, *args, **kwargs)


def every_jacobian(f, x):
    """Forward, reverse, auto and sparse (forward and reverse) Jacobians of f at x."""
    out = {mode: dualad.jacobian(f, mode=mode)(x) for mode in ("forward", "reverse", "auto")}
    for mode in MODES:
        out[f"sparse {mode}"] = dualad.jacobian(f, mode=mode, sparsity=True)(x).toarray().reshape(
            out["forward"].shape)
    return out


def assert_all_equal(results, expected, atol=1e-12):
    for name, got in results.items():
        np.testing.assert_allclose(got, expected, atol=atol, err_msg=name)


# ---- item 1: item assignment with a repeated integer index ---------------------------------------
def last_write_wins(x):
    y = np.zeros(4)
    y[[1, 1]] = x[:2]           # NumPy: y[1] = x[1]
    return np.sum(y * np.arange(4.0)) + 0.0 * x[3]


def repeated_in_place(x):
    y = x.copy()
    y[[1, 1]] += x[2:]          # NumPy: y[1] = x[1] + x[3] (the gather twice, the last write kept)
    return y


def broadcast_into_repeated(x):
    y = x * 1.0
    y[[0, 2, 0]] = x[3]         # one item entry broadcast to three writes, two landing
    return y * np.arange(1.0, 5.0)


def boolean_and_fancy_mixed(x):
    m = np.outer(x, x[:3])
    m[[0, 0, 3], [1, 1, 2]] = x[1:4] * 2.0
    return m.ravel()


@pytest.mark.parametrize("f", [last_write_wins, repeated_in_place, broadcast_into_repeated,
                               boolean_and_fancy_mixed])
def test_a_repeated_index_write_is_differentiated_as_numpy_writes_it(f):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    expected = dense(f, x)
    assert_all_equal(every_jacobian(f, x), expected)


def test_repeated_in_place_gradient_is_numpys():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    g = dualad.grad(lambda x: np.sum(repeated_in_place(x) * np.arange(4.0)), mode="reverse")(x)
    np.testing.assert_array_equal(g, [0.0, 1.0, 2.0, 4.0])


def test_second_order_through_a_repeated_index_write():
    def f(x):
        y = x * x
        y[[2, 2]] = x[:2] ** 3
        return np.sum(y)
    x = np.array([0.5, 1.5, 2.0])
    expected = dualad.hessian(f, mode="forward")(x)
    np.testing.assert_allclose(expected, np.diag([2.0, 2.0 + 6.0 * 1.5, 0.0]))  # x0² + x1² + x1³
    np.testing.assert_allclose(dualad.hessian(f, mode="forward-over-reverse")(x), expected)
    np.testing.assert_allclose(dualad.hessian(f, sparsity=True)(x).toarray(), expected)
    np.testing.assert_allclose(dualad.hvp(f)(x, np.ones(3)), expected @ np.ones(3))


# ---- item 2: memory orders and views --------------------------------------------------------------
def ravel_k(x):
    m = np.sin(x.reshape(2, 3).T)   # F-ordered, as NumPy lays out sin of a transpose
    return np.ravel(m, order="K") * np.arange(6.0)


def reshape_a(x):
    m = np.sin(x.reshape(2, 3).T)
    return m.reshape(6, order="A") * np.arange(6.0)


def flatten_k(x):
    return np.cos(x.reshape(3, 2).T).flatten("K") * np.arange(6.0)


def method_ravel_f(x):
    return x.reshape(2, 3).ravel(order="F") ** 2


def copy_of_f_ordered_ravel(x):
    m = np.sin(x.reshape(2, 3).T)   # F-ordered: NumPy's ravel() is a copy
    r = np.ravel(m)
    r[0] = x[5]                     # so m keeps sin(x[0])
    return np.concatenate([np.ravel(m, order="C"), r])


def built_then_viewed(x):
    x = np.asarray(x)               # as library code starts: the function runs over buffers
    m = np.array([[x[0], x[1]], [x[2], x[3]]])
    mt = m.T * 1.0                  # F-ordered, as NumPy lays out a product of a transpose
    v = mt.T.ravel()                # a view: C-contiguous
    v[0] = 10.0 * x[3]
    return mt.ravel()


def fortran_of_duals(x):
    m = np.asfortranarray(x.reshape(2, 2) * 1.0)
    v = m.T.ravel()                 # a view: m.T is C-contiguous
    v[0] = 10.0 * x[3]
    return m.ravel()


@pytest.mark.parametrize("f", [ravel_k, reshape_a, flatten_k, method_ravel_f, copy_of_f_ordered_ravel])
def test_memory_orders_are_numpys_on_every_layer(f):
    x = np.arange(1.0, 7.0) * 0.3
    expected = dense(f, x)
    assert_all_equal(every_jacobian(f, x), expected)
    pattern = dualad.jacobian_sparsity(f)(x).toarray()
    assert np.all(pattern[expected != 0]), "the pattern misses a nonzero"


@pytest.mark.parametrize("f", [built_then_viewed, fortran_of_duals])
def test_arrays_built_from_duals_are_laid_out_as_numpy_lays_them(f):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    value = f(x.copy())
    results = every_jacobian(f, x)
    expected = np.zeros((4, 4))
    for row, entry in enumerate(value):  # each output is one x entry, or 10·x[3] at the write
        if entry == 10.0 * x[3]:
            expected[row, 3] = 10.0
        else:
            expected[row, int(np.flatnonzero(x == entry)[0])] = 1.0
    assert_all_equal(results, expected)


# ---- item 5 ---------------------------------------------------------------------------------------
def test_diff_of_order_zero_is_the_input_unchanged():
    def f(x):
        return np.diff(x.reshape(3, 1) * np.ones(3), n=0, prepend=x[0] * np.ones((1, 3)), axis=0)
    x = np.arange(3.0)
    assert f(x).shape == (3, 3)
    for mode in MODES:
        jac = dualad.jacobian(f, mode=mode)(x)
        assert jac.shape == (3, 3, 3)
        np.testing.assert_array_equal(jac[:, :, 1], [[0, 0, 0], [1, 1, 1], [0, 0, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        dualad.grad(lambda x: np.sum(np.diff(x, n=-1)))(x)


# ---- item 6 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_std_of_a_single_entry_is_constant_zero(mode):
    np.testing.assert_array_equal(dualad.grad(np.std, mode=mode)(np.array([2.0])), [0.0])
    g = dualad.grad(lambda x: np.sum(np.std(x, axis=0)), mode=mode)(np.arange(3.0).reshape(1, 3))
    np.testing.assert_array_equal(g, np.zeros((1, 3)))
    g = dualad.grad(lambda x: np.sum(np.nanstd(x, axis=1)), mode=mode)(np.array([[1.0, np.nan], [1.0, 2.0]]))
    np.testing.assert_array_equal(g, [[0.0, 0.0], [-0.5, 0.5]])


def test_std_of_equal_entries_is_not_differentiable_and_says_nan():
    with np.errstate(all="ignore"):
        g = dualad.grad(np.std)(np.array([2.0, 2.0]))
    assert np.all(np.isnan(g))


def test_std_single_entry_second_order_is_zero():
    np.testing.assert_array_equal(dualad.hessian(lambda x: np.std(x[:1]) + x[1] ** 2)(np.array([1.0, 2.0])),
                                  [[0.0, 0.0], [0.0, 2.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_derivatives_of_narrow_float_inputs_have_their_dtype(dtype):
    x = np.array([1.0, 2.0, 3.0], dtype=dtype)

    def f(x):
        return np.sum(x ** 2)
    for mode in MODES:
        g = dualad.grad(f, mode=mode)(x)
        assert g.dtype == dtype
        np.testing.assert_array_equal(g, (2 * x).astype(dtype))
        assert dualad.jacobian(lambda x: x ** 2, mode=mode)(x).dtype == dtype
    assert dualad.hessian(f)(x).dtype == dtype
    assert dualad.vjp(lambda x: x ** 2, x)[1](np.ones(3))[0].dtype == dtype
    assert dualad.grad(f)(x.astype(np.float64)).dtype == np.float64


# ---- item 7 ---------------------------------------------------------------------------------------
def sin_of_asarray_of_a_sum(x):
    s = np.sum(x)
    return np.sum(np.sin(np.asarray(s)) * x)


def test_second_order_through_asarray_of_a_zero_d_intermediate():
    x = np.array([0.3, 0.5, 0.7])
    expected = dualad.hessian(sin_of_asarray_of_a_sum, mode="forward")(x)
    s = x.sum()  # f = sin(s)·s: every second partial is 2 cos s − s sin s
    analytic = np.full((3, 3), 2 * np.cos(s) - np.sin(s) * s)
    np.testing.assert_allclose(expected, analytic, rtol=1e-13)
    np.testing.assert_allclose(dualad.hessian(sin_of_asarray_of_a_sum, mode="forward-over-reverse")(x), analytic,
                               rtol=1e-13)
    np.testing.assert_allclose(dualad.hessian(sin_of_asarray_of_a_sum, sparsity=True)(x).toarray(), analytic,
                               rtol=1e-13)
    np.testing.assert_allclose(dualad.hvp(sin_of_asarray_of_a_sum)(np.ones(40) * 0.01, np.ones(40)),
                               dualad.hessian(sin_of_asarray_of_a_sum, mode="forward")(np.ones(40) * 0.01) @ np.ones(40),
                               rtol=1e-12)


@pytest.mark.parametrize("g", [lambda ab: ab[0] * ab[1], lambda ab: np.dot(ab[0], ab[1]),
                               lambda ab: np.tensordot(ab[0], ab[1], axes=0)])
@pytest.mark.parametrize("along_itself", [False, True])
def test_third_order_nesting_on_a_tuple_of_floats(g, along_itself):
    """jvp(vjp(jvp(g))) of a·b; along_itself, each jvp's tangent is its primal (the form that
    wrote into a 0-d dual through x[..., None])."""
    def inner(ab):
        return dualad.jvp(g, (ab,), (ab if along_itself else (1.0, 2.0),))[1]  # 2ab, or 2a + b

    def middle(ab):
        return dualad.vjp(inner, ab)[1](1.0)[0]

    p = (2.0, 3.0)
    value, tangent = dualad.jvp(middle, (p,), (p if along_itself else (1.0, 0.0),))
    if along_itself:  # ∇(2ab) = (2b, 2a), along (a, b): (2b, 2a)
        assert tuple(map(float, value)) == (6.0, 4.0) and tuple(map(float, tangent)) == (6.0, 4.0)
    else:
        assert tuple(map(float, value)) == (2.0, 1.0) and tuple(map(float, tangent)) == (0.0, 0.0)


# ---- item 8 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("f", [lambda x: np.repeat(x, 0), lambda x: np.array_split(x, 5)[4]])
def test_vjp_of_vjp_of_an_empty_output(f):
    x = np.ones(3)
    out, _ = dualad.vjp(f, x)
    assert out.shape == (0,)
    (ct,) = dualad.vjp(lambda x: dualad.vjp(f, x)[1](np.zeros(0))[0], x)[1](np.ones(3))
    np.testing.assert_array_equal(ct, np.zeros(3))
    (back,) = dualad.vjp(lambda c: dualad.vjp(f, x)[1](c)[0], np.zeros(0))[1](np.ones(3))
    assert back.shape == (0,)


# ---- item 9 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_interp_with_differentiated_left_and_right(mode):
    xp, fp = np.array([0.0, 1.0]), np.array([0.0, 1.0])

    def f(p):
        return np.interp(np.array([-1.0, 0.5, 5.0]), xp, fp, left=p[0], right=p[1])

    def positional(p):
        return np.interp(np.array([-1.0, 0.5, 5.0]), xp, fp, p[0], p[1])

    for g in (f, positional):
        np.testing.assert_array_equal(dualad.jacobian(g, mode=mode)(np.array([2.0, 3.0])),
                                      [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])


def test_ndarray_methods_take_every_argument_ndarrays_take():
    x = np.arange(1.0, 7.0)
    for mode in MODES:
        jac = dualad.jacobian(lambda x: x.reshape(2, 3).ravel(order="F"), mode=mode)(x)
        np.testing.assert_array_equal(jac, np.eye(6)[[0, 3, 1, 4, 2, 5]])
        g = dualad.grad(lambda x: x.reshape(2, 3).sum(axis=0, keepdims=True).max(axis=1)[0], mode=mode)(x)
        np.testing.assert_array_equal(g, [0, 0, 1, 0, 0, 1])
        g = dualad.grad(lambda x: x.reshape(2, 3).std(axis=1, ddof=1).sum(), mode=mode)(x)
        np.testing.assert_allclose(g, dualad.grad(lambda x: np.std(x.reshape(2, 3), axis=1, ddof=1).sum())(x))


# ---- item 11 --------------------------------------------------------------------------------------
def test_eig_of_a_matrix_with_real_distinct_eigenvalues():
    """autograd differentiates eig; the eigenvalues of S diag(d) S⁻¹ are d exactly."""
    s = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 4.0]])

    def eigenvalues(d):
        return np.sort(np.linalg.eig(s @ np.diag(d) @ np.linalg.inv(s)).eigenvalues)
    d = np.array([1.0, 2.0, 3.5])
    for mode in MODES:
        np.testing.assert_allclose(dualad.jacobian(eigenvalues, mode=mode)(d), np.eye(3), atol=1e-12)


def test_pinv_of_a_rank_deficient_matrix_at_constant_rank():
    """pinv(b cᵀ) for vectors b, c is c bᵀ / (|b|² |c|²): rank 1 at every b, c."""
    def pinv_of_outer(z):
        return np.linalg.pinv(np.outer(z[:3], z[3:]))

    def closed_form(z):
        b, c = z[:3], z[3:]
        return np.outer(c, b) / (np.dot(b, b) * np.dot(c, c))
    z = np.array([1.0, 2.0, -1.0, 0.5, 3.0])
    expected = dualad.jacobian(closed_form)(z)
    for mode in MODES:
        np.testing.assert_allclose(dualad.jacobian(pinv_of_outer, mode=mode)(z), expected, atol=1e-12)


# ---- more of the same kinds: layouts, checked patterns, arguments --------------------------------
def test_an_f_ordered_argument_stays_f_ordered_in_every_mode():
    x = np.asfortranarray([[1.0, 2.0], [3.0, 4.0]])

    def f(x):
        return x.ravel(order="K")[1] ** 2      # NumPy: x[1, 0] = 3
    assert f(x) == 9.0
    for mode in ("forward", "reverse"):
        value, gradient = dualad.value_and_grad(f, mode=mode)(x)
        assert value == 9.0
        np.testing.assert_array_equal(gradient, [[0.0, 0.0], [6.0, 0.0]])
    np.testing.assert_array_equal(dualad.jacobian_sparsity(lambda x: x.ravel(order="K"))(x).toarray(),
                                  np.eye(4, dtype=bool)[[0, 2, 1, 3]])
    assert dualad.hessian(lambda x: x.ravel(order="K")[1] ** 3)(x)[1, 0, 1, 0] == 18.0


def test_broadcast_arrays_read_in_memory_order():
    x, w = np.array([1.0, 2.0, 3.0]), np.arange(1.0, 7.0)

    def f(x):
        return np.broadcast_to(x, (2, 3)).ravel(order="K") @ w

    def g(x):
        return np.einsum("ij->ji", np.broadcast_to(x[:, None], (3, 2))).ravel(order="K")
    for mode in MODES:
        np.testing.assert_array_equal(dualad.grad(f, mode=mode)(x), [5.0, 7.0, 9.0])
    np.testing.assert_array_equal(dualad.hessian(lambda x: f(x) ** 2, mode="forward-over-reverse")(x)[0],
                                  [50.0, 70.0, 90.0])
    assert_all_equal(every_jacobian(g, x), np.tile(np.eye(3), (2, 1)))


def test_a_branch_on_a_piecewise_constant_of_x_makes_the_pattern_checked():
    def f(x):
        if np.sign(x[0]) > 0:
            return x[1] * x[1:]
        return x[2] * x[1:]

    def g(x):
        k = int(dualad.primal(x[0] // 1.0))
        return x[k:k + 2] * 2.0
    jac = dualad.jacobian(f, sparsity=True)
    jac(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(jac(np.array([-1.0, 2.0, 3.0])).toarray(), [[0, 3, 2], [0, 0, 6]])
    jac = dualad.jacobian(g, sparsity=True)
    jac(np.array([0.5, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(jac(np.array([1.5, 2.0, 3.0, 4.0])).toarray(), [[0, 2, 0, 0], [0, 0, 2, 0]])


def test_a_detected_pattern_follows_an_alias_made_by_asarray():
    def f(x):
        y = np.asarray(x)
        y[0] = 10.0 * x[1]     # y is x: the write reaches x
        return x * 1.0
    expected = np.array([[0.0, 10.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for mode in MODES:
        np.testing.assert_array_equal(dualad.jacobian(f, sparsity=True, mode=mode)(np.array([1.0, 2.0, 3.0])).toarray(),
                                      expected)


@pytest.mark.parametrize("write", ["y[0:2] = (x[1:] ** 2).reshape(1, 2)", "y[1:3] = x[0].reshape(1, 1)",
                                   "y[...] = (y * x).reshape(1, 3)"])
def test_an_item_with_extra_leading_axes_is_assigned_in_reverse_mode(write):
    namespace = {"np": np}
    exec(f"def f(x):\n    y = x * 1.0\n    {write}\n    return np.sum(y * np.arange(1.0, 4.0))", namespace)
    f, x = namespace["f"], np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(dualad.grad(f, mode="reverse")(x), dualad.grad(f, mode="forward")(x))


def test_an_f_ordered_allocation_holds_duals():
    def f(x):
        out = np.zeros((2, 2), order="F")
        out[0, 0], out[1, 0] = x[0], x[1] * x[0]
        out[:, 1] = x
        return out.ravel(order="K")
    x = np.array([1.0, 2.0])
    expected = [[1.0, 0.0], [2.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    for mode in MODES:
        np.testing.assert_array_equal(dualad.jacobian(f, mode=mode)(x), expected)


def test_a_static_argument_outside_argnums_reaches_f_as_its_value():
    class Choice:
        k = 1
    np.testing.assert_array_equal(dualad.jacobian(lambda x, c: x * x[c.k])(np.array([1.0, 2.0]), dualad.static(Choice())),
                                  [[2.0, 1.0], [0.0, 4.0]])


@pytest.mark.parametrize("f", [
    lambda x: np.sort(x.reshape(2, 2).T, axis=0).ravel(order="K"),
    lambda x: np.partition(x.reshape(2, 2).T, 0, axis=0).ravel(order="K"),
    lambda x: np.pad(x.reshape(2, 2).T, 1).ravel(order="K"),
    lambda x: np.select([x.reshape(2, 2).T > 0], [x.reshape(2, 2).T], 0).ravel(order="K")])
def test_sort_partition_pad_and_select_lay_out_their_results_as_numpy(f):
    """Each output entry is one x entry (or 0): the Jacobian times x is NumPy's value."""
    x = np.array([4.0, 1.0, 3.0, 2.0])
    for name, jac in every_jacobian(f, x).items():
        np.testing.assert_array_equal(jac @ x, f(x), err_msg=name)


def test_a_sparse_jacobian_whose_output_size_follows_x_is_detected_again():
    jac = dualad.jacobian(lambda x: x[x > 0] ** 2, sparsity=True)
    np.testing.assert_array_equal(jac(np.array([1.0, -1.0, 2.0])).toarray(), [[2, 0, 0], [0, 0, 4]])
    np.testing.assert_array_equal(jac(np.array([1.0, 1.0, 2.0])).toarray(), np.diag([2.0, 2.0, 4.0]))


def test_an_entry_broadcast_into_a_copy_sweeps_back_in_reverse_mode():
    """(guards: a 0-d cotangent sum returned as a NumPy scalar, a case of
    tests/test_fuzz_layouts.py's kind)"""
    def f(x):
        m = np.zeros(3)
        m[:] = x[0] * 1.0
        v = m.copy()
        v[:] = m[1]
        return np.concatenate((m, v))
    x = np.array([0.5, -1.0])
    expected = np.tile([1.0, 0.0], (6, 1))
    assert_all_equal(every_jacobian(f, x), expected)
    np.testing.assert_array_equal(dualad.hessian(lambda x: np.sum(f(x) ** 2), mode="forward-over-reverse")(x),
                                  [[12.0, 0.0], [0.0, 0.0]])


def _written_then_read(x):
    y0 = x.reshape(3, 4).copy()
    y2 = y0.T            # an F-contiguous view of y0
    y2[1, 1] = 0.0       # written through: the view is read again from its root
    z = y2 * 1.0         # F-ordered, as its operand (order='K')
    r = z.reshape(-1)    # a copy in NumPy: z is F-ordered
    r[0] = 100.0 * x[1]  # so z is unchanged
    return z.ravel()


@pytest.mark.parametrize("transform", [dualad.jacfwd, dualad.jacrev])
def test_a_view_read_again_after_a_write_keeps_its_layout(transform):
    """A view re-read from its written root is laid out as NumPy's view is (here F), so
    later view-or-copy choices on what is made from it are NumPy's."""
    x = np.arange(1.0, 13.0)
    np.testing.assert_array_equal(np.asarray(dualad.vjp(_written_then_read, x)[0]), _written_then_read(x))
    expected = np.zeros((12, 12))
    for k, entry in enumerate(np.arange(12).reshape(3, 4).T.ravel()):
        if k != 4:  # y2[1, 1], written with a constant
            expected[k, entry] = 1.0
    np.testing.assert_array_equal(transform(_written_then_read)(x), expected)
