"""Privacy records, their composition, and the accountant an algorithm spends from.

A :class:`PrivacyRecord` is the immutable receipt of one mechanism run: which mechanism, the
guarantee it gives (as a budget value), the tightest zCDP bound it satisfies when one exists, the
theorem that proves it and the parameters (noise scale, sensitivity) that were used.

Composition (:func:`compose`) is a pure function of records.  For a total in (epsilon, delta) it
evaluates several sound strategies and returns the tightest:

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
(Dwork & Roth 2014, Thm 3.16).

What an accountant reports spent is what its refusal rule charged.  A call run against a user's
accountant is checked, before it reads any data, with its stated budget (the only guarantee known
then); after it ran, the ledger gets the tighter zCDP bound its own report proves.  The spend is
``max(compose(ledger), max_j compose(ledger before call j + call j's stated budget))``: every
term bounds the privacy of the calls it covers (a call is at least as private as its stated
budget, and composition is monotone in the records), so the maximum is a valid guarantee for
the whole ledger; each checked term was at most the total, so the spend never exceeds it; and
an accountant whose total is a session's reported spend accepts the same calls.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget, PureDP, zcdp_to_epsilon
from cvxdp.privacy.gdp_curve import gdp_epsilon

__all__ = ["PrivacyRecord", "PrivacyAccountant", "compose", "PrivacyReport", "float_delta",
           "FLOAT_DELTA_SHARE"]

_REL_TOL = 1e-9
#: share of an (epsilon, delta) budget a mechanism keeps for its float samplers' delta when it
#: plans (converts at ``delta * (1 - FLOAT_DELTA_SHARE)``), so the composed total stays exact
FLOAT_DELTA_SHARE = 1e-3


def _reduce_frozen(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a record or report (e.g. inside a fitted estimator sent to a joblib worker): its
    read-only mappings travel as dicts and are made read-only again by ``__post_init__``."""
    vals = (getattr(obj, f.name) for f in fields(obj))
    return type(obj), tuple(dict(v) if isinstance(v, MappingProxyType) else v for v in vals)


@dataclass(frozen=True)
class PrivacyRecord:
    """Receipt of one mechanism application.

    Attributes
    ----------
    mechanism : str
        E.g. ``"gaussian"``, ``"exponential"``, ``"eja_gaussian"``.
    budget : PureDP | ApproxDP | ZCDP
        The guarantee the step gives on its own.
    zcdp : ZCDP or None
        The tightest zCDP bound the step satisfies, if any (e.g. ``eps**2/8`` for the exponential
        mechanism, ``Delta**2 / (2 sigma**2)`` for the Gaussian).  Derived from ``budget`` when
        not given: pure epsilon gives ``epsilon**2/2``.
    reference : str
        Paper file and theorem/lemma that proves ``budget`` (or a textbook reference).
    params : Mapping
        Noise scale, sensitivity and anything else needed to re-derive the claim.
    count : int
        Number of identical applications this record stands for (adaptive composition).
    """

    mechanism: str
    budget: Budget
    reference: str
    zcdp: ZCDP | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.budget, (PureDP, ApproxDP, ZCDP)):
            raise TypeError(f"budget must be PureDP, ApproxDP or ZCDP, got {self.budget!r}")
        if int(self.count) < 1:
            raise ValueError("count must be >= 1")
        z = self.zcdp
        if z is None:
            if isinstance(self.budget, ZCDP):
                z = self.budget
            elif isinstance(self.budget, PureDP) or (
                isinstance(self.budget, ApproxDP) and self.budget.delta == 0
            ):
                z = ZCDP(self.budget.epsilon**2 / 2)
        object.__setattr__(self, "zcdp", z)
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "count", int(self.count))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _reduce_frozen(self)

    @property
    def pure_epsilon(self) -> float | None:
        """epsilon if the step is pure DP, else None."""
        b = self.budget
        if isinstance(b, PureDP) or (isinstance(b, ApproxDP) and b.delta == 0):
            return b.epsilon
        return None

    def __repr__(self) -> str:
        p = ", ".join(f"{k}={_fmt(v)}" for k, v in self.params.items())
        times = f" x{self.count}" if self.count > 1 else ""
        return (f"PrivacyRecord({self.mechanism}{times}: {_fmt_budget(self.budget)}; "
                f"{self.reference}; {p})")


