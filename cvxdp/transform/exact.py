"""Exact solves of a cone program: Clarabel (interior point) and SCS, without CVXPY.

:func:`solve_exact` solves a :class:`~cvxdp.transform.scp.SymmetricConeProgram` directly (its
exponential-cone tail included), for the private solvers' post-processing steps (robust and
loosened counterparts, public bounds) and for the non-private reference
(:mod:`cvxdp.transform.reference`); :class:`ClarabelSession` re-solves one set under many
objectives.  Which data a solve reads is the caller's concern.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
import scs

from cvxdp.transform.epigraph import square_cones
from cvxdp.transform.scp import SymmetricConeProgram, with_exp_tail

__all__ = ["ClarabelSession", "ExactSolution", "TIGHT_GAP", "TIGHT_TOLERANCES", "clarabel_retried",
           "solve_exact", "svec_to_clarabel", "value_lower_bound"]

#: the duality-gap (and feasibility) tolerance of the solves whose values certificates read
TIGHT_GAP = 1e-10
#: Clarabel's settings for such a solve (a CVXPY ``OPTIMAL`` status means it met them)
TIGHT_TOLERANCES = {"tol_feas": TIGHT_GAP, "tol_gap_abs": TIGHT_GAP, "tol_gap_rel": TIGHT_GAP}


def value_lower_bound(value: float, gap_tolerance: float) -> float:
    """A lower bound on a program's optimum from a solve's value that met ``gap_tolerance``:
    the value less 100 times the tolerance, relative to ``1 + |value|`` (Clarabel's gap test
    is ``|p - d| <= tol_abs + tol_rel min(|p|, |d|)``, and its primal value is within the gap
    of the optimum; the factor 100 is the margin the certificates have always kept)."""
    value = float(value)
    return value - 100.0 * gap_tolerance * (1.0 + abs(value))


@dataclass(frozen=True)
class ExactSolution:
    """Result of :func:`solve_exact` (canonical, minimised objective ``c'x + offset``).

    Attributes
    ----------
    x : ndarray or None
        Primal point of the cone program (None if the solver found none).
    value : float or None
        ``c'x + offset`` (the cone program's objective, i.e. the user's objective times
        ``scp.sign``); ``+inf`` if infeasible, ``-inf`` if unbounded.
    status : str
        A CVXPY status string.
    solve_time : float
    solver : str
    gap_tolerance : float
        The duality-gap tolerance the solve met (Clarabel's default 1e-8 unless the caller
        asked for another and says so, :func:`cvxdp.solvers.perturbation.solve._solve_tight`).
        :meth:`lower_bound` reads it.
    """

    x: np.ndarray | None
    value: float | None
    status: str
    solve_time: float
    solver: str
    gap_tolerance: float = 1e-8

    def lower_bound(self) -> float:
        """A lower bound on the program's optimum from this solve's value
        (:func:`value_lower_bound` at the tolerance the solve met)."""
        return value_lower_bound(float(self.value), self.gap_tolerance)


def svec_to_clarabel(r: int) -> np.ndarray:
    """Row permutation from SCS's PSD block (lower triangle, column-major) to Clarabel's
    (upper triangle, column-major); both scale off-diagonals by sqrt(2).

    ``clarabel_block = scs_block[perm]``.
    """
    i, j = np.triu_indices(r)  # upper entries (i <= j) ...
    order = np.lexsort((i, j))  # ... listed column by column
    i, j = i[order], j[order]
    # the matching lower entry is (row=j, col=i); its SCS index (column i, row j):
    return (i * r - i * (i - 1) // 2 + (j - i)).astype(int)


def _clarabel(scp: SymmetricConeProgram, lift: bool = True, **opts: Any) -> ExactSolution:
    t0 = time.perf_counter()
    session = ClarabelSession(scp, lift=lift, **opts)
    return session.solve(scp.c, started=t0)


class ClarabelSession:
    """One Clarabel solver for a cone program whose objective ``c`` changes between solves.

    Clarabel updates the linear cost in place (``update(q=c)``): the cones, the KKT matrix's
    structure and the equilibration are set up once, so a caller that solves many objectives
    over one set (the public boxes, the level sets' extents of the objective certificate)
    pays the setup once instead of per solve.  When Clarabel does not allow the update (its
    presolve changed the problem), each solve builds a fresh solver, as :func:`solve_exact`.
    """

    def __init__(self, scp: SymmetricConeProgram, lift: bool = True, **opts: Any) -> None:
        import clarabel  # optional solver (not a runtime dependency; SCS is)

        settings = clarabel.DefaultSettings()
        settings.verbose = False
        # one thread for the KKT factorisation (faer's default: every core): the answer is then
        # the same on every machine.  Without PSD blocks it was found not to depend on the
        # thread count (all bench_heldout_time releases identical) and is 1.4-1.6x faster on
        # the 400 x 100 least-squares programs on 2 shared cores; with PSD blocks it does
        # depend on it (sdp_mid's counterparts up to 5e-4 apart at 1 and 2 threads), so a
        # release with a PSD block depended on the user's core count (docs/benchmarks.md)
        settings.max_threads = 1
        for key, val in opts.items():
            setattr(settings, key, val)
        self._module = clarabel
        self._scp = scp
        self._settings = settings
        self._c = np.array(scp.c, dtype=float)
        # the objective's squares as a quadratic cost (_SquaresLift); lift=False keeps the cones
        self._lift_on = lift
        self._heads: np.ndarray | None = None
        self._squares: list[tuple[int, int, int, float]] | None = None
        self._lift: _SquaresLift | None = None
        self._solver = self._build(self._c)
        self._unused = True  # built for self._c, not solved or updated since
        #: whether the last answer came from a solver built for its cost and solved once: the
        #: answer :func:`solve_exact` gives (Clarabel's answer to a cost reached by an update
        #: can differ from it in the last bits)
        self.last_fresh = False

    def _build(self, c: np.ndarray, lift: bool = True) -> Any:
        """A Clarabel solver for cost ``c``: on the program with its objective's squares as a
        quadratic cost (:class:`_SquaresLift`) when it has some, else on the cone program."""
        chosen = self._liftable(c) if lift else []
        self._lift = _SquaresLift(self._scp, c, chosen) if chosen else None
        if self._lift is not None:
            P, q, A, b, cones = self._lift.data(self._module, c)
        else:
            P, A, b, cones = _cone_data(self._module, self._scp)
            q = c
        return self._module.DefaultSolver(P, q, A, b, cones, self._settings)

    def _liftable(self, c: np.ndarray) -> list[tuple[int, int, int, float]]:
        """The squares cost ``c`` lifts (:func:`square_terms` with ``c_t > 0``), looked for
        only when ``c`` is positive on a column of a second-order cone's head row (a bound
        solve's cost rarely is: the search over the cones is then not made)."""
        if not self._lift_on or not self._scp.dims.soc:
            return []
        if self._heads is None:
            d = self._scp.dims
            A = sp.csr_matrix(self._scp.A)
            starts = d.zero + d.nonneg + np.concatenate([[0], np.cumsum(d.soc)[:-1]])
            self._heads = np.unique(np.concatenate(
                [A.indices[A.indptr[r]:A.indptr[r + 1]] for r in starts.astype(int)]))
        if not np.any(np.asarray(c, dtype=float)[self._heads] > 0):
            return []
        if self._squares is None:
            self._squares = square_terms(self._scp)
        return [k for k in self._squares if c[k[2]] > 0]

    def solve(self, c: np.ndarray, started: float | None = None) -> ExactSolution:
        """Minimise ``c'x`` over the program's set (its offset added to the value)."""
        t0 = time.perf_counter() if started is None else started
        c = np.asarray(c, dtype=float)
        if not np.array_equal(c, self._c):
            lift = self._lift
            if self._solver.is_data_update_allowed() and (
                    lift.same_squares(c) if lift is not None else not self._liftable(c)):
                self._solver.update(q=c if lift is None else lift.cost(c))
                self._unused = False
            else:
                self._solver = self._build(c)
                self._unused = True
            self._c = c.copy()
        self.last_fresh, self._unused = self._unused, False
        sol = self._solver.solve()
        name = str(sol.status).split(".")[-1]
        if self._lift is not None and name not in _SETTLED:
            # the quadratic form ended without an answer: the cone program's own solve
            self._solver = self._build(c, lift=False)
            self.last_fresh = True
            sol = self._solver.solve()
            name = str(sol.status).split(".")[-1]
        elapsed = time.perf_counter() - t0
        status = {"Solved": cp.OPTIMAL, "AlmostSolved": cp.OPTIMAL_INACCURATE,
                  "PrimalInfeasible": cp.INFEASIBLE, "AlmostPrimalInfeasible": cp.INFEASIBLE,
                  "DualInfeasible": cp.UNBOUNDED, "AlmostDualInfeasible": cp.UNBOUNDED
                  }.get(name, cp.SOLVER_ERROR)
        x = np.asarray(sol.x)
        if self._lift is not None and status in cp.settings.SOLUTION_PRESENT:
            x = self._lift.point(x)
        return _result(self._scp, x, status, elapsed, "CLARABEL", c=c)


#: Clarabel's statuses with an answer: an "almost" one from the quadratic form is kept (the cone
#: program, whose square cones it stands for, ended "almost solved" too where measured: the
#: 5,000 x 200 lasso's counterparts at 1e-10 tolerances, 7 s then 15 s more for nothing)
_SETTLED = ("Solved", "AlmostSolved", "PrimalInfeasible", "AlmostPrimalInfeasible",
            "DualInfeasible", "AlmostDualInfeasible")


def _cone_data(clarabel: Any, scp: SymmetricConeProgram) -> tuple[Any, ...]:
    """``(P, A, b, cones)`` of the cone program for Clarabel (``P = 0``; its rows in
    Clarabel's order: the PSD blocks' triangles permuted, the exponential tail last)."""
    d = scp.dims
    A, b, n_exp = with_exp_tail(scp)
    perm = _clarabel_rows(d, A.shape[0], d.zero + d.nonneg + sum(d.soc))
    cones: list[Any] = []
    if d.zero:
        cones.append(clarabel.ZeroConeT(d.zero))
    if d.nonneg:
        cones.append(clarabel.NonnegativeConeT(d.nonneg))
    cones += [clarabel.SecondOrderConeT(q) for q in d.soc]
    cones += [clarabel.PSDTriangleConeT(r) for r in d.psd]
    # Clarabel's exponential cone is SCS's: cl{(u, v, w): v > 0, v exp(u / v) <= w}
    cones += [clarabel.ExponentialConeT() for _ in range(n_exp)]
    return sp.csc_matrix((scp.n, scp.n)), sp.csc_matrix(A[perm]), b[perm], cones


def _clarabel_rows(d: Any, m: int, psd_start: int) -> np.ndarray:
    """The row permutation that puts each PSD block (starting at ``psd_start``) in
    Clarabel's triangle order; the identity elsewhere."""
    perm = np.arange(m)
    start = psd_start
    for r in d.psd:
        size = r * (r + 1) // 2
        perm[start:start + size] = start + svec_to_clarabel(r)
        start += size
    return perm


def square_terms(scp: SymmetricConeProgram) -> list[tuple[int, int, int, float]]:
    """``(head row, member row, column, kappa)`` of the squares a cost can lift
    (:class:`_SquaresLift`): the second-order cones of :func:`square_cones` whose ``t`` column
    appears in no other row (the exponential tail's included).  Kept with the program while its
    rows are the same objects (a session is built per level of the objective certificate)."""
    d = scp.dims
    if not d.soc:
        return []
    cached = scp.meta.get("_square_terms")
    if cached is not None and cached[0] is scp.A and cached[1] is scp.b:
        return cached[2]
    A, b, _ = with_exp_tail(scp)
    Ac = sp.csc_matrix(A)
    Ar = sp.csr_matrix(scp.A)
    out = []
    for head, member, j in square_cones(scp.A, scp.b, d.soc, d.zero + d.nonneg):
        rows = Ac.indices[Ac.indptr[j]:Ac.indptr[j + 1]]
        if rows.size == 2 and {int(rows[0]), int(rows[1])} == {head, member}:
            # t is alone in both rows (square_cones): each row's one entry is t's
            a, a1 = -float(Ar.data[Ar.indptr[head]]), -float(Ar.data[Ar.indptr[member]])
            out.append((head, member, j, 2.0 * (a * float(b[head]) - a1 * float(b[member]))))
    scp.meta["_square_terms"] = (scp.A, scp.b, out)
    return out


class _SquaresLift:
    """The program with each square in its objective as a quadratic cost, for Clarabel.

    CVXPY writes ``t >= ||r||^2 / kappa`` as the second-order cone ``(h + a t, g + a' t, r)``
    (:func:`cvxdp.transform.epigraph.square_cones`: ``s_0^2 - s_1^2 = kappa t`` with ``kappa =
    2 (a h - a' g) > 0``).  Where ``t`` appears in no other row and the cost gives it a weight
    ``c_t > 0``, every minimiser has ``t = ||r||^2 / kappa``, so the program is the same as the
    one without ``t`` and its cone, with the rows ``r = b_r - A_r x`` as new variables ``u``
    (equality rows) and the cost ``(c_t / kappa) ||u||^2``: Clarabel's quadratic cost, as
    CVXPY gives it to Clarabel for its own solve of ``sum_squares``.  The interior-point method
    then no longer carries a cone whose slack is a relative ``1 / t`` of its entries (the
    stalls :func:`_rescaled_squares` works around), and the quadratic's KKT block is diagonal:
    on a 20,000-entry smoothing program 0.22 s against 1.15 s, on a 5,000 x 200 lasso 5.7 s
    against 14 s, the same values to 3e-9 relative.  The point is mapped back with ``t`` the
    cone's tight value at the returned ``x`` (the cone row then holds exactly), so the value
    ``c'x`` is the program's at a point of its set.  Public structure: the program's rows and
    the cost's signs.
    """

    def __init__(self, scp: SymmetricConeProgram, c: np.ndarray,
                 cones: list[tuple[int, int, int, float]]) -> None:
        d = scp.dims
        A, b, n_exp = with_exp_tail(scp)
        A = sp.csc_matrix(A)
        starts = d.zero + d.nonneg + np.concatenate([[0], np.cumsum(d.soc)[:-1]]).astype(int)
        size = dict(zip(starts.tolist(), d.soc, strict=True))
        cols = np.array([j for _, _, j, _ in cones], dtype=int)
        self.cols = cols
        self.candidates = np.array([j for _, _, j, _ in square_terms(scp)], dtype=int)
        self.kept = np.setdiff1d(np.arange(scp.n), cols)
        self.weights = np.asarray(c, dtype=float)[cols].copy()
        rest, dropped, spans = [], np.zeros(A.shape[0], dtype=bool), []
        at = 0
        for head, member, _, kappa in cones:
            rows = np.arange(head, head + size[head])
            dropped[rows] = True
            r = rows[(rows != head) & (rows != member)]
            rest.append(r)
            spans.append((at, at + r.size, kappa))
            at += r.size
        self.rest = np.concatenate(rest)
        self.spans = spans
        nu = at
        other = np.flatnonzero(~dropped[d.zero:]) + d.zero
        Ak = A[:, self.kept]
        self.A_rest = sp.csr_matrix(Ak[self.rest])
        self.b_rest = np.asarray(b, dtype=float)[self.rest]
        An = sp.vstack([
            sp.hstack([Ak[:d.zero], sp.csc_matrix((d.zero, nu))]),
            sp.hstack([Ak[self.rest], sp.identity(nu, format="csc")]),
            sp.hstack([Ak[other], sp.csc_matrix((other.size, nu))])], format="csc")
        bn = np.concatenate([b[:d.zero], self.b_rest, b[other]])
        heads = {h for h, _, _, _ in cones}
        self.soc = tuple(q for s, q in size.items() if s not in heads)
        perm = _clarabel_rows(d, An.shape[0], d.zero + nu + d.nonneg + sum(self.soc))
        self._A, self._b = An[perm], bn[perm]
        self._dims, self._nu, self._n_exp = d, nu, n_exp

    def same_squares(self, c: np.ndarray) -> bool:
        """Whether cost ``c`` lifts the same squares with the weights this lift was built with
        (only the linear part then changes)."""
        c = np.asarray(c, dtype=float)
        return bool(np.array_equal(c[self.cols], self.weights)) and int(
            np.count_nonzero(c[self.candidates] > 0)) == self.cols.size

    def cost(self, c: np.ndarray) -> np.ndarray:
        """The linear cost over ``(x without the squares' t, u)``."""
        return np.concatenate([np.asarray(c, dtype=float)[self.kept], np.zeros(self._nu)])

    def data(self, clarabel: Any, c: np.ndarray) -> tuple[Any, ...]:
        """``(P, q, A, b, cones)`` for Clarabel."""
        d = self._dims
        diag = np.zeros(self.kept.size + self._nu)
        for (lo, hi, kappa), w in zip(self.spans, self.weights, strict=True):
            diag[self.kept.size + lo:self.kept.size + hi] = 2.0 * w / kappa
        cones: list[Any] = [clarabel.ZeroConeT(d.zero + self._nu)]
        if d.nonneg:
            cones.append(clarabel.NonnegativeConeT(d.nonneg))
        cones += [clarabel.SecondOrderConeT(q) for q in self.soc]
        cones += [clarabel.PSDTriangleConeT(r) for r in d.psd]
        cones += [clarabel.ExponentialConeT() for _ in range(self._n_exp)]
        return sp.diags_array(diag).tocsc(), self.cost(c), self._A, self._b, cones

    def point(self, z: np.ndarray) -> np.ndarray:
        """The program's point: ``x`` with each square's ``t = ||b_r - A_r x||^2 / kappa``."""
        x = np.zeros(self.kept.size + self.cols.size)
        x[self.kept] = z[:self.kept.size]
        r = self.b_rest - self.A_rest @ x[self.kept]
        for j, (lo, hi, kappa) in zip(self.cols, self.spans, strict=True):
            x[j] = float(r[lo:hi] @ r[lo:hi]) / kappa
        return x


def _scs(scp: SymmetricConeProgram, **opts: Any) -> ExactSolution:
    d = scp.dims
    A, b, n_exp = with_exp_tail(scp)
    cone = {"z": d.zero, "l": d.nonneg, "q": list(d.soc), "s": list(d.psd), "ep": n_exp}
    kw = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 100_000, "verbose": False, **opts}
    t0 = time.perf_counter()
    sol = scs.SCS({"A": A, "b": b, "c": scp.c}, cone, **kw).solve()
    elapsed = time.perf_counter() - t0
    val = int(sol["info"]["status_val"])
    status = {1: cp.OPTIMAL, 2: cp.OPTIMAL_INACCURATE, -2: cp.INFEASIBLE,
              -7: cp.INFEASIBLE, -1: cp.UNBOUNDED, -6: cp.UNBOUNDED}.get(val, cp.SOLVER_ERROR)
    return _result(scp, np.asarray(sol["x"]), status, elapsed, "SCS")


