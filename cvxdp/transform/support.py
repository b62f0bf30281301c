"""What cvxdp's cone-program path accepts, and why it refuses the rest.

:func:`unsupported_reasons` lists every reason a model cannot be turned into a symmetric cone
program (empty list: supported).  It never raises for a bad model; ``to_scp`` raises
:class:`cvxdp.UnsupportedProblemError` with the joined reasons.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.transform.scs_format import PermutingScs

__all__ = ["quoted", "unsupported_reasons", "cone_reasons", "exp_cone_reason", "EXP_CONE_ATOMS",
           "POW_CONE_ATOMS", "non_dpp_terms", "non_finite_parameters", "scs_problem_data"]

#: atoms whose canonical form needs the exponential cone (not a symmetric cone)
EXP_CONE_ATOMS = frozenset({
    "log", "exp", "entr", "log_det", "log_sum_exp", "kl_div", "rel_entr", "logistic", "log1p",
    "xexp", "loggamma", "log_normcdf", "tr_inv", "von_neumann_entr", "quantum_rel_entr",
    "quantum_cond_entr", "OpRelEntrConeQuad",
})
#: atoms that use power cones when asked for the exact (approx=False) form
POW_CONE_ATOMS = frozenset({"Power", "power", "GeoMean", "geo_mean", "Pnorm", "pnorm",
                            "inv_prod", "PowCone3D", "PowConeND"})

_RELATIVE_ENTROPY_HINT = ("relative entropy has no symmetric-cone form; to keep p close to a "
                          "reference q use a norm, cp.norm(p - q, 1) (total variation, an LP "
                          "form) or cp.sum_squares(p - q)")

_EXP_HINT = {
    "log_det": "use cvxdp.john_ellipsoid(A) for the John ellipsoid, or maximise "
               "cp.geo_mean of the diagonal of a triangular factor (an SOC form)",
    "kl_div": _RELATIVE_ENTROPY_HINT,
    "rel_entr": _RELATIVE_ENTROPY_HINT,
    "exp": "exp has no symmetric-cone form; cp.power(x, 2) or cp.pos(x) are SOC / LP "
           "surrogates where the model allows",
    "log": "maximise cp.geo_mean(...) instead of a sum of logs (same maximiser, SOC form)",
    "entr": "entropy has no symmetric-cone form; use a quadratic or linear surrogate",
    "log_sum_exp": "replace by cp.max(...) (an LP form) if an approximation is acceptable",
    "logistic": "a loss summed over the rows of a data matrix (logistic regression) is a "
                "learning model: make X and y cp.Parameters and pass cvxdp.RowPrivacy(X, y, "
                "row_bound=..., label_bound=...), one person per row; the learning path "
                "solves it, exponential cone included (docs/learning.md)",
}


_DISPLAY = {"Power": "power", "GeoMean": "geo_mean", "Pnorm": "pnorm"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _atom_names(problem: cp.Problem) -> set[str]:
    names: set[str] = set()
    for expr in [problem.objective, *problem.constraints]:
        for atom in expr.atoms():
            names.add(getattr(atom, "__name__", type(atom).__name__))
    return names


def _constraint_types(problem: cp.Problem) -> set[str]:
    return {type(c).__name__ for c in problem.constraints}


def _exp_hint(atom: str, problem: cp.Problem) -> str:
    """The rewrite hint of an exponential-cone atom.  ``log_det`` and ``log``: the geo_mean
    form has the same maximiser only when the log term is the whole objective (a monotone
    transform of it); with other terms beside it there is no exact symmetric-cone form."""
    if atom in ("log_det", "log") and not (isinstance(problem.objective, cp.Maximize)
                                           and _whole(problem.objective.expr, atom)):
        return (f"{atom} beside other terms of the objective has no exact symmetric-cone "
                "form (the geometric-mean rewrite keeps the maximiser only when the log term "
                "is the whole objective)" + ("; for the John ellipsoid use "
                                             "cvxdp.john_ellipsoid(A)" if atom == "log_det"
                                             else ""))
    return _EXP_HINT[atom]


def _whole(expr: Any, atom: str) -> bool:
    """``expr`` is ``atom`` of an affine argument, up to a full sum and positive scalar
    factors (``sum(log(x))``, ``2 * log_det(X)``)."""
    while True:
        if type(expr).__name__ == atom:
            return all(a.is_affine() for a in expr.args)
        if type(expr).__name__ == "Sum":
            expr = expr.args[0]
            continue
        const = [a for a in expr.args if a.is_constant() and not a.parameters()]
        rest = [a for a in expr.args if not (a.is_constant() and not a.parameters())]
        if (type(expr).__name__ in ("MulExpression", "multiply") and len(const) == 1
                and const[0].size == 1 and float(const[0].value) > 0 and len(rest) == 1):
            expr = rest[0]
            continue
        return False


def exp_cone_reason(problem: cp.Problem, n_exp: int, *, private: bool,
                    private_ids: frozenset[int] = frozenset()) -> str:
    """Why exponential cones stop a solver: ``private`` True -- private data enter a cone's
    middle coordinate, where the cone is not monotone (:mod:`cvxdp.transform.exp_cones` lifts
    the other two); False -- the solver (the MWU) runs on symmetric cones only.  With the
    private parameters' ids, the atoms whose argument holds one are named, with the exact
    rewrite that moves the data into a linear equality (structure only)."""
    atoms = _atom_names(problem) | _constraint_types(problem)
    found = sorted(a for a in atoms if a in EXP_CONE_ATOMS or a == "ExpCone")
    hints = "; ".join(f"{a}: {_exp_hint(a, problem)}" for a in found if a in _EXP_HINT)
    what = ", ".join(found) if found else "an atom of the model"
    head = (f"the model uses {what}, which CVXPY writes with the exponential cone "
            f"({_plural(n_exp, 'cone')})")
    named = _middle_arguments(problem, private_ids) if private else []
    if named:
        where = "; ".join(text for text, _, _ in named)
        alone = sorted({atom for _, atom, data_alone in named if data_alone})
        mixed = any(not data_alone for _, _, data_alone in named)
        text = (head + f", and private data enter the argument of {where}: the middle "
                "coordinate v of a cone cl{(u, v, w): v exp(u / v) <= w}, where the cone is "
                "not monotone, so no tightening keeps the true constraint.")
        if mixed:
            text += (" Rewrite it exactly with a new variable for the argument, e.g. entr(P @ "
                     "x) as entr(z) with z = cp.Variable(m) and the constraint z == P @ x: the "
                     "private data then sit in a linear equality, which perturbation solves (a "
                     "band around the noisy row).")
        return text + (_data_alone_hint(alone) if alone else "")
    if private:
        return (head + ", and private data enter the middle coordinate v of a cone "
                "cl{(u, v, w): v exp(u / v) <= w} (the argument of entr, the first argument "
                "of kl_div / rel_entr), where the cone is not monotone, so no tightening "
                "keeps the true constraint (private data in u or w are solved: log(a + x), "
                "exp(x - c), log_sum_exp(s - x), logistic(X @ w), kl_div(p, q) with q "
                "private)" + (f" ({hints})" if hints else "")
                + ". Move the private data out of that argument, or rewrite the term with "
                "linear, second-order-cone or PSD constraints.")
    return (head + "; that is not a symmetric cone, so the noisy-oracle MWU (Song, Xue & "
            "Zhang 2025) cannot run on it. mechanism='perturbation' (or the default 'auto') "
            "solves models whose exponential cones hold public data only.")


#: exponential-cone atoms whose first argument (the only one of entr) is the cone's middle
#: coordinate
_MIDDLE_ARGUMENT = frozenset({"entr", "kl_div", "rel_entr"})


def _middle_arguments(problem: cp.Problem, private_ids: frozenset[int]
                      ) -> list[tuple[str, str, bool]]:
    """``("entr (in the objective; it reads P)", "entr", alone)`` for each atom whose
    middle-coordinate argument reads a private parameter, ``alone`` when that argument holds no
    variable (data alone: ``kl_div(q, x)`` with an empirical ``q``); structure and names only."""
    out: list[tuple[str, str, bool]] = []
    parts = [("the objective", problem.objective)] + [
        (f"constraint {i}", c) for i, c in enumerate(problem.constraints)]
    for where, expr in parts:
        stack = [expr]
        while stack:  # the expression's tree, every node once
            node = stack.pop()
            stack.extend(getattr(node, "args", []))
            name = type(node).__name__
            if name not in _MIDDLE_ARGUMENT:
                continue
            params = sorted({p.name() for p in node.args[0].parameters()
                             if p.id in private_ids})
            text = f"{name} (in {where}; it reads {', '.join(params)})"
            if params and text not in [t for t, _, _ in out]:
                out.append((text, name, not node.args[0].variables()))
    return out


#: the exact rewrite of a middle-coordinate atom whose first argument is private data alone
#: (``q``, no variable): its terms in ``q`` only are a constant, and ``q`` is left as the
#: coefficient of ``log`` of the second argument (an objective coefficient)
_DATA_ALONE = {
    "kl_div": "sum(kl_div(q, x)) = sum(q log q - q) - q @ cp.log(x) + cp.sum(x)",
    "rel_entr": "sum(rel_entr(q, x)) = sum(q log q) - q @ cp.log(x)",
    "entr": "entr(q) of data alone is a constant",
}


def _data_alone_hint(atoms: list[str]) -> str:
    rewrites = "; ".join(_DATA_ALONE[a] for a in atoms)
    text = (f" The argument is private data alone, so the exact rewrite expands the atom: "
            f"{rewrites}.")
    relative = [a for a in atoms if a != "entr"]
    if relative:
        forms = " or ".join({"kl_div": "-q @ cp.log(x) + cp.sum(x) (kl_div)",
                             "rel_entr": "-q @ cp.log(x) (rel_entr)"}[a] for a in relative)
        text += (f" The terms in the data alone are a constant: minimise {forms} instead (in "
                 "a constraint, move the constant to the right-hand side as a private "
                 "cp.Parameter of its own, with its own spec), and declare q with "
                 "cvxdp.ObjectivePrivacy(q, sensitivity=D): it is then an objective "
                 "coefficient, which objective perturbation solves.")
    if "entr" in atoms:
        text += " Drop a constant entr(q) from the objective (it does not move the minimiser)."
    return text


def cone_reasons(problem: cp.Problem, dims: Any) -> list[str]:
    """Reasons from CVXPY's cone sizes: power cones (not symmetric cones, and no public
    exponent form is kept).  Exponential cones are kept (public rows only:
    :func:`exp_cone_reason`)."""
    out = []
    n_pow = len(getattr(dims, "p3d", []) or []) + len(getattr(dims, "pnd", []) or [])
    atoms = _atom_names(problem) | _constraint_types(problem)
    if n_pow:
        found = sorted({_DISPLAY.get(a, a) for a in atoms if a in POW_CONE_ATOMS})
        what = ", ".join(found) if found else "an atom of the model"
        out.append(
            f"the model uses {what} in a form CVXPY writes with power cones "
            f"({_plural(n_pow, 'cone')}), which are not symmetric cones. Use the rational "
            "SOC approximation (the default approx=True of cp.power / cp.geo_mean / "
            "cp.pnorm) instead."
        )
    return out


def _bad_values(value: Any) -> bool:
    arr = value.toarray() if hasattr(value, "toarray") else np.asarray(value)
    if not np.issubdtype(arr.dtype, np.number):
        arr = arr.astype(float)
    return not np.all(np.isfinite(arr))


def non_finite_parameters(problem: cp.Problem, skip: frozenset[int] = frozenset()
                          ) -> list[str]:
    """Names of ``problem``'s parameters (other than those in ``skip``, by id) whose values
    hold NaN or inf."""
    return [p.name() for p in problem.parameters()
            if p.id not in skip and p.value is not None and _bad_values(p.value)]


def unsupported_reasons(problem: Any, *, compile: bool = True,
                        private: frozenset[int] = frozenset()) -> list[str]:
    """Every reason ``problem`` is not a symmetric cone program cvxdp can work on.

    Parameters
    ----------
    problem : cvxpy.Problem
    compile : bool
        Also compile the model with CVXPY (``get_problem_data``) to find exponential / power
        cones.  The cheap checks run first and compilation is skipped if they already fail.
    private : frozenset of int
        Ids of the private parameters: their values are not checked (they are mapped into
        the public domain before any solve, never refused).

    Returns
    -------
    list of str
        Empty when the model is supported; otherwise one sentence per cause, each saying
        what to change.
    """
    if not isinstance(problem, cp.Problem):
        return [f"expected a cvxpy.Problem, got {type(problem).__name__}."]
    reasons: list[str] = []
    ints = [v.name() for v in problem.variables()
            if v.attributes.get("boolean") or v.attributes.get("integer")]
    if ints:
        reasons.append(
            f"variable(s) {', '.join(ints)} are integer/boolean; cvxdp solves continuous "
            "convex models only. Drop integer=/boolean= (solve the relaxation) or solve "
            "non-privately."
        )
    unset = [p.name() for p in problem.parameters() if p.value is None]
    if unset:
        reasons.append(
            f"parameter(s) {', '.join(unset)} have no value; set parameter.value = data "
            "before solving."
        )
    # a private parameter's values are never read here: non-finite entries are mapped into
    # the public domain (transform.domain.clipped_values), not refused
    nonfinite = non_finite_parameters(problem, skip=private)
    if nonfinite:
        reasons.append(
            f"parameter(s) {', '.join(nonfinite)} contain NaN or inf; clean the data "
            "(cvxdp never solves on non-finite data)."
        )
    if any(_bad_values(c.value) for c in problem.constants()):
        reasons.append("the model has a constant containing NaN or inf; clean the data.")
    if not problem.is_dcp():
        extra = ""
        if problem.is_dgp():
            extra = " It is DGP (geometric programming): cvxdp does not support gp=True models."
        elif problem.is_dqcp():
            extra = " It is quasiconvex (DQCP): cvxdp does not support qcp=True models."
        reasons.append(
            "the model is not DCP (problem.is_dcp() is False), so CVXPY cannot write it as a "
            "convex cone program; follow CVXPY's DCP rules (https://www.cvxpy.org/tutorial/"
            "dcp/)." + extra
        )
    if reasons or not compile:
        return reasons
    try:
        with warnings.catch_warnings():
            # CVXPY's advice about re-solving a non-DPP model is not ours to pass on here
            warnings.filterwarnings("ignore", message=".*not DPP.*")
            data, _, _ = scs_problem_data(problem)
    except Exception as err:  # noqa: BLE001 - report CVXPY's own reason
        return [f"CVXPY could not compile the model: {err}"]
    return cone_reasons(problem, data["dims"])


class _ScsAfterCanonicalisation(PermutingScs):
    """:class:`PermutingScs` (CVXPY's SCS interface) with the pre-canonicalisation check that
    the model has constraints turned off (:func:`scs_problem_data`); the data and the inverse
    chain are SCS's."""

    REQUIRES_CONSTR = False

    def name(self) -> str:
        return "CVXDP_SCS_UNCONSTRAINED"


#: one instance each: CVXPY keys its compiled-chain cache on the solver object
_SCS = PermutingScs()
_SCS_UNCONSTRAINED = _ScsAfterCanonicalisation()


def scs_problem_data(problem: cp.Problem) -> tuple[dict, Any, Any]:
    """``problem.get_problem_data(cp.SCS, use_quad_obj=False)``: the one compile of a model
    into SCS's cone program ``(data, chain, inverse_data)``.

    The solver is :class:`~cvxdp.transform.scs_format.PermutingScs`, SCS's interface whose
    constraint formatting moves the tensor's rows instead of multiplying a permutation matrix
    into it (the same data). CVXPY (1.9) decides whether SCS applies before canonicalising,
    and reads a model without constraints whose objective's atoms add their cones only when
    canonicalised (``pos``, ``maximum``, ``max``: quantile regression, minimax) as having no
    constraints, which SCS requires; it then refuses ("The solver SCS cannot solve this
    problem") a model it canonicalises into ordinary nonnegative rows. For such a model the
    same chain is built with that check off. Any other refusal is CVXPY's own, with its text
    for ``cp.SCS``.
    """
    opts = {"use_quad_obj": False}
    try:
        return problem.get_problem_data(_SCS, solver_opts=opts)
    except cp.error.SolverError:
        if problem.constraints:
            return problem.get_problem_data(cp.SCS, solver_opts=opts)
        return problem.get_problem_data(_SCS_UNCONSTRAINED, solver_opts=opts)


#: CVXPY's internal atoms, by the function a user writes
_USER_ATOMS = {"PowerApprox": "power", "PnormApprox": "norm", "Pnorm": "norm"}


def _masked(e: Any) -> Any:
    """A copy of ``e`` whose constants with more than one entry are stand-in parameters named
    by their shape (CVXPY prints a constant by its values)."""
    if isinstance(e, cp.Constant):
        if e.size <= 1:
            return e
        return cp.Parameter(e.shape, name=f"<constant of shape {tuple(e.shape)}>")
    if not getattr(e, "args", None):
        return e
    return e.copy([_masked(a) for a in e.args])


def quoted(e: Any, limit: int = 80) -> str:
    """A user's expression or constraint as CVXPY prints it, for messages: Parameter and
    Variable names (never their values), constants with more than one entry by their shape
    (a model's numpy array may hold one value per person), CVXPY's internal atom names replaced
    by the user's, cut at ``limit`` characters."""
    try:
        text = str(_masked(e))
    except (TypeError, ValueError, AttributeError, IndexError):  # an atom refusing the stand-in
        text = f"{type(e).__name__}{tuple(getattr(e, 'shape', ()))}"
    for internal, user in _USER_ATOMS.items():
        text = text.replace(internal + "(", user + "(")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def non_dpp_terms(problem: cp.Problem, limit: int = 3) -> list[str]:
    """The smallest sub-expressions that break DPP: each is not DPP while its arguments are.

    Used to name the cause when a private parameter cannot be traced through CVXPY's
    compilation (e.g. ``gamma * cp.sum_squares(F.T @ w)`` with two parameters multiplied).
    Each entry is the sub-expression's text (:func:`quoted`), cut at 80 characters; at most
    ``limit``.
    """
    found: list[str] = []
    for expr in _dpp_culprits(problem):
        if len(found) >= limit:
            break
        found.append(quoted(expr))
    return found


def untraced_affine_atoms(problem: cp.Problem) -> list[str]:
    """Names of the affine atoms (``kron``, ...) among :func:`non_dpp_terms`' culprits: a
    parameter inside them enters affinely, but CVXPY's DPP rules do not keep it a parameter."""
    names: list[str] = []
    for expr in _dpp_culprits(problem):
        name = type(expr).__name__
        if name not in names and _affine(expr):
            names.append(name)
    return names


def _dpp_culprits(problem: cp.Problem) -> Iterator[Any]:
    """The sub-expressions that are not DPP while their arguments are, depth first from the
    objective, then each constraint."""

    def visit(expr: Any) -> Iterator[Any]:
        if not getattr(expr, "args", None):
            return
        bad = [a for a in expr.args if not _dpp(a)]
        if bad:
            for a in bad:
                yield from visit(a)
        elif not _dpp(expr):
            yield expr

    for root in [problem.objective.expr, *problem.constraints]:
        if not _dpp(root):
            yield from visit(root)


def _affine(expr: Any) -> bool:
    """Whether ``expr`` is affine jointly in its variables AND parameters (each parameter
    swapped for a variable in a copy): ``kron(K, B)`` is, ``p * q`` and ``x * norm(a)`` are
    not."""
    try:
        swap = {id(p): cp.Variable(p.shape) for p in expr.parameters()}
        return bool(swap) and bool(expr.tree_copy(swap).is_affine())
    except (AttributeError, TypeError, ValueError, NotImplementedError, cp.error.DCPError):
        return False


def _dpp(expr: Any) -> bool:
    try:
        return bool(expr.is_dcp(dpp=True))
    except (AttributeError, TypeError, NotImplementedError):  # no DPP analysis: not the culprit
        return True
