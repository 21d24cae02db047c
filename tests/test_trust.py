"""Regression tests for the silent wrong results of issue 12, one per item; each kind also has
a guard elsewhere (test_properties, test_fuzz, test_special_points, test_cache)."""

import numba
import numpy as np
import pytest

import dualad
from dualad.number import EscapedPerturbation


def doubles_first(x):
    x[0] = 2 * x[0]
    return np.sum(x ** 2)


def doubles_first_gradient(x):
    return np.concatenate([[8.0 * x[0]], 2.0 * x[1:]])


# ---- item 2: f that assigns into its argument ----------------------------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("n", [2, 64])
def test_assigning_into_the_argument_is_differentiated_and_leaves_the_caller_alone(mode, n):
    x = np.linspace(0.5, 3.0, n)
    before = x.copy()
    value, gradient = dualad.value_and_grad(doubles_first, mode=mode)(x)
    assert value == pytest.approx(4 * x[0] ** 2 + np.sum(x[1:] ** 2))
    np.testing.assert_allclose(gradient, doubles_first_gradient(x))
    np.testing.assert_array_equal(x, before)


def test_every_pass_of_forward_mode_sees_the_callers_values():
    x = np.array([0.5, 3.0])
    value, gradient = dualad.value_and_grad(doubles_first, chunk=1, mode="forward")(x)
    assert (value, list(gradient)) == (10.0, [4.0, 6.0])
    np.testing.assert_array_equal(x, [0.5, 3.0])


@pytest.mark.parametrize("mode", ["forward", "forward-over-reverse"])
def test_second_order_of_a_function_assigning_into_its_argument(mode):
    x = np.array([0.5, 3.0, 1.0])
    np.testing.assert_allclose(dualad.hessian(doubles_first, mode=mode)(x), np.diag([8.0, 2.0, 2.0]))
    np.testing.assert_allclose(dualad.hvp(doubles_first)(x, np.ones(3)), [8.0, 2.0, 2.0])
    np.testing.assert_allclose(dualad.jacrev(dualad.grad(doubles_first, mode="reverse"))(x),
                               np.diag([8.0, 2.0, 2.0]))
    np.testing.assert_array_equal(x, [0.5, 3.0, 1.0])


compiled_doubles_first = numba.njit(doubles_first)


@pytest.mark.compiled
def test_compiled_jvp_and_hvp_of_a_function_assigning_into_its_argument():
    x = np.array([0.5, 3.0])
    value, tangent = dualad.jvp(compiled_doubles_first, (x,), (np.array([1.0, 0.0]),))
    assert (value, tangent) == (10.0, 4.0)
    np.testing.assert_array_equal(x, [0.5, 3.0])
    np.testing.assert_allclose(dualad.hvp(compiled_doubles_first)(x, np.array([1.0, 1.0])), [8.0, 2.0])
    np.testing.assert_array_equal(x, [0.5, 3.0])


@pytest.mark.compiled
@pytest.mark.parametrize("name", ["grad", "grad-reverse", "grad-auto-64", "jacfwd", "jacrev",
                                  "hessian", "vjp"])
def test_compiled_transforms_of_a_function_assigning_into_its_argument(name):
    """Seeds are read-only for speed; an f that assigns into its argument gets them
    materialised into an array of its own, so it is differentiated as NumPy would run it."""
    n = 64 if name.endswith("64") else 3
    x = np.linspace(0.5, 3.0, n)
    before = x.copy()
    gradient = doubles_first_gradient(x)
    if name == "hessian":
        result, expected = dualad.hessian(compiled_doubles_first)(x), np.diag([8.0] + [2.0] * (n - 1))
    elif name == "vjp":
        value, vjp_fn = dualad.vjp(compiled_doubles_first, x)
        assert value == pytest.approx(4 * x[0] ** 2 + np.sum(x[1:] ** 2))
        result, expected = vjp_fn(1.0)[0], gradient
    elif name in ("jacfwd", "jacrev"):
        result, expected = getattr(dualad, name)(compiled_doubles_first)(x), gradient
    else:
        mode = {"grad": "forward", "grad-reverse": "reverse"}.get(name, "auto")
        result, expected = dualad.grad(compiled_doubles_first, mode=mode)(x), gradient
    np.testing.assert_allclose(result, expected)
    np.testing.assert_array_equal(x, before)


