"""Compressed evaluation: a sparse Jacobian or Hessian in as many passes as colours.

With S the (N, c) indicator matrix of a colouring (S[j, k] = 1 where column j has colour k):

    forward   B = J·S   Dual passes seeded with S's columns, `chunk` colours per pass;
                        J[i, j] = B[i, colour(j)]           (column colouring)
    reverse   C = Sᵀ·J  one recording, one sweep per row colour (cotangent: the colour's
                        indicator); J[i, j] = C[colour(i), j]  (row colouring)
    Hessian   B = H·S   forward-over-reverse: the reverse gradient run on Duals seeded with
                        S's columns; star colouring, so each H[i, j] is B[i, colour(j)] when
                        j is the only neighbour of i of its colour, else B[j, colour(i)]

Results are scipy.sparse.csr_array (float64) with the pattern's structure, an entry that is
0 at x included (solvers see one structure). The Jacobian's columns are the entries of
args[argnums] (float leaves raveled and concatenated), its rows the output entries.

A Plan holds the pattern and its colourings for one input structure and shapes: detected at
the first call (sparsity=True) or given (sparsity=P). check=True compares every result, on a
fresh random direction v, with one dense directional derivative (J·v by a Dual pass, H·v by
a forward-over-reverse pass): a pattern that misses a nonzero there raises.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..arguments import Inputs, name_of, read_output, read_outputs, shape_key
from ..dual import Dual
from ..forward import check_scalar
from ..modes import TANGENT_BUDGET
from ..number import is_layer, scoped_tag, unwrapped
from ..recording import Recording
from ..tree import Static, flatten, is_node
from .coloring import column_coloring, n_colors, row_coloring, star_coloring
from .detect import traced_hessian_pattern, traced_jacobian_pattern

__all__ = ["SparseJacobian", "SparseHessian", "Plan", "as_pattern", "check_sparsity_arguments",
           "point_keys"]

_GENERATOR = []  # made at the first check (numpy.random is not imported by import dualad)


def random_direction(n):
    """A fixed-seed standard normal direction of n entries, for check=True."""
    if not _GENERATOR:
        _GENERATOR.append(np.random.default_rng(17))
    return _GENERATOR[0].standard_normal(n)


def as_pattern(pattern):
    """A user's pattern as a canonical boolean csr_array: anything scipy.sparse takes (a
    sparse matrix or array, a dense 0/1 or boolean array, nested lists)."""
    import scipy.sparse  # noqa: PLC0415 - lazy: import dualad stays fast
    if isinstance(pattern, (bool, np.bool_)):
        raise TypeError("sparsity= takes True (detect the pattern) or a pattern; got "
                        f"{pattern!r}")
    try:
        p = scipy.sparse.csr_array(pattern)
    except Exception as error:  # scipy's own message says what it could not read
        raise TypeError(f"sparsity= must be True or a sparsity pattern (a scipy.sparse matrix or "
                        f"array, or a 2-D boolean array); scipy.sparse could not read "
                        f"{type(pattern).__name__}: {error}") from None
    if p.ndim != 2:
        raise ValueError(f"a sparsity pattern is 2-D (output entries × input entries); got "
                         f"{p.ndim} dimensions")
    p = scipy.sparse.csr_array((np.asarray(p.data != 0), p.indices, p.indptr), shape=p.shape)
    p.eliminate_zeros()
    p.sum_duplicates()
    p.sort_indices()
    return scipy.sparse.csr_array((np.ones(p.nnz, dtype=bool), p.indices.astype(np.int64),
                                   p.indptr.astype(np.int64)), shape=p.shape)


def check_sparsity_arguments(sparsity, check):
    """Whether a transform computes sparse results; an error for check= without sparsity=."""
    if sparsity is None or sparsity is False:
        if check:
            raise ValueError("check=True verifies a sparsity pattern: pass sparsity=True or "
                             "sparsity=<pattern> with it")
        return False
    return True


class PlanShapeError(ValueError):
    """The plan's pattern has another shape than this call's Jacobian or Hessian."""


def _shape_error(what, f, given, rows, cols):
    """The pattern's shape is not the result's: (rows, cols), rows None where not known yet."""
    shape = f"({'M' if rows is None else rows}, {cols})"
    kind = "output" if what == "Jacobian" else "input"
    return PlanShapeError(
        f"the sparsity pattern has shape {given}, but the {what} of {name_of(f)} at these "
        f"arguments has shape {shape}: {'M' if rows is None else rows} {kind} entries × {cols} "
        "input entries (each leaf of the differentiated arguments and of the output raveled "
        "and concatenated in order)")


class Plan:
    """A pattern and its colourings (made on first need): what one input structure and shapes
    are evaluated with. n_colors: colours of the colouring in use (mode)."""

    def __init__(self, pattern, symmetric=False):
        self.pattern = pattern
        # a detected plan: whether f read its tracers' values, and the point (the
        # differentiated values' key, the continuous undifferentiated ones') where it holds
        self.detected, self.read_values, self.point = False, False, None
        self.shape = pattern.shape
        self.symmetric = symmetric
        self._colors = {}
        coo = pattern.tocoo()
        self._rows = coo.row.astype(np.int64)  # CSR order (canonical csr_array)
        self._cols = coo.col.astype(np.int64)

    def colors(self, kind):
        """'columns', 'rows' or 'star': the colouring, computed once."""
        if kind not in self._colors:
            self._colors[kind] = {"columns": column_coloring, "rows": row_coloring,
                                  "star": star_coloring}[kind](self.pattern)
        return self._colors[kind]

    def n_colors(self, kind):
        return n_colors(self.colors(kind))

    def mode(self, mode):
        """forward or reverse: auto takes forward unless fewer row colours than column ones."""
        if mode != "auto":
            return mode
        return "reverse" if self.n_colors("rows") < self.n_colors("columns") else "forward"

    def sources(self, kind):
        """Per nonzero (CSR order), the flat index of its value in the compressed result:
        B (M, c) for columns and star, C (c, N) for rows."""
        key = "sources-" + kind
        if key not in self._colors:
            colors = self.colors(kind)
            c = n_colors(colors)
            rows, cols = self._rows, self._cols
            if kind == "columns":
                index = rows * c + colors[cols]
            elif kind == "rows":
                index = colors[rows] * self.shape[1] + cols
            else:
                index = self._star_sources(colors, c)
            self._colors[key] = index
        return self._colors[key]

    def _star_sources(self, colors, c):
        """H[i, j] = B[i, colour j] where j is i's only neighbour of that colour, else
        B[j, colour i] (one of the two holds in a star colouring)."""
        rows, cols = self._rows, self._cols
        off = rows != cols
        count = np.bincount(rows[off] * c + colors[cols[off]], minlength=self.shape[0] * c)
        direct = ~off | (count[rows * c + colors[cols]] == 1)
        mirrored = ~direct & (count[cols * c + colors[rows]] == 1)
        if not np.all(direct | mirrored):
            raise AssertionError("dualad: the star colouring does not determine every Hessian "
                                 "entry; please report this")
        return np.where(direct, rows * c + colors[cols], cols * c + colors[rows])

    def assemble(self, compressed, kind):
        import scipy.sparse  # noqa: PLC0415 - lazy: import dualad stays fast
        values = np.asarray(compressed, dtype=np.float64).reshape(-1)[self.sources(kind)]
        return scipy.sparse.csr_array((values, self.pattern.indices.copy(),
                                       self.pattern.indptr.copy()), shape=self.shape)


def _float_blocks(blocks, what):
    if any(is_layer(b) for b in blocks):
        raise TypeError(f"a sparse {what} holds floats (scipy.sparse): it cannot be differentiated "
                        "by an outer transform; drop sparsity= there")
    return blocks


def _dual_passes(f, inputs, directions, what, read, chunk=None):
    """f on Duals seeded with the columns of `directions` (N, c), `chunk` per pass (default: as
    many as the tangent budget allows): the (n_out, c) tangents and n_out, from
    read(out, tag) -> [(size, components) per output leaf]."""
    c = directions.shape[1]
    width = chunk or max(1, min(c, TANGENT_BUDGET // max(inputs.n, 1)))
    blocks, n_out = [], None
    with scoped_tag() as tag:
        for lo in range(0, max(c, 1), width):
            hi = min(lo + width, c)
            seeds = [directions[o:o + s, lo:hi].reshape(sh + (hi - lo,))
                     for o, s, sh in zip(inputs.offsets, inputs.sizes, inputs.shapes)]
            out = inputs.call(lambda j, x: Dual._make(x, (seeds[j].copy(),), tag))
            leaves = read(out, tag)
            pieces = [np.zeros((size, hi - lo)) if comps is None else np.reshape(comps[0], (size, hi - lo))
                      for size, comps in leaves]
            n_out = sum(size for size, _ in leaves)
            blocks.append(np.concatenate(pieces) if pieces else np.zeros((0, hi - lo)))
    _float_blocks(blocks, what)
    return np.concatenate(blocks, axis=1), n_out


def _colour_matrix(colors, lo=0, hi=None):
    """Columns lo..hi-1 of the colour indicator matrix S (N, c)."""
    hi = n_colors(colors) if hi is None else hi
    s = np.zeros((len(colors), hi - lo))
    take = np.flatnonzero((colors >= lo) & (colors < hi))
    s[take, colors[take] - lo] = 1.0
    return s


_UNKNOWN = "unknown"  # the continuous key of a value dualad cannot read (checked at every call)


def _array_key(a):
    """A hashable key of an array's dtype, shape and entries."""
    a = np.ascontiguousarray(a)
    data = a.tobytes() if a.nbytes <= 8192 else hashlib.blake2b(a.tobytes(), digest_size=16).digest()
    return a.dtype.str, a.shape, data


