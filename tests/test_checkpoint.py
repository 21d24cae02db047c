"""Checkpointing: same gradients as the plain tape and forward mode, with bounded memory."""

import tracemalloc

import numpy as np
import pytest

import dualad


def oscillator_step(s):
    """Explicit Euler for a damped nonlinear oscillator; state (x, v)."""
    x, v = s[0], s[1]
    a = -4.0 * x - 0.3 * v - 0.5 * x ** 3 + 0.2 * np.sin(3.0 * x)
    return np.stack([x + 0.01 * v, v + 0.01 * a])


def energy(s):
    return 0.5 * s[1] ** 2 + 2.0 * s[0] ** 2 + 0.125 * s[0] ** 4


def heat_step(u):
    """Explicit 1-D heat equation with a cubic source, fixed ends (100 points)."""
    lap = np.concatenate([u[:1] * 0.0, u[2:] - 2.0 * u[1:-1] + u[:-2], u[:1] * 0.0])
    return u + 0.2 * lap + 0.001 * (u - u ** 3)


def final(step, n, snapshots=None, info=None):
    def f(s0):
        if snapshots is None:
            s = s0
            for _ in range(n):
                s = step(s)
        else:
            s = dualad.checkpointed_loop(step, s0, n, snapshots=snapshots, info=info)
        return energy(s) if step is oscillator_step else np.sum(s ** 2)
    return f


CASES = [(oscillator_step, np.array([1.0, 0.0]), 600),
         (heat_step, np.sin(np.linspace(0.0, np.pi, 100)) * 0.8, 60)]


@pytest.mark.parametrize("step, s0, n", CASES, ids=["oscillator", "heat"])
def test_checkpointed_gradients_equal_plain_reverse_and_forward(step, s0, n):
    plain = dualad.grad(final(step, n), mode="reverse")(s0)
    forward = dualad.grad(final(step, n), mode="forward")(s0)
    np.testing.assert_allclose(plain, forward, rtol=1e-10, atol=1e-14)
    for k in (1, 3, 10, 100):
        info = {}
        checkpointed = dualad.grad(final(step, n, k, info), mode="reverse")(s0)
        np.testing.assert_allclose(checkpointed, plain, rtol=1e-10, atol=1e-14)
        assert info["steps"] == n and info["peak_states"] <= k
        assert info["recomputed_steps"] >= n  # every step is re-run at least once


def test_binomial_schedule_recomputes_little():
    info = {}
    dualad.grad(final(oscillator_step, 1000, 10, info), mode="reverse")(np.array([1.0, 0.0]))
    # the start state is one of the 10 snapshots: 9 free ones reverse 1000 steps in r = 5
    # sweeps (C(9 + 5, 9) = 2002 >= 1000 > C(9 + 4, 9)), so each step runs about r + 1 times
    assert info["recomputed_steps"] <= (5 + 1) * 1000


def peak_bytes(fn, x):
    """Peak bytes allocated (tracemalloc) while fn(x) runs."""
    tracemalloc.start()
    try:
        fn(x)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_many_snapshots_need_no_deep_recursion():
    # revolve's recursion is unrolled: more snapshots than Python's recursion limit work
    s0, n = np.array([1.0, 0.0]), 3000
    info = {}
    g = dualad.grad(final(oscillator_step, n, snapshots=2000, info=info), mode="reverse")(s0)
    np.testing.assert_allclose(g, dualad.grad(final(oscillator_step, n), mode="forward")(s0), rtol=1e-10)
    assert info["peak_states"] <= 2000


def test_ten_snapshots_use_a_tenth_of_the_memory():
    s0 = np.array([1.0, 0.0])
    plain = peak_bytes(dualad.grad(final(oscillator_step, 500), mode="reverse"), s0)
    checkpointed = peak_bytes(dualad.grad(final(oscillator_step, 500, 10), mode="reverse"), s0)
    assert checkpointed * 10 <= plain


def test_checkpoint_reruns_a_function_in_the_sweep():
    calls = []

    def block(a, b):
        calls.append(1)
        return np.sin(a) * b + np.exp(a * 0.1)

    f = dualad.checkpoint(block)
    x = np.array([0.3, 0.5, -0.2])
    g = dualad.grad(lambda x: np.sum(f(x, x ** 2)), mode="reverse")(x)
    np.testing.assert_allclose(g, dualad.grad(lambda x: np.sum(block(x, x ** 2)), mode="forward")(x), rtol=1e-14)
    assert len(calls) == 3  # the forward run, then the sweep's re-run (plus the forward-mode check)
    assert f(1.0, 2.0) == block(1.0, 2.0)  # outside reverse mode it is fn itself


def test_a_step_closing_over_a_differentiated_value_says_what_to_do():
    def f(p):
        return np.sum(dualad.checkpointed_loop(lambda s: s * p[0], p * np.ones(2), 5))
    with pytest.raises(TypeError, match="part of the state"):
        dualad.grad(f, mode="reverse")(np.array([0.5]))
