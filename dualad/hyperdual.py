"""Hyper-dual numbers a + b·ε1 + c·ε2 + d·ε1ε2 (ε1² = ε2² = 0, ε1ε2 ≠ 0).

    value  shape S
    eps1   shape S + (N1,)      first derivatives along the ε1 seeds
    eps2   shape S + (N2,)      first derivatives along the ε2 seeds
    eps12  shape S + (N1, N2)   exact second derivatives ∂²/∂ε1_i ∂ε2_j

Chain rule for y = f(x_1..x_m), with f_i, f_ij the rule's first and second partials:
    ε1:   Σ_i f_i · b_i            ε2:  Σ_i f_i · c_i
    ε1ε2: Σ_i f_i · d_i + Σ_ij f_ij · b_i ⊗ c_j
No truncation error, unlike finite differences: one evaluation gives exact second
derivatives.
"""

from __future__ import annotations

import numpy as np

from .dual import Dual, _as_float, fit
from .number import from_objects, ForwardNumber, is_layer, new_tag, times

__all__ = ["HyperDual", "layer_depth"]


def _outer(b, c):
    """b (S + (N1,)) ⊗ c (S + (N2,)) -> S + (N1, N2)."""
    return b[..., :, None] * c[..., None, :]


class HyperDual(ForwardNumber):
    """Hyper-dual number ``HyperDual(value, eps1, eps2, eps12)``."""

    __slots__ = ("value", "eps1", "eps2", "eps12", "tag")
    trailing = (1, 1, 2)

    def __init__(self, value, eps1, eps2, eps12=None, tag=None):
        value = _as_float(value)
        eps1, eps2 = _as_float(eps1), _as_float(eps2)
        shape = value.shape if isinstance(value, ForwardNumber) else np.shape(value)
        if eps12 is None:
            eps12 = np.zeros(shape + eps1.shape[-1:] + eps2.shape[-1:])
        eps12 = _as_float(eps12)
        for name, comp, k in (("eps1", eps1, 1), ("eps2", eps2, 1), ("eps12", eps12, 2)):
            if comp.ndim < k or comp.shape[: comp.ndim - k] != shape:
                raise ValueError(f"{name} must have shape value.shape + {k} trailing axes "
                                 f"(value.shape = {shape}); got {comp.shape}")
        if eps12.shape[-2:] != eps1.shape[-1:] + eps2.shape[-1:]:
            raise ValueError(f"eps12 must end in (N1, N2) = {eps1.shape[-1:] + eps2.shape[-1:]}; "
                             f"got {eps12.shape}")
        self.value, self.eps1, self.eps2, self.eps12 = value, eps1, eps2, eps12
        self.tag = tag or new_tag()

    @classmethod
    def _make(cls, value, components, tag):
        obj = object.__new__(cls)
        obj.value = value
        obj.eps1, obj.eps2, obj.eps12 = components
        obj.tag = tag
        return obj

    @property
    def components(self):
        return (self.eps1, self.eps2, self.eps12)

    def _set_components(self, components):
        self.eps1, self.eps2, self.eps12 = components

    @classmethod
    def _chain(cls, rule, operands, tag):
        xs = [v for v, _ in operands]
        y = rule.value(*xs)
        shape = y.shape if hasattr(y, "shape") else ()
        varying = [comps for _, comps in operands if comps is not None]
        n1, n2 = varying[0][0].shape[-1:], varying[0][1].shape[-1:]
        sums = [None, None, None]
        with np.errstate(all="ignore"):
            first = [None] * rule.arity
            for i, (_, comps) in enumerate(operands):
                if comps is None or rule.first[i] is None:
                    continue
                first[i] = d = rule.first[i](*xs, y)
                for slot, k in enumerate(cls.trailing):
                    term = times(d, comps[slot], k)
                    sums[slot] = term if sums[slot] is None else sums[slot] + term
            for (i, j), second in rule.second.items():
                ci, cj = operands[i][1], operands[j][1]
                if second is None or ci is None or cj is None:
                    continue
                s = second(*xs, y, first[0]) if rule.arity == 1 else second(*xs, y)
                # (s·b) ⊗ c, one outer product per term, added in turn: the compiled
                # tuple_outer_axpy's order, so that both paths meet an overflow alike
                # (s = -0 from 1/inf against b ⊗ c = inf is 0 there, not nan)
                pairs = ((ci[0], cj[1]),) if i == j else ((ci[0], cj[1]), (cj[0], ci[1]))
                for b, c in pairs:
                    term = _outer(times(s, b, 1), c)
                    sums[2] = term if sums[2] is None else sums[2] + term
        trailing = (n1, n2, n1 + n2)
        comps = tuple(fit(np.zeros(shape + t) if c is None else c, y, t, shape)
                      for c, t in zip(sums, trailing))
        return cls._make(y, comps, tag)

    def _dual_level(self, func, args, kwargs, impl):
        """Evaluate func on the Dual-of-Dual view of this number, then read it back.

        a + b·ε1 + c·ε2 + d·ε1ε2 is Dual_outer(Dual_inner(a, b), Dual_inner(c, dᵀ)), so every
        operation that Dual supports (matmul, einsum, det, inv, solve) also gives exact
        second derivatives here, with its formula written once.
        """
        inner_tag, outer_tag = (self.tag[0], 1), (self.tag[0], 2)

        def nested(x):
            if isinstance(x, (list, tuple)):
                return type(x)(nested(item) for item in x)
            x = from_objects(x)  # np.array([...]) of hyper-duals: one number first
            if not (isinstance(x, HyperDual) and x.tag == self.tag):
                return x
            value = Dual._make(x.value, (x.eps1,), inner_tag)
            partials = Dual._make(x.eps2, (np.swapaxes(x.eps12, -1, -2),), inner_tag)
            return Dual._make(value, (partials,), outer_tag)

        out = func(*nested(list(args)), **kwargs)
        if isinstance(out, tuple):  # eigh, svd, qr, slogdet: read back each output
            items = [self._read_back(item, inner_tag, outer_tag) for item in out]
            return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
        return self._read_back(out, inner_tag, outer_tag)

    def _read_back(self, out, inner_tag, outer_tag):
        """A HyperDual of this tag from a result on the Dual-of-Dual view."""
        n1, n2 = self.eps1.shape[-1:], self.eps2.shape[-1:]

        def unpack(x, n_trailing):
            if isinstance(x, Dual) and x.tag == inner_tag:
                return x.value, x.partials
            return x, np.zeros(np.shape(x) + n_trailing)

        if isinstance(out, Dual) and out.tag == outer_tag:
            value, eps1 = unpack(out.value, n1)
            eps2, eps12_t = unpack(out.partials, n2 + n1)
        else:
            value, eps1 = unpack(out, n1)
            eps2, eps12_t = np.zeros(np.shape(value) + n2), np.zeros(np.shape(value) + n2 + n1)
        # eps12 contiguous, so selections can view it by blocks (numpy_functions.select)
        return self._new(value, (eps1, eps2, np.ascontiguousarray(np.swapaxes(eps12_t, -1, -2))))

    def __repr__(self):
        return (f"HyperDual(value={self.value!r}, eps1={self.eps1!r}, eps2={self.eps2!r}, "
                f"eps12={self.eps12!r})")


def layer_depth(x):
    """How many orders of derivative x carries: 1 per Dual or Traced layer, 2 per HyperDual,
    summed over nested layers (the maximum over a structure)."""
    if isinstance(x, (tuple, list)):
        return max((layer_depth(item) for item in x), default=0)
    if isinstance(x, dict):
        return max((layer_depth(item) for item in x.values()), default=0)
    if isinstance(x, np.ndarray) and x.dtype == object:
        return max((layer_depth(item) for item in x.flat), default=0)
    if not is_layer(x):
        return 0
    own = 2 if isinstance(x, HyperDual) else 1
    inner = layer_depth(x.value)
    if isinstance(x, ForwardNumber):
        inner = max([inner] + [layer_depth(c) for c in x.components])
    return own + inner
