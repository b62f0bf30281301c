"""Private learning of an unrestricted Gaussian: mean and covariance with no a-priori bounds.

:func:`private_gaussian` follows the §5.1 pipeline of Ashtiani & Liaw (one random permutation,
then disjoint index blocks, each step seeing only its block and the earlier *released* outputs):

1. subspace range(Sigma) exactly (Alg. 2, :func:`cvxdp.estimation.wrapper.private_subspace`);
2. covariance inside the subspace;
3. mean inside the subspace in the coordinates whitened by step 2;
4. mean orthogonal to the subspace (Alg. 1 on ``(I - P) x``, an exact-match problem).

Step 2 is where the methods differ:

* ``method="preconditioned"`` (picked by the default ``"auto"`` when n reaches its
  ``required_n``, a public comparison): private preconditioning.  Two rounds of the practical
  covariance step (below), each on its own block, each on the data whitened by the previous
  round's *released* estimate (post-processing: the whitening matrix is public), then the
  practical step and the mean on the data whitened by the last round.  Each round tightens the
  condition number by ~1e6, so errors in the whitened metric no longer depend on it (measured
  flat from 1 to 1e10 at d = 4, 10; Brown, Hopkins & Smith 2023's idea with CoinPress rounds).
  ``"auto"`` falls back to ``"practical"`` below that n.

* ``method="ashtiani-liaw"`` (faithful): Alg. 3 (covariance up to a constant by the populous mean
  in the spectral space, multiplicative mask) then the Thm 5.5 step.  Its constants need
  ~1e16 samples; below that it returns ⊥ (never a silent estimate) and warns.
* ``method="practical"`` (the earlier default; fewer samples): private log-scale
  histograms per coordinate (Karwa & Vadhan style) give a loose upper bound ``A_0 >= Sigma``;
  then a few CoinPress-style refinements
  (Biswas et al. 2020): whiten by the current bound, clip to the chi-square radius, add
  symmetric Gaussian noise to the clipped covariance, tighten the bound.  The last refinement is
  the §3.6 instantiation of Thm 5.5.  Every clipping radius is a function of public values and
  earlier releases only, so each release is an ordinary Gaussian mechanism.

The module-level privacy argument (both methods): each step is (epsilon, delta)-DP w.r.t. its own
block given the earlier releases; replacing one record changes one block (after the shared random
permutation), so by adaptive parallel composition the whole release is (epsilon, delta)-DP under
replace-one with n public (the paper's Def. 2.5 + Remark 2.6; add/remove is *not* covered).

Records outside the public domain (finite rows with entries in ``[-ENTRY_BOUND, ENTRY_BOUND]``)
are mapped into it before step 1, record by record, never refused (a refusal would reveal that
such a record exists): a row with a NaN / inf entry becomes the zero row, and entries beyond
``ENTRY_BOUND`` = 1e100 are clipped to it (pair differences and products of larger entries
overflow float64).  Replace-one neighbours stay replace-one neighbours, so the guarantee holds
for every input; accuracy is about the mapped sample.  The number of mapped records is private:
``count_clipped=`` releases it as a noisy count charged to the same budget.

On a ``dask.array.Array`` the same pipeline (methods ``"practical"`` and ``"preconditioned"``)
runs chunk-wise (:mod:`cvxdp.scale.gaussians`): the permutation of the row indices is drawn on
the client as here and applied by Dask on the workers, every step reads its block through
reductions (histogram counts, clipped sums, second moments, Alg. 1's statistics) and the noise
is drawn here in the same order, so the blocks, the sensitivities and the noise are the numpy
path's and the release equals it up to the order of additions.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np
from scipy import linalg

from cvxdp.errors import BudgetError, UnsupportedProblemError
from cvxdp.estimation.gaussian_bounded import (
    as_bounds,
    bounded_error,
    bounded_release,
    bounded_requirement,
    bounds_margin_ok,
)
from cvxdp.estimation.gaussian_steps import (
    SampleRequirement,
    clipped_mean,
    coarse_schedule,
    coinpress_covariance,
    empirical_validation,
    gaussian_steps_rho,
    layout,
    log_scale,
    robust_covariance_estimator,
    robust_mean_estimator,
    whiten,
)
from cvxdp.estimation.gaussian_steps import required_n as _steps_required_n
from cvxdp.estimation.masking import PAPER, k_min, populous_mean
from cvxdp.estimation.random_projection import count_share
from cvxdp.estimation.row_partition import permuted_blocks
from cvxdp.estimation.rows import ENTRY_BOUND, domain_rows
from cvxdp.estimation.wrapper import EuclideanSpace, private_preconditioner, private_subspace
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.clipping import noisy_count
from cvxdp.privacy.rng import as_generator
from cvxdp.progress import budget_text, verbose_run
from cvxdp.scale import is_dask
from cvxdp.scale.gaussians import (
    dask_populous_mean,
    dask_samples,
    dask_subspace,
    map_into_domain,
    pair_moment,
    refuse_reference,
    refuse_unbounded,
)
from cvxdp.solution import PrivateSolution, ValidationReport
from cvxdp.structured import StructuredProblem
from cvxdp.validation import entry_point

#: largest epsilon private_gaussian takes: the sample-size planner (required_n) evaluates
#: e^(epsilon/2), which overflows a float beyond epsilon ~ 1419; nothing is private long before
GAUSSIAN_EPSILON_MAX = 1e3

__all__ = [
    "GaussianSolution",
    "SampleRequirement",
    "GaussianSampleWarning",
    "private_gaussian",
    "required_n",
    "auto_method",
    "GaussianMLE",
    "gaussian_mle",
    "public_domain",
    "ENTRY_BOUND",
]

METHODS = ("auto", "preconditioned", "practical", "ashtiani-liaw")
NEIGHBOURING = "replace one sample (n public); the sample is randomly permuted first"


class GaussianSampleWarning(UserWarning):
    """n is below what the stated sample-complexity bound asks for."""


# ---------------------------------------------------------------------------------- the learner

@dataclass(repr=False)  # keep PrivateSolution's concise repr
class GaussianSolution(PrivateSolution):
    """Result of :func:`private_gaussian`.

    Attributes
    ----------
    mean : (d,) ndarray or None
        Private mean (None when a private test returned ⊥).
    covariance : (d, d) ndarray or None
        Private covariance, PSD of rank ``rank``.
    rank : int or None
        Dimension of the privately recovered subspace range(Sigma).
    samples_required : SampleRequirement
        What the accuracy bounds ask for (compare with ``n``).
    step_records : dict
        Each step's privacy records (with their lemma citations); the report's ledger holds the
        single parallel-composition record over the steps.
    """

    mean: np.ndarray | None = None
    covariance: np.ndarray | None = None
    rank: int | None = None
    samples_required: SampleRequirement | None = None
    step_records: dict[str, tuple[PrivacyRecord, ...]] = field(default_factory=dict)


def _check_inputs(x: Any, epsilon: float, delta: float, method: str) -> np.ndarray:
    """Public arguments (method, budget, the shape of X); never the values of X."""
    if method not in METHODS:
        raise UnsupportedProblemError(
            f"method must be one of {METHODS}, got {method!r}.")
    budget = ApproxDP(epsilon, delta)  # validates the range
    if budget.delta <= 0:
        raise BudgetError("private_gaussian needs delta > 0: pure DP is impossible for "
                          "unbounded Gaussians (Ashtiani & Liaw §1); pass e.g. delta=1e-6.")
    if is_dask(x):  # stays on the workers (cvxdp.scale.gaussians)
        return dask_samples(x)
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise UnsupportedProblemError(f"X must be an (n, d) array of samples, got shape "
                                      f"{arr.shape}.")
    return arr


def _check_finite(x: np.ndarray, what: str) -> None:
    """For the exact (non-private) computations only: they are undefined on non-finite data."""
    if is_dask(x):
        raise refuse_reference()
    if not np.isfinite(x).all():
        raise UnsupportedProblemError(
            f"X contains NaN or inf; {what} is not private and needs finite samples (drop or "
            "impute those rows).  The private release accepts them (reference=False): it maps "
            "such a row to the zero row.")


@functools.wraps(_steps_required_n)
def required_n(d: int, **kwargs: Any) -> SampleRequirement:
    if kwargs.get("method") == "bounded":
        keep = ("epsilon", "delta", "alpha", "beta", "bounds", "scale", "estimate")
        return bounded_requirement(d, **{k: v for k, v in kwargs.items() if k in keep})
    return _steps_required_n(d, **kwargs)


def public_domain(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Map every sample into the public domain: finite, entries in ``[-ENTRY_BOUND, ENTRY_BOUND]``
    (:func:`cvxdp.estimation.rows.domain_rows`; a Dask ``x`` block by block on the workers).

    Returns
    -------
    mapped : ndarray (n, d)
    count : int
        Rows changed.  PRIVATE: released only through ``noisy_count`` (``count_clipped=``).
    """
    if is_dask(x):  # the same map, block by block on the workers
        return map_into_domain(x)
    return domain_rows(x)


