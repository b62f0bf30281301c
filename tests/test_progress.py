"""Issue 25 item 3: ``verbose=True`` prints, like CVXPY's, a header (size, budget), a progress
bar that stays on screen (tqdm when installed, plain text otherwise) and a summary line (status,
iterations, time, budget spent, the accuracy guaranteed or why none)."""

import sys

import numpy as np
import pytest

import cvxdp


def _no_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm -> ImportError


def test_structured_solve_verbose_prints_header_and_summary(monkeypatch, capsys):
    _no_tqdm(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (2000, 3))
    y = X @ np.array([1.0, -0.5, 0.25])
    sol = cvxdp.least_squares(X, y, row_bound=1.0).solve_private(
        epsilon=1.0, delta=1e-6, rng=0, verbose=True)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("cvxdp") and "epsilon=1" in lines[0] and "delta=1e-06" in lines[0]
    assert "3 variables" in out
    assert max(len(x) for x in lines) <= 100
    last = " ".join(x.strip() for x in out[out.index("cvxdp: status"):].splitlines())
    assert f"status {sol.status}" in last and "budget spent: epsilon=1, delta=1e-06" in last
    assert "time" in last and "accuracy" in last


def test_structured_solve_is_silent_without_verbose(capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (500, 2))
    cvxdp.least_squares(X, X[:, 0], row_bound=1.0).solve_private(epsilon=1.0, delta=1e-6, rng=0)
    assert capsys.readouterr().out == ""


def test_plain_bar_without_tqdm_stays_on_screen(monkeypatch, capsys):
    from cvxdp.progress import progress_bar

    _no_tqdm(monkeypatch)
    assert list(progress_bar(range(50), desc="MWU")) == list(range(50))
    out = capsys.readouterr().out
    assert "\r" not in out
    assert out.splitlines() == [f"  MWU: {k}/50 iterations ({2 * k}%)" for k in range(5, 51, 5)]
    assert list(progress_bar(range(3), verbose=False)) == [0, 1, 2]
    assert capsys.readouterr().out == ""


def test_tqdm_bar_is_left_on_screen():
    pytest.importorskip("tqdm")
    from cvxdp.progress import progress_bar

    bar = progress_bar(range(5), desc="MWU")
    assert bar.leave is True and bar.total == 5
    bar.close()


def _solution(**kw):
    from cvxdp.privacy.accountant import PrivacyReport
    from cvxdp.solution import PrivateSolution

    rep = PrivacyReport(guarantee="dp", epsilon=0.5, delta=1e-6, rho=None,
                        neighbouring="replace one row", theorem="test")
    return PrivateSolution(privacy=rep, solve_time=0.25, **kw)


def test_summary_names_the_guaranteed_accuracy_or_why_none(capsys):
    from cvxdp.progress import summary

    line = summary(_solution(status="optimal_inaccurate", iterations=40,
                             info={"alpha_guaranteed": 0.125}))
    assert line == ("cvxdp: status optimal_inaccurate; iterations 40; time 0.25 s; budget spent: "
                    "epsilon=0.5, delta=1e-06; accuracy guaranteed: alpha=0.125")
    line = summary(_solution(status="user_limit", iterations=7,
                             info={"status_reason": "the bound is vacuous at this budget"}))
    assert line.endswith("accuracy not guaranteed: the bound is vacuous at this budget")
    line = summary(_solution(status="optimal_inaccurate", iterations=3,
                             info={"accuracy": 0.2, "beta": 1e-3, "method": "x"}))
    assert line.endswith("accuracy guaranteed: accuracy=0.2, beta=0.001")
    out = capsys.readouterr().out
    assert max(len(x) for x in out.splitlines()) <= 100


def test_mwu_loop_prints_a_plain_bar_without_tqdm(monkeypatch, capsys):
    """The general path's MWU loop (cvxdp/solvers/mwu/mwu.py) uses progress_bar: plain lines."""
    import cvxpy as cp

    _no_tqdm(monkeypatch)
    rng = np.random.default_rng(0)
    A = cp.Parameter((10, 4), name="A", value=rng.uniform(0, 1, (10, 4)))
    x = cp.Variable(4, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 0.7, cp.sum(x) <= 1])
    prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="mwu", verbose=True,
                       max_iterations=50, private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    out = capsys.readouterr().out
    assert "  SCMWU: " in out and "iterations (100%)" in out and "\r" not in out
