"""Where a declared parameter's entries sit in CVXPY's compiled parametric cone program.

CVXPY's parametric program (``data[cp.settings.PARAM_PROB]``) maps the parameter vector
``theta`` to the canonical data by sparse tensors whose columns are the parameters' entries:
:func:`parameter_columns` finds a parameter's columns (refusing, with the reason and the fix, a
parameter CVXPY evaluated instead of keeping), :func:`reduced_value` / :func:`full_value` convert
between a parameter's value and its entries in column order (CVXPY reduces symmetric, PSD,
diagonal and sparse parameters to their distinct entries), and :func:`objective_tensor` reads the
objective's tensor across CVXPY versions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from cvxpy.reductions.cvx_attr2constr import lower_value

from cvxdp.errors import PrivacySpecError
from cvxdp.transform.support import non_dpp_terms, untraced_affine_atoms

__all__ = ["parameter_columns", "reduced_parameter", "reduced_value", "full_value",
           "objective_tensor"]


def parameter_columns(param_prob: Any, param: Any, cls: str, problem: Any = None
                      ) -> np.ndarray:
    """Columns of CVXPY's parameter tensors holding ``param``'s entries (Fortran order).

    Raises
    ------
    PrivacySpecError
        If ``param`` does not reach the cone program as itself (not in the model, entering
        non-linearly so CVXPY evaluated it (not DPP), or replaced because of symmetric / PSD /
        diag / sparsity attributes).
    """
    cols = getattr(param_prob, "param_id_to_col", {})
    red = reduced_parameter(param_prob, param)
    if red is not None and red.id in cols:
        # symmetric / PSD / diag / sparse: CVXPY's reduced parameter, one user entry per column
        start = int(cols[red.id])
        return np.arange(start, start + int(param_prob.param_id_to_size[red.id]))
    if param.id not in cols and any(param.attributes.get(a) for a in (
            "symmetric", "PSD", "NSD", "diag", "sparsity", "hermitian", "complex", "imag")):
        if any(param.attributes.get(a) for a in ("complex", "imag", "hermitian")):
            raise PrivacySpecError(
                f"{cls}: parameter {param.name()!r} is complex, and CVXPY splits it into real "
                "and imaginary parts whose sensitivity cannot be traced; use two real "
                "parameters (real and imaginary part) in the model.")
        raise PrivacySpecError(
            f"{cls}: CVXPY substituted the current value of parameter {param.name()!r} "
            "instead of keeping it a parameter (the model is not DPP in it: e.g. "
            "quad_form(w, Sigma) factors Sigma's value), so its sensitivity cannot be "
            "propagated. Write the term with a private factor instead, e.g. "
            "cp.sum_squares(F @ w) with F a private cp.Parameter and Sigma = F.T @ F."
        )
    if param.id not in cols and not cols.keys() - {-1}:
        terms = non_dpp_terms(problem) if problem is not None else []
        where = (f"the term(s) {'; '.join(repr(t) for t in terms)} break DPP, so CVXPY "
                 "substituted the values of every parameter (here the private "
                 f"{param.name()!r}, which cannot then be traced)" if terms else
                 "the model is not DPP (problem.is_dcp(dpp=True) is False), so CVXPY "
                 f"substituted the value of parameter {param.name()!r}")
        affine = untraced_affine_atoms(problem) if problem is not None else []
        if affine:
            raise PrivacySpecError(
                f"{cls}: {where}. The private parameter enters affinely (inside "
                f"{', '.join(affine)}), but CVXPY's DPP rules do not keep a parameter inside "
                "that atom; write the term "
                "as a sum of the parameter's entries times constant matrices, e.g. "
                "cp.kron(K, B) as sum(K[i, j] * np.kron(E_ij, B)) with E_ij the unit matrix "
                "of entry (i, j), which is DPP.")
        raise PrivacySpecError(
            f"{cls}: {where}. A term is not DPP when it multiplies two parameters or puts one "
            "inside a non-linear atom: if one of them is public (e.g. a risk-aversion gamma), "
            "declare it with public=[...] so its value is fixed; otherwise rewrite the term "
            "so the private parameter enters affinely. A non-linear function of private data "
            "alone (e.g. the norm of a private row in a Chebyshev-centre constraint) can be a "
            "private cp.Parameter of its own holding that value, declared in its own spec "
            "with the function's sensitivity (a Euclidean norm of k private entries moves by "
            "at most sqrt(k) times their sensitivity)."
        )
    if param.id not in cols:
        raise PrivacySpecError(
            f"{cls}: parameter {param.name()!r} does not enter the compiled cone program as a "
            "linear parameter, so its sensitivity cannot be propagated. Make sure it is used "
            "in this model, that the model is DPP (problem.is_dcp(dpp=True); products of "
            "parameters are not), and that the parameter has no symmetric=/PSD=/diag=/"
            "sparsity= attribute (declare a plain cp.Parameter(shape))."
        )
    start = int(cols[param.id])
    return np.arange(start, start + int(param_prob.param_id_to_size[param.id]))


def reduced_parameter(param_prob: Any, param: Any) -> Any:
    """CVXPY's reduced parameter standing for ``param`` (symmetric, PSD, diag, sparse), or None.

    See :func:`cvxdp.transform.canon._record_reduced_parameters`.
    """
    return getattr(param_prob, "cvxdp_reduced", {}).get(param.id)


def reduced_value(param: Any, value: Any = None) -> np.ndarray:
    """The entries of ``param``'s value (or of ``value``) in the order of its tensor columns.

    For a plain parameter this is ``vec_F(value)``; for one CVXPY reduces, its upper triangle /
    diagonal / stored entries in CVXPY's own order (``cvx_attr2constr.lower_value``).
    """
    v = param.value if value is None else value
    if getattr(param, "_has_dim_reducing_attr", False):
        return np.asarray(lower_value(param, np.asarray(v)), dtype=float).ravel(order="F")
    return np.asarray(v, dtype=float).ravel(order="F")


def full_value(param: Any, reduced: np.ndarray) -> np.ndarray:
    """Inverse of :func:`reduced_value`: the user's matrix from its reduced entries."""
    if not getattr(param, "_has_dim_reducing_attr", False):
        return np.asarray(reduced, dtype=float).reshape(param.shape, order="F")
    attrs = param.attributes
    out = np.zeros(param.shape)
    if attrs.get("symmetric") or attrs.get("PSD") or attrs.get("NSD"):
        n = param.shape[-1]
        i, j = np.triu_indices(n)
        out[i, j] = reduced
        out[j, i] = reduced
    elif attrs.get("diag"):
        out[np.diag_indices(param.shape[0])] = reduced
    else:  # sparsity
        out[param.sparse_idx] = reduced
    return out


def objective_tensor(param_prob: Any) -> Any:
    """CVXPY's objective tensor ``T_q`` (``param_prob.q`` since CVXPY 1.6, ``.c`` before)."""
    return param_prob.q if hasattr(param_prob, "q") else param_prob.c
