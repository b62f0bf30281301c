"""The public part's box: entries of a public PSD block are bounded in closed form from the
block's largest trace (one solve), and that box contains the exact per-coordinate one."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.solvers.perturbation.loosened import _psd_off_diagonal, loosened_box
from cvxdp.solvers.public_part import (
    UnitDirections,
    bound_solves,
    coordinate_box,
    psd_implied_box,
    public_bounds,
)
from cvxdp.transform import to_scp


def _sdp(r, extra_public=False, seed=0):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(r, r))
    A = cp.Parameter((r, r), symmetric=True, name="A", value=(G + G.T) / (2 * r))
    X = cp.Variable((r, r), PSD=True)
    cons = [cp.trace(X) <= r, cp.trace(A @ X) <= 1]
    if extra_public:
        cons += [X[0, 0] <= 0.5, X[1, 0] >= -0.1]
    prob = cp.Problem(cp.Maximize(cp.trace(np.eye(r) @ X)), cons)
    return to_scp(prob, private=(cvxdp.ConstraintPrivacy(A, sensitivity=1e-3),))


def _exact_and_implied(scp):
    rp = np.zeros(scp.m, dtype=bool)
    rp[scp.sensitivity.private_rows()] = True
    lo, hi = public_bounds(scp.A, scp.b, scp.dims, rp, list(np.eye(scp.n)))
    return (lo, hi), psd_implied_box(scp, rp)


def test_the_trace_gives_the_exact_box_of_a_trace_bounded_psd_block():
    (lo, hi), (ilo, ihi) = _exact_and_implied(_sdp(4))
    # diagonal entries in [0, 4], off-diagonal (svec: sqrt 2 X_kl) in [-2 sqrt 2, 2 sqrt 2] after
    # CVXPY's scaling -- the closed form is exact here
    np.testing.assert_allclose(ilo, lo, atol=1e-6)
    np.testing.assert_allclose(ihi, hi, atol=1e-6)


def test_the_implied_box_contains_the_exact_one_with_more_public_rows():
    (lo, hi), (ilo, ihi) = _exact_and_implied(_sdp(4, extra_public=True))
    assert np.all(ilo <= lo + 1e-7) and np.all(ihi >= hi - 1e-7)
    assert np.any(ihi > hi + 0.1)  # X[0, 0] <= 0.5 is tighter than the trace's 4


def test_coordinate_box_uses_it_and_solves_the_rest():
    scp = _sdp(3)
    lo, hi = coordinate_box(scp, np.arange(scp.n))
    (elo, ehi), _ = _exact_and_implied(scp)
    np.testing.assert_allclose(lo, elo, atol=1e-6)
    np.testing.assert_allclose(hi, ehi, atol=1e-6)


def test_an_unbounded_direction_is_no_bound_even_when_the_solver_almost_solves_it():
    # x >= 0 and the epigraph of ||x||^2 bound no coordinate above; Clarabel stops some of
    # these maxima at "almost solved" with a finite value (about 1e4), which is no bound
    rng = np.random.default_rng(46)
    A = cp.Parameter((3, 8), name="A", value=rng.uniform(0, 1, (3, 8)))
    x = cp.Variable(8)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x)), [A @ x == 1, x >= 0])
    scp = to_scp(prob, private=(cvxdp.ConstraintPrivacy(A, sensitivity=1e-3),))
    lo, hi = coordinate_box(scp, np.arange(scp.n), allow_unbounded=True)
    assert np.all(np.isinf(hi)), hi
    assert np.all(lo >= -1e-6)  # the lower bounds x >= 0 (and the epigraph's t >= 0) hold


def test_bound_solves_updated_answers_do_not_depend_on_their_order():
    # one Clarabel session per set: after the first cost (its setup), each cost's answer is the
    # same to the bit whatever order the others come in (costs of different sizes); the
    # objective certificate's level search reorders its coordinates on this
    rng = np.random.default_rng(1)
    x = cp.Variable(8)
    A = rng.normal(size=(20, 8)) * np.logspace(-2, 2, 8)
    prog = to_scp(cp.Problem(cp.Minimize(0), [A @ x <= 1, cp.norm(x) <= 3]))
    costs = [rng.normal(size=prog.n) * s for s in (1.0, 100.0, 0.01, 1e4, 3.0)]

    def answers(order):
        out = {}
        for k, (res, pad) in zip(order, bound_solves(prog, [costs[k] for k in order]),
                                 strict=True):
            out[k] = (res.status, res.value, pad, None if res.x is None else res.x.tobytes())
        return out

    listed = answers([0, 1, 2, 3, 4])
    assert all(v[0] == cp.OPTIMAL for v in listed.values())
    assert answers([0, 4, 3, 2, 1]) == listed
    assert answers([0, 2, 4, 1, 3]) == listed


def test_unit_directions_are_the_unit_vectors_made_when_read():
    first = np.array([1.0, -2.0, 0.5, 0.0])
    dirs = UnitDirections(4, np.array([2, 0]), first=[first])
    listed = [first, np.eye(4)[2], np.eye(4)[0]]
    assert len(dirs) == 3
    for got, want in zip(dirs, listed, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(dirs[-1], listed[-1])
    assert [d.tolist() for d in dirs[1:]] == [d.tolist() for d in listed[1:]]
    with pytest.raises(IndexError):
        dirs[3]


def test_a_stalled_bound_solve_is_retried_by_clarabel_with_shorter_steps_before_scs(monkeypatch):
    # Clarabel at its default step stalls (a solver error) on the solve and its capped copy:
    # the retry with shorter steps gives the bound, at Clarabel's margin, and SCS is not run
    import dataclasses

    from cvxdp.solvers import public_part
    from cvxdp.transform import exact

    scp = _sdp(4)
    rp = np.zeros(scp.m, dtype=bool)
    rp[scp.sensitivity.private_rows()] = True
    prog = public_part.public_program(scp.A, scp.b, scp.dims, ~rp)
    prog = dataclasses.replace(prog, c=-np.eye(prog.n)[0])  # maximise the first coordinate
    calls = []
    real = exact.solve_exact

    def stalls(p, *, solver=None, **opts):
        calls.append((solver, opts.get("max_step_fraction")))
        if solver == "CLARABEL" and "max_step_fraction" not in opts:
            return exact.ExactSolution(None, None, cp.SOLVER_ERROR, 0.0, "CLARABEL")
        assert solver != "SCS", "SCS ran"
        return real(p, solver=solver, **opts)

    monkeypatch.setattr(public_part, "solve_exact", stalls)
    res, pad = public_part.bound_solve(prog)
    assert pad == 1e-8 and res.status == cp.OPTIMAL
    assert calls[-1] == ("CLARABEL", public_part.STALL_STEP_FRACTION)
    # its value is the exact maximum (X_00 <= trace X <= 4 over the public rows)
    assert res.value == pytest.approx(real(prog, solver="CLARABEL").value, abs=1e-7)
    assert -res.value == pytest.approx(4.0, abs=1e-6)


def test_an_almost_solved_bound_whose_capped_check_stalls_takes_the_shorter_steps(monkeypatch):
    # "almost solved", and the capped solve that would confirm it stalls: Clarabel with
    # shorter steps proves the maximum (before: no bound)
    import dataclasses

    from cvxdp.solvers import public_part
    from cvxdp.transform import exact

    scp = _sdp(4)
    rp = np.zeros(scp.m, dtype=bool)
    rp[scp.sensitivity.private_rows()] = True
    prog = public_part.public_program(scp.A, scp.b, scp.dims, ~rp)
    prog = dataclasses.replace(prog, c=-np.eye(prog.n)[0])
    real = exact.solve_exact

    def stalls(p, *, solver=None, **opts):
        if solver == "CLARABEL" and "max_step_fraction" not in opts:
            if p.A.shape[0] == prog.A.shape[0]:
                return exact.ExactSolution(None, -3.9, cp.OPTIMAL_INACCURATE, 0.0, "CLARABEL")
            return exact.ExactSolution(None, None, cp.SOLVER_ERROR, 0.0, "CLARABEL")
        return real(p, solver=solver, **opts)

    monkeypatch.setattr(public_part, "solve_exact", stalls)
    res, pad = public_part.bound_solve(prog)
    assert pad == 1e-8 and res.status == cp.OPTIMAL
    assert -res.value == pytest.approx(4.0, abs=1e-6)


def test_stop_leaves_the_sides_after_it_unsolved():
    """public_bounds(stop=): the first side (the max of the first direction) is the full
    run's; every later side stays infinite, still an outer box."""
    scp = _sdp(3)
    rp = np.zeros(scp.m, dtype=bool)
    rp[scp.sensitivity.private_rows()] = True
    _, hi = public_bounds(scp.A, scp.b, scp.dims, rp, list(np.eye(scp.n)))
    s_lo, s_hi = public_bounds(scp.A, scp.b, scp.dims, rp, list(np.eye(scp.n)),
                               stop=lambda v: True)
    assert s_hi[0] == pytest.approx(hi[0], abs=1e-9)
    assert np.all(np.isinf(s_hi[1:])) and np.all(s_lo == -np.inf)


def test_loosened_box_minors_bound_the_off_diagonal_from_the_diagonal():
    """With minors the PSD block's off-diagonal entries come from the solved diagonal box,
    |X_kl| <= sqrt(X_kk X_ll): an outer box of the set (here X[0, 0] <= 0.5 and the trace
    bound 4 on the others), equal to the solves on the diagonal."""
    scp = _sdp(4, extra_public=True)
    hit = np.arange(scp.n)
    off = _psd_off_diagonal(scp)
    assert off.size == 6
    lo, hi = loosened_box(scp, hit, scp.n)
    m_lo, m_hi = loosened_box(scp, hit, scp.n, minors=True)
    diag = np.setdiff1d(hit, off)
    np.testing.assert_allclose(m_lo[diag], lo[diag])
    np.testing.assert_allclose(m_hi[diag], hi[diag])
    assert np.all(m_lo <= lo + 1e-7) and np.all(m_hi >= hi - 1e-7)
    # the X[1, 0] >= -0.1 row tightens the solved box's lower side only
    assert np.any(m_lo[off] < lo[off] - 0.05)
