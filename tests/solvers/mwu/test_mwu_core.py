"""SCMWU core: the algebra kernel, Theorem C.2 with an exact oracle, the exponential oracle."""

import math

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.sparse as sp

from cvxdp.privacy.mechanisms import exponential_probabilities
from cvxdp.solvers.mwu.mwu import BlockAlgebra, scmwu
from cvxdp.solvers.mwu.oracles import exact_oracle, exponential_oracle, exponential_oracle_error


def _smat(v, r):
    alg = BlockAlgebra(0, (), (r,))
    return alg._smat(v[None, :], r)[0]


def test_normalized_exp_matches_expm_on_each_block():
    rng = np.random.default_rng(0)
    alg = BlockAlgebra(3, (4,), (3, 3))
    y = rng.normal(size=alg.dim)
    x = alg.normalized_exp(y)
    assert alg.trace(x) == pytest.approx(1.0, abs=1e-12)
    assert alg.eigenvalues(x).min() > 0
    # unnormalised pieces
    parts = [np.exp(-y[:3])]
    t, xb = y[3], y[4:7]
    nrm = np.linalg.norm(xb)
    lp, lm = t + nrm, t - nrm
    spin_tr = math.exp(-lp) + math.exp(-lm)
    E1 = sl.expm(-_smat(y[7:13], 3))
    E2 = sl.expm(-_smat(y[13:19], 3))
    total = parts[0].sum() + spin_tr + np.trace(E1) + np.trace(E2)
    np.testing.assert_allclose(x[:3], parts[0] / total, rtol=1e-10)
    np.testing.assert_allclose(_smat(x[7:13], 3), E1 / total, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(_smat(x[13:19], 3), E2 / total, rtol=1e-8, atol=1e-14)
    # spin factor: exp(-y) = e^{-l+} q+ + e^{-l-} q-, q+- = (1, +-u)/2
    u = xb / nrm
    expected = 0.5 * np.concatenate([[math.exp(-lp) + math.exp(-lm)],
                                     (math.exp(-lp) - math.exp(-lm)) * u])
    np.testing.assert_allclose(x[3:7], expected / total, rtol=1e-10)


def test_normalized_exp_is_stable_for_huge_losses():
    alg = BlockAlgebra(2, (3,), (2,))
    y = np.array([1e6, 1e6 + 1, 1e6, 0.0, 0.0, 1e6, 0.0, 1e6])
    x = alg.normalized_exp(y)
    assert np.all(np.isfinite(x)) and alg.trace(x) == pytest.approx(1.0)


def _random_feasible_lp(rng, m, n, slack=0.05):
    A = rng.uniform(-1, 1, (m, n))
    y = rng.dirichlet(np.ones(n))
    return A, A @ y + slack


def test_theorem_c2_exact_oracle_reaches_alpha_on_lp():
    rng = np.random.default_rng(1)
    A, b = _random_feasible_lp(rng, 40, 12)
    alg = BlockAlgebra(12)
    alpha = 0.1
    T = math.ceil(16 * math.log(alg.rank) / alpha**2)
    res = scmwu(sp.csr_matrix(A), b, alg, eta=alpha / 4, iterations=T, oracle=exact_oracle(),
                rng=np.random.default_rng(0))
    assert np.max(A @ res.x - b) <= alpha
    assert res.x.sum() == pytest.approx(1.0) and res.x.min() >= 0
    assert res.chosen.sum() == T


def test_theorem_c2_exact_oracle_on_sdp_with_trace_one():
    rng = np.random.default_rng(2)
    r, m = 4, 10
    alg = BlockAlgebra(0, (), (r,))
    Y = np.eye(r) / r
    rows, h = [], []
    iu = np.triu_indices(r)
    for _ in range(m):
        B = rng.normal(size=(r, r))
        M = (B + B.T) / 2
        M /= np.linalg.norm(M, 2)
        # dual row g with g . svec(X) = <M, X>
        g = alg._svec_of(M[None], r)[0]
        rows.append(g)
        h.append(np.trace(M @ Y) + 0.02)
    del iu
    G = sp.csr_matrix(np.array(rows))
    alpha = 0.1
    T = math.ceil(16 * math.log(alg.rank) / alpha**2)
    res = scmwu(G, np.array(h), alg, eta=alpha / 4, iterations=T, oracle=exact_oracle(),
                rng=np.random.default_rng(0))
    assert np.max(G @ res.x - np.array(h)) <= alpha
    X = _smat(res.x, r)
    assert np.trace(X) == pytest.approx(1.0) and np.linalg.eigvalsh(X).min() > -1e-12


def test_exponential_oracle_matches_its_distribution():
    scores = np.array([0.0, 0.3, 1.0, -0.5])
    eps, sens = 2.0, 0.5
    oracle = exponential_oracle(epsilon=eps, sensitivity=sens)
    rng = np.random.default_rng(3)
    n = 20000
    counts = np.bincount([oracle(scores, rng) for _ in range(n)], minlength=4)
    p = exponential_probabilities(scores, epsilon=eps, sensitivity=sens)
    # 5 standard errors per cell
    assert np.all(np.abs(counts / n - p) <= 5 * np.sqrt(p * (1 - p) / n))


def test_exponential_oracle_error_formula_and_large_epsilon_is_argmax():
    assert exponential_oracle_error(epsilon=1.0, sensitivity=0.1, m=100, gamma=0.01) == \
        pytest.approx(0.2 * math.log(1e4))
    oracle = exponential_oracle(epsilon=1e9, sensitivity=1.0)
    rng = np.random.default_rng(0)
    assert all(oracle(np.array([0.1, 0.5, 0.2]), rng) == 1 for _ in range(50))
    with pytest.raises(ValueError, match="epsilon"):
        exponential_oracle(epsilon=0.0, sensitivity=1.0)


def test_scmwu_is_deterministic_given_the_generator():
    rng = np.random.default_rng(4)
    A, b = _random_feasible_lp(rng, 20, 6)
    alg = BlockAlgebra(6)
    kw = dict(eta=0.1, iterations=200, oracle=exponential_oracle(epsilon=1.0, sensitivity=0.1))
    r1 = scmwu(sp.csr_matrix(A), b, alg, rng=np.random.default_rng(7), **kw)
    r2 = scmwu(sp.csr_matrix(A), b, alg, rng=np.random.default_rng(7), **kw)
    np.testing.assert_array_equal(r1.x, r2.x)


def test_fallback_kernel_agrees_with_cvxdp_jordan():
    rng = np.random.default_rng(5)
    alg = BlockAlgebra(4, (3, 5), (2, 4, 4))
    fallback = BlockAlgebra(4, (3, 5), (2, 4, 4))
    fallback.jordan = None
    for _ in range(3):
        y = 10 * rng.normal(size=alg.dim)
        np.testing.assert_allclose(fallback.normalized_exp(y), alg.normalized_exp(y),
                                   rtol=1e-9, atol=1e-15)
    assert alg.rank == alg.jordan.rank and np.array_equal(alg.gram, alg.jordan.gram)
