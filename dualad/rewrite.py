"""The user's own functions with the ndarray method calls that NumPy does not hand to dualad
rewritten into calls that it does.

`X.dot(w)` with a float array X and an array of duals w is ndarray's method: it does not
dispatch (no __array_function__ for methods), so NumPy converts w into an object array of
scalar duals and multiplies entry by entry in Python (about 4 s for a 283-parameter
layer, where `X @ w` takes a millisecond). The transforms already rerun the user's own
functions over a view of their globals (allocation.with_buffers); there the function's
code is compiled again from its source with every `a.dot(b)` spelt `__dualad_dot__(a, b)`,
which is np.dot(a, b) when a is an ndarray and b a dual number, and a.dot(b) otherwise.
Functions whose source cannot be read (a REPL, exec) keep their code.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types

__all__ = ["DOT", "dispatching_code"]

DOT = "__dualad_dot__"


class _Dots(ast.NodeTransformer):
    """a.dot(b, ...) -> __dualad_dot__(a, b, ...)."""

    def __init__(self):
        self.found = False

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "dot" and len(node.args) == 1:
            self.found = True
            return ast.copy_location(ast.Call(func=ast.Name(DOT, ast.Load()),
                                              args=[func.value, *node.args], keywords=node.keywords), node)
        return node


@functools.lru_cache(maxsize=1024)
def _rewritten(code):
    """The code object of the function whose code is `code`, compiled from its source with
    its .dot calls rewritten; None where there is none to rewrite or no source to read."""
    if "dot" not in code.co_names or "__class__" in code.co_freevars:
        return None
    try:
        lines, first = inspect.findsource(code)
    except (OSError, TypeError):
        return None
    source = textwrap.dedent("".join(inspect.getblock(lines[code.co_firstlineno - 1:])))
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a lambda inside a larger expression
        return None
    function = tree.body[0] if tree.body else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name != code.co_name:
        return None
    function.decorator_list = []
    dots = _Dots()
    dots.visit(function)
    if not dots.found:
        return None
    body = [function]
    if code.co_freevars:  # free variables stay free: the function is made inside one that binds them
        outer = ast.FunctionDef(
            name="__dualad_outer__",
            args=ast.arguments(posonlyargs=[], args=[ast.arg(v) for v in code.co_freevars],
                               kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[function, ast.Return(ast.Name(function.name, ast.Load()))], decorator_list=[])
        body = [outer]
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    ast.increment_lineno(module, code.co_firstlineno - 1)
    compiled = compile(module, code.co_filename, "exec")
    found = _code_named(compiled, code.co_name)
    if found is None or set(found.co_freevars) != set(code.co_freevars):
        return None
    return found


def _code_named(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                return const
            inner = _code_named(const, name)
            if inner is not None:
                return inner
    return None


def dispatching_code(f, closure):
    """(code, closure) of f with its .dot calls rewritten (the closure's cells in the new
    code's order), or (f's code, closure) where nothing is rewritten."""
    code = _rewritten(f.__code__)
    if code is None:
        return f.__code__, closure
    cells = dict(zip(f.__code__.co_freevars, closure or ()))
    return code, tuple(cells[name] for name in code.co_freevars) or None
