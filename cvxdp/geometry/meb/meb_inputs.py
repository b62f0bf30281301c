"""The public arguments and the working points of the private minimum-enclosing-ball pipeline.

:func:`resolve_bounds` and :func:`resolve_schedule` check the public box and the iteration
constants, :func:`rho_of_budget` turns the budget into zCDP, and :func:`working_points` gives the
points the mechanisms read: clipped into the public box (never refused) and translated by a
public shift, with a few outside points patched (:class:`Patch`) instead of copying the array.
:func:`~cvxdp.geometry.meb.meb_solve.solve_private_meb` runs the pipeline on them.

References
----------
Mahpud & Sheffet (2022), "A Differentially Private Linear-Time fPTAS for the Minimum Enclosing
Ball Problem" (the algorithms whose inputs these are); Canonne, Kamath & Steinke (2020), "The
Discrete Gaussian for Differential Privacy" (the (epsilon, delta) to zCDP conversion).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from cvxdp.arguments import check_box
from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.geometry.meb.box import clip_into_box, working_shift
from cvxdp.geometry.meb.goodcenter import piece_rows
from cvxdp.geometry.meb.meb_private import SCHEDULES, STEPS, MEBSchedule
from cvxdp.geometry.meb.meb_rows import map_rows, sq_norms
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP, zcdp_from_approx

__all__ = ["PATCH_RANGE", "PATCH_SHARE", "Patch", "resolve_bounds", "resolve_schedule",
           "rho_of_budget", "working_points"]


def resolve_bounds(bounds: Any, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Public domain box ``(lo, hi)`` as two ``(d,)`` arrays; refuse a missing or bad box."""
    if bounds is None:
        raise PrivacySpecError(
            "bounds=(lo, hi) is required: the data-independent box the points live in (e.g. "
            "bounds=(-5, 5) for [-5, 5]^d). It is never inferred from the data, since min/max of "
            "the points would leak them; take it from the data's documented range.")
    lo, hi = check_box("bounds", bounds, d, error=PrivacySpecError)
    return lo, hi


def resolve_schedule(schedule: str | MEBSchedule, adaptive: bool | None,
                     step: str | None = None) -> MEBSchedule:
    """A preset name (``"practical"``, ``"practical-b8"``, ``"experiment"``, ``"paper"``) or an
    ``MEBSchedule``; ``step`` (a name of :data:`~cvxdp.geometry.meb.meb_private.STEPS`)
    replaces its update step (a schedule whose ``T`` follows Lemma 3.2's recursion recomputes
    ``T`` for that step)."""
    if isinstance(schedule, str):
        if schedule not in SCHEDULES:
            raise PrivacySpecError(f"unknown schedule {schedule!r}; use one of "
                                   f"{sorted(SCHEDULES)} or an MEBSchedule.")
        schedule = SCHEDULES[schedule]
    if not isinstance(schedule, MEBSchedule):
        raise PrivacySpecError(f"schedule must be a name or MEBSchedule, got {schedule!r}.")
    if adaptive is True and schedule.early_share is None:
        schedule = dataclasses.replace(schedule, early_share=0.75)
    elif adaptive is False:
        schedule = dataclasses.replace(schedule, early_share=None)
    if step is not None:
        if step not in STEPS:
            raise PrivacySpecError(f"unknown step {step!r}; use one of {sorted(STEPS)} "
                                   "(gamma^2/2, gamma^2/8, gamma^2/2048) or None.")
        schedule = dataclasses.replace(schedule, step_div=STEPS[step])
    return schedule


@dataclasses.dataclass(frozen=True)
class Patch:
    """A few rows of the user's array replaced by their clipped copies, without copying the
    others: ``rows`` (sorted indices) are to be left out, ``clipped`` (their images in the box,
    in the same order) added.  Every consumer (GoodCenter, the kept-set index) reads the
    user's array with ``rows`` left out, plus ``clipped``: the same multiset of points as the
    clipped copy, so the same function of the data."""

    rows: np.ndarray
    clipped: np.ndarray


#: Rows outside the box are patched (:class:`Patch`) instead of copying the array when there are
#: at most this share of them and they are finite and within PATCH_RANGE box radii of the box
#: (so that subtracting their contributions rounds by ~ PATCH_RANGE R_max u, far below G_t).
PATCH_SHARE, PATCH_RANGE = 1.0 / 64, 1e3


