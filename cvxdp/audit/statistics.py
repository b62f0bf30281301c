"""Candidate test statistics for the auditor, fitted on the selection split only.

By the Neyman--Pearson lemma the most powerful rejection sets for telling M(D) from M(D') are the
level sets of the likelihood ratio ``p_D(o) / p_D'(o)``; the optimal (epsilon, delta)
distinguisher is ``{o : log p_D(o)/p_D'(o) > epsilon}`` (the hockey-stick divergence is attained
there).  The auditor cannot know the densities, so it fits a few likelihood-ratio models on the
selection split and thresholds each (DP-Sniper, Bichsel et al. 2021, with simple models):

* ``output``: the scalar output itself (monotone likelihood ratio: Gaussian/Laplace shifts);
* ``mean difference``: vectors projected on the difference of the empirical means;
* ``Gaussian LR, shared covariance``: vectors projected on ``Sigma^{-1}(mu_D - mu_D')``, the
  exact log-likelihood-ratio direction for a Gaussian mechanism with any fixed covariance;
* ``Gaussian LR``: the quadratic log-likelihood ratio of two fitted Gaussians (catches a change of
  scale or shape, e.g. data-dependent noise);
* ``outcome LR``: for outputs with atoms (indices of the exponential mechanism, sentinels), the
  smoothed empirical log ratio of each repeated outcome, all other outcomes pooled in one cell.
  Thresholding it gives the "top-j outcomes" sets, the optimal rejection sets for discrete
  outputs (Ding et al. 2018 test single outcomes and their unions the same way).

Each statistic depends on the selection split only, so events built from it are fixed before the
held-out runs are looked at.

References
----------
B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers", IEEE S&P 2021.
Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting Violations of Differential Privacy",
ACM CCS 2018.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["Statistic", "candidate_statistics"]


@dataclass(frozen=True)
class Statistic:
    """A scalar test statistic: ``fn`` maps output rows ``(n, d)`` to ``(n,)``; ``fitted`` says
    whether it was estimated from the runs (then its thresholds are chosen on other runs)."""

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    fitted: bool = True


def _ridge(cov: np.ndarray) -> np.ndarray:
    # zero-variance coordinates keep a tiny ridge: a coordinate that is deterministic but differs
    # between D and D' then gets a huge weight, which is what a perfect distinguisher needs
    d = cov.shape[0]
    scale = float(np.trace(cov)) / d
    return cov + (1e-6 * scale if scale > 0 else 1.0) * np.eye(d)


def _gaussian_logpdf(mu: np.ndarray, cov: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    c = _ridge(cov)
    L = np.linalg.cholesky(c)
    logdet = 2.0 * float(np.sum(np.log(np.diag(L))))

    def logpdf(x: np.ndarray) -> np.ndarray:
        z = np.linalg.solve(L, (x - mu).T)
        return -0.5 * np.sum(z * z, axis=0) - 0.5 * logdet

    return logpdf


def _row_keys(x: np.ndarray) -> np.ndarray:
    """Rows as sortable byte strings (-0.0 is mapped to 0.0 so equal outputs get equal keys)."""
    x = np.ascontiguousarray(x + 0.0)
    return x.view(np.dtype((np.void, x.dtype.itemsize * x.shape[1]))).ravel()


def _outcome_lr(a: np.ndarray, b: np.ndarray) -> Statistic | None:
    ka, kb = _row_keys(a), _row_keys(b)
    atoms, counts = np.unique(np.concatenate([ka, kb]), return_counts=True)
    atoms = atoms[counts >= 2]
    if atoms.size == 0:
        return None
    ca = np.zeros(atoms.size + 1)
    cb = np.zeros(atoms.size + 1)

    def cell(keys: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(atoms, keys)
        pos_c = np.minimum(pos, atoms.size - 1)
        return np.where(atoms[pos_c] == keys, pos_c, atoms.size)  # last cell: everything else

    np.add.at(ca, cell(ka), 1.0)
    np.add.at(cb, cell(kb), 1.0)
    score = np.log((ca + 0.5) / (a.shape[0] + 1.0)) - np.log((cb + 0.5) / (b.shape[0] + 1.0))
    return Statistic("outcome LR", lambda x: score[cell(_row_keys(x))])


def _scales_differ(a: np.ndarray, b: np.ndarray) -> bool:
    """Two-sided F test at level 0.01 on scalar outputs: a quadratic statistic only competes
    with the output itself when the scales differ (otherwise it only adds selection noise)."""
    va, vb = float(np.var(a, ddof=1)), float(np.var(b, ddof=1))
    if va == 0.0 or vb == 0.0:
        return va != vb
    f = stats.f.cdf(va / vb, a.shape[0] - 1, b.shape[0] - 1)
    return bool(min(f, 1.0 - f) < 0.005)


def candidate_statistics(a: np.ndarray, b: np.ndarray) -> list[Statistic]:
    """Statistics fitted on selection outputs ``a`` (on D) and ``b`` (on D'), shape ``(n, d)``.

    Linear and quadratic Gaussian models are fitted only when there are enough runs per
    dimension (``n >= 5 d`` and ``n >= 20 d``, ``d <= 100``); both use a small ridge.  For a
    scalar output the quadratic one is kept only when an F test sees different scales.
    """
    n, d = min(a.shape[0], b.shape[0]), a.shape[1]
    out: list[Statistic] = []
    finite = bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))
    if d == 1:
        out.append(Statistic("output", lambda x: x[:, 0], fitted=False))
    else:
        diff = a.mean(axis=0) - b.mean(axis=0) if finite else np.zeros(d)
        nrm = float(np.linalg.norm(diff))
        u = diff / nrm if nrm > 0 else np.eye(d)[0]
        out.append(Statistic("mean difference", lambda x, u=u: x @ u))
        if finite and n >= 5 * d:
            pooled = 0.5 * (np.cov(a, rowvar=False) + np.cov(b, rowvar=False))
            w = np.linalg.solve(_ridge(np.atleast_2d(pooled)), diff)
            out.append(Statistic("Gaussian LR, shared covariance", lambda x, w=w: x @ w))
    if finite and n >= 20 * d and d <= 100 and n >= 20 and (d > 1 or _scales_differ(a, b)):
        la = _gaussian_logpdf(a.mean(axis=0), np.atleast_2d(np.cov(a, rowvar=False)))
        lb = _gaussian_logpdf(b.mean(axis=0), np.atleast_2d(np.cov(b, rowvar=False)))
        out.append(Statistic("Gaussian LR", lambda x: la(x) - lb(x)))
    atom = _outcome_lr(a, b)
    if atom is not None:
        out.append(atom)
    return out
