"""Randomized cross-check: random programs over the rule table and part of the NumPy surface,
differentiated in every mode and on both paths, against each other and against central
differences.

A program is Python source text, `def f(x): return <expr>` with x a 1-D float array of length
2..5 and expressions of depth <= 4, so that the same text runs as a plain Python function and
under numba.njit. Inputs are drawn where every operation is smooth with a margin: inside each
rule's domain (rule.domain), away from kinks, poles and jumps, and with the same branch (every
comparison, floor, argmax, ...) at all the finite-difference points, so that central
differences are meaningful.

Checks per program, Python path: forward = reverse = auto = jacrev = jacfwd (relative 1e-10),
and Richardson central differences (tolerance from the differences' own error estimate);
second order: HyperDual = forward-over-reverse = jacfwd(grad) = jacfwd(jacrev), and central
differences of the gradient. Compiled path: many programs batched into one @numba.njit
function (out[k] = expr_k), whose compiled Jacobians (forward, reverse, auto), gradient and
Hessian kernels must equal the Python path's.

The tests: tests/test_fuzz.py (Python path), tests/compiled/test_fuzz_compiled.py (batches).
DUALAD_FUZZ=<count> runs <count> Python-path programs (default 40) and count // 40 compiled
batches (default 1). A failure prints the program's source and the input (repr, exact).
"""

from __future__ import annotations

import math
import os
import traceback

import numba
import numpy as np
import pytest

import dualad
import dualad.math as dmath
from dualad.rules import RULES

COUNT = int(os.environ.get("DUALAD_FUZZ", "40"))
BATCHES = max(1, COUNT // 40)
SEED = 20240612
MARGIN = 0.05          # distance from every domain edge, kink, pole and jump
BOUND = 1e3            # |value| of every subexpression
MIN_NODES, MAX_NODES = 5, 28
MAX_COMPILED_NODES = 12  # numba's compile time grows fast with the batch's size
AD_RTOL = 1e-10        # modes against each other, relative to the result's scale

NAMESPACE = {"np": np, "dmath": dmath}

CONSTANTS = (0.5, 1.5, 2.0, -0.7, 3.0, 0.3, -1.25, 0.9)
INT_POWERS = (0, 1, 2, 3, -1, -2)       # constant exponents: any base, nonzero for p < 0
REAL_POWERS = (0.5, 1.5, 2.0, -0.5, 2.5)  # constant real exponents: positive bases only


# ---- expression trees -----------------------------------------------------------------------
class Node:
    """One subexpression: its source, its operands, its length (None for a scalar) and a
    check(operands, value) -> (smooth with margin here?, the discrete decisions taken)."""

    def __init__(self, src, children=(), length=None, check=None, active=None):
        self.src, self.children, self.length = src, tuple(children), length
        self.check = check or (lambda ops, value: (True, ()))
        # whether the value depends on x (input leaves say so; constants are not)
        self.active = any(c.active for c in self.children) if active is None else active

    def size(self):
        return 1 + sum(c.size() for c in self.children)

    def evaluate(self, x, decisions, cache):
        """The value at x (plain floats); appends this subtree's decisions; None when some
        operation is within MARGIN of a domain edge, kink or pole, or a value is too big."""
        key = id(self)
        if key in cache:
            value, mine = cache[key]
            decisions.extend(mine)
            return value
        mine = []
        ops = []
        for child in self.children:
            v = child.evaluate(x, mine, cache)
            if v is None:
                cache[key] = (None, mine)
                return None
            ops.append(v)
        with np.errstate(all="ignore"):
            value = eval(self.src, NAMESPACE, {"x": x})
        if np.iscomplexobj(value):  # a negative constant to a real power, in Python floats
            cache[key] = (None, mine)
            return None
        ok, taken = self.check(ops, value)
        value_arr = np.asarray(value, dtype=float)
        if not ok or not np.all(np.isfinite(value_arr)) or np.any(np.abs(value_arr) > BOUND):
            value = None
        mine.extend(taken)
        cache[key] = (value, mine)
        decisions.extend(mine)
        return value


def _arr(v):
    return np.atleast_1d(np.asarray(v, dtype=float))


def _inside(values, lo, hi):
    v = _arr(values)
    return bool(np.all((v > lo + MARGIN) & (v < hi - MARGIN)))


def _away(values, points_of):
    """|v - nearest special point| > MARGIN; points_of(v) gives the nearest special point."""
    v = _arr(values)
    return bool(np.all(np.abs(v - points_of(v)) > MARGIN))


def _zero(v):
    return 0.0 * v


def _integer(v):
    return np.round(v)


def _half_integer(v):
    return np.floor(v) + 0.5


# Extra conditions per unary rule on top of rule.domain: kinks, poles and jumps; and the
# decision a piecewise rule takes (it must not change between the difference points).
UNARY_KINKS = {
    "absolute": (lambda a: _away(a, _zero), lambda a: tuple(_arr(a) >= 0)),
    "cbrt": (lambda a: _away(a, _zero), None),
    "reciprocal": (lambda a: _away(a, _zero), None),
    "tan": (lambda a: bool(np.all(np.abs(np.cos(_arr(a))) > 0.1)), None),
    "sign": (lambda a: _away(a, _zero), lambda a: tuple(np.sign(_arr(a)))),
    "floor": (lambda a: _away(a, _integer), lambda a: tuple(np.floor(_arr(a)))),
    "ceil": (lambda a: _away(a, _integer), lambda a: tuple(np.ceil(_arr(a)))),
    "trunc": (lambda a: _away(a, _integer), lambda a: tuple(np.trunc(_arr(a)))),
    "rint": (lambda a: _away(a, _half_integer), lambda a: tuple(np.rint(_arr(a)))),
    "round": (lambda a: _away(a, _half_integer), lambda a: tuple(np.round(_arr(a)))),
}


def _binary_ok(name, a, b):
    """Binary rules: kinks, poles and jumps; and the decisions taken."""
    a, b = np.broadcast_arrays(_arr(a), _arr(b))
    if name == "divide":
        return bool(np.all(np.abs(b) > MARGIN)), ()
    if name in ("maximum", "minimum"):
        return bool(np.all(np.abs(a - b) > MARGIN)), tuple(a > b)
    if name in ("remainder", "fmod", "floor_divide"):
        if not np.all(np.abs(b) > MARGIN):
            return False, ()
        q = a / b
        whole = np.trunc(q) if name == "fmod" else np.floor(q)
        return _away(q, _integer) and bool(np.all(np.abs(b) > 0.2)), tuple(whole)
    if name in ("arctan2", "hypot"):
        return bool(np.all(np.hypot(a, b) > MARGIN)), ()
    return True, ()


def _unary_rule_check(name):
    (lo, hi), = RULES[name].domain
    kink, decide = UNARY_KINKS.get(name, (None, None))

    def check(ops, value):
        a = ops[0]
        ok = _inside(a, lo, hi) and (kink is None or kink(a))
        return ok, (decide(a) if decide else ())

    return check


def call_src(name, args):
    """How a program spells rule `name`: np.<ufunc>, dmath.erf/erfc, np.round."""
    rule = RULES[name]
    if rule.ufunc is not None:
        return f"np.{rule.ufunc.__name__}({', '.join(args)})"
    if name in ("erf", "erfc"):
        return f"dmath.{name}({', '.join(args)})"
    if name == "round":
        return f"np.round({', '.join(args)})"
    raise KeyError(f"the fuzzer does not know how to spell rule {name!r}: add it to call_src")


OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
             "remainder": "%", "floor_divide": "//"}

