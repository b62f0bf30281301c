"""The protocol every Euclidean Jordan algebra (EJA) adapter implements.

Storage convention (the one cvxdp uses everywhere): an element of an algebra ``J`` of dimension
``k`` is a float array whose last axis has length ``k`` and holds the coordinates CVXPY/SCS use
for the corresponding cone rows -- plain coordinates for the orthant, raw ``(t, x)`` for a
second-order cone, SCS's scaled lower-triangular svec for a PSD block.  Any number of leading
axes is a *batch*: every operation maps over them (no Python loop).

These stored coordinates are not always the paper's isometry ``phi`` (Song, Xue & Zhang
2025, Def 3.3).  The trace form ``<x, y> = Tr(x o y)`` of a stored element is the weighted
dot product ``sum(gram * x * y)`` with a per-coordinate weight vector ``gram`` (1 on orthant and
svec coordinates, 2 on spin-factor coordinates), so ``phi(x) = sqrt(gram) * x``.  The factor 2 of
the spin factor is defined in exactly one place, :data:`cvxdp.jordan.spin.SPIN_TRACE_FORM`;
everything here (``inner``, ``phi``, ``phi_inv``, ``random_normal`` and hence the Gaussian
mechanism) goes through ``gram``.

Subclasses implement four kernels on arrays of shape ``(..., dim)``:

``_eig(x) -> (lam, aux)``
    eigenvalues ``(..., rank)`` and whatever describes the Jordan frame;
``_recompose(vals, aux)``
    ``sum_i vals_i q_i`` for the frame in ``aux``;
``_frame(aux)``
    the frame itself, ``(..., rank, dim)``;
``product(x, y)`` and ``identity()``.

Every spectral function (``apply``, ``exp``, ``log``, ``project``, ``normalized_exp``) is then
one decomposition plus one recomposition.

References
----------
Song, Xue & Zhang (2025), Section 3.2 (EJAs, spectral decomposition, trace, inner product,
isometry phi, Def 3.3) and Appendix A (norms, Hoelder, SCMWU, Def A.4).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cvxdp.privacy.rng import as_generator

__all__ = ["EuclideanJordanAlgebra", "normalize_ord"]


def normalize_ord(ord: Any) -> float:
    """Map ``1 | 2 | inf | "l1" | "l2" | "linf" | "inf" | "nuc" | "fro" | "spectral"`` to
    1.0, 2.0 or inf; anything else raises ``ValueError`` naming the accepted values."""
    table = {"l1": 1.0, "nuc": 1.0, "nuclear": 1.0, "l2": 2.0, "fro": 2.0, "frobenius": 2.0,
             "linf": np.inf, "l-inf": np.inf, "inf": np.inf, "spectral": np.inf}
    if isinstance(ord, str):
        key = ord.lower()
        if key in table:
            return table[key]
    elif ord in (1, 2) or (isinstance(ord, float) and np.isinf(ord) and ord > 0):
        return float(ord)
    raise ValueError(
        f"norm order {ord!r} is not supported; use 1 ('l1', nuclear), 2 ('l2', Frobenius) or "
        "numpy.inf ('linf', spectral)."
    )


class EuclideanJordanAlgebra:
    """Base class of the EJA adapters (see the module docstring for the storage convention).

    Attributes
    ----------
    dim : int
        ``k``, the length of a stored element.
    rank : int
        ``r``, the number of eigenvalues of an element.
    gram : ndarray, shape (dim,)
        Weights of the trace form: ``<x, y> = sum(gram * x * y)``.
    """

    dim: int
    rank: int
    gram: np.ndarray

    # ---- kernels a subclass provides ------------------------------------------------------
    def identity(self) -> np.ndarray:
        """The unit element ``e`` (``Tr e = rank``)."""
        raise NotImplementedError

    def product(self, x: Any, y: Any) -> np.ndarray:
        """The Jordan product ``x o y`` (commutative, not associative)."""
        raise NotImplementedError

    def _eig(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        raise NotImplementedError

    def _recompose(self, vals: np.ndarray, aux: Any) -> np.ndarray:
        raise NotImplementedError

    def _frame(self, aux: Any) -> np.ndarray:
        raise NotImplementedError

    # ---- coordinates ----------------------------------------------------------------------
    @property
    def phi_scale(self) -> np.ndarray:
        """``sqrt(gram)``: ``phi(x) = phi_scale * x`` (002 Def 3.3)."""
        return np.sqrt(self.gram)

    def _as_element(self, x: Any, name: str = "x") -> np.ndarray:
        a = np.asarray(x, dtype=float)
        if a.ndim == 0 or a.shape[-1] != self.dim:
            raise ValueError(
                f"{name} must have last axis of length dim={self.dim} for {self!r}, got shape "
                f"{a.shape}."
            )
        return a

    def phi(self, x: Any) -> np.ndarray:
        """The isometry ``phi: J -> R^dim``: ``<x, y> = phi(x) . phi(y)``."""
        return self._as_element(x) * self.phi_scale

    def phi_inv(self, v: Any) -> np.ndarray:
        """Inverse of :meth:`phi` (maps ``R^dim`` back to stored coordinates)."""
        return self._as_element(v, "v") / self.phi_scale

    # ---- bilinear forms -------------------------------------------------------------------
    def inner(self, x: Any, y: Any) -> np.ndarray | float:
        """``<x, y> = Tr(x o y)`` (batched over leading axes)."""
        x, y = self._as_element(x), self._as_element(y, "y")
        return _scalar(np.sum(self.gram * x * y, axis=-1))

    def trace(self, x: Any) -> np.ndarray | float:
        """``Tr x = <e, x>`` = sum of the eigenvalues."""
        x = self._as_element(x)
        return _scalar(x @ (self.gram * self.identity()))

    # ---- spectral -------------------------------------------------------------------------
    def eigenvalues(self, x: Any) -> np.ndarray:
        """Eigenvalues ``(..., rank)``, in each adapter's natural order (documented there)."""
        return self._eig(self._as_element(x))[0]

    def spectral_decomposition(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """``x = sum_i lam_i q_i``: returns ``(lam, frame)`` with ``lam`` of shape
        ``(..., rank)`` and the Jordan frame ``(..., rank, dim)`` (primitive idempotents with
        ``q_i o q_j = delta_ij q_i``, ``sum_i q_i = e``)."""
        lam, aux = self._eig(self._as_element(x))
        return lam, self._frame(aux)

    def apply(self, f: Callable[[np.ndarray], np.ndarray], x: Any) -> np.ndarray:
        """Spectral function ``f(x) = sum_i f(lam_i) q_i``; ``f`` acts elementwise on arrays."""
        lam, aux = self._eig(self._as_element(x))
        return self._recompose(np.asarray(f(lam), dtype=float), aux)

    def exp(self, x: Any) -> np.ndarray:
        """``exp(x)``.  Overflows only where the true value does; for a stable version use
        :meth:`exp_shifted` or :meth:`normalized_exp`."""
        return self.apply(np.exp, x)

    def exp_shifted(self, x: Any) -> tuple[np.ndarray, np.ndarray | float]:
        """``(exp(x - s e), s)`` with ``s = lam_max(x)`` per batch element, so the first output
        has eigenvalues in ``(0, 1]`` and ``exp(x) = e^s * exp(x - s e)`` never overflows."""
        lam, aux = self._eig(self._as_element(x))
        if lam.shape[-1] == 0:
            return self._recompose(lam, aux), _scalar(np.zeros(lam.shape[:-1]))
        s = lam.max(axis=-1, keepdims=True)
        return self._recompose(np.exp(lam - s), aux), _scalar(s[..., 0])

    def normalized_exp(self, y: Any) -> np.ndarray:
        """``exp(-y) / Tr exp(-y)``: the SCMWU iterate for cumulative loss ``y`` (002 Def A.4).

        Computed stably: shifted by ``lam_min(y)`` over the whole element (all blocks of a
        product) so the largest weight is exactly 1 before normalising; one spectral
        decomposition.  The result is a distribution: in the cone with trace 1.
        """
        lam, aux = self._eig(self._as_element(y, "y"))
        w = np.exp(lam.min(axis=-1, keepdims=True) - lam)
        return self._recompose(w / w.sum(axis=-1, keepdims=True), aux)

    def log(self, x: Any) -> np.ndarray:
        """``log(x)`` for ``x`` in the interior of the cone (all eigenvalues > 0).

        Raises
        ------
        ValueError
            If some eigenvalue is <= 0 (``x`` is not in the interior of the cone).
        """
        lam, aux = self._eig(self._as_element(x))
        if lam.size and not np.all(lam > 0):
            raise ValueError(
                f"log needs x in the interior of the cone; smallest eigenvalue is "
                f"{float(lam.min()):.3g}. Project or shift x first."
            )
        return self._recompose(np.log(lam), aux)

    def norm(self, x: Any, ord: Any = 2) -> np.ndarray | float:
        """Spectral ``l_p`` norm ``||lam(x)||_p`` for ``ord`` in {1, 2, inf}.

        For matrices these are the nuclear, Frobenius and spectral norms.  ``ord=2`` is computed
        without a decomposition as ``sqrt(<x, x>)``.
        """
        p = normalize_ord(ord)
        x = self._as_element(x)
        if p == 2.0:
            return _scalar(np.sqrt(np.maximum(np.sum(self.gram * x * x, axis=-1), 0.0)))
        lam = np.abs(self._eig(x)[0])
        if lam.shape[-1] == 0:
            return _scalar(np.zeros(lam.shape[:-1]))
        return _scalar(lam.sum(axis=-1) if p == 1.0 else lam.max(axis=-1))

    def project(self, x: Any) -> np.ndarray:
        """Projection onto the cone of squares: ``sum_i max(lam_i, 0) q_i``.

        It is the nearest point in the trace-form norm; since ``gram`` is constant on each simple
        block it is also the nearest point in the Euclidean norm of the stored coordinates.
        """
        return self.apply(lambda lam: np.maximum(lam, 0.0), x)

    def is_in_cone(self, x: Any, tol: float = 1e-9) -> np.ndarray | bool:
        """``lam_min(x) >= -tol`` (absolute tolerance), batched."""
        lam = self.eigenvalues(x)
        if lam.shape[-1] == 0:
            out = np.ones(lam.shape[:-1], dtype=bool)
        else:
            out = lam.min(axis=-1) >= -tol
        return bool(out) if out.ndim == 0 else out

    def random_normal(
        self,
        rng: None | int | np.random.Generator = None,
        size: int | tuple[int, ...] | None = None,
    ) -> np.ndarray:
        """A standard Gaussian element ``phi^{-1}(nu)``, ``nu ~ N(0, I_dim)``.

        Its distribution is invariant under the automorphisms of the algebra, so the Jordan frame
        is random too (002 Section 4).  ``size`` adds leading batch axes.
        """
        gen = as_generator(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        return gen.standard_normal((*shape, self.dim)) / self.phi_scale

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def _scalar(a: np.ndarray) -> np.ndarray | float:
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a
