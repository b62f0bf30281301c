"""``cvxdp bench``: run ``benchmarks/run.py`` of a source checkout."""

from __future__ import annotations

import pathlib
import runpy
import sys

__all__ = ["run_benchmarks"]


def run_benchmarks(*, quick: bool = False, json_path: str | None = None) -> int:
    """Run every benchmark and print one table; needs the repository's ``benchmarks/`` folder."""
    script = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
    if not script.exists():
        print("cvxdp bench needs a source checkout (benchmarks/ is not installed with the "
              "package): git clone the repository and run `pip install -e .` there.",
              file=sys.stderr)
        return 2
    mod = runpy.run_path(str(script))
    argv = (["--quick"] if quick else []) + (["--json", json_path] if json_path else [])
    return int(mod["main"](argv))
