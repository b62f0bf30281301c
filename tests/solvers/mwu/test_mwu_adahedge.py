"""AdaHedge's step in the MWU loop (docs/mwu.md, "Step"): the numpy and compiled loops agree
with each other and, on the orthant, with a direct transcription of AdaHedge (de Rooij, van
Erven, Gruenwald & Koolen 2014); the average iterate meets Thm C.2 with the step's regret
bound ``S sqrt(T ln r) + 2 S`` (``S = 2``), on orthant, spin-factor and PSD blocks."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
import scipy.sparse as sp

from cvxdp.solvers.mwu.loop import RowGaussianNoise
from cvxdp.solvers.mwu.mwu import BlockAlgebra, scmwu
from cvxdp.solvers.mwu.oracles import exact_oracle, exponential_oracle


def _lp(m, n, seed, density=1.0):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (m, n)) * (rng.uniform(0, 1, (m, n)) < density)
    y = rng.dirichlet(np.ones(n))
    return sp.csr_matrix(A), A @ y  # feasible, no slack: the hardest case for the bound


def _adahedge_reference(G, h, T):
    """AdaHedge as written in the paper (Hedge with eta_t = ln K / Delta_{t-1}, playing the
    leader while Delta = 0), with the exact oracle; returns the average iterate."""
    G = G.toarray()
    K = G.shape[1]
    L, Delta, xs = np.zeros(K), 0.0, np.zeros(K)
    x = np.full(K, 1.0 / K)
    for _ in range(T):
        xs += x
        loss = G[int(np.argmax(G @ x - h))]
        if Delta > 0:
            eta = math.log(K) / Delta
            mix = -math.log(sum(x[i] * math.exp(-eta * (loss[i] - loss.min()))
                                for i in range(K))) / eta + loss.min()
        else:
            mix = min(loss[i] for i in range(K) if x[i] > 0)
        Delta += max(float(loss @ x) - mix, 0.0)
        L += loss
        if Delta > 0:
            w = np.exp(-math.log(K) / Delta * (L - L.min()))
        else:
            w = (L == L.min()).astype(float)
        x = w / w.sum()
    return xs / T


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_loop_matches_the_paper_transcription(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    G, h = _lp(12, 7, 0)
    ref = _adahedge_reference(G, h, 1500)
    res = scmwu(G, h, BlockAlgebra(7), eta=0.3, iterations=1500, oracle=exact_oracle(),
                rng=np.random.default_rng(0), backend=backend, adaptive=True)
    np.testing.assert_allclose(res.x, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("density", [1.0, 0.3])
@pytest.mark.parametrize("noisy", [False, True])
def test_numba_and_numpy_agree(density, noisy):
    pytest.importorskip("numba")
    G, h = _lp(60, 20, 1, density)
    alg = BlockAlgebra(20)
    S = G.copy()
    S.data[:] = 1.0
    noise = RowGaussianNoise(S, np.full(60, 0.05), 2.0, alg.phi_scale) if noisy else None
    out = [scmwu(G, h, alg, eta=0.1, iterations=3000, loss_scale=0.5,
                 oracle=exponential_oracle(epsilon=5.0, sensitivity=0.05), noise=noise,
                 rng=np.random.default_rng(3), backend=b, adaptive=True)
           for b in ("numpy", "numba")]
    np.testing.assert_array_equal(out[0].chosen, out[1].chosen)
    np.testing.assert_allclose(out[0].x, out[1].x, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_average_meets_theorem_c2_with_the_adahedge_regret(seed):
    # exact oracle, rows with ||a_i||_inf <= 1 (losses in [-1, 1], S = 2): the average's
    # largest violation is at most the regret over T (Thm C.2's proof), <= 2 sqrt(ln r / T) + 4/T
    G, h = _lp(30, 10, seed)
    T = 4000
    res = scmwu(G, h, BlockAlgebra(10), eta=1.0, iterations=T, oracle=exact_oracle(),
                rng=np.random.default_rng(0), adaptive=True)
    viol = float(np.max(G @ res.x - h))
    assert viol <= 2 * math.sqrt(math.log(10) / T) + 4 / T
    assert abs(res.x.sum() - 1) < 1e-12 and res.x.min() >= 0


def _cone_rows(alg, m, seed):
    """Rows with spectral norm <= 1 in the algebra (dual coordinates) and right-hand sides
    met by a random distribution (feasible, no slack)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(m):
        a = rng.normal(0, 1, alg.dim)
        a /= alg.norm_inf(a)
        rows.append(alg.gram * a)
    G = np.array(rows)
    y = alg.normalized_exp(rng.normal(0, 1, alg.dim))  # a distribution in the cone
    return sp.csr_matrix(G), G @ y


@pytest.mark.parametrize("alg", [BlockAlgebra(2, (3, 4), ()), BlockAlgebra(1, (3,), (3, 4))])
def test_cone_blocks_backends_agree_and_meet_theorem_c2(alg):
    # on spin-factor and PSD blocks the gap is taken with Golden-Thompson (docs/mwu.md); the
    # regret bound, hence Thm C.2's violation bound, is the same: 2 sqrt(ln r / T) + 4 / T
    G, h = _cone_rows(alg, 12, 6)
    T = 3000
    out = []
    for backend in ("numpy", "numba"):
        if backend == "numba" and importlib.util.find_spec("numba") is None:
            continue
        out.append(scmwu(G, h, alg, eta=1.0, iterations=T, oracle=exact_oracle(),
                         rng=np.random.default_rng(0), backend=backend, adaptive=True))
    if len(out) == 2:
        np.testing.assert_array_equal(out[0].chosen, out[1].chosen)
        np.testing.assert_allclose(out[0].x, out[1].x, rtol=1e-12, atol=1e-14)
    x = out[0].x
    assert float(np.max(G @ x - h)) <= 2 * math.sqrt(math.log(alg.rank) / T) + 4.1 / T
    assert alg.trace(x) == pytest.approx(1.0, abs=1e-12) and alg.eigenvalues(x).min() > -1e-12


def test_adaptive_step_needs_a_batched_backend():
    G, h = _lp(5, 4, 5)
    with pytest.raises(ValueError, match="batched"):
        scmwu(G, h, BlockAlgebra(4), eta=0.1, iterations=10, oracle=exact_oracle(),
              rng=np.random.default_rng(0), backend="python", adaptive=True)
