"""The generic private-to-non-private reduction (Ashtiani & Liaw, §3, Alg. 1).

``private_wrapper(estimator, space, ...)`` turns any non-private estimator into an (epsilon,
delta)-DP one: randomly permute the data, run the estimator on k disjoint blocks, and release the
private populous mean (:func:`cvxdp.estimation.masking.populous_mean`) of the k outputs through a
masking mechanism of the space's geometry.  Privacy holds for *every* estimator (Lemma 3.6 needs
nothing from it); utility needs the block outputs to cluster within ``r / (2 t)`` of the truth.

Spaces (Def. 3.1):

* :class:`EuclideanSpace` -- vectors or arrays with the l2 / Frobenius norm (Prop. 7.1: t = 1,
  phi = 0, any r), Gaussian mask (Lemma 7.2).
* :class:`SpectralPDSpace` -- positive-definite matrices with the affine-invariant spectral
  semimetric (Lemma 3.2: r <= 1, t = 1 + r/2, phi = 1), multiplicative mask (Lemma 5.1).

:func:`spectral_distance_sdp` is the CVXPY model of that semimetric (four LMIs in a scalar), the
exact reference the closed form is tested against.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
from scipy import linalg

from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.masking import (
    PAPER,
    GaussianMask,
    MultiplicativePSDMask,
    PopulousMeanResult,
    k_min,
    populous_mean,
)
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyReport
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.privacy.rng import as_generator

__all__ = [
    "EuclideanSpace",
    "SpectralPDSpace",
    "spectral_distance",
    "spectral_distance_sdp",
    "WrapperResult",
    "private_wrapper",
]


class _WeightedAverage:
    """The convex combination both spaces use (Ashtiani & Liaw 2022, Def 3.1)."""

    def average(self, w: np.ndarray, items: Any) -> np.ndarray:
        # only positive weights: a zero-weight item may be non-finite (0 * inf = nan)
        keep = w > 0
        return np.tensordot(w[keep], np.asarray(items, dtype=float)[keep], axes=1)


@dataclass(frozen=True)
class EuclideanSpace(_WeightedAverage):
    """(R^D, l2): t = 1, phi = 0 and any restriction radius r > 0 (Prop. 7.1).

    Parameters
    ----------
    r : float
        Points within ``r`` of each other count as agreeing; the mask hides ~ 212 r / k.  Public:
        choose it from the estimator's known accuracy, never from the data.
    """

    r: float
    t: float = 1.0
    phi: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.r) and self.r > 0):
            raise PrivacySpecError(f"EuclideanSpace needs a finite radius r > 0, got {self.r!r}.")

    def distance(self, a: Any, b: Any) -> float:
        return float(np.linalg.norm(np.asarray(a, float) - np.asarray(b, float)))

    def within(self, items: Any, radius: float) -> np.ndarray:
        y = np.asarray(items, dtype=float).reshape(len(items), -1)
        with np.errstate(over="ignore", invalid="ignore"):  # huge items just match nothing
            sq = (y * y).sum(axis=1)
            d2 = sq[:, None] + sq[None, :] - 2.0 * (y @ y.T)
            # the Gram trick loses ~eps*||y||^2 absolutely: recompute exactly near the threshold
            near = np.abs(d2 - radius**2) <= 1e-8 * (sq[:, None] + sq[None, :] + radius**2)
            if near.any():
                i, j = np.nonzero(near)
                d2[i, j] = ((y[i] - y[j]) ** 2).sum(axis=1)
        ok = np.isfinite(sq)
        return (d2 <= radius**2) & ok[:, None] & ok[None, :]

    def default_mask(self, gamma: float, epsilon: float, delta: float, example: Any
                     ) -> GaussianMask:
        return GaussianMask.calibrated(gamma, epsilon, delta, example)


def spectral_distance(a: Any, b: Any) -> float:
    """``max(||A^{-1/2} B A^{-1/2} - I||, ||B^{-1/2} A B^{-1/2} - I||)`` (Eq. 5.1); inf if singular.

    Computed from the generalized eigenvalues ``lambda`` of (B, A):
    ``max_i max(|lambda_i - 1|, |1/lambda_i - 1|)``.
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    try:
        lam = linalg.eigh(b, a, eigvals_only=True)
    except (linalg.LinAlgError, ValueError):
        return math.inf
    if lam.min() <= 0:
        return math.inf
    return float(np.max(np.maximum(np.abs(lam - 1), np.abs(1 / lam - 1))))


