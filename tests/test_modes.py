"""The cost model (modes.py, unit level: no timings): choose_mode / choose_hessian_mode from
shapes, from a recorded function and from structured inputs, and the default chunks."""

import numpy as np
import pytest

import dualad
from dualad.modes import choose_hessian_mode, hyper_terms, over_terms
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


@pytest.mark.parametrize("n, chunk", [(5, 2), (7, 3), (4, None), (1, None)])
def test_hessian_cost_terms_count_the_passes_the_python_path_makes(n, chunk):
    """The Hessian model's passes are the ones hessian_forward and forward-over-reverse run:
    one call of f per HyperDual block on or above the diagonal, one per Dual pass."""
    calls = []

    def f(x):
        calls.append(len(x))
        return np.sum(np.sin(x) * x)

    x = np.linspace(0.1, 0.9, n)
    dualad.hessian(f, mode="forward", chunk=chunk, jit=False)(x)
    assert len(calls) == hyper_terms(n, chunk or dualad.default_hessian_chunk(n), 1, 1)[0]
    calls.clear()
    dualad.hessian(f, mode="forward-over-reverse", chunk=chunk, jit=False)(x)
    assert len(calls) == over_terms(n, chunk or dualad.default_chunk(n), 1, 1)[0]


def test_hessian_cost_terms():
    # n = 5 in blocks of 2: widths 2, 2, 1; pairs on and above the diagonal (2,2) (2,2) (2,1)
    # (2,2) (2,1) (1,1), whose w1 + w2 + w1·w2 are 8 8 5 8 5 3
    assert hyper_terms(5, 2, 3, 10) == (6, 18, 370)
    # passes of 2 tangents: widths 2, 2, 1, each 1 + w floats per recorded float
    assert over_terms(5, 2, 3, 10) == (3, 9, 10 * (3 + 3 + 2))
    decision = choose_hessian_mode(n_in=1000, ops=20, floats=20000, compiled=False)
    from dualad import modes
    width = dualad.default_hessian_chunk(1000)
    assert decision.costs["forward"] == pytest.approx(
        np.dot(hyper_terms(1000, width, 20, 20000), (modes.HYPER_PASS, modes.OP_HYPER, modes.FLOAT_HYPER)))


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
