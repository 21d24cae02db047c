"""Properties every transform keeps on every shared test function (tests/functions.py):

(a) a transform never changes its inputs: the caller's arrays (the point, tangents,
    cotangents) are bit-identical after the call, even when f writes into its argument;
(b) forward = reverse = forward-over-reverse = hyper-dual, and for the functions that write
    into their argument, the gradient and Hessian equal the ones written out by hand.

Both paths for the functions that compile: the compiled kernels of the mutating functions are
module-level and shared, so each is compiled once.
"""

import numba
import numpy as np
import pytest
from functions import FUNCTIONS, MUTATING

import dualad

SHARED = [(name, f, x) for name, f, x in FUNCTIONS] + [(name, f, x) for name, f, x, _, _ in MUTATING]
IDS = [name for name, _, _ in SHARED]


def scalar_of(f, x):
    """A scalar function of f, so that gradients and Hessians apply; f itself if scalar."""
    if np.ndim(f(x.copy())) == 0:
        return f
    weights = np.linspace(0.5, 1.5, np.size(f(x.copy())))

    def scalar(y):
        return np.sum(np.reshape(f(y), -1) * weights) ** 2 / 4.0

    return scalar


def transforms(f, s, jit=None):
    """(name, call) for every transform, on the Python path (jit=False) or compiled (jit=None
    with numba dispatchers f and s). Each call(x, v, cotangent) takes the caller's point,
    tangent and output cotangent."""
    python = jit is False
    kw = {"jit": jit} if python else {}
    calls = [
        ("grad(mode='forward')", lambda x, v, ct: dualad.grad(s, mode="forward", **kw)(x)),
        ("grad(mode='reverse')", lambda x, v, ct: dualad.grad(s, mode="reverse", **kw)(x)),
        ("grad(mode='auto')", lambda x, v, ct: dualad.grad(s, **kw)(x)),
        ("value_and_grad(mode='forward')", lambda x, v, ct: dualad.value_and_grad(s, mode="forward", **kw)(x)),
        ("value_and_grad(mode='reverse')", lambda x, v, ct: dualad.value_and_grad(s, mode="reverse", **kw)(x)),
        ("jacfwd", lambda x, v, ct: dualad.jacfwd(f, **kw)(x)),
        ("jacrev", lambda x, v, ct: dualad.jacrev(f, **kw)(x)),
        ("jacobian(mode='forward')", lambda x, v, ct: dualad.jacobian(f, mode="forward", **kw)(x)),
        ("jacobian(mode='reverse')", lambda x, v, ct: dualad.jacobian(f, mode="reverse", **kw)(x)),
        ("jacobian(mode='auto')", lambda x, v, ct: dualad.jacobian(f, **kw)(x)),
        ("hessian(mode='forward')", lambda x, v, ct: dualad.hessian(s, mode="forward", **kw)(x)),
        ("hessian(mode='auto')", lambda x, v, ct: dualad.hessian(s, **kw)(x)),
        ("hvp", lambda x, v, ct: dualad.hvp(s, **kw)(x, v)),
        ("jvp", lambda x, v, ct: dualad.jvp(f, (x,), (v,))),
        ("vjp", lambda x, v, ct: dualad.vjp(f, x)[1](ct)),
    ]
    if python:  # forward-over-reverse and derivatives of a line through x have no kernel
        calls += [
            ("hessian(mode='forward-over-reverse')",
             lambda x, v, ct: dualad.hessian(s, mode="forward-over-reverse", jit=False)(x)),
            ("derivative", lambda x, v, ct: dualad.derivative(
                lambda t, y, w: s(y + t * w), jit=False)(np.array(0.25), x, v)),
            ("second_derivative", lambda x, v, ct: dualad.second_derivative(
                lambda t, y, w: s(y + t * w), jit=False)(np.array(0.25), x, v)),
        ]
    return calls


def tangent_and_cotangent(f, x):
    """The tangent v (shaped like x) and the output cotangent (1.0 for a scalar output)."""
    out_shape = np.shape(f(x.copy()))
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    return v, np.linspace(1.0, 1.5, int(np.prod(out_shape))).reshape(out_shape)


