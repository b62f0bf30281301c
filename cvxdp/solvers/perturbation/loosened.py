"""The loosened counterpart of a perturbation release, solved, and its own box.

The loosened counterpart (:func:`cvxdp.solvers.certificate.loosened_program`) contains the TRUE
feasible set on the noise event; its optimum bounds the true optimum from below, and its point
is released when the tightened counterpart is empty.  A unit whose noise map reaches a variable
that no public row bounds is dropped from it (still a superset).  :func:`solve_loosened` then
takes a second pass on a box that contains every true-feasible point on the same event: one
grown from the tightened counterpart's point (:func:`_grown_box`), or the first loosened
counterpart's own box (it contains them all); the counterpart rebuilt on that box keeps the
units (docs/certificates.md, "Lower bound on the optimum").  For a public objective the box
the counterpart is built on is then shrunk to the objective's level set through the tightened
point (:func:`_shrink`), so that a public box much wider than the answer does not widen the
bound.  Post-processing of the release and public data only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from cvxdp.jordan import svec_indices
from cvxdp.solution import relative_scale
from cvxdp.solvers.certificate import loosened_program, reached_coordinates, unit_reach
from cvxdp.solvers.public_part import BOX_SOLVES_MAX, psd_implied_box, public_bounds
from cvxdp.transform.canon import user_columns, variables_at
from cvxdp.transform.epigraph import hypograph_cones, hypograph_members
from cvxdp.transform.scp import orthant_rows_added, with_exp_tail

__all__ = ["LOOSENED_BOX_MAX", "loosened_box", "solve_loosened", "unbounded_hint", "with_box",
           "objective_reaches_private_rows"]

#: most variables the loosened counterpart's box is solved for (two exact solves each): the
#: public box's engineering limit on solves, one number for both
LOOSENED_BOX_MAX = BOX_SOLVES_MAX


def solve_loosened(released: Any, A_t: Any, b_t: np.ndarray, plan: Any, scale: np.ndarray,
                   lo: np.ndarray, hi: np.ndarray, solve: Callable[[Any], Any],
                   x_t: np.ndarray | None = None, public_objective: bool = False,
                   enough: float = 0.0) -> tuple[Any, Any]:
    """``(program, solution)`` of the loosened counterpart on the public box ``[lo, hi]``,
    with the second pass of the module doc when the first dropped a unit: on a box grown
    from ``x_t`` (:func:`_grown_box`) when the tightened counterpart's point at the requested
    level is given, else (``public_objective``: ``c`` is the true objective) on the box of the
    level set ``c'x <= c'x_t`` (:func:`_level_box`), else on the first loosened counterpart's
    own box when it solved.  Then, for a public objective, the box is shrunk to that level
    set while that pays (:func:`_shrink`), unless the relative gap between ``c'x_t`` and the
    optimum in hand is already at most ``enough``."""

    def on(b_lo: np.ndarray, b_hi: np.ndarray, J: np.ndarray | None = None
           ) -> tuple[Any, Any]:
        """The counterpart with its reach bounded on ``[b_lo, b_hi]`` (and, given ``J``,
        intersected with that box on ``J``), and the reach."""
        reach = unit_reach(plan, b_lo, b_hi)
        prog = loosened_program(released, A_t, b_t, plan, scale, reach)
        return (prog if J is None else with_box(prog, J, b_lo[J], b_hi[J])), reach

    n = lo.size
    prog, sol, box = _second_pass(on, released, plan, lo, hi, solve, x_t, public_objective)
    if public_objective and x_t is not None and sol.status == cp.OPTIMAL:
        prog, sol = _shrink(on, prog, sol, box, reached_coordinates([plan.E_all], n), solve,
                            _level(released, x_t), plan, scale, x_t, enough)
    return prog, sol


def _level(released: Any, x_t: np.ndarray) -> float:
    """``c'x_t`` and a margin for the solver's feasibility tolerance: ``x_t`` is in the TRUE
    feasible set on the noise event, so ``OPT <= c'x_t`` when ``c`` is the true objective."""
    level = float(released.c[:x_t.size] @ x_t)
    return level + 1e-6 * (1.0 + abs(level))


