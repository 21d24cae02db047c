"""The README's examples run and print what the README says they print."""

import doctest
from pathlib import Path


def test_readme_examples():
    readme = Path(__file__).resolve().parents[2] / "README.md"
    failures, tried = doctest.testfile(str(readme), module_relative=False,
                                       optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 10
    assert failures == 0
