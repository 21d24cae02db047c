"""Randomized guard for repeated-index writes and memory orders on the Python path:
statement-level random programs `def f(x): ...` over a 1-D float x of length 8..12.

tests/fuzzing_arrays.py draws programs of matrices, views and writes that numba's float code
must run as NumPy does; this generator (a subclass) drops that constraint and draws, on top
of its statements, what the Python path got wrong while forward mode was right:
* writes through integer index lists and arrays that repeat positions (`=`, `+=`, `-=`,
  `*=`: NumPy's last write wins), fancy 2-D indices (`m[[0, 0, 1], [1, 1, 2]] = ...`),
  gathers with repeats, and boolean masks (`v[np.array([True, False, ...])] = ...`);
* every memory order C, F, K, A in np.ravel, .ravel, .reshape, np.reshape, .flatten,
  np.copy, .copy, np.asarray and np.array, of C- and F-ordered operands (np.asfortranarray,
  transposes, np.sin(m.T)), kept in names and written through: NumPy decides whether the
  name is a view (the write reaches the base) or a copy (it does not);
* arrays built from dual scalars, `np.array([[x[0], x[1]], [x[2], x[3]]])` (of entries that
  move with x: docs/user/limitations.md: a plain float among duals, is not drawn), and
  `x = np.asarray(x)` at the top, as library code starts.
Every value is a smooth function of x (the statements' maths is sin, cos, tanh, products,
sums, ...; indices and masks are constants), so central differences are meaningful.

Generation runs each drawn statement with plain NumPy floats first (Generator.execute): it is
kept when it runs without any warning and every value stays finite and within BOUND (30), so
NumPy decides every shape and aliasing question. A program returns the concatenation of every
array and scalar it made (final values, so that every alias is observed) and x, raveled in C
order. Program(seed) is deterministic; PROGRAM_SEEDS has fuzzing.COUNT // 2 of them
(DUALAD_FUZZ=<count>; 20 by default). The checks are in tests/test_fuzz_layouts.py.
"""

from __future__ import annotations

import warnings

import numpy as np

import fuzzing_arrays
from fuzzing import COUNT, SEED, compile_source
from fuzzing_arrays import CONSTANTS, N_RANGE, NAMESPACE, Rejected, Var, indent

__all__ = ["DEFAULT_SEEDS", "ORDERS", "PROGRAM_SEEDS", "Generator", "Program"]

