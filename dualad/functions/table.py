"""docs/numpy.md from the registry: every supported NumPy function and its status per layer.

    python -m dualad.functions.table > docs/numpy.md
"""

from __future__ import annotations

from . import REGISTRY

KIND_NOTES = {
    "selection": "each output entry is an operand entry",
    "linear": "derivative a linear map fixed by the values",
    "multilinear": "product rule (einsum form)",
    "jvp": "one JVP, transposed for reverse",
    "composition": "NumPy code on registered functions",
    "value_only": "no derivative (piecewise constant or integer result)",
}


def markdown():
    """The table, one row per function, grouped by kind."""
    lines = [
        "# NumPy functions dualad differentiates",
        "",
        "Generated from the registry (`dualad/functions/`) by "
        "`python -m dualad.functions.table > docs/numpy.md`; a test fails when it is stale.",
        "",
        "Every function below works on the Python path in forward mode (Dual), reverse mode "
        "(the tape) and at second order (HyperDual, and any nesting of transforms), because "
        "each layer builds it from the function's kind. *compiled* says whether @njit code "
        "differentiated by a compiled kernel may call it on arrays of duals (`dualad/jit/numpy_*.py`); "
        "arrays of duals are 1-D or 2-D in compiled code (a vector's reductions take axis None, "
        "0 or -1; a matrix's sum takes 0 or 1, its other reductions the whole matrix; linalg "
        "takes one matrix, not stacks), and forms beyond that raise an error naming the rewrite "
        "or `jit=False`, as does every function marked *no*. Elementwise functions (ufuncs) are the "
        "rule table's (`dualad.rules.RULES`), supported on every path. ndarray methods "
        "(`x.sum()`, `x.mean()`, `x.var(ddof=1)`, `x.clip(lo, hi)`, `x.dot(y)`, `x.astype(float)`, "
        "`x.T`, ...) are these functions on both paths.",
        "",
        "| function | kind | forward | reverse | second order | compiled | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in sorted(REGISTRY.values(), key=lambda e: (e.kind, e.name)):
        if entry.func.__name__.startswith("_"):
            continue  # dualad's own primitives behind a NumPy function (linalg._cholesky)
        derivative = "value only" if entry.kind == "value_only" else "yes"
        note = entry.note or KIND_NOTES[entry.kind]
        lines.append(f"| `{entry.name}` | {entry.kind} | {derivative} | {derivative} | "
                     f"{derivative} | {'yes' if entry.compiled else 'no'} | {note} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
