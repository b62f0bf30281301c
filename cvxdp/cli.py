"""Command line: ``cvxdp demo | audit | bench``."""

from __future__ import annotations

import argparse
import difflib
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from cvxdp import __version__
from cvxdp.audit.builtin import builtin_cases, run_builtin_audits
from cvxdp.bench import run_benchmarks
from cvxdp.demo import run_demo
from cvxdp.progress import WIDTH
from cvxdp.table import format_table

__all__ = ["main", "format_table"]


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check_cases(parser: argparse.ArgumentParser, names: Sequence[str] | None) -> None:
    """An unknown ``--case`` is a usage error (exit 2, closest names suggested), not a
    traceback."""
    known = [c.name for c in builtin_cases(slow=True)]
    for name in names or ():
        if name not in known:
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
            hint = (f"did you mean {' or '.join(repr(c) for c in close)}? " if close else "")
            parser.error(f"argument --case: unknown audit case {name!r}; {hint}"
                         f"known cases: {', '.join(repr(k) for k in known)}")


def _cmd_audit(args: argparse.Namespace) -> int:
    _check_cases(args.parser, args.case)
    results = run_builtin_audits(n_samples=args.samples, rng=args.seed, family_level=args.level,
                                 correction=args.correction, names=args.case, slow=args.slow,
                                 progress=_stderr_line, jobs=args.jobs)
    rows, ok = [], True
    for case, res in results:
        expected = "FAIL" if case.broken else "pass"
        got = "pass" if res.passed else "FAIL"
        ok &= expected == got
        rows.append({"mechanism": case.name, "delta": case.delta, "runs": res.n_samples,
                     "level": 1.0 - res.confidence, "eps >=": res.epsilon_lower,
                     "p-value": "<1e-300" if res.p_value <= 1e-300 else res.p_value,
                     "audit": got, "expected": expected})
    print(format_table(rows, ["mechanism", "delta", "runs", "level", "eps >=", "p-value",
                              "audit", "expected"]))
    levels = [1.0 - res.confidence for _, res in results]
    claims = ", ".join(sorted({f"{case.epsilon:g}" for case, _ in results}))
    name = {"holm": "Holm (step-down)", "bonferroni": "Bonferroni"}[args.correction]
    footer = (
        f"Family-wise correction: {name} over {len(results)} audits at family-wise level "
        f"{args.level:g} (per-mechanism levels {min(levels):.3g} to {max(levels):.3g}, column "
        f"'level'): the chance of a false alarm on any honest mechanism is at most "
        f"{args.level:g}. Every claim is epsilon = {claims}; 'eps >=' is a one-sided "
        f"Clopper-Pearson lower bound at each mechanism's level, on held-out runs. A 'true "
        f"value' twin recomputes one released field from the true data inside the solver's "
        f"call; 'noise halved' twins (--slow) draw every Gaussian at half size.")
    print("\n" + textwrap.fill(footer, width=WIDTH))
    return 0 if ok else 1


def _cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(plot_dir=args.plot, seed=args.seed)


def _cmd_bench(args: argparse.Namespace) -> int:
    return run_benchmarks(quick=args.quick, json_path=args.json, only=args.only)


_EXAMPLES = {
    "demo": "example: cvxdp demo --plot pictures/   (needs pip install 'cvxdp[plot]' for --plot)",
    "audit": "example: cvxdp audit --case 'gaussian (analytic)' --case 'gaussian, sigma/2'\n"
             "         cvxdp audit --case min_enclosing_ball "
             "--case 'min_enclosing_ball, value from true data'",
    "bench": "example: cvxdp bench --quick --json results.json",
}


def _sub(sub: Any, name: str, text: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=text, description=text, epilog=_EXAMPLES[name],
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="cvxdp", description="Differentially private CVXPY.",
        epilog="example: cvxdp demo", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"cvxdp {__version__}")
    sub = parser.add_subparsers(dest="command")
    p = _sub(sub, "demo", "solve one model of each kind privately and exactly")
    p.add_argument("--plot", metavar="DIR", default=None, help="write PNG pictures to DIR")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_demo)
    p = _sub(sub, "audit", "statistically audit the built-in mechanisms and every solver "
             "(progress on stderr)")
    p.add_argument("--samples", type=int, default=None,
                   help="runs per input for every mechanism (default: each mechanism's own)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--level", type=float, default=0.01,
                   help="family-wise level: chance of any false alarm (default 0.01)")
    p.add_argument("--correction", choices=["holm", "bonferroni"], default="holm",
                   help="multiple-testing correction across the audited mechanisms")
    p.add_argument("--case", action="append", default=None, metavar="NAME",
                   help="audit only this mechanism (repeatable; the family is the chosen ones)")
    p.add_argument("--slow", action="store_true",
                   help="also run the slow cases (solvers with their noise halved, 10^5 runs)")
    p.add_argument("--jobs", type=int, default=2, metavar="N",
                   help="processes running the audits (default 2; results do not depend on it)")
    p.set_defaults(func=_cmd_audit, parser=p)
    p = _sub(sub, "bench", "run benchmarks/ (one BLAS thread, warm timings), print one table")
    p.add_argument("--quick", action="store_true", help="small sizes")
    p.add_argument("--json", default=None, help="write the rows as JSON to this file")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME",
                   help="run only the benchmarks whose names contain one of these")
    p.set_defaults(func=_cmd_bench)
    args = parser.parse_args(argv)
    if args.command is None:  # `cvxdp` alone: the help, not an error
        parser.print_help()
        return 0
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
