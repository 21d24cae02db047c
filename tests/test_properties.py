"""Properties every transform keeps on every shared test function (tests/functions.py):

(a) a transform never changes its inputs: the caller's arrays (the point, tangents,
    cotangents) are bit-identical after the call, even when f writes into its argument;
(b) forward = reverse = forward-over-reverse = hyper-dual, and for the functions that write
    into their argument, the gradient and Hessian equal the ones written out by hand.

The compiled kernels of the mutating functions: tests/compiled/test_properties_compiled.py.
"""

import numpy as np
import pytest

import dualad
from every_transform import check_against_hand_written, run_every_transform, scalar_of
from functions import FUNCTIONS, MUTATING

SHARED = [(name, f, x) for name, f, x in FUNCTIONS] + [(name, f, x) for name, f, x, _, _ in MUTATING]
IDS = [name for name, _, _ in SHARED]


# ---- (a) inputs are never modified --------------------------------------------------------------
@pytest.mark.parametrize("name, f, x", SHARED, ids=IDS)
def test_no_transform_changes_its_inputs(name, f, x):
    s = scalar_of(f, x)
    _, problems = run_every_transform(name, f, s, x, jit=False)
    assert not problems, "\n".join(problems)


# ---- (b) every mode agrees; the mutating functions have their hand-written derivatives --------
@pytest.mark.parametrize("name, f, x", SHARED, ids=IDS)
def test_forward_reverse_forward_over_reverse_and_hyper_dual_agree(name, f, x):
    s = scalar_of(f, x)
    forward = dualad.jacobian(f, mode="forward")(x.copy())
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x.copy()), forward, rtol=1e-12,
                               atol=1e-12, err_msg="jacobian reverse vs forward")
    np.testing.assert_allclose(dualad.jacrev(f)(x.copy()), forward, rtol=1e-12, atol=1e-12,
                               err_msg="jacrev vs jacobian forward")
    gradient = dualad.grad(s, mode="forward")(x.copy())
    np.testing.assert_allclose(dualad.grad(s, mode="reverse")(x.copy()), gradient, rtol=1e-12,
                               atol=1e-12, err_msg="grad reverse vs forward")
    hyper = dualad.hessian(s, mode="forward")(x.copy())
    scale = max(1.0, np.max(np.abs(hyper)))
    for what, other in [
        ("forward-over-reverse", dualad.hessian(s, mode="forward-over-reverse")(x.copy())),
        ("jacfwd(grad(mode='reverse'))", dualad.jacfwd(dualad.grad(s, mode="reverse"))(x.copy())),
        ("jacfwd(grad(mode='forward'))", dualad.jacfwd(dualad.grad(s, mode="forward"))(x.copy())),
    ]:
        np.testing.assert_allclose(np.reshape(other, hyper.shape), hyper, rtol=1e-10,
                                   atol=1e-10 * scale, err_msg=f"{what} vs hyper-dual")


@pytest.mark.parametrize("name, f, x, gradient, hessian", MUTATING, ids=[m[0] for m in MUTATING])
def test_functions_that_write_into_their_argument_python_path(name, f, x, gradient, hessian):
    """Every transform sees f evaluated on a copy: the hand-written derivatives, the caller's
    array unchanged."""
    results, problems = run_every_transform(name, f, f, x, jit=False)
    problems += check_against_hand_written(results, f, x, gradient, hessian)
    assert not problems, f"{name} at x = {x!r}:\n" + "\n".join(problems)
