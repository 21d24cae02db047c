"""Python source of an @njit function -> the structured three-address program (program.py).

The unit is the function's AST (inspect.getsource): it keeps the loops, branches and jumps
as written, which the generated code writes back as Python. numba's bytecode IR has lost
that shape (a while loop's test is duplicated at its end, a for loop's exits are split,
`a and b` is a chain of branches), so it would have to be re-structured first.

Every arithmetic operator, math.*/np.* rule, abs, pow and float() becomes one Apply or Copy
on atoms, x[i] a ReadX; what has no derivative (comparisons, and/or, len, int(), the
piecewise constant rules) or reads no value of x is kept verbatim as Pure; calls of other
@njit functions are inlined (their returns become their own flags, jumps.py). Globals are
resolved here: numbers become constants, other objects names of the generated module
(`globals_`). Anything outside the subset raises Unsupported naming the construct and its
line.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import math
import textwrap

import numpy as np

from . import jumps
from .partials import is_piecewise_constant, rule_of_call, rule_of_operator
from .program import (Apply, Assign, Break, Const, Continue, Copy, If, Loop, Name, Pure, ReadX, Return,
                      Unsupported)

__all__ = ["lower", "Lowered", "X"]

X = "X"  # the differentiated array's name in generated code
_NO_DERIVATIVE_CALLS = (len, int, bool, round, math.isnan, math.isinf, math.isfinite, np.isnan, np.isinf,
                        np.isfinite, np.signbit)
_ARRAY_FACTS = ("shape", "size", "ndim")


class Lowered:
    """The lowered function: its parameters (the first is x), the program and the name of
    its value, and the objects its generated code refers to by name."""

    def __init__(self, name, params, defaults, body, value, globals_):
        self.name, self.params, self.defaults = name, params, defaults
        self.body, self.value, self.globals = body, value, globals_


class _Context:
    """What every function inlined into one program shares: names and globals."""

    def __init__(self):
        self.count, self.globals, self.by_object, self.stack, self.sites = 0, {}, {}, [], 0

    def temp(self, base="t"):
        self.count += 1
        return f"{base}{self.count}"

    def global_name(self, obj, hint):
        key = id(obj)
        if key not in self.by_object:
            name = f"g_{hint}_{len(self.globals)}"
            self.globals[name], self.by_object[key] = obj, name
        return self.by_object[key]


class _Source:
    """A Python function's AST and namespace."""

    def __init__(self, py_func):
        self.py_func, self.name = py_func, py_func.__name__
        if py_func.__name__ == "<lambda>":
            raise Unsupported(f"{py_func.__qualname__} is a lambda: the adjoint generator reads "
                              "a function's source, write it with def")
        try:
            source = textwrap.dedent(inspect.getsource(py_func))
        except (OSError, TypeError) as err:
            raise Unsupported(f"the source of {py_func.__qualname__} cannot be read ({err})") from None
        node = ast.parse(source).body[0]
        if not isinstance(node, ast.FunctionDef):
            raise Unsupported(f"{py_func.__qualname__} is not a def statement")
        self.node, self.first_line = node, py_func.__code__.co_firstlineno - 1
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise Unsupported(f"{self.name} takes *args, **kwargs or keyword-only arguments")
        self.params = [a.arg for a in args.args]
        defaults = py_func.__defaults__ or ()
        self.defaults = dict(zip(self.params[len(self.params) - len(defaults):], defaults))
        closure = py_func.__closure__ or ()
        self.closure = dict(zip(py_func.__code__.co_freevars, (c.cell_contents for c in closure)))
        self.locals = set(self.params)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                self.locals.add(sub.id)
            elif isinstance(sub, (ast.Global, ast.Nonlocal)):
                raise Unsupported(f"`{type(sub).__name__.lower()}` statement in {self.name}")
            elif isinstance(sub, (ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.AsyncFunctionDef)) and sub is not node:
                raise Unsupported(f"a nested function or class in {self.name}")

    def lookup(self, name):
        """(found, value) of a non-local name: closure, globals, builtins."""
        for space in (self.closure, self.py_func.__globals__, vars(builtins)):
            if name in space:
                return True, space[name]
        return False, None

    def where(self, node):
        return f"{self.name}, line {self.first_line + getattr(node, 'lineno', 1)}"


