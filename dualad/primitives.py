"""User-registered primitives: a new row of the rule table, given once.

    gammaln = dualad.primitive(scipy.special.gammaln,
                               first=scipy.special.digamma,
                               second=lambda x: scipy.special.polygamma(1, x))

The result is a function that computes ``value`` on plain numbers and arrays and applies
the chain rule on every kind of dual number: Dual, HyperDual, the reverse tape's traced
arrays and, when the functions are numba-compilable, the compiled types inside @njit code.

The partials are themselves primitives: ``first``'s derivative is ``second``, so a
primitive can be differentiated as many times as it has partials, in any nesting of
transforms (forward over reverse differentiates the tape's partials). Past the last given
order, it raises an error that says which partial is missing.

Arity 1:  value(x);    first(x) = f'(x);                  second(x) = f''(x)
Arity 2:  value(x, z); first = (∂f/∂x, ∂f/∂z), each (x, z); second = {(0, 0): ∂²f/∂x²,
          (0, 1): ∂²f/∂x∂z, (1, 1): ∂²f/∂z²}, each (x, z).
"""

from __future__ import annotations

from .number import leader_of
from .rules import Rule

__all__ = ["primitive", "subscribe"]

# (entry point, rule, plain value function) of every primitive made, and (raiser, None, None)
# for every partial past the registered ones
_REGISTERED: list = []
_LISTENERS: list = []  # callbacks of the compiled path: given each primitive as it is made

_ARITY_ERROR = "dualad.primitive takes first= as one function (arity 1) or a tuple of two (arity 2)"


def subscribe(listener):
    """Call listener(entry, rule, value_fn) for every primitive, made before or after."""
    _LISTENERS.append(listener)
    for item in list(_REGISTERED):
        listener(*item)


_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}


def _missing(root, needed, known, arity):
    """A partial past the registered ones: calling it (or compiling a call) explains which
    order is missing."""
    fix = ("pass second= to dualad.primitive" if known == 1 else
           "pass a dualad.primitive (with its own partials) as second=")
    message = (f"dualad.primitive {root!r} has partials up to order {known} ({_ORDINAL[known]}), "
               f"but this needs its {_ORDINAL.get(needed, f'order-{needed}')} derivative; {fix}")

    def raise_missing(*args):
        raise TypeError(message)

    raise_missing.message, raise_missing.arity = message, arity
    _announce(raise_missing, None, None)
    return raise_missing


def _announce(entry, rule, value):
    _REGISTERED.append((entry, rule, value))
    for listener in list(_LISTENERS):
        listener(entry, rule, value)


def _rule_partial(partial, arity, order):
    """partial(args) in the rule table's calling convention (rules.py): unary first (x, y),
    second (x, y, d); binary (x, z, y). Closures, so numba compiles them too."""
    if arity == 2:
        return lambda x, z, y: partial(x, z)
    if order == 1:
        return lambda x, y: partial(x)
    return lambda x, y, d: partial(x)


def _entry(name, arity, value, partials, second_partials, root, order, known):
    """A primitive's entry point: value on plain inputs, the chain rule on any dual layer.

    partials: a tuple of one function per argument (each taking the arguments), or None
    when this order's derivative is unknown; second_partials: {(i, j): function} or None.
    This entry is the order-`order` derivative of primitive `root`, registered to `known`.
    A partial that is a dualad.primitive already brings its own derivatives."""
    if order > 0 and getattr(value, "rule", None) is not None:
        return value

    def entry(*args):
        if len(args) != arity:
            raise TypeError(f"{name} takes {arity} argument{'s' * (arity != 1)}, got {len(args)}")
        leader = leader_of(args)
        if leader is None:
            return value(*args)
        return leader._apply_rule(rule, args)

    entry.__name__ = entry.__qualname__ = name
    entry.__doc__ = f"{name}: a dualad.primitive (value, partials and their derivatives)."

    # The partials are primitives too: each first partial's derivative is a row of the second
    # partials, made once here and shared with the rule's second-order entries.
    if second_partials is None:
        missing = _missing(root, order + 1 + (partials is not None), known, arity)
        seconds = {key: missing for key in _keys(arity)}
    else:
        suffix = (lambda key: "''") if arity == 1 else (lambda key: f"_{key[0]}{key[1]}")
        seconds = {key: _entry(name + suffix(key), arity, second_partials[key], None, None, root,
                               order + 2, known)
                   for key in _keys(arity)}
    if partials is None:
        firsts = (_missing(root, order + 1, known, arity),) * arity
    else:
        def row(i):
            if second_partials is None:
                return None
            return tuple(seconds[(min(i, j), max(i, j))] for j in range(arity))
        suffix = (lambda i: "'") if arity == 1 else (lambda i: f"_{i}")
        firsts = tuple(_entry(name + suffix(i), arity, partials[i], row(i), None, root, order + 1, known)
                       for i in range(arity))

    # what the kernel cache's key of a function calling this primitive holds (jit/cache.py)
    entry.__dualad_parts__ = (name, value, partials,
                              tuple(sorted((second_partials or {}).items())))
    rule = Rule(name, entry, tuple(_rule_partial(p, arity, 1) for p in firsts),
                {key: _rule_partial(p, arity, 2) for key, p in seconds.items()},
                ((-float("inf"), float("inf")),) * arity, note="a user-registered dualad.primitive")
    entry.rule = rule
    _announce(entry, rule, value)
    return entry


def _keys(arity):
    return [(i, j) for i in range(arity) for j in range(i, arity)]


def primitive(value, first, second=None, *, name=None):
    """Register an elementwise primitive once; returns the function to call in your model.

    value(x) or value(x, z): the function on plain floats and arrays (NumPy-vectorised on the
    Python path; numba-compilable for use inside @njit code).
    first: f'(x) (arity 1) or a tuple (∂f/∂x, ∂f/∂z) of functions of (x, z) (arity 2).
    second (optional): f''(x), or {(0, 0): …, (0, 1): …, (1, 1): …}; without it the
    primitive works to first order (grad, jacobian, jvp, vjp), and Hessians raise an error
    that says so.
    """
    name = name or getattr(value, "__name__", "primitive")
    if callable(first):
        arity, partials = 1, (first,)
    elif isinstance(first, (tuple, list)) and len(first) == 2 and all(map(callable, first)):
        arity, partials = 2, tuple(first)
    else:
        raise TypeError(_ARITY_ERROR)
    if not callable(value):
        raise TypeError(f"dualad.primitive: value must be a function, got {type(value).__name__}")
    if second is not None:
        if arity == 1:
            if not callable(second):
                raise TypeError("dualad.primitive: second= of a one-argument primitive is f''(x), a function")
            second = {(0, 0): second}
        else:
            if not (isinstance(second, dict) and set(second) == set(_keys(2))
                    and all(map(callable, second.values()))):
                raise TypeError("dualad.primitive: second= of a two-argument primitive is a dict "
                                "{(0, 0): f_xx, (0, 1): f_xz, (1, 1): f_zz} of functions of (x, z)")
    entry = _entry(name, arity, value, partials, second, name, 0, 1 if second is None else 2)
    for hook in _ON_REGISTER:
        hook()
    return entry


# Called after every registration. dualad's package installs one that loads the compiled
# path (whose overloads subscribe to registrations), so that @njit code naming the primitive
# compiles; this layer does not import the compiled path itself.
_ON_REGISTER: list = []

