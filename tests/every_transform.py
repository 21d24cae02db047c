"""Every transform on one function, both paths, for tests/test_properties.py and
tests/compiled/test_properties_compiled.py: the caller's arrays must stay bit-identical, and
the results of a function that writes into its argument equal its hand-written derivatives."""

import numpy as np

import dualad


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


def run_every_transform(name, f, s, x, jit):
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


def check_against_hand_written(results, f, x, gradient, hessian):
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
        for got, want in zip(leaves(result), leaves(expected[what])):
            if not np.allclose(got, want, rtol=1e-13, atol=1e-13):
                problems.append(f"{what}: got {result!r}, by hand {expected[what]!r}")
                break
    return problems


def leaves(result):
    return list(result) if isinstance(result, tuple) else [result]
