"""Everything a general-path solution releases is a function of the mechanisms' noisy outputs.

For each general path (LP / SOCP / SDP under ConstraintPrivacy, ScalarPrivacy and
ObjectivePrivacy), the private data is moved to a neighbour within the declared sensitivity and
the solve is repeated with the same seed: the fields that are not derived from noise must be
identical, and the released objective value must be the one recomputed from released
quantities, not the true objective (issue 21 item 1).
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def test_objective_constant_term_value_is_not_the_true_objective():
    # issue 21 item 1: c enters the objective's constant term (-0.3 * sum(c))
    c = cp.Parameter(3, value=[1.0, 2.0, 3.0])
    x = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ (x - 0.3)), [cp.sum(x) >= 1, x <= 2, x >= 0])
    sol = prob.solve_private(mechanism="mwu", epsilon=0.1, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(c, 0.1))
    true_value = float(c.value @ (x.value - 0.3))
    assert sol.value is not None
    # before the fix the two agree to 1e-12, which reveals sum(c)
    assert abs(sol.value - true_value) > 1e-3


# ---------------------------------------------------------------- neighbours on every path
# Each builder takes the private data and returns (problem, spec, parameter, sensitivity).
SENS = 0.05
X0 = np.array([0.5, 0.3, 0.2])


def _lp_constraint(data):
    A = cp.Parameter((4, 3), name="A", value=data)
    x = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, cp.sum(x) <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=SENS)


def _lp_scalar(data):
    b = cp.Parameter(3, name="b", value=data)
    x = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Maximize(x[0] + 0.5 * x[1]), [x <= b, cp.sum(x) <= 1])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=SENS)


def _lp_objective(data):
    c = cp.Parameter(3, name="c", value=data)
    x = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ (x - 0.3)), [cp.sum(x) >= 1, x <= 2, x >= 0])
    return prob, cvxdp.ObjectivePrivacy(c, sensitivity=SENS)


def _socp_constraint(data):
    A = cp.Parameter((4, 3), name="A", value=data)
    y = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(0), [A @ y <= data @ X0 + 0.1, cp.norm(y - X0) <= 0.3,
                                        cp.sum(y) == 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=SENS)


def _socp_scalar(data):
    b = cp.Parameter(3, name="b", value=data)
    y = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(0), [y <= b, cp.norm(y - X0) <= 0.3, cp.sum(y) == 1])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=SENS)


def _socp_objective(data):
    c = cp.Parameter(3, name="c", value=data)
    y = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ y + 0.5 * cp.sum(c)), [cp.norm(y - X0) <= 0.3])
    return prob, cvxdp.ObjectivePrivacy(c, sensitivity=SENS)


def _sdp_constraint(data):
    M = cp.Parameter((2, 2), name="M", value=data)
    X = cp.Variable((2, 2), PSD=True)
    prob = cp.Problem(cp.Minimize(0), [cp.trace(X) == 1, cp.trace(M @ X) <= 0.6])
    return prob, cvxdp.ConstraintPrivacy(M, sensitivity=SENS)


def _sdp_scalar(data):
    b = cp.Parameter(name="b", value=float(data))
    X = cp.Variable((2, 2), PSD=True)
    prob = cp.Problem(cp.Minimize(0), [cp.trace(X) == 1, X[0, 0] - X[1, 1] <= b])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=SENS)


def _sdp_objective(data):
    C = cp.Parameter((2, 2), name="C", value=data)
    X = cp.Variable((2, 2), PSD=True)
    prob = cp.Problem(cp.Minimize(cp.trace(C @ X)), [cp.trace(X) == 1])
    return prob, cvxdp.ObjectivePrivacy(C, sensitivity=SENS)


_RNG = np.random.default_rng(7)
CASES = {
    "lp-constraint": (_lp_constraint, _RNG.uniform(0.2, 1.0, (4, 3))),
    "lp-scalar": (_lp_scalar, np.array([0.6, 0.5, 0.4])),
    "lp-objective": (_lp_objective, np.array([1.0, 2.0, 3.0])),
    "socp-constraint": (_socp_constraint, _RNG.uniform(-1.0, 1.0, (4, 3))),
    "socp-scalar": (_socp_scalar, np.array([0.6, 0.5, 0.4])),
    "socp-objective": (_socp_objective, np.array([1.0, -2.0, 0.5])),
    "sdp-constraint": (_sdp_constraint, np.array([[1.0, 0.2], [0.2, 0.3]])),
    "sdp-scalar": (_sdp_scalar, np.array(0.4)),
    "sdp-objective": (_sdp_objective, np.array([[1.0, 0.3], [0.3, -0.5]])),
}
#: fields derived from the noise, allowed to differ between neighbours
NOISY_DETAILS = {"search_runs", "violation_bound", "public_repair"}  # functions of the output
NOISY_INFO = {"noisy_objective", "violation_bound", "public_repair", "status_reason",
              "gap_bound_sharp", "gap_bound_holder", "gap_bound_holder_inf", "gap_bound_ball"}
# the last four: bounds computed from the released c~ and the released point


def _neighbour(data):
    """Every entry moved by the declared sensitivity (alternating signs): a neighbour."""
    flat = np.asarray(data, dtype=float).ravel()
    step = SENS * np.where(np.arange(flat.size) % 2 == 0, 1.0, -1.0)
    return (flat + step).reshape(np.shape(data))


def _solve(build, data, rng=5):
    prob, spec = build(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # feasibility-only warnings (item 15)
        sol = prob.solve_private(mechanism="mwu", epsilon=2.0, delta=1e-6, private=spec, rng=rng)
    return prob, spec, sol


def _same(a, b):
    if isinstance(a, dict) or hasattr(a, "items"):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b or (a != a and b != b)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fields_not_derived_from_noise_are_identical_between_neighbours(case):
    build, data = CASES[case]
    p1, _, s1 = _solve(build, data)
    p2, _, s2 = _solve(build, _neighbour(data))
    assert s1.status == s2.status and s1.iterations == s2.iterations
    r1, r2 = s1.privacy, s2.privacy
    assert (r1.epsilon, r1.delta, r1.rho, r1.theorem, r1.neighbouring) == (
        r2.epsilon, r2.delta, r2.rho, r2.theorem, r2.neighbouring)
    assert [(r.mechanism, r.count, dict(r.params)) for r in r1.records] == [
        (r.mechanism, r.count, dict(r.params)) for r in r2.records]
    d1 = {k: v for k, v in r1.details.items() if k not in NOISY_DETAILS}
    d2 = {k: v for k, v in r2.details.items() if k not in NOISY_DETAILS}
    assert _same(d1, d2)
    i1 = {k: v for k, v in s1.info.items() if k not in NOISY_INFO}
    i2 = {k: v for k, v in s2.info.items() if k not in NOISY_INFO}
    assert _same(i1, i2)
    if "search_runs" in r1.details:  # the search starts from the same public upper end
        assert r1.details["search_runs"][0]["tau"] == r2.details["search_runs"][0]["tau"]


@pytest.mark.parametrize("case", sorted(c for c in CASES if not c.endswith("objective")))
def test_mwu_value_is_the_public_objective_at_the_released_point(case):
    # the objective is public under constraint and scalar privacy: the value is the objective
    # at the released point (and problem.value agrees)
    build, data = CASES[case]
    prob, _, sol = _solve(build, data)
    assert sol.value == pytest.approx(float(prob.objective.value), rel=1e-9, abs=1e-9)
    assert prob.value == pytest.approx(sol.value, rel=1e-12, abs=1e-12)


class _ShiftedNormal(np.random.Generator):
    """A generator whose Gaussian draws are shifted by ``-shift``: the coupling that makes the
    neighbour's noisy objective c' + z' equal to c + z."""

    def __init__(self, seed, shift):
        super().__init__(np.random.PCG64(seed))
        self.shift = np.asarray(shift, dtype=float)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return super().normal(loc, scale, size) - self.shift


