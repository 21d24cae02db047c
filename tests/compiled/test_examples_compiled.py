"""The examples that compile kernels (examples/stiff_ode.py, examples/newton_numba.py) run, at
a small size, and their numbers make sense."""

import numpy as np
import pytest

from helpers import load_example as load


def test_stiff_ode_with_a_compiled_jacobian():
    results = load("stiff_ode").run(t_end=40.0)
    (y_ad, steps_ad, calls_ad, *_), (y_fd, steps_fd, calls_fd, *_) = results.values()
    np.testing.assert_allclose(y_ad, y_fd, rtol=1e-6, atol=1e-12)
    assert np.sum(y_ad) == pytest.approx(1.0, abs=1e-8)  # mass is conserved
    assert calls_ad < calls_fd


def test_newton_inside_numba_converges():
    x, steps, norm, _ = load("newton_numba").run(n=5, m=30)
    assert norm < 1e-10 and steps < 20
