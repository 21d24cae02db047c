"""What a transform differentiates and what it reads back, as flat vectors.

``Inputs`` sees the differentiated arguments (trees of float leaves, see tree.py) as one
flat vector of n entries: each float leaf x_j occupies entries offsets[j] : offsets[j] +
sizes[j]. Forward mode seeds a window lo..hi of that vector per pass, and every result is
cut back into the arguments' structure (``split``, ``structure``), with None where a
leaf is passed through (int, bool, str, None, dualad.static).

``read_outputs`` reads f's output tree for one tag: per leaf, the value and the tangent
components.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .number import ForwardNumber, check_live, fresh, from_objects, in_layout, is_layer
from .tree import Static, flatten

__all__ = ["Inputs", "check_input", "read_output", "read_outputs", "argnums_of", "name_of",
           "plain", "shape_key", "strip_newer"]


def name_of(f):
    return getattr(f, "__name__", type(f).__name__)


def plain(x):
    """A 0-d ndarray as a NumPy scalar (arr[..., 0] is always an array); anything else as is."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def check_input(x, position, f):
    """A differentiable input as float64; int scalars are promoted, anything else is a TypeError."""
    if is_layer(x):  # a number of an enclosing transform (nesting)
        return x
    if isinstance(x, Static):
        raise TypeError(f"argument {position} of {name_of(f)} is marked dualad.static but argnums "
                        "asks for its derivative; leave it out of argnums")
    try:
        arr = np.asarray(x)
    except TypeError as err:
        raise TypeError(f"argument {position} of {name_of(f)}: {err}") from None
    kind = arr.dtype.kind
    if kind in "iu" and arr.ndim > 0:
        raise TypeError(
            f"argument {position} of {name_of(f)} is an integer array (dtype {arr.dtype}), which "
            "cannot be differentiated (JAX's rule too); pass x.astype(float) if you mean to")
    if kind not in "fiu":
        what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes",
                "O": "Python objects"}.get(kind, f"dtype {arr.dtype}")
        raise TypeError(
            f"argument {position} of {name_of(f)} holds {what} ({type(x).__name__} {x!r:.60}), "
            "which cannot be differentiated; pass real floats or ints, or leave this "
            "argument out of argnums")
    arr = arr.astype(np.float64, copy=False)  # float64 input is used as is, never written
    return arr[()] if arr.ndim == 0 else arr


def narrow_float(x):
    """x's floating dtype where it is narrower than float64 (float32, float16), else None."""
    dtype = getattr(x, "dtype", None)
    if is_layer(x) or dtype is None or np.dtype(dtype).kind != "f" or np.dtype(dtype).itemsize >= 8:
        return None
    return np.dtype(dtype)


_PASSED = (type(None), bool, np.bool_, str, bytes, int, np.integer)


def _leaf_kind(x, where, f):
    """"diff" for a float leaf inside a structure, "pass" for one passed through; else TypeError."""
    if is_layer(x) or isinstance(x, (float, np.floating)):
        return "diff"
    if isinstance(x, (Static,) + _PASSED):
        return "pass"
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f":
            return "diff"
        if x.dtype.kind in "iub":
            return "pass"
    raise TypeError(
        f"{where} of {name_of(f)} has type {type(x).__name__} ({x!r:.60}), which dualad cannot "
        "differentiate: structures hold float scalars and arrays (differentiated) and int, "
        "bool, str or None (passed through). Wrap it in dualad.static(...) to pass it "
        "through, or make it a dataclass, NamedTuple, tuple, list or dict of floats")


def _path_text(path):
    return "".join(f"[{p!r}]" for p in path)


def _leaf_paths(tree):
    """The path of each leaf of tree, in flatten's order (for error messages)."""
    leaves, treedef = flatten(tree)
    paths = []

    def walk(td, prefix):
        if not td.kind:
            paths.append(prefix)
            return
        keys = td.kind[1] if len(td.kind) == 2 and not isinstance(td.kind[1], int) else range(len(td.children))
        for key, child in zip(keys, td.children):
            walk(child, prefix + (key,))

    walk(treedef, ())
    return leaves, treedef, paths


