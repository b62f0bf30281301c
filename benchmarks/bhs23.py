"""Benchmark-only re-implementation of Brown, Hopkins & Smith (COLT 2023), "Fast,
sample-efficient, affine-invariant private mean and covariance estimation for subgaussian
distributions": stable covariance (nested outlier-removal sets by leverage scores), stable mean
(nested sets by Mahalanobis distance to a random reference subset), propose-test-release on the
stability scores, then Gaussian noise shaped by the stable covariance (mean) or a Wishart-style
resampling of it (covariance).

Written for issue 26's time/accuracy comparison, from the paper's algorithms as described in the
authors' research code (gavinrbrown1/private-estimation-BHS23, read, not copied), vectorised;
two deviations from that code are deliberate: set sizes are cumulative (the sets are nested) and
the mean's weights count the sets S_l, l > k, that contain a point.  NOT part of cvxdp and not
audited: lambda_0 is fixed to a public chi-square quantile, not chosen privately.

Each of mean and covariance is run at the full (epsilon, delta) (so the pair is (2 eps, 2 delta)
by basic composition: this favours BHS23 in accuracy; the comparison is about time).
"""

from __future__ import annotations

import math

import numpy as np


def _ptr(score: float, eps: float, delta: float, rng: np.random.Generator) -> bool:
    tau = 2 * math.log((1 - delta) / delta) / eps + 4
    if score == 0:
        return True
    if score >= tau:
        return False
    return bool(rng.uniform() < 1 - math.exp(eps / 2 * (score - 2)) * delta)


def lambda0(d: int, m: int, beta: float = 0.1) -> float:
    """Public outlier threshold: chi-square(d) max over m points (Laurent-Massart)."""
    x = math.log(m / beta)
    return d + 2 * math.sqrt(d * x) + 2 * x


def stable_covariance(y: np.ndarray, lam0: float, k: int) -> tuple[np.ndarray, int]:
    m, d = y.shape
    active = np.ones(m, dtype=bool)
    sizes = np.zeros(2 * k + 1, dtype=int)
    member = np.zeros(m, dtype=int)  # number of sets S_l, l > k, containing the point
    for ell in range(2 * k, -1, -1):
        lam = lam0 / (1 - ell / (10 * k))
        while active.any():
            ya = y[active]
            q, r = np.linalg.qr(ya, mode="reduced")
            if np.min(np.abs(np.diag(r))) < 1e-12 * np.max(np.abs(np.diag(r))):
                active[:] = False
                break
            lev = m * (q * q).sum(axis=1)
            bad = lev > lam
            if not bad.any():
                break
            idx = np.flatnonzero(active)
            active[idx[bad]] = False
        sizes[ell] = int(active.sum())
        if ell > k:
            member += active
        if sizes[ell] <= m - k:
            sizes[:ell] = 0  # nested: all smaller thresholds are empty too (early stop)
            break
    score = min(k, int(min(m - sizes[ell] + ell for ell in range(k + 1))))
    w = member / (k * m)
    return y.T @ (w[:, None] * y), score


def stable_mean(x: np.ndarray, sigma: np.ndarray, lam0: float, k: int, ref: np.ndarray,
                chunk: int = 8192) -> tuple[np.ndarray, int]:
    n, d = x.shape
    try:
        inv = np.linalg.inv(sigma)
    except np.linalg.LinAlgError:
        return np.zeros(d), k
    xr = x[ref]
    nr = len(ref)
    gamma = (50 / 9) * (lam0 / nr)
    incl = np.full(n, -1)
    ells = np.arange(2 * k + 1)
    xr_p = xr @ inv
    xr_n = np.einsum("ij,ij->i", xr_p, xr)
    for s in range(0, n, chunk):
        xc = x[s: s + chunk]
        xp = xc @ inv
        d2 = np.maximum(np.einsum("ij,ij->i", xp, xc)[:, None] - 2 * xp @ xr.T + xr_n, 0.0)
        d2[d2 == 0] = lam0 / 2
        idx = np.maximum(np.ceil((math.log(lam0) - np.log(d2 / 2)) / math.log(1 - gamma)), 0)
        idx.sort(axis=1)
        # point in S_l iff #{r : idx <= l} >= |R| - l  iff  the (|R| - l)-th smallest <= l
        ok = idx[:, nr - ells - 1] <= ells
        first = np.where(ok.any(axis=1), ok.argmax(axis=1), -1)
        incl[s: s + chunk] = first
    inside = incl >= 0
    cum = np.array([(inside & (incl <= ell)).sum() for ell in range(k + 1)])
    score = min(k, int(np.min(n - cum + np.arange(k + 1))))
    c = np.where(inside, 2 * k + 1 - np.maximum(incl, k + 1), 0).astype(float)
    mu = (c[:, None] * x).sum(0) / c.sum() if c.sum() > 0 else np.zeros(d)
    return mu, score


def bhs23(x: np.ndarray, eps: float, delta: float, rng: np.random.Generator
          ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(mean, covariance) or None on FAIL; each at (eps, delta)."""
    n, d = x.shape
    x = x[rng.permutation(n)]
    y = (x[: n // 2] - x[n // 2: 2 * (n // 2)]) / math.sqrt(2)
    lam0 = lambda0(d, n)
    # mean (BHS23 main algorithm)
    k = int(math.ceil(6 * math.log(6 / delta) / eps) + 4)
    mean = None
    if n >= 20 * k * lam0:
        nref = 6 * k + int(math.ceil(18 * math.log(16 * n / delta)))
        ref = rng.choice(n, size=nref, replace=False)
        sig, s1 = stable_covariance(y, lam0, k)
        mu, s2 = stable_mean(x, sig, lam0, k, ref)
        if _ptr(max(s1, s2), eps / 3, delta / 6, rng):
            c2 = 810 * lam0 * math.log(12 / delta) / (eps**2 * n**2)
            low = np.linalg.cholesky(c2 * sig + 1e-300 * np.eye(d))
            mean = mu + low @ rng.standard_normal(d)
    # covariance
    kc = int(math.ceil(4 * math.log(2 / delta) / eps) + 4)
    cov = None
    if n >= 10 * kc * lam0:
        sig, s = stable_covariance(y, lam0, kc)
        if _ptr(s, eps / 2, delta / 2, rng):
            nn = int(n**2 * eps**2 / (24 * lam0**2 * math.log(2 / delta)))
            low = np.linalg.cholesky(sig)
            g = rng.standard_normal((d, d))
            # sum of nn outer products of N(0, I): Wishart(nn, I) = (Bartlett) T T^T
            t = np.tril(g, -1)
            t[np.diag_indices(d)] = np.sqrt(rng.chisquare(nn - np.arange(d)))
            cov = low @ (t @ t.T / nn) @ low.T
    return mean, cov
