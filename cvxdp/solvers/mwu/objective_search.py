"""The MWU's private search over the objective value (the paper leaves it open; ours is in
docs/mwu.md, "The objective search").

The noisy-oracle MWU of Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan
Algebra with Applications to Private Symmetric Cone Programming", solves feasibility; the
objective is a public row ``c'x <= tau`` whose target :func:`objective_search` bisects, each
run followed by noisy tests of its violation (docs/mwu.md, "The objective search": the steps,
the acceptance threshold, the checkpoints that end accepted runs early, the test of the
repaired point).  :func:`cvxdp.solvers.mwu.solve.solve_mwu` calls it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp import progress
from cvxdp.errors import CvxdpError, PrivacyGuaranteeError
from cvxdp.privacy.budgets import ZCDP
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.solvers import public_part
from cvxdp.solvers.mwu.dual_bound import (
    PooledLoss,
    averaged_loss_lower,
    chosen_average,
    rhs_sensitivity,
)
from cvxdp.solvers.mwu.private_scp import _run, row_sensitivities, total_rho
from cvxdp.status import DEFAULT_ACCURACY

__all__ = ["objective_search", "search_steps", "trace_set_only", "CHECKPOINTS",
           "MAX_SEARCH_STEPS"]

CHECKPOINTS = 3  # tests before the end of a run: after T/64, T/16, T/4 rounds
MAX_SEARCH_STEPS = 24  # bisection steps: range / 2^23 is below any accuracy in practice


def objective_search(setting, form, scp, budget, acct, gen, kw, opts, *, row_private=None,
                     solver=None):
    """Private bisection over the objective value (the paper leaves it open; docs/mwu.md).

    Run 0 solves feasibility (objective row at the public upper end of the range) and is the
    fallback answer; runs 1..S-1 bisect ``tau``, S from :func:`search_steps` (the last bracket
    within half the judged accuracy) unless ``search_steps=`` is given.  Every run is followed
    by a noisy test of its largest normalised violation ``v`` (Gaussian, sensitivity = the
    score sensitivity, since the average iterate is a distribution), the objective row weighted
    ``2 objective_width / rho`` (its violation in the constraints' units, at half the level: the
    gap is the bracket's error plus this row's violation).  A target counts as reached when
    ``v <= a + z sigma``, ``a`` the accuracy the answer is judged against (``accuracy=``, else
    the status's default 1e-2; normalised by ``R rho``) and ``z = sqrt(2 ln(2S / beta))`` so
    that all ``S`` test noises stay within ``z sigma`` w.p. ``1 - beta``: an accepted point's
    true violation is at most ``v + z sigma`` (released as ``violation_bound``), and when a
    run's theorem gives ``alpha <= a`` a rejected target is below the optimum (it raises the
    certified ``optimum_lower``).  The decision never compares two noisy runs.
    Accounting: every run and every test is a record of the accountant (the report lists them);
    the zCDP budget is split evenly: ``(1 - q) rho / S`` per run and ``q rho / S`` per test.
    """
    rho = total_rho(budget)
    if rho is None:  # pure DP: no Gaussian tests; solve feasibility and say so
        res, det = _run(setting, form, budget, rng=gen, accountant=acct, **kw)
        det["objective"] = ("not optimised: a pure-DP budget cannot pay for the noisy tests of "
                            "the search (pass target= or delta > 0)")
        return res, det
    S_user = opts.get("search_steps")
    q = float(opts.get("search_share", 0.1))
    if (S_user is not None and int(S_user) < 1) or not 0 < q < 1:
        raise PrivacyGuaranteeError("search_steps must be >= 1 and 0 < search_share < 1.")
    row_private = (np.asarray(scp.sensitivity.A.sum(axis=1)).ravel() > 0) | (
        scp.sensitivity.b > 0)
    try:
        if trace_set_only(form):
            # the public set is {z in K, tr z = R}: the range of c'x is R times the extreme
            # eigenvalues of c_z (EJA spectrum; eigvalsh per block), no conic solve
            lam = form.algebra.eigenvalues(form.c_z / form.algebra.gram)
            lo = form.c_z_shift + form.R * float(lam.min())
            hi = form.c_z_shift + form.R * float(lam.max())
        else:
            lo, hi = public_part.public_bounds(scp.A, scp.b, scp.dims, row_private, [scp.c])
            lo, hi = float(lo[0]), float(hi[0])
    except CvxdpError:  # the public part does not bound c'x: fall back to the trace bound
        w = form.algebra.norm_inf(form.c_z / form.algebra.gram) * form.R
        lo, hi = form.c_z_shift - w, form.c_z_shift + w
    # The accuracy the answer is judged against: the requested one, else the status's default.
    acc = kw["accuracy"]
    judged = float(acc) if acc is not None else DEFAULT_ACCURACY
    # Enough steps to bracket the optimum to within the judged accuracy (search_steps()).
    S = int(S_user) if S_user is not None else search_steps(hi - lo, judged)
    # Fewer steps when a test would be pure noise: each test's noise must stay below half the
    # acceptance margin, else the search degenerates to feasibility (reported in details).
    # (Judged against 0.05 normalised without accuracy=, as before: a coarser search still
    # beats a feasibility answer; its tests then accept at the level they can resolve.)
    score = row_sensitivities(form.with_target(hi)).score
    margin = judged / (form.R * form.rho)
    coarse = margin if acc is not None else max(margin, 0.05)
    while S > 1 and score / math.sqrt(2 * rho * q / S) > coarse / 2:
        S -= 1
    run_budget = ZCDP(rho * (1 - q) / S) if S > 1 else ZCDP(rho)
    # Each run's test budget pays for C tests: at checkpoints T/64, T/16, T/4 and at T (the run
    # stops at the first accepted one), when C = 4 tests still resolve the margin; else one.
    C = CHECKPOINTS + 1 if S > 1 and score / math.sqrt(
        2 * rho * q / (S * (CHECKPOINTS + 1))) <= coarse / 2 else 1
    scale = form.R * form.rho
    w_obj = 2.0 * float(form.info.get("objective_width") or form.rho) / form.rho
    repaired = None if row_private is None or S == 1 else _repaired_test(
        form, scp, row_private, solver)
    # with the repaired point tested, a rejected test may be followed by a test of the
    # unrepaired average (what the posterior bound is about): two tests per checkpoint
    per = 2 if repaired is not None else 1
    # with private right-hand sides, each run may release y'h (its averaged loss's
    # right-hand side, dual_bound.py) at one test's budget: S more tests' worth
    rhs_release = S > 1 and bool(np.any(np.asarray(form.dh) > 0))
    test_rho = rho * q / (S * (C * per + rhs_release))
    z_rhs = math.sqrt(2 * math.log(2 * S / float(kw["beta"])))
    # every test's noise stays within z sigma together, with probability >= 1 - beta
    z = math.sqrt(2 * math.log(2 * max(S * C * per, 1) / float(kw["beta"])))
    best = None
    bound = None
    runs = []
    # OPT >= lo over the public set; a target the test rejects while its run meets its theorem
    # (level = the theorem's alpha) is below OPT on the runs' and tests' events
    optimum_lower = lo
    theorem_events = 0
    # every run's averaged loss bounds the optimum from below (dual_bound.py): one event of
    # probability beta shared by the S runs (their noise and right-hand-side releases)
    loss_certified = False
    # ... and all runs' losses pooled (dual_bound.py, "Pooling the runs"), on the same event:
    # the per-run noise bounds take beta / 4 together, the pooled one beta / 4, the
    # right-hand-side releases beta / 2
    pooled = PooledLoss(S)

    def take(dual: float | None) -> None:
        # a loss bound that beats the lower bound so far replaces it (and counts its event)
        nonlocal optimum_lower, loss_certified
        if dual is not None and dual > optimum_lower:
            optimum_lower, loss_certified = dual, True

    for s in range(S):
        tau = hi if s == 0 else 0.5 * (lo + hi)
        f = form.with_target(tau)
        label = "feasibility run" if s == 0 else f"objective search {s}/{S - 1}"
        sens = row_sensitivities(f)
        sig = sens.score / math.sqrt(2 * test_rho)
        if S > 1 and repaired is None:
            # the run's C tests, recorded whether or not a checkpoint ends the run early
            acct.spend(gaussian_record(sigma=sig, sensitivity=sens.score, mechanism="gaussian",
                                       count=C,
                                       note="noisy feasibility tests of the objective search"))

        def plain_violation(x: np.ndarray, f: Any = f) -> float:
            # the objective row in the constraints' units (R objective_width against R rho),
            # at half the level: the gap is the bracket's error (<= half the accuracy,
            # search_steps) plus this row's violation; the row is public, so the test's
            # sensitivity is unchanged
            viol = f.G @ x - f.h
            viol[-1] *= w_obj
            return float(np.max(viol))

        def noisy_test(x: np.ndarray, f: Any = f, sig: float = sig, tau: float = tau
                       ) -> tuple[float, float, float]:
            """(released value v, acceptance threshold, violation bound v + z sigma)."""
            if repaired is not None:
                # the released point is the public repair of x: test that point, in canonical
                # units, with its own sensitivity (a public function of released data), each
                # test at the budget test_rho
                v, sens_c = repaired(x, tau)
                sig_c = max(sens_c, 1e-300) / math.sqrt(2 * test_rho)
                acct.spend(gaussian_record(
                    sigma=sig_c, sensitivity=sens_c, mechanism="gaussian",
                    note="noisy feasibility test of the objective search (repaired point)"))
                v += gen.normal(0.0, sig_c)
                return v, _threshold(judged, sig_c, z), v + z * sig_c
            v = plain_violation(x) + gen.normal(0.0, sig)
            return v, _threshold(margin, sig, z), (v + z * sig) * scale

        # ``level``: the largest true violation that surely passes (it backs optimum_lower)
        level = _threshold(margin, sig, z) - z * sig

        def decide(x: np.ndarray, t: int, delta: float | None, posterior: Any,
                   noisy_test: Any = noisy_test, sig: float = sig,
                   plain_violation: Any = plain_violation, score_s: float = sens.score
                   ) -> tuple:
            """(verdict, v, threshold, bound): "accept" when the test accepts; "certified"
            when the released value exceeds what a reachable target's run can show after t
            rounds (AdaHedge's posterior bound, ``posterior_alpha``), so the target is below
            the optimum (one more event of the certificate); else None."""
            v, thr, vb = noisy_test(x)
            if v <= thr:
                return "accept", v, thr, vb
            if posterior is not None and delta is not None:
                a_t = posterior(t, delta, float(kw["beta"]) / (2 * C))
                v2 = v
                if repaired is not None:  # the posterior is about the unrepaired average
                    acct.spend(gaussian_record(
                        sigma=sig, sensitivity=score_s, mechanism="gaussian",
                        note="noisy violation of the unrepaired average (objective search)"))
                    v2 = plain_violation(x) + gen.normal(0.0, sig)
                if v2 - z * sig > a_t * max(1.0, w_obj):
                    return "certified", v, thr, vb
            return None, v, thr, vb

        stop = _Checkpoints(C, decide)
        with progress.phase(label):
            res, det = _run(setting, f, run_budget, rng=gen, accountant=acct,
                            checkpoint=stop if C > 1 else None, **kw)
        if S == 1:
            best = (res, det)
            runs.append({"tau": tau, "noisy_violation": None, "reached": None})
            # the averaged loss still bounds the optimum (no budget when every chosen row's
            # right-hand side is public; _dual_lower returns None otherwise)
            take(_dual_lower(f, tau, res, False, test_rho, z_rhs, S, kw, acct, gen, None,
                             det.get("T")))
            break
        if stop.value is not None:
            verdict, v, thr, vb = stop.value
        else:
            post = res.info.get("posterior")
            verdict, v, thr, vb = decide(
                res.x, res.iterations, res.info.get("delta"),
                None if post is None else (lambda t, dl, b, post=post: post(b)))
        # Never a comparison with another noisy run.  An accepted point's true violation
        # (objective row included) is at most v + z sigma: a bound computed from the released
        # test value only.
        alpha_n = None if det.get("alpha_guaranteed") is None else \
            det["alpha_guaranteed"] / scale
        # Accept at the judged accuracy (_threshold), not at the run's theorem alpha when that
        # is larger (which released points 4-9x outside the accuracy: docs/mwu.md).
        ok = verdict == "accept"
        if s == 0:
            best, bound = (res, det), vb  # the feasibility run is the fallback
        elif ok:
            best, bound = (res, det), vb
            hi = tau
        else:
            lo = tau
            if verdict == "certified" or (repaired is None and alpha_n is not None
                                          and alpha_n * max(1.0, w_obj) <= level):
                # a reachable target's run would have passed (its posterior or a-priori
                # theorem, on the runs' and tests' events): the target is below the optimum
                optimum_lower = max(optimum_lower, tau)
                theorem_events += 1
        take(_dual_lower(f, tau, res, rhs_release, test_rho, z_rhs, S, kw, acct, gen, pooled,
                         det.get("T")))
        if s == S - 1:
            take(pooled.lower(f, tau, float(kw["beta"]) / 4))
        runs.append({"tau": tau, "noisy_violation": v, "threshold": thr, "reached": ok,
                     "certified_below": verdict == "certified", "rounds": res.iterations})
    res, det = best
    det = dict(det)
    if bound is not None:
        # w.p. >= 1 - beta over the tests' noise (canonical units, the objective row included)
        det["violation_bound"] = max(bound, 0.0)
        det["tested_after_repair"] = repaired is not None
    det["optimum_lower"] = optimum_lower  # canonical c'x (offset not included)
    # The certificate's events: the tests' noise (one event: z covers every test), the
    # theorem of each run whose rejection raised the lower bound (a union bound; with one
    # run, its theorem alone) and, when a run's averaged loss raised it, the averaged noise
    # of all runs (one event)
    det["search_events"] = 1 + theorem_events + loss_certified
    det.update(objective="private bisection" if S > 1 else
               "not optimised: budget too small for an informative search (pass target=)",
               search_runs=runs, search_steps=S,
               search_share=q, search_tests_per_run=C,
               total_iterations=int(sum(r.get("rounds", det["T"]) for r in runs)),
               rho_per_run=rho * (1 - q) / S, rho_per_test=rho * q / S)
    return res, det


def _dual_lower(f: Any, tau: float, res: Any, rhs_release: bool, test_rho: float,
                z_rhs: float, S: int, kw: dict, acct: Any, gen: np.random.Generator,
                pooled: PooledLoss | None, T_plan: int | None) -> float | None:
    """The run's lower bound on the optimum from its averaged loss
    (:func:`~cvxdp.solvers.mwu.dual_bound.averaged_loss_lower`), its noise bound at ``beta /
    (4 S)``; with private right-hand sides among the chosen rows, ``y'h`` is released first
    (Gaussian, sensitivity ``sum_i y_i dh_i`` with ``y`` released, at one test's budget) and
    bounded above on an event of ``beta / (2 S)``.  The run also joins ``pooled`` (its
    planned rounds ``T_plan`` fix its rounds' weight)."""
    loss = res.info.get("loss_sum")
    noise = res.info.get("row_noise")
    upper = None
    sens_h = rhs_sensitivity(f, res.chosen)
    if loss is not None and sens_h > 0 and rhs_release:
        sig_h = sens_h / math.sqrt(2 * test_rho)
        acct.spend(gaussian_record(
            sigma=sig_h, sensitivity=sens_h, mechanism="gaussian",
            note="right-hand side of a run's averaged loss (objective search)"))
        upper = chosen_average(f.h, res.chosen) + gen.normal(0.0, sig_h) + z_rhs * sig_h
    if pooled is not None:
        pooled.add(f, res.chosen, loss, res.iterations, int(T_plan or 0), noise, upper)
    if loss is None or (sens_h > 0 and upper is None):
        return None
    return averaged_loss_lower(f, tau, res.chosen, loss, res.iterations, noise,
                               float(kw["beta"]) / (4 * S), rhs_upper=upper)


class _Checkpoints:
    """The run's checkpoint (see :func:`cvxdp.solvers.mwu.mwu.scmwu`): at the first block
    past ``T / 64``, ``T / 16`` and ``T / 4`` it makes the run's noisy test of the average so
    far and ends the run when the test decides (accepts, or certifies the target below the
    optimum; ``value`` keeps the decision).  Which tests are made depends on released values
    only.  :func:`cvxdp.solvers.mwu.private_scp._run` hands it AdaHedge's posterior bound
    (``plan``)."""

    def __init__(self, C: int, decide: Any) -> None:
        self.left = C - 1
        self.decide = decide
        self.posterior: Any = None
        self.value: tuple | None = None

    def plan(self, posterior: Any) -> None:
        self.posterior = posterior

    def __call__(self, t: int, T: int, xsum: np.ndarray, delta: float) -> bool:
        if self.left <= 0 or t < T // 4 ** self.left:
            return False
        self.left -= 1
        out = self.decide(xsum / t, t, delta, self.posterior)
        if out[0] is not None:
            self.value = out
            return True
        return False


def _threshold(margin: float, sig: float, z: float) -> float:
    """Acceptance threshold of a test with noise ``sig``: the released value must prove the
    margin (``v + z sig <= margin``) when the test resolves it (``margin >= 2 z sig``); else
    the level the test can resolve, ``max(margin, 2 sig) + z sig`` (not certified within it)."""
    return margin - z * sig if margin >= 2 * z * sig else max(margin, 2 * sig) + z * sig


def _repaired_test(form: Any, scp: Any, row_private: np.ndarray, solver: Any) -> Any:
    """``measure(z, tau) -> (violation, sensitivity)`` of the public repair of the MWU point
    ``z`` (canonical units: the private rows' violation and twice the objective's excess over
    ``tau``), or None when the repair cannot move the point (no public row is left among the
    MWU's rows) or a private row is not an LP row.

    The released point is the repair of the run's average (:func:`public_part.public_repair`,
    public data only), which moves the private rows; testing the repaired point makes the
    test's bound hold for what is released.  The sensitivity of row ``i`` at ``x`` is
    ``dA_i . |x| + db_i`` (entrywise bounds), a public function of the released point.
    """
    d = scp.dims
    priv = np.flatnonzero(row_private)
    public_mwu_rows = ((np.diff(sp.csr_matrix(form.dG).indptr) == 0) & (form.dh == 0)
                       & (form.kinds != "target"))
    if priv.size == 0 or np.any(priv >= d.zero + d.nonneg) or not public_mwu_rows.any():
        return None
    A = sp.csr_matrix(scp.A)[priv]
    b = np.asarray(scp.b, dtype=float)[priv]
    dA = abs(sp.csr_matrix(scp.sensitivity.A))[priv]
    db = np.asarray(scp.sensitivity.b, dtype=float)[priv]
    eq = priv < d.zero

    project = public_part.PublicProjector(scp.A, scp.b, scp.dims, row_private, solver)

    def measure(z: np.ndarray, tau: float) -> tuple[float, float]:
        x, _, _ = project(form.to_scp_point(z), tol=1e-7)
        r = A @ x - b
        r = np.where(eq, np.abs(r), r)
        v = max(float(np.max(r)), 2.0 * (float(scp.c @ x) - tau))
        return v, float(np.max(dA @ np.abs(x) + db))

    return measure


def search_steps(width: float, accuracy: float) -> int:
    """Runs of the objective search: the feasibility run plus enough bisection steps that the
    last bracket, ``width / 2^(S - 1)``, is at most half the judged ``accuracy``.

    ``width`` is the public range of the objective (canonical units) and ``accuracy`` the
    absolute accuracy the answer is judged against (the relative gap divides by
    ``max(1, |f*|) >= 1``, so an absolute gap of ``accuracy`` suffices); the other half of the
    accuracy is left to the runs' own error.  At least 6 (the earlier fixed count), at most
    :data:`MAX_SEARCH_STEPS`.
    """
    if not (math.isfinite(width) and width > 0):
        return 6
    steps = 1 + math.ceil(math.log2(2.0 * width / accuracy))
    return int(min(MAX_SEARCH_STEPS, max(6, steps)))


def trace_set_only(form: Any) -> bool:
    """True when the MWU form's public part is exactly ``{z in K, tr z = R}``: the trace is a
    public equality (``R`` exact) and every row left in ``G`` carries private data."""
    return (form.info.get("w_coord") is None and form.R >= 0
            and int(form.info.get("private_rows", -1)) == int(form.G.shape[0]))