def point_keys(values):
    """(discrete, continuous): keys of what f is given besides the differentiated leaves.
    Discrete values (ints, bools, strings, None, integer and boolean arrays) choose indices
    and branches: a plan is kept per discrete key. Continuous ones (floats, float arrays,
    numbers of an enclosing transform) may too, invisibly to the tracer: a plan reused at
    new ones is checked; _UNKNOWN where some value is neither (an object, a function)."""
    discrete, continuous = [], []

    def add(leaf):
        if isinstance(leaf, Static):
            leaf = leaf.value
        if is_layer(leaf):
            leaf = np.asarray(unwrapped(leaf))
        if leaf is None or isinstance(leaf, (bool, int, str, bytes, np.bool_, np.integer)):
            discrete.append((type(leaf).__name__, leaf))
        elif isinstance(leaf, (float, np.floating)):
            continuous.append(float(leaf))
        elif isinstance(leaf, np.ndarray) and leaf.dtype.kind in "biuUS":
            discrete.append(_array_key(leaf))
        elif isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f":
            continuous.append(_array_key(leaf))
        elif is_node(leaf) or isinstance(leaf, Static):
            for item in flatten(leaf)[0]:
                add(item)
        else:
            continuous.append(_UNKNOWN)

    for value in values:
        add(value)
    return tuple(discrete), (_UNKNOWN if _UNKNOWN in continuous else tuple(continuous))


