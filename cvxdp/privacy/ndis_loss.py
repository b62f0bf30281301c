"""The privacy loss of one multivariate normal against another, as a quadratic form (NDIS).

For N1 = N(mu1, Sigma1) and N2 = N(mu2, Sigma2), after whitening by a factor of Sigma1 and
rotating, the privacy loss L = ln(p1/p2) under N1 is

    L(w) = sum_i h_i w_i^2 + g_i w_i + k,   w ~ N(0, I),   h_i = (kappa_i - 1)/2,

with kappa_i the eigenvalues of Sigma1^{1/2} Sigma2^{-1} Sigma1^{1/2} (Lu et al. 2024, Thm 1 and
its proof).  :func:`privacy_loss` returns ``(h, g, k)`` as a :class:`PrivacyLoss`;
:mod:`cvxdp.privacy.ndis` evaluates delta(epsilon) from it.

Supports are decided jointly and without absolute cutoffs (not covered by the paper):
supp N(mu, Sigma) = mu + range(Sigma).  The pair is first equilibrated by the diagonal of
Sigma1 + Sigma2 (so a common rescaling, or a direction that is tiny in both covariances, changes
nothing), then whitened by the equilibrated sum, where both covariances have eigenvalues in
[0, 1].  A direction that is null for the pair (rounding level of the sum) is a point mass in
both, and the means must agree there; a direction that is null for one covariance only makes the
supports differ.  If the supports differ, delta = 1 in both directions for every eps; otherwise
NDIS is applied on the common affine subspace.  Variance ratios within 2e-12 of 1 are set to 1
with their total-variation cost added to delta, so delta is 0 only when the loss provably never
exceeds eps on the compared support.

References
----------
Lu, Magdon-Ismail, Wei & Zikas (2024), "The Normal Distributions Indistinguishability Spectrum
and its Application to Privacy-Preserving Machine Learning", Theorem 1 and its proof
(App. B.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.errors import PrivacySpecError

__all__ = ["PrivacyLoss", "privacy_loss"]

_H_TOL = 1e-12  # |h_i| below this: ratio set to 1, its TV cost added (PrivacyLoss.tv_slack)
_RANK_RTOL = 64 * np.finfo(float).eps  # times the dimension: rounding level of a unit-scale eigh


@dataclass(frozen=True)
class PrivacyLoss:
    """The privacy loss L = ln(p1/p2) of N1 against N2 as a quadratic form under N1.

    ``support_differs`` is True when supp N1 != supp N2 (then delta = 1 for every epsilon);
    otherwise ``L = sum h_i w_i^2 + g_i w_i + k`` with ``w ~ N(0, I_k)`` (``k = h.size`` is the
    dimension of the common support).  ``tv_slack`` bounds the total variation between N2 and
    the normal whose loss this is (variance ratios within ``2 * _H_TOL`` of 1 rounded to 1):
    ``delta(N1, N2) <= delta(loss) + e^eps tv_slack``.
    """

    h: np.ndarray
    g: np.ndarray
    k: float
    support_differs: bool = False
    tv_slack: float = 0.0

    @property
    def equal_covariance(self) -> bool:
        return bool(np.all(self.h == 0.0))

    @property
    def mahalanobis(self) -> float:
        """t = ||g|| (the Mahalanobis distance of the means when the covariances agree)."""
        return float(np.linalg.norm(self.g))


_DIFFERS = PrivacyLoss(np.zeros(0), np.zeros(0), 0.0, support_differs=True)
_POINT_MASSES = PrivacyLoss(np.zeros(0), np.zeros(0), 0.0)


def _check_normal(mean: Any, cov: Any, which: str) -> tuple[np.ndarray, np.ndarray]:
    m = np.atleast_1d(np.asarray(mean, dtype=float))
    c = np.atleast_2d(np.asarray(cov, dtype=float))
    if m.ndim != 1 or c.shape != (m.size, m.size):
        raise PrivacySpecError(
            f"mean{which} must be a vector of length d and cov{which} a d x d matrix; got shapes "
            f"{np.shape(mean)} and {np.shape(cov)}.")
    if not (np.all(np.isfinite(m)) and np.all(np.isfinite(c))):
        raise PrivacySpecError(f"mean{which} / cov{which} contain NaN or inf.")
    scale = max(float(np.max(np.abs(c))), 1e-300)
    if np.max(np.abs(c - c.T)) > 1e-8 * scale:
        raise PrivacySpecError(f"cov{which} must be symmetric.")
    c = (c + c.T) / 2.0
    lam, vec = np.linalg.eigh(c)
    tol = max(float(lam[-1]), 0.0) * c.shape[0] * _RANK_RTOL
    if lam[0] < -max(tol, 1e-300) * 1e3:
        raise PrivacySpecError(f"cov{which} must be positive semidefinite (min eigenvalue "
                               f"{lam[0]:.3g}).")
    if lam[0] < 0.0:  # rounding-level negative eigenvalues: project onto the PSD cone
        c = (vec * np.maximum(lam, 0.0)) @ vec.T
        c = (c + c.T) / 2.0
    return m, c


def _joint_support(m1: np.ndarray, c1: np.ndarray, m2: np.ndarray, c2: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | PrivacyLoss:
    """The pair restricted to its common support, in coordinates where Sigma1 + Sigma2 = I.

    Returns ``(P1, P2, delta_mu)`` (the covariances and the mean difference there, P1 + P2 = I
    up to rounding), or a final :class:`PrivacyLoss` when the supports differ or both normals
    are equal point masses.  Every cutoff is relative to the pair: coordinates are first scaled
    by ``sqrt(diag(Sigma1) + diag(Sigma2))``, which is exact for diagonal covariances, so a
    direction that is tiny in both covariances keeps its full relative precision.
    """
    diff = m1 - m2
    var = np.maximum(np.diag(c1), 0.0) + np.maximum(np.diag(c2), 0.0)
    live = var > 0.0
    # A zero diagonal entry of a PSD matrix zeroes its row: both normals are exactly point
    # masses along these coordinates, so they agree there iff the means agree exactly.
    if np.any(diff[~live] != 0.0):
        return _DIFFERS
    if not np.any(live):
        return _POINT_MASSES
    s = np.sqrt(var[live])
    e1 = c1[np.ix_(live, live)] / s[:, None] / s[None, :]
    e2 = c2[np.ix_(live, live)] / s[:, None] / s[None, :]
    dt = diff[live] / s
    k = s.size
    sl, w = np.linalg.eigh(e1 + e2)  # unit diagonal: eigenvalues in [0, k], sum k
    rank_ok = sl > _RANK_RTOL * k * sl[-1]
    if not np.all(rank_ok):
        # Null for the pair: both covariances vanish there up to rounding (point masses in
        # both); the means must agree up to the rounding of the means themselves.
        off = w[:, ~rank_ok].T @ dt
        scale = max(float(np.linalg.norm(m1[live] / s)), float(np.linalg.norm(m2[live] / s)))
        if float(np.max(np.abs(off))) > _RANK_RTOL * k * scale:
            return _DIFFERS
    b = w[:, rank_ok] / np.sqrt(sl[rank_ok])
    p1, p2 = b.T @ e1 @ b, b.T @ e2 @ b
    return (p1 + p1.T) / 2.0, (p2 + p2.T) / 2.0, b.T @ dt


def privacy_loss(*, mean1: Any, cov1: Any, mean2: Any, cov2: Any) -> PrivacyLoss:
    """The privacy loss of N(mean1, cov1) against N(mean2, cov2) in NDIS coordinates.

    Parameters
    ----------
    mean1, mean2 : array_like, shape (d,)
    cov1, cov2 : array_like, shape (d, d)
        Symmetric positive semidefinite.

    Returns
    -------
    PrivacyLoss

    Notes
    -----
    The supports are decided jointly (see :func:`_joint_support`): after equilibration and
    whitening by Sigma1 + Sigma2 both covariances have eigenvalues in [0, 1]; one that is at
    rounding level (``<= 64 d eps``) where the other is not means the supports differ.  Every
    cutoff is relative, so multiplying both covariances by a constant (and the means by its
    square root) leaves the result unchanged.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Theorem 1 and its proof (App. B.1); the support rule for
    singular covariances is ours.
    """
    m1, c1 = _check_normal(mean1, cov1, "1")
    m2, c2 = _check_normal(mean2, cov2, "2")
    if m1.size != m2.size:
        raise PrivacySpecError(f"the two normals have dimensions {m1.size} and {m2.size}.")
    joint = _joint_support(m1, c1, m2, c2)
    if isinstance(joint, PrivacyLoss):
        return joint
    p1, p2, diff = joint
    lam1, v1 = np.linalg.eigh(p1)
    lam2, v2 = np.linalg.eigh(p2)
    if min(float(lam1[0]), float(lam2[0])) <= _RANK_RTOL * lam1.size:
        # One covariance vanishes (to rounding) along a direction of the pair's support where
        # the other has variance ~1 in these units: the supports differ (delta = 1, an upper
        # bound also if the tiny variance is real: the standard deviations differ by > 1e6).
        return _DIFFERS
    # Any factor F with F F^T = Sigma1 works (the eigenvalues below do not depend on it).
    f1 = v1 * np.sqrt(lam1)
    w2 = (v2 / np.sqrt(lam2)) @ v2.T  # Sigma2^{-1/2}
    mmat = w2 @ f1
    kappa, u = np.linalg.eigh(mmat.T @ mmat)
    kappa = np.maximum(kappa, np.finfo(float).tiny)
    z2 = w2 @ diff
    g = u.T @ (mmat.T @ z2)  # = -kappa * nu, nu the mean of N2 in the whitened frame of N1
    # Ratios within rounding of 1 are set to 1 (N2 replaced by N2' with the same mean nu): the
    # Fourier tail needs h = 0 exactly there.  TV(N(0, 1/kappa), N(0, 1)) <= |kappa - 1| / 2 by
    # Pinsker (KL = (x - ln(1 + x)) / 2 <= x^2 / 2 for |x| <= 1/2), summed over coordinates.
    near = (np.abs(kappa - 1.0) <= 2.0 * _H_TOL) & (kappa != 1.0)
    slack = float(np.sum(np.abs(kappa[near] - 1.0))) / 2.0
    kap = np.where(near, 1.0, kappa)
    g = g * (kap / kappa)
    h = (kap - 1.0) / 2.0
    k = 0.5 * float(np.sum(g * g / kap)) - 0.5 * float(np.sum(np.log(kap)))
    return PrivacyLoss(h, g, k, tv_slack=slack)
