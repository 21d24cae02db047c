"""Generated from the NumPy registry (dualad/functions): every entry, on the example in
numpy_examples.py, gives forward = reverse = central differences at first order,
hyper-dual = forward-over-reverse = reverse-over-forward at second order and, for a sample,
the same third derivatives by two nestings; value-only entries give NumPy's result. Plus
the crashes of issue 13 item 5 and the generated table docs/numpy.md."""

import pathlib

import numpy as np
import pytest

import dualad
from dualad.functions import REGISTRY, table
from numpy_examples import EXAMPLES, N, VALUE_ONLY_EXAMPLES

X = np.random.default_rng(3).uniform(0.2, 1.7, N)
ENTRIES = sorted(REGISTRY.values(), key=lambda e: e.name)
DIFFERENTIABLE = [e for e in ENTRIES if e.kind != "value_only"]
VALUE_ONLY = [e for e in ENTRIES if e.kind == "value_only"]


def _flat(out):
    """The example's result(s) as one flat float vector."""
    if isinstance(out, (list, tuple)):
        return np.concatenate([_flat(o) for o in out])
    return np.reshape(out, (-1,))


def _example(entry):
    assert entry.func in EXAMPLES, f"{entry.name} has no example in tests/numpy_examples.py"
    return lambda x: _flat(EXAMPLES[entry.func](x))


def _central(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("entry", DIFFERENTIABLE, ids=[e.name for e in DIFFERENTIABLE])
def test_first_order(entry):
    f = _example(entry)
    forward = dualad.jacobian(f, mode="forward")(X)
    reverse = dualad.jacobian(f, mode="reverse")(X)
    np.testing.assert_allclose(reverse, forward, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(forward, _central(f, X), rtol=1e-6, atol=1e-7)
    value = dualad.jvp(f, (X,), (np.ones(N),))[0]
    np.testing.assert_array_equal(value, f(X))  # the value is NumPy's, untouched


@pytest.mark.parametrize("entry", DIFFERENTIABLE, ids=[e.name for e in DIFFERENTIABLE])
def test_second_order(entry):
    f = _example(entry)
    weights = np.random.default_rng(5).normal(size=f(X).size)
    scalar = lambda x: np.sum(weights * np.sin(f(x)))  # noqa: E731
    hyper = dualad.hessian(scalar, mode="forward")(X)
    np.testing.assert_allclose(dualad.jacfwd(dualad.jacrev(scalar))(X), hyper, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dualad.jacrev(dualad.jacfwd(scalar))(X), hyper, rtol=1e-9, atol=1e-9)


THIRD = DIFFERENTIABLE[::7]


@pytest.mark.parametrize("entry", THIRD, ids=[e.name for e in THIRD])
def test_third_order_sample(entry):
    f = _example(entry)
    weights = np.random.default_rng(6).normal(size=f(X).size)
    scalar = lambda x: np.sum(weights * np.sin(f(x)))  # noqa: E731
    x = X[:N]
    by_hyper = dualad.jacfwd(dualad.hessian(scalar))(x)
    by_reverse = dualad.jacrev(dualad.jacfwd(dualad.grad(scalar, mode="reverse")))(x)
    np.testing.assert_allclose(by_reverse, by_hyper, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("entry", VALUE_ONLY, ids=[e.name for e in VALUE_ONLY])
def test_value_only(entry):
    assert entry.func in VALUE_ONLY_EXAMPLES, f"{entry.name} has no example"
    example = VALUE_ONLY_EXAMPLES[entry.func]
    seen = []
    for mode in ("forward", "reverse"):
        dualad.jacobian(lambda x: (seen.append(example(x)), x)[1], mode=mode)(X)
    for got in seen:
        np.testing.assert_array_equal(np.asarray(got, dtype=object), np.asarray(example(X), dtype=object))


def test_every_example_names_a_registered_function():
    assert set(EXAMPLES) | set(VALUE_ONLY_EXAMPLES) <= set(REGISTRY)


def test_docs_table_is_current():
    path = pathlib.Path(__file__).parents[1] / "docs" / "numpy.md"
    assert path.read_text() == table.markdown(), (
        "docs/numpy.md is stale: regenerate it with `python -m dualad.functions.table > docs/numpy.md`")


# ---- crashes of issue 13, item 5 ----------------------------------------------------------------
def test_vector_matmul_stack_in_reverse():
    b = np.arange(24.0).reshape(2, 3, 4) / 10
    f = lambda v: v @ b  # noqa: E731
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(dualad.jacobian(f, mode="reverse")(v),
                                  dualad.jacobian(f, mode="forward")(v))
    np.testing.assert_array_equal(dualad.jacobian(f, mode="forward")(v), np.moveaxis(b, 1, -1))


def test_trace_offset_past_the_matrix_under_reverse_over_reverse():
    a = np.arange(6.0).reshape(2, 3)
    f = lambda m: np.trace(m * m, offset=5) + np.sum(m)  # noqa: E731
    np.testing.assert_array_equal(dualad.jacrev(dualad.grad(f, mode="reverse"))(a),
                                  np.zeros((2, 3, 2, 3)))


def test_third_order_through_a_tuple_of_scalars():
    f = lambda ab: ab[0] ** 2 * ab[1] ** 3  # noqa: E731
    a, b = 1.5, 2.0
    expected = (((0.0, 6 * b ** 2), (6 * b ** 2, 12 * a * b)),
                ((6 * b ** 2, 12 * a * b), (12 * a * b, 6 * a ** 2)))
    assert dualad.jacfwd(dualad.jacfwd(dualad.grad(f)))((a, b)) == expected
    assert dualad.jacrev(dualad.jacfwd(dualad.grad(f, mode="reverse")))((a, b)) == expected


def test_scatter_of_nested_duals():
    # jvp of jvp of vjp of np.outer: the tape's scatter meets duals of duals
    def g(x):
        _, pull = dualad.vjp(lambda y: np.outer(y, y) * y[0], x)
        return pull(np.ones((2, 2)))[0]

    inner = lambda x: dualad.jvp(g, (x,), (np.array([1.0, 0.0]),))[1]  # noqa: E731
    x = np.array([1.0, 2.0])
    got = dualad.jvp(inner, (x,), (np.array([0.0, 1.0]),))[1]
    # g = ∇_y Σ y_i y_j y_0: second directional derivatives of g by central differences
    h = 1e-4
    e0, e1 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    fd = (g(x + h * e0 + h * e1) - g(x + h * e0 - h * e1) - g(x - h * e0 + h * e1)
          + g(x - h * e0 - h * e1)) / (4 * h * h)
    np.testing.assert_allclose(got, fd, rtol=1e-6)
