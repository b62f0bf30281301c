"""Private Gaussian random projection M_RP and the spectra of sketches (Lu et al. 2024, §5-6).

* :func:`rp_delta` -- the exact indistinguishability spectrum of the random projection D^T G
  against D'^T G, D' = D minus one row of leverage p (Thm 2; the worse direction).
* :func:`rp_leverage_bound` -- s_bar with rp_delta(s_bar) = delta; :func:`rp_sigma` = l/sqrt(s_bar).
* :func:`random_projection` -- M_RP (Fig. 3, Thm 3): ``D^T G + N(0, sigma^2)^{d x r}`` on rows
  clipped to the public bound l.  (epsilon, delta)-DP under add/remove one row.
* :func:`als_delta` / :func:`ls_sigma` -- the approximate-least-squares spectrum delta_ALS(q, p)
  (Thm 4, Def. 13) evaluated exactly by NDIS on a canonical instance, and the M_LS noise
  calibration (Fig. 4).  M_LS's privacy rests on a *conjectured* monotonicity (Thm 5).
* :func:`sheffet_sigma` -- the regularisation c2 of the baseline [15] (Fig. 14), for comparison.

The paper's experiments take l from the data, which is not DP; here l is always a public
argument and rows are clipped to it, which keeps neighbours neighbours (clipping acts row by
row); a row with a NaN / inf entry becomes the zero row (:func:`public_domain_rows`), never a
refusal.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy import optimize, stats

from cvxdp.arguments import entry_point
from cvxdp.citations import NDIS
from cvxdp.dask_backend import as_row_blocks, is_dask
from cvxdp.dask_backend.regression import dask_sketch
from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.estimation.rows import check_bound, public_domain_rows
from cvxdp.privacy.accountant import PrivacyRecord, PrivacyReport
from cvxdp.privacy.budgets import ApproxDP, check_delta, check_epsilon, resolve_budget
from cvxdp.privacy.calibration import cached_calibration
from cvxdp.privacy.clipping import COUNT_SHARE, count_share
from cvxdp.privacy.ndis import ndis_delta
from cvxdp.privacy.rng import as_generator

__all__ = [
    "rp_delta",
    "rp_delta_reverse",
    "rp_leverage_bound",
    "rp_sigma",
    "sheffet_sigma",
    "clip_rows",
    "public_domain_rows",
    "count_share",
    "COUNT_SHARE",
    "gaussian_sketch",
    "random_projection",
    "als_delta",
    "ls_sigma",
    "ls_release",
    "als_release",
    "relative_leverage",
    "relative_random_projection",
    "RP_REFERENCE",
]

PAPER = NDIS
RP_REFERENCE = f"{PAPER}, Fig. 3 and Thm 3 (M_RP), Thm 2 and Prop. 3 (RP spectrum)"


def check_sketch_size(r: Any) -> int:
    if isinstance(r, bool) or int(r) != r or r < 1:
        raise PrivacySpecError(f"the sketch size r must be an integer >= 1, got {r!r}.")
    return int(r)


def rp_delta(*, epsilon: float, leverage: float, r: int) -> float:
    """delta_RP^eps(p): the tight delta of D^T G vs D'^T G when the removed row has leverage p.

    ``chi2_r.sf((1-p)(2 eps - r ln(1-p))/p) - e^eps chi2_r.sf((2 eps - r ln(1-p))/p)``, evaluated
    in log space so tiny values keep their digits; 0 at p = 0, 1 at p = 1.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Theorem 2 and Proposition 3.
    """
    eps = float(epsilon)
    p = float(leverage)
    r = check_sketch_size(r)
    if not 0.0 <= p <= 1.0:
        raise PrivacySpecError(f"a leverage lies in [0, 1], got {leverage!r}.")
    if p == 0.0:
        return 0.0
    if p == 1.0:
        return 1.0
    x = (2.0 * eps - r * math.log1p(-p)) / p
    la = float(stats.chi2.logsf((1.0 - p) * x, r))
    lb = eps + float(stats.chi2.logsf(x, r))
    if lb >= la:
        return 0.0
    return float(min(1.0, math.exp(la) * -math.expm1(lb - la)))


def rp_delta_reverse(*, epsilon: float, leverage: float, r: int) -> float:
    """The other direction, delta_{D'^T G, D^T G}(eps) (Thm 2); never larger than rp_delta."""
    eps, p, r = float(epsilon), float(leverage), check_sketch_size(r)
    if p <= 0.0 or eps >= -(r / 2.0) * math.log1p(-p):
        return 0.0
    y = (-2.0 * eps - r * math.log1p(-p)) / p
    out = stats.chi2.cdf(y, r) - math.exp(eps) * stats.chi2.cdf(y * (1.0 - p), r)
    return float(min(1.0, max(0.0, out)))


@cached_calibration
def rp_leverage_bound(*, epsilon: float, delta: float, r: int) -> float:
    """s_bar in (0, 1): the largest leverage with rp_delta(s_bar) <= delta (rounded down).

    rp_delta is increasing in p (Prop. 3), so the root is unique; Brent in log p.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Fig. 3 step 1, Proposition 3.
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    r = check_sketch_size(r)
    if delta == 0:
        raise BudgetError("M_RP needs delta > 0 (the random projection is never pure DP).")

    def f(u: float) -> float:
        return math.log(max(rp_delta(epsilon=eps, leverage=math.exp(u), r=r), 1e-320)) - \
            math.log(delta)

    lo, hi = math.log(1e-14), math.log1p(-1e-12)
    if f(lo) > 0:
        raise BudgetError(f"(epsilon={eps}, delta={delta}) is too small for M_RP with r={r}.")
    s = math.exp(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-13, maxiter=500))
    while rp_delta(epsilon=eps, leverage=s, r=r) > delta:
        s *= 1.0 - 1e-12
    return s


@cached_calibration
def rp_sigma(*, epsilon: float, delta: float, r: int, row_bound: float) -> float:
    """The noise sigma = l / sqrt(s_bar) of M_RP (Fig. 3 step 2), rounded up so that
    ``rp_delta(l^2 / sigma^2) <= delta`` holds in floating point."""
    bound = check_bound(row_bound)
    s_bar = rp_leverage_bound(epsilon=epsilon, delta=delta, r=r)
    sigma = bound / math.sqrt(s_bar)
    while rp_delta(epsilon=epsilon, leverage=min(1.0, bound**2 / sigma**2), r=r) > delta:
        sigma *= 1.0 + 1e-12
    return sigma


def sheffet_sigma(*, epsilon: float, delta: float, r: int, row_bound: float) -> float:
    """c2 of the baseline [15] (Sheffet 2017) as quoted in Fig. 14, with c1 = l (public).

    ``c2 = sqrt(4 l^2 (sqrt(2 r ln(4/delta)) + ln(4/delta)) / epsilon)``.
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    lg = math.log(4.0 / delta)
    bound2 = check_bound(row_bound) ** 2
    return math.sqrt(4 * bound2 * (math.sqrt(2 * check_sketch_size(r) * lg) + lg) / eps)


#: Share of the budget the opt-in noisy count of mapped records gets (``count_clipped=True``).
def clip_rows(data: Any, row_bound: float) -> np.ndarray:
    """The rows of ``data`` mapped into the public domain (:func:`public_domain_rows`).

    A row with a NaN / inf entry becomes the zero row, a row longer than ``row_bound`` is scaled
    to norm ``row_bound``.  Acts row by row, so add/remove neighbours stay add/remove
    neighbours.  The number of mapped rows is private and is not reported here.
    """
    return public_domain_rows(data, row_bound)[0]


def gaussian_sketch(data: np.ndarray, r: int, sigma: float, gen: np.random.Generator,
                    *, block: int = 4_000_000) -> np.ndarray:
    """``data^T G + sigma N`` with G (n x r), N (d x r) iid N(0, 1); G drawn in row blocks so
    memory stays O(block) (equal in law to the RP of ``[data; sigma I]``)."""
    n, d = data.shape
    out = np.zeros((d, r))
    rows = max(1, block // max(r, 1))
    for start in range(0, n, rows):
        chunk = data[start:start + rows]
        out += chunk.T @ gen.standard_normal((chunk.shape[0], r))
    if sigma > 0:
        out += sigma * gen.standard_normal((d, r))
    return out


@entry_point()
def random_projection(data: Any, *, epsilon: float, delta: float, r: int, row_bound: float,
                      rng: None | int | np.random.Generator = None
                      ) -> tuple[np.ndarray, PrivacyRecord]:
    """M_RP: an (epsilon, delta)-DP Gaussian random projection ``D^T G + N`` (d x r).

    Parameters
    ----------
    data : array_like or dask.array.Array, shape (n, d)
        One row per person; rows are mapped into the public domain (:func:`clip_rows`: a row
        with a NaN / inf entry becomes 0, a longer row is clipped to ``row_bound``).  A Dask
        array is sketched block by block on the workers (``G`` drawn there from per-block
        streams, :func:`cvxdp.dask_backend.regression.dask_sketch`): same law, other draws.
    epsilon, delta : float
        delta > 0.
    r : int
        Number of projections (columns of G).  Public.
    row_bound : float
        Public bound l on the l2 norm of a row.
    rng : None, int or Generator
    accountant : PrivacyAccountant, optional
        Checked before the data are read, the call recorded after it
        (:func:`cvxdp.arguments.entry_point`); the other common keywords likewise.

    Returns
    -------
    sketch : ndarray, shape (d, r)
        Divide by sqrt(r) for the usual normalised projection (privacy is unchanged).
    record : PrivacyRecord
        ``ApproxDP(epsilon, delta)`` under add/remove one row of norm <= l.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Figure 3 and Theorem 3 (the noise N is d x r; the paper's
    n x r is a typo).
    """
    budget = resolve_budget(epsilon=epsilon, delta=delta)
    if not isinstance(budget, ApproxDP):
        raise BudgetError("M_RP is (epsilon, delta)-DP: give epsilon= and delta= > 0.")
    r = check_sketch_size(r)
    on_dask = is_dask(data)
    clipped = None if on_dask else clip_rows(data, row_bound)
    check_bound(row_bound)
    s_bar = rp_leverage_bound(epsilon=budget.epsilon, delta=budget.delta, r=r)
    sigma = rp_sigma(epsilon=budget.epsilon, delta=budget.delta, r=r, row_bound=row_bound)
    record = PrivacyRecord("random_projection", budget, RP_REFERENCE,
                           params={"sigma": sigma, "r": r, "s_bar": s_bar,
                                   "row_bound": float(row_bound)})
    gen = as_generator(rng)
    if on_dask:
        # D^T G chunk-wise on the workers (rows mapped per block, G_b from per-block streams);
        # the noise N on the client (cvxdp.dask_backend.regression.dask_sketch)

        sketch = dask_sketch(as_row_blocks(data), row_bound, r, gen)
        return sketch + sigma * gen.standard_normal(sketch.shape), record
    return gaussian_sketch(clipped, r, sigma, gen), record


def als_delta(*, epsilon: float, q: float, p: float, r: int, d: int) -> float:
    """delta_ALS^eps(q, p) (Def. 13): max over both directions of the asymptotic ALS spectrum.

    Thm 4 says the spectrum of N(x_opt, ||e||^2 (B^T B)^{-1}/r) against the same for D minus one
    row depends only on the removed row's leverage p in B, its leverage q in [B, b] and (r, d).
    We evaluate it exactly with NDIS on a canonical instance with those values: B'^T B' = I_d,
    b' orthogonal to B' with ||b'|| = 1, and the added row (v, y) with ||v||^2 = p/(1-p),
    y^2 = q/(1-q) - p/(1-p); then N1 = N(v y (1-p), (1 + y^2 (1-p)) (I + v v^T)^{-1} / r) and
    N2 = N(0, I/r).  (Agrees with the paper's Table VI formulas.)

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Theorem 4, Corollary 3, Definition 13.
    """
    r, d = check_sketch_size(r), check_sketch_size(d)
    if not 0.0 <= p <= q < 1.0:
        raise PrivacySpecError(f"need 0 <= p <= q < 1, got p={p!r}, q={q!r}.")
    v2 = p / (1.0 - p)
    y = math.sqrt(max(q / (1.0 - q) - v2, 0.0))
    v = np.zeros(d)
    v[0] = math.sqrt(v2)
    cov1 = (1.0 + y * y * (1.0 - p)) * (np.eye(d) - np.outer(v, v) / (1.0 + v2)) / r
    mean1 = v * y * (1.0 - p)
    cov2, mean2 = np.eye(d) / r, np.zeros(d)
    return ndis_delta(epsilon=epsilon, mean1=mean1, cov1=cov1, mean2=mean2, cov2=cov2,
                      symmetric=True)


def ls_sigma(*, epsilon: float, delta: float, r: int, d: int, row_bound: float) -> float:
    """M_LS noise sigma = l / sqrt(L*), L* the largest L < 1/2 with delta_ALS(2L, L) <= delta.

    Found by Brent in log L, then rounded up.  Its DP rests on the paper's *unproven*
    monotonicity of delta_ALS (Thm 5), so anything calibrated with it is conjectural.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Figure 4 step 1, Theorem 5.
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    bound = check_bound(row_bound)
    if delta == 0:
        raise BudgetError("M_LS needs delta > 0.")
    return bound / math.sqrt(_ls_leverage(eps, delta, check_sketch_size(r), check_sketch_size(d)))


@functools.lru_cache(maxsize=256)
def _ls_leverage(eps: float, delta: float, r: int, d: int) -> float:
    def f(u: float) -> float:
        lev = math.exp(u)
        val = als_delta(epsilon=eps, q=2 * lev, p=lev, r=r, d=d)
        return math.log(max(val, 1e-320)) - math.log(delta)

    lo, hi = math.log(1e-7), math.log(0.4999)
    if f(lo) > 0:
        raise BudgetError(f"(epsilon={eps}, delta={delta}) is too small for M_LS (r={r}).")
    if f(hi) <= 0:
        lev = 0.4999
    else:
        lev = math.exp(optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-11, maxiter=300))
    while als_delta(epsilon=eps, q=2 * lev, p=lev, r=r, d=d) > delta:
        lev *= 1.0 - 1e-9
    return lev


def ls_release(data: np.ndarray, sigma: float, r: int, gen: np.random.Generator) -> np.ndarray:
    """M_LS step 3: one draw of N(x_bar, ||e_bar||^2 (B^T B + sigma^2 I)^{-1} / r).

    ``data = [B b]`` (rows already clipped).  For ``[D; sigma I_{d+1}]``, x_bar is ridge regression
    with lambda = sigma^2 and ``||e_bar||^2 = ||b - B x_bar||^2 + sigma^2 ||x_bar||^2 + sigma^2``.
    Conjectural privacy (Thm 5).

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Figure 4.
    """
    d = data.shape[1] - 1
    x, t = data[:, :d], data[:, d]
    reg = x.T @ x + sigma**2 * np.eye(d)
    ridge = np.linalg.solve(reg, x.T @ t)
    resid2 = float(np.sum((t - x @ ridge) ** 2) + sigma**2 * (ridge @ ridge) + sigma**2)
    chol = np.linalg.cholesky(np.linalg.inv(reg) * resid2 / r)
    return ridge + chol @ gen.standard_normal(d)


def als_release(data: np.ndarray, sigma: float, r: int, gen: np.random.Generator) -> np.ndarray:
    """M_ALS step 3: ``(Pi B_bar)^+ Pi b_bar`` for ``[B_bar b_bar] = [D; sigma I_{d+1}]``, Pi
    (r x (n+d+1)) iid N(0, 1) -- drawn as the Gaussian sketch of D plus sigma-noise, which is
    equal in law.  Private only asymptotically in r (Lemma 1).

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Figure 11 (pseudo-inverse; the paper writes an inverse).
    """
    d = data.shape[1] - 1
    sketch = gaussian_sketch(data, r, sigma, gen)
    return np.linalg.lstsq(sketch[:d].T, sketch[d], rcond=None)[0]


def relative_leverage(data: Any, *, block: int = 512) -> float:
    """Leverage for the set X = {D} u {D - v} u {D + u}, u, v rows of D, and all their
    add/remove neighbours (paper Def. 6 with the footnote-18 completion).

    With H = D (D'D)^{-1} D' the hat matrix, removing row v turns the leverage of row w into
    ``H_ww + H_wv^2 / (1 - H_vv)`` (rank-one downdate); additions only lower leverages.  So the
    answer is ``max(max_w H_ww, max_{v != w} H_ww + H_wv^2 / (1 - H_vv))``, 1 if some
    ``H_vv = 1`` or D is rank deficient.  O(n^2 d) time, O(block n) memory.

    This is a property of the private data: it is what relative DP is relative to.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Definition 6, §7.2 (choice of X), footnote 18.
    """
    d_mat = np.asarray(data, dtype=float)
    q, rr = np.linalg.qr(d_mat)
    if np.min(np.abs(np.diag(rr))) <= 1e-12 * max(np.max(np.abs(np.diag(rr))), 1e-300):
        return 1.0
    h = np.einsum("ij,ij->i", q, q)
    if np.max(h) >= 1.0 - 1e-12:
        return 1.0
    best = float(np.max(h))
    inv = 1.0 / (1.0 - h)
    for start in range(0, q.shape[0], block):
        hw = q[start:start + block] @ q.T  # H_wv for w in the block
        idx = np.arange(start, start + hw.shape[0])
        hw[np.arange(hw.shape[0]), idx] = 0.0  # v != w
        best = max(best, float(np.max(h[idx] + np.max(hw**2 * inv[None, :], axis=1))))
    return min(best, 1.0)


@entry_point(guarantee="relative DP")
def relative_random_projection(data: Any, *, epsilon: float, delta: float, r: int,
                               row_bound: float, rng: None | int | np.random.Generator = None
                               ) -> tuple[np.ndarray, Any]:
    """M_RP^rel: the random projection with **no noise** when the leverage for X is already at
    most s_bar, else exactly M_RP.  Relative DP (Lu et al. 2024), **not** differential privacy.

    The guarantee holds only among the databases X of :func:`relative_leverage` (the data, its
    one-row deletions, its one-row duplications, and their neighbours); whether noise is added
    depends on the private data.  The returned report says ``guarantee="relative_dp"`` and holds
    no accountant records, so it cannot be mistaken for a DP step.

    Returns
    -------
    sketch : ndarray (d, r)
    report : PrivacyReport
        ``details`` has ``s_bar``, ``sigma``, ``noise_free`` and ``r``.  The branch taken
        (``noise_free``, ``sigma``) is a function of X, which relative DP holds fixed (Thm 6);
        under ordinary DP it is, like the noise-free sketch itself, a function of the data.
        The leverage for X itself is an exact function of the private data and is *not*
        reported; the data owner can compute it with :func:`relative_leverage` (not private).

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Figure 12 and Theorem 6.
    """
    budget = resolve_budget(epsilon=epsilon, delta=delta)
    if not isinstance(budget, ApproxDP):
        raise BudgetError("M_RP^rel needs epsilon= and delta= > 0.")
    r = check_sketch_size(r)
    clipped = clip_rows(data, row_bound)
    lev = relative_leverage(clipped)
    s_bar = rp_leverage_bound(epsilon=budget.epsilon, delta=budget.delta, r=r)
    noise_free = lev <= s_bar
    sigma = 0.0 if noise_free else rp_sigma(epsilon=budget.epsilon, delta=budget.delta, r=r,
                                            row_bound=row_bound)
    sketch = gaussian_sketch(clipped, r, sigma, as_generator(rng))
    report = PrivacyReport(
        guarantee="relative_dp", epsilon=budget.epsilon, delta=budget.delta, rho=None,
        neighbouring=("add/remove one row, only among X = {D, D - v, D + u : u, v rows of D} and "
                      "their neighbours (relative DP; NOT differential privacy)"),
        theorem=f"{PAPER}, Fig. 12 and Thm 6 (relative DP)",
        details={"s_bar": s_bar, "sigma": sigma, "noise_free": noise_free, "r": r})
    return sketch, report
