"""Run every benchmark in this folder and print one table (and optionally write JSON).

Usage::

    python benchmarks/run.py --quick            # small sizes
    python benchmarks/run.py --json out.json    # full scale

Each ``bench_*.py`` module exposing ``main(quick: bool) -> list[dict]`` is run; every row names
its benchmark, problem and size and reports times and ratios against its reference. Modules
without such a ``main`` (their own command line) are listed at the end, not run. Timings are warm:
numba's kernels are compiled (or loaded from the cache) before any benchmark starts and that
time is reported apart. What the modules print and warn is kept out of the table (counted at
the end; ``--show-warnings`` prints the warnings). Progress -- one line as each benchmark starts
and ends, with its seconds -- goes to stderr, so stdout is the table alone.
"""

from __future__ import annotations

import os

# One BLAS thread: on a shared 2-core machine multi-threaded OpenBLAS makes small eigh calls
# ~100x slower and the ratios meaningless. Must be set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
WIDTH = 100


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


def warm_numba() -> float | None:
    """Compile (or load from numba's cache) the MEB kernels on tiny data; seconds, or ``None``
    without numba. Run first so that no benchmark row times the compilation."""
    import numpy as np

    from cvxdp.geometry.meb import meb_kernels

    t0 = time.perf_counter()
    try:
        loops = meb_kernels._compiled()
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    pts = np.ascontiguousarray(rng.normal(size=(16, 3)))
    sqn, v, g = (pts**2).sum(axis=1), rng.normal(size=3), rng.normal(size=3)
    for w in (None, np.ones(16, dtype=np.int64)):  # both signatures the index uses
        loops.count_sum(pts, sqn, v, 0.0, w)
        out = (np.empty_like(pts), np.empty(16), None if w is None else np.empty(16, np.int64))
        loops.split(pts, sqn, v, 0.0, -1.0, 1.0, w, out)
    keys = loops.keys(pts, g)
    order = np.argsort(keys)
    loops.match(pts, g, keys[order], np.ascontiguousarray(pts[order]))
    return time.perf_counter() - t0


def progress(line: str) -> None:
    """One progress line on stderr (the table is on stdout)."""
    print(line, file=sys.stderr, flush=True)


def run(quick: bool, only: list[str] | None = None, show_warnings: bool = False):
    """Rows of every benchmark; failures, modules not run, warnings counted, seconds each."""
    rows: list[dict] = []
    failures: list[str] = []
    skipped: list[str] = []
    caught: collections.Counter = collections.Counter()
    seconds: dict[str, float] = {}
    paths = discover(only)
    for k, path in enumerate(paths, start=1):
        name = path.stem.removeprefix("bench_")
        tag = f"[{k}/{len(paths)}] {name}"
        progress(f"{tag} ...")
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings(record=True) as ws, \
                    contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("always")
                mod = load(path)
                entry = getattr(mod, "main", None)
                if entry is None or "quick" not in inspect.signature(entry).parameters:
                    skipped.append(path.name)
                    progress(f"{tag}: not run (no main(quick=))")
                    continue
                out = mod.main(quick=quick)
        except Exception:  # a failing benchmark is reported, the others still run
            failures.append(f"{path.stem}:\n{traceback.format_exc()}")
            progress(f"{tag}: FAILED after {time.perf_counter() - t0:.1f} s (traceback at the "
                     "end)")
            continue
        for w in ws:
            caught[(name, w.category.__name__)] += 1
            if show_warnings:
                print(f"{name}: {w.category.__name__}: {w.message}", file=sys.stderr)
        seconds[name] = time.perf_counter() - t0
        rows += [{"benchmark": name, **r} for r in out]
        progress(f"{tag}: {len(out)} rows in {seconds[name]:.1f} s")
    return rows, failures, skipped, caught, seconds


def footer(quick: bool, compile_s: float | None, skipped: list[str],
           caught: collections.Counter, seconds: dict[str, float], total: float) -> str:
    """What the table's columns mean, and what ran apart from it."""
    notes = [
        "time: the measured (private) method; ref: what it is compared with, named on each "
        "benchmark's line; time/ref: their ratio (< 1: faster than the reference). Seconds, "
        "measured (a time ending in * is extrapolated, as its benchmark's line says), "
        "warm, one BLAS thread (OPENBLAS_NUM_THREADS=" + os.environ["OPENBLAS_NUM_THREADS"]
        + "). Full rows: --json FILE.",
        ("numba not installed: numpy loops." if compile_s is None else
         f"numba kernels compiled or loaded in {compile_s:.1f} s before timing (in no row)."),
        "seconds per benchmark: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
        + f"; total {total:.1f} s ({'--quick' if quick else 'full'}).",
    ]
    if caught:
        notes.append("warnings kept out of the table (--show-warnings prints them): " + ", ".join(
            f"{n} {c} x{k}" for (n, c), k in caught.items()) + ".")
    if skipped:
        notes.append("not run here (no main(quick=); run them directly): "
                     + ", ".join(skipped) + ".")
    return "\n".join(textwrap.fill(n, WIDTH) for n in notes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--json", default=None, help="write all rows to this JSON file")
    ap.add_argument("--only", nargs="*", default=None, help="substrings of benchmark names")
    ap.add_argument("--show-warnings", action="store_true",
                    help="print the benchmarks' warnings (to stderr)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from cvxdp.bench import format_bench_table

    t0 = time.perf_counter()
    progress("warming numba's kernels ...")
    compile_s = warm_numba()
    rows, failures, skipped, caught, seconds = run(args.quick, args.only, args.show_warnings)
    print(format_bench_table(rows, width=WIDTH))
    print()
    print(footer(args.quick, compile_s, skipped, caught, seconds, time.perf_counter() - t0))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1, default=float))
    for f in failures:
        print("FAILED " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