UNARY = [name for name, rule in RULES.items() if rule.arity == 1]
BINARY = [name for name, rule in RULES.items() if rule.arity == 2]


# What the compiled path does not run (docs/numpy.md, compiled column): np.einsum; and
# np.array([...]) of a list of duals (the compiled path stacks tuples: np.array((a, b))).
NOT_COMPILED = {"einsum", "array"}


class Generator:
    """Random expression trees for inputs of length n. compiled=True keeps to the NumPy
    surface the compiled path documents (NOT_COMPILED)."""

    def __init__(self, rng, n, compiled=False):
        self.rng, self.n, self.compiled = rng, n, compiled

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def const(self):
        c = self.pick(CONSTANTS)
        return Node(f"({c!r})")

    # -- scalars --------------------------------------------------------------------------
    def scalar(self, depth):
        if depth == 0 or self.rng.random() < 0.1:
            if self.rng.random() < 0.85:
                i = int(self.rng.integers(-self.n, self.n))
                return Node(f"x[{i}]", active=True)
            return self.const()
        kind = self.pick(["unary", "unary", "unary", "binary", "binary", "operator", "operator", "power",
                          "reduce", "reduce", "index", "dot", "builtin", "einsum", "norm",
                          "stats", "order", "logaddexp"])
        if self.compiled and kind in NOT_COMPILED:
            kind = "dot"
        return getattr(self, "s_" + kind)(depth - 1)

    def s_unary(self, d):
        return self.unary(self.scalar(d), None)

    def s_binary(self, d):
        return self.binary(self.scalar(d), self.scalar(d) if self.rng.random() < 0.7 else self.const(),
                           None, operator=False)

    def s_operator(self, d):
        return self.binary(self.scalar(d), self.scalar(d) if self.rng.random() < 0.7 else self.const(),
                           None, operator=True)

    def s_power(self, d):
        return self.power(self.scalar(d), lambda: self.scalar(d), None)

    def s_reduce(self, d):
        v = self.vector(d, int(self.rng.integers(2, self.n + 2)))
        name = self.pick(["sum", "prod", "mean", "max", "min", "method_sum"])
        if name == "method_sum":
            return Node(f"{v.src}.sum()", [v])
        if name in ("max", "min"):
            def check(ops, value):
                s = np.sort(_arr(ops[0]))
                gap = s[-1] - s[-2] if name == "max" else s[1] - s[0]
                return bool(gap > MARGIN), (int(getattr(np, "arg" + name)(ops[0])),)
            return Node(f"np.{name}({v.src})", [v], None, check)
        return Node(f"np.{name}({v.src})", [v])

    def s_index(self, d):
        m = int(self.rng.integers(2, self.n + 2))
        i = int(self.rng.integers(-m, m))
        v = self.vector(d, m)
        return Node(f"{v.src}[{i}]", [v])

    def s_dot(self, d):
        m = int(self.rng.integers(2, self.n + 2))
        a, b = self.vector(d, m), self.vector(d, m)
        form = self.pick(["np.dot({}, {})", "({} @ {})"])
        return Node(form.format(a.src, b.src), [a, b])

    def s_einsum(self, d):
        m = int(self.rng.integers(2, self.n + 2))
        a, b = self.vector(d, m), self.vector(d, m)
        spec = self.pick(["i,i->", "...i,...i->...", "i,i", "...i,i->..."])
        if self.rng.random() < 0.3:
            return Node(f"np.einsum({self.pick(['i->', '...i->...'])!r}, {a.src})", [a])
        return Node(f"np.einsum({spec!r}, {a.src}, {b.src})", [a, b])

    def s_norm(self, d):
        v = self.vector(d, int(self.rng.integers(2, self.n + 2)))
        return Node(f"np.linalg.norm({v.src})", [v], None,
                    lambda ops, value: (bool(np.linalg.norm(ops[0]) > MARGIN), ()))

    def s_stats(self, d):
        """Registry statistics of a vector: var, std (away from a constant sample), average."""
        m = int(self.rng.integers(2, self.n + 2))
        v = self.vector(d, m)
        name = self.pick(["var", "std", "average", "var_ddof"])
        if name == "average":
            weights = [float(w) for w in np.round(self.rng.uniform(0.2, 1.0, m), 2)]
            return Node(f"np.average({v.src}, weights={weights!r})", [v])
        src = f"np.var({v.src}, ddof=1)" if name == "var_ddof" else f"np.{name}({v.src})"
        return Node(src, [v], None, lambda ops, value: (bool(np.var(ops[0]) > MARGIN), ()))

    def s_order(self, d):
        """Order statistics: median, quantile (entries apart, so the order is the same nearby)."""
        m = int(self.rng.integers(2, self.n + 2))
        v = self.vector(d, m)
        src = self.pick([f"np.median({v.src})", f"np.quantile({v.src}, 0.3)",
                         f"np.percentile({v.src}, 80.0)"])

        def check(ops, value):
            s = np.sort(_arr(ops[0]))
            return bool(np.all(np.diff(s) > MARGIN)), tuple(np.argsort(ops[0]))
        return Node(src, [v], None, check)

    def s_logaddexp(self, d):
        a, b = self.scalar(d), self.scalar(d)
        name = self.pick(["logaddexp", "logaddexp2"])
        return Node(f"np.{name}({a.src}, {b.src})", [a, b], None,
                    lambda ops, value: (abs(ops[0] - ops[1]) > MARGIN, ()))

    def s_builtin(self, d):
        a, b = self.scalar(d), self.scalar(d)
        name = self.pick(["max", "min"])
        return Node(f"{name}({a.src}, {b.src})", [a, b], None,
                    lambda ops, value: (abs(ops[0] - ops[1]) > MARGIN, (ops[0] > ops[1],)))

    # -- vectors of length m ------------------------------------------------------------------
    def vector(self, depth, m):
        if depth == 0 or self.rng.random() < 0.1:
            return self.v_leaf(m)
        kinds = ["unary", "unary", "unary", "binary", "operator", "operator", "power", "slice", "stack",
                 "concat", "where", "cumsum", "matvec", "roll", "flip", "cumprod", "sort", "diff",
                 "array", "linspace"]
        if m < 2:
            kinds = [k for k in kinds if k != "concat"]
        if self.compiled:
            kinds = [k for k in kinds if k not in NOT_COMPILED]
        return getattr(self, "v_" + self.pick(kinds))(depth - 1, m)

    def v_leaf(self, m):
        if m == self.n:
            return Node("x", (), m, active=True)
        if m < self.n:
            start = int(self.rng.integers(0, self.n - m + 1))
            return Node(f"x[{start}:{start + m}]", (), m, active=True)
        return self.v_stack(0, m)

    def v_unary(self, d, m):
        return self.unary(self.vector(d, m), m)

    def _other(self, d, m):
        r = self.rng.random()
        if r < 0.5:
            return self.vector(d, m)
        return self.scalar(d) if r < 0.8 else self.const()

    def v_binary(self, d, m):
        a, b = self.vector(d, m), self._other(d, m)
        if self.rng.random() < 0.5:
            a, b = b, a
        return self.binary(a, b, m, operator=False)

    def v_operator(self, d, m):
        a, b = self.vector(d, m), self._other(d, m)
        if self.rng.random() < 0.5:
            a, b = b, a
        return self.binary(a, b, m, operator=True)

    def v_power(self, d, m):
        return self.power(self.vector(d, m), lambda: self._other(d, m), m)

    def v_slice(self, d, m):
        form = self.pick(["reverse", "step", "range"])
        if form == "reverse":
            v = self.vector(d, m)
            return Node(f"{v.src}[::-1]", [v], m)
        if form == "step":  # v[::2] of a vector of length 2m - 1
            v = self.vector(d, 2 * m - 1)
            return Node(f"{v.src}[::2]", [v], m)
        extra = int(self.rng.integers(1, 3))
        v = self.vector(d, m + extra)
        start = int(self.rng.integers(0, extra + 1))
        stop = start + m
        stop_src = str(stop) if stop < m + extra else ""
        return Node(f"{v.src}[{start}:{stop_src}]", [v], m)

    def v_stack(self, d, m):
        items = [self.scalar(d) for _ in range(m)]
        if not any(c.active for c in items):  # numba stacks no tuple of plain floats
            items[0] = Node(f"x[{int(self.rng.integers(self.n))}]", active=True)
        return Node(f"np.stack(({', '.join(c.src for c in items)},))", items, m)

    def v_concat(self, d, m):
        k = int(self.rng.integers(1, m))
        a, b = self.vector(d, k), self.vector(d, m - k)
        return Node(f"np.concatenate(({a.src}, {b.src}))", [a, b], m)

    def v_where(self, d, m):
        c, a, b = self.vector(d, m), self.vector(d, m), self.vector(d, m)
        t = self.pick(CONSTANTS)
        return Node(f"np.where({c.src} > {t!r}, {a.src}, {b.src})", [c, a, b], m,
                    lambda ops, value: (_away(ops[0], lambda v: 0.0 * v + t), tuple(_arr(ops[0]) > t)))

    def v_cumsum(self, d, m):
        v = self.vector(d, m)
        return Node(f"np.cumsum({v.src})", [v], m)

    def v_matvec(self, d, m):
        k = int(self.rng.integers(1, self.n + 1))
        a = np.round(self.rng.uniform(-1.0, 1.0, size=(m, k)), 2)
        v = self.vector(d, k)
        rows = ", ".join("[" + ", ".join(repr(float(e)) for e in row) + "]" for row in a)
        form = self.pick(["np.dot(np.array([{}]), {})", "(np.array([{}]) @ {})"])
        return Node(form.format(rows, v.src), [v], m)

    def v_flip(self, d, m):
        v = self.vector(d, m)
        return Node(f"np.flip({v.src})", [v], m)

    def v_cumprod(self, d, m):
        v = self.vector(d, m)
        return Node(f"np.cumprod({v.src})", [v], m)

    def v_sort(self, d, m):
        v = self.vector(d, m)

        def check(ops, value):
            s = np.sort(_arr(ops[0]))
            return bool(np.all(np.diff(s) > MARGIN)), tuple(np.argsort(ops[0]))
        return Node(f"np.sort({v.src})", [v], m, check)

    def v_diff(self, d, m):
        v = self.vector(d, m + 1)
        return Node(f"np.diff({v.src})", [v], m)

    def v_array(self, d, m):
        """np.array([...]) of scalars: an object array of duals, taken back by the next op.
        Every entry is made a number of the transform (+ 0.0 * x[0]): NumPy runs ufuncs on
        an object array entry by entry, by each entry's methods, which plain floats lack
        (docs/user/limitations.md: a documented limit)."""
        items = [self.scalar(d) for _ in range(m)]
        return Node(f"np.array([{', '.join(f'({c.src} + 0.0 * x[0])' for c in items)}])", items, m)

    def v_linspace(self, d, m):
        a, b = self.scalar(d), self.scalar(d)
        return Node(f"np.linspace({a.src}, {b.src}, {m})", [a, b], m)

    def v_roll(self, d, m):
        v = self.vector(d, m)
        return Node(f"np.roll({v.src}, {int(self.rng.integers(1, m + 1))})", [v], m)

    # -- the rule table -----------------------------------------------------------------------
    def unary(self, a, m):
        name = self.pick(UNARY + ["negative_op"])
        if name == "negative_op":
            return Node(f"(-{a.src})", [a], m)
        if self.rng.random() < 0.5:
            a = self.adapt(a, RULES[name].domain[0], m)
        return Node(call_src(name, [a.src]), [a], m, _unary_rule_check(name))

    def adapt(self, a, domain, m):
        """Often map a into a restricted domain, so that the rule's operand is not rejected."""
        lo, hi = domain
        if lo == 0.0 and hi == math.inf:
            form = self.pick(["np.exp({})", "({} ** 2 + 0.5)", "np.hypot({}, 0.4)"])
        elif (lo, hi) == (1.0, math.inf):
            form = self.pick(["({} ** 2 + 1.2)", "(np.cosh({}) + 0.3)"])
        elif (lo, hi) == (-1.0, 1.0):
            form = self.pick(["(0.9 * np.tanh({}))", "(0.8 * np.sin({}))"])
        elif (lo, hi) == (-1.0, math.inf):
            form = "np.exp({})"
        else:
            return a
        return Node(form.format(a.src), [a], m)

    def binary(self, a, b, m, operator):
        name = self.pick(list(OPERATORS) if operator else BINARY)
        if name == "power":
            if m is not None and a.length is None:  # the base carries the length
                a, b = b, a
            return self.power(a, lambda: b, m)
        src = f"({a.src} {OPERATORS[name]} {b.src})" if operator else call_src(name, [a.src, b.src])
        return Node(src, [a, b], m, lambda ops, value: _binary_ok(name, ops[0], ops[1]))

    def power(self, base, exponent, m):
        """x ** p with a constant integer p (any base), a constant real p or a variable
        exponent (positive bases: rule.domain), and c ** e with a positive constant c."""
        form = self.pick(["int", "int", "real", "variable", "constant_base", "np"])
        if form == "int":
            p = self.pick(INT_POWERS)
            p_src = repr(p) if self.rng.random() < 0.5 else repr(float(p))
            return Node(f"({base.src} ** {p_src})", [base], m,
                        lambda ops, value: (p >= 0 or _away(ops[0], _zero), ()))
        if form == "constant_base":
            c = self.pick((0.5, 1.5, 2.0, 3.0))
            return Node(f"({c!r} ** {base.src})", [base], m)
        base = self.adapt(base, (0.0, math.inf), m) if self.rng.random() < 0.6 else base
        positive = lambda ops, value: (_inside(ops[0], 0.0, math.inf), ())  # noqa: E731
        if form == "real":
            return Node(f"({base.src} ** {self.pick(REAL_POWERS)!r})", [base], m, positive)
        e = exponent()
        if self.rng.random() < 0.25:  # a variable exponent that is exactly 0 (x**z is smooth there)
            e = Node(self.pick(["({0} - {0})", "(0.0 * {0})"]).format(e.src), [e], e.length)
        src = f"({base.src} ** {e.src})" if form == "variable" else f"np.power({base.src}, {e.src})"
        return Node(src, [base, e], m, positive)


