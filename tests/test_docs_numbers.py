"""Issue 25 item 5: the docs stay true.

* The examples the README and ``docs/index.md`` list are exactly the files in ``examples/``
  (fast, default suite).
* The cheap numbers the docs quote are re-run from the docs' own code and compared with the
  numbers *read from the docs* (slow): a doc that goes stale fails here. Tolerance: 3% relative
  for solver outputs (solver and BLAS rounding move them in the third digit at most), the
  documented rounding for counts and shares, 0.1 for the audit's lower bound (a statistical
  quantity quoted as "~x").
"""

import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHIPPED = sorted(p.name for p in (ROOT / "examples").glob("*.py"))


def _examples_bullet(path: pathlib.Path) -> str:
    text = path.read_text()
    start = text.index("* `examples/`")
    end = text.find("\n*", start + 1)
    return text[start:end]


@pytest.mark.parametrize("doc", ["README.md", "docs/index.md"])
def test_listed_examples_are_the_shipped_ones(doc):
    listed = sorted(set(re.findall(r"`(\w+\.py)`", _examples_bullet(ROOT / doc))))
    assert listed == SHIPPED


def test_every_example_path_named_in_the_docs_exists():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for doc in docs:
        for name in re.findall(r"examples/(\w+\.py)", doc.read_text()):
            assert name in SHIPPED, f"{doc.name} names examples/{name}, which does not exist"


def _number(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    assert m, f"the docs no longer contain {pattern!r}"
    return float(m.group(1))


@pytest.mark.slow
def test_covering_page_numbers():
    import cvxdp
    from cvxdp.solvers.covering.covering import random_covering_sdp

    text = (ROOT / "docs" / "covering.md").read_text()
    prob = cvxdp.covering_sdp(random_covering_sdp(2000, 10, rng=0))
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, s=200, rng=1, reference=True)
    cost = _number(r"trace / OPT\s+\(measured ([\d.]+)", text)
    covered = _number(r"share with <A_i,X> >= 1\s+\(measured ([\d.]+)", text)
    assert sol.validation.cost_ratio == pytest.approx(cost, rel=0.03)
    assert sol.validation.frac_covered == pytest.approx(covered, abs=0.001)


@pytest.mark.slow
def test_audit_page_number():
    from cvxdp.audit import audit_mechanism
    from cvxdp.privacy import calibrate_gaussian

    text = (ROOT / "docs" / "audit.md").read_text()
    sigma = calibrate_gaussian(epsilon=1.0, delta=1e-5)
    res = audit_mechanism(lambda x, g: x + g.normal(0, sigma), 0.0, 1.0,
                          epsilon=1.0, delta=1e-5, rng=0)
    assert res.passed
    assert res.epsilon_lower == pytest.approx(_number(r"\(True, ~([\d.]+)\)", text), abs=0.1)


