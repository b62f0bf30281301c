"""The end-to-end private minimum-enclosing-ball pipeline behind ``MinEnclosingBall.solve_private``.

GoodCenter (Alg. 6, or Alg. 7 in the local model) gives a private start ``B(theta0, r0)``; the
private binary search over radii (Alg. 3) calls DP-MMEB (Alg. 4, or Alg. 5 locally) at
``r = (1+gamma)^i r0 / 6``; the released ball is ``B(theta*, (1+gamma) r*)``.  Privacy is accounted
in zCDP; an ``(epsilon, delta)`` budget is converted to the largest ``rho`` meeting it.  The
public arguments and the clipped, translated points the mechanisms read come from
:mod:`~cvxdp.geometry.meb.meb_inputs`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from cvxdp.arguments import check_beta, check_number
from cvxdp.citations import MINIMUM_ENCLOSING_BALL, cite
from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.meb import (
    DaskOutsideIndex,
    DaskPoints,
    dask_good_center,
    dask_ldp_good_center,
)
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError, warn_user
from cvxdp.geometry.meb.ball import Ball, MEBPrivateSolution
from cvxdp.geometry.meb.box import clip_into_box, working_shift
from cvxdp.geometry.meb.exact import reference_ball
from cvxdp.geometry.meb.goodcenter import good_center, ldp_good_center
from cvxdp.geometry.meb.meb_inputs import (
    resolve_bounds,
    resolve_schedule,
    rho_of_budget,
    working_points,
)
from cvxdp.geometry.meb.meb_kernels import ANCHOR_CACHE_D
from cvxdp.geometry.meb.meb_private import (
    MEBSchedule,
    dp_mmeb,
    kept_index,
    mmeb_constants,
    radius_grid,
)
from cvxdp.geometry.meb.meb_rows import keeps_anchor_cache
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import (
    ZCDP,
    resolve_budget,
    zcdp_to_epsilon,
)
from cvxdp.privacy.clipping import COUNT_SHARE, noisy_count
from cvxdp.privacy.clipping import count_share as clip_count_share
from cvxdp.privacy.neighbours import ReplaceOne
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import ValidationReport
from cvxdp.status import DEFAULT_BETA

if TYPE_CHECKING:  # annotations only: the problem class imports this module, not back
    from cvxdp.geometry.meb.meb import MinEnclosingBall

__all__ = ["solve_private_meb", "box_ball", "coverage_status", "resolve_bounds", "resolve_schedule",
           "clip_into_box", "COUNT_SHARE"]

_REF4 = cite(MINIMUM_ENCLOSING_BALL, "Alg. 4, Lemma 4.1 (sensitivity fixed, see meb_private)")
_REF5 = cite(MINIMUM_ENCLOSING_BALL, "Alg. 5, Claim 5.1 (local, sensitivity fixed)")
#: Share of ``rho`` spent on the opt-in noisy count of clipped points (``count_clipped=True``).
#: r0 from GoodCenter satisfies r_opt(P') <= r0 < 6 r_opt(P') (Thm A.2), so search [r0/6, r0].
GOODCENTER_RATIO = 6.0


def solve_private_meb(
    problem: MinEnclosingBall, *, epsilon: float | None = None, delta: float | None = None,
    rho: float | None = None, accuracy: float = 0.2, bounds: Any = None,
    rng: None | int | np.random.Generator = None, reference: bool = False,
    model: str = "central", schedule: str | MEBSchedule = "practical",
    adaptive: bool | None = None, beta: float = DEFAULT_BETA, r_min: float | None = None,
    init_share: float = 0.25, count_clipped: bool | float = False, step: str | None = None,
) -> MEBPrivateSolution:
    """Differentially private minimum enclosing ball (bicriteria: radius and few uncovered).

    Parameters
    ----------
    problem : MinEnclosingBall
    epsilon, delta, rho : float, keyword-only
        Either ``epsilon`` with ``delta > 0`` (converted to the largest ``rho`` meeting it, CKS
        2020) or ``rho`` (zCDP).  Pure DP is refused.
    accuracy : float
        ``gamma`` in (0, 1): the released radius is ``<= (1+gamma)^2 r_opt <= (1+3 gamma) r_opt``
        when every DP-MMEB call at ``r >= r_opt`` succeeds (Cor. 4.4).  The status is
        ``optimal_inaccurate`` only when the proven bound on uncovered points is also
        ``<= gamma n`` (:func:`coverage_status`).
    bounds : (lo, hi)
        Public box the points live in; required, never inferred from data.  Gives the
        GoodCenter start ``theta = (lo+hi)/2`` and ``R_max = ||hi - lo|| / 2``.  Points outside
        it (or with NaN / inf coordinates) are clipped into it (:func:`clip_into_box`) and the
        guarantees are about the clipped points; see ``count_clipped``.
    rng : None, int or Generator
    reference : bool
        Also solve the exact SOCP and fill ``.validation`` (not private; for the data owner).
    model : {"central", "local"}
        Curator model (Alg. 6 + 3 + 4) or local model (Alg. 7 + 3 + 5).
    schedule : {"practical", "practical-b8", "experiment", "paper"} or MEBSchedule
        Iteration constants; see :data:`cvxdp.geometry.meb.meb_private.SCHEDULES` and the docs.
        ``"practical"`` (default): step ``gamma^2/2`` and ``T`` from Lemma 3.2's recursion;
        ``"practical-b8"``: the previous default (step ``gamma^2/8``).
    step : {None, "lemma3.2", "appendix-b", "paper"}
        Replace the schedule's update step by ``gamma^2/2`` (Alg. 2, Lemma 3.2), ``gamma^2/8``
        (App. B, §6) or ``gamma^2/2048`` (Alg. 4); ``None`` keeps the schedule's.  Privacy does
        not depend on the step (``docs/meb.md``, "The step size").
    adaptive : bool, optional
        Force adaptive budgeting on (3/4 of each call's budget in its first T/4 iterations) or off;
        default: the schedule's own setting (``"practical"`` is adaptive, the paper presets not).
    beta : float
        Failure probability (split 1/2 GoodCenter, 1/2 over the ``B`` search calls).
    r_min : float, optional
        Public lower bound on ``r_opt`` for GoodCenter (default ``R_max / 1024``).
    init_share : float
        Share of ``rho`` given to GoodCenter (the paper leaves the split open; default 1/4).
    count_clipped : bool or float
        Opt-in: also release how many points were clipped into ``bounds`` (points outside the
        box, or with NaN / inf coordinates), as ``info["clipped_points_noisy"]`` = count +
        ``N(0, sigma_count^2)`` (``info["sigma_count"]``).  ``True`` spends
        :data:`COUNT_SHARE` of ``rho`` on it, a float in (0, 1) that share; the rest goes to
        the algorithm, so the total stays ``rho``.  The count is never released exactly.

    Returns
    -------
    MEBPrivateSolution
        ``.ball``, ``.privacy`` (rho and, when delta is known, epsilon), ``.validation``
        (``radius_ratio``, ``uncovered``, ``uncovered_bound``, ``center_error``, the exact
        ``clipped_points``; not private), ``.info``.  Every field but ``validation`` is computed
        from the mechanisms' noisy outputs and public arguments only.  This function does not
        write to ``problem``; :meth:`MinEnclosingBall.solve_private` makes the problem hold the
        private answer.

    Raises
    ------
    PrivacySpecError
        Missing/invalid ``bounds``, bad ``model``/``schedule``/``r_min``/``count_clipped``
        (public arguments only: points outside ``bounds`` are clipped, never refused).
    BudgetError
        Bad or pure-DP budget.

    References
    ----------
    Mahpud & Sheffet (2022): Alg. 3 (binary search), Alg. 4/5 (DP-MMEB), Alg. 6/7
    (GoodCenter); Lemma 4.1, Cor. 4.2, Thm A.1 (privacy); Lemma 4.3, Cor. 4.4, Thm A.2 (utility);
    Claim 5.1, Cor. 5.3, Thm A.4 (local model).
    """
    t_start = time.perf_counter()
    pts = problem.points
    n, d = pts.shape
    rho_total, delta_given = rho_of_budget(resolve_budget(epsilon=epsilon, delta=delta, rho=rho))
    if model not in ("central", "local"):
        raise PrivacySpecError(f"model must be 'central' or 'local', got {model!r}.")
    local = model == "local"
    if adaptive is not None and not isinstance(adaptive, (bool, np.bool_)):
        raise PrivacySpecError(f"adaptive={adaptive!r} is not valid: adaptive must be None (the "
                               "schedule's default), True or False.")
    sched = resolve_schedule(schedule, adaptive, step)
    gamma = check_number("accuracy", accuracy, "a number in (0, 1) (gamma of the bicriteria "
                         "guarantee, e.g. 0.2)", lambda v: 0 < v < 1, error=PrivacySpecError)
    i_max, B = radius_grid(gamma, GOODCENTER_RATIO)
    beta = check_beta(beta)
    init_share = check_number("init_share", init_share, "a number in (0, 1) (the budget's share "
                              "of the initial radius search)", lambda v: 0 < v < 1,
                              error=PrivacySpecError)
    lo, hi = resolve_bounds(bounds, d)
    count_share = clip_count_share(count_clipped)
    centre0, r_max = (lo + hi) / 2, float(np.linalg.norm(hi - lo) / 2)
    on_dask = is_dask(pts)
    if on_dask and reference:
        raise UnsupportedProblemError(
            "reference=True solves the exact MEB, which needs the points in memory; on a Dask "
            "array validate on a sample (or on .compute()d points if they fit).")
    if on_dask:
        # The same clipping and translation, block by block on the workers, inside every
        # reduction (cvxdp.dask_backend.meb); the clipped count is one more reduction, run only if
        # it is released (noisily).  Nothing of the data reaches the client.

        shift = working_shift(lo, hi)
        pts = DaskPoints(pts, lo, hi, shift)
        n_clipped, patch = -1, None
    else:
        # Points outside the public box (or with NaN / inf coordinates) are clipped into it
        # inside the mechanism, never refused: a refusal would tell whether some point lies
        # outside.  Coordinates are translated by a public shift when the box is far from the
        # origin (working_points); the released centre is shifted back at the end.
        pts, n_clipped, shift, patch, sqn = working_points(pts, lo, hi)
    r_min = r_max / 1024 if r_min is None else check_number(
        "r_min", r_min, f"a number in (0, R_max={r_max:.6g}) (R_max: half the diagonal of the "
        "public box)", lambda v: 0 < v < r_max, error=PrivacySpecError)
    gen = as_generator(rng)
    acct = PrivacyAccountant(ZCDP(rho_total))
    rho_count = count_share * rho_total          # the noisy clipped count's share (opt-in)
    rho_alg = rho_total - rho_count

    rho_gc = init_share * rho_alg
    if on_dask:
        gc_fn = dask_ldp_good_center if local else dask_good_center
    else:
        # The rows' squared norms (working_points read them with the box test) serve
        # GoodCenter's tests and the MEB index.  GoodCenter hands its last test values to the
        # index's anchor cache only for d >= 16: on narrower rows writing them each round costs
        # more than the index computing them once (1e6 x 5: 102 -> 95 ms without).
        gc_fn = (functools.partial(ldp_good_center, patch=patch) if local
                 else functools.partial(good_center, patch=patch, sqn=sqn, keep_values=(
                     d >= ANCHOR_CACHE_D and keeps_anchor_cache(n, d))))
    gc = gc_fn(
        pts, center=centre0 - shift, r_max=r_max, r_min=r_min, rho=rho_gc, beta=beta / 2, rng=gen)
    for rec in gc.records:
        acct.spend(rec)
    theta0, r0 = gc.center, gc.radius

    rho_call, beta_call = (rho_alg - rho_gc) / B, beta / 2 / B
    consts = mmeb_constants(sched, gamma, beta_call)
    best_theta, best_r, best_bound = theta0, (1 + gamma) ** i_max * r0 / GOODCENTER_RATIO, 0.0
    i_lo, i_hi, calls, iters, path = 0, i_max, 0, 0, []
    if on_dask:     # one chunk-wise pass and reduce per query, same answers

        index = DaskOutsideIndex(pts, theta0, sched.keep * r0)
    else:
        # One for all B calls.  GoodCenter's last mask already tested every row against
        # B(theta0, r0), inside B(theta0, keep r0) when keep >= 1: then no check pass.
        index = kept_index(pts, theta0, sched.keep * r0, patch=patch,
                           all_within=sched.keep >= 1 and gc.all_inside, sqn=sqn,
                           anchor_values=gc.anchor_values)
    while i_lo < i_hi:
        i_cur = (i_lo + i_hi) // 2
        r_cur = (1 + gamma) ** i_cur * r0 / GOODCENTER_RATIO
        run = dp_mmeb(pts, gamma=gamma, r=r_cur, theta0=theta0, r0=r0, rho=rho_call,
                      beta=beta_call, schedule=sched, rng=gen, local=local, index=index)
        calls, iters = calls + 1, iters + run.iterations
        _spend_call(acct, rho_call, consts, local, r_cur)
        path.append((i_cur, float(r_cur), run.halted, run.iterations))
        if run.theta is not None:
            i_hi, best_theta, best_r, best_bound = i_cur, run.theta, r_cur, run.uncovered_bound
        else:
            i_lo = i_cur + 1
    if calls < B:  # the path is data dependent: the guarantee is for the worst case, B calls
        acct.spend(PrivacyRecord("reserved (unused search calls)", ZCDP(rho_call * (B - calls)),
                                 cite(MINIMUM_ENCLOSING_BALL, "Cor. 4.2: B calls of rho/B"),
                                 params={"calls": B - calls}))
    # Back to the user's coordinates, then projected into the public box (post-processing):
    # the projection onto a convex set holding every (clipped) point moves the centre closer
    # to each of them, so the ball still covers every point it covered.
    centre = np.clip(np.asarray(best_theta, dtype=float) + shift, lo, hi)
    ball = Ball(centre, float((1 + gamma) * best_r))
    bound = gc.excluded_bound + best_bound
    info: dict[str, Any] = {}
    if bound >= n:
        # The search's ball promises no coverage (Cor. 4.4's bound is vacuous); the ball of the
        # public box covers every clipped point. The choice reads only the released bound and
        # public numbers: post-processing.
        info["search_ball"] = {"center": ball.center, "radius": ball.radius}
        ball = box_ball(lo, hi)
        vacuous = (f"the high-probability bound on uncovered points ({bound:.4g}) is vacuous "
                   f"at n={n} (>= n): the private search's ball (info['search_ball']) promises "
                   "no coverage, so the ball of the public box is released (it covers every "
                   "point clipped into bounds=; its radius is not compared with the optimum); "
                   "use more data, a larger budget or a larger accuracy"
                   + (" (the local model needs far more points than the central one)"
                      if local else ""))
        warn_user(vacuous + ".")
    if rho_count > 0:   # released only noisily, charged before the report is made
        if on_dask:
            n_clipped = pts.clipped_count()
        noisy, rec = noisy_count(n_clipped, rng=gen, rho=rho_count,
                                 what="points clipped into the public box (bounds)")
        acct.spend(rec)
        info.update(clipped_points_noisy=noisy, sigma_count=rec.params["sigma"])
    report = acct.report(
        theorem=("001 Cor. 5.3 + Thm A.4 (local model)" if local
                 else "001 Cor. 4.2 (Alg. 3 + Lemma 4.1) + Thm A.1 (GoodCenter), zCDP"),
        neighbouring=ReplaceOne("point (row of points; n is public)").describe()
        + ("; local model: each user's reports are rho-zCDP w.r.t. her own point" if local
           else ""),
        details={"rho_goodcenter": rho_gc, "rho_per_search_call": rho_call, "search_calls": B,
                 "rho_clipped_count": rho_count,
                 "schedule": sched.name, "T": consts["T"], "R": consts["R"],
                 "step": consts["step"], "early_share": sched.early_share})
    if delta_given is not None:
        report = dataclasses.replace(report, epsilon=zcdp_to_epsilon(report.rho, delta_given),
                                     delta=delta_given)
    solve_time = time.perf_counter() - t_start
    validation = _validate(problem, ball, bound, n_clipped) if reference else None
    info = {"method": f"DP-MEB ({model}, schedule={sched.name})", "accuracy": gamma, **info,
            "beta": beta, "r0": r0, "theta0": theta0 + shift, "goodcenter_rounds": gc.iterations,
            "uncovered_bound": bound, "search_path": path, "radius_grid_i_max": i_max}
    status, reason = coverage_status(bound, n, gamma, beta)
    if "search_ball" in info:
        reason = vacuous
    # the paper's bicriteria rule (some coverage promised at all), kept visible
    info["paper_rule"] = {"rule": "uncovered_bound < n (Mahpud & Sheffet 2022, Cor. 4.4)",
                          "status": "optimal_inaccurate" if bound < n else "user_limit"}
    if reason is not None:
        info["status_reason"] = reason
    return MEBPrivateSolution(status=status, value=ball.radius, privacy=report,
                              validation=validation, iterations=iters, solve_time=solve_time,
                              primal={"center": ball.center, "radius": ball.radius}, info=info,
                              ball=ball)


def box_ball(lo: np.ndarray, hi: np.ndarray) -> Ball:
    """The smallest ball holding the public box ``[lo, hi]`` (``(d,)`` arrays, as
    :func:`resolve_bounds` gives them): centre ``(lo + hi)/2``, radius half the diagonal. It
    covers every point clipped into the box (public; no budget)."""
    return Ball((lo + hi) / 2.0, float(np.linalg.norm(hi - lo) / 2.0))


def coverage_status(bound: float, n: int, accuracy: float, beta: float
                    ) -> tuple[str, str | None]:
    """Status of a released ball from its proven uncovered bound (docs/meb.md, "Status").

    ``accuracy`` (``gamma``) is the requested relative accuracy of both criteria: the radius
    is at most ``(1 + gamma)^2 r_opt`` (Cor. 4.4, on the search's success event) and at most
    ``gamma n`` points are outside.  ``optimal_inaccurate`` only when the bound, which holds with
    probability ``>= 1 - beta``, is ``<= gamma n``; otherwise ``user_limit`` with the reason.
    Public: the bound is computed from noise scales and released answers.

    References
    ----------
    Mahpud & Sheffet (2022), "A Differentially Private Linear-Time fPTAS for the Minimum
    Enclosing Ball Problem", Lemma 4.3, Cor. 4.4.
    """
    if bound >= n:  # Cor. 4.2's coverage bound says nothing here
        return "user_limit", (
            f"the high-probability bound on uncovered points ({bound:.4g}) is vacuous at n={n} "
            "(>= n): the ball is private but its coverage is not promised; use more data, a "
            "larger budget or a larger accuracy")
    if bound > accuracy * n:
        return "user_limit", (
            f"the high-probability bound on uncovered points ({bound:.4g}, {bound / n:.3g} of "
            f"n={n}) exceeds accuracy * n = {accuracy * n:.4g} (accuracy {accuracy:g}, with "
            f"probability >= {1 - beta:g}): the ball may leave more than that share of the "
            "points outside; raise epsilon, use more data or loosen accuracy=")
    return "optimal_inaccurate", None


def _spend_call(acct: PrivacyAccountant, rho_call: float, c: dict, local: bool,
                r_cur: float) -> None:
    ref = _REF5 if local else _REF4
    R, T = c["R"], c["T"]
    acct.spend(PrivacyRecord("gaussian", ZCDP(rho_call / 2), ref, params={
        "query": "uncovered counts", "queries": R * (T + 1), "sensitivity": 1.0, "r": r_cur}))
    acct.spend(PrivacyRecord("gaussian", ZCDP(rho_call / 2), ref, params={
        "query": "sums of (x - theta^t) over uncovered", "queries": R * T,
        "sensitivity": "2 (keep r0 + ||theta^t - theta0||)", "r": r_cur}))


def _validate(problem: MinEnclosingBall, ball: Ball, bound: float,
              clipped: int) -> ValidationReport:
    """Compare with the exact MEB of the user's points (NOT private), solved on a fresh problem
    so that ``problem`` keeps the private answer."""
    ref, secs, solver = reference_ball(problem.points)
    dist = np.linalg.norm(problem.points - ball.center, axis=1)
    viol = np.maximum(dist - ball.radius, 0.0)
    r_opt = ref.radius
    scale = r_opt if r_opt > 0 else 1.0
    return ValidationReport(
        reference_value=r_opt, objective_gap=ball.radius - r_opt,
        max_violation=float(viol.max()), mean_violation=float(viol.mean()),
        violated=ball.uncovered(problem.points), tolerance=1e-9, reference_time=secs,
        reference_solver=solver,
        metrics={"radius_ratio": ball.radius / scale if r_opt > 0 else math.inf,
                 "uncovered": ball.uncovered(problem.points), "uncovered_bound": bound,
                 "center_error": float(np.linalg.norm(ball.center - ref.center) / scale),
                 "clipped_points": clipped})