# ---- programs ---------------------------------------------------------------------------------
class Program:
    def __init__(self, expr, n, x, seed):
        self.expr, self.n, self.x, self.seed = expr, n, x, seed
        self.source = f"def f(x):\n    return {expr.src}\n"
        self.fn = compile_source(self.source)
        self.scalar = expr.length is None

    def describe(self):
        return (f"program (seed {self.seed}):\n{self.source}x = np.array({[float(v) for v in self.x]!r})")


def compile_source(source, name="f", namespace=None):
    ns = dict(NAMESPACE if namespace is None else namespace)
    exec(compile(source, f"<fuzz {name}>", "exec"), ns)
    return ns[name]


def difference_points(x, h):
    """The points central differences with steps h, h/2 and h/4 visit (richardson)."""
    for i in range(len(x)):
        for step in (h, -h, h / 2, -h / 2, h / 4, -h / 4):
            xp = x.copy()
            xp[i] += step
            yield xp


H_FD = 1e-3


def smooth_at(expr, x):
    """Every operation smooth with margin at x, and the same decisions at every difference
    point (twice the gradient's: the Hessian check differences the gradient with the same h)."""
    decisions = []
    if expr.evaluate(x, decisions, {}) is None:
        return False
    for xp in difference_points(x, H_FD):
        other = []
        if expr.evaluate(xp, other, {}) is None or other != decisions:
            return False
    return True


