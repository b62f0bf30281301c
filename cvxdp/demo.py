"""``cvxdp demo``: one model of each kind, solved privately and exactly, in one table.

All data is built-in: generated from fixed seeds by the functions below (documented, so a reader
can regenerate it), so the demo needs no download and prints the same numbers on every machine.
Each row releases a private answer and compares it with the exact solve on the same data.
"""

from __future__ import annotations

import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from typing import Any

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.demo_data import (
    DELTA,
    JOHN_EPS0,
    LP_CAP,
    SDP_CAP,
    ball_data,
    gaussian_data,
    lp_data,
    regression_data,
    sdp_data,
)
from cvxdp.geometry.john.john import ellipsoid_from_weights
from cvxdp.plots import missing_plot_extra, write_demo_plots
from cvxdp.solvers.covering.covering import random_covering_sdp
from cvxdp.table import format_table

__all__ = ["DEMO_COLUMNS", "DELTA", "JOHN_EPS0", "LP_CAP", "SDP_CAP", "PRINT_COLUMNS", "WIDTH",
           "ball_data", "demo_rows", "format_demo", "gaussian_data", "lp_data", "regression_data",
           "run_demo", "sdp_data"]

DEMO_COLUMNS = ["problem", "size", "epsilon", "delta", "status", "exact value", "private value",
                "quality", "time exact (s)", "time private (s)"]
#: What ``cvxdp demo`` prints per row (the rest, size, delta and quality, on a details line).
PRINT_COLUMNS = ["problem", "eps", "status", "exact", "private", "t exact (s)", "t private (s)"]
#: Per-entry sensitivity of the LP and SDP rows' private constraint data (averages over 100,000
#: records): the noisy-oracle MWU's regime, where its answer is informative at epsilon 1.
MWU_SENSITIVITY = 1e-5
#: Terminal width the printed table fits.
WIDTH = 100


def _row(status: str, problem: str, size: str, eps: float, delta: float, exact: float,
         private: float, quality: str, t_exact: float, t_private: float,
         **metrics: float) -> dict[str, Any]:
    """One table row; ``metrics`` (not printed) carry the quality numbers for tests.

    ``status`` is the private solve's: ``user_limit`` says the theorem's accuracy bound does not
    hold at this budget (the answer is private, its accuracy not promised).
    """
    row = dict(zip(DEMO_COLUMNS, [problem, size, eps, delta, status, float(exact),
                                  float(private), quality, float(t_exact), float(t_private)],
                   strict=True))
    row["metrics"] = {k: float(v) for k, v in metrics.items()}
    return row


def _with_certificate(max_violation: float, sol: Any) -> str:
    """The quality text of a general-path row: the measured violation and the certificate's
    bounds (computed from released quantities; what the status is decided on)."""
    text = f"max violation {max_violation:.3f}"
    cert = sol.certificate
    if cert is not None:
        text += (f"; certified gap <= {cert.relative_gap_bound:.2g}, violation <= "
                 f"{cert.violation_bound:.2g}")
    return text


def demo_lp(seed: int) -> dict[str, Any]:
    Am, b, c = lp_data(seed)
    A = cp.Parameter(Am.shape, name="A", value=Am)
    x = cp.Variable(Am.shape[1], nonneg=True)
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= b, cp.sum(x) == 1])
    eps = 1.0
    # Neighbours: each entry of A is an average over N = 100,000 records in [0, 1], so one record
    # moves an entry by at most 1e-5 -- the MWU's regime (Song, Xue & Zhang 2025): its noise does
    # not grow with the rows, and at 1e-3 (1,000 records) it is rate-bound at this budget.
    sol = prob.solve_private(mechanism="mwu", epsilon=eps, delta=DELTA, rng=seed + 7,
                             reference=True,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=MWU_SENSITIVITY))
    v = sol.validation
    return _row(
        sol.status, "LP, constraint privacy (Alg. 1)", f"{Am.shape[0]}x{Am.shape[1]}", eps, DELTA,
        v.reference_value, sol.value, _with_certificate(v.max_violation, sol),
        v.reference_time, sol.solve_time, max_violation=v.max_violation)


