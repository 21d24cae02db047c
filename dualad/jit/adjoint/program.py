"""The structured three-address program the adjoint generator works on.

A function is a list of statements; every right-hand side is one operation on atoms (a
name or a constant):

    Assign(target, Copy(a))            target = a            (float(a) where as_float)
    Assign(target, Apply(rule, args))  target = φ(args)      φ one rule of dualad.rules
    Assign(target, ReadX(index))       target = x[index]     x the differentiated array
    Assign(target, Pure(tree, reads))  target = <expression> kept verbatim: no derivative
    If(test, body, orelse)             test a name or constant
    Loop("range", var, start, stop, step, body)
    Loop("while", header, test, body)  header: the statements computing test, at each visit

The lowering (lower.py) writes break, continue and return as Break, Continue and Return;
jumps.py replaces them by flags, so that every loop leaves at its top or at its end
(`exits`: the flags tested after the latch). ssa.py then gives every assignment a name of
its own and adds the phis: `If.phis` [(name, from body, from orelse)] at the join and
`Loop.phis` [(name, before the loop, at the latch)] at the header.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

__all__ = ["Unsupported", "Name", "Const", "Copy", "Apply", "ReadX", "Pure", "Assign", "If", "Loop",
           "Break", "Continue", "Return", "reads_of", "reads_of_statement", "walk", "loops_in_region"]


class Unsupported(NotImplementedError):
    """f uses a construct outside what the adjoint generator covers (the message names it):
    a caller falls back to the tape (dualad.jit.tape)."""


# ---- atoms -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Const:
    value: object  # a Python int, float or bool


# ---- operations ----------------------------------------------------------------------------------
@dataclass
class Copy:
    atom: object
    as_float: bool = False  # float(atom): the value as a float, its derivative 1


@dataclass
class Apply:
    rule: object  # a dualad.rules.Rule
    args: tuple


@dataclass
class ReadX:
    index: object


@dataclass
class Pure:
    """An expression kept as written: its names are renamed, nothing of it is differentiated.
    nondiff: its value has no derivative (a comparison, len, int(), a piecewise constant
    rule), so it may read values that depend on x; otherwise it must not read any."""

    tree: ast.expr
    reads: tuple  # the local names the tree reads
    nondiff: bool
    what: str = ""  # the construct, for error messages


# ---- statements ----------------------------------------------------------------------------------
@dataclass
class Assign:
    target: str
    op: object
    line: int = 0


@dataclass
class If:
    test: object
    body: list
    orelse: list
    phis: list = field(default_factory=list)


@dataclass
class Loop:
    kind: str  # "range" or "while"
    body: list
    var: Optional[str] = None  # range: the loop variable
    start: object = None
    stop: object = None
    step: object = None
    header: list = field(default_factory=list)  # while: statements computing the test
    test: object = None
    exits: list = field(default_factory=list)  # flags that leave the loop after the latch
    phis: list = field(default_factory=list)
    flags: tuple = ()  # names that are False at every iteration's entry (jump flags)
    breaks: bool = False  # may leave before its trip count (range loops)
    id: int = 0


@dataclass
class Break:
    pass


@dataclass
class Continue:
    pass


@dataclass
class Return:
    atom: object


def reads_of(op):
    """The names an operation reads."""
    if isinstance(op, Copy):
        atoms = (op.atom,)
    elif isinstance(op, Apply):
        atoms = op.args
    elif isinstance(op, ReadX):
        atoms = (op.index,)
    elif isinstance(op, Pure):
        return tuple(op.reads)
    else:
        raise TypeError(op)
    return tuple(a.id for a in atoms if isinstance(a, Name))


def reads_of_statement(stmt):
    """The names one statement reads itself: an Assign's operands; an If's or a Loop's test,
    bounds, exit flags and phi sources (not the statements nested in it)."""
    if isinstance(stmt, Assign):
        return reads_of(stmt.op)
    control = [stmt.test] + ([stmt.start, stmt.stop, stmt.step] + stmt.exits if isinstance(stmt, Loop) else [])
    return tuple(a.id for a in control if isinstance(a, Name)) + tuple(
        s for phi in stmt.phis for s in phi[1:] if s is not None)


def walk(stmts):
    """Every statement, nested ones included, in program order."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, If):
            yield from walk(stmt.body)
            yield from walk(stmt.orelse)
        elif isinstance(stmt, Loop):
            yield from walk(stmt.header)
            yield from walk(stmt.body)


def loops_in_region(stmts):
    """The loops of a region (a loop body or the function body): those reached without
    entering another loop (through ifs)."""
    for stmt in stmts:
        if isinstance(stmt, Loop):
            yield stmt
        elif isinstance(stmt, If):
            yield from loops_in_region(stmt.body)
            yield from loops_in_region(stmt.orelse)
