"""CVXPY model -> :class:`SymmetricConeProgram` (``to_scp``) and a cone-program point -> the
user's variables (``from_scp``).

Like a CVXPY ``Reduction``, the forward map returns the program together with what is needed to
invert it (``scp.inverse``): CVXPY's own solving chain and inverse data, so ``from_scp`` sets
``variable.value``, ``problem.value`` and ``problem.status`` exactly as ``problem.solve()`` would.

What this module relies on from CVXPY (pinned by ``tests/transform/test_transform_cvxpy_pins.py``,
CVXPY >= 1.5): ``Problem.get_problem_data(cp.SCS, solver_opts={"use_quad_obj": False})`` returns
``data`` with keys ``"A"``, ``"b"``, ``"c"``, ``"dims"`` (attributes ``zero``, ``nonneg``,
``soc``, ``psd``, ``exp``, ``p3d``) and ``cp.settings.PARAM_PROB``; the last inverse-data entry
holds ``"offset"`` and ``"var_id"`` (a dict, or ``.inverse_data`` of ``SolverInverseData``);
the SCS reduction's ``invert`` takes SCS's raw result dict (``x``, ``y``, ``info``); every
other reduction has ``invert(Solution, inverse_data)``; and ``Problem.unpack(Solution)``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.problems.problem import SolverStats
from cvxpy.reductions.cvx_attr2constr import CvxAttr2Constr
from cvxpy.reductions.solution import Solution

from cvxdp.errors import CvxdpError, UnsupportedProblemError
from cvxdp.jordan import Orthant, Product, SpinFactor, SymmetricMatrices
from cvxdp.specs import as_spec_tuple
from cvxdp.transform.exp_cones import exp_apart
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram, with_exp_tail
from cvxdp.transform.sensitivity import propagate
from cvxdp.transform.support import cone_reasons, scs_problem_data, unsupported_reasons

__all__ = ["to_scp", "from_scp", "released_values", "set_no_solution", "build_cone",
           "ScpInverse", "user_columns", "variables_at", "public_violation_at",
           "extended_value"]


@dataclass(frozen=True)
class ScpInverse:
    """What :func:`from_scp` needs: the CVXPY problem, its solving chain and inverse data."""

    problem: cp.Problem
    chain: Any
    inverse_data: list[Any]
    var_id: int
    param_prob: Any


def build_cone(dims: ConeDims) -> Any:
    """The Euclidean Jordan algebra of the non-zero rows of K, in SCS's block order.

    ``Product([Orthant(nonneg), SpinFactor(q) for q in soc..., SymmetricMatrices(r) for r in
    psd...])``; empty blocks are left out.  Returns None when K has no non-zero rows (an
    equality-only model).
    """
    blocks: list[Any] = []
    if dims.nonneg:
        blocks.append(Orthant(dims.nonneg))
    blocks += [SpinFactor(q) for q in dims.soc]
    blocks += [SymmetricMatrices(r) for r in dims.psd]
    if not blocks:
        return None
    return Product(blocks)


def _solver_inverse(entry: Any) -> dict[str, Any]:
    # CVXPY >= 1.7 wraps the solver's inverse data in SolverInverseData; older ones use a dict.
    return entry.inverse_data if hasattr(entry, "inverse_data") else entry


def _dims_of(cvx_dims: Any) -> ConeDims:
    return ConeDims(
        zero=int(cvx_dims.zero),
        nonneg=int(cvx_dims.nonneg),
        soc=tuple(int(q) for q in cvx_dims.soc),
        psd=tuple(int(r) for r in cvx_dims.psd),
    )


def to_scp(problem: cp.Problem, private: Any = None) -> SymmetricConeProgram:
    """Write a CVXPY model as the canonical symmetric cone program.

    ``minimise c'x + offset  s.t.  A x + s = b,  s in K``, ``K = zero x orthant x SOC... x
    PSD...`` (SCS's order and coordinates; PSD blocks in scaled lower-triangular svec).  A
    ``Maximize`` model is negated by CVXPY: the program always minimises, and ``scp.sign`` is
    -1 so that the user's objective value is ``sign * (c'x + offset)``.

    Parameters
    ----------
    problem : cvxpy.Problem
        A DCP model with continuous variables whose parameters all have finite values.
    private : privacy spec, sequence of specs, or None
        ``cvxdp.ConstraintPrivacy`` / ``ScalarPrivacy`` / ``ObjectivePrivacy`` /
        ``ConstraintSetPrivacy``.  When given, each spec is checked against the model and the
        bounds on the change of the canonical data are stored in ``scp.sensitivity``
        (:class:`cvxdp.transform.SensitivityBounds`).

    Returns
    -------
    SymmetricConeProgram
        With ``cone`` = :func:`build_cone` ``(dims)``, ``inverse`` = :class:`ScpInverse`,
        ``meta["param_prob"]`` = CVXPY's parametric cone program.

    Notes
    -----
    The program is compiled once per problem, specs and parameter values: a second call with
    the same specs (the same objects) while every parameter holds the same value returns the
    same program (kept on the problem, as CVXPY keeps its own compiled map), so the checks
    of the entry point, the mechanism and the reference share one compile.  Treat the
    returned program as read-only.

    Raises
    ------
    UnsupportedProblemError
        Exponential / power cones (names the atom), integer variables, non-DCP models, unset
        parameters, NaN/inf data.
    PrivacySpecError
        A spec whose parameter is not in the model, enters where the setting does not allow,
        enters non-linearly (not DPP), or carries symmetric/PSD/diag/sparsity attributes.
    """
    key = _compile_key(problem, private)
    memo = getattr(problem, _MEMO, None)
    if key is not None and memo is not None and _same_key(memo[0], key):
        return memo[1]
    if key is not None and memo is not None and not key[0] and memo[0][1] == key[1]:
        # the same program compiled with specs: without them (no sensitivity bounds)
        return dataclasses.replace(memo[1], sensitivity=None)
    scp = _compile(problem, private)
    if key is not None:
        setattr(problem, _MEMO, (key, scp))
    return scp


#: attribute of a problem holding its last compiled program and the key it was compiled for
#: (the problem's lifetime, as CVXPY's own ``Problem._cache``)
_MEMO = "_cvxdp_compiled"


def _compile_key(problem: cp.Problem, private: Any) -> tuple[Any, ...] | None:
    """What a compiled program depends on: the specs (by identity) and every parameter's
    value (a digest of its bytes); None when it cannot be formed (the compile then reports)."""
    try:
        specs = as_spec_tuple(private)
    except CvxdpError:
        return None
    digest = hashlib.blake2b(digest_size=16)
    for p in problem.parameters():
        v = p.value
        if v is None:
            return None
        arr = np.ascontiguousarray(np.asarray(v.toarray() if sp.issparse(v) else v))
        if arr.dtype == object:
            return None
        digest.update(str((p.id, arr.shape, arr.dtype.str)).encode())
        digest.update(arr.tobytes())
    return (specs, digest.hexdigest())


def _same_key(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return (len(a[0]) == len(b[0]) and all(x is y for x, y in zip(a[0], b[0], strict=True))
            and a[1] == b[1])


def _compile(problem: cp.Problem, private: Any) -> SymmetricConeProgram:
    """:func:`to_scp` without the memo."""
    reasons = unsupported_reasons(problem, compile=False)
    if reasons:
        raise UnsupportedProblemError("cannot solve this model privately: " + " ".join(reasons))
    try:
        data, chain, inverse_data = scs_problem_data(problem)
    except cp.error.SolverError as err:
        raise UnsupportedProblemError(f"CVXPY could not compile the model: {err}") from err
    reasons = cone_reasons(problem, data["dims"])
    if reasons:
        raise UnsupportedProblemError("cannot solve this model privately: " + " ".join(reasons))
    solver_inv = _solver_inverse(inverse_data[-1])
    A = sp.csc_matrix(data["A"], dtype=float)
    b = np.asarray(data["b"], dtype=float).ravel()
    c = np.asarray(data["c"], dtype=float).ravel()
    offset = float(np.asarray(solver_inv["offset"]).sum())
    if not (np.all(np.isfinite(A.data)) and np.all(np.isfinite(b)) and np.all(np.isfinite(c))
            and np.isfinite(offset)):
        raise UnsupportedProblemError(
            "the compiled cone program contains NaN or inf; check the model's data."
        )
    for key in ("lower_bounds", "upper_bounds"):
        if data.get(key) is not None:  # pragma: no cover - SCS takes no variable bounds
            raise UnsupportedProblemError(
                f"CVXPY passed variable {key} to the solver; cvxdp expects them as constraints."
            )
    dims = _dims_of(data["dims"])
    n_exp = int(getattr(data["dims"], "exp", 0) or 0)
    param_prob = data[cp.settings.PARAM_PROB]
    _record_reduced_parameters(param_prob, chain)
    sign = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    inverse = ScpInverse(problem, chain, list(inverse_data), int(solver_inv["var_id"]),
                         param_prob)
    scp = SymmetricConeProgram(
        A=A, b=b, c=c, offset=offset, dims=dims, cone=build_cone(dims), sign=sign,
        inverse=inverse,
        meta={"param_prob": param_prob, "reductions": [type(r).__name__ for r in
                                                       chain.reductions]},
    )
    if private is not None:
        scp.sensitivity = propagate(scp, private)
    if n_exp:
        scp = exp_apart(problem, scp, n_exp)
        scp.cone = build_cone(scp.dims)
    return scp


def _invert(inv: ScpInverse, scp: SymmetricConeProgram, x: np.ndarray, status: str,
            canon_value: float) -> Any:
    """CVXPY's ``Solution`` of the user's problem at the cone point ``x``.

    The point enters the chain where the solver would: SCS's own ``invert`` turns a raw SCS
    result into a cvxpy Solution (this keeps every reduction's expectations, e.g. CVXPY < 1.7
    needs a dual value for every canonical constraint; they are zeros here and the callers keep
    none of them), then every reduction's ``invert`` runs in reverse order.
    """
    info = {"status_val": 1, "statusVal": 1, "iter": 0, "solve_time": 0.0, "solveTime": 0.0,
            "setup_time": 0.0, "setupTime": 0.0, "pobj": canon_value}
    A, b, _ = with_exp_tail(scp)
    s = b - A @ x
    lift = scp.meta.get("exp_lift")
    if lift is not None:  # CVXPY's own rows and variables (exp_cones.py)
        x = x[:lift.n0]
        s = np.concatenate([s[lift.row_map()[:lift.cut]], s[scp.m:]])
    raw = {"x": x, "y": np.zeros(s.size), "s": s, "info": info}
    solution = inv.chain.reductions[-1].invert(raw, inv.inverse_data[-1])
    solution.status = status
    solution.opt_val = canon_value
    solution.attr = {}
    for reduction, data in zip(reversed(inv.chain.reductions[:-1]),
                               reversed(inv.inverse_data[:-1]), strict=True):
        solution = reduction.invert(solution, data)
    return solution


def released_values(problem: cp.Problem, scp: SymmetricConeProgram, x: np.ndarray
                    ) -> dict[str, np.ndarray | None]:
    """The user's variables' values at the cone-program point ``x``, by name, WITHOUT writing
    anything into ``problem`` (the private paths hand them to :func:`cvxdp.writeback.
    write_back`, the one write).

    The point enters CVXPY's inverse chain where the solver's result would (SCS's ``invert``),
    so every reduction maps it back exactly as after ``problem.solve()``.
    """
    inv = scp.inverse
    if not isinstance(inv, ScpInverse) or inv.problem is not problem:
        raise ValueError("released_values: `problem` is not the problem this cone program was "
                         "built from; call to_scp(problem) again.")
    x = np.asarray(x, dtype=float).ravel()
    if x.shape != (scp.n,) or not np.all(np.isfinite(x)):
        raise ValueError(f"released_values: x must be a finite array of shape ({scp.n},).")
    solution = _invert(inv, scp, x, cp.OPTIMAL_INACCURATE, 0.0)
    out: dict[str, np.ndarray | None] = {}
    for var in problem.variables():
        val = solution.primal_vars.get(var.id)
        out[var.name()] = None if val is None else np.asarray(val, dtype=float).reshape(
            var.shape)
    return out


def _variables_swapped(problem: cp.Problem, primal: dict[str, Any]) -> dict[int, Any] | None:
    """``id(variable) -> Constant(value)`` for every variable of ``problem`` (values by name,
    for ``tree_copy``); None when one has no value."""
    swap: dict[int, Any] = {}
    for var in problem.variables():
        val = primal.get(var.name())
        if val is None:
            return None
        swap[id(var)] = cp.Constant(np.asarray(val, dtype=float).reshape(var.shape))
    return swap


def objective_at(problem: cp.Problem, primal: dict[str, Any],
                 parameters: dict[str, np.ndarray]) -> float | None:
    """The user's objective (its own expression, in the user's sense) at the variables'
    values ``primal`` (by name) with the parameters named in ``parameters`` at those values
    (a release) and every other parameter at its own value; None when a variable has no value
    or the expression has none; ``+-inf`` outside the objective's domain
    (:func:`extended_value`).  Nothing is written into ``problem``: the leaves are swapped in a
    copy of the expression tree."""
    swap = _variables_swapped(problem, primal)
    if swap is None:
        return None
    for par in problem.parameters():
        if par.name() in parameters:
            swap[id(par)] = cp.Constant(
                np.asarray(parameters[par.name()], dtype=float).reshape(par.shape))
    return extended_value(problem.objective.expr.tree_copy(swap),
                          isinstance(problem.objective, cp.Maximize))


#: a domain constraint of the objective violated by more than this puts the point outside it
DOMAIN_TOLERANCE = 1e-6


def extended_value(expr: Any, maximise: bool) -> float | None:
    """An objective's value at its variables' values in CVXPY's extended-value sense: a convex
    function is ``+inf`` outside its domain and a concave one ``-inf``, so a minimised objective
    is ``+inf`` and a maximised one ``-inf`` where a domain constraint of its atoms
    (``expr.domain``: ``log``'s argument ``>= 0``, ``inv_pos``'s, ...) is violated by more than
    :data:`DOMAIN_TOLERANCE` or the value is not finite (numpy's ``log`` of a negative number is
    ``nan``; ``inv_pos`` of one is finite).  None when the expression has no value."""
    value = expr.value
    if value is None:
        return None
    value = float(np.asarray(value, dtype=float))
    outside = not np.isfinite(value)
    for con in () if outside else expr.domain:
        v = con.violation()
        if v is not None and np.size(v) and float(np.max(v)) > DOMAIN_TOLERANCE:
            outside = True
            break
    if outside:
        return -np.inf if maximise else np.inf
    return value


def public_violation_at(problem: cp.Problem, primal: dict[str, Any],
                        private_ids: set[int], skip_private: bool = False) -> float | None:
    """The largest violation of the user's constraints (their own expressions) at the
    variables' values ``primal`` (by name); None when a variable has no value, a violation
    cannot be evaluated, or a constraint reads a parameter in ``private_ids`` (fail closed: its
    violation would read private data) -- with ``skip_private``, such a constraint is left out
    instead (the largest over the public ones; a mechanism bounds the others).  Nothing is
    written into ``problem``: the variables are swapped for constants in copies of the
    constraints."""
    swap = _variables_swapped(problem, primal)
    if swap is None:
        return None
    worst = 0.0
    for con in problem.constraints:
        if any(p.id in private_ids for p in con.parameters()):
            if skip_private:
                continue
            return None
        v = con.tree_copy(swap).violation()
        if v is None:
            return None
        v = np.asarray(v, dtype=float)
        if v.size:
            worst = max(worst, float(np.max(v)))
    return worst if np.isfinite(worst) else None


def user_columns(scp: SymmetricConeProgram) -> np.ndarray:
    """``(n,)`` bool: the cone program's columns that hold entries of the user's variables
    (the rest are variables CVXPY or the transform added: epigraph and hypograph variables,
    lifted cone coordinates).  Public structure only: one probe ``x_j = j + 1`` through
    CVXPY's inverse chain, read back from the variables' values."""
    inv = scp.inverse
    out = np.zeros(scp.n, dtype=bool)
    if not isinstance(inv, ScpInverse):
        return out
    try:
        values = released_values(inv.problem, scp, np.arange(1.0, scp.n + 1.0))
    except (ValueError, KeyError, IndexError):
        return np.ones(scp.n, dtype=bool)  # untraceable: treat every column as the user's
    for v in values.values():
        if v is None:
            continue
        k = np.rint(np.asarray(v, dtype=float)).astype(np.int64).ravel() - 1
        out[k[(k >= 0) & (k < scp.n)]] = True
    return out


def variables_at(scp: SymmetricConeProgram, columns: np.ndarray) -> list[str]:
    """Names of the user's variables that hold some of the cone program's ``columns`` (public
    structure only: a unit probe through CVXPY's inverse chain), for messages: a variable the
    user did not name (CVXPY's ``var<id>``) is described by its shape too; columns of the
    variables CVXPY adds (epigraphs) map to none.  Empty when the model cannot be traced."""
    inv = scp.inverse
    if not isinstance(inv, ScpInverse) or len(columns) == 0:
        return []
    probe = np.zeros(scp.n)
    probe[np.asarray(columns, dtype=int)] = 1.0
    try:
        values = released_values(inv.problem, scp, probe)
    except (ValueError, KeyError, IndexError):
        return []
    shapes = {v.name(): (v.shape, v.name() == f"var{v.id}") for v in inv.problem.variables()}
    out = []
    for name, v in values.items():
        if v is None or not np.any(v != 0):
            continue
        shape, unnamed = shapes.get(name, ((), False))
        # CVXPY's automatic name (var<id>) is nowhere in the user's code: say its shape
        out.append(f"{name} (a {tuple(shape)} variable without a name; pass name= to "
                   "cp.Variable)" if unnamed else name)
    return out


def from_scp(
    problem: cp.Problem,
    scp: SymmetricConeProgram,
    x: np.ndarray,
    status: str = "optimal_inaccurate",
    value: float | None = None,
) -> float | None:
    """Map a cone-program point ``x`` back to the user's variables through CVXPY's chain.

    Sets ``variable.value`` for every variable of ``problem``, ``problem.value`` (the user's
    objective at those values, so the sign of a maximisation is right) and
    ``problem.status = status``, as after ``problem.solve()``.  Dual values are not set.

    Parameters
    ----------
    problem : cvxpy.Problem
        The problem ``scp`` was built from (``scp.inverse.problem``).
    scp : SymmetricConeProgram
    x : ndarray, shape (scp.n,)
        A point of the cone program (need not be feasible).
    status : str
        A CVXPY status with a solution present (``"optimal"``, ``"optimal_inaccurate"``).
    value : float, optional
        The value to store as ``problem.value``.  By default it is the user's objective at the
        mapped variables -- which reads the objective's parameters.  Required when
        ``scp.sensitivity`` says the objective (``c`` or its constant term) is private: pass
        the value computed from released quantities, so that nothing computed from the private
        objective reaches ``problem.value``.

    Returns
    -------
    float or None
        ``problem.value``.

    Raises
    ------
    ValueError
        If ``x`` has the wrong shape or non-finite entries, ``problem`` is not the one ``scp``
        came from, ``status`` carries no solution, or the objective is private and no
        ``value`` was given.
    """
    inv = scp.inverse
    if not isinstance(inv, ScpInverse):
        raise ValueError("scp has no CVXPY inverse data; build it with cvxdp.transform.to_scp.")
    if inv.problem is not problem:
        raise ValueError("from_scp: `problem` is not the problem this cone program was built "
                         "from; call to_scp(problem) again.")
    x = np.asarray(x, dtype=float).ravel()
    if x.shape != (scp.n,):
        raise ValueError(f"from_scp: x must have shape ({scp.n},), got {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("from_scp: x contains NaN or inf.")
    if status not in cp.settings.SOLUTION_PRESENT:
        raise ValueError(f"from_scp: status must be one of {cp.settings.SOLUTION_PRESENT}, "
                         f"got {status!r}.")
    sb = scp.sensitivity
    if value is None and sb is not None and sb.objective_private:
        # the objective carries private data: its value at x is not a released quantity
        raise ValueError("from_scp: the objective of this cone program is private; pass the "
                         "value computed from released quantities as value=.")
    if value is not None and not np.isfinite(value):
        raise ValueError(f"from_scp: value must be finite, got {value!r}.")
    # canonical (minimised) objective handed to CVXPY's chain: the released value if given,
    # else c'x + offset (public data here)
    canon_value = scp.sign * float(value) if value is not None else float(scp.c @ x + scp.offset)
    solution = _invert(inv, scp, x, status, canon_value)
    problem.unpack(solution)
    for con in problem.constraints:  # no duals are computed: do not leave the zeros behind
        for dual in con.dual_variables:
            dual.save_value(None)
    if value is not None:
        problem._value = float(value)
    problem._solver_stats = SolverStats.from_dict({}, "CVXDP")
    return problem.value


def set_no_solution(problem: cp.Problem, status: str) -> float:
    """Leave ``problem`` as CVXPY does after a solve that found no point (e.g. infeasible).

    Every variable and dual value is cleared, ``problem.status = status`` and ``problem.value``
    is ``+inf`` for an infeasible minimisation, ``-inf`` for an infeasible maximisation (CVXPY's
    convention).  Returns ``problem.value``.
    """
    if status in cp.settings.SOLUTION_PRESENT:
        raise ValueError(f"set_no_solution: {status!r} carries a solution; use from_scp.")
    maximise = isinstance(problem.objective, cp.Maximize)
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        opt_val = -np.inf if maximise else np.inf
    elif status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        opt_val = np.inf if maximise else -np.inf
    else:
        opt_val = None
    problem.unpack(Solution(status, opt_val, {}, {}, {}))
    for var in problem.variables():
        var.save_value(None)
    problem._solver_stats = SolverStats.from_dict({}, "CVXDP")
    return problem.value


def _record_reduced_parameters(param_prob: Any, chain: Any) -> None:
    """Record which reduced parameter stands for each symmetric / PSD / diag / sparse one.

    CVXPY's ``CvxAttr2Constr`` replaces a parameter with a dimension-reducing attribute by a
    new parameter holding its upper triangle (symmetric, PSD, NSD), its diagonal (diag) or its
    stored entries (sparsity), in that order (``cvx_attr2constr.lower_value``).  Every reduced
    entry is one entry of the user's matrix, so a per-entry sensitivity carries over unchanged.
    The map ``user id -> reduced Parameter`` is kept on the parametric program as
    ``cvxdp_reduced`` (read by :func:`cvxdp.transform.parameters.parameter_columns`).
    Complex parameters are split into real and imaginary parts elsewhere and stay refused.
    """
    reduced: dict[int, Any] = {}
    for red in chain.reductions:
        if isinstance(red, CvxAttr2Constr):
            for orig, new in getattr(red, "_parameters", {}).items():
                reduced[orig.id] = new
    try:
        param_prob.cvxdp_reduced = reduced
    except AttributeError:  # pragma: no cover - a param_prob that takes no attributes
        pass
