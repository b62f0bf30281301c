"""Pins of the CVXPY internals cvxdp.transform relies on (CVXPY >= 1.5).

If one of these fails after a CVXPY upgrade, adapt ``cvxdp/transform/canon.py`` and
``sensitivity.py`` (the only modules that read CVXPY's internals) before anything else.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from packaging.version import Version

from cvxdp.transform.canon import _solver_inverse
from cvxdp.transform.sensitivity import objective_tensor


def _model():
    A = cp.Parameter((3, 2), name="A", value=np.arange(6.0).reshape(3, 2) + 1)
    c = cp.Parameter(2, name="c", value=np.array([1.0, -2.0]))
    x = cp.Variable(2)
    X = cp.Variable((2, 2), PSD=True)
    prob = cp.Problem(cp.Minimize(c @ x + cp.trace(X) + 4),
                      [A @ x <= 1, cp.norm(x) <= 3, X[0, 1] >= 0.1, x[0] == 0.5])
    return prob, A, c


def test_cvxpy_version_supported():
    assert Version(cp.__version__) >= Version("1.5")


def test_problem_data_layout():
    prob, A, c = _model()
    data, chain, inv = prob.get_problem_data(cp.SCS, solver_opts={"use_quad_obj": False})
    for key in ("A", "b", "c", "dims", cp.settings.PARAM_PROB):
        assert key in data
    dims = data["dims"]
    for attr in ("zero", "nonneg", "soc", "psd", "exp", "p3d"):
        assert hasattr(dims, attr)
    m = dims.zero + dims.nonneg + sum(dims.soc) + sum(r * (r + 1) // 2 for r in dims.psd)
    n = data["c"].size
    assert data["A"].shape == (m, n)
    solver_inv = _solver_inverse(inv[-1])
    assert "offset" in solver_inv and "var_id" in solver_inv
    assert float(np.asarray(solver_inv["offset"])) == 4.0
    assert all(hasattr(r, "invert") for r in chain.reductions)
    # parametric tensors: vec_F([-A | b]) = T_A [theta; 1] and [c; d] = T_q [theta; 1]
    pp = data[cp.settings.PARAM_PROB]
    assert pp.A.shape[0] == m * (n + 1) and objective_tensor(pp).shape[0] == n + 1
    theta = np.zeros(pp.A.shape[1])
    for pid, col in pp.param_id_to_col.items():
        if pid == -1:
            theta[col] = 1.0
        else:
            val = {A.id: A.value, c.id: c.value}[pid]
            theta[col:col + val.size] = val.flatten(order="F")
    Ab = (sp.csc_matrix(pp.A) @ theta).reshape((m, n + 1), order="F")
    np.testing.assert_allclose(-Ab[:, :n], data["A"].toarray(), atol=1e-12)
    np.testing.assert_allclose(Ab[:, n], data["b"], atol=1e-12)
    q = sp.csc_matrix(objective_tensor(pp)) @ theta
    np.testing.assert_allclose(q[:n], data["c"], atol=1e-12)
    assert q[n] == 4.0
