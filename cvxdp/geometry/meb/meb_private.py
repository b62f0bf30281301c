"""DP-MMEB iterations and the private radius search (Alg. 3, 4, 5 of the DP-MEB paper).

Everything here is a numerical kernel on an ``(n, d)`` array: one vectorised pass over the points
per iteration (distances, the uncovered mask, one matrix-vector product for the sum).

Privacy of :func:`dp_mmeb` (curator model, replace-one neighbours, ``rho``-zCDP)
---------------------------------------------------------------------------------
Per repetition the algorithm asks at most ``T`` count queries and ``T`` sum queries, plus one final
count; ``R`` repetitions.  Query ``q`` gets a zCDP share ``rho_q`` fixed *before* the data is seen
(:func:`budget_weights`), with ``sum_q rho_q = rho``:

* count ``|{x kept: ||x - theta^t|| > r}|``: replace-one sensitivity 1, noise
  ``sigma = sqrt(1 / (2 rho_q))`` gives ``rho_q``-zCDP (Bun & Steinke 2016, Prop. 1.6);
* sum ``sum_{x kept, uncovered} (x - theta^t)``: every kept point satisfies
  ``||x - theta0|| <= k r0`` (Alg. 3, line 1: ``k = 11``; ``schedule.keep``), so each term has norm
  ``<= C_t = k r0 + ||theta^t - theta0||`` and the replace-one l2 sensitivity is ``G_t = 2 C_t``
  (public: ``theta^t`` is computed from released noisy answers); noise ``G_t sqrt(1/(2 rho_q))``.

By adaptive composition of zCDP (Bun & Steinke 2016, Lemma 2.3) the whole run is
``sum_q rho_q = rho``-zCDP; halting early only drops queries.  **Deviation**: the paper uses the
sensitivity ``88 r`` (from ``11 r0 <= 44 r``), which is wrong when ``r < r_opt`` (the binary
search tries such radii) and ignores the drift of ``theta^t``; ``G_t`` above is a proven bound and
``G_t <= 88 r`` whenever the paper's assumptions hold and ``||theta^t - theta0|| <= 44 r - 11 r0``.

Adaptive budgeting (``schedule.early_share``; the paper's conclusion, §6)
------------------------------------------------------------------------
Within each repetition the first ``ceil(T/4)`` iterations share ``early_share`` (default 3/4) of
the sum and count budget and the remaining iterations share the rest.  Proof of privacy: the
shares are a *fixed, data-independent* vector ``rho_q`` with ``sum_q rho_q = rho``, each query is
the Gaussian mechanism calibrated to its own ``rho_q``, so the composition argument above applies
verbatim (zCDP composition needs no odometer when each step's parameter is fixed in advance).
Thresholds scale with each query's own noise, so the utility logic of Lemma 4.3 is unchanged.

Floating point
--------------
The index sums raw coordinates and :func:`dp_mmeb` subtracts ``k theta^t`` afterwards, so the
rounding of a sum is about ``k ||x|| u`` (``u = 2^-53``).  That must stay far below the noise,
whose scale is ``G_t >= 2 r0``: callers pass coordinates translated by a public centre near the
data (:func:`cvxdp.geometry.meb.meb_solve.solve_private_meb` translates by the public box centre, so
``||x|| <= R_max``).  Untranslated data 1e8 from the origin moved the released centre by 0.024
and the radius by 60% (same seed, box and points shifted).

Local model (Alg. 5)
--------------------
Every point sends ``1[uncovered] + N(0, sigma_c^2)`` and ``1[uncovered](x - theta^t) +
N(0, sigma_s^2 I)`` with the *same* per-query sigmas, so each user's transcript is ``rho``-zCDP
with respect to her own point.  The server only sums the reports; we draw the sum of the ``n``
independent noises exactly as one ``N(0, n sigma^2)`` (same distribution of everything computed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.errors import PrivacySpecError
from cvxdp.geometry.meb.meb_index import OutsideIndex
from cvxdp.geometry.meb.meb_rows import (
    inside_mask,
    norm2,
    outside_full,
    slack,
    sq_norms,
    stored_rows,
)

__all__ = ["MEBSchedule", "SCHEDULES", "STEPS", "lemma32_iterations", "mmeb_constants",
           "budget_weights", "dp_mmeb", "kept_index", "radius_grid"]


@dataclass(frozen=True)
class MEBSchedule:
    """Constants of the DP-MMEB iterations (one named preset per row of the docs table).

    Attributes
    ----------
    name : str
    step_div : float
        Update step ``gamma^2 / step_div`` (paper: 2048; experiments §6: 8).
    t_mult, t_log : float
        ``T = ceil(t_mult / gamma^2 * ln(t_log / gamma^2))``.
    repetitions : int or None
        ``R``; ``None`` means the paper's ``ceil(log_{8/7}(1/beta))``.
    kappa : float
        Halting multiplier: halt when the noisy uncovered count is below
        ``kappa * (sigma_sum / G) * (sqrt(d) + sqrt(2 ln(4 R T / beta0)))`` (paper: 88).
    early_share : float or None
        Adaptive budgeting: share of each repetition's budget spent on its first ``T/4`` iterations
        (``None``: uniform, as in Alg. 4).
    max_iter : int or None
        Run at most this many iterations per repetition (budget still planned for ``T``);
        §6 stops at 2500.
    halt_log : float
        The halting threshold uses ``sqrt(halt_log * ln(4 R T / beta0))`` (Alg. 4: 2; the
        experiments' ``n0``: 1).
    keep : float
        Points outside ``B(theta0, keep * r0)`` are dropped (Alg. 3 line 1: 11).  With GoodCenter's
        start every point of ``P'`` already lies in ``B(theta0, r0)`` (Thm A.2), so ``keep = 1``
        drops no point GoodCenter kept and cuts the sum sensitivity about 11-fold.
    start : float or None
        When set, ``T`` is not ``t_mult / gamma^2 ln(t_log / gamma^2)`` but the number of steps
        the recursion of Lemma 3.2 (eq. 3, step ``eta``) needs from ``||theta0 - theta_opt||^2
        <= start * r_opt^2`` down to ``gamma^2 r_opt^2`` (:func:`lemma32_iterations`;
        ``docs/meb.md``, "The step size").  ``start = 35`` holds for the kept set
        ``B(theta0, r0)`` with GoodCenter's ``r0 < 6 r_opt`` (Thm A.2).
    """

    name: str
    step_div: float
    t_mult: float
    t_log: float
    repetitions: int | None
    kappa: float
    early_share: float | None = None
    max_iter: int | None = None
    keep: float = 11.0
    halt_log: float = 2.0
    start: float | None = None


SCHEDULES: dict[str, MEBSchedule] = {
    # Alg. 4 exactly: T ~ 1e6 at gamma = 0.2, R = 68 at beta = e^-9.  Useless below n ~ 1e8.
    "paper": MEBSchedule("paper", 2048.0, 4096.0, 484.0, None, 88.0),
    # Section 6 as run by the authors: step gamma^2/8, Alg. 4's T and R, halting at n0 (kappa=1),
    # at most 2500 iterations.
    "experiment": MEBSchedule("experiment", 8.0, 4096.0, 484.0, None, 1.0, None, 2500, 11.0, 1.0),
    # Default: step gamma^2/2 (Alg. 2, Lemma 3.2) and T from Lemma 3.2's recursion started at
    # ||theta0 - theta_opt||^2 <= 35 r_opt^2 (kept set B(theta0, r0), r0 < 6 r_opt;
    # T = 370 at gamma = 0.2 where the formula gave 783), one repetition, halting at kappa = 1
    # noise width (the authors' n0 in §6; kappa = 2 and 4 left 1.2-16x more points uncovered at
    # the same radius in benchmarks/bench_meb.py), 3/4 of the budget on the first T/4
    # iterations, points kept within GoodCenter's ball (keep = 1).
    "practical": MEBSchedule("practical", 2.0, 4.0, 100.0, 1, 1.0, 0.75, None, 1.0, start=35.0),
    # The earlier default: step gamma^2/8 (App. B, §6) with Alg. 2's
    # T = 4/g^2 ln(100/g^2), otherwise as "practical".
    "practical-b8": MEBSchedule("practical-b8", 8.0, 4.0, 100.0, 1, 1.0, 0.75, None, 1.0),
}

#: Named update steps ``gamma^2 / div`` for ``solve_private(step=)``: Alg. 2 / Lemma 3.2,
#: App. B and §6, Alg. 4 (Claim 3.4).
STEPS: dict[str, float] = {"lemma3.2": 2.0, "appendix-b": 8.0, "paper": 2048.0}


def lemma32_iterations(gamma: float, eta: float, start: float) -> int:
    """Steps of size ``eta`` that Lemma 3.2's recursion needs to reach ``gamma^2 r_opt^2``.

    Eq. (3) of the proof of Lemma 3.2 with step ``eta`` in place of ``gamma^2/2`` reads
    ``Y' <= (1 - eta) Y + eta^2 r_opt^2`` (``Y = ||theta^t - theta_opt||^2``, any ``r >= r_opt``,
    any ``eta`` in ``[0, 1]``), so ``Y_t - eta r^2 <= (1 - eta)^t (Y_0 - eta r^2)``; with
    ``Y_0 <= start r_opt^2`` and ``eta < gamma^2`` this is ``<= gamma^2 r_opt^2`` after
    ``ceil(ln((start - eta) / (gamma^2 - eta)) / -ln(1 - eta))`` steps, and it stays there
    (``(1 - eta) gamma^2 + eta^2 <= gamma^2``).

    References
    ----------
    Mahpud & Sheffet (2022), Lemma 3.2 (eq. 3); ``docs/meb.md``, "The step size".
    """
    if not 0 < eta < gamma**2:
        raise PrivacySpecError(f"the step must lie in (0, gamma^2) for Lemma 3.2's recursion, "
                               f"got {eta!r} at gamma={gamma!r}.")
    return int(math.ceil(math.log((start - eta) / (gamma**2 - eta)) / -math.log1p(-eta)))


def mmeb_constants(schedule: MEBSchedule, gamma: float, beta: float) -> dict[str, float]:
    """``T, R, beta0, step`` and the log factors of Alg. 4 line 1 for ``schedule``."""
    step = gamma**2 / schedule.step_div
    if schedule.start is None:
        T = int(math.ceil(schedule.t_mult / gamma**2 * math.log(schedule.t_log / gamma**2)))
    else:
        T = lemma32_iterations(gamma, step, schedule.start)
    R = schedule.repetitions
    if R is None:
        R = int(math.ceil(math.log(1 / beta) / math.log(8 / 7)))
    beta0 = 1.0 / (16 * R * T) if schedule.repetitions is None else beta / (2 * R * (T + 1))
    return {
        "T": T, "R": R, "beta0": beta0, "step": step,
        "z_sum": math.sqrt(schedule.halt_log * math.log(4 * R * T / beta0)),
        "z_count": math.sqrt(2 * math.log(4 * R * (T + 1) / beta0)),
        "iters": T if schedule.max_iter is None else min(T, schedule.max_iter),
    }


def budget_weights(T: int, early_share: float | None, upto: int | None = None) -> np.ndarray:
    """Fixed shares ``w_t`` (sum 1 over ``t < T``) of one repetition's budget; the first ``upto``.

    Only the iterations that can run need a share (``upto``, e.g. §6's cap of 2500 out of
    ``T ~ 4e6``); the shares of the others are still reserved, so the ``T`` shares sum to 1.
    """
    upto = T if upto is None else min(upto, T)
    if early_share is None or T < 4:
        return np.full(upto, 1.0 / T)
    k = int(math.ceil(T / 4))
    return np.where(np.arange(upto) < k, early_share / k, (1.0 - early_share) / (T - k))


@dataclass
class MMEBRun:
    """What one DP-MMEB call did (all derived from released noisy values)."""

    theta: np.ndarray | None
    iterations: int
    halted: str
    uncovered_bound: float
    trace: list[np.ndarray]


def kept_index(points: np.ndarray, theta0: np.ndarray, keep_radius: float, *,
               compress: bool = True, patch: Any = None,
               all_within: bool = False, sqn: np.ndarray | None = None,
               anchor_values: tuple[np.ndarray, np.ndarray] | None = None) -> OutsideIndex:
    """:class:`OutsideIndex` over the points Alg. 3 line 1 keeps: ``||x - theta0|| <= keep_radius``.

    Build it once per private search and pass it to every :func:`dp_mmeb` call with the same
    ``theta0`` and ``schedule.keep * r0`` (its ``key`` records them; a mismatch is refused).
    ``compress``: store repeated rows once (see :class:`OutsideIndex`; same answers).
    ``patch`` (:class:`cvxdp.geometry.meb.meb_inputs.Patch`): rows of ``points`` replaced by their
    clipped images.  A few dropped or patched rows are subtracted from every answer (and the
    kept images added) instead of copying the kept rows (no copy of the data).
    ``all_within``: the caller has tested every row (with ``patch``: every row but the patched
    ones, and every clipped image) with the test used below,
    ``inside_mask(rows, sqn, theta0, keep_radius)`` (GoodCenter's last mask,
    :attr:`~cvxdp.geometry.meb.goodcenter.GoodCenterResult.all_inside`, with ``keep >= 1``), and
    all passed: no row is dropped, so the check pass is skipped (the same index).
    ``sqn``: the rows' squared norms if the caller has them; ``anchor_values``: see
    :class:`OutsideIndex` (used when the index stores ``points`` as given).
    """
    theta0 = np.asarray(theta0, dtype=float)
    points = stored_rows(points)
    key = ("kept", theta0.tobytes(), float(keep_radius))
    sqn = sq_norms(points) if sqn is None else sqn
    # Usually every point is kept (always in the paper's presets, whose kept radius is 11 r0):
    # one pass with the index's loops proves it when no point lies beyond the radius shrunk by
    # the index's slack (far above rounding), so the test below could not drop any.
    scale = float(np.sqrt(sqn.max(initial=0.0))) + float(np.linalg.norm(theta0)) + keep_radius
    c = keep_radius**2 - slack(scale)
    if patch is None and (all_within or not np.isfinite(c) or outside_full(
            points, sqn, theta0, np.sqrt(max(c, 0.0)))[0] == 0):
        return OutsideIndex(points, compress=compress, key=key, sqn=sqn,
                            anchor_values=anchor_values)
    if all_within:      # every row (but the patched ones) and every clipped image passed
        kept = np.ones(len(points), dtype=bool)
    else:
        kept = inside_mask(points, sqn, theta0, keep_radius)
    include = None
    if patch is not None:
        kept[patch.rows] = False
        extra = np.ascontiguousarray(patch.clipped, dtype=float)
        extra_sqn = np.einsum("ij,ij->i", extra, extra)
        extra_kept = (np.ones(len(extra), dtype=bool) if all_within
                      else inside_mask(extra, extra_sqn, theta0, keep_radius))
        include = (np.ascontiguousarray(extra[extra_kept]), extra_sqn[extra_kept])
    dropped = np.flatnonzero(~kept)
    if 8 * len(dropped) <= len(points):     # a few dropped: subtract them, copy nothing else
        return OutsideIndex(points, compress=compress, key=key, sqn=sqn,
                            exclude=(points[dropped], sqn[dropped]), include=include,
                            anchor_values=anchor_values)
    rows, rsqn = points[kept], sqn[kept]
    if include is not None:
        rows, rsqn = np.concatenate([rows, include[0]]), np.concatenate([rsqn, include[1]])
    return OutsideIndex(rows, compress=compress, key=key, sqn=rsqn)


def dp_mmeb(points: np.ndarray, *, gamma: float, r: float, theta0: np.ndarray, r0: float,
            rho: float, beta: float, schedule: MEBSchedule, rng: np.random.Generator,
            local: bool = False, trace: bool = False,
            index: OutsideIndex | None = None) -> MMEBRun:
    """One private margin-based MEB call: ``theta`` with few points outside ``B(theta,(1+g) r)``.

    Parameters
    ----------
    points : (n, d) array
        Coordinates translated by a public centre near the data (see "Floating point" in the
        module docstring): the sums are of these coordinates.
    gamma, r, theta0, r0 : public
        Accuracy, candidate radius, initial centre and the initial radius defining ``kept``.
    rho, beta : float
        zCDP budget and failure probability of this call.
    schedule : MEBSchedule
    rng : numpy.random.Generator
    local : bool
        Alg. 5 (every point randomises its own reports) instead of Alg. 4.
    trace : bool
        Keep ``theta^t`` of every iteration (for convergence plots).
    index : OutsideIndex, optional
        The kept set ``||x - theta0|| <= keep r0`` (Alg. 3 line 1) from :func:`kept_index`, shared
        by the calls of one search; built here when absent.  The sensitivity ``G_t`` relies on
        the kept set, so an index built for another ``theta0`` or radius is refused.

    Returns
    -------
    MMEBRun
        ``theta`` is ``None`` for the paper's ``bottom`` (no repetition passed the final test).

    References
    ----------
    Mahpud & Sheffet (2022), Algorithm 4 (curator) and Algorithm 5
    (local), Lemma 4.1 / Claim 5.1 (privacy), Lemma 4.3 / Lemma 5.2 (utility).
    """
    n, d = points.shape
    theta0 = np.asarray(theta0, dtype=float)
    c = mmeb_constants(schedule, gamma, beta)
    T, R, step = c["T"], c["R"], c["step"]
    w = budget_weights(T, schedule.early_share, c["iters"])   # shares of the iterations run
    # rho/2 for the R*T sums, rho/2 for the R*(T+1) counts (Lemma 4.1), both split by w.
    rho_sum = rho / (2 * R) * w
    rho_cnt = rho / (2 * R) * np.append(w * T / (T + 1), 1.0 / (T + 1))  # last: final count
    mult_sum = np.sqrt(1.0 / (2 * rho_sum))        # sigma / sensitivity
    sig_cnt = np.sqrt(1.0 / (2 * rho_cnt))
    amp = math.sqrt(n) if local else 1.0            # sum of n local noises
    geo = math.sqrt(d) + c["z_sum"]
    tau_upd = schedule.kappa * mult_sum * geo * amp
    tau_fin = sig_cnt[-1] * c["z_count"] * amp
    bound = float(max(np.max(tau_upd + sig_cnt[:-1] * c["z_count"] * amp),
                      tau_fin + sig_cnt[-1] * c["z_count"] * amp))
    keep_r = schedule.keep * r0
    if index is None:
        index = kept_index(points, theta0, keep_r)
    elif index.key != ("kept", theta0.tobytes(), float(keep_r)):
        raise ValueError("index was built for another kept set; build it with "
                         "kept_index(points, theta0, schedule.keep * r0).")
    traj: list[np.ndarray] = []
    its = 0
    for _ in range(R):
        theta = theta0.copy()
        for t in range(c["iters"]):
            # Exact count and sum of the kept points outside B(theta, r), touching only the
            # points near the sphere (meb_index): same answer as a full pass.
            k, sum_out = index.query(theta, r)
            n_w = k + rng.normal(0.0, sig_cnt[t] * amp)
            its += 1
            if trace:
                traj.append(theta.copy())
            if n_w < tau_upd[t]:
                return MMEBRun(theta, its, "few_uncovered", bound, traj)
            g = 2.0 * (schedule.keep * r0 + norm2(theta - theta0))
            s = sum_out - k * theta
            theta = theta + step * (s + rng.normal(0.0, g * mult_sum[t] * amp, size=d)) / n_w
        k_fin = index.count_outside(theta, (1 + gamma) * r)
        if k_fin + rng.normal(0.0, sig_cnt[-1] * amp) <= tau_fin:
            if trace:
                traj.append(theta.copy())
            return MMEBRun(theta, its, "final_test", bound, traj)
    return MMEBRun(None, its, "bottom", bound, traj)


def radius_grid(gamma: float, ratio: float) -> tuple[int, int]:
    """``i_max = ceil(ln(ratio) / ln(1+gamma))`` and ``B = ceil(log2(i_max + 1))`` (Alg. 3).

    ``ratio`` is ``r0 / r_low``: 4 in the paper (``r0 <= 4 r_opt``); 6 with GoodCenter's
    ``r0 < 6 r_opt`` (Thm A.2).  ``B`` bounds the number of binary-search calls for every path
    (each call shrinks ``i_max - i_min + 1`` to at most half, rounded up).
    """
    if not 0 < gamma < 1:
        raise PrivacySpecError(f"accuracy (gamma) must be in (0, 1), got {gamma!r}.")
    i_max = int(math.ceil(math.log(ratio) / math.log1p(gamma)))
    return i_max, max(1, int(math.ceil(math.log2(i_max + 1))))
