"""The release of a private John ellipsoid: the solution type, :func:`finish` and :func:`validate`.

Shared by the default private algorithm (:mod:`cvxdp.geometry.john.john_private`) and the paper's
Algorithm 1 (:mod:`cvxdp.geometry.john.john_paper`); the validation (``reference=True``, NOT
private) solves the exact conic model :class:`~cvxdp.geometry.john.exact.ExactJohnEllipsoid`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from cvxdp.geometry.john.ellipsoid import Ellipsoid
from cvxdp.geometry.john.exact import ExactJohnEllipsoid
from cvxdp.solution import PrivateSolution, ValidationReport

if TYPE_CHECKING:  # annotations only: the problem class imports the algorithms, not back
    from cvxdp.geometry.john.john import JohnEllipsoidProblem

__all__ = ["JohnPrivateSolution", "NO_ACCURACY_THEOREM", "finish", "validate"]


@dataclass(repr=False)
class JohnPrivateSolution(PrivateSolution):
    """A private John ellipsoid: :class:`PrivateSolution` plus ``ellipsoid``."""

    ellipsoid: Ellipsoid | None = None


NO_ACCURACY_THEOREM = (
    "no accuracy theorem covers this release: the private fixed point is ridge-regularised "
    "(Lemma S) and the utility theorem of Gu, Li, Liang, Shi, Song & Yu (2024, Thm 7.2) needs "
    "the unregularised iteration with noise sd <= xi/32; the ellipsoid is private and its "
    "measured volume ratios are in docs/john.md, but none is promised")


def finish(problem: JohnEllipsoidProblem, E: Ellipsoid, report: Any, *, weights: np.ndarray,
           iterations: int, t0: float, info: dict, reference: bool) -> JohnPrivateSolution:
    """The :class:`JohnPrivateSolution` of a released ellipsoid (validated when asked).

    The status is ``user_limit``: the ellipsoid is private, but no theorem bounds its volume
    (status is a promise; the measured ratios are in ``docs/john.md``).
    """
    info.setdefault("status_reason", NO_ACCURACY_THEOREM)
    sol = JohnPrivateSolution(status="user_limit", value=E.log_volume, privacy=report,
                              iterations=iterations, solve_time=time.perf_counter() - t0,
                              primal={"weights": weights}, info=info, ellipsoid=E)
    if reference:
        sol.validation = validate(problem, E)
    return sol


def validate(problem: JohnEllipsoidProblem, E: Ellipsoid) -> ValidationReport:
    """Compare with the exact conic solve (NOT private)."""
    t = time.perf_counter()
    ref = ExactJohnEllipsoid(problem.data)
    ref.solve(solver="CLARABEL")
    t_ref = time.perf_counter() - t
    ex = ref.ellipsoid
    ratios = E.support_ratios(problem.data)
    hmax = float(ratios.max())
    fit = E.scaled(1 / math.sqrt(hmax))  # the private shape scaled to touch P (validation only)
    return ValidationReport(
        reference_value=ex.log_volume, objective_gap=ex.log_volume - E.log_volume,
        max_violation=max(0.0, math.sqrt(hmax) - 1), mean_violation=float(
            np.mean(np.maximum(np.sqrt(ratios) - 1, 0))),
        violated=int(np.sum(ratios > 1 + 1e-6)), tolerance=1e-6, reference_time=t_ref,
        reference_solver="CLARABEL",
        metrics={"volume_ratio": E.volume_ratio(ex), "max_support_ratio": hmax,
                 "shape_volume_ratio": fit.volume_ratio(ex)})

