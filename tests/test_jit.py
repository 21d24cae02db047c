"""The compiled path: numba dual types and kernels agree with the Python path.

Kernels compile once per module (module-level dispatchers); numba compiles are slow.
"""

import math

import numba
import numpy as np
import pytest

import dualad
import dualad.math as dmath
from dualad.jit.overloads import entry_points
from dualad.rules import RULES
from functions import FUNCTIONS, W, b4
from functions import rosen_loop as rosen_loop_py

X5 = np.array([-1.2, 1.0, 0.7, 0.3, 1.1])

rosen_loop = numba.njit(rosen_loop_py)


@numba.njit
def rosen_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@numba.njit
def textbook(x):
    return math.log(x[0]) + x[0] * x[1] - np.sin(x[1])


@numba.njit
def mlp(x):
    return np.tanh(W @ x + b4)


@numba.njit
def _pair(a, b):
    return a * b, a - b  # a nested @njit call returning a tuple of duals


@numba.njit
def arrays_and_control_flow(x):
    y = np.zeros_like(x)
    y[0] = x[0] ** 2
    for i in range(1, len(x)):
        if x[i] > 0.5:
            y[i] = y[i - 1] * x[i] + 1.0
        else:
            y[i] = -x[i]
    prod, diff = _pair(x[0], x[1])
    v = x[2]
    while v < 10.0:
        v = v * 2.0 + 1.0
    ones = np.ones_like(x)
    ones[1] = 3.0
    e = np.empty_like(x)
    e[0] = x[3]
    for i in range(1, x.shape[0]):
        e[i] = 0.5
    return np.sum(y) + prod * diff + v + np.dot(ones, x) + np.sum(e * x) - np.sin(x)[4]


def test_kernels_are_dispatchers_and_match_the_python_path():
    g = dualad.grad(rosen_loop)
    assert hasattr(g, "py_func")
    np.testing.assert_allclose(g(X5), dualad.grad(rosen_loop_py)(X5), rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(rosen_vec)(X5), dualad.grad(rosen_loop_py)(X5), rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(arrays_and_control_flow)(X5),
                               dualad.grad(arrays_and_control_flow.py_func)(X5), rtol=1e-14)
    value, gradient = dualad.value_and_grad(textbook)(np.array([2.0, 5.0]))
    assert value == pytest.approx(math.log(2) + 10 - math.sin(5), rel=1e-15)
    np.testing.assert_allclose(gradient, [5.5, 2 - math.cos(5)], rtol=1e-15)
    np.testing.assert_allclose(dualad.jacobian(mlp)(X5[:4].repeat(2)[:6]),
                               dualad.jacobian(mlp.py_func)(X5[:4].repeat(2)[:6]), rtol=1e-14)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8])
def test_chunk_sweep_compiled(chunk):
    np.testing.assert_allclose(dualad.grad(rosen_loop, chunk=chunk)(X5),
                               dualad.grad(rosen_loop_py)(X5), rtol=1e-15)


@numba.njit
def _quartic(x):
    return (x - 1.5) ** 4 + x * x


@numba.njit
def _quartic_prime(x):
    return 4.0 * (x - 1.5) ** 3 + 2.0 * x


D1 = dualad.derivative(_quartic)
D2 = dualad.derivative(_quartic_prime)


@numba.njit
def newton_minimise(x0):
    # Newton's method written entirely in numba, calling compiled derivative kernels.
    x = x0
    for _ in range(50):
        x = x - D1(x) / D2(x)
    return x


def test_kernels_callable_from_njit_code():
    x = newton_minimise(3.0)
    assert abs(D1(x)) < 1e-12
    assert D1(2.0) == _quartic_prime(2.0)


def test_nested_compiled_transforms_explain_the_fix():
    with pytest.raises(numba.core.errors.TypingError, match="jit=False to the outer"):
        dualad.derivative(D1)(2.0)
    # the outer transform on the Python path runs the inner kernel's Python equivalent
    assert dualad.derivative(D1, jit=False)(2.0) == pytest.approx(12 * 0.5 ** 2 + 2, rel=1e-14)


def test_jit_option():
    plain = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    compiled = dualad.grad(plain, jit=True)
    assert hasattr(compiled, "py_func")
    np.testing.assert_allclose(compiled(X5), dualad.grad(plain)(X5), rtol=1e-14)
    python = dualad.grad(rosen_loop, jit=False)
    assert not hasattr(python, "py_func")
    np.testing.assert_allclose(python(X5), dualad.grad(rosen_loop)(X5), rtol=1e-14)


