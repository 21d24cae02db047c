"""Helpers shared by the test modules of both folders (tests/ and tests/compiled/)."""

import importlib.util
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def rule_point(rule):
    """A point inside the rule's domain, away from its edges."""
    return [min(max(0.37 + 0.1 * i, lo + 0.05), hi - 0.05) for i, (lo, hi) in enumerate(rule.domain)]


def load_example(name):
    """examples/<name>.py as a module."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
