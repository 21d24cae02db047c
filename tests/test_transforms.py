"""Transforms: JAX shapes, argnums, chunk sweeps, nesting, worked examples and errors."""

import math

import numpy as np
import pytest

import dualad
from functions import mlp, rosen, rosen_loop


# ---- the worked examples of the design notes, exactly -----------------------------------------
def test_square_plus_log():
    f = lambda x: x ** 2 + np.log(x)  # noqa: E731
    for x in (0.5, 2.0, 7.25):
        assert dualad.derivative(f)(x) == 2 * x + 1 / x


def test_textbook_value_and_gradient():
    f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)  # noqa: E731
    value, (g1, g2) = dualad.value_and_grad(f, argnums=(0, 1))(2.0, 5.0)
    assert value == pytest.approx(11.652, abs=5e-4)
    assert value == math.log(2) + 10 - math.sin(5)
    assert g1 == 5.5
    assert g2 == 2 - math.cos(5)


def _logistic_loop(x):
    v = x
    for _ in range(3):
        v = 4 * v * (1 - v)
    return v


def _logistic_closed(x):
    return 64 * x * (1 - x) * (1 - 2 * x) ** 2 * (1 - 8 * x + 8 * x * x) ** 2


def test_logistic_map_loop_equals_closed_form():
    for x in (0.1, 0.3, 0.77):
        d_loop = dualad.derivative(_logistic_loop)(x)
        d_closed = dualad.derivative(_logistic_closed)(x)
        # by hand: v' = Π_k 4(1 - 2 v_k) along the orbit
        v, by_hand = x, 1.0
        for _ in range(3):
            by_hand *= 4 * (1 - 2 * v)
            v = 4 * v * (1 - v)
        assert d_loop == pytest.approx(d_closed, rel=1e-12)
        assert d_loop == pytest.approx(by_hand, rel=1e-14)
        assert dualad.second_derivative(_logistic_loop)(x) == pytest.approx(
            dualad.second_derivative(_logistic_closed)(x), rel=1e-11)


def test_loss_derivative_is_four():
    assert dualad.derivative(lambda x: (x + 1 - 2 * x) ** 2)(3.0) == 4.0


def test_cube_value_and_derivative_in_one_pass():
    y = dualad.Dual(2.0, [1.0]) ** 3
    assert y.value == 8.0 and y.partials[0] == 12.0
    assert dualad.jvp(lambda x: x ** 3, (2.0,), (1.0,)) == (8.0, 12.0)


# ---- shapes -------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [1.5, np.float64(0.5), np.array(0.7), np.ones(3), np.ones((2, 3))])
@pytest.mark.parametrize("f", [lambda x: np.sum(np.sin(x)), lambda x: np.sin(x) * 2.0,
                               lambda x: np.outer(np.ravel(x), np.ravel(x)) + 1.0])
def test_jacobian_and_hessian_shapes(f, x):
    out_shape, x_shape = np.shape(f(x)), np.shape(x)
    assert np.shape(dualad.jacobian(f)(x)) == out_shape + x_shape
    assert np.shape(dualad.jacfwd(f)(x)) == out_shape + x_shape
    if out_shape == ():
        assert np.shape(dualad.grad(f)(x)) == x_shape
        assert np.shape(dualad.hessian(f)(x)) == x_shape + x_shape
        assert np.shape(dualad.hvp(f)(x, np.ones_like(x))) == x_shape


def test_integer_scalars_are_promoted_integer_arrays_refused():
    assert dualad.derivative(lambda x: x * x)(3) == 6.0
    assert dualad.grad(lambda x: x * x)(np.int64(3)) == 6.0
    with pytest.raises(TypeError, match="argument 0 of .* integer array .*astype\\(float\\)"):
        dualad.grad(lambda x: np.sum(x * x))(np.array([1, 2]))


def test_scalar_results_are_numpy_scalars_not_0d_arrays():
    f = lambda t: np.exp(t) * np.sin(t)  # noqa: E731
    for result in (dualad.derivative(f)(0.0), dualad.second_derivative(f)(0.0),
                   dualad.grad(f)(0.0), dualad.hessian(f)(0.0), dualad.jacobian(f)(0.0),
                   dualad.jvp(f, (0.0,), (1.0,))[1], dualad.hvp(f)(0.0, 1.0)):
        assert isinstance(result, np.float64), type(result)


def test_derivative_of_array_valued_function():
    f = lambda t: np.stack([np.sin(t), t ** 2])  # noqa: E731
    np.testing.assert_allclose(dualad.derivative(f)(0.5), [math.cos(0.5), 1.0])
    np.testing.assert_allclose(dualad.second_derivative(f)(0.5), [-math.sin(0.5), 2.0])


def test_jvp_with_several_primals():
    f = lambda x, y: x * np.sin(y)  # noqa: E731
    x, y = np.array([1.0, 2.0]), np.array([0.3, 0.4])
    out, tangent = dualad.jvp(f, (x, y), (np.ones(2), np.zeros(2)))
    np.testing.assert_array_equal(out, f(x, y))
    np.testing.assert_allclose(tangent, np.sin(y))


