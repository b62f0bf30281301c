"""The differentially private John ellipsoid (proven DP; ``preset="paper"`` refused, see below).

What is protected.  Neighbours are eps0-close constraint matrices: same n, same row order, ONE row
moves by at most ``closeness`` = eps0 in l2 (Def 1.2 of the paper, read by rows).  A small change of
one row's values is hidden; membership of a row is NOT (n and the indexing are public), and the
per-row weights v still show which rows are near-binding.  A change of size D > eps0 is covered by
group privacy over ceil(D/eps0) steps only.

Default algorithm (``preset="default"``, guarantee ``"dp"``; every decision is a function of
public numbers and earlier releases, derived in ``docs/john.md`` "Decisions" and coded in
:mod:`cvxdp.geometry.john.john_select`):

0. Data outside the public domain are mapped into it record by record, never refused (a refusal
   is a function of the data and leaks a bit): a row with a non-finite entry becomes the zero row,
   a row longer than the public R is scaled to norm R (projection on the ball, 1-Lipschitz, so
   neighbours stay eps0-close).  The number of such rows is private; ``count_clipped=True``
   releases it as a noisy count (:func:`cvxdp.privacy.clipping.noisy_count`, Gaussian) charged
   to the same budget.  No property of the whole matrix (rank, ``sigma_min``) is checked: the
   eigenvalue floor the sensitivity proof needs is enforced by a public ridge.
1. Release the uniform-weights Gram matrix ``Q0 = (d/n) A'A + Z0`` (Frobenius sensitivity
   ``2 R eps0 d/n``) at 5% of mu^2, then top it up (inverse-variance combination) to the share
   that minimises the largest regret over the unknown gap between uniform weights and John
   (``uniform_share``); when that share is everything Q0 and the iterations may use, there is
   no iteration.
2. Release the support scale of ``Q0`` (``max_i ||Q0^{-1/2} a_i||`` + noise, sensitivity
   ``eps0 / sqrt(lambda_min(Q0))``).
3. The ridge minimises a loss model (``balanced_ridge``; or ``ridge=``/``sigma_min=``).  When the
   released scale of Q0 is so noisy that no candidate could be certainly better than it
   (``-log(1 - z sigma/s) >= 1/2 log d + log s``), there is no iteration either and the rest of
   the budget goes to Q0.  Without iteration the same holds when no scale released in that
   branch can change the answer (D3': the ball cannot win even with the uniform weights' scale
   at its largest share there, and no second uniform-weights release can be scored).
4. Otherwise ``w_1 = d/n``; for k = 1..T: release
   ``htilde_k = h(w_k, A) + N(0, sigma_h^2 I_n)`` with ``h_i = a_i'(A'W_kA + lam I)^{-1} a_i``
   (exact leverage ratios), then ``w_{k+1} = clip(w_k * max(htilde_k, 0), [w_min, 1])`` --
   post-processing.  This is the paper's multiplicative update ``wbar (1 + z)`` with the noise
   moved onto h additively so that the Gaussian mechanism applies (docs/john.md, deviation 2).
5. ``u = mean(w_1..w_T)``, ``v = d u / sum u``; ``Q = A'VA + Z + lam (d / sum u) I`` (A'VA reads
   A again: own noise (deviation 4); the ridge term is post-processing).
6. Selection (``john_select.choose``): release the support scales of ``Q`` and of the ball
   ``{||x|| <= 1/s}`` (the iteration's limit as the ridge grows); a candidate replaces the
   uniform weights only when the lower confidence bound of its fitted log volume
   ``log vol(E_c) - d log s_c`` beats the uniform weights' upper one (``z = z_{1 - failure/6}``).
7. Release the winner scaled to contain the largest copy of its shape inside the polytope (by
   the lower confidence bound of its scale), or, ``inscribed=True``, scaled by the upper bound
   ``1/(s_c + z sigma_c)``: inside the polytope of the CLIPPED rows with probability
   ``>= 1 - failure`` (:data:`INSCRIBED_GUARANTEE`).

Every noisy output of a mechanism passes through :func:`released` (the identity); everything the
solution carries (value, weights, ellipsoid, info, report) is computed from those outputs and
public numbers only, which ``tests/geometry/john/test_john_release.py`` checks by replaying
them on a neighbouring dataset.

Accounting: every release is a Gaussian mechanism whose l2 sensitivity is a public bound
(:mod:`cvxdp.geometry.john.john_sensitivity`; 1 for the count); their adaptive composition is
exactly ``mu``-Gaussian-DP with ``mu^2 = sum_k (Delta_k / sigma_k)^2`` (Dong, Roth & Su 2022, Cor
3.3), and mu-GDP is exactly the analytic Gaussian with sensitivity/sigma = mu (Balle & Wang 2018,
Thm 8).  ``mu`` is found from (epsilon, delta) by the exact calibration, then split: 5% of mu^2 to
Q, 7.5% to each of the three scales, ``count_clipped`` (True: 10%) to the count (when asked), the
share ``s0`` (>= 5%) of step 1 to Q0, the rest to the T iterations (equal).  Without iteration
the shares of the iterations and of Q go to Q0 and to the scales.  Every share, the ridge and
every decision are functions of the budget, the sizes, the public bounds and earlier releases
only (adaptive composition covers them); the record lists the mu of every mechanism run.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from cvxdp.citations import ANALYTIC_GAUSSIAN, GDP_COMPOSITION, JOHN_ELLIPSOID
from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.john import clipped_rows, map_into_domain
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.geometry.john.core import clip_into_domain
from cvxdp.geometry.john.john_args import (
    flag,
    positive,
    probability,
    ridge_argument,
    total_mu,
)
from cvxdp.geometry.john.john_iter import iterations_for, uniform_weights
from cvxdp.geometry.john.john_paper import paper_john, refuse_paper_preset
from cvxdp.geometry.john.john_select import (
    GRAM_SCHEDULES,
    INSCRIBED_GUARANTEE,
    balanced_ridge,
    choose,
    gain_bound,
    predicted_loss,
    release_winner,
    shifted_gram,
    uniform_gap_max,
    uniform_share,
    z_level,
)
from cvxdp.geometry.john.john_sensitivity import gram_sensitivity, leverage_ratio_sensitivity
from cvxdp.geometry.john.private_iterate import iterate
from cvxdp.geometry.john.release import JohnPrivateSolution, finish, validate
from cvxdp.geometry.john.uniform_release import (
    Run,
    combine,
    released_eigs,
    scales_can_matter,
    second_uniform,
    uniform_only,
    without_iteration,
)
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import resolve_budget
from cvxdp.privacy.clipping import count_share, noisy_count
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.privacy.rng import as_generator

if TYPE_CHECKING:  # annotations only: the problem class imports this module, not back
    from cvxdp.geometry.john.john import JohnEllipsoidProblem

__all__ = ["JohnPrivateSolution", "private_john", "validate", "released", "public_domain",
           "INSCRIBED_GUARANTEE"]

PAPER = JOHN_ELLIPSOID
GDP_REFERENCE = f"{GDP_COMPOSITION}; {ANALYTIC_GAUSSIAN} (mu-GDP <-> (eps, delta))"
#: shares of mu^2: uniform-weights Gram Q0, final Q, scale (inscribed only); the rest: iterations
SHARE_UNIFORM, SHARE_GRAM, SHARE_SCALE = 0.05, 0.05, 0.075
#: default share of mu^2 for the noisy clipped-row count (``count_clipped=True``)
SHARE_COUNT = 0.10
#: weight floor w_min = FLOOR_FACTOR * d / n (public)
FLOOR_FACTOR = 0.1

def released(value: Any) -> Any:
    """A mechanism's noisy output, on its way out (the identity).

    Every value that leaves a mechanism of this module passes through here, and nothing else
    computed from the data reaches the solution; the release test replays these outputs on a
    neighbouring dataset and checks that the whole solution is unchanged.
    """
    return value


def public_domain(A: np.ndarray, row_bound: float) -> tuple[np.ndarray, int]:
    """Map the rows of A into the public domain ``{||a|| <= R}``, record by record.

    A row with a NaN or inf entry becomes the zero row (its constraint is dropped); a row longer
    than R is scaled to norm R (:func:`cvxdp.privacy.clipping.clip_rows_l2`, the projection on the
    ball, 1-Lipschitz: eps0-close neighbours stay eps0-close).

    Returns
    -------
    clipped : ndarray (n, d)
    count : int
        Rows changed.  PRIVATE: released only through ``noisy_count`` (``count_clipped=True``).
        For a Dask ``A`` the mapping is lazy (block by block on the workers, the same function)
        and the count a reduce.
    """
    if is_dask(A):
        return map_into_domain(A, row_bound), clipped_rows(A, row_bound)
    return clip_into_domain(A, row_bound)


def private_john(problem: JohnEllipsoidProblem, *, epsilon: float | None = None,
                 delta: float | None = None, rho: float | None = None, accuracy: float = 0.1,
                 closeness: float | None = None, row_bound: float | None = None,
                 sigma_min: float | None = None, ridge: float | None = None,
                 rng: Any = None, reference: bool = False, inscribed: bool = False,
                 failure: float = 1e-3, preset: str = "default",
                 iterations: int | None = None, count_clipped: bool | float = False,
                 unsafe_paper_preset: bool = False) -> JohnPrivateSolution:
    """Differentially private John ellipsoid of ``{x : |A x| <= 1}``.

    Parameters
    ----------
    epsilon, delta, rho : float
        Budget: (epsilon, delta) with delta > 0, or rho (zCDP).
    accuracy : float
        xi: T = ceil(log(n/d)/log(1+xi)) iterations (Lemma 7.1); the noise adds to this error.
    closeness : float
        eps0 (public, required): one row moves by at most eps0 in l2.
    row_bound : float
        R (public, required): rows longer than R are clipped to norm R (not refused); rows with a
        non-finite entry are zeroed.  ``count_clipped=True`` tells, noisily, how many.
    sigma_min : float, optional
        Public number; adds ``w_min sigma_min^2`` (``w_min = 0.1 d/n``) to the ridge.  It is not
        checked against the data (a data-dependent refusal would leak), so the guarantee holds
        for every A; when the data do have ``sigma_min(A) >= sigma_min`` the added ridge is at
        most the weight floor's share of ``lambda_min(A'WA)``.
    ridge : float, optional
        Regulariser in ``A'WA + ridge I`` (> 0, public).  Default (neither ``ridge`` nor
        ``sigma_min``): :func:`~cvxdp.geometry.john.john_select.balanced_ridge` from public
        numbers and the released uniform-weights Gram matrix; ``info["ridge_source"]`` says
        which.
    rng : None, int or Generator
    reference : bool
        Also solve exactly (NOT private) and fill ``validation``.
    inscribed : bool
        Privately rescale E into the polytope of the clipped rows (probability >= 1 - failure);
        the scale and the exact guarantee (:data:`INSCRIBED_GUARANTEE`) are in ``info``.
    failure : float
        Probability in (0, 1) with which the confidence bounds of the released scales may fail
        (the selection's guarantee and the inscribed scaling).
    preset : {"default", "paper"}
        "paper": Algorithm 1 as printed (multiplicative truncated noise, data-dependent L, A'VA
        without noise). It is NOT differentially private and is refused with
        :class:`~cvxdp.errors.PrivacyGuaranteeError` unless ``unsafe_paper_preset=True``.
    iterations : int, optional
        Override T.
    count_clipped : bool or float
        Opt-in: also release the number of rows clipped or zeroed, plus Gaussian noise of
        standard deviation ``info["sigma_count"]``, in ``info["clipped_rows_noisy"]``.  Charged
        to the same budget: ``True`` takes :data:`SHARE_COUNT` (10%) of mu^2 from the
        iterations, a float in (0, 0.5] that share.  Default ``False``: nothing about the count
        is released.
    unsafe_paper_preset : bool
        Run ``preset="paper"`` anyway, for comparison: the report then says
        ``guarantee="none"``, ``epsilon=inf``, and an ``UnsafePrivacyWarning`` is raised.  Has no
        effect on the default preset.

    Returns
    -------
    JohnPrivateSolution
        ``info["selected"]``: the released candidate (``"uniform"``, ``"private"``, ``"ball"``);
        ``info["fallback"]``: None, or why the iteration was not run (``iterations == 0``)
        and/or why uniform weights were kept; ``info["scale"]``: the factor applied to the
        candidate (it contains the largest copy of its shape inside the polytope, or, with
        ``inscribed``, lies inside); default: ``info["scale_bound"]``, the lower bound on the
        candidate's scale it is 1 over (``"released scale"``, ``"mean leverage"``, or
        ``"none"``: nothing released bounds it, ``scale`` is 1e12).

    Raises
    ------
    BudgetError, PrivacySpecError, PrivacyGuaranteeError
        Decided from the arguments and the shape of A only, never from its values.

    References
    ----------
    Gu et al. (2024): Algorithm 1 (Fast DP-JE), Thm 4.1, Thm 5.1/C.15
    (Lipschitz), Thm 6.7/D.7 (privacy), Lemma 7.1 (convergence).  See the module docstring for the
    deviations (docs/john.md, "Deviations from the paper") and their proofs.
    """
    t0 = time.perf_counter()
    budget = resolve_budget(epsilon=epsilon, delta=delta, rho=rho)
    eps0 = positive("closeness", closeness, "the l2 distance one row may move (eps0 > 0)")
    R = positive("row_bound", row_bound, "the public bound R >= every row norm")
    if not (0 < accuracy < 1):
        raise PrivacySpecError(f"accuracy={accuracy!r}: accuracy must be in (0, 1).")
    inscribed = flag("inscribed", inscribed)
    unsafe_paper_preset = flag("unsafe_paper_preset", unsafe_paper_preset)
    failure = probability("failure", failure)
    if preset == "paper":
        if not unsafe_paper_preset:
            raise refuse_paper_preset()
        return paper_john(problem, budget=budget, accuracy=accuracy, closeness=eps0,
                          rng=as_generator(rng), reference=reference, t0=t0)
    if preset != "default":
        raise PrivacySpecError(f"preset must be 'default' or 'paper', got {preset!r}.")
    share_c = count_share(count_clipped, default=SHARE_COUNT, at_most=0.5)
    if reference and is_dask(problem.data):
        raise UnsupportedProblemError(
            "reference=True needs the exact conic solve, which needs A in memory; on a Dask "
            "array solve_private runs without it (chunk-wise, nothing of the data is gathered).")
    gen = as_generator(rng)
    n, d = problem.data.shape
    w_min = FLOOR_FACTOR * d / n
    user_ridge = ridge_argument(ridge, sigma_min, w_min)
    if user_ridge is not None and user_ridge <= 0:
        raise PrivacySpecError(
            "no public lower bound on lambda_min(A'WA): pass sigma_min= > 0 or ridge= > 0, or "
            "leave both unset for the automatic ridge.")
    T = iterations if iterations is not None else iterations_for(n, d, accuracy)
    mu = total_mu(budget)
    mu_s = mu * math.sqrt(SHARE_SCALE)  # one scale per candidate
    z = z_level(failure, 6)  # upper and lower bounds on three released scales
    free = 1 - SHARE_GRAM - 3 * SHARE_SCALE - share_c  # for Q0 and the T iterations
    Tq = max(T, 1)
    # -- the data are read from here on; nothing below raises on their values ------------------
    A, n_clipped = public_domain(problem.data, R)  # n_clipped is private
    run = Run(A=A, gen=gen, release=released, eps0=eps0, R=R, mu=mu, mu_s=mu_s, z=z,
              w_unif=uniform_weights(A),  # on the workers for a Dask A
              delta_0=gram_sensitivity(closeness=eps0, row_bound=R, max_weight=d / n))
    delta_0 = run.delta_0
    # Q0: the uniform-weights Gram matrix (the fallback and the data's scale), first at the
    # share SHARE_UNIFORM, then topped up to the share john_select.uniform_share derives; the
    # candidate is the release shifted by its noise's typical size (john_select.noise_shift)
    mu_0 = mu * math.sqrt(SHARE_UNIFORM)
    G0 = run.gram_release(mu_0)
    eigs = released_eigs(shifted_gram(G0, R, delta_0 / mu_0)[0], R)  # public

    def sensitivity_h(lam: float) -> float:
        return leverage_ratio_sensitivity(n=n, closeness=eps0, row_bound=R, weight_floor=w_min,
                                          eig_floor=lam)

    def iterate_loss(mu_step: float, proxy: np.ndarray) -> tuple[float, float]:
        """(ridge, predicted loss of the iterate) at a per-step mu (public)."""
        if user_ridge is not None:
            return user_ridge, predicted_loss(sigma_h=sensitivity_h(user_ridge) / mu_step,
                                              ridge=user_ridge, eigs=proxy, accuracy=accuracy)
        return balanced_ridge(lambda lam: sensitivity_h(lam) / mu_step, eigs=proxy,
                              accuracy=accuracy, R=R)

    # the gap of uniform weights is at most log s0 <= 1/2 log(n/d) (john_select.uniform_gap_max:
    # the John weights are a D-optimal design, so det Q* >= det Q0; s0^2 <= n/d: leverage
    # scores are <= 1); T < 1: nothing to iterate, all to Q0
    share_0 = free if T < 1 else uniform_share(
        gram_loss=math.sqrt(2 * d) * delta_0 / float(eigs[0]), mu=mu, free=free,
        first=SHARE_UNIFORM, iterate=lambda m: iterate_loss(m / math.sqrt(Tq), eigs)[1],
        gap_max=uniform_gap_max(n, d), gram_share=SHARE_GRAM)
    if share_0 > SHARE_UNIFORM:  # inverse-variance combination: one release at mu^2 share_0
        mu_b = mu * math.sqrt(share_0 - SHARE_UNIFORM)
        G0, _ = combine(G0, mu_0, run.gram_release(mu_b), mu_b)
        mu_0 = mu * math.sqrt(share_0)
    Q0, shifts = shifted_gram(G0, R, delta_0 / mu_0)
    eigs = released_eigs(Q0, R)
    share_h = free - share_0
    mu_h = mu * math.sqrt(max(share_h, 0.0) / Tq)
    uni = run.score("uniform", Q0, run.w_unif, G0, mu_s, gram_sigma=delta_0 / mu_0,
                    schedules=GRAM_SCHEDULES)
    # the fitted uniform-weights ellipsoid E(Q0) / s0 (inside P) stands in for the John
    # ellipsoid: its matrix s0^2 Q0 has eigenvalues s0^2 q_j
    fitted_eigs = eigs * max(uni.scale, 1.0) ** 2
    if share_h > 0:
        lam_ridge, predicted = iterate_loss(mu_h, fitted_eigs)
        delta_h = sensitivity_h(lam_ridge)
        sigma_h = delta_h / mu_h
    else:  # the whole free share went to Q0: no iteration
        lam_ridge, predicted, delta_h, sigma_h = user_ridge, math.inf, None, None
    # whether to iterate: public numbers and releases only (docs/john.md, "Decisions")
    gain = gain_bound(d, uni.scale + z * uni.sigma)
    margin = uni.relative_noise(z)
    info: dict[str, Any] = {"method": "private-leverage", "preset": "default",
                            "weight_floor": w_min, "ridge": lam_ridge, "eig_floor": lam_ridge,
                            "ridge_source": "auto" if user_ridge is None else "user",
                            "scale_estimate": float(eigs[0]), "sensitivity_h": delta_h,
                            "mu": mu, "row_bound": R, "gain_bound": gain,
                            "predicted_loss": predicted, "uniform_margin": margin,
                            "share_uniform": share_0,
                            "noise_shift": (float(shifts.min()), float(shifts.max()))}
    mus = {"mu_uniform": mu_0, "mu_scale": mu_s}
    candidates = None
    no_iteration = T < 1 or share_h <= 0
    extra = mu * math.sqrt(SHARE_GRAM + SHARE_SCALE)  # the iterate's unspent Gram and scale
    second = (second_uniform(run, uni, G0, gain=gain, extra=extra, floor=float(shifts.min()))
              if no_iteration else None)
    why_not = ("no iteration: " + ("iterations=0" if T < 1 else
                                   "the uniform weights' noise would cost more than the "
                                   "iterate can gain (minimax regret over their gap to the "
                                   "John ellipsoid, john_select.uniform_share)") + "; "
               if no_iteration else "")
    if no_iteration and scales_can_matter(run, uni, second, gain=gain, extra=extra):
        T = 0  # uniform_release.without_iteration
        winner, note, candidates, mu_scales = without_iteration(run, uni, G0, Q0, second=second,
                                                                extra=extra)
        mus.update(mu_scale=mu_scales)
        info.update(iterations=0, fallback=(
            why_not + "the iterations' budget went to the uniform-weights release."))
    elif no_iteration or margin >= gain:  # D3 / D3': no candidate can win (uniform_only)
        T = 0
        uni, mu_0, mu_s2, shifts = uniform_only(
            run, uni, G0, mu_0, rest=mu * math.sqrt(1 - share_0 - SHARE_SCALE - share_c),
            inscribed=inscribed)
        mus.update(mu_uniform=mu_0, mu_scale=math.hypot(mu_s, mu_s2))
        info.update(iterations=0, noise_shift=(float(shifts.min()), float(shifts.max())),
                    fallback=(
            why_not + "uniform weights w = d/n: the released scale of the uniform-weights "
            f"ellipsoid is too noisy for any candidate to be certainly better (margin "
            f"{margin:.3g} at this release; largest possible gain {gain:.3g} per dimension"
            + (", and no second uniform-weights release can be scored usefully" if no_iteration
               else "") + "); the unspent budget went to the uniform-weights release."))
        winner, note = choose(uni, [])
    else:  # the private iteration (private_iterate.iterate)
        pri, ball, fields = iterate(run, T=T, ridge=lam_ridge, sigma_h=sigma_h, w_min=w_min,
                                    mu_gram=mu * math.sqrt(SHARE_GRAM), uniform=uni)
        info.update(fields)
        mus.update(mu_iterations=mu_h * math.sqrt(T), mu_gram=mu * math.sqrt(SHARE_GRAM),
                   mu_scale=mu_s * math.sqrt(3))
        winner, note = choose(uni, [pri, ball])
        candidates = (uni, pri, ball)
    E, v = release_winner(winner, candidates, note, z=z, inscribed=inscribed, failure=failure,
                          info=info)
    info["sigma_uniform"] = delta_0 / mus["mu_uniform"]
    if share_c > 0:
        mu_c = mu * math.sqrt(share_c)
        # Gaussian count, sensitivity 1 (one row moves): sigma = 1/sqrt(2 rho) = 1/mu_c
        c_noisy, c_rec = noisy_count(n_clipped, rng=gen, rho=mu_c * mu_c / 2,
                                     what="rows clipped to row_bound or zeroed (non-finite)")
        info.update(clipped_rows_noisy=released(c_noisy), sigma_count=c_rec.params["sigma"])
        mus["mu_count"] = mu_c
    mu_used = math.sqrt(sum(m * m for m in mus.values()))
    acct = PrivacyAccountant(budget)
    acct.spend(gaussian_record(
        sigma=1.0, sensitivity=mu_used, mechanism="gaussian-composition(john)",
        delta=getattr(budget, "delta", None), reference=GDP_REFERENCE, count=1,
        steps=T, sensitivity_h=delta_h, sigma_uniform=info["sigma_uniform"],
        **({} if T == 0 else {"sigma_h": sigma_h, "sigma_q": info["sigma_q"]}), **mus))
    report = acct.report(
        theorem=(f"{PAPER}, Alg 1 with additive Gaussian on exact leverage ratios; public "
                 "sensitivity (cvxdp.geometry.john.john_sensitivity) replaces Thm 5.1's L; GDP "
                 "composition"),
        neighbouring=(f"eps0-close rows: one row moves by <= {eps0:g} in l2 (n, order public); "
                      f"rows clipped to norm {R:g}, non-finite rows zeroed"),
        details=info)
    return finish(problem, E, report, weights=v, iterations=T, t0=t0, info=info,
                  reference=reference)