@numba.njit
def _doubles_first_of_a_pair(xy):
    xy[0][0] = 2.0 * xy[0][0]
    return np.sum(xy[0] ** 2) + xy[1]


@pytest.mark.compiled
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_compiled_assignment_into_a_leaf_of_a_tuple_argument(mode):
    xy = (np.array([0.5, 3.0]), 1.5)
    expected = dualad.grad(_doubles_first_of_a_pair, mode=mode, jit=False)(xy)
    gx, gy = dualad.grad(_doubles_first_of_a_pair, mode=mode)(xy)
    np.testing.assert_allclose(gx, [4.0, 6.0])
    np.testing.assert_allclose(gx, expected[0])
    assert gy == expected[1] == 1.0
    np.testing.assert_array_equal(xy[0], [0.5, 3.0])


# ---- item 8: perturbations that escape their transform -------------------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_number_that_escaped_its_transform_raises_when_used(mode):
    leaked = []

    def f(x):
        leaked.append(x)
        return np.sum(x ** 2)

    dualad.grad(f, mode=mode)(np.array([1.0, 2.0]))
    with pytest.raises(EscapedPerturbation, match="escaped its transform"):
        leaked[0] * 2.0
    with pytest.raises(EscapedPerturbation):
        np.sin(leaked[0])
    with pytest.raises(EscapedPerturbation):  # used inside a later transform
        dualad.grad(lambda y: np.sum(leaked[0] * y))(np.array([1.0, 2.0]))
    with pytest.raises(EscapedPerturbation):  # returned by a later transform's function
        dualad.jacobian(lambda y: leaked[0])(np.array([1.0, 2.0]))


def test_an_outer_number_stays_usable_while_its_transform_runs():
    # closing over the outer transform's number inside the inner one is nesting, not escape
    def outer(a):
        return dualad.derivative(lambda t: np.sin(a * t))(1.0)
    assert dualad.derivative(outer)(0.5) == pytest.approx(np.cos(0.5) - 0.5 * np.sin(0.5))


# ---- items 5-7: argnums, empty inputs and scalar-only transforms, the same on both paths ---------
@numba.njit
def _weighted(x, y):
    return np.sum(x ** 2 * y)


def _weighted_python(x, y):
    return np.sum(x ** 2 * y)


@pytest.mark.compiled
@pytest.mark.parametrize("argnums", [2, 5, (0, 2)])
def test_argnums_past_the_arguments_is_an_error_on_both_paths(argnums):
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with pytest.raises(numba.core.errors.TypingError) as info:
        dualad.grad(_weighted, argnums=argnums)(x, y)
    assert str(info.value).startswith("dualad: cannot compile this derivative kernel: argnums asks for argument")
    assert "pass jit=False" not in str(info.value)  # it fails there too, so it is not advised
    with pytest.raises(ValueError, match="does not name a positional argument"):
        dualad.grad(_weighted_python, argnums=argnums)(x, y)


def test_an_argument_named_twice_gets_its_derivative_twice():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    gx, gx_again = dualad.grad(_weighted_python, argnums=(0, 0))(x, y)
    np.testing.assert_array_equal(gx, [6.0, 16.0])
    np.testing.assert_array_equal(gx_again, [6.0, 16.0])
    gy, gx = dualad.grad(_weighted_python, argnums=(1, 0))(x, y)
    np.testing.assert_array_equal(gy, [1.0, 4.0])
    np.testing.assert_array_equal(gx, [6.0, 16.0])
    with pytest.raises(ValueError, match="names an argument twice"):
        dualad.grad(_weighted, argnums=(0, 0))


@numba.njit
def _five_plus_sum(x):
    return 5.0 + np.sum(x)


@pytest.mark.compiled
@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_value_and_grad_of_an_empty_input_is_the_value(mode):
    for jit in (None, False):
        value, gradient = dualad.value_and_grad(_five_plus_sum, mode=mode, jit=jit)(np.zeros(0))
        assert value == 5.0 and gradient.shape == (0,)


@numba.njit
def _quadratic(t):
    return t ** 2 + t