@pytest.mark.parametrize("chunk", [None, 2])
def test_compiled_hvp(chunk):
    v = np.linspace(-1.0, 1.0, 5)
    expected = dualad.hessian(rosen_loop_py)(X5) @ v
    kernel = dualad.hvp(rosen_loop, chunk=chunk)
    assert hasattr(kernel, "py_func")
    np.testing.assert_allclose(kernel(X5, v), expected, rtol=1e-13)
    np.testing.assert_allclose(dualad.hvp(rosen_vec, chunk=chunk)(X5, v), expected, rtol=1e-13)
    with pytest.raises(ValueError, match="shapes"):
        kernel(X5, v[:3])


def test_compiled_kernels_of_a_scalar_input_return_scalars():
    """Shapes follow JAX (and the Python path) for a scalar x too: grad is a scalar."""
    for transform, args in ((dualad.grad, (0.5,)), (dualad.hvp, (0.5, 2.0))):
        compiled, python = transform(_quartic)(*args), transform(_quartic, jit=False)(*args)
        assert np.shape(compiled) == np.shape(python) == ()
        assert compiled == pytest.approx(python, rel=1e-14)
    assert dualad.hvp(_quartic)(0.5, 2.0) == pytest.approx(2.0 * (12 * 1.0 + 2.0), rel=1e-14)


@numba.njit
def _scalar_mix(x):
    prod, diff = _pair(x[0], x[1])  # nested @njit call returning a tuple of hyper-duals
    total = 0.0
    for i in range(len(x)):
        if x[i] > 0.5:
            total += math.exp(x[i]) * prod
        else:
            total -= math.atan2(x[i], 2.0) * diff ** 2
    v = x[2]
    while v < 10.0:
        v = v * 2.0 + x[3] ** 2
    return total + v * math.sqrt(abs(x[4]) + 1.0) + np.tanh(x[1] * x[3])


@pytest.mark.parametrize("f", [rosen_loop, textbook, _scalar_mix], ids=["rosen", "textbook", "mix"])
def test_compiled_hessian_matches_python_path(f):
    x = X5[:2] + 2.5 if f is textbook else X5
    expected = dualad.hessian(f, jit=False)(x)
    for chunk in range(1, x.size + 1):
        np.testing.assert_allclose(dualad.hessian(f, chunk=chunk)(x), expected, rtol=1e-13, atol=1e-12)


def test_compiled_second_derivative():
    f = numba.njit(lambda t: math.exp(t) * math.sin(t) + t ** 3)
    for t in (0.5, -1.25):
        assert dualad.second_derivative(f)(t) == pytest.approx(
            2 * math.exp(t) * math.cos(t) + 6 * t, rel=1e-14)
    assert dualad.second_derivative(f, jit=False)(0.5) == pytest.approx(dualad.second_derivative(f)(0.5), rel=1e-15)


def test_compiled_hessian_of_vectorised_code():
    """Arrays of hyper-duals: slices, ** and np.sum on whole arrays, two block widths."""
    expected = dualad.hessian(rosen_loop_py)(X5)
    np.testing.assert_allclose(dualad.hessian(rosen_vec)(X5), expected, rtol=1e-13)
    np.testing.assert_allclose(dualad.hessian(rosen_vec, chunk=2)(X5), expected, rtol=1e-13)


@numba.njit
def _iterates(x):
    total = 0.0
    for xi in x:                 # a seeded input
        total += xi ** 3
    for xi in x[1::2]:           # a seeded slice
        total += math.sin(xi) * x[0]
    for yi in np.tanh(M2 @ x[:3]):  # a stored array of duals
        total += yi * yi
    return total