def _second_pass(on: Callable[..., tuple[Any, Any]], released: Any, plan: Any, lo: np.ndarray,
                 hi: np.ndarray, solve: Callable[[Any], Any], x_t: np.ndarray | None,
                 public_objective: bool) -> tuple[Any, Any, tuple[np.ndarray, np.ndarray]]:
    """:func:`solve_loosened` before the shrink: ``(program, solution, box)``, ``box`` the one
    the program's reach is built on (it contains every point of the true feasible set ``F``
    with ``c'x <= c'x_t``, and the program contains those points on the noise event)."""
    n = lo.size
    prog, reach = on(lo, hi)
    sol = solve(prog)
    if reach.bounded.all():
        return prog, sol, (lo, hi)
    free = ~(np.isfinite(lo) & np.isfinite(hi))
    J = reached_coordinates([plan.E_all], n)
    J = J[free[J]]
    if x_t is not None and 0 < J.size <= LOOSENED_BOX_MAX:
        grown = _grown_box(on, lo, hi, J, x_t)
        if grown is None and public_objective:
            # OPT <= c'x_t on the event; the margin covers the solver's feasibility tolerance
            grown = _level_box(prog, lo, hi, J, _level(released, x_t))
            if grown is None:  # the level set grown from x_t (F itself unbounded)
                grown = _grown_box(on, lo, hi, J, x_t, _level(released, x_t))
        if grown is not None:
            prog2 = on(*grown, J)[0]
            sol2 = solve(prog2)
            if sol2.status == cp.OPTIMAL and (sol.status != cp.OPTIMAL
                                              or sol2.value >= sol.value):
                return prog2, sol2, grown
    if sol.status != cp.OPTIMAL:
        return prog, sol, (lo, hi)
    l_lo, l_hi = loosened_box(prog, J, n)
    box2 = (np.maximum(lo, l_lo), np.minimum(hi, l_hi))
    prog2, reach2 = on(*box2)
    if reach2.bounded.sum() <= reach.bounded.sum():
        return prog, sol, (lo, hi)
    sol2 = solve(prog2)
    return (prog2, sol2, box2) if sol2.status == cp.OPTIMAL else (prog, sol, (lo, hi))


#: a shrink round (:func:`_shrink`) runs when the box it starts from could close at least this
#: share of the certificate's gap (:func:`_closes`): an engineering rule on time (a round is two
#: exact solves per coordinate and one more), not on validity (every round's bound holds on the
#: same event)
SHRINK_CLOSES = 1.0 / 3.0


