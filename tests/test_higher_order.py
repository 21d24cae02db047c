"""Higher order by nesting: any order of scalar derivatives, Jacobians of Jacobians in every
mode combination, and no perturbation confusion."""

import math

import numpy as np
import pytest
from functions import FUNCTIONS

import dualad

A, B = 0.8, 1.7


def damped_wave(x):
    return np.exp(A * x) * np.sin(B * x)


def damped_wave_derivative(n, x):
    """dⁿ/dxⁿ e^{ax} sin(bx) = (a² + b²)^{n/2} e^{ax} sin(bx + n·atan2(b, a))."""
    return (A * A + B * B) ** (n / 2) * math.exp(A * x) * math.sin(B * x + n * math.atan2(B, A))


def reverse_derivative(f):
    """A scalar derivative by reverse mode."""
    return dualad.grad(f, mode="reverse")


NESTINGS = {
    "forward": lambda f, n: _nest(dualad.derivative, f, n),
    "reverse": lambda f, n: _nest(reverse_derivative, f, n),
    "alternating": lambda f, n: _nest_alternating(f, n),
    "hyper-dual pairs": lambda f, n: _nest(dualad.second_derivative, f, n // 2) if n % 2 == 0
    else dualad.derivative(_nest(dualad.second_derivative, f, n // 2)),
}


def _nest(transform, f, n):
    for _ in range(n):
        f = transform(f)
    return f


def _nest_alternating(f, n):
    for k in range(n):
        f = (dualad.derivative if k % 2 == 0 else reverse_derivative)(f)
    return f


@pytest.mark.parametrize("nesting", list(NESTINGS))
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_derivatives_of_any_order_match_the_closed_form(nesting, order):
    x = 0.6
    got = NESTINGS[nesting](damped_wave, order)(x)
    assert got == pytest.approx(damped_wave_derivative(order, x), rel=1e-12)


def test_fourth_derivative_of_a_polynomial_is_exact():
    quartic = lambda x: 3.0 * x ** 4 - 2.0 * x ** 3 + x  # noqa: E731
    assert _nest(dualad.derivative, quartic, 4)(1.3) == 72.0
    assert _nest(dualad.second_derivative, quartic, 2)(1.3) == 72.0
    assert _nest(dualad.derivative, quartic, 5)(1.3) == 0.0


SECOND_ORDER = {
    "jacfwd(jacfwd)": lambda f: dualad.jacfwd(dualad.jacfwd(f)),
    "jacfwd(jacrev)": lambda f: dualad.jacfwd(dualad.jacrev(f)),
    "jacrev(jacfwd)": lambda f: dualad.jacrev(dualad.jacfwd(f)),
    "jacrev(jacrev)": lambda f: dualad.jacrev(dualad.jacrev(f)),
}


def _few_outputs(f, x, most=4):
    """f itself, or for a long output R · f(x) with a fixed R (most × M): every output entry
    still counts, and reverse over reverse makes `most` outer sweeps instead of M."""
    size = np.size(f(x))
    if size <= most:
        return f
    weights = np.random.default_rng(7).normal(size=(most, size))
    return lambda x: weights @ np.ravel(f(x))


@pytest.mark.parametrize("name, f, x", FUNCTIONS, ids=[name for name, _, _ in FUNCTIONS])
def test_every_second_order_nesting_agrees(name, f, x):
    f = _few_outputs(f, x)
    results = {key: nest(f)(x) for key, nest in SECOND_ORDER.items()}
    reference = results.pop("jacfwd(jacfwd)")
    for key, value in results.items():
        np.testing.assert_allclose(value, reference, rtol=1e-10, atol=1e-10, err_msg=key)
    if np.ndim(f(x)) == 0:  # scalar: the nestings are the Hessian
        np.testing.assert_allclose(dualad.hessian(f)(x), reference, rtol=1e-10, atol=1e-10)


def test_perturbations_are_never_confused_in_any_mode_combination():
    # d/dx [x · d/dy (x + y)] at y = 1 must be 1; confusing the perturbations gives 2
    for outer in (dualad.derivative, reverse_derivative):
        for inner in (dualad.derivative, reverse_derivative):
            f = lambda x: x * inner(lambda y: x + y)(1.0)  # noqa: E731
            assert outer(f)(3.0) == 1.0
    # the same test through structures: the inner transform differentiates a dict
    g = lambda x: x * dualad.grad(lambda p: p["x"] + p["y"])({"x": x, "y": 1.0})["y"]  # noqa: E731
    assert dualad.derivative(g)(3.0) == 1.0