def draw_inputs(rng, n):
    return np.round(rng.uniform(-2.0, 2.0, size=n), 3)


def make_program(seed, compiled=False, n=None, x=None, tries=60):
    """A random program whose operations are all smooth (with margin) at its input. Given x,
    expressions are drawn until one is smooth at that x; otherwise inputs are drawn too."""
    rng = np.random.default_rng([SEED, seed])
    n = int(rng.integers(2, 6)) if n is None else n
    gen = Generator(rng, n, compiled)
    while True:
        depth = int(rng.integers(2, 5))
        expr = gen.scalar(depth) if (compiled or rng.random() < 0.6) else gen.vector(depth, n + int(rng.integers(-1, 2)))
        if not MIN_NODES <= expr.size() <= (MAX_COMPILED_NODES if compiled else MAX_NODES) \
                or not expr.active:
            continue
        for _ in range(1 if x is not None else tries):
            point = draw_inputs(rng, n) if x is None else x
            if smooth_at(expr, point):
                program = Program(expr, n, point, seed)
                # the tree's evaluation is the program's own value (a generator bug otherwise)
                np.testing.assert_array_equal(program.fn(point.copy()), expr.evaluate(point, [], {}))
                return program


# ---- comparison ---------------------------------------------------------------------------------
class Failures:
    """Collects every disagreement of one program, so a failure reports all of them."""

    def __init__(self, program):
        self.program, self.items = program, []

    def close(self, what, got, expected, rtol=AD_RTOL, extra_atol=0.0):
        try:
            got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
        except Exception as exc:  # noqa: BLE001 - a structure where an array was expected
            self.items.append(f"{what}: not an array ({exc})")
            return
        if got.shape != expected.shape:
            self.items.append(f"{what}: shape {got.shape} != {expected.shape}")
            return
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        bad = ~(np.abs(got - expected) <= rtol * scale + extra_atol)
        if np.any(bad):
            self.items.append(f"{what}: max |error| {np.max(np.abs(got - expected)):.3e} "
                              f"(allowed {rtol * scale + np.max(extra_atol):.1e})\n"
                              f"  got      {np.array2string(got, precision=17)}\n"
                              f"  expected {np.array2string(expected, precision=17)}")

    def run(self, what, thunk):
        """thunk()'s result, or None with the exception recorded."""
        try:
            return thunk()
        except Exception:  # noqa: BLE001 - every exception inside the domain is a failure
            self.items.append(f"{what} raised:\n" + traceback.format_exc(limit=-3))
            return None

    def report(self):
        if self.items:
            pytest.fail(self.program.describe() + "\n\n" + "\n\n".join(self.items), pytrace=False)


