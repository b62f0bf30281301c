"""The decisions of the private John ellipsoid: ridge, budget split, whether to iterate, which
candidate.

Every rule here is a function of public numbers (budget, sizes, public bounds, the requested
accuracy and failure probability) and of released noisy outputs; none has a constant fitted to a
benchmark.  The derivations are in ``docs/john.md`` ("Decisions").  Notation: ``E_c = {x : x' Q_c x
<= 1}`` is a released candidate, ``s_c = max_i ||Q_c^{-1/2} c_i||`` (``c_i`` the clipped rows) its
support scale; the user gets ``E_c / s_c`` (the candidate scaled to touch the polytope), whose
log volume is the *fitted log volume* ``F_c = log vol(E_c) - d log s_c``.

References
----------
Gu, Li, Liang, Shi, Song, Yu, "Fast John Ellipsoid Computation with Differential Privacy
Optimization" (2024): Lemma 3.5 (rounding), Lemma 7.1 (telescoping).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special

from cvxdp.geometry.john.ellipsoid import Ellipsoid
from cvxdp.geometry.john.john_sensitivity import support_sensitivity

__all__ = ["noise_term", "ridge_bias", "predicted_loss", "balanced_ridge", "gain_bound", "split",
           "noise_shift", "shifted_gram", "uniform_share", "Scored", "score", "choose",
           "release_winner", "z_level", "TINY", "INSCRIBED_GUARANTEE", "SHARE_POINTS",
           "GRAM_SCHEDULES", "gram_event_level", "gram_noise_bounds", "scale_lower_bound"]

#: smallest scale used in a logarithm (a released scale may be <= 0)
TINY = 1e-12
#: ridges per decade of the grid on which the loss model is minimised
GRID_PER_DECADE = 20
#: points per decade of the grid on which :func:`noise_shift` searches its multiplier
SHIFTS_PER_DECADE = 8
#: the shares of ``Q0`` that :func:`uniform_share` chooses from: ``SHARE_POINTS + 1`` grid points
SHARE_POINTS = 16
#: how many combinations of releases the released uniform-weights Gram matrix can be (a share of
#: the grid of :func:`uniform_share`, or with ``iterations=0`` the whole free share; then topped
#: up or not by ``uniform_release.uniform_only``): the union bound of :func:`gram_event_level`
#: runs over them (docs/john.md D5)
GRAM_SCHEDULES = 2 * (SHARE_POINTS + 2)
#: what ``inscribed=True`` guarantees (also in ``info["inscribed_guarantee"]`` and docs/john.md)
INSCRIBED_GUARANTEE = (
    "With probability >= 1 - failure the ellipsoid lies inside the polytope of the clipped rows "
    "{x : |c_i' x| <= 1}, c_i = a_i * min(1, row_bound/||a_i||) (a row with a non-finite entry "
    "is dropped); it lies inside your polytope {x : |a_i' x| <= 1} when every row is finite "
    "with ||a_i|| <= row_bound. A longer row was clipped, which loosens its constraint, and the "
    "ellipsoid may cross it: pass count_clipped=True for a noisy count of such rows.")


def noise_term(sigma_h: float) -> float:
    """``sigma^2/2 + 3 sigma^4/4``: the noise's share of ``log h_i(u)`` (before fitting).

    Lemma 7.1's telescoping with the noisy update ``w_{k+1} = w_k (h_k + z_k)`` gives
    ``(1/T) sum_k log h_i(w_k) = (1/T) log(w_{T+1,i}/w_{1,i})
    - (1/T) sum_k log(1 + z_{k,i}/h_{k,i})``.
    The first term is at most ``log(n/d)/T <= log(1 + xi)`` whatever the noise (every weight
    stays in ``[w_min, 1]``); near the fixed point (``h ~ 1``) the mean of the second is
    ``E[-log(1 + z)] = sum_k E[z^{2k}]/(2k) = sigma^2/2 + 3 sigma^4/4 + ...`` (Gaussian moments;
    the odd terms have mean 0, and the first-order term's fluctuation is absorbed by the first
    term: a row whose weight drifts is pulled back by the update).  The series is asymptotic;
    it is cut after the fourth order, which grows fast enough to keep the ridge away from
    ``sigma ~ 1``, where ``1 + z`` is often negative and the update is clipped.
    """
    return 0.5 * sigma_h ** 2 + 0.75 * sigma_h ** 4


def ridge_bias(ridge: float, eigs: np.ndarray) -> float:
    """``(1/2d) sum_j b(lam/m_j)``, ``b(x) = x`` for ``x <= 1`` and ``1 + log x`` above: a bound
    on the ridge's share of the loss.

    The ridge-regularised fixed point (``h_i = 1`` on its support for ``M = A'WA + lam I``) is
    the optimality condition of ``max f(X) = log det X - lam tr X`` over the ellipsoids
    ``{x : x' X^{-1} x <= 1}`` inside P (the dual weights ``w`` are the multipliers of the
    constraints ``a_i' X a_i <= 1``).  Every ``X <= X*`` (Loewner order) is inside P with the
    John ellipsoid ``X*`` (``a_i'Xa_i <= a_i'X*a_i <= 1``); among them ``X_c``, with ``X*``'s
    eigenvectors and eigenvalues ``min(1/m_j, 1/lam)`` (``m_j`` those of the John matrix ``Q* =
    X*^{-1}``), caps each axis where the ridge would.  So ``f(X_lam) >= f(X_c)`` and
    ``log det X* - log det X_lam <= log det X* - f(X_c) - lam tr X_lam <= sum_j b(lam/m_j)``,
    i.e. at most ``(1/2d) sum_j b(lam/m_j)`` per dimension of log volume.  It is the bound
    ``lam tr X*`` used before (``X_c = X*``) where the ridge is below every ``m_j`` and grows
    like ``log(lam/m_j)`` instead of ``lam/m_j`` along the axes it caps.  The ``m_j`` are
    private; the caller passes public stand-ins.
    """
    x = ridge / np.asarray(eigs, dtype=float)
    return 0.5 * float(np.mean(np.where(x <= 1.0, x, 1.0 + np.log(np.maximum(x, 1.0)))))


def predicted_loss(*, sigma_h: float, ridge: float, eigs: np.ndarray, accuracy: float
                   ) -> float:
    """The loss model of the private iterate, per dimension of fitted log volume:
    ``ridge_bias + 1/2 noise_term + 1/2 log(1 + xi)`` (fitting scales by
    ``max_i h_i(u)^{-1/2}``, Lemma 7.1 bounds the iteration's own share by ``log(1 + xi)``)."""
    return ridge_bias(ridge, eigs) + 0.5 * noise_term(sigma_h) + 0.5 * math.log1p(accuracy)


def balanced_ridge(sigma_of: Callable[[float], float], *, eigs: np.ndarray, accuracy: float,
                   R: float) -> tuple[float, float]:
    """The ridge minimising :func:`predicted_loss`, and that minimum.

    ``sigma_of(lam)`` is the noise sd at ridge ``lam`` (Lemma S over the iteration's mu): the
    bias grows and the noise falls with ``lam``.  The minimum is taken over the log grid
    :data:`GRID_PER_DECADE` points per decade from ``1e-9 R^2`` (the eigenvalue floor) to
    ``1e6 q_max``.  For a small ridge the bias is ``~ lam B`` and the noise term
    ``~ (K/(lam mu))^2 / 4``, so the minimiser is ``(K^2/(2 B mu^2))^{1/3}``: the ridge and
    the noise sd vanish like ``mu^{-2/3}`` and ``mu^{-1/3}`` as the budget grows (for a round
    ``Q0``, ``B = 0``, the ridge stays at its floor and only the noise is left).  Every input
    is public.
    """
    lo = max(1e-9 * R * R, 1e-300)
    hi = max(1e6 * float(eigs.max()), 10 * lo)
    grid = np.geomspace(lo, hi, int(GRID_PER_DECADE * math.log10(hi / lo)) + 2)
    losses = [predicted_loss(sigma_h=sigma_of(float(lam)), ridge=float(lam), eigs=eigs,
                             accuracy=accuracy) for lam in grid]
    k = int(np.argmin(losses))
    return float(grid[k]), float(losses[k])


def gain_bound(d: int, s0_upper: float) -> float:
    """``1/2 log d + log s0``: no ellipsoid inside P is larger than the fitted uniform-weights
    one by more than this per dimension (``sum_i (a_i'x)^2 <= n`` on P, so P lies in
    ``sqrt(d) E_0``, and ``E_0 / s0`` is the fitted one)."""
    return 0.5 * math.log(d) + math.log(max(s0_upper, 1.0))


def uniform_gap_max(n: int, d: int) -> float:
    """``1/2 log(n/d)``: the exact uniform-weights ellipsoid, fitted inside P, is at most this
    much smaller per dimension of log volume than the John ellipsoid.

    The John weights ``w`` (``sum w = d``) make ``u = w/d`` a D-optimal design on the rows:
    ``a_i'(A'UA)^{-1} a_i <= d`` with equality on the support is ``h_i(w) <= 1``, the
    Kiefer-Wolfowitz condition (Kiefer & Wolfowitz 1960, "The equivalence of two extremum
    problems"; Todd 2016, "Minimum-Volume Ellipsoids", Ch. 2), so ``u`` maximises ``log
    det(A'UA)`` over the simplex, where the uniform design ``1/n`` is feasible: ``det Q* = d^d
    det(A'UA) >= d^d det(A'A/n) = det Q0``.  The fitted ellipsoid ``E(Q0)/s0`` then loses
    ``(1/2d)(log det Q0 - log det Q*) + log s0 <= log s0``, and ``s0^2 = max_i (n/d)
    a_i'(A'A)^{-1} a_i <= n/d`` (leverage scores are at most 1).  The bound used before, ``1/2
    log n`` (``P`` inside ``sqrt(d) E(Q0)``), is ``1/2 log d`` larger."""
    return 0.5 * math.log(max(n / d, 1.0))


def split(coefficients: list[float], total: float) -> list[float]:
    """GDP parameters ``mu_k`` with ``sum mu_k^2 = total^2`` minimising ``sum_k c_k / mu_k``.

    Each release's loss is ``c_k / mu_k`` (its noise sd is sensitivity / mu); Lagrange:
    ``c_k / mu_k^2 = 2 t mu_k``, so ``mu_k`` is proportional to ``c_k^{1/3}``.
    """
    c = np.cbrt(np.maximum(np.asarray(coefficients, dtype=float), 1e-300))
    return [float(x) for x in total * c / math.sqrt(float(np.sum(c * c)))]


def noise_shift(eigs: np.ndarray, sigma: float, floor: float) -> np.ndarray:
    """Shifts ``b_j`` of the eigenvalues ``g_j`` of a released Gram matrix ``G = Q0 + Z`` (``Z``
    symmetric Gaussian, entry sd ``sigma``, off-diagonal ``sigma^2/2``; :func:`cvxdp.geometry
    .john.core.sym_noise`): the cheapest spectral shift ``B`` (in ``G``'s eigenbasis) with
    ``G + B >= Q0`` on the noise's typical event.

    Why (``docs/john.md``, D0): ``M = G + B >= Q0`` iff ``B + Z >= 0``; then no row's leverage
    ratio grows, so the fitted log volume loses only the volume of the shift,
    ``(1/2d) sum_j log(1 + b_j/g_j)`` per dimension (the released eigenvalues stand in for
    ``Q0``'s).  ``B + Z >= 0`` iff ``||B^{-1/2} Z B^{-1/2}||`` (its negative part) is at most 1;
    that matrix has independent entries of variances ``sigma^2/(2 b_j b_k)`` (diagonal
    ``sigma^2/b_j^2``), and its typical norm is twice the largest row's root summed variance
    (Bandeira & van Handel 2016, the leading term; the semicircle edge ``sqrt(2(d+1)) sigma / b``
    when ``B = bI``).  The condition is ``b_min >= 2 sigma^2 (sum_k 1/b_k + 1/b_min)``.
    Minimising the volume cost under it: for a fixed ``S = sum_k 1/b_k`` Lagrange gives
    ``b_k^2 = lam (g_k + b_k)`` above the floor ``beta = b_min``, so
    ``b_k = max(beta, (lam + sqrt(lam^2 + 4 lam g_k))/2)`` with ``beta`` the root of the
    condition; ``lam`` is searched on a log grid (``lam = 0`` is the isotropic shift
    ``sqrt(2(d+1)) sigma``, the previous rule, so the cost never exceeds it).  Large
    eigenvalues take shifts of order ``sqrt(lam g_k)``, small relative to them, and the noise
    that reaches the weak directions through them needs a smaller floor ``beta``: on a spread
    spectrum the long axes are inflated far less than by the isotropic shift.  Every input is
    public.
    """
    g = np.maximum(np.asarray(eigs, dtype=float), floor)
    d = g.size
    if not sigma > 0:
        return np.zeros(d)

    lo, hi = 1e-6 * sigma, 1e6 * max(sigma, float(g.max()))
    lams = np.concatenate([[0.0], np.geomspace(lo, hi, int(SHIFTS_PER_DECADE
                                                           * math.log10(hi / lo)) + 2)])
    base = 0.5 * (lams[:, None] + np.sqrt(lams[:, None] ** 2 + 4 * lams[:, None] * g[None, :]))
    # beta for every lam at once, by bisection: the condition's left side minus its right side
    # increases with beta
    b_lo = np.full(lams.size, math.sqrt(2.0) * sigma)
    b_hi = np.full(lams.size, math.sqrt(2.0 * (d + 1)) * sigma)
    for _ in range(50):
        mid = 0.5 * (b_lo + b_hi)
        ok = mid >= 2 * sigma * sigma * (np.sum(1.0 / np.maximum(mid[:, None], base), axis=1)
                                         + 1 / mid)
        b_hi, b_lo = np.where(ok, mid, b_hi), np.where(ok, b_lo, mid)
    b = np.maximum(b_hi[:, None], base)
    cost = np.mean(np.log1p(b / g[None, :]), axis=1)
    return b[int(np.argmin(cost))]


def shifted_gram(G: np.ndarray, R: float, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """``G + B`` (:func:`noise_shift`) with its eigenvalues floored at ``max(1e-9 R^2, 1e-12)``,
    and the shifts ``b_j`` (ascending eigenvalues of ``G``); post-processing of a release."""
    lam, V = np.linalg.eigh((G + G.T) / 2)
    low = max(1e-9 * R * R, 1e-12)
    b = noise_shift(lam, sigma, low)
    return (V * np.maximum(lam + b, low)) @ V.T, b


def uniform_share(*, gram_loss: float, mu: float, free: float, first: float,
                  iterate: Callable[[float], float], gap_max: float, gram_share: float,
                  points: int = SHARE_POINTS) -> float:
    """The share of ``mu^2`` for the uniform-weights Gram matrix ``Q0`` (``free``: skip the
    iteration), by minimax regret over the unknown gap between uniform weights and John.

    Loss models, per dimension of fitted log volume against the John ellipsoid:

    * the uniform weights released at share ``s``: ``g + gram_loss / (mu sqrt(s))``, with ``g``
      the (unknown, private) gap of the exact uniform weights, ``0 <= g <= gap_max``; the noise
      term: ``Q0 + Z`` with ``Z`` of entry sd ``sigma`` has ``||Q0^{-1/2} Z Q0^{-1/2}|| ~
      sqrt(2d) sigma / q_min`` (a symmetric Gaussian matrix, off-diagonal variance
      ``sigma^2/2``), and a relative perturbation ``r`` of the matrix moves the fitted log
      volume by at most ``1/2 log((1+r)/(1-r)) ~ r``;
    * the private iterate with the rest ``free - s``: ``iterate(mu sqrt(free - s))`` plus the
      noise of its own Gram matrix ``A'VA``, released at ``gram_share`` with a sensitivity at
      least that of ``Q0`` (``max v >= d/n``): ``gram_loss / (mu sqrt(gram_share))``.

    The selection returns the better one, so the outcome of share ``s`` is the minimum of the two
    (the uniform weights alone when ``s = free``).  The share returned minimises, over a
    geometric grid of ``points + 1`` shares from ``first`` (already released) to ``free``, the
    largest regret ``outcome(s, g) - min_s' outcome(s', g)`` over ``g`` in ``[0, gap_max]``.
    """
    shares = first * (free / first) ** (np.arange(points + 1) / points)
    noise = np.array([gram_loss / (mu * math.sqrt(s)) for s in shares])
    own = gram_loss / (mu * math.sqrt(gram_share))
    it = np.array([iterate(mu * math.sqrt(free - s)) + own if s < free else math.inf
                   for s in shares])
    gaps = np.linspace(0.0, max(gap_max, 0.0), 65)
    outcome = np.minimum(gaps[None, :] + noise[:, None], it[:, None])
    regret = (outcome - outcome.min(axis=0)[None, :]).max(axis=1)
    return float(shares[int(np.argmin(regret))])


def gram_event_level(failure: float, schedules: int) -> float:
    """The probability of each one-sided event of :func:`scale_lower_bound` (docs/john.md D5).

    Without ``inscribed`` no guarantee uses the upper confidence bound of the uniform weights'
    scale (D4 needs the uniform candidates' lower bounds and the others' upper ones, D5 the
    winner's lower one), so its share ``failure/6`` of :func:`z_level`'s union bound pays for
    the Gram events: half of it for each of the two Gram releases a candidate can be sized by
    (``Q0`` and the iterate's ``A'VA``), two one-sided events each (largest eigenvalue and trace
    of the noise), each over the ``schedules`` combinations of releases the matrix can be
    (:data:`GRAM_SCHEDULES` for ``Q0``, whose share is chosen from its first release; 1 for
    ``A'VA``, one release).
    """
    return failure / (6 * 2 * 2 * schedules)


def gram_noise_bounds(d: int, sigma: float, p: float) -> tuple[float, float]:
    """``(r, t)`` with ``P(lambda_max(Z) > r) <= p`` and ``P(tr Z > t) = p`` for the symmetric
    Gaussian ``Z`` of entry sd ``sigma`` (:func:`cvxdp.geometry.john.core.sym_noise`).

    ``Z = sigma smat(xi)``, ``xi`` standard Gaussian, ``smat`` a Frobenius isometry, so
    ``lambda_max(Z)`` is ``sigma``-Lipschitz in ``xi`` and ``P(lambda_max(Z) > E lambda_max(Z)
    + sigma u) <= exp(-u^2/2)`` (Gaussian concentration); ``E lambda_max(Z) <= sigma sqrt(2d)``
    (Sudakov-Fernique: ``E(u'Zu - v'Zv)^2 = sigma^2 (2 - 2(u'v)^2) <= 2 sigma^2 ||u - v||^2``,
    the increments of ``sqrt(2) sigma g'u``, whose supremum over the sphere has mean
    ``<= sqrt(2) sigma sqrt(d)``).  So ``r = sigma (sqrt(2d) + sqrt(2 log(1/p)))``; ``tr Z ~
    N(0, d sigma^2)``, so ``t = z_{1-p} sigma sqrt(d)``.
    """
    r = sigma * (math.sqrt(2.0 * d) + math.sqrt(2.0 * math.log(1.0 / p)))
    return r, float(special.ndtri(1.0 - p)) * sigma * math.sqrt(d)


def scale_lower_bound(Q: np.ndarray, G: np.ndarray, sigma: float, p: float) -> float:
    """A lower bound on ``s = max_i ||Q^{-1/2} c_i||`` from the release ``G = Gamma + Z`` of the
    candidate's weighted Gram matrix ``Gamma = sum_i w_i c_i c_i'`` (``sum_i w_i = d``, ``Z``
    symmetric Gaussian of entry sd ``sigma``: :func:`cvxdp.geometry.john.core.sym_noise`), valid
    on the event ``lambda_max(Z) <= r`` and ``tr Z <= t`` (probability ``>= 1 - 2p``).

    * ``s^2 >= sum_i (w_i/d) c_i' Q^{-1} c_i = tr(Q^{-1} Gamma) / d`` (the largest ratio is at
      least the weighted mean).
    * In the eigenbasis ``V`` of ``Q`` (eigenvalues ``m_j``), ``tr(Q^{-1} Gamma) = sum_j x_j /
      m_j`` with ``x_j = (V' Gamma V)_jj``.  ``Gamma >= 0`` and ``Gamma = G - Z >= G - r I`` give
      ``x_j >= l_j = max((V'GV)_jj - r, 0)``, and ``sum_j x_j = tr Gamma >= S = tr G - t``.  The
      least ``sum_j x_j / m_j`` under these constraints puts ``x = l`` plus the rest of ``S`` on
      the largest ``m_j``: ``d s^2 >= sum_j l_j / m_j + max(S - sum_j l_j, 0) / m_max``.
    * ``r`` and ``t``: :func:`gram_noise_bounds`.

    Every input is public (``Q`` and ``G`` are releases, ``sigma`` and ``p`` public numbers).
    """
    d = Q.shape[0]
    m, V = np.linalg.eigh((Q + Q.T) / 2)
    m = np.maximum(m, TINY)
    if not sigma >= 0:  # nan: no noise law known, no bound
        return 0.0
    r, t = gram_noise_bounds(d, sigma, p)
    g = np.einsum("ij,ik,kj->j", V, (G + G.T) / 2, V)
    low = np.maximum(g - r, 0.0)
    rest = max(float(np.trace(G)) - t - float(low.sum()), 0.0)
    return math.sqrt(max(float(np.sum(low / m)) + rest / float(m.max()), 0.0) / d)


class Scored:
    """A released candidate with its released support scale and confidence bounds on ``F_c``.

    ``gram`` is the release of a weighted Gram matrix by which the candidate can be sized
    (:func:`scale_lower_bound`), ``gram_sigma`` its noise's entry sd and ``schedules`` how many
    combinations of releases it can be (:func:`gram_event_level`); ``gram=None``: none.
    """

    def __init__(self, name: str, Q: np.ndarray, weights: np.ndarray | None,
                 gram: np.ndarray | None,
                 scale: float, sigma: float, z: float, *, gram_sigma: float = math.nan,
                 schedules: int = 1):
        self.name, self.Q, self.weights, self.gram = name, Q, weights, gram
        self.gram_sigma, self.schedules = gram_sigma, schedules
        self.E = Ellipsoid.from_matrix(Q, weights=weights)
        self.scale, self.sigma, self.z = scale, sigma, z
        d = Q.shape[0]
        self.fitted = self.E.log_volume - d * math.log(max(scale, TINY))
        self.lower = self.E.log_volume - d * math.log(max(scale + z * sigma, TINY))
        low = scale - z * sigma
        self.upper = math.inf if low <= 0 else self.E.log_volume - d * math.log(low)

    def relative_noise(self, z: float) -> float:
        """``-log(1 - z sigma / s)`` (inf when ``s - z sigma <= 0``): the least per-dimension
        margin by which another candidate must beat this one's released fitted volume."""
        r = z * self.sigma / self.scale if self.scale > 0 else math.inf
        return math.inf if r >= 1 else -math.log1p(-r)

    def combined(self, other: Scored, mu_a: float, mu_b: float) -> Scored:
        """This candidate with its scale released twice (at ``mu_a``, ``mu_b``, the same
        matrix): the inverse-variance mean, one Gaussian release at ``mu_a^2 + mu_b^2``."""
        wa, wb = mu_a ** 2, mu_b ** 2
        scale = (wa * self.scale + wb * other.scale) / (wa + wb)
        sigma = self.sigma * mu_a / math.sqrt(wa + wb)
        return Scored(self.name, self.Q, self.weights, self.gram, scale, sigma, self.z,
                      gram_sigma=self.gram_sigma, schedules=self.schedules)

    def sized(self, z: float, failure: float) -> tuple[Ellipsoid, float, str]:
        """``E_c`` scaled by ``1/k`` so that it contains the largest copy of its shape inside P
        (shrinking it to fit loses nothing), ``k``, and which bound ``k`` is
        (``"released scale"``, ``"mean leverage"`` or ``"none"``).

        ``k`` is the larger of two lower bounds on ``s_c``: the lower confidence bound
        ``s_c - z sigma_c`` of the released scale (on the event of :func:`choose`), and the
        mean-leverage bound :func:`scale_lower_bound` from the released Gram matrix (on its
        events, :func:`gram_event_level`).  When neither is positive, no lower bound on ``s_c``
        follows from the releases (the data may be all zero) and ``k`` is :data:`TINY`.  A
        post-processing of releases.
        """
        low = self.scale - z * self.sigma
        low = low if low == low and low > 0 else 0.0  # nan: no scale was released
        mean = 0.0
        if self.gram is not None:
            mean = scale_lower_bound(self.Q, self.gram, self.gram_sigma,
                                     gram_event_level(failure, self.schedules))
        k = max(low, mean, TINY)
        source = "none" if k == TINY else "released scale" if k == low else "mean leverage"
        return self.E.scaled(1.0 / k), k, source


def score(A: Any, name: str, Q: np.ndarray, weights: np.ndarray | None,
          gram: np.ndarray | None, *,
          eps0: float, mu_s: float, z: float, gen: np.random.Generator,
          release: Callable[[Any], Any], gram_sigma: float = math.nan,
          schedules: int = 1) -> Scored:
    """Release ``s_c = max_i ||Q^{-1/2} a_i|| + N(0, sigma_c^2)``, ``sigma_c = Delta_s / mu_s``.

    ``Delta_s = eps0 / sqrt(lambda_min(Q))`` (a max of ``||Q^{-1/2}||``-Lipschitz functions of
    one row each, ``Q`` public).  ``release`` marks the noisy output (``john_private.released``).
    """
    E = Ellipsoid.from_matrix(Q, weights=weights)
    lam = float(np.linalg.eigvalsh(Q)[0])
    sigma = support_sensitivity(closeness=eps0, min_eig=lam) / mu_s
    s = release(math.sqrt(float(np.max(E.support_ratios(A)))) + sigma * gen.standard_normal())
    return Scored(name, Q, weights, gram, float(s), sigma, z, gram_sigma=gram_sigma,
                  schedules=schedules)


def choose(uniform: Scored | list[Scored], others: list[Scored]) -> tuple[Scored, str | None]:
    """The candidate with the largest lower confidence bound on ``F_c`` among those whose lower
    bound beats the uniform candidate's upper bound; the uniform candidate when none does.

    ``uniform`` may be several releases of the uniform weights (the Gram matrix shifted by its
    noise's typical size and unshifted, :func:`noise_shift`).  Between them no guarantee is
    needed (both are uniform weights), so the rule minimises the largest expected regret: the
    one with the larger released fitted volume, among those whose scale's lower confidence bound
    is positive (else the larger lower bound).  With per-dimension noise ``sigma`` of the
    difference, picking the larger release loses ``D Phi(-D/sigma) <= 0.17 sigma`` in
    expectation when the true gap is ``D``; picking the larger lower bound loses up to
    ``z (sigma_a - sigma_b)`` when the noisier one is better.
    On the event that every released scale lies within ``z sigma_c`` of the truth (probability
    ``>= 1 - failure``), a winner other than the uniform candidate has a true fitted volume at
    least the uniform candidate's.  Returns the winner and, when the uniform candidate wins
    against others, the reason.
    """
    if isinstance(uniform, list):
        sized = [c for c in uniform if c.upper < math.inf]
        uniform = (max(sized, key=lambda c: c.fitted) if sized
                   else max(uniform, key=lambda c: c.lower))
    better = [c for c in others if c.lower > uniform.upper]
    if better:
        return max(better, key=lambda c: c.lower), None
    if not others:
        return uniform, None
    best = max(others, key=lambda c: c.lower)
    return uniform, (
        f"uniform weights w = d/n: no candidate's released fitted volume is certainly above "
        f"that of the released uniform-weights ellipsoid (best lower confidence bound "
        f"{best.lower:.4g} ({best.name}) <= upper bound {uniform.upper:.4g}, "
        "info['fitted_log_volumes'])")


def z_level(failure: float, events: int) -> float:
    """``z_{1 - failure/events}``: one-sided bounds on ``events`` released scales, union bound."""
    return float(special.ndtri(1 - failure / events))


def release_winner(winner: Scored, candidates: tuple | None, note: str | None, *, z: float,
                   inscribed: bool, failure: float, info: dict
                   ) -> tuple[Ellipsoid, np.ndarray | None]:
    """The winner, sized from releases only (post-processing), and its weights.

    Default: scaled by :meth:`Scored.sized`: it contains the largest copy of its shape inside the
    polytope, so fitting it (shrinking) loses nothing.  ``inscribed``: ``E_c / (s_c + z
    sigma_c)``, inside the polytope of the clipped rows on the event (probability ``>= 1 -
    failure``) on which every released scale is within ``z sigma_c`` of the truth.
    """
    info["selected"] = winner.name
    if candidates is not None:
        info["fitted_log_volumes"] = {c.name: {"released": c.fitted, "lower": c.lower,
                                               "upper": c.upper} for c in candidates}
    if note is not None:
        info["fallback"] = "; ".join(filter(None, [info.get("fallback"), note])) + (
            "; the budget was spent.")
    if inscribed:
        scale = max(winner.scale + z * winner.sigma, TINY)
        info.update(failure=failure, inscribed_guarantee=INSCRIBED_GUARANTEE, scale=1.0 / scale,
                    sigma_scale=winner.sigma)
        return winner.E.scaled(1.0 / scale), (None if winner.weights is None
                                              else winner.weights * scale ** 2)
    E, k, source = winner.sized(z, failure)
    info.update(scale=1.0 / k, scale_bound=source)
    return E, None if winner.weights is None else winner.weights * k ** 2
