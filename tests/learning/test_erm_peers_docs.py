"""docs/learning.md's tables against diffprivlib are the benchmark's numbers.

The tables under "Versus diffprivlib" are printed by ``benchmarks/bench_erm_peers.py``.  Here
they are read from the docs: the grid must be complete (n in 1e3 .. 1e6, epsilon in 0.1, 1, 10,
both tasks, the seeds column saying what the command the docs name for those rows takes), and
the cells at n <= 1e4 are re-run on the seeds that command names (``--seed-offset``)
through the benchmark's own functions and compared column by column (excess risks, test
accuracy / MSE; 3% relative: BLAS and solver rounding move the medians in the third digit at
most).  Times are the machine's and are not compared; the n >= 1e5 cells are not re-run here
(seconds to a minute each).
"""

from __future__ import annotations

import importlib.util
import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_erm_peers", ROOT / "benchmarks" / "bench_erm_peers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tables() -> dict[str, list[dict[str, float]]]:
    """{task: rows} of the section's tables, each row {column: number}."""
    section = _section()
    out: dict[str, list[dict[str, float]]] = {}
    for m in re.finditer(r"\*(logistic|linear) regression, d = 10[^*]*\*\n\n((?:\|.*\n)+)",
                         section):
        lines = m.group(2).strip().splitlines()
        head = [h.strip() for h in lines[0].strip("|").split("|")]
        rows = [dict(zip(head, (float(c) for c in ln.strip("|").split("|")), strict=True))
                for ln in lines[2:]]
        out.setdefault(m.group(1), []).extend(rows)
    return out


def _section() -> str:
    text = (ROOT / "docs" / "learning.md").read_text()
    return text[text.index("## Versus diffprivlib"):text.index("## Limits")]


def _seeds() -> tuple[int, int]:
    """(seeds, first seed) of the command the docs name for the n < 1e6 rows."""
    m = re.search(r"--sizes 1e3,1e4,1e5 --seeds (\d+) --seed-offset (\d+)`", _section())
    assert m, "the docs no longer name the command of the n < 1e6 rows"
    return int(m.group(1)), int(m.group(2))


def test_the_docs_grid_is_complete():
    # the n = 1e6 rows have the seeds of the command the docs name for them
    large = re.search(r"--sizes 1e6 --large-seeds (\d+)` for the n = 1e6 rows", _section())
    assert large, "the docs no longer name the command of the n = 1e6 rows"
    small = _seeds()[0]
    tables = _tables()
    assert set(tables) == {"logistic", "linear"}
    for task, rows in tables.items():
        cells = {(int(r["n"]), r["epsilon"]): r for r in rows}
        assert set(cells) == {(n, e) for n in (1_000, 10_000, 100_000, 1_000_000)
                              for e in (0.1, 1.0, 10.0)}, task
        for (n, _), r in cells.items():
            assert r["seeds"] == (int(large.group(1)) if n == 1_000_000 else small), (task, n)


@pytest.mark.slow
@pytest.mark.parametrize("task", ["logistic", "linear"])
def test_small_cells_are_the_benchmarks(task):
    pytest.importorskip("diffprivlib")
    bench = _bench()
    fn, metric = {"logistic": (bench.run_logistic, "test acc"),
                  "linear": (bench.run_linear, "test MSE")}[task]
    for row in _tables()[task]:
        n = int(row["n"])
        if n > 10_000:
            continue
        first = _seeds()[1]
        res = [fn(n, row["epsilon"], s) for s in range(first, first + int(row["seeds"]))]
        med = {k: np.median([r[k] for r in res], axis=0) for k in res[0]}
        got = {"excess cvxdp": med["cvxdp"][0], "excess diffprivlib": med["diffprivlib"][0],
               f"{metric} cvxdp": med["cvxdp"][1], f"{metric} diffprivlib": med["diffprivlib"][1]}
        for col, value in got.items():
            assert value == pytest.approx(row[col], rel=0.03), (task, n, row["epsilon"], col)
