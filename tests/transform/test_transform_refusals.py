"""Every refusal of the transform and of the specs, with its message."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import CvxdpError, PrivacySpecError, UnsupportedProblemError
from cvxdp.specs import (
    ConstraintPrivacy,
    ConstraintSetPrivacy,
    ObjectivePrivacy,
    ScalarPrivacy,
    as_spec_tuple,
)
from cvxdp.transform import to_scp, unsupported_reasons

x = cp.Variable(3, pos=True)


a = cp.Parameter(3, name="a", value=np.ones(3))


q3 = np.full(3, 1 / 3)


@pytest.mark.parametrize(
    ("objective", "atom"),
    [
        (cp.Maximize(cp.sum(cp.entr(cp.multiply(a, x)))), "entr"),
        (cp.Minimize(cp.sum(cp.kl_div(cp.multiply(a, x), q3))), "kl_div"),
        (cp.Minimize(cp.sum(cp.rel_entr(cp.multiply(a, x), q3))), "rel_entr"),
    ],
)
def test_private_data_in_an_exponential_cones_middle_coordinate_is_refused(objective, atom):
    prob = cp.Problem(objective, [cp.sum(x) <= 1, x <= 1])
    with pytest.raises(UnsupportedProblemError,
                       match=rf"\b{atom}\b.*exponential cone.*middle coordinate v"):
        to_scp(prob, private=ConstraintPrivacy(a, sensitivity=0.01))
    assert cvxdp.explain(prob, ConstraintPrivacy(a, sensitivity=0.01))
    # with `a` public the model compiles: its exponential cones are public rows, kept apart
    scp = to_scp(prob)
    assert scp.exp_tail is not None and scp.exp_tail.cones == 3
    assert unsupported_reasons(prob) == []


@pytest.mark.parametrize(
    ("objective", "lifted"),
    [
        (cp.Maximize(cp.sum(cp.log(cp.multiply(a, x)))), 3),
        (cp.Minimize(cp.sum(cp.exp(cp.multiply(a, x)))), 3),
        (cp.Minimize(cp.log_sum_exp(cp.multiply(a, x))), 3),
        (cp.Maximize(cp.log_det(cp.diag(cp.multiply(a, x)))), 0),
    ],
)
def test_private_data_in_a_monotone_coordinate_is_lifted_to_an_orthant_row(objective, lifted):
    # log's argument is a cone's w, exp's and log_sum_exp's its u: each moves to one orthant
    # row with a new variable; log_det's argument goes to a PSD block (CVXPY's form), only
    # its factor's diagonal enters the cones
    prob = cp.Problem(objective, [cp.sum(x) <= 1, x <= 1])
    scp = to_scp(prob, private=ConstraintPrivacy(a, sensitivity=0.01))
    lift = scp.meta.get("exp_lift")
    assert (0 if lift is None else lift.k) == lifted
    assert scp.exp_tail.cones == 3 and scp.exp_tail.A.shape[1] == scp.n
    plain = to_scp(cp.Problem(prob.objective, prob.constraints))  # a new problem: no memo
    assert scp.dims.nonneg == plain.dims.nonneg + lifted and scp.n == plain.n + lifted


def test_power_cone_constraint_is_refused():
    y = cp.Variable(3)
    prob = cp.Problem(cp.Maximize(y[2]), [cp.constraints.PowCone3D(y[0], y[1], y[2], 0.3),
                                          y[0] <= 1, y[1] <= 1])
    with pytest.raises(UnsupportedProblemError, match=r"PowCone3D .*power cones \(1 cone\)"):
        to_scp(prob)


def test_power_cone_form_is_refused_but_soc_approximation_accepted():
    try:
        exact = cp.Problem(cp.Maximize(cp.geo_mean(x, approx=False)), [cp.sum(x) <= 1])
    except TypeError:
        pytest.skip("this CVXPY has no approx= for geo_mean/power (always the SOC form)")
    with pytest.raises(UnsupportedProblemError, match="geo_mean in a form .*power cones.*approx="):
        to_scp(exact)
    exact = cp.Problem(cp.Maximize(cp.power(x[0], 0.3, approx=False)), [cp.sum(x) <= 1])
    with pytest.raises(UnsupportedProblemError, match=r"uses power .*\(1 cone\)"):
        to_scp(exact)
    approx = cp.Problem(cp.Maximize(cp.geo_mean(x)), [cp.sum(x) <= 1])
    assert to_scp(approx).dims.soc  # the default rational approximation is an SOCP


@pytest.mark.parametrize("attr", ["integer", "boolean"])
def test_integer_and_boolean_variables(attr):
    z = cp.Variable(2, name="z", **{attr: True})
    prob = cp.Problem(cp.Minimize(cp.sum(z)), [z >= 0.5])
    with pytest.raises(UnsupportedProblemError, match="z are integer/boolean"):
        to_scp(prob)


def test_non_dcp():
    y = cp.Variable(2)
    prob = cp.Problem(cp.Maximize(cp.norm(y)), [y <= 1])
    with pytest.raises(UnsupportedProblemError, match="not DCP"):
        to_scp(prob)


def test_parameter_without_value_is_named():
    p = cp.Parameter(3, name="weights")
    prob = cp.Problem(cp.Minimize(p @ x), [cp.sum(x) <= 1])
    with pytest.raises(UnsupportedProblemError, match="weights have no value"):
        to_scp(prob)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_inf_data(bad):
    if np.isinf(bad):  # CVXPY rejects NaN parameter values itself (and inf before 1.6)
        p = cp.Parameter(3, name="costs")
        try:
            p.value = np.array([1.0, bad, 2.0])
        except ValueError:
            return
        prob = cp.Problem(cp.Minimize(p @ x), [cp.sum(x) <= 1])
        with pytest.raises(UnsupportedProblemError, match="costs contain NaN or inf"):
            to_scp(prob)
    const = np.array([1.0, bad, 2.0])
    prob = cp.Problem(cp.Minimize(const @ x), [cp.sum(x) <= 1])
    with pytest.raises(UnsupportedProblemError, match="constant containing NaN or inf"):
        to_scp(prob)


def test_reasons_are_listed_together_and_empty_when_fine():
    z = cp.Variable(2, integer=True, name="z")
    p = cp.Parameter(name="unset")
    prob = cp.Problem(cp.Minimize(p * cp.sum(z)), [z >= 0])
    reasons = unsupported_reasons(prob)
    assert len(reasons) == 2
    assert unsupported_reasons(cp.Problem(cp.Minimize(cp.sum(x)), [x >= 1])) == []
    assert "expected a cvxpy.Problem" in unsupported_reasons("not a problem")[0]


# ----------------------------------------------------------------------------- specs


def _lp():
    A = cp.Parameter((2, 3), name="A")
    A.value = np.ones((2, 3))
    b = cp.Parameter(2, name="b")
    b.value = np.ones(2)
    c = cp.Parameter(3, name="c")
    c.value = np.ones(3)
    y = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Maximize(c @ y), [A @ y <= b])
    return prob, A, b, c


@pytest.mark.parametrize("bad", [0, -1.0, np.inf, np.nan, "big", None])
def test_sensitivity_must_be_finite_positive(bad):
    _, A, _, _ = _lp()
    with pytest.raises(PrivacySpecError, match="'A'.*sensitivity must be"):
        ConstraintPrivacy(A, sensitivity=bad)


def test_spec_needs_parameters():
    with pytest.raises(PrivacySpecError, match="takes cvxpy.Parameter"):
        ScalarPrivacy(np.ones(3), sensitivity=1.0)
    with pytest.raises(PrivacySpecError, match="empty list"):
        ObjectivePrivacy([], sensitivity=1.0)
    with pytest.raises(PrivacySpecError, match="private= takes cvxdp privacy specs"):
        as_spec_tuple(["A"])


@pytest.mark.parametrize(
    ("make", "which", "where"),
    [
        (ScalarPrivacy, "A", "constraint matrix A"),
        (ObjectivePrivacy, "b", "right-hand side b"),
        (ConstraintPrivacy, "c", "objective's coefficients c"),
        (ConstraintPrivacy, "b", "right-hand side b"),
        (ScalarPrivacy, "c", "objective's coefficients c"),
    ],
)
def test_parameter_in_a_place_the_setting_forbids(make, which, where):
    prob, A, b, c = _lp()
    param = {"A": A, "b": b, "c": c}[which]
    with pytest.raises(PrivacySpecError, match=rf"{make.__name__}: parameter '{which}' enters "
                                               rf".*{where}.*Rewrite the model"):
        to_scp(prob, private=make(param, sensitivity=0.1))


@pytest.mark.filterwarnings("ignore:You are solving a parameterized problem that is not DPP")
def test_parameter_not_in_model_not_dpp_or_with_attributes():
    prob, A, _, _ = _lp()
    other = cp.Parameter(2, name="other")
    other.value = np.ones(2)
    with pytest.raises(PrivacySpecError, match="'other' does not occur in this model"):
        to_scp(prob, private=ScalarPrivacy(other, sensitivity=1.0))
    p = cp.Parameter(name="p", value=2.0)
    q = cp.Parameter(name="q", value=3.0)
    y = cp.Variable(nonneg=True)
    non_dpp = cp.Problem(cp.Minimize(p * q * y), [y >= 1])
    # the refusal names the term that breaks DPP and the private parameter it takes away
    with pytest.raises(PrivacySpecError,
                       match=r"'p \* q' break DPP.*private 'p'.*public=\[\.\.\.\]"):
        to_scp(non_dpp, private=ObjectivePrivacy(p, sensitivity=0.1))
    S = cp.Parameter((3, 3), symmetric=True, name="S", value=np.eye(3))
    z = cp.Variable(3)
    sym = cp.Problem(cp.Minimize(cp.sum(S @ z)), [z >= 0, z <= 1])
    # a symmetric parameter is traced through CVXPY's reduced parameter (issue 22 item 4;
    # tests/transform/test_structured_parameters.py): its entries propagate like any other's
    bounds = to_scp(sym, private=ObjectivePrivacy(S, sensitivity=0.1)).sensitivity
    np.testing.assert_allclose(np.sort(bounds.c)[-3:], 0.3)
    P = cp.Parameter(2, complex=True, name="P", value=np.array([1 + 1j, 2]))
    w = cp.Variable(2, complex=True)
    cplx = cp.Problem(cp.Minimize(cp.norm(w - P)), [cp.real(w) >= 0])
    to_scp(cplx)  # complex models themselves are fine (CVXPY splits them into real parts)
    with pytest.raises(PrivacySpecError, match="'P' is complex.*two real parameters"):
        to_scp(cplx, private=ScalarPrivacy(P, sensitivity=0.1))
    # quad_form with a PSD parameter: CVXPY factors its value (not DPP in it); the message
    # names the rewrite with a private factor, not an attribute the user cannot avoid
    Sig = cp.Parameter((2, 2), PSD=True, name="Sigma", value=np.eye(2))
    v = cp.Variable(2)
    qf = cp.Problem(cp.Minimize(cp.quad_form(v, Sig)), [cp.sum(v) == 1])
    with pytest.raises(PrivacySpecError, match="substituted.*'Sigma'.*sum_squares\\(F @ w\\)"):
        to_scp(qf, private=ConstraintPrivacy(Sig, sensitivity=0.1))


def test_constraint_set_privacy_refusals():
    y = cp.Variable(2)
    with pytest.raises(PrivacySpecError, match="Equalities, cone and PSD"):
        ConstraintSetPrivacy(y == 1)
    with pytest.raises(PrivacySpecError, match="not affine <= affine"):
        ConstraintSetPrivacy(cp.norm(y) <= 1)
    prob = cp.Problem(cp.Minimize(cp.sum(y)), [y <= 1])
    outside = y >= 0
    with pytest.raises(PrivacySpecError, match="not one of problem.constraints"):
        to_scp(prob, private=ConstraintSetPrivacy(outside))


def test_no_spec_and_describe():
    from cvxdp.transform import propagate

    prob, A, _, _ = _lp()
    scp = to_scp(prob)
    with pytest.raises(PrivacySpecError, match="no privacy spec given"):
        propagate(scp, None)
    spec = ConstraintPrivacy(A, sensitivity=0.05)
    assert spec.param is A and spec.params == (A,)
    assert "'A' may change by at most 0.05" in spec.describe()


@pytest.mark.parametrize("atom", ["kl_div", "rel_entr"])
def test_relative_entropy_names_the_exact_rewrite(atom):
    # the compared distribution's coefficients private: the cones' middle coordinate; a new
    # variable for the argument moves them into a linear equality (exact), where an
    # approximation by a norm used to be offered
    expr = getattr(cp, atom)(cp.multiply(a, x), q3)
    prob = cp.Problem(cp.Minimize(cp.sum(expr)), [cp.sum(x) == 1])
    with pytest.raises(UnsupportedProblemError, match=rf"argument of {atom} \(in the objective; "
                                                      r"it reads a\).*a new variable"):
        to_scp(prob, private=ConstraintPrivacy(a, sensitivity=0.01))


@pytest.mark.parametrize(("atom", "rewrite", "build"), [
    ("kl_div", "-q @ cp.log(x) + cp.sum(x)", lambda q, x: -q @ cp.log(x) + cp.sum(x)),
    ("rel_entr", "-q @ cp.log(x)", lambda q, x: -q @ cp.log(x)),
])
def test_a_private_distribution_alone_in_the_first_argument_names_the_expansion(atom, rewrite,
                                                                                 build):
    """``sum(kl_div(q, x))`` with a private empirical distribution ``q`` (no variable in the
    first argument) was refused with the hint "entr(P @ x) as entr(z) with z == P @ x", which
    does not apply. The exact rewrite drops the constant ``sum(q log q)`` (and ``-sum(q)``):
    ``-q @ cp.log(x) + cp.sum(x)``, where ``q`` is an objective coefficient (ObjectivePrivacy),
    and it is solved and certified."""
    q0 = np.array([0.1, 0.2, 0.3, 0.4])
    q = cp.Parameter(4, name="q", nonneg=True, value=q0)
    xv = cp.Variable(4, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum(getattr(cp, atom)(q, xv))), [cp.sum(xv) == 1])
    with pytest.raises(UnsupportedProblemError) as err:
        prob.solve_private(epsilon=10, delta=1e-6, rng=0,
                           private=cvxdp.ScalarPrivacy(q, sensitivity=1e-3))
    message = str(err.value)
    assert rewrite in message and "ObjectivePrivacy(q" in message
    assert "entr(z)" not in message
    rewritten = cp.Problem(cp.Minimize(build(q, xv)), [cp.sum(xv) == 1])
    sol = rewritten.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                                  private=cvxdp.ObjectivePrivacy(q, sensitivity=1e-3))
    assert sol.status == cp.OPTIMAL_INACCURATE
    np.testing.assert_allclose(xv.value, q0, atol=1e-3)   # the minimiser of KL(q || x)


def test_channel_capacity_refusal_names_the_matrix_and_the_rewrite():
    """Held-out trial 19: the channel capacity example with a private transition matrix in
    ``entr(P @ x)`` (objective) was refused with a message about "the true constraint" (the
    user wrote none), naming no parameter, with the hint "entropy has no symmetric-cone form;
    use a quadratic or linear surrogate".  The rewrite ``entr(z)``, ``z == P @ x`` is exact
    and solved (perturbation's band on the private equality)."""
    rng = np.random.default_rng(522)
    n, m = 4, 5
    P0 = rng.uniform(0.1, 1, (m, n))
    P0 = P0 / P0.sum(axis=0)
    P = cp.Parameter((m, n), name="P", value=P0)
    c = cp.Parameter(n, name="c", value=np.sum(P0 * np.log2(P0), axis=0))
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Maximize(c @ x + cp.sum(cp.entr(P @ x) / np.log(2))),
                      [cp.sum(x) == 1, x >= 0])
    private = [ConstraintPrivacy(P, sensitivity=0.005), cvxdp.ObjectivePrivacy(c, 0.02)]
    with pytest.raises(UnsupportedProblemError) as err:
        prob.solve_private(epsilon=10, delta=1e-6, rng=0, private=private)
    message = str(err.value)
    assert "argument of entr (in the objective; it reads P)" in message
    assert "z == P @ x" in message and "surrogate" not in message
    z = cp.Variable(m, name="z")
    rewritten = cp.Problem(cp.Maximize(c @ x + cp.sum(cp.entr(z)) / np.log(2)),
                           [z == P @ x, cp.sum(x) == 1, x >= 0])
    sol = rewritten.solve_private(epsilon=1e6, delta=1e-6, rng=0, private=private)
    assert sol.status == cp.OPTIMAL_INACCURATE


