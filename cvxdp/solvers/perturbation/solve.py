"""Perturbation's release and exact solve: noise, noisy canonical data, the counterpart.

The noisy data are CVXPY's own map applied to the released parameter values
(:func:`cvxdp.transform.parametric.program_data`); the counterpart is
:func:`cvxdp.solvers.robust_counterpart.counterpart`.  Everything after the draw is
post-processing of the release (Dwork & Roth 2014, Prop. 2.1).

References
----------
Dwork & Roth, "The algorithmic foundations of differential privacy", 2014, Prop. 2.1;
Ben-Tal, El Ghaoui & Nemirovski, Robust Optimization, 2009, Ch. 1-2.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import cvxpy.settings as cp_status
import numpy as np
import scipy.sparse as sp

from cvxdp.solvers.bound_propagation import proven_empty
from cvxdp.solvers.perturbation.counterpart import counterpart
from cvxdp.solvers.perturbation.entries import (
    PrivateEntries,
    release_parameters,
    within_domains,
)
from cvxdp.solvers.perturbation.noise import NoisePlan, _bounds, draw_noise
from cvxdp.solvers.perturbation.plan import RobustPlan, unit_norms
from cvxdp.transform.exact import TIGHT_GAP, TIGHT_TOLERANCES, ExactSolution, solve_exact
from cvxdp.transform.parametric import program_data
from cvxdp.transform.reference import POINT_TOLERANCE, proven_point
from cvxdp.transform.scp import SymmetricConeProgram

__all__ = ["noisy_program", "noisy_objective", "solve_robust_counterpart", "tightened_point",
           "FALLBACK_BETAS"]

#: weaker failure levels tried, as post-processing of the same Gaussian release, when the
#: counterpart at the requested beta is empty (the status then says which level holds)
FALLBACK_BETAS = (0.01, 0.1, 0.5)


def noisy_program(scp: SymmetricConeProgram, noisy: dict[int, np.ndarray]
                  ) -> tuple[sp.csc_matrix, np.ndarray]:
    """``(A~, b~)``: CVXPY's data at the noisy values for the private ids, values elsewhere."""
    _, _, A, b = program_data(scp, noisy)
    return A, b


def noisy_objective(scp: SymmetricConeProgram, noisy: dict[int, np.ndarray]
                    ) -> tuple[np.ndarray, float]:
    """``(c~, offset~)``: the objective with the released values of the private parameters
    (public values for the rest)."""
    c, offset, _, _ = program_data(scp, noisy)
    return c, offset


#: iterations of SCS when Clarabel fails on a counterpart (an engineering limit on time: its
#: point is released only when proven, :func:`cvxdp.transform.reference.proven_point`).  On the
#: gallery and the held-out models (105 models x 3 budgets) this fallback was reached on one
#: model only (a FIR filter whose fallback levels' counterparts are nearly empty), where SCS
#: ran to its cap (then 100,000 iterations, 0.7-0.9 s each) without a proven point every time.
FALLBACK_SCS_ITERATIONS = 10_000

#: a tightened counterpart that bound propagation proves has no point within this much of its
#: rows (relative to ``1 + max |b|``; 100 times
#: :data:`cvxdp.transform.reference.POINT_TOLERANCE`) is not solved: no answer of an exact
#: solver within its tolerance has a point there to release
EMPTY_SLACK = 100 * POINT_TOLERANCE