def test_iteration_over_dual_arrays():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9])
    np.testing.assert_allclose(dualad.grad(_iterates)(x), dualad.grad(_iterates, jit=False)(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.hessian(_iterates, chunk=2)(x), dualad.hessian(_iterates, jit=False)(x),
                               rtol=1e-13, atol=1e-15)


@numba.njit
def _float_buffer(x):
    y = np.zeros(len(x))
    y[0] = x[0]
    return y[0]


def test_a_dual_stored_in_a_float_array_names_the_fix():
    with pytest.raises(numba.core.errors.TypingError, match="(?s)float array cannot hold a dual.*zeros_like"):
        dualad.grad(_float_buffer)(X5)


@numba.njit
def _weighted(scale, x, shift):
    return scale * rosen_loop(x) + shift * x[0] ** 3


G1 = dualad.grad(_weighted, argnums=1)


@numba.njit
def _calls_moved_kernel(x):
    return G1(2.0, x, 0.5)[0]


def test_compiled_argnums():
    x = X5[:3]
    expected = dualad.grad(_weighted.py_func, argnums=1)(2.0, x, 0.5)
    assert hasattr(G1, "py_func")
    np.testing.assert_allclose(G1(2.0, x, 0.5), expected, rtol=1e-14)
    assert _calls_moved_kernel(x) == pytest.approx(expected[0], rel=1e-14)
    np.testing.assert_allclose(dualad.hessian(_weighted, argnums=1, chunk=2)(2.0, x, 0.5),
                               dualad.hessian(_weighted.py_func, argnums=1)(2.0, x, 0.5), rtol=1e-13)
    assert dualad.derivative(_weighted, argnums=2)(2.0, x, 0.5) == pytest.approx(x[0] ** 3, rel=1e-15)
    # the Python path runs the moved kernel's Python equivalent
    d_by_scale = dualad.derivative(lambda s: G1(s, x, 0.5)[0])(2.0)  # = ∂rosen/∂x0
    assert d_by_scale == pytest.approx(dualad.grad(rosen_loop_py)(x)[0], rel=1e-14)
    with pytest.raises(ValueError, match="jit=False"):
        dualad.grad(_weighted, argnums=-2)


@numba.njit
def _uses_cumsum(x):
    return np.cumsum(x)[-1] * x[0]


def test_uncompilable_function_names_the_operation_and_the_fix():
    with pytest.raises(numba.core.errors.TypingError, match="(?s)cumsum.*jit=False"):
        dualad.grad(_uses_cumsum)(X5)
    x = np.array([2.0, 3.0])
    np.testing.assert_array_equal(dualad.grad(_uses_cumsum, jit=False)(x), [7.0, 2.0])


# ---- every rule through its compiled entry points -----------------------------------------------
def _point(rule):
    """A point inside the rule's domain, away from its edges."""
    return [min(max(0.37 + 0.1 * i, lo + 0.05), hi - 0.05) for i, (lo, hi) in enumerate(rule.domain)]


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_compiled_matches_python(name):
    """Each compiled entry point (np.*, math.*, operator) equals the Python path's np.* one,
    on duals, hyper-duals and the compiled tape."""
    rule = RULES[name]
    pt = np.array(_point(rule))
    numpy_entry = rule.ufunc if rule.ufunc is not None else rule.value
    if rule.arity == 1:
        reference = lambda v: numpy_entry(v[0])  # noqa: E731
    else:
        reference = lambda v: numpy_entry(v[0], v[1])  # noqa: E731
    expected, expected_hessian = dualad.grad(reference)(pt), dualad.hessian(reference)(pt)
    assert np.all(np.isfinite(expected)), (name, pt)
    for entry in entry_points(rule):
        if rule.arity == 1:
            fn = numba.njit(lambda v: entry(v[0]))
        else:
            fn = numba.njit(lambda v: entry(v[0], v[1]))
        np.testing.assert_allclose(dualad.grad(fn)(pt), expected, rtol=1e-14, err_msg=f"{name} via {entry}")
        np.testing.assert_allclose(dualad.grad(fn, mode="reverse")(pt), expected, rtol=1e-14,
                                   err_msg=f"{name} via {entry}, compiled tape")
        np.testing.assert_allclose(dualad.hessian(fn)(pt), expected_hessian, rtol=1e-13, atol=1e-300,
                                   err_msg=f"{name} second partials via {entry}")


@numba.njit
def _slices(x):
    even, odd, rev = x[::2], x[1::2], x[::-1]
    inner = x[1:][::2]
    return (np.sum(even * odd) + rev[0] * x[-1] + np.sum(inner ** 3) + x[-2] * rev[-1]
            + np.sum(np.sin(M2 @ x[:3])))


M2 = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])


@numba.njit
def _writes_its_input(x):
    x[0] = 1.0
    return x[0]


