"""Private initial centre and radius for the minimum enclosing ball (GoodCenter, Alg. 6 / 7).

The DP minimum-enclosing-ball algorithm needs a starting ball ``B(theta0, r0)`` with
``r_opt <= r0 <= const * r_opt`` and ``theta0`` within a few ``r_opt`` of the optimal centre.
:func:`good_center` finds one privately by halving a radius and re-centring on a noisy average
(curator model, Alg. 6); :func:`ldp_good_center` is the local-model version (Alg. 7) in which every
point randomises its own reports.

Deviation from the paper (sound fix, written down here and in ``docs/meb.md``): the paper adds
noise of scale ``2 r_cur`` to ``sum_{x in P^t} x``.  Under replace-one neighbours a point can leave
``P^t`` while its replacement enters, so the change is ``||x||`` (origin dependent), not ``<= 2
r_cur``.  We sum the *displacements* ``x - theta^t`` of the points of ``P^t`` (each of norm
``<= r_cur``), whose replace-one l2 sensitivity is ``2 r_cur`` whatever the membership, and set
``mu~ = theta^t + (sum (x - theta^t) + noise) / n_cur``, which is what the paper's proof of Thm A.2
manipulates.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cvxdp.citations import MINIMUM_ENCLOSING_BALL, cite
from cvxdp.geometry.meb.meb_kernels import side_terms
from cvxdp.geometry.meb.meb_rows import map_rows, sq_norms
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ZCDP

__all__ = ["GoodCenterResult", "good_center", "good_center_loop", "ldp_good_center",
           "ldp_good_center_loop", "good_center_rounds"]

_REF6 = cite(MINIMUM_ENCLOSING_BALL, "App. A, Alg. 6 / Thm A.1 (rho-zCDP)")
_REF7 = cite(MINIMUM_ENCLOSING_BALL, "App. A.1, Alg. 7 / Thm A.4 (local rho-zCDP)")


@dataclass(frozen=True)
class GoodCenterResult:
    """Output of :func:`good_center` / :func:`ldp_good_center`.

    Attributes
    ----------
    center, radius :
        The released ball ``B(theta*, r*)``.
    iterations : int
        Rounds run before halting (the paper's ``t``).
    rounds : int
        The planned number of rounds ``T`` (what the privacy budget is split over).
    excluded_bound : float
        High-probability (``>= 1 - beta``) bound on the number of points dropped on the way
        (``2 X t``, proof of Thm A.2), i.e. points that may lie outside the released ball.
    records : list of PrivacyRecord
        The zCDP receipts (count and sum queries, planned worst case ``T`` rounds).
    all_inside : bool
        Not released (an exact fact about the data, never printed or returned to the user):
        every row read (with a patch: every row but the patched ones, and every clipped image)
        lies in the released ball by the test ``||x||^2 + <x, -2 center> <= radius^2 -
        ||center||^2`` (:func:`~cvxdp.geometry.meb.meb_index.inside_mask`), the test
        :func:`~cvxdp.geometry.meb.meb_private.kept_index` repeats.  It
        only lets that function skip a pass that would find the same; ``False``
        when unknown.
    anchor_values : (center, t) or None
        Not released either: ``t = ||x||^2 + <x, -2 center>`` for every row of the user's
        array, computed by the last round's test (``keep_values=True``), for the MEB index's
        anchor cache (:class:`~cvxdp.geometry.meb.meb_index.OutsideIndex`); ``None`` when not
        kept or when GoodCenter stopped at round 0.
    """

    center: np.ndarray
    radius: float
    iterations: int
    rounds: int
    excluded_bound: float
    records: list[PrivacyRecord] = field(default_factory=list)
    all_inside: bool = False
    anchor_values: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False,
                                                                compare=False)


def good_center_rounds(r_max: float, r_min: float) -> int:
    """``T = ceil(log2(R_max / r_min)) + 1`` (Alg. 6, line 1)."""
    return int(math.ceil(math.log2(r_max / r_min))) + 1


def _records(rho: float, rounds: int, local: bool) -> list[PrivacyRecord]:
    ref = _REF7 if local else _REF6
    per = rho / (2 * rounds)
    sig = math.sqrt(rounds / rho)
    return [
        PrivacyRecord("gaussian", ZCDP(per), ref, count=rounds,
                      params={"query": "count outside B(mu~, r_cur/2)", "sensitivity": 1.0,
                              "sigma": sig}),
        PrivacyRecord("gaussian", ZCDP(per), ref, count=rounds,
                      params={"query": "sum of (x - theta^t) over P^t",
                              "sensitivity": "2 r_cur", "sigma": f"2 r_cur * {sig:.6g}"}),
    ]


#: Rows per piece of a GoodCenter pass: the ``(rows, d)`` temporaries of a piece stay in cache,
#: and no pass allocates an ``(n, d)`` array (peak memory at most 1.5x the data).
PIECE_ROWS = 1 << 12


def piece_rows(d: int) -> int:
    """Rows per piece for ``d`` coordinates: :data:`PIECE_ROWS` at ``d >= 20``, more below (a
    power of two up to ~640 KiB of rows), so that narrow data do not pay numpy's per-call cost
    on tiny pieces (1e6 x 5)."""
    return max(PIECE_ROWS, 1 << ((81920 // max(d, 1)).bit_length() - 1))


def _patched(points: np.ndarray, patch: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(rows, live mask)]``: the user's array with the patch's rows masked out (they are
    finite, so a masked row adds exactly 0), then the patch's clipped images."""
    live = np.ones(len(points), dtype=bool)
    if patch is None:
        return [(points, live)]
    live[patch.rows] = False
    return [(points, live), (patch.clipped, np.ones(len(patch.clipped), dtype=bool))]


def _summed(part: Callable[[int, int], np.ndarray], n: int, width: int,
            piece: int = PIECE_ROWS) -> np.ndarray:
    """``sum_i part(lo_i, hi_i)`` over fixed row pieces of ``piece`` rows: the MEB index's row
    chunks (:func:`cvxdp.geometry.meb.meb_rows.map_rows`, on its thread pool; numpy releases the
    GIL) each add their pieces in order, then the chunks are added in order.  The pieces and
    chunks depend on ``n`` only, so the result is the same on every run and machine."""
    def chunk(lo: int, hi: int) -> np.ndarray:
        acc = np.zeros(width)
        for start in range(lo, hi, piece):
            acc += part(start, min(start + piece, hi))
        return acc

    total = np.zeros(width)
    for p in map_rows(chunk, n):
        total += p
    return total


def good_center(points: np.ndarray, *, center: np.ndarray, r_max: float, r_min: float,
                rho: float, beta: float, rng: np.random.Generator,
                patch: Any = None, sqn: np.ndarray | None = None,
                keep_values: bool = False) -> GoodCenterResult:
    """Private noisy-average-and-halve search for a good starting ball (curator model).

    Parameters
    ----------
    points : (n, d) array
        Private data.
    center, r_max : public
        ``theta0`` and ``R_max`` with (by assumption) ``P subset B(theta0, R_max)``; points outside
        are simply never counted, so privacy does not depend on the assumption.
    r_min : float
        Public lower bound on ``r_opt`` (e.g. half the grid step).
    rho : float
        zCDP budget of this step.
    beta : float
        Failure probability used in the threshold ``X``.
    rng : numpy.random.Generator
    patch : cvxdp.geometry.meb.meb_inputs.Patch, optional
        Rows of ``points`` to leave out and their clipped images to add (finite): the pass
        reads ``points`` without copying it.
    sqn : (n,) array, optional
        ``sq_norms(points)`` if the caller has it (the MEB index reuses it).
    keep_values : bool
        Keep each round's ``||x||^2 + <x, -2 mu>`` (two arrays of ``n`` floats) and return
        those at the released centre as ``anchor_values`` (the MEB index's first build at
        that centre then reads no row to compute them).

    Returns
    -------
    GoodCenterResult

    Notes
    -----
    A row is in ``B(theta, r)`` when ``||x||^2 + <x, -2 theta> <= r^2 - ||theta||^2`` (the MEB
    index's test, :func:`~cvxdp.geometry.meb.meb_index.inside_mask`), with the squared norms
    computed once: each pass reads a row once for the test and, from cache, once for the sum
    (~26 ms -> ~12 ms per pass at 1e6 x 20; the differences ``x - theta`` cost a
    write and two more reads).  ``sum (x - theta)`` over a set is evaluated as
    ``sum x - k theta``: the same number up to rounding (coordinates are translated by a public
    centre, ``meb_inputs.working_points``, so both are sums of ``O(R_max)`` terms), and the
    sensitivity argument (each term has norm ``<= r_cur``) is about the exact value.

    References
    ----------
    Mahpud & Sheffet (2022), Appendix A, Algorithm 6, Theorems A.1-A.2.
    """
    n, d = points.shape
    sets = _patched(points, patch)   # [(rows, alive)]: rows still inside every ball so far
    norms = [sq_norms(points) if sqn is None else sqn]
    norms += [np.einsum("ij,ij->i", pts, pts) for pts, _ in sets[1:]]
    # The far count of round t (outside B(mu, r/2)) and the sum of round t+1 (inside B(mu, r/2),
    # the next ball: theta^{t+1} = mu, r_cur / 2) test the same distances against the same
    # bound ((r/2)^2 == 0.25 r r exactly), so far_at computes both in one read and sum_at
    # takes the stored sum and masks when called at that ball (3 reads instead of
    # 4 when GoodCenter stops at round 1; the same numbers bit for bit, same pieces and order).
    ahead: dict[str, Any] = {}
    values: list[tuple[bytes, np.ndarray]] = []    # (centre, t) of the last two far counts

    def sum_at(theta: np.ndarray, r: float) -> np.ndarray:
        if ahead.get("ball") == (theta.tobytes(), r):
            for (_, alive), inside in zip(sets, ahead["inside"], strict=True):
                alive &= inside
            return ahead["sum"]
        total = np.zeros(d)
        v, c = -2.0 * theta, r * r - theta @ theta
        # At theta = 0 (round 0 in a box around the origin) <x, -2 theta> is +-0 for every row
        # and t is ||x||^2 exactly: the product is skipped, not the test.
        at_zero = not theta.any()
        for (pts, alive), sq in zip(sets, norms, strict=True):
            def part(lo: int, hi: int, pts=pts, alive=alive, sq=sq) -> np.ndarray:
                t = sq[lo:hi] if at_zero else side_terms(pts[lo:hi], sq[lo:hi], v)
                a = alive[lo:hi]
                a &= t <= c
                return np.append(np.einsum("i,ij->j", a.astype(float), pts[lo:hi]),
                                 float(np.count_nonzero(a)))
            both = _summed(part, len(pts), d + 1, piece_rows(d))
            total += both[:d] - both[d] * theta
        return total

    def far_at(mu: np.ndarray, r: float) -> float:
        half = r / 2
        v, mm = -2.0 * mu, mu @ mu
        c_far, c_in = 0.25 * r * r - mm, half * half - mm      # the same number
        total, far, masks = np.zeros(d), 0.0, []
        keep = None
        if keep_values:     # reuse the buffer of two rounds ago (its centre is passed)
            keep = values.pop(0)[1] if len(values) == 2 else np.empty(n)
            values.append((np.asarray(mu, dtype=float).tobytes(), keep))
        for j, ((pts, alive), sq) in enumerate(zip(sets, norms, strict=True)):
            inside = alive.copy()
            out_t = keep if j == 0 else None

            def part(lo: int, hi: int, pts=pts, inside=inside, sq=sq,
                     out_t=out_t) -> np.ndarray:
                t = side_terms(pts[lo:hi], sq[lo:hi], v,
                               out=None if out_t is None else out_t[lo:hi])
                a = inside[lo:hi]
                out = np.count_nonzero(a & (t > c_far))
                a &= t <= c_in
                return np.append(np.einsum("i,ij->j", a.astype(float), pts[lo:hi]),
                                 [float(np.count_nonzero(a)), float(out)])
            both = _summed(part, len(pts), d + 2, piece_rows(d))
            total += both[:d] - both[d] * mu
            far += float(both[d + 1])
            masks.append(inside)
        ahead.update(ball=(np.asarray(mu, dtype=float).tobytes(), half), sum=total,
                     inside=masks)
        return far

    res = good_center_loop(points.shape, sum_at, far_at, center=center, r_max=r_max,
                           r_min=r_min, rho=rho, beta=beta, rng=rng)
    # The loop's last sum_at was at the released ball (theta, r_cur), so each row's mask says
    # whether it lies inside every ball so far, this one included, by inside_mask's test
    # (the cached path's (r/2)^2 is the same number as the next r_cur^2).
    # With a patch: every row but the patched ones (left out from the start) and every clipped
    # image (patch.rows are distinct: sorted indices).
    dropped = 0 if patch is None else len(patch.rows)
    inside = (np.count_nonzero(sets[0][1]) == n - dropped
              and all(bool(alive.all()) for _, alive in sets[1:]))
    kept = [t for key, t in values if key == res.center.tobytes()]
    res = dataclasses.replace(res, all_inside=inside,
                              anchor_values=(res.center, kept[0]) if kept else None)
    return res


def _far_count(sets: Any, mu: np.ndarray, r: float) -> float:
    """How many rows still counted (the mask of each set) lie farther than ``r / 2`` from
    ``mu``: the second private query of both GoodCenter variants (exact count; the caller adds
    the noise)."""
    total = 0.0
    for pts, live in sets:
        def part(lo: int, hi: int, pts=pts, live=live) -> np.ndarray:
            dm = pts[lo:hi] - mu
            far = live[lo:hi] & (np.einsum("ij,ij->i", dm, dm) > 0.25 * r * r)
            return np.array([float(np.count_nonzero(far))])
        total += float(_summed(part, len(pts), 1, piece_rows(pts.shape[1]))[0])
    return total


def good_center_loop(shape: tuple[int, int], sum_at: Callable[[np.ndarray, float], np.ndarray],
                     far_at: Callable[[np.ndarray, float], float], *, center: np.ndarray,
                     r_max: float, r_min: float, rho: float, beta: float,
                     rng: np.random.Generator) -> GoodCenterResult:
    """Alg. 6's rounds (noise, threshold, halving) over two private queries, whatever holds the
    data: ``sum_at(theta, r)``, the sum of ``p - theta`` over the rows inside every ball so far
    (this one included), and ``far_at(mu, r)``, how many of those lie farther than ``r/2`` from
    ``mu``.  :func:`good_center` answers them on a numpy array, ``cvxdp.dask_backend.meb`` on a Dask
    array; the noise is drawn here, in the same order for both.
    """
    n, d = shape
    T = good_center_rounds(r_max, r_min)
    X = math.sqrt(2 * T * math.log(4 * T / beta) / rho)
    sig = math.sqrt(T / rho)
    theta = np.asarray(center, dtype=float).copy()
    r_cur = float(r_max)
    n_cur = float(n)
    for t in range(T):
        s = sum_at(theta, r_cur) + rng.normal(0.0, 2 * r_cur * sig, size=d)
        mu = theta + s / max(n_cur, 1.0)
        if far_at(mu, r_cur) + rng.normal(0.0, sig) >= X:
            return GoodCenterResult(theta, r_cur, t, T, 2 * X * t, _records(rho, T, False))
        r_cur /= 2
        n_cur -= 2 * X
        theta = mu
    return GoodCenterResult(theta, r_cur, T, T, 2 * X * T, _records(rho, T, False))


def ldp_good_center(points: np.ndarray, *, center: np.ndarray, r_max: float, r_min: float,
                    rho: float, beta: float, rng: np.random.Generator,
                    patch: Any = None) -> GoodCenterResult:
    """Local-model GoodCenter: each point sends ``N(Pi^t(x), 4 r_cur^2 sigma^2 I)`` and a noisy bit.

    Each user's messages over the ``T`` rounds are ``rho``-zCDP with respect to her own point
    (projection onto a ball of radius ``r_cur`` has l2 sensitivity ``2 r_cur``; the indicator has
    sensitivity 1).  The server only uses the *sums* of the reports, so the simulation samples the
    sum of the ``n`` independent Gaussian noises exactly as one ``N(0, n sigma^2)`` draw (identical
    distribution of everything the server computes).

    Parameters
    ----------
    points, center, r_max, r_min, rho, beta, rng, patch :
        As in :func:`good_center`.

    Returns
    -------
    GoodCenterResult

    References
    ----------
    Mahpud & Sheffet (2022), Appendix A.1, Algorithm 7, Theorem A.4.
    """
    n, d = points.shape
    sets = _patched(points, patch)

    def sum_at(theta: np.ndarray, r: float) -> np.ndarray:
        total = np.zeros(d)
        for pts, live in sets:
            def part(lo: int, hi: int, pts=pts, live=live) -> np.ndarray:
                diff = pts[lo:hi] - theta
                norm = np.sqrt(np.einsum("ij,ij->i", diff, diff))
                scale = np.minimum(1.0, r / np.maximum(norm, 1e-300)) * live[lo:hi]
                return (scale[:, None] * diff).sum(axis=0)
            total += _summed(part, len(pts), d, piece_rows(d))
        return total

    def far_at(mu: np.ndarray, r: float) -> float:
        return _far_count(sets, mu, r)

    return ldp_good_center_loop(points.shape, sum_at, far_at, center=center, r_max=r_max,
                                r_min=r_min, rho=rho, beta=beta, rng=rng)


def ldp_good_center_loop(shape: tuple[int, int],
                         sum_at: Callable[[np.ndarray, float], np.ndarray],
                         far_at: Callable[[np.ndarray, float], float], *, center: np.ndarray,
                         r_max: float, r_min: float, rho: float, beta: float,
                         rng: np.random.Generator) -> GoodCenterResult:
    """Alg. 7's rounds over two queries: ``sum_at(theta, r)``, the sum of the projections of
    ``p - theta`` onto the ball of radius ``r``, and ``far_at(mu, r)``, how many rows lie farther
    than ``r/2`` from ``mu`` (see :func:`good_center_loop`)."""
    n, d = shape
    T = good_center_rounds(r_max, r_min)
    X = math.sqrt(2 * n * T * math.log(4 * T / beta) / rho)
    sig = math.sqrt(T / rho)
    sq = math.sqrt(n)
    theta = np.asarray(center, dtype=float).copy()
    r_cur = float(r_max)
    for t in range(T):
        proj_sum = sum_at(theta, r_cur) + n * theta
        mu = (proj_sum + rng.normal(0.0, 2 * r_cur * sig * sq, size=d)) / n
        if far_at(mu, r_cur) + rng.normal(0.0, sig * sq) >= X:
            return GoodCenterResult(theta, r_cur, t, T, 2 * X * t, _records(rho, T, True))
        r_cur /= 2
        theta = mu
    return GoodCenterResult(theta, r_cur, T, T, 2 * X * T, _records(rho, T, True))