def _bad_rows(points: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              sqn: np.ndarray | None = None) -> np.ndarray:
    """Indices of the rows with a coordinate outside ``[lo, hi]`` or NaN, by pieces (no
    ``(n, d)`` temporary).  A piece's column minima and maxima (a NaN propagates and fails
    both) clear it at once; only a piece that fails is tested row by row, so data inside the
    box cost one read (the column reductions and the row test were three reads).
    Pieces of 4,096 rows stay in cache between the minimum and the maximum (16,384-row pieces
    read memory twice: 30 ms against 12 ms at 1e6 x 20), and the MEB index's fixed row chunks
    run on its thread pool; the rows found are the same, in order.  ``sqn``: filled with
    every row's ``einsum("ij,ij->i")`` (:func:`~cvxdp.geometry.meb.meb_index.sq_norms`'s
    numbers) while the piece is in cache, which saves the index and GoodCenter a pass."""
    step = piece_rows(points.shape[1])     # 4,096 rows from 20 coordinates, more below
    lo_max, hi_min = float(np.max(lo)), float(np.min(hi))

    def chunk(first: int, last: int) -> list[np.ndarray]:
        parts = []
        for start in range(first, last, step):
            p = points[start:min(start + step, last)]
            if sqn is not None:
                np.einsum("ij,ij->i", p, p, dtype=np.float64, out=sqn[start:start + len(p)])
            # Whole-piece minimum and maximum (one vectorised read; exact for a cube such as
            # bounds=(-5, 5)), then column-wise ones, then rows: each test only clears pieces.
            if lo_max <= hi_min and p.min() >= lo_max and p.max() <= hi_min:
                continue
            if np.all(p.min(axis=0) >= lo) and np.all(p.max(axis=0) <= hi):
                continue
            bad = ~np.all((p >= lo) & (p <= hi), axis=1)
            parts.append(np.flatnonzero(bad) + start)
        return parts

    parts = [a for c in map_rows(chunk, len(points)) for a in c]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def working_points(points: np.ndarray, lo: np.ndarray, hi: np.ndarray
                   ) -> tuple[np.ndarray, int, np.ndarray, Patch | None, np.ndarray]:
    """The points the private pipeline reads: ``(points', clipped count, shift, patch, sqn)``.

    ``points'`` are the points clipped into the public box (:func:`clip_into_box`) and
    translated by ``shift``: the sums of Alg. 4 / 6 must add numbers of size ``O(R_max)``,
    whose rounding (``~ k R_max u``) stays far below their sensitivity ``G_t >= 2 r0`` (raw
    coordinates far from the origin, ``||x|| ~ 1e8``, rounded by more than ``G_t``).
    ``shift`` is the public box centre when the box does not contain the origin, else zero:
    coordinates in a box around the origin are already at most ``2 R_max`` in norm.  So data in
    a box around the origin are used as they are, with no copy (the common case: the issue-24
    memory limit, peak RSS <= 1.5x the array); otherwise one copy, as before.  A few finite
    points outside the box (at most :data:`PATCH_SHARE` of them, within :data:`PATCH_RANGE` box
    radii) are not copied either: ``patch`` lists them and their clipped images
    (:class:`Patch`), and the readers leave them out and add the images.  The count is
    PRIVATE: release it only through :func:`cvxdp.privacy.clipping.noisy_count`.
    ``sqn``: the squared norms of the rows of ``points'`` (with a patch, of the user's rows:
    the patched ones are left out by every reader).
    """
    shift = working_shift(lo, hi)
    sqn = np.empty(len(points)) if not shift.any() else None
    rows = _bad_rows(points, lo, hi, sqn)
    inside = not len(rows)
    if inside and not shift.any():
        return points, 0, shift, None, sqn
    if inside:
        pts = points - shift
        return pts, 0, shift, None, sq_norms(pts)
    if not shift.any():
        raw = points[rows]
        reach = PATCH_RANGE * float(np.max(hi - lo))
        if (len(rows) <= PATCH_SHARE * len(points) and np.all(np.isfinite(raw))
                and np.all(np.abs(raw) <= reach)):
            clipped, count = clip_into_box(raw, lo, hi)
            return points, count, shift, Patch(rows, clipped), sqn
    pts, count = clip_into_box(points, lo, hi)
    pts -= shift
    return pts, count, shift, None, sq_norms(pts)


def rho_of_budget(budget: Any) -> tuple[float, float | None]:
    """``(rho, delta)`` of a resolved budget: a zCDP ``rho`` as given (``delta`` None), an
    ``(epsilon, delta > 0)`` budget as the largest ``rho`` meeting it (Canonne, Kamath &
    Steinke 2020) with its ``delta``; pure DP is refused (the mechanisms are Gaussian)."""
    if isinstance(budget, ZCDP):
        return budget.rho, None
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        return zcdp_from_approx(budget.epsilon, budget.delta), budget.delta
    assert isinstance(budget, (PureDP, ApproxDP))
    raise BudgetError("the DP-MEB algorithm adds Gaussian noise and cannot be pure epsilon-DP; "
                      "give delta > 0 (e.g. delta=1e-6) or a zCDP budget rho=.")