def test_seeded_input_slices_and_read_only_input():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9, 0.45])
    for chunk in (1, 4, 8):
        np.testing.assert_allclose(dualad.grad(_slices, chunk=chunk)(x),
                                   dualad.grad(_slices, jit=False)(x), rtol=1e-14)
    with pytest.raises(numba.core.errors.TypingError, match="read-only.*np.zeros_like"):
        dualad.grad(_writes_its_input)(x)


@numba.njit
def _vectorised(x):
    big = x > 0.4                                  # comparison: a boolean array
    y = np.where(big, x ** 2, -3.0 * x)            # derivative of the branch taken
    z = np.where(x < 0.0, 0.0, np.roll(x, 2))      # a plain number in one branch
    return (np.sum(y * z) + np.prod(x[:3] + 2.0) + np.dot(x, x[::-1]) + np.sum(-x)
            + np.sum(np.roll(np.sin(x), -1) * x))


def test_vectorised_dual_array_operations():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9, 0.45])
    np.testing.assert_allclose(dualad.grad(_vectorised)(x), dualad.grad(_vectorised, jit=False)(x),
                               rtol=1e-14)
    np.testing.assert_allclose(dualad.grad(_vectorised, chunk=4)(x),
                               dualad.grad(_vectorised, jit=False)(x), rtol=1e-14)
    # the same operations on arrays of hyper-duals
    np.testing.assert_allclose(dualad.hessian(_vectorised, chunk=3)(x),
                               dualad.hessian(_vectorised, jit=False)(x), rtol=1e-13, atol=1e-14)


def test_compiled_jvp():
    x, v = np.array([0.3, -0.4, 0.5, 0.8, -0.9]), np.linspace(1.0, 2.0, 5)
    value, tangent = dualad.jvp(rosen_loop, (x,), (v,))
    expected = dualad.jvp(rosen_loop_py, (x,), (v,))
    assert value == expected[0]
    assert tangent == pytest.approx(expected[1], rel=1e-14)
    out, slope = dualad.jvp(mlp, (X5.repeat(2)[:6],), (np.ones(6),))
    np.testing.assert_allclose(slope, dualad.jacobian(mlp)(X5.repeat(2)[:6]).sum(axis=1), rtol=1e-14)
    assert dualad.jvp(_quartic, (2.0,), (3.0,)) == (_quartic(2.0), pytest.approx(3.0 * _quartic_prime(2.0)))


def test_python_dual_passed_to_a_dispatcher_names_the_fix():
    namespace = type("Namespace", (), {"f": rosen_loop})  # reached as an attribute: no twin

    with pytest.raises(TypeError, match="(?s)passed to a numba-compiled function.*dualad.grad"):
        dualad.grad(lambda x: namespace.f(x))(X5)
    # named in the closure, the Python path runs its twin
    np.testing.assert_allclose(dualad.grad(lambda x: rosen_loop(x) * 2.0)(X5),
                               2.0 * dualad.grad(rosen_loop_py)(X5), rtol=1e-14)


# ---- the shared test functions through the compiled path ------------------------------------------
# These compile for duals and must agree with the Python path; every other function of the
# shared list uses what numba cannot compile for duals (n-D arrays, np.linalg, lists of mixed
# types, recursive closures) and must say that jit=False works.
COMPILES = {"rosen", "rosen_loop", "textbook", "mlp", "assignment"}


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=[name for name, _, _ in FUNCTIONS])
def test_shared_functions_compiled(name, f, x):
    compiled = numba.njit(f)
    if name in COMPILES:  # forward, the compiled tape and auto agree with the Python path
        expected = dualad.jacobian(f)(x)
        for mode in ("forward", "reverse", "auto"):
            np.testing.assert_allclose(dualad.jacobian(compiled, mode=mode)(x), expected, rtol=1e-13,
                                       err_msg=mode)
        cotangent = np.linspace(0.5, 1.5, np.size(f(x))).reshape(np.shape(f(x)))
        value, vjp_fn = dualad.vjp(compiled, x)  # vjp_fn runs dualad.jit.tape.vjp(compiled)
        np.testing.assert_allclose(value, f(x), rtol=1e-14)
        pullback = vjp_fn(cotangent if np.ndim(cotangent) else float(cotangent))[0]
        np.testing.assert_allclose(pullback, np.tensordot(cotangent, expected, np.ndim(cotangent)),
                                   rtol=1e-13)
    else:
        with pytest.raises(Exception, match="jit=False") as info:
            dualad.jacobian(compiled)(x)
        assert isinstance(info.value, (numba.core.errors.NumbaError, NotImplementedError, ImportError))