class _Sparse:
    """What SparseJacobian and SparseHessian share: plans, and when a reused one is checked.

    A plan is kept per input structure, shapes and discrete undifferentiated values
    (point_keys). A detected plan holds where it was detected; it is reused elsewhere
    unchecked only while f did not read its tracers' values (tracer.Context.read_values) and
    the continuous undifferentiated values are those of its detection. Otherwise (check=None,
    the default) the result is checked at each new point with one dense directional
    derivative, and where it fails the pattern is detected again at this point (the union of
    both) and the result computed anew. check=True checks every result, check=False none (a
    pattern the user vouches for); a given pattern is checked only with check=True, and a
    failure there raises."""

    what = ""

    def __init__(self, sparsity, check):
        self.given = None if sparsity is True else as_pattern(sparsity)
        self.check = check if check is None else bool(check)
        self.plans = {}

    def plan(self, f, args, argnums):
        """The Plan for these arguments (detected once per key)."""
        return self._plan_at(f, args, argnums)[0]

    def _plan_at(self, f, args, argnums):
        """(plan, its key, this point: the differentiated values' key and the continuous
        undifferentiated ones')."""
        inputs = Inputs(f, args, argnums)
        discrete, continuous = point_keys(inputs.undifferentiated())
        key = (shape_key(args), discrete)
        point = (tuple(_array_key(np.asarray(unwrapped(x))) for x in inputs.xs), continuous)
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = self._new_plan(f, args, argnums, point)
        return plan, key, point

    def _new_plan(self, f, args, argnums, point, previous=None):
        """A plan of the given pattern, or detected at this point (with previous: the union of
        its pattern and previous's, which failed here)."""
        if self.given is not None:
            pattern = self.given
            if self.symmetric and pattern.shape[0] == pattern.shape[1]:
                pattern = as_pattern(pattern + pattern.T)
            return Plan(pattern, self.symmetric)
        pattern, read_values = self.detect(f, args, argnums)
        if previous is not None:
            pattern = as_pattern(pattern + previous.pattern)
            read_values = read_values or previous.read_values
        plan = Plan(pattern, self.symmetric)
        plan.detected, plan.read_values, plan.point = True, read_values, point
        return plan

    def _needs_check(self, plan, point):
        if self.check is not None:
            return self.check
        if not plan.detected:
            return False
        x_key, continuous = point
        return (continuous == _UNKNOWN or continuous != plan.point[1] or
                (plan.read_values and x_key != plan.point[0]))

    def __call__(self, f, args, argnums):
        plan, key, point = self._plan_at(f, args, argnums)
        try:
            result = self.evaluate(f, args, argnums, plan)
        except PlanShapeError:
            if not plan.detected:
                raise
            # f's output size depends on x (x[x > 0]): the pattern is detected at this point
            plan = self.plans[key] = self._new_plan(f, args, argnums, point)
            return self.evaluate(f, args, argnums, plan)
        if not self._needs_check(plan, point):
            return result
        v = random_direction(plan.shape[1])
        exact = self.directional(f, args, argnums, plan, v)
        row = _mismatch(result, exact, v)
        if row is None:
            if plan.detected:
                plan.point = point  # known to hold here: the next call at this point is not checked
            return result
        if not plan.detected:
            raise ValueError(
                f"check=True: the pattern given as sparsity= misses a nonzero of the {self.what} "
                f"of {name_of(f)} in row {row}: on a random direction v, ({self.what}·v)[{row}] is "
                f"{exact[row]!r} but the sparse {self.what} gives {(result @ v)[row]!r}. Pass a "
                "pattern that includes that row's nonzeros (e.g. the union of dualad's patterns "
                "at several points), or drop sparsity=")
        plan = self.plans[key] = self._new_plan(f, args, argnums, point, previous=plan)
        return self.evaluate(f, args, argnums, plan)


