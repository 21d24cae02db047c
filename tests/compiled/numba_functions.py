"""numba functions shared by the compiled test modules.

Defined once so that numba specialises each for dual types once per session, whichever
module's kernels reach it first, and the shared kernels (GRAD_ROSEN, D1, D2) compile once:
numba compiles are slow.
"""

import math

import numba
import numpy as np

import dualad
from functions import W, b4
from functions import rosen_loop as rosen_loop_py

X5 = np.array([-1.2, 1.0, 0.7, 0.3, 1.1])
M2 = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])

rosen_loop = numba.njit(rosen_loop_py)


@numba.njit
def rosen_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@numba.njit
def textbook(x):
    return math.log(x[0]) + x[0] * x[1] - np.sin(x[1])


@numba.njit
def mlp(x):
    return np.tanh(W @ x + b4)


@numba.njit
def pair(a, b):
    return a * b, a - b  # a nested @njit call returning a tuple of duals


@numba.njit
def quartic(x):
    return (x - 1.5) ** 4 + x * x


@numba.njit
def quartic_prime(x):
    return 4.0 * (x - 1.5) ** 3 + 2.0 * x


# derivative kernels shared by the modules that call them (kernels, errors, auto)
GRAD_ROSEN = dualad.grad(rosen_loop)  # mode="auto": forward below the crossover, the tape above
D1 = dualad.derivative(quartic)
D2 = dualad.derivative(quartic_prime)


@numba.njit
def scalar_mix(x):
    prod, diff = pair(x[0], x[1])  # nested @njit call returning a tuple of hyper-duals
    total = 0.0
    for i in range(len(x)):
        if x[i] > 0.5:
            total += math.exp(x[i]) * prod
        else:
            total -= math.atan2(x[i], 2.0) * diff ** 2
    v = x[2]
    while v < 10.0:
        v = v * 2.0 + x[3] ** 2
    return total + v * math.sqrt(abs(x[4]) + 1.0) + np.tanh(x[1] * x[3])


@numba.njit
def layer(x, w, b):
    return np.tanh(w @ x + b)
