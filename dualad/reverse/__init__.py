"""Reverse mode: a tape of VJPs built from the same rule table as the forward types.

    tape.py       the tape and the backward sweep
    traced.py     Traced arrays: elementwise rules, selections, views and mutation
    functions.py  NumPy functions on traced arrays, each with its VJP
    checkpoint.py checkpoint and checkpointed_loop: recomputation for memory
"""

from . import functions  # noqa: F401  (fills the NumPy function table)
from .checkpoint import checkpoint, checkpointed_loop
from .tape import Tape
from .traced import Traced, leaf

__all__ = ["Tape", "Traced", "leaf", "checkpoint", "checkpointed_loop"]
