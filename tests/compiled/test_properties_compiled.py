"""Functions that write into their argument, on the compiled path: every kernel gives the
hand-written derivative and leaves the caller's arrays unchanged, or names the fix. The
kernels are module-level and shared, so each is compiled once."""

import numba
import pytest

from every_transform import check_against_hand_written, run_every_transform
from functions import MUTATING


COMPILED_MUTATING = [(name, numba.njit(f), x, gradient, hessian) for name, f, x, gradient, hessian in MUTATING]


@pytest.mark.parametrize("name, f, x, gradient, hessian", COMPILED_MUTATING,
                         ids=[m[0] for m in COMPILED_MUTATING])
def test_functions_that_write_into_their_argument_compiled(name, f, x, gradient, hessian):
    """Each compiled kernel either gives the hand-written derivative with the caller's arrays
    unchanged, or refuses to compile with the error that names the problem and the fix (the
    differentiated input is read-only in a compiled transform; copy it first)."""
    results, problems = run_every_transform(name, f, f, x, jit=None)
    problems = [p for p in problems if not ("raised TypingError" in p and "read-only" in p
                                            and "copy it first" in p)]
    problems += check_against_hand_written(results, f, x, gradient, hessian)
    assert not problems, f"{name} (compiled) at x = {x!r}:\n" + "\n".join(problems)
