"""One accountant spent across several solvers (issue 25 item 1).

A user-held :class:`cvxdp.PrivacyAccountant` is passed as ``accountant=`` to three different
solvers; each call is checked against what is left *before it reads any data* and recorded
after it; the call that would overspend is refused with :class:`cvxdp.BudgetError` and reads
nothing.  Totals are checked against independent formulas: zCDP composition adds rho (Bun &
Steinke 2016, Lemma 2.3); pure DP adds epsilon (Dwork & Roth 2014, Thm 3.16).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import BudgetError, PrivacyGuaranteeError

_G = np.random.default_rng(3)
_X = _G.uniform(-0.5, 0.5, (80, 2))
_Y = _X @ np.array([0.4, -0.3])
_PTS = _G.uniform(0, 1, (80, 2))
_COVER = _G.uniform(0.1, 0.5, (30, 3))


def _lp():
    A = cp.Parameter((3, 2), name="A", value=np.array([[0.5, 0.2], [0.1, 0.6], [0.3, 0.3]]))
    x = cp.Variable(2, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x >= 0, x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=0.01)


class _Untouchable:
    """Data whose every access fails: a call that reads it cannot pass unnoticed."""

    def __getattr__(self, name):
        raise AssertionError(f"the data were read ({name}) although the budget was refused")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data were read (__array__) although the budget was refused")


def _three_calls(acct, budgets):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ls = cvxdp.least_squares(_X, _Y, row_bound=1.0).solve_private(
            rng=0, accountant=acct, **budgets[0])
        meb = cvxdp.min_enclosing_ball(_PTS).solve_private(
            bounds=(np.zeros(2), np.ones(2)), rng=0, accountant=acct, **budgets[1])
        prob, spec = _lp()
        lp = cvxdp.solve_private(prob, private=spec, max_iterations=5, rng=0, accountant=acct,
                                 **budgets[2])
    return ls, meb, lp


def test_one_zcdp_accountant_across_three_solvers_refuses_the_fourth_before_reading_data(
        monkeypatch):
    acct = cvxdp.PrivacyAccountant(cvxdp.ZCDP(0.5))
    rhos = [0.1, 0.15, 0.2]
    sols = _three_calls(acct, [{"rho": r} for r in rhos])
    for sol, rho in zip(sols, rhos, strict=True):   # each call kept within what it asked
        assert sol.privacy.rho <= rho * (1 + 1e-9)
    names = [r.mechanism for r in acct.ledger]
    assert names == ["LeastSquaresProblem.solve_private", "MinEnclosingBall.solve_private",
                     "solve_private(Problem)"]
    assert [r.budget.rho for r in acct.ledger] == rhos
    assert acct.spent.rho == pytest.approx(sum(rhos), rel=1e-12)   # zCDP adds rho
    rep = acct.report()
    assert rep.rho == pytest.approx(0.45, rel=1e-12) and rep.guarantee == "dp"
    text = str(rep).splitlines()
    assert len(text) == 1 + 3 + 1 and "rho=0.45" in text[-1]
    assert text[2].startswith("MinEnclosingBall.solve_private") and "rho=0.15" in text[2]

    # the fourth call asks rho=0.1 > 0.05 left: refused before the data are touched
    with pytest.raises(BudgetError) as err:
        cvxdp.random_projection(_Untouchable(), epsilon=0.1, delta=1e-6, r=3, row_bound=1.0,
                                accountant=acct)
    assert "rho= (zCDP)" in str(err.value)      # an (eps, delta) call cannot enter zCDP
    cover = cvxdp.covering_lp(_COVER)
    cover.data = _Untouchable()
    with pytest.raises(BudgetError) as err:
        cover.solve_private(rho=0.1, rng=0, accountant=acct)
    msg = str(err.value)
    assert "asks for rho=0.1" in msg and "spent rho=0.45" in msg and "rho=0.05 remaining" in msg
    import cvxdp.geometry.meb.meb_solve as meb_solve

    ran = []
    monkeypatch.setattr(meb_solve, "solve_private_meb", lambda *a, **k: ran.append(1))
    with pytest.raises(BudgetError, match="asks for rho=0.06"):
        cvxdp.min_enclosing_ball(_PTS).solve_private(rho=0.06, accountant=acct,
                                                     bounds=(np.zeros(2), np.ones(2)))
    assert ran == [] and len(acct.ledger) == 3   # nothing ran, nothing recorded
    # what is left still fits
    cvxdp.covering_lp(_COVER).solve_private(rho=0.05, rng=0, accountant=acct)
    assert acct.spent.rho == pytest.approx(0.5, rel=1e-12)


def test_a_pure_dp_accountant_adds_epsilons():
    acct = cvxdp.PrivacyAccountant(cvxdp.PureDP(2.0))
    cvxdp.covering_lp(_COVER).solve_private(epsilon=0.5, rng=0, accountant=acct)
    prob, spec = _lp()
    with pytest.raises(BudgetError, match="needs delta > 0"):  # a typed refusal spends nothing
        cvxdp.solve_private(prob, private=spec, epsilon=0.7, rng=0, accountant=acct,
                            mechanism="perturbation", noise="gaussian")
    assert len(acct.ledger) == 1
    mats = np.stack([np.diag(r) for r in _COVER[:, :2]])
    cvxdp.covering_sdp(mats).solve_private(epsilon=0.7, rng=0, accountant=acct)
    assert acct.spent.epsilon == pytest.approx(1.2, rel=1e-12)
    with pytest.raises(BudgetError, match=r"eps=0.8 remaining"):
        cvxdp.covering_lp(_COVER).solve_private(epsilon=1.0, rng=0, accountant=acct)
    rep = acct.report()
    assert rep.epsilon == pytest.approx(1.2, rel=1e-12) and rep.delta == 0.0


def test_an_approx_accountant_composes_no_worse_than_basic_composition():
    acct = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(3.0, 1e-5))
    budgets = [{"epsilon": 1.0, "delta": 1e-6}, {"epsilon": 1.0, "delta": 1e-6},
               {"epsilon": 0.5, "delta": 1e-6}]
    sols = _three_calls(acct, budgets)
    spent = acct.spent
    # basic composition: 2.5 at delta 3e-6 <= 1e-5; the accountant's composition is never worse
    assert spent.delta == 1e-5 and spent.epsilon <= 2.5 * (1 + 1e-12)
    rhos = [r.zcdp.rho for r in acct.ledger]   # each call's own report proves rho-zCDP
    assert rhos == [sol.privacy.rho for sol in sols]
    # the last call is charged as checked before it ran: its stated (0.5, 1e-6) on top of the
    # first two calls' rho, converted at the delta left (Bun & Steinke Prop. 1.3 bounds it)
    rho = sum(rhos[:2])
    textbook = 0.5 + rho + 2 * np.sqrt(rho * np.log(1 / 9e-6))
    assert spent.epsilon <= min(2.5, textbook) * (1 + 1e-9)


def test_the_call_must_state_its_budget_and_only_dp_can_be_spent():
    acct = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(1.0, 1e-6))
    with pytest.raises(BudgetError, match="state this call's budget"):
        cvxdp.least_squares(_X, _Y, row_bound=1.0).solve_private(accountant=acct)
    with pytest.raises(PrivacyGuaranteeError, match="relative DP"):
        cvxdp.estimation.random_projection.relative_random_projection(
            _Untouchable(), epsilon=0.5, delta=1e-7, r=3, row_bound=1.0, accountant=acct)
    assert acct.ledger == ()


def test_the_readme_session_prints_the_numbers_it_quotes():
    """README.md, Quickstart: the accountant block (its numbers depend on public budgets only)."""
    rng = np.random.default_rng(0)
    usage = rng.uniform(0, 1, (40, 15))
    A = cp.Parameter((40, 15), name="A", value=usage)
    x = cp.Variable(15, nonneg=True)
    prob = cp.Problem(cp.Maximize(rng.uniform(0, 1, 15) @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    acct = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(2.0, 1e-5))
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, private=spec, accountant=acct)
        cvxdp.least_squares(usage[:, :3], usage[:, 3], row_bound=2.0).solve_private(
            epsilon=0.5, delta=1e-6, rng=7, accountant=acct)
    rep = acct.report()
    assert rep.epsilon == pytest.approx(1.45985, abs=1e-5) and rep.rho == pytest.approx(
        0.0357, abs=1e-4)
    assert rep.details["ledger_composition"].epsilon == pytest.approx(1.08867, abs=1e-5)
    with pytest.raises(BudgetError, match=r"eps=0\.540153 at delta=1e-05 remaining\); the "
                                          r"composition would be eps=2\.0954"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=8, private=spec, accountant=acct)


def test_pure_dp_session_says_what_it_can_run():
    import pytest

    rng = np.random.default_rng(0)
    A = cp.Parameter((20, 5), name="A", value=rng.uniform(0, 1, (20, 5)))
    x = cp.Variable(5, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, cp.sum(x) <= 2])
    acct = cvxdp.PrivacyAccountant(cvxdp.PureDP(2.0))
    with pytest.raises(cvxdp.BudgetError, match="pure-DP session.*ScalarPrivacy.*ApproxDP"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, accountant=acct,
                           private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))


def _five_fits(acct, seeds=range(5)):
    """Five least-squares fits at (0.2, 1e-7) on ``acct``; the number that ran."""
    for k, seed in enumerate(seeds):
        try:
            cvxdp.least_squares(_X, _Y, row_bound=1.0).solve_private(
                epsilon=0.2, delta=1e-7, rng=seed, accountant=acct)
        except BudgetError:
            return k
    return len(seeds)


def test_the_reported_spend_is_what_the_refusal_rule_charges():
    """An accountant's reported spend and its refusal rule agree: a fresh accountant whose total
    is the reported spend of a session runs the same session, and one a little below it refuses
    its last call.  Before: five fits at (0.2, 1e-7) on a (10, 1e-6) total reported
    epsilon 0.4498 spent, and a fresh (0.4498, 1e-6) accountant refused the third fit (its
    check composed the call at its stated (0.2, 1e-7), the ledger at the call's rho)."""
    acct = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(10.0, 1e-6))
    assert _five_fits(acct) == 5
    spent = acct.report()
    assert spent.epsilon <= 5 * 0.2 and spent.delta == 1e-6   # no worse than basic composition
    # docs/privacy.md, "Sessions": charged 0.602, the ledger composes to 0.450
    assert round(spent.epsilon, 3) == 0.602
    assert round(spent.details["ledger_composition"].epsilon, 3) == 0.450
    fresh = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(spent.epsilon, spent.delta))
    assert _five_fits(fresh) == 5
    assert fresh.report().epsilon == pytest.approx(spent.epsilon, rel=1e-12)
    short = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(spent.epsilon * (1 - 1e-6), spent.delta))
    assert _five_fits(short) == 4


def test_spent_is_an_attribute_like_total_and_the_old_call_is_deprecated():
    acct = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(1.0, 1e-6))
    assert acct.spent is None
    cvxdp.least_squares(_X, _Y, row_bound=1.0).solve_private(
        epsilon=0.2, delta=1e-7, rng=0, accountant=acct)
    assert isinstance(acct.spent, cvxdp.ApproxDP) and isinstance(acct.total, cvxdp.ApproxDP)
    with pytest.warns(DeprecationWarning, match="acct.spent, not acct.spent()"):
        old = acct.spent()
    assert old == acct.spent and old.epsilon == pytest.approx(0.2)   # one call: its own budget
