"""The stacks generated code saves loop-carried values on, and a range's trip count.

A stack is a header of four int64, [size, capacity, data address, owner], made once per
call: pushes and pops read and write through the header and never rebind an array, so a
loop that pushes holds no array that numba would reference-count at every iteration (a
growable array reassigned inside the loop is many times slower:
docs/decisions/0005-measured-constants-in-code.md). Growing doubles the data, which the
header keeps alive by its owner (runtime.keep) until `release`.

A while loop's iterations push their values and the reverse sweep pops them, last first;
the loops inside another loop's reverse sweep push and pop on the same stacks, nested.
"""

import numba
import numpy as np

from ..runtime import address_of, drop, float_pointer, int_pointer, keep

__all__ = ["floats", "ints", "push_float", "pop_float", "push_int", "pop_int", "release", "trip_count"]

_SIZE, _CAPACITY, _DATA, _OWNER = 0, 1, 2, 3


@numba.njit(inline="always")
def _made(data):
    header = np.empty(4, np.int64)
    header[_SIZE], header[_CAPACITY] = 0, data.size
    header[_DATA], header[_OWNER] = address_of(data), keep(data)
    return header


@numba.njit
def floats(capacity):
    """An empty stack of floats with room for `capacity`."""
    return _made(np.empty(max(capacity, 16)))


@numba.njit
def ints(capacity):
    """An empty stack of int64 (and bools) with room for `capacity`."""
    return _made(np.empty(max(capacity, 16), np.int64))


@numba.njit
def _grow_floats(header):
    capacity = header[_CAPACITY]
    data = np.empty(2 * capacity)
    data[:capacity] = numba.carray(float_pointer(header[_DATA]), capacity)
    drop(header[_OWNER])
    header[_CAPACITY], header[_DATA], header[_OWNER] = 2 * capacity, address_of(data), keep(data)


@numba.njit
def _grow_ints(header):
    capacity = header[_CAPACITY]
    data = np.empty(2 * capacity, np.int64)
    data[:capacity] = numba.carray(int_pointer(header[_DATA]), capacity)
    drop(header[_OWNER])
    header[_CAPACITY], header[_DATA], header[_OWNER] = 2 * capacity, address_of(data), keep(data)


@numba.njit(inline="always")
def push_float(header, value):
    size = header[_SIZE]
    if size == header[_CAPACITY]:
        _grow_floats(header)
    numba.carray(float_pointer(header[_DATA]), size + 1)[size] = value
    header[_SIZE] = size + 1


@numba.njit(inline="always")
def pop_float(header):
    size = header[_SIZE] - 1
    header[_SIZE] = size
    return numba.carray(float_pointer(header[_DATA]), size + 1)[size]


@numba.njit(inline="always")
def push_int(header, value):
    size = header[_SIZE]
    if size == header[_CAPACITY]:
        _grow_ints(header)
    numba.carray(int_pointer(header[_DATA]), size + 1)[size] = value
    header[_SIZE] = size + 1


@numba.njit(inline="always")
def pop_int(header):
    size = header[_SIZE] - 1
    header[_SIZE] = size
    return numba.carray(int_pointer(header[_DATA]), size + 1)[size]


@numba.njit
def release(header):
    """Give the stack's data back (once, at the end of the call)."""
    drop(header[_OWNER])
    header[_OWNER] = 0


@numba.njit(inline="always")
def trip_count(start, stop, step):
    """len(range(start, stop, step))."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // (-step))
