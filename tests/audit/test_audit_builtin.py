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
    assert main(["audit", "--samples", "3000", "--correction", "bonferroni", "--level", "0.05",
                 "--case", "gaussian (analytic)", "--case", "gaussian, sigma/4"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    out = " ".join(out.split())  # the footer is wrapped
    assert "eps >=" in out and "level" in out
    assert "Bonferroni over 2 audits at family-wise level 0.05" in out
    assert "per-mechanism levels 0.025 to 0.025" in out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_audit_prints_progress_to_stderr(capsys, jobs):
    cases = ["least_squares", "least_squares, true value"]
    assert main(["audit", "--samples", "200", "--jobs", jobs, "--case", cases[0],
                 "--case", cases[1]]) == 0
    captured = capsys.readouterr()
    for k, name in enumerate(cases, start=1):
        assert f"{name}: eps lower bound" in captured.err
        assert f"[{k}/2]" in captured.err
    assert "eps lower bound" not in captured.out  # the table stays clean on stdout
    assert "least_squares, true value" in captured.out


def test_cli_audit_results_do_not_depend_on_jobs():
    names = ["gaussian (analytic)", "least_squares, true value", "john_ellipsoid"]
    one = run_builtin_audits(n_samples=200, names=names, jobs=1)
    two = run_builtin_audits(n_samples=200, names=names, jobs=2)
    assert [r.counts for _, r in one] == [r.counts for _, r in two]
    assert [r.epsilon_lower for _, r in one] == [r.epsilon_lower for _, r in two]


def test_cli_audit_unknown_case_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--case", "typo"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: cvxdp audit" in err and "unknown audit case 'typo'" in err
    assert "Traceback" not in err
    with pytest.raises(SystemExit):
        main(["audit", "--case", "least_squars"])
    assert "did you mean 'least_squares'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown audit cases"):  # the library's own error
        run_builtin_audits(names=["typo"])


@pytest.mark.slow  # the whole default family, 2 processes: ~1-3 minutes (machine load)
def test_cli_audit_with_defaults_catches_every_twin(capsys):
    assert main(["audit"]) == 0
    captured = capsys.readouterr()
    assert max(len(line) for line in captured.out.splitlines()) <= 100
    out = " ".join(captured.out.split())
    n = len(builtin_cases(slow=False))
    assert f"Holm (step-down) over {n} audits at family-wise level 0.01" in out
    for name in ("gaussian, sigma/2", "exponential, eps*1.5", "EJA gaussian S^3",
                 "MWU LP, true value", "quad_form, true value", "covering_lp, true value"):
        assert name in out
    assert captured.err.count("eps lower bound") == n
