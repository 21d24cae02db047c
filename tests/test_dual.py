"""Dual numbers (dual.py, number.py): shape attributes, comparisons by value, the constructor,
and the errors for what would drop a derivative."""

import numpy as np
import pytest

from dualad import Dual


def test_len_iter_and_shape_attributes():
    d = Dual(np.arange(6.0).reshape(2, 3), np.zeros((2, 3, 4)))
    assert len(d) == 2 and d.shape == (2, 3) and d.ndim == 2 and d.size == 6
    assert [row.shape for row in d] == [(3,), (3,)]
    assert d.T.shape == (3, 2) and d.reshape(3, 2).shape == (3, 2)
    with pytest.raises(TypeError, match="len"):
        len(Dual(1.0, [1.0]))


def test_comparisons_are_by_value():
    a, b = Dual(1.0, [1.0]), Dual(2.0, [-5.0])
    assert a < b and b > a and a <= 1.0 and 2.0 >= b and a != b and a == 1.0
    assert max(a, b) is b
    np.testing.assert_array_equal(Dual(np.array([1.0, 3.0]), np.eye(2)) > 2.0, [False, True])


def test_dual_constructor_validates_shapes():
    with pytest.raises(ValueError, match="partials must have shape"):
        Dual(np.zeros(3), np.zeros((2, 1)))


def test_float_and_math_module_raise_clear_errors():
    import math

    d = Dual(1.0, [1.0])
    with pytest.raises(TypeError, match="would drop its derivative.*np.sin.*dualad.math"):
        float(d)
    with pytest.raises(TypeError, match="would drop its derivative"):
        math.sin(d)
    with pytest.raises(TypeError, match="would drop its derivative"):
        np.asarray(Dual(np.ones(2), np.ones((2, 1))), dtype=float)
    # without a dtype NumPy holds the entries as objects, each a Dual
    objects = np.asarray(Dual(np.ones(2), np.ones((2, 1))))
    assert objects.dtype == object and isinstance(objects[1], Dual)


def test_storing_a_dual_in_a_float_array_raises_clearly():
    y = np.zeros(3)
    # NumPy re-raises our TypeError as "setting an array element with a sequence"; ours is
    # its direct cause, printed in the traceback.
    with pytest.raises((TypeError, ValueError)) as err:
        y[0] = Dual(1.0, [1.0])
    assert "np.zeros_like" in str(err.value) + str(err.value.__cause__)
    with pytest.raises(TypeError, match="a = a \\+ dual"):
        y += Dual(np.ones(3), np.ones((3, 1)))


def test_dual_as_index_is_refused():
    x = Dual(np.ones(3), np.eye(3))
    with pytest.raises(TypeError, match="index"):
        x[Dual(1.0, [1.0])]


def test_int_of_a_dual_truncates_its_value():
    assert int(Dual(2.7, [1.0])) == 2
