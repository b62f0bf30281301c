"""Issue 25 item 3: ``verbose=True`` prints, like CVXPY's, a header (size, budget), a progress
bar that stays on screen (tqdm when installed, plain text otherwise) and a summary line (status,
iterations, time, budget spent, the accuracy guaranteed or why none)."""

import sys

import numpy as np

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
    last = lines[-1]
    assert f"status {sol.status}" in last and "budget spent" in last and "time" in last
    assert "accuracy" in last


def test_structured_solve_is_silent_without_verbose(capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (500, 2))
    cvxdp.least_squares(X, X[:, 0], row_bound=1.0).solve_private(epsilon=1.0, delta=1e-6, rng=0)
    assert capsys.readouterr().out == ""