def _result(scp: SymmetricConeProgram, x: np.ndarray, status: str, elapsed: float,
            solver: str, c: np.ndarray | None = None) -> ExactSolution:
    """The solution, its value ``c'x + offset`` (``c``: the cost solved, the program's by
    default), or the value a status implies."""
    if status in cp.settings.SOLUTION_PRESENT:
        cost = scp.c if c is None else c
        return ExactSolution(x, float(cost @ x + scp.offset), status, elapsed, solver)
    value = np.inf if status == cp.INFEASIBLE else -np.inf if status == cp.UNBOUNDED else None
    return ExactSolution(None, value, status, elapsed, solver)


def solve_exact(scp: SymmetricConeProgram, *, solver: str | None = None,
                memo: dict[bytes, ExactSolution] | None = None, **opts: Any) -> ExactSolution:
    """Solve the cone program exactly (non-private reference), without touching the user's
    CVXPY variables.

    Parameters
    ----------
    scp : SymmetricConeProgram
    solver : {"CLARABEL", "SCS"} or None
        None: Clarabel (interior point, accurate), falling back to SCS (``eps 1e-9``) if
        Clarabel is missing or fails.
    memo : dict, optional
        Keeps Clarabel's answer (its retry on rescaled squares included) under a digest of the
        program's data and the settings: a later call with the same data and settings returns
        it instead of solving again (Clarabel's answer is a function of both).
    **opts
        Settings passed to the solver.

    Returns
    -------
    ExactSolution
    """
    name = (solver or "CLARABEL").upper()
    if name not in ("CLARABEL", "SCS"):
        raise ValueError(f"solver must be 'CLARABEL' or 'SCS', got {solver!r}.")
    if name == "CLARABEL":
        try:
            out = _clarabel_answer(scp, opts, memo)
        except ImportError:
            if solver is not None:
                raise
            return _scs(scp)
        if out.status == cp.SOLVER_ERROR and solver is None:
            return _scs(scp)
        return out
    return _scs(scp, **opts)


