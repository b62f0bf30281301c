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
from cvxdp.learning.domain import variable_bound
from cvxdp.learning.objective_perturbation import coefficient_bound
from cvxdp.solution import Certificate, relative_scale
from cvxdp.status import status_of

__all__ = ["row_status", "clip_scope", "count_threshold", "bound_fix"]


def row_status(model: RowModel, bound: float, beta: float, accuracy: float | None,
            info: dict[str, Any], released: tuple[float, float] | None = None,
            public_point: bool = False) -> tuple[Certificate | None, str, str | None]:
    """The certificate of the proven excess-risk bound and the status from it
    (:func:`status_of`): ``(certificate, status, reason)``.

    The certificate's gap is the mechanism's bound (probability ``>= 1 - beta``), its
    relative gap that bound over ``max(1, |OPT|) >= 1``; the violation is the public
    constraints' measured at the released point (public data and the release only).  When no
    bound is proven (W = inf) the certificate still carries the violation (surely) and an
    infinite gap, and says why in ``how``.

    ``public_point``: the released point is ``theta = 0`` and ``bound`` its public gap bound
    (:func:`cvxdp.learning.objective_perturbation.public_zero_bound`, probability 1).

    ``released``: the released objective value at the point, in the minimised sense, and its
    error bound (probability ``>= 1 - beta``, its own noise event). With a finite bound it
    brackets the objective: ``F(theta^) <= value + err`` and ``OPT >= value - err - bound``
    on the union of the two events (``>= 1 - 2 beta``). Where that bracket keeps ``|OPT|``
    above 1, the relative gap is the bound over that smallest ``|OPT|`` instead of over 1
    (post-processing: no budget); elsewhere the certificate is the mechanism's alone.
    """
    viol = max((float(np.max(c.violation())) for c in model.constraints), default=0.0)
    if public_point:   # theta = 0: F(0) - OPT <= bound surely (public_zero_bound)
        probability, how = 1.0, (
            "the public point theta = 0: F(0) <= a public bound and OPT >= 0 (a non-negative "
            "loss and penalties), no noise event; the released value proved the mechanism's "
            "point worse")
    elif math.isfinite(bound):
        probability, how = 1.0 - beta, (
            f"the {info['mechanism']} mechanism's excess-risk bound (docs/learning.md "
            f"'Bounds and statuses') over max(1, |OPT|) >= 1, {clip_scope(model)}")
    else:
        probability, how = 1.0, (
            f"no excess-risk bound: the public constraints do not bound {model.w.name()} (W = "
            "inf) and no "
            "public bound on the minimiser applies; " + bound_fix(model))
    upper, lower = (bound, 0.0) if public_point else (math.inf, -math.inf)
    if released is not None and math.isfinite(bound) and all(map(math.isfinite, released)):
        value, err = released
        if relative_scale(value - err - bound, value + err) > 1.0:
            # only where it keeps |OPT| above 1 (else the scale is 1 either way, and the
            # certificate keeps the mechanism's event alone)
            upper, lower = value + err, value - err - bound
            probability -= beta
            how += ("; |OPT| bounded from the released objective value and its error bound "
                    "(its own noise event)")
    cert = Certificate.from_bounds(
        objective_upper=upper, optimum_lower=lower, gap_bound=bound,
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
    """What gives the model a proven excess-risk bound (public structure only), in the user's
    variable names: a loss that can be negative first (no regulariser bounds its minimiser),
    then a free intercept when it is what is left unbounded (less regularised than the
    coefficients, or beside coefficients the constraints or the regulariser bound)."""
    return _fix_text(model) + _unnamed_note(model)


def _unnamed_note(model: RowModel) -> str:
    """The hint other reasons give (cvxdp.transform.canon) for variables named ``var<id>`` by
    CVXPY, nowhere in the user's code: their shapes and ``pass name=``; empty when named."""
    unnamed = [u for u in (model.w, model.v) if u is not None and u.name() == f"var{u.id}"]
    if not unnamed:
        return ""
    names = ", ".join(u.name() for u in unnamed)
    shapes = " and ".join(str(tuple(u.shape)) for u in unnamed)
    plural = "s" * (len(unnamed) > 1)
    return (f" ({names}: CVXPY's name{plural} of the {shapes} variable{plural} without a "
            "name; pass name= to cp.Variable)")


def _fix_text(model: RowModel) -> str:
    w = model.w.name()
    if not model.loss.nonnegative():
        y = model.spec.y.name() if model.spec.y is not None else "y"
        return (f"the loss can be negative for labels in [-label_bound, label_bound] (the "
                "likelihood y p - log(1 + e^p) is unbounded below at y = -1), so no penalty "
                "bounds its minimiser: write it with labels in {-1, 1} as "
                f"cp.logistic(-cp.multiply({y}, {model.spec.X.name()} @ {w})), or add a "
                f"norm-ball or box constraint on {w}")
    if model.v is not None:
        v = model.v.name()
        # the coefficients bounded by the constraints or the regulariser (public solves, only
        # where an intercept makes the answer matter)
        if model.mu < model.mu_w or math.isfinite(variable_bound(model, model.w)) \
                or math.isfinite(coefficient_bound(model)):
            return (f"the intercept {v!r} is not regularised: regularise it too (+ lam * "
                    f"cp.square({v})) or bound it (cp.abs({v}) <= B, a public B), or add a "
                    f"norm-ball or box constraint on {w} and the intercept")
        return (f"add a norm-ball or box constraint on {w} (or a penalty lam * "
                f"cp.sum_squares({w}) or lam * cp.norm1({w})), and bound the intercept {v!r} "
                f"(cp.abs({v}) <= B, a public B) or regularise it (+ lam * cp.square({v}))")
    return (f"add a norm-ball or box constraint on {w} (or a ridge lam * cp.sum_squares({w}) or "
            f"a penalty lam * cp.norm1({w}))")
