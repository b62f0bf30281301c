"""A sharper sub-optimality bound for objective perturbation, from the released point.

Objective perturbation (Thm C.12 of Song, Xue & Zhang (2025), "Differential Privacy for
Euclidean Jordan Algebra with Applications to Private Symmetric Cone Programming") releases
``c~ = c + z`` and the exact minimiser ``x~`` of ``c~'x`` over the public set ``X`` (the model's
constraints and the public ball ``||x_S|| <= R``).  On the noise event ``||z_S||_2 <= t`` its
bound is first order: ``c'x~ - OPT <= 2 R t``.  The gap is, exactly,

    ``c'x~ - OPT = max_{x in X} [ z'(x - x~) - c~'(x - x~) ] <= max_{x in X} phi(x)``,
    ``phi(x) = t ||x_S - x~_S|| - delta(x)``,  ``delta(x) = c~'(x - x~) >= 0``,

and ``phi`` is small wherever the released objective grows fast away from ``x~`` (a strongly
convex objective, a unique LP vertex).  :func:`sharp_objective_gap` bounds ``max phi`` from the
released data and public constraints only (post-processing: no budget):

* ``L(d) = {x in X : c~'x <= c~'x~ + d}`` grows with ``d``; per private coordinate ``j`` and
  side, ``s_j(d) = max_{x in L(d)} +-(x_j - x~_j)`` is concave and nondecreasing in ``d`` (the
  value of a convex program in the right-hand side of one constraint) -- two exact solves per
  coordinate and level.  With ``e_j(d) = max(s_j^+, s_j^-)``, every ``x`` with ``delta(x) <= d``
  has ``||x_S - x~_S|| <= ||e(d)||``.
* Levels ``d_i = 2 R t 4^-i`` are solved top-down.  Above ``d_0 = 2 R t`` no point has
  ``phi > 0`` (``||x_S - x~_S|| <= 2R`` in the ball).  On ``[d_{i+1}, d_i]`` the extents are at
  most ``e(d_i)`` (monotone) and, by concavity, at most ``s(d_{i+1}) + Lambda (d - d_{i+1})``
  with ``Lambda`` the secant slope of ``[d_{i+2}, d_{i+1}]`` (at least the slope at
  ``d_{i+1}``); the interval is cut into geometric pieces ``[u, v]`` and ``phi <= t ||e(v)|| -
  u`` on each.  Below the last level, ``phi <= t ||e(d_L)||``.  The largest of these is the
  bound; the search stops when nothing below a level can exceed what is already found --
  also before the next level's solves, when the secant of ``[0, d_i]`` (``s_j(0) >= 0``)
  already bounds ``[d_i, d_{i-1}]`` within it: the lower levels could only raise the bound.
  With a ball the top level ``d_0`` is solved only when a decision needs it: the public box
  (bound propagation over ``X``) caps its extents, and while the interval that cap gives is
  within the bound of the lower intervals, every decision is the one its solves would give.

A strongly convex objective (``s_j(d) ~ sqrt(d / mu)``) gives a bound of order ``k t^2 / mu``,
second order in the noise; an LP whose optimal vertex stays optimal for every ``c`` within ``t``
of ``c~`` gives a bound near 0.  Solver values are used with their tolerance pushed the safe way
(the extents up, the lower level's extents down for the slopes).  Proof: ``docs/certificates.md``,
"Objective perturbation".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from cvxdp.solvers.bound_propagation import propagated_box
from cvxdp.solvers.public_part import bound_solves
from cvxdp.transform.scp import SymmetricConeProgram, orthant_rows_added

__all__ = ["sharp_objective_gap"]

#: levels ``d_i = 2 R t 4^-i`` (i = 0, 1, ...); at most this many below the top one
_LEVELS = 8
#: pieces each interval between two levels is cut into for the bound (no solves)
_PIECES = 16


def sharp_objective_gap(prog: SymmetricConeProgram, c_noisy: np.ndarray, x: np.ndarray,
                        supp: np.ndarray, R: float, t: float, enough: float = 0.0,
                        max_solves: int | None = None) -> float:
    """An upper bound on ``c'x~ - OPT`` on the event ``||z_S|| <= t`` (module doc).

    Parameters
    ----------
    prog : SymmetricConeProgram
        The public set ``X`` (rows and cones; its ``c`` is ignored), the ball included.
    c_noisy : ndarray
        The released objective ``c~``.
    x : ndarray
        The released minimiser ``x~`` of ``c~'x`` over ``X``.
    supp : ndarray of int
        The coordinates the noise touches (``S``).
    R, t : float
        The public ball's radius and the noise norm bound (``2 R t`` is Thm C.12's bound).
    enough : float
        A bound at which to stop refining: once the levels solved so far give a bound at most
        ``enough``, it is returned without solving the lower levels (each costs two solves
        per private coordinate); 0 refines to the last level.
    max_solves : int or None
        At most this many bound solves: a level that would exceed it counts as a failed solve
        (the levels above it bound those below: monotone extents), so the bound stays valid
        and only loses precision.

    Returns
    -------
    float
        The bound; ``2 R t`` when the levels give no better one.
    """
    first = 2.0 * R * t
    x = np.asarray(x, dtype=float)
    n = x.size
    base = float(c_noisy @ x)
    tol = 1e-8 * (1.0 + abs(base))  # the released solve's optimality tolerance
    # X with one more row: c~'x <= base + d (a nonneg row after the existing ones)
    at = prog.dims.zero + prog.dims.nonneg   # the new row's index
    A, b0, dims = orthant_rows_added(prog, c_noisy.reshape(1, -1), [base])
    level_prog = SymmetricConeProgram(A=A, b=b0, c=np.zeros(n), offset=0.0, dims=dims,
                                      cone=None, exp_tail=prog.exp_tail)

    cache: dict[float, _LevelSolves | None] = {}

    def started(level: float, order: np.ndarray | None = None) -> _LevelSolves | None:
        """The level's solves, begun (none run yet; the coordinates in ``order``) unless
        cached; None over the budget."""
        if level not in cache:
            if not room(1):
                return None  # over the budget: as a failed solve
            b = b0.copy()
            b[at] = base + level + tol
            # a program per level: two levels' solves may run side by side (_top_level)
            cache[level] = _LevelSolves(dataclasses.replace(level_prog, b=b), x, supp, order)
        return cache[level]

    def solved(level: float) -> tuple[np.ndarray, np.ndarray] | None:
        pending = started(level)
        return None if pending is None else pending.extents()

    def room(levels: int) -> bool:
        """Whether ``levels`` more levels fit in ``max_solves``."""
        return max_solves is None or 2 * supp.size * (len(cache) + levels) <= max_solves

    # phi <= 0 above d_0 = 2 R t (||x_S - x~_S|| <= 2 R); with no ball (R = inf) a top level
    # whose concave extension has t ||Lambda|| <= 1 bounds phi above it (_top_level)
    top, worst = first, 0.0
    if not math.isfinite(first):
        found = _top_level(started, room, t, float(np.linalg.norm(x[supp])))
        if found is None:
            return first
        top, worst = found
    # the levels below the top are solved top-down, and each interval [d_{i+1}, d_i] is
    # bounded once the slope below d_{i+1} is known; the search stops when nothing below a
    # level can exceed the bound so far
    levels: list[tuple[float, np.ndarray, np.ndarray]] = []
    # With a ball, the top level's extents enter only as the cap of [d_1, d_0] (and two
    # tests at d_1): they are solved when a decision needs them.  Until then the public box
    # (bound propagation over X, which holds every level set) stands in as their upper bound:
    # the interval it gives (``top_hi``) is at least the solved one, so while it is at most
    # the bound from the other intervals (``worst``) every decision and the bound itself are
    # those of the solved extents.  The level keeps its place in the solve budget.
    cap = _public_cap(prog, x, supp) if math.isfinite(first) and top not in cache \
        and room(1) else None
    deferred = cap is not None
    if deferred:
        cache[top] = None  # its place in the budget (started() below solves it)
        levels.append((top, cap, np.zeros_like(cap)))
    top_hi = -math.inf  # the [d_1, d_0] interval with the public box (while deferred)

    def settle() -> bool:
        """Solve the deferred top level and fold its interval into ``worst``; False when it
        fails (the bound is then ``first``, as when it is solved first)."""
        nonlocal deferred, worst
        b = b0.copy()
        b[at] = base + top + tol
        ext = _LevelSolves(dataclasses.replace(level_prog, b=b), x, supp).extents()
        if ext is None:
            return False
        deferred = False
        levels[0] = (top, ext[0], ext[1])
        if len(levels) >= 3:
            worst = max(worst, _interval(t, levels[0], levels[1], levels[2]))
        return True

    def exact() -> bool:
        """``worst`` is the bound of the solved top level (settled when it must be); False
        when its solves fail."""
        return not deferred or len(levels) < 3 or top_hi <= worst or settle()

    def holds(value: Any, low: float | None) -> bool | None:
        """Whether ``value() <= worst`` with the top level solved, decided without its solves
        when the bounds suffice: ``value()`` may read a deferred top level's public cap (an
        upper bound: it grows with the extents), ``low`` bounds it below without them (None:
        ``value()`` does not read them), and ``worst`` lies in ``[worst, max(worst,
        top_hi)]``; None when the solves fail."""
        if not deferred:
            return value() <= worst
        v = value()
        if v <= worst:
            return True
        if (v if low is None else low) > (max(worst, top_hi) if len(levels) >= 3 else worst):
            return False
        return None if not settle() else value() <= worst

    for i in range(1 if deferred else 0, _LEVELS + 1):
        level = top * 4.0 ** (-i)
        ext = solved(level)
        if ext is None:
            if not levels:
                return first
            break  # a solver failure: the extents above bound those below (monotone)
        levels.append((level, ext[0], ext[1]))
        if i == 2 and deferred:
            top_hi = _interval(t, levels[0], levels[1], levels[2])
        elif i >= 2:  # the interval [d_{i-1}, d_{i-2}], with the slope of [d_i, d_{i-1}]
            worst = max(worst, _interval(t, levels[-3], levels[-2], levels[-1]))
        below = t * _norm_max(ext[0])  # [0, d_i]
        # [d_i, d_{i-1}] by the extents at d_{i-1} (monotone) and [0, d_i]
        # (at d_1 the extents above are the top level's)
        stop = i >= 1 and holds(lambda d=level, e=below: max(t * _norm_max(levels[-2][1]) - d,
                                                              e), below if i == 1 else None)
        if stop is None or stop and not exact():
            return first
        if stop:
            return min(first, worst + tol)  # [d_i, d_{i-1}] and [0, d_i] cannot exceed it
        if _stopped(t, levels, max(worst, top_hi) if deferred else worst) + tol <= enough:
            break  # the levels so far prove enough: the lower ones are not solved
        if deferred and max(worst, below) + tol <= enough and not settle():
            return first  # (undecided without the top level: it is solved)
        if _stopped(t, levels, worst) + tol <= enough:
            break
        if i in (0, _LEVELS):
            continue
        # [d_i, d_{i-1}] bounded with the secant of [0, d_i] (s(0) >= 0: concave extents
        # grow at d_i no faster than s(d_i) / d_i) and [0, d_i] by t ||e(d_i)||: when neither
        # exceeds the bound so far, which the lower levels can only raise, they are not solved
        # (a deferred top level's public box caps the interval from above)
        secant = holds(lambda e=below, up=ext[0]: max(e, _interval(t, levels[-2], levels[-1],
                                                                   _origin(up))),
                        below if i == 1 else None)
        if secant is None or secant and not exact():
            return first
        if secant:
            return min(first, worst + tol)
    # _stopped reads the top level's extents when it is one of the last two
    if deferred and len(levels) <= 2 and not settle() or not exact():
        return first
    return min(first, _stopped(t, levels, worst) + tol)


def _public_cap(prog: SymmetricConeProgram, x: np.ndarray, supp: np.ndarray
                ) -> np.ndarray | None:
    """Upper bounds (rows: sides ``+``, ``-``) on ``+-(x'_j - x_j)`` over the public set ``X``
    for ``j`` in ``supp``, from bound propagation over its rows (its second-order blocks'
    linear rows included; the exponential cones left out: a larger set), pushed out by a
    relative 1e-6 (far beyond the solves' 1e-8 margin, so a solved extent never exceeds it);
    None when a side is unbounded."""
    lo, hi = propagated_box(prog.A, prog.b, prog.dims, np.ones(prog.A.shape[0], dtype=bool),
                            cones=True)
    xs = x[supp]
    up = np.vstack([hi[supp] - xs, xs - lo[supp]])
    if not np.all(np.isfinite(up)):
        return None
    up = np.maximum(up, 0.0)
    return up + 1e-6 * (1.0 + np.abs(np.vstack([hi[supp], lo[supp]])) + np.abs(xs))


def _origin(up: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The level ``d = 0`` with extents at least 0 (``x~`` is in every level set): a lower
    level for :func:`_interval`'s secant."""
    return 0.0, np.zeros_like(up), np.zeros_like(up)


def _stopped(t: float, levels: list[tuple[float, np.ndarray, np.ndarray]], worst: float
             ) -> float:
    """The bound when the descent stops at the last level solved ``d_i``: ``worst`` covers
    the intervals above ``d_{i-1}``, ``t ||e(d_{i-1})|| - d_i`` the interval ``[d_i,
    d_{i-1}]`` (monotone extents) and ``t ||e(d_i)||`` the interval ``[0, d_i]``."""
    d_last, up_last, _ = levels[-1]
    if len(levels) >= 2:
        worst = max(worst, t * _norm_max(levels[-2][1]) - d_last)
    return max(worst, t * _norm_max(up_last))


#: tries of the top level when there is no ball (each 16 times the previous)
_TOP_TRIES = 8


def _top_level(started: Any, room: Any, t: float, scale: float
               ) -> tuple[float, float] | None:
    """A top level ``d_0`` and the bound on ``phi`` above it, when the public set gives no ball.

    For ``d >= d_0`` the extents are concave, so ``e(d) <= e(d_0) + Lambda (d - d_0)`` with
    ``Lambda`` the secant slope of ``[d_0 / 4, d_0]`` (the upper level's extents up, the lower
    one's down: at least the slope at ``d_0``), and ``phi <= t ||e(d_0)|| + (t ||Lambda|| - 1)
    (d - d_0) - d_0``: at most ``t ||e(d_0)|| - d_0`` when ``t ||Lambda|| <= 1``.  ``d_0``
    starts at ``t max(1, ||x~_S||)`` (public: the noise bound and the released point) and is
    multiplied by 16 until that holds (the extents of a bounded level set grow sublinearly:
    like ``sqrt(d)`` where the objective is strongly convex, so ``Lambda`` falls 4x a step);
    None when it does not within :data:`_TOP_TRIES` steps, when ``t ||Lambda||`` stops falling
    by at least half a step (linear growth: it never will), or a level set is unbounded.  A
    lower level whose solves fail counts with extents 0 (a valid lower bound).

    The two levels of a try are solved side by side, one side of one coordinate at a time: the
    sides solved in both bound ``t ||Lambda||`` from below (each slope is ``>= 0``: the extents
    grow with the level, so a side not yet solved, counted 0, and a norm over fewer
    coordinates only lower it; a lower level that fails later only raises the slopes), so once
    that partial value fails the try and no later try can follow (no room in the solve budget
    for one, or it stopped falling by half), the answer is None whatever the remaining solves
    return, and they are not run.  The sides after the first are taken steepest first by the
    previous try's slopes per side: a level's Clarabel session is set up with its first cost
    and updated for the others, whose answers do not depend on the order of the updates, so
    the extents are the same.
    """
    top, before = t * max(1.0, scale), math.inf
    order = None
    for attempt in range(_TOP_TRIES):
        upper_solves, lower_solves = started(top, order), started(top / 4.0, order)
        if upper_solves is None:
            return None
        # no later try: the last one, or no level of one fits in the budget
        last = attempt == _TOP_TRIES - 1 or not room(1)
        if lower_solves is not None:
            for _ in _side_by_side(upper_solves, lower_solves):
                # sides solved in neither level are 0 - 0; every other is solved in both
                slope = (upper_solves.up - lower_solves.low) / (0.75 * top)
                partial = t * float(np.linalg.norm(np.maximum(np.max(slope, axis=0), 0.0)))
                if partial > 1.0 and (last or partial > 0.5 * before):
                    return None
        if lower_solves is None or lower_solves.failed:
            # the lower level counts 0 below, so the slope is the upper extents over 0.75 d_0:
            # those solved so far bound the try's growth from below (the rest are >= 0), and
            # the same test stops the upper level's remaining solves once the try cannot pass
            # and no later one can follow (the answer is then None whatever they return)
            while True:
                partial = t * _norm_max(upper_solves.up) / (0.75 * top)
                if partial > 1.0 and (last or partial > 0.5 * before):
                    return None
                if not upper_solves.step():
                    break
        upper = upper_solves.extents()
        if upper is None:
            return None
        lower = None if lower_solves is None else lower_solves.extents()
        if lower is None:
            # a thin level set the solver cannot settle: its extents are at least 0 (x~ is
            # in it), a lower bound that only steepens the secant (conservative)
            lower = (np.zeros_like(upper[0]), np.zeros_like(upper[1]))
        slope = np.max((upper[0] - lower[1]) / (0.75 * top), axis=0)
        growth = t * float(np.linalg.norm(np.maximum(slope, 0.0)))
        if growth <= 1.0:
            return top, max(t * _norm_max(upper[0]) - top, 0.0)
        if growth > 0.5 * before:
            # the extents grow about linearly (a polyhedral set: the slope does not fall), so
            # higher levels will not meet the condition: stop the solves
            return None
        top, before = 16.0 * top, growth
        # the next try's solves, steepest side first (by this try's slopes per side): the
        # partial test then reaches a failing try's slope in about half the solves; the first
        # solve (coordinate 0, + side) stays first: Clarabel solves the cost its session is
        # set up with a hair differently from an updated one (bound_solves)
        sides = ((upper[0] - lower[1]) / (0.75 * top)).ravel(order="F")  # 2 col + side
        steep = np.argsort(-sides, kind="stable")
        order = np.concatenate([[0], steep[steep != 0]])
    return None


def _side_by_side(upper: _LevelSolves, lower: _LevelSolves) -> Iterator[int]:
    """Run the two levels' solves alternately (the same order of sides); after each side
    solved in both, yield the number solved.  Stops when either level stops (a failed solve,
    or all solved)."""
    while upper.step() and lower.step():
        yield upper.solved


def _norm_max(up: np.ndarray) -> float:
    """``||e||_2`` with ``e_j`` the larger of the two sides' extents."""
    return float(np.linalg.norm(np.max(up, axis=0)))


def _interval(t: float, above: tuple, lower: tuple, below: tuple) -> float:
    """Bound on ``phi`` for ``c~'(x - x~)`` in ``[d_lower, d_above]`` (module doc).

    On it the extents are at most those at ``d_above`` (monotone) and, by concavity, at most
    ``up_lower + slope (d - d_lower)`` with the secant slope of ``[d_below, d_lower]`` (the
    lower level's solved extents up, the level below's down: a slope at least the true one).
    The interval is cut into geometric pieces ``[u, v]``; on each ``phi <= t ||e(v)|| - u``.
    """
    d_a, up_a, _ = above
    d_l, up_l, _ = lower
    d_b, _, low_b = below
    slope = (up_l - low_b) / (d_l - d_b)  # per side
    cap = np.max(up_a, axis=0)
    cuts = np.geomspace(d_l, d_a, _PIECES + 1)
    out = -np.inf
    for u, v in zip(cuts[:-1], cuts[1:], strict=True):
        e = np.minimum(cap, np.max(up_l + slope * (v - d_l), axis=0))
        out = max(out, t * float(np.linalg.norm(e)) - u)
    return out


def _extents(prog: SymmetricConeProgram, x: np.ndarray, supp: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """Per side (rows: +, -) and private coordinate: an upper and a lower bound on
    ``max_{x' in prog} +-(x'_j - x_j)``, clipped at 0 (``x`` is in the set); None when a
    solve gives no bound."""
    return _LevelSolves(prog, x, supp).extents()


class _LevelSolves:
    """The solves of :func:`_extents` on one level set, run one at a time (:meth:`step`) or
    all (:meth:`extents`): side by side in ``order`` (codes ``2 col + side``, ``col`` a column of
    ``supp``, side 0 the ``+`` one), default coordinate by coordinate as listed, ``+`` side
    then ``-``.

    ``up`` / ``low`` (rows: side; columns: ``supp``'s) hold the bounds of the ``solved`` first
    solves, the rest 0; ``failed`` when a solve gave no bound.
    """

    def __init__(self, prog: SymmetricConeProgram, x: np.ndarray, supp: np.ndarray,
                 order: np.ndarray | None = None) -> None:
        self.up = np.zeros((2, supp.size))
        self.low = np.zeros((2, supp.size))
        self.solved = 0
        self.failed = False
        codes = np.arange(2 * supp.size) if order is None else np.asarray(order, dtype=int)
        self._x = x
        self._jobs = [(int(code // 2), int(supp[code // 2]), int(code % 2),
                       1.0 if code % 2 == 0 else -1.0) for code in codes]

        def cost(j: int, sgn: float) -> np.ndarray:
            c = np.zeros(x.size)
            c[j] = -sgn  # maximise sgn x_j
            return c

        self._results = bound_solves(prog, (cost(j, sgn) for _, j, _, sgn in self._jobs))

    def step(self) -> bool:
        """Run the next solve; False when there is none left or a solve gave no bound."""
        if self.failed or self.solved == len(self._jobs):
            return False
        col, j, side, sgn = self._jobs[self.solved]
        res, pad = next(self._results)
        if pad is None:
            self.failed = True
            return False
        v = -float(res.value) - sgn * float(self._x[j])
        margin = pad * (1.0 + abs(float(res.value)))
        self.up[side, col] = max(v + margin, 0.0)
        self.low[side, col] = max(v - margin, 0.0)
        self.solved += 1
        return True

    def extents(self) -> tuple[np.ndarray, np.ndarray] | None:
        """All the solves run: ``(up, low)``, or None when a solve gave no bound."""
        while self.step():
            pass
        if self.failed or not math.isfinite(float(self.up.max(initial=0.0))):
            return None
        return self.up, self.low
