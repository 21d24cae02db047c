"""Derivatives through SciPy's solvers (issue 42, the Python path).

A scientific model calls solvers: a steady state from ``scipy.optimize.root``, an equilibrium
from ``brentq``, an inner fit from ``minimize``, a trajectory from ``solve_ivp``, an
expectation from ``quad``. Differentiating the solver's iterations would be wrong (tangents
lag, tolerances change the answer). When a transform differentiates f, f runs over a view of
its globals (dualad/allocation.py) that asks ``allocation.STAND_INS`` first; this package's
hook, ``stand_in``, gives the view a stand-in for each SciPy solver covered here. A stand-in
behaves exactly as SciPy's function when nothing carries a derivative (it delegates), and
otherwise solves on floats with SciPy and attaches the derivative by the right formula:

    roots.py      root, fsolve, root_scalar, brentq, brenth, bisect, ridder, toms748,
                  newton, fixed_point: the implicit function theorem
    optima.py     minimize, minimize_scalar, golden, brent, fminbound, least_squares,
                  curve_fit: the stationarity condition
    odes.py       solve_ivp, odeint: forward sensitivity equations
    integrals.py  quad (differentiation under the integral, Leibniz's rule for the limits),
                  trapezoid, simpson, cumulative_trapezoid, romb

The stand-ins are also public functions of those modules, with SciPy's signatures, for code
that the view does not reach (see roots.newton). The hook imports nothing: it knows a SciPy
function only once its module is in sys.modules, so ``import dualad`` stays free of scipy.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["stand_in", "COVERED"]

# SciPy module -> {function name: the module of dualad.solvers with its stand-in}
COVERED = {
    "scipy.optimize": {**dict.fromkeys(("root", "fsolve", "root_scalar", "brentq", "brenth", "bisect",
                                        "ridder", "toms748", "newton", "fixed_point"), "roots"),
                       **dict.fromkeys(("minimize", "minimize_scalar", "golden", "brent", "fminbound",
                                        "least_squares", "curve_fit"), "optima")},
    "scipy.integrate": {**dict.fromkeys(("solve_ivp", "odeint"), "odes"),
                        **dict.fromkeys(("quad", "trapezoid", "simpson", "cumulative_trapezoid", "romb"),
                                        "integrals")},
}

_BY_ID: dict = {}  # id(SciPy's function) -> (the function, topic module, name)
_INDEXED: set = set()


def _index(modules):
    for module_name, names in COVERED.items():
        if module_name in _INDEXED:
            continue
        module = modules.get(module_name)
        if module is None:
            continue
        for name, topic in names.items():
            function = getattr(module, name, None)
            if function is not None:
                _BY_ID[id(function)] = (function, topic, name)
        _INDEXED.add(module_name)


def stand_in(value):
    """allocation.STAND_INS's hook: the stand-in for one of the SciPy solvers covered here,
    None at once for anything else."""
    if len(_INDEXED) < len(COVERED):
        modules = sys.modules
        if "scipy.optimize" not in modules and "scipy.integrate" not in modules:
            return None
        _index(modules)
    entry = _BY_ID.get(id(value))
    if entry is None or entry[0] is not value:
        return None
    return getattr(importlib.import_module(f"{__name__}.{entry[1]}"), entry[2])
