"""The unbounded Gaussian learner, :func:`private_gaussian` (see :mod:`cvxdp.estimation.gaussians`
for the pipeline, the methods and the privacy argument), and its ``bounds=`` path.
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import Any

import numpy as np

from cvxdp.arguments import check_beta, check_choice, check_flag, check_number, entry_point
from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.gaussians import (
    dask_samples,
    map_into_domain,
    refuse_reference,
    refuse_unbounded,
)
from cvxdp.errors import BudgetError, UnsupportedProblemError
from cvxdp.estimation.gaussian_bounded import as_bounds, bounded_release, bounded_requirement
from cvxdp.estimation.gaussian_pipeline import GaussianSampleWarning, robust_steps, standard_steps
from cvxdp.estimation.gaussian_status import (
    GaussianSolution,
    bounded_status,
    release_status,
    step_budget,
)
from cvxdp.estimation.gaussian_steps import SampleRequirement, empirical_validation, layout
from cvxdp.estimation.gaussian_steps import required_n as _steps_required_n
from cvxdp.estimation.masking import PAPER
from cvxdp.estimation.random_projection import count_share
from cvxdp.estimation.row_partition import permuted_blocks
from cvxdp.estimation.rows import ENTRY_BOUND, domain_rows
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.privacy.clipping import noisy_count
from cvxdp.privacy.rng import as_generator
from cvxdp.progress import budget_text, verbose_run

__all__ = ["private_gaussian", "required_n", "auto_method", "public_domain", "check_samples",
           "check_keywords", "check_finite_samples", "C1_MIN", "ENTRY_BOUND",
           "GAUSSIAN_EPSILON_MAX", "METHODS", "NEIGHBOURING"]

#: largest epsilon private_gaussian takes: the sample-size planner (required_n) evaluates
#: e^(epsilon/2), which overflows a float beyond epsilon ~ 1419; nothing is private long before
GAUSSIAN_EPSILON_MAX = 1e3

METHODS = ("auto", "preconditioned", "practical", "ashtiani-liaw")
NEIGHBOURING = "replace one sample (n public); the sample is randomly permuted first"


def check_samples(x: Any, epsilon: float, delta: float, method: str) -> np.ndarray:
    """Public arguments (method, budget, the shape of X); never the values of X."""
    check_choice("method", method, METHODS, error=UnsupportedProblemError)
    budget = ApproxDP(epsilon, delta)  # validates the range
    if budget.delta <= 0:
        raise BudgetError("private_gaussian needs delta > 0: pure DP is impossible for "
                          "unbounded Gaussians (Ashtiani & Liaw §1); pass e.g. delta=1e-6.")
    if is_dask(x):  # stays on the workers (cvxdp.dask_backend.gaussians)
        return dask_samples(x)
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise UnsupportedProblemError(f"X must be an (n, d) array of samples, got shape "
                                      f"{arr.shape}.")
    return arr


#: smallest C1 of Lemma 5.2 for which the mask concentration Thm 5.4 uses holds (Ashtiani &
#: Liaw 2022: (1 - x)^-2 - 1 <= 2/75 needs eta ||G|| <= 0.01307)
C1_MIN = 153.0


def check_keywords(*, alpha: Any = 0.2, beta: Any = 0.1, c1: Any = 3200.0,
                   contamination: Any = 0.05, tol: Any = 1e-9, robust: Any = False,
                   estimate: Any = "both") -> None:
    """The method keywords of :func:`private_gaussian`, before any sample is read.

    Ranges from the theorems the learner uses (Ashtiani & Liaw 2022): ``alpha`` > 0 (the TV
    accuracy target); ``beta`` in (0, 1) (a failure probability; ln(4/beta) in Lemma 5.2);
    ``c1 >= C1_MIN`` (Lemma 5.2's "sufficiently large" constant); ``contamination`` in
    [0, 1/2) (Thms 6.1, 7.3 need it below 1/2) and > 0 with ``robust=True`` (Algs 4-5 use
    ln(1/contamination)); ``tol`` in (0, 1) (projectors of different rank are at Frobenius
    distance >= 1, so a tolerance below 1 never matches them).
    """
    check_number("alpha", alpha, "a finite number > 0 (the accuracy target, e.g. 0.2)",
                 lambda v: v > 0)
    check_beta(beta)
    check_number("c1", c1, f"a finite number >= {C1_MIN:g} (Lemma 5.2's constant: smaller "
                 "values break the mask's concentration; leave the default 3200)",
                 lambda v: v >= C1_MIN)
    robust = check_flag("robust", robust)
    if robust:
        check_number("contamination", contamination, "in (0, 1/2) with robust=True (the "
                     "adversarial fraction; Algs 4-5 need it > 0 and below 1/2)",
                     lambda v: 0 < v < 0.5)
    else:
        check_number("contamination", contamination, "in [0, 1/2) (the adversarial "
                     "fraction; the robust learner needs it below 1/2)", lambda v: 0 <= v < 0.5)
    check_number("tol", tol, "a number in (0, 1) (Frobenius tolerance of the subspace "
                 "step's exact match; default 1e-9)", lambda v: 0 < v < 1)
    check_choice("estimate", estimate, ("both", "mean"))


def check_finite_samples(x: np.ndarray, what: str) -> None:
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
    check_keywords(**{k: kwargs[k] for k in ("alpha", "beta", "c1", "contamination", "robust",
                                              "estimate") if k in kwargs})
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
        C1 of Lemma 5.2 for the faithful mask (3200: the paper's recipe; at least
        :data:`C1_MIN` = 153, below which the mask's concentration fails).
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
        :func:`release_status`): ``"optimal_inaccurate"`` when the accuracy bound applies;
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
    ArgumentError
        ``alpha``, ``beta``, ``c1``, ``contamination``, ``tol``, ``robust`` or ``estimate``
        outside its range (:func:`check_keywords`), raised before X is read.

    References
    ----------
    Ashtiani & Liaw (2022), §5.1 (Thms 5.6, 5.7), Algorithms 1-3, Lemma 3.6, Remark 2.6; Algs 4-5
    and Cor. 7.5 for ``robust=True``.  Practical covariance: Biswas, Dong, Kamath, Ullman,
    NeurIPS 2020 (CoinPress); Karwa & Vadhan, ITCS 2018 (private range).
    """
    t0 = time.perf_counter()
    check_keywords(alpha=alpha, beta=beta, c1=c1, contamination=contamination, tol=tol,
                   robust=robust, estimate=estimate)
    shape = tuple(getattr(X, "shape", ()))
    run = verbose_run(bool(verbose), "Gaussian estimator",
                      size=f"n={shape[0]}, d={shape[1]}" if len(shape) == 2 else "",
                      mechanism=method if bounds is None else "bounded",
                      budget=budget_text(epsilon, delta))
    if is_dask(X) and bounds is None and (robust or method == "ashtiani-liaw"):
        raise refuse_unbounded(robust)
    x = check_samples(X, epsilon, delta, method)
    share = count_share(count_clipped)
    if reference:
        check_finite_samples(x, "reference=True (the exact empirical mean and covariance)")
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
        mean, cov = robust_steps(blocks, epsilon, delta, beta, contamination, c1, gen, steps,
                                  info)
    else:
        u, mean, cov = standard_steps(blocks, epsilon, delta, beta, iterations, tol, c1,
                                       method, gen, steps, info)
    budgets = [step_budget(r, delta) for r in steps.values()]
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
    status, claim, reason = release_status(n, req, info, bottom, eps_total, delta)
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
        status, claim, reason = bounded_status(n, b, mean, cov, info, alpha, eps_total, delta)
    sol = GaussianSolution(
        status=status, privacy=report, solve_time=time.perf_counter() - t0,
        info={**info, "bottom": False, "accuracy_claim": claim, "status_reason": reason},
        mean=mean, covariance=cov, rank=None if cov is None else d,
        samples_required=None, step_records={"bounded": tuple(recs)})
    if reference:
        sol.validation = empirical_validation(x, sol.mean, sol.covariance if cov is not None
                                              else np.cov(x, rowvar=False).reshape(d, d))
    return sol

