import pytest

from cvxdp.audit.builtin import run_builtin_audits
from cvxdp.cli import main


@pytest.fixture(scope="module")
def results():
    return run_builtin_audits(n_samples=20000, rng=0)


def test_every_builtin_mechanism_is_audited(results):
    names = {case.name for case, _ in results}
    assert {"gaussian (analytic)", "exponential", "EJA gaussian S^3 (l-inf)"} <= names


def test_honest_mechanisms_pass_and_broken_twins_are_caught(results):
    for case, res in results:
        if case.broken:
            assert not res.passed, case.name
            assert res.epsilon_lower > 1.5 * case.epsilon, case.name
        else:
            assert res.passed, (case.name, res)


def test_cli_audit_exit_code_and_table(capsys):
    assert main(["audit", "--samples", "5000"]) == 0
    out = capsys.readouterr().out
    assert "eps lower bound" in out and "EJA gaussian" in out
