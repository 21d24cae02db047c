"""Forward mode on the Python path: Dual passes and HyperDual blocks.

The differentiated arguments are one flat vector of n entries (arguments.Inputs); a pass
seeds a window of it and reads every output leaf's tangents back.

    jacobian_forward(f, args, argnums, chunk) -> (value tree, Jacobian tree)   ceil(n/chunk) Dual passes
    hessian_forward(f, args, argnums, chunk)  -> Hessian tree       HyperDual blocks ε1 × ε2 on and above
                                                                    the block diagonal, mirrored
    hvp_forward(f, x, v, args, chunk)         -> H·v, shaped as x   ε1 a chunk of unit directions, ε2 = v
    second_derivative_forward(f, args, argnums) -> f'' tree         one HyperDual pass, ε1 = ε2 = 1
    jvp_forward(f, primals, tangents)         -> (value tree, J·v tree)   one Dual pass

Every call draws a fresh tag (number.scoped_tag), finished when it returns.
"""

from __future__ import annotations

import numpy as np

from .arguments import Inputs, argnums_of, check_input, name_of, plain, read_output, read_outputs
from .dual import Dual
from .hyperdual import HyperDual
from .modes import default_chunk, default_hessian_chunk
from .number import assign, scoped_tag
from .tree import flatten, is_node

__all__ = ["jacobian_forward", "hessian_forward", "hvp_forward", "derivative_forward",
           "second_derivative_forward",
           "jvp_forward", "check_scalar", "tangents_like"]


def _output_jacobian(inputs, treedef, values, blocks):
    """The Jacobian tree: f's output structure, each output leaf replaced by the input
    structure of blocks (out_leaf.shape + in_leaf.shape). blocks[l] lists leaf l's
    tangent blocks per pass (None where the leaf was constant or None)."""
    pieces = []
    for value, leaf_blocks in zip(values, blocks):
        if value is None:
            pieces.append(None)
            continue
        shape = tuple(np.shape(value))
        if inputs.n == 0:
            pieces.append(inputs.split(np.zeros(shape + (0,)), shape))
            continue
        full = [np.zeros(shape + (hi - lo,)) if b is None else b for (lo, hi), b in leaf_blocks]
        flat = full[0] if len(full) == 1 else np.concatenate(full, axis=-1)
        pieces.append(inputs.split(flat, shape))
    return treedef.unflatten(pieces)


def jacobian_forward(f, args, argnums, chunk):
    """(f(*args), Jacobian tree) by chunked Dual passes."""
    inputs = Inputs(f, args, argnums)
    width = chunk or default_chunk(inputs.n)
    with scoped_tag() as tag:
        return _forward_passes(f, inputs, width, tag)


def _forward_passes(f, inputs, width, tag):
    """(value tree, Jacobian tree) from ceil(n / width) Dual passes under one tag."""
    blocks, values, treedef = None, None, None
    for lo in range(0, max(inputs.n, 1), width):
        hi = min(lo + width, inputs.n)
        out = inputs.call(lambda j, x: Dual._make(x, (inputs.seed(j, lo, hi),), tag))
        treedef, read = read_outputs(out, tag, f)
        values = [v for v, _ in read]
        if blocks is None:
            blocks = [[] for _ in read]
        for leaf_blocks, (_, comps) in zip(blocks, read):
            leaf_blocks.append(((lo, hi), None if comps is None else comps[0]))
    return treedef.unflatten(values), _output_jacobian(inputs, treedef, values, blocks)


def check_scalar(value, f, what):
    """A clear error unless f's output is a scalar (grad, hessian, hvp)."""
    if is_node(value):
        raise TypeError(f"{what} needs {name_of(f)} to return a scalar; it returned a "
                        f"{type(value).__name__}. If the rest is auxiliary data, pass "
                        "has_aux=True and return (scalar, aux)")
    if np.shape(value) != ():
        raise TypeError(f"{what} needs {name_of(f)} to return a scalar; it returned shape "
                        f"{np.shape(value)}. Use jacobian (or jacfwd) for array outputs")


def _scalar_output(out, tag, f, what):
    """The tangent components of f's scalar output (None where constant); a clear error for
    any other output."""
    if is_node(out):
        check_scalar(out, f, what)
    value, comps = read_output(out, tag, f)
    check_scalar(value, f, what)
    return comps


def hessian_forward(f, args, argnums, chunk):
    """The Hessian tree by HyperDual blocks on and above the block diagonal, mirrored."""
    inputs = Inputs(f, args, argnums)
    width = chunk or default_hessian_chunk(inputs.n)
    with scoped_tag() as tag:
        hess = _hessian_blocks(f, inputs, width, tag)
    return inputs.structure([
        inputs.structure([plain(np.reshape(hess[o1:o1 + s1, o2:o2 + s2], sh1 + sh2))
                          for o2, s2, sh2 in zip(inputs.offsets, inputs.sizes, inputs.shapes)])
        for o1, s1, sh1 in zip(inputs.offsets, inputs.sizes, inputs.shapes)])


