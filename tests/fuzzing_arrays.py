"""Randomized cross-check of 2-D arrays, views and writes: statement-level random programs.

tests/fuzzing.py draws expressions over 1-D arrays; this draws *programs*, sequences of
statements over matrices, vectors and scalars, for what an expression cannot say: 2-D
arrays of duals (from reshape, outer, vstack, column_stack, diag, np.zeros filled by rows,
columns, entries or blocks, products), views kept in names (slices, `.T`, flips, rot90,
`ravel`, `reshape`, `np.atleast_2d`, `np.expand_dims`, rows and columns), in-place operators
on arrays and on views, assignment through views (`m.T[0] = ...`, `np.flip(m)[1] = ...`,
`m[1][2] = ...`, `m.ravel()[k] = ...`), overlapping assignment and in-place operands
(`m[1:] = m[:-1]`, `v[:] = v[::-1]`, `m += m.T`, `m *= m[0]`) and writes into the argument
x. Every value is a smooth function of x (sin, cos, tanh, arctan, exp of a bounded value,
products, sums, matrix products, reductions, a / (1 + b²)): no kinks, so central
differences are meaningful anywhere; every value stays within BOUND at the input.

A batch is PROGRAMS programs in one function `batch(x)` (numba's compile time dominates:
one function per batch is one compile per kernel), each program's statements in turn, its
names prefixed p<k>_, its output out<k> the concatenation of every array and scalar it made
(final values, so every alias is observed); batch(x) returns (out0, ..., x), x last since
programs may write into it. `small(x)` is a weighted sum of the first HESSIAN_PROGRAMS
programs' outputs, for the Hessian.

Generation runs the program as plain NumPy after each drawn statement (the statement is kept
when it runs without a floating-point warning and every value is finite and within BOUND),
so NumPy decides every shape and every aliasing question. Where numba's float code is not
NumPy, the forms are not drawn or the float version spells them otherwise:
* an in-place operator whose operand overlaps its target (`m += m.T`, `m *= m[0]`): numba
  runs it as one loop that reads the operand after writing it; `float_batch` (the values
  check) copies such an operand (Generator.in_place), batch keeps it for the derivatives;
* `ravel` (and writes through it) only where numba's type layout and NumPy's flags give the
  same answer (Var.layout, Generator.ravel_ok): numba's ravel is a view iff the type is 'C',
  NumPy's iff the array is C-contiguous. An elementwise result is 'C' in numba unless all
  its operands are 'F', while NumPy keeps its operands' order (order='K'): the float version
  copies such a new matrix into NumPy's layout (Generator.add_new_matrix), so ravel is drawn
  of F-ordered results too, and the derivative programs check dualad's layouts against NumPy's;
* `reshape` only of 'C' arrays (numba raises otherwise); `np.diag(m)` only inside an
  expression (NumPy: a read-only view, numba: a copy).
Forms dualad rejects by design with an error naming them are not drawn: a dual stored into a
view of a float allocation (every np.zeros is filled with duals in its own statement) and
`m[...] = v` on the compiled path; on the Python path, a buffer every entry of which is a
number is a float array that cannot take a dual, so no assignment stores a constant alone.

Checks per batch (tests/compiled/test_fuzz_arrays_compiled.py): float_batch under numba.njit
equals plain NumPy (values, and what it leaves in x); the Python path's forward and reverse
Jacobians agree and equal Richardson central differences, and its Hessian of small equals
central differences of its gradient; the compiled forward and reverse Jacobians (auto too in
long runs) equal the Python path's and central differences; the compiled Hessian of small
(and reverse gradient in long runs) equals the Python path's; no derivative call changes
the caller's x. DUALAD_FUZZ=<count> runs max(1, count // 40) batches (as tests/fuzzing.py's
compiled batches), each a different random draw; a failure prints the batch's source, the
programs whose rows disagree and x (exact repr).
"""

from __future__ import annotations

import numba
import numpy as np

from fuzzing import AD_RTOL, COUNT, LONG_RUN, SEED, compile_source, richardson

__all__ = ["BATCHES", "LONG_RUN", "VALUE_RTOL", "ArrayBatch", "Generator", "get_array_batch", "close", "fd_close"]

