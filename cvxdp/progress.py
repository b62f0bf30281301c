"""What ``verbose=True`` prints, like CVXPY's: a header, a progress bar, a summary line.

* :func:`header` -- one line: the problem, its public size, the mechanism and the budget asked.
* :func:`progress_bar` -- wraps the iterations of a solver's loop: a tqdm bar when tqdm is
  installed (``pip install 'cvxdp[progress]'``), a plain text fallback otherwise (a line at every
  10% of the iterations); both stay on screen when the loop ends.
* :func:`summary` -- one line: status, iterations, time, the budget spent (from the solution's
  privacy report) and the accuracy the theorem guarantees, or why there is none.
* :class:`VerboseRun` / :func:`verbose_run` -- the three together for one solve.

Only public quantities and the solution's released fields are printed: sizes and budgets the
caller passes, and the status, iterations, time, privacy report and ``info`` of the released
:class:`~cvxdp.solution.PrivateSolution` (never a value computed from the private data that
the solution does not itself release).
"""

from __future__ import annotations

import sys
import textwrap
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any

#: Lines are wrapped at this width (continuation lines indented).
WIDTH = 100

__all__ = ["WIDTH", "VerboseRun", "budget_text", "header", "problem_size", "progress_bar",
           "summary", "verbose_run"]


def _out(file: IO[str] | None) -> IO[str]:
    return sys.stdout if file is None else file


def budget_text(epsilon: float | None = None, delta: float | None = None,
                rho: float | None = None, budget: Any = None) -> str:
    """The budget as the user gave it: ``epsilon=1, delta=1e-06`` or ``rho=0.5``."""
    if budget is not None:
        return str(budget)
    parts = [f"{k}={v:g}" for k, v in (("epsilon", epsilon), ("delta", delta), ("rho", rho))
             if isinstance(v, int | float) and not isinstance(v, bool)]
    return ", ".join(parts) if parts else "the method's default budget"


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def problem_size(problem: Any) -> str:
    """Public size of a CVXPY problem: scalar variables and constraints (its shape, not data)."""
    return (_count(sum(v.size for v in problem.variables()), "variable") + ", "
            + _count(len(problem.constraints), "constraint"))


def header(problem: str, *, size: str = "", mechanism: str = "", budget: str = "",
           file: IO[str] | None = None) -> str:
    """Print (wrapped at :data:`WIDTH`) and return the header line of a verbose solve."""
    parts = [f"cvxdp {problem}: private solve"]
    parts += [p for p in (size, mechanism and f"mechanism {mechanism}",
                          budget and f"budget {budget}") if p]
    line = "; ".join(parts)
    print(textwrap.fill(line, WIDTH, subsequent_indent="       "), file=_out(file), flush=True)
    return line