def _hessian_blocks(f, inputs, width, tag):
    """The flat (n, n) Hessian from HyperDual blocks on and above the diagonal, mirrored."""
    n = inputs.n
    hess = np.zeros((n, n))
    starts = list(range(0, n, width))
    for b, lo1 in enumerate(starts):
        hi1 = min(lo1 + width, n)
        for lo2 in starts[b:]:
            hi2 = min(lo2 + width, n)
            out = inputs.call(lambda j, x: HyperDual._make(
                x, (inputs.seed(j, lo1, hi1), inputs.seed(j, lo2, hi2),
                    np.zeros(inputs.shapes[j] + (hi1 - lo1, hi2 - lo2))), tag))
            comps = _scalar_output(out, tag, f, "hessian")
            if comps is None:
                continue
            block = comps[2]
            if lo2 == lo1:
                # the upper triangle mirrored, as the compiled kernels' packed symmetric
                # blocks: (s·b_i)·b_j and (s·b_j)·b_i can differ at an overflow (nan and 0)
                upper = np.triu_indices(hi1 - lo1, 1)
                block = assign(block, upper[::-1], block[upper])
            hess = assign(hess, (slice(lo1, hi1), slice(lo2, hi2)), block)
            if lo2 != lo1:
                hess = assign(hess, (slice(lo2, hi2), slice(lo1, hi1)), block.T)
    return hess


def hvp_forward(f, x, v, args, chunk):
    """∇²f(x, *args) · v, structured as x: ε1 carries a chunk of unit directions, ε2 carries v,
    so the ε1ε2 part is a chunk of H·v; no Hessian is formed."""
    inputs = Inputs(f, (x,) + tuple(args), 0)
    directions = tangents_like(inputs, (x,), (v,), f, lambda name: (
        ("v", "x") if name is None else ("v" + name[1:], "x" + name[1:])))
    n, width = inputs.n, chunk or default_chunk(inputs.n)
    pieces = []
    with scoped_tag() as tag:
        for lo in range(0, max(n, 1), width):
            hi = min(lo + width, n)
            # components of f's own (copies): f may assign into its argument
            out = inputs.call(lambda j, x_: HyperDual._make(
                x_, (inputs.seed(j, lo, hi), directions[j][..., None].copy(),
                     np.zeros(inputs.shapes[j] + (hi - lo, 1))), tag))
            comps = _scalar_output(out, tag, f, "hvp")
            pieces.append(np.zeros(hi - lo) if comps is None else comps[2][..., 0])
    flat = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    return inputs.split(flat, ())


def scalar_input(f, x, what):
    """A clear error unless x is a scalar (derivative, second_derivative)."""
    if np.ndim(x) != 0 or isinstance(x, (tuple, list, dict)):
        raise TypeError(f"{what} takes a scalar input; got shape {np.shape(x)}. Use jacfwd, "
                        "grad or jvp for array inputs")


def derivative_forward(f, args, argnums):
    """f'(x) for the scalar args[argnums]: one Dual pass of one partial."""
    (i,), _ = argnums_of(argnums, args, f)
    scalar_input(f, args[i], "derivative")
    return jacobian_forward(f, args, i, 1)[1]


def second_derivative_forward(f, args, argnums):
    """f''(x) for the scalar args[argnums]: one HyperDual pass with ε1 = ε2 = 1."""
    inputs = Inputs(f, args, argnums)
    scalar_input(f, args[inputs.nums[0]], "second_derivative")
    one = np.ones((1,))
    with scoped_tag() as tag:
        out = inputs.call(lambda j, x: HyperDual._make(x, (one, one, np.zeros((1, 1))), tag))
        treedef, read = read_outputs(out, tag, f)
    return treedef.unflatten(plain(np.zeros(np.shape(v)) if c is None else c[2][..., 0, 0])
                             for v, c in read)


def jvp_forward(f, primals, tangents):
    """(f(*primals), J·tangents) in one Dual pass, structured as f's output."""
    inputs = Inputs(f, primals, tuple(range(len(primals))))
    tans = tangents_like(inputs, tuple(primals), tuple(tangents), f, lambda name: (
        ("the tangents", "the primals") if name is None else (f"tangent {name}", f"primal {name}")))
    with scoped_tag() as tag:
        # the tangent copied: f may assign into its argument, which writes the partials
        out = inputs.call(lambda j, x: Dual._make(x, (tans[j][..., None].copy(),), tag))
        treedef, read = read_outputs(out, tag, f)
    return (treedef.unflatten(v for v, _ in read),
            treedef.unflatten(None if v is None else plain(np.zeros(np.shape(v)) if c is None else c[0][..., 0])
                              for v, c in read))


def tangents_like(inputs, primals, tangents, f, names):
    """The tangent of each differentiated leaf, checked against the primals' structure/shapes.
    names(leaf name) gives the tangent's and the primal's names for messages (names(None):
    the whole trees')."""
    primal_leaves, primal_def = flatten(primals)
    tangent_leaves, tangent_def = flatten(tangents)
    if tangent_def != primal_def:
        tangent_word, primal_word = names(None)
        raise ValueError(f"{tangent_word} must have the structure of {primal_word}, "
                         f"{primal_def.describe()}; got {tangent_def.describe()}")
    slots = [j for slots in inputs.slots for j, _ in slots]
    tans = [None] * len(inputs.xs)
    for j, t in zip(slots, tangent_leaves):
        if j is None:
            continue
        tangent_name, primal_name = names(inputs.names[j])
        t = check_input(t, tangent_name, f)
        if np.shape(t) != inputs.shapes[j]:
            raise ValueError(f"{tangent_name} has shape {np.shape(t)} but {primal_name} has shape "
                             f"{inputs.shapes[j]}")
        tans[j] = t
    return tans
