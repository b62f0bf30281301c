"""Input perturbation with a robust counterpart: the second mechanism for general models.

Release the private parameters once with noise, then solve EXACTLY (Clarabel or SCS) a robust
counterpart of the user's model built from the noisy values, tightened so that the released
point is feasible for the TRUE data: with probability ``>= 1 - beta`` (``noise="gaussian"``) or
with certainty (``noise="truncated"``, bounded noise).  Everything after the noise is
post-processing (Dwork & Roth 2014, Prop. 2.1), so a failed (infeasible) counterpart is a public
fact and is reported by status, never by an exception.

Where the counterpart is built (and why the canonical level)
------------------------------------------------------------
The counterpart is built on the canonical cone program ``A x + s = b, s in K`` of
:func:`cvxdp.transform.to_scp`, not on CVXPY expressions: CVXPY's parametric program stores the
exact linear map ``theta -> [-A | b]`` (``param_prob.A``, the tensor
:mod:`cvxdp.transform.sensitivity` already reads), so for EVERY DPP placement of the parameter
(``A @ x <= b``, ``x @ A``, ``trace(A_i @ X)``, a parameter inside ``norm(A @ x - b)``, ...) the
coefficient of each parameter entry ``theta_k`` in each canonical slack ``s_i`` is the affine
function ``v_ik(x) = sum_j T[i + m j, k] [x; 1]_j``.  One code path covers orthant, second-order
and PSD rows; the noisy data ``[-A~ | b~] = T [theta~; 1]`` is computed from the noisy parameter
vector only (public parameters at their values), and the user's ``cp.Parameter`` objects are
never written.  The point is mapped back with :func:`cvxdp.transform.from_scp`.

Sensitivity (what the user declared -> l2 sensitivity of the release)
--------------------------------------------------------------------
A spec declares ``Delta_p``: every entry of parameter ``p`` moves by at most ``Delta_p`` between
neighbours (all entries at once).  The mechanism releases ``theta~_k = theta_k + Delta_k
sigma_u g_k`` (``g ~ N(0, I_K)``, ``K`` = number of private entries): the scaled vector
``theta / Delta`` moves by at most 1 per entry, so its l2 sensitivity is ``sqrt(K)``, and
``sigma_u`` is calibrated for that (analytic Gaussian for (epsilon, delta), ``sqrt(K) /
sqrt(2 rho)`` for rho-zCDP).  In the parameter's own units the l2 sensitivity of parameter ``p``
is ``Delta_p sqrt(size_p)`` and of all of them ``sqrt(sum_p size_p Delta_p^2)`` (reported).

Tightening
----------
With ``w_ik(x) = Delta_k sigma_u v_ik(x)`` the true slack is ``s_i = s~_i - sum_k g_k w_ik(x)``
and ``|sum_k g_k w_ik(x)| <= ||g_{S_i}||_2 ||w_i(x)||_2`` for every ``x`` (Cauchy-Schwarz), so a
bound on the noise norm holds uniformly in ``x`` -- the dependence of the solution on the noise
does not matter.  Units: each private orthant row, and each second-order / PSD block with a
private row (its change ``d`` obeys ``||d||_2 <= ||g_{S_B}|| ||W_B(x)||_F``).  With ``B_u`` a
bound on ``||g_{S_u}||_2`` and ``tau_u >= B_u ||W_u(x)||_F`` the counterpart is

* orthant row:  ``s~_i - tau_u >= 0`` (``a~_i'x + tau <= b~_i``; ``b~_i - tau`` for private b);
* SOC block ``(t, u_Q, u_P)`` with private rows ``P``: ``(t~ - tau_u, u~_Q, w) in SOC`` and
  ``w >= ||u~_P|| + tau_u`` (the ``- tau_u`` on ``t`` only when ``t`` is private), since
  ``||u_P|| <= ||u~_P|| + ||d||`` -- the shift stays inside the norm, so epigraph forms such as
  ``quad_over_lin`` (rotated cones) stay feasible;
* PSD block ``S``: ``S~ - tau_u I >> 0`` (``||D||_op <= ||D||_F = ||svec D||_2``);
* SDP data row ``<C~, M(x)> <= b`` with ``C`` an (r, c) parameter (``trace(C @ X) <= b``),
  when ``sqrt r + sqrt c < sqrt(r c)``: ``tau_u >= sigma_u (B_op ||M_1||_* + B_u ||M - M_1||_F)``
  with ``M_1`` free and ``B_op = sqrt r + sqrt c + t`` a Gaussian spectral-norm tail (for
  ``M = X >> 0`` and ``M_1 = M`` this is ``<C~, X> + r_op tr(X) <= b``).

``noise="gaussian"``: ``B_u = sqrt(k_u) + sqrt(2 ln(N / beta))`` (``k_u = |S_u|``, ``N`` units):
``P(||g_S|| >= sqrt k + t) <= exp(-t^2 / 2)`` (Gaussian concentration of a 1-Lipschitz function,
``E ||g_S|| <= sqrt k``; Boucheron, Lugosi & Massart 2013, Thm 5.6) and a union bound give
feasibility for the true data with probability ``>= 1 - beta``.

``noise="truncated"``: ``g`` is drawn conditioned on ``E = {||g_{S_u}|| <= B_u for all u}``
(rejection sampling; ``E`` depends on public structure only) with ``B_u = sqrt(k_u) +
sqrt(2 ln(N / q))``, so ``P(not E) <= q`` and the released point is feasible for the true data
with certainty (up to the conic solver's tolerance).  Privacy of a mechanism conditioned on a
data-independent noise event of probability ``>= 1 - q``: if the untruncated one is
``(epsilon, delta_G)``-DP, the truncated one is ``(epsilon, (delta_G + e^epsilon q) / (1 - q))``
-DP (proof: ``P'(E) <= P(E) / (1 - q)`` and ``P(E) <= (1 - q) P'(E) + q`` for the neighbour).
cvxdp takes ``delta_G = delta / 2`` and ``q = (delta / 2) / (e^epsilon + delta)``, which makes
the total exactly ``delta``.  This is the bounded-support idea of Benvenuti, Bialy, Dennis &
Hale (2025) (truncated Laplace there, per entry); the Gaussian keeps the l2 geometry of a
parameter with many entries.  It needs an (epsilon, delta) budget (the truncated mechanism has
no zCDP bound: its support moves with the data).

Equality rows with private data cannot be tightened (no interior), and no private release can
satisfy them exactly for the true data (the point would reveal the data).  The counterpart keeps
each such row inside a band, ``-tau_u <= s~_i <= tau_u`` (two inequality rows), which the true
optimum satisfies on the same noise event (``|s~_i(x*)| = |g . w_i(x*)| <= tau_u``), so the
counterpart is feasible whenever the true model is; the released point violates the TRUE
equality by at most ``|s~_i| + |g . w_i(x)| <= 2 tau_u`` (w.p. ``>= 1 - beta``, or surely for
truncated noise).  The largest ``2 tau_u`` over the private equality rows is released as
``info["equality_violation_bound"]`` (canonical units; a function of the noisy release only).

References
----------
Munoz, Syed, Vassilvitskii & Vitercik, "Private optimization without constraint violations",
AISTATS 2021 (private right-hand sides, shifted b); Benvenuti, Bialy, Dennis & Hale, "Differentially
private linear programming: reduced sub-optimality and guaranteed constraint satisfaction", 2025
(truncated noise, certain feasibility); Ben-Tal, El Ghaoui & Nemirovski, Robust Optimization,
2009, Ch. 1-2 (robust counterparts of uncertain conic rows); Balle & Wang 2018, Thm 8; Bun &
Steinke 2016, Prop. 1.6.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import cvxpy.settings as cp_status
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from cvxpy.cvxcore.python import canonInterface

from cvxdp.errors import BudgetError, PrivacySpecError, UnsupportedProblemError
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.solvers.public_part import coordinate_box
from cvxdp.solvers.robust_counterpart import counterpart
from cvxdp.specs import ConstraintSetPrivacy
from cvxdp.transform.reference import solve_exact
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram
from cvxdp.transform.sensitivity import (
    full_value,
    objective_tensor,
    parameter_columns,
    reduced_parameter,
    reduced_value,
)

__all__ = ["PrivateEntries", "RobustPlan", "private_entries", "robust_plan", "noise_plan",
           "NoisePlan", "release_parameters", "solve_robust_counterpart", "counterpart",
           "TRUNCATION_REFERENCE", "PERTURBATION_THEOREM"]

PERTURBATION_THEOREM = (
    "input perturbation + robust counterpart (post-processing, Dwork & Roth 2014 Prop 2.1); "
    "Gaussian: Balle & Wang 2018 Thm 8 / Bun & Steinke 2016 Prop 1.6; truncated: conditioning "
    "lemma in cvxdp/solvers/perturbation.py (Benvenuti, Bialy, Dennis & Hale 2025)")
TRUNCATION_REFERENCE = ("Gaussian conditioned on a data-independent event of probability >= 1-q: "
                        "(eps, (delta_G + e^eps q)/(1-q))-DP (cvxdp/solvers/perturbation.py)")
_MAX_DRAWS = 10_000
#: weaker failure levels tried, as post-processing of the same Gaussian release, when the
#: counterpart at the requested beta is empty (the status then says which level holds)
FALLBACK_BETAS = (0.01, 0.1, 0.5)


@dataclass(frozen=True)
class PrivateEntries:
    """The private parameter entries, in the order of the noise vector (public structure).

    Attributes
    ----------
    params : tuple of cvxpy.Parameter
    columns : ndarray of int, shape (K,)
        Columns of CVXPY's parameter tensor holding the entries (Fortran order per parameter).
    delta : ndarray, shape (K,)
        Declared per-entry sensitivity ``Delta_k`` of each entry.
    per_param : tuple of dict
        ``name``, ``size``, ``sensitivity`` (per entry) and ``l2_sensitivity``
        (``Delta_p sqrt(size_p)``) of each parameter.
    """

    params: tuple[Any, ...]
    columns: np.ndarray
    delta: np.ndarray
    per_param: tuple[dict[str, Any], ...]
    tensor_ids: tuple[int, ...] = ()  # id in CVXPY's tensor (a reduced parameter's for
    # symmetric / PSD / diag / sparse parameters; the parameter's own otherwise)

    @property
    def K(self) -> int:
        return int(self.columns.size)

    @property
    def l2_sensitivity(self) -> float:
        """``sqrt(sum_k Delta_k^2)``: l2 sensitivity of all private entries, parameter units."""
        return float(np.sqrt(np.sum(self.delta**2)))


def private_entries(scp: SymmetricConeProgram, specs: tuple[Any, ...]) -> PrivateEntries:
    """Collect the private entries of ``specs`` (ConstraintPrivacy / ScalarPrivacy).

    Raises
    ------
    PrivacySpecError
        For ``ConstraintSetPrivacy`` (row add/remove has no bounded per-entry change) or a
        parameter declared twice.
    """
    pp = scp.meta["param_prob"]
    params, cols, deltas, per, tids = [], [], [], [], []
    seen: set[int] = set()
    for spec in specs:
        if isinstance(spec, ConstraintSetPrivacy):
            raise PrivacySpecError(
                "mechanism='perturbation' needs a bounded change per entry (ConstraintPrivacy / "
                "ScalarPrivacy / ObjectivePrivacy); ConstraintSetPrivacy (a whole row added or "
                "removed) is solved by the dense MWU: use mechanism='mwu'.")
        for p in spec.params:
            if p.id in seen:
                raise PrivacySpecError(f"parameter {p.name()!r} is declared private twice.")
            seen.add(p.id)
            c = parameter_columns(pp, p, type(spec).__name__)
            red = reduced_parameter(pp, p)
            tids.append(p.id if red is None else red.id)
            params.append(p)
            cols.append(c)
            deltas.append(np.full(c.size, float(spec.sensitivity)))
            per.append({"name": p.name(), "size": int(c.size),
                        "sensitivity": float(spec.sensitivity),
                        "l2_sensitivity": float(spec.sensitivity) * math.sqrt(c.size)})
    return PrivateEntries(tuple(params), np.concatenate(cols).astype(int),
                          np.concatenate(deltas), tuple(per), tuple(tids))


@dataclass(frozen=True)
class RobustPlan:
    """Public structure of the robust counterpart (no data values, only the tensor's map).

    Attributes
    ----------
    unit_kind : ndarray of str, shape (N,)
        ``"nonneg"``, ``"soc"`` or ``"psd"`` per unit (private orthant row or cone block).
    unit_rows : tuple of ndarray
        Canonical rows of each unit.
    support : ndarray of int, shape (N,)
        ``k_u``: number of private entries that reach the unit.
    indicator : scipy.sparse.csr_matrix, shape (N, K)
        1 where entry k reaches unit u (to test ``||g_{S_u}||`` of a draw).
    touched : tuple of ndarray
        Canonical rows of each unit that private entries reach.
    matrix : tuple of (r, c) or None
        For an orthant row reached by all entries of one (r, c) matrix parameter, once each
        (``<C, M(x)>`` forms such as ``trace(C @ X) <= b``): the shape, so the spectral bound
        ``|<G, M>| <= ||G||_op ||M(x)||_*`` can replace the Frobenius one; else None.
    E : list of scipy.sparse.csr_matrix
        Per unit, ``(pairs, n + 1)``: row (i, k) holds ``Delta_k T[i + m j, k]`` over ``j``, so
        ``||E_u [x; 1]||_2 sigma_u`` bounds the unit's change per unit noise norm.
    """

    unit_kind: np.ndarray
    unit_rows: tuple[np.ndarray, ...]
    support: np.ndarray
    indicator: sp.csr_matrix
    touched: tuple[np.ndarray, ...]
    E: list[sp.csr_matrix]
    matrix: tuple[tuple[int, int] | None, ...] = ()
    band_norm: np.ndarray | None = None  # per unit: max ||E_u [x; 1]|| (equality rows only)

    @property
    def N(self) -> int:
        return int(self.support.size)


def _blocks(dims: ConeDims) -> list[tuple[str, int, int]]:
    out = [("zero", 0, dims.zero), ("nonneg", dims.zero, dims.nonneg)]
    r0 = dims.zero + dims.nonneg
    for q in dims.soc:
        out.append(("soc", r0, q))
        r0 += q
    for r in dims.psd:
        size = r * (r + 1) // 2
        out.append(("psd", r0, size))
        r0 += size
    return out


def robust_plan(scp: SymmetricConeProgram, entries: PrivateEntries) -> RobustPlan:
    """Units, supports and coefficient maps of the counterpart (structure only).

    Each private equality row is a unit of kind ``"zero"`` (its band ``|s~_i| <= tau_u``, see
    the module doc), each private inequality row one of kind ``"nonneg"``, each cone block with
    a private row one of kind ``"soc"`` / ``"psd"``.
    """
    pp = scp.meta["param_prob"]
    m, n = scp.m, scp.n
    sub = sp.csc_matrix(pp.A)[:, entries.columns].tocoo()
    keep = sub.data != 0
    e, k, val = sub.row[keep], sub.col[keep], sub.data[keep]
    i, j = e % m, e // m
    unit_of_row = -np.ones(m, dtype=int)
    kinds, rows, hit = [], [], []
    for kind, r0, size in _blocks(scp.dims):
        if size == 0:
            continue
        touched = np.unique(i[(i >= r0) & (i < r0 + size)])
        if touched.size == 0:
            continue
        if kind in ("zero", "nonneg"):
            unit_of_row[touched] = np.arange(len(kinds), len(kinds) + touched.size)
            kinds += [kind] * touched.size
            rows += [np.array([t]) for t in touched]
            hit += [np.array([t]) for t in touched]
        else:
            unit_of_row[r0:r0 + size] = len(kinds)
            kinds.append(kind)
            rows.append(np.arange(r0, r0 + size))
            hit.append(touched)
    u = unit_of_row[i]
    N = len(kinds)
    ind = sp.csr_matrix((np.ones(u.size), (u, k)), shape=(N, entries.K))
    ind.data[:] = 1.0  # duplicates summed by the constructor: back to an indicator
    support = np.diff(ind.indptr).astype(int)
    # one pair per (row, entry): E_u[(i, k), j] = Delta_k T[i + m j, k]
    pair_key = i.astype(np.int64) * entries.K + k
    keys, pair = np.unique(pair_key, return_inverse=True)
    pair_unit = unit_of_row[keys // entries.K]
    coef = sp.csr_matrix((val * entries.delta[k], (pair, j)), shape=(keys.size, n + 1))
    order = np.argsort(pair_unit, kind="stable")
    bounds = np.searchsorted(pair_unit[order], np.arange(N + 1))
    E = [coef[order[bounds[t]:bounds[t + 1]]] for t in range(N)]
    starts = np.cumsum([0] + [int(p.size) for p in entries.params])
    matrix: list[tuple[int, int] | None] = []
    for u in range(N):
        ks = ind.indices[ind.indptr[u]:ind.indptr[u + 1]]
        shape = None
        if kinds[u] in ("zero", "nonneg") and ks.size:
            j = int(np.searchsorted(starts, ks[0], side="right") - 1)
            par = entries.params[j]
            if (len(par.shape) == 2 and min(par.shape) > 1 and ks.size == par.size
                    and E[u].shape[0] == par.size and ks[0] == starts[j]
                    and ks[-1] == starts[j] + par.size - 1):
                shape = (int(par.shape[0]), int(par.shape[1]))
        matrix.append(shape)
    pair_keys = [keys[order[bounds[t]:bounds[t + 1]]] for t in range(N)]
    E = [_operator_form(Eu, pk, entries.K, n, kind)
         for Eu, pk, kind in zip(E, pair_keys, kinds, strict=True)]
    return RobustPlan(np.array(kinds), tuple(rows), support, ind, tuple(hit), E,
                      tuple(matrix), _band_norms(scp, np.array(kinds), E))


def _operator_form(Eu: sp.csr_matrix, pair_keys: np.ndarray, K: int, n: int, kind: str
                   ) -> sp.csr_matrix:
    """A cone block whose private data are constants only (a private right-hand side).

    Its change is ``M g_S`` with a constant matrix ``M`` (``M[i, k]``: the coefficient of entry
    ``k`` in row ``i`` of the block, times ``Delta_k``), so ``||M g_S|| <= ||M||_op ||g_S||``;
    the generic ``||E_u [x; 1]|| = ||M||_F`` is larger by up to ``sqrt(rank M)`` (45x on a
    private vector of 2000 prices fitted by ``sum_squares``).  Returns the one-row map
    ``[x; 1] -> ||M||_op`` then (public: the tensor's coefficients and the declared
    sensitivities), ``Eu`` unchanged otherwise (a scalar row's ``M`` is one row, where the two
    norms agree).
    """
    if kind not in ("soc", "psd") or Eu.shape[0] <= 1 or Eu[:, :n].nnz:
        return Eu
    rows = pair_keys // K
    cols = pair_keys % K
    vals = np.asarray(Eu[:, n].toarray()).ravel()
    _, r = np.unique(rows, return_inverse=True)
    _, c = np.unique(cols, return_inverse=True)
    M = sp.csr_matrix((vals, (r, c)))
    if np.all(np.diff(M.indptr) <= 1) and np.all(np.bincount(c) <= 1):
        op = float(np.max(np.abs(vals), initial=0.0))  # a permuted diagonal
    elif M.shape[0] * M.shape[1] <= 4_000_000:
        op = float(np.linalg.norm(M.toarray(), 2))
    else:
        op = float(spla.svds(M, k=1, return_singular_vectors=False)[0]) * (1 + 1e-9)
    return sp.csr_matrix(([op], ([0], [n])), shape=(1, n + 1))


def _band_norms(scp: SymmetricConeProgram, kinds: np.ndarray, E: list[sp.csr_matrix]
                ) -> np.ndarray:
    """``max ||E_u [x; 1]||_2`` over the public domain for each equality unit (0 elsewhere).

    With private right-hand sides only, ``E_u`` has just its constant column and the norm is
    that column's.  Private coefficients bound it by ``sum_j |x_j|max ||E_u[:, j]|| +
    ||E_u[:, n]||`` with ``|x_j|`` bounded over the public constraints (public solves).

    Raises
    ------
    PrivacySpecError
        Private coefficients in an equality multiply a variable the public constraints do not
        bound.
    """
    out = np.zeros(kinds.size)
    zero = np.flatnonzero(kinds == "zero")
    if zero.size == 0:
        return out
    n = scp.n
    cols = [np.sqrt(np.asarray(E[u].multiply(E[u]).sum(axis=0)).ravel()) for u in zero]
    need = np.flatnonzero(np.max([c[:n] for c in cols], axis=0) > 0)
    try:
        lo, hi = coordinate_box(scp, need)
    except UnsupportedProblemError:
        raise PrivacySpecError(
            "mechanism='perturbation': private coefficients enter an equality constraint "
            "and multiply variables that the constraints without private data do not "
            "bound, so the equality's noise cannot be bounded; add public bounds on those "
            "variables (e.g. x <= 10, cp.norm(x) <= R) or use mechanism='mwu'.") from None
    xmax = np.maximum(np.abs(lo), np.abs(hi))
    for u, c in zip(zero, cols, strict=True):
        out[u] = float(c[:n] @ xmax + c[n])
    return out


@dataclass(frozen=True)
class NoisePlan:
    """Calibrated noise: ``sigma_u`` per unit of declared sensitivity, bounds ``B_u``, record."""

    noise: str
    sigma_unit: float
    B: np.ndarray
    q: float | None
    record: PrivacyRecord
    beta: float | None
    nuclear: np.ndarray | None = None  # units that also use ||G||_op (see _bounds)
    B_op: np.ndarray | None = None      # bound on ||G||_op of those units (inf elsewhere)


def _bounds(plan: RobustPlan, log_inv_fail: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Norm bounds holding together with failure probability ``exp(-log_inv_fail)``.

    Every unit: ``B_u = sqrt(k_u) + t`` bounds ``||g_{S_u}||_2``.  A unit that is ``<C, M(x)>``
    with ``C`` an (r, c) parameter and ``sqrt r + sqrt c < sqrt(r c)`` (decided from shapes
    only) also gets ``B_op = sqrt(r) + sqrt(c) + t`` on ``||G||_op`` (``E ||G||_op <= sqrt r +
    sqrt c``, Davidson & Szarek 2001 Thm II.13; the norm is 1-Lipschitz in the entries, so the
    same ``e^{-t^2/2}`` tail); the counterpart then bounds ``|<G, M>| <= B_op ||M_1||_* + B_u
    ||M - M_1||_F`` with ``M_1`` free, never worse than either bound alone.  ``t = sqrt(2 (ln
    events + log_inv_fail))`` with one event per bound (union bound).

    Returns
    -------
    B, B_op, nuclear : ndarray (N,), ndarray (N,) (inf where unused), bool ndarray (N,)
    """
    nuc = np.array([shape is not None and math.sqrt(shape[0]) + math.sqrt(shape[1])
                    < math.sqrt(shape[0] * shape[1]) for shape in plan.matrix], dtype=bool)
    nuc = nuc if nuc.size == plan.N else np.zeros(plan.N, dtype=bool)
    events = max(plan.N + int(nuc.sum()), 1)
    t = math.sqrt(2 * (math.log(events) + log_inv_fail))
    B = np.sqrt(plan.support.astype(float)) + t
    B_op = np.full(plan.N, np.inf)
    for u in np.flatnonzero(nuc):
        B_op[u] = math.sqrt(plan.matrix[u][0]) + math.sqrt(plan.matrix[u][1]) + t
    return B, B_op, nuc


def noise_plan(budget: Budget, noise: str, entries: PrivateEntries, plan: RobustPlan,
               beta: float) -> NoisePlan:
    """Calibrate the noise for ``budget`` and the norm bounds ``B_u`` (see the module doc).

    Raises
    ------
    BudgetError
        Pure-DP budget (both families need delta > 0), or zCDP with ``noise="truncated"``.
    """
    D = math.sqrt(entries.K)  # l2 sensitivity of theta / Delta
    if isinstance(budget, ZCDP):
        if noise == "truncated":
            raise BudgetError(
                "noise='truncated' gives (epsilon, delta)-DP only (its support moves with the "
                "data, so it has no zCDP bound); pass epsilon= and delta=, or noise='gaussian'.")
        sigma = calibrate_gaussian(rho=budget.rho, sensitivity=D, method="zcdp")
        rec = gaussian_record(sigma=sigma, sensitivity=D, mechanism="input_gaussian",
                              note="sigma per unit of declared per-entry sensitivity")
        B, B_op, nuc = _bounds(plan, math.log(1 / beta))
        return NoisePlan(noise, sigma, B, None, rec, beta, nuc, B_op)
    if not isinstance(budget, ApproxDP) or budget.delta <= 0:
        raise BudgetError(
            "mechanism='perturbation' adds Gaussian noise and needs delta > 0 (or rho=); pass "
            "epsilon= and delta=, or use mechanism='mwu' (scalar privacy runs under pure DP).")
    eps, delta = budget.epsilon, budget.delta
    if noise == "gaussian":
        sigma = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=D)
        rec = gaussian_record(sigma=sigma, sensitivity=D, epsilon=eps, delta=delta,
                              mechanism="input_gaussian",
                              note="sigma per unit of declared per-entry sensitivity")
        B, B_op, nuc = _bounds(plan, math.log(1 / beta))
        return NoisePlan(noise, sigma, B, None, rec, beta, nuc, B_op)
    if noise != "truncated":
        raise ValueError(f"noise must be 'gaussian' or 'truncated', got {noise!r}.")
    d_g = delta / 2
    sigma = calibrate_gaussian(epsilon=eps, delta=d_g, sensitivity=D)
    # q = (delta - d_g) / (e^eps + delta) in log space (e^eps overflows for eps > 709), made
    # smaller by a factor e^-1e-9 so that rounding cannot push the total above delta
    e_neg = math.exp(-eps)  # underflows to 0 harmlessly
    log_q = math.log(delta - d_g) - eps - math.log1p(delta * e_neg) - 1e-9
    q = math.exp(log_q)
    e_q = math.exp(log_q + eps) if log_q + eps < 700 else math.inf  # e^eps q <= delta / 2
    total_delta = (d_g + e_q) / (1 - q)
    if not total_delta <= delta:  # pragma: no cover - guarded by the construction above
        raise BudgetError(f"truncated noise: delta {total_delta!r} exceeds {delta!r}.")
    rec = PrivacyRecord("truncated_gaussian", ApproxDP(eps, delta), TRUNCATION_REFERENCE,
                        params={"sigma": sigma, "sensitivity": D, "delta_gaussian": d_g,
                                "truncation_mass": q, "log_truncation_mass": log_q,
                                "delta_total": total_delta})
    B, B_op, nuc = _bounds(plan, -log_q)
    return NoisePlan(noise, sigma, B, q, rec, None, nuc, B_op)


