"""Reverse mode: the tape agrees with forward mode and hyper-duals on every test function."""

import numpy as np
import pytest

import dualad
from dualad.rules import RULES
from functions import FUNCTIONS, finite_difference_jacobian, rosen, rosen_loop
from helpers import rule_point

IDS = [name for name, _, _ in FUNCTIONS]


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=IDS)
def test_reverse_equals_forward_on_every_test_function(name, f, x):
    forward = dualad.jacobian(f, mode="forward")(x)
    reverse = dualad.jacobian(f, mode="reverse")(x)
    assert reverse.shape == forward.shape
    np.testing.assert_allclose(reverse, forward, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(reverse, finite_difference_jacobian(f, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=IDS)
def test_second_derivatives_agree_in_every_mode_on_every_test_function(name, f, x):
    weights = np.linspace(0.5, 1.5, np.size(f(x)))

    def scalar(y):  # a scalar function of each test function, so that it has a Hessian
        return np.sum(np.reshape(f(y), -1) * weights) ** 2 / 4.0

    hyper = dualad.hessian(scalar, mode="forward")(x)
    over = dualad.hessian(scalar, mode="forward-over-reverse")(x)
    np.testing.assert_allclose(over, hyper, rtol=1e-11, atol=1e-11)
    # reverse over reverse: the inner sweep's cotangents are themselves traced
    twice = dualad.jacrev(dualad.grad(scalar, mode="reverse"))(x)
    np.testing.assert_allclose(np.reshape(twice, np.shape(hyper)), hyper, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_reverse_matches_forward(name):
    rule = RULES[name]
    point = np.array(rule_point(rule))
    numpy_entry = rule.ufunc if rule.ufunc is not None else rule.value

    def f(v):
        return numpy_entry(*(v[i] for i in range(rule.arity)))

    np.testing.assert_allclose(dualad.grad(f, mode="reverse")(point), dualad.grad(f, mode="forward")(point),
                               rtol=1e-15)


def test_vjp_shapes_and_several_primals():
    a, b = np.arange(6.0).reshape(2, 3) / 7.0, np.array([0.5, -1.0, 2.0])
    out, vjp_fn = dualad.vjp(lambda a, b: np.tanh(a @ b) * 2.0, a, b)
    assert out.shape == (2,)
    ca, cb = vjp_fn(np.array([1.0, -2.0]))
    assert ca.shape == a.shape and cb.shape == b.shape
    jac_a = dualad.jacobian(lambda a: np.tanh(a @ b) * 2.0, mode="forward")(a)
    np.testing.assert_allclose(ca, np.tensordot([1.0, -2.0], jac_a, axes=1), rtol=1e-14)
    value, (c,) = dualad.vjp(lambda t: t ** 3, 2.0)[0], dualad.vjp(lambda t: t ** 3, 2.0)[1](1.0)
    assert value == 8.0 and c == 12.0 and np.shape(c) == ()


def test_vjp_cotangent_errors_name_expected_and_got():
    _, vjp_fn = dualad.vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(3,\), got shape \(2,\)"):
        vjp_fn(np.ones(2))
    with pytest.raises(TypeError, match="floats, got dtype <U1"):
        vjp_fn(np.array(["a", "b", "c"]))


def test_grad_and_jacobian_modes():
    x = np.array([-1.2, 1.0, 0.7, 0.3, 1.1])
    expected = dualad.grad(rosen, mode="forward")(x)
    for mode in ("reverse", "auto"):
        np.testing.assert_allclose(dualad.grad(rosen_loop, mode=mode)(x), expected, rtol=1e-14)
    value, g = dualad.value_and_grad(rosen, mode="reverse")(x)
    assert value == rosen(x)
    np.testing.assert_allclose(g, expected, rtol=1e-14)
    ga, gb = dualad.grad(lambda a, b: np.sum(a * b ** 2), argnums=(0, 1), mode="reverse")(x, 2 * x)
    np.testing.assert_allclose(ga, 4 * x ** 2)
    np.testing.assert_allclose(gb, 4 * x * x)
    ja, jb = dualad.jacrev(lambda a, b: a * b, argnums=(0, 1))(x, 2 * x)
    np.testing.assert_allclose(ja, np.diag(2 * x))
    with pytest.raises(ValueError, match="mode="):
        dualad.grad(rosen, mode="backward")
    with pytest.raises(TypeError, match="scalar"):
        dualad.grad(np.sin, mode="reverse")(x)


# ---- mutation and views follow NumPy ----------------------------------------------------------------------
def writes_through_views(x):
    y = np.zeros_like(x)
    y[0] = x[0] ** 2
    tail = y[1:]                      # a view of y
    tail[0] = x[1] * x[2]             # writes y[1]
    y[2] = np.sin(x[3])               # tail[1] sees this
    block = y.reshape(2, 2)           # another view
    block[1, 1] = block[0, 0] * x[0]  # writes y[3]
    y[0] = 3.0 * y[0]                 # overwrites: x[0]**2 reaches the output only through y[3]
    return np.stack([np.sum(tail * x[1:]), np.sum(y), block[1, 0] * block[0, 1]])


def test_mutation_and_views_match_numpy_and_forward():
    x = np.array([0.3, -0.7, 1.1, 0.4])
    expected_value = writes_through_views(x)  # NumPy itself
    value, _ = dualad.vjp(writes_through_views, x)
    np.testing.assert_allclose(value, expected_value, rtol=1e-15)
    np.testing.assert_allclose(dualad.jacobian(writes_through_views, mode="reverse")(x),
                               dualad.jacobian(writes_through_views, mode="forward")(x), rtol=1e-14)


def test_nesting_never_confuses_perturbations():
    # d/dx [x · d/dy (x + y)] at y = 1 is 1, in every combination of modes
    for inner in ("forward", "reverse"):
        for outer in ("forward", "reverse"):
            def g(x, inner=inner):
                return x * dualad.grad(lambda y: x + y, mode=inner)(1.0)
            assert dualad.grad(g, mode=outer)(2.0) == 1.0
    f = lambda t: np.sin(t) * t ** 3  # noqa: E731
    rr = dualad.grad(dualad.grad(f, mode="reverse"), mode="reverse")(0.7)
    assert rr == pytest.approx(dualad.second_derivative(f)(0.7), rel=1e-14)


def test_square_shortcut_keeps_a_dual_exponents_derivative():
    """x ** 2 skips computing x ** 1, but not when the exponent is a dual whose value is 2."""
    v = np.array([1.7, 2.0])
    mixed = 1.7 * (1 + 2 * np.log(1.7))  # ∂²(x^z)/∂x∂z at z = 2
    for mode in ("forward", "forward-over-reverse"):
        assert dualad.hessian(lambda u: u[0] ** u[1], mode=mode)(v)[0, 1] == pytest.approx(mixed, rel=1e-14)


# ---- einsum's VJP for every ellipsis, broadcasting and diagonal case (issue 12, item 4) ---------------------
EINSUM_CASES = [
    ("j...k,lj...->lk...", [(2, 2), (2, 2, 2)]),          # the reported case: A's '...' is empty
    ("j...k,lj...->lk...", [(3, 4), (5, 3, 2)]),          # its non-square variant (raised 'cannot reshape')
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),    # ellipses of different lengths, a size-1 dim
    ("a...,...a->...", [(2, 1, 3), (4, 3, 2)]),           # size-1 inside an ellipsis
    ("ij,j...->i...", [(2, 3), (3,)]),                    # empty ellipsis everywhere
    ("...,...->...", [(2, 3), ()]),                       # a scalar operand
    ("i...->...", [(3,)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...i,...i", [(3, 1, 4), (2, 4)]),                   # implicit output with an ellipsis
    ("ij,jk", [(2, 3), (3, 4)]),                          # implicit output
    ("ba", [(2, 3)]),
    ("ii->i", [(3, 3)]),                                  # repeated indices: a diagonal
    ("ii", [(3, 3)]),                                     # a trace
    ("iij->ji", [(3, 3, 2)]),
    ("iji->", [(2, 3, 2)]),
    ("ij->", [(2, 3)]),                                   # sums over indices
    ("ijk->i", [(2, 3, 4)]),
    ("ij,jk->i", [(2, 3), (3, 4)]),                       # k summed inside one operand only
    ("i,i->i", [(1,), (3,)]),                             # a labelled size-1 dim broadcasts
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),           # three operands
    ("i,j,k->ijk", [(2,), (3,), (2,)]),
    ("ij,jj,j->i", [(2, 3), (3, 3), (1,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
]


def _einsum_of_flat(subscripts, shapes):
    sizes = [int(np.prod(s)) for s in shapes]

    def f(x):
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(np.reshape(x[start:start + size], shape))
            start += size
        return np.einsum(subscripts, *parts)

    x = np.sin(np.arange(1.0, sum(sizes) + 1.0)) + 0.5  # no ties, no symmetry between operands
    return f, x


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES,
                         ids=[f"{s}-{i}" for i, (s, _) in enumerate(EINSUM_CASES)])
def test_einsum_reverse_equals_forward_and_differences(subscripts, shapes):
    f, x = _einsum_of_flat(subscripts, shapes)
    reverse = dualad.jacobian(f, mode="reverse")(x)
    forward = dualad.jacobian(f, mode="forward")(x)
    assert reverse.shape == forward.shape == np.shape(f(x)) + x.shape
    np.testing.assert_allclose(reverse, forward, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(reverse, finite_difference_jacobian(f, x), rtol=1e-7, atol=1e-8)

    # the VJP's einsums run on layered cotangents too: forward over reverse, reverse over reverse
    def scalar(y):
        return np.sum(np.sin(f(y)))

    hyper = dualad.hessian(scalar, mode="forward")(x)
    np.testing.assert_allclose(dualad.hessian(scalar, mode="forward-over-reverse")(x), hyper,
                               rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(dualad.jacrev(dualad.grad(scalar, mode="reverse"))(x), hyper,
                               rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("a_shape, b_shape", [((2, 2), (2, 2, 2)), ((3, 4), (5, 3, 2))])
def test_einsum_empty_ellipsis_reported_case(a_shape, b_shape):
    """grad of sum(einsum('j...k,lj...->lk...', A, B)**2), A 2-d, B 3-d: auto picks reverse."""
    a0 = np.linspace(-1.0, 1.3, int(np.prod(a_shape))).reshape(a_shape)
    b0 = np.cos(np.arange(float(np.prod(b_shape)))).reshape(b_shape)

    def f(a, b):
        return np.sum(np.einsum("j...k,lj...->lk...", a, b) ** 2)

    expected = dualad.grad(f, argnums=(0, 1), mode="forward")(a0, b0)
    for mode in ("reverse", "auto"):
        got = dualad.grad(f, argnums=(0, 1), mode=mode)(a0, b0)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-13)
    da = finite_difference_jacobian(lambda a: f(a, b0), a0)
    np.testing.assert_allclose(expected[0], da, rtol=1e-7, atol=1e-8)


def test_einsum_refuses_out_and_takes_the_sublist_form():
    with pytest.raises(TypeError, match="out"):
        dualad.grad(lambda x: np.einsum("i->", x, out=np.zeros(())), mode="reverse")(np.ones(2))
    a = np.array([[1.0, 2.0], [3.0, 5.0]])
    f = lambda x: np.einsum(a, [0, 1], x, [1], [0])  # noqa: E731  (a @ x)
    for mode in ("forward", "reverse"):
        np.testing.assert_array_equal(dualad.jacobian(f, mode=mode)(np.ones(2)), a)


# ---- NumPy functions on lists mixing layers (issue 12, item 12) -----------------------------------------------
# h(x, u): x belongs to the outer transform, u to the inner one; the inner layer's numbers have
# values of the outer layer, next to plain outer numbers and floats in one list or call.
_M = np.array([[0.5, -1.0], [2.0, 0.3]])
MIXED_LAYERS = {
    "stack": lambda x, u: np.stack([x[0] * u, x[1]]),
    "stack_scalars_and_float": lambda x, u: np.stack([x[1], u * x[0], 2.0]),
    "concatenate": lambda x, u: np.concatenate([x * u, x, np.ones(1)]),
    "hstack": lambda x, u: np.hstack([x[0] * u, x[1], 1.0]),
    "vstack": lambda x, u: np.vstack([x * u, x, np.ones(2)]),
    "where": lambda x, u: np.where(np.array([True, False]), x * u, x),
    "where_scalars": lambda x, u: np.where(np.array([True, False]), x[0] * u, x[1]),
    "where_layered_condition": lambda x, u: np.where(x * u > 0.5, [x[1], x[0]], 2.0 * u),
    "dot": lambda x, u: np.dot(_M @ x * u, x),
    "dot_matrix": lambda x, u: np.dot(x, _M * u),
    "matmul": lambda x, u: (_M * u) @ x,
    "einsum": lambda x, u: np.einsum("i,ij,j->", x * u, _M, x),
    "einsum_ellipsis": lambda x, u: np.einsum("i...,j->ij...", x, np.stack([u, x[0]])),
    "sum": lambda x, u: np.sum(np.stack([x[0] * u, x[1]])) * x,
    "full_like": lambda x, u: (np.full_like(x * u, x[1]) * x[0]        # an older fill value
                               + np.full_like(x, x[0]) * u),           # the same layer's
    "matmul_nested_list": lambda x, u: [[x[0] * u, 1.0], [x[1], u]] @ (x * u),
    "dot_list": lambda x, u: np.dot([x[0] * u, x[1]], x * u),
}


def _nestings_agree(h, x, finite_differences=True):
    """Every nesting of an inner transform in u inside an outer one in x equals forward in forward."""
    def nested(inner, outer):
        def g(x):
            inner_f = lambda u: np.sum(h(x, u) ** 2)  # noqa: E731
            if inner == "forward":
                return dualad.derivative(inner_f)(1.3)
            return dualad.grad(inner_f, mode="reverse")(1.3)
        return dualad.grad(g, mode=outer), g

    expected, g = nested("forward", "forward")
    expected = expected(x)
    if finite_differences:
        np.testing.assert_allclose(expected, finite_difference_jacobian(g, x),
                                   rtol=1e-7, atol=1e-8)
    for inner, outer in [("forward", "reverse"), ("reverse", "forward"), ("reverse", "reverse")]:
        np.testing.assert_allclose(nested(inner, outer)[0](x), expected, rtol=1e-13, atol=1e-13,
                                   err_msg=f"{inner} inside {outer}")


@pytest.mark.parametrize("name", sorted(MIXED_LAYERS))
def test_mixed_layers_nest_in_every_order(name):
    _nestings_agree(MIXED_LAYERS[name], np.array([0.3, 0.7]))


@pytest.mark.parametrize("h", [lambda x, u: np.concatenate([[x[0] * u, x[1]], x]),
                               lambda x, u: [[x[0], 1.0], [x[1], u]] @ x],
                         ids=["concatenate", "matmul"])
def test_newer_layer_hidden_in_a_list(h):
    # NumPy does not look into (nested) lists when it dispatches: the outer layer (x) is called
    # and must hand the call on to the newer inner layer once the list is stacked. (With a
    # plain x NumPy sees no layer at all and raises the conversion error: no finite
    # differences here.)
    _nestings_agree(h, np.array([0.3, 0.7]), finite_differences=False)


def test_forward_inside_reverse_through_stack_reported_case():
    def g(x):
        return dualad.derivative(lambda t: rosen(np.stack([x[0] * t, x[1]])))(1.0)

    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(dualad.grad(g, mode="reverse")(x), dualad.grad(g, mode="forward")(x),
                               rtol=1e-13)


@pytest.mark.parametrize("a_shape, b_shape", [((4, 3, 3), (3,)), ((4, 3, 3), (3, 2)),
                                              ((3, 3), (4, 3, 2)), ((1, 3, 3), (4, 3, 2)),
                                              ((2, 1, 3, 3), (4, 3, 1))])
def test_solve_with_a_constant_stack_of_matrices_broadcasts_b(a_shape, b_shape):
    """The VJP of b ↦ solve(A, b) sums A⁻ᵀc over the stack axes b was broadcast along (it
    raised, or solved c's stack as one matrix, when A was a stack and b was not)."""
    a = np.sin(np.arange(np.prod(a_shape))).reshape(a_shape) + 3.0 * np.eye(3)
    b0 = np.cos(np.arange(np.prod(b_shape), dtype=float)).reshape(b_shape)
    f = lambda b: np.linalg.solve(a, b)  # noqa: E731
    reverse = dualad.jacobian(f, mode="reverse")(b0)
    np.testing.assert_allclose(reverse, dualad.jacobian(f, mode="forward")(b0),
                               rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(reverse, finite_difference_jacobian(f, b0), rtol=1e-7, atol=1e-8)


def test_ravel_of_a_view_with_gaps_is_a_copy_on_the_tape():
    """np.ravel copies a view with gaps or negative steps (reshape(-1) keeps a view when one
    step fits). Guards: the tape deciding view-or-copy on fresh positions, always contiguous,
    so that a write into the copy reaches the base (a wrong derivative)."""
    def f(x):
        w = x * 1.0
        p = w[::2].ravel()
        p[0] = 9.0 * x[3]
        m = x.reshape(2, 4) * 1.0
        q = m[::-1, ::-1].ravel()
        q[1] = 3.0 * x[1]
        k = m[:, ::2].reshape(-1)  # one step fits: a view, the write reaches m
        k[0] = 2.0 * x[5]
        return np.concatenate((w, p, m.ravel(), q))
    x = np.array([0.7, -0.4, 1.3, 0.5, 2.0, -1.1, 0.9, 0.3])
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x), dualad.jacobian(f, mode="forward")(x),
                               rtol=1e-15)
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x)[0], np.eye(8)[0])


def test_a_zero_cotangent_with_tangents_meets_finite_partials_of_an_array_as_of_scalars():
    """Where one entry's partial is infinite, a zero cotangent passes nothing through that
    entry only: log(Σ exp(x)) at x0 = inf has cotangent 0 with nan tangents (1/Σ), which
    the finite partials of x1, x2 carry into their rows as the scalar program's do (guards: a
    mask over every entry of the array, which makes rows 1-2 zero). Row 0: the nan tangents
    pass through the inf partial too (nan · inf), and the value 0 does not (guards: the
    tangents dropped with the value, which makes norm(x)**2's Hessian 0 at 0)."""
    x, v = np.array([np.inf, 0.5, 0.25]), np.array([0.0, 1.0, 0.0])
    array = lambda x: np.log(np.sum(np.exp(x)))  # noqa: E731
    scalar = lambda x: np.log(np.exp(x[0]) + np.exp(x[1]) + np.exp(x[2]))  # noqa: E731
    with np.errstate(all="ignore"):
        for transform, args in ((dualad.hessian, (x,)), (dualad.hvp, (x, v))):
            got = transform(array, mode="forward-over-reverse")(*args)
            expected = transform(scalar, mode="forward-over-reverse")(*args)
            np.testing.assert_array_equal(got, expected)
            assert np.isnan(got).all(), got
        # the zero cotangent of a Jacobian row still passes nothing through an inf partial
        jac = dualad.jacobian(lambda x: np.stack([np.sqrt(x[0]), x[1]]), mode="reverse")(np.array([0.0, 1.0]))
        np.testing.assert_array_equal(jac, [[np.inf, 0.0], [0.0, 1.0]])