def richardson(fn, x, h=H_FD):
    """Central differences d/dx_i with one Richardson step, and an error estimate: the
    difference between the Richardson values at steps h and h/2 (O(h⁴) each)."""
    x = np.asarray(x, dtype=float)
    f0 = np.asarray(fn(x.copy()), dtype=float)
    jac, err = np.zeros(f0.shape + x.shape), np.zeros(f0.shape + x.shape)

    def central(i, step):
        xp, xm = x.copy(), x.copy()
        xp[i] += step
        xm[i] -= step
        return (np.asarray(fn(xp), float) - np.asarray(fn(xm), float)) / (2 * step)

    for i in range(x.size):
        d1, d2, d4 = central(i, h), central(i, h / 2), central(i, h / 4)
        r1, r2 = (4 * d2 - d1) / 3, (4 * d4 - d2) / 3
        jac[..., i] = r2
        err[..., i] = np.abs(r2 - r1)
    return jac, err


def fd_close(failures, what, got, fn, x):
    expected, err = richardson(fn, x)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    failures.close(what, got, expected, rtol=1e-6, extra_atol=10.0 * err + 1e-8 * scale)


# ---- the Python path --------------------------------------------------------------------------
PROGRAM_SEEDS = list(range(COUNT))


def check_python_path(program):
    f, x, fail = program.fn, program.x, Failures(program)
    call = lambda transform: fail.run(transform[0], lambda: transform[1](x.copy()))  # noqa: E731
    if program.scalar:
        results = {name: call((name, t)) for name, t in [
            ("grad(mode='forward')", dualad.grad(f, mode="forward")),
            ("grad(mode='reverse')", dualad.grad(f, mode="reverse")),
            ("grad(mode='auto')", dualad.grad(f)),
            ("jacrev(f)", dualad.jacrev(f)),
            ("jacfwd(f)", dualad.jacfwd(f)),
            ("jacobian(mode='reverse')", dualad.jacobian(f, mode="reverse")),
            ("value_and_grad(mode='reverse')[1]", lambda y: dualad.value_and_grad(f, mode="reverse")(y)[1]),
        ]}
        scalar_f = f
    else:
        results = {name: call((name, t)) for name, t in [
            ("jacobian(mode='forward')", dualad.jacobian(f, mode="forward")),
            ("jacobian(mode='reverse')", dualad.jacobian(f, mode="reverse")),
            ("jacobian(mode='auto')", dualad.jacobian(f)),
            ("jacrev(f)", dualad.jacrev(f)),
            ("jacfwd(f)", dualad.jacfwd(f)),
        ]}
        weights = np.linspace(0.5, 1.5, len(np.atleast_1d(f(x.copy()))))
        scalar_f = lambda y: np.dot(f(y), weights)  # noqa: E731
    reference_name = next((k for k, v in results.items() if v is not None), None)
    reference = results.get(reference_name)
    if reference is not None:
        for name, value in results.items():
            if value is not None and name != reference_name:
                fail.close(f"{name} vs {reference_name}", value, reference)
        fd_close(fail, f"{reference_name} vs central differences", reference, f, x)

    second = {name: call((name, t)) for name, t in [
        ("hessian(mode='forward')", dualad.hessian(scalar_f, mode="forward")),
        ("hessian(mode='forward-over-reverse')", dualad.hessian(scalar_f, mode="forward-over-reverse")),
        ("jacfwd(grad(f))", dualad.jacfwd(dualad.grad(scalar_f, mode="forward"))),
        ("jacfwd(jacrev(f))", dualad.jacfwd(dualad.jacrev(scalar_f))),
    ]}
    hyper_name = next((k for k, v in second.items() if v is not None), None)
    hyper = second.get(hyper_name)
    if hyper is not None:
        for name, value in second.items():
            if value is not None and name != hyper_name:
                fail.close(f"{name} vs {hyper_name}", value, hyper)
        fd_close(fail, f"{hyper_name} vs central differences of the gradient", hyper,
                 lambda y: dualad.grad(scalar_f, mode="forward")(y), x)
    fail.report()


