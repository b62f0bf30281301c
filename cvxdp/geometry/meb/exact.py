"""Minimum enclosing ball, exact and non-private: the SOCP, the active set and the fPTAS.

* :class:`ExactMinEnclosingBall`: the SOCP ``min r s.t. ||p_i - c|| <= r`` solved through CVXPY
  (``solve()``, ``exact_ball()``) or by the fPTAS (``solve(method="fptas")``);
  :class:`~cvxdp.geometry.meb.meb.MinEnclosingBall` adds the private solve;
* :func:`exact_meb` / :func:`reference_ball`: exact balls by an active set of small SOCPs;
* :func:`mmeb` / :func:`fptas_meb`: the margin-based MEB (Alg. 2) and the fPTAS (Alg. 1).

References
----------
Y. Mahpud, O. Sheffet, "A Differentially Private Linear-Time fPTAS for the Minimum Enclosing Ball
Problem", Mahpud & Sheffet (2022).
"""

from __future__ import annotations

import math
import time
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.dask_backend import as_row_blocks, is_dask
from cvxdp.errors import InfeasibleProblemError, UnsupportedProblemError
from cvxdp.geometry.meb.ball import Ball
from cvxdp.geometry.meb.meb_index import OutsideIndex
from cvxdp.geometry.meb.meb_rows import sq_dists
from cvxdp.structured import StructuredProblem

__all__ = ["ExactMinEnclosingBall", "exact_meb", "fptas_meb", "mmeb", "reference_ball",
           "covering_radius", "ACTIVE_SET_MIN_N"]

#: Above this many points ``exact_ball`` uses the active set (:func:`exact_meb`) by default.
ACTIVE_SET_MIN_N = 20_000

def _check_shape(points: Any) -> np.ndarray:
    """``points`` as a float ``(n, d)`` array; reads the shape only (public), not the values.

    No copy when ``points`` is already a float64 array, or a float32 one (float32 storage: the
    private path reads it as it is and computes in float64; the exact solves convert it).  A
    ``dask.array.Array`` stays a (lazy) Dask array, split by rows only
    (:func:`cvxdp.dask_backend.as_row_blocks`).
    """
    if is_dask(points):
        if points.ndim != 2 or points.shape[0] < 1 or points.shape[1] < 1:
            raise UnsupportedProblemError(
                f"points must be a non-empty (n, d) array, got shape {points.shape}.")
        return as_row_blocks(points)
    p = np.asarray(points)
    if p.dtype != np.float32:
        p = np.asarray(p, dtype=float)
    if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 1:
        raise UnsupportedProblemError(
            f"points must be a non-empty (n, d) array, got shape {p.shape}; reshape a single "
            "coordinate list with points.reshape(-1, 1).")
    return p


def _check_points(points: Any) -> np.ndarray:
    """For the exact (non-private) methods: an ``(n, d)`` array of finite values.

    The private path never calls this: a refusal that depends on the values would leak whether
    some point is not finite; it clips such points into the public box instead.
    """
    if is_dask(points):
        raise UnsupportedProblemError(
            "the exact (non-private) MEB needs the points in memory; on a Dask array only "
            "solve_private runs (chunk-wise, nothing of the data is gathered). For an exact "
            "reference, solve a sample or call .compute() yourself if it fits.")
    p = np.asarray(_check_shape(points), dtype=float)     # float32 storage: a float64 copy
    if not np.all(np.isfinite(p)):
        raise UnsupportedProblemError("points contain NaN or inf; the exact (non-private) "
                                      "solve needs finite points: drop or impute those rows.")
    return p


def mmeb(points: np.ndarray, gamma: float, r: float, theta0: np.ndarray, *,
         index: OutsideIndex | None = None) -> np.ndarray | None:
    """Margin-based MEB (Alg. 2): ``theta`` with ``P subset B(theta, (1+gamma) r)``, or ``None``.

    ``T = ceil(4/gamma^2 ln(100/gamma^2))`` steps of ``theta <- theta - gamma^2/2 (theta - mu)``
    with ``mu`` the mean of the points outside ``B(theta, r)``.  Succeeds whenever
    ``r >= r_opt`` and ``||theta0 - theta_opt|| <= 10 r_opt`` (Lemma 3.2).  ``index`` (an
    :class:`~cvxdp.geometry.meb.meb_index.OutsideIndex` of ``points``, reusable across calls) finds
    the outside points exactly without a full pass per step.

    References
    ----------
    Mahpud & Sheffet (2022), Algorithm 2, Lemma 3.2.
    """
    T = int(math.ceil(4 / gamma**2 * math.log(100 / gamma**2)))
    theta = np.asarray(theta0, dtype=float).copy()
    index = OutsideIndex(points) if index is None else index
    for _ in range(T):
        k, sum_out = index.query(theta, r)
        if k == 0:
            break
        theta = theta + (gamma**2 / 2) * (sum_out - k * theta) / k
    if np.all(sq_dists(points, theta) <= ((1 + gamma) * r) ** 2 * (1 + 1e-12)):
        return theta
    return None


