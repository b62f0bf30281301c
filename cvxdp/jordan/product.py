"""Direct products J_1 x ... x J_B: a whole CVXPY cone (orthant x SOCs x PSDs) as one EJA."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from cvxdp.jordan.base import EuclideanJordanAlgebra
from cvxdp.jordan.orthant import Orthant
from cvxdp.jordan.spin import SpinFactor
from cvxdp.jordan.symmetric import SymmetricMatrices

__all__ = ["Product"]


class _Group:
    """Blocks of one identical algebra, gathered with fancy indices for one batched call."""

    __slots__ = ("algebra", "blocks", "coords", "ranks")

    def __init__(self, algebra: EuclideanJordanAlgebra) -> None:
        self.algebra = algebra
        self.blocks: list[int] = []
        self.coords: Any = []  # (nb, block dim) indices into the product's coordinates
        self.ranks: Any = []   # (nb, block rank) indices into the product's eigenvalues


class Product(EuclideanJordanAlgebra):
    """Direct product of EJAs over one concatenated vector (blockwise operations).

    Elements are the concatenation of the blocks' stored coordinates in the given order, e.g.
    SCS's ``[orthant | SOC_1 | ... | PSD_1 | ...]`` rows.  ``rank`` and ``dim`` are sums, the
    identity, trace and inner product are blockwise, eigenvalues are the concatenation of the
    block spectra (block order, each block in its own order), ``||x||_inf = max_b ||x_b||_inf``,
    and :meth:`normalized_exp` shifts by the *global* smallest eigenvalue.

    Identical blocks (same type and size) are grouped, and each operation is one vectorised call
    per group: a product of 1e5 equal second-order cones is one numpy call, and equal-order PSD
    blocks share one batched ``eigh``.

    Parameters
    ----------
    blocks : sequence of EuclideanJordanAlgebra
        The factors (nested products are flattened).  At least one.

    Attributes
    ----------
    blocks : tuple of EuclideanJordanAlgebra
    offsets : ndarray of int, shape (B + 1,)
        ``x[offsets[b]:offsets[b + 1]]`` is block ``b`` of a stored element.
    slices : tuple of slice
        The same as slices.
    rank_offsets : ndarray of int, shape (B + 1,)
        Positions of each block's eigenvalues in :meth:`eigenvalues`.

    References
    ----------
    Song, Xue & Zhang (2025), Section 3.2 (direct sums of simple EJAs).
    """

    def __init__(self, blocks: Sequence[EuclideanJordanAlgebra]) -> None:
        flat: list[EuclideanJordanAlgebra] = []
        for b in blocks:
            if isinstance(b, Product):
                flat.extend(b.blocks)
            elif isinstance(b, EuclideanJordanAlgebra):
                flat.append(b)
            else:
                raise TypeError(f"Product blocks must be EuclideanJordanAlgebra, got {b!r}.")
        if not flat:
            raise ValueError("Product needs at least one block.")
        self.blocks = tuple(flat)
        dims = np.fromiter((b.dim for b in flat), dtype=np.int64, count=len(flat))
        ranks = np.fromiter((b.rank for b in flat), dtype=np.int64, count=len(flat))
        self.offsets = np.concatenate([[0], np.cumsum(dims)])
        self.rank_offsets = np.concatenate([[0], np.cumsum(ranks)])
        self.dim = int(self.offsets[-1])
        self.rank = int(self.rank_offsets[-1])
        # blocks of the same type and dimension are the same algebra (S^r is fixed by its dim)
        groups: dict[tuple[type, int], _Group] = {}
        for i, b in enumerate(flat):
            g = groups.get((type(b), b.dim))
            if g is None:
                g = groups[(type(b), b.dim)] = _Group(b)
            g.blocks.append(i)
        self.gram = np.empty(self.dim)
        self._identity = np.empty(self.dim)
        for g in groups.values():
            idx = np.asarray(g.blocks)
            g.coords = self.offsets[idx][:, None] + np.arange(g.algebra.dim)
            g.ranks = self.rank_offsets[idx][:, None] + np.arange(g.algebra.rank)
            self.gram[g.coords] = g.algebra.gram
            self._identity[g.coords] = g.algebra.identity()
        self._groups = tuple(groups.values())

    @classmethod
    def from_cone_dims(cls, nonneg: int = 0, soc: Sequence[int] = (),
                       psd: Sequence[int] = ()) -> Product:
        """The algebra of SCS's cone ``R^nonneg x SOC(q_1) x ... x PSD(r_1) x ...`` (zero cone
        excluded), in SCS's row order; e.g. ``Product.from_cone_dims(data["dims"].nonneg,
        data["dims"].soc, data["dims"].psd)``."""
        blocks: list[EuclideanJordanAlgebra] = [Orthant(nonneg)] if nonneg else []
        blocks += [SpinFactor(q) for q in soc]
        blocks += [SymmetricMatrices(r) for r in psd]
        return cls(blocks)

    def __repr__(self) -> str:
        if len(self.blocks) <= 6:
            return f"Product([{', '.join(map(repr, self.blocks))}])"
        parts = ", ".join(f"{len(g.blocks)} x {g.algebra!r}" for g in self._groups)
        return f"Product(<{len(self.blocks)} blocks: {parts}>; dim={self.dim})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Product) and self.blocks == other.blocks

    def __hash__(self) -> int:
        return hash((self.dim, self.rank, len(self.blocks)))

    @cached_property
    def slices(self) -> tuple[slice, ...]:
        """Slices of each block's coordinates in a stored element."""
        o = self.offsets
        return tuple(slice(int(a), int(b)) for a, b in zip(o[:-1], o[1:], strict=True))

    @cached_property
    def rank_slices(self) -> tuple[slice, ...]:
        """Slices of each block's eigenvalues in :meth:`eigenvalues`."""
        ro = self.rank_offsets
        return tuple(slice(int(a), int(b)) for a, b in zip(ro[:-1], ro[1:], strict=True))

    def split(self, x: Any) -> list[np.ndarray]:
        """The blocks of ``x`` (views), batched over leading axes."""
        x = self._as_element(x)
        return [x[..., s] for s in self.slices]

    def join(self, parts: Sequence[Any]) -> np.ndarray:
        """Inverse of :meth:`split`."""
        if len(parts) != len(self.blocks):
            raise ValueError(f"join needs {len(self.blocks)} parts, got {len(parts)}.")
        return self._as_element(np.concatenate([np.asarray(p, dtype=float) for p in parts],
                                               axis=-1))

    def identity(self) -> np.ndarray:
        return self._identity.copy()

    def product(self, x: Any, y: Any) -> np.ndarray:
        x, y = np.broadcast_arrays(self._as_element(x), self._as_element(y, "y"))
        out = np.empty(x.shape)
        for g in self._groups:
            out[..., g.coords] = g.algebra.product(x[..., g.coords], y[..., g.coords])
        return out

    def _eig(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        lam = np.empty((*x.shape[:-1], self.rank))
        auxes = []
        for g in self._groups:
            lam_g, aux_g = g.algebra._eig(x[..., g.coords])
            lam[..., g.ranks] = lam_g
            auxes.append(aux_g)
        return lam, (x.shape[:-1], auxes)

    def _recompose(self, vals: np.ndarray, aux: Any) -> np.ndarray:
        shape, auxes = aux
        out = np.empty((*shape, self.dim))
        for g, aux_g in zip(self._groups, auxes, strict=True):
            out[..., g.coords] = g.algebra._recompose(vals[..., g.ranks], aux_g)
        return out

    def _frame(self, aux: Any) -> np.ndarray:
        shape, auxes = aux
        out = np.zeros((*shape, self.rank, self.dim))
        for g, aux_g in zip(self._groups, auxes, strict=True):
            out[..., g.ranks[:, :, None], g.coords[:, None, :]] = g.algebra._frame(aux_g)
        return out
