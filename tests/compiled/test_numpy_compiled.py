"""Compiled NumPy forms of issue 13 (items 3 and 4), each against the Python path: allocations
that receive duals hold duals (jit/promote.py), np.array of dual scalars, float arrays with
dual scalars under every binary rule, and the forms that cannot work naming their rewrite."""

import operator

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import dualad
from dualad.jit.overloads import DUALS
from dualad.jit.promote import promoting
from dualad.rules import RULES

DATA = np.array([0.5, -1.0, 2.0, 0.0, 3.5])
X = np.array([0.7, 1.3, -0.4, 2.1])
V = np.array([0.3, -1.0, 2.0, 0.5])


@numba.njit
def allocations(p):
    """R^4 -> R^7: every allocation form, each receiving duals by item assignment."""
    a = np.zeros(2)
    a[0] = p[0] * p[1]
    a[1] = 2.0  # a float into the promoted buffer: zero partials
    b = np.empty(1)
    b[0] = np.sin(p[2])
    c = np.ones(1)
    c[0] += p[3] ** 2  # reads the float 1.0 first
    d = np.full(1, 3.0)
    d[0] *= p[0]
    e = np.zeros(1, dtype=p.dtype)
    e[0] = p[1] / p[2]
    g = np.zeros_like(DATA[:1])
    g[0] = DATA[0] - p[3]
    floats = np.zeros(2)  # never receives a dual: stays a float array
    floats[0] = DATA[1]
    return np.concatenate((a, b, c, d, e, g)) * floats[0]


def allocations_reference(p):
    rows = [p[0] * p[1], 2.0, np.sin(p[2]), 1.0 + p[3] ** 2, 3.0 * p[0], p[1] / p[2], DATA[0] - p[3]]
    return np.stack(rows) * DATA[1]


@numba.njit
def energy(p):
    """A scalar through a helper that allocates (the helper's copy is promoted too)."""
    return np.sum(allocations(p) ** 2)


@numba.njit
def built(p):
    """np.array of dual scalars mixed with floats (tuple and list), np.asarray, np.stack of
    scalars, np.concatenate of float and dual arrays."""
    t = np.array((p[0] * p[1], 2.0, p[2]))
    listed = np.array([p[3], p[0] + 1.0])
    s = np.stack((p[1], 0.5))
    a = np.asarray(p)
    return np.concatenate((t, DATA[:2], listed, s, a[1:3]), axis=0)


@numba.njit
def likelihood(p, data):
    """A float array passed in and one closed over, with dual scalars."""
    return np.sum(((data - p[0]) / p[1]) ** 2) + np.sum((p[2] * DATA - 1.0) ** 2) / p[3]


# Every binary rule, ufunc and operator spellings, float array ⊕ dual scalar in both orders and
# float array ⊕ dual array of equal length, each into its slice of a promoted buffer.
_FORMS = []
for _rule in RULES.values():
    if _rule.arity == 2:
        _spellings = [f"np.{_rule.ufunc.__name__}"] + ([f"operator.{_rule.operator}"] if _rule.operator else [])
        _FORMS += [f"{_spellings[0]}({a}, {b})" for a, b in (("D", "q"), ("q", "D"))]
        _FORMS += [f"{spelling}({a}, {b})" for spelling in _spellings for a, b in (("D", "s"), ("s", "D"))]
_SOURCE = (
    f"def binary_rules(p, D):\n    s, q = p[0], p[1:4]\n    out = np.empty({3 * len(_FORMS)})\n"
    + "".join(f"    out[{3 * k}:{3 * k + 3}] = {form}\n" for k, form in enumerate(_FORMS))
    + "    return out\n")
_namespace = {"np": np, "operator": operator}
exec(_SOURCE, _namespace)  # noqa: S102 - the test's own generated source
binary_rules = numba.njit(_namespace["binary_rules"])
D3 = np.array([0.0, -1.5, 2.0])

# kernels shared between tests (each compiles once)
ALLOCATIONS_JACFWD = dualad.jacfwd(allocations)
BINARY_JACFWD = dualad.jacfwd(binary_rules)


def test_allocations_that_receive_duals_hold_duals():
    expected = dualad.jacobian(allocations, jit=False)(X)
    np.testing.assert_array_equal(expected, dualad.jacobian(allocations_reference)(X))
    np.testing.assert_array_equal(ALLOCATIONS_JACFWD(X), expected)
    np.testing.assert_array_equal(dualad.jacrev(allocations)(X), expected)
    value, tangent = dualad.jvp(allocations, (X,), (V,))
    python_value, python_tangent = dualad.jvp(allocations.py_func, (X,), (V,))
    np.testing.assert_array_equal(value, python_value)
    np.testing.assert_array_equal(tangent, python_tangent)
    np.testing.assert_allclose(tangent, expected @ V, rtol=1e-15)


