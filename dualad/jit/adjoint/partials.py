"""The rule table as the adjoint generator sees it: which rule a spelling means, what the
generated code calls for a rule's value and partials, and which operands a partial reads.

For y = φ(a, b) the reverse sweep adds ∂φ/∂a(a, b, y) · ȳ to ā: the partial is the rule's
own function (dualad.rules), compiled as the tape compiles it (overloads.compiled_partial:
NumPy's error model, inlined into the caller). A partial that reads none of its operands is
a constant (1 for +, -1 for the right operand of -), folded into the generated code; an
operand a partial does not read need not be recomputed for it.
"""

from __future__ import annotations

import ast
import builtins
import dis
import math

import numpy as np

from ...rules import BY_UFUNC, MATH_NAMES, RULES
from .. import overloads

__all__ = ["rule_of_operator", "rule_of_call", "is_piecewise_constant", "reads", "constant_partial",
           "compiled_partial", "value_function", "PYTHON_OPERATORS"]

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.Pow: "pow",
           ast.Mod: "mod", ast.FloorDiv: "floordiv"}
_UNARY = {ast.USub: "neg", ast.UAdd: "pos"}
_BY_OPERATOR = {rule.operator: rule for rule in RULES.values() if rule.operator}

# The rules generated code writes as Python's operators: the same IEEE operations the
# tape's overloads compute (np.add & co. on scalars), and the user's own spelling.
PYTHON_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}


def rule_of_operator(op):
    """The rule of an ast operator node (ast.Add(), ast.USub(), ...), or None."""
    name = _BINARY.get(type(op)) or _UNARY.get(type(op))
    return _BY_OPERATOR.get(name)


def rule_of_call(fn):
    """The rule a called object stands for: a NumPy ufunc, a math-module function, abs,
    pow, or a rule's own value function (dualad.rules.erf, np.round); else None."""
    if isinstance(fn, np.ufunc):
        return BY_UFUNC.get(fn)
    if fn is builtins.abs:
        return RULES["absolute"]
    if fn is builtins.pow:
        return RULES["power"]
    if fn is math.log:  # the rule table spells log with NumPy only (math.log also takes a base)
        return RULES["log"]
    if getattr(fn, "__module__", None) == "math":
        name = MATH_NAMES.get(getattr(fn, "__name__", ""))
        return RULES[name] if name is not None and getattr(math, fn.__name__, None) is fn else None
    if fn is np.round or fn is np.around:
        return RULES["round"]
    return next((rule for rule in RULES.values() if rule.ufunc is None and rule.value is fn), None)


def is_piecewise_constant(rule):
    """Whether every partial of the rule is identically zero (floor, sign, //, ...)."""
    return all(p is None for p in rule.first)


_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "LOAD_CLOSURE"}


def reads(rule, position):
    """The arguments partial `position` of the rule reads, as indices into (*operands, y)."""
    partial = rule.first[position]
    if partial is None:
        return frozenset()
    code = partial.__code__
    params = code.co_varnames[:code.co_argcount]
    loaded = {ins.argval for ins in dis.get_instructions(code) if ins.opname in _LOADS}
    loaded |= set(code.co_cellvars)
    return frozenset(k for k, name in enumerate(params) if name in loaded)


def constant_partial(rule, position):
    """The value of a partial that reads none of its arguments (a float), else None."""
    partial = rule.first[position]
    if partial is None or reads(rule, position):
        return None
    return float(partial(*([1.0] * (rule.arity + 1))))


_COMPILED = {}


def compiled_partial(rule, position):
    """The partial compiled for scalars, as the tape's overloads compile it (inlined)."""
    key = (rule.name, position)
    if key not in _COMPILED:
        _COMPILED[key] = overloads.compiled_partial(rule.first[position], rule.arity)
    return _COMPILED[key]


def value_function(rule):
    """What compiled code calls for the rule's value (the tape calls the same)."""
    return overloads.value_fn(rule)