def clarabel_retried(scp: SymmetricConeProgram, first: ExactSolution) -> ExactSolution:
    """``solve_exact(scp, solver="CLARABEL")`` given Clarabel's fresh answer ``first`` for
    the program as it is (a :class:`ClarabelSession` answer with ``last_fresh``): its retry
    on the rescaled squares when it stopped short, without solving the same program again."""
    if first.status in (cp.OPTIMAL, cp.INFEASIBLE, cp.UNBOUNDED):
        return first
    return _rescaled_squares(scp, first, {})


def _clarabel_answer(scp: SymmetricConeProgram, opts: dict[str, Any],
                     memo: dict[bytes, ExactSolution] | None) -> ExactSolution:
    """Clarabel's answer, retried on the rescaled squares when it stops short; from ``memo``
    when the same data and settings were solved (:func:`solve_exact`)."""
    key = None if memo is None else _data_digest(scp, opts)
    if key is not None and key in memo:
        return memo[key]
    out = _clarabel(scp, **opts)
    if out.status not in (cp.OPTIMAL, cp.INFEASIBLE, cp.UNBOUNDED):
        out = _rescaled_squares(scp, out, opts)
    if key is not None:
        memo[key] = out
    return out


def _data_digest(scp: SymmetricConeProgram, opts: dict[str, Any]) -> bytes:
    """A digest of everything an exact solve reads: the rows, cones, objective and settings."""
    h = hashlib.blake2b(digest_size=20)
    A = sp.csc_matrix(scp.A)
    h.update(repr((A.shape, scp.dims, float(scp.offset), sorted(opts.items()))).encode())
    for arr in (A.indptr, A.indices, A.data, scp.b, scp.c):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    if scp.exp_tail is not None:
        tail = sp.csr_matrix(scp.exp_tail.A)
        h.update(repr(tail.shape).encode())
        for arr in (tail.indptr, tail.indices, tail.data, scp.exp_tail.b):
            h.update(np.ascontiguousarray(arr).tobytes())
            h.update(b"|")
    return h.digest()


