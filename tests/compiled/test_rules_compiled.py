"""Every rule through its compiled entry points (np.*, math.*, operator) equals the Python
path's np.* one, on duals, hyper-duals, the compiled tape and the tape in Duals
(forward-over-reverse).

All entry points of one arity are branches of one generated @njit function f(v, k) (branch k
calls entry point k), so each kernel kind compiles once per arity, not once per entry point.
"""

import functools

import numba
import numpy as np
import pytest

import dualad
from dualad.jit.overloads import entry_points
from dualad.rules import RULES
from helpers import rule_point

# arity -> [(rule name, entry point)], in a fixed order: branch k of ENTRY_FUNCTIONS[arity]
ENTRIES = {arity: [(name, entry) for name in sorted(RULES) if RULES[name].arity == arity
                   for entry in entry_points(RULES[name])] for arity in (1, 2)}


def _entry_function(arity):
    """One @njit function (v, k) -> entry point k of the rules of this arity at v[0] (, v[1])."""
    args = "v[0]" if arity == 1 else "v[0], v[1]"
    lines = [f"def entries_{arity}(v, k):"]
    namespace = {}
    for k, (_, entry) in enumerate(ENTRIES[arity]):
        namespace[f"entry_{k}"] = entry
        lines += [f"    if k == {k}:", f"        return entry_{k}({args})"]
    lines.append("    raise ValueError('no such entry point')")
    exec("\n".join(lines), namespace)  # noqa: S102  (source built from the rule table)
    return numba.njit(namespace[f"entries_{arity}"])


ENTRY_FUNCTIONS = {arity: _entry_function(arity) for arity in (1, 2)}


@functools.lru_cache(maxsize=None)
def kernel(arity, kind):
    """The compiled kernels, built once and shared by every rule's test."""
    f = ENTRY_FUNCTIONS[arity]
    return {"grad": lambda: dualad.grad(f),
            "grad reverse": lambda: dualad.grad(f, mode="reverse"),
            "hessian": lambda: dualad.hessian(f, mode="forward"),
            "hessian over reverse": lambda: dualad.hessian(f, mode="forward-over-reverse")}[kind]()


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_compiled_matches_python(name):
    """Each compiled entry point (np.*, math.*, operator) equals the Python path's np.* one,
    on duals, hyper-duals, the compiled tape and the tape in Duals."""
    rule = RULES[name]
    pt = np.array(rule_point(rule))
    numpy_entry = rule.ufunc if rule.ufunc is not None else rule.value
    if rule.arity == 1:
        reference = lambda v: numpy_entry(v[0])  # noqa: E731
    else:
        reference = lambda v: numpy_entry(v[0], v[1])  # noqa: E731
    expected, expected_hessian = dualad.grad(reference)(pt), dualad.hessian(reference)(pt)
    assert np.all(np.isfinite(expected)), (name, pt)
    entries = [(k, entry) for k, (rule_name, entry) in enumerate(ENTRIES[rule.arity]) if rule_name == name]
    assert len(entries) == len(entry_points(rule))
    for k, entry in entries:
        np.testing.assert_allclose(kernel(rule.arity, "grad")(pt, k), expected, rtol=1e-14,
                                   err_msg=f"{name} via {entry}")
        np.testing.assert_allclose(kernel(rule.arity, "grad reverse")(pt, k), expected, rtol=1e-14,
                                   err_msg=f"{name} via {entry}, compiled tape")
        np.testing.assert_allclose(kernel(rule.arity, "hessian")(pt, k), expected_hessian, rtol=1e-13,
                                   atol=1e-300, err_msg=f"{name} second partials via {entry}")
        np.testing.assert_allclose(kernel(rule.arity, "hessian over reverse")(pt, k), expected_hessian,
                                   rtol=1e-13, atol=1e-300,
                                   err_msg=f"{name} second partials via {entry}, the tape in Duals")


@numba.njit
def mixed_operands(x):
    flag = x[1] > 0.5  # a bool
    return (flag * x[0] + x[0] * flag + True * x[1] ** 2 - x[2] ** True + 2 * x[0] - x[1] / 3
            + np.int32(2) * x[2] * x[0])


def test_rules_take_bool_int_and_float_operands_on_every_compiled_kind():
    """The partial of flag * x with respect to x is the bool flag: it reaches the chain rule
    as a float on Duals, HyperDuals and both tapes (jit/lowered.py compiles a rule's numbers
    for a float return; numba's float() refuses a bool)."""
    x = np.array([1.0, 2.0, 3.0])
    expected = dualad.grad(mixed_operands, jit=False)(x)
    expected_hessian = dualad.hessian(mixed_operands, jit=False)(x)
    np.testing.assert_allclose(expected, [2 + 2 + 6, 4 - 1 / 3, -1 + 2], rtol=1e-15)
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(dualad.grad(mixed_operands, mode=mode)(x), expected, rtol=1e-15)
    for mode in ("forward", "forward-over-reverse"):
        np.testing.assert_allclose(dualad.hessian(mixed_operands, mode=mode)(x), expected_hessian,
                                   rtol=1e-15)


@numba.njit
def huge_integer_power(x):
    return x[0] ** 4_000_000_000


def test_integer_operands_never_wrap_in_a_partial():
    """x ** N for an integer N past 3.04e9. Guards: z·(z − 1) in the second partial wrapping
    in int64 on the compiled path (a negative Hessian, no error), and on the Python path for
    an np.int64 exponent. Exact: N(N − 1)·x^(N − 2) at x = 1 + 1e-10 (mpmath, 40 digits)."""
    x = np.array([1.0 + 1e-10])
    exact = 2.386919594102024e+19
    for hessian in (dualad.hessian(huge_integer_power, mode="forward"),
                    dualad.hessian(huge_integer_power, mode="forward-over-reverse"),
                    dualad.hessian(huge_integer_power.py_func, mode="forward", jit=False),
                    dualad.hessian(lambda x: x[0] ** np.int64(4_000_000_000), jit=False)):
        np.testing.assert_allclose(hessian(x), [[exact]], rtol=1e-6)