@numba.njit
def _builtins_and_joins(x):
    if math.isnan(x[0]) or dmath.isinf(x[1]):
        return x[0] * 0.0
    top = max(x[0], x[1]) + min(x[2], 0.25) + max(0.1, x[3])
    stacked = np.stack((x[0], x[1] * 2.0, 3.0))
    joined = np.concatenate((x[:2], np.ones(2), np.sin(x[2:])))
    joined[1:3] = stacked[:2]
    items = [x[0] * 2.0]                 # a list of duals, grown in a loop
    for i in range(1, 3):
        items.append(x[i] ** 2)
    return (np.sum(np.stack(items) * x[2:]) + top + np.sum(stacked * x[:3]) + np.dot(joined, joined) + dmath.log(x[0] + 2.0, 2.0)
            + dmath.erf(x[1]) + dmath.log(3.0))


def test_builtins_stack_concatenate_and_dualad_math_compiled():
    x = np.array([0.3, -0.4, 0.5, 0.8, -0.9])
    np.testing.assert_allclose(dualad.grad(_builtins_and_joins)(x),
                               dualad.grad(_builtins_and_joins, jit=False)(x), rtol=1e-14)
    np.testing.assert_allclose(dualad.hessian(_builtins_and_joins, chunk=3)(x),
                               dualad.hessian(_builtins_and_joins, jit=False)(x), rtol=1e-13, atol=1e-15)


# ---- compiled reverse mode: the tape inside numba ---------------------------------------------------------
@numba.njit
def _iterates_scalars(x):
    total = 0.0
    for xi in x:                 # iteration over the active input
        total += xi ** 3
    for xi in x[1::2]:           # and over a slice of it
        total += math.sin(xi) * x[0]
    return total


@pytest.mark.parametrize("f", [rosen_loop, textbook, _scalar_mix, _iterates_scalars],
                         ids=["rosen", "textbook", "mix", "iterates"])
def test_compiled_reverse_equals_forward_and_python(f):
    x = X5[:2] + 2.5 if f is textbook else X5
    reverse = dualad.grad(f, mode="reverse")
    assert hasattr(reverse, "py_func")
    np.testing.assert_allclose(reverse(x), dualad.grad(f, mode="forward")(x), rtol=1e-13)
    np.testing.assert_allclose(reverse(x), dualad.grad(f, jit=False, mode="reverse")(x), rtol=1e-13)
    value, gradient = dualad.value_and_grad(f, mode="reverse")(x)
    assert value == pytest.approx(f(x), rel=1e-15)
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x), gradient, rtol=1e-15)


@numba.njit
def _long_loop(x):
    # far more nodes than the tape's first capacity (16 per input + 256): the kernel re-runs
    total = 0.0
    for step in range(2000):
        total += math.sin(x[step % 2] * 0.001 * step) * x[1]
    return total


GR = dualad.grad(_long_loop, mode="reverse")


@numba.njit
def _calls_reverse_kernel(x):
    return GR(x)[0] + GR(x * 2.0)[1]


def test_compiled_reverse_grows_its_tape_and_is_callable_from_njit():
    x = np.array([0.7, -0.3])
    np.testing.assert_allclose(GR(x), dualad.grad(_long_loop, jit=False)(x), rtol=1e-12)
    expected = dualad.grad(_long_loop, jit=False)(x)[0] + dualad.grad(_long_loop, jit=False)(2 * x)[1]
    assert _calls_reverse_kernel(x) == pytest.approx(expected, rel=1e-12)
    assert dualad.grad(numba.njit(lambda t: t ** 3 * math.sin(t)), mode="reverse")(0.7) == pytest.approx(
        3 * 0.49 * math.sin(0.7) + 0.343 * math.cos(0.7), rel=1e-15)


@numba.njit
def _fails_below_zero(x):
    if x[0] < 0.0:
        raise ValueError("x[0] < 0")
    total = 0.0
    for i in range(len(x)):
        total += math.sin(x[i]) * x[0]
    return total


GF = dualad.grad(_fails_below_zero, mode="reverse")


@numba.njit(parallel=True)
def _reverse_kernels_in_parallel(xs):
    out = np.empty_like(xs)
    for i in numba.prange(xs.shape[0]):
        out[i] = GR(xs[i])  # one call takes the kept buffers, the others their own
    return out


