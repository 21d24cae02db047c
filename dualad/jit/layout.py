"""Memory layout of new 2-D and 3-D arrays of duals: NumPy's order='K'.

NumPy lays a new array out as its operands are (ufuncs, np.where, np.copy, concatenate and
the stacks, cumsum along an axis, astype): np.sin(m.T) is F-ordered, m.T + c (C-ordered c)
is C-ordered. Whether a later ravel or reshape makes a view (and so whether a write through
it reaches the array) depends on that layout, so the compiled path allocates as NumPy does:

    order = keep_order(shape, (strides_of(a, 2), strides_of(b, 2)))  # axes, fastest first
    new_matrix_in(like, rows, cols, order)    # values and components laid out so
    vote(strides_of(block, 2))                # 2-D, one operand at a time: F (1), C (-1), none (0)

keep_order is NumPy's nditer axis ordering (find_best_axis_ordering): an insertion sort of
the axes, C order unless the operands' strides say otherwise, C order where they conflict;
an axis that an operand broadcasts (or has length 1) gives it no say. Checked against NumPy
on random strided, flipped, transposed and broadcast operands (tests/compiled/
test_matrix_compiled.py).
"""

import numpy as np
from numba.core import types

from .cache import overload, register_jitable
from .types import DualMatrixType, DualTensorType, compiled_only, element_of, make_dual_matrix, make_dual_tensor

__all__ = ["keep_order", "strides_of", "new_matrix_in", "new_tensor_in", "copy_in_order", "vote",
           "matrix_order", "matrix_copy_in", "view_strides"]


@register_jitable
def keep_order(shape, operands):
    """The axes of NumPy's order='K' result, fastest first: an int array. operands: a tuple of
    their strides in the result's axes (0 where one broadcasts, or has length 1)."""
    nd = len(shape)
    order = np.empty(nd, np.intp)
    for k in range(nd):
        order[k] = nd - 1 - k
    for i0 in range(1, nd):
        position, j0 = i0, order[i0]
        for i1 in range(i0 - 1, -1, -1):
            j1 = order[i1]
            ambiguous, swap = True, False
            for strides in operands:
                s0, s1 = abs(strides[j0]), abs(strides[j1])
                if shape[j0] == 1:
                    s0 = 0
                if shape[j1] == 1:
                    s1 = 0
                if s0 != 0 and s1 != 0:
                    if s1 <= s0:
                        swap = False  # C order wins a conflict
                    elif ambiguous:
                        swap = True
                    ambiguous = False
            if not ambiguous:
                if swap:
                    position = i1
                else:
                    break
        if position != i0:
            for k in range(i0, position, -1):
                order[k] = order[k - 1]
            order[position] = j0
    return order


