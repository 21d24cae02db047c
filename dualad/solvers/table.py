"""docs/scipy.md, with the solvers' section from their stand-ins' own docstrings.

    python -m dualad.solvers.table > docs/scipy.md
"""

from __future__ import annotations

import importlib

from ..scipy.table import markdown as _functions_page
from . import COVERED

_HOW = {
    "roots": "the implicit function theorem at SciPy's root",
    "optima": "the stationarity condition at SciPy's optimum (an active bound: an error)",
    "odes": "forward sensitivity equations, integrated with the same method and tolerances",
    "integrals": "differentiation under the integral (the same routine) and Leibniz's rule",
}
_SAMPLES = "the rule's own formula in the samples, x and dx"


def _rows():
    rows = []
    for module_name, names in COVERED.items():
        for name, topic in names.items():
            stand_in = getattr(importlib.import_module(f"{__package__}.{topic}"), name)
            summary = " ".join((stand_in.__doc__ or "").split()).replace("|", "\\|")
            how = _SAMPLES if name in ("trapezoid", "simpson", "cumulative_trapezoid", "romb") else _HOW[topic]
            rows.append(f"| `{module_name}.{name}` | {how} | {summary} |")
    return rows


def solvers_section():
    return "\n".join([
        "## Solvers: scipy.optimize and scipy.integrate",
        "",
        "The solve runs on floats with SciPy; the solution's derivatives (w.r.t. parameters in "
        "`args=` or the function's closure, and starting points, limits and time spans where "
        "they carry derivatives) are those of the exact solution at SciPy's answer, to the "
        "solver's tolerance, not of its iterations. A function that branches on a "
        "differentiated value differently at different points of an integral or a "
        "trajectory (a jump that moves with the parameter) is an error that says where to "
        "split the problem. Not covered (SciPy's own, whose conversion of dual numbers stops "
        "with its error): `solve_ivp`'s events, `minimize`'s constraints, `dblquad`, `nquad`, "
        "`quad_vec`, `fmin` and the other solvers; nothing here runs in compiled (numba) code.",
        "",
        "| function | derivative by | stand-in |",
        "|---|---|---|",
        *_rows(),
        "",
    ])


def markdown():
    return _functions_page(solvers_section())


if __name__ == "__main__":
    print(markdown(), end="")
