"""The canonical symmetric cone program (SCP) cvxdp's solvers work on.

    minimise    c' x + offset
    subject to  A x + s = b,   s in K

with ``K = zero^z x nonneg^l x SOC(q_1) x ... x PSD(s_1) x ...`` in SCS's row order and SCS's
coordinates (PSD blocks in scaled lower-triangular svec).  ``cone`` is the
:class:`cvxdp.jordan.Product` of the non-zero part of K (orthant, spin factors, symmetric
matrices); the ``zero`` rows are equalities.

A model may also hold public exponential cones (``log``, ``entr``, ``log_det``, ...): their
rows are kept apart, in ``exp_tail`` (:class:`ExpTail`), so that every private step sees a
symmetric program; the exact solves append them (:func:`with_exp_tail`).  The tail holds public
data only: ``to_scp`` lifts private data in a cone's first or last coordinate into orthant rows
and refuses them in its middle one (:mod:`cvxdp.transform.exp_cones`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = ["SymmetricConeProgram", "ConeDims", "ConeBlock", "ExpTail", "orthant_rows_added",
           "with_exp_tail"]


class ConeBlock(NamedTuple):
    """One block of K: its kind, first row, number of rows and order (``q`` for a second-order
    cone of q rows, the matrix order ``r`` for a PSD block of ``r (r + 1) / 2`` rows, else 0)."""

    kind: str  # "zero", "nonneg", "soc" or "psd"
    start: int
    size: int
    order: int


@dataclass(frozen=True)
class ConeDims:
    """Sizes of the blocks of K, in SCS's order."""

    zero: int = 0
    nonneg: int = 0
    soc: tuple[int, ...] = ()
    psd: tuple[int, ...] = ()  # matrix orders r (rows used: r (r + 1) / 2 each)

    @property
    def rows(self) -> int:
        return (self.zero + self.nonneg + sum(self.soc)
                + sum(r * (r + 1) // 2 for r in self.psd))

    def blocks(self) -> list[ConeBlock]:
        """Every block of K in SCS's row order; the zero and nonneg blocks come first, also
        when empty (size 0), then one per second-order cone and one per PSD block."""
        out = [ConeBlock("zero", 0, self.zero, 0), ConeBlock("nonneg", self.zero, self.nonneg, 0)]
        r0 = self.zero + self.nonneg
        for q in self.soc:
            out.append(ConeBlock("soc", r0, q, q))
            r0 += q
        for r in self.psd:
            size = r * (r + 1) // 2
            out.append(ConeBlock("psd", r0, size, r))
            r0 += size
        return out


@dataclass(frozen=True)
class ExpTail:
    """Public exponential-cone rows of a program: ``A x + s = b`` with every consecutive triple
    ``s[3 k: 3 k + 3] = (u, v, w)`` in SCS's exponential cone ``{v exp(u / v) <= w, v > 0}``
    (closure).  ``A`` has the columns of the program's first ``A.shape[1]`` variables; a
    program with more variables (a counterpart's auxiliaries) has zeros there."""

    A: sp.csr_matrix
    b: np.ndarray

    @property
    def cones(self) -> int:
        return self.A.shape[0] // 3

    def rows(self, n: int) -> sp.csr_matrix:
        """``A`` with zero columns up to ``n`` variables."""
        k = self.A.shape[1]
        if n == k:
            return sp.csr_matrix(self.A)
        return sp.hstack([self.A, sp.csr_matrix((self.A.shape[0], n - k))], format="csr")


@dataclass
class SymmetricConeProgram:
    """``min c'x + offset  s.t.  A x + s = b, s in K`` (see module doc).

    Attributes
    ----------
    A : scipy.sparse.csc_matrix, shape (rows, n)
    b : ndarray, shape (rows,)
    c : ndarray, shape (n,)
    offset : float
        Constant term of the objective (CVXPY's ``d``).
    dims : ConeDims
    cone : cvxdp.jordan.Product
        The algebra of the non-zero rows (orthant x spin factors x symmetric matrices).
    sign : float
        ``+1`` for a minimisation, ``-1`` if the user maximised (CVXPY negates the objective).
    inverse : cvxdp.transform.ScpInverse
        What :func:`cvxdp.transform.from_scp` needs to map a solution back to the user's
        variables (the problem, CVXPY's solving chain and inverse data).
    sensitivity : cvxdp.transform.SensitivityBounds or None
        Bounds on the change of ``A``, ``b``, ``c``, ``offset`` between neighbouring datasets,
        derived from the privacy spec(s) given to ``to_scp(problem, private=...)``; None when
        no spec was given.
    meta : dict
        ``"param_prob"`` (CVXPY's parametric cone program) and ``"reductions"`` (names of the
        chain's reductions).
    exp_tail : ExpTail or None
        Public exponential-cone rows the exact solves add after ``A``'s (None: none).
    """

    A: sp.csc_matrix
    b: np.ndarray
    c: np.ndarray
    offset: float
    dims: ConeDims
    cone: Any
    sign: float = 1.0
    inverse: Any = None
    sensitivity: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    exp_tail: ExpTail | None = None

    @property
    def n(self) -> int:
        return self.A.shape[1]

    @property
    def m(self) -> int:
        return self.A.shape[0]


def orthant_rows_added(prog: SymmetricConeProgram, G: Any, h: np.ndarray, *,
                       first: bool = False) -> tuple[sp.csc_matrix, np.ndarray, ConeDims]:
    """``(A, b, dims)`` of ``prog`` with the rows ``G x <= h`` added to its orthant, after its
    orthant rows (or before them, ``first=True``); the other blocks keep their order."""
    d = prog.dims
    at = d.zero if first else d.zero + d.nonneg
    G = sp.csr_matrix(G)
    A = sp.vstack([prog.A[:at], G, prog.A[at:]], format="csc")
    b = np.concatenate([prog.b[:at], np.asarray(h, dtype=float).ravel(), prog.b[at:]])
    dims = ConeDims(zero=d.zero, nonneg=d.nonneg + G.shape[0], soc=d.soc, psd=d.psd)
    return A, b, dims


def with_exp_tail(prog: SymmetricConeProgram) -> tuple[sp.csc_matrix, np.ndarray, int]:
    """``(A, b, k)``: ``prog``'s rows followed by its public exponential-cone rows (``k``
    cones, SCS's order: after the PSD blocks)."""
    tail = prog.exp_tail
    if tail is None:
        return sp.csc_matrix(prog.A), prog.b, 0
    # the stacked matrix is kept with the program while its A is the same object (the
    # second-order certificates solve one program hundreds of times, changing b and c only)
    cached = prog.meta.get("_with_exp_tail")
    if cached is not None and cached[0] is prog.A and cached[1] is tail:
        A = cached[2]
    else:
        A = sp.vstack([prog.A, tail.rows(prog.n)], format="csc")
        prog.meta["_with_exp_tail"] = (prog.A, tail, A)
    return A, np.concatenate([prog.b, tail.b]), tail.cones
