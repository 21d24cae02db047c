"""Kernels called from Python (dualad/dispatch.py's picks): only the kernel the arguments need
is compiled, forward passes are as wide as N (up to 12), keyword arguments reach f, and the
same kernel object still compiles whole inside njit code."""

import numba
import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

import dualad


@numba.njit
def _weighted_rosen(x, scale, shift=1.0):
    s = 0.0
    for i in range(len(x) - 1):
        s += scale * (x[i + 1] - x[i] ** 2) ** 2 + (shift - x[i]) ** 2
    return s


_python = _weighted_rosen.py_func  # the same function on the Python path


class _Compiles:
    """The compiled specialisations made while the block runs: (function name, argument types)."""

    def __enter__(self):
        self.made, self.original = [], Dispatcher.compile
        made, original = self.made, self.original

        def compile_and_record(dispatcher, sig):
            before = len(dispatcher.overloads)
            result = original(dispatcher, sig)
            if len(dispatcher.overloads) > before:
                made.append((dispatcher.py_func.__qualname__, str(sig)))
            return result

        Dispatcher.compile = compile_and_record
        return self

    def __exit__(self, *exc):
        Dispatcher.compile = self.original


def test_auto_gradient_from_python_compiles_only_the_picked_mode():
    grad = dualad.grad(_weighted_rosen)
    small, large = np.linspace(0.1, 1.0, 10), np.linspace(0.1, 1.0, 30)
    with _Compiles() as small_call:
        got = grad(small, 100.0)
    np.testing.assert_allclose(got, dualad.grad(_python)(small, 100.0), rtol=1e-14)
    assert not grad.overloads  # the njit-callable auto kernel itself was not compiled
    kinds = " ".join(name + sig for name, sig in small_call.made)
    assert "Active" not in kinds  # no tape kernel below COMPILED_REVERSE_FROM inputs
    assert "Dual(12)" in kinds  # one pass: the narrowest width that holds 10 partials
    assert "Dual(8)" not in kinds
    with _Compiles() as large_call:
        got = grad(large, 100.0)
    np.testing.assert_allclose(got, dualad.grad(_python)(large, 100.0), rtol=1e-13)
    large_kinds = " ".join(name + sig for name, sig in large_call.made)
    # reverse mode from 12 inputs on: the generated adjoint (plain floats), which covers this
    # loop, as inside njit code; no forward pass and no tape
    assert "Dual" not in large_kinds and "Active" not in large_kinds, large_kinds
    assert not grad.overloads


def test_a_kernel_called_from_python_and_from_njit_code_agree():
    grad = dualad.grad(_weighted_rosen, mode="forward")

    @numba.njit
    def inside(x):
        return grad(x, 100.0)

    x = np.linspace(0.1, 1.0, 10)
    np.testing.assert_array_equal(inside(x), grad(x, 100.0))  # chunk 8 inside, 10 outside
    assert grad.overloads  # compiled for the njit caller


def test_keyword_arguments_reach_f_on_the_compiled_path():
    x = np.linspace(0.1, 1.0, 5)
    grad = dualad.grad(_weighted_rosen, mode="forward")
    expected = dualad.grad(_python)(x, 100.0, shift=2.0)
    np.testing.assert_allclose(grad(x, 100.0, shift=2.0), expected, rtol=1e-14)
    np.testing.assert_allclose(grad(x, scale=100.0, shift=2.0), expected, rtol=1e-14)
    np.testing.assert_allclose(grad(x, 100.0), dualad.grad(_python)(x, 100.0), rtol=1e-14)
    with pytest.raises(TypeError, match="shift"):
        grad(x, 100.0, 2.0, shift=3.0)  # bound twice: Python's own error
    hessian = dualad.hessian(_weighted_rosen)
    np.testing.assert_allclose(hessian(x, scale=100.0, shift=2.0),
                               dualad.hessian(_python)(x, 100.0, shift=2.0), rtol=1e-13)


def test_keyword_only_parameters_name_the_python_path():
    @numba.njit
    def f(x, *, k):
        return x[0] * k

    with pytest.raises(TypeError, match="jit=False"):
        dualad.grad(f, mode="forward")(np.ones(2), k=2.0)


@pytest.mark.parametrize("n", [1, 10, 12, 13, 25])
def test_hessians_one_block_and_blocks_from_python(n):
    x = np.linspace(0.2, 1.3, n)
    np.testing.assert_allclose(_HESSIAN(x, 100.0), dualad.hessian(_python)(x, 100.0), rtol=1e-13,
                               atol=1e-12)


_HESSIAN = dualad.hessian(_weighted_rosen)


@numba.njit
def _layer(x, rows):
    return np.tanh(rows @ x)


def test_auto_jacobian_from_python_learns_m_on_its_first_call():
    rng = np.random.default_rng(4)
    jacobian = dualad.jacobian(_layer)
    for shape in ((30, 2), (1, 30)):  # tall: forward mode; wide: the tape after the first call
        rows = rng.normal(size=shape)
        x = rng.normal(size=shape[1])
        expected = dualad.jacobian(_layer.py_func)(x, rows)
        for _ in range(2):
            np.testing.assert_allclose(jacobian(x, rows), expected, rtol=1e-12, atol=1e-15)
    assert not jacobian.overloads


