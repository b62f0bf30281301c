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

Supports are decided jointly and without absolute cutoffs, and the loss is built as the quadratic
form above, in :mod:`cvxdp.privacy.ndis_loss` (``PrivacyLoss`` and ``privacy_loss`` stay
importable from here); this module evaluates delta from it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate, optimize, special

from cvxdp.citations import NDIS
from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import check_delta, check_finite
from cvxdp.privacy.ndis_loss import PrivacyLoss, privacy_loss
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


# Largest root the doubling search looks for: beyond the largest epsilon the front door accepts
# (cvxdp.arguments.EPSILON_MAX = 1e6) with room, since the bracket doubles past it (2^24 ~ 1.7e7).
SEARCH_LIMIT = 2.0**24


def epsilon_for(delta_of: Any, delta: float, upper: float | None = None) -> float:
    """Smallest epsilon >= 0 with ``delta_of(epsilon) <= delta`` (delta_of non-increasing).

    ``upper``: a proven bracket (``delta_of(upper) <= delta`` by a theorem), used instead of the
    doubling search, so the root is found wherever it is; without one the search gives up (inf)
    past :data:`SEARCH_LIMIT`.
    """
    if delta_of(0.0) <= delta:
        return 0.0
    if upper is not None:
        hi = float(upper)
        while delta_of(hi) > delta:  # only float rounding at the bracket: step past it
            hi = hi * (1 + 1e-9) + 1e-12
    else:
        hi = 1.0
        while delta_of(hi) > delta:
            hi *= 2.0
            if hi > SEARCH_LIMIT:
                return math.inf
    eps = optimize.brentq(lambda e: delta_of(e) - delta, 0.0, hi, xtol=1e-13,
                          rtol=4 * np.finfo(float).eps)
    # brentq may stop a hair below the root: step up until it holds, by steps doubling from the
    # float spacing (so the overshoot is at most twice the shortfall) and never past hi, where
    # it holds -- the result always satisfies delta_of(eps) <= delta
    step = max(eps * 2.0**-52, 1e-300)
    while delta_of(eps) > delta:
        eps, step = min(eps + step, hi), 2.0 * step
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
