"""Bounds, p-values and family-wise corrections of the auditor (issue 21 item 10)."""

import numpy as np
import pytest
from scipy import stats

from cvxdp.audit import (
    AuditResult,
    audit_family,
    audit_outputs,
    epsilon_lower_bound,
    epsilon_p_value,
    family_levels,
)


def test_clopper_pearson_upper_bound_at_tiny_levels():
    # 1 - alpha rounds to 1 below 1e-16; the bound must keep shrinking with alpha
    a = epsilon_lower_bound(np.array(5000), np.array(10), 150_000, 0.0, 1e-20)
    b = epsilon_lower_bound(np.array(5000), np.array(10), 150_000, 0.0, 1e-40)
    assert 1.0 < b < a
    # k = 0: the upper bound is 1 - alpha^(1/n), also at alpha = 1e-30
    hi = stats.beta.isf(1e-30, 1, 1000)
    assert hi == pytest.approx(1 - 1e-30 ** (1 / 1000), rel=1e-9)


def test_p_value_is_where_the_bound_crosses_the_claim():
    kp, kq, n = 700, 150, 225_000
    p = epsilon_p_value(kp, kq, n, n, 0.0, 1.0)
    assert 1e-8 < p < 1e-4
    assert epsilon_lower_bound(np.array(kp), np.array(kq), n, 0.0, p * 1.001) > 1.0
    assert epsilon_lower_bound(np.array(kp), np.array(kq), n, 0.0, p * 0.999) <= 1.0
    assert epsilon_p_value(100, 100, 1000, 1000, 0.0, 1.0) == 1.0


def test_holm_and_bonferroni_levels():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    levels, rej = family_levels(p, 0.05, "bonferroni")
    assert np.allclose(levels, 0.0125) and rej.tolist() == [True, False, False, True]
    levels, rej = family_levels(p, 0.05, "holm")
    # sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop there
    assert np.allclose(levels, [0.05 / 3, 0.025, 0.025, 0.0125])
    assert rej.tolist() == [True, False, False, True]
    levels, rej = family_levels(np.array([0.001, 0.02, 0.04]), 0.05, "holm")
    assert rej.all() and np.allclose(levels, [0.05 / 3, 0.025, 0.05])
    with pytest.raises(ValueError, match="holm"):
        family_levels(p, 0.05, "sidak")


def _result(kp, kq, n, eps=1.0):
    lo = float(epsilon_lower_bound(np.array(kp), np.array(kq), n, 0.0, 0.01))
    return AuditResult(lo, eps, 0.0, lo <= eps, 0.99, "e", kp / n, kq / n, 2 * n,
                       epsilon_p_value(kp, kq, n, n, 0.0, eps), n, (kp, n, kq, n))


def test_audit_family_relevels_each_result():
    broken = _result(700, 150, 225_000)   # p ~ 1e-6
    marginal = _result(640, 180, 225_000)  # p = 0.0187: between 0.05 / 3 and 0.05 / 2
    honest = _result(500, 200, 225_000)
    holm = audit_family([broken, marginal, honest], family_level=0.05, correction="holm")
    bonf = audit_family([broken, marginal, honest], family_level=0.05,
                        correction="bonferroni")
    assert [1 - r.confidence for r in bonf] == pytest.approx([0.05 / 3] * 3)
    assert [1 - r.confidence for r in holm] == pytest.approx([0.05 / 3, 0.025, 0.05])
    assert [r.passed for r in holm] == [False, False, True]   # Holm is more powerful
    assert [r.passed for r in bonf] == [False, True, True]
    for r, raw in zip(holm, (broken, marginal, honest), strict=True):
        assert r.passed == (r.p_value > 1 - r.confidence)
        assert r.counts == raw.counts
    # a stricter level gives a smaller bound on the same event
    assert bonf[1].epsilon_lower <= 1.0 < holm[1].epsilon_lower


def test_vector_gaussian_uses_the_likelihood_ratio_direction():
    # correlated noise: the mean difference is a poor direction, Sigma^-1 (mu - mu') is optimal
    rng = np.random.default_rng(0)
    cov = np.array([[1.0, 0.95], [0.95, 1.0]])
    L = np.linalg.cholesky(cov)
    shift = np.array([0.25, -0.25])  # Mahalanobis length 1.58
    n = 60_000
    a = rng.standard_normal((n, 2)) @ L.T
    b = shift + rng.standard_normal((n, 2)) @ L.T
    res = audit_outputs(a, b, epsilon=1.0, delta=1e-5)
    assert "Gaussian LR" in res.event
    assert not res.passed and res.epsilon_lower > 1.5


def test_scale_change_is_caught_by_the_quadratic_statistic():
    # same mean, noise scale 1 vs 2: only a two-sided (quadratic) event sees it
    rng = np.random.default_rng(1)
    n = 40_000
    res = audit_outputs(rng.normal(0, 2.0, n), rng.normal(0, 1.0, n), epsilon=1.0, delta=1e-5)
    assert res.event.startswith("Gaussian LR")
    assert not res.passed, res


def test_atoms_are_audited_as_outcomes():
    # a mechanism that outputs a sentinel -1 (a refusal) with probability 0.3 on D, 0.03 on D'
    rng = np.random.default_rng(2)
    n = 20_000

    def draw(p_refuse):
        return np.where(rng.random(n) < p_refuse, -1.0, rng.normal(0.0, 1.0, n))

    res = audit_outputs(draw(0.3), draw(0.03), epsilon=1.0, delta=0.0)
    assert not res.passed and res.epsilon_lower > 2.0  # true log ratio 2.30


def test_bad_arguments():
    with pytest.raises(ValueError, match="selection_fraction"):
        audit_outputs(np.zeros(200), np.zeros(200), epsilon=1, delta=0, selection_fraction=1.0)
    with pytest.raises(ValueError, match="differ in size"):
        audit_outputs(np.zeros((200, 2)), np.zeros((200, 3)), epsilon=1, delta=0)
    with pytest.raises(ValueError, match="family_level"):
        audit_family([], family_level=0.0)
