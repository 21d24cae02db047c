"""The generated adjoint (dualad.jit.adjoint, issue 43 phase 1): gradients equal the tape's
(mode="reverse") to rounding, forward mode's and central differences, for loops, while
loops, branches, jumps, nested calls and every rule of the table; constructs outside the
subset raise Unsupported naming them; kernels run inside other @njit code.

Each function here packs several constructs: every one is compiled for the adjoint, the
tape, forward mode and floats, and numba's compile time dominates the suite."""

import linecache
import math

import numba
import numpy as np
import pytest

import dualad
from dualad.jit import adjoint
from dualad.rules import RULES
from numba_functions import rosen_loop


@numba.njit
def _term(x, i, c=100.0):
    return c * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2


@numba.njit
def _rosen_calls(x):
    """Rosenbrock through a helper that takes the array itself and a default argument."""
    s = 0.0
    for i in range(len(x) - 1):
        s += _term(x, i)
    return s


@numba.njit
def _larger_square(a, b):
    if a > b:
        return a * a
    return b * b + a


@numba.njit
def _newton(x, tol, steps):
    """Newton's square roots to a tolerance on x-dependent values (a while loop inside a
    for loop, with break), continue, an early return, a nested call; then a long while loop
    (its saved values outgrow the stack's first capacity)."""
    s = 0.0
    for i in range(len(x)):
        a = x[i]
        y = 1.0
        while abs(y * y - a) > tol:
            y = 0.5 * (y + a / y)
            if y > 100.0:
                break
        if a < 0.5:
            continue
        s += _larger_square(y, a) * math.sin(a)
        if s > 1e9:
            return s
    z, k = x[0], 0
    while k < steps:
        z = z * 0.999 + math.cos(z) * 1e-3
        k += 1
    return s + z


@numba.njit
def _jumps(x):
    """while True with break and continue on x's values, reading x[k - 1]; early return."""
    t = 0.0
    k = 0
    while True:
        k += 1
        if k >= len(x):
            break
        if x[k] < 0.0:
            t -= x[k] * x[k - 1]
            continue
        t += math.exp(x[k]) * x[0]
    if t > 100.0:
        return t * 0.5
    return t


@numba.njit
def _poly(t, n):
    p = 1.0
    for k in range(n):
        p = p * t + 1.0 / (k + 1)
    return p


@numba.njit
def _branches(x, w):
    """Branches on x (if/elif/else, a conditional expression), reads of another array,
    nested range loops with a break, a callee with a loop, a loop stepping down by 2."""
    s = x[0] if x[0] > 0 else -x[0] * 2.0
    for i in range(1, len(x)):
        if x[i] > x[i - 1]:
            s = s * x[i] + w[i]
        elif x[i] < -0.5:
            s = s - math.tanh(x[i])
        else:
            s = np.sqrt(s * s + x[i] ** 2)
    total = 0.0
    for i in range(len(x)):
        t = x[i]
        for j in range(i):
            t = t * math.cos(x[j]) + w[j]
            if t > 3.0:
                break
        total += t * t + _poly(x[i], 3)
    u = 1.0
    for i in range(len(x) - 1, -1, -2):
        u = u * x[i] if u < 10.0 else u - x[i]
    return s + total * u


def _inside(domain, k):
    """A point inside the open interval `domain` (varied with k)."""
    lo, hi = domain
    if math.isinf(lo) and math.isinf(hi):
        return 0.35 + 0.1 * (k % 5)
    if math.isinf(hi):
        return lo + 0.6 + 0.1 * (k % 3)
    return lo + (hi - lo) * (0.6 + 0.05 * (k % 3))


# numba has no math.fmod or math.cbrt; `/` and `%` of two x's below are operators' spellings
_MISSING_IN_NUMBA = ("math.fmod", "math.cbrt")
_OPERATORS = {"add": "{} + {}", "subtract": "{} - {}", "multiply": "{} * {}", "divide": "{} / {}",
              "power": "{} ** {}", "remainder": "{} % {}", "floor_divide": "{} // {}", "negative": "-{}",
              "positive": "+{}", "absolute": "abs({})"}