def _pairs(x: np.ndarray) -> np.ndarray:
    h = len(x) // 2
    return (x[:h] - x[h: 2 * h]) / math.sqrt(2.0)


@entry_point(epsilon_max=GAUSSIAN_EPSILON_MAX)
def private_gaussian(
    X: Any,
    *,
    epsilon: float,
    delta: float,
    rng: None | int | np.random.Generator = None,
    robust: bool = False,
    method: str = "auto",
    contamination: float = 0.05,
    alpha: float = 0.2,
    beta: float = 0.1,
    iterations: int | None = None,
    tol: float = 1e-9,
    c1: float = 3200.0,
    reference: bool = False,
    count_clipped: bool | float = False,
    bounds: Any = None,
    estimate: str = "both",
    verbose: bool = False,
) -> GaussianSolution:
    """(epsilon, delta)-DP mean and covariance of a Gaussian sample, with no bounds asked.

    Parameters
    ----------
    X : (n, d) array
        i.i.d. samples of N(mu, Sigma); mu and Sigma (possibly singular) are unrestricted.
        A row with a NaN / inf entry is mapped to the zero row and entries beyond
        :data:`ENTRY_BOUND` are clipped to it (:func:`public_domain`), never refused.
    epsilon, delta : float
        Guarantee of the whole release under replace-one (n public); delta > 0 is required.
    rng : None, int or Generator
    robust : bool
        Use the robust Algs 4-5 (Sigma > 0, a ``contamination`` fraction may be adversarial).
        Only the faithful constants exist for them: they return ⊥ below ``required_n`` (~1e17).
    method : {"auto", "preconditioned", "practical", "ashtiani-liaw"}
        Covariance step: ``"auto"`` (default) is :func:`auto_method` (public values only):
        ``"preconditioned"`` (affine-invariant in accuracy) when n reaches its ``required_n``,
        else ``"practical"`` (log-scale histograms + CoinPress; accurate while the condition
        number is below ~1e6 / (4 d)^2 ... 1e6); ``"ashtiani-liaw"``: the paper's Alg. 3
        (⊥ below ~1e16 samples).
    alpha, beta : float
        Accuracy target and failure probability used for ``samples_required``, the clipping
        radii and the noise-norm bounds (utility only; privacy does not depend on them).
    iterations : int, optional
        Coarse CoinPress rounds of the practical covariance step; default
        :func:`coarse_schedule` (enough for a tightening of 1e6 when n allows).
    tol : float
        Exact-match tolerance of the subspace step (Frobenius distance of block projectors).
        The orthogonal-mean step's tolerance is derived from released values (see
        :func:`_perp_tolerance`).
    c1 : float
        C1 of Lemma 5.2 for the faithful mask (3200: the paper's recipe).
    reference : bool
        Attach a :class:`ValidationReport` against the non-private empirical estimates
        (NOT private: for the data owner only, never publish it).  Default False.  Needs
        finite X (the exact estimates are undefined otherwise).
    count_clipped : bool or float
        Opt-in: also release how many rows :func:`public_domain` changed, as
        ``info["clipped_rows_noisy"]`` = count + Laplace(``info["laplace_scale_count"]``),
        never exactly.  ``True`` spends 10% of epsilon on it, a number in (0, 1) that share;
        the pipeline runs at the rest of epsilon (same delta), so the total is unchanged
        (basic composition, Dwork & Roth Thm 3.16).
    bounds : (lo, hi), {"centre": c, "radius": R}, Box or Ball, optional
        PUBLIC bounds on the data (a box or a ball; never computed from X).  Given, the range
        finding is skipped: every record is clipped into the bounds and the whole budget goes to
        the clipped mean (K-norm or Gaussian, the smaller noise) and the clipped second moment
        (Gaussian), see :mod:`cvxdp.estimation.gaussian_bounded`.  ``method`` is then ignored.
    estimate : {"both", "mean"}
        With ``bounds``: ``"mean"`` spends the whole budget on the mean (no covariance).
    verbose : bool
        Print a header (public size, method, budget) and a summary (status, time, budget
        spent, the accuracy claim or why none), as every entry point does
        (:mod:`cvxdp.progress`).

    Returns
    -------
    GaussianSolution
        ``status`` is a promise about accuracy, decided from public values (n, d, budget,
        alpha, beta, ``required_n``) and the release's own noisy signals only (see
        :func:`_status`): ``"optimal_inaccurate"`` when the accuracy bound applies;
        ``"user_limit"`` when n is below ``required_n`` or when the released
        covariance has unresolved directions; ``"solver_error"`` with ``info["bottom"] = True``
        when a private test returned ⊥.  ``info["accuracy_claim"]`` (bool) and
        ``info["status_reason"]`` say which and why.  The mean/covariance are released in every
        case but ⊥ (the release is DP whatever the status).

    Warns
    -----
    GaussianSampleWarning
        When n is below ``required_n(...)``.

    Raises
    ------
    BudgetError, UnsupportedProblemError, PrivacySpecError
        Bad budget or ``count_clipped``; bad shape of X; n too small to form the blocks;
        ``reference=True`` with non-finite X.  Never because of the values of X.

    References
    ----------
    Ashtiani & Liaw (004), §5.1 (Thms 5.6, 5.7), Algorithms 1-3, Lemma 3.6, Remark 2.6; Algs 4-5
    and Cor. 7.5 for ``robust=True``.  Practical covariance: Biswas, Dong, Kamath, Ullman,
    NeurIPS 2020 (CoinPress); Karwa & Vadhan, ITCS 2018 (private range).
    """
    t0 = time.perf_counter()

    shape = tuple(getattr(X, "shape", ()))
    run = verbose_run(bool(verbose), "Gaussian estimator",
                      size=f"n={shape[0]}, d={shape[1]}" if len(shape) == 2 else "",
                      mechanism=method if bounds is None else "bounded",
                      budget=budget_text(epsilon, delta))
    if is_dask(X) and bounds is None and (robust or method == "ashtiani-liaw"):
        raise refuse_unbounded(robust)
    x = _check_inputs(X, epsilon, delta, method)
    share = count_share(count_clipped)
    if reference:
        _check_finite(x, "reference=True (the exact empirical mean and covariance)")
    x, n_mapped = public_domain(x)  # n_mapped is private (opt-in noisy count below)
    n, d = x.shape
    eps_total, epsilon = epsilon, epsilon * (1.0 - share)  # the pipeline's share
    if bounds is not None:
        if robust:
            raise UnsupportedProblemError("robust=True does not take bounds= (the robust "
                                          "learner finds its own range).")
        return run.finish(_bounded(x, n_mapped, as_bounds(bounds, d), epsilon, eps_total,
                                   delta, share, estimate, alpha, beta, rng, reference, t0))
    if estimate != "both":
        raise UnsupportedProblemError("estimate='mean' needs public bounds= (without them the "
                                      "mean is whitened by the private covariance).")
    if method == "auto":
        method = auto_method(n, d, epsilon, delta, alpha=alpha, beta=beta)
    mode = "robust" if robust else method
    sizes = layout(n, d, epsilon, delta, mode)
    req = required_n(d, epsilon=epsilon, delta=delta, alpha=alpha, beta=beta, method=method,
                     robust=robust, contamination=contamination, c1=c1)
    if n < req.total:
        warnings.warn(GaussianSampleWarning(
            f"n={n} is below the {req.total:.3g} samples that {req.basis} need for accuracy "
            f"alpha={alpha}; the release stays ({eps_total}, {delta})-DP but may be ⊥ or "
            "inaccurate."), stacklevel=2)
    gen = as_generator(rng)
    blocks = permuted_blocks(x, sizes, gen)  # on the workers for Dask (row_partition)
    steps: dict[str, tuple[PrivacyRecord, ...]] = {}
    info: dict[str, Any] = {"method": "robust" if robust else method, "block_sizes": sizes}
    mean = cov = u = None
    if robust:
        u = np.eye(d)
        mean, cov = _robust_steps(blocks, epsilon, delta, beta, contamination, c1, gen, steps,
                                  info)
    else:
        u, mean, cov = _standard_steps(blocks, epsilon, delta, beta, iterations, tol, c1,
                                       method, gen, steps, info)
    budgets = [_step_budget(r, delta) for r in steps.values()]
    acct = PrivacyAccountant(ApproxDP(eps_total, delta))
    acct.spend(PrivacyRecord(
        "parallel_composition", ApproxDP(max(b[0] for b in budgets), max(b[1] for b in budgets)),
        "adaptive parallel composition over disjoint blocks after one random permutation "
        f"(McSherry 2009, Thm 4; {PAPER}, Remark 2.6, §5.1)",
        params={"steps": tuple(steps), "block_sizes": tuple(sizes.values())}))
    if share > 0:  # released only noisily, charged to the same budget
        noisy, c_rec = noisy_count(n_mapped, rng=gen, epsilon=eps_total * share,
                                   what="rows mapped into the public domain (non-finite -> 0, "
                                   "|entry| > ENTRY_BOUND -> clipped)")
        acct.spend(c_rec)
        info.update(clipped_rows_noisy=noisy, laplace_scale_count=c_rec.params["scale"])
    theorem = (f"{PAPER}, Cor. 7.5 (Algs 4-5)" if robust else
               f"{PAPER}, §5.1 / Thm 5.7" + ({"practical": " (practical covariance step)",
                                             "preconditioned": " (private preconditioning + "
                                             "practical covariance step)"}.get(method, "")))
    report = acct.report(theorem=theorem, neighbouring=NEIGHBOURING,
                         details={"step_budgets": dict(zip(steps, budgets, strict=True)),
                                  **{k: v for k, v in info.items() if k != "block_sizes"}})
    bottom = mean is None or cov is None
    status, claim, reason = _status(n, req, info, bottom, eps_total, delta)
    sol = GaussianSolution(
        status=status, privacy=report, solve_time=time.perf_counter() - t0,
        info={**info, "bottom": bottom, "accuracy_claim": claim, "status_reason": reason},
        mean=None if bottom else mean, covariance=None if bottom else cov,
        rank=None if u is None or bottom else int(u.shape[1]), samples_required=req,
        step_records=steps)
    if reference:
        sol.validation = empirical_validation(x, sol.mean, sol.covariance)
    return run.finish(sol)


