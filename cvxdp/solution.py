"""Result objects returned by every private solve.

:class:`PrivateSolution` is what ``problem.solve_private(...)`` returns for every path (general
cone programs and the structured builders).  Structured paths subclass it to add their answer
(``.ball``, ``.ellipsoid``, ``.coef``, ...).  :class:`ValidationReport` compares the private answer
with the exact (non-private) reference solve on the same data; it is *not* private and exists for
the analyst who owns the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from cvxdp.privacy.accountant import PrivacyReport

__all__ = ["PrivateSolution", "ValidationReport"]


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
        Objective value of the private answer (computed from released quantities only).
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
    """

    status: str
    value: float | None = None
    privacy: PrivacyReport | None = None
    validation: ValidationReport | None = None
    iterations: int | None = None
    solve_time: float = 0.0
    primal: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        cls = type(self).__name__
        lines = [f"{cls}(status={self.status!r}, value={_f(self.value)}, "
                 f"iterations={self.iterations}, solve_time={self.solve_time:.3g}s)"]
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
