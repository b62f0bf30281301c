"""Issue 25 item 3: ``verbose=True`` prints, like CVXPY's, a header (size, budget), a progress
bar that stays on screen (tqdm when installed, plain text otherwise) and a summary line (status,
iterations, time, budget spent, the accuracy guaranteed or why none)."""

import sys
import warnings

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
    cap = capsys.readouterr()
    assert "\r" not in cap.err and cap.out == ""  # bars go to stderr
    assert cap.err.splitlines() == [f"  MWU: {k}/50 iterations ({2 * k}%)"
                                     for k in range(5, 51, 5)]
    assert list(progress_bar(range(3), verbose=False)) == [0, 1, 2]
    assert capsys.readouterr() == ("", "")


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


def _mwu_verbose(max_iterations=None):
    """A small constraint-private LP through the MWU, verbose: its objective search runs the
    MWU loop several times."""
    import cvxpy as cp

    rng = np.random.default_rng(0)
    A = cp.Parameter((10, 4), name="A", value=rng.uniform(0, 1, (10, 4)))
    x = cp.Variable(4, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 0.7, cp.sum(x) <= 1])
    kw = {} if max_iterations is None else {"max_iterations": max_iterations}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="mwu",
                                  verbose=True, private=cvxdp.ConstraintPrivacy(A, 1e-3), **kw)


def test_mwu_solve_shows_one_labelled_plain_bar_on_stderr(monkeypatch, capsys):
    """The general path's MWU runs its loop once per step of the objective search: one bar for
    the solve, each loop labelled, on stderr; stdout has the header and the summary only.
    Before: one unlabelled 'SCMWU' bar per loop (3 here, 6 in the issue's example), on stdout."""
    import cvxdp.progress as progress

    _no_tqdm(monkeypatch)
    sol = _mwu_verbose()
    cap = capsys.readouterr()
    assert "SCMWU" not in cap.out and cap.out.startswith("cvxdp general model")
    bar = cap.err.splitlines()
    # a 0.1 s solve: one line, at the end, counting every iteration of every loop
    assert [b for b in bar if "SCMWU" in b] == [
        f"  SCMWU: done, {sol.iterations} iterations in {len(_loops(sol))} loops"], bar
    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.0)  # a line per iteration: the labels
    _mwu_verbose()
    err = capsys.readouterr().err
    labels = {line.split(":")[0].strip() for line in err.splitlines() if "so far" in line}
    assert labels == set(_phases(sol))


def _phases(sol):
    """The MWU's loops, labelled by what they are: the feasibility run, then the search steps."""
    n = len(_loops(sol))
    return ["feasibility run"] + [f"objective search {k}/{n - 1}" for k in range(1, n)]


def _loops(sol):
    """The MWU loops a solve ran: T iterations each (the schedule's T)."""
    T = sol.privacy.details["T"]
    assert sol.iterations % T == 0
    return range(sol.iterations // T)


class _FakeTqdm:
    made: list = []

    def __init__(self, iterable=None, total=None, desc="", leave=False, file=None):
        self.total, self.desc, self.leave, self.file, self.n = total, desc, leave, file, 0
        self.descs, self.closed = [desc], False
        _FakeTqdm.made.append(self)

    def update(self, k):
        self.n += k

    def set_description(self, desc, refresh=True):
        self.descs.append(desc)

    def close(self):
        self.closed = True


def test_mwu_solve_with_tqdm_makes_one_bar_on_stderr(monkeypatch, capsys):
    import types

    _FakeTqdm.made = []
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=_FakeTqdm))
    sol = _mwu_verbose()
    assert len(_FakeTqdm.made) == 1
    bar = _FakeTqdm.made[0]
    assert bar.file is sys.stderr and bar.leave and bar.closed
    assert bar.n == bar.total == sol.iterations
    assert bar.descs == _phases(sol)


def test_summary_agrees_with_the_status(capsys):
    """An optimal_inaccurate answer's summary says its accuracy is guaranteed (and which bound);
    a user_limit answer's says it is not, even when a theorem's alpha is attached.  Before:
    private_gaussian's optimal_inaccurate answer printed 'accuracy not guaranteed: n >=
    required_n ... <= alpha=0.2 with probability >= 0.9'."""
    from cvxdp.progress import summary

    reason = "n >= required_n and every direction resolved: error <= alpha=0.2 w.p. >= 0.9"
    line = summary(_solution(status="optimal_inaccurate", info={"status_reason": reason,
                                                                "accuracy_claim": True}))
    assert line.endswith("accuracy guaranteed: " + reason)
    line = summary(_solution(status="user_limit", status_reason="the gap is 0.3",
                             info={"alpha_guaranteed": 0.1}))
    assert line.endswith("accuracy not guaranteed: the gap is 0.3")
    capsys.readouterr()


@pytest.mark.filterwarnings("ignore::cvxdp.GaussianSampleWarning")
def test_private_gaussian_summary_matches_its_status(capsys):
    X = np.random.default_rng(0).standard_normal((200_000, 3))
    sol = cvxdp.private_gaussian(X, epsilon=1.0, delta=1e-6, rng=0, verbose=True)
    out = " ".join(x.strip() for x in capsys.readouterr().out.splitlines())
    assert sol.status == "optimal_inaccurate"
    assert "accuracy guaranteed: n >= required_n" in out and "not guaranteed" not in out


def test_a_solve_that_raised_leaves_no_bar_behind(monkeypatch, capsys):
    """A verbose solve that raises before its summary does not capture later bars: a bar
    outside any solve is its own again (10% lines)."""
    from cvxdp.progress import progress_bar, verbose_run

    _no_tqdm(monkeypatch)

    def solve():
        verbose_run(True, "test problem")
        raise RuntimeError("inside the solve")

    with pytest.raises(RuntimeError):
        solve()
    capsys.readouterr()
    assert list(progress_bar(range(10), desc="MWU")) == list(range(10))
    assert capsys.readouterr().err.splitlines()[-1] == "  MWU: 10/10 iterations (100%)"