def auto_method(n: int, d: int, epsilon: float, delta: float, *, alpha: float = 0.2,
                beta: float = 0.1) -> str:
    """``method="auto"``: ``"preconditioned"`` (affine-invariant in accuracy) when n reaches its
    ``required_n``, else ``"practical"`` (fewer samples; accurate only where the condition
    number times the looseness of the log-scale bound is below ~1e6).  Public values only."""
    req = required_n(d, epsilon=epsilon, delta=delta, alpha=alpha, beta=beta,
                     method="preconditioned")
    return "preconditioned" if n >= req.total else "practical"


def _bounded(x: np.ndarray, n_mapped: int, b: Any, epsilon: float, eps_total: float,
             delta: float, share: float, estimate: str, alpha: float, beta: float, rng: Any,
             reference: bool, t0: float) -> GaussianSolution:
    """``bounds=`` path: clip into the public bounds, spend the budget on the estimate."""
    if estimate not in ("both", "mean"):
        raise UnsupportedProblemError(f"estimate must be 'both' or 'mean', got {estimate!r}.")
    n, d = x.shape
    gen = as_generator(rng)
    mean, cov, recs, info, n_clip = bounded_release(x, b, epsilon=epsilon, delta=delta, rng=gen,
                                                    estimate=estimate, beta=beta)
    acct = PrivacyAccountant(ApproxDP(eps_total, delta))
    for r in recs:
        acct.spend(r)
    if share > 0:  # one count: rows mapped into the public domain or clipped into the bounds
        noisy, c_rec = noisy_count(n_mapped + n_clip, rng=gen, epsilon=eps_total * share,
                                   what="rows clipped into the public bounds (or mapped into "
                                   "the public domain)")
        acct.spend(c_rec)
        info.update(clipped_rows_noisy=noisy, laplace_scale_count=c_rec.params["scale"])
    info["method"] = "bounded"
    report = acct.report(theorem="clipped mean and second moment with public bounds "
                         "(Laplace / Gaussian mechanisms)", neighbouring="replace one sample "
                         "(n public)", details=dict(info))
    if cov is None:
        status, claim, reason = ("user_limit", False, "estimate='mean': no covariance is "
                                 "released, so neither the Mahalanobis accuracy nor whether "
                                 f"the bounds cut the data can be checked; the mean's noise "
                                 f"is {info['mean_mechanism']}, root mean square "
                                 f"{info['mean_noise_rms']:.3g} per coordinate. The release "
                                 f"is ({eps_total}, {delta})-DP.")
    else:
        status, claim, reason = _bounded_status(n, b, mean, cov, info, alpha, eps_total, delta)
    sol = GaussianSolution(
        status=status, privacy=report, solve_time=time.perf_counter() - t0,
        info={**info, "bottom": False, "accuracy_claim": claim, "status_reason": reason},
        mean=mean, covariance=cov, rank=None if cov is None else d,
        samples_required=None, step_records={"bounded": tuple(recs)})
    if reference:
        sol.validation = empirical_validation(x, sol.mean, sol.covariance if cov is not None
                                              else np.cov(x, rowvar=False).reshape(d, d))
    return sol