def fptas_meb(points: np.ndarray, gamma: float = 0.1) -> Ball:
    """Non-private linear-time MEB approximation (Alg. 1): radius ``<= (1+3 gamma) r_opt``.

    Starts from ``theta0 = p_0`` and ``r0 = max_i ||p_i - p_0||`` (so ``r_opt <= r0 <= 2 r_opt``,
    better than the ``4 r_opt`` Alg. 1 needs) and binary-searches ``r = (1+gamma)^i r0 / 4``.
    Time ``O(n d log^2(1/gamma) / gamma^2)``; the returned ball always contains every point.

    References
    ----------
    Mahpud & Sheffet (2022), Algorithm 1, Theorem 3.1.
    """
    p = _check_points(points)
    if not 0 < gamma < 1:
        raise UnsupportedProblemError(f"gamma must be in (0, 1), got {gamma!r}.")
    theta0 = p[0].copy()
    r0 = float(np.max(np.linalg.norm(p - theta0, axis=1)))
    if r0 == 0.0:
        return Ball(theta0, 0.0)
    best = Ball(theta0, r0)
    lo, hi = 0, int(math.ceil(math.log(4) / math.log1p(gamma)))
    index = OutsideIndex(p)
    while lo < hi:
        mid = (lo + hi) // 2
        r_cur = (1 + gamma) ** mid * r0 / 4
        theta = mmeb(p, gamma, r_cur, theta0, index=index)
        if theta is not None:
            hi, best = mid, Ball(theta, (1 + gamma) * r_cur)
        else:
            lo = mid + 1
    return best


def _solve_socp(prob: ExactMinEnclosingBall, solver: str | None) -> None:
    """Solve the MEB SOCP through CVXPY; a non-optimal status is an error."""
    prob.solve(**({"solver": solver} if solver else {}))
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise InfeasibleProblemError(f"exact MEB solve ended with status {prob.status!r}; "
                                     "try solver='CLARABEL' or 'SCS'.")


def covering_radius(dist2: np.ndarray, d: int) -> float:
    """Radius that covers every point whose squared distance is in ``dist2``, for any rounding.

    ``sqrt(max dist2)`` covers every point under the same arithmetic (``Ball.contains`` uses
    :func:`sq_dists` too, and ``sqrt`` is monotone).  A sum of ``d`` squares evaluated in another
    order (another BLAS, SIMD width or chunking) differs by at most ``2 d u`` relatively
    (``u = 2^-53``), so its square root by ``d u``: the radius is rounded up by ``(d + 2) u``
    to cover every point under any such evaluation as well.
    """
    return float(np.sqrt(dist2.max()) * (1.0 + (d + 2) * 2.0 ** -53))


def _active_set(p: np.ndarray, solver: str | None, working: int) -> tuple[Ball, str]:
    n = len(p)
    dist2 = sq_dists(p, p.mean(axis=0))
    S = np.argpartition(dist2, n - working)[n - working:] if n > working else np.arange(n)
    while True:
        sub = ExactMinEnclosingBall(p[S])
        _solve_socp(sub, solver)
        c, r = np.asarray(sub.center.value, dtype=float), float(sub.radius.value)
        dist2 = sq_dists(p, c)
        out = np.flatnonzero(dist2 > (r * (1 + 1e-7) + 1e-12) ** 2)
        if len(out) == 0:
            # The covering radius at c: >= r_opt, and <= r (1 + 1e-7) <= r_opt (1 + 1e-7).
            return Ball(c, covering_radius(dist2, p.shape[1])), sub.solver_stats.solver_name
        if len(out) > working:
            out = out[np.argpartition(dist2[out], len(out) - working)[len(out) - working:]]
        S = np.union1d(S, out)


def exact_meb(points: np.ndarray, *, solver: str | None = None, working: int = 1000) -> Ball:
    """Exact minimum enclosing ball of many points by an active set of SOCPs.

    Solve the SOCP ``min r s.t. ||p_i - c|| <= r`` on a working set (the ``working`` points
    farthest from the mean), add the ``working`` farthest points its ball leaves out, repeat.
    A subset's MEB has radius ``<= r_opt``; once it covers every point (to ``1e-7``) it is the
    MEB of all of them.  The returned radius is the exact covering radius at the returned centre.
    The working set only grows, so the loop ends; in practice after a few rounds, each one
    pass over the points plus a small SOCP, where the whole SOCP grows with ``n``.

    Parameters
    ----------
    points : (n, d) array
    solver : str, optional
        CVXPY solver for the subproblems (default: CVXPY's choice).
    working : int
        Points added per round.

    Returns
    -------
    Ball
        Contains every point.
    """
    return _active_set(_check_points(points), solver, int(working))[0]


