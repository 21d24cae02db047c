"""The adjoint of an SSA program, as the source of one plain-float function.

    def kernel(X, args):
        <forward sweep: the primal, saving what the reverse sweep cannot recompute>
        GRAD = zeros; b_<value> = 1
        <reverse sweep: the statements backwards, b_a += ∂φ/∂a · b_y for each y = φ(a, ...)>
        return value, GRAD

What the reverse sweep stores and what it recomputes:

  * every value has a name of its own (ssa.py), so a value of the function body outside
    loops is still there when the reverse sweep needs it: nothing is stored;
  * a loop's reverse runs its iterations backwards, each one recomputed from the loop's
    header values at that iteration's entry, which the forward sweep saves: only those the
    recomputation reads (x, the loop variable and the values from before the loop are there
    anyway; jump flags are False at every entry). A range loop of the function body saves
    into arrays sized by its trip count at its entry; a while loop, and every loop inside
    another loop, pushes onto the call's stacks (stack.py). Inside a reverse iteration the
    inner loops run forward (saving) and then backwards, the same way one level down;
  * a branch's direction is its test's value, there when the reverse sweep needs it;
  * only what the reverse sweep reads is computed in a recomputation (`needed`), and in the
    forward sweep of `grad`, which does not return the value.

Adjoints start at -0.0, which LLVM folds away in -0.0 + a (0.0 + a it may not: -0.0 + 0.0
is 0.0), and each rule's partial is the rule table's (partials.py).
"""

from __future__ import annotations

import ast
import math
from contextlib import contextmanager

import numpy as np
from numba.core import types

from . import stack
from .activity import active_names
from .inference import is_float, is_saveable
from .partials import PYTHON_OPERATORS, compiled_partial, constant_partial, reads, value_function
from .program import (Apply, Assign, Const, Copy, If, Name, Pure, ReadX, Unsupported, loops_in_region,
                      reads_of, reads_of_statement, walk)

__all__ = ["primal_source", "kernel_source"]

ALL = None  # every statement (the primal typed by inference.py)


class _Writer:
    def __init__(self):
        self.lines, self.depth = [], 0

    def __call__(self, text):
        self.lines.append("    " * self.depth + text)

    def extend(self, other):
        for line in other.lines:
            self(line)

    @contextmanager
    def block(self, header):
        self(header)
        self.depth += 1
        start = len(self.lines)
        yield
        if len(self.lines) == start:
            self("pass")
        self.depth -= 1


def _atom(atom):
    if isinstance(atom, Name):
        return atom.id
    value = atom.value
    if isinstance(value, float) and not math.isfinite(value):
        return "NAN" if math.isnan(value) else ("INF" if value > 0 else "(-INF)")
    text = repr(value)
    return f"({text})" if text.startswith("-") else text


