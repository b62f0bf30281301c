"""Every example runs end to end in quick mode and prints its validation."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def test_there_are_at_least_six_examples():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_in_quick_mode(path):
    proc = subprocess.run([sys.executable, "-W", "ignore", str(path), "--quick"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "privacy" in out or "guarantee" in out, out


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_has_help_and_rejects_a_misspelt_flag(path):
    """argparse: --help describes the example and exits 0; a misspelt flag is a usage error
    (exit 2), not silently ignored (before: both ran the full-size example)."""
    ok = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("usage:") and "--quick" in ok.stdout
    bad = subprocess.run([sys.executable, str(path), "--quik"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "unrecognized arguments: --quik" in bad.stderr
