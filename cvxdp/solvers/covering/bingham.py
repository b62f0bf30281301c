"""The continuous exponential mechanism on the unit sphere: exact Bingham sampling.

The private covering-SDP oracle of Song et al. 2025 (Lemma B.9) runs the exponential mechanism over
rank-one candidates ``X = OPT v v'`` with score ``Q(v) = OPT v'Mv - 1``, ``M = sum_i y_i A_i``.
The paper discretises the sphere with a gamma-net; here the mechanism is sampled on the sphere
itself: the density w.r.t. the uniform (surface) measure is

    p(v)  proportional to  exp(kappa v'Mv),        kappa = eps' OPT / (2 Delta_Q),

a Bingham distribution.  It is the limit of the net mechanism (a finite net whose points carry
equal-area cells is a Riemann sum of this density, see :func:`net_exponential_sample`) and it is
eps'-DP by the same one-line argument as the finite mechanism: for neighbours ``M, M'`` with
``|Q_M(v) - Q_M'(v)| <= Delta_Q`` for every ``v``, the densities ``exp(eps' Q / (2 Delta_Q)) / Z``
differ pointwise by at most ``exp(eps'/2)`` in the numerator and ``exp(eps'/2)`` in the
normaliser ``Z``, so the likelihood ratio is at most ``exp(eps')`` everywhere; moreover the
privacy loss ``log p_M(v)/p_M'(v)`` lies in an interval of width ``eps'`` (bounded range), which
gives ``eps'^2/8``-zCDP (Cesar & Rogers 2021, Lemma 3.2; the proof is measure-theoretic and holds
on the sphere).  Utility needs a volume argument instead of Lemma 3.12: see
:func:`sphere_oracle_error`.

For the spin factor (second-order cone) the candidates are ``OPT (1, u)/2`` and the score is
*linear* in the unit vector ``u``: the continuous mechanism is a von Mises--Fisher distribution,
sampled exactly by Wood's (1994) rejection algorithm (:func:`sample_vmf`).

Sampler: Kent, Ganeiber & Mardia (2013), rejection from an angular central Gaussian (ACG)
envelope; exact (the accepted draws have exactly the Bingham law) with acceptance rate bounded
away from zero for every concentration.

References
----------
Song, Xue & Zhang (2025): Lemma B.8, Lemma B.9, Thm B.10.
J. T. Kent, A. M. Ganeiber, K. V. Mardia, "A new method to simulate the Bingham and related
distributions in directional data analysis with applications", arXiv:1310.8110 (2013), Sec. 4.
A. T. A. Wood, "Simulation of the von Mises Fisher distribution", Comm. Stat. Simul. Comput.
23(1), 1994.
M. Cesar, R. Rogers, "Bounding, concentrating, and truncating: unifying privacy loss composition
for data analytics", ALT 2021, Lemma 3.2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

from cvxdp.privacy.mechanisms import gumbel_argmax
from cvxdp.privacy.rng import as_generator

__all__ = [
    "sample_bingham",
    "acg_parameter",
    "bingham_log_density",
    "sphere_net",
    "net_exponential_sample",
    "sphere_oracle_error",
    "cap_measure",
    "sample_vmf",
    "vmf_oracle_error",
]


def acg_parameter(a: np.ndarray) -> float:
    """The envelope parameter ``b`` of Kent et al.: the root of ``sum_j 1/(b + 2 a_j) = 1``.

    ``a`` are the eigenvalues of the Bingham matrix ``A`` (density ``exp(-x'Ax)``), shifted so
    that ``min a = 0``; the root lies in ``[1, q]``.
    """
    a = np.asarray(a, dtype=float)
    q = a.size
    f = lambda b: float(np.sum(1.0 / (b + 2.0 * a)) - 1.0)  # noqa: E731
    if f(float(q)) >= 0:  # all a = 0: uniform; the ACG envelope is uniform too
        return float(q)
    if q == 1:
        return 1.0
    # Newton from b = 1: f is convex and decreasing with f(1) >= 0 (min a = 0), so the iterates
    # rise monotonically to the root; brentq only if that has not converged.  (Any b in (0, q]
    # keeps the sampler exact, the root only maximises its acceptance rate.)
    twoa = [2.0 * float(x) for x in a]
    b = 1.0
    for _ in range(60):
        inv = [1.0 / (b + t) for t in twoa]
        g = sum(inv) - 1.0
        if g <= 1e-15:
            return float(min(max(b, 1.0), float(q)))
        b += g / sum(v * v for v in inv)
    return float(optimize.brentq(f, 1.0, float(q), xtol=1e-14, rtol=1e-14))


def sample_bingham(M: Any, kappa: float, *, size: int | None = None,
                   rng: None | int | np.random.Generator = None,
                   max_rounds: int = 10_000) -> np.ndarray:
    """Exact draws of unit vectors ``v`` with density proportional to ``exp(kappa v'Mv)``.

    Parameters
    ----------
    M : array_like, shape (r, r)
        Symmetric matrix.
    kappa : float
        Concentration (>= 0).  For the private oracle ``kappa = eps' OPT / (2 Delta_Q)``.
    size : int, optional
        Number of draws; ``None`` returns one vector of shape ``(r,)``.
    rng : None, int or Generator
    max_rounds : int
        Safety cap on rejection rounds (the acceptance rate is > 0.5 in practice).

    Returns
    -------
    ndarray, shape (r,) or (size, r)

    Notes
    -----
    With ``M = U diag(lam) U'``, set ``a_j = kappa (lam_max - lam_j) >= 0`` so the density is
    ``exp(-x'Ax)`` in the eigenbasis.  Propose ``x = y/|y|`` with ``y ~ N(0, Omega^{-1})``,
    ``Omega = I + 2A/b`` (ACG density ``(x'Omega x)^{-r/2}``), and accept with probability
    ``exp(-x'Ax) (x'Omega x)^{r/2} / M*``, ``M* = exp(-(r-b)/2) (r/b)^{r/2}``; the bound holds
    because ``t -> -t + (r/2) log(1 + 2t/b)`` peaks at ``t = (r-b)/2`` (Kent et al. 2013, Sec. 4).

    References
    ----------
    Kent, Ganeiber & Mardia (2013), arXiv:1310.8110, Sec. 4; Song, Xue & Zhang (2025).
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix, got shape {M.shape}.")
    if not np.all(np.isfinite(M)):
        raise ValueError("M contains NaN or inf.")
    kappa = float(kappa)
    if not (kappa >= 0 and math.isfinite(kappa)):
        raise ValueError(f"kappa must be finite and >= 0, got {kappa!r}.")
    gen = as_generator(rng)
    r = M.shape[0]
    lam, U = np.linalg.eigh((M + M.T) / 2.0)
    a = kappa * (lam.max() - lam)
    b = acg_parameter(a)
    omega = 1.0 + 2.0 * a / b
    log_mstar = -(r - b) / 2.0 + (r / 2.0) * math.log(r / b)
    n = 1 if size is None else int(size)
    out = np.empty((n, r))
    filled = 0
    for _ in range(max_rounds):
        batch = max(8, 2 * (n - filled))
        y = gen.standard_normal((batch, r)) / np.sqrt(omega)
        x = y / np.sqrt(np.einsum("ij,ij->i", y, y))[:, None]
        x2 = x * x
        xax = x2 @ a
        xox = x2 @ omega
        log_acc = -xax + (r / 2.0) * np.log(xox) - log_mstar
        keep = x[np.log(gen.uniform(size=batch)) < log_acc]
        take = min(keep.shape[0], n - filled)
        out[filled:filled + take] = keep[:take]
        filled += take
        if filled == n:
            break
    else:  # pragma: no cover - acceptance rate is bounded away from 0
        raise RuntimeError("Bingham rejection sampler did not finish; report this as a bug.")
    v = out @ U.T
    return v[0] if size is None else v


def bingham_log_density(v: Any, M: Any, kappa: float) -> np.ndarray:
    """Unnormalised log density ``kappa v'Mv`` (for tests and the net reference)."""
    v = np.atleast_2d(np.asarray(v, dtype=float))
    return kappa * np.einsum("ni,ij,nj->n", v, np.asarray(M, dtype=float), v)


def sphere_net(r: int, n: int) -> tuple[np.ndarray, float]:
    """An explicit finite net of the unit sphere ``S^{r-1}`` for small ``r`` (reference path).

    ``r = 2``: ``n`` equally spaced angles (covering radius ``2 sin(pi/(2n))``).
    ``r = 3``: ``n`` Fibonacci-lattice points (equal-area cells; covering radius estimated as the
    largest distance from 20000 quasi-random probe points to the net, an upper-bound estimate).
    Only antipodal-symmetric scores are used, so the net is used as is.

    Returns
    -------
    points : ndarray, shape (n, r)
    gamma : float
        Covering radius (every unit vector is within ``gamma`` of a net point).
    """
    if r == 2:
        th = 2 * np.pi * (np.arange(n) + 0.5) / n
        return np.column_stack([np.cos(th), np.sin(th)]), 2 * math.sin(math.pi / (2 * n))
    if r == 3:
        pts = _fibonacci(n)
        probe = _fibonacci(20000, offset=0.37)
        d = np.sqrt(np.maximum(0.0, 2 - 2 * (probe @ pts.T).max(axis=1)))
        return pts, float(d.max())
    raise ValueError(f"sphere_net is a small-r reference (r in {{2, 3}}), got r={r}; use "
                     "sample_bingham (the net's continuous limit) for larger r.")


def _fibonacci(n: int, offset: float = 0.5) -> np.ndarray:
    i = np.arange(n) + offset
    z = 1 - 2 * i / n
    phi = math.pi * (3 - math.sqrt(5)) * i
    rad = np.sqrt(np.maximum(0.0, 1 - z * z))
    return np.column_stack([rad * np.cos(phi), rad * np.sin(phi), z])


def net_exponential_sample(M: Any, kappa: float, net: np.ndarray, *,
                           rng: None | int | np.random.Generator = None) -> np.ndarray:
    """The paper's discrete oracle: exponential mechanism over the net points (Lemma B.9).

    ``Pr[v] ~ exp(kappa v'Mv)`` over ``v`` in ``net`` (Gumbel-max, exact).  With equal-area cells
    this is a Riemann sum of the Bingham density, so as the net is refined its law converges to
    :func:`sample_bingham`'s; it is eps'-DP for the same score sensitivity.

    References
    ----------
    Song, Xue & Zhang (2025), Lemma B.8, Lemma B.9.
    """
    gen = as_generator(rng)
    logits = bingham_log_density(net, M, kappa)
    return net[gumbel_argmax(logits, gen)]


def cap_measure(theta: float, r: int) -> float:
    """Uniform measure of the two antipodal caps of angular radius ``theta <= pi/2`` on S^{r-1}.

    One cap has measure ``I_{sin^2 theta}((r-1)/2, 1/2) / 2`` (regularised incomplete beta;
    S. Li, Asian J. Math. Stat. 2011).
    """
    if r == 1:
        return 1.0
    return float(special.betainc((r - 1) / 2.0, 0.5, math.sin(theta) ** 2))


def sphere_oracle_error(kappa: float, r: int, beta: float) -> float:
    """Accuracy of the continuous exponential mechanism (volume argument; replaces Lemma 3.12).

    For ``M`` PSD with ``||M|| <= 1`` and ``v ~ exp(kappa v'Mv)``, with probability ``>= 1-beta``
    ``v'Mv >= lam_max(M) - t`` where

        t = min_theta  sin^2(theta) + (log(1/beta) + log(1/mu(theta))) / kappa,

    ``mu(theta)`` the measure of the caps of angle ``theta`` around ``+-v_max``
    (:func:`cap_measure`).  Proof: on the caps ``v'Mv >= lam_max - sin^2(theta)`` (since
    ``lam_max - v'Mv <= (lam_max - lam_min) sin^2(angle)``), so
    ``Pr[v'Mv < lam_max - t] <= exp(-kappa (t - sin^2 theta)) / mu(theta)``.  Returned in units of
    ``lam_max`` (multiply by OPT for the oracle's additive error); capped at 1 (trivial bound).
    """
    if r == 1 or kappa == math.inf:
        return 0.0
    if kappa <= 0:
        return 1.0
    th = np.linspace(1e-4, math.pi / 2, 2000)
    mu = special.betainc((r - 1) / 2.0, 0.5, np.sin(th) ** 2)
    t = np.sin(th) ** 2 + (math.log(1 / beta) - np.log(mu)) / kappa
    return float(min(1.0, t.min()))


def sample_vmf(mu: Any, kappa: float, *, size: int | None = None,
               rng: None | int | np.random.Generator = None) -> np.ndarray:
    """Exact draws from the von Mises--Fisher law ``exp(kappa mu'u)`` on the sphere ``S^{p-1}``.

    Wood's (1994) algorithm: the component ``w = mu'u`` by rejection from a transformed
    ``Beta((p-1)/2, (p-1)/2)`` proposal, then a uniform direction orthogonal to ``mu``.

    Parameters
    ----------
    mu : array_like, shape (p,)
        Mean direction (normalised here; any non-zero vector, or zero for the uniform law).
    kappa : float
        Concentration >= 0.
    size : int, optional
    rng : None, int or Generator

    Returns
    -------
    ndarray, shape (p,) or (size, p)

    References
    ----------
    Wood (1994), Comm. Stat. Simul. Comput. 23(1):157-164; Song, Xue & Zhang (2025).
    """
    mu = np.asarray(mu, dtype=float).ravel()
    if not np.all(np.isfinite(mu)):
        raise ValueError("mu contains NaN or inf.")
    kappa = float(kappa)
    if not (kappa >= 0 and math.isfinite(kappa)):
        raise ValueError(f"kappa must be finite and >= 0, got {kappa!r}.")
    gen = as_generator(rng)
    p = mu.size
    n = 1 if size is None else int(size)
    norm = float(np.linalg.norm(mu))
    if norm == 0 or kappa == 0:
        z = gen.standard_normal((n, p))
        out = z / np.linalg.norm(z, axis=1, keepdims=True)
        return out[0] if size is None else out
    mu = mu / norm
    if p == 1:
        sign = np.where(gen.uniform(size=n) < 1 / (1 + math.exp(-2 * kappa)), 1.0, -1.0)
        out = (sign * mu[0])[:, None]
        return out[0] if size is None else out
    d = p - 1.0
    b = d / (2 * kappa + math.sqrt(4 * kappa**2 + d**2))
    x0 = (1 - b) / (1 + b)
    c = kappa * x0 + d * math.log(1 - x0**2)
    w = np.empty(n)
    filled = 0
    while filled < n:
        k = max(8, 2 * (n - filled))
        z = gen.beta(d / 2, d / 2, size=k)
        ww = (1 - (1 + b) * z) / (1 - (1 - b) * z)
        ok = kappa * ww + d * np.log(1 - x0 * ww) - c >= np.log(gen.uniform(size=k))
        take = ww[ok][: n - filled]
        w[filled:filled + take.size] = take
        filled += take.size
    v = gen.standard_normal((n, p))
    v -= np.outer(v @ mu, mu)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    out = np.sqrt(np.maximum(0.0, 1 - w**2))[:, None] * v + w[:, None] * mu
    return out[0] if size is None else out


def vmf_oracle_error(kappa: float, p: int, beta: float) -> float:
    """Accuracy of the continuous exponential mechanism with a linear score on ``S^{p-1}``.

    For ``u ~ exp(kappa g'u)`` with ``|g| <= 1``: with probability ``>= 1 - beta``,
    ``g'u >= |g| - t`` with ``t = min_theta (1 - cos theta) + (log(1/beta) + log(1/mu1(theta)))
    / kappa``, ``mu1`` the measure of ONE cap (half of :func:`cap_measure`); same volume argument
    as :func:`sphere_oracle_error`.  Capped at 2 (the trivial bound).
    """
    if kappa <= 0:
        return 2.0
    if p == 1:
        return float(min(2.0, math.log(1 / beta) / kappa))
    th = np.linspace(1e-4, math.pi / 2, 2000)
    mu1 = special.betainc((p - 1) / 2.0, 0.5, np.sin(th) ** 2) / 2
    t = 1 - np.cos(th) + (math.log(1 / beta) - np.log(mu1)) / kappa
    return float(min(2.0, t.min()))