@pytest.mark.slow
def test_readme_quickstart_numbers():
    import cvxpy as cp

    import cvxdp
    from cvxdp.status import status_of

    text = (ROOT / "README.md").read_text()
    rng = np.random.default_rng(0)
    A = cp.Parameter((40, 15), name="A", value=rng.uniform(0, 1, (40, 15)))
    x = cp.Variable(15, nonneg=True)
    c = rng.uniform(0, 1, 15)
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    priv = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    quick = cvxdp.ConstraintPrivacy(A, sensitivity=1e-4)

    def true_violation(xv):  # the user's constraints with the TRUE A
        return max(0.0, float(np.max(A.value @ xv - 0.7)), abs(float(np.sum(xv)) - 1.0))

    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, reference=True, private=quick)
    m = re.search(r"This prints `(\w+) ([\d.]+)\.\.\.`: the exact optimum is ([\d.]+)", text)
    assert m, "README: the LP's printed-value sentence is gone"
    # the status is the one its certificate implies, and the one the README prints
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)
    assert sol.status == m.group(1)
    assert sol.info["mechanism"] == "perturbation"
    assert sol.value == pytest.approx(float(m.group(2)), rel=0.03)
    assert sol.validation.reference_value == pytest.approx(float(m.group(3)), rel=0.03)
    cert = re.search(r"says `relative gap <= ([\d.]+), violation <= ([\d.e+-]+), with "
                     r"probability >=\s+([\d.]+)`", text)
    assert cert, "README: the quickstart's certificate sentence is gone"
    assert sol.certificate.relative_gap_bound == pytest.approx(float(cert.group(1)), rel=0.03)
    assert sol.certificate.probability == pytest.approx(float(cert.group(3)), rel=1e-12)
    # "(solver tolerance)": a violation bound at the solver's rounding, not a number to pin
    assert float(cert.group(2)) <= 1e-6 and sol.certificate.violation_bound <= 1e-6
    # "proven within 8% of the optimum (it is 6.4% off)": the certificate holds on this draw
    proven = re.search(r"proven within (\d+)% of the optimum \(it is ([\d.]+)% off\)", text)
    assert proven, "README: the quickstart's proven/true gap sentence is gone"
    exact = sol.validation.reference_value
    true_gap = exact - float(c @ x.value)
    assert true_gap / exact == pytest.approx(float(proven.group(2)) / 100, rel=0.05)
    assert round(100 * sol.certificate.relative_gap_bound) == int(proven.group(1))
    assert true_gap <= sol.certificate.gap_bound + 1e-9
    assert true_violation(x.value) <= sol.certificate.violation_bound + 1e-8
    assert sol.validation.max_violation == pytest.approx(true_violation(x.value), abs=1e-12)

    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, reference=True, private=quick,
                             mechanism="mwu")
    m = re.search(r"status\s+`(\w+)` \(no accuracy theorem[^)]*\), value ([\d.]+), largest\s+"
                  r"violation of the true constraints ([\d.]+)[.;]", text)
    assert m, "README: the MWU sentence of the quickstart is gone"
    assert sol.status == m.group(1) == "user_limit"
    assert sol.value == pytest.approx(float(m.group(2)), rel=0.03)
    assert sol.validation.max_violation == pytest.approx(float(m.group(3)), rel=0.1)

    sol = prob.solve_private(epsilon=10.0, delta=1e-6, rng=7, mechanism="perturbation",
                             noise="truncated", private=priv)
    m = re.search(r"# (\w+) ([\d.]+) \(exact ([\d.]+)\); relative\s+# gap <= ([\d.]+), "
                  r"violation <= ([\d.e+-]+), surely", text)
    assert m, "README: the truncated-noise line is gone"
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)
    assert sol.status == m.group(1)
    assert sol.value == pytest.approx(float(m.group(2)), rel=0.03)
    assert sol.certificate.relative_gap_bound == pytest.approx(float(m.group(4)), rel=0.03)
    assert sol.certificate.probability == 1.0  # "surely": bounded noise
    assert float(m.group(5)) <= 1e-6 and sol.certificate.violation_bound <= 1e-6
    assert true_violation(x.value) <= sol.certificate.violation_bound + 1e-8

    # the empty tightened counterpart: the loosened point, user_limit, never infeasible
    m = re.search(r"at\s+`epsilon=([\d.]+)`.*?status `(\w+)`, value ([\d.]+), certified\s+"
                  r"violation of the true constraints ([\d.]+) \(surely\)", text, re.DOTALL)
    assert m, "README: the loosened-point sentence is gone"
    sol = prob.solve_private(epsilon=float(m.group(1)), delta=1e-6, rng=7,
                             mechanism="perturbation", noise="truncated", private=priv)
    status, reason = status_of(sol.certificate)
    assert sol.status == status == m.group(2) == "user_limit"
    # the reason says the tightened copy was empty, then quotes the certified numbers
    assert "tightened counterpart" in sol.status_reason and sol.status_reason.endswith(reason)
    assert sol.value == pytest.approx(float(m.group(3)), rel=0.03)
    assert sol.certificate.violation_bound == pytest.approx(float(m.group(4)), rel=0.03)
    assert sol.certificate.probability == 1.0
    assert true_violation(x.value) <= sol.certificate.violation_bound + 1e-8

    pts = np.random.default_rng(1).uniform(-3, 3, (50000, 2))
    sol = cvxdp.min_enclosing_ball(pts).solve_private(epsilon=1.0, delta=1e-6, bounds=(-10, 10),
                                                      rng=0, reference=True)
    m = re.search(r"sol\.ball\.radius\)\s+# (\w+) ([\d.]+)", text)
    assert m, "README: the ball's printed status and radius are gone"
    assert sol.status == m.group(1)
    assert sol.ball.radius == pytest.approx(float(m.group(2)), rel=0.03)
    m = re.search(r"validation\.uncovered\)\s+# ([\d.]+) (\d+)", text)
    assert m, "README: the ball's printed numbers are gone"
    assert sol.validation.radius_ratio == pytest.approx(float(m.group(1)), rel=0.03)
    assert abs(sol.validation.uncovered - int(m.group(2))) <= 2