def _run_every_transform(name, f, s, x, jit):
    """Calls every transform on fresh copies of the shared inputs; the caller's arrays must be
    bit-identical afterwards. Returns {transform: result} (or the exception it raised)."""
    results, problems = {}, []
    shared = (x,) + tangent_and_cotangent(f, x)
    for what, call in transforms(f, s, jit):
        args = [a.copy() for a in shared]  # the caller's arrays, fresh for each transform
        try:
            results[what] = call(*args)
        except Exception as exc:  # noqa: BLE001 - recorded, reported with the others
            problems.append(f"{what} raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            continue
        for arg, saved, role in zip(args, shared, ("point x", "tangent v", "cotangent")):
            if arg.tobytes() != saved.tobytes():
                problems.append(f"{what} changed the caller's {role} of {name}:\n"
                                f"  before {saved!r}\n  after  {arg!r}")
    return results, problems


# ---- (a) inputs are never modified --------------------------------------------------------------
@pytest.mark.parametrize("name, f, x", SHARED, ids=IDS)
def test_no_transform_changes_its_inputs(name, f, x):
    s = scalar_of(f, x)
    _, problems = _run_every_transform(name, f, s, x, jit=False)
    assert not problems, "\n".join(problems)


# ---- (b) every mode agrees; the mutating functions have their hand-written derivatives --------
@pytest.mark.parametrize("name, f, x", SHARED, ids=IDS)
def test_forward_reverse_forward_over_reverse_and_hyper_dual_agree(name, f, x):
    s = scalar_of(f, x)
    forward = dualad.jacobian(f, mode="forward")(x.copy())
    np.testing.assert_allclose(dualad.jacobian(f, mode="reverse")(x.copy()), forward, rtol=1e-12,
                               atol=1e-12, err_msg="jacobian reverse vs forward")
    np.testing.assert_allclose(dualad.jacrev(f)(x.copy()), forward, rtol=1e-12, atol=1e-12,
                               err_msg="jacrev vs jacobian forward")
    gradient = dualad.grad(s, mode="forward")(x.copy())
    np.testing.assert_allclose(dualad.grad(s, mode="reverse")(x.copy()), gradient, rtol=1e-12,
                               atol=1e-12, err_msg="grad reverse vs forward")
    hyper = dualad.hessian(s, mode="forward")(x.copy())
    scale = max(1.0, np.max(np.abs(hyper)))
    for what, other in [
        ("forward-over-reverse", dualad.hessian(s, mode="forward-over-reverse")(x.copy())),
        ("jacfwd(grad(mode='reverse'))", dualad.jacfwd(dualad.grad(s, mode="reverse"))(x.copy())),
        ("jacfwd(grad(mode='forward'))", dualad.jacfwd(dualad.grad(s, mode="forward"))(x.copy())),
    ]:
        np.testing.assert_allclose(np.reshape(other, hyper.shape), hyper, rtol=1e-10,
                                   atol=1e-10 * scale, err_msg=f"{what} vs hyper-dual")


@pytest.mark.parametrize("name, f, x, gradient, hessian", MUTATING, ids=[m[0] for m in MUTATING])
def test_functions_that_write_into_their_argument_python_path(name, f, x, gradient, hessian):
    """Every transform sees f evaluated on a copy: the hand-written derivatives, the caller's
    array unchanged."""
    results, problems = _run_every_transform(name, f, f, x, jit=False)
    problems += _check_against_hand_written(results, f, x, gradient, hessian)
    assert not problems, f"{name} at x = {x!r}:\n" + "\n".join(problems)


def _check_against_hand_written(results, f, x, gradient, hessian):
    """Each transform's result against the hand-written value, gradient and Hessian of f on a
    copy of x (the derivatives are taken at x, or along the line x + t·v at t = 0.25)."""
    g, h, value = gradient(x), hessian(x), f(x.copy())
    v = np.linspace(-1.0, 1.0, x.size)  # the tangent of transforms()
    on_line = x + 0.25 * v
    expected = {"grad(mode='forward')": g, "grad(mode='reverse')": g, "grad(mode='auto')": g,
                "value_and_grad(mode='forward')": (value, g), "value_and_grad(mode='reverse')": (value, g),
                "jacfwd": g, "jacrev": g, "jacobian(mode='forward')": g,
                "jacobian(mode='reverse')": g, "jacobian(mode='auto')": g,
                "hessian(mode='forward')": h, "hessian(mode='auto')": h,
                "hessian(mode='forward-over-reverse')": h, "hvp": h @ v, "jvp": (value, g @ v),
                "vjp": (g,),  # the scalar output's cotangent is 1.0
                "derivative": gradient(on_line) @ v, "second_derivative": v @ hessian(on_line) @ v}
    problems = []
    for what, result in results.items():
        for got, want in zip(_leaves(result), _leaves(expected[what])):
            if not np.allclose(got, want, rtol=1e-13, atol=1e-13):
                problems.append(f"{what}: got {result!r}, by hand {expected[what]!r}")
                break
    return problems


def _leaves(result):
    return list(result) if isinstance(result, tuple) else [result]


# ---- the compiled path: kernels of the mutating functions, compiled once ----------------------
COMPILED_MUTATING = [(name, numba.njit(f), x, gradient, hessian) for name, f, x, gradient, hessian in MUTATING]


@pytest.mark.parametrize("name, f, x, gradient, hessian", COMPILED_MUTATING,
                         ids=[m[0] for m in COMPILED_MUTATING])
def test_functions_that_write_into_their_argument_compiled(name, f, x, gradient, hessian):
    """Each compiled kernel either gives the hand-written derivative with the caller's arrays
    unchanged, or refuses to compile with the error that names the problem and the fix (the
    differentiated input is read-only in a compiled transform; copy it first)."""
    results, problems = _run_every_transform(name, f, f, x, jit=None)
    problems = [p for p in problems if not ("raised TypingError" in p and "read-only" in p
                                            and "copy it first" in p)]
    problems += _check_against_hand_written(results, f, x, gradient, hessian)
    assert not problems, f"{name} (compiled) at x = {x!r}:\n" + "\n".join(problems)
