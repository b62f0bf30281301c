"""The public part of a canonical cone program: questions answered from public data only.

Shared by the MWU family (:mod:`cvxdp.solvers.mwu`) and the perturbation family
(:mod:`cvxdp.solvers.auto`, :mod:`cvxdp.solvers.perturbation`): feasibility of the rows
that carry no private data (decided before any budget is spent), the range of linear functions
over them (public trace / norm bounds), the CVXPY constraints ``b - A x in K`` of a row subset,
the row layout of the cone ``K``, the answer returned when the public part is infeasible, and
the ``solver=`` check of the exact steps.  It imports no other solver module at module level
(only the svec index of :mod:`cvxdp.solvers.mwu.mwu`, lazily), so neither family's modules
import each other through it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from cvxdp.errors import InfeasibleProblemError, UnsupportedProblemError
from cvxdp.jordan import svec_indices
from cvxdp.privacy.accountant import PrivacyReport
from cvxdp.solution import PrivateSolution
from cvxdp.solvers.bound_propagation import propagated_box
from cvxdp.transform.exact import ClarabelSession, ExactSolution, clarabel_retried, solve_exact
from cvxdp.transform.reference import proven_point
from cvxdp.transform.scp import (
    ConeDims,
    ExpTail,
    SymmetricConeProgram,
    orthant_rows_added,
)
from cvxdp.transform.unbounded import UnboundedProof

__all__ = ["public_feasibility", "public_descent", "public_bounds", "coordinate_box",
           "psd_implied_box", "UnitDirections", "bound_solve", "public_program",
           "canonical_constraints", "PublicProjector"]


#: coordinates :func:`coordinate_box` solves for (two exact solves each) before it takes
#: bound propagation's box where that is finite: an engineering limit on time (a 1,220-variable
#: bin-packing relaxation took 689x its exact solve), not a rule about accuracy
BOX_SOLVES_MAX = 100


def public_feasibility(A: sp.spmatrix, b: np.ndarray, dims: Any, row_private: np.ndarray,
                       solver: str | None = None, exp_tail: ExpTail | None = None) -> str:
    """CVXPY status of ``find x  s.t.  b - A x in K`` over the rows that carry no private data
    (and the program's public exponential cones, ``exp_tail``).

    Only public data enters, so the answer can be acted on (and reported) before any budget is
    spent.  Returns ``"optimal"`` when there is no public row.  ``solver`` (``"CLARABEL"`` or
    ``"SCS"``) chooses the exact solver; None: Clarabel, falling back to SCS
    (:func:`cvxdp.transform.exact.solve_exact`).
    """
    keep = ~np.asarray(row_private, dtype=bool)
    box = _bound_rows(A, b, dims, keep) if exp_tail is None else None
    if box is not None:  # bounds on single variables only: decided without a solver
        return cp.OPTIMAL if box[2] else cp.INFEASIBLE
    prog = dataclasses.replace(public_program(A, b, dims, keep), exp_tail=exp_tail)
    if prog.A.shape[0] == 0 and exp_tail is None:
        return cp.OPTIMAL
    # the cone program itself, solved by the exact solver (no CVXPY compile of the rows)
    try:
        res = solve_exact(prog, solver=solver)
    except (cp.error.SolverError, ValueError):  # undecided: let the private path run
        return cp.SOLVER_ERROR
    if res.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return cp.OPTIMAL
    return str(res.status)


def public_descent(scp: SymmetricConeProgram, solver: str | None = None) -> bool:
    """Whether the model is unbounded below whenever it is feasible, decided from public data:
    its objective and constraint matrix carry no private data (private data only in the
    right-hand sides ``b``), and a direction ``d`` with ``-A d in K`` (the recession cone of
    ``{x : b - A x in K}`` for every ``b``, the exponential cones included) has ``c'd < 0``.
    Then every feasible ``x`` gives ``x + t d`` feasible with ``c'(x + t d) -> -inf``: whatever
    the private ``b``, the problem is infeasible or unbounded, which no mechanism can answer,
    and which is known before any budget is spent.

    One exact solve: ``min c'd`` over ``-A d in K``, ``|d_j| <= 1``; ``d`` counts as a descent
    when the solver's point is proven (:func:`cvxdp.transform.reference.proven_point`) and its
    value is below ``-1e-6 max(1, ||c||_1)`` (far beyond the solver's 1e-8, so a bounded model
    is not called unbounded by rounding).  False when the solve fails."""
    sb = scp.sensitivity
    if sb is None or sb.objective_private or sp.csc_matrix(sb.A).nnz or float(sb.offset) > 0:
        return False
    c = np.asarray(scp.c, dtype=float)
    if not np.any(c):
        return False
    tail = scp.exp_tail
    if tail is not None:
        tail = dataclasses.replace(tail, b=np.zeros_like(tail.b))
    n = scp.n
    eye = sp.identity(n, format="csr")
    A, b, dims = orthant_rows_added(
        dataclasses.replace(scp, b=np.zeros(scp.m), exp_tail=tail),
        sp.vstack([eye, -eye]), np.ones(2 * n))
    prog = SymmetricConeProgram(A=A, b=b, c=c, offset=0.0, dims=dims, cone=None,
                                exp_tail=tail)
    try:
        res = solve_exact(prog, solver=solver)
    except (cp.error.SolverError, ValueError):
        return False
    # an "almost solved" direction counts when it meets every row to the point tolerance
    return proven_point(prog, res) is not None and float(res.value) < -1e-6 * max(
        1.0, float(np.abs(c).sum()))


def public_bounds(A, b, dims, row_private, directions: Sequence[np.ndarray],
                  allow_unbounded: bool = False, upper_only: bool = False,
                  exp_tail: ExpTail | None = None,
                  stop: Callable[[float], bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """min and max of ``d'x`` over the public rows' feasible set for each direction d.

    The public rows are one cone program (:func:`public_program`), solved directly by the
    exact solver for every direction (no CVXPY compile per solve).  With ``allow_unbounded``
    an unbounded direction gives ``-inf`` / ``inf`` instead of an error; with ``upper_only``
    only the maxima are solved (the minima are ``-inf``).  ``exp_tail``: public exponential
    cones the set keeps too (a log's domain bounds its argument below).  ``stop`` (a caller
    that needs every side to pass a test, :func:`cvxdp.solvers.perturbation.loosened._grown_box`):
    called on each side's bound as it is found (``-inf`` / ``inf`` included); once it says
    True the sides not yet solved are left at ``-inf`` / ``inf`` (still an outer box).

    Raises
    ------
    InfeasibleProblemError
        If the public part is infeasible.
    UnsupportedProblemError
        If a direction is unbounded (the public part does not bound the variables).
    """
    prog = public_program(A, b, dims, ~np.asarray(row_private, dtype=bool))
    if exp_tail is not None:
        prog = dataclasses.replace(prog, exp_tail=exp_tail)
    lo, hi = np.zeros(len(directions)), np.zeros(len(directions))
    if upper_only:
        lo[:] = -np.inf
    sides = ((1.0, hi),) if upper_only else ((1.0, hi), (-1.0, lo))
    jobs = [(i, sgn, out) for i in range(len(directions)) for sgn, out in sides]
    # maximise sgn d'x for every direction and side, over one solver session
    def costs() -> Iterator[np.ndarray]:  # made when solved (UnitDirections)
        return (-sgn * np.asarray(directions[i], dtype=float) for i, sgn, _ in jobs)

    # sides proven unbounded from structure are not solved (each would cost up to five
    # solves), once a point of the set is in hand: they are infinite whatever a solve says
    skip = _proven_unbounded(prog, directions, jobs) if allow_unbounded else None
    results: Iterable[tuple[Any, float | None]] = bound_solves(prog, costs())  # lazy: errors
    if skip is not None:                                                      # stop it
        results = list(bound_solves(prog, costs(), skip=skip))
        if not _nonempty(prog, [r for r, _ in results if r is not None]):
            results = bound_solves(prog, costs())  # no point in hand: as without the proof
    for k, ((i, sgn, out), (res, pad)) in enumerate(zip(jobs, results, strict=True)):
        out[i] = _side(res, pad, sgn, allow_unbounded)
        if stop is not None and stop(float(out[i])):
            for i2, sgn2, out2 in jobs[k + 1:]:
                out2[i2] = sgn2 * np.inf
            break
    return lo, hi


def _side(res: Any, pad: float | None, sgn: float, allow_unbounded: bool) -> float:
    """One side's bound from :func:`bound_solves`' answer (:func:`public_bounds`)."""
    if res is None:  # proven unbounded (allow_unbounded)
        return sgn * np.inf
    status = res.status
    value = None if pad is None else -float(res.value)
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        raise InfeasibleProblemError(
            "the constraints that carry no private data are infeasible; fix the model "
            "(the private solver needs a feasible public part).")
    if value is None and allow_unbounded:
        return sgn * np.inf  # unbounded, or no bound proven
    if value is None:
        raise UnsupportedProblemError(
            "the public constraints do not bound the variables, so no public trace "
            "bound exists: the MWU (mechanism='mwu') needs one for every variable of "
            "the cone program, including the epigraph variables CVXPY adds for norms, "
            "quad_form and sum_squares, and one that holds private data cannot be "
            "bounded from public constraints. Use the default mechanism='auto' "
            "(perturbation runs without such a bound, though its certificate and, at a "
            "small budget, its point may need one), add public bounds on your variables "
            "(e.g. x <= 10, cp.norm(x) <= R, cp.trace(X) <= R), or pass trace_bound= "
            "(a public bound on the sum of |variables| and cone-slack traces).")
    # outward by the solver's tolerance, so the box contains the set it bounds
    return sgn * value + sgn * pad * (1.0 + abs(value))


def bound_solves(prog: SymmetricConeProgram, costs: Iterable[np.ndarray],
                 skip: np.ndarray | None = None) -> Iterator[tuple[Any, float | None]]:
    """:func:`bound_solve` for each cost vector in turn over the same set (``prog.c`` is set to
    it): one Clarabel session whose cost is updated in place (the setup paid once), and
    :func:`bound_solve`'s fresh solve and fallbacks for a solve that does not end solved.

    ``skip`` (bool per cost): those costs are not solved and give ``(None, None)``; the session
    is still set up with the first cost, so the others' answers are the ones they get
    without the skip (Clarabel's answer to an updated cost does not depend on the costs
    solved before it)."""
    session: Any = None
    for k, c in enumerate(costs):
        prog.c = np.asarray(c, dtype=float)
        if session is None:
            try:
                session = ClarabelSession(prog)
            except (ImportError, ValueError):
                session = False
        if skip is not None and skip[k]:
            yield None, None
            continue
        res = session.solve(prog.c) if session else None
        if res is not None and res.status == cp.OPTIMAL:
            yield res, 1e-8
        elif res is not None and res.status in (cp.INFEASIBLE, cp.UNBOUNDED):
            yield res, None  # bound_solve's answer to the same status, without a second solve
        else:
            # a fresh solver's answer (the session's first cost, or a rebuilt solver) is the
            # one bound_solve's own first solve would give: it is not solved again
            yield bound_solve(prog, first=res if res is not None and session.last_fresh
                              else None)


def _proven_unbounded(prog: SymmetricConeProgram, directions: Sequence[np.ndarray],
                      jobs: list[tuple[int, float, Any]]) -> np.ndarray | None:
    """Per job ``(i, sgn, _)``: ``sup sgn d_i'x = +inf`` proven from structure
    (:class:`cvxdp.transform.unbounded.UnboundedProof`; a unit direction of
    :class:`UnitDirections` read without making its vector); None when no job is."""
    proof = UnboundedProof(prog)
    units = directions if isinstance(directions, UnitDirections) else None
    out = np.zeros(len(jobs), dtype=bool)
    for k, (i, sgn, _) in enumerate(jobs):
        col = units.column(i) if units is not None else None
        out[k] = proof.unit(col, sgn) if col is not None else \
            proof.proven(sgn * np.asarray(directions[i], dtype=float))
    return out if out.any() else None


def _nonempty(prog: SymmetricConeProgram, answers: list[Any]) -> bool:
    """Whether a point of ``prog``'s set is in hand: one of ``answers`` solved (to Clarabel's
    tolerance, the one every bound here stands on), else a solve of the set with cost 0."""
    if any(r.status == cp.OPTIMAL and r.x is not None for r in answers):
        return True
    try:
        res = solve_exact(dataclasses.replace(prog, c=np.zeros(prog.n)), solver="CLARABEL")
    except (ImportError, ValueError, cp.error.SolverError):
        return False
    return res.status == cp.OPTIMAL


def bound_solve(prog: SymmetricConeProgram, first: ExactSolution | None = None
                ) -> tuple[Any, float | None]:
    """One bound solve and the relative margin its value is trusted to (None: no bound).

    Clarabel solved (tolerance 1e-8: margin 1e-8); almost solved, a bound only when the capped
    solve of :func:`_capped_max` confirms it (at twice its value); a solver error (Clarabel
    fails on some unbounded directions), the capped solve at :data:`FAR_CAP` decides: a bound
    below the cap, or none when the cap binds (a direction that far is treated as unbounded:
    the conservative side); when that fails too, Clarabel with shorter steps
    (:data:`STALL_STEP_FRACTION`), counted only when solved; then SCS, whose value counts only
    when solved (an inaccurate SCS answer on an unbounded direction is a finite number far from any
    bound).  ``first``: Clarabel's fresh answer for ``prog`` as it is, when already in hand.
    """
    res = solve_exact(prog, solver="CLARABEL") if first is None else clarabel_retried(prog,
                                                                                     first)
    if res.status == cp.OPTIMAL:
        return res, 1e-8
    if res.status == cp.OPTIMAL_INACCURATE:
        capped = _capped_max(prog, 2.0 * abs(float(res.value)) + 1.0)
        if capped is None:  # the capped solve stalled: shorter steps, as below
            capped = _short_steps(prog)
        return (res, None) if not isinstance(capped, ExactSolution) else (capped, 1e-8)
    if res.status in (cp.INFEASIBLE, cp.UNBOUNDED):
        return res, None
    scale = 1.0 + float(np.max(np.abs(prog.b), initial=0.0))
    capped = _capped_max(prog, FAR_CAP * scale)
    if isinstance(capped, ExactSolution):
        return capped, 1e-8
    if capped == "cap":
        return res, None
    # Clarabel once more with shorter steps (STALL_STEP_FRACTION) before SCS: an optimum it
    # proves is one to Clarabel's tolerance (an unbounded direction is never "solved")
    res_short = _short_steps(prog)
    if res_short is not None:
        return res_short, 1e-8
    res = solve_exact(prog, solver="SCS", max_iters=SCS_BOUND_ITERS)
    return res, (1e-6 if res.status == cp.OPTIMAL else None)


def _short_steps(prog: SymmetricConeProgram) -> ExactSolution | None:
    """Clarabel's answer with shorter steps (:data:`STALL_STEP_FRACTION`) when it is solved,
    else None."""
    res = solve_exact(prog, solver="CLARABEL", max_step_fraction=STALL_STEP_FRACTION)
    return res if res.status == cp.OPTIMAL else None


#: SCS's iterations in the last resort of :func:`bound_solve`: its value counts only when
#: solved to 1e-9, which first-order steps reach within this or not at all on the programs
#: where Clarabel failed (a level set of the objective certificate: 100,000 iterations took
#: 1.3-1.8 s to end inaccurate, i.e. with no bound); no bound is the conservative side
SCS_BOUND_ITERS = 20_000


#: Clarabel's step to the cone boundary (a fraction of the longest; its default 0.99) in the
#: retry of :func:`bound_solve` after a solver error, before SCS: an interior-point method that
#: stalls ("insufficient progress") close to the boundary of exponential cones takes shorter
#: steps.  On the multinomial-logit level sets of the objective certificate (trial 19), every
#: program Clarabel stalled on at 0.99 was solved at 0.95 in 20-70 ms, where SCS took 80-370 ms
STALL_STEP_FRACTION = 0.95


#: the cap of a bound solve after a solver error, relative to ``1 + max |b|``: a maximum above
#: it counts as unbounded (no bound; never a wrong one).  Clarabel fails on the capped program
#: too when the cap is far out (an epigraph ``t >= ||x||^2`` then reaches ``cap^2``): at 1e6
#: it failed on every unbounded direction of ``x >= 0`` with that epigraph, at 1e3 it solved
#: each to the cap
FAR_CAP = 1e3


def _capped_max(prog: SymmetricConeProgram, cap: float) -> Any:
    """The maximum of ``-c'x`` confirmed by a bounded solve with the row ``-c'x <= cap``: the
    solution when it is solved below ``cap``, ``"cap"`` when the cap binds, None when the
    solve fails.

    The capped program is bounded.  If it is solved below ``cap`` the cap is not active, and
    then the uncapped maximum is the capped one: the set is convex, so a point above ``cap``
    would put points of every value between the capped maximiser's and its own on the segment
    joining them, some below the cap.  (Clarabel stops some unbounded maxima at "almost
    solved" with a finite value near 1e4, and fails on others.)
    """
    A, b, dims = orthant_rows_added(prog, -prog.c[None, :], [cap], first=True)
    capped = dataclasses.replace(prog, A=A, b=b, dims=dims)
    res = solve_exact(capped, solver="CLARABEL")
    if res.status != cp.OPTIMAL:
        return None
    return "cap" if -float(res.value) >= cap - 1e-6 * cap else res


def public_program(A: sp.spmatrix, b: np.ndarray, dims: Any, keep: np.ndarray
                   ) -> SymmetricConeProgram:
    """The cone program of the rows in ``keep`` (objective 0; set ``c`` before solving).

    As :func:`canonical_constraints`: a second-order or PSD block is kept only when all its rows
    are kept (dropping constraints only enlarges the set, so bounds over it stay valid).
    """
    A = sp.csr_matrix(A)
    keep = np.asarray(keep, dtype=bool)
    rows, counts = [], {"zero": 0, "nonneg": 0}
    soc, psd = [], []
    for kind, r0, nr, order in dims.blocks():
        blk = np.arange(r0, r0 + nr)
        if kind in ("zero", "nonneg"):
            blk = blk[keep[blk]]
            counts[kind] = blk.size
        elif nr == 0 or not keep[blk].all():
            continue
        elif kind == "soc":
            soc.append(nr)
        else:
            psd.append(order)
        rows.append(blk)
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return SymmetricConeProgram(
        A=sp.csc_matrix(A[rows]), b=np.asarray(b, dtype=float)[rows], c=np.zeros(A.shape[1]),
        offset=0.0, dims=ConeDims(zero=counts["zero"], nonneg=counts["nonneg"], soc=tuple(soc),
                                  psd=tuple(psd)), cone=None)


class UnitDirections(Sequence):
    """``[*first, e_cols[0], e_cols[1], ...]`` (unit vectors of length ``n``) for
    :func:`public_bounds`, each made when read: its solves stop at the first unbounded
    direction (an error), and ``len(cols)`` dense ``n``-vectors (or ``np.eye(n)``) of a model
    with thousands of variables are megabytes built for nothing."""

    def __init__(self, n: int, cols: Iterable[int], first: Sequence[np.ndarray] = ()) -> None:
        self._n = int(n)
        self._cols = np.asarray(list(cols) if not isinstance(cols, np.ndarray) else cols,
                                dtype=np.int64).ravel()
        self._first = list(first)

    def __len__(self) -> int:
        return len(self._first) + int(self._cols.size)

    def column(self, i: int) -> int | None:
        """The column of ``self[i]`` when it is a unit vector ``e_col``; None for the listed
        ``first`` directions."""
        i = int(i) + (len(self) if int(i) < 0 else 0)
        k = i - len(self._first)
        return int(self._cols[k]) if k >= 0 else None

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i < len(self._first):
            return self._first[i]
        e = np.zeros(self._n)
        e[self._cols[i - len(self._first)]] = 1.0
        return e


def coordinate_box(scp: Any, coords: np.ndarray, *, allow_unbounded: bool = False
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)``, shape ``(scp.n,)``: the range of each listed coordinate of ``x`` over the
    rows of ``scp`` without private data (:func:`public_bounds` on the unit directions; 0 for
    the coordinates not listed, ``-inf`` / ``inf`` for an unbounded one with
    ``allow_unbounded``)."""
    n = scp.n
    lo, hi = np.zeros(n), np.zeros(n)
    coords = np.asarray(coords, dtype=int)
    if coords.size:
        row_private = np.zeros(scp.m, dtype=bool)
        row_private[scp.sensitivity.private_rows()] = True
        box = _bound_rows(scp.A, scp.b, scp.dims, ~row_private)
        if box is not None and box[2]:
            # the public rows are bounds on single variables: their feasible set is the box
            l_b, h_b = box[0][coords], box[1][coords]
            if not allow_unbounded and not np.all(np.isfinite(l_b) & np.isfinite(h_b)):
                box = None  # the solves below raise the typed error
            else:
                lo[coords], hi[coords] = l_b, h_b
                return lo, hi
        # coordinates that are entries of a public PSD block get their range in closed form
        # from one solve per block (its largest trace); the rest one solve per direction
        c_lo, c_hi = psd_implied_box(scp, row_private)
        implied = np.isfinite(c_lo[coords]) & np.isfinite(c_hi[coords])
        lo[coords[implied]], hi[coords[implied]] = c_lo[coords[implied]], c_hi[coords[implied]]
        rest = coords[~implied]
        if rest.size > BOX_SOLVES_MAX:
            # many coordinates: those bound propagation bounds take its (valid, possibly
            # looser) box, without two solves each; the others are solved
            p_lo, p_hi = propagated_box(scp.A, scp.b, scp.dims, ~row_private)
            prop = np.isfinite(p_lo[rest]) & np.isfinite(p_hi[rest])
            lo[rest[prop]], hi[rest[prop]] = p_lo[rest[prop]], p_hi[rest[prop]]
            rest = rest[~prop]
        if rest.size:
            lo[rest], hi[rest] = public_bounds(scp.A, scp.b, scp.dims, row_private,
                                               UnitDirections(n, rest),
                                               allow_unbounded=allow_unbounded)
    return lo, hi


def psd_implied_box(scp: Any, row_private: np.ndarray,
                    box: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """A box on the coordinates that are (scaled) entries of a public PSD block, from the
    block's largest trace over the public rows: one solve per block instead of two per entry.

    For ``S`` PSD, ``0 <= S_kk <= tr S`` and ``|S_kl| <= sqrt(S_kk S_ll) <= (S_kk + S_ll) / 2
    <= tr S / 2`` (``k != l``; a 2x2 principal minor is PSD).  With ``T`` the largest ``tr S``
    over the public rows (:func:`public_bounds` on the direction ``tr S`` takes), every row of
    the block whose map is one coefficient ``a`` on one coordinate, ``s_i = b_i - a x_j``,
    bounds ``x_j`` to ``(b_i - [lo_i, hi_i]) / a`` (SCS's ``svec`` scales an off-diagonal entry
    by ``sqrt 2``).  A valid outer box of the public feasible set; ``-inf`` / ``inf`` where no
    such row exists or the public rows do not bound the trace.

    ``box``: a valid outer box of ``x`` over the public rows (bound propagation's): a
    diagonal entry is then also at most what the box allows it, ``d_k``, and an off-diagonal
    one ``|S_kl| <= sqrt(d_k d_l)`` (the same minor): with ``diag(X) == 1`` the box is the
    elliptope's own, ``[-1, 1]``, where the trace alone gives ``n / 2``.
    """
    n = scp.n
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    A = sp.csr_matrix(scp.A)
    blocks, directions = [], []
    for blk in scp.dims.blocks():
        if blk.kind != "psd" or blk.order < 2 or row_private[blk.start:blk.start + blk.size].any():
            continue
        rows = np.arange(blk.start, blk.start + blk.size)
        sub = A[rows]
        if np.any(np.diff(sub.indptr) != 1):
            continue  # an entry mixes coordinates: no closed form
        diag = np.equal(*svec_indices(blk.order)[:2])
        blocks.append((blk, rows, sub, diag))
        # tr S = sum_k b_kk - (sum_k A_kk) x
        directions.append(-np.asarray(sub[diag].sum(axis=0)).ravel())
    if not blocks:
        return lo, hi
    _, t_hi = public_bounds(scp.A, scp.b, scp.dims, row_private, directions,
                            allow_unbounded=True, upper_only=True)
    for (blk, rows, sub, diag), top in zip(blocks, t_hi, strict=True):
        T = float(scp.b[rows[diag]].sum() + top)
        r_idx, c_idx, scale = svec_indices(blk.order)
        a, j = sub.data, sub.indices
        b = scp.b[rows]
        d_hi = np.full(blk.order, T)   # each diagonal entry: at most the trace
        if box is not None:
            # s_kk = b - a x_j <= b - a (lo_j if a > 0 else hi_j)
            ends = np.where(a[diag] > 0, box[0][j[diag]], box[1][j[diag]])
            with np.errstate(invalid="ignore"):
                from_box = np.where(np.isfinite(ends), b[diag] - a[diag] * ends, np.inf)
            d_hi[r_idx[diag]] = np.minimum(d_hi[r_idx[diag]], from_box)
        d_hi = np.maximum(d_hi, 0.0)
        if not np.all(np.isfinite(d_hi)):
            continue
        off = np.minimum(T / 2, np.sqrt(d_hi[r_idx] * d_hi[c_idx]))
        s_lo = np.where(diag, 0.0, -scale * off)
        s_hi = np.where(diag, d_hi[r_idx], scale * off)
        x1, x2 = (b - s_hi) / a, (b - s_lo) / a
        np.maximum.at(lo, j, np.minimum(x1, x2))
        np.minimum.at(hi, j, np.maximum(x1, x2))
    return lo, hi


def simple_box(scp: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(lo, hi)`` of every coordinate when the rows without private data are all bounds on
    single variables (their feasible set is that box, read off without a solve); else None."""
    row_private = np.zeros(scp.m, dtype=bool)
    row_private[scp.sensitivity.private_rows()] = True
    box = _bound_rows(scp.A, scp.b, scp.dims, ~row_private)
    if box is None or not box[2]:
        return None
    return box[0], box[1]


def _bound_rows(A: sp.spmatrix, b: np.ndarray, dims: Any, keep: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """``(lo, hi, feasible)`` when every kept row is an equality or inequality on at most one
    variable (``a x_j + s = b``, ``s = 0`` or ``s >= 0``), so the kept rows' feasible set is
    the box ``lo <= x <= hi`` (exact, no solver); None otherwise (a kept cone block, or a row
    on two or more variables).  ``feasible`` is False when a box is empty or a row without a
    variable fails (``1e-9`` relative slack, the accuracy of the solves it replaces)."""
    n_lin = dims.zero + dims.nonneg
    keep = np.asarray(keep, dtype=bool)
    if np.any(keep[n_lin:]):
        return None
    R = sp.csr_matrix(sp.csr_matrix(A)[np.flatnonzero(keep[:n_lin])])
    R.eliminate_zeros()
    rows = np.flatnonzero(keep[:n_lin])
    if R.shape[0] and np.max(np.diff(R.indptr)) > 1:
        return None
    n = A.shape[1]
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    bb = np.asarray(b, dtype=float)[rows]
    eq = rows < dims.zero
    has = np.diff(R.indptr) == 1
    tol = 1e-9 * np.maximum(1.0, np.abs(bb))
    ok = bool(np.all(np.where(eq, np.abs(bb) <= tol, bb >= -tol)[~has]))
    j = R.indices
    a = R.data
    t = bb[has] / a
    eqh = eq[has]
    up = eqh | (a > 0)  # a x_j <= b: x_j <= b / a for a > 0 (and both sides for equalities)
    dn = eqh | (a < 0)
    np.minimum.at(hi, j[up], t[up])
    np.maximum.at(lo, j[dn], t[dn])
    ok = ok and bool(np.all(lo <= hi + 1e-9 * np.maximum(1.0, np.maximum(np.abs(lo),
                                                                         np.abs(hi)))))
    return lo, hi, ok


def canonical_constraints(x: Any, A: sp.spmatrix, b: np.ndarray, dims: Any,
                          keep: np.ndarray | None = None) -> list[Any]:
    """CVXPY constraints ``b - A x in K`` for the rows in ``keep`` (default: all rows).

    A second-order or PSD block is kept only when all its rows are kept (dropping constraints
    only enlarges the set, so bounds computed over it stay valid).
    """
    A = sp.csr_matrix(A)
    keep = np.ones(A.shape[0], dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    cons: list[Any] = []
    for kind, r0, nr, order in dims.blocks():
        if nr == 0:
            continue
        rows = np.arange(r0, r0 + nr)
        if kind in ("zero", "nonneg"):
            rows = rows[keep[rows]]
            if rows.size == 0:
                continue
            s = b[rows] - A[rows] @ x
            cons.append(s == 0 if kind == "zero" else s >= 0)
            continue
        if not keep[rows].all():
            continue
        s = b[rows] - A[rows] @ x
        if kind == "soc":
            cons.append(cp.SOC(s[0], s[1:]))
        else:
            ri, ci, sc = svec_indices(order)
            flat_lo = ri + order * ci  # column-major index of (ri, ci)
            flat_up = ci + order * ri
            M = sp.csr_matrix((np.concatenate([1 / sc, 1 / sc]),
                               (np.concatenate([flat_lo, flat_up]),
                                np.concatenate([np.arange(nr), np.arange(nr)]))),
                              shape=(order * order, nr))
            # diagonal entries were added twice
            M = M.tolil()
            for i in np.flatnonzero(ri == ci):
                M[flat_lo[i], i] = 1.0
            Xm = cp.reshape(M.tocsr() @ s, (order, order), order="F")
            cons.append(cp.PSD((Xm + Xm.T) / 2))
    return cons


def _infeasible(problem: cp.Problem, scp: Any, status: str, neighbouring: str,
                t0: float) -> PrivateSolution:
    """The answer for an infeasible public part: no mechanism ran, nothing was spent (the
    entry point writes it into ``problem``; CVXPY's value for an infeasible model)."""
    value = -np.inf if isinstance(problem.objective, cp.Maximize) else np.inf
    return _unanswered(problem, neighbouring, t0, cp.INFEASIBLE, value, status,
                       "public feasibility check",
                       "the constraints that carry no private data are infeasible (decided by "
                       "an exact solve of public data only); no privacy budget was spent")


def _descent(problem: cp.Problem, neighbouring: str, t0: float) -> PrivateSolution:
    """The answer for a model that is infeasible or unbounded whatever its private data
    (:func:`public_descent`): no mechanism ran, nothing was spent; CVXPY's status
    ``infeasible_or_unbounded`` (its value None)."""
    status = cp.settings.INFEASIBLE_OR_UNBOUNDED
    return _unanswered(problem, neighbouring, t0, status, None, status,
                       "public recession check",
                       "the objective decreases without bound along a direction the "
                       "constraints allow whatever their private data (the public objective "
                       "and constraint matrix have a recession direction of descent), so the "
                       "model is unbounded wherever it is feasible (decided by an exact solve "
                       "of public data only); no privacy budget was spent. Add public bounds "
                       "on the variables (e.g. cp.norm(x) <= R)")


def _unanswered(problem: cp.Problem, neighbouring: str, t0: float, status: str,
                value: float | None, public_status: str, method: str, reason: str
                ) -> PrivateSolution:
    """A solution no mechanism ran for (public data decided it): an empty privacy record, the
    variables cleared, the reason in ``info``."""
    report = PrivacyReport(guarantee="dp", epsilon=0.0, delta=0.0, rho=0.0,
                           neighbouring=neighbouring,
                           theorem="no mechanism ran (public data only)", records=(),
                           details={"public_status": public_status})
    info = {"method": method, "public_status": public_status, "status_reason": reason}
    return PrivateSolution(status=status, value=value, privacy=report, iterations=0,
                           solve_time=time.perf_counter() - t0,
                           primal={v.name(): None for v in problem.variables()}, info=info)


def _exact_solver(solver: Any) -> str | None:
    """Check ``solver=`` (CVXPY's spelling, e.g. ``cp.SCS``): the conic solver of the exact steps
    (public feasibility check, ``reference=True``); the reference supports Clarabel and SCS."""
    if solver is None:
        return None
    name = str(solver).upper()
    allowed = [s for s in ("CLARABEL", "SCS") if s in cp.installed_solvers()]
    if name not in allowed:
        raise UnsupportedProblemError(
            f"solver={solver!r} cannot run the exact steps of the private solve (public "
            f"feasibility check, reference=True); choose one of {allowed}.")
    return name


def _solve_accurately(prob: Any, solver: str | None = None) -> None:
    """``solver`` when given; else Clarabel (interior point, ~1e-8) when available, else CVXPY's
    default."""
    if solver is not None:
        prob.solve(solver=solver)
        return
    try:
        prob.solve(solver=cp.CLARABEL)
    except (cp.error.SolverError, ImportError):
        prob.solve()


class PublicProjector:
    """Projection onto the public rows' feasible set, compiled once for many points.

    The problem ``min ||x' - p||^2`` subject to the public rows is built once with the point
    ``p`` a CVXPY parameter, so CVXPY compiles it on the first call and only re-applies the
    parameter afterwards (the objective search projects every test's point onto the same set).
    Post-processing: the rows in ``~row_private`` carry public data only.
    """

    def __init__(self, A: sp.spmatrix, b: np.ndarray, dims: Any, row_private: np.ndarray,
                 solver: str | None = None) -> None:
        self._x = cp.Variable(A.shape[1])
        self._cons = canonical_constraints(self._x, A, b, dims,
                                           keep=~np.asarray(row_private, dtype=bool))
        self._p = cp.Parameter(A.shape[1])
        self._prob = cp.Problem(cp.Minimize(cp.sum_squares(self._x - self._p)), self._cons)
        self._solver = solver

    def __call__(self, x: np.ndarray, tol: float = 1e-7) -> tuple[np.ndarray, float, float]:
        """``(x_repaired, moved, public_violation)`` as :func:`public_repair` returns them."""
        if not self._cons:
            return x, 0.0, 0.0
        x = np.asarray(x, dtype=float)
        self._x.save_value(x)
        viol = max(float(np.max(c.violation())) for c in self._cons)
        if not viol > tol:
            return x, 0.0, viol
        self._p.value = x
        try:
            _solve_accurately(self._prob, self._solver)
        except cp.error.SolverError:
            return x, 0.0, viol
        if self._x.value is None or self._prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return x, 0.0, viol
        xr = np.asarray(self._x.value, dtype=float)
        return xr, float(np.linalg.norm(xr - x)), viol


def public_repair(A: sp.spmatrix, b: np.ndarray, dims: Any, row_private: np.ndarray,
                  x: np.ndarray, solver: str | None = None, tol: float = 1e-7
                  ) -> tuple[np.ndarray, float, float]:
    """The nearest point to ``x`` that meets every public row exactly (post-processing).

    ``x`` is a released (private) point; the rows in ``~row_private`` carry public data only, so
    projecting onto their feasible set (Euclidean, one exact solve) spends no budget and makes
    the public constraints -- equalities included -- hold up to the solver's tolerance.  Many
    points onto the same set: :class:`PublicProjector`, compiled once.

    Returns
    -------
    (x_repaired, moved, public_violation) : the projected point (``x`` itself when its public
    violation is at most ``tol``), ``||x_repaired - x||_2`` and the largest public violation
    of ``x``.
    """
    return PublicProjector(A, b, dims, row_private, solver)(x, tol)
