"""The batched SCMWU loop: numpy and numba give the same numbers for the same generator, and the
batched draws keep each round's mechanisms (exponential-mechanism law, Gaussian scale)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from cvxdp.privacy.mechanisms import exponential_probabilities
from cvxdp.solvers.mwu.loop import RowGaussianNoise, choose_backend, prepare_loop
from cvxdp.solvers.mwu.mwu import BlockAlgebra, scmwu
from cvxdp.solvers.mwu.oracles import exact_oracle, exponential_oracle


def _lp(m, n, seed):
    rng = np.random.default_rng(seed)
    A = rng.uniform(0, 1, (m, n))
    y = rng.dirichlet(np.ones(n))
    return sp.csr_matrix(A), A @ y + 0.01


def _noise(G, alg, sigma, d2=0.05):
    S = G.copy()
    S.data[:] = 1.0
    return RowGaussianNoise(S, np.full(G.shape[0], d2), sigma, alg.phi_scale)


def _both(G, h, alg, **kw):
    out = []
    for backend in ("numpy", "numba"):
        res = scmwu(G, h, alg, rng=np.random.default_rng(11), backend=backend, **kw)
        assert res.info["backend"] == backend
        out.append(res)
    return out


CASES = {
    # dense rows (BLAS mat-vec), orthant only, noisy losses (Alg 1)
    "orthant_dense": lambda: (*_lp(40, 15, 0), BlockAlgebra(15)),
    # sparse rows (CSR mat-vec) over orthant x two spin factors
    "soc_sparse": lambda: (sp.random(300, 260, density=0.05, random_state=2, format="csr"),
                           np.random.default_rng(3).uniform(0, 0.1, 300),
                           BlockAlgebra(200, (3, 57), ())),
    # every block kind: orthant x spin factor x two PSD blocks (eigh in both backends)
    "mixed_psd": lambda: (sp.csr_matrix(np.random.default_rng(4).normal(0, 0.1, (20, 28))),
                          np.full(20, 0.01), BlockAlgebra(3, (4,), (3, 5))),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("noisy", [True, False])
def test_numba_and_numpy_loops_give_the_same_numbers(case, noisy):
    pytest.importorskip("numba")
    G, h, alg = CASES[case]()
    kw = dict(eta=0.05, iterations=3000, loss_scale=0.5,
              oracle=exponential_oracle(epsilon=2.0, sensitivity=0.05),
              noise=_noise(G, alg, 3.0) if noisy else None)
    a, b = _both(G, h, alg, **kw)
    np.testing.assert_array_equal(a.chosen, b.chosen)  # the same rows, round by round
    np.testing.assert_allclose(a.x, b.x, rtol=1e-12, atol=1e-15)
    assert a.chosen.sum() == 3000 and alg.trace(a.x) == pytest.approx(1.0, abs=1e-12)


def test_numba_and_numpy_loops_agree_with_the_exact_oracle():
    pytest.importorskip("numba")
    G, h, alg = CASES["soc_sparse"]()
    a, b = _both(G, h, alg, eta=0.1, iterations=2000, oracle=exact_oracle())
    np.testing.assert_array_equal(a.chosen, b.chosen)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-12, atol=1e-15)


def test_batched_loop_reaches_theorem_c2_like_the_round_at_a_time_loop():
    G, h = _lp(40, 12, 1)
    alg = BlockAlgebra(12)
    alpha = 0.1
    T = math.ceil(16 * math.log(alg.rank) / alpha**2)
    for backend in ("numpy", "python"):
        res = scmwu(G, h, alg, eta=alpha / 4, iterations=T, oracle=exact_oracle(),
                    rng=np.random.default_rng(0), backend=backend)
        assert np.max(G @ res.x - h) <= alpha, backend


@pytest.mark.parametrize("backend", ["numpy", "numba", "python"])
def test_loop_oracle_draws_pass_a_chi_square_audit_against_softmax(backend):
    # G = 0: every round's scores are -h and the loss is zero, so the T chosen rows are T
    # independent exponential-mechanism draws (by inversion, one uniform each) on fixed scores
    if backend == "numba":
        pytest.importorskip("numba")
    alg = BlockAlgebra(3)
    G = sp.csr_matrix((5, 3))
    h = np.array([0.0, 0.01, 0.02, 0.04, 0.05])
    eps, sens, T = 2.0, 0.02, 30000
    res = scmwu(G, h, alg, eta=0.1, iterations=T, rng=np.random.default_rng(31),
                backend=backend, oracle=exponential_oracle(epsilon=eps, sensitivity=sens))
    assert res.info["backend"] == backend and res.chosen.sum() == T
    p = exponential_probabilities(-h, epsilon=eps, sensitivity=sens)
    assert stats.chisquare(res.chosen, T * p).pvalue > 1e-3
    # the audit has power: the law at 1.25 x epsilon is rejected on the same draws
    q = exponential_probabilities(-h, epsilon=1.25 * eps, sensitivity=sens)
    assert stats.chisquare(res.chosen, T * q).pvalue < 1e-6


def test_numpy_and_numba_loops_draw_the_same_rows_from_the_same_seed():
    pytest.importorskip("numba")
    alg = BlockAlgebra(3)
    G = sp.csr_matrix((5, 3))
    h = np.array([0.0, 0.01, 0.02, 0.04, 0.05])
    runs = [scmwu(G, h, alg, eta=0.1, iterations=5000, rng=np.random.default_rng(4),
                  backend=b, oracle=exponential_oracle(epsilon=2.0, sensitivity=0.02))
            for b in ("numpy", "numba")]
    np.testing.assert_array_equal(runs[0].chosen, runs[1].chosen)


def test_batched_gaussian_noise_has_the_calibrated_scale():
    # with a zero loss row, x^2 = exp(-step * z) / tr: -log x^2 differences are step * (z_i - z_j)
    alg = BlockAlgebra(3)
    G = sp.csr_matrix(np.array([[1e-300, 1e-300, 1e-300]]))
    h = np.zeros(1)
    sigma, d2, eta = 2.0, 0.5, 0.1
    noise = _noise(G, alg, sigma, d2)
    rng = np.random.default_rng(9)
    diffs = []
    for _ in range(3000):
        res = scmwu(G, h, alg, eta=eta, iterations=2, rng=rng, oracle=exact_oracle(),
                    noise=noise, backend="numpy")
        x2 = 2 * res.x - alg.identity() / alg.rank
        diffs.append(-np.log(x2[0]) + np.log(x2[1]))
    sd = np.std(diffs) / eta
    expected = math.sqrt(2) * sigma * d2  # z_i - z_j, each N(0, (sigma d2)^2)
    assert sd == pytest.approx(expected, rel=0.06)


def test_backend_is_validated_and_many_psd_blocks_stay_in_numpy():
    G, h = _lp(5, 6, 0)
    alg = BlockAlgebra(0, (), (3,))
    with pytest.raises(ValueError, match="backend"):
        scmwu(G, h, alg, eta=0.1, iterations=2, oracle=exact_oracle(),
              rng=np.random.default_rng(0), backend="fortran")
    many = BlockAlgebra(0, (), (2,) * 9)  # more than PER_BLOCK_PSD blocks: batched eigh
    Gm = sp.csr_matrix(np.ones((2, many.dim)))
    d = prepare_loop(Gm, np.zeros(2), many, step=0.1, scale=1.0, gumbel=False, noise=None)
    assert choose_backend("numba", d, 10) == "numpy"
    res = scmwu(Gm, np.zeros(2), many, eta=0.1, iterations=5, oracle=exact_oracle(),
                rng=np.random.default_rng(0), backend="numba")
    assert res.info["backend"] == "numpy" and many.trace(res.x) == pytest.approx(1.0)
    short = scmwu(G, h, alg, eta=0.1, iterations=5, oracle=exact_oracle(),
                  rng=np.random.default_rng(0))
    assert short.info["backend"] == "numpy"  # "auto": too short to repay numba's start-up
    with pytest.raises(ValueError, match="backend"):
        scmwu(G, h, alg, eta=0.1, iterations=2, oracle=lambda s, r: 0,
              rng=np.random.default_rng(0), backend="numba")


def test_compiled_exp_is_within_its_proven_error():
    # the kernel's exp (weights of the exponential mechanism, orthant iterates): within 4.5 h
    # relative (its docstring's bound, inside EXP_ERROR_U = 8 h of the sampler's analysis) on
    # [EXP_FLOOR, 0] against an extended-precision reference, 0 below EXP_FLOOR, exp(0) = 1
    pytest.importorskip("numba")
    from cvxdp.privacy.inversion_sampler import EXP_ERROR_U
    from cvxdp.solvers.mwu.loop_numba import EXP_FLOOR, compiled_exp

    if np.finfo(np.longdouble).nmant < 60:
        pytest.skip("needs 80-bit long double for the reference")
    rng = np.random.default_rng(12)
    y = np.concatenate([rng.uniform(EXP_FLOOR, 0, 1_000_000), -rng.uniform(0, 1, 500_000),
                        -rng.exponential(1e-8, 10_000), [0.0, -0.0, EXP_FLOOR, -5e-324],
                        -np.log(2) * (np.arange(1, 1021) + 0.5)])  # reduction's boundaries
    out = y.copy()
    bits = np.empty(out.size, dtype=np.int64)
    compiled_exp()(out, out.size, bits, bits.view(np.float64))
    ref = np.exp(y.astype(np.longdouble))
    rel = (np.abs(out.astype(np.longdouble) - ref) / ref).astype(float).max() / 2.0**-53
    assert rel <= 4.5 <= EXP_ERROR_U
    assert out[y == 0.0].tolist() == [1.0, 1.0]
    low = np.array([-708.5, -745.2, -1e5, -np.inf])
    bits = np.empty(low.size, dtype=np.int64)
    compiled_exp()(low, low.size, bits, bits.view(np.float64))
    assert low.tolist() == [0.0] * 4