@register_jitable
def view_strides(shape, strides, new_shape):
    """(whether an array of shape and strides can be seen as new_shape without a copy, the
    strides of that view: an int array). NumPy's reshape makes a view exactly then (its
    _attempt_nocopy_reshape, C order): each group of old axes that maps onto a group of new
    ones must lie at one step. Axes of length 1 take any stride; sizes must agree."""
    old_dims, old_steps = [1], [0]  # typed lists; the seeds are dropped below
    old_dims.pop()
    old_steps.pop()
    for k in range(len(shape)):
        if shape[k] != 1:
            old_dims.append(shape[k])
            old_steps.append(strides[k])
    new_nd, old_nd = len(new_shape), len(old_dims)
    out = np.zeros(new_nd, np.intp)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < new_nd and oi < old_nd:
        new_span, old_span = new_shape[ni], old_dims[oi]
        while new_span != old_span:
            if new_span < old_span:
                new_span *= new_shape[nj]
                nj += 1
            else:
                old_span *= old_dims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if old_steps[ok] != old_dims[ok + 1] * old_steps[ok + 1]:
                return False, out
        out[nj - 1] = old_steps[oj - 1]
        for nk in range(nj - 1, ni, -1):
            out[nk - 1] = out[nk] * new_shape[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = out[ni - 1] if ni >= 1 else 8
    for nk in range(ni, new_nd):
        out[nk] = last
    return True, out


@register_jitable
def vote(strides):
    """What one operand's 2-D strides say of the result's order: 1 for F, -1 for C, 0 for
    nothing (a broadcast or length-1 axis). NumPy's order is F where some operand says F
    and none says C (keep_order for two axes), so votes can be taken one block at a time."""
    s0, s1 = abs(strides[0]), abs(strides[1])
    if s0 == 0 or s1 == 0:
        return 0
    return -1 if s1 <= s0 else 1


@register_jitable
def matrix_order(fortran):
    """The axes, fastest first, of a C-ordered (fortran False) or F-ordered matrix."""
    order = np.empty(2, np.intp)
    order[0], order[1] = (0, 1) if fortran else (1, 0)
    return order


strides_of = compiled_only("layout", "strides_of")  # (a, nd): a's strides in an nd-D result


@overload(strides_of)
def _strides_of(a, nd):
    """A 2-D or 3-D operand's strides in an nd-D result: 0 on the axes it broadcasts (leading
    ones, and its axes of length 1). A 1-D array or a number never orders two axes (one
    stride at most): all 0."""
    count = nd.literal_value if isinstance(nd, types.IntegerLiteral) else None
    if count is None:
        return None
    if isinstance(a, (DualMatrixType, DualTensorType)):
        ndim = 2 if isinstance(a, DualMatrixType) else 3
    elif isinstance(a, types.Array):
        ndim = a.ndim  # float data, or np.where's boolean condition
    else:
        ndim = 0
    if ndim < 2:
        return (lambda a, nd: (0, 0)) if count == 2 else (lambda a, nd: (0, 0, 0))
    array = (lambda a: a.values) if isinstance(a, (DualMatrixType, DualTensorType)) else (lambda a: a)
    get = register_jitable(array)
    if ndim == 2:
        def two(a, nd):
            v = get(a)
            return (_unless_one(v.shape[0], v.strides[0]), _unless_one(v.shape[1], v.strides[1]))

        def two_in_three(a, nd):
            v = get(a)
            return (0, _unless_one(v.shape[0], v.strides[0]), _unless_one(v.shape[1], v.strides[1]))
        return two if count == 2 else two_in_three

    def three(a, nd):
        v = get(a)
        return (_unless_one(v.shape[0], v.strides[0]), _unless_one(v.shape[1], v.strides[1]),
                _unless_one(v.shape[2], v.strides[2]))
    return three


@register_jitable
def _unless_one(length, stride):
    return 0 if length == 1 else stride


@register_jitable
def _permuted(shape, order):
    """shape in the order the axes are laid out, slowest first."""
    nd = len(shape)
    out = np.empty(nd, np.intp)
    for k in range(nd):
        out[k] = shape[order[nd - 1 - k]]
    return out


new_matrix_in = compiled_only("layout", "new_matrix_in")  # (like, rows, cols, order)
new_tensor_in = compiled_only("layout", "new_tensor_in")  # (like, a, b, c, order)


@overload(new_matrix_in)
def _new_matrix_in(like, rows, cols, order):
    width = DualMatrixType(element_of(like)).width

    def allocate(like, rows, cols, order):
        if order[0] == 1:  # C order: the common case
            return make_dual_matrix(np.empty((rows, cols)), np.empty((rows, cols, width)), like)
        return make_dual_matrix(np.empty((cols, rows)).T,
                                np.empty((cols, rows, width)).transpose((1, 0, 2)), like)
    return allocate


@overload(new_tensor_in)
def _new_tensor_in(like, a, b, c, order):
    width = DualTensorType(element_of(like)).width

    def allocate(like, a, b, c, order):
        if order[0] == 2 and order[1] == 1:
            return make_dual_tensor(np.empty((a, b, c)), np.empty((a, b, c, width)), like)
        laid = _permuted((a, b, c), order)
        slow, middle, fast = order[2], order[1], order[0]
        # inverse permutation: result axis k is axis position[k] of the laid-out array
        position = np.empty(3, np.intp)
        position[slow], position[middle], position[fast] = 0, 1, 2
        values = np.empty((laid[0], laid[1], laid[2])).transpose((position[0], position[1], position[2]))
        components = np.empty((laid[0], laid[1], laid[2], width)).transpose(
            (position[0], position[1], position[2], 3))
        return make_dual_tensor(values, components, like)
    return allocate


@register_jitable
def matrix_copy_in(a, order):
    """A copy of the matrix a laid out in `order` (axes, fastest first)."""
    rows, cols = a.shape
    out = new_matrix_in(a, rows, cols, order)
    out.values[:, :] = a.values
    out.components[:, :, :] = a.components
    return out


copy_in_order = compiled_only("layout", "copy_in_order")  # (a): np.copy of a 2-D or 3-D array of duals


@overload(copy_in_order)
def _copy_in_order(a):
    """np.copy(a), whose order is 'K' (np.copy(M.T) is F-ordered; M.copy() is C-ordered)."""
    if isinstance(a, DualMatrixType):
        return lambda a: matrix_copy_in(a, keep_order(a.shape, (strides_of(a, 2),)))
    if isinstance(a, DualTensorType):
        def tensor(a):
            d, rows, cols = a.shape
            out = new_tensor_in(a, d, rows, cols, keep_order(a.shape, (strides_of(a, 3),)))
            out.values[:, :, :] = a.values
            out.components[:, :, :, :] = a.components
            return out
        return tensor
    return None
