"""The discrete Gaussian mechanism with an exact sampler (Canonne, Kamath & Steinke 2020).

The continuous Gaussian mechanism is proven for ideal real-valued noise; numpy's floating-point
sampler only approximates it (see ``docs/privacy.md``, "Randomness and its limits").  This module
releases instead ``granularity * (round(value / granularity) + Y)`` with ``Y`` drawn from the
discrete Gaussian ``N_Z(0, s^2)``, ``P[Y = y] ∝ exp(-y^2 / (2 s^2))`` on the integers, sampled
**exactly**: every step is integer or rational (``fractions.Fraction``) arithmetic, and the only
randomness is uniform integers drawn from the injected generator (numpy's ``integers`` is exact
rejection sampling on uniform bits).

* Algorithm 1 of the paper (von Neumann): ``Bernoulli(exp(-gamma))`` for rational ``gamma``.
* Algorithm 2: the discrete Laplace ``Lap_Z(t)``, ``P[Y = y] ∝ exp(-|y| / t)``, integer ``t``.
* Algorithm 3: ``N_Z(0, s^2)`` by rejection from ``Lap_Z(t)`` with ``t = floor(s) + 1``, accepting
  ``Y`` with probability ``exp(-(|Y| - s^2/t)^2 / (2 s^2))``.

Privacy: adding independent ``N_Z(0, s^2)`` to each coordinate of an integer-valued query with l2
sensitivity ``D`` is ``D^2 / (2 s^2)``-zCDP (paper Thm 4 in one dimension; its multivariate
form, Thm 14 of arXiv:2004.00010v5, for independent coordinates).  Rounding a real query to the
grid can move a coordinate by up to one grid step between neighbours, so the sensitivity on the
grid is ``ceil(D / g)`` for a scalar and ``D / g + sqrt(d)`` for d coordinates
(``|round(a) - round(b)| <= ceil(|a - b|)`` coordinatewise, then Minkowski), both computed
exactly (rounded up).  An (epsilon, delta) target is met through zCDP and the CKS conversion
(Cor. 13), so the record carries both.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import (
    ZCDP,
    ApproxDP,
    check_delta,
    check_epsilon,
    check_finite,
    check_rho,
    zcdp_from_approx,
    zcdp_to_epsilon,
)
from cvxdp.privacy.rng import as_generator

__all__ = [
    "bernoulli_exp",
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
    "discrete_gaussian_pmf",
    "grid_sensitivity",
    "default_granularity",
    "discrete_gaussian_record",
    "discrete_gaussian_mechanism",
]

DISCRETE_GAUSSIAN_REFERENCE = (
    "Canonne, Kamath & Steinke 2020, Thm 4 / Thm 14 (rho = D^2/(2 s^2)-zCDP on the integer grid), "
    "Alg. 1-3 (exact sampler), Cor. 13 (zCDP -> (eps, delta))"
)
_SIG_BITS = 40  # sigma^2 on the grid is rounded UP to a dyadic rational with this many bits


def _uniform_below(n: int, gen: np.random.Generator) -> int:
    """Exactly uniform on {0, ..., n-1} for any positive Python int n."""
    if n < 2**62:
        return int(gen.integers(0, n))
    nbits = (n - 1).bit_length()
    words = -(-nbits // 64)
    while True:  # rejection on nbits uniform bits: exact
        r = 0
        for w in gen.integers(0, 2**64, size=words, dtype=np.uint64):
            r = (r << 64) | int(w)
        r >>= words * 64 - nbits
        if r < n:
            return r


def _bernoulli(p: Fraction, gen: np.random.Generator) -> bool:
    return _uniform_below(p.denominator, gen) < p.numerator


def bernoulli_exp(gamma: Fraction, rng: None | int | np.random.Generator = None) -> bool:
    """One exact draw of ``Bernoulli(exp(-gamma))`` for rational ``gamma >= 0``.

    References
    ----------
    Canonne, Kamath & Steinke, NeurIPS 2020, Algorithm 1 (von Neumann's method; for
    ``gamma > 1`` a product of ``floor(gamma)`` draws at 1 and one at the fractional part).
    """
    gen = as_generator(rng)
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}.")
    whole = math.floor(gamma)
    for _ in range(whole):
        if not _bernoulli_exp_unit(Fraction(1), gen):
            return False
    return _bernoulli_exp_unit(gamma - whole, gen)


def _bernoulli_exp_unit(gamma: Fraction, gen: np.random.Generator) -> bool:
    k = 1
    while _bernoulli(gamma / k, gen):
        k += 1
    return k % 2 == 1


def sample_discrete_laplace(t: int, rng: None | int | np.random.Generator = None) -> int:
    """One exact draw of ``Lap_Z(t)``: ``P[Y = y] = (e^{1/t} - 1) / (e^{1/t} + 1) e^{-|y|/t}``.

    References
    ----------
    Canonne, Kamath & Steinke, NeurIPS 2020, Algorithm 2 (with s = 1).
    """
    gen = as_generator(rng)
    t = int(t)
    if t < 1:
        raise ValueError(f"t must be a positive integer, got {t}.")
    while True:
        u = _uniform_below(t, gen)
        if not _bernoulli_exp_unit(Fraction(u, t), gen):
            continue
        v = 0
        while _bernoulli_exp_unit(Fraction(1), gen):
            v += 1
        y = u + t * v
        negative = _uniform_below(2, gen) == 1
        if negative and y == 0:
            continue  # zero would otherwise be counted twice
        return -y if negative else y


def _check_sigma2(sigma2: Any) -> Fraction:
    s2 = Fraction(sigma2)
    if s2 <= 0:
        raise ValueError(f"sigma2 must be > 0, got {sigma2!r}.")
    return s2


def sample_discrete_gaussian(sigma2: Fraction | int | float, size: int | tuple[int, ...] = (),
                             rng: None | int | np.random.Generator = None) -> np.ndarray:
    """Exact i.i.d. draws of the discrete Gaussian ``N_Z(0, sigma2)``.

    Parameters
    ----------
    sigma2 : Fraction, int or float
        ``sigma^2 > 0`` (a float is used at its exact binary value).
    size : int or tuple of int
        Output shape.
    rng : None, int or Generator

    Returns
    -------
    ndarray of int64 (Python ints in an object array if any draw exceeds int64).

    References
    ----------
    Canonne, Kamath & Steinke, NeurIPS 2020, Algorithm 3.
    """
    s2 = _check_sigma2(sigma2)
    gen = as_generator(rng)
    t = math.isqrt(math.floor(s2)) + 1  # floor(sigma) + 1, exactly
    shift = s2 / t
    n = int(np.prod(size, dtype=np.int64)) if np.ndim(size) else int(size)
    out: list[int] = []
    for _ in range(n):
        while True:
            y = sample_discrete_laplace(t, gen)
            if bernoulli_exp((abs(y) - shift) ** 2 / (2 * s2), gen):
                out.append(y)
                break
    arr = np.array(out, dtype=object if any(abs(v) >= 2**62 for v in out) else np.int64)
    return arr.reshape(size)


def discrete_gaussian_pmf(y: Any, sigma2: float) -> np.ndarray:
    """``P[Y = y]`` for ``Y ~ N_Z(0, sigma2)`` (normaliser summed to 1e-300; for tests)."""
    s2 = float(sigma2)
    cut = int(math.ceil(math.sqrt(2 * s2 * 700.0))) + 1
    z = np.arange(-cut, cut + 1, dtype=float)
    norm = float(np.sum(np.exp(-z * z / (2 * s2))))
    yy = np.asarray(y, dtype=float)
    return np.exp(-yy * yy / (2 * s2)) / norm


def grid_sensitivity(*, sensitivity: float, granularity: float, size: int) -> float:
    """l2 sensitivity of ``round(value / granularity)`` (half up), rounded up to a float.

    ``ceil(D / g)`` for one coordinate (``|round(a) - round(b)| <= ceil(|a - b|)``), and
    ``D / g + sqrt(size)`` for ``size`` coordinates (each nonzero coordinate difference grows by
    less than one, then Minkowski).  ``D / g`` is computed exactly from the two floats.
    """
    ratio = Fraction(float(sensitivity)) / Fraction(float(granularity))
    if int(size) <= 1:
        return float(math.ceil(ratio))
    bound = float(ratio) + math.sqrt(int(size))
    return float(np.nextafter(np.nextafter(bound, np.inf), np.inf))  # above both roundings


def default_granularity(*, sensitivity: float, size: int) -> float:
    """The largest power of two not above ``sensitivity / (1024 sqrt(size))``.

    Rounding to it inflates the sensitivity by at most 0.1% (public: depends only on the
    declared sensitivity and the shape).
    """
    target = float(sensitivity) / (1024.0 * math.sqrt(max(int(size), 1)))
    return math.ldexp(1.0, math.frexp(target)[1] - 1)


def _sigma2_for(rho: float, grid_sens: float) -> Fraction:
    """Smallest dyadic ``s^2`` (``_SIG_BITS`` significant bits) with ``D^2/(2 s^2) <= rho``."""
    target = Fraction(grid_sens) ** 2 / (2 * Fraction(rho))
    e = target.numerator.bit_length() - target.denominator.bit_length()
    scale = Fraction(2) ** (_SIG_BITS - e)
    return Fraction(math.ceil(target * scale)) / scale


def _rho_of(sigma2: Fraction, grid_sens: float) -> float:
    """``D^2 / (2 s^2)`` rounded up to a float."""
    exact = Fraction(grid_sens) ** 2 / (2 * sigma2)
    r = float(exact)
    return r if Fraction(r) >= exact else float(np.nextafter(r, np.inf))


def discrete_gaussian_record(*, sigma2: Fraction | float, sensitivity: float,
                             granularity: float, size: int = 1,
                             epsilon: float | None = None, delta: float | None = None,
                             mechanism: str = "discrete_gaussian", count: int = 1,
                             **params: Any) -> PrivacyRecord:
    """Privacy record of the discrete Gaussian mechanism on the grid ``granularity * Z``.

    ``rho = D_g^2 / (2 sigma2)`` with ``D_g = grid_sensitivity(...)`` (Thm 4 / Thm 14).  The
    primary budget is ``ApproxDP(epsilon, delta)`` when ``delta`` is given (checked against the
    CKS conversion of rho; epsilon computed if omitted), else ``ZCDP(rho)``.  No ``gdp_mu`` is
    recorded: the discrete Gaussian is not exactly Gaussian-DP, so the accountant composes it in
    zCDP.
    """
    s2 = _check_sigma2(sigma2)
    d_g = grid_sensitivity(sensitivity=sensitivity, granularity=granularity, size=size)
    z = ZCDP(_rho_of(s2, d_g))
    budget: ZCDP | ApproxDP = z
    if delta is not None:
        delta = check_delta(delta)
        if delta == 0:
            raise BudgetError("the discrete Gaussian mechanism needs delta > 0 (or rho=).")
        exact = zcdp_to_epsilon(z.rho, delta)
        if epsilon is not None and exact > check_epsilon(epsilon):
            raise BudgetError(f"sigma2={float(s2):.6g} gives epsilon={exact:.6g} > claimed "
                              f"{epsilon:.6g} at delta={delta:.3g}.")
        budget = ApproxDP(exact if epsilon is None else epsilon, delta)
    g = float(granularity)
    return PrivacyRecord(mechanism, budget, DISCRETE_GAUSSIAN_REFERENCE, zcdp=z, count=count,
                         params={"sigma": g * math.sqrt(s2), "sigma2_grid": float(s2),
                                 "granularity": g, "sensitivity": float(sensitivity),
                                 "grid_sensitivity": d_g, **params})


def _round_half_up(x: float, g: Fraction) -> int:
    """``floor(x / g + 1/2)`` computed exactly from the binary values of x and g."""
    q = Fraction(x) / g + Fraction(1, 2)
    return q.numerator // q.denominator


def discrete_gaussian_mechanism(
    value: Any,
    *,
    sensitivity: float,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    granularity: float | None = None,
    rng: None | int | np.random.Generator = None,
    accountant: PrivacyAccountant | None = None,
) -> tuple[np.ndarray, PrivacyRecord]:
    """Release ``g * (round(value / g) + Y)``, ``Y`` i.i.d. discrete Gaussian, sampled exactly.

    Parameters
    ----------
    value : array_like
        Finite; l2 sensitivity ``sensitivity`` under the neighbouring relation.
    sensitivity : float
        l2 sensitivity D > 0 of ``value``.
    epsilon, delta : float
        Target (epsilon, delta), met through zCDP: ``rho = zcdp_from_approx(epsilon, delta)``.
    rho : float
        Target zCDP instead.
    granularity : float, optional
        Grid step g > 0 of the release; default :func:`default_granularity` (a power of two,
        at most 0.1% sensitivity inflation).  A value already on the grid is not moved.
    rng, accountant : see :func:`cvxdp.privacy.mechanisms.gaussian_mechanism`.

    Returns
    -------
    noisy : ndarray of float (multiples of g, converted to float at the end: post-processing)
    record : PrivacyRecord

    References
    ----------
    Canonne, Kamath & Steinke, NeurIPS 2020: Thm 4 / Thm 14 (zCDP), Alg. 1-3 (sampler),
    Cor. 13 (conversion).
    """
    x = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("value contains NaN or inf; the Gaussian mechanism needs finite data.")
    D = check_finite("sensitivity", sensitivity)
    if D <= 0:
        raise BudgetError(f"sensitivity must be > 0 (finite), got {sensitivity!r}.")
    size = max(int(x.size), 1)
    g = default_granularity(sensitivity=D, size=size) if granularity is None else \
        check_finite("granularity", granularity)
    if g <= 0:
        raise BudgetError(f"granularity must be > 0, got {granularity!r}.")
    d_g = grid_sensitivity(sensitivity=D, granularity=g, size=size)
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise BudgetError("give either epsilon= and delta= or rho=, not both.")
        s2 = _sigma2_for(check_rho(rho), d_g)
        record = discrete_gaussian_record(sigma2=s2, sensitivity=D, granularity=g, size=size)
    else:
        if epsilon is None or delta is None:
            raise BudgetError("the discrete Gaussian mechanism needs epsilon= and delta= "
                              "(delta > 0), or rho=.")
        eps, dlt = check_epsilon(epsilon), check_delta(delta)
        if dlt == 0:
            raise BudgetError("the discrete Gaussian mechanism needs delta > 0 (or rho=).")
        target = zcdp_from_approx(eps, dlt)
        s2 = _sigma2_for(target, d_g)
        while zcdp_to_epsilon(_rho_of(s2, d_g), dlt) > eps:  # root-finding slack: step up
            s2 *= Fraction(2**_SIG_BITS + 1, 2**_SIG_BITS)
        record = discrete_gaussian_record(sigma2=s2, sensitivity=D, granularity=g, size=size,
                                          epsilon=eps, delta=dlt)
    if accountant is not None:
        accountant.spend(record)
    gen = as_generator(rng)
    gf = Fraction(g)
    centre = [_round_half_up(v, gf) for v in x.ravel().tolist()]
    noise = sample_discrete_gaussian(s2, size=len(centre), rng=gen)
    out = np.array([float((c + int(y)) * gf) for c, y in zip(centre, noise, strict=True)])
    return out.reshape(x.shape), record
