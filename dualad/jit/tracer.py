"""Recording onto a sparsity recording: what one rule application on tracers does.

A tracer (types.TracerType) is value + node id on a recording with the compiled tape's
layout (active.py: a header, then nodes of two parent ids and two 8-byte words), but what
a node keeps is structure, not partials: every operation whose partials the rule table
gives (not None) keeps its operands' dependence, whatever the partials' values at x (x·y
at y = 0 still depends on x).

    linear(y, x)          a unary use with no second partial (−x, x + c, c·x): y has x's
                          input set and interactions, so it keeps x's node
    nonlinear(y, x)       a unary use with a second partial (sin x, x²): a node (x, −1)
                          flagged SELF (x's inputs interact with each other)
    joined(y, a, b, f)    two tracers: a node (a, b) with the flags f of the binary rule's
                          second partials that are not None (SELF, CROSS, OTHER)
    constant(y)           no dependence (a rule whose first partials are all None)

The flags sit in the node's first weight word as a float (SELF + CROSS + OTHER); the pass
over the recording (sparse.py) reads them back. Every node's first parent is a node.
"""

from .cache import register_jitable

from .active import push
from .types import make_tracer

__all__ = ["SELF", "CROSS", "OTHER", "linear", "nonlinear", "joined", "constant", "unrelated",
           "use_of", "flags_of"]

SELF, CROSS, OTHER = 1.0, 2.0, 4.0  # a·a, a·b, b·b interact (second partials not None)


@register_jitable
def constant(y):
    return make_tracer(y, -1, 0)


@register_jitable
def unrelated(y, x):
    return constant(y)


@register_jitable
def linear(y, x):
    return make_tracer(y, x.index, x.header)


@register_jitable
def nonlinear(y, x):
    if x.index < 0:
        return constant(y)
    return make_tracer(y, push(x.header, x.index, SELF, -1, 0.0), x.header)


@register_jitable
def joined(y, a, b, flags):
    """y = g(a, b), both first partials not None; flags: the interactions of g."""
    if a.index < 0:
        return nonlinear(y, b) if flags >= OTHER else linear(y, b)
    if b.index < 0:
        return nonlinear(y, a) if flags % 2.0 == SELF else linear(y, a)
    return make_tracer(y, push(a.header, a.index, flags, b.index, 0.0), a.header)


def _interacts(rule, key):
    """Whether a second partial may be nonzero: not None, or not given (as the Python path's
    tracer, which counts a missing one)."""
    return rule.second.get(key, "unknown") is not None


def use_of(rule, k):
    """How y = rule(..., x_k, ...) records when operand k is the only tracer: no dependence
    where its first partial is None, else linear or nonlinear by its second partial."""
    if rule.first[k] is None:
        return unrelated
    return nonlinear if _interacts(rule, (k, k)) else linear


def flags_of(rule):
    """The interaction flags of a binary rule's node: its second partials that are not None."""
    return sum(flag for flag, key in ((SELF, (0, 0)), (CROSS, (0, 1)), (OTHER, (1, 1)))
               if _interacts(rule, key))