def test_compiled_tape_keeps_its_buffers_safely():
    reference = dualad.grad(_fails_below_zero, jit=False)
    for n in (3, 2000, 5, 2000):  # the kept buffers grow, then serve smaller tapes
        x = np.linspace(0.1, 2.0, n)
        np.testing.assert_allclose(GF(x), reference(x), rtol=1e-13)
    with pytest.raises(ValueError, match="x\\[0\\] < 0"):
        GF(np.array([-1.0, 2.0]))  # raised while the buffers were taken: later calls use new ones
    x = np.linspace(0.1, 2.0, 50)
    np.testing.assert_allclose(GF(x), reference(x), rtol=1e-13)
    xs = np.random.default_rng(3).normal(size=(64, 2))
    expected = np.array([dualad.grad(_long_loop, jit=False)(row) for row in xs])
    np.testing.assert_allclose(_reverse_kernels_in_parallel(xs), expected, rtol=1e-12)


def test_compiled_tape_records_array_code_and_vector_outputs():
    rng = np.random.default_rng(5)
    w, b, x = rng.normal(size=(3, 6)), rng.normal(size=3), rng.normal(size=6)
    jac = dualad.jacrev(_layer)(x, w, b)  # np.tanh(W @ x + b): arrays of actives
    np.testing.assert_allclose(jac, dualad.jacfwd(_layer, jit=False)(x, w, b), rtol=1e-13)
    np.testing.assert_allclose(dualad.jacobian(_layer, mode="reverse")(x, w, b), jac, rtol=1e-15)
    np.testing.assert_allclose(dualad.grad(rosen_vec, mode="reverse")(X5),
                               dualad.grad(rosen_loop_py)(X5), rtol=1e-13)
    np.testing.assert_allclose(dualad.jacrev(_buffer)(X5), dualad.jacfwd(_buffer, jit=False)(X5), rtol=1e-13)
    pair = (X5[:2], 0.5)  # a tuple input: one block per leaf
    for got, expected in zip(dualad.jacrev(_vector_and_scale)(pair),
                             dualad.jacfwd(_vector_and_scale, jit=False)(pair)):
        np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert _calls_jacrev(X5) == pytest.approx(dualad.jacfwd(_buffer, jit=False)(X5)[2, 0], rel=1e-14)


@numba.njit
def _layer(x, w, b):
    return np.tanh(w @ x + b)


@numba.njit
def _buffer(x):
    y = np.zeros_like(x)  # a buffer of actives: zeros are constants
    for i in range(1, len(y)):
        y[i] = y[i - 1] * x[i] + x[0] ** 2
    return y


@numba.njit
def _vector_and_scale(p):
    v, s = p
    return np.sin(v) * s


JR = dualad.jacrev(_buffer)


@numba.njit
def _calls_jacrev(x):
    return JR(x)[2, 0]


def test_compiled_auto_mode_picks_by_size():
    from dualad.modes import COMPILED_REVERSE_FROM

    small, large = X5[:2], np.linspace(-1.0, 1.0, 4 * COMPILED_REVERSE_FROM)
    auto = dualad.grad(rosen_loop)  # mode="auto": forward below the crossover, the tape above
    for x in (small, large):
        np.testing.assert_allclose(auto(x), dualad.grad(rosen_loop_py)(x), rtol=1e-13)
    assert dualad.choose_mode(rosen_loop, large).mode == "reverse"
    assert dualad.choose_mode(rosen_loop, small).mode == "forward"
    rng = np.random.default_rng(2)
    for n_in, n_out, expected in ((2, 60, "forward"), (400, 2, "reverse")):
        w, b, x = rng.normal(size=(n_out, n_in)) / n_in ** 0.5, rng.normal(size=n_out), rng.normal(size=n_in)
        np.testing.assert_allclose(dualad.jacobian(_layer)(x, w, b),
                                   dualad.jacfwd(_layer, jit=False)(x, w, b), rtol=1e-12, atol=1e-15)
        decision = dualad.choose_mode(_layer, x, w, b)
        assert decision.mode == expected, decision.reason
    assert _calls_auto(large) == pytest.approx(auto(large)[3], rel=1e-15)


AUTO = dualad.grad(rosen_loop)


@numba.njit
def _calls_auto(x):
    return AUTO(x)[3]


def test_compiled_forward_over_reverse_names_the_fix():
    with pytest.raises(NotImplementedError, match="jit=False"):
        dualad.hessian(rosen_loop, mode="forward-over-reverse")
