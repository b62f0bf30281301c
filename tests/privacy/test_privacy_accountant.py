import math

import pytest

from cvxdp import BudgetError
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord, compose
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP, zcdp_to_epsilon
from cvxdp.privacy.mechanisms import exponential_record, gaussian_record


def test_pure_composition_adds_epsilons():
    recs = [PrivacyRecord("a", PureDP(0.1), "x"), PrivacyRecord("b", PureDP(0.2), "x", count=3)]
    assert compose(recs, notion="pure").epsilon == pytest.approx(0.7)


def test_zcdp_composition_adds_rhos_and_uses_tighter_bounds():
    recs = [exponential_record(epsilon=0.4), gaussian_record(sigma=2.0, sensitivity=1.0)]
    assert compose(recs, notion="zcdp").rho == pytest.approx(0.4**2 / 8 + 1 / 8)


def test_approx_composition_is_the_tightest_sound_strategy():
    # Many small pure steps: the zCDP route wins over basic composition.
    many = [exponential_record(epsilon=0.01, count=1000)]
    eps = compose(many, notion="approx", delta=1e-6).epsilon
    assert eps == pytest.approx(zcdp_to_epsilon(1000 * 0.01**2 / 8, 1e-6))
    assert eps < 10.0
    # One pure step: basic composition (eps itself) wins over zCDP + conversion.
    one = [exponential_record(epsilon=0.5)]
    assert compose(one, notion="approx", delta=1e-6).epsilon == pytest.approx(0.5)


def test_mixed_approx_and_zcdp_steps_split_delta():
    recs = [PrivacyRecord("approx", ApproxDP(0.3, 4e-7), "x"),
            PrivacyRecord("zc", ZCDP(0.01), "x")]
    out = compose(recs, notion="approx", delta=1e-6)
    assert out.epsilon == pytest.approx(0.3 + zcdp_to_epsilon(0.01, 6e-7))
    with pytest.raises(BudgetError, match="already use delta"):
        compose(recs, notion="approx", delta=1e-7)


def test_composition_refuses_what_a_notion_cannot_express():
    with pytest.raises(BudgetError, match="not pure DP"):
        compose([PrivacyRecord("z", ZCDP(0.1), "x")], notion="pure")
    with pytest.raises(BudgetError, match="no zCDP bound"):
        compose([PrivacyRecord("a", ApproxDP(0.1, 1e-9), "x")], notion="zcdp")
    with pytest.raises(BudgetError, match="nothing to compose"):
        compose([], notion="zcdp")


def test_accountant_refuses_overspend_and_keeps_ledger():
    acct = PrivacyAccountant(PureDP(1.0))
    acct.spend(PrivacyRecord("a", PureDP(0.6), "lemma 1"))
    with pytest.raises(BudgetError, match="exceed the total budget"):
        acct.spend(PrivacyRecord("b", PureDP(0.5), "lemma 2"))
    assert [r.mechanism for r in acct.ledger] == ["a"]
    assert acct.spent.epsilon == pytest.approx(0.6)
    acct.spend(PrivacyRecord("c", PureDP(0.4), "lemma 3"))
    assert acct.spent.epsilon == pytest.approx(1.0)


def test_accountant_composes_gaussian_steps_exactly_in_gdp():
    # 50 Gaussian steps calibrated by exact GDP composition (mu_total = sqrt(50) / sigma) meet
    # (1, 1e-6) exactly -- tighter than zCDP + CKS, which would need a larger sigma.
    from cvxdp.privacy.budgets import zcdp_from_approx
    from cvxdp.privacy.gdp import gdp_sigma

    acct = PrivacyAccountant(ApproxDP(1.0, 1e-6))
    sigma = gdp_sigma(epsilon=1.0, delta=1e-6, steps=50)
    sigma_zcdp = 1.0 / math.sqrt(2 * zcdp_from_approx(1.0, 1e-6) / 50)
    assert sigma < sigma_zcdp
    for _ in range(50):
        acct.spend(gaussian_record(sigma=sigma, sensitivity=1.0))
    assert acct.spent.epsilon == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(BudgetError):
        acct.spend(gaussian_record(sigma=sigma, sensitivity=1.0))
    rep = acct.report(theorem="test", neighbouring="replace one row")
    assert rep.guarantee == "dp" and rep.mechanisms == {"gaussian": 50}
    assert rep.rho == pytest.approx(50 / (2 * sigma**2), rel=1e-9)


