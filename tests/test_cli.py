"""Issue 25 item 4: ``cvxdp`` alone prints help and exits 0; ``cvxdp --version``; every
subcommand's help carries an example."""

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