def spectral_distance_sdp(a: Any, b: Any, solver: str | None = None) -> float:
    """The spectral semimetric as a convex program (CVXPY): the exact reference.

    ``min tau  s.t.  A / (1 + tau) <= B <= (1 + tau) A`` is not linear in tau, so the model uses
    the equivalent ``s = 1/(1+tau)`` form:  maximise s subject to ``s A <= B`` and ``s B <= A``
    (both LMIs); then ``dist = 1/s - 1`` (Lemma 3.2's dist equals
    ``max_i max(lambda_i, 1/lambda_i) - 1`` for the generalized eigenvalues).
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    s = cp.Variable()
    cons = [b - s * a >> 0, a - s * b >> 0, s >= 0]
    prob = cp.Problem(cp.Maximize(s), cons)
    prob.solve(solver=solver or cp.CLARABEL)
    if s.value is None or s.value <= 0:
        return math.inf
    return float(1.0 / s.value - 1.0)


@dataclass(frozen=True)
class SpectralPDSpace(_WeightedAverage):
    """Positive-definite d x d matrices with the spectral semimetric (Lemma 3.2, App. C.1).

    ``r <= 1`` with ``t = 1 + r / 2`` (the paper fixes r = 1, t = 3/2) and ``phi = 1``.  It is
    affine invariant, so no bound on the scale or condition number is needed.  Singular items
    (e.g. a block with fewer points than d) match nothing, as Eq. 5.1 intends; so do items with
    a NaN / inf entry (a failed block), and a comparison that overflows fails, with no warning.
    """

    r: float = 1.0
    phi: float = 1.0

    def __post_init__(self) -> None:
        if not (0 < self.r <= 1):
            raise PrivacySpecError(f"SpectralPDSpace needs 0 < r <= 1 (Lemma 3.2), got {self.r}.")

    @property
    def t(self) -> float:
        return 1.0 + self.r / 2.0

    def distance(self, a: Any, b: Any) -> float:
        return spectral_distance(a, b)

    def within(self, items: Any, radius: float) -> np.ndarray:
        y = np.asarray(items, dtype=float)
        k, d = y.shape[0], y.shape[1]
        out = np.zeros((k, k), dtype=bool)
        # every item is private: nothing below may raise or warn because of its values
        with np.errstate(all="ignore"):
            y = 0.5 * (y + np.swapaxes(y, 1, 2))
            ok = np.isfinite(y).reshape(k, -1).all(axis=1)
            inv_l = np.full_like(y, np.nan)
            eye = np.eye(d)
            for i in np.nonzero(ok)[0]:  # k Cholesky factorisations; pairs batched below
                try:
                    low = np.linalg.cholesky(y[i])
                    inv_l[i] = linalg.solve_triangular(low, eye, lower=True)
                    ok[i] = np.isfinite(inv_l[i]).all()
                except (np.linalg.LinAlgError, ValueError):
                    ok[i] = False
            idx = np.nonzero(ok)[0]
            if idx.size == 0:
                return out
            lo, hi = 1.0 / (1.0 + radius), 1.0 + radius
            yy = y[idx]
            for i in idx:  # batched over j: eigenvalues of L_i^{-1} Y_j L_i^{-T}
                m = inv_l[i] @ yy @ inv_l[i].T
                m = 0.5 * (m + np.swapaxes(m, 1, 2))
                fin = np.isfinite(m).reshape(len(idx), -1).all(axis=1)  # overflow: no match
                lam = np.linalg.eigvalsh(np.where(fin[:, None, None], m, 0.0))
                out[i, idx] = fin & (lam.min(axis=1) >= lo) & (lam.max(axis=1) <= hi)
        return out & out.T  # symmetric by definition; guards rounding asymmetry

    def default_mask(self, gamma: float, epsilon: float, delta: float, example: Any
                     ) -> MultiplicativePSDMask:
        return MultiplicativePSDMask.calibrated(gamma, epsilon, delta, example)


@dataclass(frozen=True)
class WrapperResult:
    """Release of :func:`private_wrapper`: ``value`` (None for ⊥), ``privacy``, block layout."""

    value: np.ndarray | None
    passed: bool
    privacy: PrivacyReport
    k: int
    block_size: int
    gamma: float


def private_wrapper(
    estimator: Callable[[np.ndarray], Any],
    space: Any,
    *,
    epsilon: float,
    delta: float,
    k: int | None = None,
    mask: Callable[..., Any] | None = None,
    constant: str = "proof",
) -> Callable[..., WrapperResult]:
    """Make a non-private estimator (epsilon, delta)-DP by the populous mean reduction.

    Parameters
    ----------
    estimator : callable
        ``estimator(block) -> point of space`` on an (s, ...) array of records.  Any function
        (a CVXPY solve, a robust filter, ...); privacy does not depend on it.  Its output
        shape must not depend on the data.  It runs with warnings silenced, and a block on
        which it raises (or returns another shape than the first block that succeeded)
        counts as a point that agrees with nothing: which block failed depends on the data,
        so neither the exception nor the warning may leave the mechanism.  Try the estimator
        on public or synthetic data first: if every block fails, the release is ⊥.
    space : EuclideanSpace, SpectralPDSpace or a compatible object
    epsilon, delta : float
        Target guarantee; delta > 0 is required.
    k : int, optional
        Number of disjoint blocks; default ``k_min(epsilon/2, ...)`` (>= 140), the fewest for
        which clean data passes the test.
    mask : callable, optional
        Mask factory (see :func:`populous_mean`); default the space's.
    constant : {"proof", "paper"}
        Aggregation sensitivity constant.

    Returns
    -------
    callable
        ``private_estimator(X, *, rng=None) -> WrapperResult``.  Neighbouring: replace one record
        of X (n fixed and public); X is randomly permuted first (Remark 2.6) so the guarantee is
        for the multiset.  A record with a NaN / inf entry is replaced by the zero record
        (record by record, so neighbours stay neighbours), never refused: a refusal would reveal
        that such a record exists.

    Raises
    ------
    PrivacyGuaranteeError
        If k < 140 (Lemma 3.6) or the mask cannot hide the aggregation sensitivity.

    References
    ----------
    Ashtiani & Liaw (2022), Algorithm 1, Lemma 3.6, Remark 2.6.
    """
    budget = ApproxDP(epsilon, delta)
    kk = int(k) if k is not None else k_min(budget.epsilon / 2,
                                           budget.delta / (4 * math.exp(budget.epsilon / 2)))

    def private_estimator(x: Any, *, rng: None | int | np.random.Generator = None
                          ) -> WrapperResult:
        x = np.asarray(x, dtype=float)
        if x.ndim < 1:  # the shape is public; the values are never checked
            raise UnsupportedProblemError("X must be an array with records along axis 0.")
        n = x.shape[0]
        finite = np.isfinite(x.reshape(n, -1)).all(axis=1)
        x = np.where(finite.reshape((n,) + (1,) * (x.ndim - 1)), x, 0.0)
        s = n // kk
        if s < 1:
            raise PrivacySpecError(f"n={n} records cannot fill k={kk} blocks; pass more data "
                                   "or a smaller k (>= 140).")
        gen = as_generator(rng)
        xb = x[gen.permutation(n)][: kk * s].reshape((kk, s) + x.shape[1:])
        items = _block_outputs(estimator, xb)
        res: PopulousMeanResult = populous_mean(items, space, epsilon=budget.epsilon,
                                                delta=budget.delta, mask=mask, rng=gen,
                                                constant=constant)
        acct = PrivacyAccountant(budget)
        acct.spend(res.record)
        report = acct.report(theorem=f"{PAPER}, Algorithm 1 / Lemma 3.6",
                             neighbouring="replace one record (n public); input permuted",
                             details={"k": kk, "block_size": s, "passed": res.passed})
        return WrapperResult(res.value, res.passed, report, kk, s, res.gamma)

    return private_estimator


def _block_outputs(estimator: Callable[[np.ndarray], Any], blocks: np.ndarray) -> np.ndarray:
    """The estimator on every block, with no exception or warning leaving (both depend on the
    data).  A block that raises, or whose output has another shape than the first block that
    succeeded, gets a NaN point, which agrees with no other (``within`` drops non-finite
    points) and so gets weight 0.  If no block succeeds, every point is NaN and Alg. 1 returns
    ⊥ with probability 1 (Q = 0 < 0.8 + TLap); a (1, 1) NaN array stands in for the shape."""
    outs: list[np.ndarray | None] = []
    shape = None
    for b in blocks:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out = np.asarray(estimator(b), dtype=float)
        except Exception:  # noqa: BLE001 -- any failure of the user's estimator on a block
            out = None
        if out is not None and shape is None:
            shape = out.shape
        outs.append(out if out is not None and out.shape == shape else None)
    shape = (1, 1) if shape is None else shape
    return np.stack([np.full(shape, np.nan) if o is None else o for o in outs])


# ---------------------------------------------------------------------------------------------
# The paper's two instances of the reduction used by the Gaussian learner (§4 and §5).
# ---------------------------------------------------------------------------------------------

def block_projector(z: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """Orthogonal projector onto the row span of ``z``.

    Singular values below ``rtol * sigma_1`` count as zero: rounding leaves ~1e-16 ||x|| in
    every direction (more after centring data with a large mean), so the LAPACK-style
    ``max(m, n) eps sigma_1`` threshold would see full rank; directions with a variance ratio
    below ``rtol^2 = 1e-18`` are treated as degenerate (a public choice).  A block with a NaN /
    inf entry, or whose SVD fails, gives the NaN matrix, which agrees with no other block point
    (no exception leaves: the block's rows are private).
    """
    d = z.shape[1]
    if not np.isfinite(z).all():
        return np.full((d, d), np.nan)
    try:
        _, sv, vt = np.linalg.svd(z, full_matrices=False)
    except np.linalg.LinAlgError:
        return np.full((d, d), np.nan)
    tol = rtol * (sv[0] if sv.size else 0.0)
    v = vt[sv > tol]
    return v.T @ v


def private_subspace(
    z: np.ndarray, *, epsilon: float, delta: float, tol: float = 1e-6,
    rng: None | int | np.random.Generator = None,
) -> tuple[np.ndarray | None, PopulousMeanResult]:
    """Private exact subspace (Alg. 2, numerical variant): an orthonormal basis of range(Sigma).

    ``z`` holds zero-mean samples (e.g. pair differences ``(X_i - X_j)/sqrt 2``), already in a
    random order.  Blocks of ``s = d`` rows give projectors; they are points of the Frobenius
    space with ``r = tol`` (exact equality is meaningless in floating point), the
    populous mean is masked by a Gaussian, and the release is snapped to the nearest projector
    (eigenvectors with eigenvalue > 1/2; post-processing).  Needs ``len(z) >= k_min * d``.

    Returns
    -------
    (U or None, PopulousMeanResult)
        U is d x rank with orthonormal columns; None is ⊥.

    References
    ----------
    Ashtiani & Liaw (2022), Algorithm 2, Theorem 4.1; Lemma 3.6.
    """
    m, d = z.shape
    k = k_min(epsilon / 2, delta / (4 * math.exp(epsilon / 2)))
    if m < k * d:
        raise PrivacySpecError(f"the subspace step needs >= {k * d} pair differences "
                               f"(k={k} blocks of d={d}), got {m}.")
    blocks = z[: k * d].reshape(k, d, d)
    items = np.stack([block_projector(b) for b in blocks])
    res = populous_mean(items, EuclideanSpace(r=tol), epsilon=epsilon, delta=delta, rng=rng)
    if res.value is None:
        return None, res
    lam, vec = np.linalg.eigh(0.5 * (res.value + res.value.T))
    return vec[:, lam > 0.5], res


def private_preconditioner(
    z: np.ndarray, *, epsilon: float, delta: float, beta: float = 0.1, c1: float = 3200.0,
    estimator: Callable[[np.ndarray], np.ndarray] | None = None, eta: float | None = None,
    rng: None | int | np.random.Generator = None,
) -> tuple[np.ndarray | None, dict[str, Any], PopulousMeanResult | None]:
    """Covariance up to a constant factor (Alg. 3; Alg. 4 with a robust ``estimator``).

    Spectral space with r = 1, t = 3/2, phi = 1; mask eta from Lemma 5.2 (``c1`` = 3200 is the
    paper's recipe) unless given (Alg. 4 passes its own); ``k = ceil(max(400 (r + phi) / gamma,
    k_min))`` with the paper's constant.  When ``len(z) // k < d`` every block estimate is singular
    (or no block exists), so Alg. 1 returns ⊥ with probability 1; that case is short-cut without
    running it (same output law).

    Returns
    -------
    (Sigma_hat or None, parameters, PopulousMeanResult or None)

    References
    ----------
    Ashtiani & Liaw (2022), Algorithm 3, Lemmas 5.1-5.3, Theorem 5.4; Algorithm 4, Theorem 6.3.
    """
    m, d = z.shape
    eps_i, dl_i = epsilon / 2, delta / (4 * math.exp(epsilon / 2))
    eta = MultiplicativePSDMask.concentration_eta(d, beta, c1) if eta is None else eta
    gamma = MultiplicativePSDMask.gamma(d, eps_i, dl_i, eta)
    space = SpectralPDSpace(r=1.0)
    k = max(math.ceil(400 * (space.r + space.phi) * (1 + 1e-8) / gamma), k_min(eps_i, dl_i))
    s = m // k
    par = {"eta": eta, "gamma": gamma, "k": k, "block_size": s, "c1": c1}
    if s < d:
        return None, par, None
    est = estimator or (lambda b: b.T @ b / len(b))
    items = np.stack([est(b) for b in z[: k * s].reshape(k, s, d)])
    mask = MultiplicativePSDMask(eta, d)

    def fixed_mask(g: float, e: float, dl: float, example: Any) -> MultiplicativePSDMask:
        if MultiplicativePSDMask.gamma(d, e, dl, eta) < g:  # cannot happen with k above
            raise PrivacySpecError("PSD mask too weak for the aggregation sensitivity.")
        return mask

    res = populous_mean(items, space, epsilon=epsilon, delta=delta, mask=fixed_mask, rng=rng,
                        constant="paper")
    return res.value, par, res