def _bounded_status(n: int, b: Any, mean: np.ndarray, cov: np.ndarray, info: dict,
                    alpha: float, epsilon: float, delta: float) -> tuple[str, bool, str]:
    """Plug-in claim from released values only: the released covariance must be non-singular,
    put the bounds >= 3 standard deviations from the released mean (clipping bias small), and
    make :func:`bounded_error` <= alpha."""
    tail = f" The release is ({epsilon}, {delta})-DP."
    e_mean, e_cov = bounded_error(n, b, cov, info)
    if not math.isfinite(e_cov):
        return (cp.USER_LIMIT, False, "the released covariance is singular (noise swamps a "
                "direction): the bounds are too wide for n and the budget." + tail)
    if not bounds_margin_ok(b, mean, cov):
        return (cp.USER_LIMIT, False, "the released mean and covariance put the public bounds "
                "within 3 standard deviations of the mean: clipping may bias both." + tail)
    if max(e_mean, e_cov) > alpha:
        return ("user_limit", False, f"at the released covariance the expected errors are "
                f"{e_mean:.3g} (Mahalanobis mean) and {e_cov:.3g} (whitened Frobenius), above "
                f"alpha={alpha}: more samples, a larger budget or tighter bounds are needed."
                + tail)
    return ("optimal_inaccurate", True, f"at the released covariance the expected errors "
            f"{e_mean:.3g} (Mahalanobis mean) and {e_cov:.3g} (whitened Frobenius) are <= "
            f"alpha={alpha} and the bounds are >= 3 standard deviations away (plug-in check on "
            "released values)")


