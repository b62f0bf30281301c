"""Covering programs under high-sensitivity constraint privacy (Song et al. 2025, Sec. 5.1, App. B).

``covering_sdp(mats)`` is ``min tr X  s.t. <A_i, X> >= 1, X PSD`` (``A_i`` PSD, ``||A_i|| <= 1``)
and ``covering_lp(A)`` is ``min 1'x  s.t. A x >= 1, x >= 0`` (entries of ``A`` in ``[0, 1]``).
Both are CVXPY problems: ``.solve()`` is the exact reference; ``.solve_private(...)`` runs the
dense multiplicative weights of Alg. 3 with the exponential-mechanism oracle (Lemma B.9 / Hsu et
al.'s LP oracle) and a private choice of the trace.  Each constraint is one person's data;
neighbouring datasets add or remove one whole constraint.  The answer meets all but about ``s``
constraints -- violating some constraints is unavoidable under this neighbouring relation
(Sec. 5.1).

User models with ``private=cvxdp.ConstraintSetPrivacy(constraint)`` go through
:func:`cvxdp.solvers.covering.covering_model.solve_covering_private`, which builds the programs
defined here (this module imports nothing from it).

References
----------
Song, Xue & Zhang (2025): Thm 5.1, Thm 5.2, Alg. 2, Alg. 3, Thm B.7,
Lemma B.9, Thm B.10, Lemma B.12, Thm B.13.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.arguments import check_count, entry_point
from cvxdp.citations import SYMMETRIC_CONE_PROGRAMMING
from cvxdp.errors import InfeasibleProblemError, PrivacySpecError, UnsupportedProblemError
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import resolve_budget
from cvxdp.privacy.clipping import noisy_count
from cvxdp.privacy.mechanisms import exponential_float_delta, exponential_record
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import Certificate, PrivateSolution, ValidationReport
from cvxdp.solvers.covering.covering_domain import DOMAIN_NOTE, check_shape, project_rows
from cvxdp.solvers.covering.covering_instances import (  # noqa: F401  (re-exported)
    random_covering_lp,
    random_covering_sdp,
    random_covering_socp,
)
from cvxdp.solvers.covering.covering_private import (
    COUNT_NOTE,
    covering_certificate,
    covering_coverage,
    plan_schedule,
    private_scale,
    release_certificate_statistics,
    run_dense_covering,
    shrink_towards_identity,
    shrink_weight,
    split_count_budget,
    theorem_alpha,
)
from cvxdp.status import DEFAULT_BETA, status_of
from cvxdp.structured import StructuredProblem

__all__ = ["covering_sdp", "covering_lp", "covering_socp", "CoveringSDP", "CoveringLP",
           "CoveringSOCP", "CoveringSolution", "project_rows", "random_covering_socp",
           "random_covering_sdp", "random_covering_lp"]

THEOREM = (f"{SYMMETRIC_CONE_PROGRAMMING}, Alg. 3 + Thm B.7 (privacy), Lemma B.9 / Thm B.10 "
           "(covering SDP), Thm B.13 (covering SCP); exponential mechanism per round composed "
           "in zCDP (Cesar & Rogers 2021) and converted by CKS 2020")
_TOL = 1e-9
#: the covering certificate's construction (docs/certificates.md, "Covering")
COVERING_BOUND = (f"dense MWU, schedule='paper': {SYMMETRIC_CONE_PROGRAMMING}, Lemma B.5 bounds "
                  "the coverage at OPT's scale only (alpha in privacy.details), not at the "
                  "released trace")


@dataclass(repr=False)
class CoveringSolution(PrivateSolution):
    """A private covering answer: :class:`PrivateSolution` plus ``point`` (X or x) and ``s``."""

    point: np.ndarray | None = None
    s: float | None = None


class _Covering(StructuredProblem):
    kind = ""

    def _dim(self) -> int:
        return self.data.shape[1]

    # vector-variable programs (LP, spin factor) keep their variable in ``self.x``; the SDP
    # overrides these two for its matrix variable
    def _point(self) -> np.ndarray:
        return np.asarray(self.x.value)

    def _set_point(self, point: np.ndarray) -> None:
        self.x.value = point

    def coverage(self, point: np.ndarray) -> np.ndarray:
        """``<A_i, X>`` (or ``(A x)_i``) for every constraint."""
        if self.kind == "sdp":
            return np.einsum("mij,ij->m", self.data, point)
        if self.kind == "soc":
            return 2.0 * (self.data @ point)
        return self.data @ point

    def exact(self, solver: str | None = None) -> tuple[np.ndarray, float, float, str]:
        """Exact reference: (point, OPT, seconds, solver name)."""
        t0 = time.perf_counter()
        solver = solver or cp.CLARABEL
        if not np.all(np.isfinite(self.data)):  # the reference only; the private path projects
            raise UnsupportedProblemError(
                "the exact (non-private) reference cannot be solved: the rows contain NaN or "
                "inf; solve privately with reference=False, or repair those rows.")
        with warnings.catch_warnings():  # OPTIMAL_INACCURATE is accepted and reported below
            warnings.simplefilter("ignore", UserWarning)
            super().solve(solver=solver)
        self.reference_status = self.status
        if self.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            raise InfeasibleProblemError(
                "the exact covering program is infeasible: some constraint row is all zeros "
                "(nothing can cover it); drop such rows or add a variable that covers them.")
        if self.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise UnsupportedProblemError(f"exact covering solve ended with status {self.status}.")
        return self._point(), float(self.value), time.perf_counter() - t0, str(solver)

    @entry_point()
    def solve_private(
        self, *, epsilon: float | None = None, delta: float | None = None,
        rho: float | None = None, rng: Any = None, reference: bool = False,
        accuracy: float | None = None, s: float | None = None, T: int | None = None,
        eta: float | None = None, opt: float | None = None,
        opt_bounds: tuple[float, float] | None = None, schedule: str = "practical",
        oracle: str = "exact_sampler", m_max: int | None = None, beta: float = DEFAULT_BETA,
        shrink: float | str = "auto", count_clipped: bool | float = False,
        verbose: bool = False, solver: str | None = None,
    ) -> CoveringSolution:
        """Private covering solution by dense MWU (Alg. 3) with an exponential-mechanism oracle.

        Parameters
        ----------
        epsilon, delta, rho : float
            Budget ((eps, delta)-DP, pure eps-DP, or rho-zCDP).  Neighbours add or remove one
            whole constraint ``A_i``.
        rng : None, int or Generator
        reference : bool
            Also solve exactly (NOT private) and attach ``validation``.
        accuracy : float, optional
            ``schedule="paper"`` only: the additive coverage error alpha of Lemma B.5.
        s : float, optional
            Density: how many constraints the answer may violate (public).  Default: the
            smallest ``s`` making the oracle concentration ``kappa = eps' s/2`` reach ``2 r``
            (SDP) or ``4 log(2n)`` (LP) -- independent of the data and of m.
        T, eta : optional
            Rounds and step (defaults per schedule, see :func:`plan_schedule`).
        opt : float, optional
            A public target trace: no budget spent on finding OPT.
        opt_bounds : (lo, hi), optional
            Public range for the trace; default ``(1, 2r)`` (resp. ``(1, 2n)``): ``OPT >= 1``
            since ``||A_i|| <= 1``, and ``OPT <= r`` whenever ``X = I`` (``x = 1``) is feasible;
            the factor 2 leaves room above OPT for a noisy direction.  The trace is chosen
            privately on a geometric grid of it.
        schedule : {"practical", "paper"}
            ``"paper"``: the constants of Alg. 3 / Thm B.7 / Lemma B.9 verbatim (T = 36 rho^2
            log m / alpha^2, eps' by advanced composition, sensitivity 3 OPT/s); needs ``s``,
            ``m_max`` and ``delta``.
        oracle : {"exact_sampler", "net"}
            SDP only: the continuous exponential mechanism (exact Bingham sampler) or an explicit
            net (r in {2, 3}; the paper's Lemma B.8 discretisation, reference path).
        m_max : int, optional
            Public upper bound on the number of constraints (log m in the paper's T and the
            reported alpha).
        beta : float
            Failure probability for the reported accuracy.
        shrink : "auto" or float in [0, 1]
            Public weight of the identity mixed into the MWU average (post-processing, see
            :func:`cvxdp.solvers.covering.covering_private.shrink_weight`); ``"auto"`` is 0 once the
            oracle is accurate (``kappa >= kappa*/2``) and 0 for ``schedule="paper"``.
        count_clipped : bool or float
            Rows outside the public domain are always projected into it
            (:func:`project_rows`), never refused.  ``True`` (10% of the budget) or a share in
            ``(0, 1)`` also releases how many rows were projected, as a noisy count
            (Gaussian in zCDP, Laplace for pure DP; sensitivity 1) in
            ``info["clipped_rows_noisy"]``, its record in ``privacy``; the rest of the budget
            goes to the solver.  Default ``False``: nothing about the count is released.
        verbose : bool
            Accepted for the common front door (the dense MWU prints nothing).
        solver : str, optional
            CVXPY solver of the exact reference (``reference=True``); default Clarabel.

        Returns
        -------
        CoveringSolution
            ``point`` (X or x), ``value`` (its trace), ``s``, ``privacy``, ``validation``.
            Every field is computed from the mechanisms' outputs (the MWU average, the private
            trace, the noisy count) and public numbers only; ``validation`` (NOT private) is
            attached only with ``reference=True``.

        References
        ----------
        Song, Xue & Zhang (2025): Alg. 3, Thm B.7, Lemma B.9, Thm B.10, Thm B.13.
        """
        t0 = time.perf_counter()
        budget = resolve_budget(epsilon=epsilon, delta=delta, rho=rho)
        for name, count in (("T", T), ("m_max", m_max)):  # counts: integers, as iterations=
            if count is not None:
                check_count(name, count, error=PrivacySpecError)
        if oracle not in ("exact_sampler", "net"):
            raise PrivacySpecError(f"oracle must be 'exact_sampler' or 'net', got {oracle!r}.")
        if oracle == "net" and (self.kind != "sdp" or self._dim() not in (2, 3)):
            raise PrivacySpecError("oracle='net' is the small-r reference path (SDP, r in {2,3}).")
        solver_budget, count_budget = split_count_budget(budget, count_clipped, schedule)
        sched = plan_schedule(solver_budget, kind=self.kind, dim=self._dim(), s=s, T=T, eta=eta,
                              opt=opt, opt_bounds=opt_bounds, schedule=schedule,
                              accuracy=accuracy, m_max=m_max, beta=beta, oracle=oracle)
        gen = as_generator(rng)
        acct = PrivacyAccountant(budget)
        discrete = {} if self.kind in ("sdp", "soc") else {
            # an orthant's candidates are its coordinates, drawn by the float Gumbel sampler
            "candidates": self._dim(),
            "float_delta": exponential_float_delta(candidates=self._dim(),
                                                   epsilon=sched.eps_round)}
        acct.spend(exponential_record(epsilon=sched.eps_round, count=sched.T,
                                      sensitivity=sched.sensitivity, s=sched.s,
                                      kappa=sched.kappa, oracle=oracle, **discrete))
        lam = shrink_weight(sched, shrink)
        # the mechanism sees the rows projected into the public domain, never the raw rows
        data, clipped = project_rows(self.kind, self.data)
        res = run_dense_covering(self.kind, data, sched, gen,
                                 average_from=sched.T // 2 if sched.eps_cert > 0 else None)
        P = shrink_towards_identity(self.kind, res.average, lam)
        if sched.opt is None:
            trace = private_scale(covering_coverage(self.kind, data, P), sched, gen, acct)
        else:
            trace = sched.opt
        cert_stats = (release_certificate_statistics(self.kind, data, P, trace, res.y_average,
                                                     sched, gen, acct)
                      if sched.eps_cert > 0 else None)
        count_info: dict[str, Any] = {}
        if count_budget is not None:
            noisy, rec = noisy_count(clipped, rng=gen, what=COUNT_NOTE, **count_budget)
            acct.spend(rec)
            key = "sigma_count" if "rho" in count_budget else "laplace_scale_count"
            count_info = {"clipped_rows_noisy": noisy,
                          key: rec.params["sigma" if "rho" in count_budget else "scale"]}
        del clipped  # private: nothing below may read it
        point = trace * P
        details = {**sched.as_dict(), "trace": trace, "shrink": lam}
        if getattr(budget, "delta", 0.0) > 0:  # the paper's accounting of the same T rounds
            details["paper_epsilon_mwu"] = sched.eps_round * math.sqrt(
                8 * sched.T * math.log(1 / budget.delta))  # Lemma 3.13 (advanced composition)
        if m_max is not None:
            details.update(theorem_alpha(sched, int(m_max)))
        report = acct.report(
            theorem=THEOREM,
            neighbouring="add/remove one whole covering constraint A_i (Song, Xue & Zhang "
                         "(2025), Def B.1, both directions)", details=details)
        # The certificate: released noisy statistics (covering_certificate); the paper's
        # schedule spends its whole budget on the rounds and keeps Lemma B.5's alpha, which
        # bounds the shortfall at OPT's scale, not at the released trace: no bound there
        alpha_rel = details.get("alpha_rel")
        if cert_stats is not None:
            cert = covering_certificate(cert_stats, trace, sched.s, float(beta))
            details["certificate_statistics"] = cert_stats
        else:
            cert = Certificate.from_bounds(
                objective_upper=math.inf, optimum_lower=-math.inf, violation_bound=math.inf,
                equality_violation_bound=None, probability=1.0 - float(beta),
                excluded_rows=max(math.ceil(sched.s) - 1, 0), how=COVERING_BOUND)
        status, reason = status_of(cert, accuracy)
        if cert_stats is None:
            reason += ("; the certificate's noisy statistics were not released: at this budget "
                       "their noise alone exceeds the accuracy (docs/covering.md, 'Certificate')")
        status_info: dict[str, Any] = {"alpha_rel": alpha_rel, "status_reason": reason}
        sol = CoveringSolution(
            status=status, value=float(trace), privacy=report, certificate=cert,
            status_reason=reason,
            iterations=sched.T, solve_time=time.perf_counter() - t0, point=point, s=sched.s,
            info={"schedule": schedule, "oracle": oracle, "s": sched.s, "T": sched.T,
                  "eta": sched.eta, "eps_round": sched.eps_round,
                  "paper_eps_round": sched.paper_eps_round, "kappa": sched.kappa,
                  "domain": DOMAIN_NOTE, **count_info, **status_info})
        if reference:
            sol.validation = self._validate(point, float(trace), sched, solver)
        self._set_point(point)
        sol.primal = {v.name(): v.value for v in self.variables()}
        return sol

    def _validate(self, point: np.ndarray, trace: float, sched: Any,
                  solver: str | None = None) -> ValidationReport:
        """Compare with the exact reference (NOT private)."""
        _, opt, t_ref, solver = self.exact(solver)
        cov = self.coverage(point)
        short = np.maximum(0.0, 1.0 - cov)
        alpha = theorem_alpha(sched, self.data.shape[0])
        a_abs = alpha["alpha_rel"] * opt  # Lemma B.5 alpha at OPT (vacuous when >= 1)
        cov_opt = self.coverage(opt * point / trace)
        metrics = {
            "opt": opt, "cost_ratio": trace / opt, "s": sched.s, "m": int(cov.size),
            "frac_covered": float(np.mean(cov >= 1 - 1e-6)),
            "frac_covered_at_opt": float(np.mean(cov_opt >= 1 - 1e-6)),
            "alpha_theorem": a_abs,
            "violated_at_opt_alpha": int(np.sum(cov_opt < 1 - a_abs)),
            "frac_covered_half": float(np.mean(cov >= 0.5)),
            "reference_status": self.reference_status, **alpha,
        }
        return ValidationReport(
            reference_value=opt, objective_gap=trace - opt, max_violation=float(short.max()),
            mean_violation=float(short.mean()), violated=int(np.sum(short > 1e-6)),
            tolerance=1e-6, reference_time=t_ref, reference_solver=solver, metrics=metrics)


class CoveringSDP(_Covering):
    """``min tr X  s.t. <A_i, X> >= 1 (i = 1..m), X PSD`` (Sec. 5.1 / App. B.3 of Song et al. 2025).

    Attributes
    ----------
    data : ndarray (m, r, r)
    X : cvxpy.Variable (r, r), PSD
    """

    kind = "sdp"

    def __init__(self, mats: Any) -> None:
        self.data = check_shape("sdp", mats)
        m, r, _ = self.data.shape
        self.X = cp.Variable((r, r), PSD=True, name="X")
        flat = self.data.reshape(m, r * r)
        self.covering_constraint = flat @ cp.vec(self.X, order="C") >= 1
        super().__init__(cp.Minimize(cp.trace(self.X)), [self.covering_constraint])

    def _point(self) -> np.ndarray:
        return np.asarray(self.X.value)

    def _set_point(self, point: np.ndarray) -> None:
        self.X.value = (point + point.T) / 2


class CoveringLP(_Covering):
    """``min 1'x  s.t. A x >= 1, x >= 0`` with entries of ``A`` in ``[0, 1]`` (Hsu et al. 2014;
    the orthant case of Song, Xue & Zhang (2025)'s covering SCP, Thm B.13).

    Attributes
    ----------
    data : ndarray (m, n)
    x : cvxpy.Variable (n,), nonneg
    """

    kind = "lp"

    def __init__(self, A: Any) -> None:
        self.data = check_shape("lp", A)
        self.x = cp.Variable(self.data.shape[1], nonneg=True, name="x")
        self.covering_constraint = self.data @ self.x >= 1
        super().__init__(cp.Minimize(cp.sum(self.x)), [self.covering_constraint])


class CoveringSOCP(_Covering):
    """Covering SCP over the spin factor (Song et al. 2025, Sec. B.4, Thm B.13): ``min Tr(x)  s.t.
    <a_i, x> >= 1, x in L^n`` with the algebra's ``Tr(x) = 2 x_0`` and ``<a, x> = 2 a'x``,
    i.e. ``min 2 x_0  s.t. 2 a_i'x >= 1, x_0 >= |x_bar|``.

    Attributes
    ----------
    data : ndarray (m, n)
    x : cvxpy.Variable (n,)
    """

    kind = "soc"

    def __init__(self, vecs: Any) -> None:
        self.data = check_shape("soc", vecs)
        self.x = cp.Variable(self.data.shape[1], name="x")
        self.covering_constraint = 2 * (self.data @ self.x) >= 1
        super().__init__(cp.Minimize(2 * self.x[0]),
                         [cp.SOC(self.x[0], self.x[1:]), self.covering_constraint])


def covering_socp(vecs: Any) -> CoveringSOCP:
    """Build the spin-factor covering program of :class:`CoveringSOCP` (oracle: von
    Mises--Fisher, Wood 1994)."""
    return CoveringSOCP(vecs)


def covering_sdp(mats: Any) -> CoveringSDP:
    """Build the covering SDP ``min tr X s.t. <A_i, X> >= 1, X PSD`` (``A_i`` PSD, norm <= 1).

    Examples
    --------
    >>> import cvxdp
    >>> from cvxdp.solvers.covering.covering import random_covering_sdp
    >>> prob = cvxdp.covering_sdp(random_covering_sdp(1000, 6, rng=0))
    >>> sol = prob.solve_private(epsilon=4.0, delta=1e-6, s=100, rng=1, reference=True)
    >>> round(sol.validation.cost_ratio, 2), sol.validation.frac_covered
    (0.99, 0.902)
    """
    return CoveringSDP(mats)


def covering_lp(A: Any) -> CoveringLP:
    """Build the covering LP ``min 1'x s.t. A x >= 1, x >= 0`` (entries of A in [0, 1])."""
    return CoveringLP(A)

