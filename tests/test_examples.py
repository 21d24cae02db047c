"""Every example in examples/ runs, at a small size, and its numbers make sense (the examples
that compile kernels: tests/compiled/test_examples_compiled.py)."""

import re
import subprocess
import sys

import numpy as np
import pytest

from helpers import EXAMPLES
from helpers import load_example as load


def test_optimize_rosenbrock_with_exact_derivatives():
    rows = {name: rest for name, *rest in load("optimize_rosenbrock").run(n=10)}
    for name, (iterations, evaluations, seconds, error) in rows.items():
        assert error < (1e-4 if "finite" in name else 1e-7), name
    # finite differences pay n + 1 evaluations per gradient
    assert rows["BFGS, finite differences"][1] > 5 * rows["BFGS, dualad jac"][1]


def test_checkpointed_physics_matches_forward_mode_in_less_memory():
    out = load("checkpointed_physics").run(n_steps=400, snapshots=5, traced_steps=200)
    np.testing.assert_allclose(out["reverse"], out["forward"], rtol=1e-10)
    assert out["info"]["peak_states"] <= 5
    assert out["peak_mib"]["checkpointed_loop"] < out["peak_mib"]["plain tape"] / 5


def test_textbook_walkthrough(capsys):
    example = load("textbook")
    gradients, hessians, exact_gradient, exact_hessian = example.check()
    for g in gradients.values():
        np.testing.assert_allclose(g, exact_gradient, rtol=1e-15)
    for h in hessians.values():
        np.testing.assert_allclose(h, exact_hessian, rtol=1e-15)
    example.main()
    printed = capsys.readouterr().out
    assert "reverse (adjoint) trace" in printed and "every mode against the closed forms" in printed


def test_brusselator_with_a_sparse_jacobian():
    results = load("brusselator").run(n=8, t_end=2.0)
    sparse, nfev, njev, _ = results["dualad, sparse"]
    dense = results["dualad, dense"]
    # the same Jacobians, so the same steps: identical counts, results equal to rounding
    np.testing.assert_allclose(dense[0], sparse, rtol=1e-9)
    assert (dense[1], dense[2]) == (nfev, njev) and njev > 0
    fd = results["finite differences, jac_sparsity"]
    np.testing.assert_allclose(fd[0], sparse, rtol=1e-4, atol=1e-6)


@pytest.mark.compiled  # compiles (or loads) the kernels, in the example's processes
def test_dask_sensitivity_quick():
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed "
                        "(pip install -e '.[dask]')")
    # a process of its own: the cluster's workers import the script as their __main__
    run = subprocess.run([sys.executable, str(EXAMPLES / "dask_sensitivity.py"), "--quick"],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "all three results identical" in run.stdout  # the example asserts it
    seconds = re.findall(r"([0-9.]+) s +[0-9.]+x$", run.stdout, re.MULTILINE)
    assert len(seconds) == 4 and all(float(s) > 0 for s in seconds)  # one line per way
