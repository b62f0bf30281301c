"""Sensitivity of the canonical cone program to the declared private parameters.

CVXPY's parametric cone program (``data[cp.settings.PARAM_PROB]``, a DPP model) stores the map
from the parameter vector ``theta`` to the canonical data as two sparse tensors:

* ``param_prob.A``, shape ``(m (n + 1), p + 1)``: ``vec_F([-A_scs | b]) = T_A [theta; 1]``;
* ``param_prob.q`` (``param_prob.c`` in CVXPY < 1.6), shape ``(n + 1, p + 1)``:
  ``[c; offset] = T_q [theta; 1]``

(``vec_F`` stacks columns; SCS's ``A`` is the negated first block).  The map is linear in
``theta``, so if every entry of the declared parameter moves by at most ``Delta`` (l-inf over the
parameter's entries), each canonical entry ``e`` moves by at most

    ``|Delta e| = |sum_k T[e, k] Delta theta_k| <= Delta * sum_{k in param} |T[e, k]|``,

the sum of absolute coefficients (triangle inequality; exact when the entry depends on one
parameter entry, e.g. ``A @ x <= b`` with ``A`` a Parameter).  Several specs add up.

From these entrywise bounds :class:`SensitivityBounds` derives per-row norms.  The bound on a
constraint element in the algebra's spectral norm (the paper's ``Delta_inf``, Def C.6) is the
row's l1 norm of coordinate changes, ``A_row_l1[i]``: that is sound for every block type in
SCS's stored coordinates -- orthant: ``max|z_j| <= sum|z_j|``; spin factor (stored raw
``(t, xbar)``): ``|t| + ||xbar||_2 <= |t| + ||xbar||_1``; symmetric matrices (scaled svec, the
isometry phi): ``||Z||_op <= ||Z||_F = ||svec Z||_2 <= ||svec Z||_1`` -- and for a direct product
the spectral norm is the max over blocks <= the sum.  It also holds for CVXPY's unscaled
upper-triangle coordinates of a symmetric variable (``||Z||_op <=`` the largest absolute row sum
``<=`` the entrywise l1).  A solver that places the variables in an orthant (free variables
split as ``x+ - x-``) may use the tighter ``A_row_inf`` instead (the orthant's spectral norm is
the largest coordinate), and ``A_row_l2`` bounds the Euclidean (phi) norm of the change of a
row whose coordinates are phi-coordinates.

References
----------
Song, Xue & Zhang (2025): Def 4.1 (sensitivities on an EJA), Defs C.3, C.6, C.11, B.1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.affine.affine_atom import AffAtom
from cvxpy.atoms.atom import Atom
from cvxpy.reductions.solvers.conic_solvers.scs_conif import SCS

from cvxdp.citations import SYMMETRIC_CONE_PROGRAMMING as SCP
from cvxdp.errors import PrivacySpecError
from cvxdp.specs import ConstraintSetPrivacy, as_spec_tuple
from cvxdp.transform.parameters import (
    full_value,
    objective_tensor,
    parameter_columns,
    reduced_parameter,
    reduced_value,
)
from cvxdp.transform.scp import SymmetricConeProgram

# parameter_columns, objective_tensor, reduced_parameter, reduced_value and full_value live in
# cvxdp.transform.parameters and stay importable from here
__all__ = ["SensitivityBounds", "propagate", "parameter_columns", "objective_tensor",
           "check_constraint_set_placement", "reduced_parameter", "reduced_value", "full_value"]

_WHERE = {"A": "the constraint matrix A (as a coefficient of a variable)",
          "b": "a constraint's right-hand side b (a constant term)",
          "c": "the objective's coefficients c", "offset": "the objective's constant term",
          "objective": "the objective", "other": "another constraint of the model"}
_FIX = {
    "constraint": "ConstraintPrivacy allows the parameter only as a coefficient of variables in "
                  f"constraints ({SCP}, Def C.6 keeps b and c shared)",
    "scalar": "ScalarPrivacy allows the parameter only in right-hand sides (constant terms of "
              f"constraints; {SCP}, Def C.3)",
    "objective": f"ObjectivePrivacy allows the parameter only in the objective ({SCP}, "
                 "Def C.11)",
    "constraint_set": f"ConstraintSetPrivacy covers only the rows of its own constraint ({SCP}, "
                      "Def B.1: neighbours add or remove one row; Alg. 3 and Thm B.7 keep "
                      "the objective and every other constraint public)",
}
#: where a constraint-side parameter (ConstraintPrivacy / ScalarPrivacy) may ALSO appear: the
#: objective (a fit term ``r = y - X w`` puts the same ``y`` in a cone's rows and, through its
#: linear part, in ``c`` / the constant).  Perturbation releases every entry once and reads all
#: placements from that release; the MWU keeps the paper's separation of the settings and
#: refuses such a model, naming perturbation (``solvers/mwu/solve.py``).
_OBJECTIVE_TOO = ("c", "offset")

_FIX_CONSTRAINT_SET = (
    "Rewrite the model so the private rows appear only in the private constraint: build the "
    "objective and the other constraints from public data (e.g. a public cost vector, not one "
    "computed from the private rows).")


#: the functions CVXPY writes with another atom, named beside it in a refusal
_ATOM_ALIASES = {
    "maximum": " (cp.pos(x) is maximum(x, 0), cp.neg(x) maximum(-x, 0))",
    "quad_over_lin": " (cp.sum_squares(x) is quad_over_lin(x, 1))",
    "Pnorm": " (cp.norm(x) and cp.norm(x, p))",
    "power": " (cp.square(x), cp.norm(x)**2 and cp.power(x, p))",
}

#: CVXPY's classes that stand for a user-facing function of another name
_ATOM_NAMES = {"PowerApprox": "power", "Power": "power", "PnormApprox": "Pnorm"}


def _nonlinear_atom(expr: Any, param_id: int) -> str | None:
    """The class name of the outermost atom of ``expr`` that is not affine and holds the
    parameter (CVXPY's: ``sum_squares`` is a ``quad_over_lin``), or None."""
    if not any(q.id == param_id for q in expr.parameters()):
        return None
    if isinstance(expr, Atom) and not isinstance(expr, AffAtom) and not expr.is_affine():
        # (a sum or a product by a constant is looked into); the atoms CVXPY builds other
        # functions from say which ones
        name = _ATOM_NAMES.get(type(expr).__name__, type(expr).__name__)
        return name + _ATOM_ALIASES.get(name, "")
    for arg in expr.args:
        found = _nonlinear_atom(arg, param_id)
        if found is not None:
            return found
    return None


def _placement_error(spec: Any, param: Any, where: str,
                     both_a_and_b: bool = False,
                     in_objective_atom: bool = False,
                     atom: str | None = None) -> PrivacySpecError:
    cls = type(spec).__name__
    if in_objective_atom:
        # the user wrote the parameter in the objective only; CVXPY's epigraph of a nonlinear
        # atom (lambda_max(M + ...) <= t is the LMI t I - M - ... >> 0) moved it into rows
        name = param.name()
        match = "ScalarPrivacy" if where == "b" else "ConstraintPrivacy"
        how = (f"here {atom}, which holds {name}" if atom else
               "e.g. lambda_max(" + name + " + ...) becomes t I - (" + name + " + ...) >> 0")
        return PrivacySpecError(
            f"{cls}: parameter {name!r} sits in the objective, but inside a nonlinear atom "
            f"that CVXPY writes as constraints on an epigraph variable ({how}), so it enters "
            f"{_WHERE[where]} of those constraints, and {_FIX[spec.setting]}: only a linear "
            f"objective term (c @ x) is covered. Use cvxdp.{match}({name}, sensitivity=...) "
            "(the same per-entry sensitivity; perturbation releases it once and certifies "
            "the objective through those rows).")
    if both_a_and_b and not isinstance(spec, ConstraintSetPrivacy):
        name = param.name()
        return PrivacySpecError(
            f"{cls}: parameter {name!r} enters both the constraint matrix A (as a coefficient "
            "of a variable) and right-hand sides b (a constant term, e.g. inside log(" + name
            + " + x)), and no one setting covers both (ConstraintPrivacy: A; ScalarPrivacy: b; "
            "Song, Xue & Zhang (2025), Defs C.3 and C.6). Split it: a second Parameter with the "
            f"same value for one placement (e.g. {name}_b = cp.Parameter({name}.shape, "
            f"value={name}.value)), and private=[cvxdp.ConstraintPrivacy({name}, sensitivity="
            f"D), cvxdp.ScalarPrivacy({name}_b, sensitivity=D)]: perturbation releases both "
            "in one Gaussian release whose sensitivity counts a person changing both.")
    if isinstance(spec, ConstraintSetPrivacy):
        return PrivacySpecError(
            f"{cls}: parameter {param.name()!r} of the private constraint enters "
            f"{_WHERE[where]}, but {_FIX[spec.setting]}. {_FIX_CONSTRAINT_SET}")
    match = {"A": "ConstraintPrivacy", "b": "ScalarPrivacy", "c": "ObjectivePrivacy",
             "offset": "ObjectivePrivacy"}.get(where)
    hint = (f" Here that is cvxdp.{match}({param.name()}, sensitivity=...) (the same "
            "per-entry sensitivity)." if match and match != cls else "")
    return PrivacySpecError(
        f"{cls}: parameter {param.name()!r} enters {_WHERE[where]}, but "
        f"{_FIX[spec.setting]}. Rewrite the model so the parameter appears only "
        f"there, or choose the spec that matches where it appears.{hint}")


def check_constraint_set_placement(problem: Any, spec: ConstraintSetPrivacy) -> None:
    """The placement check of ``ConstraintSetPrivacy`` on the CVXPY expressions.

    The parameters of the private constraint are private row data; the dense-MWU theorem
    (Song et al. 2025, Def B.1, Alg. 3, Thm B.7) covers them only inside that constraint, with a
    public objective and public other constraints.  This is the check :func:`propagate` does on
    the canonical program (as for the other specs), for the covering path that reads the
    expressions directly.  It depends only on the model's structure (which parameter occurs
    where), never on values.

    Raises
    ------
    PrivacySpecError
        A parameter of the constraint occurs in the objective or in another constraint.
    """
    private = {p.id for p in spec.params}
    if not private:
        return
    for param in problem.objective.parameters():
        if param.id in private:
            raise _placement_error(spec, param, "objective")
    for con in problem.constraints:
        if con is spec.constraint:
            continue
        for param in con.parameters():
            if param.id in private:
                raise _placement_error(spec, param, "other")


@dataclass(frozen=True)
class SensitivityBounds:
    """Sound bounds on how much the canonical data can change between neighbouring datasets.

    Attributes
    ----------
    settings : tuple of str
        The settings of the specs (``"constraint"``, ``"scalar"``, ``"objective"``,
        ``"constraint_set"``).
    A : scipy.sparse.csc_matrix, shape (m, n)
        Entrywise bound on ``|A_ij - A'_ij|`` (SCS's A).
    b : ndarray, shape (m,)
        Entrywise bound on ``|b_i - b'_i|``.
    c : ndarray, shape (n,)
        Entrywise bound on ``|c_j - c'_j|`` (the minimised objective; sign does not matter).
    offset : float
        Bound on the change of the objective's constant term.
    rows : ndarray of int or None
        For ``ConstraintSetPrivacy``: the canonical rows (all in the orthant block) of the
        private constraint; a neighbour adds or removes one of them.  The entrywise bounds do
        not cover these rows (their change is unbounded by definition).
    specs : tuple
        The specs the bounds were derived from.
    """

    settings: tuple[str, ...]
    A: sp.csc_matrix
    b: np.ndarray
    c: np.ndarray
    offset: float = 0.0
    rows: np.ndarray | None = None
    specs: tuple[Any, ...] = field(default=(), repr=False)

    @property
    def objective_private(self) -> bool:
        """True when private data reach the objective (its coefficients or constant term)."""
        return bool(np.any(self.c > 0) or self.offset > 0)

    @property
    def A_row_l1(self) -> np.ndarray:
        """Per-row bound on ``||Delta a_i||_1`` (coordinates), shape (m,)."""
        return np.asarray(abs(self.A).sum(axis=1)).ravel()

    @property
    def A_row_l2(self) -> np.ndarray:
        """Per-row bound on ``||Delta a_i||_2`` (coordinates), shape (m,)."""
        return np.sqrt(np.asarray(self.A.multiply(self.A).sum(axis=1)).ravel())

    @property
    def A_row_inf(self) -> np.ndarray:
        """Per-row bound on ``max_j |Delta A_ij|``, shape (m,)."""
        if self.A.nnz == 0:
            return np.zeros(self.A.shape[0])
        return np.asarray(abs(self.A).max(axis=1).toarray()).ravel()

    @property
    def constraint_inf(self) -> float:
        """``Delta_inf`` of Song et al. (2025) Def C.6: ``max_i`` bound on ``||a_i - a'_i||`` in the
        algebra's spectral norm, taken as ``max_i A_row_l1[i]`` (sound in any embedding of the
        variables, see the module docstring)."""
        return float(self.A_row_l1.max(initial=0.0))

    @property
    def scalar_inf(self) -> float:
        """``Delta_inf`` of Def C.3: bound on ``||b - b'||_inf``."""
        return float(self.b.max(initial=0.0))

    @property
    def objective_l1(self) -> float:
        """Bound on ``||c - c'||_1`` (>= the spectral norm of the change in any embedding)."""
        return float(self.c.sum())

    @property
    def objective_l2(self) -> float:
        """Bound on ``||c - c'||_2`` (coordinates)."""
        return float(np.sqrt(np.sum(self.c**2)))

    @property
    def objective_inf(self) -> float:
        """Bound on ``max_j |c_j - c'_j|`` (the spectral norm for orthant coordinates)."""
        return float(self.c.max(initial=0.0))

    def private_rows(self) -> np.ndarray:
        """Indices of canonical rows whose A- or b-entries can change (or ``rows``)."""
        touched = np.flatnonzero((self.A_row_l1 > 0) | (self.b > 0))
        if self.rows is not None:
            touched = np.union1d(touched, self.rows)
        return touched


def _abs_sum(tensor: Any, cols: np.ndarray, nrows: int, ncols: int) -> sp.csc_matrix:
    sub = abs(sp.csc_matrix(tensor)[:, cols]).tocoo()
    # the tensor's rows are vec_F of an (nrows, ncols) matrix; duplicates (one per parameter
    # entry) are summed by the constructor -- the sum of absolute coefficients
    mat = sp.csc_matrix((sub.data, (sub.row % nrows, sub.row // nrows)), shape=(nrows, ncols))
    mat.eliminate_zeros()
    return mat


def _row_offsets(scp: SymmetricConeProgram) -> dict[int, tuple[int, int, str]]:
    """canonical constraint id -> (first row, size, cone type) in SCS's order."""
    inv = scp.inverse
    solver_inv = inv.inverse_data[-1]
    solver_inv = getattr(solver_inv, "inverse_data", solver_inv)
    out, row = {}, 0
    for con in list(solver_inv[SCS.EQ_CONSTR]) + list(solver_inv[SCS.NEQ_CONSTR]):
        n_rows = _n_rows(con)
        out[con.id] = (row, n_rows, type(con).__name__)
        row += n_rows
    return out


def _n_rows(con: Any) -> int:
    name = type(con).__name__
    if name == "PSD":  # pragma: no cover - CVXPY < 1.7 keeps full PSD constraints
        r = con.args[0].shape[0]
        return r * (r + 1) // 2
    return int(con.size)


def _constraint_rows(scp: SymmetricConeProgram, spec: ConstraintSetPrivacy) -> np.ndarray:
    cid = spec.constraint.id
    if cid not in {c.id for c in scp.inverse.problem.constraints}:
        raise PrivacySpecError(
            "ConstraintSetPrivacy: the constraint is not one of problem.constraints; pass the "
            "very constraint object used in the model."
        )
    for data in scp.inverse.inverse_data:
        mapping = getattr(data, "cons_id_map", None)
        if mapping and cid in mapping:
            cid = mapping[cid]
    found = _row_offsets(scp).get(cid)
    if found is None or found[2] != "NonNeg":
        raise PrivacySpecError(
            f"ConstraintSetPrivacy: the private constraint ({spec.label}) did not compile to plain "
            "inequality rows (it is not affine <= affine); only covering-type linear "
            "inequalities can have one row per person."
        )
    start, size, _ = found
    return np.arange(start, start + size)


def _check_rows_only(pp: Any, spec: ConstraintSetPrivacy, rows: np.ndarray, m: int,
                     n: int) -> None:
    """Placement check of ``ConstraintSetPrivacy`` on the canonical program: every parameter
    of the constraint may enter only that constraint's canonical rows (A and b), never the
    objective (c, offset) nor another row."""
    outside = np.ones(m, dtype=bool)
    outside[rows] = False
    for param in spec.params:
        cols = parameter_columns(pp, param, type(spec).__name__)
        q = np.asarray(_abs_sum(objective_tensor(pp), cols, n + 1, 1).toarray()).ravel()
        if np.any(q[:n] > 0):
            raise _placement_error(spec, param, "c")
        if q[n] > 0:
            raise _placement_error(spec, param, "offset")
        Ab = _abs_sum(pp.A, cols, m, n + 1)
        if np.any(np.diff(Ab.tocsr().indptr)[outside] > 0):
            raise _placement_error(spec, param, "other")


def propagate(scp: SymmetricConeProgram, private: Any) -> SensitivityBounds:
    """Bounds on the change of ``scp``'s data for the given privacy spec(s).

    Parameters
    ----------
    scp : SymmetricConeProgram
        Built by :func:`cvxdp.transform.to_scp` (needs ``scp.inverse`` and the parametric
        program in ``scp.meta["param_prob"]``).
    private : spec or sequence of specs

    Returns
    -------
    SensitivityBounds

    Raises
    ------
    PrivacySpecError
        No spec given, a parameter outside the model / not DPP, or a parameter entering the
        canonical data where its setting does not allow (the message names parameter, place and
        fix).  Every spec gets this placement check; for ``ConstraintSetPrivacy`` the
        parameters of the constraint may enter only that constraint's rows (not the objective,
        its constant, or another constraint: Song, Xue & Zhang (2025) Def B.1 keeps them public).
    """
    specs = as_spec_tuple(private)
    if not specs:
        raise PrivacySpecError(
            "no privacy spec given: pass private=cvxdp.ConstraintPrivacy(A, sensitivity=...) "
            "(or ScalarPrivacy / ObjectivePrivacy / ConstraintSetPrivacy) to say which data is "
            "private."
        )
    pp = scp.meta["param_prob"]
    m, n = scp.m, scp.n
    model_params = {p.id for p in scp.inverse.problem.parameters()}
    A = sp.csc_matrix((m, n))
    b, c, offset, rows = np.zeros(m), np.zeros(n), 0.0, None
    for spec in specs:
        cls = type(spec).__name__
        if isinstance(spec, ConstraintSetPrivacy):
            new = _constraint_rows(scp, spec)
            rows = new if rows is None else np.union1d(rows, new)
            _check_rows_only(pp, spec, new, m, n)
            continue
        for param in spec.params:
            if param.id not in model_params:
                raise PrivacySpecError(
                    f"{cls}: parameter {param.name()!r} does not occur in this model; pass a "
                    "parameter the model uses."
                )
            cols = parameter_columns(pp, param, cls, _problem_of(scp))
            Ab = _abs_sum(pp.A, cols, m, n + 1) * spec.sensitivity
            q = np.asarray(_abs_sum(objective_tensor(pp), cols, n + 1, 1).toarray()).ravel()
            q *= spec.sensitivity
            parts = {"A": Ab[:, :n], "b": np.asarray(Ab[:, n].toarray()).ravel(),
                     "c": q[:n], "offset": q[n]}
            present = {where: (val.nnz > 0) if sp.issparse(val) else bool(np.any(val > 0))
                       for where, val in parts.items()}
            # the objective is a second place only: a parameter in no place its setting names
            # is refused (the spec says where the data is; the message names the right one)
            also = spec.setting in ("constraint", "scalar") and any(
                present[w] for w in spec.allowed)
            for where in parts:
                if present[where] and where not in spec.allowed and not (
                        where == "offset" and "c" in spec.allowed) and not (
                        also and where in _OBJECTIVE_TOO):
                    user = _problem_of(scp)
                    in_atom = (spec.setting == "objective" and where in ("A", "b")
                               and user is not None
                               and param.id in {q.id for q in user.objective.parameters()}
                               and not any(param.id in {q.id for q in con.parameters()}
                                           for con in user.constraints))
                    raise _placement_error(
                        spec, param, where, both_a_and_b=present["A"] and present["b"],
                        in_objective_atom=in_atom,
                        atom=_nonlinear_atom(user.objective.expr, param.id) if in_atom
                        else None)
            A = A + parts["A"]
            b += parts["b"]
            c += parts["c"]
            offset += float(parts["offset"])
    return SensitivityBounds(
        settings=tuple(s.setting for s in specs), A=sp.csc_matrix(A), b=b, c=c,
        offset=offset, rows=rows, specs=specs,
    )


def _problem_of(scp: Any) -> Any:
    """The CVXPY problem a cone program was built from (None when unknown)."""
    return getattr(getattr(scp, "inverse", None), "problem", None)
