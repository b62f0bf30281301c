"""Masking mechanisms and the private populous mean estimator (Ashtiani & Liaw, §3).

A *masking mechanism* ``B`` (Def. 3.3) hides a small distance: if ``dist(Y1, Y2) <= gamma`` then
``B(Y1)`` and ``B(Y2)`` are (epsilon, delta)-indistinguishable.  It is not a DP mechanism on its
own; the populous mean estimator (Alg. 1) turns one into a DP release by guaranteeing that, after a
private pass/fail test, the weighted average it masks moves by at most ``gamma`` when one record
changes (Lemma 3.6).

Implemented here:

* :func:`truncated_laplace_params`, :func:`sample_truncated_laplace` -- TLap of Geng et al.
  (Thm 2.12 of the paper).
* :func:`k_min` -- the smallest number of blocks for which Lemma 3.6's test passes on clean data.
* :class:`GaussianMask` -- the Gaussian mask on (R^D, l2) or matrices with the Frobenius norm
  (Lemma 7.2, calibrated with the exact analytic Gaussian instead of the paper's loose formula).
* :class:`MultiplicativePSDMask` -- ``L (I + eta G)(I + eta G)^T L^T`` with the gamma(eta) of
  Lemma 5.1 and the concentration eta of Lemma 5.2.
* :func:`populous_mean` -- Alg. 1, steps 3-10, on the k block outputs.

The floating-point Gaussian and TLap samplers are not hardened against precision attacks (same
caveat as the rest of :mod:`cvxdp.privacy`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cvxdp.citations import LEARNING_GAUSSIANS
from cvxdp.errors import BudgetError, PrivacyGuaranteeError
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP, check_delta, check_epsilon
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.rng import as_generator

__all__ = [
    "PAPER",
    "truncated_laplace_params",
    "sample_truncated_laplace",
    "k_min",
    "aggregation_sensitivity",
    "GaussianMask",
    "MultiplicativePSDMask",
    "PopulousMeanResult",
    "populous_mean",
    "populous_release",
]

PAPER = LEARNING_GAUSSIANS
K_PRIVACY_MIN = 140  # Lemma 3.6 (privacy part) needs k >= 140 (Claim C.6)
_FP_MARGIN = 1e-9  # relative slack absorbing floating-point error in dist


def _budget(epsilon: float, delta: float) -> tuple[float, float]:
    eps = check_epsilon(epsilon)
    dl = check_delta(delta)
    if dl <= 0:
        raise BudgetError("delta must be > 0: pure DP is impossible for this estimator "
                          "(Ashtiani & Liaw, §1); pass e.g. delta=1e-6.")
    return eps, dl


def truncated_laplace_params(sensitivity: float, epsilon: float, delta: float
                             ) -> tuple[float, float]:
    """Scale ``lam`` and half-width ``A`` of TLap(Delta, epsilon, delta).

    ``lam = Delta / epsilon`` and ``A = (Delta / epsilon) ln(1 + (e^epsilon - 1) / (2 delta))``;
    releasing ``q + TLap`` is (epsilon, delta)-DP for a query of sensitivity Delta.

    References
    ----------
    Ashtiani & Liaw (2022), Thm 2.12 (Geng, Ding, Guo, Kumar 2020).
    """
    eps, dl = _budget(epsilon, delta)
    lam = float(sensitivity) / eps
    return lam, lam * math.log1p(math.expm1(eps) / (2 * dl))


def sample_truncated_laplace(lam: float, half_width: float, rng: np.random.Generator,
                             size: int | None = None) -> Any:
    """Draw from the density ``prop. exp(-|x| / lam)`` on ``[-A, A]`` by inverting the CDF."""
    u = rng.random(size)
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    mag = -lam * np.log1p(-u * (-np.expm1(-half_width / lam)))
    return sign * np.minimum(mag, half_width)


def k_min(epsilon: float, delta: float) -> int:
    """``max(140, ceil((20 / eps) ln(1 + (e^eps - 1) / (2 delta))))``: blocks Alg. 1 needs.

    With this many blocks TLap's half-width is <= 0.1, so clean data (Q = 1) passes the test
    (Lemma 3.6, utility part; Thm 4.1).  ``epsilon, delta`` are the *internal* parameters of
    Alg. 1 (half of the target epsilon, see :func:`populous_mean`).
    """
    eps, dl = _budget(epsilon, delta)
    return max(K_PRIVACY_MIN, math.ceil(20 / eps * math.log1p(math.expm1(eps) / (2 * dl))))


def aggregation_sensitivity(k: int, r: float, phi: float, constant: str = "proof") -> float:
    """Largest ``dist(mu, mu')`` between neighbours once the test passed (Lemma 3.6, App. C).

    ``constant="paper"`` gives the lemma's ``400 (r + phi) / k``; ``"proof"`` the proof's own
    ``(212 r + 100 phi) / k`` (Claims C.2-C.6, valid for k >= 140).  Both carry a 1e-9 relative
    margin for floating-point error in dist.
    """
    if constant == "paper":
        g = 400.0 * (r + phi) / k
    elif constant == "proof":
        g = (212.0 * r + 100.0 * phi) / k
    else:
        raise ValueError(f"constant must be 'proof' or 'paper', got {constant!r}")
    return g * (1 + _FP_MARGIN)


@dataclass(frozen=True)
class GaussianMask:
    """``B(Y) = Y + sigma N(0, I)``: (gamma, epsilon, delta)-masking in l2 (Frobenius for arrays).

    ``sigma`` is the exact analytic-Gaussian scale for l2 sensitivity ``gamma``, which is what
    Lemma 7.2 needs (the paper's ``2 gamma ln(1.25/delta)/epsilon`` is valid only for eps < 1 and
    about 5x larger at delta = 1e-6).
    """

    gamma: float
    epsilon: float
    delta: float
    sigma: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", calibrate_gaussian(
            epsilon=self.epsilon, delta=self.delta, sensitivity=self.gamma, method="analytic"))

    @classmethod
    def calibrated(cls, gamma: float, epsilon: float, delta: float, example: Any
                   ) -> GaussianMask:
        return cls(gamma, epsilon, delta)

    def __call__(self, y: Any, rng: np.random.Generator) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        return y + self.sigma * rng.standard_normal(y.shape)

    def concentration(self, dim: int, beta: float) -> float:
        """Radius a with P[||B(Y) - Y|| > a] <= beta: ``sigma (sqrt(D) + sqrt(2 ln(1/beta)))``."""
        return self.sigma * (math.sqrt(dim) + math.sqrt(2 * math.log(1 / beta)))

    @property
    def params(self) -> dict[str, float]:
        return {"mask": "gaussian", "gamma": self.gamma, "sigma": self.sigma}


@dataclass(frozen=True)
class MultiplicativePSDMask:
    """``B(S) = L (I + eta G)(I + eta G)^T L^T`` with ``L L^T = S`` and G i.i.d. N(0, 1) (d x d).

    Any factor L gives the same law (``L = S^{1/2} U`` with U orthogonal and ``U G`` ~ ``G``), so
    a Cholesky factor is used.  The output is PD almost surely and ``E[B(S)] = (1 + eta^2 d) S``.
    It is (gamma, epsilon, delta)-masking for the spectral semimetric with gamma from
    :meth:`gamma` (Lemma 5.1; needs epsilon, delta <= 1).

    References
    ----------
    Ashtiani & Liaw (2022), Lemma 5.1 (masking), Lemma 5.2 (concentration), Lemma D.1.
    """

    eta: float
    dim: int

    @staticmethod
    def gamma(dim: int, epsilon: float, delta: float, eta: float) -> float:
        """Lemma 5.1: the distance the mask hides at (epsilon, delta)."""
        eps, dl = _budget(epsilon, delta)
        if eps > 1 or dl > 1:
            raise BudgetError("Lemma 5.1 needs epsilon <= 1 and delta <= 1 for the PSD mask; "
                              f"got epsilon={eps}.  Use a smaller epsilon for this step.")
        ln2 = math.log(2 / dl)
        d = float(dim)
        return min(math.sqrt(eps / (2 * d * (d + 1 / eta**2))),
                   eps / (8 * d * math.sqrt(ln2)),
                   eps / (8 * ln2),
                   eps * eta / (12 * math.sqrt(d) * math.sqrt(ln2)))

    @classmethod
    def eta_for_gamma(cls, dim: int, gamma: float, epsilon: float, delta: float) -> float:
        """Smallest eta with ``gamma(dim, epsilon, delta, eta) >= gamma``.

        Raises :class:`PrivacyGuaranteeError` if no eta works (the eta-free terms of Lemma 5.1
        are below ``gamma``): then more blocks are needed.
        """
        eps, dl = _budget(epsilon, delta)
        ln2 = math.log(2 / dl)
        d = float(dim)
        cap = min(eps / (8 * d * math.sqrt(ln2)), eps / (8 * ln2))
        excess = eps / (2 * d * gamma**2) - d
        if gamma > cap or excess <= 0:
            raise PrivacyGuaranteeError(
                f"the PSD mask cannot hide a spectral distance {gamma:.3g} at epsilon={eps:.3g}, "
                f"delta={dl:.3g} (Lemma 5.1 caps it at {cap:.3g}); use more blocks k.")
        eta = max(12 * math.sqrt(d) * math.sqrt(ln2) * gamma / eps, 1 / math.sqrt(excess))
        return eta * (1 + 1e-12)

    @staticmethod
    def concentration_eta(dim: int, beta: float, c1: float = 1602.0) -> float:
        """Lemma 5.2: ``eta = 1 / (C1 (sqrt(d) + sqrt(ln(4/beta))))`` gives dist <= 1/100 w.p.
        1 - beta/2.  C1 = 1602 is the smallest value the Gordon bound ``||G|| <= 2(sqrt d +
        sqrt ln(4/beta))`` supports; 3200 is the paper's recipe (1600 C with C = 2)."""
        return 1.0 / (c1 * (math.sqrt(dim) + math.sqrt(math.log(4 / beta))))

    @classmethod
    def calibrated(cls, gamma: float, epsilon: float, delta: float, example: Any
                   ) -> MultiplicativePSDMask:
        d = int(np.shape(example)[0])
        return cls(cls.eta_for_gamma(d, gamma, epsilon, delta), d)

    def __call__(self, s: Any, rng: np.random.Generator) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        low = np.linalg.cholesky(0.5 * (s + s.T))
        f = low @ (np.eye(self.dim) + self.eta * rng.standard_normal((self.dim, self.dim)))
        out = f @ f.T
        return 0.5 * (out + out.T)

    @property
    def params(self) -> dict[str, float]:
        return {"mask": "multiplicative_psd", "eta": self.eta}


@dataclass(frozen=True)
class PopulousMeanResult:
    """Output of :func:`populous_mean` (only released quantities).

    Attributes
    ----------
    value : ndarray or None
        ``B(mu)``, or None for the paper's ⊥ (the private test failed).
    passed : bool
    record : PrivacyRecord
        (2 eps, 4 e^eps delta)-DP at the internal (eps, delta) = the caller's target.
    k : int
    gamma : float
        The distance the mask was calibrated to hide.
    """

    value: np.ndarray | None
    passed: bool
    record: PrivacyRecord
    k: int
    gamma: float


def populous_mean(
    items: Sequence[Any] | np.ndarray,
    space: Any,
    *,
    epsilon: float,
    delta: float,
    mask: Callable[..., Any] | None = None,
    rng: None | int | np.random.Generator = None,
    constant: str = "proof",
) -> PopulousMeanResult:
    """Private populous mean of k block outputs ``Y_1..Y_k`` (Alg. 1, steps 3-10).

    Parameters
    ----------
    items : sequence or array of k points of ``space`` (k >= 140)
        Outputs of a non-private estimator on k disjoint blocks of the data.
    space : convex semimetric space
        Needs ``r``, ``t``, ``phi``, ``within(items, radius) -> (k, k) bool`` and
        ``average(w, items)`` (see :mod:`cvxdp.estimation.wrapper`).
    epsilon, delta : float
        Target guarantee of the whole release.  Alg. 1 runs at ``eps' = epsilon / 2`` and
        ``delta' = delta / (4 e^{eps'})`` so that Lemma 3.6's (2 eps', 4 e^{eps'} delta') equals
        the target.
    mask : callable, optional
        ``mask(gamma, eps', delta', example) -> B`` building a (gamma, eps', delta')-masking
        mechanism; default ``space.default_mask``.
    rng : None, int or Generator
    constant : {"proof", "paper"}
        Aggregation sensitivity constant, see :func:`aggregation_sensitivity`.

    Returns
    -------
    PopulousMeanResult

    Notes
    -----
    Neighbouring: the k items come from disjoint blocks of a dataset under replace-one, so one
    item changes.  Q, q_i, w_i and mu are never exposed.

    References
    ----------
    Ashtiani & Liaw (2022), Algorithm 1 and Lemma 3.6 (privacy, k >= 140), App. C.2.
    """
    k = len(items)
    if k < K_PRIVACY_MIN:
        raise PrivacyGuaranteeError(
            f"Alg. 1 needs k >= {K_PRIVACY_MIN} blocks for Lemma 3.6's privacy proof, got {k}; "
            "use more data or smaller blocks.")
    return populous_release(populous_statistics(items, space), k, space, items[0],
                            epsilon=epsilon, delta=delta, mask=mask, rng=as_generator(rng),
                            constant=constant)


def populous_release(stats: tuple[float, Any], k: int, space: Any, example: Any, *,
                     epsilon: float, delta: float, rng: np.random.Generator,
                     mask: Callable[..., Any] | None = None,
                     constant: str = "proof") -> PopulousMeanResult:
    """Alg. 1's release (steps 5-10) from its statistics ``(Q, mu)``: the truncated-Laplace test
    of ``Q``, then the mask on ``mu``, with the budget split, sensitivity and record of
    :func:`populous_mean` (which computes the statistics itself; ``cvxdp.dask_backend.gaussians``
    computes them on a worker).

    References
    ----------
    Ashtiani & Liaw (2022), Algorithm 1 and Lemma 3.6.
    """
    eps_t, dl_t = _budget(epsilon, delta)
    eps = eps_t / 2
    dl = dl_t / (4 * math.exp(eps))
    if k < K_PRIVACY_MIN:
        raise PrivacyGuaranteeError(
            f"Alg. 1 needs k >= {K_PRIVACY_MIN} blocks for Lemma 3.6's privacy proof, got {k}; "
            "use more data or smaller blocks.")
    gamma = aggregation_sensitivity(k, space.r, space.phi, constant)
    factory = mask if mask is not None else space.default_mask
    b = factory(gamma, eps, dl, example)
    record = PrivacyRecord(
        "populous_mean", ApproxDP(2 * eps, 4 * math.exp(eps) * dl),
        f"{PAPER}, Lemma 3.6 (TLap Thm 2.12 + mask)",
        params={"k": k, "gamma": gamma, "eps_internal": eps, "delta_internal": dl,
                "r": space.r, "t": space.t, "phi": space.phi, **b.params})
    big_q, mu = stats
    lam, half = truncated_laplace_params(2.0 / k, eps, dl)
    q_hat = big_q + sample_truncated_laplace(lam, half, rng)
    if q_hat < 0.8 + half or mu is None:  # mu is None is unreachable after a pass (Claim C.2)
        return PopulousMeanResult(None, False, record, k, gamma)
    return PopulousMeanResult(b(mu, rng), True, record, k, gamma)


def populous_statistics(items: Any, space: Any) -> tuple[float, Any]:
    """Non-private Q and weighted mean mu of Alg. 1 (steps 3-4, 8-9).  Never released; exposed
    only to the sensitivity tests (|Q - Q'| < 2/k, dist(mu, mu') <= (212 r + 100 phi)/k)."""
    k = len(items)
    close = np.asarray(space.within(items, space.r / space.t), dtype=bool)
    q = close.sum(axis=1) / k
    w = np.minimum(1.0, 10.0 * np.maximum(0.0, q - 0.6))
    total = w.sum()
    return float(q.mean()), (space.average(w / total, items) if total > 0 else None)