class _Generator:
    def __init__(self, program, typemap):
        self.program, self.types = program, typemap
        self.active = active_names(program.body, typemap)
        self.namespace = dict(program.globals, np=np, INF=math.inf, NAN=math.nan,
                              trip_count=stack.trip_count, push_float=stack.push_float,
                              pop_float=stack.pop_float, push_int=stack.push_int, pop_int=stack.pop_int,
                              floats=stack.floats, ints=stack.ints, release=stack.release)
        self.defs_of, self.region, self.saved, self.parent, self.assigned = {}, {}, {}, {}, {}
        self.stacks = set()
        self._index(program.body, None)

    # ---- the program's shape ---------------------------------------------------------------------
    def _index(self, stmts, loop):
        """Names defined in stmts (nested ones too); each name's region (innermost loop)."""
        defined = set()
        for stmt in stmts:
            if isinstance(stmt, Assign):
                self.region[stmt.target] = loop
                self.assigned[stmt.target] = stmt
                defined.add(stmt.target)
            elif isinstance(stmt, If):
                inner = self._index(stmt.body, loop) | self._index(stmt.orelse, loop)
                for target, _, _ in stmt.phis:
                    self.region[target] = loop
                    inner.add(target)
                self.defs_of[id(stmt)] = inner
                defined |= inner
            else:
                self.parent[stmt.id] = loop
                inner = self._index(stmt.header, stmt) | self._index(stmt.body, stmt)
                if stmt.var is not None:
                    self.region[stmt.var] = stmt
                    inner.add(stmt.var)
                self.defs_of[stmt.id] = inner
                heads = {h for h, _, _ in stmt.phis}
                for head in heads:
                    self.region[head] = loop
                defined |= inner | heads
        return defined

    def heads(self, loop):
        return {h for h, _, _ in loop.phis}

    def has_reverse(self, loop):
        return bool((self.defs_of[loop.id] | self.heads(loop)) & self.active)

    def region_active(self, loop):
        """The active names of a region (a loop's body, None: the function body)."""
        return sorted(n for n in self.active if self.region.get(n, "none") is loop)

    def type_of(self, name):
        return self.types.get(name) if self.types else None

    # ---- what a forward sweep computes ----------------------------------------------------------------
    def closure(self, stmts, roots, taped):
        """The names a forward sweep of stmts computes to provide `roots`: what they are
        computed from, the tests they depend on, and for the loops taped (their reverse
        follows) the header values they save, to a fixed point (loops carry values round)."""
        needed = set(roots)
        while True:
            size = len(needed)
            self._close(stmts, needed, taped)
            if len(needed) == size:
                return needed

    def _close(self, stmts, needed, taped):
        for stmt in reversed(stmts):
            if isinstance(stmt, Assign):
                if stmt.target in needed:
                    needed.update(r for r in reads_of(stmt.op) if r != "X")
            elif isinstance(stmt, If):
                for target, a, b in stmt.phis:
                    if target in needed:
                        needed.update(s for s in (a, b) if s is not None)
                self._close(stmt.body, needed, taped)
                self._close(stmt.orelse, needed, taped)
                if self.if_emitted(stmt, needed, taped) and isinstance(stmt.test, Name):
                    needed.add(stmt.test.id)
            else:
                if stmt.id in taped:
                    needed.update(self.saved[stmt.id])
                for head, pre, latch in stmt.phis:
                    if head in needed:
                        needed.update(s for s in (pre, latch) if s is not None)
                self._close(stmt.body, needed, taped)
                self._close(stmt.header, needed, taped)
                if self.loop_emitted(stmt, needed, taped):
                    control = [stmt.start, stmt.stop, stmt.step, stmt.test] + list(stmt.exits)
                    needed.update(a.id for a in control if isinstance(a, Name))

    def if_emitted(self, stmt, needed, taped):
        """Whether a forward sweep runs the if: it computes a value needed, or holds a loop
        taped (whose trip count and saves the reverse sweep reads)."""
        return needed is ALL or bool(self.defs_of[id(stmt)] & needed) or any(
            loop.id in taped for loop in loops_in_region(stmt.body + stmt.orelse))

    def loop_emitted(self, loop, needed, taped):
        return needed is ALL or loop.id in taped or bool((self.defs_of[loop.id] | self.heads(loop)) & needed)

    # ---- forward code ----------------------------------------------------------------------------------
    def op_source(self, stmt):
        op = stmt.op
        if isinstance(op, Copy):
            return f"float({_atom(op.atom)})" if op.as_float else _atom(op.atom)
        if isinstance(op, ReadX):
            return f"X[{_atom(op.index)}]"
        if isinstance(op, Pure):
            return ast.unparse(op.tree)
        name, args = op.rule.name, [_atom(a) for a in op.args]
        if name in PYTHON_OPERATORS and len(args) == 2:
            return f"{args[0]} {PYTHON_OPERATORS[name]} {args[1]}"
        if name == "negative":
            return f"-{args[0]}"
        if name == "positive":
            return f"+{args[0]}"
        if stmt.target not in self.active and name in ("power", "remainder"):
            return f"{args[0]} {'**' if name == 'power' else '%'} {args[1]}"  # the user's own integer maths
        function = f"f_{name}"
        self.namespace[function] = value_function(op.rule)
        return f"{function}({', '.join(args)})"

    def forward(self, w, stmts, needed, taped):
        for stmt in stmts:
            if isinstance(stmt, Assign):
                if needed is ALL or stmt.target in needed:
                    w(f"{stmt.target} = {self.op_source(stmt)}")
            elif isinstance(stmt, If):
                if not self.if_emitted(stmt, needed, taped):
                    continue
                for branch, side, header in ((stmt.body, 1, f"if {_atom(stmt.test)}:"), (stmt.orelse, 2, "else:")):
                    with w.block(header):
                        self.forward(w, branch, needed, taped)
                        for phi in stmt.phis:
                            if phi[side] is not None and (needed is ALL or phi[0] in needed):
                                w(f"{phi[0]} = {phi[side]}")
            elif self.loop_emitted(stmt, needed, taped):
                self.forward_loop(w, stmt, needed, stmt.id in taped)

    def _index_of(self, loop, k):
        start, step = _atom(loop.start), _atom(loop.step)
        scaled = k if step == "1" else f"{k} * {step}"
        return scaled if start == "0" else f"{start} + {scaled}"

    def _saves_in_arrays(self, loop):
        """Whether the loop saves into arrays sized at its entry: it runs once per call."""
        return self.parent[loop.id] is None and loop.kind == "range"

    def forward_loop(self, w, loop, needed, taped):
        phis = [phi for phi in loop.phis if needed is ALL or phi[0] in needed]
        for head, pre, _ in phis:
            if pre is not None:
                w(f"{head} = {pre}")
        saves = self.saved.get(loop.id, []) if taped else []
        in_arrays = self._saves_in_arrays(loop)
        counted = taped and (loop.kind == "while" or loop.breaks)
        k = f"k_{loop.id}"
        if taped and loop.kind == "range":
            trips = f"T_{loop.id}"
            w(f"{trips} = trip_count({_atom(loop.start)}, {_atom(loop.stop)}, {_atom(loop.step)})")
            if in_arrays:
                for head in saves:
                    w(f"buf_{head} = np.empty({trips}, {self.dtype(head)})")
        if counted:
            w(f"n_{loop.id} = 0")
        header, first = self._loop_header(loop, taped, k)
        body = _Writer()
        body.depth = w.depth + 1
        if header == "while True:" and loop.test != Const(True):
            self.forward(body, loop.header, needed, ())
            body(f"if not {_atom(loop.test)}:")
            body("    break")
        for head in saves:
            body(f"buf_{head}[{k}] = {head}" if in_arrays else self.push(head))
        if counted:
            body(f"n_{loop.id} += 1")
        start = len(body.lines)
        self.forward(body, loop.body, needed, ())
        for head, _, latch in phis:
            if latch is not None:
                body(f"{head} = {latch}")
        if len(body.lines) == start and loop.kind == "range" and not counted and not saves:
            return  # nothing to compute, save or count: the trip count is all the reverse needs
        if loop.exits:
            body(f"if {' or '.join(_atom(e) for e in loop.exits)}:")
            body("    break")
        w(header)
        for line in first:
            body.lines.insert(0, "    " * body.depth + line)
        w.lines += body.lines

    def _loop_header(self, loop, taped, k):
        """(the loop's first line, the lines that start each iteration)."""
        if loop.kind == "range":
            if taped:
                return f"for {k} in range(T_{loop.id}):", [f"{loop.var} = {self._index_of(loop, k)}"]
            start, stop, step = (_atom(a) for a in (loop.start, loop.stop, loop.step))
            bounds = stop if (start, step) == ("0", "1") else (
                f"{start}, {stop}" if step == "1" else f"{start}, {stop}, {step}")
            return f"for {loop.var} in range({bounds}):", []
        if len(loop.header) == 1 and isinstance(loop.header[0].op, Pure) and loop.test == Name(loop.header[0].target):
            return f"while {ast.unparse(loop.header[0].op.tree)}:", []
        return "while True:", []

    # ---- saving and restoring loop-carried values --------------------------------------------------------
    def _kind(self, name):
        numba_type = self.type_of(name)
        if numba_type is None:
            return "float" if name in self.active else "int"
        if not is_saveable(numba_type):
            raise Unsupported(f"a loop carries a {numba_type} (`{name}`) that the reverse sweep needs: "
                              "only floats, integers and bools are saved")
        return "float" if is_float(numba_type) else ("bool" if isinstance(numba_type, types.Boolean) else "int")

    def dtype(self, name):
        return {"float": "np.float64", "int": "np.int64", "bool": "np.bool_"}[self._kind(name)]

    def push(self, name):
        kind = self._kind(name)
        self.stacks.add("SF" if kind == "float" else "SI")
        if kind == "float":
            return f"push_float(SF, {name})"
        return f"push_int(SI, {'int(' + name + ')' if kind == 'bool' else name})"

    def pop(self, name):
        kind = self._kind(name)
        self.stacks.add("SF" if kind == "float" else "SI")
        if kind == "float":
            return f"{name} = pop_float(SF)"
        return f"{name} = pop_int(SI){' != 0' if kind == 'bool' else ''}"

    def independent(self, loop, saves, in_arrays):
        """Whether the loop's reverse iterations may run in any order (then upward, which is
        faster: docs/decisions/0005-measured-constants-in-code.md): a range loop that
        always runs its trip count, whose saves are indexed by iteration, and whose only
        carried adjoints are accumulators, h' = h + t or h - t with h and h' read nowhere
        else, whose adjoint passes from each iteration to the one before unchanged."""
        if loop.kind != "range" or loop.breaks or (saves and not in_arrays):
            return False
        read = {}
        for stmt in walk(loop.body):
            for name in reads_of_statement(stmt):
                read[name] = read.get(name, 0) + 1
        for head, _, latch in loop.phis:
            if head not in self.active:
                continue
            update = self.assigned.get(latch)
            if update is None or not isinstance(update.op, Apply) or read.get(head) != 1 or latch in read:
                return False
            args = update.op.args
            if not (update.op.rule.name == "add" and Name(head) in args or
                    update.op.rule.name == "subtract" and args[0] == Name(head)) or args[0] == args[1]:
                return False
        return True

    # ---- reverse code -------------------------------------------------------------------------------
    def partial_call(self, rule, position, args, target, uses):
        used = reads(rule, position)
        values = [_atom(args[i]) if i in used else "0.0" for i in range(rule.arity)]
        values.append(target if rule.arity in used else "0.0")
        uses.update(args[i].id for i in used if i < rule.arity and isinstance(args[i], Name))
        if rule.arity in used:
            uses.add(target)
        function = f"d_{rule.name}_{position}"
        self.namespace[function] = compiled_partial(rule, position)
        return f"{function}({', '.join(values)})"

    def reverse_assign(self, w, stmt, uses):
        op, adjoint = stmt.op, f"b_{stmt.target}"
        if isinstance(op, Copy):
            if isinstance(op.atom, Name) and op.atom.id in self.active:
                w(f"b_{op.atom.id} += {adjoint}")
        elif isinstance(op, ReadX):
            w(f"GRAD[{_atom(op.index)}] += {adjoint}")
            if isinstance(op.index, Name):
                uses.add(op.index.id)
        elif isinstance(op, Apply):
            for position, arg in enumerate(op.args):
                if not (isinstance(arg, Name) and arg.id in self.active) or op.rule.first[position] is None:
                    continue
                constant = constant_partial(op.rule, position)
                if constant == 1.0:
                    w(f"b_{arg.id} += {adjoint}")
                elif constant == -1.0:
                    w(f"b_{arg.id} -= {adjoint}")
                elif constant is not None:
                    if constant != 0.0:
                        w(f"b_{arg.id} += {constant!r} * {adjoint}")
                else:
                    partial = self.partial_call(op.rule, position, op.args, stmt.target, uses)
                    # a zero adjoint passes nothing back, even against an infinite or nan
                    # partial, as on the tape and the Python path (a Jacobian row's zero must
                    # not turn another row's inf into nan); the partial is then not computed
                    w(f"b_{arg.id} += {partial} * {adjoint} if {adjoint} != 0.0 else 0.0")

    def reverse(self, w, stmts, uses):
        for stmt in reversed(stmts):
            if isinstance(stmt, Assign):
                if stmt.target in self.active:
                    self.reverse_assign(w, stmt, uses)
            elif isinstance(stmt, If):
                self.reverse_if(w, stmt, uses)
            elif self.has_reverse(stmt):
                self.reverse_loop(w, stmt, uses)

    def reverse_if(self, w, stmt, uses):
        branches = []
        for branch, side in ((stmt.body, 1), (stmt.orelse, 2)):
            inner = _Writer()
            for phi in stmt.phis:
                if phi[0] in self.active and phi[side] in self.active:
                    inner(f"b_{phi[side]} += b_{phi[0]}")
            self.reverse(inner, branch, uses)
            branches.append(inner)
        if not branches[0].lines and not branches[1].lines:
            return
        if isinstance(stmt.test, Name):
            uses.add(stmt.test.id)
        for inner, header in zip(branches, (f"if {_atom(stmt.test)}:", "else:")):
            with w.block(header):
                w.extend(inner)

    def reverse_loop(self, w, loop, uses):
        """The loop's iterations backwards, each recomputed from its saved header values."""
        inner_uses, body = set(), _Writer()
        self.reverse(body, loop.body, inner_uses)
        taped = {inner.id for inner in loops_in_region(loop.body) if self.has_reverse(inner)}
        needed = self.closure(loop.body, inner_uses, taped)
        heads, flags = self.heads(loop), set(loop.flags)
        saves = self.saved[loop.id] = sorted((needed & heads) - flags)
        inside = self.defs_of[loop.id] | heads
        uses.update(n for n in needed if n not in inside)
        recomputed = _Writer()
        self.forward(recomputed, loop.body, needed, taped)
        in_arrays = self._saves_in_arrays(loop)
        k = f"k_{loop.id}"
        count = f"n_{loop.id}" if loop.kind == "while" or loop.breaks else f"T_{loop.id}"
        order = f"range({count})" if self.independent(loop, saves, in_arrays) else f"range({count} - 1, -1, -1)"
        with w.block(f"for {k} in {order}:"):
            if loop.kind == "range":
                w(f"{loop.var} = {self._index_of(loop, k)}")
                uses.update(a.id for a in (loop.start, loop.step) if isinstance(a, Name))
            for head in (saves if in_arrays else reversed(saves)):
                w(f"{head} = buf_{head}[{k}]" if in_arrays else self.pop(head))
            for head in sorted(flags & needed):
                w(f"{head} = False")
            w.extend(recomputed)
            carried = [(h, latch) for h, _, latch in loop.phis if h in self.active]
            latches = {latch for _, latch in carried if latch in self.active}
            for name in self.region_active(loop):
                if name not in latches:
                    w(f"b_{name} = -0.0")
            for head, latch in carried:
                if latch in self.active:
                    w(f"b_{latch} = b_{head}")
                w(f"b_{head} = -0.0")
            w.extend(body)
        for head, pre, _ in loop.phis:
            if head in self.active and pre in self.active:
                w(f"b_{pre} += b_{head}")