# ---- the compiled path: many programs in one njit function --------------------------------------
# Compiling is slow (a hyper-dual Hessian kernel of a few expressions takes ~10 s), so one
# batch of BATCH_SIZE programs makes one function out[k] = expr_k: one forward and one reverse
# Jacobian kernel cover them all; the Hessian kernel differentiates the weighted sum of the
# first HESSIAN_SIZE. Long runs (DUALAD_FUZZ) add the auto Jacobian, the reverse gradient and
# hvp kernels.
BATCH_SIZE, HESSIAN_SIZE = 6, 2
BATCH_N = (3, 5, 2, 4)
LONG_RUN = "DUALAD_FUZZ" in os.environ


def special_points(n):
    """Inputs at special points (0, ±1) and where intermediates overflow or underflow (±1e200,
    exp(±800)): no margin here, but the two paths must still agree there exactly, inf and
    nan included (an overflow met in two association orders, s·(b⊗c) against (s·b)⊗c, is
    nan in one and 0 in the other)."""
    mixed = np.array([0.0, 1.0, -1.0, 0.5, 2.0])[:n]
    huge = np.array([1e200, -1e200, 800.0, -800.0, 1e-200])[:n]
    return [np.zeros(n), np.ones(n), -np.ones(n), mixed, np.full(n, 1e200), huge]


