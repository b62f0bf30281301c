"""Issue 25 item 4: ``cvxdp`` alone prints help and exits 0; ``cvxdp --version``; every
subcommand's help carries an example."""

import subprocess
import sys

import pytest

import cvxdp
from cvxdp.cli import main


def test_no_arguments_prints_help_and_exits_zero(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "usage: cvxdp" in out and "demo" in out and "audit" in out and "bench" in out


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"cvxdp {cvxdp.__version__}"


@pytest.mark.parametrize("command", ["demo", "audit", "bench"])
def test_subcommand_help_has_an_example(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert f"example: cvxdp {command}" in capsys.readouterr().out


def _cvxdp_imports(module: str) -> set[str]:
    """Modules of cvxdp that ``cvxdp/<module>.py`` imports (anywhere, also inside functions)."""
    import ast
    import pathlib

    src = pathlib.Path(cvxdp.__file__).parent / f"{module}.py"
    found = set()
    for node in ast.walk(ast.parse(src.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cvxdp."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("cvxdp.")}
    return found


def test_no_import_circle_between_cli_demo_plots():
    """Issue 25 item 8: cli -> demo -> plots is one-way; none of them imports back."""
    trio = {"cli", "demo", "plots"}
    edges = {m: _cvxdp_imports(m) & trio for m in trio}
    for a in trio:
        for b in edges[a]:
            assert a not in edges[b], f"import circle: {a} <-> {b} ({edges})"
    assert "cli" not in edges["demo"] | edges["plots"]
    assert "demo" not in edges["plots"]


def test_audit_unknown_case_is_a_usage_error_naming_the_closest(capsys):
    """A misspelt --case ends in argparse's usage error (exit 2), not a traceback."""
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--case", "gausian (analytic)"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: cvxdp audit")
    assert "unknown audit case 'gausian (analytic)'; did you mean 'gaussian (analytic)'" in err
    assert "Traceback" not in err


def test_audit_prints_progress_on_stderr_and_the_table_on_stdout(capsys):
    assert main(["audit", "--case", "gaussian (analytic)", "--samples", "500",
                 "--jobs", "1"]) == 0
    cap = capsys.readouterr()
    assert "[1/1] gaussian (analytic): 2 x 500 runs ..." in cap.err
    assert "[1/1]" not in cap.out and "gaussian (analytic)" in cap.out


def test_python_m_cvxdp_is_the_command():
    """``python -m cvxdp`` (the fallback when the console script is not on PATH: a venv not
    activated, ``pip --user``) runs the same command (trial 21b, D8: there was no
    ``__main__``)."""
    r = subprocess.run([sys.executable, "-m", "cvxdp", "--version"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and cvxdp.__version__ in r.stdout + r.stderr
