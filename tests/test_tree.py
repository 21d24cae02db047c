"""Structured inputs and outputs (tree.py, arguments.py): every transform mirrors the structure."""

import numpy as np
import pytest

import dualad
from dualad.tree import flatten, tree_map
from structures import Frozen, Model, Params, analytic_model_gradient, make_model, model_loss, tree_output


# ---- tree.py ----------------------------------------------------------------------------------------
def test_flatten_and_unflatten_round_trip():
    tree = {"b": [1.0, (2.0, None)], "a": Params(3.0, np.ones(2)), "c": Frozen(4.0, (5.0,))}
    leaves, treedef = flatten(tree)
    # dict keys sorted ('a' first), then fields and items in order; None is a leaf
    assert [x if not isinstance(x, np.ndarray) else "w" for x in leaves] == [3.0, "w", 1.0, 2.0, None, 4.0, 5.0]
    rebuilt = treedef.unflatten(leaves)
    assert rebuilt["b"] == [1.0, (2.0, None)]
    assert isinstance(rebuilt["a"], Params) and isinstance(rebuilt["c"], Frozen)
    assert treedef == flatten(rebuilt)[1]
    assert treedef != flatten({"b": [1.0, 2.0], "a": 1.0, "c": 1.0})[1]
    with pytest.raises(ValueError, match="has 7 leaves, got 2"):
        treedef.unflatten([1, 2])
    assert treedef.describe() == "{'a': Params(scale=*, weights=*), 'b': [*, (*, *)], 'c': Frozen(a=*, b=(*,))}"


def test_tree_map_skips_none_leaves():
    grads = {"w": np.ones(2), "n": None}
    params = {"w": np.array([1.0, 2.0]), "n": 3}
    assert tree_map(lambda g, p: p - 0.5 * g, grads, params)["n"] is None
    np.testing.assert_array_equal(tree_map(lambda g, p: p - 0.5 * g, grads, params)["w"], [0.5, 1.5])


# ---- every transform mirrors its input and output structures ------------------------------------------
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_grad_of_a_dataclass_mirrors_it(mode):
    m = make_model()
    g = dualad.grad(model_loss, mode=mode)(m)
    d_scale, d_weights, d_offset = analytic_model_gradient(m)
    assert isinstance(g, Model) and isinstance(g.params, Params)
    assert g.params.scale == pytest.approx(d_scale, rel=1e-14)
    np.testing.assert_allclose(g.params.weights, d_weights, rtol=1e-14)
    assert g.offset == pytest.approx(d_offset, rel=1e-14)
    assert g.n_terms is None and g.label is None and g.mesh is None  # passed through


def test_static_leaf_reaches_the_function_unwrapped():
    seen = []

    def f(p):
        seen.append(type(p["mesh"]))
        return p["x"] * np.sum(p["mesh"])

    g = dualad.grad(f)({"x": 2.0, "mesh": dualad.static(np.ones(3))})
    assert g == {"x": 3.0, "mesh": None}
    assert seen and all(t is np.ndarray for t in seen)


def test_value_and_grad_hessian_and_hvp_of_a_dict():
    def f(p):
        return np.sum(p["w"] ** 2) * p["b"] + np.sin(p["b"]) * p["n"]

    p = {"w": np.array([1.0, 2.0]), "b": 0.5, "n": 3, "tag": "x"}
    value, g = dualad.value_and_grad(f)(p)
    assert value == pytest.approx(5 * 0.5 + np.sin(0.5) * 3)
    assert set(g) == {"w", "b", "n", "tag"} and g["n"] is None and g["tag"] is None
    for mode in ("forward", "forward-over-reverse"):
        h = dualad.hessian(f, mode=mode)(p)
        np.testing.assert_allclose(h["w"]["w"], 2 * 0.5 * np.eye(2), rtol=1e-14)
        np.testing.assert_allclose(h["w"]["b"], 2 * p["w"], rtol=1e-14)
        np.testing.assert_allclose(h["b"]["w"], 2 * p["w"], rtol=1e-14)
        assert h["b"]["b"] == pytest.approx(-np.sin(0.5) * 3, rel=1e-14)
        assert h["n"] is None and h["w"]["n"] is None
    v = {"w": np.array([1.0, 0.0]), "b": 1.0, "n": 0, "tag": ""}
    hv = dualad.hvp(f)(p, v)
    np.testing.assert_allclose(hv["w"], [1.0 + 2.0, 4.0], rtol=1e-14)
    assert hv["b"] == pytest.approx(2.0 - 3 * np.sin(0.5), rel=1e-14)