def _rules_function(kind):
    """An @njit function summing every rule of the table in one spelling kind (np.*, or
    math.* and Python's operators), each on entries of x of its own inside its domain; and
    that x. Built from source, which the generator reads (linecache)."""
    terms, point = [], []
    for rule in RULES.values():
        call = "({})".format(", ".join(["{}"] * rule.arity))
        if kind == "np":
            spellings = [f"np.{rule.ufunc.__name__}{call}"] if rule.ufunc is not None else []
            spellings += [f"np.round{call}"] if rule.name == "round" else []
        else:
            spellings = [f"math.{m}{call}" for m in rule.math_names if f"math.{m}" not in _MISSING_IN_NUMBA]
            spellings += [_OPERATORS[rule.name]] if rule.name in _OPERATORS else []
        for spelling in spellings:
            args = [f"x[{len(point) + k}]" for k in range(rule.arity)]
            point += [_inside(d, len(point) + k) for k, d in enumerate(rule.domain)]
            if rule.name in ("remainder", "fmod", "floor_divide"):
                point[-2:] = [2.3, 0.7]  # away from the jumps
            terms.append(spelling.format(*args))
    name = f"every_rule_{kind}"
    source = f"def {name}(x):\n    total = 0.0\n" + "".join(f"    total += {t}\n" for t in terms) + \
        "    return total\n"
    filename = f"<tests/compiled/test_adjoint.py: {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "math": math}
    exec(compile(source, filename, "exec"), namespace)
    return numba.njit(namespace[name]), np.array(point)


@numba.njit
def _swaps(x):
    """Tuple assignments of plain names, signed zero constants, and/or in tests (guards:
    `a, b = b, a` lowered as a = b; b = a, and 0.0 and -0.0 merged as one constant)."""
    a, b = x[0], x[1]
    a, b = b, a
    for i in range(2, len(x)):
        if a > b:
            a, b = b, a
        a, b = b, a * x[i]
    s = a + 10.0 * b
    if x[0] > 0.0 and (x[1] < 0.0 or x[2] > 0.0):
        s = s * x[0]
    return s + (math.atan2(0.0, x[3]) - math.atan2(-0.0, x[3])) * x[4]


_NP_RULES, _NP_POINT = _rules_function("np")
_MATH_RULES, _MATH_POINT = _rules_function("math")
X6 = np.array([0.3, -0.4, -0.7, 0.9, 0.2, 0.1])

CASES = {
    "rosenbrock": (rosen_loop, (np.linspace(-1.2, 1.2, 7),), True),
    "calls": (_rosen_calls, (np.linspace(-1.2, 1.2, 5),), False),
    "newton": (_newton, (np.array([0.7, 1.3, 2.0, 0.2, 3.1]), 1e-12, 600), True),
    "jumps": (_jumps, (np.array([0.3, -0.4, 0.5, 0.9, -0.2, 0.1]),), False),
    "branches": (_branches, (X6, np.linspace(0.1, 0.6, 6)), False),
    "swaps and signed zeros": (_swaps, (np.array([0.3, -0.4, 0.7, -0.9, 0.2, 1.1]),), False),
    "np rules": (_NP_RULES, (_NP_POINT,), False),
    "math rules and operators": (_MATH_RULES, (_MATH_POINT,), False),
}


