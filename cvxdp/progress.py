"""What ``verbose=True`` prints, like CVXPY's: a header, a progress bar, a summary line.

* :func:`header` -- one line: the problem, its public size, the mechanism and the budget asked.
* :func:`progress_bar` -- wraps the iterations of a solver's loop: a tqdm bar when tqdm is
  installed (``pip install 'cvxdp[progress]'``), a plain text fallback otherwise; both on
  **stderr** (header and summary go to stdout, like CVXPY's verbose output) and both stay on
  screen when the loop ends.  Inside a verbose solve (:class:`VerboseRun`) every loop of the
  solve advances ONE bar, labelled with the current phase (:func:`phase`, or ``"<desc> run k"``
  for the k-th loop), so a solver that runs its loop several times (the MWU's objective search)
  shows one bar, not one per run; the plain fallback then prints at most one line per
  :data:`PLAIN_INTERVAL` seconds and one at the end of the solve.  Outside a solve a bar is one
  loop's (plain: a line at every 10% of the iterations).
* :func:`phase` -- names the phase the loops inside it belong to (``"objective search 2/5"``).
* :func:`summary` -- one line: status, iterations, time, the budget spent (from the solution's
  privacy report) and the accuracy the theorem guarantees, or why there is none.
* :class:`VerboseRun` / :func:`verbose_run` -- the three together for one solve.

Only public quantities and the solution's released fields are printed: sizes and budgets the
caller passes, and the status, iterations, time, privacy report and ``info`` of the released
:class:`~cvxdp.solution.PrivateSolution` (never a value computed from the private data that
the solution does not itself release).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import textwrap
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any

#: Lines are wrapped at this width (continuation lines indented).
WIDTH = 100

#: Seconds between two lines of the plain (no tqdm) bar of a verbose solve.
PLAIN_INTERVAL = 1.0

__all__ = ["PLAIN_INTERVAL", "WIDTH", "VerboseRun", "budget_text", "header", "phase",
           "problem_size", "progress_bar", "summary", "verbose_run"]

# The verbose solve whose bar the loops advance (None outside a verbose solve), and the name of
# the current phase.
_RUN: contextvars.ContextVar[VerboseRun | None] = contextvars.ContextVar("cvxdp_run",
                                                                        default=None)
_PHASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("cvxdp_phase", default=None)


def _out(file: IO[str] | None) -> IO[str]:
    return sys.stdout if file is None else file


def _bar_out(file: IO[str] | None) -> IO[str]:
    """Bars go to stderr (tqdm's default), so stdout keeps the header, summary and results."""
    return sys.stderr if file is None else file


@contextlib.contextmanager
def phase(label: str) -> Iterator[None]:
    """The loops run inside this block belong to the phase ``label`` (the bar's label)."""
    token = _PHASE.set(label)
    try:
        yield
    finally:
        _PHASE.reset(token)


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
    run = _RUN.get()
    if run is not None and not run.alive():  # its solve raised before finish: forget it
        run.close(quiet=True)
        run = None
    if run is not None and file is None:
        return run.advance(iterable, total=total, desc=desc)
    tqdm = _tqdm()
    if tqdm is None:
        return _PlainBar(iterable, total, desc, _bar_out(file))
    return tqdm(iterable, total=total, desc=desc, leave=True, file=_bar_out(file))


def _tqdm() -> Any:
    try:
        from tqdm import tqdm  # optional extra: cvxdp[progress]
    except ImportError:
        return None
    return tqdm


class _RunBar:
    """The one bar of a verbose solve: every loop of the solve advances it (module doc)."""

    def __init__(self, file: IO[str]) -> None:
        self.file, self.loops, self.done, self.total = file, 0, 0, 0
        self.tqdm: Any = None
        self.last = time.perf_counter()
        self.label = self.desc = ""

    def iterate(self, iterable: Iterable, total: int | None, desc: str) -> Iterator:
        self.loops += 1
        self.total += total or 0
        self.desc = self.desc or desc
        self.label = _PHASE.get() or (desc if self.loops == 1 else f"{desc} run {self.loops}")
        tqdm = _tqdm()
        if tqdm is not None and self.tqdm is None:
            self.tqdm = tqdm(total=self.total or None, desc=self.label, leave=True,
                             file=self.file)
        elif self.tqdm is not None:
            self.tqdm.total = self.total or None
            self.tqdm.set_description(self.label, refresh=True)
        for item in iterable:
            yield item
            self.done += 1
            if self.tqdm is not None:
                self.tqdm.update(1)
            elif time.perf_counter() - self.last >= PLAIN_INTERVAL:
                self._line()

    def _line(self) -> None:
        self.last = time.perf_counter()
        loops = f" in {self.loops} loops" if self.loops > 1 else ""
        print(f"  {self.label}: {self.done} iterations{loops} so far", file=self.file,
              flush=True)

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()
        elif self.done:
            loops = f" in {self.loops} loops" if self.loops > 1 else ""
            print(f"  {self.desc}: done, {self.done} iterations{loops}", file=self.file,
                  flush=True)


# Public accuracy parameters a solver puts in ``info`` when its theorem's bound holds.
_BOUND_KEYS = ("accuracy", "alpha", "uncovered_bound", "beta")


def _accuracy_text(solution: Any) -> str:
    """What the status promises about accuracy: the status decides guaranteed or not (an
    ``optimal``/``optimal_inaccurate`` answer carries a proven bound, anything else does not),
    the text says which bound or why none."""
    alpha = getattr(solution, "alpha_guaranteed", None)
    info = getattr(solution, "info", None) or {}
    if alpha is None:
        alpha = info.get("alpha_guaranteed")
    has_alpha = isinstance(alpha, int | float) and alpha == alpha and alpha != float("inf")
    reason = (getattr(solution, "status_reason", None) or info.get("status_reason")
              or info.get("alpha_reason"))
    if getattr(solution, "status", None) not in ("optimal", "optimal_inaccurate"):
        return ("accuracy not guaranteed: "
                + (reason or "the method states no bound for this answer"))
    if has_alpha:
        return f"accuracy guaranteed: alpha={alpha:.3g}"
    cert = getattr(solution, "certificate", None)
    if cert is not None:
        return (f"accuracy certified: relative gap <= {cert.relative_gap_bound:.3g}, violation "
                f"<= {cert.violation_bound:.3g} (probability >= {cert.probability:g})")
    named = [f"{k}={info[k]:.3g}" for k in _BOUND_KEYS
             if isinstance(info.get(k), int | float) and not isinstance(info.get(k), bool)]
    if named:
        return "accuracy guaranteed: " + ", ".join(named)
    if reason:  # a success's reason states the bound that holds
        return f"accuracy guaranteed: {reason}"
    return "accuracy: the theorem's bound holds (see the method's docs)"


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
        self._bar: _RunBar | None = None
        self._token: contextvars.Token | None = None
        # the solve's frame (the first caller outside this module): the run is alive while it
        # is on the stack; kept as (id, code), not the frame, which would keep its data alive
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename == __file__:
            frame = frame.f_back
        self._frame = (id(frame), frame.f_code if frame is not None else None)
        if self.verbose:
            header(problem, size=size, mechanism=mechanism, budget=budget, file=file)
            # the loops of this solve advance this run's one bar (until finish)
            self._token = _RUN.set(self)

    def advance(self, iterable: Iterable, *, total: int | None = None,
                desc: str = "cvxdp") -> Iterable:
        """``iterable`` advancing this solve's one bar (a new phase of it)."""
        if not self.verbose:
            return iterable
        if self._bar is None:
            self._bar = _RunBar(_bar_out(self.file))
        return self._bar.iterate(iterable, total, desc)

    def bar(self, iterable: Iterable, *, total: int | None = None, desc: str = "cvxdp"):
        """``iterable`` with the progress bar (see :func:`progress_bar`)."""
        return self.advance(iterable, total=total, desc=desc)

    def alive(self) -> bool:
        """Whether the solve that made this run is still running (its frame is on the stack)."""
        frame = sys._getframe(1)
        while frame is not None:
            if id(frame) == self._frame[0] and frame.f_code is self._frame[1]:
                return True
            frame = frame.f_back
        return False

    def close(self, quiet: bool = False) -> None:
        """End the bar and stop being the solve the loops report to (idempotent); ``quiet``:
        without the bar's last line (a solve that raised)."""
        if self._bar is not None:
            if not quiet or self._bar.tqdm is not None:
                self._bar.close()
            self._bar = None
        if self._token is not None:
            try:
                _RUN.reset(self._token)
            except ValueError:  # set in another context (a copied one): clear it there
                _RUN.set(None)
            self._token = None

    def __enter__(self) -> VerboseRun:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def finish(self, solution: Any) -> Any:
        """End the bar, print the summary of ``solution``; return it unchanged."""
        self.close()
        if self.verbose:
            summary(solution, file=self.file)
        return solution


def verbose_run(verbose: bool, problem: str, **kwargs: Any) -> VerboseRun:
    """Start a :class:`VerboseRun` (the helper a solver calls at its top)."""
    return VerboseRun(verbose, problem, **kwargs)
