"""Privacy records and the accountant an algorithm spends from.

A :class:`PrivacyRecord` is the immutable receipt of one mechanism run: which mechanism, the
guarantee it gives (as a budget value), the tightest zCDP bound it satisfies when one exists, the
theorem that proves it and the parameters (noise scale, sensitivity) that were used.

Composition (:func:`compose`, in :mod:`cvxdp.privacy.composition` and importable from here) is a
pure function of records; the accountant spends through it, so a call over budget raises before
any noise is drawn.

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

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from cvxdp.citations import BASIC_COMPOSITION, GDP_COMPOSITION, ZCDP_COMPOSITION, ZCDP_TO_DP
from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget, PureDP
from cvxdp.privacy.composition import REL_TOL, compose, float_delta

__all__ = ["reduce_frozen", "PrivacyRecord", "PrivacyAccountant", "compose", "PrivacyReport",
           "float_delta", "FLOAT_DELTA_SHARE"]

#: share of an (epsilon, delta) budget a mechanism keeps for its float samplers' delta when it
#: plans (converts at ``delta * (1 - FLOAT_DELTA_SHARE)``), so the composed total stays exact
FLOAT_DELTA_SHARE = 1e-3


def reduce_frozen(obj: Any) -> tuple[Any, tuple[Any, ...]]:
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
        return reduce_frozen(self)

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
        return reduce_frozen(self)

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

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(total={self.total!r}, spent={self.spent!r}, "
                f"calls={len(self._ledger)})")

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
            return spent.rho <= self.total.rho * (1 + REL_TOL)
        return spent.epsilon <= self.total.epsilon * (1 + REL_TOL)

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
            theorem = (f"composition of the ledger, the tightest of: zCDP ({ZCDP_COMPOSITION}; "
                       f"{ZCDP_TO_DP}), basic ({BASIC_COMPOSITION}), Gaussian DP "
                       f"({GDP_COMPOSITION}); at least what the refusal rule "
                       "charged each call before it ran (its stated budget composed with the "
                       "ledger)")
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
