"""A second-order-cone row whose private coefficients reach one row each (``norm(A x - b) <=
t`` with a private ``A`` and ``b``): its tightening uses the noise matrix's operator norm on
``[x; 1]``, not the Frobenius norm of the whole map (``sqrt(m)`` larger)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def _fit_row(m: int = 500, n: int = 8, seed: int = 926):
    rng = np.random.default_rng(seed)
    Av = rng.uniform(0, 1, (m, n))
    bv = Av @ rng.dirichlet(np.ones(n)) + 0.05 * rng.normal(size=m)
    A = cp.Parameter((m, n), name="A", value=Av)
    b = cp.Parameter(m, name="b", value=bv)
    x, t = cp.Variable(n), cp.Variable()
    prob = cp.Problem(cp.Minimize(t), [cp.norm(A @ x - b, 2) <= t, x >= 0, cp.sum(x) == 1])
    ref = cp.Problem(prob.objective, prob.constraints)
    ref.solve(solver=cp.CLARABEL)
    return prob, A, b, x, t, float(ref.value)


def test_private_soc_fit_row_is_certified_at_large_epsilon():
    # reproducer (trial 11): at epsilon 1e6 the true gap was 1.1e-2 and the status user_limit
    prob, A, b, x, t, opt = _fit_row()
    spec = [cvxdp.ConstraintPrivacy(A, 1e-3), cvxdp.ScalarPrivacy(b, 1e-3)]
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, private=spec)
    norm = float(np.linalg.norm(A.value @ x.value - b.value))
    assert sol.status == "optimal_inaccurate"
    assert (norm - opt) / max(1.0, opt) <= sol.certificate.relative_gap_bound <= 1e-2


def test_private_soc_fit_row_tightening_is_not_sqrt_m_loose():
    # at epsilon 10 the released t was 61.4 against a true norm of 1.46 (optimum 1.06): the
    # tightening must be of the order of the noise's effect on one row, not sqrt(m) times it
    prob, A, b, x, t, opt = _fit_row()
    spec = [cvxdp.ConstraintPrivacy(A, 1e-3), cvxdp.ScalarPrivacy(b, 1e-3)]
    for seed in range(3):
        sol = prob.solve_private(epsilon=10, delta=1e-6, rng=seed, private=spec)
        norm = float(np.linalg.norm(A.value @ x.value - b.value))
        assert norm <= float(t.value) + 1e-7         # the point is feasible for the truth
        assert float(t.value) <= 2.0 * opt, (float(t.value), opt)
        assert (norm - opt) / opt <= sol.certificate.relative_gap_bound + 1e-7