class _PlainBar:
    """Text progress: one line at every 10% of ``total`` (lines stay on screen)."""

    def __init__(self, iterable: Iterable, total: int | None, desc: str, file: IO[str]) -> None:
        self.iterable, self.total, self.desc, self.file = iterable, total, desc, file

    def __iter__(self) -> Iterator:
        step = max(1, (self.total or 0) // 10)
        k = 0
        for k, item in enumerate(self.iterable, start=1):  # noqa: B007 - k used after the loop
            yield item
            if self.total and (k % step == 0 or k == self.total):
                pct = 100 * k // self.total
                print(f"  {self.desc}: {k}/{self.total} iterations ({pct}%)", file=self.file,
                      flush=True)
        if not self.total:
            print(f"  {self.desc}: {k} iterations", file=self.file, flush=True)


def progress_bar(iterable: Iterable, *, total: int | None = None, desc: str = "cvxdp",
                 verbose: bool = True, file: IO[str] | None = None) -> Iterable:
    """``iterable`` with a progress bar when ``verbose``: tqdm's (``leave=True``) if tqdm can
    be imported, otherwise :class:`_PlainBar`. ``total`` must be public (an iteration budget,
    not a data-dependent count)."""
    if not verbose:
        return iterable
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    try:
        from tqdm import tqdm  # optional extra (cvxdp[progress])
    except ImportError:
        return _PlainBar(iterable, total, desc, _out(file))
    return tqdm(iterable, total=total, desc=desc, leave=True, file=_out(file))


# Public accuracy parameters a solver puts in ``info`` when its theorem's bound holds.
_BOUND_KEYS = ("accuracy", "alpha", "uncovered_bound", "beta")


def _accuracy_text(solution: Any) -> str:
    alpha = getattr(solution, "alpha_guaranteed", None)
    info = getattr(solution, "info", None) or {}
    if alpha is None:
        alpha = info.get("alpha_guaranteed")
    if isinstance(alpha, int | float) and alpha == alpha and alpha != float("inf"):
        return f"accuracy guaranteed: alpha={alpha:.3g}"
    reason = info.get("status_reason") or info.get("alpha_reason")
    if reason:
        return f"accuracy not guaranteed: {reason}"
    if getattr(solution, "status", None) in ("optimal", "optimal_inaccurate"):
        named = [f"{k}={info[k]:.3g}" for k in _BOUND_KEYS
                 if isinstance(info.get(k), int | float) and not isinstance(info.get(k), bool)]
        if named:
            return "accuracy guaranteed: " + ", ".join(named)
        return "accuracy: the theorem's bound holds (see the method's docs)"
    return "accuracy not guaranteed: the method states no bound for this answer"


def _spent_text(solution: Any) -> str:
    rep = getattr(solution, "privacy", None)
    if rep is None:
        return "budget spent: not reported"
    eps, delta, rho = (getattr(rep, k, None) for k in ("epsilon", "delta", "rho"))
    guarantee = getattr(rep, "guarantee", "dp")
    if guarantee == "zcdp" and rho is not None:
        return f"budget spent: rho={rho:.4g} (zCDP)"
    text = f"budget spent: epsilon={eps:.4g}" if eps is not None else "budget spent:"
    if delta:
        text += f", delta={delta:.3g}"
    return text


def summary(solution: Any, *, seconds: float | None = None, file: IO[str] | None = None) -> str:
    """Print (wrapped at :data:`WIDTH`) and return the summary line of a released solution."""
    secs = getattr(solution, "solve_time", None) if seconds is None else seconds
    its = getattr(solution, "iterations", None)
    parts = [f"status {getattr(solution, 'status', None)}",
             f"iterations {its if its is not None else '-'}",
             f"time {secs:.3g} s" if isinstance(secs, int | float) else "time -",
             _spent_text(solution), _accuracy_text(solution)]
    line = "cvxdp: " + "; ".join(parts)
    print(textwrap.fill(line, WIDTH, subsequent_indent="       "), file=_out(file), flush=True)
    return line


class VerboseRun:
    """Header at the start, bars in between, summary at the end of one verbose solve; every
    method does nothing when ``verbose`` is false."""

    def __init__(self, verbose: bool, problem: str, *, size: str = "", mechanism: str = "",
                 budget: str = "", file: IO[str] | None = None) -> None:
        self.verbose, self.file = bool(verbose), file
        self.t0 = time.perf_counter()
        if self.verbose:
            header(problem, size=size, mechanism=mechanism, budget=budget, file=file)

    def bar(self, iterable: Iterable, *, total: int | None = None, desc: str = "cvxdp"):
        """``iterable`` with the progress bar (see :func:`progress_bar`)."""
        return progress_bar(iterable, total=total, desc=desc, verbose=self.verbose,
                            file=self.file)

    def finish(self, solution: Any) -> Any:
        """Print the summary of ``solution``; return it unchanged."""
        if self.verbose:
            summary(solution, file=self.file)
        return solution


def verbose_run(verbose: bool, problem: str, **kwargs: Any) -> VerboseRun:
    """Start a :class:`VerboseRun` (the helper a solver calls at its top)."""
    return VerboseRun(verbose, problem, **kwargs)