# programs are several times longer than tests/fuzzing.py's expressions: half as many of them
# programs that once found a wrong result, run besides the drawn ones (a view re-read after
# a write laid out C where NumPy's is F: seeds 66, 101, 111 of this generator)
FOUND_SEEDS = [66, 101, 111]
PROGRAM_SEEDS = sorted(set(range(max(1, COUNT // 2))) | set(FOUND_SEEDS))
DEFAULT_SEEDS = list(range(20))   # the programs of a run without DUALAD_FUZZ
STATEMENTS = (10, 15)             # statements per program, inclusive
ORDERS = ("C", "F", "K", "A")
# the scalar the Hessians differentiate: a weighted sum of f's outputs
S_SOURCE = "def s(x):\n    out = f(x)\n    return np.sum(out * np.linspace(0.5, 1.5, out.size))\n"


class Generator(fuzzing_arrays.Generator):
    """fuzzing_arrays' statements, with ravel drawn of every array, and the index, order and
    building statements of this module."""

    STATEMENT_WEIGHTS = {"s_matrix": 3, "s_matrix_view": 2, "s_vector": 2, "s_scalar": 1,
                         "s_in_place": 2, "s_assign": 2, "s_overlap": 1, "s_write_x": 1,
                         "s_repeated": 6, "s_mask": 3, "s_order": 12, "s_fortran": 3, "s_built": 3}

    def execute(self, lines):
        """As fuzzing_arrays', and None when the lines warn (any warning, not only floats')."""
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return super().execute(lines)

    def ravel_ok(self, var):
        """Always: on the Python path NumPy alone decides whether a ravel is a view."""
        return True

    # -- indices ------------------------------------------------------------------------------
    def repeated(self, size):
        """A list of 2..4 positions in range(-size, size) of which at least two are equal."""
        length = self.integer(2, 4)
        picks = [self.integer(-size, size - 1) for _ in range(length - 1)]
        picks.insert(self.integer(0, length - 1), self.pick(picks))
        return picks

    def spell_index(self, positions):
        return self.pick(["{}", "{}", "np.array({})"]).format(positions)

    def mask(self, size):
        """A constant boolean mask of this length with at least one True."""
        if self.chance(0.3):
            k, r = self.integer(2, 3), self.integer(0, 1)
            return f"(np.arange({size}) % {k} == {r})"
        bits = [bool(b) for b in self.rng.random(size) < 0.5]
        bits[self.integer(0, size - 1)] = True
        return self.pick(["{}", "np.array({})"]).format(bits)

    def write_base(self):
        """(an array name or x, its shape): what an index write writes into."""
        arrays = self.of_kind("m") + self.of_kind("v")
        if not arrays or self.chance(0.1):
            return "x", (self.n,)
        var = self.pick(arrays)
        return var.name, self.shape(var.name)

    def repeated_subscript(self, b, shape):
        """b[...] with integer positions of which some repeat: in a vector, the rows or columns
        of a matrix, (row, column) pairs, rows and a slice, or through b.T."""
        if len(shape) == 1:
            return f"{b}[{self.spell_index(self.repeated(shape[0]))}]"
        r, c = shape
        rows = self.repeated(r)
        form = self.pick(["rows", "columns", "pairs", "pairs", "rows_part", "transposed"])
        if form == "rows":
            return f"{b}[{self.spell_index(rows)}]"
        if form == "columns":
            return f"{b}[:, {self.spell_index(self.repeated(c))}]"
        if form == "pairs":     # the same (row, column) pair more than once
            columns = [self.integer(-c, c - 1) for _ in rows]
            for i, row in enumerate(rows):
                if row in rows[:i]:
                    columns[i] = columns[rows.index(row)]
            return f"{b}[{self.spell_index(rows)}, {self.spell_index(columns)}]"
        if form == "rows_part":
            return f"{b}[{self.spell_index(rows)}, {self.integer(0, c - 1)}:]"
        return f"{b}.T[{self.spell_index(self.repeated(c))}]"

    def mask_subscript(self, b, shape):
        """b[mask]: a vector's, a matrix's (2-D mask), or its rows' or columns'."""
        if len(shape) == 1:
            return f"{b}[{self.mask(shape[0])}]"
        r, c = shape
        form = self.pick(["whole", "rows", "columns"])
        if form == "rows":
            return f"{b}[{self.mask(r)}]"
        if form == "columns":
            return f"{b}[:, {self.mask(c)}]"
        bits = np.asarray(self.rng.random((r, c)) < 0.5)
        bits[self.integer(0, r - 1), self.integer(0, c - 1)] = True
        return f"{b}[np.array({bits.tolist()})]"

    # -- statements ---------------------------------------------------------------------------
    def s_repeated(self):
        """A write through repeated positions, or at times a gather that repeats them."""
        if self.chance(0.15):
            arrays = self.of_kind("m") + self.of_kind("v")
            if not arrays:
                raise Rejected
            var = self.pick(arrays)
            name = self.fresh(var.kind)
            index = self.spell_index(self.repeated(self.shape(var.name)[0]))
            self.add_var(Var(name, var.kind), f"{name} = {var.name}[{index}]")
            return
        self.index_write(self.repeated_subscript(*self.write_base()))

    def s_mask(self):
        """A write through a constant boolean mask."""
        self.index_write(self.mask_subscript(*self.write_base()))

    def index_write(self, target):
        """`target op rhs`, the value of the target's shape, of a broadcast part, or a scalar."""
        shape = self.shape(target)
        op = self.pick(["=", "=", "+=", "-=", "*="])
        if op == "*=":
            rhs = self.pick(["np.cos({})", "(0.5 + 0.25 * np.sin({}))", "np.tanh({})"]).format(self.rhs_for(shape))
        else:
            rhs = self.rhs_for(shape, 2)
            if rhs in CONSTANTS:  # a constant alone would make a float buffer
                rhs = f"({rhs} * {self.leaf(())})"
        self.add_statement(f"{target} {op} {rhs}")

    def matrix_operand(self):
        """(a matrix expression, its shape): a name, a transpose or flip of one, a new F-ordered
        matrix (np.sin(m.T), np.asfortranarray(m)), or elementwise maths of a name as it is laid
        out (a named transposed view, written and read again, is F-ordered)."""
        ms = self.of_kind("m")
        if not ms:
            raise Rejected
        b = self.pick(ms).name
        src = self.pick([b, b, f"{b}.T", f"{b}.T", f"np.sin({b}.T)", f"np.asfortranarray({b})", f"{b}[::-1]",
                         f"({b}.T * 1.5)", f"{b}[:, ::-1]", f"np.sin({b})", f"({b} * 1.5)"])
        return src, self.shape(src)

    def s_order(self):
        """A matrix read in a memory order (ravel, reshape, flatten, copy, asarray), kept in a name
        and often written through at once: a view's write reaches its base, a copy's does not
        (NumPy decides which it is)."""
        m, (r, c) = self.matrix_operand()
        family = self.pick(["ravel", "ravel", "reshape", "reshape", "flatten", "copy", "copy", "asarray"])
        order = self.pick(ORDERS[:2] + ORDERS[3:] if family == "reshape" else ORDERS)  # K: no order to reshape
        kind = "m" if family in ("copy", "asarray") else "v"
        if family == "ravel":
            src = self.pick([f"np.ravel({m}, order={order!r})", f"{m}.ravel({order!r})", f"{m}.ravel(order={order!r})"])
        elif family == "flatten":
            src = self.pick([f"{m}.flatten({order!r})", f"{m}.flatten(order={order!r})"])
        elif family == "reshape" and self.chance(0.3):
            src = f"{m}.reshape({self.pick(['-1', str(r * c)])}, order={order!r})"
        elif family == "reshape":
            divisors = [k for k in range(2, r * c) if (r * c) % k == 0]
            k = self.pick(divisors) if divisors else r
            new = f"({k}, {r * c // k})"
            src = self.pick([f"{m}.reshape({new}, order={order!r})", f"np.reshape({m}, {new}, order={order!r})"])
            kind = "m"
        elif family == "copy":
            src = self.pick([f"np.copy({m}, order={order!r})", f"{m}.copy({order!r})", f"{m}.copy(order={order!r})"])
        else:
            src = f"{self.pick(['np.asarray', 'np.array'])}({m}, order={order!r})"
        name = self.fresh(kind)
        self.add_var(Var(name, kind), f"{name} = {src}")
        if self.chance(0.6):
            self.write_into(self.vars[-1])

    def write_into(self, var):
        """A write into var right after it is made (through a subscript, repeated or not)."""
        try:
            if self.chance(0.4):
                subscript = self.pick([self.repeated_subscript, self.mask_subscript])
                self.index_write(subscript(var.name, self.shape(var.name)))
                return
            t = self.target(var)
            if "[" not in t:
                t += "[:]"
            rhs = self.rhs_for(self.shape(t), 1)
            if rhs in CONSTANTS:
                rhs = f"({rhs} * {self.leaf(())})"
            self.add_statement(f"{t} {self.pick(['=', '=', '+=', '-='])} {rhs}")
        except Rejected:
            pass

    def s_fortran(self):
        """A new F-ordered matrix: elementwise maths of a transpose, np.asfortranarray."""
        name = self.fresh("m")
        ms = self.of_kind("m")
        r, c = self.matrix_shape()
        forms = [f"np.asfortranarray({self.expr((r, c), 1)})"]
        if r * c <= self.n:
            part = self.x_slice(r * c)
            forms += [f"np.sin({part}.reshape(({c}, {r})).T)", f"np.asfortranarray({part}.reshape(({r}, {c})))",
                      f"{part}.reshape(({r}, {c}), order='F')"]
        if ms:
            b = self.pick(ms).name
            forms += [f"np.sin({b}.T)", f"np.tanh({b}.T)", f"({b}.T * 1.5)", f"np.asfortranarray({b})",
                      f"np.copy({b}.T)", f"np.cos({b}).T"]
        self.add_var(Var(name, "m"), f"{name} = {self.pick(forms)}")
        if self.chance(0.3):
            self.write_into(self.vars[-1])

    def s_built(self):
        """An array built from dual scalars: np.array of nested lists of entries."""
        shape = self.pick([(2, 2), (2, 2), (2, 3), (3, 2), (3,), (4,)])
        size = int(np.prod(shape))
        if size <= self.n and self.chance(0.4):     # x's entries in turn, as in a hand-written model
            start = self.integer(0, self.n - size)
            entries = [f"x[{start + k}]" for k in range(size)]
        else:
            entries = [self.pick([self.leaf(()), self.leaf(()), self.expr((), 1)]) for _ in range(size)]
            if not self.all_move_with_x(entries):
                raise Rejected
        if len(shape) == 2:
            rows = ", ".join(f"[{', '.join(entries[i * shape[1]:(i + 1) * shape[1]])}]" for i in range(shape[0]))
            body, kind = f"[{rows}]", "m"
        else:
            body, kind = f"[{', '.join(entries)}]", "v"
        order = self.pick(["", "", "", ", order='F'"]) if kind == "m" else ""
        name = self.fresh(kind)
        self.add_var(Var(name, kind), f"{name} = np.array({body}{order})")
        if self.chance(0.3):
            self.write_into(self.vars[-1])

    def all_move_with_x(self, sources):
        """Whether each value changes when x does. NumPy runs a ufunc on an object array entry
        by entry, so an entry that is a plain float (a constant, or an entry np.zeros left) in
        np.array([...]) of duals makes np.sin of it fail (docs/user/limitations.md: the limit of built arrays)."""
        ns = dict(NAMESPACE, x=self.x + 0.01 * np.arange(1.0, self.n + 1.0))
        with np.errstate(all="ignore"):  # a nan there moves too: only equal values are constants
            exec(compile("\n".join(self.lines), "<fuzz layouts>", "exec"), ns)
        return all(not np.array_equal(eval(src, ns), self.value(src)) for src in sources)

    # -- one program --------------------------------------------------------------------------
    def program(self):
        """The statements of one program (an `x = np.asarray(x)` first at times, as library code
        starts), the last one `out = np.concatenate(...)`; returns the parts of out, (source,
        size) in turn."""
        self.prefix, self.vars = "", []
        if self.chance(0.2):
            self.add_statement("x = np.asarray(x)")
        self.draw_statements(self.integer(*STATEMENTS))
        parts = self.output_parts() + ["x"]
        self.commit(f"out = np.concatenate(({', '.join(parts)},))", None)
        return [(part, int(np.size(self.value(part)))) for part in parts]


class Program:
    """Random program `seed`: f(x) (the statements, then out), s(x) = Σ w_i f(x)_i (for the
    Hessians), and its input x."""

    def __init__(self, seed):
        self.seed = seed
        rng = np.random.default_rng([SEED, 3939, seed])
        n = int(rng.integers(N_RANGE[0], N_RANGE[1] + 1))
        self.x = np.round(rng.uniform(-1.5, 1.5, size=n), 3)
        gen = Generator(rng, self.x)
        self.parts = gen.program()
        body = indent("\n".join(gen.lines))
        self.source = f"def f(x):\n{body}\n    return out\n"
        self.f = compile_source(self.source, "f", NAMESPACE)
        self.s = compile_source(f"{self.source}\n\n{S_SOURCE}", "s", NAMESPACE)
        # the compiled f is the program the generator ran (a generator bug otherwise)
        np.testing.assert_array_equal(self.f(self.x.copy()), gen.ns["out"])

    def describe(self, rows=None, x=None):
        """The source and x (exact repr); given rows of f(x), the parts of out they lie in."""
        x = self.x if x is None else x
        head = f"layout program (seed {self.seed}), x = np.array({[float(v) for v in x]!r})"
        text = f"{head}\n{self.source}\n\n{S_SOURCE}"
        if rows is None:
            return text
        starts = np.cumsum([0] + [size for _, size in self.parts])
        hit = sorted({int(np.searchsorted(starts, row, side="right")) - 1 for row in rows})
        where = ", ".join(f"{self.parts[k][0]} (rows {starts[k]}..{starts[k + 1] - 1})" for k in hit)
        return f"{text}disagreeing rows {list(rows)[:20]}{' ...' if len(rows) > 20 else ''}, of {where}"
