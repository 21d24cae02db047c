"""Every assignment its own name, with phis where values meet (static single assignment).

The program is structured and has no jumps left (jumps.py), so the renaming is one walk:

    if:    a variable the branches leave with different names gets a new name at the join,
           If.phis [(name, from body, from orelse)] (None: not assigned on that path);
    loop:  each variable the body assigns gets a header name, Loop.phis [(name, before the
           loop, at the latch)]; the body reads the header names, and after the loop the
           variable is its header name (latch values are copied to the header names before the
           loop's exits are tested, so this holds however the loop is left).

With one name per value, every value the reverse sweep needs is still there when it runs:
the generated code never overwrites it.
"""

from __future__ import annotations

import ast
import copy

from .program import Apply, Assign, Const, Copy, If, Loop, Name, Pure, ReadX, Unsupported, reads_of_statement, walk

__all__ = ["to_ssa", "Program"]


class Program:
    """A function in SSA form: its other parameters' names (after x), their defaults, the
    body and the name of its value."""

    def __init__(self, name, params, defaults, body, value, globals_, loops):
        self.name, self.params, self.defaults = name, params, defaults
        self.body, self.value, self.globals, self.loops = body, value, globals_, loops


class _Renaming:
    def __init__(self, taken):
        self.taken, self.loops = set(taken), 0

    def fresh(self, base):
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def atom(self, atom, env):
        if isinstance(atom, Name):
            if atom.id not in env:
                raise Unsupported(f"`{_shown(atom.id)}` may be read before it is assigned")
            return Name(env[atom.id])
        return atom

    def op(self, op, env):
        if isinstance(op, Copy):
            return Copy(self.atom(op.atom, env), op.as_float)
        if isinstance(op, Apply):
            return Apply(op.rule, tuple(self.atom(a, env) for a in op.args))
        if isinstance(op, ReadX):
            return ReadX(self.atom(op.index, env))
        tree = copy.deepcopy(op.tree)
        for sub in ast.walk(tree):
            if isinstance(sub, ast.Name) and sub.id in op.reads and sub.id in env:
                sub.id = env[sub.id]
        missing = [r for r in op.reads if r not in env and r != "X"]
        if missing:
            raise Unsupported(f"`{_shown(missing[0])}` may be read before it is assigned")
        return Pure(tree, tuple(env.get(r, r) for r in op.reads), op.nondiff, op.what)

    def block(self, stmts, env):
        out = []
        for stmt in stmts:
            if isinstance(stmt, Assign):
                op = self.op(stmt.op, env)
                key = _value_key(op)
                if key is not None and key in env:  # the same value, computed where it dominates
                    if not _is_variable(stmt.target):
                        env[stmt.target] = env[key]  # a temporary: its readers read that value
                        continue
                    op = Copy(Name(env[key]))
                env[stmt.target] = self.fresh(stmt.target)
                if key is not None and key not in env:
                    env[key] = env[stmt.target]
                out.append(Assign(env[stmt.target], op, stmt.line))
            elif isinstance(stmt, If):
                out.append(self.branch(stmt, env))
            else:
                out.append(self.loop(stmt, env))
        return out

    def branch(self, stmt, env):
        test = self.atom(stmt.test, env)
        body_env, else_env = dict(env), dict(env)
        body, orelse = self.block(stmt.body, body_env), self.block(stmt.orelse, else_env)
        phis = []
        for var in sorted(v for v in set(body_env) | set(else_env) if isinstance(v, str)):
            a, b = body_env.get(var), else_env.get(var)
            if a == b or ((a is None or b is None) and not _is_variable(var)):
                continue  # a temporary of one branch: nothing after the if reads it
            env[var] = self.fresh(var)
            phis.append((env[var], a, b))
        return If(test, body, orelse, phis)

    def loop(self, stmt, env):
        assigned = {s.target for s in walk(stmt.header + stmt.body) if isinstance(s, Assign)}
        assigned |= {s.var for s in walk(stmt.body) if isinstance(s, Loop) and s.kind == "range"}
        if stmt.kind == "range":
            assigned.add(stmt.var)
        self.loops += 1
        out = Loop(stmt.kind, [], breaks=stmt.breaks, id=self.loops)
        if stmt.kind == "range":
            out.start, out.stop, out.step = (self.atom(a, env) for a in (stmt.start, stmt.stop, stmt.step))
        # a variable first assigned inside the loop has no value at the first iteration's
        # entry: the body reads it only after assigning it, and only a user's variable may be
        # read after the loop (Python's value of the last iteration)
        assigned = {var for var in assigned if var in env or _is_variable(var)}
        inside = dict(env)  # the values before the loop dominate its body
        heads = {var: self.fresh(var) for var in sorted(assigned)}
        inside.update({var: head for var, head in heads.items() if var in env})
        if stmt.kind == "range":
            out.var = inside[stmt.var] = self.fresh(stmt.var)
        else:
            out.header = self.block(stmt.header, inside)
            out.test = self.atom(stmt.test, inside)
        out.body = self.block(stmt.body, inside)
        out.exits = [self.atom(e, inside) for e in stmt.exits]
        out.phis = [(heads[var], env.get(var), inside.get(var)) for var in sorted(assigned)]
        out.flags = tuple(heads[f] for f in stmt.flags if f in heads and f in env)
        env.update(heads)
        return out


def _value_key(op):
    """A key equal for operations that compute the same value (x is never written, rules are
    pure functions), or None."""
    def typed(atom):  # 2 and 2.0, 0.0 and -0.0 compare equal, and are not the same operand
        return (type(atom.value), repr(atom.value)) if isinstance(atom, Const) else atom

    if isinstance(op, ReadX):
        return ("x", typed(op.index))
    if isinstance(op, Apply):
        return ("rule", op.rule.name, tuple(typed(a) for a in op.args))
    return None


def _is_variable(name):
    """Whether a name is one of the user's variables (v_total, c3_total), not a temporary."""
    return name.startswith("v_") or (name.startswith("c") and name.split("_", 1)[0][1:].isdigit())


def _shown(name):
    """A generated name as the user wrote it (v_total -> total)."""
    return name[2:] if name.startswith("v_") else name


def _pruned(body, value):
    """body without the phis nothing reads (a callee's locals after its loop), to a fixed point."""
    while True:
        read = {value}
        for stmt in walk(body):
            read.update(reads_of_statement(stmt))
        removed = False
        for stmt in walk(body):
            if isinstance(stmt, (If, Loop)):
                kept = [phi for phi in stmt.phis if phi[0] in read]
                removed |= len(kept) < len(stmt.phis)
                stmt.phis = kept
        if not removed:
            return body


def to_ssa(lowered):
    """The lowered function (lower.Lowered) in SSA form."""
    renaming = _Renaming(lowered.globals)
    env = {p: renaming.fresh(p) for p in lowered.params[1:]}
    params = [env[p] for p in lowered.params[1:]]
    defaults = {env[p]: v for p, v in lowered.defaults.items() if p in env}
    body = renaming.block(lowered.body, env)
    value = env.get(lowered.value)
    if value is None:
        raise Unsupported(f"{lowered.name} returns no value")
    return Program(lowered.name, params, defaults, _pruned(body, value), value, lowered.globals,
                   renaming.loops)
