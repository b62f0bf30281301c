"""The MWU's public-part questions answered without conic solves when the public part is the
trace set {X >> 0, tr X = R} (issue 22 item 6: extreme eigenvalues by eigvalsh, not Clarabel)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.solvers import public_part
from cvxdp.solvers.mwu import solve
from cvxdp.solvers.mwu.mwu_form import build_mwu_form
from cvxdp.transform import to_scp


def _sdp(extra_public: bool = False):
    rng = np.random.default_rng(0)
    r, m = 6, 10
    F = cp.Parameter((m, r * r), name="F", value=rng.uniform(-1, 1, (m, r * r)) / r)
    C = rng.normal(size=(r, r))
    C = (C + C.T) / 2
    X = cp.Variable((r, r), PSD=True, name="X")
    cons = [cp.trace(X) == 1, F @ cp.vec(X, order="F") <= 0.5]
    if extra_public:
        cons.append(X[0, 0] <= 0.5)
    return cp.Problem(cp.Minimize(cp.trace(C @ X)), cons), F, C


def test_trace_set_range_is_the_spectrum_and_needs_no_conic_solve(monkeypatch):
    prob, F, C = _sdp()
    spec = cvxdp.ConstraintPrivacy(F, sensitivity=1e-3)
    scp = to_scp(prob, private=spec)
    sb = scp.sensitivity
    form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=sb.A, db=sb.b, check_feasible=False)
    assert solve.trace_set_only(form)
    lam = form.algebra.eigenvalues(form.c_z / form.algebra.gram)
    np.testing.assert_allclose([lam.min(), lam.max()], np.linalg.eigvalsh(C)[[0, -1]],
                               rtol=1e-10, atol=1e-12)

    def boom(*a, **k):
        raise AssertionError("a conic solve of the public part was not needed")

    # every caller (mwu/solve.py, mwu_form.py, private_scp.py) reaches them through public_part
    monkeypatch.setattr(public_part, "public_bounds", boom)
    monkeypatch.setattr(public_part, "public_feasibility", boom)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="mwu", private=spec)
    assert sol.status in (cp.OPTIMAL_INACCURATE, cp.USER_LIMIT)


def test_other_public_rows_still_get_the_exact_checks(monkeypatch):
    prob, F, _ = _sdp(extra_public=True)
    calls = []
    real = public_part.public_feasibility
    monkeypatch.setattr(public_part, "public_feasibility",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="mwu",
                           private=cvxdp.ConstraintPrivacy(F, sensitivity=1e-3))
    assert calls
