"""Parameters as CVXPY users declare them: symmetric=, PSD=, diag= (issue 22 item 4).

CVXPY replaces such a parameter by a reduced one (its upper triangle, its diagonal) before the
cone program; cvxdp traces the user's parameter through that replacement.  Each reduced entry
is one entry of the user's matrix, so the declared per-entry sensitivity carries over."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.status import status_of
from cvxdp.transform import to_scp


def _sym_objective(seed: int = 0):
    rng = np.random.default_rng(seed)
    M = rng.uniform(-1, 1, (4, 4))
    C = cp.Parameter((4, 4), symmetric=True, name="C")
    C.value = (M + M.T) / 2
    X = cp.Variable((4, 4), PSD=True, name="X")
    return cp.Problem(cp.Maximize(cp.trace(C @ X)), [cp.trace(X) == 1]), C, X


def test_symmetric_parameter_sensitivity_matches_the_plain_parameter():
    # S symmetric vs (P + P.T) / 2 with a plain P: CVXPY's tensor differs, the bound on the
    # change of c must agree with an independent count: sum(S @ z) has coefficient sum_i S[i, j]
    S = cp.Parameter((3, 3), symmetric=True, name="S", value=np.eye(3))
    z = cp.Variable(3)
    sym = cp.Problem(cp.Minimize(cp.sum(S @ z)), [z >= 0, z <= 1])
    bounds = to_scp(sym, private=cvxdp.ObjectivePrivacy(S, sensitivity=0.1)).sensitivity
    np.testing.assert_allclose(np.sort(bounds.c)[-3:], 0.3)


def test_symmetric_objective_sdp_solves_privately():
    prob, C, X = _sym_objective()
    ref, *_ = _sym_objective()
    ref.solve()
    sol = cvxdp.solve_private(prob, epsilon=1e6, delta=1e-6, rng=0,
                              private=cvxdp.ObjectivePrivacy(C, sensitivity=2e-2))
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)  # follows the bound
    assert sol.status == cp.OPTIMAL_INACCURATE  # at epsilon 1e6 the certificate meets 1e-2
    assert abs(prob.objective.value - ref.value) <= 1e-3
    # the certificate holds for the TRUE C (minimised objective: -trace(C X))
    # the constraints are public: the bound is their measured violation at the released X
    measured = max(float(np.max(c.violation())) for c in prob.constraints)
    assert measured <= sol.certificate.violation_bound <= 1e-9
    _, C_true, _ = _sym_objective()
    assert ref.value - np.trace(C_true.value @ X.value) <= sol.certificate.gap_bound + 1e-7


@pytest.mark.parametrize("mechanism", ["perturbation", "auto"])
def test_symmetric_constraint_data_with_perturbation(mechanism):
    rng = np.random.default_rng(3)
    r = 4
    A = cp.Parameter((r, r), symmetric=True, name="A")
    M = rng.uniform(0, 1, (r, r))
    A.value = (M + M.T) / 2 + r * np.eye(r)
    X = cp.Variable((r, r), PSD=True, name="X")
    prob = cp.Problem(cp.Maximize(cp.trace(X)), [cp.trace(A @ X) <= 1, cp.trace(X) <= 10])
    true_A = A.value.copy()
    sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, rng=0, mechanism=mechanism,
                              private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    assert sol.info["mechanism"] == "perturbation"
    # the status is the one the certificate implies (default accuracy 1e-2)
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)
    Xv = X.value.copy()
    assert np.trace(true_A @ Xv) <= 1 + 1e-7  # feasible for the TRUE data
    # the certificate holds for the TRUE A (minimised objective: -trace(X))
    cert = sol.certificate
    true_viol = max(0.0, float(np.trace(true_A @ Xv) - 1), float(np.trace(Xv) - 10),
                    float(-np.linalg.eigvalsh((Xv + Xv.T) / 2).min()))
    assert true_viol <= cert.violation_bound + 1e-7
    exact = cp.Problem(cp.Maximize(cp.trace(X)),
                       [cp.trace(true_A @ X) <= 1, cp.trace(X) <= 10]).solve()
    assert cert.optimum_lower <= -exact + 1e-6
    assert -np.trace(Xv) <= cert.objective_upper + 1e-7
    assert exact - np.trace(Xv) <= cert.gap_bound + 1e-6
    noisy = sol.info["noisy_parameters"]["A"]
    assert noisy.shape == (r, r) and np.allclose(noisy, noisy.T)


def test_diag_parameter_is_traced():
    d = cp.Parameter((3, 3), diag=True, name="D")
    d.value = np.diag([1.0, 2.0, 3.0])
    x = cp.Variable(3, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [d @ x <= 1, x >= 0])
    sb = to_scp(prob, private=cvxdp.ConstraintPrivacy(d, sensitivity=0.1)).sensitivity
    assert sb.A.nnz == 3 and np.allclose(sb.A.data, 0.1)