def test_hvp_equals_hessian_times_vector():
    x, v = np.array([-1.2, 1.0, 0.7, 0.3]), np.array([0.5, -1.0, 2.0, 0.1])
    np.testing.assert_allclose(dualad.hvp(rosen)(x, v), dualad.hessian(rosen)(x) @ v, rtol=1e-13)
    np.testing.assert_allclose(dualad.hvp(rosen, chunk=3)(x, v), dualad.hessian(rosen)(x) @ v, rtol=1e-13)


def test_rosenbrock_hessian_closed_form():
    x = np.array([1.3, 0.4])
    h = dualad.hessian(rosen)(x)
    expected = [[1200 * x[0] ** 2 - 400 * x[1] + 2, -400 * x[0]], [-400 * x[0], 200]]
    np.testing.assert_allclose(h, expected, rtol=1e-14)


# ---- argnums --------------------------------------------------------------------------------
def test_argnums_int_and_tuple():
    f = lambda a, b, c: np.sum(a * b) * c  # noqa: E731
    a, b, c = np.array([1.0, 2.0]), np.array([3.0, 4.0]), 2.0
    np.testing.assert_array_equal(dualad.grad(f)(a, b, c), b * c)
    np.testing.assert_array_equal(dualad.grad(f, argnums=1)(a, b, c), a * c)
    ga, gc = dualad.grad(f, argnums=(0, 2))(a, b, c)
    np.testing.assert_array_equal(ga, b * c)
    assert gc == np.sum(a * b)
    ja, jb = dualad.jacobian(lambda a, b: a * b, argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(ja, np.diag(b))
    np.testing.assert_array_equal(jb, np.diag(a))
    (haa, hab), (hba, hbb) = dualad.hessian(f, argnums=(0, 1))(a, b, c)
    np.testing.assert_array_equal(hab, c * np.eye(2))
    np.testing.assert_array_equal(hba, c * np.eye(2))
    np.testing.assert_array_equal(haa, np.zeros((2, 2)))
    assert dualad.grad(f, argnums=-1)(a, b, c) == np.sum(a * b)


# ---- chunk sweeps: identical results ----------------------------------------------------------
def test_chunk_sweep_gives_identical_results():
    x = np.array([-1.2, 1.0, 0.7, 0.3, 1.1, -0.5, 0.25])
    g = dualad.grad(rosen_loop)(x)
    h = dualad.hessian(rosen)(x)
    j = dualad.jacobian(mlp)(x[:6])
    for chunk in range(1, x.size + 1):
        np.testing.assert_array_equal(dualad.grad(rosen_loop, chunk=chunk)(x), g)
        np.testing.assert_array_equal(dualad.hessian(rosen, chunk=chunk)(x), h)
        np.testing.assert_allclose(dualad.jacobian(mlp, chunk=chunk)(x[:6]), j, rtol=1e-15)


# ---- nesting: tags keep perturbations apart -------------------------------------------------
def test_perturbation_confusion_classic():
    # d/dx [x · d/dy (x + y)] at y = 1 is 1; confusing the two perturbations gives 2.
    f = lambda x: x * dualad.derivative(lambda y: x + y)(1.0)  # noqa: E731
    assert dualad.derivative(f)(3.0) == 1.0


def test_nested_derivatives_of_any_order():
    f = lambda x: np.sin(x) * x ** 3  # noqa: E731
    d1 = dualad.derivative(f)
    d2 = dualad.derivative(d1)
    d3 = dualad.derivative(d2)
    x = 0.7
    s, c = math.sin(x), math.cos(x)
    assert d2(x) == pytest.approx(6 * x * s + 6 * x * x * c - x ** 3 * s, rel=1e-14)
    assert d3(x) == pytest.approx(6 * s + 18 * x * c - 9 * x * x * s - x ** 3 * c, rel=1e-13)
    assert dualad.derivative(dualad.second_derivative(f))(x) == pytest.approx(d3(x), rel=1e-14)
    assert dualad.second_derivative(d1)(x) == pytest.approx(d3(x), rel=1e-14)


def test_jacfwd_of_grad_equals_hessian():
    x = np.array([-1.2, 1.0, 0.7, 0.3])
    np.testing.assert_allclose(dualad.jacfwd(dualad.grad(rosen))(x), dualad.hessian(rosen)(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.jacfwd(dualad.grad(rosen_loop, chunk=2), chunk=3)(x),
                               dualad.hessian(rosen)(x), rtol=1e-14)


# ---- errors -----------------------------------------------------------------------------------
def test_errors_for_non_differentiable_inputs():
    f = lambda x: np.sum(x)  # noqa: E731
    with pytest.raises(TypeError, match="argument 0 .*booleans"):
        dualad.grad(f)(np.array([True, False]))
    with pytest.raises(TypeError, match="argument 0 .*strings"):
        dualad.grad(f)("abc")
    with pytest.raises(TypeError, match="argument 0 .*Python objects"):
        dualad.grad(f)(np.array([object()]))
    with pytest.raises(TypeError, match="argument 1 .*complex"):
        dualad.grad(lambda a, b: a * b, argnums=1)(1.0, 1j)


def test_error_for_non_numeric_output():
    with pytest.raises(TypeError, match="returned str"):
        dualad.grad(lambda x: "hello")(1.0)
    with pytest.raises(TypeError, match="returned NoneType"):
        dualad.derivative(lambda x: None)(1.0)


def test_error_for_grad_of_vector_output():
    with pytest.raises(TypeError, match="grad needs .* scalar.*shape \\(2,\\)"):
        dualad.grad(lambda x: x * 2.0)(np.ones(2))
    with pytest.raises(TypeError, match="hessian needs"):
        dualad.hessian(lambda x: x * 2.0)(np.ones(2))


def test_error_for_array_input_to_derivative():
    with pytest.raises(TypeError, match="derivative takes a scalar input"):
        dualad.derivative(np.sin)(np.ones(3))
    with pytest.raises(TypeError, match="second_derivative takes a scalar input"):
        dualad.second_derivative(np.sin)(np.ones(3))


def test_jvp_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match="tangent 0 has shape \\(2,\\) but primal 0 has shape \\(3,\\)"):
        dualad.jvp(np.sin, (np.ones(3),), (np.ones(2),))
    with pytest.raises(TypeError, match="tuples"):
        dualad.jvp(np.sin, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="v has shape"):
        dualad.hvp(rosen)(np.ones(3), np.ones(2))


def test_bad_options():
    with pytest.raises(ValueError, match="mode='sideways'; choose one of"):
        dualad.jacobian(np.sin, mode="sideways")
    with pytest.raises(ValueError, match="chunk must be a positive int"):
        dualad.grad(rosen, chunk=0)(np.ones(3))
    with pytest.raises(ValueError, match="argnums=3"):
        dualad.grad(rosen, argnums=3)(np.ones(3))


def test_math_module_inside_a_transform_explains_the_fix():
    with pytest.raises(TypeError, match="dualad.math"):
        dualad.grad(lambda x: math.sin(x))(1.0)
    # ... and the fix works:
    import dualad.math as dmath

    assert dualad.grad(lambda x: dmath.sin(x) + dmath.atan2(x, 2.0) + dmath.log(x, 10))(1.0) == \
        pytest.approx(math.cos(1.0) + 2 / 5 + 1 / math.log(10), rel=1e-15)


def test_constant_output_has_zero_derivative():
    np.testing.assert_array_equal(dualad.jacobian(lambda x: np.ones(3))(np.ones(2)), np.zeros((3, 2)))
    assert dualad.grad(lambda x: 4.0)(np.ones(2)).tolist() == [0.0, 0.0]
    assert dualad.second_derivative(lambda x: 4.0)(1.0) == 0.0


def test_hvp_modes_agree_with_the_hessian():
    def f(x, scale):
        return scale * (np.sum(np.sin(x[1:] * x[:-1])) + np.sum(x ** 3))

    rng = np.random.default_rng(11)
    for n in (3, 40):
        x, v = rng.normal(size=n), rng.normal(size=n)
        expected = dualad.hessian(f)(x, 1.5) @ v
        for mode in ("forward", "forward-over-reverse", "auto"):
            np.testing.assert_allclose(dualad.hvp(f, mode=mode)(x, v, 1.5), expected,
                                       rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(dualad.hvp(f, mode=mode)(x, v, scale=1.5), expected,
                                       rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="mode="):
        dualad.hvp(f, mode="reverse")


def test_auto_hvp_is_forward_only_while_its_one_pass_is_small(monkeypatch):
    """Forward hvp is one pass of HyperDuals n wide (O(n²)): auto takes it up to
    modes.PYTHON_HVP_FORWARD_UP_TO inputs only (past it that pass costs many times the
    gradient: docs/decisions/0005-measured-constants-in-code.md)."""
    import dualad.transforms as transforms

    forward_calls = []
    original = transforms.hvp_forward
    monkeypatch.setattr(transforms, "hvp_forward",
                        lambda *a: forward_calls.append(1) or original(*a))

    def f(x):
        return np.sum(x[1:] * x[:-1] ** 2)

    for n, forward in ((dualad.modes.PYTHON_HVP_FORWARD_UP_TO, True),
                       (dualad.modes.PYTHON_HVP_FORWARD_UP_TO + 1, False), (1000, False)):
        forward_calls.clear()
        x, v = np.linspace(-1.0, 1.0, n), np.ones(n)
        expected = dualad.hessian(f, mode="forward-over-reverse")(x) @ v
        np.testing.assert_allclose(dualad.hvp(f)(x, v), expected, rtol=1e-12, atol=1e-12)
        assert bool(forward_calls) == forward, n
