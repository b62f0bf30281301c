"""Release test for the private MEB path: nothing released is an exact function of the data.

Every field of the solution (value, ball, primal, info, privacy report, repr) and every attribute
the solve leaves on the problem must be computed from the mechanisms' noisy outputs and public
arguments only.  The test replays the mechanisms: the private path runs on data ``P`` while
recording what GoodCenter, every DP-MMEB call and the noisy clipped count released; then it runs
on a neighbour ``P'`` (one point replaced, same seed) with those mechanisms replaced by the
recording.  If the pipeline read the data anywhere but through the mechanisms, the two releases
would differ.  The replaced point is chosen so that any exact statistic differs between ``P`` and
``P'`` (it lies outside the box, and beyond the exact MEB); the positive control shows that the
exact validation of ``reference=True`` does differ under the same replay.
"""

import json
import re
import warnings

import numpy as np
import pytest

import cvxdp.geometry.meb.meb_solve as meb_solve
from cvxdp.geometry.meb.meb import min_enclosing_ball
from cvxdp.privacy.clipping import clip_to_box

MECHANISMS = ("good_center", "ldp_good_center", "dp_mmeb", "noisy_count")


def _neighbours():
    rng = np.random.default_rng(7)
    P = np.clip(rng.normal(0.5, 1.0, (3000, 2)), -3.5, 3.5)
    Q = P.copy()
    Q[0] = [9.0, -9.0]  # outside the public box [-4, 4]^2 and far outside the exact MEB
    return P, Q


def _recorded(monkeypatch, tape):
    """Wrap the mechanisms so that their outputs are appended to ``tape``."""
    for name in MECHANISMS:
        real = getattr(meb_solve, name)

        def rec(*a, _real=real, _name=name, **k):
            out = _real(*a, **k)
            tape.append((_name, out))
            return out

        monkeypatch.setattr(meb_solve, name, rec)


def _replayed(monkeypatch, tape):
    """Replace the mechanisms by the outputs in ``tape`` (in call order)."""
    it = iter(list(tape))
    for name in MECHANISMS:
        def play(*a, _name=name, **k):
            got, out = next(it)
            assert got == _name, "the replayed run asked the mechanisms in another order"
            return out

        monkeypatch.setattr(meb_solve, name, play)


def _canon(x):
    return json.dumps(x, sort_keys=True, default=lambda a: repr(np.asarray(a).tolist())
                      if isinstance(a, (np.ndarray, np.generic)) else repr(a))


def _released(prob, sol):
    """Everything the private solve gives the user, as comparable text."""
    return {
        "value": repr(sol.value), "status": sol.status, "iterations": sol.iterations,
        "ball": (sol.ball.center.tolist(), sol.ball.radius),
        "primal": _canon(sol.primal), "info": _canon(sol.info),
        "privacy": repr(sol.privacy) + _canon([r.params for r in sol.privacy.records]),
        "repr": re.sub(r"solve_time=[^)]*s", "", repr(sol)),
        "problem": (prob.status, repr(prob.value), prob.ball.center.tolist(),
                    prob.ball.radius, prob.center.value.tolist(), float(prob.radius.value)),
    }


def _solve(points, **kw):
    prob = min_enclosing_ball(points)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(rho=1.0, bounds=(-4, 4), rng=11, count_clipped=True, **kw)
    return prob, sol


@pytest.mark.parametrize("model", ["central", "local"])
def test_neighbour_with_replayed_mechanisms_releases_the_same(monkeypatch, model):
    P, Q = _neighbours()
    # any exact statistic of the data tells P and Q apart
    assert clip_to_box(P, -4, 4)[1] == 0 and clip_to_box(Q, -4, 4)[1] == 1
    tape = []
    with monkeypatch.context() as m:
        _recorded(m, tape)
        prob_p, sol_p = _solve(P, model=model)
    assert [name for name, _ in tape][-1] == "noisy_count" and len(tape) >= 3
    with monkeypatch.context() as m:
        _replayed(m, tape)
        prob_q, sol_q = _solve(Q, model=model)
    got, want = _released(prob_q, sol_q), _released(prob_p, sol_p)
    for key in want:
        assert got[key] == want[key], f"{key} depends on the data beyond the mechanisms"
    assert sol_p.validation is None and sol_q.validation is None


def test_positive_control_the_exact_validation_differs_under_the_same_replay(monkeypatch):
    """reference=True attaches an exact (non-private) validation: the replay tells it apart,
    so the comparison above would catch an exact statistic in any released field."""
    P, Q = _neighbours()
    tape = []
    with monkeypatch.context() as m:
        _recorded(m, tape)
        _, sol_p = _solve(P, reference=True)
    with monkeypatch.context() as m:
        _replayed(m, tape)
        _, sol_q = _solve(Q, reference=True)
    assert sol_q.ball.radius == sol_p.ball.radius
    assert sol_p.validation.clipped_points == 0 and sol_q.validation.clipped_points == 1
    assert sol_q.validation.reference_value > sol_p.validation.reference_value


def test_without_replay_the_neighbour_changes_the_release():
    """Same seed, real mechanisms: the neighbour moves the noisy answers (the test above is not
    vacuous: the data reach the release, but only through the mechanisms)."""
    P, Q = _neighbours()
    _, a = _solve(P)
    _, b = _solve(Q)
    assert a.info["clipped_points_noisy"] != b.info["clipped_points_noisy"]
    assert b.info["clipped_points_noisy"] - a.info["clipped_points_noisy"] == pytest.approx(1.0)