@pytest.mark.slow
def test_modeling_page_first_example():
    """docs/modeling.md's first block and the sensitivity=0.05 numbers said beside it."""
    import cvxpy as cp

    import cvxdp
    from cvxdp.status import status_of

    text = (ROOT / "docs" / "modeling.md").read_text()
    m = re.search(r"# (\w+) ([\d.]+): the exact value is ([\d.]+), max violation "
                  r"of A @ x <= 1 is ([\d.]+)", text)
    assert m, "modeling.md: the first example's printed numbers are gone"
    m_auto = re.search(r"stays feasible but becomes very conservative \(value ([\d.]+)", text)
    m5 = re.search(r"violates `A @ x <= 1` by ([\d.]+) and its value ([\d.]+)", text)
    assert m_auto and m5, "modeling.md: the sensitivity=0.05 sentences are gone"

    def solve(sens, **kw):
        rng = np.random.default_rng(0)
        A = cp.Parameter((20, 5), name="A", value=rng.uniform(0.1, 1.0, (20, 5)))
        x = cp.Variable(5, nonneg=True)
        prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, cp.sum(x) <= 3])
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, reference=True,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=sens), **kw)
        true_viol = max(0.0, float(np.max(A.value @ x.value - 1)), float(np.sum(x.value) - 3))
        return sol, true_viol

    sol, viol = solve(1e-3)
    # the status is the one the certificate implies, and the one the page prints
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)
    assert sol.status == m.group(1), "modeling.md prints a status the certificate does not give"
    assert sol.value == pytest.approx(float(m.group(2)), rel=0.03)
    assert sol.validation.reference_value == pytest.approx(float(m.group(3)), rel=0.03)
    assert sol.validation.max_violation <= float(m.group(4)) + 5e-4
    assert viol <= sol.certificate.violation_bound + 1e-8  # the certificate holds
    assert sol.validation.reference_value - sol.value <= sol.certificate.gap_bound + 1e-9
    sol, viol = solve(0.05)
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)
    assert sol.value == pytest.approx(float(m_auto.group(1)), rel=0.03)
    assert sol.validation.max_violation <= 5e-4
    assert viol <= sol.certificate.violation_bound + 1e-8
    sol, _ = solve(0.05, mechanism="mwu")
    assert sol.status == "user_limit"
    assert sol.validation.max_violation == pytest.approx(float(m5.group(1)), rel=0.03)
    assert sol.value == pytest.approx(float(m5.group(2)), rel=0.03)


def test_getting_started_refusal_table_matches_the_checks():
    """The "When cvxdp says no" table quotes the budget limits the entry points enforce, and
    every row of it renders as a table row (five cells' worth of pipes, none left raw)."""
    import cvxdp
    from cvxdp.arguments import DELTA_MAX, EPSILON_MAX

    text = (ROOT / "docs" / "getting-started.md").read_text()
    section = text[text.index("## When cvxdp says no"):]
    rows = [x for x in section.splitlines() if x.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == [
        "BudgetError", "PrivacySpecError", "UnsupportedProblemError", "InfeasibleProblemError",
        "PrivacyGuaranteeError"]
    assert all(r.count("|") == 3 and r.endswith("|") for r in rows), rows
    eps_max = _number(r"epsilon <= 0 or above ([\de.+]+),", section)
    delta_max = _number(r"delta outside \[0, ([\d.]+)\]", section)
    assert (eps_max, delta_max) == (EPSILON_MAX, DELTA_MAX)
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (50, 2))
    for bad in ({"epsilon": 1.0, "delta": 2 * delta_max}, {"epsilon": 2 * eps_max}):
        with pytest.raises(cvxdp.BudgetError):
            cvxdp.least_squares(X, X[:, 0], row_bound=1.0).solve_private(**bad)


