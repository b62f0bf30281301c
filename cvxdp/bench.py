"""``cvxdp bench``: run ``benchmarks/run.py`` of a source checkout, and its one table.

The table (:func:`format_bench_table`) has one line per benchmark row, at most ``width``
characters: the benchmark, the case (its identifying fields), the measured time and the time of
the reference it is compared with (seconds, warm; each benchmark's line names its references),
their ratio, and the remaining numbers of the row in short form. The full rows go to ``--json``.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["BENCH_COLUMNS", "bench_cells", "format_bench_table", "run_benchmarks"]

#: The columns of the table, units in the header.
BENCH_COLUMNS = ("case", "time (s)", "ref (s)", "time/ref", "result")
_WIDTHS = {"case": 34, "time (s)": 8, "ref (s)": 8, "time/ref": 8}

# Keys naming the measured time (first present wins) and the reference's time, in seconds or ms.
_TIME_KEYS = ("private_s", "t_priv", "t_private", "index_numba_s", "iter_ms", "time_s",
              "seconds", "seconds_at_paper_n", "to_scp_s")
_REF_KEYS = ("exact_s", "t_exact", "exact_socp_s", "full_pass_s", "floor_s", "eigh+matvec_ms",
             "paper_seconds")
# What each reference time is (named in the benchmark's section line).
_REF_NAMES = {"exact_s": "exact solve", "t_exact": "exact solve", "exact_socp_s": "exact SOCP",
              "full_pass_s": "full pass", "eigh+matvec_ms": "eigh + matvec",
              "paper_seconds": "paper's time", "ratio_vs_cvxpy": "exact solve (CVXPY)",
              "time_ratio": "empirical estimate"}
# Time keys that are extrapolated (from a measured rate to a size not run), not measured: their
# cell ends in EXTRAPOLATED and the benchmark's line says so.
_EXTRAPOLATED_KEYS = {"seconds_at_paper_n"}
EXTRAPOLATED = "*"
# A ratio to the exact reference the row carries when it has no reference time.
_RATIO_KEYS = ("ratio_vs_cvxpy", "time_ratio")
# Bookkeeping or redundant with the columns above: not repeated in "result".
_SKIP = {"benchmark", "bench", "table", "floor", "ratio", "speedup", "time_ratio", "ratio_vs_cvxpy",
         "ratio_vs_lstsq", "socp_over_private", "active_set_over_private", "sketched_ratio",
         "transform_vs_exact", "paper_over_ours", "loops", "n_paper", "scale"}
# Identifying (case) fields that are numbers.
_CASE_NUMBERS = {"n", "d", "m", "r", "size", "rows", "cols", "dim", "n_run", "epsilon", "eps",
                 "rho", "gamma", "delta", "s", "sensitivity", "eps0"}


def _seconds(row: dict, key: str) -> float | None:
    v = row.get(key)
    if not isinstance(v, int | float) or isinstance(v, bool):
        return None
    return float(v) / 1e3 if key.endswith("_ms") else float(v)


def _num(v: float) -> str:
    return f"{v:.3g}"


# Shorter names for long, frequent keys (the JSON keeps the full ones).
_SHORT = {"epsilon": "eps", "sensitivity": "sens", "iterations": "iters",
          "rows_per_iteration": "rows/iter", "dist_at_stop_over_ropt": "dist/r_opt",
          "uniform_weights_ratio": "uniform_ratio", "paper_radius_factor": "paper_factor",
          "uncovered_bound": "unc_bound", "rel_error_std": "rel_err_sd", "rel_error": "rel_err"}


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words (a word longer
    than ``width`` is cut and ends in ``~``)."""
    lines: list[str] = []
    for word in text.split():
        word = word if len(word) <= width else word[: width - 1] + "~"
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def bench_cells(row: dict) -> dict[str, str]:
    """The table's cells (strings) for one benchmark row (a dict of that benchmark's fields)."""
    tkey = next((k for k in _TIME_KEYS if _seconds(row, k) is not None), None)
    rkey = next((k for k in _REF_KEYS if _seconds(row, k) is not None), None)
    t = _seconds(row, tkey) if tkey else None
    ref = _seconds(row, rkey) if rkey else None
    ref_name = ""
    if t is not None and ref:
        ratio = t / ref
        ref_name = str(row.get("floor", "")) if rkey == "floor_s" else _REF_NAMES[rkey]
    else:
        rk = next((k for k in _RATIO_KEYS if isinstance(row.get(k), int | float)
                   and not isinstance(row.get(k), bool)), None)
        ratio = float(row[rk]) if rk else None
        ref_name = _REF_NAMES[rk] if rk else ""
    case, result = [], []
    for k, v in row.items():
        if k in _SKIP or k in (tkey, rkey) or v is None:
            continue
        name = _SHORT.get(k, k)
        if isinstance(v, str):
            bare = k in ("problem", "dataset", "method") or (k == "size" and "=" in v)
            case.append(v if bare else f"{name}={v}")
        elif k in _CASE_NUMBERS:
            case.append(f"{name}={v:g}" if isinstance(v, float) else f"{name}={v}")
        elif isinstance(v, bool):
            result.append(f"{name}={v}")
        elif isinstance(v, int | float):
            result.append(f"{name}={_num(v) if isinstance(v, float) else v}")
    mark = EXTRAPOLATED if tkey in _EXTRAPOLATED_KEYS else ""
    return {"benchmark": str(row.get("benchmark", row.get("bench", ""))), "ref name": ref_name,
            "case": " ".join(case),
            "time (s)": "" if t is None else _num(t) + mark,
            "ref (s)": "" if ref is None else _num(ref),
            "time/ref": "" if ratio is None else _num(ratio),
            "result": " ".join(result)}