def _solve_tight(prog: SymmetricConeProgram, solver: str | None,
                 point_only: bool = False) -> Any:
    """Exact solve; feasibility for the true data holds up to the solver's tolerance, so ask
    Clarabel for 1e-10 (default 1e-8), falling back to its defaults (and then SCS).

    ``point_only``: only the point is used (the tightened counterpart: its certificate
    evaluates the rows and the objective at the point, never the solver's optimality), so an
    ``almost solved`` point that meets every row to
    :data:`cvxdp.transform.reference.POINT_TOLERANCE`
    (:func:`proven_point`) is kept instead of solving again at the default tolerance (two
    solves of a 1,000-row program were 1.5 s of a 3.9 s private solve)."""
    sol = None
    if solver is None or str(solver).upper() == "CLARABEL":
        try:
            sol = solve_exact(prog, solver="CLARABEL", **TIGHT_TOLERANCES)
        except ImportError:  # pragma: no cover - clarabel is a dependency
            sol = None
        if point_only and sol is not None and sol.status == cp_status.OPTIMAL_INACCURATE \
                and proven_point(prog, sol) is not None:
            return sol
        if sol is not None and sol.status not in (cp_status.OPTIMAL, cp_status.INFEASIBLE,
                                                  cp_status.UNBOUNDED):
            sol = None
        if sol is not None:
            # the tolerance met, which ExactSolution.lower_bound reads (the fallbacks below
            # keep their solvers' own: Clarabel's default 1e-8, SCS's 1e-9 ... see _scs)
            return dataclasses.replace(sol, gap_tolerance=TIGHT_GAP)
    if sol is None and solver is None:
        try:
            sol = solve_exact(prog, solver="CLARABEL")
        except ImportError:  # pragma: no cover - clarabel is a dependency
            sol = None
        if sol is None or sol.status == cp_status.SOLVER_ERROR:
            # Clarabel failed at both tolerances: SCS, within FALLBACK_SCS_ITERATIONS
            sol = solve_exact(prog, solver="SCS", max_iters=FALLBACK_SCS_ITERATIONS)
        elif sol.status == cp_status.OPTIMAL_INACCURATE and not point_only:
            # an optimum is needed (a lower bound, a fit's minimum): Clarabel stopped short at
            # both tolerances, so SCS gets its turn; its answer counts only when it is solved
            scs = solve_exact(prog, solver="SCS", max_iters=FALLBACK_SCS_ITERATIONS)
            if scs.status == cp_status.OPTIMAL:
                sol = scs
    elif sol is None:
        sol = solve_exact(prog, solver=solver)
    return sol


def tightened_point(scp: SymmetricConeProgram, A_t: Any, b_t: np.ndarray, plan: RobustPlan,
                    npl: NoisePlan, solver: str | None, units: np.ndarray | None = None,
                    sub_plan: RobustPlan | None = None) -> tuple[Any, Any, Any, np.ndarray]:
    """The tightened counterpart of the noisy data ``(A_t, b_t)`` solved at the release's
    level ``npl.beta``, else (Gaussian noise) at the weaker :data:`FALLBACK_BETAS` until it
    has a proven point: ``(point or None, the last solve, the level used, its unit scales)``.

    ``sub_plan``: tighten only these units, unit ``i`` being unit ``units[i]`` of ``plan``
    (whose noise bounds they take); the other rows keep the noisy data
    (:mod:`cvxdp.solvers.perturbation.fit_beside`)."""
    target = plan if sub_plan is None else sub_plan
    pick = (lambda v: v) if units is None else (lambda v: v[units])
    nuclear = None if npl.nuclear is None else pick(np.asarray(npl.nuclear))
    betas = [npl.beta] if npl.noise == "truncated" or npl.beta is None else \
        [npl.beta, *[b for b in FALLBACK_BETAS if b > npl.beta]]
    zero_units = np.flatnonzero(target.unit_kind == "zero")
    for beta_used in betas:
        if beta_used is None or beta_used == npl.beta:
            B, B_op = npl.B, npl.B_op
        else:
            B, B_op, _ = _bounds(plan, math.log(1 / beta_used), npl.noise)
        scale = pick(B * npl.sigma_unit)
        scale_op = None if B_op is None else pick(B_op * npl.sigma_unit)
        band = dict(zip(zero_units.tolist(),
                        (scale[zero_units] * target.band_norm[zero_units]).tolist(),
                        strict=True))
        band_lin = None if target.band_lin is None or target.band_lin.nnz == 0 else \
            sp.csr_matrix(sp.diags(scale) @ target.band_lin)
        prog = counterpart(scp, A_t, b_t, target, scale, nuclear, scale_op, band, band_lin)
        if proven_empty(prog, EMPTY_SLACK * (1.0 + float(np.abs(prog.b).max(initial=0.0)))):
            # no point within 100 times proven_point's tolerance of its rows: no solver
            # answer would give a point to release (a 500-entry kl_div counterpart took
            # Clarabel twice and SCS, 0.3-0.5 s, per level to say so)
            sol, point = ExactSolution(None, np.inf, cp_status.INFEASIBLE, 0.0,
                                       "bound propagation"), None
            continue
        sol = _solve_tight(prog, solver, point_only=True)
        point = proven_point(prog, sol)
        if point is not None:
            break
    return point, sol, beta_used, scale


