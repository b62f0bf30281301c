import pytest

from cvxdp.audit.builtin import builtin_cases, run_builtin_audits
from cvxdp.cli import main

GROSS = ["gaussian (analytic)", "gaussian, sigma/4", "exponential", "exponential, eps*4"]


@pytest.fixture(scope="module")
def results():
    return run_builtin_audits(n_samples=20000, rng=0, names=GROSS)


def test_every_builtin_mechanism_is_audited():
    names = {case.name for case in builtin_cases()}
    assert {"gaussian (analytic)", "exponential", "EJA gaussian S^3 (l-inf)",
            "gaussian, sigma/2", "exponential, eps*1.5"} <= names
    assert {c.name for c in builtin_cases() if c.broken} >= {"gaussian, sigma/2",
                                                             "exponential, eps*1.5"}


def test_honest_mechanisms_pass_and_gross_twins_are_caught(results):
    for case, res in results:
        if case.broken:
            assert not res.passed, case.name
            assert res.epsilon_lower > 1.5 * case.epsilon, case.name
        else:
            assert res.passed, (case.name, res)


def test_family_levels_are_holm_over_the_chosen_cases(results):
    levels = sorted(1 - res.confidence for _, res in results)
    # two broken twins rejected at 0.05/4 and 0.05/3, then the two honest ones at 0.05/2
    assert levels == pytest.approx([0.05 / 4, 0.05 / 3, 0.05 / 2, 0.05 / 2])


def test_cli_audit_reports_the_correction(capsys):
    assert main(["audit", "--samples", "3000", "--correction", "bonferroni",
                 "--case", "gaussian (analytic)", "--case", "gaussian, sigma/4"]) == 0
    out = capsys.readouterr().out
    assert "eps lower bound" in out and "level" in out
    assert "Bonferroni over 2 audits at family-wise level 0.05" in out
    assert "per-mechanism levels 0.025 to 0.025" in out
    with pytest.raises(ValueError, match="unknown audit cases"):
        main(["audit", "--case", "no such mechanism"])


@pytest.mark.slow  # the whole default family: ~2 x 17 s of exponential runs, ~25 s of EJA runs
def test_cli_audit_with_defaults_catches_every_twin(capsys):
    assert main(["audit"]) == 0
    out = capsys.readouterr().out
    assert "Holm (step-down) over 8 audits at family-wise level 0.05" in out
    for name in ("gaussian, sigma/2", "exponential, eps*1.5", "EJA gaussian S^3"):
        assert name in out