def _status(n: int, req: SampleRequirement, info: dict[str, Any], bottom: bool,
            epsilon: float, delta: float) -> tuple[str, bool, str]:
    """Status, whether the accuracy claim holds, and why, from public values and releases only.

    The claim (Mahalanobis mean error and whitened Frobenius covariance error <= alpha with
    probability >= 1 - beta) is :func:`required_n`'s bound, so it needs ``n >= required_n``
    (public: n, d, budget, alpha, beta).  The practical schedule budgets for a 1e6 tightening,
    so a larger condition number can leave directions unresolved even then; the count of
    directions whose released eigenvalue is below twice the final round's noise level
    (``info["covariance"]["unresolved"]``, a function of the noisy covariance only) says so.

    Returns
    -------
    ("optimal_inaccurate", True, claim) when both hold; ``"user_limit"`` when the released
    signal shows unresolved directions; ``"user_limit"`` when only n is below required_n;
    ``"solver_error"`` on ⊥.
    """
    reasons = []
    short = _shortfall(info.get("block_sizes", {}), req)
    if bottom:
        return ("solver_error", False, f"a private test returned ⊥ at step "
                f"{info.get('bottom_step', '?')!r} (itself a DP output; nothing else released)"
                + (f"; public cause: {short}" if short else ""))
    unresolved = int(info.get("covariance", {}).get("unresolved", 0))
    if unresolved:
        reasons.append(f"the released covariance is not resolved in {unresolved} direction(s) "
                       "(there its whitened eigenvalue is below twice the final round's noise "
                       "level psi, so its relative error can exceed 1/2): more samples are "
                       "needed (or a smaller condition number)")
    if n < req.total:
        reasons.append(f"n={n} is below required_n={req.total:.3g} ({req.basis}) for "
                       f"alpha={req.alpha}, beta={req.beta}: the accuracy bound does not apply"
                       + (f" ({short})" if short else ""))
    if reasons:
        return (cp.USER_LIMIT, False,
                "; ".join(reasons) + f". The release is still ({epsilon}, {delta})-DP.")
    return ("optimal_inaccurate", True,
            f"n >= required_n={req.total:.3g} and every direction resolved: Mahalanobis mean "
            f"error and whitened Frobenius covariance error <= alpha={req.alpha} with "
            f"probability >= {1 - req.beta:g} ({req.basis})")


def _shortfall(sizes: dict[str, int], req: SampleRequirement) -> str:
    """Steps whose public block size is below what ``required_n`` asks of them (public)."""
    bad = [f"{k}: {sizes[k]} < {req.steps[k]:.0f}" for k in sizes
           if k in req.steps and sizes[k] + 2 < req.steps[k]]
    return ("blocks below their requirement (samples), " + ", ".join(bad)) if bad else ""


def _step_budget(records: tuple[PrivacyRecord, ...], delta: float) -> tuple[float, float]:
    acct = PrivacyAccountant(ApproxDP(1e9, delta))
    for r in records:
        acct.spend(r)
    b = acct.spent()
    return float(b.epsilon), float(getattr(b, "delta", 0.0))


