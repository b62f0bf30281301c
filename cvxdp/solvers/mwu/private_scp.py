"""Private symmetric cone programs by noisy-oracle MWU: constraint and scalar privacy.

From Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
Applications to Private Symmetric Cone Programming":

* :func:`constraint_private_mwu` -- low-sensitivity constraint privacy (Alg 1, Thms C.7/C.9):
  exponential-mechanism dual oracle + EJA Gaussian noise on the chosen row.
* :func:`scalar_private_mwu` -- scalar (right-hand side) privacy (Thm C.5): exponential-
  mechanism oracle only.

The schedule (T, eta, the split of each round's budget) is :mod:`cvxdp.solvers.mwu.schedule`;
objective privacy (Thm C.12) is :mod:`cvxdp.solvers.mwu.objective_release`.  Both are
re-exported here.

Accounting (tighter than the paper, never looser): each round is accounted in zCDP (exponential
mechanism with parameter e: ``e^2/8``; Gaussian step: ``D^2 / (2 sigma^2)``), rounds are added,
and the total is converted once with the CKS bound.  The per-round parameters are solved so that
the total *exactly* meets the user's budget; the paper's advanced-composition noise is reported
beside ours in ``privacy.details``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.citations import (
    EJA_GAUSSIAN,
    SCP_CONSTRAINT_PRIVACY,
    SCP_SCALAR_PRIVACY,
    ZCDP_GAUSSIAN,
)
from cvxdp.errors import (
    BudgetError,
)
from cvxdp.privacy.accountant import (
    PrivacyAccountant,
)
from cvxdp.privacy.budgets import ApproxDP, Budget
from cvxdp.privacy.inversion_sampler import inversion_float_delta
from cvxdp.privacy.mechanisms import (
    exponential_record,
    gaussian_record,
)
from cvxdp.solvers.mwu.loop import RowGaussianNoise
from cvxdp.solvers.mwu.mwu import MWUResult, scmwu
from cvxdp.solvers.mwu.mwu_form import MWUForm
from cvxdp.solvers.mwu.objective_release import objective_private_solve
from cvxdp.solvers.mwu.oracles import exponential_oracle
from cvxdp.solvers.mwu.schedule import (
    ROUND_WORK_CAP,
    RowSens,
    Schedule,
    average_excess,
    iteration_cap,
    paper_alpha,
    plan_schedule,
    posterior_alpha,
    row_sensitivities,
    total_rho,
)
from cvxdp.status import DEFAULT_ACCURACY

__all__ = ["Schedule", "row_sensitivities", "plan_schedule", "constraint_private_mwu",
           "scalar_private_mwu", "objective_private_solve", "total_rho", "paper_alpha",
           "iteration_cap", "ROUND_WORK_CAP", "average_excess"]

ALG1 = SCP_CONSTRAINT_PRIVACY
THM_C5 = SCP_SCALAR_PRIVACY


def _noise_fn(sens: RowSens, sigma_unit: float, phi_scale: np.ndarray) -> RowGaussianNoise:
    """Gaussian noise on the chosen row's private coordinates (in dual coordinates).

    Draws ``nu ~ N(0, (sigma_unit * D2_p)^2)`` in phi-coordinates on the support of row p and maps
    it to dual coordinates (``g = phi_scale * nu``): the EJA Gaussian mechanism of Song, Xue &
    Zhang 2025, Lemma 4.2 restricted to the coordinates that can differ between neighbours
    (:class:`cvxdp.solvers.mwu.loop.RowGaussianNoise`, which the batched loop draws a block of
    rounds at a time).
    """
    return RowGaussianNoise(support=sens.support, d2=sens.d2, sigma_unit=float(sigma_unit),
                            phi_scale=phi_scale)


def _details(setting: str, sch: Schedule, sens: RowSens, form: MWUForm, budget: Budget,
             rho: float | None, beta: float) -> dict[str, Any]:
    scale = form.R * form.rho
    out: dict[str, Any] = {
        "setting": setting, "T": sch.T, "eta": sch.eta, "beta": beta,
        "rho_total": rho, "rho_per_round": None if rho is None else rho / sch.T,
        "oracle_share": sch.split, "epsilon_oracle": sch.epsilon_oracle,
        "score_sensitivity": sens.score * scale,
        "sigma": sch.sigma_unit * float(np.max(sens.d2)) * form.rho if sch.sigma_unit else 0.0,
        "l2_sensitivity": float(np.max(sens.d2)) * form.rho if sens.d2.size else 0.0,
        "trace_bound": form.R, "width": form.rho, "rank": form.algebra.rank,
        "dim": form.algebra.dim, "constraints": form.m,
    }
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        e, d, T = budget.epsilon, budget.delta, sch.T
        if setting == "constraint":
            ep = e / (4.0 * math.sqrt(T * math.log(1.0 / d)))
            sp_ = (float(np.max(sens.dinf)) * form.rho
                   * math.sqrt(2 * form.algebra.rank * math.log(1.25 * T / d)) / ep)
            out.update(paper_epsilon_prime=ep, paper_sigma=sp_,
                       sigma_ratio_paper_over_cvxdp=sp_ / out["sigma"] if out["sigma"] else None)
        else:
            ep = e / math.sqrt(8.0 * T * math.log(1.0 / d))
            out.update(paper_epsilon_prime=ep)
        out["oracle_epsilon_ratio_cvxdp_over_paper"] = sch.epsilon_oracle / ep
    return out


def _run(setting: str, form: MWUForm, budget: Budget, *, accuracy: float | None, beta: float,
         schedule: str, max_iterations: int, rng: np.random.Generator, verbose: bool,
         accountant: PrivacyAccountant, checkpoint: Any = None
         ) -> tuple[MWUResult, dict[str, Any]]:
    sens = row_sensitivities(form)
    if setting == "constraint" and not np.any(sens.d2 > 0):
        setting_eff = "scalar" if sens.score > 0 else "none"
    else:
        setting_eff = setting
    if sens.score <= 0:
        raise BudgetError("no constraint row carries private data; nothing to protect -- "
                          "check the privacy spec (or solve the model without privacy).")
    # the schedule aims at the requested accuracy, or at the one the status is judged against
    # (the paper's schedule sets T from accuracy= itself and refuses to run without it)
    target = DEFAULT_ACCURACY if accuracy is None and schedule != "paper" else accuracy
    acc_n = None if target is None else target / (form.R * form.rho)
    cap = iteration_cap(form)
    # AdaHedge's step (docs/mwu.md: its regret bound, Golden-Thompson on cone blocks)
    sch = plan_schedule(setting_eff, form, sens, budget, accuracy=acc_n, beta=beta,
                        schedule=schedule, max_iterations=min(int(max_iterations), cap),
                        adaptive=True)
    rho = total_rho(budget)
    accountant.spend(exponential_record(
        epsilon=sch.epsilon_oracle, count=sch.T, sensitivity=sens.score * form.R * form.rho,
        candidates=int(form.G.shape[0]),
        float_delta=inversion_float_delta(candidates=int(form.G.shape[0]),
                                          epsilon=sch.epsilon_oracle)))
    noise = None
    if setting_eff == "constraint":
        accountant.spend(gaussian_record(sigma=sch.sigma_unit, sensitivity=1.0, count=sch.T,
                                         mechanism="eja_gaussian",
                                         reference=EJA_GAUSSIAN + "; Cor 4.4; "
                                                   + ZCDP_GAUSSIAN,
                                         note="sigma per unit of each row's l2 sensitivity"))
        noise = _noise_fn(sens, sch.sigma_unit, form.algebra.phi_scale)
    oracle = exponential_oracle(epsilon=sch.epsilon_oracle, sensitivity=sens.score)
    step = sch.eta * sch.loss_scale
    # The theorem (and AdaHedge's posterior bound) needs every loss in [-1, 1]: rows of norm
    # <= the width after normalisation.  Without a public width= the private rows' width is
    # only assumed (max(1, the public rows' width)): privacy does not depend on it, but no
    # accuracy bound resting on it is claimed.
    width_known = form.info.get("width_private_rows") != "assumed"
    if checkpoint is not None and hasattr(checkpoint, "plan") and sch.adaptive and width_known:
        # the checkpoints may certify an unreachable target from AdaHedge's posterior bound
        checkpoint.plan(lambda t, delta, b: posterior_alpha(sch, sens, form.m, t, delta, step,
                                                            b))
    res = scmwu(form.G, form.h, form.algebra, eta=sch.eta, iterations=sch.T, oracle=oracle,
                rng=rng, loss_scale=sch.loss_scale,
                noise=noise,
                verbose=verbose, adaptive=sch.adaptive, checkpoint=checkpoint)
    res.info["row_noise"] = noise  # the averaged-loss certificate bounds its average
    det = _details(setting_eff, sch, sens, form, budget, rho, beta)
    det["iteration_cap"] = cap
    det["rounds_run"] = res.iterations  # < T when a checkpoint ended the run (records: T)
    det["adahedge_delta"] = res.info.get("delta")
    if sch.adaptive and width_known and res.info.get("delta") is not None:  # for the search
        res.info["posterior"] = (lambda b, t=res.iterations, dl=res.info["delta"]:
                                 posterior_alpha(sch, sens, form.m, t, dl, step, b))
    det["step"] = "AdaHedge (eta_t = ln r / Delta_t)" if sch.adaptive else "fixed eta"
    det["backend"] = res.info.get("backend")
    scale = form.R * form.rho
    # the theorem is about the average of the T planned rounds; a run a checkpoint ended early
    # is certified by that checkpoint's released test only
    valid = bool(sch.valid and width_known)
    det["alpha_guaranteed"] = sch.alpha * scale if valid and res.iterations == sch.T else None
    det["alpha_bound_at_schedule"] = sch.alpha * scale
    det["theorem_conditions_hold"] = valid
    det["width_private_rows"] = form.info.get("width_private_rows", "none private")
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        det["alpha_paper"] = paper_alpha(setting_eff, sens=sens, m=form.m,
                                         r=form.algebra.rank, k=form.algebra.dim,
                                         epsilon=budget.epsilon, delta=budget.delta,
                                         beta=beta) * scale
    return res, det


def constraint_private_mwu(form: MWUForm, budget: Budget, **kw: Any
                           ) -> tuple[MWUResult, dict[str, Any]]:
    """Low-sensitivity constraint-private MWU (Song, Xue & Zhang 2025, Alg 1).

    Each round: the exponential mechanism picks an approximately most violated row (scores
    ``<a_i, x^t> - h_i``, sensitivity ``max_i ||a_i - a'_i||_inf``, Lemma C.8), the chosen row
    is released with EJA Gaussian noise (sensitivity ``||a_p - a'_p||_2``, Lemma 4.2), and the
    loss ``(a_p + z)/2`` enters the cumulative-loss SCMWU.  Privacy: Thm C.7 with zCDP accounting
    (see module doc).  Utility: Thm C.9, restated for general (T, eta, noise):
    ``max_i <a_i, x> - h_i <= (1 + E_z) (eta + ln r / (eta T)) + N + E_o`` (``N`` and ``E_o``
    the noise's and the oracle's errors averaged over the rounds, :func:`_bound`), the loss being
    ``(a_p + z) / (1 + E_z)`` (the paper's ``1/2`` is the case ``E_z = 1``: the halving only
    keeps ``||loss||_inf <= 1`` under noise of norm ``E_z``, Thm C.9 proof step 4).

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Algorithm 1, Theorems C.7 and C.9, Lemma C.8, Lemma 4.2.
    """
    return _run("constraint", form, budget, **kw)


def scalar_private_mwu(form: MWUForm, budget: Budget, **kw: Any
                       ) -> tuple[MWUResult, dict[str, Any]]:
    """Scalar-private MWU (Song, Xue & Zhang 2025, Thm C.5): only the exponential-mechanism oracle
    touches b.

    Utility (Thm C.2 with the oracle error of Lemma C.4 averaged over the rounds, see
    :func:`_bound`): ``eta + ln r/(eta T) + E_o``.

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Algorithm 5, Theorem C.2, Lemma C.4, Theorem C.5.
    """
    return _run("scalar", form, budget, **kw)