@pytest.mark.parametrize("case", sorted(c for c in CASES if c.endswith("objective")))
def test_objective_privacy_releases_a_function_of_the_noisy_objective(case):
    from cvxdp.transform import to_scp

    build, data = CASES[case]
    prob, spec, sol = _solve(build, data)
    x1 = [np.array(v) for v in sol.primal.values()]
    true_value = float(prob.objective.value)
    noisy = sol.info["noisy_objective"]
    scp = to_scp(prob, private=spec)
    supp = np.flatnonzero(scp.sensitivity.c > 0)
    sigma = sol.privacy.details["sigma"]
    # c~ = c + z with z the seeded draw of the mechanism (replayed), and the released value is
    # sign * (c~ . x + offset~), not the true objective at x
    z = np.random.default_rng(5).normal(0.0, sigma, size=supp.size)
    np.testing.assert_allclose(noisy["c"][supp] - scp.c[supp], z, rtol=1e-12, atol=1e-12)
    assert abs(sol.value - true_value) > 1e-3 * sigma
    # neighbour with the noise coupled so that its noisy objective is the same c~: everything
    # released must be the same (up to the exact solver's tolerance)
    nb = _neighbour(data)
    prob2, spec2 = build(nb)
    scp2 = to_scp(prob2, private=spec2)
    assert noisy["offset_source"] in ("public", "derived from the noisy c")
    shift = scp2.c[supp] - scp.c[supp]
    sol2 = prob2.solve_private(mechanism="mwu", epsilon=2.0, delta=1e-6, private=spec2,
                               rng=_ShiftedNormal(5, shift))
    np.testing.assert_allclose(sol2.info["noisy_objective"]["c"], noisy["c"], atol=1e-12)
    assert sol2.info["noisy_objective"]["offset"] == pytest.approx(noisy["offset"], abs=1e-9)
    assert sol2.value == pytest.approx(sol.value, abs=1e-6)
    for v, v1 in zip(sol2.primal.values(), x1, strict=True):
        np.testing.assert_allclose(v, v1, atol=1e-6)
    # ... while the true objectives of the two neighbours at that point differ
    assert abs(float(prob2.objective.value) - true_value) > 1e-4
