"""Exact (epsilon, delta) indistinguishability of two multivariate normals (the NDIS theorem).

For N1 = N(mu1, Sigma1) and N2 = N(mu2, Sigma2) the tight hockey-stick divergence

    delta_{N1,N2}(eps) = sup_S P[N1 in S] - e^eps P[N2 in S] = E_{N1}[(1 - e^{eps - L})_+],

with L = ln(p1/p2) the privacy loss (Lu et al. 2024, Thm 1).  After whitening by a factor of Sigma1
and rotating, L under N1 is the quadratic form

    L(w) = sum_i h_i w_i^2 + g_i w_i + k,   w ~ N(0, I),   h_i = (kappa_i - 1)/2,

with kappa_i the eigenvalues of Sigma1^{1/2} Sigma2^{-1} Sigma1^{1/2}.  The paper evaluates
E[...] by Monte Carlo (Cor. 1), useless at delta ~ 1e-6, and notes (Prop. 16) that it is a
difference of two generalized chi-square CDFs.  We evaluate it **exactly by one Fourier
integral** (Lewis' formula for a call-type payoff): for any 0 < v with E[e^{vL}] < infinity,

    delta = (1/pi) int_0^inf Re[ M(s) e^{-s eps} / (s (s + 1)) ] dx,   s = v - i x,

where M(s) = E[e^{sL}] = exp(s k + sum_i [-1/2 log(1 - 2 s h_i) + s^2 g_i^2 / (2 (1 - 2 s h_i))])
is available in closed form.  We place the contour at the saddle point v* that minimises the
Chernoff bound e^{-v eps} M(v)/(v(v+1)), so the integrand has the size of delta itself and no
catastrophic cancellation occurs even at delta ~ 1e-12 (a difference of two chi-square CDFs
loses all digits there).  Coordinates with h_i = 0 (where the covariances agree) need no special
case, unlike the paper's Prop. 16 which divides by a_i = -2 h_i.

Equal covariances (all h_i = 0) are the Gaussian mechanism with Mahalanobis sensitivity
t = ||Sigma^{-1/2}(mu1 - mu2)||: delta = Phi(t/2 - eps/t) - e^eps Phi(-t/2 - eps/t) (Lemma 2,
Balle & Wang 2018), evaluated in log space.

Supports are decided jointly and without absolute cutoffs (not covered by the paper, digest §2):
supp N(mu, Sigma) = mu + range(Sigma).  The pair is first equilibrated by the diagonal of
Sigma1 + Sigma2 (so a common rescaling, or a direction that is tiny in both covariances, changes
nothing), then whitened by the equilibrated sum, where both covariances have eigenvalues in
[0, 1].  A direction that is null for the pair (rounding level of the sum) is a point mass in
both, and the means must agree there; a direction that is null for one covariance only makes the
supports differ.  If the supports differ, delta = 1 in both directions for every eps; otherwise
NDIS is applied on the common affine subspace.  Variance ratios within 2e-12 of 1 are set to 1
with their total-variation cost added to delta, so delta is 0 only when the loss provably never
exceeds eps on the compared support.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, optimize, special

from cvxdp.citations import NDIS
from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.privacy.budgets import check_delta, check_finite
from cvxdp.privacy.rng import as_generator

__all__ = [
    "PrivacyLoss",
    "privacy_loss",
    "ndis_delta",
    "ndis_epsilon",
    "ndis_delta_montecarlo",
    "gaussian_loss_delta",
]

PAPER = NDIS
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
    singular covariances is ours (digest §2).
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


def gaussian_loss_delta(t: float, epsilon: float) -> float:
    """Phi(t/2 - eps/t) - e^eps Phi(-t/2 - eps/t), computed in log space (Lemma 2)."""
    if t <= 0.0:
        return max(0.0, -math.expm1(epsilon))
    a = t / 2.0 - epsilon / t
    b = -t / 2.0 - epsilon / t
    la = float(special.log_ndtr(a))
    lb = epsilon + float(special.log_ndtr(b))
    if lb >= la:
        return 0.0
    return float(min(1.0, math.exp(la) * -math.expm1(lb - la)))


def _log_mgf(s: np.ndarray | complex, loss: PrivacyLoss) -> Any:
    """log E[e^{sL}] for complex s (principal branches; Re(1 - 2 s h) > 0 on the contour)."""
    s = np.asarray(s, dtype=complex)[..., None]
    one = 1.0 - 2.0 * s * loss.h
    terms = -0.5 * np.log(one) + (s * s) * (loss.g**2) / (2.0 * one)
    return s[..., 0] * loss.k + np.sum(terms, axis=-1)


def _oscillatory_quad(value: Any, a: float, b: float, omega: float) -> float:
    """int_a^b Re value(x) dx; when value ~ e^{i omega x} x slowly varying, QUADPACK's weighted
    rules (QAWO on finite, QAWF on infinite ranges) integrate the oscillation exactly."""
    span = b - a
    if omega == 0.0 or abs(omega) * span < 30.0:
        return integrate.quad(lambda x: value(x).real, a, b, epsabs=1e-14, epsrel=1e-12,
                              limit=400)[0]

    def slow(x: float) -> complex:
        return value(x) * complex(math.cos(omega * x), -math.sin(omega * x))

    opts: dict[str, Any] = {"epsabs": 1e-14}
    if math.isinf(b):
        opts["limlst"] = 100
    else:
        opts.update(epsrel=1e-12, limit=400)
    c = integrate.quad(lambda x: slow(x).real, a, b, weight="cos", wvar=omega, **opts)[0]
    si = integrate.quad(lambda x: slow(x).imag, a, b, weight="sin", wvar=omega, **opts)[0]
    return c - si


def _contour_delta(loss: PrivacyLoss, epsilon: float) -> float:
    h, g = loss.h, loss.g
    if np.all(h <= 0) and np.all(g[h == 0] == 0):
        neg = h < 0
        l_max = loss.k + float(np.sum(g[neg] ** 2 / (-4.0 * h[neg])))
        if l_max <= epsilon:
            return 0.0  # the loss never exceeds epsilon
    hmax = float(np.max(h)) if h.size else 0.0
    v_hi = 1e12 if hmax <= 0 else min(1e12, (1.0 - 1e-9) / (2.0 * hmax))

    def chernoff(u: float) -> float:  # log of e^{-v eps} M(v) / (v (v + 1)) at v = e^u
        v = math.exp(u)
        return float(np.real(_log_mgf(v, loss))) - v * epsilon - u - math.log1p(v)

    res = optimize.minimize_scalar(chernoff, bounds=(math.log(1e-6), math.log(v_hi)),
                                   method="bounded", options={"xatol": 1e-6})
    v = math.exp(float(res.x))
    phi0 = complex(_log_mgf(v, loss)) - v * epsilon
    # Rigorous bound: (1 - e^{-y})_+ e^{-v y} <= 1/(v + 1), so delta <= e^{Re phi0}/(v + 1).
    bound = float(np.real(phi0)) - math.log1p(v)
    if bound < -700.0:
        return math.exp(bound)  # the rigorous bound itself (below 1e-304)
    # Width of the Gaussian bump: curvature of log M at v (variance of the tilted loss).
    one = 1.0 - 2.0 * v * h
    var = float(np.sum(2 * h**2 / one**2 + g**2 / one**3))
    width = 1.0 / math.sqrt(max(var, 1e-300))

    def value(x: float) -> complex:
        s = complex(v, -x)
        return complex(np.exp(complex(_log_mgf(s, loss)) - s * epsilon - phi0)
                       * (v * (v + 1)) / (s * (s + 1)))

    def phase_slope(x: float) -> float:  # d/dx arg value(x) = -Re E'(s), E = log of value
        s = complex(v, -x)
        one_s = 1.0 - 2.0 * s * h
        d_log_m = loss.k + complex(np.sum(h / one_s + s * g**2 / one_s + s * s * g**2 * h
                                          / one_s**2))
        return -float((d_log_m - epsilon - 1.0 / s - 1.0 / (s + 1.0)).real)

    # Two scales: the Gaussian bump (width) and the poles of 1/(s(s+1)) at distance ~v.
    edges = sorted({0.0, *(c * width for c in (2, 8, 40)), *(c * v for c in (2, 8, 40))})
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        total += _oscillatory_quad(value, a, b, phase_slope(0.5 * (a + b)))
    # Tail: e^{i omega x} times a slowly varying, algebraically decaying factor, where omega is
    # the asymptotic linear phase of log M(s) - s eps (h_i != 0 terms are ~ -s g^2/(4h)).
    nz = h != 0
    omega = epsilon - loss.k + float(np.sum(g[nz] ** 2 / (4.0 * h[nz])))
    total += _oscillatory_quad(value, edges[-1], math.inf, omega if abs(omega) * width > 1e-6
                               else 0.0)
    scale = math.exp(float(np.real(phi0))) / (v * (v + 1))
    return float(min(1.0, max(0.0, scale * total / math.pi)))


def _delta_of_loss(loss: PrivacyLoss, epsilon: float, method: str = "auto") -> float:
    if loss.support_differs:
        return 1.0
    if loss.h.size == 0:
        return max(0.0, -math.expm1(epsilon))  # equal point masses
    if method == "auto" and loss.equal_covariance:
        out = gaussian_loss_delta(loss.mahalanobis, epsilon)
    else:
        out = _contour_delta(loss, epsilon)
    if loss.tv_slack > 0.0:  # delta(N1, N2) <= delta(N1, N2') + e^eps TV(N2, N2')
        out = min(1.0, out + math.exp(epsilon) * loss.tv_slack)
    return out


def _check_eps(epsilon: Any) -> float:
    eps = check_finite("epsilon", epsilon)
    if eps < 0:
        raise BudgetError(f"epsilon must be >= 0, got {epsilon!r}.")
    return eps


def ndis_delta(*, epsilon: float, mean1: Any, cov1: Any, mean2: Any, cov2: Any,
               symmetric: bool = False, method: str = "auto") -> float:
    """Tight delta(epsilon) between N(mean1, cov1) and N(mean2, cov2).

    Parameters
    ----------
    epsilon : float
        >= 0.
    mean1, cov1, mean2, cov2 : array_like
        The two normals (covariances PSD; singular ones by the support rule).
    symmetric : bool
        False: the one-sided ``sup_S P1(S) - e^eps P2(S)``.  True: the max over both orders
        (what (epsilon, delta)-indistinguishability of the pair needs).
    method : {"auto", "contour"}
        "auto" uses the closed form when the covariances agree; "contour" forces the general
        Fourier path (used by tests to check it against the closed form).

    Returns
    -------
    float
        delta in [0, 1]; absolute accuracy ~1e-12 relative to the Chernoff scale of delta.

    References
    ----------
    Lu et al. (2024), Theorem 1 (NDIS), Prop. 16 (chi-square reduction), Lemma 2
    (equal covariances).  The single Fourier integral at the saddle point is ours.
    """
    if method not in ("auto", "contour"):
        raise ValueError(f"method must be 'auto' or 'contour', got {method!r}")
    eps = _check_eps(epsilon)
    fwd = privacy_loss(mean1=mean1, cov1=cov1, mean2=mean2, cov2=cov2)
    out = _delta_of_loss(fwd, eps, method)
    if symmetric:
        rev = privacy_loss(mean1=mean2, cov1=cov2, mean2=mean1, cov2=cov1)
        out = max(out, _delta_of_loss(rev, eps, method))
    return out


def epsilon_for(delta_of: Any, delta: float) -> float:
    if delta_of(0.0) <= delta:
        return 0.0
    hi = 1.0
    while delta_of(hi) > delta:
        hi *= 2.0
        if hi > 1e6:
            return math.inf
    eps = optimize.brentq(lambda e: delta_of(e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-12)
    for _ in range(60):  # brentq may stop a hair below the root: step up until it holds
        if delta_of(eps) <= delta:
            break
        eps = eps * (1 + 1e-10) + 1e-13
    return float(eps)


def ndis_epsilon(*, delta: float, mean1: Any, cov1: Any, mean2: Any, cov2: Any,
                 symmetric: bool = True) -> float:
    """Smallest epsilon >= 0 with ``ndis_delta(epsilon) <= delta`` (inf if none exists).

    delta(epsilon) is non-increasing in epsilon, so the root is found by bracketing + Brent and
    then nudged up until the constraint holds exactly.  ``symmetric`` defaults to True here: the
    epsilon of the pair as a DP guarantee needs both orders.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Theorem 1, Def. 1.
    """
    delta = check_delta(delta)
    fwd = privacy_loss(mean1=mean1, cov1=cov1, mean2=mean2, cov2=cov2)
    losses = [fwd]
    if symmetric:
        losses.append(privacy_loss(mean1=mean2, cov1=cov2, mean2=mean1, cov2=cov1))
    if any(lo.support_differs for lo in losses):
        return math.inf
    return epsilon_for(lambda e: max(_delta_of_loss(lo, e) for lo in losses), delta)


def ndis_delta_montecarlo(*, epsilon: float, mean1: Any, cov1: Any, mean2: Any, cov2: Any,
                          alpha: float = 1e-3, gamma: float = 1e-6,
                          rng: None | int | np.random.Generator = None
                          ) -> tuple[float, float]:
    """The paper's Monte Carlo estimator A^IS (Fig. 2, Cor. 1): ``(estimate, estimate + alpha)``.

    With probability >= 1 - gamma the true delta lies within alpha of the estimate (Hoeffding),
    so ``estimate + alpha`` is a certified bound at failure probability gamma.  Uses
    ``ceil(ln(2/gamma) / (2 alpha^2))`` samples: only practical for moderate delta.  Kept as a
    self-test of :func:`ndis_delta`.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Figure 2 and Corollary 1.
    """
    eps = _check_eps(epsilon)
    loss = privacy_loss(mean1=mean1, cov1=cov1, mean2=mean2, cov2=cov2)
    if loss.support_differs:
        return 1.0, 1.0
    m = int(math.ceil(math.log(2.0 / gamma) / (2.0 * alpha**2)))
    gen = as_generator(rng)
    acc, done = 0.0, 0
    while done < m:  # chunks keep memory bounded
        b = min(m - done, 200_000)
        w = gen.standard_normal((b, loss.h.size))
        lval = w**2 @ loss.h + w @ loss.g + loss.k
        acc += float(np.sum(-np.expm1(np.minimum(eps - lval, 0.0))))
        done += b
    est = acc / m + math.exp(eps) * loss.tv_slack
    return est, min(1.0, est + alpha)
