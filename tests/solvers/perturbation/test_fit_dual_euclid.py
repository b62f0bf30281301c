"""The conjugate bound of an unsquared Euclidean fit beside a norm regulariser (trial 24's D3):
at the optimum the linearised term's slope A'r/||r|| has exactly the regulariser's norm, so
the linearised problem was unbounded below on about half the noise draws (Clarabel
``unbounded_inaccurate``), its candidate was dropped and the certificate fell back to the
kept-norm charge; CVXPY's "Solution may be inaccurate" warning reached the user."""

import warnings

import cvxpy as cp
import numpy as np

import cvxdp


def _robust_ls():
    rng = np.random.default_rng(0)
    m, n = 300, 20
    A = rng.standard_normal((m, n)) / np.sqrt(n)
    b = cp.Parameter(m, name="b")
    b.value = np.clip(0.5 + A @ rng.standard_normal(n) / 5 + 0.05 * rng.standard_normal(m), 0, 1)
    x = cp.Variable(n, name="x")
    return cp.Problem(cp.Minimize(cp.norm(A @ x - b, 2) + 0.5 * cp.norm(x, 2))), b


def test_the_linearised_norm_stays_bounded_and_quiet():
    prob, b = _robust_ls()
    opt = prob.solve(solver="CLARABEL")
    for seed in (0, 1, 2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = prob.solve_private(epsilon=10, delta=1e-6, rng=seed,
                                     private=cvxdp.ScalarPrivacy(b, sensitivity=0.005))
        assert not [w for w in caught if "inaccurate" in str(w.message)], seed
        gap = sol.certificate.relative_gap_bound
        # seeds 0, 1 certified 0.006; seed 2 gave 0.23 (the kept-norm charge); true gap 1.3e-4
        assert gap < 0.03, (seed, gap)
        assert (prob.objective.value - opt) / opt <= gap