def test_jacobians_of_a_tree_output_in_both_modes():
    x = np.array([0.3, 0.7])
    expected = {"s": np.array([np.cos(0.3) * 0.7, np.sin(0.3)]),
                "t": (2.0 * np.eye(2), np.array([0.0, 3 * 0.49]))}
    for jac in (dualad.jacfwd(tree_output)(x), dualad.jacrev(tree_output)(x),
                dualad.jacobian(tree_output)(x)):
        assert flatten(jac)[1] == flatten(expected)[1]
        for got, want in zip(flatten(jac)[0], flatten(expected)[0]):
            np.testing.assert_allclose(got, want, rtol=1e-14)


def test_jacobian_of_tree_to_tree_nests_output_then_input():
    def f(p):
        return (p["a"] * p["b"], p["b"] ** 2)

    p = {"a": np.array([1.0, 2.0]), "b": 3.0}
    for jac in (dualad.jacfwd(f)(p), dualad.jacrev(f)(p)):
        np.testing.assert_allclose(jac[0]["a"], 3.0 * np.eye(2))
        np.testing.assert_allclose(jac[0]["b"], [1.0, 2.0])
        np.testing.assert_allclose(jac[1]["a"], [0.0, 0.0])
        assert jac[1]["b"] == 6.0


def test_jvp_and_vjp_of_trees_agree():
    x = {"u": np.array([0.3, 0.7]), "k": 2}
    f = lambda p: tree_output(p["u"] * p["k"])  # noqa: E731
    tangent = {"u": np.array([1.0, -2.0]), "k": 0}
    value, out_tangent = dualad.jvp(f, (x,), (tangent,))
    assert flatten(value)[1] == flatten(out_tangent)[1]
    _, pullback = dualad.vjp(f, x)
    cotangent = {"s": 0.5, "t": (np.array([1.0, 2.0]), -1.0)}
    (back,) = pullback(cotangent)
    assert back["k"] is None
    # <cotangent, J tangent> == <Jᵀ cotangent, tangent>
    lhs = sum(np.sum(c * t) for c, t in zip(flatten(cotangent)[0], flatten(out_tangent)[0]))
    assert lhs == pytest.approx(np.sum(back["u"] * tangent["u"]), rel=1e-14)


def test_lists_and_every_kind_of_passed_leaf():
    def f(items):
        x, flag, nothing, count, name, ints = items
        assert flag is True and nothing is None and name == "a" and ints.dtype.kind == "i"
        return np.sum(x ** 2) * count

    items = [np.array([1.0, 2.0]), True, None, 3, "a", np.arange(2)]
    for mode in ("forward", "reverse"):
        g = dualad.grad(f, mode=mode)(items)
        assert isinstance(g, list) and g[1:] == [None] * 5
        np.testing.assert_array_equal(g[0], [6.0, 12.0])


def test_tuple_argnums_with_structures():
    def f(a, b, c):
        return a["x"] * b[0] + b[1] * c

    ga, gb = dualad.grad(f, argnums=(0, 1))({"x": 2.0}, (3.0, 4.0), 5.0)
    assert ga == {"x": 3.0} and gb == (2.0, 5.0)


# ---- has_aux ---------------------------------------------------------------------------------------------
def with_aux(x):
    y = np.sum(x ** 2)
    return y, {"y": y, "twice": 2 * x, "count": 7}


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_grad_and_value_and_grad_with_aux(mode):
    x = np.array([1.0, 2.0])
    g, aux = dualad.grad(with_aux, has_aux=True, mode=mode)(x)
    np.testing.assert_array_equal(g, 2 * x)
    assert aux["count"] == 7 and aux["y"] == 5.0
    # aux carries no derivative out of the transform: plain values
    assert type(aux["y"]) is not dualad.Dual and isinstance(aux["twice"], np.ndarray)
    (value, aux2), g2 = dualad.value_and_grad(with_aux, has_aux=True, mode=mode)(x)
    assert value == 5.0 and aux2["y"] == 5.0
    np.testing.assert_array_equal(g2, 2 * x)


