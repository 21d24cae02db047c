"""Activity: which values depend on x through operations with derivatives.

A name is active when it is a float and its value is x[i], a rule applied to an active
operand whose partial is not identically zero, a copy of an active name, or a phi of one.
Only active names have adjoints; everything else is recomputed or read as it is. An
expression kept verbatim (Pure) that may have a derivative (a call without a rule, indexing
another array by a value) must not read an active name: that is a construct the generator
does not differentiate, and it says so.
"""

import ast

from .inference import is_float
from .program import Apply, Assign, Copy, If, Loop, Name, Pure, ReadX, Unsupported, walk

__all__ = ["active_names"]


def _active_op(op, active):
    if isinstance(op, Copy):
        return isinstance(op.atom, Name) and op.atom.id in active
    if isinstance(op, Apply):
        return any(isinstance(a, Name) and a.id in active and op.rule.first[j] is not None
                   for j, a in enumerate(op.args))
    return isinstance(op, ReadX)


def active_names(body, types=None):
    """The active names of an SSA body; types (name -> numba type) narrows them to floats."""
    def may_be_active(name):
        return types is None or name not in types or is_float(types[name])

    active, changed = set(), True
    while changed:
        changed = False
        for stmt in walk(body):
            found = []
            if isinstance(stmt, Assign) and _active_op(stmt.op, active):
                found = [stmt.target]
            elif isinstance(stmt, (If, Loop)):
                found = [target for target, a, b in stmt.phis if a in active or b in active]
            for name in found:
                if name not in active and may_be_active(name):
                    active.add(name)
                    changed = True
    for stmt in walk(body):
        if isinstance(stmt, Assign) and isinstance(stmt.op, Pure) and not stmt.op.nondiff:
            read = [r for r in stmt.op.reads if r in active]
            if read:
                raise Unsupported(f"{stmt.op.what} on a value that depends on the differentiated "
                                  f"array (line {stmt.line}: `{ast.unparse(stmt.op.tree)}`), which no "
                                  "rule of dualad.rules covers")
    return active