@pytest.mark.compiled
@pytest.mark.parametrize("transform", [dualad.derivative, dualad.second_derivative])
def test_scalar_transforms_refuse_arrays_on_both_paths(transform):
    with pytest.raises(numba.core.errors.TypingError, match="takes a scalar input"):
        transform(_quadratic)(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="takes a scalar input"):
        transform(_quadratic, jit=False)(np.array([1.0, 2.0]))


# ---- item 15: compile errors name the cause first and advise only what works ---------------------
@numba.njit("float64(float64)")
def _float_only(t):
    return np.exp(-t * t)


@numba.njit
def _calls_float_only(x):
    return _float_only(x[0]) * x[1]


@numba.njit
def _eigenvalues(x):
    # antisymmetric: eigenvalues ±i x0 x1, which neither path differentiates
    return np.sum(np.linalg.eigvals(np.outer(x, x) * np.array([[0.0, -1.0], [1.0, 0.0]])).real)


@pytest.mark.compiled
def test_compile_errors_name_the_cause_first():
    x = np.array([1.0, 2.0])
    with pytest.raises(numba.core.errors.TypingError) as info:
        dualad.grad(_calls_float_only)(x)
    first_line = str(info.value).splitlines()[0]
    assert "explicit signatures" in first_line and "_float_only" in first_line
    assert "pass jit=False" in str(info.value)  # the twin runs _float_only's Python code
    np.testing.assert_allclose(dualad.grad(_calls_float_only, jit=False)(x),
                               [-2.0 * np.exp(-1.0) * 2.0, np.exp(-1.0)])
    with pytest.raises(Exception) as info:
        dualad.grad(_eigenvalues)(x)
    assert str(info.value).startswith("dualad: cannot compile this derivative kernel")
    assert "fails on it too" in str(info.value) and "pass jit=False" not in str(info.value)


# ---- item 10: an exception inside f leaves every kernel as it was -------------------------------
@numba.njit
def _raises_when(x, k):
    s = 0.0
    for i in range(x.size):
        s += x[i] ** 2 * (i + 1.0)
    if k == 1.0:
        raise ValueError("injected fault")
    return s


@numba.njit
def _three_outputs(x):
    return x[:3] * x[0]


@numba.njit
def _plain_caller(x, k):
    return _raises_when(x, k) * 2.0


def _numba_own_leak(exceptions):
    """NRT allocations numba keeps for `exceptions` raised through a plain @njit caller."""
    x = np.ones(10)
    _plain_caller(x, 0.0)
    live = _nrt_live()[0]
    for _ in range(exceptions):
        with pytest.raises(ValueError):
            _plain_caller(x, 1.0)
    return _nrt_live()[0] - live


def _nrt_live():
    """(NRT allocations alive, allocations made), counted from the first call."""
    from numba.core.runtime import _nrt_python

    _nrt_python.memsys_enable_stats()
    stats = numba.core.runtime.rtsys.get_allocation_stats()
    return stats.alloc - stats.free, stats.alloc


@pytest.mark.compiled
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_fault_injection_compiled_kernels(mode):
    """Call k of many raises: later calls are right, allocate no more than before (the buffer
    pool is back: a held pool makes every call allocate its tape) and hold no memory."""
    x = np.linspace(0.1, 1.0, 1000)
    g = dualad.grad(_raises_when, mode=mode)
    expected = 2.0 * x * np.arange(1.0, 1001.0)
    np.testing.assert_allclose(g(x, 0.0), expected)
    live, allocated = _nrt_live()
    g(x, 0.0)
    per_call = _nrt_live()[1] - allocated
    for k in range(20):
        if k % 5 == 2:
            with pytest.raises(ValueError, match="injected fault"):
                g(x, 1.0)
        else:
            np.testing.assert_allclose(g(x, 0.0), expected)
    # numba itself keeps one small exception record per exception that passes through a
    # caller (measured below on a plain @njit caller), and frees nothing the callers of f
    # hold: in reverse mode that is the array of seeded actives (3 floats per input). The
    # tape, its pool and the lock must all come back.
    kept_by_callers = 0 if mode == "forward" else 4
    assert _nrt_live()[0] - live <= _numba_own_leak(4) + kept_by_callers
    before = _nrt_live()[1]
    g(x, 0.0)
    assert _nrt_live()[1] - before == per_call


