"""Reverse mode: a tape of VJPs built from the same rule table as the forward types.

    tape.py       the tape and the backward sweep
    traced.py     Traced arrays: elementwise rules, selections, views and mutation
    functions.py  NumPy functions on traced arrays, each with its VJP
"""

from . import functions  # noqa: F401  (fills the NumPy function table)
from .tape import Tape
from .traced import Traced, leaf

__all__ = ["Tape", "Traced", "leaf"]
