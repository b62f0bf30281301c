"""John ellipsoid of a symmetric polytope: exact conic reference, fast iterations, DP algorithm.

``john_ellipsoid(A)`` returns a CVXPY problem for ``P = {x : -1 <= A x <= 1}``: the largest-volume
ellipsoid ``E = {X u : ||u|| <= 1}`` inside P, i.e. ``maximise det(X)^{1/d}`` s.t.
``||X a_i|| <= 1`` for every row, written with ``geo_mean`` over an SOC + PSD model (symmetric
cones only, so SCS and Clarabel solve it).  The answer, in ``.ellipsoid``, is given as
``E = {x : x' Q x <= 1}`` with ``Q = X^{-2} = A' W A`` for the John weights ``w`` (sum w = d).

* ``.solve()``: the exact reference;
* ``.solve(method="fixed-point")``: the averaged fixed-point iteration (Cohen-Cousins-Lee-Yang);
* ``.solve(method="sketched")``: Algorithm 1 of the paper without noise;
* ``.solve_private(...)``: the differentially private John ellipsoid, see
  :mod:`cvxdp.geometry.john.john_private`.

Modules of :mod:`cvxdp.geometry.john`, imports one way (each imports only those listed before it):
:mod:`~cvxdp.geometry.john.john_iter` and :mod:`~cvxdp.geometry.john.john_sensitivity`,
:mod:`~cvxdp.geometry.john.ellipsoid` (:class:`Ellipsoid`), :mod:`~cvxdp.geometry.john.exact`
(the conic model and the fast iterations, NOT private), :mod:`~cvxdp.geometry.john.release` (the
private solution and its validation), :mod:`~cvxdp.geometry.john.john_paper` (the paper's
Algorithm 1), :mod:`~cvxdp.geometry.john.john_private` (the private algorithm), then this module.

References
----------
Gu, Li, Liang, Shi, Song, Yu, "Fast John Ellipsoid Computation with Differential Privacy
Optimization", Gu et al. (2024) (Def 3.2, Lemma 3.3, Lemma 3.5,
Algorithm 1).
"""

from __future__ import annotations

from typing import Any

from cvxdp.arguments import entry_point
from cvxdp.blas_threads import small_blas
from cvxdp.geometry.john.ellipsoid import Ellipsoid, ellipsoid_from_weights
from cvxdp.geometry.john.exact import ExactJohnEllipsoid
from cvxdp.geometry.john.john_private import private_john

__all__ = ["Ellipsoid", "JohnEllipsoidProblem", "john_ellipsoid", "ellipsoid_from_weights"]


class JohnEllipsoidProblem(ExactJohnEllipsoid):
    """``maximise geo_mean`` of the ellipsoid ``{X u : ||u|| <= 1}`` inside ``|A x| <= 1``.

    Built by :func:`john_ellipsoid`; after a solve the answer is in :attr:`ellipsoid`.
    """

    @entry_point(options=lambda: _delegate())
    def solve_private(self, **kwargs: Any) -> Any:
        """DP John ellipsoid: :func:`cvxdp.geometry.john.john_private.private_john`."""
        n, d = self.data.shape
        with small_blas(n * d * d):  # T small products: one BLAS thread (cvxdp.blas_threads)
            return private_john(self, **kwargs)


def _delegate() -> Any:
    return private_john


def john_ellipsoid(A: Any) -> JohnEllipsoidProblem:
    """The John ellipsoid problem of ``P = {x : -1 <= A x <= 1}``.

    Parameters
    ----------
    A : array_like (n, d)
        Constraint rows (full column rank for the exact methods).

    Returns
    -------
    JohnEllipsoidProblem
        ``.solve()`` exact (SOC + PSD), ``.solve(method="fixed-point" | "sketched")`` fast,
        ``.solve_private(epsilon=, delta=, closeness=, row_bound=, ...)`` DP.

    Raises
    ------
    UnsupportedProblemError
        A not 2-D or with fewer rows than columns (public shape).  Values are checked only by the
        exact methods (``.solve()``: finite, full column rank); ``.solve_private`` never refuses
        on the values of A (it clips rows into the public domain instead).

    References
    ----------
    Gu et al. (2024), Def 3.2 (dual program), Lemma 3.3, Lemma 3.5.
    """
    return JohnEllipsoidProblem(A)