def demo_sdp(seed: int) -> dict[str, Any]:
    Fm, rhs, C = sdp_data(seed + 2)
    r = C.shape[0]
    F = cp.Parameter(Fm.shape, name="F", value=Fm)
    X = cp.Variable((r, r), PSD=True)
    prob = cp.Problem(cp.Minimize(cp.trace(C @ X)),
                      [cp.trace(X) == 1, F @ cp.vec(X, order="F") <= rhs])
    eps = 1.0
    # Neighbours: each F_i averages N = 200,000 records' symmetric matrices of spectral norm <= 1
    # (entries in [-1, 1]); one record moves an entry by at most 2 / N = 1e-5, as in the LP row.
    sol = prob.solve_private(mechanism="mwu", epsilon=eps, delta=DELTA, rng=seed + 3,
                             reference=True,
                             private=cvxdp.ConstraintPrivacy(F, sensitivity=MWU_SENSITIVITY))
    v = sol.validation
    return _row(
        sol.status, "SDP, constraint privacy (Alg. 1)", f"r={r}, m={Fm.shape[0]}", eps, DELTA,
        v.reference_value, sol.value, _with_certificate(v.max_violation, sol),
        v.reference_time, sol.solve_time, max_violation=v.max_violation)


def demo_covering(seed: int) -> dict[str, Any]:
    m, r, eps = 1000, 6, 4.0
    prob = cvxdp.covering_sdp(random_covering_sdp(m, r, rng=seed))
    sol = prob.solve_private(epsilon=eps, delta=DELTA, s=100, rng=seed + 1, reference=True)
    v = sol.validation
    return _row(
        sol.status, "covering SDP, whole-row privacy (Alg. 3)", f"r={r}, m={m}", eps, DELTA,
        v.reference_value, sol.value,
        f"cost/OPT {v.cost_ratio:.2f}, {100 * v.frac_covered:.0f}% rows met",
        v.reference_time, sol.solve_time, cost_ratio=v.cost_ratio,
        frac_covered=v.frac_covered)