def test_objective_privacy_inside_a_squared_norm_names_the_users_function():
    """Held-out trial 19: ``cp.norm(A @ x - y)**2`` under ObjectivePrivacy was refused naming
    "CVXPY's atom PowerApprox" (an internal class) with the example ``lambda_max(y + ...)``."""
    rng = np.random.default_rng(1)
    A = rng.normal(size=(20, 5))
    y = cp.Parameter(20, name="y", value=rng.normal(size=20))
    x = cp.Variable(5, name="x")
    prob = cp.Problem(cp.Minimize(cp.norm(A @ x - y) ** 2))
    with pytest.raises(PrivacySpecError) as err:
        prob.solve_private(epsilon=10, delta=1e-6, private=cvxdp.ObjectivePrivacy(y, 0.1))
    message = str(err.value)
    assert "here power (cp.square(x), cp.norm(x)**2" in message
    assert "PowerApprox" not in message and "lambda_max" not in message
    assert "cvxdp.ScalarPrivacy(y" in message


def test_private_dynamics_refusal_names_the_unbounded_variable():
    # finite-horizon control with private dynamics in x[t+1] == A x[t] + B u[t]: the state x
    # has no public bound (u has one); the refusal says which variable needs one
    rng = np.random.default_rng(71)
    n, m, T = 3, 2, 10
    A = cp.Parameter((n, n), name="A", value=np.eye(n) * 0.9)
    B = cp.Parameter((n, m), name="B", value=rng.normal(size=(n, m)))
    xs = cp.Variable((n, T + 1), name="state")
    us = cp.Variable((m, T), name="inputs")
    cons = [xs[:, 0] == [1.0, -0.5, 0.8]] + [
        xs[:, t + 1] == A @ xs[:, t] + B @ us[:, t] for t in range(T)] + [cp.abs(us) <= 1]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(xs) + cp.sum_squares(us)), cons)
    with pytest.raises(CvxdpError) as info:
        prob.solve_private(epsilon=10, delta=1e-6, rng=0, mechanism="perturbation",
                           private=cvxdp.ConstraintPrivacy([A, B], sensitivity=1e-3))
    assert "'state'" in str(info.value)
    assert "'inputs'" not in str(info.value)


