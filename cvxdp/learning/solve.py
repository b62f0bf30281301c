"""``problem.solve_private(private=cvxdp.RowPrivacy(X, y, ...))``: private learning models.

Steps, in this order:

1. public: detect the row-level model (:mod:`cvxdp.learning.detect`), bound the parameter
   domain by exact solves of the public constraints, plan every applicable mechanism and
   predict its excess-risk bound; ``mechanism="auto"`` takes the smallest predicted bound
   (public quantities only; the predictions are in ``info["auto"]``);
2. private: clip the rows into the public domain (``||x_i|| <= row_bound``, ``|y_i| <=
   label_bound``; non-finite entries become 0), run the mechanism, and -- with a share of the
   budget (``value_share``, default 5%) -- release the loss sum at the released point with
   Laplace / Gaussian noise, so that ``problem.value`` is computed from released quantities
   only (its error bound at ``beta``, from the noise scale, in ``info["value_error_bound"]``;
   a separate release: the status is the point's); optionally (``count_clipped``) a noisy
   count of the clipped rows;
3. post-processing: the status, from :func:`cvxdp.status.status_of` on the certificate of the
   proven excess-risk bound (``optimal_inaccurate`` only when the bound, over
   ``max(1, |OPT|) >= 1``, meets ``accuracy``, default 1e-2; else ``user_limit`` with
   ``info["status_reason"]``), the write-back into the user's Variables.

References
----------
See :mod:`cvxdp.learning.objective_perturbation`, :mod:`cvxdp.learning.output_perturbation`,
:mod:`cvxdp.learning.noisy_gradient`.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import cvxpy as cp
import numpy as np
from scipy import special

from cvxdp.argument_values import check_beta, check_count, check_number
from cvxdp.errors import BudgetError, PrivacySpecError, UnsupportedProblemError
from cvxdp.learning.certificate import count_threshold, row_status
from cvxdp.learning.detect import RowModel, detect
from cvxdp.learning.domain import public_completion, theta, theta_bound, variable_bound
from cvxdp.learning.noisy_gradient import (
    DEFAULT_STEPS,
    GRADIENT_REFERENCE,
    noisy_gradient,
    plan_noisy_gradient,
)
from cvxdp.learning.objective_perturbation import (
    OBJPERT_REFERENCE,
    coefficient_bound,
    minimiser_bound,
    objective_at_zero,
    objective_perturbation,
    plan_objective_perturbation,
    public_zero_bound,
)
from cvxdp.learning.output_perturbation import (
    OUTPUT_REFERENCE,
    output_perturbation,
    plan_output_perturbation,
)
from cvxdp.learning.reference import validate_rows
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP, resolve_budget
from cvxdp.privacy.clipping import clip_rows_l2, count_share, noisy_count
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import PrivateSolution
from cvxdp.specs import RowPrivacy, check_declared
from cvxdp.status import DEFAULT_BETA
from cvxdp.structured import forget_solution, hold_private

__all__ = ["solve_rows", "explain_rows", "row_spec", "check_row_declared", "MECHANISMS",
           "VALUE_SHARE"]

MECHANISMS = ("auto", "objective", "output", "gradient")
THEOREMS = {"objective": OBJPERT_REFERENCE, "output": OUTPUT_REFERENCE,
            "gradient": GRADIENT_REFERENCE}
#: default share of the budget spent on releasing the objective value (problem.value)
VALUE_SHARE = 0.05


def row_spec(private: Any) -> RowPrivacy | None:
    """The RowPrivacy in ``private=`` (one spec or a sequence), or None."""
    items = private if isinstance(private, (list, tuple)) else [private]
    rows = [s for s in items if isinstance(s, RowPrivacy)]
    if rows and len(items) > 1:
        raise PrivacySpecError("RowPrivacy describes the whole dataset: pass it alone as "
                               "private=cvxdp.RowPrivacy(X, y, ...), not with other specs.")
    return rows[0] if rows else None


def check_row_declared(problem: cp.Problem, spec: RowPrivacy, public: Any) -> Any:
    """:func:`cvxdp.specs.check_declared` for a RowPrivacy spec, after one check of its own: a
    spec without labels whose objective uses an undeclared Parameter with one entry per row
    (the labels, most likely) is refused with ``RowPrivacy(X, y, ...)`` as the fix."""
    if spec.y is None:
        items = public if isinstance(public, (list, tuple, set, frozenset)) else [public]
        known = {p.id for p in items if isinstance(p, cp.Parameter)} | {spec.X.id}
        n = spec.X.shape[0]
        rows = [p for p in problem.objective.parameters()
                if p.id not in known and p.shape in ((n,), (n, 1))]
        if rows:
            name = rows[0].name()
            raise PrivacySpecError(
                f"RowPrivacy(X, ...) declares no labels, but the objective uses the Parameter "
                f"{name!r} of shape {rows[0].shape}, one entry per row of X: if it holds the "
                f"labels, declare them with the rows: cvxdp.RowPrivacy(X, {name}, row_bound=R, "
                f"label_bound=B) (B a public bound on |y_i|, y of shape ({n},)); a per-row "
                "vector enters the loss only as the spec's labels, even when public.")
    return check_declared(problem, [spec], public)


def explain_rows(problem: cp.Problem, spec: RowPrivacy) -> list[str]:
    """:func:`cvxdp.explain` for RowPrivacy: [] and a description, or the refusal."""
    try:
        detect(problem, spec)
    except (UnsupportedProblemError, PrivacySpecError) as err:
        return [str(err)]
    return []


def _clip(model: RowModel) -> tuple[np.ndarray, np.ndarray | None, int]:
    """Rows mapped into the public domain (non-finite -> 0, long rows scaled, labels clipped);
    the count is PRIVATE."""
    spec = model.spec
    if spec.X.value is None or (spec.y is not None and spec.y.value is None):
        raise PrivacySpecError("set X.value (and y.value) before solving privately.")
    X = np.array(spec.X.value, dtype=float)
    out = ~np.all(np.isfinite(X), axis=1)
    X[out] = 0.0
    with np.errstate(over="ignore"):
        out |= np.linalg.norm(X, axis=1) > spec.row_bound * (1.0 + 4.0 * 2.0 ** -53)
    X = clip_rows_l2(X, spec.row_bound)[0]
    y = None
    if spec.y is not None:
        y = np.array(spec.y.value, dtype=float).ravel()
        yb = ~np.isfinite(y)
        y[yb] = 0.0
        out |= yb | (np.abs(y) > spec.label_bound)
        y = np.clip(y, -spec.label_bound, spec.label_bound)
    count = int(np.count_nonzero(out))   # one per row: a count of sensitivity 1
    return X, y, count


def minimiser_ball(model: RowModel, W: float) -> tuple[RowModel, float, str | None]:
    """``(model, W, note)``: with no public bound on ``theta`` over the constraints (``W =
    inf``) but one on every exact minimiser (``W*`` of :func:`minimiser_bound`: a loss >= 0,
    public terms >= 0, ``theta = 0`` feasible, and a ridge or a norm of all of ``theta`` in
    them, with ``F(0) <= n sup_y l(0, y) + R(0)``), the
    mechanisms run on the public ball ``||theta|| <= W*``. It holds every exact minimiser, so
    the minimum and the minimisers the certificate speaks of are the user's; the ball gives the
    mechanisms the bounded domain their privacy and their bounds need (CVXPY's ridge and lasso
    examples have no constraint at all). Public structure and bounds only (docs/learning.md,
    'The minimiser's ball')."""
    if math.isfinite(W):
        return model, W, None
    W_star = minimiser_bound(model)
    variables = theta(model)
    if math.isfinite(W_star):
        if len(variables) == 1:   # the form the domain and the Newton path read
            ball = cp.norm(variables[0], 2) <= W_star
        else:
            ball = cp.norm(cp.hstack([cp.vec(v, order="F") for v in variables]), 2) <= W_star
        what = f"||theta|| <= {W_star:.6g}"
    else:
        # an intercept the constraints bound, beside coefficients the regulariser bounds
        W_w = coefficient_bound(model) if model.v is not None else math.inf
        V = variable_bound(model, model.v) if math.isfinite(W_w) else math.inf
        if not math.isfinite(V):
            return model, W, None
        ball, W_star = cp.norm(model.w, 2) <= W_w, math.hypot(W_w, V)
        what = f"||{model.w.name()}|| <= {W_w:.6g} (the intercept bounded by the constraints)"
    note = (f"the constraints do not bound the variables; the mechanism ran on the public "
            f"ball {what}, which holds every exact minimiser (through the regulariser R: "
            "R(theta*) <= F(0)), so the problem is unchanged")
    return replace(model, constraints=[*model.constraints, ball]), W_star, note


def _plans(model: RowModel, budget: Any, W: float, beta: float, steps: int,
           mechanism: str, accuracy: float | None) -> tuple[str, Any, dict[str, Any]]:
    planners = {"objective": lambda: plan_objective_perturbation(model, budget, W, beta=beta,
                                                                 accuracy=accuracy),
                "output": lambda: plan_output_perturbation(model, budget, W, beta=beta),
                "gradient": lambda: plan_noisy_gradient(model, budget, W, beta=beta,
                                                        steps=steps)}
    if mechanism != "auto":
        return mechanism, planners[mechanism](), {}
    plans, why = {}, {}
    for name, make in planners.items():
        try:
            plans[name] = make()
        except (UnsupportedProblemError, BudgetError) as err:
            why[name] = str(err)
    if not plans:
        raise UnsupportedProblemError("no row-level mechanism applies: " + " | ".join(
            f"{k}: {v}" for k, v in why.items()))
    order = list(plans)  # preference on ties / no finite bound: objective, output, gradient
    best = min(order, key=lambda k: (plans[k].bound, order.index(k)))
    auto = {"chosen": best, "predicted_bounds": {k: p.bound for k, p in plans.items()},
            "not_applicable": why,
            "rule": "smallest excess-risk bound predicted from public quantities"}
    return best, plans[best], auto


def _split(budget: Any, share: float) -> tuple[Any, dict[str, float]]:
    if share <= 0:
        return budget, {}
    if isinstance(budget, ZCDP):
        return ZCDP(budget.rho * (1 - share)), {"rho": budget.rho * share}
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        return ApproxDP(budget.epsilon * (1 - share), budget.delta), {
            "epsilon": budget.epsilon * share}
    return PureDP(budget.epsilon * (1 - share)), {"epsilon": budget.epsilon * share}


def solve_rows(problem: cp.Problem, spec: RowPrivacy, *, epsilon: float | None = None,
               delta: float | None = None, rho: float | None = None,
               accuracy: float | None = None, rng: Any = None, reference: bool = False,
               solver: str | None = None, mechanism: str = "auto", beta: float = DEFAULT_BETA,
               steps: int = DEFAULT_STEPS, value_share: float = VALUE_SHARE,
               count_clipped: bool | float = False, public: Any = None) -> PrivateSolution:
    """Private solve of a row-level learning model (module docstring).

    Parameters
    ----------
    problem : cvxpy.Problem
    spec : RowPrivacy
    epsilon, delta, rho : float
        The budget of the whole release.
    accuracy : float, optional
        Requested additive excess risk, in the objective's units.
    mechanism : {"auto", "objective", "output", "gradient"}
    beta : float
        Failure probability of the excess-risk bound (public; default 1e-3).
    steps : int
        Steps of ``mechanism="gradient"``.
    value_share : float
        Share of the budget for the noisy objective value (0: ``value`` is None).  The value
        is ``sense * (noisy loss sum + regulariser)`` at the released point; with probability
        ``>= 1 - beta`` it is within ``info["value_error_bound"]`` (``sens ln(1/beta) /
        eps_v`` for Laplace noise, ``sens z_{1-beta/2} / sqrt(2 rho_v)`` for Gaussian) of the
        objective at the released point on the rows mapped into the public domain.  The
        status does not depend on it (docs/learning.md, "The released value").
    count_clipped : bool or float
        Also release a noisy count of the rows mapped into the public domain.
    public : sequence of cvxpy.Parameter, optional
        The model's public Parameters; when given, every Parameter other than the spec's X
        and y must be in it (a Parameter declared neither private nor public is refused).

    Returns
    -------
    PrivateSolution
    """
    t0 = time.perf_counter()
    if mechanism not in MECHANISMS:
        raise UnsupportedProblemError(f"mechanism must be one of {MECHANISMS}, got "
                                      f"{mechanism!r}.")
    beta = check_beta(beta)
    check_number("value_share", value_share, "a number in [0, 0.5) (the share of the budget "
                 "spent on the released objective value)", lambda v: 0 <= v < 0.5,
                 error=BudgetError)
    steps = check_count("steps", steps)
    total = resolve_budget(epsilon=epsilon, delta=delta, rho=rho)
    c_share = count_share(count_clipped, at_most=0.5)
    if public is not None:
        _check_public(problem, spec, public)
    model = detect(problem, spec)
    model, W, ball_note = minimiser_ball(model, theta_bound(model))
    value_reason = None
    if value_share > 0 and not math.isfinite(
            model.loss.value_bound(model.feature_bound * W, model.label_bound)):
        value_share, value_reason = 0.0, (
            "value not released: the loss is unbounded on the public domain (no norm-ball or "
            f"box constraint on {model.w.name()}), so its sum has no sensitivity; nothing was "
            "spent on it")
    mech_budget, value_budget = _split(total, value_share + c_share)
    # value and count shares divide the split-off part in proportion
    name, plan, auto = _plans(model, mech_budget, W, beta, steps, mechanism, accuracy)
    forget_solution(problem)
    gen = as_generator(rng)
    X, y, clipped = _clip(model)   # ---- private from here on ----
    run = {"objective": objective_perturbation, "output": output_perturbation,
           "gradient": noisy_gradient}[name]
    theta_hat, record, minfo = run(model, plan, mech_budget, X, y, gen, solver=solver)
    records = [record]
    info: dict[str, Any] = {"mechanism": name, "model": model.describe(),
                            "domain_bound_W": W, "beta": beta, **minfo}
    if ball_note:
        info["domain_ball"] = ball_note
    if auto:
        info["auto"] = auto
    # ---- post-processing (released quantities and public data only) ----
    validation = validate_rows(problem, model, theta_hat, solver) if reference else None
    primal = public_completion(model, problem, theta_hat, solver)
    value = None
    if value_budget and value_share > 0:
        part = {k: v * value_share / (value_share + c_share) for k, v in value_budget.items()}
        value, v_rec, v_err = _release_value(model, theta_hat, X, y, W, gen, part, beta)
        if v_rec is not None:
            records.append(v_rec)
            # a separate release; the certificate uses it to bound |OPT| (row_status)
            info["value_error_bound"] = v_err
            info["value_error_probability"] = 1.0 - beta
    if value_budget and c_share:
        part = {k: v * c_share / (value_share + c_share) for k, v in value_budget.items()}
        noisy, c_rec = noisy_count(clipped, rng=gen, what="rows mapped into the public domain",
                                   **part)
        records.append(c_rec)
        info["clipped_rows_noisy"] = noisy
        info["clipped_rows_threshold"] = count_threshold(c_rec.params, beta)
    bound = plan.bound
    released = (None if value is None or info.get("value_error_bound") is None
                else (model.sense * value, float(info["value_error_bound"])))
    zero = _worse_than_zero(model, released) if mechanism == "auto" else None
    if zero is not None:
        # the released value proves the mechanism's point worse than the public point 0
        # (F(theta^) >= value - err > F(0), probability >= 1 - beta): release 0, whose gap is
        # bounded publicly (post-processing of released and public quantities)
        theta_hat = np.zeros_like(theta_hat)
        validation = validate_rows(problem, model, theta_hat, solver) if reference else None
        primal = public_completion(model, problem, theta_hat, solver)
        info["mechanism_bound"], info["mechanism_value"] = bound, value
        info["point_note"] = (
            f"the public point theta = 0 is released: the released objective value at the "
            f"{name} mechanism's point, {model.sense * value:.4g} +- {released[1]:.3g} "
            f"(probability >= {1 - beta:g}), exceeds the public bound {zero:.4g} on the "
            "objective at 0, whose gap F(0) - OPT <= that bound (OPT >= 0); the value "
            "released is the other point's, so none is given")
        bound, value, released = zero, None, None
    info["excess_risk_bound"] = bound
    cert, status, reason = row_status(model, bound, beta, accuracy, info, released,
                                      public_point=zero is not None)
    if reason is not None:
        info["status_reason"] = reason
    if value_reason is not None:
        info["value_reason"] = value_reason
    acct = PrivacyAccountant(total)
    for r in records:
        acct.spend(r)
    report = acct.report(theorem=THEOREMS[name], neighbouring=spec.describe(),
                         details={"mechanism": name})
    sol = PrivateSolution(status=status, value=value, privacy=report, validation=validation,
                          solve_time=time.perf_counter() - t0, primal=primal, info=info,
                          certificate=cert, status_reason=reason)
    hold_private(problem, sol)
    return sol


def _worse_than_zero(model: RowModel, released: tuple[float, float] | None) -> float | None:
    """The public bound on ``F(0)`` when the released value proves the released point worse
    than ``theta = 0`` (``value - err`` above it), else None.  The bound is
    :func:`~cvxdp.learning.objective_perturbation.public_zero_bound` (``F(0)`` bounded
    publicly, ``OPT >= 0``, 0 feasible: the public solve runs only when the value is above the
    bound)."""
    if released is None or not all(map(math.isfinite, released)):
        return None
    value, err = released
    if not value - err > objective_at_zero(model):
        return None
    bound = public_zero_bound(model)
    return bound if value - err > bound else None


def _check_public(problem: cp.Problem, spec: RowPrivacy, public: Any) -> None:
    declared = {p.id for p in (public if isinstance(public, (list, tuple)) else [public])}
    declared |= {p.id for p in spec.params}
    loose = [p for p in problem.parameters() if p.id not in declared]
    if loose:
        names = ", ".join(repr(p.name()) for p in loose)
        raise PrivacySpecError(
            f"Parameter(s) {names} are declared neither private (RowPrivacy) nor public; add "
            "them to public=[...] if their values are public, or to the spec.")


def _release_value(model: RowModel, theta_hat: np.ndarray, X: np.ndarray,
                   y: np.ndarray | None, W: float, gen: np.random.Generator,
                   part: dict[str, float], beta: float = DEFAULT_BETA
                   ) -> tuple[float | None, Any, float | None]:
    """``sense * (noisy sum_i l(p_i, y_i) + R(theta^))`` at the released point (the noisy sum
    clamped to its public range), its privacy record, and a bound on its error that holds
    with probability ``>= 1 - beta``.  One row's loss is bounded at the released point's reach
    ``|p_i| <= R~ ||theta^||`` (at most ``R~ W``): the sensitivity is that bound.

    The error is the noise's alone: ``sens |Z|`` with ``Z`` the noise on the scaled sum
    (Laplace of scale ``1/epsilon``: ``P[|Z| > t] = e^{-t epsilon}``, so ``t = ln(1/beta) /
    epsilon``; Gaussian ``N(0, 1/(2 rho))``: ``t = sigma z_{1-beta/2}``), and clamping to a
    public range that holds the exact sum only shortens it.  Public: the noise scale, the
    sensitivity and beta.  It bounds the distance to the objective of the rows mapped into the
    public domain at the released point (the true objective when no row is clipped).
    """
    # |p_i| <= R~ ||theta^|| at the released point (public), at most R~ W: a row's loss there
    # is bounded by its value bound at that reach (the sensitivity is a function of the
    # release and public data; the value is released after it, adaptive composition)
    reach = model.feature_bound * min(W, float(np.linalg.norm(theta_hat)))
    V = model.loss.value_bound(reach, model.label_bound)
    if not math.isfinite(V) or V <= 0:
        return None, None, None
    nonneg = model.loss.nonnegative()
    # one row's loss lies in [0, V] (non-negative losses) or [-V, V]: it moves by V, or 2V
    # when a signed loss is replaced
    sens = V if nonneg or model.spec.neighbours != "replace" else 2.0 * V
    w = theta_hat[:model.w.size]
    p = X @ w + (model.sign_v * theta_hat[-1] if model.v is not None else 0.0)
    vals = model.loss.values(p, np.zeros_like(p) if y is None else y)
    # the released point is public but lies in F only up to a solver's tolerance: each row's
    # value is clamped to its public range, so the sensitivity holds at any point
    s = float(np.sum(np.clip(vals, 0.0 if nonneg else -V, V)))
    noisy, rec = noisy_count(s / sens, rng=gen, what="the loss sum at the released point, "
                             f"scaled by its sensitivity {sens:.4g}", **part)
    # post-processing: the loss sum lies in [0 or -n V, n V] (public), so the noisy one is
    # clamped there
    lo = 0.0 if nonneg else -model.n * V
    total = min(max(noisy * sens, lo), model.n * V)
    reg = model.regulariser.value   # at theta^ and its public completion
    if "scale" in rec.params:   # Laplace
        tail = math.log(1.0 / beta) * float(rec.params["scale"])
    else:                       # Gaussian
        tail = float(rec.params["sigma"]) * -float(special.ndtri(beta / 2.0))
    return model.sense * (total + float(reg)), rec, sens * tail
