"""Structured inputs and outputs shared by the tree tests and the cost-model tests: a NamedTuple,
dataclasses (one with a static field) and a function returning a dict of a tuple."""

import dataclasses
from typing import NamedTuple

import numpy as np

import dualad


class Params(NamedTuple):
    scale: float
    weights: np.ndarray


@dataclasses.dataclass
class Model:
    params: Params
    offset: float
    n_terms: int  # an int field: passed through
    label: str
    mesh: object  # marked dualad.static at the call


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: float
    b: tuple


def model_loss(m):
    return (m.params.scale * np.sum(np.sin(m.params.weights) * m.mesh) ** 2
            + m.offset ** 3 * m.n_terms)


def make_model():
    return Model(Params(1.5, np.array([0.2, -0.4, 0.9])), 0.7, 3, "run-1",
                 dualad.static(np.array([1.0, 2.0, 3.0])))


def analytic_model_gradient(m):
    mesh = m.mesh.value
    s = np.sum(np.sin(m.params.weights) * mesh)
    return (s ** 2, m.params.scale * 2 * s * np.cos(m.params.weights) * mesh,
            3 * m.offset ** 2 * m.n_terms)


def tree_output(x):
    return {"s": np.sin(x[0]) * x[1], "t": (x * 2.0, x[1] ** 3)}