class Batch:
    """BATCH_SIZE scalar programs smooth at one input x, compiled as one vector function
    batch(x) = [expr_0, ..., expr_K-1], and small(x) = Σ_k<HESSIAN_SIZE w_k expr_k."""

    def __init__(self, index):
        n = BATCH_N[index % len(BATCH_N)]
        rng = np.random.default_rng([SEED, 99, index])
        self.x = draw_inputs(rng, n)
        self.programs = [make_program(1_000_000 * (index + 1) + k, compiled=True, n=n, x=self.x)
                         for k in range(BATCH_SIZE)]
        body = ",\n        ".join(p.expr.src for p in self.programs)
        weighted = "\n        + ".join(f"{w!r} * {p.expr.src}" for w, p in zip(
            np.linspace(0.5, 1.5, HESSIAN_SIZE), self.programs[:HESSIAN_SIZE]))
        self.source = (f"def batch(x):\n    return np.stack((\n        {body},\n    ))\n\n\n"
                       f"def small(x):\n    return (\n        {weighted}\n    )\n")
        self.py_batch = compile_source(self.source, "batch")
        self.py_small = compile_source(self.source, "small")
        self.nb_batch = numba.njit(compile_source(self.source, "batch"))
        self.nb_small = numba.njit(compile_source(self.source, "small"))

    def describe(self, rows=None, x=None):
        x = self.x if x is None else x
        parts = [f"compiled batch ({len(self.x)} inputs), x = np.array({[float(v) for v in x]!r})"]
        if rows is None:
            parts.append(self.source)
        else:
            parts += [f"row {k}: {self.programs[k].source}" for k in rows]
        return "\n".join(parts)


