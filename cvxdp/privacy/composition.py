"""Composition of privacy records: :func:`compose` is a pure function of records.

For a total in (epsilon, delta) it evaluates several sound strategies and returns the tightest:

* zCDP route: every record that has a zCDP bound is composed by adding rho (Bun & Steinke 2016,
  Lemma 2.3), then converted once with the CKS bound at the delta left after the approximate-DP
  records.
* pure route: pure records are added in epsilon (basic composition), the remaining zCDP-only
  records go through the zCDP route.
* Gaussian-DP route: Gaussian steps (records with ``params["gdp_mu"]``) composed exactly in
  Gaussian DP, the rest by the other routes, delta split between the two.
* basic route: every record with an (epsilon, delta) or pure budget is added by basic
  composition (a single analytic-Gaussian step keeps its exact epsilon), zCDP-only records are
  converted with the delta left.

Records that only have (epsilon, delta) guarantees are always added by basic composition
(Dwork & Roth 2014, Thm 3.16).  :class:`cvxdp.privacy.accountant.PrivacyAccountant` spends
through :func:`compose`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget, PureDP, zcdp_to_epsilon
from cvxdp.privacy.gdp_curve import gdp_epsilon

if TYPE_CHECKING:  # annotations only: records are built in cvxdp.privacy.accountant
    from cvxdp.privacy.accountant import PrivacyRecord

__all__ = ["compose", "float_delta", "REL_TOL"]

#: relative tolerance of budget comparisons (rounding of the composed sums)
REL_TOL = 1e-9


def _approx_parts(records: Iterable[PrivacyRecord]) -> tuple[float, float]:
    eps = 0.0
    delta = 0.0
    for r in records:
        b = r.budget
        eps += r.count * b.epsilon
        delta += r.count * getattr(b, "delta", 0.0)
    return eps, delta


def float_delta(records: Iterable[PrivacyRecord]) -> float:
    """The total delta of the records' floating-point samplers, ``sum count * float_delta``.

    A sampler whose law is within total variation ``eta`` of the ideal mechanism's adds
    ``(1 + e^eps) eta`` to its delta (:func:`cvxdp.privacy.mechanisms.exponential_float_delta`);
    by basic composition these add up, on top of whatever the ideal steps compose to."""
    return float(sum(r.count * float(r.params.get("float_delta", 0.0)) for r in records))


def compose(records: Iterable[PrivacyRecord], *, notion: str = "approx", delta: float | None = None,
            float_deltas: str = "within") -> Budget:
    """Compose records into one guarantee.

    Parameters
    ----------
    records : iterable of PrivacyRecord
    notion : {"pure", "zcdp", "approx"}
        The notion of the result.
    delta : float, optional
        Required for ``notion="approx"``: the total delta of the result.
    float_deltas : {"within", "on_top"}
        Where the records' float-sampler deltas go: out of ``delta`` (the result is exactly
        ``(epsilon, delta)``; falls back to "on_top" when they exceed it) or added to it.

    Returns
    -------
    PureDP, ZCDP or ApproxDP

    Raises
    ------
    BudgetError
        When the records cannot be expressed in the notion (e.g. an (eps, delta>0) step in zCDP),
        or the approximate-DP records already use more than ``delta``.
    """
    recs = list(records)
    if not recs:
        raise BudgetError("nothing to compose: no privacy records.")
    if notion == "pure":
        if any(r.pure_epsilon is None for r in recs):
            raise BudgetError("a step is not pure DP; compose in 'approx' or 'zcdp' instead.")
        return PureDP(sum(r.count * r.pure_epsilon for r in recs))
    if notion == "zcdp":
        if any(r.zcdp is None for r in recs):
            bad = next(r for r in recs if r.zcdp is None)
            raise BudgetError(f"step {bad.mechanism!r} has no zCDP bound; compose in 'approx'.")
        return ZCDP(sum(r.count * r.zcdp.rho for r in recs))
    if notion != "approx":
        raise ValueError(f"notion must be 'pure', 'zcdp' or 'approx', got {notion!r}")
    if delta is None:
        raise BudgetError("compose(notion='approx') needs the total delta=.")
    # the float samplers' deltas (exponential_float_delta) compose with the ideal steps by
    # basic composition: "within" takes them out of the total (the ideal steps get delta -
    # fd), "on_top" composes the ideal steps at delta and reports delta + fd
    fd = float_delta(recs)
    if float_deltas == "within" and fd < delta:
        return ApproxDP(_approx_epsilon(recs, delta - fd), delta)
    return ApproxDP(_approx_epsilon(recs, delta), min(1.0, delta + fd))


def _approx_epsilon(recs: list[PrivacyRecord], delta: float) -> float:
    """Tightest epsilon at total ``delta``: the strategies of :func:`_approx_epsilon_basic_zcdp`,
    and, when some steps are Gaussian (``params["gdp_mu"]``), exact Gaussian-DP composition of
    those steps (``mu = sqrt(sum mu_k^2)``, Dong, Roth & Su 2022, Cor. 3.3) with delta split
    between them and the rest (sound for interleaved adaptive steps: adaptive composition is
    bounded by the tensor product of trade-off functions, which is commutative, ibid. Thm 3.2).
    """
    best = math.inf
    error: BudgetError | None = None
    try:
        best = _approx_epsilon_basic_zcdp(recs, delta)
    except BudgetError as err:
        error = err
    gauss = [r for r in recs if "gdp_mu" in r.params]
    if gauss:
        mu = math.sqrt(sum(r.count * float(r.params["gdp_mu"]) ** 2 for r in gauss))
        rest = [r for r in recs if "gdp_mu" not in r.params]
        if not rest:
            best = min(best, gdp_epsilon(mu=mu, delta=delta))
        else:
            # frac = 1: all delta to the Gaussian block (exact when the rest is pure DP)
            for frac in [*np.geomspace(1e-3, 1 - 1e-3, 13), 1.0]:
                try:
                    e_rest = _approx_epsilon_basic_zcdp(rest, delta * (1 - frac))
                except BudgetError:
                    continue
                best = min(best, gdp_epsilon(mu=mu, delta=delta * frac) + e_rest)
    if not math.isfinite(best):
        raise error or BudgetError(f"cannot compose within delta={delta:.3g}.")
    return best


def _approx_epsilon_basic_zcdp(recs: list[PrivacyRecord], delta: float) -> float:
    """Tightest epsilon at total ``delta`` over the strategies described in the module doc.

    Each strategy puts some records in a *basic* group (their own (eps, delta) budgets added,
    Dwork & Roth Thm 3.16) and the rest in a *zCDP* group (rho added, converted once with CKS at
    the delta the basic group leaves); the two groups then compose by basic composition.  Every
    strategy is a valid bound, so the minimum is too.
    """
    def basic_eligible(r: PrivacyRecord) -> bool:
        return not isinstance(r.budget, ZCDP)

    strategies = (
        lambda r: r.zcdp is None,                                 # zCDP wherever possible
        lambda r: r.zcdp is None or r.pure_epsilon is not None,   # pure steps added in eps
        basic_eligible,                                           # every step by its own budget
    )
    best = math.inf
    errors: list[str] = []
    for in_basic in strategies:
        basic = [r for r in recs if in_basic(r) and basic_eligible(r)]
        zc = [r for r in recs if not (in_basic(r) and basic_eligible(r))]
        eps, delta_b = _approx_parts(basic)
        delta_left = delta - delta_b
        if delta_left < -REL_TOL * max(delta, 1e-300):
            errors.append(f"the (epsilon, delta) steps already use delta={delta_b:.3g} > "
                          f"total delta={delta:.3g}")
            continue
        rho = sum(r.count * r.zcdp.rho for r in zc)
        if rho > 0:
            if delta_left <= 0:
                errors.append("zCDP steps need delta > 0 left over to convert to (epsilon, delta)")
                continue
            eps += zcdp_to_epsilon(rho, delta_left)
        best = min(best, eps)
    if not math.isfinite(best):
        raise BudgetError(f"cannot compose within delta={delta:.3g}: {errors[0]}.")
    return best