def argnums_of(argnums, args, f):
    """(positions, several): argnums as a tuple of non-negative ints, and whether it was a tuple."""
    several = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if several else (argnums,)
    for i in nums:
        if not isinstance(i, (int, np.integer)) or not -len(args) <= i < len(args):
            raise ValueError(f"argnums={argnums!r} does not name a positional argument of "
                             f"{name_of(f)} (called with {len(args)})")
    return tuple(int(i) % len(args) for i in nums), several


class Inputs:
    """The differentiated arguments seen as one flat vector of n entries.

    xs[j] is the j-th differentiated leaf (float64 array or scalar, or a number of an
    enclosing transform), of shape shapes[j], at entries offsets[j] : offsets[j] + sizes[j].
    """

    def __init__(self, f, args, argnums):
        self.f = f
        self.args = list(args)
        self.nums, self.several = argnums_of(argnums, args, f)
        # an argument named twice (argnums=(0, 0), as JAX allows) is one input, whose
        # derivative comes back twice (structure)
        self.positions = tuple(dict.fromkeys(self.nums))
        self.xs, self.treedefs, self.slots = [], [], []
        self.names = []  # where each differentiated leaf sits, e.g. "0['w']", for messages
        # a leaf's float dtype narrower than float64 (float32, float16): f runs in float64,
        # and its derivatives come back in the leaf's dtype, as JAX's and autograd's do
        self.dtypes = []
        for i in self.positions:
            leaves, treedef, paths = _leaf_paths(args[i])
            slots = []
            for leaf, path in zip(leaves, paths):
                # slots: (j, None) for differentiated leaf j, (None, leaf) for one passed through
                if not path:  # the argument itself is a leaf: argnums asked for it explicitly
                    slots.append((len(self.xs), None))
                    self.xs.append(check_input(leaf, i, f))
                    self.names.append(str(i))
                elif _leaf_kind(leaf, f"argument {i}{_path_text(path)}", f) == "diff":
                    slots.append((len(self.xs), None))
                    self.xs.append(leaf if is_layer(leaf) else np.asarray(leaf, np.float64)[()])
                    self.names.append(f"{i}{_path_text(path)}")
                else:
                    slots.append((None, leaf.value if isinstance(leaf, Static) else leaf))
                    continue
                self.dtypes.append(narrow_float(leaf))
            self.treedefs.append(treedef)
            self.slots.append(slots)
        self.shapes = [x.shape if is_layer(x) else tuple(np.shape(x)) for x in self.xs]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.offsets = [sum(self.sizes[:j]) for j in range(len(self.sizes))]
        self.n = sum(self.sizes)

    def seed(self, j, lo, hi):
        """Identity columns lo..hi-1 of the flat input, restricted to leaf j."""
        size, offset = self.sizes[j], self.offsets[j]
        seed = np.zeros((size, hi - lo))
        a, b = max(lo, offset), min(hi, offset + size)
        if a < b:
            seed[np.arange(a, b) - offset, np.arange(a, b) - lo] = 1.0
        return seed.reshape(self.shapes[j] + (hi - lo,))

    def _rebuild(self, per_leaf, passed):
        """Each differentiated argument's structure with leaf j replaced by per_leaf[j] and
        passed-through leaves by passed(leaf)."""
        return [treedef.unflatten(passed(leaf) if j is None else per_leaf[j] for j, leaf in slots)
                for treedef, slots in zip(self.treedefs, self.slots)]

    def call(self, make):
        """f(*args) with leaf j of the differentiated arguments replaced by make(j, x_j);
        passed-through leaves go in as they are (dualad.static unwrapped)."""
        # a dualad.static argument outside argnums is passed to f as its value
        args = [a.value if isinstance(a, Static) and i not in self.positions else a
                for i, a in enumerate(self.args)]
        # f gets its own copy of every differentiated array for every call: an f that assigns
        # into its argument must change neither the caller's array nor the next pass's input
        per_leaf = [_laid_out(make(j, fresh(x))) for j, x in enumerate(self.xs)]
        for i, rebuilt in zip(self.positions, self._rebuild(per_leaf, lambda leaf: leaf)):
            args[i] = rebuilt
        return self.f(*args)

    def undifferentiated(self):
        """What f is given besides the differentiated leaves: the other positional arguments,
        the leaves passed through inside the differentiated ones, and the arguments bound to
        f (the keyword arguments of a transform's function, functools.partial)."""
        given = [a for i, a in enumerate(self.args) if i not in self.positions]
        given += [leaf for slots in self.slots for j, leaf in slots if j is None]
        f, seen = self.f, set()
        while f is not None and id(f) not in seen:
            seen.add(id(f))
            if isinstance(f, functools.partial):
                given += list(f.args) + [f.keywords[k] for k in sorted(f.keywords)]
                f = f.func
            else:
                f = getattr(f, "__wrapped__", None)
        return given

    def structure(self, per_leaf):
        """per_leaf[j] placed where leaf j sits (None where a leaf is passed through): the
        structure of args[argnums], a tuple of them for tuple argnums."""
        per_leaf = [piece if dtype is None or not isinstance(piece, (np.ndarray, np.floating))
                    else plain(np.asarray(piece).astype(dtype))
                    for piece, dtype in zip(per_leaf, self.dtypes)]
        pieces = self._rebuild(per_leaf, lambda leaf: None)
        if not self.several:
            return pieces[0]
        return tuple(pieces[self.positions.index(i)] for i in self.nums)

    def split(self, flat, out_shape):
        """Cut the trailing flat axis of `flat` into one piece per leaf, in the arguments'
        structure: each piece has shape out_shape + the leaf's shape."""
        return self.structure([plain(np.reshape(flat[..., o:o + s], out_shape + sh))
                               for o, s, sh in zip(self.offsets, self.sizes, self.shapes)])