def solve_robust_counterpart(scp: SymmetricConeProgram, entries: PrivateEntries,
                             plan: RobustPlan, npl: NoisePlan, rng: np.random.Generator,
                             solver: str | None = None) -> dict[str, Any]:
    """Draw the noise, build the counterpart from the noisy values only, solve it exactly.

    Returns a dict with ``x`` (ndarray or None), ``status`` (the exact solver's), ``noisy``
    (id -> released parameter value), ``A``, ``b`` (the noisy canonical data),
    ``released_program`` (``scp`` with the released objective when it is private),
    ``radius_max`` (``max_u B_u sigma_u max_k Delta_k``: the ``r`` of ``a~'x + r ||x||_2 <=
    b~`` in the parameter's units), ``draws``, ``beta_used``
    (the level whose counterpart gave the point; ``npl.beta`` unless it fell back).
    """
    g, draws = draw_noise(npl, plan, entries.K, rng)
    noisy = release_parameters(entries, g, npl.sigma_unit)
    # the counterpart's data within the parameters' public sign domains (entries.py); the
    # released values themselves (fit terms' y~) stay as drawn
    c_t, off_t, A_t, b_t = program_data(scp, within_domains(entries, noisy))
    if scp.sensitivity is not None and scp.sensitivity.objective_private:
        # a private objective: the counterpart minimises the released one (post-processing)
        scp = dataclasses.replace(scp, c=c_t, offset=off_t)
    # Gaussian noise: if the counterpart at the requested beta is empty, the same release is
    # post-processed at weaker levels (FALLBACK_BETAS): no budget, a weaker promise (the
    # caller reports it).  The nested events {||g_S|| <= B_u(beta)} make P(infeasible) <= the
    # level finally used.  Truncated noise keeps its certainty or releases nothing.
    point, sol, beta_used, scale = tightened_point(scp, A_t, b_t, plan, npl, solver)
    zero_units = np.flatnonzero(plan.unit_kind == "zero")
    x = None if point is None else point[:scp.n]
    eq_bound = None
    if zero_units.size and x is not None:
        # |s_i| <= |s~_i(x)| + B_u sigma_u ||E_u [x; 1]||, both evaluated at the released x
        # (so the solver's tolerance on the band does not enter the bound)
        s_t = b_t - sp.csr_matrix(A_t) @ x
        t = scale * unit_norms(plan, np.append(x, 1.0))
        first = plan.row_idx[plan.row_ptr[zero_units]]
        eq_bound = float(np.max(np.abs(s_t[first]) + t[zero_units]))
    return {"x": x, "status": sol.status, "noisy": noisy, "draws": draws,
            "A": A_t, "b": b_t, "released_program": scp,
            "beta_used": beta_used, "equality_violation_bound": eq_bound,
            "equality_rows_private": int(zero_units.size),
            "solver": sol.solver,
            "radius_max": float(scale.max(initial=0.0)) * float(entries.delta.max())}