def draw_noise(npl: NoisePlan, plan: RobustPlan, K: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, int]:
    """Standard normal ``g`` (K,), conditioned on ``E`` for truncated noise; (g, draws)."""
    for draw in range(1, _MAX_DRAWS + 1):
        g = rng.standard_normal(K)
        if npl.noise != "truncated" or plan.N == 0:
            return g, draw
        ok = bool(np.all(np.sqrt(plan.indicator @ (g * g)) <= npl.B))
        nuc = npl.nuclear if npl.nuclear is not None else np.zeros(plan.N, dtype=bool)
        for u in np.flatnonzero(nuc):
            ks = plan.indicator.indices[plan.indicator.indptr[u]:plan.indicator.indptr[u + 1]]
            G = g[np.sort(ks)].reshape(plan.matrix[u], order="F")
            ok = ok and bool(np.linalg.norm(G, 2) <= npl.B_op[u])
        if ok:
            return g, draw
    # P(not E) <= q <= 1/2, so this happens with probability <= 2^-10000
    raise RuntimeError("truncated noise: rejection sampling did not accept")  # pragma: no cover


def release_parameters(entries: PrivateEntries, g: np.ndarray, sigma_unit: float
                       ) -> dict[int, np.ndarray]:
    """The noisy parameter values ``theta~ = theta + Delta sigma_u g``.

    Keyed by the id in CVXPY's tensor: the parameter's own (value in its shape) or, for a
    symmetric / PSD / diag / sparse parameter, its reduced parameter's (the reduced entries,
    one per tensor column; :func:`cvxdp.transform.sensitivity.full_value` rebuilds the matrix).
    """
    out, at = {}, 0
    tids = entries.tensor_ids or tuple(p.id for p in entries.params)
    for p, tid in zip(entries.params, tids, strict=True):
        if tid == p.id:
            size = int(p.size)
            z = (entries.delta[at:at + size] * sigma_unit * g[at:at + size]).reshape(
                p.shape, order="F")
            out[tid] = np.asarray(p.value, dtype=float) + z
        else:
            base = reduced_value(p)
            size = int(base.size)
            out[tid] = base + entries.delta[at:at + size] * sigma_unit * g[at:at + size]
        at += size
    return out


