"""Result objects returned by every private solve.

:class:`PrivateSolution` is what ``problem.solve_private(...)`` returns for every path (general
cone programs and the structured builders).  Structured paths subclass it to add their answer
(``.ball``, ``.ellipsoid``, ``.coef``, ...).  :class:`ValidationReport` compares the private answer
with the exact (non-private) reference solve on the same data; it is *not* private and exists for
the analyst who owns the data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from cvxdp.privacy.accountant import PrivacyReport, reduce_frozen

__all__ = ["PrivateSolution", "ValidationReport", "Certificate", "relative_scale"]


def relative_scale(lower: float, upper: float) -> float:
    """The relative gap's denominator for an objective known to lie in ``[lower, upper]``:
    ``max(1, m)``, ``m`` the smallest ``|v|`` on the interval (0 when it holds 0)."""
    smallest = 0.0 if lower <= 0.0 <= upper else min(abs(lower), abs(upper))
    return max(1.0, smallest)


@dataclass(frozen=True)
class Certificate:
    """What a private answer is proven to be, computed from released quantities and public
    data only (post-processing: no budget), valid on the mechanism's noise event.

    Every field is in the canonical program's units and in the objective's minimised sense
    (``sign * user objective``; for a ``Maximize`` model, ``-objective_upper`` is a lower bound
    on the true objective at the released point).

    Attributes
    ----------
    objective_upper : float
        Upper bound on the TRUE (minimised) objective at the released point (``inf``: none).
    optimum_lower : float
        Lower bound on the TRUE optimum (``-inf``: none).
    gap_bound : float
        Bound on the sub-optimality ``f(x) - OPT`` (``inf``: none): the smaller of
        ``objective_upper - optimum_lower`` and a theorem's direct bound where the construction
        has one (objective perturbation's, the learning path's excess risk).
    relative_gap_bound : float
        ``gap_bound / max(1, |OPT|_lower)`` with ``|OPT|_lower`` the smallest ``|v|`` over
        ``v`` in ``[optimum_lower, objective_upper]`` (0 when the interval holds 0): a bound on
        ``(f(x) - OPT) / max(1, |OPT|)``.
    violation_bound : float
        Bound on the largest violation of the TRUE constraints at the released point
        (inequality, cone and equality rows).
    equality_violation_bound : float or None
        The same bound over the equality rows with private data only (None: there are none).
    probability : float
        Probability (over the mechanism's noise) with which all bounds hold together: ``1 -
        beta``, or 1 for bounded noise.
    how : str
        One line naming the bound's construction and where its proof is written.
    excluded_rows : int
        How many constraints ``violation_bound`` may leave out (0: it covers every row).  Under
        add/remove-one-row privacy (``ConstraintSetPrivacy``) no private answer can promise every
        row -- a row present in one neighbour and absent in the other would be revealed -- so
        the covering theorem bounds all rows but fewer than ``s`` (Song, Xue & Zhang 2025,
        Lemma B.5).
    """

    objective_upper: float
    optimum_lower: float
    gap_bound: float
    relative_gap_bound: float
    violation_bound: float
    equality_violation_bound: float | None
    probability: float
    how: str
    excluded_rows: int = 0

    @classmethod
    def from_bounds(cls, *, objective_upper: float, optimum_lower: float,
                    violation_bound: float, equality_violation_bound: float | None,
                    probability: float, how: str, gap_bound: float | None = None,
                    excluded_rows: int = 0) -> Certificate:
        """Build a certificate from its two objective bounds (the gaps are derived); a
        theorem's direct bound on the sub-optimality (``gap_bound``) is used when smaller."""
        up, lo = float(objective_upper), float(optimum_lower)
        gap = max(up - lo, 0.0) if math.isfinite(up) and math.isfinite(lo) else math.inf
        if gap_bound is not None:
            gap = min(gap, float(gap_bound))
        rel = gap / relative_scale(lo, up) if math.isfinite(gap) else math.inf
        return cls(objective_upper=up, optimum_lower=lo, gap_bound=gap,
                   relative_gap_bound=rel, violation_bound=float(violation_bound),
                   equality_violation_bound=(None if equality_violation_bound is None
                                             else float(equality_violation_bound)),
                   probability=float(probability), how=how, excluded_rows=int(excluded_rows))

    def within(self, lower: float, upper: float, why: str) -> Certificate:
        """This certificate narrowed to a public range ``[lower, upper]`` of the (minimised)
        objective over its whole domain: ``OPT >= lower`` and ``f(x) <= upper`` hold for every
        data set, so they hold for the true one and cost nothing.  ``self`` when neither bound
        is tighter; otherwise ``why`` is added to :attr:`how`."""
        up, lo = min(self.objective_upper, upper), max(self.optimum_lower, lower)
        if up == self.objective_upper and lo == self.optimum_lower:
            return self
        return Certificate.from_bounds(
            objective_upper=up, optimum_lower=lo, violation_bound=self.violation_bound,
            equality_violation_bound=self.equality_violation_bound,
            probability=self.probability, how=f"{self.how}; {why}", gap_bound=self.gap_bound,
            excluded_rows=self.excluded_rows)

    def meets(self, accuracy: float) -> bool:
        """True when the certified relative gap and violation are both ``<= accuracy``."""
        return self.relative_gap_bound <= accuracy and self.violation_bound <= accuracy

    def __str__(self) -> str:
        rows = (f" on all but {self.excluded_rows} constraints" if self.excluded_rows else "")
        return (f"relative gap <= {self.relative_gap_bound:.3g} (gap <= {self.gap_bound:.3g}), "
                f"violation <= {self.violation_bound:.3g}{rows}, with probability >= "
                f"{self.probability:g} ({self.how})")


@dataclass(frozen=True)
class ValidationReport:
    """Comparison of a private answer with the exact reference (NOT private: for validation).

    Attributes
    ----------
    reference_value : float or None
        Optimal value of the exact solve.
    objective_gap : float or None
        ``private objective on the true data - reference_value`` (signed, in the user's sense:
        positive means worse for a minimisation).
    max_violation, mean_violation : float or None
        Largest / mean constraint violation of the private answer on the true data.
    violated : int or None
        Number of constraints violated by more than ``tolerance``.
    tolerance : float
        Tolerance used for ``violated``.
    reference_time : float or None
        Wall time of the exact solve, seconds.
    reference_solver : str or None
    metrics : Mapping
        Path-specific numbers (``radius_ratio``, ``uncovered``, ``volume_ratio``, ...); also
        readable as attributes, e.g. ``validation.radius_ratio``.
    """

    reference_value: float | None = None
    objective_gap: float | None = None
    max_violation: float | None = None
    mean_violation: float | None = None
    violated: int | None = None
    tolerance: float = 1e-6
    reference_time: float | None = None
    reference_solver: str | None = None
    metrics: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # the read-only metrics travel as a dict (pickle, deepcopy) and are wrapped again
        return reduce_frozen(self)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: expose metrics as attributes.
        metrics = object.__getattribute__(self, "metrics")
        if name in metrics:
            return metrics[name]
        raise AttributeError(f"ValidationReport has no field or metric {name!r}")

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in (
            "reference_value", "objective_gap", "max_violation", "mean_violation", "violated",
            "tolerance", "reference_time", "reference_solver")}
        out.update(self.metrics)
        return out


