"""Command line: ``cvxdp demo | audit | bench``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main", "format_table"]


def format_table(rows: list[dict], columns: Sequence[str]) -> str:
    """Plain-text table of ``rows`` (dicts) in the given column order."""

    def cell(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "" if v is None else str(v)

    body = [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(b[i]) for b in body)) if body else len(c)
              for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line, sep] + ["  ".join(b[i].ljust(w) for i, w in enumerate(widths))
                                    for b in body])


def _cmd_audit(args: argparse.Namespace) -> int:
    from cvxdp.audit.builtin import run_builtin_audits

    rows, ok = [], True
    for case, res in run_builtin_audits(n_samples=args.samples, rng=args.seed):
        expected = "FAIL" if case.broken else "pass"
        got = "pass" if res.passed else "FAIL"
        ok &= expected == got
        rows.append({"mechanism": case.name, "claimed eps": case.epsilon, "delta": case.delta,
                     "eps lower bound": res.epsilon_lower, "audit": got, "expected": expected})
    print(format_table(rows, ["mechanism", "claimed eps", "delta", "eps lower bound", "audit",
                              "expected"]))
    print(f"\n{args.samples} runs per input, 95% confidence lower bounds (Clopper-Pearson).")
    return 0 if ok else 1


def _cmd_demo(args: argparse.Namespace) -> int:
    from cvxdp.demo import run_demo

    return run_demo(plot_dir=args.plot, seed=args.seed)


def _cmd_bench(args: argparse.Namespace) -> int:
    from cvxdp.bench import run_benchmarks

    return run_benchmarks(quick=args.quick, json_path=args.json)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cvxdp", description="Differentially private CVXPY.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="solve one model of each kind privately and exactly")
    p.add_argument("--plot", metavar="DIR", default=None, help="write PNG pictures to DIR")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_demo)
    p = sub.add_parser("audit", help="statistically audit the built-in mechanisms")
    p.add_argument("--samples", type=int, default=20000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_audit)
    p = sub.add_parser("bench", help="run the benchmarks in benchmarks/ and print one table")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", default=None, help="write the rows as JSON to this file")
    p.set_defaults(func=_cmd_bench)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
