"""Minimum enclosing ball: exact SOCP reference, linear-time fPTAS and the DP fPTAS.

``min_enclosing_ball(points)`` returns a CVXPY problem ``min r s.t. ||p_i - c|| <= r`` (an SOCP):

* ``.solve()`` is the exact reference (any CVXPY SOCP solver), answer in ``.ball``;
* ``.solve(method="fptas")`` is the non-private linear-time (1+3 gamma)-approximation (Alg. 1/2);
* ``.solve_private(...)`` is the differentially private pipeline (GoodCenter, Alg. 6/7, then the
  private radius search Alg. 3 over DP-MMEB calls, Alg. 4/5), see
  :meth:`MinEnclosingBall.solve_private` and :mod:`cvxdp.geometry.meb.meb_private`.

Modules of :mod:`cvxdp.geometry.meb`, imports one way (each imports only those listed before it):
:mod:`~cvxdp.geometry.meb.meb_kernels`, :mod:`~cvxdp.geometry.meb.meb_index` (the outside-the-ball
queries), :mod:`~cvxdp.geometry.meb.ball` (:class:`Ball`, :class:`MEBPrivateSolution`),
:mod:`~cvxdp.geometry.meb.exact` (SOCP, active set, fPTAS), :mod:`~cvxdp.geometry.meb.goodcenter`
and :mod:`~cvxdp.geometry.meb.meb_private` (the DP pieces), :mod:`~cvxdp.geometry.meb.meb_solve`
(the private pipeline), then this module (the problem class users build).

References
----------
Y. Mahpud, O. Sheffet, "A Differentially Private Linear-Time fPTAS for the Minimum Enclosing Ball
Problem", Mahpud & Sheffet (2022).
"""

from __future__ import annotations

from typing import Any

from cvxdp.arguments import entry_point
from cvxdp.geometry.meb.ball import Ball, MEBPrivateSolution
from cvxdp.geometry.meb.exact import (
    ExactMinEnclosingBall,
    exact_meb,
    fptas_meb,
    mmeb,
    reference_ball,
)
from cvxdp.geometry.meb.meb_solve import solve_private_meb

__all__ = ["Ball", "MinEnclosingBall", "MEBPrivateSolution", "min_enclosing_ball",
           "exact_meb", "fptas_meb", "mmeb", "reference_ball"]


class MinEnclosingBall(ExactMinEnclosingBall):
    """``min r s.t. ||p_i - c||_2 <= r`` for the rows ``p_i`` of ``points`` (an SOCP).

    Attributes
    ----------
    points : (n, d) array
        The (private) data.
    center : cvxpy.Variable (d,)
    radius : cvxpy.Variable ()
    ball : Ball or None
        The last solve's ball: exact after ``solve()`` / ``exact_ball()``, the fPTAS ball after
        ``solve(method="fptas")``, the released (private) ball after ``solve_private`` (then
        ``status``, ``value``, ``center`` and ``radius`` are the private answer's too, and the
        exact one of ``reference=True`` is only in ``solution.validation``).
    """

    @entry_point(options=lambda: _delegate())
    def solve_private(self, **kwargs: Any) -> MEBPrivateSolution:  # noqa: D417
        """Differentially private MEB; see :func:`cvxdp.geometry.meb.meb_solve.solve_private_meb`.

        Afterwards the problem holds the private answer only (``status``, ``value``, ``ball``,
        ``center``, ``radius``; :class:`~cvxdp.structured.StructuredProblem`)."""
        return solve_private_meb(self, **kwargs)


def _delegate() -> Any:
    return solve_private_meb


def min_enclosing_ball(points: Any) -> MinEnclosingBall:
    """Build the minimum-enclosing-ball problem of the rows of ``points``.

    Parameters
    ----------
    points : (n, d) array_like
        Finite coordinates, one point (one person's record) per row.  A float64 or float32
        C-contiguous numpy array is used without a copy; float32 storage halves the memory,
        and the private solve takes every product and sum in float64 (the release is the
        float64 path's on the same numbers).  A ``dask.array.Array`` is read chunk-wise.

    Returns
    -------
    MinEnclosingBall
        ``.solve()`` exact, ``.solve(method="fptas", gamma=0.1)`` fast, ``.solve_private(...)``
        differentially private.

    Examples
    --------
    >>> import numpy as np, cvxdp.geometry.meb.meb as meb
    >>> prob = meb.min_enclosing_ball(np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.0]]))
    >>> _ = prob.solve()
    >>> round(prob.ball.radius, 4)
    1.0
    """
    return MinEnclosingBall(points)

