"""The tuple arithmetic of the compiled duals' partials (jit/intrinsics.py), written on LLVM
vectors: every lane equals the element-by-element IEEE result bit for bit, special values
included (inf · 0 = nan stays nan, -0.0 keeps its sign), at every length that the dual
types use, odd and packed ones too."""

import numba
import numpy as np
import pytest

from dualad.jit.intrinsics import (packed_size, tuple_axpy, tuple_outer_axpy, tuple_scale,
                                   tuple_scale_nonzero, unit_tuple)

SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e308, 5e-324, 3.0])


def lanes(n, shift):
    """n floats cycling through SPECIAL, starting at `shift`, as a tuple."""
    return tuple(float(SPECIAL[(shift + k) % SPECIAL.size]) for k in range(n))


def same_bits(got, expected):
    """Equal bit for bit where not nan (-0.0 is not 0.0), nan where nan."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan), (got, expected)
    assert np.array_equal(got[~nan].view(np.int64), expected[~nan].view(np.int64)), (got, expected)


@numba.njit
def _scale(s, a):
    return tuple_scale(s, a)


@numba.njit
def _scale_nonzero(s, a):
    return tuple_scale_nonzero(s, a)


@numba.njit
def _axpy(s, a, t, b):
    return tuple_axpy(s, a, t, b)


@numba.njit
def _outer(acc, s, b, c):
    return tuple_outer_axpy(acc, s, b, c)


@numba.njit
def _unit(slot):
    return unit_tuple(slot, 7)


@pytest.mark.parametrize("n", [1, 3, 4, 8, 13])
@pytest.mark.parametrize("s", [2.0, -0.0, np.inf, np.nan])
def test_scale_and_axpy_lane_by_lane(n, s):
    a, b = lanes(n, 0), lanes(n, 3)
    same_bits(_scale(s, a), [s * x for x in a])
    same_bits(_axpy(s, a, -1.5, b), [s * x + -1.5 * y for x, y in zip(a, b)])
    # a zero lane (either sign) passes nothing, also against s = inf or nan; nan lanes do
    same_bits(_scale_nonzero(s, a), [0.0 if x == 0.0 else s * x for x in a])


@pytest.mark.parametrize("n1, n2", [(1, 1), (3, 2), (4, 4), (5, 5)])
@pytest.mark.parametrize("s", [0.5, np.inf])
def test_outer_axpy_full_and_packed(n1, n2, s):
    b, c = lanes(n1, 1), lanes(n2, 4)
    # (s·b_i)·c_j added to acc, in that order, as the docstring promises
    full = lanes(n1 * n2, 2)
    same_bits(_outer(full, s, b, c),
              [full[i * n2 + j] + (s * b[i]) * c[j] for i in range(n1) for j in range(n2)])
    if n1 == n2:
        packed = lanes(packed_size(n1), 5)
        pairs = [(i, j) for i in range(n1) for j in range(i, n1)]
        same_bits(_outer(packed, s, b, c), [packed[k] + (s * b[i]) * c[j] for k, (i, j) in enumerate(pairs)])


@pytest.mark.parametrize("slot", [-1, 0, 3, 6, 7])
def test_unit_tuple(slot):
    same_bits(_unit(slot), [1.0 if k == slot else 0.0 for k in range(7)])