def demo_john(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    n, d, eps, eps0 = 2000, 5, 1.0, JOHN_EPS0
    A = rng.normal(size=(n, d))
    A /= np.linalg.norm(A, axis=1, keepdims=True)  # public row bound 1
    prob = cvxdp.john_ellipsoid(A)
    # Neighbours: one row moves by at most eps0 in l2 (Gu et al. 2024). The proven noise bound is
    # loose, so only tiny eps0 beats the data-independent uniform-weights ellipsoid (docs/john.md).
    sol = prob.solve_private(epsilon=eps, delta=DELTA, closeness=eps0, row_bound=1.0,
                             inscribed=True, rng=seed + 1, reference=True)
    v = sol.validation
    base = ellipsoid_from_weights(A, np.full(n, d / n))
    base = base.scaled(1 / np.sqrt(base.support_ratios(A).max()))
    # exact log volume = reference_value (validation, not private)
    uniform = float(np.exp((base.log_volume - v.reference_value) / d))
    return _row(
        sol.status, "John ellipsoid, log volume (DP fixed point)", f"n={n}, d={d}, eps0={eps0:g}",
        eps, DELTA, v.reference_value, sol.value,
        f"(vol ratio)^(1/d) {v.volume_ratio:.3f} (uniform w: {uniform:.3f}), in P: "
        f"{sol.ellipsoid.inscribed_in(A)}",
        v.reference_time, sol.solve_time, volume_ratio=v.volume_ratio,
        uniform_ratio=uniform, inscribed=float(sol.ellipsoid.inscribed_in(A)))


def demo_ball(seed: int) -> dict[str, Any]:
    P = ball_data(seed)
    eps = 1.0
    prob = cvxdp.min_enclosing_ball(P)
    sol = prob.solve_private(epsilon=eps, delta=DELTA, accuracy=0.2, bounds=(-10.0, 10.0),
                             rng=seed + 1, reference=True)
    v = sol.validation
    return _row(
        sol.status, "minimum enclosing ball (DP-MEB)", f"n={P.shape[0]}, d=2", eps, DELTA,
        v.reference_value, sol.ball.radius,
        f"radius ratio {v.radius_ratio:.3f}, {v.uncovered} uncovered",
        v.reference_time, sol.solve_time, radius_ratio=v.radius_ratio,
        uncovered=v.uncovered)


def demo_least_squares(seed: int) -> dict[str, Any]:
    X, y = regression_data(seed)
    eps = 1.0
    sol = cvxdp.least_squares(X, y, row_bound=1.0).solve_private(
        epsilon=eps, delta=DELTA, rng=seed + 1, reference=True)
    v = sol.validation
    return _row(
        sol.status, "least squares (noisy sufficient statistics)", f"n={X.shape[0]}, d=3", eps,
        DELTA, v.reference_value, sol.value,
        f"relative coef error {v.relative_error:.4f}", v.reference_time, sol.solve_time,
        relative_error=v.relative_error)


def demo_gaussian(seed: int) -> dict[str, Any]:
    X = gaussian_data(seed)
    eps = 1.0
    t0 = time.perf_counter()
    mu = X.mean(axis=0)
    np.cov(X, rowvar=False)  # the exact (non-private) estimate, timed for the table
    t_exact = time.perf_counter() - t0
    sol = cvxdp.private_gaussian(X, epsilon=eps, delta=DELTA, rng=seed + 1, reference=True)
    v = sol.validation
    return _row(
        sol.status, "Gaussian, norm of the mean (no bounds given)",
        f"n={X.shape[0]}, d={X.shape[1]}",
        eps, DELTA, float(np.linalg.norm(mu)), float(np.linalg.norm(sol.mean)),
        f"Mahalanobis mean err {v.mahalanobis_mean_error:.3f}, cov rel err "
        f"{v.rel_frobenius_cov_error:.3f}", t_exact, sol.solve_time,
        mahalanobis_mean_error=v.mahalanobis_mean_error,
        rel_frobenius_cov_error=v.rel_frobenius_cov_error)


DEMOS: list[tuple[str, str, Callable[[int], dict[str, Any]]]] = [
    ("lp", "LP", demo_lp),
    ("sdp", "SDP", demo_sdp),
    ("covering", "covering SDP", demo_covering),
    ("john", "John ellipsoid", demo_john),
    ("ball", "enclosing ball", demo_ball),
    ("least_squares", "least squares", demo_least_squares),
    ("gaussian", "Gaussian", demo_gaussian),
]


def demo_rows(seed: int = 0, progress: Callable[[str], None] | None = None
              ) -> list[dict[str, Any]]:
    """Run every demo and return its rows (what ``cvxdp demo`` prints); ``row["name"]`` is
    the short label of the printed table.  ``progress(line)`` is told each demo as it starts."""
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sample-size warnings are reported in the docs instead
        for k, (_, name, fn) in enumerate(DEMOS, start=1):
            if progress is not None:
                progress(f"demo {k}/{len(DEMOS)}: {name} ...")
            rows.append({**fn(seed), "name": name})
    return rows


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def format_demo(rows: list[dict[str, Any]], width: int = WIDTH) -> str:
    """The demo table in ``width`` columns: one line of numbers per problem, then an indented
    details line (the full problem name, size, delta and the quality numbers), wrapped."""
    short = [{"problem": r.get("name", r["problem"]), "eps": r["epsilon"], "status": r["status"],
              "exact": r["exact value"], "private": r["private value"],
              "t exact (s)": r["time exact (s)"], "t private (s)": r["time private (s)"]}
             for r in rows]
    lines = format_table(short, PRINT_COLUMNS).splitlines()
    out = [ln.rstrip() for ln in lines[:2]]
    for row, line in zip(rows, lines[2:], strict=True):
        out.append(line.rstrip())
        text = (f"{row['problem']}; {row['size']}; delta={row['delta']:g}; "
                f"{row['quality']}")
        out.extend(textwrap.wrap(text, width, initial_indent="    ", subsequent_indent="      "))
    return "\n".join(out)


def run_demo(*, plot_dir: str | None = None, seed: int = 0) -> int:
    """Print the demo table (and write pictures to ``plot_dir``); returns the exit code.

    With ``plot_dir``, the ``plot`` extra (matplotlib) is checked before anything runs: without
    it, a message naming the extra goes to stderr and the exit code is 2.
    """
    if plot_dir is not None:
        if (message := missing_plot_extra()) is not None:
            print(message, file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    rows = demo_rows(seed, progress=_stderr_line)
    print(format_demo(rows))
    print()
    print(textwrap.fill(
        "All answers are (epsilon, delta)-DP under each problem's neighbouring relation (see "
        "`solution.privacy`); 'exact' is the non-private reference on the same data. "
        f"Total {time.perf_counter() - t0:.1f}s.", WIDTH))
    if plot_dir is not None:
        paths = write_demo_plots(plot_dir, seed=seed, progress=_stderr_line)
        print("pictures: " + ", ".join(str(p) for p in paths))
    return 0