def test_hvp_keyword_arguments_go_to_f_not_to_v():
    # guards: hvp's kernel takes (x, v, *f's other arguments); keywords bound to f's own
    # parameters put v into `scale`
    x, v = np.linspace(0.1, 1.0, 4), np.array([1.0, 0.0, 0.0, 0.0])
    for hvp in (dualad.hvp(_weighted_rosen), dualad.hvp(_weighted_rosen, chunk=2)):
        np.testing.assert_allclose(hvp(x, v, 100.0, shift=2.0),
                                   dualad.hvp(_python)(x, v, 100.0, shift=2.0), rtol=1e-14)
        np.testing.assert_allclose(hvp(x, v, scale=3.0), dualad.hvp(_python)(x, v, scale=3.0),
                                   rtol=1e-14)


def test_differentiated_arguments_come_by_position_as_on_the_python_path():
    x = np.linspace(0.1, 1.0, 4)
    for jit in (None, False):
        with pytest.raises(ValueError, match="argnums=0 does not name a positional argument"):
            dualad.grad(_weighted_rosen, jit=jit)(x=x, scale=1.0)


@numba.njit
def _two_outputs(a, b):
    return np.array([a[0] * b, a[1] ** 2, b ** 3])


def test_auto_jacobian_of_tuple_argnums_learns_m_from_every_block():
    # guards: the first call's M read with np.size of a tuple of blocks
    jacobian = dualad.jacobian(_two_outputs, argnums=(0, 1))
    expected = dualad.jacobian(_two_outputs.py_func, argnums=(0, 1))(np.array([1.0, 2.0]), 3.0)
    for _ in range(2):
        got = jacobian(np.array([1.0, 2.0]), 3.0)
        for block, want in zip(got, expected):
            np.testing.assert_allclose(block, want, rtol=1e-15)


def test_a_few_widths_serve_every_n_from_python():
    hessian = dualad.hessian(_weighted_rosen)
    hessian(np.linspace(0.1, 1.0, 9), 100.0)
    with _Compiles() as again:  # 9 and 11 inputs: the same one-block kernel of width 12
        np.testing.assert_allclose(hessian(np.linspace(0.1, 1.0, 11), 100.0),
                                   dualad.hessian(_python)(np.linspace(0.1, 1.0, 11), 100.0), rtol=1e-13)
    assert not again.made


@numba.njit
def _scaled_map(x, scale=2.0, shift=0.0):
    return scale * np.sin(x) * x[0] + shift * x ** 2


def test_keyword_arguments_in_every_transform_equal_the_python_path():
    # the kind of the hvp bug: each transform's kernel binds keywords in its own layout
    x, v = np.linspace(0.1, 1.0, 3), np.array([0.5, -1.0, 2.0])
    scalar = (_weighted_rosen, {"shift": 2.0})
    vector = (_scaled_map, {"shift": 2.0, "scale": 0.5})
    for transform, (f, keywords), extra in [(dualad.value_and_grad, scalar, (100.0,)),
                                            (dualad.jacfwd, vector, ()), (dualad.jacrev, vector, ()),
                                            (dualad.jacobian, vector, ())]:
        got = transform(f)(x, *extra, **keywords)
        expected = transform(f, jit=False)(x, *extra, **keywords)
        for g, e in zip(got if isinstance(got, tuple) else (got,),
                        expected if isinstance(expected, tuple) else (expected,)):
            np.testing.assert_allclose(g, e, rtol=1e-14, err_msg=transform.__name__)
    np.testing.assert_allclose(dualad.hvp(_weighted_rosen, mode="forward-over-reverse")(x, v, 1.0, shift=3.0),
                               dualad.hvp(_python)(x, v, 1.0, shift=3.0), rtol=1e-13)


@numba.njit
def _writes_into_its_argument(x):
    y = np.sin(x) * x[1]
    x[0] = y[0] * x[1]
    return y * x[::-1]


def test_a_sparse_forward_jacobian_compiles_f_on_the_dense_kernels_duals():
    """From Python, the compressed forward Jacobian takes the dense forward kernel's width
    for N (one pass up to 12 inputs), so f is compiled on one dual type for both (here a
    materialised DualArray: f writes into its argument)."""
    x = np.linspace(0.1, 1.0, 4)
    dense = dualad.jacobian(_writes_into_its_argument, mode="forward")(x)
    with _Compiles() as sparse_call:
        sparse = dualad.jacobian(_writes_into_its_argument, mode="forward", sparsity=True)(x)
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-15)
    np.testing.assert_allclose(dense, dualad.jacobian(_writes_into_its_argument.py_func, mode="forward")(x),
                               rtol=1e-14)
    assert not [sig for name, sig in sparse_call.made if name == "_writes_into_its_argument" and "Dual(" in sig]


