"""dualad.vmap on the Python path (dualad/batching.py): a loop over the batch with JAX's
in_axes/out_axes meaning, structures mapped leaf by leaf, and errors that name the problem.
Compiled kernels: tests/compiled/test_vmap_compiled.py."""

import numpy as np
import pytest

import dualad


def f(x):
    return np.array([np.sin(x[0]) * x[1], x[0] ** 2 + np.exp(x[2])])


X = np.random.default_rng(3).normal(size=(6, 3))


def test_a_python_function_is_mapped_by_a_loop_and_says_so():
    mapped = dualad.vmap(f)
    assert mapped.strategy == "loop" and "Python loop" in repr(mapped)
    np.testing.assert_array_equal(mapped(X), np.stack([f(x) for x in X]))


def test_transforms_on_the_python_path_are_mapped():
    jac = dualad.vmap(dualad.jacobian(f))(X)
    assert jac.shape == (6, 2, 3)
    np.testing.assert_array_equal(jac, np.stack([dualad.jacobian(f)(x) for x in X]))
    g = dualad.vmap(dualad.grad(lambda x, w: np.sum(w * x ** 3)), in_axes=(0, None))(X, np.arange(3.0))
    np.testing.assert_allclose(g, 3 * np.arange(3.0) * X ** 2, rtol=1e-15)


def test_in_axes_and_out_axes_as_jax():
    w = np.array([1.0, -2.0, 0.5])

    def weighted(x, w):
        return x * w, np.sum(x)

    by_column = np.ascontiguousarray(X.T)  # (3, 6): the batch on axis 1 (or -1)
    for in_axes in ((1, None), (-1, None)):
        scaled, sums = dualad.vmap(weighted, in_axes=in_axes, out_axes=-1)(by_column, w)
        np.testing.assert_array_equal(scaled, (X * w).T)
        np.testing.assert_array_equal(sums, X.sum(axis=1))
    scaled = dualad.vmap(lambda x, w: x * w, in_axes=(0, 0), out_axes=1)(X, np.tile(w, (6, 1)))
    np.testing.assert_array_equal(scaled, (X * w).T)
    # an int in_axes maps every argument
    np.testing.assert_array_equal(dualad.vmap(np.multiply)(X, X), X * X)


def test_structures_are_mapped_leaf_by_leaf():
    def loss(params, n):
        return np.sum(params["w"] ** 2) * params["b"] + n

    params = {"w": X, "b": np.arange(6.0), "n_steps": 3}
    values = dualad.vmap(lambda p: loss(p, p["n_steps"]))(params)
    np.testing.assert_array_equal(values, [loss({"w": X[i], "b": float(i)}, 3) for i in range(6)])
    # a gradient's structure, with None for the passed-through leaf
    grads = dualad.vmap(dualad.grad(lambda p: loss(p, p["n_steps"])))(params)
    assert grads["n_steps"] is None and grads["w"].shape == (6, 3)
    np.testing.assert_allclose(grads["w"], 2 * X * np.arange(6.0)[:, None], rtol=1e-15)
    np.testing.assert_allclose(grads["b"], np.sum(X ** 2, axis=1), rtol=1e-15)


@pytest.mark.parametrize("call, error, match", [
    (lambda: dualad.vmap(np.add)(X, X[:4]), ValueError, "different sizes along their in_axes \\(6 and 4\\)"),
    (lambda: dualad.vmap(np.add, in_axes=(0, None, 0))(X, X), ValueError, "in_axes has 3 entries"),
    (lambda: dualad.vmap(f)(x=X), TypeError, "positional arguments only"),
    (lambda: dualad.vmap(f)(X[:0]), ValueError, "size 0"),
    (lambda: dualad.vmap(np.add)(X, 1.5), ValueError, "in_axes=None"),
    (lambda: dualad.vmap(f, in_axes=2)(X), ValueError, "axis 2 is out of range"),
    (lambda: dualad.vmap(f, in_axes=(None,)), ValueError, "maps no argument"),
    (lambda: dualad.vmap(f, out_axes=None), TypeError, "out_axes must be an int"),
    (lambda: dualad.vmap(f, in_axes="0"), TypeError, "in_axes"),
    (lambda: dualad.vmap(lambda x: x[: int(x[0] > 0) + 1])(X), ValueError, "different shapes"),
])
def test_mistakes_are_errors_that_name_the_problem(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_inputs_are_not_modified():
    copy = X.copy()
    dualad.vmap(dualad.hessian(lambda x: np.sum(x ** 3)))(X)
    np.testing.assert_array_equal(X, copy)