def _rescaled_squares(scp: SymmetricConeProgram, first: ExactSolution,
                      opts: dict[str, Any]) -> ExactSolution:
    """Clarabel again on the same program with its squares' cones rescaled, when the first
    solve stopped short; the better of the two answers.

    CVXPY writes ``t >= ||r||^2`` as ``(1 + t, t - 1, 2 r)`` in the second-order cone: at
    ``t ~ 1e5`` the cone's slack ``s_0 - |s_1| = 2`` is a relative 1e-5 of its entries, and an
    interior-point method stalls at a primal residual of ~1e-7 ("almost solved").  ``(K + t / K,
    t / K - K, 2 r)`` is the same constraint on ``(t, r)`` for every ``K > 0`` (``s_0^2 - s_1^2 =
    4 t`` either way, and both heads are positive where ``t >= 0``, which the cone forces;
    :func:`cvxdp.transform.epigraph.square_cones` checks the general form), so the program's
    feasible set and objective in ``x`` are unchanged; with ``K = sqrt(t)`` at the first answer
    (when it has no point: the square at ``x = 0``, or the program's largest constant where
    that is larger) the two entries are of ``r``'s size.  Only ``t``'s column and the two
    rows' constants change."""
    d = scp.dims
    cones = square_cones(scp.A, scp.b, d.soc, d.zero + d.nonneg) if d.soc else []
    if not cones:
        return first
    heads, members, cols = (np.array(v, dtype=int) for v in zip(*cones, strict=True))
    if first.x is not None:
        t = np.abs(np.asarray(first.x, dtype=float)[cols])
    else:
        # the square at x = 0: t = S^2 / (2 (a h - a' g)), S the norm of the other rows'
        # constants (epigraph.py's module doc)
        A = sp.csc_matrix(scp.A)
        ends, r0 = {}, d.zero + d.nonneg
        for q in d.soc:
            ends[r0], r0 = r0 + q, r0 + q
        t = np.zeros(len(cones))
        for i, (h, k, j) in enumerate(cones):
            rest = [r for r in range(h + 1, ends[h]) if r != k]
            a, a1 = -A[h, j], -A[k, j]
            t[i] = float(np.sum(scp.b[rest] ** 2)) / (2.0 * (a * scp.b[h] - a1 * scp.b[k]))
        # where the other rows hold variables (a counterpart's w >= ||u~_P|| + tau), the
        # square of the program's largest constant stands in for the scale; any K >= ~30 solved
        # the tv counterpart of 500 noisy prices, whose K = 1 was a solver error
        t = np.maximum(t, float(np.max(np.abs(scp.b), initial=0.0)) ** 2)
    K = np.sqrt(np.maximum(t, 1.0))
    if np.all(K == 1.0):
        return first
    col_scale = np.ones(scp.A.shape[1])
    col_scale[cols] = 1.0 / K
    A = sp.csc_matrix(scp.A) @ sp.diags(col_scale)
    b = np.asarray(scp.b, dtype=float).copy()
    b[heads] *= K
    b[members] *= K
    # the cone program itself (not the quadratic form of ClarabelSession, whose first answer
    # this may be: an "almost solved" quadratic form is retried as before it existed)
    second = _clarabel(dataclasses.replace(scp, A=sp.csc_matrix(A), b=b), lift=False, **opts)
    rank = {cp.OPTIMAL: 0, cp.INFEASIBLE: 0, cp.UNBOUNDED: 0, cp.OPTIMAL_INACCURATE: 1}
    if rank.get(second.status, 2) < rank.get(first.status, 2):
        return dataclasses.replace(second, solve_time=first.solve_time + second.solve_time)
    return first
