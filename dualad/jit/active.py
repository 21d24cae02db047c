"""Recording onto the compiled tape: what one rule application on actives does.

An active scalar is value + scale · (perturbation of one node). An operation with one
active operand only updates value and scale (scale *= the rule's partial); an operation on
two active operands appends a node: both operand nodes and their partials times their
scales. The overloads of every rule (overloads.py) call one_operand / two_operands; the
tape, its sweeps and its kernels are tape.py.
"""

import numba
from numba.core.extending import register_jitable

from .runtime import float_pointer, int_pointer
from .types import make_active

__all__ = ["push", "one_operand", "two_operands", "constant"]


@register_jitable
def push(header, parent0, weight0, parent1, weight1):
    """Append a node; its id. Past the capacity only the size grows (the kernel re-runs)."""
    head = numba.carray(int_pointer(header), 4)
    node = head[0]
    if node < head[1]:
        parents = numba.carray(int_pointer(head[2]), 2 * head[1])
        weights = numba.carray(float_pointer(head[3]), 2 * head[1])
        parents[2 * node], parents[2 * node + 1] = parent0, parent1
        weights[2 * node], weights[2 * node + 1] = weight0, weight1
    head[0] = node + 1
    return node


@register_jitable
def _times(partial, scale):
    """partial · scale, where a zero partial passes nothing on, even against an infinite
    scale (as the Python tape, where a zero cotangent contributes zero)."""
    return 0.0 if partial == 0.0 else partial * scale


@register_jitable
def constant(y):
    """An active with no node: a value that does not depend on the inputs."""
    return make_active(y, -1, 0.0, 0)


@register_jitable
def one_operand(y, x, partial):
    # y = g(x) with x = value + scale·(its node): y = g + g'·scale·(the same node), no new node
    if x.index < 0 or partial == 0.0:
        return constant(y)
    return make_active(y, x.index, partial * x.scale, x.header)


@register_jitable
def two_operands(y, a, partial_a, b, partial_b):
    if a.index < 0:
        return one_operand(y, b, partial_b)
    if b.index < 0:
        return one_operand(y, a, partial_a)
    node = push(a.header, a.index, _times(partial_a, a.scale), b.index, _times(partial_b, b.scale))
    return make_active(y, node, 1.0, a.header)