_BATCHES = {}


def get_batch(index):
    if index not in _BATCHES:
        _BATCHES[index] = Batch(index)
    return _BATCHES[index]


def numba_as_numpy(b, x):
    """Per row of b's batch, whether the compiled value at x is the Python path's (inf and nan
    alike). Where not, numba's NumPy differs from NumPy (np.percentile([1, 2, inf], 80): numba
    inf, NumPy nan, from their interpolation formulas); each path differentiates its own f
    there, so the two cannot be compared. At special points only: at the batch's smooth
    input every row is compared."""
    # the compiled values on Duals (a compiled jvp's primal; numba's np.stack takes no floats)
    with np.errstate(all="ignore"):
        compiled = dualad.jvp(b.nb_batch, (x.copy(),), (np.zeros_like(x),))[0]
        python = np.asarray(b.py_batch(x.copy()), dtype=float)
    return (np.isnan(compiled) == np.isnan(python)) & (
        np.isclose(compiled, python, rtol=AD_RTOL, atol=0.0) | np.isnan(python))


def comparable(b, x, per_row):
    """agree's rows at x: every row at the batch's smooth input; elsewhere the rows whose
    compiled value is NumPy's (numba_as_numpy), or for small(x) (per_row False) all of them
    if its programs' values are, else none (False)."""
    if x is b.x:
        return None
    rows = numba_as_numpy(b, x)
    if per_row:
        return rows
    return None if rows[:HESSIAN_SIZE].all() else False


def agree(messages, b, what, x, got_thunk, expected_thunk, per_row, rows=None):
    """Compiled against Python: equal to AD_RTOL of the scale (per row for Jacobians), with
    inf and nan in the same places; an exception on one side only is a disagreement. rows:
    the rows to compare (numba_as_numpy; per_row), or False to compare nothing at x."""
    if rows is False:
        return
    outcome = []
    for thunk in (got_thunk, expected_thunk):
        try:
            with np.errstate(all="ignore"):
                outcome.append(("ok", np.asarray(thunk(x.copy()), dtype=float)))
        except Exception as exc:  # noqa: BLE001
            outcome.append(("raised", f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"))
    (gk, got), (ek, expected) = outcome
    if gk != "ok" or ek != "ok":
        if gk != ek:
            messages.append(f"{what}: compiled {gk} {got if gk == 'raised' else ''}, Python path "
                            f"{ek} {expected if ek == 'raised' else ''}\n{b.describe(x=x)}")
        return
    if got.shape != expected.shape:
        messages.append(f"{what}: shape {got.shape} != {expected.shape}\n{b.describe(x=x)}")
        return
    finite = np.where(np.isfinite(expected), np.abs(expected), 0.0)
    axes = tuple(range(1, expected.ndim)) if per_row else None
    scale = np.maximum(1.0, np.max(finite, axis=axes, keepdims=per_row))
    same_special = (np.isnan(got) == np.isnan(expected)) & (np.isinf(got) == np.isinf(expected))
    with np.errstate(all="ignore"):
        close = np.where(np.isfinite(expected), np.abs(got - expected) <= AD_RTOL * scale, got == expected)
    bad = ~(same_special & (close | np.isnan(expected)))
    if per_row and rows is not None:
        bad &= rows.reshape((-1,) + (1,) * (bad.ndim - 1))
    if np.any(bad):
        rows = sorted({int(i) for i in np.argwhere(bad)[:, 0]}) if per_row else None
        pick = (lambda a: a[rows]) if rows else (lambda a: a)  # noqa: E731
        messages.append(f"{what}: compiled != Python path\n{b.describe(rows, x)}\n"
                        f"compiled {np.array2string(pick(got), precision=17)}\n"
                        f"Python   {np.array2string(pick(expected), precision=17)}")


def fail_on(messages):
    if messages:
        pytest.fail("\n\n".join(messages), pytrace=False)