def _draws(fn):
    """Whether fn draws random numbers (np.random.*, a Generator's or random's methods)."""
    owner = getattr(fn, "__self__", None)
    modules = (getattr(fn, "__module__", None) or "", type(owner).__module__ if owner is not None else "")
    return any(m == "random" or m.startswith("numpy.random") for m in modules)


def _is_dispatcher(obj):
    return hasattr(obj, "py_func") and hasattr(obj, "overloads") and hasattr(obj, "targetoptions")


class _Lowering:
    def __init__(self, context, source, prefix, x_names):
        self.context, self.source, self.prefix, self.x_names = context, source, prefix, set(x_names)
        self.out = []
        self.tests = set()  # ids of the and/or nodes in tests (truth values, no derivative)
        for name in self.x_names:
            if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                   for n in ast.walk(source.node)):
                raise Unsupported(f"{source.name} assigns to its differentiated array `{name}`")

    # ---- names ----------------------------------------------------------------------------
    def local(self, name):
        return f"{self.prefix}{name}"

    def line(self, node):
        return self.source.first_line + getattr(node, "lineno", 1)

    def fail(self, what, node):
        raise Unsupported(f"{what} ({self.source.where(node)}: `{_unparse(node)}`)")

    def resolve(self, node):
        """The object an expression of globals names (np.sin, math.pi, a dispatcher), or None."""
        if isinstance(node, ast.Name):
            if node.id in self.source.locals:
                return None
            found, value = self.source.lookup(node.id)
            return value if found else None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is not None and inspect.ismodule(base):
                return getattr(base, node.attr, None)
        return None

    # ---- expressions ------------------------------------------------------------------------
    def expr(self, node):
        """node as an atom, its operations appended to the current statements."""
        op = self.op(node)
        if isinstance(op, Copy) and not op.as_float:
            return op.atom
        name = self.context.temp()
        self.out.append(Assign(name, op, self.line(node)))
        return Name(name)

    def op(self, node):
        """node as one operation on atoms."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return Copy(Const(node.value))
            self.fail("a constant that is not a number", node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            rule = rule_of_operator(node.op)
            if rule is None or is_piecewise_constant(rule):
                return self.pure(node, nondiff=rule is not None, what=f"operator {type(node.op).__name__}")
            return Apply(rule, (self.expr(node.left), self.expr(node.right)))
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, (ast.USub, ast.UAdd)):
                if isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float)) \
                        and not isinstance(node.operand.value, bool):
                    value = node.operand.value
                    return Copy(Const(-value if isinstance(node.op, ast.USub) else value))
                return Apply(rule_of_operator(node.op), (self.expr(node.operand),))
            return self.pure(node, nondiff=True)
        if isinstance(node, ast.BoolOp) and id(node) not in self.tests:
            # as a value, `a or b` is one of its operands (and its derivative)
            self.fail("`and`/`or` as a value, not a test", node)
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            return self.pure(node, nondiff=True)
        if isinstance(node, ast.IfExp):
            return self.conditional(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id in self.x_names:
                if isinstance(node.slice, (ast.Slice, ast.Tuple)):
                    self.fail("a slice or a tuple index of the differentiated array", node)
                return ReadX(self.expr(node.slice))
            return self.pure(node, nondiff=False, what="indexing")
        if isinstance(node, ast.Attribute):
            value = self.resolve(node)
            if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
                return Copy(Const(value.item() if isinstance(value, np.number) else value))
            if node.attr in _ARRAY_FACTS and isinstance(node.value, ast.Name) and node.value.id in self.x_names:
                return self.pure(node, nondiff=True)
            return self.pure(node, nondiff=False, what=f"attribute .{node.attr}")
        if isinstance(node, (ast.Tuple, ast.List)):
            return self.pure(node, nondiff=False, what="a tuple or list")
        self.fail(f"{type(node).__name__} expressions", node)

    def name(self, node):
        if node.id in self.x_names:
            self.fail(f"the differentiated array `{node.id}` used as a whole array", node)
        if node.id in self.source.locals:
            return Copy(Name(self.local(node.id)))
        found, value = self.source.lookup(node.id)
        if not found:
            self.fail(f"the undefined name `{node.id}`", node)
        if isinstance(value, (bool, int, float, np.number)):
            return Copy(Const(value.item() if isinstance(value, np.number) else value))
        return self.pure(node, nondiff=False, what=f"the global `{node.id}`")

    def test(self, node):
        """The atom of a branch's or a loop's test (where `and`/`or` give a truth value)."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.BoolOp):
                self.tests.add(id(sub))
        return self.expr(node)

    def conditional(self, node):
        """a if test else b: an If assigning a temporary."""
        test, name = self.test(node.test), self.context.temp()
        if isinstance(test, Const):
            return self.op(node.body if test.value else node.orelse)
        branches = []
        for value in (node.body, node.orelse):
            saved, self.out = self.out, []
            self.out.append(Assign(name, self.op(value), self.line(node)))
            branches.append(self.out)
            self.out = saved
        self.out.append(If(test, *branches))
        return Copy(Name(name))

    def call(self, node):
        fn = self.resolve(node.func)
        if any(isinstance(a, ast.Starred) for a in node.args):
            self.fail("a call with *args", node)
        rule = rule_of_call(fn) if fn is not None else None
        if _draws(fn):
            self.fail("a random draw (the reverse sweep, which recomputes, would draw again)", node)
        if fn is float and len(node.args) == 1 and not node.keywords:
            return Copy(self.expr(node.args[0]), as_float=True)
        if any(fn is f for f in _NO_DERIVATIVE_CALLS) or (rule is not None and is_piecewise_constant(rule)):
            return self.pure(node, nondiff=True)
        if rule is not None:
            if node.keywords or len(node.args) != rule.arity:
                self.fail(f"{rule.name} called with {len(node.args)} arguments or keywords", node)
            return Apply(rule, tuple(self.expr(a) for a in node.args))
        if _is_dispatcher(fn):
            if node.keywords:
                self.fail("a call of an @njit function with keyword arguments", node)
            return self.inline(fn, node)
        return self.pure(node, nondiff=False, what="a call")

    def inline(self, dispatcher, node):
        """The callee's program in place of the call; the callee's parameters bound to the
        arguments (a parameter given the differentiated array is that array)."""
        py_func = dispatcher.py_func
        if py_func in self.context.stack:
            self.fail(f"a recursive call of {py_func.__name__}", node)
        callee = _Source(py_func)
        if len(node.args) > len(callee.params):
            self.fail(f"{callee.name} called with too many arguments", node)
        self.context.sites += 1
        x_aliases, bindings = set(), []
        for param, arg in zip(callee.params, node.args):
            if isinstance(arg, ast.Name) and arg.id in self.x_names:
                x_aliases.add(param)
            else:
                bindings.append((param, self.expr(arg)))
        for param in callee.params[len(node.args):]:
            if param not in callee.defaults or not isinstance(callee.defaults[param], (int, float, bool)):
                self.fail(f"{callee.name}'s parameter {param} has no number as default", node)
            bindings.append((param, Const(callee.defaults[param])))
        inner = _Lowering(self.context, callee, f"c{self.context.sites}_", x_aliases)
        for param, atom in bindings:
            self.out.append(Assign(inner.local(param), Copy(atom), self.line(node)))
        self.context.stack.append(py_func)
        body, value = inner.function_body()
        self.context.stack.pop()
        self.out.extend(body)
        return Copy(Name(value))

    def pure(self, node, nondiff, what=""):
        """node kept as written: locals renamed, globals made names of the generated module."""
        tree = copy.deepcopy(node)
        reads = []
        parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for sub in list(ast.walk(tree)):
            if isinstance(sub, (ast.Lambda, ast.NamedExpr, ast.ListComp, ast.SetComp, ast.DictComp,
                                ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom)):
                self.fail(f"{type(sub).__name__} expressions", node)
            if not isinstance(sub, ast.Name):
                continue
            if sub.id in self.x_names:
                self._check_x_use(sub, parents, node)
                sub.id = X
                reads.append(X)
            elif sub.id in self.source.locals:
                sub.id = self.local(sub.id)
                reads.append(sub.id)
            else:
                found, value = self.source.lookup(sub.id)
                if not found:
                    self.fail(f"the undefined name `{sub.id}`", node)
                if not (vars(builtins).get(sub.id) is value):
                    sub.id = self.context.global_name(value, sub.id)
        if nondiff and not any(isinstance(sub, (ast.Name, ast.Call, ast.Attribute, ast.Subscript))
                               for sub in ast.walk(tree)):
            # a test of constants (`if 0.9 > 0.5:`): numba prunes the branch it never takes,
            # so the program must not keep it either
            value = eval(compile(ast.Expression(tree), "<constant>", "eval"), {})  # noqa: S307
            if isinstance(value, (bool, int, float)):
                return Copy(Const(value))
        if X in reads and not nondiff:
            self.fail(f"{what or 'an expression'} on values of the differentiated array, which no "
                      "rule of dualad.rules covers", node)
        return Pure(tree, tuple(dict.fromkeys(reads)), nondiff, what or type(node).__name__)

    def _check_x_use(self, name, parents, node):
        parent = parents.get(id(name))
        if isinstance(parent, ast.Subscript) and parent.value is name and not isinstance(
                parent.slice, (ast.Slice, ast.Tuple)):
            return
        if isinstance(parent, ast.Attribute) and parent.attr in _ARRAY_FACTS:
            return
        if isinstance(parent, ast.Call) and parent.args == [name] and self.resolve(parent.func) is len:
            return
        if isinstance(parent, ast.Subscript) and parent.value is name:
            self.fail(f"a slice or a tuple index of the differentiated array `{name.id}`", node)
        self.fail(f"the differentiated array `{name.id}` used as a whole array", node)

    # ---- statements ----------------------------------------------------------------------------
    def block(self, stmts):
        saved, self.out = self.out, []
        for stmt in stmts:
            self.stmt(stmt)
        out, self.out = self.out, saved
        return out

    def assign(self, target, op, node):
        if isinstance(target, ast.Name):
            self.out.append(Assign(self.local(target.id), op, self.line(node)))
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.fail("writes into arrays or attributes", node)
        else:
            self.fail(f"assignment to {type(target).__name__}", node)

    def stmt(self, node):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None:
                return
            if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)):
                names = targets[0].elts
                if not isinstance(node.value, (ast.Tuple, ast.List)) or len(node.value.elts) != len(names):
                    self.fail("tuple unpacking of anything but a tuple of the same length", node)
                atoms = []  # all values first, each in a temporary, then the names
                for value in node.value.elts:
                    atom = self.expr(value)
                    if isinstance(atom, Name):  # a, b = b, a: b's value, not the name b
                        held = self.context.temp()
                        self.out.append(Assign(held, Copy(atom), self.line(node)))
                        atom = Name(held)
                    atoms.append(atom)
                for target, atom in zip(names, atoms):
                    self.assign(target, Copy(atom), node)
            elif len(targets) == 1:
                self.assign(targets[0], self.op(node.value), node)
            else:
                atom = self.expr(node.value)
                for target in targets:
                    self.assign(target, Copy(atom), node)
        elif isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name):
                self.fail("writes into arrays or attributes", node)
            as_binop = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
            ast.copy_location(as_binop, node)
            self.assign(node.target, self.op(as_binop), node)
        elif isinstance(node, ast.If):
            test = self.test(node.test)
            if isinstance(test, Const):  # the branch taken, as numba keeps it
                self.out.extend(self.block(node.body if test.value else node.orelse))
            else:
                self.out.append(If(test, self.block(node.body), self.block(node.orelse)))
        elif isinstance(node, ast.While):
            if node.orelse:
                self.fail("while ... else", node)
            saved, self.out = self.out, []
            test = self.test(node.test)
            header, self.out = self.out, saved
            self.out.append(Loop("while", self.block(node.body), header=header, test=test))
        elif isinstance(node, ast.For):
            self.for_loop(node)
        elif isinstance(node, ast.Break):
            self.out.append(Break())
        elif isinstance(node, ast.Continue):
            self.out.append(Continue())
        elif isinstance(node, ast.Return):
            if node.value is None:
                self.fail("return without a value", node)
            self.out.append(Return(self.expr(node.value)))
        elif isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return
        elif isinstance(node, ast.Expr):
            self.fail("an expression statement (a call for its effect)", node)
        else:
            self.fail(f"`{type(node).__name__}` statements", node)

    def for_loop(self, node):
        if node.orelse:
            self.fail("for ... else", node)
        if not isinstance(node.target, ast.Name):
            self.fail("a for loop whose target is not a name", node)
        iterable = node.iter
        if isinstance(iterable, ast.Call) and self.resolve(iterable.func) is range:
            if iterable.keywords or not 1 <= len(iterable.args) <= 3:
                self.fail("range with keywords or without 1 to 3 arguments", node)
            bounds = [self.expr(a) for a in iterable.args]
            start, stop, step = ([Const(0)] + bounds + [Const(1)])[:3] if len(bounds) == 1 else (
                bounds + [Const(1)])[:3]
            self.out.append(Loop("range", self.block(node.body), var=self.local(node.target.id),
                                 start=start, stop=stop, step=step))
        elif isinstance(iterable, ast.Name) and iterable.id in self.x_names:
            index = self.context.temp("i")
            length = ast.Call(ast.Name("len", ast.Load()), [ast.Name(iterable.id, ast.Load())], [])
            stop = self.expr(ast.copy_location(length, node))
            body = [Assign(self.local(node.target.id), ReadX(Name(index)), self.line(node))] + self.block(node.body)
            self.out.append(Loop("range", body, var=index, start=Const(0), stop=stop, step=Const(1)))
        else:
            self.fail("a for loop over anything but range(...) or the differentiated array", node)

    def function_body(self):
        """The body without jumps, and the name holding the function's value."""
        body = self.block(self.source.node.body)
        flag, value = self.local("j_returned"), self.local("j_value")
        try:
            return jumps.eliminate(body, flag, value, self.context.temp), value
        except jumps.NoValue:
            raise Unsupported(f"{self.source.name} may end without returning a value") from None


def _unparse(node):
    try:
        return ast.unparse(node).split("\n")[0]
    except Exception:  # noqa: BLE001 - only for a message
        return type(node).__name__


def lower(f):
    """The lowered program of the @njit function f, differentiated in its first argument."""
    py_func = getattr(f, "py_func", f)
    source = _Source(py_func)
    if not source.params:
        raise Unsupported(f"{source.name} takes no argument to differentiate")
    context = _Context()
    context.stack.append(py_func)
    lowering = _Lowering(context, source, "v_", {source.params[0]})
    body, value = lowering.function_body()
    params = [lowering.local(p) for p in source.params]
    defaults = {lowering.local(p): v for p, v in source.defaults.items()}
    return Lowered(source.name, params, defaults, body, value, context.globals)