@pytest.mark.parametrize("first", ["forward", "reverse"])
def test_a_function_that_writes_into_its_argument_is_typed_on_a_seed_once(first):
    """The seed probe's verdict is kept on f (on its promoting copy, which kernels call): its
    next kernels give it a materialised input without typing it on their seed first; every
    mode stays exact, and the caller's x unchanged."""
    from dualad.jit.promote import promoting

    f = numba.njit(lambda x: np.sum(_writes_into_its_argument(x)))
    x = np.array([0.5, -1.2, 2.0])
    expected = dualad.grad(f.py_func)(x.copy())
    np.testing.assert_allclose(dualad.grad(f, mode=first)(x), expected, rtol=1e-14)
    copy = promoting(f)
    assert copy.__dualad_writes_input__
    asked, original = [], copy.get_call_template
    copy.get_call_template = lambda args, kws: (asked.append(args), original(args, kws))[1]
    second = "reverse" if first == "forward" else "forward"
    np.testing.assert_allclose(dualad.grad(f, mode=second)(x), expected, rtol=1e-14)
    assert asked and not [args for args in asked if "Seed" in str(args[0]) or "ActiveArray" in str(args[0])]
    np.testing.assert_array_equal(x, [0.5, -1.2, 2.0])


@numba.njit
def _cubic(x):
    return x[0] ** 3 + x[0] * x[1]


def test_fs_dual_specialisations_carry_no_python_or_c_wrapper():
    # only kernels call them; numba builds and optimises each wrapper as a module of its own
    from dualad.jit.promote import promoting

    x = np.array([1.5, -0.5])
    np.testing.assert_allclose(dualad.grad(_cubic)(x), [3 * 1.5 ** 2 - 0.5, 1.5])
    np.testing.assert_allclose(_cubic(x), _cubic.py_func(x))  # f's own float code keeps its wrapper
    dual_results = [result for sig, result in promoting(_cubic).overloads.items()
                    if any("Seed" in str(t) or "Dual" in str(t) for t in sig)]
    assert dual_results
    for result in dual_results:
        names = {function.name for function in result.library._final_module.functions}
        assert result.fndesc.llvm_cpython_wrapper_name not in names
        assert result.fndesc.llvm_cfunc_wrapper_name not in names
    float_result = _cubic.overloads[(numba.typeof(x),)]
    assert float_result.fndesc.llvm_cpython_wrapper_name in {
        function.name for function in float_result.library._final_module.functions}


# ---- n-D inputs from Python: differentiated as their flat view, results shaped as the input -------------
@numba.njit
def _pair_energy(positions, strength):
    e = 0.0
    for i in range(positions.shape[0]):
        for j in range(i + 1, positions.shape[0]):
            d = positions[i] - positions[j]
            r2 = np.sum(d * d)
            e += strength * (1.0 / r2 ** 6 - 1.0 / r2 ** 3)
    return e


@numba.njit
def _per_atom(positions):
    return np.sin(positions[:, 0]) * positions[:, 1] + positions[:, 2] ** 2


_POSITIONS = np.random.default_rng(3).normal(size=(4, 3)) * 2.0


@pytest.mark.parametrize("transform, f, extra, shape", [
    (dualad.grad, _pair_energy, (1.5,), (4, 3)),
    (dualad.value_and_grad, _pair_energy, (1.5,), (4, 3)),
    (dualad.jacobian, _per_atom, (), (4, 4, 3)),
    (dualad.hessian, _pair_energy, (1.5,), (4, 3, 4, 3)),
])
def test_an_n_d_input_from_python_is_differentiated_as_its_flat_view(transform, f, extra, shape):
    """An (N, 3) array of positions, as molecular codes pass it: the kernel of the flat view,
    its result shaped as the Python path's (which takes any shape)."""
    got = transform(f)(_POSITIONS, *extra)
    expected = transform(f.py_func)(_POSITIONS, *extra)
    if transform is dualad.value_and_grad:
        assert got[0] == pytest.approx(expected[0], rel=1e-14)
        got, expected = got[1], expected[1]
    assert got.shape == shape
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-11)


def test_n_d_inputs_keep_their_layout_and_are_never_modified():
    """An F-ordered input reads as NumPy reads it (C order of its entries), hvp's v is shaped as
    x, and the caller's arrays are unchanged."""
    x = np.asfortranarray(_POSITIONS)
    v = np.ones_like(_POSITIONS)
    before, v_before = x.copy(), v.copy()
    got = dualad.hvp(_pair_energy)(x, v, 1.5)
    np.testing.assert_allclose(got, dualad.hvp(_pair_energy.py_func)(x, v, 1.5), rtol=1e-10, atol=1e-10)
    assert got.shape == (4, 3)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(v, v_before)
    with pytest.raises(ValueError, match="give v the shape of x"):
        dualad.hvp(_pair_energy)(x, v.ravel(), 1.5)
    three = np.random.default_rng(4).normal(size=(2, 2, 3)) * 2.0
    np.testing.assert_allclose(dualad.grad(_pair_energy)(three.reshape(4, 3), 1.5).reshape(2, 2, 3),
                               dualad.grad(_pair_energy.py_func)(three.reshape(4, 3), 1.5).reshape(2, 2, 3))