def test_jacobian_vjp_and_hessian_with_aux():
    x = np.array([1.0, 2.0])
    f = lambda x: (x ** 2, np.sum(x))  # noqa: E731
    for jac_fn in (dualad.jacfwd, dualad.jacrev):
        jac, aux = jac_fn(f, has_aux=True)(x)
        np.testing.assert_array_equal(jac, np.diag(2 * x))
        assert aux == 3.0
    jac, aux = dualad.jacobian(f, has_aux=True)(x)
    assert aux == 3.0
    out, pullback, aux = dualad.vjp(f, x, has_aux=True)
    np.testing.assert_array_equal(pullback(np.ones(2))[0], 2 * x)
    assert aux == 3.0
    hess, aux = dualad.hessian(with_aux, has_aux=True)(x)
    np.testing.assert_array_equal(hess, 2 * np.eye(2))
    assert aux["y"] == 5.0


def test_aux_keeps_an_outer_transforms_derivative():
    # aux drops only this transform's derivative: an outer transform still sees its own
    def inner(t):
        return dualad.grad(lambda x: (x * t, t * 3.0), has_aux=True)(1.0)[1]

    assert dualad.derivative(inner)(2.0) == 3.0


# ---- errors -------------------------------------------------------------------------------------------------
def test_cotangent_structure_mismatch_names_both_structures():
    _, pullback = dualad.vjp(tree_output, np.array([0.3, 0.7]))
    with pytest.raises(ValueError, match=r"structure of tree_output's output, \{'s': \*, 't': \(\*, \*\)\}; "
                                         r"got \{'s': \*, 't': \*\}"):
        pullback({"s": 1.0, "t": np.ones(2)})
    with pytest.raises(ValueError, match=r"cotangent leaf 1 must have the output's shape \(2,\), got shape \(3,\)"):
        pullback({"s": 1.0, "t": (np.ones(3), 1.0)})


def test_tangent_structure_mismatch():
    with pytest.raises(ValueError, match="the tangents must have the structure of the primals"):
        dualad.jvp(lambda p: p["a"], ({"a": 1.0},), ({"b": 1.0},))
    with pytest.raises(ValueError, match=r"tangent 0\['a'\] has shape \(2,\) but primal 0\['a'\] has shape \(\)"):
        dualad.jvp(lambda p: p["a"], ({"a": 1.0},), ({"a": np.ones(2)},))


def test_errors_for_leaves_that_cannot_be_differentiated():
    with pytest.raises(TypeError, match=r"argument 0\['o'\] of <lambda> has type object .*dualad.static"):
        dualad.grad(lambda p: p["x"])({"x": 1.0, "o": object()})
    with pytest.raises(TypeError, match=r"argument 0\[1\] .*complex"):
        dualad.grad(lambda p: p[0])((1.0, 1j))
    # asked for explicitly by argnums: a leaf that cannot be differentiated is an error
    with pytest.raises(TypeError, match="argument 1 of <lambda> holds strings"):
        dualad.grad(lambda a, b: a, argnums=1)(1.0, "name")
    with pytest.raises(TypeError, match="marked dualad.static but argnums asks for its derivative"):
        dualad.grad(lambda a: 1.0)(dualad.static(2.0))


def test_has_aux_errors():
    with pytest.raises(TypeError, match="grad needs f to return a scalar; it returned a tuple.*has_aux=True"):
        def f(x):
            return np.sum(x), 1
        dualad.grad(f)(np.ones(2))
    with pytest.raises(TypeError, match="has_aux=True needs g to return a pair"):
        def g(x):
            return np.sum(x)
        dualad.grad(g, has_aux=True)(np.ones(2))
