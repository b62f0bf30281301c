"""The canonical data at given parameter values, and its linear map from parameter entries.

CVXPY compiles a DPP model once into a parametric cone program (``ParamConeProg``, stored in
``scp.meta["param_prob"]``): sparse tensors whose product with the parameter vector ``[theta;
1]`` gives the data of ``min c'x + d  s.t.  A_cvx x + b in K``, and SCS's data are ``A = -A_cvx``
and ``b`` (``ConicSolver.apply``).  Two questions of the private solvers are answered here, so
that no solver module reads CVXPY's tensors itself:

* :func:`program_data` -- ``(c, d, A, b)`` with some parameters at other values (a noisy
  release): CVXPY's own ``ParamConeProg.apply_parameters`` with a full ``id -> value`` map, the
  call SCS's interface makes for the true values;
* :func:`entry_map` -- the coefficient of each chosen parameter entry in each canonical datum:
  ``s = b - A x = M [x; 1]`` with ``vec_F(M) = T_A [theta; 1]``, so the coefficient of entry
  ``theta_k`` in ``M[i, j]`` is ``T_A[i + m j, k]``, and in ``[c; d]`` it is ``T_q[j, k]``.
  The map is exact (CVXPY's tensor, linear in ``theta``), the same for every value of
  ``theta``, and public (structure and constants of the model only).

References
----------
Agrawal, Amos, Barratt, Boyd, Diamond & Kolter, "Differentiable convex optimization layers",
NeurIPS 2019 (disciplined parametrized programming and the parameter-to-data map).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.transform.scp import SymmetricConeProgram
from cvxdp.transform.sensitivity import objective_tensor

__all__ = ["program_data", "EntryMap", "entry_map"]


def _values(pp: Any, values: dict[int, Any] | None) -> dict[int, np.ndarray]:
    """Every parameter of the tensor: ``values[id]`` where given, its own value elsewhere."""
    given = values or {}
    return {pid: (np.asarray(given[pid]) if pid in given else np.asarray(p.value))
            for pid, p in pp.id_to_param.items()}


def program_data(scp: SymmetricConeProgram, values: dict[int, Any] | None = None
                 ) -> tuple[np.ndarray, float, sp.csc_matrix, np.ndarray]:
    """``(c, offset, A, b)`` of ``scp`` with the parameters in ``values`` at those values.

    Parameters
    ----------
    scp : SymmetricConeProgram
        Built by :func:`cvxdp.transform.to_scp` (holds CVXPY's parametric program).
    values : dict, optional
        ``id -> value`` for the parameters to change, keyed by the id in CVXPY's tensor (a
        reduced parameter's id for a symmetric / PSD / diag / sparse parameter, holding its
        reduced entries); the rest keep their values.

    Returns
    -------
    (c, offset, A, b) : ndarray (n,), float, csc_matrix (m, n), ndarray (m,)
        In SCS's convention ``A x + s = b`` (as ``scp.A``, ``scp.b``).
    """
    pp = scp.meta["param_prob"]
    c, d, A_cvx, b = pp.apply_parameters(id_to_param_value=_values(pp, values))
    c = np.asarray(c, dtype=float).ravel()
    A = -sp.csr_matrix(A_cvx, dtype=float)
    b = np.asarray(b, dtype=float).ravel()
    lift = scp.meta.get("exp_lift")
    if lift is not None:  # private cone coordinates moved to orthant rows (exp_cones.py)
        A, b = lift.apply(A, b)
        c = np.concatenate([c, np.zeros(lift.k)])
    # CVXPY's rows end with the exponential cones that scp keeps apart (public: exp_tail)
    m = scp.m
    return c.copy(), float(np.sum(d)), sp.csc_matrix(A[:m]), b[:m].copy()


@dataclass(frozen=True)
class EntryMap:
    """How the chosen parameter entries enter the canonical data (one triple per coefficient).

    Constraint part: entry ``entry[t]`` (index into the chosen columns) has coefficient
    ``value[t]`` in ``M[row[t], col[t]]`` of ``s = M [x; 1]`` (``col = n``: the constant
    ``b``).  Objective part: entry ``obj_entry[t]`` has coefficient ``obj_value[t]`` in
    ``[c; offset][obj_col[t]]``.  Zero coefficients are left out.
    """

    m: int
    n: int
    K: int
    row: np.ndarray
    col: np.ndarray
    entry: np.ndarray
    value: np.ndarray
    obj_col: np.ndarray
    obj_entry: np.ndarray
    obj_value: np.ndarray

    def objective_matrix(self, weight: np.ndarray | None = None) -> sp.csr_matrix:
        """``(K, n + 1)``: row ``k`` holds entry ``k``'s coefficients in ``[c; offset]``,
        times ``weight[k]``."""
        w = np.ones(self.K) if weight is None else np.asarray(weight, dtype=float)
        return sp.csr_matrix((self.obj_value * w[self.obj_entry], (self.obj_entry,
                                                                    self.obj_col)),
                             shape=(self.K, self.n + 1))


def entry_map(scp: SymmetricConeProgram, columns: np.ndarray) -> EntryMap:
    """The :class:`EntryMap` of the parameter-vector entries ``columns`` (CVXPY's tensor
    columns, e.g. from :func:`cvxdp.transform.sensitivity.parameter_columns`)."""
    pp = scp.meta["param_prob"]
    m, n = scp.m, scp.n
    lift = scp.meta.get("exp_lift")
    # the tensor's rows are vec_F of CVXPY's whole [-A | b] (n0 variables, exponential-cone
    # rows included); a lifted program renumbers rows and adds variables (exp_cones.py)
    n0 = n if lift is None else lift.n0
    m_all = lift.m_all if lift is not None else m + (
        0 if scp.exp_tail is None else scp.exp_tail.A.shape[0])
    columns = np.asarray(columns, dtype=int)
    sub = sp.csc_matrix(pp.A)[:, columns].tocoo()
    row, col = sub.row % m_all, sub.row // m_all
    value = sub.data.astype(float)
    if lift is not None:
        value = value * lift.row_sign()[row]
        row = lift.row_map()[row]
    keep = (sub.data != 0) & (row >= 0) & (row < m)  # to_scp refuses private data elsewhere
    col = np.where(col == n0, n, col)  # the constant column
    q = sp.csc_matrix(objective_tensor(pp))[:, columns].tocoo()
    qk = q.data != 0
    return EntryMap(m=m, n=n, K=int(columns.size), row=row[keep].astype(np.int64),
                    col=col[keep].astype(np.int64), entry=sub.col[keep].astype(np.int64),
                    value=value[keep], obj_col=np.where(q.row == n0, n, q.row)[qk].astype(
                        np.int64), obj_entry=q.col[qk].astype(np.int64),
                    obj_value=q.data[qk].astype(float))