def _parameters(program, w, arg_count):
    """The kernel's other arguments from its tuple `args` (defaults where not given)."""
    if arg_count > len(program.params):
        raise Unsupported(f"{program.name} takes {len(program.params) + 1} arguments, given {arg_count + 1}")
    defaults = {}
    for k, param in enumerate(program.params):
        if k < arg_count:
            w(f"{param} = args[{k}]")
        elif param in program.defaults:
            defaults[f"default_{param}"] = program.defaults[param]
            w(f"{param} = default_{param}")
        else:
            raise Unsupported(f"{program.name} is missing its argument {param[2:]}")
    return defaults


def primal_source(program):
    """(source, namespace) of `def primal(X, *params)`: the program as plain code."""
    generator = _Generator(program, None)
    w = _Writer()
    with w.block(f"def primal({', '.join(['X'] + program.params)}):"):
        generator.forward(w, program.body, ALL, ())
        w(f"return {program.value}")
    return "\n".join(w.lines), generator.namespace


def kernel_source(program, typemap, arg_count, value):
    """(source, namespace) of `def kernel(x, args)` -> (value, gradient) or the gradient."""
    generator = _Generator(program, typemap)
    reverse, uses = _Writer(), set()
    reverse.depth = 1
    generator.reverse(reverse, program.body, uses)
    taped = {loop.id for loop in loops_in_region(program.body) if generator.has_reverse(loop)}
    needed = generator.closure(program.body, uses | ({program.value} if value else set()), taped)
    forward = _Writer()
    forward.depth = 1
    generator.forward(forward, program.body, needed, taped)
    w = _Writer()
    with w.block("def kernel(x, args):"):
        w("X = x")
        generator.namespace.update(_parameters(program, w, arg_count))
        for name in sorted(generator.stacks):
            w(f"{name} = {'floats' if name == 'SF' else 'ints'}(256)")
    w.lines += forward.lines
    w.depth = 1
    if value:
        w(f"value = float({program.value})")
    w("GRAD = np.zeros(X.shape[0])")
    for name in generator.region_active(None):
        w(f"b_{name} = -0.0")
    if program.value in generator.active:
        w(f"b_{program.value} = 1.0")
    w.lines += reverse.lines
    for name in sorted(generator.stacks):
        w(f"release({name})")
    w("return value, GRAD" if value else "return GRAD")
    return "\n".join(w.lines), generator.namespace