def _mismatch(result, exact_times_v, v):
    """The first row where result·v and the dense directional derivative differ, or None."""
    approx = result @ v
    scale = abs(result) @ np.abs(v) + np.abs(exact_times_v)
    both = np.isfinite(approx) & np.isfinite(exact_times_v)
    bad = both & (np.abs(approx - exact_times_v) > 1e-8 * scale + 1e-300)
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


class SparseJacobian(_Sparse):
    """Compressed Jacobians of f for one transform (mode forward, reverse or auto)."""

    what = "Jacobian"
    symmetric = False

    def __init__(self, sparsity, mode, chunk, check):
        super().__init__(sparsity, check)
        self.mode, self.chunk = ("forward" if chunk is not None and mode == "auto" else mode), chunk

    def detect(self, f, args, argnums):
        return traced_jacobian_pattern(f, args, argnums)

    def evaluate(self, f, args, argnums, plan):
        inputs = Inputs(f, args, argnums)
        if inputs.n != plan.shape[1]:
            raise _shape_error("Jacobian", f, plan.shape, None, inputs.n)
        mode = plan.mode(self.mode)
        if mode == "forward":
            compressed, n_out = _dual_passes(f, inputs, _colour_matrix(plan.colors("columns")),
                                             "Jacobian", _outputs(f), self.chunk)
            self._check_rows(f, plan, n_out, inputs.n)
            return plan.assemble(compressed, "columns")
        recording = Recording(f, args, argnums)
        self._check_rows(f, plan, recording.n_out, inputs.n)
        colors = plan.colors("rows")
        compressed = np.zeros((n_colors(colors), inputs.n))
        for k in range(n_colors(colors)):
            cotangent = (colors == k).astype(np.float64)
            if len(recording.sizes) == 1:
                cotangent = cotangent.reshape(recording.shapes[0])
            pieces = _float_blocks(recording.pull_flat(cotangent), "Jacobian")
            compressed[k] = np.concatenate([np.ravel(p) for p in pieces]) if pieces else 0.0
        return plan.assemble(compressed, "rows")

    def directional(self, f, args, argnums, plan, v):
        """J·v by one Dual pass."""
        jv, _ = _dual_passes(f, Inputs(f, args, argnums), v[:, None], "Jacobian", _outputs(f))
        return jv[:, 0]

    @staticmethod
    def _check_rows(f, plan, n_out, n_in):
        if n_out != plan.shape[0]:
            raise _shape_error("Jacobian", f, plan.shape, n_out, n_in)