def released_user_values(entries: PrivateEntries, noisy: dict[int, np.ndarray]
                         ) -> dict[str, np.ndarray]:
    """The released values in the user's shapes (name -> array), symmetric ones rebuilt."""

    tids = entries.tensor_ids or tuple(p.id for p in entries.params)
    return {p.name(): (noisy[tid] if tid == p.id else full_value(p, noisy[tid]))
            for p, tid in zip(entries.params, tids, strict=True)}


def _released_theta(scp: SymmetricConeProgram, noisy: dict[int, np.ndarray]) -> np.ndarray:
    """CVXPY's parameter vector ``[theta~; 1]``: released values for the private ids, the
    parameters' values for the rest."""
    pp = scp.meta["param_prob"]

    def value(pid: int) -> np.ndarray:
        return noisy[pid] if pid in noisy else np.asarray(pp.id_to_param[pid].value)

    return canonInterface.get_parameter_vector(
        pp.total_param_size, pp.param_id_to_col, pp.param_id_to_size, value)


def noisy_program(scp: SymmetricConeProgram, noisy: dict[int, np.ndarray]
                  ) -> tuple[sp.csc_matrix, np.ndarray]:
    """``(A~, b~) = T [theta~; 1]``: noisy values for the private ids, values for the rest."""
    m, n = scp.m, scp.n
    M = sp.csc_matrix(scp.meta["param_prob"].A) @ _released_theta(scp, noisy)
    M = np.asarray(M).ravel().reshape((m, n + 1), order="F")
    return sp.csc_matrix(-M[:, :n]), M[:, n].copy()


