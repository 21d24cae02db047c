"""vmap: a function mapped over a batch axis of its arguments, with JAX's name and meaning.

    vmap(fn, in_axes=0, out_axes=0)(*args)
        in_axes   an int (every positional argument is mapped along that axis), None (every
                  call gets the argument whole) or a tuple of them, one per positional
                  argument; every array leaf of a mapped argument is cut along its axis
        out_axes  an int: where the batch axis goes in each leaf of the result
    result.take(i, out_axes) == fn(*(arg.take(i, axis) for each mapped arg))

Negative axes count from the end, as in JAX. fn gets views of the mapped arguments, as a
loop over X[i] gives it. Arguments go by position only (in_axes names them by position).

Which way the elements run is the result's `.strategy`:
  "prange"  fn is a numba dispatcher (the compiled kernel of any transform of an @njit
            function, or an @njit function itself): a compiled kernel, callable from Python
            and from @njit code, that runs the elements in parallel on numba's threads
            (dualad.jit.vmap); the results equal a serial loop's bit for bit
  "loop"    any other function: a Python loop over the elements, the results stacked with
            NumPy (the Python path evaluates one point at a time)

A compiled vmap kernel pickles as vmap of what it maps (which pickles as the transform that
made it, dualad.dispatch), so it can be sent to other processes (concurrent.futures, Dask).
"""

from __future__ import annotations

import weakref

import numpy as np

from .tree import Static, flatten
from .twin import is_dispatcher, python_twin

__all__ = ["vmap"]

# Compiled vmap kernels alive in this process: vmap of the same kernel and axes, or one
# unpickled here (a Dask worker unpickles it once per task), compiles once.
_MAPPED = weakref.WeakValueDictionary()


def vmap(fn, in_axes=0, out_axes=0):
    """fn mapped over the batch axis of its arguments (module docstring): for a compiled
    kernel (any transform of an @njit function) a compiled kernel running the elements in
    parallel with numba's prange, e.g. vmap(jacobian(f))(X) with X (B, N) -> (B, M, N);
    for other functions a Python loop. `.strategy` says which ("prange" or "loop")."""
    in_axes, out_axes = _checked_axes(in_axes, out_axes)
    if not is_dispatcher(fn):
        return _Loop(fn, in_axes, out_axes)
    key = (fn, in_axes, out_axes)
    mapped = _MAPPED.get(key)
    if mapped is None:
        from .jit import kernels
        from .jit.vmap import vmap as compiled_vmap

        python = _Loop(python_twin(fn), in_axes, out_axes)
        mapped = compiled_vmap(fn, in_axes, out_axes, python, python.first)
        kernels.pickled_as(mapped, _vmapped, lambda: (kernels.reference(fn), in_axes, out_axes))
        _MAPPED[key] = mapped
    return mapped


def _vmapped(fn, in_axes, out_axes):
    """What a pickled vmap kernel is rebuilt by."""
    return vmap(fn, in_axes, out_axes)


def _checked_axes(in_axes, out_axes):
    def axis(a, what):
        if a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool)):
            return None if a is None else int(a)
        raise TypeError(f"vmap: {what} must be an int or None, not {a!r}")

    if isinstance(in_axes, (tuple, list)):
        in_axes = tuple(axis(a, "each entry of in_axes") for a in in_axes)
        if all(a is None for a in in_axes):
            raise ValueError("vmap: in_axes maps no argument (all None): nothing to map over")
    else:
        in_axes = axis(in_axes, "in_axes (or a tuple of them, one per positional argument)")
        if in_axes is None:
            raise ValueError("vmap: in_axes=None maps no argument: nothing to map over")
    if out_axes is None or isinstance(out_axes, (tuple, list, dict)):
        raise TypeError(f"vmap: out_axes must be an int (the batch axis of every output leaf), "
                        f"not {out_axes!r}")
    return in_axes, axis(out_axes, "out_axes")


def _axes(in_axes, n_args):
    if isinstance(in_axes, tuple):
        if len(in_axes) != n_args:
            raise ValueError(f"vmap: in_axes has {len(in_axes)} entries, one per positional "
                             f"argument, but the function was called with {n_args}")
        return in_axes
    return (in_axes,) * n_args