def test_a_function_of_private_data_alone_is_named_with_its_own_parameter_as_the_fix():
    """The Chebyshev centre as CVXPY's example writes it, ``a_i' x + r ||a_i|| <= b_i``, with
    private rows ``a_i``: ``r * norm(a_i)`` is not DPP. The refusal names the term and the
    rewrite that works: the norms as a private Parameter of their own, in their own spec with
    the norm's sensitivity (held-out trial 8)."""
    m, n = 6, 2
    th = np.linspace(0, 2 * np.pi, m, endpoint=False)
    A = cp.Parameter((m, n), name="A", value=np.c_[np.cos(th), np.sin(th)])
    xc, r = cp.Variable(n), cp.Variable()
    prob = cp.Problem(cp.Maximize(r), [A[i] @ xc + r * cp.norm(A[i], 2) <= 1 for i in range(m)])
    with pytest.raises(cvxdp.errors.PrivacySpecError) as err:
        prob.solve_private(epsilon=1.0, delta=1e-6, private=cvxdp.ConstraintPrivacy(A, 1e-3))
    text = str(err.value)
    assert "norm(A[0, 0:2], 2)" in text
    assert "private cp.Parameter of its own" in text and "sqrt(k)" in text


def test_an_affine_atom_cvxpy_does_not_trace_is_named_with_its_rewrite():
    """Trial 15: ``cp.kron(K, I)`` with a private K is affine in K, but CVXPY's DPP rules do
    not keep a parameter inside kron; the refusal said to make the parameter enter affinely
    (it does).  It must name kron and the rewrite that works: a sum of K's entries times
    constant matrices."""
    K = cp.Parameter((2, 2), name="K", value=np.eye(2))
    X = cp.Variable((4, 4), symmetric=True)
    prob = cp.Problem(cp.Minimize(cp.trace(cp.kron(K, np.eye(2)) @ X)),
                      [X >> 0, cp.trace(X) == 1])
    with pytest.raises(cvxdp.PrivacySpecError) as err:
        prob.solve_private(epsilon=1, delta=1e-6,
                           private=cvxdp.ConstraintPrivacy(K, sensitivity=0.1))
    msg = str(err.value)
    assert "kron" in msg and "enters affinely" in msg and "np.kron(E" in msg
    assert "rewrite the term so the private parameter enters affinely" not in msg


