"""Structured inputs and outputs (JAX's pytrees).

A tree is a tuple, list, dict, NamedTuple or dataclass instance, nested to any depth;
everything else is a leaf. ``flatten(tree) -> (leaves, treedef)`` lists the leaves in a
fixed order (dict keys sorted, as JAX does; dataclass fields in declaration order) and
``treedef.unflatten(leaves)`` rebuilds the same structure around new leaves.

``static(x)`` marks a leaf (or a whole subtree) that transforms pass through untouched:
the differentiated function receives ``x`` itself, and the derivative holds ``None`` in its
place. int, bool, str and None leaves are passed through the same way without marking.
"""

from __future__ import annotations

import copy
import dataclasses

__all__ = ["static", "Static", "flatten", "tree_map", "TreeDef", "is_node"]


class Static:
    """A value that transforms pass through without differentiating it (see ``static``)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"static({self.value!r})"


def static(value):
    """Mark ``value`` (a leaf or a whole subtree) as not differentiated: the function gets
    ``value`` itself, and the derivative holds None in its place."""
    return value if isinstance(value, Static) else Static(value)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_dataclass_instance(x):
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def is_node(x):
    """Whether x is a tree node (has children) rather than a leaf."""
    return isinstance(x, (tuple, list, dict)) or _is_dataclass_instance(x)


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:  # keys of mixed types: keep insertion order
        return list(d)


def _children(x):
    """(children, how to rebuild from new children, a description for structure checks)."""
    if _is_namedtuple(x):
        return list(x), (lambda cs, t=type(x): t(*cs)), (type(x),)
    if isinstance(x, (tuple, list)):
        return list(x), (lambda cs, t=type(x): t(cs)), (type(x), len(x))
    if isinstance(x, dict):
        keys = _sorted_keys(x)
        return [x[k] for k in keys], (lambda cs, t=type(x): t(zip(keys, cs))), (type(x), tuple(keys))
    names = [f.name for f in dataclasses.fields(x)]

    def rebuild(cs, template=x):
        # a copy with its fields replaced: frozen dataclasses and init=False fields included
        new = copy.copy(template)
        for name, c in zip(names, cs):
            object.__setattr__(new, name, c)
        return new

    return [getattr(x, n) for n in names], rebuild, (type(x), tuple(names))


@dataclasses.dataclass(frozen=True, eq=False)
class TreeDef:
    """The structure of a tree: rebuilds it around a list of leaves (``unflatten``)."""

    kind: tuple  # () for a leaf, else the node's type and its keys/length
    rebuild: object
    children: tuple  # TreeDefs of the children
    n_leaves: int

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.n_leaves:
            raise ValueError(f"this structure has {self.n_leaves} leaves, got {len(leaves)}")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if not self.kind:
            return next(leaves)
        return self.rebuild([child._build(leaves) for child in self.children])

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self.kind == other.kind
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.children))

    def describe(self):
        """A short description, e.g. dict{'a': *, 'b': (*, *)}: * marks a leaf."""
        if not self.kind:
            return "*"
        kind = self.kind[0]
        inner = [c.describe() for c in self.children]
        if issubclass(kind, dict):
            body = ", ".join(f"{k!r}: {c}" for k, c in zip(self.kind[1], inner))
            return f"{{{body}}}" if kind is dict else f"{kind.__name__}{{{body}}}"
        if len(self.kind) == 2 and issubclass(kind, (tuple, list)):
            opening, closing = ("[", "]") if issubclass(kind, list) else ("(", ")")
            return opening + ", ".join(inner) + ("," if len(inner) == 1 and closing == ")" else "") + closing
        names = self.kind[1] if len(self.kind) == 2 else kind._fields
        return f"{kind.__name__}(" + ", ".join(f"{n}={c}" for n, c in zip(names, inner)) + ")"


_LEAF = TreeDef((), None, (), 1)


def flatten(tree):
    """(leaves, treedef); Static marks and non-node objects are leaves."""
    leaves = []

    def walk(x):
        if not is_node(x):
            leaves.append(x)
            return _LEAF
        children, rebuild, kind = _children(x)
        defs = tuple(walk(c) for c in children)
        return TreeDef(kind, rebuild, defs, sum(d.n_leaves for d in defs))

    treedef = walk(tree)
    return leaves, treedef


def tree_map(fn, tree, *rest):
    """fn applied leaf by leaf to trees of one structure (None leaves of the first tree stay
    None, so a gradient with passed-through leaves maps cleanly)."""
    leaves, treedef = flatten(tree)
    others = []
    for other in rest:
        other_leaves, other_def = flatten(other)
        if other_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef.describe()} vs {other_def.describe()}")
        others.append(other_leaves)
    return treedef.unflatten(
        None if leaf is None else fn(leaf, *(o[i] for o in others)) for i, leaf in enumerate(leaves))