def noisy_objective(scp: SymmetricConeProgram, noisy: dict[int, np.ndarray]
                    ) -> tuple[np.ndarray, float]:
    """``(c~, offset~) = T_q [theta~; 1]``: the objective with the released values of the
    private parameters (CVXPY's objective tensor; public values for the rest)."""
    q = np.asarray(sp.csc_matrix(objective_tensor(scp.meta["param_prob"]))
                   @ _released_theta(scp, noisy)).ravel()
    return q[:scp.n].copy(), float(q[scp.n])


def objective_map(scp: SymmetricConeProgram, entries: PrivateEntries) -> sp.csr_matrix:
    """``E_c``, shape ``(K, n + 1)``: row k holds ``Delta_k T_q[:, k]``, so the released
    objective's error at ``x`` is ``sigma g' E_c [x; 1]``, at most ``sigma ||g|| ||E_c [x; 1]||``
    (rows of entries that do not reach the objective are zero)."""
    pp = scp.meta["param_prob"]
    T = sp.csc_matrix(objective_tensor(pp))[:, entries.columns]
    return sp.csr_matrix(T.T.multiply(entries.delta[:, None]))


def _solve_tight(prog: SymmetricConeProgram, solver: str | None) -> Any:
    """Exact solve; feasibility for the true data holds up to the solver's tolerance, so ask
    Clarabel for 1e-10 (default 1e-8), falling back to its defaults (and then SCS)."""

    sol = None
    if solver is None or str(solver).upper() == "CLARABEL":
        try:
            sol = solve_exact(prog, solver="CLARABEL", tol_feas=1e-10, tol_gap_abs=1e-10,
                              tol_gap_rel=1e-10)
        except ImportError:  # pragma: no cover - clarabel is a dependency
            sol = None
        if sol is not None and sol.status not in (cp_status.OPTIMAL, cp_status.INFEASIBLE,
                                                  cp_status.UNBOUNDED):
            sol = None
    if sol is None:
        sol = solve_exact(prog, solver=solver)
    return sol


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
    A_t, b_t = noisy_program(scp, noisy)
    if scp.sensitivity is not None and scp.sensitivity.objective_private:
        # a private objective: the counterpart minimises the released one (post-processing)
        c_t, off_t = noisy_objective(scp, noisy)
        scp = dataclasses.replace(scp, c=c_t, offset=off_t)
    # Gaussian noise: if the counterpart at the requested beta is empty, the same release is
    # post-processed at weaker levels (FALLBACK_BETAS): no budget, a weaker promise (the
    # caller reports it).  The nested events {||g_S|| <= B_u(beta)} make P(infeasible) <= the
    # level finally used.  Truncated noise keeps its certainty or releases nothing.
    betas = [npl.beta] if npl.noise != "gaussian" or npl.beta is None else \
        [npl.beta, *[b for b in FALLBACK_BETAS if b > npl.beta]]
    for beta_used in betas:
        if beta_used is None or beta_used == npl.beta:
            B, B_op = npl.B, npl.B_op
        else:
            B, B_op, _ = _bounds(plan, math.log(1 / beta_used))
        scale = B * npl.sigma_unit
        scale_op = None if B_op is None else B_op * npl.sigma_unit
        band = {int(u): float(scale[u] * plan.band_norm[u])
                for u in np.flatnonzero(plan.unit_kind == "zero")}
        prog = counterpart(scp, A_t, b_t, plan, scale, npl.nuclear, scale_op, band)
        sol = _solve_tight(prog, solver)
        if sol.x is not None:
            break
    x = None if sol.x is None else np.asarray(sol.x)[:scp.n]
    eq_bound = None
    zero_units = np.flatnonzero(plan.unit_kind == "zero")
    if zero_units.size and sol.x is not None:
        # |s_i| <= |s~_i(x)| + B_u sigma_u ||E_u [x; 1]||, both evaluated at the released x
        # (so the solver's tolerance on the band does not enter the bound)
        xs = np.append(x, 1.0)
        s_t = b_t - sp.csr_matrix(A_t) @ x
        eq_bound = max(abs(float(s_t[plan.unit_rows[u][0]]))
                       + float(scale[u] * np.linalg.norm(plan.E[u] @ xs)) for u in zero_units)
    return {"x": x, "status": sol.status, "noisy": noisy, "draws": draws,
            "A": A_t, "b": b_t, "released_program": scp,
            "beta_used": beta_used, "equality_violation_bound": eq_bound,
            "equality_rows_private": int(zero_units.size),
            "solver": sol.solver,
            "radius_max": float(scale.max(initial=0.0)) * float(entries.delta.max())}
