"""Drop-in for Python's ``math`` module that keeps derivatives: ``import dualad.math as math``.

Python's math functions convert their argument to float, which would drop a dual number's
derivative (dualad raises a TypeError instead). These names call the rule table through
NumPy, so they accept floats, arrays and dual numbers alike.
"""

import math as _math

import numpy as np

from .rules import MATH_NAMES, RULES

pi, e, tau, inf, nan = _math.pi, _math.e, _math.tau, _math.inf, _math.nan

# Every rule under its NumPy name (sin, arctan2, ...), plus Python's math spellings.
for _name, _rule in RULES.items():
    globals()[_name] = _rule.ufunc if _rule.ufunc is not None else _rule.value

for _alias, _name in MATH_NAMES.items():
    if _alias not in globals():
        globals()[_alias] = globals()[_name]


def log(x, base=None):
    """Natural logarithm, or log(x) / log(base) like math.log(x, base)."""
    return np.log(x) if base is None else np.log(x) / np.log(base)


def isnan(x):
    return np.isnan(x)


def isinf(x):
    return np.isinf(x)


def isfinite(x):
    return np.isfinite(x)