def test_only_receiving_buffers_change_and_the_users_function_is_untouched():
    ALLOCATIONS_JACFWD(X)
    dual_overloads = [cres for sig, cres in promoting(allocations).overloads.items()
                      if any(isinstance(t, DUALS) for t in sig)]
    assert dual_overloads
    for cres in dual_overloads:
        typemap = cres.type_annotation.typemap
        for name in ("a", "b", "c", "d", "e", "g"):
            assert isinstance(typemap[name], DUALS), name
        assert typemap["floats"] == numba.types.float64[::1]
    # the user's dispatcher compiled no dual code and still runs on floats
    np.testing.assert_array_equal(allocations(X), allocations.py_func(X))
    assert not any(isinstance(t, DUALS) for sig in allocations.signatures for t in sig)


def test_helper_allocations_and_hessian():
    np.testing.assert_allclose(dualad.hessian(energy)(X), dualad.hessian(energy, jit=False)(X),
                               rtol=1e-14)


def test_arrays_built_from_dual_scalars():
    np.testing.assert_array_equal(dualad.jacobian(built)(X), dualad.jacobian(built, jit=False)(X))


def test_float_arrays_with_dual_scalars():
    np.testing.assert_allclose(dualad.grad(likelihood)(X, DATA),
                               dualad.grad(likelihood, jit=False)(X, DATA), rtol=1e-14)
    np.testing.assert_allclose(dualad.hessian(likelihood)(X, DATA),
                               dualad.hessian(likelihood, jit=False)(X, DATA), rtol=1e-14)


@pytest.mark.parametrize("x", [np.array([0.7, 1.2, -0.4, 2.5]), np.array([0.0, 0.0, 1.0, -2.0])],
                         ids=["regular", "zeros"])
def test_every_binary_rule_broadcasts_like_the_python_path(x):
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(BINARY_JACFWD(x, D3), dualad.jacfwd(binary_rules, jit=False)(x, D3))


# ---- forms that cannot work name the form and the rewrite -------------------------------------------
@numba.njit
def four_dimensional(p):
    out = np.zeros((2, 2, 2, 2))
    out[0, 0, 0, 0] = p[0]
    return out[0, 0, 0]


@numba.njit
def integer_buffer(p):
    out = np.zeros(2, dtype=np.int64)
    out[0] = p[0]
    return out


@numba.njit
def into_argument(p, buffer):
    buffer[0] = p[0]
    return buffer


@numba.njit
def in_place(p):
    y = DATA * 1.0
    y -= p[0]
    return y


@numba.njit
def hypercube_with_dual(p):
    return np.sum(np.ones((2, 2, 2, 2)) * p[0])


@numba.njit
def stacked_mixed(p):
    m = np.outer(p, p)
    return np.hstack((m, p))[0]


@pytest.mark.parametrize("f, args, error, message", [
    (four_dimensional, (), TypingError, r"np.zeros\(...\) \(line \d+\) makes a 4-D array.*1 to 3 dimensions"),
    (integer_buffer, (), TypingError, "array of int64 that receives duals.*dtype float64"),
    (into_argument, (np.zeros(2),), TypingError, "float array cannot hold a dual.*argument.*allocate the buffer"),
    (hypercube_with_dual, (), NotImplementedError, r"4-D array of float64 meets a dual.*ravel"),
    (stacked_mixed, (), NotImplementedError, "np.hstack joins arrays of the same number of dimensions"),
], ids=["4-D allocation", "int allocation", "argument", "4-D float array", "hstack of 2-D and 1-D"])
def test_forms_that_cannot_work_name_the_rewrite(f, args, error, message):
    """The cause comes first in the message (kernels._explained)."""
    with pytest.raises(error, match=f"^dualad: cannot compile this derivative kernel: [^\\n]*{message}"):
        dualad.jacfwd(f)(X, *args)



def test_an_in_place_operator_into_a_float_array_raises_naming_the_rewrite():
    """x -= dual into a float x: it compiles (an x that f allocates and stores duals into is
    promoted, and then the operator writes into it) and raises when it runs."""
    with pytest.raises(ValueError, match=r"x -= dual with x a float array.*x = x - dual"):
        dualad.jacfwd(in_place)(X)