@pytest.mark.compiled
def test_fault_injection_compiled_vjp_with_a_wrong_cotangent():
    x = np.linspace(0.1, 1.0, 1000)
    _, vjp_fn = dualad.vjp(_three_outputs, x)
    right = vjp_fn(np.ones(3))[0]
    live, _ = _nrt_live()
    for _ in range(5):
        with pytest.raises(ValueError, match="one entry per output entry"):
            vjp_fn(np.ones(2))
    np.testing.assert_array_equal(vjp_fn(np.ones(3))[0], right)
    assert _nrt_live()[0] == live


def test_fault_injection_python_path():
    import tracemalloc

    def f(x, k):
        if k == 1.0:
            raise ValueError("injected fault")
        return np.sum(x ** 2 * np.arange(1.0, x.size + 1.0))

    x = np.linspace(0.1, 1.0, 200)
    expected = 2.0 * x * np.arange(1.0, 201.0)
    # what dualad's frames allocated and kept (not a test runner's threads), after a first
    # fault and a first success have made what a transform makes once (its views of f)
    ours = [tracemalloc.Filter(True, "*dualad*", all_frames=True)]
    for mode in ("forward", "reverse"):
        g = dualad.grad(f, mode=mode)
        with pytest.raises(ValueError, match="injected fault"):
            g(x, 1.0)
        g(x, 0.0)
        tracemalloc.start(20)
        start = tracemalloc.take_snapshot().filter_traces(ours)
        for k in range(30):
            if k % 3 == 1:
                with pytest.raises(ValueError, match="injected fault"):
                    g(x, 1.0)
            else:
                np.testing.assert_allclose(g(x, 0.0), expected)
        end = tracemalloc.take_snapshot().filter_traces(ours)
        tracemalloc.stop()
        grown = sum(stat.size_diff for stat in end.compare_to(start, "filename"))
        assert grown < 200_000, f"{mode}: {grown} bytes kept after faults"


# ---- layers hidden in lists, where NumPy does not look for them ----------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_newer_layer_inside_a_list_takes_the_call(mode):
    x = np.array([0.3, 0.7])
    g = lambda x: dualad.derivative(lambda u: np.sum(np.dot([x[0] * u, 2.0], x)))(1.3)  # = x0²
    np.testing.assert_allclose(dualad.grad(g, mode=mode)(x), [0.6, 0.0])
    h = lambda x: dualad.derivative(lambda u: np.sum(np.full_like(x, x[0] * u) * x))(1.3)
    np.testing.assert_allclose(dualad.grad(h, mode=mode)(x), [2 * 0.3 + 0.7, 0.3])


# ---- item 14: inputs a compiled kernel cannot seed are named, for every transform ----------------
@numba.njit
def _cubes(x):
    return np.sum(x ** 3)


@pytest.mark.compiled
@pytest.mark.parametrize("x, problem", [(np.array([1, 2]), "integer arrays"),
                                        (np.array(2.0), "not array(float64, 0d"),
                                        (np.ones(2, complex), "not array(complex128, 1d")])
def test_compiled_hessian_names_inputs_it_cannot_take(x, problem):
    with pytest.raises(numba.core.errors.TypingError) as info:
        dualad.hessian(_cubes)(x)
    assert problem in str(info.value).splitlines()[0]


@pytest.mark.compiled
def test_a_compiled_hessian_of_a_float32_input_is_float32():
    """(issue 39 item 6: computed in float64 from Python, returned in the input's dtype)"""
    hessian = dualad.hessian(_cubes)(np.array([1.0, 2.0], np.float32))
    assert hessian.dtype == np.float32
    np.testing.assert_array_equal(hessian, np.diag([6.0, 12.0]))


# ---- item 13: calling f on floats before differentiating it changes nothing ----------------------
@pytest.mark.compiled
def test_calling_f_on_floats_first_keeps_its_buffers_dual():
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import numba, numpy as np
        @numba.njit
        def f(x):
            y = np.zeros_like(x)
            z = np.empty_like(x)
            for i in range(x.size):
                y[i] = x[i] ** 2
                z[i] = 3.0 * x[i]
            return y + z
        x = np.array([1.0, 2.0])
        f(x)  # numba types np.zeros_like before dualad.jit is imported
        import dualad
        print(dualad.jacobian(f)(x).tolist())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[[5.0, 0.0], [0.0, 7.0]]"


