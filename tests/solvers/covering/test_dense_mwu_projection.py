"""Bregman projection onto 1/s-dense distributions and the dense MWU (paper 002, Def B.2,
Alg. 2, Lemma B.3, Lemma B.6)."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cvxdp.solvers.covering.dense_mwu import (
    DenseMWU,
    bregman_project,
    bregman_project_log,
    dense_mwu_regret,
    scp_dense_mwu,
)


def _bisection_projection(F, s):
    """Independent reference: bisection on c for sum min(1, c F) = s (float64, 200 steps)."""
    lo, hi = 0.0, s / F.min() + 1.0
    for _ in range(200):
        c = (lo + hi) / 2
        if np.minimum(1, c * F).sum() < s:
            lo = c
        else:
            hi = c
    return np.minimum(1, hi * F) / s


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("seed", range(6))
def test_projection_matches_bisection_and_cvxpy_kl(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(5, 60))
    s = float(rng.uniform(1, m))
    F = rng.exponential(size=m) ** 3
    p = bregman_project(F, s)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert p.max() <= 1 / s + 1e-12 and p.min() >= 0
    np.testing.assert_allclose(p, _bisection_projection(F, s), atol=1e-12)
    # KL projection by a convex solver (independent of the closed form)
    q = cp.Variable(m)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.kl_div(q, F / F.sum()))),
                      [cp.sum(q) == 1, q <= 1 / s, q >= 0])
    prob.solve(solver=cp.CLARABEL)

    def kl(x):
        f = F / F.sum()
        nz = x > 0
        return float(np.sum(x[nz] * np.log(x[nz] / f[nz])))

    # the closed form is optimal: never worse than the solver's point, and close to it
    assert kl(p) <= prob.value + 1e-7
    if prob.status == cp.OPTIMAL:
        assert kl(p) == pytest.approx(prob.value, abs=1e-5)
        np.testing.assert_allclose(p, q.value, atol=2e-3)


def test_projection_scale_invariant_and_log_space_extremes():
    rng = np.random.default_rng(3)
    lw = rng.normal(scale=400.0, size=200)  # weights spanning ~ e^{+-1000}
    p = bregman_project_log(lw, 17)
    np.testing.assert_allclose(p, bregman_project_log(lw + 1234.5, 17), atol=1e-15)
    assert p.sum() == pytest.approx(1.0) and p.max() <= 1 / 17 + 1e-15
    # the top entries are capped at exactly 1/s
    top = np.argsort(-lw)[:5]
    np.testing.assert_allclose(p[top], 1 / 17)


def test_projection_uniform_and_integer_s_edge():
    p = bregman_project(np.ones(10), 10)  # only the uniform distribution is 1/10-dense
    np.testing.assert_allclose(p, 0.1)
    p = bregman_project(np.array([5.0, 1, 1, 1]), 1)  # s = 1: plain normalisation
    np.testing.assert_allclose(p, np.array([5.0, 1, 1, 1]) / 8)


@pytest.mark.parametrize("seed", range(5))
def test_lemma_b6_neighbouring_projections(seed):
    """Adding one action: shared entries can only go down, ||y - y'||_1 <= 2/s."""
    rng = np.random.default_rng(seed)
    m, s = 80, 9.0
    lw = rng.normal(scale=3.0, size=m)
    extra = rng.normal(scale=3.0) + (5.0 if seed % 2 else -5.0)
    y = bregman_project_log(lw, s)
    y2 = bregman_project_log(np.append(lw, extra), s)
    assert np.all(y2[:m] <= y + 1e-15)
    l1 = np.abs(y - y2[:m]).sum() + y2[m]
    assert l1 <= 2 / s + 1e-12
    assert y[: m].sum() - y2[:m].sum() == pytest.approx(y2[m], abs=1e-12)


def test_projection_rejects_bad_input():
    with pytest.raises(ValueError, match="at least s"):
        bregman_project(np.ones(3), 5)
    with pytest.raises(ValueError, match="s must be >= 1"):
        bregman_project(np.ones(3), 0.5)
    with pytest.raises(ValueError, match="NaN"):
        bregman_project_log(np.array([0.0, np.nan, 1.0]), 1)
    with pytest.raises(ValueError, match="non-negative"):
        bregman_project(np.array([1.0, -1.0]), 1)


def test_dense_mwu_regret_bound_holds_adversarially():
    """Lemma B.3 against the best s-subset, on random losses (T = 300, m = 50)."""
    rng = np.random.default_rng(0)
    m, s, T = 50, 5.0, 300
    eta = float(np.sqrt(np.log(m) / T))
    mwu = DenseMWU(m, s, eta)
    L = rng.uniform(size=(T, m)) * np.linspace(0.2, 1.0, m)[None, :]
    played = 0.0
    for t in range(T):
        played += mwu.distribution() @ L[t]
        mwu.update(L[t])
    best = np.sort(L.sum(axis=0))[: int(s)].mean()  # uniform on the best s actions
    assert played / T <= best / T + dense_mwu_regret(eta, T, m)
    # and the algorithm learns: much better than uniform play
    assert played / T < L.mean() - 0.1


def test_scp_dense_mwu_average_and_history():
    rng = np.random.default_rng(1)
    A = rng.uniform(size=(30, 4))

    def oracle(y, gen):  # exact oracle: best column for the weighted constraints
        e = np.zeros(4)
        e[int(np.argmax(y @ A))] = 1.0
        return e

    res = scp_dense_mwu(oracle, lambda x: A @ x, 30, s=3, T=40, eta=0.3,
                        rng=np.random.default_rng(0), keep_history=True)
    assert res.average.sum() == pytest.approx(1.0)
    assert len(res.iterates) == 40 and len(res.distributions) == 40
    assert all(d.max() <= 1 / 3 + 1e-12 for d in res.distributions)


def test_dense_mwu_rejects_bad_losses():
    mwu = DenseMWU(5, 2, 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        mwu.update(np.full(5, 2.0))
    with pytest.raises(ValueError, match="shape"):
        mwu.update(np.zeros(4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-30, 30), min_size=2, max_size=40), st.floats(0.0, 1.0))
def test_projection_kkt_property(logw, frac):
    """p = min(1, c F)/s: one ratio p/F on uncapped entries, capped entries have c F >= 1."""
    lw = np.array(logw)
    s = 1.0 + frac * (lw.size - 1)
    p = bregman_project_log(lw, s)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    assert p.max() <= 1 / s * (1 + 1e-9)
    F = np.exp(lw - lw.max())
    capped = p >= (1 / s) * (1 - 1e-9)
    free = ~capped
    if free.any():
        c = (p[free] * s / F[free])
        np.testing.assert_allclose(c, c[0], rtol=1e-8)
        assert np.all(c[0] * F[capped] >= 1 - 1e-8)