def test_gaussian_steps_mixed_with_pure_steps_split_delta():
    from cvxdp.privacy.gdp import gdp_epsilon

    recs = [gaussian_record(sigma=10.0, sensitivity=1.0, count=20), PrivacyRecord(
        "laplace", PureDP(0.2), "x")]
    eps = compose(recs, notion="approx", delta=1e-6).epsilon
    # never worse than giving all delta to the Gaussian block and adding the pure step
    assert eps <= gdp_epsilon(mu=math.sqrt(20) / 10, delta=1e-6) + 0.2 + 1e-9
    assert eps >= gdp_epsilon(mu=math.sqrt(20) / 10, delta=1e-6)


def test_records_are_immutable():
    r = exponential_record(epsilon=0.1)
    with pytest.raises(AttributeError):
        r.mechanism = "x"
    with pytest.raises(TypeError):
        r.params["epsilon"] = 3


def test_gaussian_record_checks_claims():
    with pytest.raises(BudgetError, match="calibrate sigma"):
        gaussian_record(sigma=1.0, sensitivity=1.0, epsilon=0.1, delta=1e-6)


def test_one_analytic_gaussian_step_fits_its_own_budget_exactly():
    # Its zCDP bound converted with CKS would give epsilon ~1.08 > 1; the basic route keeps the
    # exact analytic-Gaussian claim, so an accountant with exactly that total accepts it.
    import numpy as np

    from cvxdp.privacy.mechanisms import gaussian_mechanism

    acct = PrivacyAccountant(ApproxDP(1.0, 1e-6))
    gaussian_mechanism(np.zeros(3), sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=0,
                       accountant=acct)
    assert acct.spent.epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetError):
        acct.spend(exponential_record(epsilon=0.01))


def test_float_sampler_deltas_are_taken_out_of_the_total_or_reported_on_top():
    # records' params["float_delta"] (a float sampler's distance from its ideal law, see
    # exponential_float_delta) compose by basic composition: count * float_delta each
    fd = 2 * 1e-9
    ideal = [PrivacyRecord("exp", PureDP(0.5), "x", count=2),
             PrivacyRecord("zc", ZCDP(0.01), "x")]
    floaty = [PrivacyRecord("exp", PureDP(0.5), "x", params={"float_delta": 1e-9}, count=2),
              PrivacyRecord("zc", ZCDP(0.01), "x")]
    # "within" (default): the ideal steps compose at delta - fd and the result is (eps, delta)
    within = compose(floaty, notion="approx", delta=1e-6)
    assert within.delta == 1e-6
    assert within.epsilon == pytest.approx(
        compose(ideal, notion="approx", delta=1e-6 - fd).epsilon, rel=1e-12)
    assert within.epsilon > compose(ideal, notion="approx", delta=1e-6).epsilon
    # "on_top": the ideal steps compose at delta and the result reports delta + fd
    top = compose(floaty, notion="approx", delta=1e-6, float_deltas="on_top")
    assert top.delta == pytest.approx(1e-6 + fd, rel=1e-12)
    assert top.epsilon == pytest.approx(compose(ideal, notion="approx", delta=1e-6).epsilon)
    # a float delta that does not fit in the total falls back to on top (capped at 1)
    tiny = compose(floaty, notion="approx", delta=1e-9)
    assert tiny.delta == pytest.approx(1e-9 + fd, rel=1e-12)
    # the accountant's report shows the samplers' delta in details; within an (eps, delta)
    # total the report's delta is the total's, for a pure total it is the samplers' alone
    acct = PrivacyAccountant(ApproxDP(10.0, 1e-6))
    acct.spend(floaty[0])
    rep = acct.report()
    assert rep.details["float_delta"] == pytest.approx(fd, rel=1e-12)
    assert rep.delta == pytest.approx(1e-6)
    pure = PrivacyAccountant(PureDP(10.0))
    pure.spend(floaty[0])
    rep = pure.report()
    assert rep.epsilon == pytest.approx(1.0)
    assert rep.details["float_delta"] == pytest.approx(fd, rel=1e-12)
    assert rep.delta == pytest.approx(fd, rel=1e-12)
    # records without float samplers report nothing
    clean = PrivacyAccountant(ApproxDP(10.0, 1e-6))
    clean.spend(ideal[0])
    assert "float_delta" not in clean.report().details


def test_repr_says_the_total_the_spend_and_the_calls():
    """``repr(acct)`` was the default ``<... object at 0x...>`` (held-out trial 10)."""
    acct = PrivacyAccountant(ApproxDP(2.0, 1e-5))
    assert repr(acct) == ("PrivacyAccountant(total=ApproxDP(epsilon=2.0, delta=1e-05), "
                          "spent=None, calls=0)")
    acct.spend(PrivacyRecord("laplace", PureDP(0.5), "test"))
    text = repr(acct)
    assert text.startswith("PrivacyAccountant(total=ApproxDP(epsilon=2.0, delta=1e-05), spent=")
    assert text.endswith("calls=1)")