def _mapped_leaf(leaf):
    """Whether a leaf of a mapped argument is cut along the axis (arrays), or passed whole
    (int, bool, str, None and static leaves: dualad's passed-through leaves)."""
    if isinstance(leaf, np.ndarray):
        if leaf.ndim == 0:
            raise ValueError("vmap cannot map a 0-d array: pass in_axes=None for its argument")
        return True
    if isinstance(leaf, (bool, int, str, Static, np.integer, np.bool_)) or leaf is None:
        return False
    raise ValueError(f"vmap maps arrays along their axis, not {type(leaf).__name__} "
                     f"{leaf!r}: pass in_axes=None for an argument every call takes whole")


class _Loop:
    """fn mapped by a Python loop over the batch: .strategy == "loop"."""

    strategy = "loop"

    def __init__(self, fn, in_axes, out_axes):
        self.fn, self.in_axes, self.out_axes = fn, in_axes, out_axes
        self.__doc__ = (f"vmap of {_name(fn)} (in_axes={in_axes!r}, out_axes={out_axes!r}): a "
                        f"Python loop over the batch, results stacked with NumPy")

    def __repr__(self):
        return f"<{self.__doc__}>"

    def __call__(self, *args, **kwargs):
        return self._map(args, kwargs, None)

    def first(self, *args):
        """fn at the batch's first element only."""
        return self._map(args, {}, 1)

    def _map(self, args, kwargs, limit):
        if kwargs:
            raise TypeError(f"vmap takes positional arguments only (in_axes names them by "
                            f"position); got {sorted(kwargs)}: pass them positionally, with "
                            f"in_axes None where every call takes them whole")
        axes = _axes(self.in_axes, len(args))
        cut, n = [], None
        for arg, axis in zip(args, axes):
            leaves, treedef = flatten(arg)
            mapped = [axis is not None and _mapped_leaf(leaf) for leaf in leaves]
            for leaf, m in zip(leaves, mapped):
                if m:
                    size = leaf.shape[_normalised(axis, leaf.ndim, "a mapped argument")]
                    if n is not None and size != n:
                        raise ValueError(f"vmap: the mapped arguments have different sizes "
                                         f"along their in_axes ({n} and {size})")
                    n = size
            cut.append((leaves, treedef, mapped, axis))
        if n is None:
            raise ValueError("vmap: the mapped arguments hold no array to map over")
        if n == 0:
            raise ValueError("vmap: the mapped axis has size 0, so the outputs' shapes are unknown")
        outputs = [self.fn(*(_element(c, i) for c in cut)) for i in range(min(n, limit or n))]
        return _stacked(outputs, self.out_axes)


def _name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _normalised(axis, ndim, what):
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap: {what} has {ndim} dimension(s): axis {axis} is out of range")
    return axis % ndim


def _element(cut, i):
    """Element i of one argument: each mapped leaf at index i of its axis (a view)."""
    leaves, treedef, mapped, axis = cut
    if axis is None:
        return treedef.unflatten(leaves)
    return treedef.unflatten(np.moveaxis(leaf, axis, 0)[i] if m else leaf
                             for leaf, m in zip(leaves, mapped))


def _stacked(outputs, out_axes):
    """The outputs (one per element, one structure) stacked leaf by leaf along out_axes;
    None leaves (a gradient's passed-through leaves) stay None."""
    flat = [flatten(out) for out in outputs]
    treedef = flat[0][1]
    for _, other in flat[1:]:
        if other != treedef:
            raise ValueError(f"vmap: the function returned different structures for different "
                             f"elements ({treedef.describe()} and {other.describe()})")
    leaves = []
    for k in range(treedef.n_leaves):
        column = [f[0][k] for f in flat]
        if all(leaf is None for leaf in column):
            leaves.append(None)
            continue
        shapes = {np.shape(leaf) for leaf in column}
        if len(shapes) > 1:
            raise ValueError(f"vmap: the function returned arrays of different shapes for "
                             f"different elements of the batch ({sorted(shapes)})")
        leaves.append(np.stack([np.asarray(leaf) for leaf in column], axis=out_axes))
    return treedef.unflatten(leaves)
