"""The README's and the user guides' examples run and print what they say they print."""

import doctest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs" / "user").glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_examples(page):
    failures, tried = doctest.testfile(str(page), module_relative=False,
                                       optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
    if page.name in ("README.md", "guide.md", "compiled.md"):
        assert tried > 5