def reference_ball(points: np.ndarray, solver: str | None = None, *,
                   method: str = "auto") -> tuple[Ball, float, str]:
    """Exact MEB of ``points`` on a fresh problem: ``(ball, seconds, solver description)``.

    Touches no user problem (the private path's ``reference=True`` validation uses it, so the
    problem keeps the private answer).  ``method`` as in :meth:`MinEnclosingBall.exact_ball`.
    """
    if method not in ("auto", "socp", "active-set"):
        raise UnsupportedProblemError(f"method must be 'auto', 'socp' or 'active-set', "
                                      f"got {method!r}.")
    p = _check_points(points)
    t0 = time.perf_counter()
    if method == "active-set" or (method == "auto" and len(p) > ACTIVE_SET_MIN_N):
        ball, name = _active_set(p, solver, 1000)
        return ball, time.perf_counter() - t0, f"active set of {name} SOCPs"
    prob = ExactMinEnclosingBall(p)
    _solve_socp(prob, solver)
    return prob.ball, time.perf_counter() - t0, prob.solver_stats.solver_name


def _fptas_method(self: ExactMinEnclosingBall, *, gamma: float = 0.1, **_: Any) -> float:
    ball = fptas_meb(self.points, gamma)
    self.ball = ball
    self.center.value, self.radius.value = ball.center, ball.radius
    return ball.radius


class ExactMinEnclosingBall(StructuredProblem):
    """The MEB SOCP with its exact and fPTAS solves: the problem class without the private solve.

    :class:`~cvxdp.geometry.meb.meb.MinEnclosingBall` (what ``min_enclosing_ball`` builds)
    adds ``solve_private``.

    The exact reference solves (:func:`reference_ball`, :func:`exact_meb`) build this class, so
    they need nothing of the private pipeline; the attributes are those of ``MinEnclosingBall``.
    """

    _methods = {"fptas": _fptas_method}
    _answer_attributes = ("ball",)

    def __init__(self, points: Any) -> None:
        p = _check_shape(points)
        self.points = p
        self.center = cp.Variable(p.shape[1], name="center")
        self.radius = cp.Variable(name="radius", nonneg=True)
        # The SOCP constraint is built on first use (_constraints below): CVXPY's Constant
        # snapshots (copies) the array, +1x the data that the private path never needs.
        super().__init__(cp.Minimize(self.radius), [])
        self.__dict__["_constraints_pending"] = True
        self.ball: Ball | None = None

    @property
    def _constraints(self) -> list:
        """The constraint list, with ``||p_i - c|| <= r`` added the first time it is read
        (CVXPY reads it to solve, print or list variables; ``args`` holds the same list)."""
        store = self.__dict__["_constraint_store"]
        if self.__dict__.get("_suspend_build"):
            return store        # forgetting / holding a private answer: no constraint needed
        if self.__dict__.pop("_constraints_pending", False) and not is_dask(self.points):
            p = self.points
            store.append(cp.norm(p - cp.reshape(self.center, (1, p.shape[1]), order="C"), 2,
                                 axis=1) <= self.radius)
        return store

    @_constraints.setter
    def _constraints(self, value: list) -> None:
        self.__dict__["_constraint_store"] = value

    @property
    def args(self) -> list:  # type: ignore[override]
        """``[objective, constraints]`` (builds the lazy constraint, see ``_constraints``)."""
        self._constraints  # noqa: B018 - materialise
        return self.__dict__["_args"]

    @args.setter
    def args(self, value: list) -> None:
        self.__dict__["_args"] = value

    def variables(self) -> list[cp.Variable]:
        """``[center, radius]`` (without building the lazy constraint)."""
        return [self.center, self.radius]

    def _forget_solution(self) -> None:
        self.__dict__["_suspend_build"] = True      # a constraint not built has no duals
        try:
            super()._forget_solution()
        finally:
            del self.__dict__["_suspend_build"]

    def _hold_private(self, sol: Any) -> None:
        self.__dict__["_suspend_build"] = True
        try:
            super()._hold_private(sol)
        finally:
            del self.__dict__["_suspend_build"]

    def solve(self, *args: Any, method: str | None = None, **kwargs: Any) -> Any:
        """Exact solve through CVXPY (sets ``.ball``), or ``method="fptas"`` (``gamma=``)."""
        if method is None or is_dask(self.points):
            _check_points(self.points)
        out = super().solve(*args, method=method, **kwargs)
        if method is None and self.center.value is not None:
            self.ball = Ball(np.asarray(self.center.value, dtype=float).copy(),
                             float(self.radius.value))
        return out

    def exact_ball(self, solver: str | None = None, *,
                   method: str = "auto") -> tuple[Ball, float, str]:
        """Exact reference ball; return ``(ball, seconds, solver description)``.

        ``method="socp"`` solves the whole SOCP through CVXPY; ``"active-set"`` uses
        :func:`exact_meb` (same answer to ``1e-7``, far faster for many points); ``"auto"``
        picks the active set above :data:`ACTIVE_SET_MIN_N` points.  Like ``solve()``, it
        stores the exact answer on the problem (``ball``, ``center``, ``radius``, ``status``,
        ``value``); the private path's validation uses :func:`reference_ball`, which does not.
        """
        ball, secs, name = reference_ball(self.points, solver, method=method)
        self.ball = ball
        self.center.save_value(np.asarray(ball.center, dtype=float).copy())
        self.radius.save_value(np.asarray(ball.radius, dtype=float))
        self._status, self._value = cp.OPTIMAL, ball.radius
        return ball, secs, name
