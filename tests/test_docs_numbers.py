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

    text = (ROOT / "README.md").read_text()
    rng = np.random.default_rng(0)
    A = cp.Parameter((40, 15), name="A", value=rng.uniform(0, 1, (40, 15)))
    x = cp.Variable(15, nonneg=True)
    prob = cp.Problem(cp.Maximize(rng.uniform(0, 1, 15) @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    priv = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    quick = cvxdp.ConstraintPrivacy(A, sensitivity=1e-4)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, reference=True, private=quick)
    m = re.search(r"This prints `optimal_inaccurate ([\d.]+)\.\.\.`: the exact optimum is "
                  r"([\d.]+)", text)
    assert m, "README: the LP's printed-value sentence is gone"
    assert sol.status == "optimal_inaccurate"
    assert sol.value == pytest.approx(float(m.group(1)), rel=0.03)
    assert sol.validation.reference_value == pytest.approx(float(m.group(2)), rel=0.03)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, reference=True, private=quick,
                             mechanism="mwu")
    assert sol.status == "user_limit"
    assert sol.value == pytest.approx(_number(r"says so\), value ([\d.]+), largest", text),
                                      rel=0.03)
    assert sol.validation.max_violation == pytest.approx(
        _number(r"true constraints ([\d.]+)\.", text), rel=0.1)
    sol = prob.solve_private(epsilon=10.0, delta=1e-6, rng=7, mechanism="perturbation",
                             noise="truncated", private=priv)
    assert sol.status == "optimal_inaccurate"
    assert sol.value == pytest.approx(_number(r"# optimal_inaccurate ([\d.]+)", text), rel=0.03)

    pts = np.random.default_rng(1).uniform(-3, 3, (50000, 2))
    sol = cvxdp.min_enclosing_ball(pts).solve_private(epsilon=1.0, delta=1e-6, bounds=(-10, 10),
                                                      rng=0, reference=True)
    m = re.search(r"validation\.uncovered\)\s+# ([\d.]+) ([\d.]+) (\d+)", text)
    assert m, "README: the ball's printed numbers are gone"
    assert sol.ball.radius == pytest.approx(float(m.group(1)), rel=0.03)
    assert sol.validation.radius_ratio == pytest.approx(float(m.group(2)), rel=0.03)
    assert abs(sol.validation.uncovered - int(m.group(3))) <= 2


@pytest.mark.slow
def test_modeling_page_first_example():
    """docs/modeling.md's first block and the sensitivity=0.05 numbers said beside it."""
    import cvxpy as cp

    import cvxdp

    text = (ROOT / "docs" / "modeling.md").read_text()
    m = re.search(r"# optimal_inaccurate ([\d.]+): the exact value is ([\d.]+), max violation "
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
        return prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, reference=True,
                                  private=cvxdp.ConstraintPrivacy(A, sensitivity=sens), **kw)

    sol = solve(1e-3)
    assert sol.status == "optimal_inaccurate"
    assert sol.value == pytest.approx(float(m.group(1)), rel=0.03)
    assert sol.validation.reference_value == pytest.approx(float(m.group(2)), rel=0.03)
    assert sol.validation.max_violation <= float(m.group(3)) + 5e-4
    sol = solve(0.05)
    assert sol.value == pytest.approx(float(m_auto.group(1)), rel=0.03)
    assert sol.validation.max_violation <= 5e-4
    sol = solve(0.05, mechanism="mwu")
    assert sol.status == "user_limit"
    assert sol.validation.max_violation == pytest.approx(float(m5.group(1)), rel=0.03)
    assert sol.value == pytest.approx(float(m5.group(2)), rel=0.03)
