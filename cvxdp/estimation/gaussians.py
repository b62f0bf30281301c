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
runs chunk-wise (:mod:`cvxdp.dask_backend.gaussians`): the permutation of the row indices is drawn
on the client as here and applied by Dask on the workers, every step reads its block through
reductions (histogram counts, clipped sums, second moments, Alg. 1's statistics) and the noise
is drawn here in the same order, so the blocks, the sensitivities and the noise are the numpy
path's and the release equals it up to the order of additions.
"""

from __future__ import annotations

import math
import time
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.errors import BudgetError
from cvxdp.estimation.gaussian_learner import (
    ENTRY_BOUND,
    auto_method,
    check_finite_samples,
    check_samples,
    private_gaussian,
    public_domain,
    required_n,
)
from cvxdp.estimation.gaussian_pipeline import GaussianSampleWarning
from cvxdp.estimation.gaussian_status import GaussianSolution
from cvxdp.estimation.gaussian_steps import SampleRequirement
from cvxdp.solution import ValidationReport
from cvxdp.structured import StructuredProblem

# The learner lives in gaussian_learner (private_gaussian), gaussian_pipeline (its steps) and
# gaussian_status (its answer and status); this module is their public import path.
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


class GaussianMLE(StructuredProblem):
    """Gaussian maximum likelihood as a CVXPY model: ``max log det(P) - tr(P S)`` over the
    precision matrix P (S = empirical covariance; the MLE is ``P = S^{-1}``) with the mean at
    the sample mean.  ``.solve()`` is the exact (non-private) reference; ``.solve_private(...)``
    runs :func:`private_gaussian` and writes ``inv(Sigma_hat)`` / ``mu_hat`` into ``precision`` /
    ``mean``; its ``value`` is computed from the release only (:meth:`released_value`).

    References
    ----------
    Ashtiani & Liaw (2022), §5.1 (the learner behind ``solve_private``).
    """

    def __init__(self, X: Any) -> None:
        x = check_samples(X, 1.0, 1e-6, "practical")  # the shape only, not the values
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
        check_finite_samples(self.X, "the exact solve")
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