def _laid_out(x):
    """A seeded input with its tangents laid out as its value (an F-ordered argument's seeds
    are made in C order), so that NumPy's calls read and view both alike."""
    if isinstance(x, ForwardNumber) and not isinstance(x.value, ForwardNumber):
        x._set_components(tuple(in_layout(c, x.value) for c in x.components))
    return x


def read_output(out, tag, f):
    """(value, components) of one output leaf for this tag; components None where constant."""
    if is_layer(out):
        check_live(out)
        if out.tag == tag:
            return out.value, out.components
        if out.tag > tag:
            raise RuntimeError(f"{name_of(f)} returned a dual number of an inner transform that "
                               "is still alive: a perturbation escaped its transform")
        return out, None
    if isinstance(out, (float, int, np.floating, np.integer)) and not isinstance(out, (bool, np.bool_)):
        return np.float64(out), None
    if isinstance(out, np.ndarray) and out.dtype.kind in "fiu":
        return out.astype(np.float64), None
    if isinstance(out, np.ndarray) and out.dtype == object:  # np.array([...]) of numbers
        return read_output(from_objects(out), tag, f)
    raise TypeError(f"{name_of(f)} returned {type(out).__name__} ({out!r:.60}); dualad "
                    "differentiates functions that return floats or arrays of floats, or "
                    "tuples, lists, dicts, NamedTuples and dataclasses of them")


def read_outputs(out, tag, f):
    """(treedef, [(value, components) per leaf]) of f's output tree for this tag; a None
    leaf (a gradient's passed-through leaf) reads as (None, None)."""
    leaves, treedef = flatten(out)
    if not treedef.kind:  # a single output leaf: None is not a number
        return treedef, [read_output(out, tag, f)]
    return treedef, [(None, None) if leaf is None else read_output(leaf, tag, f) for leaf in leaves]


def shape_key(args):
    """What a mode decision depends on: each argument's structure and leaf shapes."""
    key = []
    for a in args:
        leaves, treedef = flatten(a)
        key.append((treedef, tuple(("layer", x.shape) if is_layer(x) else
                                   (np.shape(x) if isinstance(x, (np.ndarray, float, np.floating))
                                    else type(x).__name__) for x in leaves)))
    return tuple(key)


def strip_newer(tree, tag):
    """tree with every number of a transform newer than `tag` replaced by its value: the
    auxiliary output of has_aux carries no derivative out of its transform (as in JAX)."""
    leaves, treedef = flatten(tree)

    def strip(x):
        while is_layer(x) and x.tag > tag:
            x = x.value
        return x

    return treedef.unflatten(strip(x) for x in leaves)
