"""Suite-wide setup: shared test modules importable from every folder, the `compiled` marker on
all of tests/compiled/, and a guard that fails any test that compiles numba code unmarked.

`python -m pytest -m "not compiled"` runs the Python path only: that holds because every test
that compiles (or loads from numba's cache) a numba function carries the marker. The guard
counts new specialisations of numba dispatchers (user functions and dualad's kernels alike)
while an unmarked test runs, and fails that test, naming the functions.
"""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
COMPILED = TESTS / "compiled"

# functions.py, helpers.py, ... import as top-level modules from tests/ and tests/compiled/
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if COMPILED in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.compiled)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """An unmarked test must not compile numba code (it would run under -m 'not compiled')."""
    if item.get_closest_marker("compiled") is not None:
        return (yield)
    from numba.core.dispatcher import Dispatcher

    compiled, original = [], Dispatcher.compile

    def compile_and_record(self, sig):
        before = len(self.overloads)
        result = original(self, sig)
        if len(self.overloads) > before:
            compiled.append(getattr(self.py_func, "__qualname__", repr(self.py_func)))
        return result

    Dispatcher.compile = compile_and_record
    try:
        result = yield
    finally:
        Dispatcher.compile = original
    if compiled:
        names = sorted(set(compiled))
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        pytest.fail(f"{item.nodeid} compiled numba code ({shown}) but is not marked: add "
                    f"@pytest.mark.compiled or move it to tests/compiled/", pytrace=False)
    return result