def test_getting_started_first_solve_and_verbose_block(capsys):
    """docs/getting-started.md: the first solve's status and certificate ('Reading the answer')
    and the verbose block of the README's ball (header and summary, all but the time)."""
    import warnings

    import cvxpy as cp

    import cvxdp

    text = (ROOT / "docs" / "getting-started.md").read_text()
    rng = np.random.default_rng(0)
    usage = rng.uniform(0, 1, (40, 15))
    A = cp.Parameter((40, 15), name="A", value=usage)
    x = cp.Variable(15, nonneg=True)
    prob = cp.Problem(cp.Maximize(rng.uniform(0, 1, 15) @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, reference=True,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
    m = re.search(r"sol\.status\s+# '(\w+)' here", text)
    assert m and sol.status == m.group(1)
    cert = re.search(r"sol\.certificate\s+# relative gap <= ([\d.]+), violation <= ([\d.e+-]+), "
                     r"with probability >= ([\d.]+)", text)
    assert cert, "getting-started: the certificate line is gone"
    assert sol.certificate.relative_gap_bound == pytest.approx(float(cert.group(1)), rel=0.03)
    assert sol.certificate.probability == float(cert.group(3))
    assert float(cert.group(2)) <= 1e-6 and sol.certificate.violation_bound <= 1e-6

    block = re.search(r"```\n(cvxdp MinEnclosingBall: .*?)```", text, re.DOTALL)
    assert block, "getting-started: the verbose block is gone"
    pts = np.random.default_rng(1).uniform(-3, 3, (50000, 2))
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cvxdp.min_enclosing_ball(pts).solve_private(epsilon=1.0, delta=1e-6, bounds=(-10, 10),
                                                    rng=0, verbose=True)
    printed = capsys.readouterr().out

    def untimed(s):
        return re.sub(r"time [\d.e+-]+ s", "time - s", " ".join(s.split()))

    assert untimed(printed) == untimed(block.group(1))


def test_privacy_page_composition_number():
    """docs/privacy.md: 100 exponential-mechanism selections at epsilon 0.04 on a (1, 1e-6)
    accountant compose (zCDP, then CKS) to the epsilon the page prints."""
    from cvxdp.privacy import ApproxDP, PrivacyAccountant, exponential_mechanism

    text = (ROOT / "docs" / "privacy.md").read_text()
    m = re.search(r"print\(acct\.spent\)\s+# ApproxDP\(epsilon=([\d.]+)\.\.\., delta=([\de.-]+)\)",
                  text)
    assert m, "privacy.md: the composition line is gone"
    rng = np.random.default_rng(0)
    scores = rng.uniform(0, 1, 10)
    acct = PrivacyAccountant(ApproxDP(1.0, 1e-6))
    for _ in range(100):
        exponential_mechanism(scores, epsilon=0.04, sensitivity=1.0, rng=rng, accountant=acct)
    assert str(acct.spent.epsilon).startswith(m.group(1))
    assert acct.spent.delta == float(m.group(2))


def test_index_page_ball_numbers():
    import cvxdp

    text = (ROOT / "docs" / "index.md").read_text()
    m = re.search(r"validation\.uncovered\)\s+# ([\d.]+) ([\d.]+) (\d+)", text)
    assert m, "index.md: the ball's printed numbers are gone"
    pts = np.random.default_rng(1).uniform(-3, 3, (50000, 2))
    sol = cvxdp.min_enclosing_ball(pts).solve_private(epsilon=1.0, delta=1e-6, bounds=(-10, 10),
                                                      rng=0, reference=True)
    assert sol.ball.radius == pytest.approx(float(m.group(1)), rel=0.03)
    assert sol.validation.radius_ratio == pytest.approx(float(m.group(2)), rel=0.03)
    assert abs(sol.validation.uncovered - int(m.group(3))) <= 2


@pytest.mark.filterwarnings("ignore::cvxdp.GaussianSampleWarning")
def test_gaussians_page_first_block():
    """docs/gaussians.md's first block: status, the two errors (quoted as ~x: within a factor
    2), the samples the bound needs, the method auto chose."""
    from cvxdp.estimation.gaussians import private_gaussian

    text = (ROOT / "docs" / "gaussians.md").read_text()
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    sigma = (q * np.logspace(0, 3, 5)) @ q.T
    mu = 1e3 * np.ones(5) / np.sqrt(5)
    X = rng.multivariate_normal(mu, sigma, size=200_000)
    sol = private_gaussian(X, epsilon=1.0, delta=1e-6, rng=1, reference=True)
    status = re.search(r"sol\.status, sol\.info\[\"status_reason\"\]\s+# '(\w+)'", text)
    assert status and sol.status == status.group(1)
    mean_err = _number(r"mahalanobis_mean_error\s+# ~([\d.]+)", text)
    cov_err = _number(r"rel_frobenius_cov_error\s+# ~([\d.]+)", text)
    assert mean_err / 2 <= sol.validation.mahalanobis_mean_error <= 2 * mean_err
    assert cov_err / 2 <= sol.validation.rel_frobenius_cov_error <= 2 * cov_err
    needed = _number(r"samples_required\.total\s+# ([\de.+]+):", text)
    assert sol.samples_required.total == pytest.approx(needed, rel=0.05)
    method = re.search(r"sol\.info\[\"method\"\]\s+# '(\w+)'", text)
    assert method and sol.info["method"] == method.group(1)


def test_readme_estimator_block():
    """The README's PrivateLinearRegression block: the printed coefficients, intercept and
    status."""
    from cvxdp.estimators import PrivateLinearRegression

    text = (ROOT / "README.md").read_text()
    m = re.search(r"reg\.intercept_\)\s+# \[([^\]]+)\] ([\d.]+)", text)
    assert m, "README: the estimator's printed coefficients are gone"
    status = re.search(r"print\(reg\.status_\)\s+# (\w+)", text)
    assert status, "README: the estimator's printed status is gone"
    X = np.random.default_rng(0).uniform(-1, 1, (50_000, 3))
    y = X @ [1.0, -0.5, 0.25] + 2.0
    reg = PrivateLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(0, 4),
                                  random_state=0).fit(X, y)
    np.testing.assert_allclose(reg.coef_, [float(v) for v in m.group(1).split()], atol=1.5e-3)
    assert reg.intercept_ == pytest.approx(float(m.group(2)), abs=1.5e-3)
    assert reg.status_ == status.group(1) == reg.result_.status


def test_readme_accountant_paragraph_numbers():
    """The README's accountant example at sensitivity 1e-3: the certified violation its comment
    quotes, and the two a-priori predictions the auto sentence quotes."""
    import warnings

    import cvxpy as cp

    import cvxdp

    text = (ROOT / "README.md").read_text()
    rng = np.random.default_rng(0)
    A = cp.Parameter((40, 15), name="A", value=rng.uniform(0, 1, (40, 15)))
    x = cp.Variable(15, nonneg=True)
    prob = cp.Problem(cp.Maximize(rng.uniform(0, 1, 15) @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    m = re.search(r"# user_limit: at sensitivity 1e-3 the certified violation is ([\d.]+)", text)
    assert m and sol.status == "user_limit"
    assert sol.certificate.violation_bound == pytest.approx(float(m.group(1)), rel=0.03)
    m = re.search(r"the MWU theorem's alpha \(([\d.]+)\) is above twice perturbation's\s+"
                  r"predicted tightening \(2 x ([\d.]+)\)", text)
    assert m, "README: the accountant example's auto sentence is gone"
    auto = sol.info["auto"]
    assert auto["alpha_mwu"] == pytest.approx(float(m.group(1)), rel=0.03)
    assert auto["tightening_perturbation"] == pytest.approx(float(m.group(2)), rel=0.03)
    assert sol.info["mechanism"] == "perturbation"
    assert 2 * auto["tightening_perturbation"] <= auto["alpha_mwu"]


def test_readme_row_privacy_block():
    """The README's RowPrivacy SVM block, run as printed: its status, mechanism, training
    accuracy and the proven excess risk its comment quotes."""
    import contextlib
    import io

    import cvxpy as cp

    import cvxdp

    text = (ROOT / "README.md").read_text()
    start = text.index("rng = np.random.default_rng(0)\nX0 = rng.normal(size=(5000, 5))")
    code = text[start:text.index("```", start)]
    m = re.search(r"# (\w+) (\w+) ([\d.]+)\s+\(proven excess risk <= ([\d.]+) ", code)
    assert m, "README: the SVM block's printed numbers are gone"
    scope = {"np": np, "cp": cp, "cvxdp": cvxdp}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, scope)
    sol, w = scope["sol"], scope["w"]
    acc = np.mean(np.sign(scope["X0"] @ w.value) == scope["y0"])
    assert (sol.status, sol.info["mechanism"]) == (m.group(1), m.group(2))
    assert acc == pytest.approx(float(m.group(3)), abs=2e-3)
    assert sol.certificate.gap_bound == pytest.approx(float(m.group(4)), rel=0.03)