BATCHES = max(1, COUNT // 40)
PROGRAMS = 3                 # programs per batch (one njit function)
HESSIAN_PROGRAMS = 1         # the first ones make small(x)
STATEMENTS = (4, 7)          # statements per program, inclusive
N_RANGE = (8, 12)            # len(x), inclusive
BOUND = 30.0                 # |every value| at the input
VALUE_RTOL = 1e-11           # numba's floats against NumPy (summation order, libm)
NAMESPACE = {"np": np}

# Smooth everywhere; the first four are bounded, the others grow (BOUND rejects a blow-up).
UNARY = ["np.sin({0})", "np.cos({0})", "np.tanh({0})", "np.arctan({0})",
         "({0} / (1.0 + {0} * {0}))", "np.exp(0.5 * np.sin({0}))", "np.sqrt(1.0 + {0} * {0})",
         "({0} ** 2)", "(0.5 * {0})", "(-{0})"]
CONSTANTS = ("0.5", "1.5", "-0.75", "2.0", "0.25")


class Var:
    """A name the program made: kind 'm' (2-D), 'v' (1-D) or 's' (scalar) and numba's layout
    of its type ('C', 'F' or 'A'; 'K' where the generator does not know it: an elementwise
    expression on matrices, 'C' unless all its array operands are 'F'), which decides whether
    numba's ravel is a view."""

    def __init__(self, name, kind, layout="C"):
        self.name, self.kind, self.layout = name, kind, layout


def transposed(layout):
    return {"C": "F", "F": "C", "K": "K"}.get(layout, "A")


def row_slice(layout):
    """The layout of m[a:b] and of m[i] (numba keeps 'C' there)."""
    return layout if layout in ("C", "K") else "A"


class Rejected(Exception):
    """The drawn statement does not fit here (shapes, sizes); draw another."""


class Generator:
    """Draws the statements of one batch; `ns` is NumPy's namespace after running them."""

    def __init__(self, rng, x):
        self.rng, self.x, self.n = rng, x, len(x)
        self.lines = []          # every statement of the batch so far (source, maybe several lines)
        self.float_lines = []    # the same, as numba's float code must spell them (in_place)
        self.vars = []           # the current program's names
        self.count = 0
        self.prefix = ""
        self.ns = self.execute([])

    # -- running -----------------------------------------------------------------------------
    def execute(self, lines):
        """NumPy's namespace after lines at x, or None if they raise, warn or leave a value
        non-finite or beyond BOUND."""
        ns = dict(NAMESPACE, x=self.x.copy())
        try:
            with np.errstate(all="raise"):
                exec(compile("\n".join(lines), "<fuzz arrays>", "exec"), ns)
        except Exception:  # noqa: BLE001 - a statement that does not fit is drawn again
            return None
        for key, value in ns.items():
            if isinstance(value, (np.ndarray, float, np.floating)):
                a = np.asarray(value)
                if a.dtype != np.float64 or not np.all(np.isfinite(a)) or np.any(np.abs(a) > BOUND):
                    return None
        return ns

    def value(self, src):
        return eval(src, dict(self.ns))

    def shape(self, src):
        return np.shape(self.value(src))

    # -- names and picks -----------------------------------------------------------------------
    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p):
        return self.rng.random() < p

    def integer(self, lo, hi):
        """lo <= i <= hi."""
        return int(self.rng.integers(lo, hi + 1))

    def fresh(self, kind):
        self.count += 1
        return f"{self.prefix}{kind}{self.count}"

    def of_kind(self, kind, shape=None):
        out = [v for v in self.vars if v.kind == kind]
        if shape is not None:
            out = [v for v in out if self.shape(v.name) == shape]
        return out

    # -- expressions of a given shape -----------------------------------------------------------
    def x_slice(self, length):
        if length > self.n:
            raise Rejected
        if length == self.n and self.chance(0.5):
            return "x"
        start = self.integer(0, self.n - length)
        return f"x[{start}:{start + length}]"

    def leaf(self, shape):
        """A name, a part of one, or a part of x, of exactly this shape."""
        options = [v.name for v in self.vars if self.shape(v.name) == shape]
        if len(shape) == 0:
            options += [f"x[{self.integer(-self.n, self.n - 1)}]"] * 2
            for v in self.vars:
                s = self.shape(v.name)
                if len(s) == 1:
                    options.append(f"{v.name}[{self.integer(-s[0], s[0] - 1)}]")
                elif len(s) == 2:
                    options.append(f"{v.name}[{self.integer(0, s[0] - 1)}, {self.integer(-s[1], s[1] - 1)}]")
        elif len(shape) == 1:
            (length,) = shape
            if length <= self.n:
                options += [self.x_slice(length)] * 2
                if 2 * length - 1 <= self.n and self.chance(0.3):
                    start = self.integer(0, self.n - (2 * length - 1))
                    options.append(f"x[{start}:{start + 2 * length - 1}:2]")
            for v in self.of_kind("m"):
                r, c = self.shape(v.name)
                if c == length:
                    options.append(f"{v.name}[{self.integer(-r, r - 1)}]")
                if r == length:
                    options.append(f"{v.name}[:, {self.integer(-c, c - 1)}]")
                if r * c == length:
                    options.append(f"{v.name}.ravel()")
            for v in self.of_kind("v"):
                (m,) = self.shape(v.name)
                if m == length:
                    options.append(f"{v.name}[::-1]")
                elif m > length:
                    start = self.integer(0, m - length)
                    options.append(f"{v.name}[{start}:{start + length}]")
        else:
            r, c = shape
            for v in self.of_kind("m"):
                s = self.shape(v.name)
                if s == (c, r):
                    options.append(f"{v.name}.T")
                if s == shape:
                    options += [f"np.flip({v.name})", f"{v.name}[::-1]", f"{v.name}[:, ::-1]"]
                if s[0] > r and s[1] == c:
                    options.append(f"{v.name}[{s[0] - r}:]")
                if s[0] >= r and s[1] > c:
                    options.append(f"{v.name}[:{r}, {s[1] - c}:]")
            if r * c <= self.n and self.chance(0.5):
                options.append(f"{self.x_slice(r * c)}.reshape(({r}, {c}))")
            if r <= self.n and c <= self.n:
                options.append(f"np.outer({self.x_slice(r)}, {self.x_slice(c)})")
        if not options:
            if len(shape) == 1:
                return self.expr((shape[0],), 0, allow_leaf=False)
            raise Rejected
        return self.pick(options)

    def expr(self, shape, depth, allow_leaf=True):
        """A read-only expression of exactly this shape (broadcasting inside it)."""
        if allow_leaf and (depth <= 0 or self.chance(0.3)):
            return self.leaf(shape)
        kinds = ["unary", "unary", "binary", "binary", "broadcast"]
        if len(shape) == 0:
            kinds += ["reduce", "dot", "const"]
        elif len(shape) == 1:
            kinds += ["matvec", "axis_sum", "flip", "cumsum"]
            if shape[0] <= self.n:
                kinds.append("x")
        else:
            kinds += ["matmul", "matmul", "outer", "transpose"]
        kind = self.pick(kinds)
        d = depth - 1
        if kind == "unary":
            return self.pick(UNARY).format(self.expr(shape, d))
        if kind == "binary":
            op = self.pick(["+", "-", "*", "*"])
            return f"({self.expr(shape, d)} {op} {self.expr(shape, d)})"
        if kind == "broadcast":   # a matrix with a row or a scalar, a vector with a scalar
            op = self.pick(["+", "-", "*"])
            small = shape[1:] if (len(shape) == 2 and self.chance(0.6)) else ()
            pair = [self.expr(shape, d), self.expr(small, d) if small else self.scalar_operand(d)]
            if self.chance(0.5):
                pair.reverse()
            return f"({pair[0]} {op} {pair[1]})"
        if kind == "const":
            return self.pick(CONSTANTS)
        if kind == "reduce":
            form = self.pick(["np.sum({})", "{}.sum()", "np.mean({})", "np.trace({})"])
            if form == "np.trace({})":
                k = self.integer(2, 3)
                return form.format(self.expr((k, k), d))
            inner = (self.integer(2, 4),) if self.chance(0.4) else (self.integer(2, 3), self.integer(2, 3))
            return form.format(self.expr(inner, d))
        if kind == "dot":
            k = self.integer(2, 4)
            if self.chance(0.5):
                r = self.integer(2, 3)
                return f"({self.expr((r,), d)} @ {self.expr((r, k), d)} @ {self.expr((k,), d)})"
            return self.pick(["({} @ {})", "np.dot({}, {})"]).format(self.expr((k,), d), self.expr((k,), d))
        if kind == "x":
            return self.x_slice(shape[0])
        if kind == "matvec":
            k = self.integer(2, 4)
            if self.chance(0.5):
                return f"({self.expr(shape + (k,), d)} @ {self.expr((k,), d)})"
            return f"({self.expr((k,), d)} @ {self.expr((k,) + shape, d)})"
        if kind == "axis_sum":
            k = self.integer(2, 3)
            if self.chance(0.5):
                return self.pick(["np.sum({}, axis=0)", "{}.sum(axis=0)"]).format(self.expr((k,) + shape, d))
            return self.pick(["np.sum({}, axis=1)", "{}.sum(axis=1)"]).format(self.expr(shape + (k,), d))
        if kind == "flip":
            return self.pick(["np.flip({})", "{}[::-1]"]).format(self.expr(shape, d))
        if kind == "cumsum":
            return f"(0.5 * np.cumsum({self.expr(shape, d)}))"
        if kind == "matmul":
            k = self.integer(2, 4)
            return f"({self.expr((shape[0], k), d)} @ {self.expr((k, shape[1]), d)})"
        if kind == "outer":
            return f"np.outer({self.expr(shape[:1], d)}, {self.expr(shape[1:], d)})"
        if kind == "transpose":
            return self.pick(["{}.T", "np.transpose({})"]).format(self.expr(shape[::-1], d))
        raise AssertionError(kind)

    def scalar_operand(self, d):
        return self.pick([self.pick(CONSTANTS), self.expr((), d)])

    def positive(self, shape, d):
        """A denominator: >= 1 everywhere, or 2 + sin."""
        e = self.expr(shape, d)
        return self.pick([f"(1.0 + {e} * {e})", f"(2.0 + np.sin({e}))"])

    # -- statements ---------------------------------------------------------------------------------
    def matrix_shape(self):
        return self.integer(2, 4), self.integer(2, 4)

    def s_matrix(self):
        """A new matrix from x, vectors or other matrices."""
        name = self.fresh("m")
        r, c = self.matrix_shape()
        form = self.pick(["reshape", "reshape_copy", "outer", "vstack", "column_stack", "zeros_rows",
                          "zeros_cols", "zeros_entries", "zeros_block", "diag", "atleast_2d", "expand_dims",
                          "vector_reshape", "expr", "expr", "elementwise", "matmul", "dot", "gram", "copy",
                          "tri"])
        layout = "C"
        if form in ("reshape", "reshape_copy"):
            if r * c > self.n:
                raise Rejected
            src = f"{self.x_slice(r * c)}.reshape(({r}, {c}))" + (".copy()" if form == "reshape_copy" else "")
        elif form == "outer":
            src = f"np.outer({self.expr((r,), 1)}, {self.expr((c,), 1)})"
        elif form == "vstack":
            rows = ", ".join(self.expr((c,), 1) for _ in range(self.integer(2, 3)))
            src = f"np.vstack(({rows}))"
        elif form == "column_stack":
            columns = ", ".join(self.expr((r,), 1) for _ in range(self.integer(2, 3)))
            src = f"np.column_stack(({columns}))"
        elif form.startswith("zeros"):
            head = f"{name} = np.zeros(({r}, {c}))\n"
            if form == "zeros_rows":
                body = f"for i in range({r}):\n    {name}[i] = {self.expr((c,), 1)} * (i + 1.0)"
            elif form == "zeros_cols":
                body = f"for j in range({c}):\n    {name}[:, j] = {self.expr((r,), 1)} * (0.5 - j)"
            elif form == "zeros_entries":
                entries = []
                for _ in range(self.integer(1, 4)):
                    entries.append(f"{name}[{self.integer(0, r - 1)}, {self.integer(-c, c - 1)}] = "
                                   f"{self.expr((), 1)}")
                if self.chance(0.5):
                    entries.append(f"for i in range({r}):\n    for j in range({c}):\n"
                                   f"        {name}[i, j] += x[(i * {c} + j) % {self.n}] * (i - j)")
                body = "\n".join(entries)
            else:
                a, b = self.integer(0, r - 2), self.integer(0, c - 2)
                body = f"{name}[{a}:, {b}:] = {self.expr((r - a, c - b), 1)}"
            self.add_var(Var(name, "m"), head + body)
            return
        elif form == "diag":
            src = f"np.diag({self.expr((r,), 1)})"
        elif form == "atleast_2d":
            vs = self.of_kind("v")
            if not vs:
                raise Rejected
            v = self.pick(vs)
            src, layout = f"np.atleast_2d({v.name})", v.layout
        elif form == "expand_dims":
            vs = self.of_kind("v")
            if not vs:
                raise Rejected
            v = self.pick(vs)
            src, layout = f"np.expand_dims({v.name}, 0)", v.layout
        elif form == "vector_reshape":
            vs = [v for v in self.of_kind("v") if v.layout == "C" and self.shape(v.name)[0] >= 4]
            if not vs:
                raise Rejected
            v = self.pick(vs)
            (m,) = self.shape(v.name)
            divisors = [k for k in range(2, m // 2 + 1) if m % k == 0]
            if not divisors:
                raise Rejected
            k = self.pick(divisors)
            src = f"{v.name}.reshape(({k}, {m // k}))"
        elif form == "expr":
            src, layout = self.expr((r, c), 2, allow_leaf=False), "K"
        elif form == "elementwise":
            # of one matrix or of its transpose: NumPy and numba keep a C or F operand's order;
            # another operand's result is laid out by add_new_matrix
            ms = self.of_kind("m")
            if not ms:
                raise Rejected
            a = self.pick(ms)
            operand, layout = (f"{a.name}.T", transposed(a.layout)) if self.chance(0.6) else (a.name, a.layout)
            layout = layout if layout in ("C", "F") else "K"
            src = self.pick(UNARY + ["({0} * 1.5)", "({0} + {0})"]).format(operand)
        elif form == "matmul":
            ms = self.of_kind("m")
            if not ms:
                raise Rejected
            a = self.pick(ms)
            ra, ca = self.shape(a.name)
            src = f"({a.name} @ {self.expr((ca, c), 1)})"
        elif form == "dot":
            ms = self.of_kind("m")
            if not ms:
                raise Rejected
            a = self.pick(ms)
            ra, ca = self.shape(a.name)
            src = self.pick([f"np.dot({a.name}, {self.expr((ca, c), 1)})", f"{a.name}.dot({self.expr((ca, c), 1)})"])
        elif form == "gram":
            ms = self.of_kind("m")
            if not ms:
                raise Rejected
            a = self.pick(ms).name
            src = self.pick([f"({a} @ {a}.T)", f"({a}.T @ {a})", f"(0.25 * ({a} @ {a}.T))"])
        elif form == "copy":  # m.copy() is C-ordered; np.copy keeps m's order (NumPy's order='K')
            ms = self.of_kind("m")
            if not ms:
                raise Rejected
            a = self.pick(ms)
            if self.chance(0.5):
                src = f"{a.name}.copy()"
            else:
                src, layout = f"np.copy({a.name})", a.layout if a.layout in ("C", "F") else "K"
        else:  # tri
            ms = self.of_kind("m")
            if not ms:
                raise Rejected
            a = self.pick(ms)
            src = self.pick(["np.tril({})", "np.triu({})", "np.tril({}, -1)", "np.triu({}, 1)"]).format(a.name)
            layout = "C" if a.layout == "C" else "K"
        if layout == "K":
            self.add_new_matrix(name, src)
            return
        self.add_var(Var(name, "m", layout), f"{name} = {src}")

    def add_new_matrix(self, name, src):
        """`name = src`, a new array that NumPy lays out after its operands (order='K'), where
        numba's float code makes it C unless every operand is F: the float spelling copies it
        into NumPy's layout, so that numba's type says what NumPy's flags say and ravel (a view
        or a copy) is drawn of it too. The derivative programs keep src as it is: dualad lays
        out new dual arrays as NumPy does."""
        ns = self.execute(self.lines + [f"{name} = {src}"])
        if ns is None:
            raise Rejected
        flags = ns[name].flags
        if flags.f_contiguous and not flags.c_contiguous:
            self.commit(f"{name} = {src}", Var(name, "m", "F"), f"{name} = np.asfortranarray({src})", ns)
        elif flags.c_contiguous and not flags.f_contiguous:
            self.commit(f"{name} = {src}", Var(name, "m", "C"), f"{name} = np.ascontiguousarray({src})", ns)
        else:  # a 1 in the shape: both, and numba's type may be either
            self.commit(f"{name} = {src}", Var(name, "m", "K"), None, ns)

    def s_matrix_view(self):
        """A view of a matrix, kept in a name (later writes through it reach the base)."""
        ms = self.of_kind("m")
        if not ms:
            raise Rejected
        base = self.pick(ms)
        b, (r, c) = base.name, self.shape(base.name)
        C = base.layout == "C"
        a = self.integer(1, r - 1) if r > 1 else 0
        options = [(f"{b}.T", transposed(base.layout)), (f"np.transpose({b})", transposed(base.layout)),
                   (f"np.flip({b})", "A"), (f"{b}[::-1]", "A"), (f"np.flipud({b})", "A"),
                   (f"np.fliplr({b})", "A"), (f"{b}[:, ::-1]", "A"), (f"{b}.T[::-1]", "A"),
                   (f"np.rot90({b})", "A")]
        if r > 1:
            options += [(f"{b}[{a}:]", row_slice(base.layout)), (f"{b}[:{a}]", row_slice(base.layout)),
                        (f"{b}[::2]", "A")]
        if c > 1:
            k = self.integer(1, c - 1)
            options += [(f"{b}[:, {k}:]", "A"), (f"{b}[:, :{k}]", "A"), (f"{b}[{a}:, {k - 1}:]", "A")]
        if C and r * c > 1:
            divisors = [k for k in range(1, r * c + 1) if (r * c) % k == 0 and k != r]
            if divisors:
                k = self.pick(divisors)
                options.append((f"{b}.reshape(({k}, {r * c // k}))", "C"))
        src, layout = self.pick(options)
        name = self.fresh("m")
        self.add_var(Var(name, "m", layout), f"{name} = {src}")

    def ravel_ok(self, var):
        """numba's ravel is a view iff the type is C-contiguous, NumPy's iff the array is: draw
        it (and writes through it) only where they agree. (NumPy's flags, at a shape with a
        1, are both C and F: numba's type may be either there.)"""
        flags = self.value(var.name).flags
        if var.layout == "C":
            return flags.c_contiguous and not flags.f_contiguous
        return var.layout in ("A", "F") and not flags.c_contiguous

    def s_vector(self):
        """A vector: a view of a matrix or of x (kept in a name), a reduction or an expression."""
        name = self.fresh("v")
        ms, vs = self.of_kind("m"), self.of_kind("v")
        form = self.pick(["row", "column", "row_part", "ravel", "ravel", "x_view", "x_view", "x_copy",
                          "x_reversed", "vector_view", "axis_sum", "matvec", "expr", "expr"])
        layout = "C"
        if form in ("row", "column", "row_part", "ravel", "axis_sum", "matvec"):
            if not ms:
                raise Rejected
            m = self.pick(ms)
            r, c = self.shape(m.name)
            if form == "row":
                src, layout = f"{m.name}[{self.integer(-r, r - 1)}]", row_slice(m.layout)
            elif form == "column":
                src, layout = f"{m.name}[:, {self.integer(-c, c - 1)}]", "A"
            elif form == "row_part":
                if c < 2:
                    raise Rejected
                k = self.integer(1, c - 1)
                src, layout = f"{m.name}[{self.integer(0, r - 1)}, {k}:]", row_slice(m.layout)
            elif form == "ravel":
                if not self.ravel_ok(m):
                    raise Rejected
                src = f"{m.name}.ravel()"
            elif form == "axis_sum":
                src = self.pick(["np.sum({}, axis={})", "{}.sum(axis={})"]).format(m.name, self.integer(0, 1))
            else:
                src = self.pick([f"({m.name} @ {self.expr((c,), 1)})", f"({self.expr((r,), 1)} @ {m.name})"])
        elif form == "x_view":
            src = self.x_slice(self.integer(2, self.n))
        elif form == "x_copy":
            src = self.x_slice(self.integer(2, self.n)) + ".copy()"
        elif form == "x_reversed":
            src, layout = self.pick(["x[::-1]", "np.flip(x)", f"x[{self.integer(0, 2)}::2]"]), "A"
        elif form == "vector_view":
            if not vs:
                raise Rejected
            v = self.pick(vs)
            (m,) = self.shape(v.name)
            if m < 3:
                raise Rejected
            src, layout = self.pick([(f"{v.name}[1:]", row_slice(v.layout)), (f"{v.name}[:-1]", row_slice(v.layout)),
                                     (f"{v.name}[::-1]", "A"), (f"np.flip({v.name})", "A"),
                                     (f"{v.name}[::2]", "A")])
        else:
            src = self.expr((self.integer(2, 6),), 2, allow_leaf=False)
        self.add_var(Var(name, "v", layout), f"{name} = {src}")

    def s_scalar(self):
        name = self.fresh("s")
        self.add_var(Var(name, "s"), f"{name} = {self.expr((), 2, allow_leaf=self.chance(0.3))}")

    def target(self, var=None):
        """A writable place: a name, or a subscript of a name or of its transpose."""
        if var is None:
            arrays = self.of_kind("m") + self.of_kind("v")
            if not arrays:
                raise Rejected
            var = self.pick(arrays)
        b, shape = var.name, self.shape(var.name)
        if len(shape) == 1:
            (m,) = shape
            k = self.integer(1, m - 1) if m > 1 else 0
            return self.pick([b, b, f"{b}[{k}:]", f"{b}[:{k}]", f"{b}[::-1]", f"{b}[::2]",
                              f"{b}[{self.integer(-m, m - 1)}]"])
        r, c = shape
        a = self.integer(1, r - 1) if r > 1 else 0
        k = self.integer(1, c - 1) if c > 1 else 0
        i, j = self.integer(0, r - 1), self.integer(-c, c - 1)
        options = [b, b, f"{b}[{self.integer(-r, r - 1)}]", f"{b}[:, {j}]", f"{b}[{i}, {j}]", f"{b}[{a}:]",
                   f"{b}[:, {k}:]", f"{b}[{a}:, :{k}]", f"{b}.T[{self.integer(0, c - 1)}]", f"{b}.T[{k}:]",
                   f"{b}[::-1]", f"{b}[:, ::-1]", f"{b}.T", f"{b}[::-1, {k}]",
                   # through a temporary view: chained subscripts and views made by functions
                   f"{b}[{i}][{j}]", f"{b}[{a}:][0]", f"{b}.T[{j}, {i}]", f"{b}.T[::-1][{self.integer(0, c - 1)}]",
                   f"np.flip({b})[{i}]", f"np.transpose({b})[{self.integer(0, c - 1)}]",
                   f"np.fliplr({b})[:, {j}]", f"np.flipud({b})[{i}, {j}]", f"np.rot90({b})[{self.integer(0, c - 1)}]"]
        if self.ravel_ok(var):
            options.append(f"{b}.ravel()[{self.integer(0, r * c - 1)}]")
        return self.pick(options)

    def rhs_for(self, shape, d=1):
        """A value that broadcasts to shape: the shape itself, a row, or a scalar."""
        r = self.rng.random()
        if len(shape) >= 1 and r < 0.6:
            return self.expr(shape, d)
        if len(shape) == 2 and r < 0.8:
            return self.expr(shape[1:], d)
        return self.scalar_operand(d)

    def s_in_place(self):
        """t op= value, t a name or a view; the value may read t's own array."""
        t = self.target()
        if t.endswith(".T"):       # `m.T += 1` assigns an attribute: Python rejects it
            t += "[:]"
        shape = self.shape(t)
        op = self.pick(["+=", "-=", "*=", "/="])
        if op == "/=":
            rhs = self.positive(shape if self.chance(0.5) else (), 1)
        elif op == "*=" and self.chance(0.5):
            rhs = self.pick(["np.cos({})", "(0.5 + 0.25 * np.sin({}))", "np.tanh({})"]).format(
                self.rhs_for(shape))
        else:
            rhs = self.rhs_for(shape)
        self.in_place(t, op, rhs)

    def s_assign(self):
        """t[...] = value through a subscript (of a name or of a view)."""
        t = self.target()
        if "[" not in t:
            t += "[:]"    # (m[...] = value raises on the compiled path, naming the form)
        rhs = self.rhs_for(self.shape(t), 2)
        if rhs in CONSTANTS:  # the Python path: a buffer all of whose entries are numbers is a
            rhs = f"({rhs} * {self.leaf(())})"  # float array, which then cannot take a dual
        self.add_statement(f"{t} = {rhs}")

    def s_overlap(self):
        """Assignment and in-place operators whose source overlaps the target."""
        arrays = self.of_kind("m") + self.of_kind("v")
        if not arrays:
            raise Rejected
        var = self.pick(arrays)
        b, shape = var.name, self.shape(var.name)
        op = self.pick(["=", "=", "+=", "-="])
        if len(shape) == 1:
            m = shape[0]
            k = self.integer(1, m - 1) if m > 1 else 0
            pairs = [(f"{b}[{k}:]", f"{b}[:-{k}]"), (f"{b}[:-{k}]", f"{b}[{k}:]"), (f"{b}[:]", f"{b}[::-1]"),
                     (f"{b}[::-1]", b), (f"{b}[:]", f"np.flip({b})"), (f"{b}[1:]", f"np.cumsum({b}[:-1])")]
            if m >= 4:
                h = m // 2
                pairs.append((f"{b}[:{h}]", f"{b}[{m - h}:][::-1]"))
                pairs.append((f"{b}[::2]", f"{b}[{m % 2}::2][::-1]" if m % 2 == 0 else f"{b}[::2][::-1]"))
        else:
            r, c = shape
            pairs = [(f"{b}[:]", f"{b}[::-1]"), (f"{b}[:]", f"np.flip({b})"), (f"{b}[:]", f"{b}[:, ::-1]"),
                     (f"{b}[0]", f"{b}[-1]"), (f"{b}[:, 0]", f"{b}[:, -1]")]
            if r > 1:
                pairs += [(f"{b}[1:]", f"{b}[:-1]"), (f"{b}[:-1]", f"{b}[1:]")]
            if c > 1:
                pairs += [(f"{b}[:, 1:]", f"{b}[:, :-1]"), (f"{b}[:, :-1]", f"{b}[:, 1:]")]
            if r > 1 and c > 1:
                pairs += [(f"{b}[1:, 1:]", f"{b}[:-1, :-1]"), (f"{b}[:-1, 1:]", f"{b}[1:, :-1]")]
            if r == c:
                pairs += [(f"{b}[:]", f"{b}.T"), (f"{b}.T[:]", b), (f"{b}[:, 0]", f"{b}[0]"),
                          (f"{b}[0]", f"{b}[:, 0]"), (f"{b}[:]", f"{b} @ {b}.T * 0.25")]
            pairs += [(f"{b}[:]", f"{b} * {b}[0]"), (b, f"{b}[-1]")]
        t, s = self.pick(pairs)
        if op == "=":
            self.add_statement(f"{t if '[' in t else t + '[:]'} = {s}")
        else:
            self.in_place(t, op, s)

    def s_write_x(self):
        """A write into the argument (NumPy: the caller sees it)."""
        n = self.n
        k = self.integer(1, n - 1)
        a = self.integer(0, n - 2)
        length = self.integer(1, n - a)
        form = self.pick(["slice_op", "entry", "shift", "reverse", "in_place_overlap", "all"])
        if form == "slice_op":
            self.in_place(f"x[{a}:{a + length}]", self.pick(["+=", "-=", "*="]),
                          self.pick(["0.5", "-0.25", "np.sin(x[0])", self.expr((length,), 1)]))
        elif form == "entry":
            self.add_statement(f"x[{self.integer(-n, n - 1)}] = {self.expr((), 1)}")
        elif form == "shift":
            self.add_statement(self.pick([f"x[{k}:] = x[:-{k}]", f"x[:-{k}] = x[{k}:]"]))
        elif form == "reverse":
            self.add_statement(self.pick(["x[:] = x[::-1]", "x[::2] = x[1::2][::-1]" if n % 2 == 0 else
                                          "x[::2] = x[::2][::-1]"]))
        elif form == "in_place_overlap":
            self.in_place(*self.pick([(f"x[{k}:]", "+=", f"x[:-{k}]"), ("x", "+=", "x[::-1]")]))
        else:
            self.in_place(*self.pick([("x", "*=", "0.75"), ("x", "-=", "0.5 * np.sin(x)"),
                                      ("x", "+=", self.expr((), 1))]))

    def in_place(self, target, op, rhs):
        """`target op= rhs`. numba's float code runs an in-place operator as one loop, so an
        operand that overlaps the target is read after it is written (NumPy reads it first;
        dualad's duals do too): the float version of the batch copies such an operand."""
        src = f"{target} {op} {rhs}"
        try:
            overlap = np.shares_memory(self.value(target), self.value(rhs))
        except Exception:  # noqa: BLE001 - the statement does not run; commit rejects it
            overlap = False
        self.commit(src, None, f"{target} {op} ({rhs}).copy()" if overlap else src)

    def add_statement(self, src):
        self.commit(src, None)

    def add_var(self, var, src):
        self.commit(src, var)

    def commit(self, src, var, float_src=None, ns=None):
        """Keep src (float_src in the float version); ns: NumPy's namespace after it, where the
        caller has already run it."""
        ns = self.execute(self.lines + [src]) if ns is None else ns
        if ns is None:
            raise Rejected
        self.lines.append(src)
        self.float_lines.append(src if float_src is None else float_src)
        self.ns = ns
        if var is not None:
            self.vars.append(var)

    # -- one program ---------------------------------------------------------------------------------
    STATEMENT_WEIGHTS = {"s_matrix": 4, "s_matrix_view": 3, "s_vector": 3, "s_scalar": 1,
                         "s_in_place": 5, "s_assign": 4, "s_overlap": 3, "s_write_x": 1}

    def draw_statements(self, wanted):
        """`wanted` statements by STATEMENT_WEIGHTS (a matrix first), drawn until each fits."""
        names, weights = zip(*self.STATEMENT_WEIGHTS.items())
        p = np.array(weights, float) / sum(weights)
        made, attempts = 0, 0
        while made < wanted and attempts < 2000:
            attempts += 1
            kind = "s_matrix" if made == 0 else names[int(self.rng.choice(len(names), p=p))]
            try:
                getattr(self, kind)()
            except Rejected:
                continue
            made += 1

    def output_parts(self):
        """The current program's names as the parts of its output: matrices raveled,
        vectors, its scalars as one array."""
        parts = [f"{v.name}.ravel()" for v in self.vars if v.kind == "m"]
        parts += [v.name for v in self.vars if v.kind == "v"]
        scalars = [v.name for v in self.vars if v.kind == "s"]
        if scalars:
            parts.append(f"np.array(({', '.join(scalars)},))")
        return parts

    def program(self, k):
        """Program k's statements, appended to the batch's; returns (its source, its float
        source, out name)."""
        self.prefix, self.vars = f"p{k}_", []
        start = len(self.lines)
        self.draw_statements(self.integer(*STATEMENTS))
        parts = self.output_parts()
        out = f"out{k}"
        self.commit(f"{out} = np.concatenate(({', '.join(parts)},))", None)
        return "\n".join(self.lines[start:]), "\n".join(self.float_lines[start:]), out


def indent(src, by="    "):
    return "\n".join(by + line for line in src.splitlines())


class ArrayBatch:
    """PROGRAMS random programs at one input x, as batch(x) (every output, then x) and
    small(x) (a weighted sum of the first HESSIAN_PROGRAMS programs' outputs). float_batch is
    batch as numba's float code must spell it (Generator.in_place); under NumPy the same."""

    def __init__(self, index):
        self.index = index
        rng = np.random.default_rng([SEED, 2024, index])
        n = int(rng.integers(N_RANGE[0], N_RANGE[1] + 1))
        self.x = np.round(rng.uniform(-1.5, 1.5, size=n), 3)
        gen = Generator(rng, self.x)
        self.programs = [gen.program(k) for k in range(PROGRAMS)]
        self.statements = list(gen.lines)  # one entry per statement (a loop is one)
        outs = [out for _, _, out in self.programs]
        self.source = self.functions([src for src, _, _ in self.programs], outs)
        self.float_source = self.functions([src for _, src, _ in self.programs], outs)
        # rows of batch(x) per program (x's rows last)
        sizes = [gen.ns[out].size for out in outs]
        self.rows = np.cumsum([0] + sizes + [n])
        self.py_batch = compile_source(self.source, "batch", NAMESPACE)
        self.py_small = compile_source(self.source, "small", NAMESPACE)
        self.nb_batch = numba.njit(compile_source(self.source, "batch", NAMESPACE))
        self.nb_small = numba.njit(compile_source(self.source, "small", NAMESPACE))
        self.float_batch = numba.njit(compile_source(self.float_source, "batch", NAMESPACE))
        if self.float_source != self.source:  # a generator bug otherwise
            np.testing.assert_array_equal(self.float_batch.py_func(self.x.copy()), self.py_batch(self.x.copy()))

    @staticmethod
    def functions(bodies, outs):
        body = "\n".join(indent(src) for src in bodies)
        small_body = "\n".join(indent(src) for src in bodies[:HESSIAN_PROGRAMS])
        return (f"def batch(x):\n{body}\n    return np.concatenate(({', '.join(outs)}, x))\n\n\n"
                f"def small(x):\n{small_body}\n    o = np.concatenate(({', '.join(outs[:HESSIAN_PROGRAMS])},))\n"
                f"    return np.sum(o * np.linspace(0.5, 1.5, o.size))\n")

    def program_of_row(self, row):
        k = int(np.searchsorted(self.rows, row, side="right")) - 1
        return k if k < len(self.programs) else None

    def describe(self, rows=None, x=None):
        x = self.x if x is None else x
        head = f"array batch {self.index}, x = np.array({[float(v) for v in x]!r})"
        if rows is None:
            return f"{head}\n{self.source}"
        programs = sorted({self.program_of_row(r) for r in rows}, key=lambda k: -1 if k is None else k)
        parts = [head, f"disagreeing rows {list(rows)[:20]}{' ...' if len(rows) > 20 else ''}"]
        for k in programs:
            if k is None:
                parts.append("rows of x (the argument, after every program's writes)")
            else:
                parts.append(f"program {k} (rows {self.rows[k]}..{self.rows[k + 1] - 1}), after "
                             f"programs 0..{k - 1} of the source below:\n{self.programs[k][0]}")
        parts.append(f"the whole batch:\n{self.source}")
        if self.float_source != self.source:
            parts.append(f"its float version (numba's floats read an overlapping in-place operand "
                         f"late, so it copies them):\n{self.float_source}")
        return "\n".join(parts)


_BATCHES = {}


def get_array_batch(index):
    if index not in _BATCHES:
        _BATCHES[index] = ArrayBatch(index)
    return _BATCHES[index]


def close(messages, b, what, got, expected, rtol=AD_RTOL, atol=0.0, per_row=False):
    """got == expected to rtol of the scale (per row for Jacobians) plus atol."""
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        messages.append(f"{what}: shape {got.shape} != {expected.shape}\n{b.describe()}")
        return
    axes = tuple(range(1, expected.ndim)) if per_row and expected.ndim > 1 else None
    scale = np.maximum(1.0, np.max(np.abs(expected), axis=axes, keepdims=axes is not None))
    bad = ~(np.abs(got - expected) <= rtol * scale + atol)
    if np.any(bad):
        rows = sorted({int(i) for i in np.argwhere(bad)[:, 0]}) if expected.ndim > 0 else [0]
        pick = (lambda a: a[rows]) if expected.ndim > 0 and per_row else (lambda a: a)  # noqa: E731
        messages.append(f"{what}: max |error| {np.max(np.abs(got - expected)):.3e}\n"
                        f"{b.describe(rows if per_row else None)}\n"
                        f"got      {np.array2string(pick(got), precision=17)}\n"
                        f"expected {np.array2string(pick(expected), precision=17)}")


def fd_close(messages, b, what, got, fn, x, per_row=True):
    """Against Richardson central differences (tolerance from their own error estimate)."""
    expected, err = richardson(fn, x)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    close(messages, b, what, got, expected, rtol=1e-6, atol=10.0 * err + 1e-8 * scale, per_row=per_row)