@dataclass
class PrivateSolution:
    """The answer of a private solve.

    Attributes
    ----------
    status : str
        A CVXPY status string, and a promise: ``"optimal_inaccurate"`` only when the cited
        theorem's accuracy holds for the released answer (a private answer is an approximation
        by design); ``"user_limit"`` when the answer is released but outside that regime (e.g. a
        feasibility-only answer whose objective was not optimised, or a sample size below the
        algorithm's requirement), with ``info["status_reason"]`` saying why; ``"infeasible"``
        when the public part of the model is infeasible (decided by an exact solve of public
        data before any budget is spent; nothing is spent).
    value : float or None
        Objective value of the private answer (computed from released quantities only).  Where
        it is a noisy release of its own, ``info["value_error_bound"]`` bounds its distance
        to the objective at the released point (probability ``info["value_error_probability"]``).
    privacy : PrivacyReport
        The guarantee and the accountant's ledger.
    validation : ValidationReport or None
        Set when ``reference=True`` was asked.
    iterations : int or None
    solve_time : float
        Wall time of the private path, seconds.  Running time is not covered by the privacy
        guarantee (it can depend on the private data, e.g. through iteration counts or index
        work); do not publish it next to a private answer if timing is a channel you care about.
    primal : dict
        Released values of the user's variables, by variable name (also written to
        ``variable.value``).
    info : dict
        Anything else worth reporting (accuracy guaranteed by the theorem, method name, ...).
    certificate : Certificate or None
        Bounds on the sub-optimality and the violation of the TRUE constraints at the released
        point, from released quantities only (:class:`Certificate`); the status follows from
        it (:func:`cvxdp.status.status_of`).
    status_reason : str or None
        Why the status is not a success (quoting the certified numbers), or None.
    """

    status: str
    value: float | None = None
    privacy: PrivacyReport | None = None
    validation: ValidationReport | None = None
    iterations: int | None = None
    solve_time: float = 0.0
    primal: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    certificate: Certificate | None = None
    status_reason: str | None = None

    def __post_init__(self) -> None:
        # one reason, in both places users look: the field and info["status_reason"]
        self.set_status(self.status, self.status_reason or self.info.get("status_reason"))

    def set_status(self, status: str, reason: str | None) -> None:
        """Set the status and its reason together; ``info["status_reason"]`` follows (present
        only when there is a reason)."""
        self.status, self.status_reason = status, reason
        if reason is None:
            self.info.pop("status_reason", None)
        else:
            self.info["status_reason"] = reason

    def __repr__(self) -> str:
        cls = type(self).__name__
        lines = [f"{cls}(status={self.status!r}, value={_f(self.value)}, "
                 f"iterations={self.iterations}, solve_time={self.solve_time:.3g}s)"]
        if self.info.get("value_error_bound") is not None:  # value released by its own noise
            lines.append(f"  value_error_bound: |value - objective at the released point| <= "
                         f"{self.info['value_error_bound']:.3g} with probability >= "
                         f"{self.info.get('value_error_probability', math.nan):g}")
        if self.certificate is not None:
            lines.append(f"  certificate: {self.certificate}")
        if self.status_reason is not None:
            lines.append(f"  status_reason: {self.status_reason}")
        if self.privacy is not None:
            lines.append(f"  privacy: {self.privacy!r}")
        if self.validation is not None:
            vals = ", ".join(f"{k}={_f(v)}" for k, v in self.validation.as_dict().items()
                             if v is not None)
            lines.append(f"  validation: {vals}")
        return "\n".join(lines)


def _f(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return repr(v)