def test_objective_privacy_inside_an_epigraph_atom_says_so():
    # trial 16: M only in the objective (lambda_max(M + x A1)) was refused as entering "a
    # constraint's right-hand side b": the user wrote no such constraint; CVXPY's epigraph of
    # lambda_max did. The refusal says that, and names the spec that runs
    rng = np.random.default_rng(214)
    A1 = rng.normal(size=(4, 4))
    G = rng.normal(size=(4, 4))
    M = cp.Parameter((4, 4), PSD=True, name="M", value=G @ G.T / 4)
    x = cp.Variable(name="x")
    prob = cp.Problem(cp.Minimize(cp.lambda_max(M + x * (A1 + A1.T) / 2)), [cp.abs(x) <= 1])
    with pytest.raises(PrivacySpecError, match=r"sits in the objective, but inside a nonlinear "
                                               r"atom.*cvxdp\.ScalarPrivacy\(M,"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0,
                           private=cvxdp.ObjectivePrivacy(M, sensitivity=0.01))
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(M, sensitivity=0.01))
    assert sol.status == cp.OPTIMAL_INACCURATE


def test_objective_privacy_inside_a_nonlinear_atom_names_that_atom():
    """Held-out trial 17: ObjectivePrivacy on ``y`` inside ``sum_squares(A @ x - y)`` is refused
    (right: CVXPY writes it as an epigraph's rows), but the message's only example was
    ``lambda_max(y + ...)``, an atom the model does not have. It names the atom that holds
    ``y``."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(20, 3))
    y = cp.Parameter(20, name="y", value=rng.normal(size=20))
    x = cp.Variable(3, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - y) + cp.norm1(x)))
    with pytest.raises(PrivacySpecError) as err:
        prob.solve_private(epsilon=1.0, delta=1e-6,
                           private=cvxdp.ObjectivePrivacy(y, sensitivity=0.1))
    message = str(err.value)
    assert "here quad_over_lin (cp.sum_squares(x) is quad_over_lin(x, 1)), which holds y" \
        in message
    assert "cvxdp.ScalarPrivacy(y" in message


def test_objective_privacy_inside_pos_says_which_atom_the_user_wrote():
    """Held-out trial 18: ``cp.pos(D - X)`` in a newsvendor objective under ObjectivePrivacy was
    refused naming "CVXPY's atom maximum", an atom the user did not write."""
    D = cp.Parameter((6, 2), name="D", value=np.ones((6, 2)))
    q = cp.Variable(2, name="q")
    prob = cp.Problem(cp.Minimize(cp.sum(q) + cp.sum(cp.pos(D - np.ones((6, 1)) @ q[None, :]))),
                      [q >= 0])
    with pytest.raises(PrivacySpecError) as err:
        prob.solve_private(epsilon=1.0, delta=1e-6,
                           private=cvxdp.ObjectivePrivacy(D, sensitivity=0.1))
    assert "cp.pos" in str(err.value)
