"""break, continue and return replaced by flags: every loop then leaves at its top (the
range is done, the while test is false) or at the end of its body, and a function at its end.

    if c: A; continue          ->   if c: A
    B                               else: B            (the rest moves into the other branch)

    if c: A; break             ->   brk = False (at the body's start)
    B                               if c: A; brk = True
                                    else: B
                                    ... latch ...; if brk: leave the loop

Where neither branch always jumps, the rest of the block is guarded: `if not (flags): rest`.
A return sets the function's value and its `returned` flag, which every enclosing loop tests
after its latch and every enclosing block guards its rest with. The flags are False at every
iteration's entry (a loop is left as soon as one is set), which the reverse sweep uses
instead of storing them.
"""

from __future__ import annotations

import ast

from .program import Assign, Break, Const, Continue, Copy, If, Loop, Name, Pure, Return

__all__ = ["eliminate", "NoValue"]


class NoValue(Exception):
    """Some path through the function ends without a return."""


class _Loop:
    def __init__(self, broke, continued):
        self.broke, self.continued = broke, continued


class _Eliminate:
    def __init__(self, returned, value, temp):
        self.returned, self.value, self.temp = returned, value, temp
        self.flag_read = False

    def flag(self, kind, loop):
        return {"break": loop.broke if loop else None, "continue": loop.continued if loop else None,
                "return": self.returned}[kind]

    def guard(self, kinds, loop, out):
        """A name that is True where none of the jumps `kinds` happened, its Assign in out."""
        flags = sorted(self.flag(kind, loop) for kind in kinds)
        self.flag_read |= self.returned in flags
        test = ast.Name(flags[0], ast.Load()) if len(flags) == 1 else ast.BoolOp(
            ast.Or(), [ast.Name(f, ast.Load()) for f in flags])
        name = self.temp("t")
        out.append(Assign(name, Pure(ast.UnaryOp(ast.Not(), test), tuple(flags), True, "guard")))
        return Name(name)

    def sequence(self, stmts, loop):
        """(statements without jumps, the jumps that may happen, whether one always does)."""
        out, kinds = [], set()
        for index, stmt in enumerate(stmts):
            rest = stmts[index + 1:]
            if isinstance(stmt, Return):
                out += [Assign(self.value, Copy(stmt.atom)), Assign(self.returned, Copy(Const(True)))]
                return out, kinds | {"return"}, True
            if isinstance(stmt, Break):
                out.append(Assign(loop.broke, Copy(Const(True))))
                return out, kinds | {"break"}, True
            if isinstance(stmt, Continue):
                out.append(Assign(loop.continued, Copy(Const(True))))
                return out, kinds | {"continue"}, True
            if isinstance(stmt, If):
                body, body_jumps, body_always = self.sequence(stmt.body, loop)
                orelse, else_jumps, else_always = self.sequence(stmt.orelse, loop)
                jumped = body_jumps | else_jumps
                kinds |= jumped
                if not jumped:
                    out.append(If(stmt.test, body, orelse))
                    continue
                if body_always and else_always:
                    out.append(If(stmt.test, body, orelse))
                    return out, kinds, True
                if not rest:
                    out.append(If(stmt.test, body, orelse))
                    return out, kinds, False
                tail, tail_jumps, tail_always = self.sequence(rest, loop)
                if body_always and not else_jumps:
                    out.append(If(stmt.test, body, orelse + tail))
                elif else_always and not body_jumps:
                    out.append(If(stmt.test, body + tail, orelse))
                else:
                    out.append(If(stmt.test, body, orelse))
                    out.append(If(self.guard(jumped, loop, out), tail, []))
                return out, kinds | tail_jumps, tail_always
            if isinstance(stmt, Loop):
                returns = self.loop(stmt)
                out.append(stmt)
                if returns:
                    kinds.add("return")
                    if rest:
                        tail, tail_jumps, tail_always = self.sequence(rest, loop)
                        out.append(If(self.guard({"return"}, loop, out), tail, []))
                        return out, kinds | tail_jumps, tail_always
                continue
            out.append(stmt)
        return out, kinds, False

    def loop(self, stmt):
        """Rewrite the loop's body in place; whether it may return."""
        inner = _Loop(self.temp("j_broke"), self.temp("j_continued"))
        body, jumped, _ = self.sequence(stmt.body, inner)
        start = []
        if "break" in jumped:
            start.append(Assign(inner.broke, Copy(Const(False))))
            stmt.exits.append(Name(inner.broke))
        if "continue" in jumped:
            start.append(Assign(inner.continued, Copy(Const(False))))
        if "return" in jumped:
            stmt.exits.append(Name(self.returned))
            self.flag_read = True
        stmt.body = start + body
        stmt.breaks = bool(stmt.exits)
        stmt.flags = (inner.broke, inner.continued, self.returned)
        return "return" in jumped


def _strip(stmts, name):
    """stmts without the assignments to name (a flag nothing reads)."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, Assign) and stmt.target == name:
            continue
        if isinstance(stmt, If):
            stmt.body, stmt.orelse = _strip(stmt.body, name), _strip(stmt.orelse, name)
        elif isinstance(stmt, Loop):
            stmt.body = _strip(stmt.body, name)
        out.append(stmt)
    return out


def eliminate(body, returned, value, temp):
    """The function body without jumps; its value is the variable `value` at the end.
    returned, value: the names of the return flag and value; temp(base): a new name."""
    state = _Eliminate(returned, value, temp)
    out, _, always = state.sequence(body, None)
    if not always:
        raise NoValue()
    if not state.flag_read:
        return _strip(out, returned)
    # the value is defined on every path: loops and guards carry it before any return
    return [Assign(returned, Copy(Const(False))), Assign(value, Copy(Const(0.0)))] + out