def _central(f, x, args, h=1e-6):
    return np.array([(f(x + h * e, *args) - f(x - h * e, *args)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("case", list(CASES))
def test_the_generated_gradient_equals_the_tape_forward_mode_and_differences(case):
    f, (x, *args), check_grad = CASES[case]
    assert adjoint.covers(f) == (True, "")
    value, gradient = adjoint.value_and_grad(f)(x, *args)
    assert value == pytest.approx(f(x, *args), rel=1e-15, abs=1e-300)
    scale = np.max(np.abs(gradient))
    tape = dualad.grad(f, mode="reverse")(x, *args)
    np.testing.assert_allclose(gradient, tape, rtol=1e-13, atol=1e-15 * scale)
    forward = dualad.grad(f, mode="forward")(x, *args)
    np.testing.assert_allclose(gradient, forward, rtol=1e-13, atol=1e-15 * scale)
    np.testing.assert_allclose(gradient, _central(f, x, args), rtol=1e-6, atol=1e-7 * scale)
    if check_grad:  # the forward sweep without the value: the same reverse sweep
        np.testing.assert_array_equal(adjoint.grad(f)(x, *args), gradient)


def test_what_the_reverse_sweep_saves_and_recomputes():
    """Rosenbrock's reverse sweep recomputes everything from x: no buffer, no stack; Newton's
    loops save their carried values on the float stack; a branch on a loop's accumulator
    saves the accumulator in an array sized by the trip count."""
    x = np.linspace(-1.2, 1.2, 7)
    gradient = adjoint.grad(rosen_loop)
    gradient(x)
    (source,) = gradient.adjoint_sources.values()
    assert "buf_" not in source and "push" not in source and source.count("for ") == 1  # no forward loop
    newton = adjoint.value_and_grad(_newton)
    newton(*CASES["newton"][1])
    (source,) = newton.adjoint_sources.values()
    assert "push_float(SF" in source and "pop_float(SF)" in source
    branches = adjoint.value_and_grad(_branches)
    branches(*CASES["branches"][1])
    (source,) = branches.adjoint_sources.values()
    assert "buf_v_s_1 = np.empty(T_" in source


@numba.njit
def _writes(x):
    y = np.zeros(3)
    y[0] = x[0]
    return y[0]


@numba.njit
def _whole(x):
    return np.sum(x)


@numba.njit
def _sliced(x):
    return x[1:].sum()


@numba.njit
def _falls_off(x):
    for i in range(3):
        if x[i] > 0:
            return x[i]


@numba.njit
def _builtin_max(x):
    return max(x[0], x[1])


@numba.njit
def _recursive(x, n):
    return x[0] if n == 0 else _recursive(x, n - 1)


@numba.njit
def _enumerates(x):
    s = 0.0
    for i, v in enumerate(x):
        s += v
    return s


@numba.njit
def _prints(x):
    print(x[0])
    return x[0]


@numba.njit
def _tries(x):
    try:
        s = x[0]
    except Exception:  # noqa: B902
        s = 1.0
    return s


@numba.njit
def _rebinds(x):
    x = x * 2.0
    return x[0]


@numba.njit
def _or_value(x):
    return (x[0] or 1.0) * x[1]  # one of its operands, and that operand's derivative


@numba.njit
def _draws(x):
    s = 0.0
    for _ in range(3):
        s += math.exp(x[0] * np.random.normal())  # the reverse sweep would draw again
    return s


@pytest.mark.parametrize("f, named", [
    (_or_value, "`and`/`or` as a value"), (_draws, "a random draw"),
    (_writes, "writes into arrays"), (_whole, "`x` used as a whole array"),
    (_sliced, "a slice or a tuple index"), (_falls_off, "may end without returning a value"),
    (_builtin_max, "a call on values of the differentiated array"), (_recursive, "a recursive call"),
    (_enumerates, "a for loop whose target is not a name"), (_prints, "an expression statement"),
    (_tries, "`Try` statements"), (_rebinds, "assigns to its differentiated array"),
], ids=lambda v: getattr(v, "__name__", "")[1:] or None)
def test_an_uncovered_construct_raises_unsupported_naming_it(f, named):
    covered, reason = adjoint.covers(f)
    assert not covered and named in reason
    with pytest.raises(adjoint.Unsupported, match=named.replace("(", r"\(")) as raised:
        adjoint.value_and_grad(f)
    assert isinstance(raised.value, NotImplementedError)  # what a caller falls back to the tape on
    assert not f.overloads  # nothing was compiled


G = adjoint.grad(_rosen_calls)
VG = adjoint.value_and_grad(_jumps)


@numba.njit
def _descends(x, steps):
    for _ in range(steps):
        x = x - 1e-4 * G(x)
    value, gradient = VG(x)
    return x, value + gradient[0]


def test_kernels_are_callable_inside_njit_code():
    x = np.array([0.3, -0.4, 0.5, 0.9, -0.2, 0.1])
    expected = x.copy()
    for _ in range(3):
        expected = expected - 1e-4 * dualad.grad(_rosen_calls, mode="reverse")(expected)
    value, gradient = dualad.value_and_grad(_jumps, mode="reverse")(expected)
    got, total = _descends(x, 3)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert total == pytest.approx(value + gradient[0], rel=1e-13)


@numba.njit
def _infinite_partial(x):
    return 0.0 * math.sqrt(x[0]) + x[1]


def test_an_infinite_partial_meeting_a_zero_adjoint_passes_nothing_as_on_the_tape():
    """A zero adjoint passes nothing back, even through an infinite partial (sqrt' at 0): the
    generated code, the tape and the Python path's reverse mode all give 0 there."""
    x = np.array([0.0, 1.0])
    value, gradient = adjoint.value_and_grad(_infinite_partial)(x)
    assert value == 1.0
    np.testing.assert_array_equal(gradient, [0.0, 1.0])
    np.testing.assert_array_equal(dualad.grad(_infinite_partial, mode="reverse")(x), [0.0, 1.0])
    np.testing.assert_array_equal(dualad.grad(_infinite_partial, mode="reverse", jit=False)(x), [0.0, 1.0])
    np.testing.assert_array_equal(adjoint.value_and_grad(_infinite_partial)(np.array([4.0, 1.0]))[1], [0.0, 1.0])
