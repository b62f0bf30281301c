"""The certificate and status of a row-level release (post-processing: the mechanism's public
bound, the public constraints at the released point and released counts only).

The certificate bounds the excess risk on the rows clipped into the public domain
(docs/learning.md, 'What the certificate is about'); the status is
:func:`cvxdp.status.status_of`'s, on that certificate or -- when a released noisy count of
clipped rows shows clipping with probability ``>= 1 - beta`` -- on one with no bound for the
user's rows; the reason adds the fix the model's structure suggests.

References
----------
See :mod:`cvxdp.learning.objective_perturbation` (Kifer, Smith & Thakurta 2012, Thm 2) and
:func:`cvxdp.privacy.clipping.noisy_count` (the Laplace / Gaussian count).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from cvxdp.learning.detect import RowModel
from cvxdp.solution import Certificate
from cvxdp.status import status_of

__all__ = ["row_status", "clip_scope", "count_threshold", "bound_fix"]


def row_status(model: RowModel, bound: float, beta: float, accuracy: float | None,
            info: dict[str, Any]) -> tuple[Certificate | None, str, str | None]:
    """The certificate of the proven excess-risk bound and the status from it
    (:func:`status_of`): ``(certificate, status, reason)``.

    The certificate's gap is the mechanism's bound (probability ``>= 1 - beta``), its
    relative gap that bound over ``max(1, |OPT|) >= 1``; the violation is the public
    constraints' measured at the released point (public data and the release only).  When no
    bound is proven (W = inf) the certificate still carries the violation (surely) and an
    infinite gap, and says why in ``how``.
    """
    viol = max((float(np.max(c.violation())) for c in model.constraints), default=0.0)
    if math.isfinite(bound):
        probability, how = 1.0 - beta, (
            f"the {info['mechanism']} mechanism's excess-risk bound (docs/learning.md "
            f"'Bounds and statuses') over max(1, |OPT|) >= 1, {clip_scope(model)}")
    else:
        probability, how = 1.0, (
            "no excess-risk bound: the public constraints do not bound w (W = inf) and no "
            "public bound on the minimiser applies; " + bound_fix(model))
    cert = Certificate.from_bounds(
        objective_upper=math.inf, optimum_lower=-math.inf, gap_bound=bound,
        violation_bound=viol, equality_violation_bound=None, probability=probability, how=how)
    info["guarantee"] = str(cert)
    noisy, t = info.get("clipped_rows_noisy"), info.get("clipped_rows_threshold")
    if noisy is not None and noisy > t:
        # post-processing of the noisy count: rows were clipped with probability >= 1 - beta,
        # so the bound, proven for the clipped rows, is no promise about the user's rows
        status, _ = status_of(Certificate.from_bounds(
            objective_upper=math.inf, optimum_lower=-math.inf, violation_bound=viol,
            equality_violation_bound=None, probability=1.0, how="clipped rows"), accuracy)
        return cert, status, (
            f"the noisy count of rows outside the public domain is {noisy:.0f} (> {t:.3g}, its "
            f"noise's one-sided bound at beta={beta:g}: rows were clipped with probability >= "
            f"{1 - beta:g}); the certified gap {bound:.3g} holds for the clipped rows, not "
            f"for yours: raise row_bound (and label_bound) to cover your rows")
    status, reason = status_of(cert, accuracy)
    if reason is None:
        return cert, status, f"certified {clip_scope(model)}"
    if not math.isfinite(bound):
        reason = f"{reason}. For a proven bound: {bound_fix(model)}"
    if all(p.kind == "square" for p in model.loss.pieces):
        reason = (f"{reason}. For least squares, noisy sufficient statistics are usually far "
                  "more accurate: cvxdp.least_squares(X, y, row_bound=...) or "
                  "cvxdp.estimators.PrivateLinearRegression (docs/learning.md, 'Least "
                  "squares')")
    return cert, status, reason


def clip_scope(model: RowModel) -> str:
    """What a row-level certificate is about: the rows clipped into the public domain."""
    spec = model.spec
    dom = f"||x_i|| <= row_bound={spec.row_bound:g}"
    if spec.y is not None:
        dom += f", |y_i| <= label_bound={spec.label_bound:g}"
    return (f"for the rows clipped into the public domain ({dom}; rows outside it are clipped, "
            "not refused, and count_clipped=True releases a noisy count of them)")


def count_threshold(params: dict[str, Any], beta: float) -> float:
    """``t`` with ``P[noise > t] = beta`` for the count's noise (public): Laplace of scale
    ``s``: ``s ln(1 / (2 beta))``; Gaussian of scale ``sigma``: ``sigma z_{1-beta}``.  A
    noisy count above ``t`` has a true count >= 1 except with probability ``<= beta``."""
    if "scale" in params:
        return float(params["scale"]) * math.log(1.0 / (2.0 * beta))
    return float(params["sigma"]) * -float(special.ndtri(beta))


def bound_fix(model: RowModel) -> str:
    """What gives the model a proven excess-risk bound (public structure only)."""
    if model.v is not None and model.mu < model.mu_w:
        return (f"the intercept {model.v.name()!r} is not regularised: regularise it too "
                f"(+ lam * cp.square({model.v.name()})) or bound it (cp.abs("
                f"{model.v.name()}) <= B, a public B), or add a norm-ball or box constraint on "
                "w and the intercept")
    return "add a norm-ball or box constraint on w (or a ridge lam * cp.sum_squares(w))"