# ---- special points: a zero cotangent stays zero against an infinite partial (both paths) --------
@numba.njit
def _pole_in_one_row(x):
    return np.stack((x[0] + x[1], 1.5 / x[0]))


@pytest.mark.compiled
def test_reverse_jacobian_rows_do_not_mix_through_infinite_partials():
    x = np.array([0.0, 1.0])
    python = dualad.jacobian(_pole_in_one_row, mode="reverse", jit=False)(x)
    compiled = dualad.jacobian(_pole_in_one_row, mode="reverse")(x)
    np.testing.assert_array_equal(python, [[1.0, 1.0], [-np.inf, 0.0]])
    np.testing.assert_array_equal(compiled, python)


# ---- forward-over-reverse: a zero cotangent keeps its tangents -----------------------------------
# At x = 0, norm(x) has an infinite partial (sqrt at 0) and the cotangent 2·norm(x) is 0 with a
# nan tangent: dropping that tangent with the zero value gave H = 0 where it is 2·I. No mode can
# compute it (0 · inf); each must say so with nan, on both paths, dense, hvp and sparse.
def norm_squared(x):
    return np.linalg.norm(x) ** 2 + np.sum(np.sin(x))


def root_squared(x):
    return np.sqrt(x[0] * x[0] + x[1] * x[1]) ** 2 + x[2]


def _second_order(f, n):
    x, v = np.zeros(n), np.ones(n)
    with np.errstate(all="ignore"):
        return {"hessian": dualad.hessian(f, mode="forward-over-reverse")(x),
                "hvp": dualad.hvp(f, mode="forward-over-reverse")(x, v),
                "auto": dualad.hessian(f)(x)}


@pytest.mark.parametrize("f", [norm_squared, root_squared])
def test_forward_over_reverse_at_a_zero_cotangent_with_tangents_is_nan_not_zero(f):
    for n in (3, 20):
        for name, result in _second_order(f, n).items():
            rows = result[:2]  # the rows of x0 and x1, which pass through the norm
            assert np.all(np.isnan(rows)), (f.__name__, n, name, rows)
    x = np.array([0.3, -0.2, 1.0])  # smooth there: the modes agree
    np.testing.assert_allclose(dualad.hessian(f, mode="forward-over-reverse")(x),
                               dualad.hessian(f, mode="forward")(x), atol=1e-14)


@pytest.mark.compiled
@pytest.mark.parametrize("f", [norm_squared, root_squared])
def test_compiled_forward_over_reverse_at_a_zero_cotangent_with_tangents_is_nan_not_zero(f):
    compiled = numba.njit(f)
    for n in (3, 20):
        python = _second_order(f, n)
        for name, result in _second_order(compiled, n).items():
            # auto picks per path (n = 20: HyperDual blocks in Python, nan wherever inf · 0
            # met a seed; detected sparsity compiled, 0 where x_j is not used)
            if name != "auto":
                assert np.array_equal(result, python[name], equal_nan=True), (f.__name__, n, name)
            assert np.all(np.isnan(result[:2])), (f.__name__, n, name, result)


# ---- an f that raises after recording much: the exception, not a crash ---------------------------
def _raises_after_inverse(x):
    s = np.sum(np.linalg.inv(x.reshape(2, 2) + 5.0 * np.eye(2)))
    if x[0] == 0.0:
        raise ValueError("x0 is zero")
    return s


@pytest.mark.compiled
def test_compiled_reverse_modes_pass_on_an_exception_raised_after_a_long_recording():
    """Compiled reverse mode reruns a raising f outside its try so that the caller gets f's
    exception; guards: that run's tape header freed before f runs (numba frees an array after
    its last use), so that f records through a dangling pointer (a segfault with
    np.linalg.inv)."""
    f = numba.njit(_raises_after_inverse)
    for transform in (dualad.grad(f, mode="reverse"), dualad.hessian(f, mode="forward-over-reverse")):
        for _ in range(3):
            with pytest.raises(ValueError, match="x0 is zero"):
                transform(np.zeros(4))
    np.testing.assert_allclose(dualad.grad(f, mode="reverse")(np.ones(4)),
                               dualad.grad(_raises_after_inverse, mode="reverse")(np.ones(4)))
