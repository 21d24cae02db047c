"""dualad.vmap of compiled kernels (dualad/jit/vmap.py): bit for bit a serial loop's results,
on numba's threads, from Python and from @njit code, reverse-mode kernels on several threads
at once; an exception inside the parallel loop reaches the caller; kernels and vmap kernels
pickle and run in other processes (dualad.dispatch.rebuilt, jit/kernels.pickled_as).

Few kernels, shared by the tests (each parallel kernel takes seconds to compile)."""

import concurrent.futures
import math
import multiprocessing
import pickle

import numba
import numpy as np
import pytest

import dualad


@numba.njit(cache=True)  # cached: the pickling test's worker processes load its kernels
def model(x, c):
    """(3,) -> (2,), with a scalar parameter c that every element shares."""
    if x[0] > 1e6:
        raise ValueError("model: x[0] is out of range")
    s = 0.0
    for i in range(3):
        s += math.sin(c * x[i]) * x[(i + 1) % 3]
    out = np.empty(2)
    out[0] = s
    out[1] = x[0] * x[1] / (1.0 + x[2] ** 2)
    return out


@numba.njit
def energy(x, c):
    return c * (x[0] ** 2 + math.exp(x[1]) * x[2])


@numba.njit
def spring(params, x):
    k, rest = params
    return 0.5 * k * (x - rest) ** 2


@numba.njit
def thread_of(x, y):
    return float(numba.get_thread_id()) + 0.0 * (x + y)


JAC = dualad.jacobian(model)          # auto: forward mode for 3 inputs
JREV = dualad.jacrev(model)           # the compiled tape
VALUE_AND_GRAD = dualad.value_and_grad(energy, mode="forward")
MAPPED_JAC = dualad.vmap(JAC, in_axes=(0, None))
MAPPED_JREV = dualad.vmap(JREV, in_axes=(1, None), out_axes=-1)
MAPPED_VG = dualad.vmap(VALUE_AND_GRAD, in_axes=(0, None))
MAPPED_THREADS = dualad.vmap(thread_of)
SPRING_GRAD = dualad.grad(spring)  # a tuple argument: a tuple back

X = np.random.default_rng(7).normal(size=(3000, 3))
C = 0.7


def serial(kernel, points):
    return np.stack([kernel(x, C) for x in points])


def test_vmap_of_a_jacobian_is_a_compiled_kernel_equal_to_a_serial_loop():
    result = MAPPED_JAC(X, C)
    assert result.shape == (3000, 2, 3) and MAPPED_JAC.strategy == "prange"
    np.testing.assert_array_equal(result, serial(JAC, X))
    assert dualad.vmap(JAC, in_axes=(0, None)) is MAPPED_JAC  # made once per kernel and axes


def test_reverse_mode_kernels_run_on_several_threads_at_once():
    # one thread at a time reuses the tape's pooled buffers, the others record onto their own
    assert numba.get_num_threads() >= 2 or numba.config.NUMBA_NUM_THREADS < 2
    expected = np.moveaxis(serial(JREV, X), 0, -1)  # in_axes 1, out_axes -1: (2, 3, 3000)

    @numba.njit
    def twice(points_by_column, c):  # called from compiled code
        return MAPPED_JREV(points_by_column, c), MAPPED_JREV(points_by_column, c)

    columns = np.ascontiguousarray(X.T)
    first, second = twice(columns, C)
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    np.testing.assert_array_equal(MAPPED_JREV(columns, C), expected)


def test_tuple_outputs_are_stacked_leaf_by_leaf():
    values, grads = MAPPED_VG(X[:500], C)
    pairs = [VALUE_AND_GRAD(x, C) for x in X[:500]]
    np.testing.assert_array_equal(values, [p[0] for p in pairs])
    np.testing.assert_array_equal(grads, np.stack([p[1] for p in pairs]))


def test_tuple_arguments_are_mapped_leaf_by_leaf():
    ks, rests, xs = X[:300, 0], X[:300, 1], X[:300, 2]
    d_k, d_rest = dualad.vmap(SPRING_GRAD)((ks, rests), xs)
    pairs = [SPRING_GRAD((k, r), x) for k, r, x in zip(ks, rests, xs)]
    np.testing.assert_array_equal(d_k, [p[0] for p in pairs])
    np.testing.assert_array_equal(d_rest, [p[1] for p in pairs])


def test_the_threads_are_numbas():
    a, b = np.zeros(2000), np.zeros(2000)
    default = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert set(MAPPED_THREADS(a, b)) == {0.0}
        numba.set_num_threads(default)
        # threads take chunks on demand: on a busy machine one thread may take them all
        assert set(MAPPED_THREADS(a, b)) <= set(map(float, range(default)))
    finally:
        numba.set_num_threads(default)
    with pytest.raises(ValueError, match="different sizes"):
        MAPPED_THREADS(a, b[:10])


def test_an_exception_inside_the_parallel_loop_reaches_the_caller():
    points = X[:400].copy()
    points[321, 0] = 1e7
    with pytest.raises(ValueError, match="x\\[0\\] is out of range"):
        MAPPED_JAC(points, C)
    np.testing.assert_array_equal(MAPPED_JAC(X[:400], C), serial(JAC, X[:400]))  # and it goes on
    # a compile error names its cause first, then what the Python path does at the first
    # element (here model's `if x[0] > 1e6` on a row of a 2-D element)
    with pytest.raises(numba.core.errors.TypingError,
                       match="1-D float64 array(.|\n)*Python path \\(jit=False\\) fails on it too: ValueError"):
        MAPPED_JAC(np.ones((3, 2, 3)), C)


def _call(kernel, *args):
    return kernel(*args)


def test_kernels_pickle_to_other_processes():
    for kernel in (JAC, JREV, MAPPED_JAC):  # in this process: the kernel itself
        assert pickle.loads(pickle.dumps(kernel)) is kernel
    jobs = [(JAC, X[0], C), (JREV, X[1], C), (MAPPED_JAC, X[:50], C)]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        futures = [pool.submit(_call, *job) for job in jobs]
        for future, (kernel, *args) in zip(futures, jobs):
            np.testing.assert_array_equal(future.result(timeout=600), kernel(*args))


def test_kernels_of_closures_and_lambdas_refuse_to_pickle_naming_the_fix():
    def scaled(x):
        return 2.0 * x[0]

    for f in (numba.njit(scaled), numba.njit(lambda x: x[0] * x[1])):
        for kernel in (dualad.grad(f), dualad.vmap(dualad.grad(f))):
            with pytest.raises(pickle.PicklingError, match="closure or a lambda.*module level"):
                pickle.dumps(kernel)
