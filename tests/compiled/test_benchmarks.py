"""The benchmark harness of benchmarks/peers.py's Hessian/hvp section on n = 2, dualad's Python
path only (no peers needed; compiling dualad's kernels would take 10 s, the hand-written
baseline takes 1 s): every cell is checked against the hand-written result before it is
timed, a mode that raises NotImplementedError is "not available", a wrong result is reported
and never timed, and sizes predicted over the budget are skipped."""

import sys
import time
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = str(Path(__file__).resolve().parents[2] / "benchmarks")
sys.path.insert(0, BENCHMARKS)  # the benchmarks import each other as top-level modules
try:
    import peers
finally:
    sys.path.remove(BENCHMARKS)

DUALAD = ("dualad, Python path, mode=auto", "dualad, Python path, mode=forward-over-reverse")


def _unavailable(problem):
    raise NotImplementedError("no such kernel")


def _wrong(problem):
    """Twice the Hessian (or hvp) of Rosenbrock: must be caught, never timed."""
    hand = peers.HAND.make(problem)
    return lambda *args: 2.0 * hand(*args)


def _fails_when_called(problem):
    def call(*args):
        raise ZeroDivisionError("broken tool")
    return call


FAKES = [peers.Entry("unavailable", _unavailable, {"hessian": 2, "hvp": 1}),
         peers.Entry("wrong", _wrong, {"hessian": 2, "hvp": 1}),
         peers.Entry("fails", _fails_when_called, {"hessian": 2, "hvp": 1}),
         peers.Entry("no such transform", lambda problem: None, {"hessian": 2, "hvp": 1})]


@pytest.fixture(scope="module")
def section():
    entries = [e for e in peers.hessian_entries() if e.name in DUALAD] + FAKES
    return peers.hessian_section(entries, hessian_sizes=(2,), hvp_sizes=(2,), in_loop_sizes=(2,),
                                 rounds=1, min_time=0.0, jax_one_thread=False)


@pytest.mark.parametrize("problem", ["hessian", "hvp"])
def test_dualad_and_the_baseline_are_checked_and_timed(section, problem):
    text, cells = section
    for name in (peers.HAND.name,) + DUALAD:
        median, spread, setting = cells[problem][name][2]
        assert 0 < median < 0.1 and spread >= 0 and setting == ""
        assert f"| {name} |" in text


def test_the_in_loop_table_times_the_compiled_entries_only(section):
    _, cells = section
    assert set(cells["in loop"]) == {peers.HAND.name}
    for problem in ("hessian", "hvp"):
        assert cells["in loop"][peers.HAND.name][problem, 2][0] > 0


@pytest.mark.parametrize("problem", ["hessian", "hvp"])
def test_unavailable_wrong_and_failing_tools_are_reported_not_timed(section, problem):
    _, cells = section
    assert cells[problem]["unavailable"][2] == "not available"
    assert cells[problem]["wrong"][2] == "wrong: relative error 1.0e+00 (not timed)"
    assert cells[problem]["fails"][2] == "error: ZeroDivisionError: broken tool"
    assert cells[problem]["no such transform"][2] == "—"


def test_a_size_predicted_over_budget_is_skipped_after_probing_the_slope():
    quadratic = peers.Entry("quadratic", None, {"hessian": 2, "hvp": 2})
    probes = []

    def probe(n):  # a method whose time grows linearly, below its worst-case exponent 2
        probes.append(n)
        return 1e-3 * n / 100

    history = [(100, 1e-3)]
    assert peers._skip_reason(quadratic, "hvp", 10 ** 4, history, probe) is None
    assert probes == [1000] and history == [(100, 1e-3), (1000, 1e-2)]
    reason = peers._skip_reason(quadratic, "hvp", 10 ** 4, [(100, 1e-3), (1000, 1e-1)],
                                lambda n: pytest.fail("the slope is known: no probe"))
    assert reason == "skipped: ~10 s per call predicted (O(n^2))"


def test_relative_error_is_max_norm_and_catches_shape_mismatches():
    expected = np.array([[4.0, -2.0], [-2.0, 1.0]])
    assert peers._relative_error(expected * (1 + 1e-12), expected) < 1e-11
    assert peers._relative_error(expected[0], expected) == np.inf


def test_python_code_over_budget_is_stopped_and_larger_sizes_skipped(monkeypatch):
    monkeypatch.setattr(peers, "MAX_SECONDS", 0.05)

    def slow(problem):
        def call(*args):
            while True:  # Python code: SIGALRM stops it
                time.sleep(0.01)
        return call

    cells = peers._hessian_problem_rows("hessian", (2, 10), [peers.Entry("slow", slow, {"hessian": 2})],
                                        rounds=1, min_time=0.0)["slow"]
    assert cells == {2: "over 0.05 s per call (stopped)", 10: "skipped: a smaller n was over budget"}
