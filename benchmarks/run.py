"""Run every benchmark in this folder and print one table (and optionally write JSON).

Usage::

    python benchmarks/run.py --quick            # about a minute on 2 cores
    python benchmarks/run.py --json out.json    # full scale

Each ``bench_*.py`` module exposes ``main(quick: bool) -> list[dict]``; every row names its
benchmark, problem and size and reports times and ratios against the exact reference solve.
"""

from __future__ import annotations

import os

# One BLAS thread: on a shared 2-core machine multi-threaded OpenBLAS makes small eigh calls
# ~100x slower and the ratios meaningless. Must be set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def discover(only: list[str] | None = None) -> list[pathlib.Path]:
    paths = sorted(HERE.glob("bench_*.py"))
    if only:
        paths = [p for p in paths if any(o in p.stem for o in only)]
    return paths


def load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def run(quick: bool, only: list[str] | None = None) -> tuple[list[dict], list[str]]:
    rows: list[dict] = []
    failures: list[str] = []
    for path in discover(only):
        t0 = time.perf_counter()
        try:
            out = load(path).main(quick=quick)
        except Exception:  # a failing benchmark is reported, the others still run
            failures.append(f"{path.stem}:\n{traceback.format_exc()}")
            continue
        for r in out:
            rows.append({"benchmark": path.stem.removeprefix("bench_"), **r})
        print(f"# {path.stem}: {len(out)} rows in {time.perf_counter() - t0:.1f}s",
              file=sys.stderr)
    return rows, failures


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _compact(row: dict) -> dict:
    """One line per row: identifying (string) fields as the case, numbers as measurements."""
    case = [f"{k}={v}" for k, v in row.items()
            if k not in ("benchmark", "bench") and isinstance(v, str)]
    meas = [f"{k}={_fmt(v)}" for k, v in row.items()
            if not isinstance(v, str) and v is not None]
    return {"benchmark": row["benchmark"], "case": " ".join(case), "measurements": " ".join(meas)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    ap.add_argument("--json", default=None, help="write all rows to this JSON file")
    ap.add_argument("--only", nargs="*", default=None, help="substrings of benchmark names")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from cvxdp.cli import format_table

    rows, failures = run(args.quick, args.only)
    print(format_table([_compact(r) for r in rows], ["benchmark", "case", "measurements"]))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1, default=float))
    for f in failures:
        print("FAILED " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
