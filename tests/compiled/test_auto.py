"""Compiled auto mode (jit/auto.py): forward below the crossover, the tape above, and the pick
agrees with choose_mode's explanation."""

import numba
import numpy as np
import pytest

import dualad
from functions import rosen_loop as rosen_loop_py
from numba_functions import GRAD_ROSEN as AUTO  # dualad.grad(rosen_loop): mode="auto"
from numba_functions import X5, layer, rosen_loop


@numba.njit
def _calls_auto(x):
    return AUTO(x)[3]


def test_compiled_auto_mode_picks_by_size():
    from dualad.modes import COMPILED_REVERSE_FROM

    small, large = X5[:2], np.linspace(-1.0, 1.0, 4 * COMPILED_REVERSE_FROM)
    auto = AUTO
    for x in (small, large):
        np.testing.assert_allclose(auto(x), dualad.grad(rosen_loop_py)(x), rtol=1e-13)
    assert dualad.choose_mode(rosen_loop, large).mode == "reverse"
    assert dualad.choose_mode(rosen_loop, small).mode == "forward"
    rng = np.random.default_rng(2)
    for n_in, n_out, expected in ((2, 60, "forward"), (400, 2, "reverse")):
        w, b, x = rng.normal(size=(n_out, n_in)) / n_in ** 0.5, rng.normal(size=n_out), rng.normal(size=n_in)
        np.testing.assert_allclose(dualad.jacobian(layer)(x, w, b),
                                   dualad.jacfwd(layer, jit=False)(x, w, b), rtol=1e-12, atol=1e-15)
        decision = dualad.choose_mode(layer, x, w, b)
        assert decision.mode == expected, decision.reason
    assert _calls_auto(large) == pytest.approx(auto(large)[3], rel=1e-15)