def _outputs(f):
    """read(out, tag) -> [(size, components)] of f's output leaves (None leaves skipped)."""
    def read(out, tag):
        _, leaves = read_outputs(out, tag, f)
        return [(int(np.size(v)), c) for v, c in leaves if v is not None]
    return read


def _gradient_function(f, argnums):
    """x -> the reverse-mode gradient of scalar f, as a list with one array per
    differentiated leaf (in Inputs' order): what the Hessian passes run on Duals."""
    def gradient(*args):
        recording = Recording(f, args, argnums)
        check_scalar(recording.value, f, "hessian")
        return recording.pull_flat(np.float64(1.0))
    gradient.__name__ = name_of(f)
    return gradient


def _gradient_leaves(gradient):
    def read(out, tag):
        leaves, _ = flatten(out)
        result = []
        for leaf in leaves:
            value, comps = read_output(leaf, tag, gradient)
            result.append((int(np.size(value)), comps))
        return result
    return read


class SparseHessian(_Sparse):
    """Compressed Hessians of scalar f: forward-over-reverse passes seeded by a star colouring."""

    what = "Hessian"
    symmetric = True

    def __init__(self, sparsity, chunk, check):
        super().__init__(sparsity, check)
        self.chunk = chunk

    def detect(self, f, args, argnums):
        return traced_hessian_pattern(f, args, argnums)

    def evaluate(self, f, args, argnums, plan):
        gradient = _gradient_function(f, argnums)
        inputs = Inputs(gradient, args, argnums)
        if plan.shape != (inputs.n, inputs.n):
            raise _shape_error("Hessian", f, plan.shape, inputs.n, inputs.n)
        compressed, _ = _dual_passes(gradient, inputs, _colour_matrix(plan.colors("star")), "Hessian",
                                     _gradient_leaves(gradient), self.chunk)
        return plan.assemble(compressed, "star")

    def directional(self, f, args, argnums, plan, v):
        """H·v by one forward-over-reverse pass."""
        gradient = _gradient_function(f, argnums)
        hv, _ = _dual_passes(gradient, Inputs(gradient, args, argnums), v[:, None], "Hessian",
                             _gradient_leaves(gradient))
        return hv[:, 0]