def _shrink(on: Callable[..., tuple[Any, Any]], prog: Any, sol: Any,
            box: tuple[np.ndarray, np.ndarray], J: np.ndarray, solve: Callable[[Any], Any],
            level: float, plan: Any, scale: np.ndarray, x_t: np.ndarray, enough: float = 0.0
            ) -> tuple[Any, Any]:
    """The loosened counterpart rebuilt on boxes shrunk to the objective's level set through the
    tightened counterpart's point ``x_t``, while a round closes enough of the gap
    (:data:`SHRINK_CLOSES`); ``(program, solution)`` with the largest optimum (docs/
    certificates.md, "A public box much wider than the answer").

    Why (trial 14): the reach's secant ``x_j^2 <= (l_j + h_j) x_j - l_j h_j`` exceeds ``x_j^2``
    by ``(h_j - x_j)(x_j - l_j)``, so on a public box much wider than the answer the loosened
    rows are relaxed by about the box's size whatever the answer (``min ||A x - b||_1``,
    ``||x||_inf <= R`` with a private ``A``: certified relative gap 0.04 at ``R = 5``, 0.51 at
    ``R = 50``, for the same minimiser).

    Validity, on the one noise event ``E`` of the release: ``c`` is the TRUE objective
    (``public_objective``) and ``x_t`` is in the true feasible set ``F`` (to the solver's
    tolerance, which ``level`` adds), so ``S = F ∩ {c'x <= level}`` holds ``x_t`` and ``OPT =
    inf over S of c'x``.  ``box`` contains ``S`` and ``prog`` contains ``S`` (it contains ``F``
    within the box it is built on: :func:`_second_pass`).  Then ``prog`` cut by ``c'x <=
    level`` contains ``S``, and so does its box ``B`` on ``J`` (two exact solves per
    coordinate, moved outward by the solver's tolerance: :func:`loosened_box`); the counterpart
    rebuilt on ``box ∩ B`` and intersected with it contains ``F ∩ box ∩ B``, hence ``S``:
    the same two facts for the next round, by induction.  Each round's optimum is at most
    ``inf over S = OPT``; the largest of them is returned.  Only the release, ``x_t`` and
    public data enter (post-processing).

    When (time, not validity): each round costs ``2 |J| + 1`` exact solves; rounds stop once
    the box could close less than :data:`SHRINK_CLOSES` of the gap (:func:`_closes`: after a
    round that shrank the box to about the answer's own size, the next one gains little),
    after a round that closed less than that share of the gap it started from (the gap is
    then not the box's: the next round, on a box this one barely moved, closes less), or
    at :data:`BOX_SOLVES_MAX` ``// |J|`` rounds (at most ``2 BOX_SOLVES_MAX`` bound solves,
    the public box's own limit).  Before the first round two solves bound how much the cut
    box can narrow the box at all (:func:`_sum_narrowing`): where the level set spans the box
    (the noise bound swamps the answer), the round's ``2 |J|`` solves are skipped.  No round
    runs when the relative gap between ``c'x_t`` and the optimum in hand is at most
    ``enough`` (the caller's quarter of the requested accuracy: the status is decided)."""
    n = box[0].size
    b_lo, b_hi = box
    J = J[np.isfinite(b_lo[J]) & np.isfinite(b_hi[J])]
    if J.size == 0 or J.size > LOOSENED_BOX_MAX:
        return prog, sol
    top = level + prog.offset
    if top - sol.value <= max(1e-6 * (1.0 + abs(top)), enough * relative_scale(sol.value, top)):
        return prog, sol
    for k in range(max(1, BOX_SOLVES_MAX // J.size)):
        if _closes(plan, scale, b_lo, b_hi, x_t) < SHRINK_CLOSES:
            break
        cut = _level_cut(prog, level)
        if k == 0 and _sum_narrowing(cut, J, b_lo, b_hi) <= 1e-6 * float(
                np.sum(b_hi[J] - b_lo[J])):
            break
        # the PSD block's off-diagonal entries from its diagonal's box (loosened_box's
        # minors): a round is kept only when it raises the optimum, so a looser box can only
        # close less of the gap, never widen it
        c_lo, c_hi = loosened_box(cut, J, n, minors=True)
        n_lo, n_hi = b_lo.copy(), b_hi.copy()
        n_lo[J], n_hi[J] = np.maximum(b_lo[J], c_lo[J]), np.minimum(b_hi[J], c_hi[J])
        prog2 = on(n_lo, n_hi, J)[0]
        sol2 = solve(prog2)
        if sol2.status != cp.OPTIMAL:
            break
        gap = top - sol.value
        if sol2.value <= sol.value:
            break
        prog, sol, b_lo, b_hi = prog2, sol2, n_lo, n_hi
        if top - sol2.value > (1.0 - SHRINK_CLOSES) * gap:
            break
    return prog, sol


def _level_cut(prog: Any, level: float) -> Any:
    """``prog`` with the objective's level row ``c'x <= level`` added to its orthant."""
    A, b, dims = orthant_rows_added(prog, prog.c[None, :], [level])
    return dataclasses.replace(prog, A=A, b=b, dims=dims, cone=None)


def _sum_narrowing(cut: Any, J: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """An upper bound on how much the box of ``cut`` on ``J`` can narrow ``[lo, hi]`` in all:
    ``max sum_J x_j <= sum_J max x_j`` and the same for the minima, so the upper sides move in
    by at most ``sum_J hi_j - max sum_J x_j`` together, the lower ones by at most ``min sum_J x_j
    - sum_J lo_j`` (two exact solves instead of ``2 |J|``).  A side the solve leaves unbounded
    (or unproven) counts as not narrowing: a time rule, the bound is not at stake."""
    d = np.zeros(cut.n)
    d[J] = 1.0
    s_lo, s_hi = public_bounds(cut.A, cut.b, cut.dims, np.zeros(cut.m, dtype=bool), [d],
                               allow_unbounded=True)
    top = float(np.sum(hi[J])) - float(s_hi[0])
    bottom = float(s_lo[0]) - float(np.sum(lo[J]))
    return sum(v for v in (top, bottom) if np.isfinite(v) and v > 0.0)


def _closes(plan: Any, scale: np.ndarray, lo: np.ndarray, hi: np.ndarray, x_t: np.ndarray
            ) -> float:
    """The share ``(rho - 1) / (rho + 1)`` of the gap a box shrunk to ``x_t`` could close
    (:func:`_shrink`): ``rho`` the units' summed relaxation at ``x_t`` (``scale_u`` times the
    reach's bound) on the box ``[lo, hi]`` over the same on the box ``[x_t, x_t]``, over the
    classes the box bounds; 0 when none.  Public data and ``x_t`` only."""
    wide, tight = unit_reach(plan, lo, hi), unit_reach(plan, x_t, x_t)
    cls = plan.unit_class
    use = wide.bounded[cls]
    if not use.any():
        return 0.0
    r_wide = np.sqrt(np.maximum(wide.p @ x_t + wide.q, 0.0))
    if wide.lin is not None:
        r_wide = r_wide + wide.lin @ x_t + wide.lin0
    r_tight = np.sqrt(np.maximum(tight.p @ x_t + tight.q, 0.0))
    sc = np.asarray(scale, dtype=float)[use]
    num, den = float(sc @ r_wide[cls[use]]), float(sc @ r_tight[cls[use]])
    if not num > den:
        return 0.0
    return (num - den) / (num + den)


def loosened_box(loose_prog: Any, hit: np.ndarray, n: int,
                 stop: Callable[[float], bool] | None = None, minors: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` over the loosened counterpart (its public exponential cones included) for
    the variables ``hit``: two exact solves each; ``-inf`` / ``inf`` when unbounded,
    or for all of them past :data:`LOOSENED_BOX_MAX` variables, an engineering limit on the
    solves.  ``stop``: :func:`cvxdp.solvers.public_part.public_bounds`' (the sides after the
    first it stops on are left infinite).

    ``minors``: the off-diagonal entries of a PSD block of the counterpart whose rows each read
    one variable (a public ``P >> I`` on a symmetric variable) are not solved for: with the
    solved box of the diagonal entries, ``|S_kl| <= sqrt(S_kk S_ll)`` (a 2x2 principal minor of
    ``S`` PSD; :func:`cvxdp.solvers.public_part.psd_implied_box`) bounds them, an outer box
    (looser than their own solves), for ``2 order`` solves a block instead of ``order (order +
    1)``."""
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    if hit.size == 0 or hit.size > LOOSENED_BOX_MAX:
        return lo, hi
    if minors:
        off = np.isin(hit, _psd_off_diagonal(loose_prog))
        if off.any():
            lo, hi = loosened_box(loose_prog, hit[~off], n, stop)
            c_lo, c_hi = psd_implied_box(loose_prog, np.zeros(loose_prog.m, dtype=bool),
                                         (lo, hi))
            J = hit[off]
            lo[J], hi[J] = c_lo[J], c_hi[J]
            rest = J[~(np.isfinite(lo[J]) & np.isfinite(hi[J]))]
            if rest.size:
                r_lo, r_hi = loosened_box(loose_prog, rest, n, stop)
                lo[rest], hi[rest] = r_lo[rest], r_hi[rest]
            return lo, hi
    eye = np.zeros((hit.size, loose_prog.n))
    eye[np.arange(hit.size), hit] = 1.0
    lo[hit], hi[hit] = public_bounds(loose_prog.A, loose_prog.b, loose_prog.dims,
                                     np.zeros(loose_prog.m, dtype=bool), list(eye),
                                     allow_unbounded=True, exp_tail=loose_prog.exp_tail,
                                     stop=stop)
    return lo, hi


def _psd_off_diagonal(prog: Any) -> np.ndarray:
    """The variables that are off-diagonal entries of a PSD block of ``prog`` whose rows each
    read one variable and that are no block's diagonal entry (structure only)."""
    A = sp.csr_matrix(prog.A)
    off, diag = [], []
    for blk in prog.dims.blocks():
        if blk.kind != "psd" or blk.order < 2:
            continue
        sub = A[blk.start:blk.start + blk.size]
        if np.any(np.diff(sub.indptr) != 1):
            continue
        on_diag = np.equal(*svec_indices(blk.order)[:2])
        off.append(sub.indices[~on_diag])
        diag.append(sub.indices[on_diag])
    if not off:
        return np.zeros(0, dtype=int)
    return np.setdiff1d(np.concatenate(off), np.concatenate(diag))


def _grown_box(on: Callable[..., tuple[Any, Any]], lo: np.ndarray, hi: np.ndarray,
               J: np.ndarray, x_t: np.ndarray, level: float | None = None
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """A box ``B'`` on the coordinates ``J`` that contains the TRUE feasible set ``F`` on the
    noise event, grown from the tightened counterpart's point ``x_t`` (in ``F`` on that event,
    to the solver's tolerance); None when the growth does not close.

    On the box ``|x_J| <= R``, ``R = 2 (1 + ||x_t,J||_inf)``, the loosened counterpart ``S_R``
    (reach bounded on that box) intersected with the box contains ``F`` within it.  Its own
    box ``B'`` (two exact solves per coordinate) then contains ``F`` whenever ``B'`` lies
    strictly inside ``|x_J| < R``: were some ``y`` in ``F`` outside ``B'``, the segment from
    ``x_t`` (in ``B'``) to ``y`` lies in ``F`` (convex) and leaves ``B'`` at a point just past
    which it is still inside ``|x_J| <= R`` -- points of ``F`` within the box outside ``S_R``'s
    box, a contradiction.  ``on(lo, hi, J)`` builds the counterpart on a box
    (:func:`solve_loosened`).  Post-processing of the release and public data only.

    ``level`` (a public objective, ``c`` the true one): the same with ``F`` replaced by its
    level set ``S = F ∩ {c'x <= level}``, ``level >= c'x_t`` (convex, holds ``x_t``, and every
    minimiser of the true model), the counterpart cut by the same row: the box then contains
    ``S`` where ``F`` itself is unbounded (a fit with free coefficients: ``min ||X b - y||_1``
    with a private ``X`` and no public bound on ``b``), which is what a lower bound on ``OPT``
    needs (:func:`_second_pass`).
    """
    R = 2.0 * (1.0 + float(np.max(np.abs(x_t[J]))))
    lo_R, hi_R = lo.copy(), hi.copy()
    lo_R[J], hi_R[J] = np.maximum(lo[J], -R), np.minimum(hi[J], R)
    prog_R = on(lo_R, hi_R, J)[0]
    inner = R * (1.0 - 1e-6)
    # the growth fails as soon as one side reaches the box's border: the sides after it are
    # not solved (the same answer, None, for fewer solves)
    b_lo, b_hi = loosened_box(prog_R if level is None else _level_cut(prog_R, level), J,
                              lo.size, stop=lambda v: not -inner < v < inner)
    if not (np.all(b_hi[J] < inner) and np.all(b_lo[J] > -inner)):
        return None
    g_lo, g_hi = lo.copy(), hi.copy()
    g_lo[J], g_hi[J] = np.maximum(lo[J], b_lo[J]), np.minimum(hi[J], b_hi[J])
    return g_lo, g_hi


def _level_box(first: Any, lo: np.ndarray, hi: np.ndarray, J: np.ndarray, level: float
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """A box on ``J`` that contains a minimiser of the TRUE model on the noise event: the box of
    the first loosened counterpart ``first`` (every unit it could bound kept, the others
    dropped: a superset of the true feasible set ``F``) cut by the objective's level row ``c'x
    <= level``; None when that box is unbounded.

    The tightened counterpart's point ``x_t`` is in ``F`` on the event, so ``OPT <= c'x_t <=
    level`` and every minimiser ``x*`` of the true model lies in ``F`` and in the level set,
    hence in this box; the counterpart rebuilt on the box (and intersected with it) contains
    ``x*``, so its optimum is at most ``OPT``.  Where ``F`` itself is unbounded (a soft-margin
    SVM with no public bound on its weights, a Lyapunov LMI whose solutions scale up) the level
    set is what bounds it.  Post-processing of the release and public data only.
    """
    A, b, dims = orthant_rows_added(first, first.c[None, :], [level])
    cut = dataclasses.replace(first, A=A, b=b, dims=dims, cone=None)
    b_lo, b_hi = loosened_box(cut, J, lo.size)
    if not (np.all(np.isfinite(b_lo[J])) and np.all(np.isfinite(b_hi[J]))):
        return None
    g_lo, g_hi = lo.copy(), hi.copy()
    g_lo[J], g_hi[J] = np.maximum(lo[J], b_lo[J]), np.minimum(hi[J], b_hi[J])
    return g_lo, g_hi


def with_box(prog: Any, J: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Any:
    """``prog`` with the rows ``lo_j <= x_j <= hi_j`` (``j`` in ``J``) added to its orthant."""
    k = J.size
    rows = sp.csr_matrix((np.r_[np.ones(k), -np.ones(k)], (np.arange(2 * k), np.r_[J, J])),
                         shape=(2 * k, prog.n))
    A, b, dims = orthant_rows_added(prog, rows, np.concatenate([hi, -lo]))
    return dataclasses.replace(prog, A=A, b=b, cone=None, dims=dims)


def unbounded_hint(scp: Any, cols: np.ndarray) -> str:
    """The status reason's hint when no lower bound is proven: which variables the private data
    multiply that no public constraint bounds (structure only), the user's by name, else
    CVXPY's own epigraph / hypograph variables, which bounds on the user's variables do not
    reach."""
    if cols.size == 0:
        return ""
    names = variables_at(scp, cols)
    if names:
        return (f"; the private data multiply {', '.join(names)}, which no public constraint "
                "bounds: add public bounds on them")
    tail = scp.exp_tail
    if tail is not None:
        # hypograph variables of log / entr terms: bounded below only through their
        # argument's positive lower bound (exp_hypograph_bounds)
        E = sp.csr_matrix(tail.rows(scp.n))
        args = sorted(hypograph_members(E, hypograph_cones(E, cols)))
        inside = variables_at(scp, np.array(args, dtype=int)) if args else []
        if inside:
            return ("; the private data multiply the hypograph variables CVXPY adds for the "
                    f"log / entr terms of {', '.join(inside)}, which nothing bounds below while "
                    "their arguments may reach 0: add a positive public lower bound on them "
                    "(e.g. x >= 1e-3)")
    return ("; the private data multiply variables CVXPY adds for the model's atoms (epigraph "
            "/ hypograph variables of norms, logs, ...), which no public constraint bounds and "
            "bounds on your variables do not reach")


def objective_reaches_private_rows(scp: Any, private_rows: np.ndarray) -> tuple[bool, bool]:
    """Whether the objective's epigraph / hypograph variables depend on rows with private data,
    and whether on a private equality row among them.

    ``c'x`` bounds the user's objective at a point only where the rows that define those
    variables hold.  Starting from the objective's columns that are not the user's
    (:func:`cvxdp.transform.canon.user_columns`), every row containing one, and every other
    such column in those rows, is reached (public cones included: a lifted exponential-cone
    coordinate links an epigraph variable to an orthant row); the answer is whether a private
    row is, and whether a private equality row is (a band, which even the tightened
    counterpart's point meets only to its width).  Structure only (public)."""
    A, _, _ = with_exp_tail(scp)
    A = sp.csc_matrix(A)
    Ar = sp.csr_matrix(A)
    own = ~user_columns(scp)
    # the rows of one cone block are coupled: reaching one reaches the block
    block = np.arange(A.shape[0])
    for blk in scp.dims.blocks():
        if blk.kind in ("soc", "psd") and blk.size:
            block[blk.start:blk.start + blk.size] = blk.start
    m = scp.m
    block[m:] = m + 3 * ((np.arange(m, A.shape[0]) - m) // 3)  # exponential-cone triples
    frontier = (np.asarray(scp.c) != 0) & own
    seen = frontier.copy()
    rows = np.zeros(A.shape[0], dtype=bool)
    while frontier.any():
        new_rows = np.zeros(A.shape[0], dtype=bool)
        new_rows[A[:, np.flatnonzero(frontier)].indices] = True
        new_rows = np.isin(block, block[new_rows]) & ~rows
        if not new_rows.any():
            break
        rows |= new_rows
        reach = np.zeros(A.shape[1], dtype=bool)
        reach[Ar[np.flatnonzero(new_rows)].indices] = True
        frontier = reach & own & ~seen
        seen |= frontier
    private_rows = np.asarray(private_rows, dtype=np.int64)
    hit = private_rows[(private_rows < rows.size)]
    hit = hit[rows[hit]]
    return bool(hit.size), bool(np.any(hit < scp.dims.zero))