def _larger(a: Budget, b: Budget) -> Budget:
    """The weaker of two guarantees of one notion (both hold, so the weaker one does)."""
    if isinstance(a, ZCDP):
        return a if a.rho >= b.rho else b
    if isinstance(a, PureDP):
        return a if a.epsilon >= b.epsilon else b
    if a.epsilon >= b.epsilon and a.delta >= b.delta:
        return a
    if b.epsilon >= a.epsilon and b.delta >= a.delta:
        return b
    return ApproxDP(max(a.epsilon, b.epsilon), max(a.delta, b.delta))


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return repr(v)


def _fmt_budget(b: Budget) -> str:
    if isinstance(b, PureDP):
        return f"eps={b.epsilon:.6g}"
    if isinstance(b, ApproxDP):
        return f"eps={b.epsilon:.6g}, delta={b.delta:.3g}"
    return f"rho={b.rho:.6g}"


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
        if delta_left < -_REL_TOL * max(delta, 1e-300):
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


@dataclass(frozen=True)
class PrivacyReport:
    """What a private solve reports about its privacy.

    Attributes
    ----------
    guarantee : str
        ``"dp"`` (proven DP under ``neighbouring``) unless an explicitly weaker option was chosen
        (``"conjectural"``, ``"asymptotic"``, ``"relative-dp"``).
    epsilon, delta : float or None
        The (epsilon, delta)-DP guarantee of the whole release (delta 0 for pure DP).
    rho : float or None
        The zCDP parameter when the release was accounted in zCDP.
    neighbouring : str
        The neighbouring relation under which the guarantee holds.
    theorem : str
        Paper file and theorem for the overall algorithm.
    records : tuple of PrivacyRecord
        The accountant's ledger.
    details : Mapping
        Algorithm-specific numbers (iterations, noise scales, the paper's noise for comparison).
    """

    guarantee: str
    epsilon: float | None
    delta: float | None
    rho: float | None
    neighbouring: str
    theorem: str
    records: tuple[PrivacyRecord, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))
        object.__setattr__(self, "records", tuple(self.records))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _reduce_frozen(self)

    @property
    def mechanisms(self) -> dict[str, int]:
        """How many times each mechanism ran."""
        out: dict[str, int] = {}
        for r in self.records:
            out[r.mechanism] = out.get(r.mechanism, 0) + r.count
        return out

    def __str__(self) -> str:
        """The ledger, one line per record (name, guarantee, theorem), and the composition."""
        lines = [f"{'step':<40} guarantee"]
        for r in self.records:
            times = f" x{r.count}" if r.count > 1 else ""
            z = (f" (rho={r.zcdp.rho:.4g})" if r.zcdp is not None
                 and not isinstance(r.budget, ZCDP) else "")
            kind = r.params.get("guarantee", "dp")
            extra = "" if kind == "dp" else f" [{kind}]"
            lines.append(f"{r.mechanism + times:<40} {_fmt_budget(r.budget)}{z}{extra}")
        total = []
        if self.epsilon is not None:
            total.append(f"eps={self.epsilon:.6g}, delta={self.delta:.3g}")
        if self.rho is not None:
            total.append(f"rho={self.rho:.6g}")
        lines.append(f"{'composed (' + self.guarantee + ')':<40} "
                     f"{'; '.join(total) or 'nothing spent'}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        parts = [f"guarantee={self.guarantee!r}"]
        if self.epsilon is not None:
            parts.append(f"epsilon={self.epsilon:.6g}")
        if self.delta is not None:
            parts.append(f"delta={self.delta:.3g}")
        if self.rho is not None:
            parts.append(f"rho={self.rho:.6g}")
        parts.append(f"mechanisms={self.mechanisms}")
        parts.append(f"theorem={self.theorem!r}")
        return "PrivacyReport(" + ", ".join(parts) + ")"


class PrivacyAccountant:
    """Spend privacy from a fixed total and keep an immutable ledger.

    Parameters
    ----------
    total : PureDP, ApproxDP or ZCDP
        The budget of the whole algorithm.

    Examples
    --------
    >>> acct = PrivacyAccountant(ApproxDP(1.0, 1e-6))
    >>> _ = acct.spend(PrivacyRecord("exponential", PureDP(0.1), "Dwork & Roth Thm 3.10",
    ...                              zcdp=ZCDP(0.1**2 / 8)))
    >>> acct.spent.epsilon <= 1.0
    True

    ``spent`` is an attribute, like ``total`` (the old call ``acct.spent()`` still returns the
    budget, with a :class:`DeprecationWarning`).
    """

    def __init__(self, total: Budget) -> None:
        if not isinstance(total, (PureDP, ApproxDP, ZCDP)):
            raise TypeError(f"total must be PureDP, ApproxDP or ZCDP, got {total!r}")
        self.total = total
        self._ledger: list[PrivacyRecord] = []
        # the largest composition a reserved check let through (module doc); None: none yet
        self._charged: Budget | None = None

    @property
    def notion(self) -> str:
        if isinstance(self.total, PureDP):
            return "pure"
        if isinstance(self.total, ZCDP):
            return "zcdp"
        return "approx" if self.total.delta > 0 else "pure"

    @property
    def ledger(self) -> tuple[PrivacyRecord, ...]:
        return tuple(self._ledger)

    def _compose(self, recs: list[PrivacyRecord]) -> Budget:
        if self.notion == "approx":
            # the float samplers' delta is taken out of the total when the ideal steps still
            # fit (a mechanism that planned for it keeps its promise exactly); otherwise it is
            # reported on top of the total rather than refused after the step ran
            within = compose(recs, notion="approx", delta=self.total.delta)
            if self._fits(within) or float_delta(recs) == 0:
                return within
            return compose(recs, notion="approx", delta=self.total.delta,
                           float_deltas="on_top")
        return compose(recs, notion=self.notion)

    def _fits(self, spent: Budget) -> bool:
        if isinstance(spent, ZCDP):
            return spent.rho <= self.total.rho * (1 + _REL_TOL)
        return spent.epsilon <= self.total.epsilon * (1 + _REL_TOL)

    def describe_remaining(self) -> str:
        """What is left of the total, in its notion (``"rho=0.2"``, ``"eps=0.5 at delta=1e-06"``).

        For (epsilon, delta) totals: the total epsilon minus the epsilon spent so far composes
        to at the total delta (the next call's cost composes with the ledger, so it may use a
        little more or less than this difference)."""
        spent = self.spent
        if isinstance(self.total, ZCDP):
            used = spent.rho if spent is not None else 0.0
            return f"rho={max(self.total.rho - used, 0.0):.6g}"
        used = spent.epsilon if spent is not None else 0.0
        left = f"eps={max(self.total.epsilon - used, 0.0):.6g}"
        return left + (f" at delta={self.total.delta:.3g}" if self.notion == "approx" else "")

    def check(self, record: PrivacyRecord) -> Budget:
        """Raise :class:`BudgetError` (naming spent, remaining and asked) unless ``record``
        fits into what is left; change nothing.  Returns the composition with ``record``."""
        try:
            spent = self._compose(self._ledger + [record])
        except BudgetError as err:
            if self.notion == "pure":
                # a pure-DP total cannot pay for Gaussian noise at all: say what it can run
                advice = (
                    "A pure-DP session (total epsilon only) runs only pure-DP mechanisms: the "
                    "MWU with ScalarPrivacy, the covering solvers, the exponential mechanism. "
                    "Mechanisms with Gaussian noise (ConstraintPrivacy, perturbation, "
                    "ObjectivePrivacy, the enclosing ball, least squares, ...) need a total "
                    "with delta: PrivacyAccountant(ApproxDP(epsilon, delta)) or ZCDP(rho).")
            else:
                need = "rho= (zCDP) or a pure epsilon=" if self.notion == "zcdp" else \
                    "epsilon= and delta="
                advice = f"State the call's budget as {need}."
            raise BudgetError(
                f"{record.mechanism} asks for {_fmt_budget(record.budget)}, which the "
                f"accountant (total {_fmt_budget(self.total)}) cannot compose: {err} "
                f"{advice}") from None
        if not self._fits(spent):
            done = self.spent
            raise BudgetError(
                f"{record.mechanism} asks for {_fmt_budget(record.budget)}, which would exceed "
                f"the total budget {_fmt_budget(self.total)}: the accountant has spent "
                f"{_fmt_budget(done) if done is not None else 'nothing'} "
                f"({self.describe_remaining()} remaining); the composition would be "
                f"{_fmt_budget(spent)}.  Nothing was run.")
        return spent

    def spend(self, record: PrivacyRecord, *, check: bool = True,
              reserved: PrivacyRecord | None = None) -> PrivacyRecord:
        """Add ``record`` to the ledger, or raise :class:`BudgetError` if it would overspend.

        ``check=False`` records without the check: for a step that already ran (its budget was
        checked before it read any data), so that the ledger never misses what was spent.

        ``reserved`` is the record that step was checked with before it ran (its stated
        budget) when ``record`` is what it proved afterwards (the same budget with a tighter
        zCDP bound): the accountant charges the composition it checked (module doc) and keeps
        ``record`` in the ledger unless ``record`` composes above ``reserved`` (then the
        stated budget).  Returns the record kept."""
        if check:
            self.check(record)
        if reserved is not None:
            charged = self._compose(self._ledger + [reserved])
            if _larger(self._compose(self._ledger + [record]), charged) != charged:
                record = PrivacyRecord(record.mechanism, record.budget, record.reference,
                                       zcdp=reserved.zcdp, params=record.params,
                                       count=record.count)
            self._charged = charged if self._charged is None else _larger(self._charged,
                                                                          charged)
        self._ledger.append(record)
        return record

    @property
    def spent(self) -> Budget | None:
        """The guarantee of everything spent so far, in the total's notion (None if nothing
        was spent): the ledger's composition, or the larger composition a reserved check
        charged (module doc)."""
        if not self._ledger:
            return None
        ledger = self._compose(self._ledger)
        return ledger if self._charged is None else _larger(ledger, self._charged)

    def report(self, *, theorem: str | None = None, neighbouring: str | None = None,
               guarantee: str = "dp", details: Mapping[str, Any] | None = None
               ) -> PrivacyReport:
        """The :class:`PrivacyReport` of what was spent, in the total's notion.

        Without arguments (a user's session accountant): ``print(acct.report())`` shows the
        ledger, one line per call, and the composed guarantee (:func:`compose`: zCDP
        composition of the calls' rho where every call has one, basic composition otherwise,
        whichever is tighter); ``guarantee`` is not ``"dp"`` when some call's was not.
        """
        if theorem is None:
            theorem = ("composition of the ledger: zCDP (Bun & Steinke 2016, Lemma 2.3) + CKS "
                       "2020 Cor. 13, basic (Dwork & Roth 2014, Thm 3.16), Gaussian DP (Dong, "
                       "Roth & Su 2022, Cor. 3.3); the tightest; at least what the refusal "
                       "rule charged each call before it ran (its stated budget composed with "
                       "the ledger)")
        if neighbouring is None:
            neighbouring = "each call's own (see its report)"
        kinds = {r.params.get("guarantee", "dp") for r in self._ledger}
        if guarantee == "dp" and kinds - {"dp"}:
            guarantee = "/".join(sorted(kinds - {"dp"}))
        spent = self.spent
        eps = delta = rho = None
        if isinstance(spent, ZCDP):
            rho = spent.rho
        elif spent is not None:
            eps = spent.epsilon
            delta = getattr(spent, "delta", 0.0)
            if all(r.zcdp is not None for r in self._ledger):
                rho = sum(r.count * r.zcdp.rho for r in self._ledger)
        details = dict(details or {})
        if spent is not None and spent != self._compose(self._ledger):
            # the charge (module doc) is above what the ledger composes to: both are valid
            details["ledger_composition"] = self._compose(self._ledger)
        fd = float_delta(self._ledger)
        if fd > 0:
            # the floating-point samplers' delta, part of ``delta`` for an (epsilon, delta)
            # total; on top of a pure or zCDP total (which cannot express it)
            details["float_delta"] = fd
            if self.notion == "pure" and delta is not None:
                delta = min(1.0, delta + fd)
        if delta is not None and delta >= 1.0:
            guarantee = "vacuous (delta = 1: the float samplers' bound at this per-step epsilon)"
        return PrivacyReport(guarantee=guarantee, epsilon=eps, delta=delta, rho=rho,
                             neighbouring=neighbouring, theorem=theorem,
                             records=self.ledger, details=details)