def _standard_steps(blocks: dict[str, np.ndarray], epsilon: float, delta: float, beta: float,
                    iterations: int | None, tol: float, c1: float, method: str,
                    gen: np.random.Generator, steps: dict, info: dict) -> tuple:
    """Steps 1-4 of §5.1; returns (U, mean, covariance), None entries on ⊥."""
    d = blocks["subspace"].shape[1]
    if is_dask(blocks["subspace"]):  # Alg. 1's statistics on a worker, the noise here
        u, res = dask_subspace(_pairs(blocks["subspace"]), epsilon=epsilon, delta=delta,
                               tol=tol, rng=gen)
    else:
        u, res = private_subspace(_pairs(blocks["subspace"]), epsilon=epsilon, delta=delta,
                                  tol=tol, rng=gen)
    steps["subspace"] = (res.record,)
    if u is None:
        info["bottom_step"] = "subspace"
        return None, None, None
    r = u.shape[1]
    if r == 0:  # Sigma = 0: every sample equals mu, which step 4 recovers exactly
        cov_r, mean = np.zeros((0, 0)), np.zeros(d)
    else:
        cov_r, mean = _in_subspace(blocks, u, epsilon, delta, beta, iterations, c1, method, gen,
                                   steps, info)
        if mean is None:
            return u, None, None
    if r < d:  # mean orthogonal to range(Sigma): exact match, Alg. 1 with s = 1
        proj = np.eye(d) - u @ u.T
        items = blocks["perp_mean"] @ proj
        tol_perp = _perp_tolerance(res.record.params["sigma"], tol, d, cov_r, mean,
                                   len(items), beta)
        info["perp_tolerance"] = tol_perp
        if is_dask(items):
            res4 = dask_populous_mean(items, tol_perp, epsilon=epsilon, delta=delta, rng=gen)
        else:
            res4 = populous_mean(items, EuclideanSpace(r=tol_perp), epsilon=epsilon,
                                 delta=delta, rng=gen)
        steps["perp_mean"] = (res4.record,)
        if res4.value is None:
            info["bottom_step"] = "perp_mean"
            return u, None, None
        mean = mean + proj @ res4.value
    return u, mean, u @ cov_r @ u.T


