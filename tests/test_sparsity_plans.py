"""A property of reused sparsity plans (dualad/sparsity/compressed.py, issue 39 item 3): for
random programs from tests/fuzzing.py, one sparse Jacobian (and Hessian) function called at
several points and for several values of an integer argument equals the dense one at every
call, whatever pattern it detected first. The programs branch on x (comparisons, where,
sort, max), so later points may take other branches than the first; the integer argument
changes which inputs an output depends on."""

import numpy as np
import pytest

import dualad
from fuzzing import COUNT, SEED, draw_inputs, make_program

PROGRAMS = max(8, COUNT // 4)
POINTS = 4


def with_index(f, n):
    """g(x, k): f's outputs times x[k], and x times x[(k + 1) % n]: the pattern moves with k."""
    def g(x, k):
        return np.concatenate([np.atleast_1d(f(x)) * x[k], x * x[(k + 1) % n]])
    return g


def points(program, rng):
    """The program's own point, then points drawn at random where its value is finite."""
    found = [program.x]
    while len(found) < POINTS:
        x = draw_inputs(rng, program.n)
        with np.errstate(all="ignore"):
            value = program.fn(x.copy())
        if np.all(np.isfinite(value)) and np.all(np.abs(value) < 1e3):
            found.append(x)
    return found


def dense_or_none(transform, *args):
    with np.errstate(all="ignore"):
        result = transform(*args)
    return result if np.all(np.isfinite(result)) else None


@pytest.mark.parametrize("seed", range(PROGRAMS))
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_sparse_jacobian_equals_the_dense_one_at_every_call(seed, mode):
    program = make_program(30_000 + seed)
    g = with_index(program.fn, program.n)
    sparse = dualad.jacobian(g, sparsity=True, mode=mode)
    rng = np.random.default_rng([SEED, 7, seed])
    for x in points(program, rng):
        for k in (0, program.n - 1, 0):
            expected = dense_or_none(dualad.jacobian(g, mode="forward"), x, k)
            if expected is None:
                continue  # a non-finite derivative: no reference to compare with
            with np.errstate(all="ignore"):
                got = sparse(x, k).toarray()
            scale = max(1.0, float(np.max(np.abs(expected))))
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10 * scale,
                                       err_msg=f"{program.describe()}\nat x = {x!r}, k = {k}")


@pytest.mark.parametrize("seed", range(PROGRAMS // 2))
def test_a_sparse_hessian_equals_the_dense_one_at_every_call(seed):
    program = make_program(31_000 + seed)
    g = with_index(program.fn, program.n)

    def scalar(x, k):
        out = g(x, k)
        return np.sum(out * np.linspace(0.5, 1.5, out.size))

    sparse = dualad.hessian(scalar, sparsity=True)
    rng = np.random.default_rng([SEED, 8, seed])
    for x in points(program, rng):
        for k in (0, program.n - 1):
            expected = dense_or_none(dualad.hessian(scalar, mode="forward"), x, k)
            if expected is None:
                continue
            with np.errstate(all="ignore"):
                got = sparse(x, k).toarray()
            scale = max(1.0, float(np.max(np.abs(expected))))
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9 * scale,
                                       err_msg=f"{program.describe()}\nat x = {x!r}, k = {k}")
