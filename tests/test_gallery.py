"""The public gallery (``benchmarks/gallery.py``, issue 22 item 7): every model builds, is DCP,
and cvxdp's exact path through ``transform/`` matches a plain CVXPY solve; a fast subset runs
``solve_private`` at epsilon = 1 without a raw (non-cvxdp) exception and with an honest status."""

from __future__ import annotations

import os
import sys
import warnings

import cvxpy as cp
import pytest

import cvxdp
from cvxdp.status import status_of
from cvxdp.transform import to_scp
from cvxdp.transform.exact import solve_exact

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))
import gallery  # noqa: E402

NAMES = [m.name for m in gallery.models()]
HONEST = {cp.OPTIMAL_INACCURATE, cp.USER_LIMIT, cp.INFEASIBLE}


def test_gallery_covers_the_kinds_and_privacy_classes():
    entries = gallery.models()
    assert len(entries) >= 25 and len(set(NAMES)) == len(NAMES)
    assert {m.kind for m in entries} == {"LP", "QP", "SOCP", "SDP"}
    assert {m.privacy for m in entries} == {"ConstraintPrivacy", "ScalarPrivacy",
                                            "ObjectivePrivacy", "ConstraintSetPrivacy"}
    assert all(m.neighbouring and m.bounds for m in entries)
    assert set(gallery.QUICK) <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_model_builds_fresh_is_dcp_and_its_exact_solve_matches_cvxpy(name):
    entry = gallery.by_name(name)
    prob, spec, desc = entry.build(0)
    again, _, _ = entry.build(0)
    assert prob is not again and desc
    assert prob.is_dcp()
    specs = spec if isinstance(spec, (list, tuple)) else [spec]
    for s in specs:  # the private parameters belong to this problem and hold values
        for p in s.params:
            assert any(p is q for q in prob.parameters()) and p.value is not None
    prob.solve()
    assert prob.status == cp.OPTIMAL
    scp = to_scp(again)
    ref = solve_exact(scp)
    user_value = scp.sign * ref.value
    assert abs(user_value - prob.value) <= 1e-5 * max(1.0, abs(prob.value))


def _private(name: str, epsilon: float = 1.0):
    prob, spec, _ = gallery.by_name(name).build(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # status warnings are checked through the status
        try:
            sol = prob.solve_private(epsilon=epsilon, delta=1e-6, private=spec, rng=0)
        except cvxdp.CvxdpError as err:  # a typed refusal is an honest answer
            return prob, None, err
    return prob, sol, None


#: fast at epsilon = 1 (each well under a second): every privacy class, LP / SOCP / SDP, typed
#: refusals included
PRIVATE_SUBSET = ("lp_resource", "diet", "blending", "production", "covering_lp", "socp_docs",
                  "max_cut", "nnls", "chebyshev_centre", "covering_sdp", "min_variance_psd")


@pytest.mark.parametrize("name", PRIVATE_SUBSET)
def test_private_solve_at_epsilon_1_is_typed_and_honest(name):
    prob, sol, err = _private(name)  # any non-cvxdp exception fails the test here
    if err is not None:
        assert isinstance(err, cvxdp.CvxdpError) and str(err)
        return
    assert sol.status in HONEST
    assert sol.status != cp.INFEASIBLE  # every gallery model's public part is feasible
    info = sol.info or {}
    if info.get("mechanism") == "perturbation":
        # the status is the one the certificate implies (cvxdp.status.status_of)
        assert (sol.status, sol.status_reason) == status_of(sol.certificate)
    elif sol.certificate is not None:
        assert sol.status == status_of(sol.certificate)[0]
    if sol.status == cp.OPTIMAL_INACCURATE and info.get("method") == "mwu":
        # optimal_inaccurate on the MWU path is a promise: the theorem's bound holds
        assert info.get("alpha_guaranteed") is not None
    if sol.status != cp.USER_LIMIT or info.get("objective_optimised", True):
        # the released point sits on the user's variables
        assert all(v.value is not None for v in prob.variables())
    if sol.status == cp.USER_LIMIT:
        assert info.get("status_reason")
