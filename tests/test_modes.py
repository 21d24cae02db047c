"""The cost model (modes.py, unit level: no timings): choose_mode / choose_hessian_mode from
shapes, from a recorded function and from structured inputs, and the default chunks."""

import numpy as np
import pytest

import dualad
from dualad.modes import choose_hessian_mode
from functions import rosen
from structures import make_model, model_loss, tree_output


@pytest.mark.parametrize("n_in, n_out, expected", [(1000, 1, "reverse"), (1, 1000, "forward"),
                                                    (1000, 10, "reverse"), (10, 1000, "forward")])
def test_choose_mode_from_shapes(n_in, n_out, expected):
    decision = dualad.choose_mode(n_in=n_in, n_out=n_out)
    assert decision.mode == expected
    assert decision.costs[expected] == min(decision.costs.values())
    assert f"N={n_in}" in decision.reason and f"M={n_out}" in decision.reason


def test_choose_mode_records_the_function():
    w = np.linspace(-1.0, 1.0, 4000).reshape(2, 2000)
    decision = dualad.choose_mode(lambda x: np.tanh(w @ x), np.ones(2000))
    assert (decision.n_in, decision.n_out) == (2000, 2)
    assert decision.ops >= 3 and decision.tape_floats >= 2000
    assert decision.mode == "reverse"
    wide = dualad.choose_mode(lambda x: np.tanh(w.T * x[0]), np.ones(1))
    assert wide.mode == "forward" and str(wide) == wide.reason


def test_choose_hessian_mode():
    assert choose_hessian_mode(rosen, np.ones(4)).mode == "forward"
    assert choose_hessian_mode(rosen, np.ones(2000)).mode == "forward-over-reverse"


def test_choose_mode_counts_tree_inputs_and_outputs():
    decision = dualad.choose_mode(tree_output, np.array([0.3, 0.7]))
    assert (decision.n_in, decision.n_out) == (2, 4)
    decision = dualad.choose_mode(model_loss, make_model())
    assert (decision.n_in, decision.n_out) == (5, 1)


def test_default_chunks():
    assert dualad.default_chunk(10) == 10
    assert 1 <= dualad.default_chunk(10 ** 6) < 10 ** 6
    assert dualad.default_hessian_chunk(10) == 10
    assert dualad.default_hessian_chunk(1000) < 1000