def format_bench_table(rows: Sequence[dict], width: int = 100) -> str:
    """One plain-text table of benchmark rows, no line longer than ``width`` characters.

    Rows are grouped by benchmark under a line naming the benchmark and its references; the
    case and result cells wrap onto continuation lines, numbers are never cut.
    """
    widths = dict(_WIDTHS)
    widths["result"] = width - sum(widths.values()) - 2 * (len(BENCH_COLUMNS) - 1)
    cells = [bench_cells(r) for r in rows]
    right = {"time (s)", "ref (s)", "time/ref"}

    def lines(values: dict[str, str]) -> list[str]:
        cols = {c: _wrap(values[c], widths[c]) for c in BENCH_COLUMNS}
        out = []
        for i in range(max(len(v) for v in cols.values())):
            parts = [cols[c][i] if i < len(cols[c]) else "" for c in BENCH_COLUMNS]
            parts = [p.rjust(widths[c]) if c in right else p.ljust(widths[c])
                     for p, c in zip(parts, BENCH_COLUMNS, strict=True)]
            out.append("  ".join(parts).rstrip())
        return out

    out = lines({c: c for c in BENCH_COLUMNS})
    out.append("  ".join("-" * widths[c] for c in BENCH_COLUMNS))
    for name in dict.fromkeys(c["benchmark"] for c in cells):  # in order of appearance
        group = [c for c in cells if c["benchmark"] == name]
        refs = ", ".join(dict.fromkeys(c["ref name"] for c in group if c["ref name"]))
        note = (f"; time {EXTRAPOLATED}: extrapolated to the paper's n from the measured rate, "
                "not measured" if any(c["time (s)"].endswith(EXTRAPOLATED) for c in group)
                else "")
        out += _wrap(f"[{name}]" + (f" ref: {refs}" if refs else "") + note, width)
        for c in group:
            out += lines(c)
    return "\n".join(out)


def run_benchmarks(*, quick: bool = False, json_path: str | None = None,
                   only: Sequence[str] | None = None) -> int:
    """Run ``benchmarks/run.py`` in a fresh interpreter with one BLAS thread; its exit code.

    A fresh process because the thread settings (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``,
    ``MKL_NUM_THREADS``) only take effect if they are set before numpy is imported, and this
    process has imported numpy already (``import cvxdp`` does).
    """
    script = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
    if not script.exists():
        print("cvxdp bench needs a source checkout (benchmarks/ is not installed with the "
              "package): git clone the repository and run `pip install -e .` there.",
              file=sys.stderr)
        return 2
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    argv = ((["--quick"] if quick else []) + (["--json", json_path] if json_path else [])
            + (["--only", *only] if only else []))
    return subprocess.call([sys.executable, str(script), *argv], env=env)