def _in_subspace(blocks: dict[str, np.ndarray], u: np.ndarray, epsilon: float, delta: float,
                 beta: float, iterations: int | None, c1: float, method: str,
                 gen: np.random.Generator, steps: dict, info: dict) -> tuple:
    """Steps 2-3: covariance of U^T X, then the mean whitened by it; (None, None) on ⊥."""
    r = u.shape[1]
    rho = gaussian_steps_rho(epsilon, delta)  # the covariance steps are Gaussian mechanisms only
    pre_low = None  # public whitening matrix (a released estimate's Cholesky factor)
    if method in ("practical", "preconditioned"):
        z_scale = _pairs(blocks["scale"]) @ u
        scales, recs = log_scale(z_scale, epsilon=epsilon, delta=delta, rng=gen)
        steps["scale"] = tuple(recs)
        if scales is None:
            info["bottom_step"] = "scale"
            return None, None
        upper = 4.0 * r * np.diag(scales**2)
        if method == "preconditioned":
            pre_low, upper = _precondition(blocks, u, upper, rho, beta, gen, steps, info)
        rounds, _, frac = coarse_schedule(len(blocks["covariance"]) // 2, r, rho)
        rounds = rounds if iterations is None else iterations
    else:
        z_pre = _pairs(blocks["preconditioner"]) @ u
        pre, par, res3 = private_preconditioner(z_pre, epsilon=epsilon, delta=delta, beta=beta,
                                                c1=c1, rng=gen)
        info["alg3"] = par
        steps["preconditioner"] = _preconditioner_records(res3, par, "Alg. 3", epsilon, delta)
        if pre is None:
            info["bottom_step"] = "preconditioner"
            return None, None
        upper = 1.1 * pre  # Thm 5.4: dist(Sigma, Sigma_hat) <= 1/10, so Sigma <= 1.1 Sigma_hat
        rounds, frac = 0, 0.5
    z_cov = _pairs(blocks["covariance"]) @ u
    if pre_low is not None:  # post-processing: whiten by the released preconditioner
        z_cov = whiten(pre_low, z_cov)
    cov_r, recs, cinfo = coinpress_covariance(z_cov, upper, rho=rho, iterations=rounds,
                                              beta=beta, rng=gen, coarse_fraction=frac,
                                              moment=pair_moment(z_cov))
    if pre_low is not None:
        cov_r = pre_low @ cov_r @ pre_low.T
        cov_r = 0.5 * (cov_r + cov_r.T)
    steps["covariance"] = tuple(recs)
    info["covariance"] = cinfo
    if cinfo["unresolved"]:
        warnings.warn(GaussianSampleWarning(
            f"the private covariance is not resolved in {cinfo['unresolved']} of {r} directions "
            "(relative error > 1/2 there; it over-estimates them): more samples are needed."),
            stacklevel=4)
    low = np.linalg.cholesky(cov_r)
    y = whiten(low, blocks["mean"] @ u)
    ym, recs, _ = clipped_mean(y, epsilon=epsilon, delta=delta, beta=beta, rng=gen)
    steps["mean"] = tuple(recs)
    if ym is None:
        info["bottom_step"] = "mean"
        return None, None
    return cov_r, u @ (low @ ym)


def _precondition(blocks: dict[str, np.ndarray], u: np.ndarray, upper: np.ndarray, rho: float,
                  beta: float, gen: np.random.Generator, steps: dict, info: dict
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Private preconditioning: rounds ``pre1, pre2, ...`` of the practical covariance step,
    each on its own block at the full budget (parallel composition), each on the data whitened
    by the previous round's *released* estimate (post-processing, so the whitening matrix is
    public).  Round 1 starts from the log-scale bound ``upper``; later rounds (and the final
    step) from ``4 I`` in the whitened coordinates (a released estimate that resolves a
    direction is within a factor 2 there and over-estimates an unresolved one).  Each round
    tightens by about ``COARSE_GAIN`` (1e6), so the condition number that the final step sees
    shrinks by that factor per round: what makes the errors in the whitened metric independent
    of the condition number up to about ``1e6^(rounds + 1)``.

    Returns (L, upper for the final step) with ``L L^T`` the last released estimate.

    References
    ----------
    Biswas, Dong, Kamath & Ullman 2020 (CoinPress: iterative refinement of a public bound);
    Brown, Hopkins & Smith, COLT 2023 (affine invariance via whitening by a private estimate);
    Ashtiani & Liaw (004), §5.1 (preconditioner, then the fine step); McSherry 2009, Thm 4.
    """
    r = u.shape[1]
    low = np.eye(r)
    unresolved = []
    for j, name in enumerate(sorted(k for k in blocks if k.startswith("pre")
                                    and k[3:].isdigit())):
        z = whiten(low, _pairs(blocks[name]) @ u)
        rounds = coarse_schedule(int(z.shape[0]), r, rho)[0]
        start = upper if j == 0 else 4.0 * np.eye(r)
        c, recs, cinfo = coinpress_covariance(z, start, rho=rho, iterations=rounds, beta=beta,
                                              rng=gen, moment=pair_moment(z))
        steps[name] = tuple(recs)
        unresolved.append(cinfo["unresolved"])
        est = low @ c @ low.T
        low = np.linalg.cholesky(0.5 * (est + est.T))
    info["precondition_unresolved"] = unresolved  # from released values only
    return low, 4.0 * np.eye(r)


def _perp_tolerance(sigma_sub: float, tol: float, d: int, cov_r: np.ndarray, mean: np.ndarray,
                    k: int, beta: float) -> float:
    """Radius within which the points ``(I - P_hat) x`` agree, from released values only.

    The snapped projector is off by ``e_P <= tol + 2 ||E||`` (Davis-Kahan, eigengap 1) with the
    subspace mask's noise ``||E|| <= sigma (2 sqrt d + sqrt(2 ln(2/beta)))``; a point's
    in-range deviation is ``<= sqrt(lambda_max) (sqrt r + sqrt(2 ln(2k/beta)))`` whp, so two
    points differ by at most twice the product; plus float error ~1e-12 ||mu_hat||.
    """
    e_p = tol + 2.0 * sigma_sub * (2.0 * math.sqrt(d) + math.sqrt(2.0 * math.log(2.0 / beta)))
    r = cov_r.shape[0]
    spread = 0.0 if r == 0 else math.sqrt(float(np.linalg.eigvalsh(cov_r)[-1])) * (
        math.sqrt(r) + math.sqrt(2.0 * math.log(2.0 * k / beta)))
    return 2.0 * e_p * spread + 1e-12 * (1.0 + float(np.linalg.norm(mean)))


def _preconditioner_records(res: Any, par: dict, alg: str, epsilon: float, delta: float
                            ) -> tuple[PrivacyRecord, ...]:
    """The preconditioner step's ledger entry; when its blocks are too small it releases only
    the bottom symbol, still charged the step's full budget."""
    if res is not None:
        return (res.record,)
    return (PrivacyRecord("populous_mean", ApproxDP(epsilon, delta),
                          f"{PAPER}, {alg} (⊥: blocks too small)", params=par),)


def _robust_steps(blocks, epsilon, delta, beta, contamination, c1, gen, steps, info):
    """Cor. 7.5: Alg. 4 (robust covariance) then Alg. 5 (robust mean in whitened coordinates)."""
    d = blocks["mean"].shape[1]
    a = contamination
    eta4 = a / (c1 * (d + math.sqrt(d * math.log(4 / beta))))  # Alg. 4 (Prop. 6.2)
    pre, par, res4 = private_preconditioner(
        _pairs(blocks["preconditioner"]), epsilon=epsilon, delta=delta, beta=beta, c1=c1,
        estimator=robust_covariance_estimator(a), eta=eta4, rng=gen)
    info["alg4"] = par
    steps["preconditioner"] = _preconditioner_records(res4, par, "Alg. 4", epsilon, delta)
    if pre is None:
        info["bottom_step"] = "preconditioner"
        return None, None
    low = np.linalg.cholesky(pre)
    y = linalg.solve_triangular(low, blocks["mean"].T, lower=True).T
    eps_i, dl_i = epsilon / 2, delta / (4 * math.exp(epsilon / 2))
    r5 = 2 * a * math.sqrt(math.log(1 / a))  # digest §3.9 fix 1 (C3 = 1)
    eta5 = a / (math.sqrt(d) + math.sqrt(2 * math.log(2 / beta)))
    gam5 = eta5 / calibrate_gaussian(epsilon=eps_i, delta=dl_i, sensitivity=1.0)
    k5 = max(math.ceil(400 * r5 / gam5), k_min(eps_i, dl_i))
    s5 = len(y) // k5
    info["alg5"] = {"k": k5, "block_size": s5, "r": r5, "eta": eta5}
    if s5 < 1:
        steps["mean"] = (PrivacyRecord("populous_mean", ApproxDP(epsilon, delta),
                                       f"{PAPER}, Alg. 5 (⊥: blocks too small)", params={}),)
        info["bottom_step"] = "mean"
        return None, None
    est = robust_mean_estimator(a)
    items = np.stack([est(b) for b in y[: k5 * s5].reshape(k5, s5, d)])
    res5 = populous_mean(items, EuclideanSpace(r=r5), epsilon=epsilon, delta=delta, rng=gen,
                         constant="paper")
    steps["mean"] = (res5.record,)
    if res5.value is None:
        info["bottom_step"] = "mean"
        return None, None
    return low @ res5.value, pre


class GaussianMLE(StructuredProblem):
    """Gaussian maximum likelihood as a CVXPY model: ``max log det(P) - tr(P S)`` over the
    precision matrix P (S = empirical covariance; the MLE is ``P = S^{-1}``) with the mean at
    the sample mean.  ``.solve()`` is the exact (non-private) reference; ``.solve_private(...)``
    runs :func:`private_gaussian` and writes ``inv(Sigma_hat)`` / ``mu_hat`` into ``precision`` /
    ``mean``; its ``value`` is computed from the release only (:meth:`released_value`).

    References
    ----------
    Ashtiani & Liaw (004), §5.1 (the learner behind ``solve_private``).
    """

    def __init__(self, X: Any) -> None:
        x = _check_inputs(X, 1.0, 1e-6, "practical")  # the shape only, not the values
        self.X = x
        d = x.shape[1]
        with np.errstate(all="ignore"):  # non-finite rows: the exact model is refused at solve
            self.sample_cov = np.cov(x, rowvar=False).reshape(d, d)
            xbar = x.mean(axis=0)
        self.precision = cp.Variable((d, d), PSD=True, name="precision")
        self.mean = cp.Variable(d, name="mean")
        obj = (cp.log_det(self.precision) - cp.trace(self.sample_cov @ self.precision)
               - cp.sum_squares(self.mean - xbar))
        super().__init__(cp.Maximize(obj))

    def solve(self, *args: Any, method: str | None = None, **kwargs: Any) -> Any:
        """Exact (non-private) solve through CVXPY; refuses non-finite samples."""
        _check_finite(self.X, "the exact solve")
        return super().solve(*args, method=method, **kwargs)

    def _objective_at(self, precision: np.ndarray, mean: np.ndarray) -> float:
        """The model's objective at (precision, mean) on the EXACT data: validation only."""
        sign, logdet = np.linalg.slogdet(precision)
        xbar = self.X.mean(axis=0)
        return float(logdet - np.trace(self.sample_cov @ precision)
                     - np.sum((mean - xbar) ** 2)) if sign > 0 else -math.inf

    @staticmethod
    def released_value(precision: np.ndarray, covariance: np.ndarray) -> float:
        """The objective with the released ``(mu_hat, Sigma_hat)`` in place of ``(xbar, S)``.

        ``log det P - tr(Sigma_hat P) - ||mu - mu_hat||^2`` at the released point
        ``P = Sigma_hat^+``, ``mu = mu_hat``: a function of the release only (post-processing),
        the plug-in estimate of the optimal value (``-log det Sigma_hat - d`` when Sigma_hat is
        non-singular; ``-inf`` when it is singular, as for the exact objective).
        """
        sign, logdet = np.linalg.slogdet(precision)
        return float(logdet - np.trace(covariance @ precision)) if sign > 0 else -math.inf

    def solve_private(self, *, epsilon: float | None = None, delta: float | None = None,
                      rho: float | None = None, rng: None | int | np.random.Generator = None,
                      reference: bool = False, **kwargs: Any) -> GaussianSolution:
        """Private mean and covariance (:func:`private_gaussian`) written into ``precision`` /
        ``mean``.

        ``value`` is :meth:`released_value`: computed from the released mean and covariance
        only (the exact-data objective at the released point would be an exact function of the
        data; with n - 1 records known it gives the last one back).  ``reference=True`` also
        solves this CVXPY model exactly and reports (NOT private) the log-likelihood gap
        ``reference_value - exact objective at the released point``.
        """
        if rho is not None or epsilon is None or delta is None:
            raise BudgetError("the Gaussian learner is (epsilon, delta)-DP: pass epsilon= and "
                              "delta= (delta > 0), not rho=.")
        sol = private_gaussian(self.X, epsilon=epsilon, delta=delta, rng=rng,
                               reference=reference, **kwargs)
        if sol.covariance is None:
            return sol
        prec = np.linalg.pinv(sol.covariance, hermitian=True)
        sol.value = self.released_value(prec, sol.covariance)
        sol.primal = {"precision": prec, "mean": sol.mean}
        if reference:  # before the private values are written (it solves this model)
            t0 = time.perf_counter()
            super().solve(solver=cp.CLARABEL)
            ref = float(self.value)
            metrics = dict(sol.validation.metrics) if sol.validation else {}
            sol.validation = ValidationReport(
                reference_value=ref, objective_gap=ref - self._objective_at(prec, sol.mean),
                reference_time=time.perf_counter() - t0,
                reference_solver=self.solver_stats.solver_name, metrics=metrics)
        self.precision.value, self.mean.value = prec, sol.mean
        return sol


def gaussian_mle(X: Any) -> GaussianMLE:
    """Build the Gaussian maximum-likelihood problem of the rows of ``X`` (see GaussianMLE).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(100_000, 2)) * [1.0, 30.0] + 500.0
    >>> sol = gaussian_mle(x).solve_private(epsilon=1.0, delta=1e-6, rng=1)
    >>> bool(abs(sol.covariance[1, 1] / 900 - 1) < 0.1)
    True
    """
    return GaussianMLE(X)
